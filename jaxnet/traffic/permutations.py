"""Switch permutations: each router sends to one other router and receives from one.

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

from jaxnet.core.validate import require_int
from jaxnet.topology import Topology
from jaxnet.traffic import register
from jaxnet.traffic.base import TrafficTable, router_map_table


@register("switch_permutation")
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


@register("neighbour_permutation")
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
