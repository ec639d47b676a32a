"""Fixed mappings: a random server permutation, a given destination table, and switch
permutations (each router sends to one other router and receives from one).

`switch_permutation` is the Ant Mill paper's "switch permutation toward distance lambda"
(Sect. 6.1); `neighbour_permutation` is the Polarized paper's "router permutation to
neighbor". Neither ever picks the source's own switch (distance >= 1).

A permutation with every destination at distance d is a perfect matching of the bipartite
graph "u -> v when D(u, v) = d". Hopcroft-Karp on randomly relabelled routers finds one if
any exists (so a failure means none exists, not an unlucky search), then random
exchanges of destinations that keep both distances mix it towards a uniform choice.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import maximum_bipartite_matching

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import TrafficTable, destination_table, router_destination_table, router_map_table


def server_permutation(topo: Topology, rng) -> TrafficTable:
    """A random permutation of servers, fixed per seed. It may map a server to its own router."""
    return destination_table(rng.permutation(topo.n_servers), topo.servers_per_router)


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


def switch_permutation(topo: Topology, rng, distance: int = 1, server_map: str = "same",
                       mixing_sweeps: int = 20) -> TrafficTable:
    """A random router permutation with every destination `distance` hops from its source."""
    require_int(distance, "traffic.distance", 1, topo.diameter)
    require_int(mixing_sweeps, "traffic.mixing_sweeps", 0)
    perm = distance_permutation(topo.distances == distance, rng, mixing_sweeps)
    if perm is None:
        raise ValueError(f"traffic.distance={distance} is invalid: {topo.name} has no permutation "
                         f"of routers with every destination at distance {distance}")
    return router_map_table(perm, topo.servers_per_router, server_map)


def neighbour_permutation(topo: Topology, rng, server_map: str = "same",
                          mixing_sweeps: int = 20) -> TrafficTable:
    """A random router permutation sending every router to one of its neighbours."""
    return switch_permutation(topo, rng, 1, server_map, mixing_sweeps)


def distance_permutation(allowed: np.ndarray, rng, mixing_sweeps: int) -> np.ndarray | None:
    """A random permutation p with allowed[u, p[u]] for all u (int64 [R]), or None if none exists.

    Each mixing sweep pairs the routers at random and exchanges the destinations of a
    pair (u, v) when allowed[u, p[v]] and allowed[v, p[u]].
    """
    n = allowed.shape[0]
    rows, cols = rng.permutation(n), rng.permutation(n)
    match = maximum_bipartite_matching(scipy.sparse.csr_matrix(allowed[np.ix_(rows, cols)]),
                                       perm_type="column")
    if np.any(match < 0):
        return None
    perm = np.empty(n, np.int64)
    perm[rows] = cols[match]
    for _ in range(mixing_sweeps):
        u, v = rng.permutation(n)[: n // 2 * 2].reshape(2, -1)
        swap = allowed[u, perm[v]] & allowed[v, perm[u]]
        perm[u[swap]], perm[v[swap]] = perm[v[swap]], perm[u[swap]]
    return perm
