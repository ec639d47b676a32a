"""Traffic patterns, keyed by config name (`conf/traffic/<name>.yaml`).

A pattern builder takes (topology, rng, **params) and returns a `TrafficTable`. The rng is
seeded from the simulation seed, so patterns with random choices (permutations) are
fixed per seed and differ across seeds.
"""
from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from jaxnet.topology import Topology, require
from jaxnet.traffic.base import (
    ANY_SERVER,
    UNIFORM,
    TrafficTable,
    destination_table,
    from_entries,
    router_destination_table,
    uniform_table,
)

PATTERNS: dict[str, Callable[..., TrafficTable]] = {}


def register(name: str):
    """Decorator: make a pattern builder available as `traffic=<name>`."""

    def wrap(builder):
        PATTERNS[name] = builder
        return builder

    return wrap


def build_traffic(cfg: Mapping, topo: Topology, seed: int) -> TrafficTable:
    """Compile the pattern a config group describes for one simulation seed."""
    params = dict(cfg)
    name = params.pop("name", None)
    require(name in PATTERNS, "traffic.name", name, f"one of {sorted(PATTERNS)}")
    rng = np.random.default_rng([int(seed), 0x7A11C])
    return PATTERNS[name](topo, rng, **params)


@register("uniform")
def uniform(topo: Topology, rng) -> TrafficTable:
    """Every server sends to a uniformly random server on another router."""
    return uniform_table(topo.n_servers)


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


__all__ = ["PATTERNS", "TrafficTable", "build_traffic", "register", "from_entries",
           "UNIFORM", "ANY_SERVER", "uniform_table", "destination_table", "router_destination_table"]

# Importing the pattern modules registers them.
from jaxnet.traffic import permutations  # noqa: E402,F401
from jaxnet.traffic import antmill  # noqa: E402,F401
from jaxnet.traffic import dragonfly_patterns  # noqa: E402,F401
from jaxnet.traffic import cartesian  # noqa: E402,F401
from jaxnet.traffic import uniform_variants  # noqa: E402,F401
from jaxnet.traffic import demand  # noqa: E402,F401
from jaxnet.traffic import mixture  # noqa: E402,F401
