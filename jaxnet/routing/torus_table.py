"""Deterministic table routing on tori and meshes from Angara routing tables.

`jaxnet.paths.torus_tables` builds one route per router pair (BFS, SSSP or genetic, on the
deadlock-free routing graph of the Angara paper); this scheme follows it as a source route
(the route tables of `route_tables.py`, one path per pair).

VCs: the paper runs these tables on one VC with bubble flow control in the rings, which
jaxnet's router model does not implement. jaxnet uses a documented alternative with two
VCs: the tables' channel dependency graph is acyclic except for cycles that go straight
around one ring (what bubble flow control tolerates), so a dateline per straight run
breaks exactly those: a hop uses VC 1 once the run (same dimension and direction) has
crossed its ring's wrap-around link, VC 0 otherwise, and a new run starts at VC 0. Meshes
have no wrap-around links and use VC 0 only. `tests/test_torus_table_routing.py` checks
the resulting channel dependency graph is acyclic and that the watchdog never fires.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.validate import require
from jaxnet.paths.deadlock import (
    channel_dependency_graph,
    dependency_pairs,
    find_deadlock_cycle,
)
from jaxnet.paths.enumerate import Routes, routes_from_routers
from jaxnet.paths.torus_graph import KINDS, TorusShape
from jaxnet.paths.torus_tables import (
    ALGORITHMS,
    build_table,
    deadlock_cycle,
    load_table,
    simulator_tables,
)
from jaxnet.routing.base import Candidates
from jaxnet.routing.route_tables import (
    PathTableRouting,
    PathTables,
    draw_path,
    tables_from_routes,
)
from jaxnet.topology.base import Topology


class TorusTables(NamedTuple):
    """paths: the path tables (one path per pair); vc: int8 [n_paths, H] VC of each hop."""

    paths: PathTables
    vc: jnp.ndarray


def dateline_vcs(topo: Topology, routers: np.ndarray) -> np.ndarray:
    """int8 [n, L] VC per hop of router sequences [n, L + 1] under the run dateline rule."""
    coords, sides = topo.coords, np.asarray(topo.sides)
    here, there = routers[:, :-1], routers[:, 1:]
    step = there >= 0
    a, b = coords[np.maximum(here, 0)], coords[np.maximum(there, 0)]
    dim = np.argmax(a != b, axis=2)
    delta = np.take_along_axis(b - a, dim[..., None], axis=2)[..., 0]
    side = sides[dim]
    wraps = step & (np.abs(delta) > 1) & (side > 2)
    sign = np.where((delta == 1) | (delta < -1), 1, -1)
    vc = np.zeros(here.shape, np.int8)
    crossed = np.zeros(len(routers), bool)
    for h in range(here.shape[1]):
        new_run = (h == 0) | (dim[:, h] != dim[:, h - 1]) | (sign[:, h] != sign[:, h - 1])
        crossed = np.where(new_run, False, crossed) | wraps[:, h]
        vc[:, h] = np.where(step[:, h], crossed, 0)
    return vc


@functools.lru_cache(maxsize=8)
def _cached_table(routing: "TorusTableRouting", sides: tuple, kind: str):
    """The routing's table (built or loaded once per network, as the genetic search is slow)."""
    if routing.table_file:
        return load_table(routing.table_file)
    extra = {"seed": routing.seed} if routing.algorithm == "genetic" else {}
    return build_table(TorusShape.build(list(sides), kind), routing.algorithm, routing.augment, **extra)


@dataclasses.dataclass(frozen=True)
class TorusTableRouting(PathTableRouting):
    """Follow an Angara routing table: generated at build time (`algorithm`, `augment`,
    genetic `seed`) or loaded from a `jaxnet-tables` run (`table_file`)."""

    name: ClassVar[str] = "torus_table"
    vc_policies: ClassVar[tuple[str, ...]] = ("dateline", "ring")
    algorithm: str = "sssp"
    augment: bool = True
    table_file: str | None = None
    seed: int = 1

    def __post_init__(self):
        ALGORITHMS.get(self.algorithm, "routing.algorithm")

    def _table(self, topo: Topology):
        kind = topo.name.split("(")[0]
        require(kind in KINDS and topo.coords is not None, "topology", topo.name,
                f"torus_table routing needs one of {KINDS}")
        table = _cached_table(self, tuple(topo.sides), kind)
        require(table.shape.n_nodes == topo.n_routers, "routing.table_file", self.table_file,
                f"a table for {topo.n_routers} routers")
        return table

    def _routers(self, topo: Topology):
        hops = simulator_tables(self._table(topo))
        n = topo.n_routers
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        seq = np.concatenate([hops["router"][src, dst], np.full((len(src), 1), -1, np.int32)], axis=1)
        seq[np.arange(len(src)), hops["length"][src, dst].astype(np.int64)] = dst
        return src.astype(np.int64) * n + dst, seq

    def check_deadlock_free(self, topo, tables, policy):
        """Under `ring` (bubble flow control) dependencies straight on along a ring are
        tolerated and any cycle through a turn is refused; under `dateline` a channel is a
        (link, dateline VC) pair and every cycle is refused."""
        if policy == "ring":
            cycle = deadlock_cycle(self._table(topo))
        else:
            _, routers = self._routers(topo)
            n, vc = topo.n_routers, dateline_vcs(topo, routers).astype(np.int64)
            here, there = routers[:, :-1].astype(np.int64), routers[:, 1:].astype(np.int64)
            channels = np.where((here >= 0) & (there >= 0), (here * n + there) * 2 + vc, -1)
            found = find_deadlock_cycle(channel_dependency_graph(dependency_pairs(channels)))
            cycle = None if found is None else [f"{c // 2 // n}->{c // 2 % n} vc{c % 2}" for c in found]
        source = ("routing.table_file", self.table_file) if self.table_file else ("routing.algorithm", self.algorithm)
        require(cycle is None, *source, f"deadlock-free routes under vc_policy={policy}; these channels "
                f"depend on each other in a cycle: {' -> '.join(map(str, (cycle or [])[:12]))}"
                f"{' ...' if cycle and len(cycle) > 12 else ''}")

    def build_routes(self, topo):
        pair, routers = self._routers(topo)
        return Routes(pair=pair, ports=routes_from_routers(topo, pair, routers, "routing.table_file"))

    def build_tables(self, topo):
        pair, routers = self._routers(topo)
        paths = tables_from_routes(topo, self.build_routes(topo))
        vc = dateline_vcs(topo, routers)[:, : paths.route.shape[1]]
        return TorusTables(paths, vc)  # pairs are already in pair order: one path each

    def max_hops(self, topo, tables):
        return super().max_hops(topo, tables.paths)

    def own_vcs(self, topo, tables):
        return 1 + int(np.asarray(tables.vc).max())

    def at_injection(self, tables, router, packets, bits):
        return packets.at[:, pk.PATH].set(draw_path(tables.paths, router, packets, bits))

    def candidates(self, tables, router, packets, ports):
        cost = super().candidates(tables.paths, router, packets, ports).cost
        n_paths, hops = tables.vc.shape
        path = jnp.clip(packets[:, pk.PATH], 0, n_paths - 1)
        hop = jnp.clip(packets[:, pk.HOPS], 0, hops - 1)
        return Candidates(cost, vc=tables.vc[path, hop].astype(jnp.int32))
