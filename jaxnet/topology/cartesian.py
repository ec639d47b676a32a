"""Cartesian topologies: `torus`, `mesh` and `hamming` (HyperX / flattened butterfly).

`sides = [s0, s1, ...]`, every side >= 2 (a side of 1 is an error). Router index is mixed
radix with coordinate 0 fastest: `r = c0 + s0 * (c1 + s1 * (c2 + ...))`; `coords` [R, n]
and `sides` are set on the record. One link class.

- mesh: links between coordinates c and c + 1 in one dimension.
- torus: a mesh plus the wrap-around link (s - 1) -> 0 in every dimension with s >= 3; a
  side of 2 has a single link (no double link), so that dimension behaves like a mesh.
- hamming: routers adjacent iff they differ in exactly one coordinate.

Ports, packed with no gaps (-1 only at the end of routers with fewer links):
- torus / mesh: for each dimension d in order, the +d port (towards c_d + 1, wrapping
  to 0 on a torus) then the -d port (towards c_d - 1), each only where the link exists.
  `cartesian_ports` gives the port per (router, dimension, direction).
- hamming: for each dimension d in order, one port per other coordinate value v != c_d in
  increasing v; `hamming_ports` gives the port per (router, dimension, value).
"""
from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology, from_graph, require_servers_per_router, require_size, topology_name

PLUS, MINUS = 0, 1


def torus(sides, servers_per_router: int = 1) -> Topology:
    """Torus with the given side lengths (wrap-around links only on sides >= 3)."""
    return _grid("torus", sides, servers_per_router, periodic=True)


def mesh(sides, servers_per_router: int = 1) -> Topology:
    """Mesh with the given side lengths."""
    return _grid("mesh", sides, servers_per_router, periodic=False)


def hamming(sides, servers_per_router: int = 1) -> Topology:
    """Hamming graph: complete graphs of the given sizes, multiplied (Cartesian product)."""
    sides, servers_per_router = _validated(sides, servers_per_router)
    coords = mixed_radix_coords(sides)
    graph = nx.Graph()
    graph.add_nodes_from(range(len(coords)))
    strides = np.cumprod((1,) + sides[:-1])
    for d, side in enumerate(sides):
        for shift in range(1, side):  # v = (c_d + shift) mod side, each pair once per shift
            target = coords.copy()
            target[:, d] = (coords[:, d] + shift) % side
            graph.add_edges_from(zip(range(len(coords)), (target @ strides).tolist()))

    def port_order(r):
        return [int(r + (v - coords[r, d]) * strides[d])
                for d, side in enumerate(sides) for v in range(side) if v != coords[r, d]]

    params = dict(sides=list(sides))
    return from_graph(graph, topology_name("hamming", params), servers_per_router,
                      port_order=port_order, coords=coords, sides=sides, params=params)


def _grid(builder: str, sides, servers_per_router, periodic: bool) -> Topology:
    sides, servers_per_router = _validated(sides, servers_per_router)
    coords = mixed_radix_coords(sides)
    strides = np.cumprod((1,) + sides[:-1])
    grid = nx.grid_graph(dim=list(sides), periodic=periodic)  # nodes: reversed coords (or int)
    index = {node: int(np.dot(np.atleast_1d(node)[::-1], strides)) for node in grid}
    graph = nx.relabel_nodes(grid, index)

    def port_order(r):
        order = []
        for d, side in enumerate(sides):
            for step in (1, -1):
                c = coords[r, d] + step
                if periodic and side >= 3:
                    c %= side
                if 0 <= c < side:
                    order.append(int(r + (c - coords[r, d]) * strides[d]))
        return order

    params = dict(sides=list(sides))
    return from_graph(graph, topology_name(builder, params), servers_per_router,
                      port_order=port_order, coords=coords, sides=sides, params=params)


def _validated(sides, servers_per_router) -> tuple[tuple[int, ...], int]:
    require(not isinstance(sides, (str, bytes)) and hasattr(sides, "__len__") and len(sides) > 0,
            "topology.sides", sides, "must be a non-empty list of side lengths")
    sides = tuple(require_int(s, "topology.sides", 2) for s in sides)
    require_size("topology.sides", list(sides), math.prod(sides), sum(s - 1 for s in sides))
    servers_per_router = require_servers_per_router(servers_per_router)
    return sides, servers_per_router


def mixed_radix_coords(sides: tuple[int, ...]) -> np.ndarray:
    """int32 [prod(sides), n]: coordinates of every router index, coordinate 0 fastest."""
    grid = itertools.product(*(range(s) for s in reversed(sides)))
    return np.array([c[::-1] for c in grid], np.int32).reshape(-1, len(sides))


def cartesian_ports(topo: Topology) -> np.ndarray:
    """int32 [R, n_dims, 2]: port towards c_d + 1 ([..., PLUS]) and c_d - 1 ([..., MINUS]).

    Wrap-around links count as +1 from s - 1 and -1 from 0 (sides >= 3 only). -1 where the
    router has no such link (mesh borders, the missing side of a side-2 dimension).
    """
    require(topo.coords is not None, "topology", topo.name, "must be Cartesian (have coords)")
    sides = np.asarray(topo.sides)
    ports = np.full((topo.n_routers, len(sides), 2), -1, np.int32)
    for r, p in zip(*np.nonzero(topo.neighbor >= 0)):
        diff = topo.coords[topo.neighbor[r, p]] - topo.coords[r]
        d = int(np.nonzero(diff)[0][0])
        step, side = int(diff[d]), int(sides[d])
        if step == 1 or (side >= 3 and step == 1 - side):
            ports[r, d, PLUS] = p
        elif step == -1 or (side >= 3 and step == side - 1):
            ports[r, d, MINUS] = p
    return ports


def port_rings(topo: Topology) -> np.ndarray:
    """int32 [R, P]: the ring each network port travels, 2 d for + and 2 d + 1 for - in
    dimension d; -1 for unused ports. A ValueError naming `topology` unless every link is a
    step of a torus or mesh dimension (what ring-based flow control needs)."""
    ports = cartesian_ports(topo)
    rings = np.full(topo.neighbor.shape, -1, np.int32)
    for d in range(ports.shape[1]):
        for sign in (PLUS, MINUS):
            has = ports[:, d, sign] >= 0
            rings[np.nonzero(has)[0], ports[has, d, sign]] = 2 * d + (0 if sign == PLUS else 1)
    require(bool(np.all((rings >= 0) == (topo.neighbor >= 0))), "topology", topo.name,
            "a torus, mesh or ring: every link must step one coordinate by one")
    return rings


def hamming_ports(topo: Topology) -> np.ndarray:
    """int32 [R, n_dims, max side]: port to the router whose coordinate d is v (-1: v = c_d)."""
    require(topo.coords is not None, "topology", topo.name, "must be Cartesian (have coords)")
    ports = np.full((topo.n_routers, len(topo.sides), max(topo.sides)), -1, np.int32)
    for r, p in zip(*np.nonzero(topo.neighbor >= 0)):
        diff = topo.coords[topo.neighbor[r, p]] - topo.coords[r]
        d = int(np.nonzero(diff)[0][0])
        ports[r, d, topo.coords[topo.neighbor[r, p], d]] = p
    return ports
