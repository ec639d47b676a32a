"""Classic patterns on Cartesian coordinates (tori, meshes, Hamming graphs).

Router s with coordinates (s_0, .., s_{n-1}) on sides (k_0, .., k_{n-1}) sends to router d
(Dally & Towles, Principles and Practices of Interconnection Networks, Table 3.2, with
digits read as coordinates), in every dimension j:
- tornado:        d_j = (s_j + ceil(k_j / 2) - 1) mod k_j   (half way round, minus one)
- neighbour:      d_j = (s_j + 1) mod k_j
- bit_complement: d_j = k_j - 1 - s_j
- transpose:      d_j = s_{(j + n/2) mod n}  (n even; 2-D: (x, y) -> (y, x)); or, with
                  address: bits, the router index's bits rotated by half (any 2^b routers)
On meshes the same formulas apply (neighbour wraps k - 1 -> 0 through the mesh).
Routers the pattern maps to themselves (transpose's diagonal, bit_complement's centre when
every side is odd, tornado on sides <= 2) are silent: no pattern here picks the source's own
switch. With `server_map: same` server k of s sends to server k of d; `random`: any server.
"""
from __future__ import annotations

import numpy as np

from jaxnet.core.validate import is_int, require
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import TrafficTable, router_map_table


def tornado(topo: Topology, rng, server_map: str = "same", dimensions=None) -> TrafficTable:
    """Every coordinate advances ceil(k/2) - 1 (tornado: the worst case for minimal torus
    routing); `dimensions` (a list of dimension indices) shifts only those, e.g. [0] for the
    x + ceil(k/2) - 1 tornado of one dimension."""
    coords, sides = cartesian_coords(topo, "tornado")
    shift = (sides + 1) // 2 - 1
    if dimensions is not None:
        dims = list(dimensions) if isinstance(dimensions, (list, tuple)) else [dimensions]
        require(len(dims) > 0 and all(is_int(d) and 0 <= d < len(sides) for d in dims),
                "traffic.dimensions", dimensions, f"null (all) or a list of indices in [0, {len(sides) - 1}]")
        shift = np.where(np.isin(np.arange(len(sides)), dims), shift, 0)
    return coordinate_map(topo, (coords + shift) % sides, "tornado", server_map)


def neighbour(topo: Topology, rng, server_map: str = "same") -> TrafficTable:
    """Every coordinate advances by one."""
    coords, sides = cartesian_coords(topo, "neighbour")
    return coordinate_map(topo, (coords + 1) % sides, "neighbour", server_map)


def bit_complement(topo: Topology, rng, server_map: str = "same") -> TrafficTable:
    """Every coordinate mirrored: s_j -> k_j - 1 - s_j."""
    coords, sides = cartesian_coords(topo, "bit_complement")
    return coordinate_map(topo, sides - 1 - coords, "bit_complement", server_map)


def transpose(topo: Topology, rng, server_map: str = "same", address: str = "coordinates") -> TrafficTable:
    """Coordinates rotated by half the dimensions (2-D: x and y swapped); with
    `address: bits`, the b-bit router index rotated by b // 2 bits (Dally & Towles'
    transpose on node addresses; needs a power-of-two router count, e.g. 4x2x2x2)."""
    require(address in ("coordinates", "bits"), "traffic.address", address, "coordinates or bits")
    if address == "bits":
        n = topo.n_routers
        bits = n.bit_length() - 1
        require(n == 1 << bits and bits >= 2, "traffic.address", address,
                f"bits needs a power-of-two router count >= 4, not {n}")
        r = np.arange(n)
        dest = ((r << (bits // 2)) | (r >> (bits - bits // 2))) & (n - 1)
        dest[dest == r] = -1
        return router_map_table(dest, topo.servers_per_router, server_map)
    coords, sides = cartesian_coords(topo, "transpose")
    n = sides.size
    half = (np.arange(n) + n // 2) % n
    require(n % 2 == 0 and np.array_equal(sides, sides[half]), "topology.sides", sides.tolist(),
            "transpose needs an even number of dimensions with side j equal to side j + n/2 "
            "(or traffic.address=bits)")
    return coordinate_map(topo, coords[:, half], "transpose", server_map)


def cartesian_coords(topo: Topology, pattern: str) -> tuple[np.ndarray, np.ndarray]:
    """(coords int64 [R, n], sides int64 [n]), or a ValueError for non-Cartesian topologies."""
    require(topo.coords is not None and topo.sides is not None, "traffic.name", pattern,
            f"needs a Cartesian topology (torus, mesh, hamming); {topo.name} has no `coords`")
    return np.asarray(topo.coords, np.int64), np.asarray(topo.sides, np.int64)


def coordinate_map(topo: Topology, dest_coords: np.ndarray, pattern: str,
                   server_map: str) -> TrafficTable:
    """Table sending router r to the router at dest_coords[r]; fixed points are silent."""
    coords, sides = cartesian_coords(topo, pattern)
    router_at = np.empty(int(np.prod(sides)), np.int64)
    router_at[np.ravel_multi_index(tuple(coords.T), tuple(sides))] = np.arange(topo.n_routers)
    dest = router_at[np.ravel_multi_index(tuple(dest_coords.T), tuple(sides))]
    dest[dest == np.arange(topo.n_routers)] = -1
    require(bool(np.any(dest >= 0)), "topology.sides", sides.tolist(),
            f"{pattern} maps every router to itself on these sides")
    return router_map_table(dest, topo.servers_per_router, server_map)
