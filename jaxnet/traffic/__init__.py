"""Traffic patterns, keyed by config name (`conf/traffic/<name>.yaml`).

A pattern builder takes (topology, rng, **params) and returns a `TrafficTable`. The rng is
seeded from the simulation seed, so patterns with random choices (permutations) are
fixed per seed and differ across seeds.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from jaxnet.core.registry import Registry
from jaxnet.core.validate import require
from jaxnet.topology import Topology
from jaxnet.traffic.base import (
    ANY_SERVER,
    UNIFORM,
    UNIFORM_OTHER_ROUTER,
    TrafficTable,
    destination_table,
    from_entries,
    router_destination_table,
    uniform_table,
)

PATTERNS = Registry("traffic", leading=2)  # builders take (topology, rng, **config keys)
register = PATTERNS.register


def build_traffic(cfg: Mapping, topo: Topology, seed: int) -> TrafficTable:
    """Compile the pattern a config group describes for one simulation seed."""
    rng = np.random.default_rng([int(seed), 0x7A11C])
    return PATTERNS.build(cfg, topo, rng)


def tables_for_points(cfg: Mapping, topo: Topology, points) -> list[TrafficTable]:
    """One table per (load, seed) point, each built once per seed."""
    by_seed = {seed: build_traffic(cfg, topo, seed) for _, seed in points}
    return [by_seed[seed] for _, seed in points]


@register("uniform")
def uniform(topo: Topology, rng) -> TrafficTable:
    """The papers' uniform: every packet goes to a uniformly random other server, servers on
    the source's own router included (probability (p - 1) / (S - 1))."""
    require(topo.n_servers >= 2, "topology", topo.name, "uniform traffic needs at least 2 servers")
    return uniform_table(topo.n_servers)


@register("uniform_other_router")
def uniform_other_router(topo: Topology, rng) -> TrafficTable:
    """Every packet goes to a uniformly random server on another router (never the source's
    own router): the variant that excludes the own switch."""
    require(topo.n_routers >= 2, "topology", topo.name, "uniform_other_router needs at least 2 routers")
    return uniform_table(topo.n_servers, other_router=True)


@register("server_permutation")
def server_permutation(topo: Topology, rng) -> TrafficTable:
    """A random permutation of servers, fixed per seed. It may map a server to its own router."""
    return destination_table(rng.permutation(topo.n_servers), topo.servers_per_router)


@register("destination_table")
def destination(topo: Topology, rng, servers=None, routers=None) -> TrafficTable:
    """A fixed mapping given as a list: `servers` (one destination server per source server)
    or `routers` (one destination router per source router; random server there). -1 = silent."""
    require((servers is None) != (routers is None), "traffic.servers/routers", (servers, routers),
            "give exactly one of `servers` or `routers`")
    if servers is not None:
        servers = np.asarray(list(servers))
        require(servers.shape == (topo.n_servers,), "traffic.servers", f"length {servers.size}",
                f"one entry per server ({topo.n_servers})")
        require(bool(np.all(servers < topo.n_servers)), "traffic.servers", servers.max(),
                f"server ids below {topo.n_servers}")
        return destination_table(servers, topo.servers_per_router)
    routers = np.asarray(list(routers))
    require(routers.shape == (topo.n_routers,), "traffic.routers", f"length {routers.size}",
            f"one entry per router ({topo.n_routers})")
    require(bool(np.all(routers < topo.n_routers)), "traffic.routers", routers.max(),
            f"router ids below {topo.n_routers}")
    return router_destination_table(routers, topo.servers_per_router)


__all__ = ["PATTERNS", "TrafficTable", "build_traffic", "tables_for_points", "register", "from_entries",
           "UNIFORM", "UNIFORM_OTHER_ROUTER", "ANY_SERVER", "uniform_table", "destination_table", "router_destination_table"]

# Importing the pattern modules registers them.
from jaxnet.traffic import (
    antmill,  # noqa: E402,F401
    cartesian,  # noqa: E402,F401
    demand,  # noqa: E402,F401
    dragonfly_patterns,  # noqa: E402,F401
    mixture,  # noqa: E402,F401
    permutations,  # noqa: E402,F401
    uniform_variants,  # noqa: E402,F401
)
