"""Graphs of the projective plane PG(2, q): its Levi graph and its polarity graph.

Points (and, dually, lines) of PG(2, q) are the N = q^2 + q + 1 vectors of GF(q)^3 whose
first non-zero coordinate is 1, in the order (1, a, b), (0, 1, b), (0, 0, 1) with a, b
increasing (b fastest). Point P lies on line L iff P . L = 0.

- `projective`: the Levi (incidence) graph; routers 0..N-1 are points, N..2N-1 lines;
  2N routers of degree q + 1, diameter 3.
- `demiprojective`: the Erdős–Rényi polarity graph ER_q (= PolarFly); routers are the
  points, P ~ P' iff P . P' = 0 and P != P'. The q + 1 absolute points (P . P = 0) lose
  their self-loop and have degree q, the others q + 1; diameter 2.

Ports in increasing neighbour index; one link class.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology, from_graph, require_servers_per_router, require_size, topology_name
from jaxnet.topology.galois import GaloisField, galois_field, prime_power


def projective(q: int, servers_per_router: int = 1) -> Topology:
    """Levi graph of PG(2, q), q a prime power."""
    field, servers_per_router = _validated(q, servers_per_router, copies=2)
    incident = orthogonal_pairs(field)
    n = len(incident)
    points, lines = np.nonzero(incident)
    graph = nx.Graph()
    graph.add_nodes_from(range(2 * n))
    graph.add_edges_from(zip(points.tolist(), (n + lines).tolist()))
    params = dict(q=field.q)
    return from_graph(graph, topology_name("projective", params), servers_per_router,
                      params=params)


def demiprojective(q: int, servers_per_router: int = 1) -> Topology:
    """Polarity graph ER_q (PolarFly) of PG(2, q), q a prime power; self-loops dropped."""
    field, servers_per_router = _validated(q, servers_per_router, copies=1)
    orthogonal = orthogonal_pairs(field)
    np.fill_diagonal(orthogonal, False)
    graph = nx.from_numpy_array(orthogonal.astype(np.int8))
    params = dict(q=field.q)
    return from_graph(graph, topology_name("demiprojective", params), servers_per_router,
                      params=params)


def _validated(q, servers_per_router, copies: int) -> tuple[GaloisField, int]:
    """(GF(q), servers per router) of a graph on `copies` x the q**2 + q + 1 points of PG(2, q)."""
    q = require_int(q, "topology.q", 2)
    require_size("topology.q", q, copies * (q * q + q + 1), q + 1)
    servers_per_router = require_servers_per_router(servers_per_router)
    require(prime_power(q) is not None, "topology.q", q, "must be a prime power")
    return galois_field(q), servers_per_router


def projective_points(field: GaloisField) -> np.ndarray:
    """int32 [q^2 + q + 1, 3]: normalised representatives of the points of PG(2, q)."""
    e = np.arange(field.q)
    a, b = np.meshgrid(e, e, indexing="ij")
    return np.concatenate([
        np.stack([np.ones(a.size, int), a.ravel(), b.ravel()], axis=1),
        np.stack([np.zeros(field.q, int), np.ones(field.q, int), e], axis=1),
        [[0, 0, 1]],
    ]).astype(np.int32)


def orthogonal_pairs(field: GaloisField) -> np.ndarray:
    """bool [N, N]: P . P' = 0 over GF(q) for all pairs of points."""
    points = projective_points(field)
    dot = np.zeros((len(points),) * 2, np.int32)
    for i in range(3):
        dot = field.add[dot, field.mul[points[:, None, i], points[None, :, i]]]
    return dot == 0
