"""Traffic patterns, keyed by config name (`conf/traffic/<name>.yaml`).

A pattern builder takes (topology, rng, **params) and returns a `TrafficTable`. The rng is
seeded from the simulation seed, so patterns with random choices (permutations) are
fixed per seed and differ across seeds.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from jaxnet.core.registry import Registry
from jaxnet.topology.base import Topology
from jaxnet.traffic import (
    antmill,
    cartesian,
    collective,
    demand,
    dragonfly_patterns,
    mixture,
    permutations,
    uniform_variants,
)
from jaxnet.traffic.base import TrafficTable


def _mixture(topo: Topology, rng, patterns=(), weights=None) -> TrafficTable:
    """`mixture.mixture`, its sub-patterns built from this registry."""
    return mixture.mixture(topo, rng, patterns, weights, build=PATTERNS.build)


def _collective(topo: Topology, rng, kind="all_to_all", packets=1, pattern=None) -> TrafficTable:
    """`collective.collective`, batch mode's pattern built from this registry."""
    return collective.collective(topo, rng, kind, packets, pattern, build=PATTERNS.build)


PATTERNS = Registry("traffic", {
    "uniform": uniform_variants.uniform,
    "uniform_other_router": uniform_variants.uniform_other_router,
    "all_to_all": uniform_variants.all_to_all,
    "hot_region": uniform_variants.hot_region,
    "server_permutation": permutations.server_permutation,
    "destination_table": permutations.destination,
    "switch_permutation": permutations.switch_permutation,
    "neighbour_permutation": permutations.neighbour_permutation,
    "antmill": antmill.antmill,
    "adv_group": dragonfly_patterns.adv_group,
    "adv_local": dragonfly_patterns.adv_local,
    "tornado": cartesian.tornado,
    "neighbour": cartesian.neighbour,
    "bit_complement": cartesian.bit_complement,
    "transpose": cartesian.transpose,
    "demand": demand.demand,
    "mixture": _mixture,
    "collective": _collective,
}, leading=2)  # builders take (topology, rng, **config keys)


def build_traffic(cfg: Mapping, topo: Topology, seed: int) -> TrafficTable:
    """Compile the pattern a config group describes for one simulation seed."""
    rng = np.random.default_rng([int(seed), 0x7A11C])
    return PATTERNS.build(cfg, topo, rng)


def tables_for_points(cfg: Mapping, topo: Topology, points) -> list[TrafficTable]:
    """One table per (load, seed) point, each built once per seed."""
    by_seed = {seed: build_traffic(cfg, topo, seed) for _, seed in points}
    return [by_seed[seed] for _, seed in points]


__all__ = ["PATTERNS", "TrafficTable", "build_traffic", "tables_for_points"]
