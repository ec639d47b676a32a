"""Dragonfly adversarial patterns (Restricted Valiant paper Sect. V-A; Ant Mill Sect. 6.1).

Both need `topo.group` (group id per router, 0..G-1). Routers of a group are taken in
increasing router id. Neither ever picks the source's own switch.

- adv_group: every server of group g sends to a random server of group g + offset (mod G).
  offset 1 is ADV (ADV+1); offset h is ADV+h. Minimal routing funnels a whole group's
  traffic through the one global link to the target group: at most 1 / (a * p) per server.
- adv_local (ADV-Local): every server of the i-th router of a group sends to a random server
  of the (i + 1)-th router of the same group (mod the group size): at most 1 / p per server.
"""
from __future__ import annotations

import numpy as np

from jaxnet.core.validate import is_int, require
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import (
    ANY_SERVER,
    TrafficTable,
    per_router_table,
    router_map_table,
)


def adv_group(topo: Topology, rng, offset: int = 1) -> TrafficTable:
    """ADV+offset: group g sends to a random server of group g + offset."""
    members = group_members(topo, "adv_group")
    n_groups = members.shape[0]
    require(is_int(offset) and offset % n_groups != 0, "traffic.offset",
            offset, f"must be an integer that is not a multiple of the group count ({n_groups})")
    target = members[(topo.group + offset) % n_groups]
    return per_router_table(np.maximum(target, 0), np.full(target.shape, ANY_SERVER),
                            (target >= 0).astype(float), topo.servers_per_router)


def adv_local(topo: Topology, rng) -> TrafficTable:
    """ADV-Local: the i-th router of a group sends to the (i + 1)-th (mod group size)."""
    members = group_members(topo, "adv_local")
    sizes = (members >= 0).sum(axis=1)
    require(bool(np.all(sizes >= 2)), "topology", topo.name,
            "adv_local needs at least 2 routers in every group")
    dest = np.empty(topo.n_routers, np.int64)
    for row, size in zip(members, sizes):
        dest[row[:size]] = np.roll(row[:size], -1)
    return router_map_table(dest, topo.servers_per_router, "random")


def group_members(topo: Topology, pattern: str) -> np.ndarray:
    """int64 [G, A] routers of each group in increasing id, -1 padded for smaller groups."""
    require(topo.group is not None, "traffic.name", pattern,
            f"needs a topology with groups (Dragonfly); {topo.name} has no `group`")
    group = np.asarray(topo.group, np.int64)
    n_groups = int(group.max()) + 1
    require(group.min() == 0 and np.unique(group).size == n_groups, "topology.group", topo.name,
            "group ids must be 0..G-1")
    order = np.argsort(group, kind="stable")
    sizes = np.bincount(group, minlength=n_groups)
    rank = np.arange(topo.n_routers) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    members = np.full((n_groups, sizes.max()), -1, np.int64)
    members[group[order], rank] = order
    return members
