"""Ant Mill traffic (Camarero, Martinez, Beivide 2024, Definition 2).

Given a Hamiltonian cycle x_0 .. x_{n-1} of the routers, every server of router x_i sends
to a server of router x_{i+lam} (indices mod n). `unique: true` is the (H, lam) pattern:
the cycle has unique shortest paths up to delta >= lam hops, with delta the largest the
search reaches (or `delta` when given), so minimal routing uses only the cycle's links and
each server can inject at most 1 / (p * lam). `unique: false` is (H-hat, lam): any
Hamiltonian cycle. Never picks the source's own switch (1 <= lam < n).

"A server" of x_{i+lam}: with `server_map: same` server k sends to server k, so the pattern
is a server permutation; `random` draws a random server of x_{i+lam} per packet.
"""
from __future__ import annotations

import functools

import numpy as np

from jaxnet.core.validate import is_int, require, require_int
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import TrafficTable, router_map_table
from jaxnet.traffic.hamiltonian import CycleNotFound, find_cycle, search_max_delta


def antmill(topo: Topology, rng, lam: int = 1, unique: bool = True, delta: int | None = None,
            server_map: str = "same", search_seed: int | None = None,
            search_seconds: float = 60.0) -> TrafficTable:
    """(H, lam)- or (H-hat, lam)-Ant-Mill; the cycle search is seeded by `search_seed`,
    or by the simulation seed when null (a different cycle per seed)."""
    n = topo.n_routers
    require_int(lam, "traffic.lam", 1, n - 1)
    require(isinstance(unique, bool), "traffic.unique", unique, "must be true or false")
    require(delta is None or (is_int(delta) and delta >= 1),
            "traffic.delta", delta, "must be null (largest found) or an integer >= 1")
    require(search_seconds > 0, "traffic.search_seconds", search_seconds, "must be > 0")
    seed = int(rng.integers(2**31)) if search_seed is None else int(search_seed)
    cycle, reached = antmill_cycle(topo, unique, delta, seed, float(search_seconds))
    if unique:
        require(lam <= reached, "traffic.lam", lam,
                f"must be <= delta={reached}, the unique-path depth of the Hamiltonian cycle for "
                f"{topo.name} (the largest found when traffic.delta is null; unique=false gives "
                f"the H-hat variant)")
    dest = np.empty(n, np.int64)
    dest[cycle] = np.roll(cycle, -lam)
    return router_map_table(dest, topo.servers_per_router, server_map)


@functools.lru_cache(maxsize=16)
def antmill_cycle(topo: Topology, unique: bool, delta: int | None, seed: int,
                  search_seconds: float) -> tuple[np.ndarray, int]:
    """(read-only cycle, delta reached); cached per topology object, so simulations that
    share a `search_seed` search once."""
    if not unique:
        cycle, reached = find_cycle(topo, 1, seed, time_budget=search_seconds), 1
    elif delta is not None:
        try:
            cycle, reached = find_cycle(topo, int(delta), seed, time_budget=search_seconds), int(delta)
        except CycleNotFound as err:
            raise ValueError(f"traffic.delta={delta} is invalid: {err}") from err
    else:
        found = search_max_delta(topo, seed, time_budget=search_seconds)
        cycle, reached = found.cycle, found.delta
    cycle.setflags(write=False)
    return cycle, reached
