"""Dragonfly hierarchical minimal routing: local, global, local (at most one global link).

The papers' "minimal" routing on a Dragonfly. Some graph-shortest routes use two global
links through a third group; this scheme never does. Routes are chosen hop by hop among
all first hops of the shortest local-global-local routes, which is memoryless because
groups are complete graphs: after a local hop in the source group the global hop of that
router is always strictly best.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

import numpy as np

from jaxnet.core.validate import require
from jaxnet.routing.minimal import NextHopRouting
from jaxnet.topology.base import Topology

_FAR = 1 << 8


@functools.lru_cache(maxsize=8)
def hierarchical_routes(topo: Topology) -> tuple[np.ndarray, np.ndarray]:
    """(length int16 [R, R], next-hop bit words uint32 [R, R, W]) of local-global-local routes."""
    require(topo.group is not None and "global" in topo.link_class_names, "topology", topo.name,
            "a Dragonfly (routers with `group` and local/global link classes)")
    group, nbr = topo.group, topo.neighbor
    global_class = topo.link_class_names.index("global")
    n, ports = nbr.shape
    same_group = group[:, None] == group[None, :]
    targets = np.arange(n)[None, :]
    # via_global[c, t]: length of "global link of c, then local to t if needed"
    via_global = np.full((n, n), _FAR, np.int16)
    is_global = (topo.link_class == global_class) & (nbr >= 0)
    for p in range(ports):
        lands = np.maximum(nbr[:, p], 0)
        length = np.where(group[lands][:, None] == group[None, :],
                          1 + (targets != lands[:, None]), _FAR).astype(np.int16)
        via_global = np.where(is_global[:, p, None], np.minimum(via_global, length), via_global)
    # via_local_then_global[c, t]: one local hop to r', then r''s best global option
    is_local = (topo.link_class != global_class) & (nbr >= 0)
    via_local = np.full((n, n), _FAR, np.int16)
    for p in range(ports):
        option = np.where(is_local[:, p, None], 1 + via_global[np.maximum(nbr[:, p], 0)], _FAR)
        via_local = np.minimum(via_local, option)
    length = np.where(same_group, (targets != np.arange(n)[:, None]).astype(np.int16),
                      np.minimum(via_global, via_local)).astype(np.int16)

    words = np.zeros((n, n, (ports + 31) // 32), np.uint32)
    for p in range(ports):
        lands = np.maximum(nbr[:, p], 0)
        in_group = same_group & (targets == lands[:, None])
        global_hop = is_global[:, p, None] & (group[lands][:, None] == group[None, :]) & (
            1 + (targets != lands[:, None]) == length)
        local_hop = is_local[:, p, None] & (1 + via_global[lands] == length)
        ok = np.where(same_group, in_group & (nbr[:, p, None] >= 0), global_hop | local_hop)
        words[:, :, p // 32] |= ok.astype(np.uint32) << np.uint32(p % 32)
    return length, words


@dataclasses.dataclass(frozen=True)
class DragonflyMinimal(NextHopRouting):
    """Hop-by-hop adaptive among the first hops of shortest local-global-local routes."""

    name: ClassVar[str] = "dragonfly_minimal"

    def routes(self, topo):
        return hierarchical_routes(topo)

    @property
    def vc_policies(self):
        return ("hops", "dragonfly")
