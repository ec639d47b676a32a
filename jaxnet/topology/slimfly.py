"""Slim Fly: the McKay–Miller–Širáň (MMS) graph of diameter 2 (Besta & Hoefler, SC'14).

For a prime power q = 4w + delta, delta in {-1, 0, 1}, with primitive element xi of GF(q),
routers are (0, x, y) and (1, m, c) for x, y, m, c in GF(q), numbered
`x * q + y` and `q^2 + m * q + c`. Links:

  (0, x, y) ~ (0, x, y')  iff  y - y' in X
  (1, m, c) ~ (1, m, c')  iff  c - c' in X'
  (0, x, y) ~ (1, m, c)   iff  y = m * x + c

with generator sets (powers of xi)
  delta = +1: X = {xi^0, xi^2, ..., xi^(q-3)},  X' = {xi^1, xi^3, ..., xi^(q-2)}
  delta = -1: X = {xi^0, xi^2, ..., xi^(2w-2)} + {xi^(2w-1), xi^(2w+1), ..., xi^(4w-3)},
              X' = {xi^1, xi^3, ..., xi^(2w-1)} + {xi^(2w), xi^(2w+2), ..., xi^(4w-2)}
  delta =  0: X = {xi^0, xi^2, ..., xi^(q-2)},  X' = {xi^1, xi^3, ..., xi^(q-1)}
giving 2 q^2 routers of degree (3q - delta) / 2. Ports in increasing neighbour index;
one link class.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology, from_graph, require_servers_per_router, require_size, topology_name
from jaxnet.topology.galois import GaloisField, galois_field, prime_power


def slimfly(q: int, servers_per_router: int = 1) -> Topology:
    """MMS Slim Fly for a prime power q with q mod 4 != 2."""
    q = require_int(q, "topology.q", 2)
    require_size("topology.q", q, 2 * q * q, (3 * q + 1) // 2)
    servers_per_router = require_servers_per_router(servers_per_router)
    require(prime_power(q) is not None, "topology.q", q, "must be a prime power")
    require(q % 4 != 2, "topology.q", q,
            "must be 4w - 1, 4w or 4w + 1 (q = 2 mod 4 has no MMS graph)")
    field = galois_field(q)
    x_set, x_prime_set = generator_sets(field)
    params = dict(q=q)
    return from_graph(_mms_graph(field, x_set, x_prime_set),
                      topology_name("slimfly", params), servers_per_router, params=params)


def generator_sets(field: GaloisField) -> tuple[np.ndarray, np.ndarray]:
    """The MMS sets X and X' (element arrays) for GF(q); both are closed under negation."""
    q = field.q
    delta = (q + 1) % 4 - 1  # q = 4w + delta
    w = (q - delta) // 4
    xi = field.primitive_element
    assert field.multiplicative_order(xi) == q - 1
    power = field.powers(xi)
    power = np.concatenate([power, power[:1]])  # allow xi^(q-1) = 1
    if delta == 1:
        x_exp, x_prime_exp = range(0, q - 2, 2), range(1, q - 1, 2)
    elif delta == -1:
        x_exp = [*range(0, 2 * w - 1, 2), *range(2 * w - 1, 4 * w - 2, 2)]
        x_prime_exp = [*range(1, 2 * w, 2), *range(2 * w, 4 * w - 1, 2)]
    else:
        x_exp, x_prime_exp = range(0, q - 1, 2), range(1, q, 2)
    x_set, x_prime_set = power[list(x_exp)], power[list(x_prime_exp)]
    for s in (x_set, x_prime_set):
        assert set(field.neg[s]) == set(s), "MMS generator set not closed under negation"
    return x_set, x_prime_set


def _mms_graph(field: GaloisField, x_set: np.ndarray, x_prime_set: np.ndarray) -> nx.Graph:
    q = field.q
    e = np.arange(q)
    graph = nx.Graph()
    graph.add_nodes_from(range(2 * q * q))
    # within each column: (side, x, y) ~ (side, x, y + s) for s in the side's set
    for side, generators in ((0, x_set), (1, x_prime_set)):
        base = side * q * q
        x, y, s = np.meshgrid(e, e, generators, indexing="ij")
        graph.add_edges_from(zip((base + x * q + y).ravel().tolist(),
                                 (base + x * q + field.add[y, s]).ravel().tolist()))
    # across: (0, x, y) ~ (1, m, c) with y = m x + c
    x, m, c = np.meshgrid(e, e, e, indexing="ij")
    y = field.add[field.mul[m, x], c]
    graph.add_edges_from(zip((x * q + y).ravel().tolist(), (q * q + m * q + c).ravel().tolist()))
    return graph
