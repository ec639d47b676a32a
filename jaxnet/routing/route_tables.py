"""Route tables shared by the table-driven schemes (`ksp`, `allpaths`, `table`,
`torus_table`; docs/routing_paths.md). On the host a scheme builds a path set per ordered
router pair (`jaxnet.paths.enumerate.Routes`); on device the tables (`PathTables`) hold

  route   int8 [n_paths, H]  output port taken at each hop of each path, -1 padded
                             (H = longest path in hops = max_hops)
  first   int32 [R, R]       global id of the first path of the pair (s, t): the paths of a
                             pair are the contiguous block first[s, t] .. + count[s, t]
  count   int32 [R, R]       paths of the pair (0 on the diagonal)
  weight  float32 [n_paths]  relative weight of each path within its pair's block
  lanes   int32 [B]          0 .. B-1, B = the largest block (its shape fixes the width of
                             the draw at injection; the static scheme holds no sizes)

Paths are stored pair-major (pair s * R + t, then path order). At injection a packet draws
a path of its (source, destination) block by inverse CDF of the weights with its random
word and keeps the global path id in PATH; at every hop `candidates` offers exactly the
port route[PATH, HOPS] (cost 0, every other port NOT_CANDIDATE). VC = hops so far keeps it
deadlock-free with max_hops VCs. Weights are traced arrays in the tables:
`with_weights(network, w)` swaps them without recompiling. A pair whose weights are all
zero falls back to uniform over its block.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.rng import uniform01
from jaxnet.core.validate import require
from jaxnet.paths.enumerate import Routes
from jaxnet.routing.base import NOT_CANDIDATE, Candidates, RoutingScheme
from jaxnet.topology.base import Topology


class PathTables(NamedTuple):
    """Device tables of a path-table scheme (see the module docstring)."""

    route: Any
    first: Any
    count: Any
    weight: Any
    lanes: Any

    def memory_bytes(self) -> int:
        """Bytes of all table arrays (what the tables occupy on device)."""
        return int(sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in self))

    @property
    def n_paths(self) -> int:
        return int(self.route.shape[0])


def route_routers(topo: Topology, tables: PathTables) -> tuple[np.ndarray, np.ndarray]:
    """(pair int64 [n_paths], routers int32 [n_paths, H + 1]) of every table path: the
    router sequence obtained by following its ports from the pair's source, -1 padded."""
    count = np.asarray(tables.count).reshape(-1).astype(np.int64)
    pair = np.repeat(np.arange(count.size, dtype=np.int64), count)
    route = np.asarray(tables.route).astype(np.int32)
    n_paths, hops = route.shape
    routers = np.full((n_paths, hops + 1), -1, np.int32)
    here = (pair // topo.n_routers).astype(np.int32)
    routers[:, 0] = here
    for h in range(hops):
        step = route[:, h] >= 0
        nxt = topo.neighbor[here, np.maximum(route[:, h], 0)]
        here = np.where(step, nxt, here)
        routers[:, h + 1] = np.where(step, nxt, -1)
    return pair, routers


def tables_from_routes(topo: Topology, routes: Routes) -> PathTables:
    """Pack a host path set into device-table form (numpy arrays)."""
    n = topo.n_routers
    require(routes.ports.shape[0] > 0, "routing", "paths", "at least one path")
    order = np.argsort(routes.pair, kind="stable")
    pair, ports = routes.pair[order], routes.ports[order]
    weight = np.ones(pair.size, np.float32) if routes.weight is None else routes.weight[order]
    count = np.bincount(pair, minlength=n * n).astype(np.int32)
    first = (np.cumsum(count) - count).astype(np.int32)
    hops = int((ports >= 0).sum(axis=1).max())
    route = ports[:, : max(hops, 1)].astype(np.int8)
    return PathTables(route=route, first=first.reshape(n, n), count=count.reshape(n, n),
                      weight=np.asarray(weight, np.float32),
                      lanes=np.arange(max(int(count.max()), 1), dtype=np.int32))


# ---- device side ---------------------------------------------------------------------

def draw_path(tables: PathTables, router, packets, bits):
    """Global path id int32 [N] drawn by weight for each packet's (router, DST_R) pair, -1
    for pairs without paths (router = destination)."""
    dst = packets[:, pk.DST_R]
    first, count = tables.first[router, dst], tables.count[router, dst]
    lanes = tables.lanes[None, :]
    inblock = lanes < count[:, None]
    ids = jnp.clip(first[:, None] + lanes, 0, tables.weight.shape[0] - 1)
    w = jnp.where(inblock, jnp.maximum(tables.weight[ids], 0.0), 0.0)
    w = jnp.where(inblock & (w.sum(axis=1, keepdims=True) <= 0.0), 1.0, w)  # all zero: uniform
    cum = jnp.cumsum(w, axis=1)
    u = uniform01(bits) * cum[:, -1]
    j = jnp.sum(cum <= u[:, None], axis=1)
    j = jnp.minimum(j, jnp.max(jnp.where(w > 0, lanes, 0), axis=1))  # never a zero weight
    return jnp.where(count > 0, first + j, -1).astype(jnp.int32)


@dataclasses.dataclass(frozen=True)
class PathTableRouting(RoutingScheme):
    """Base of the path-table schemes: subclasses implement `build_routes`."""

    name: ClassVar[str] = "path_table"
    exact_max_hops: ClassVar[bool] = True

    def build_routes(self, topo: Topology) -> Routes:
        raise NotImplementedError

    def build_tables(self, topo: Topology) -> PathTables:
        return tables_from_routes(topo, self.build_routes(topo))

    def max_hops(self, topo, tables):
        return int(max(1, (np.asarray(tables.route) >= 0).sum(axis=1).max()))

    def most_candidates(self, topo, tables):
        """The packet's path names one port a hop."""
        return 1

    def at_injection(self, tables, router, packets, bits):
        return packets.at[:, pk.PATH].set(draw_path(tables, router, packets, bits))

    def candidates(self, tables, router, packets, ports):
        n_paths, hops = tables.route.shape
        path = jnp.clip(packets[:, pk.PATH], 0, n_paths - 1)
        hop = jnp.clip(packets[:, pk.HOPS], 0, hops - 1)
        port = tables.route[path, hop].astype(jnp.int32)
        return Candidates(jnp.where(jnp.arange(ports)[None, :] == port[:, None], 0, NOT_CANDIDATE))

    def summary(self, topo: Topology, tables: PathTables) -> dict:
        """Size of the tables: paths, longest path, largest block, device memory."""
        count = np.asarray(tables.count)
        return {"paths": tables.n_paths, "max_hops": self.max_hops(topo, tables),
                "max_paths_per_pair": int(count.max()), "min_paths_per_pair":
                int(count[~np.eye(count.shape[0], dtype=bool)].min()),
                "memory_bytes": tables.memory_bytes()}

def pathset_weights(path_valid: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Flat per-path weights (table order) from weights [n_pairs, k] of a PathSet whose
    pairs are in row-major order (as jaxnet-paths writes them)."""
    return np.asarray(weights, np.float32)[np.asarray(path_valid, bool)]


def with_weights(network, weights, valid=None) -> Any:
    """The same network with new path weights: float32 [n_paths] in table order, or
    [n_pairs, k] with the `valid` mask of the PathSet (pairs row-major, as jaxnet-paths
    writes them) the `table` scheme was built from. Never recompiles."""
    tables = network.tables
    w = np.asarray(weights, np.float32)
    if valid is not None:
        w = pathset_weights(valid, w)
    require(w.shape == (tables.n_paths,), "weights", w.shape, f"{tables.n_paths} per-path weights")
    require(bool(np.isfinite(w).all() & (w >= 0).all()), "weights", "...", "finite weights >= 0")
    return dataclasses.replace(network, tables=tables._replace(weight=jnp.asarray(w)))
