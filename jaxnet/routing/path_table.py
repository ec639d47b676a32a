"""Source routing from path tables: `ksp`, `allpaths` and `table` (docs/routing_paths.md).

All three schemes share one mechanism. On the host they build a set of paths per ordered
router pair; on device the tables (`PathTables`) hold

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
port route[PATH, HOPS] (cost 0, every other port NOT_CANDIDATE). VC = hops so far (the
engine default) keeps it deadlock-free with max_hops VCs. Weights are traced arrays in the
tables: `with_weights(network, w)` swaps them without recompiling. A pair whose weights are
all zero falls back to uniform over its block.

  ksp       k shortest simple paths (Yen's semantics): all minimal paths if there are at
            most k, otherwise k of them chosen uniformly at random (fixed by `seed`); pairs
            with fewer than k minimal paths get the next-shortest simple paths, layer by
            layer in length (`method: layers`, vectorised; the last layer needed is sampled
            uniformly with `seed`) or from networkx's Yen implementation (`method: yen`).
  allpaths  every minimal path (count = topology.path_counts); a pair with more than
            `max_paths` minimal paths is an error.
  table     any path set: a `PathSet` .npz from `jaxnet-paths` (`path_file`), with
            `weights: uniform` or the name of an array [n_pairs, k] in the weights file.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.routing.base import NOT_CANDIDATE, Candidates, RoutingScheme
from jaxnet.sim import packets as pk
from jaxnet.topology import Topology, require

_CHUNK_ROWS = 1 << 16  # rows per vectorised step (bounds host scratch memory)
_CHUNK_PAIRS = 2048  # pairs per chunk of the longer-path search


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


@dataclasses.dataclass(frozen=True)
class Routes:
    """Host path set in port form: path i of pair[i] = src * R + dst leaves src and takes
    port ports[i, h] at hop h (-1 padded); weight [n] or None (uniform)."""

    pair: np.ndarray
    ports: np.ndarray
    weight: np.ndarray | None = None


# ---- host helpers --------------------------------------------------------------------

def port_lookup(topo: Topology) -> np.ndarray:
    """int16 [R, R]: the (first) port of r leading to v, -1 if none."""
    r_ids, p_ids = np.nonzero(topo.neighbor >= 0)
    lookup = np.full((topo.n_routers,) * 2, -1, np.int16)
    # reversed so the lowest port wins for parallel links
    lookup[r_ids[::-1], topo.neighbor[r_ids, p_ids][::-1]] = p_ids[::-1]
    return lookup


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


def routes_from_routers(topo: Topology, pair: np.ndarray, routers: np.ndarray,
                        parameter: str) -> np.ndarray:
    """Ports int8 [n, L] of router sequences [n, L + 1] (-1 padded); a ValueError naming
    `parameter` if a step is not a link of the topology."""
    lookup = port_lookup(topo)
    here, there = routers[:, :-1], routers[:, 1:]
    step = there >= 0
    ports = np.where(step, lookup[np.maximum(here, 0), np.maximum(there, 0)], -1)
    bad = step & ((here < 0) | (ports < 0))
    start_ok = routers[:, 0] == pair // topo.n_routers
    ends = np.take_along_axis(routers, (routers >= 0).sum(axis=1, keepdims=True) - 1, axis=1)[:, 0]
    end_ok = ends == pair % topo.n_routers
    if bad.any() or not start_ok.all() or not end_ok.all():
        i = int(np.nonzero(bad.any(axis=1) | ~start_ok | ~end_ok)[0][0])
        raise ValueError(f"{parameter}: path {routers[i][routers[i] >= 0].tolist()} of pair "
                         f"{divmod(int(pair[i]), topo.n_routers)} is not a walk from source "
                         f"to destination over links of {topo.name}")
    return ports.astype(np.int8)


def _splitmix(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _choose_ranks(total: np.ndarray, cap, seed: int):
    """(which [n], rank [n] float64): the ranks of the paths each pair keeps among its
    `total` paths, pair by pair in ascending rank: all if total <= cap, else `cap` distinct
    ranks drawn uniformly (Floyd's algorithm vectorised over pairs, seeded). cap: None (keep
    all), an int, or an int array (one per pair)."""
    total = np.asarray(total, np.float64)
    cap_arr = np.full(total.size, np.inf) if cap is None else np.broadcast_to(
        np.asarray(cap, np.float64), total.shape)
    take = np.minimum(total, cap_arr).astype(np.int64)
    which = np.repeat(np.arange(total.size), take)
    rank = (np.arange(which.size) - np.repeat(np.cumsum(take) - take, take)).astype(np.float64)
    big = np.nonzero(total > cap_arr)[0]
    if big.size:
        high_end, k = total[big], cap_arr[big].astype(np.int64)
        rng = np.random.default_rng(seed)
        width = int(k.max())
        chosen = np.full((big.size, width), np.inf)
        for j in range(width):
            high = high_end - k + j + 1  # Floyd: j-th draw in [0, high)
            t = np.minimum(np.floor(rng.random(big.size) * high), high - 1)
            dup = (chosen[:, :j] == t[:, None]).any(axis=1)
            chosen[:, j] = np.where(j < k, np.where(dup, high - 1, t), np.inf)
        chosen = np.sort(chosen, axis=1)
        rank[np.isin(which, big)] = chosen[np.arange(width)[None, :] < k[:, None]]
    return which, rank


def _unrank_minimal(topo: Topology, src, dst, rank) -> np.ndarray:
    """Ports int8 [N, diameter] of the rank-th minimal path from src to dst (minimal paths
    ranked in lexicographic port order; the rank counts parallel links apart)."""
    neighbor, dist, counts = topo.neighbor, topo.distances, topo.path_counts
    n_ports, diameter = topo.n_ports, max(topo.diameter, 1)
    out = np.full((src.size, diameter), -1, np.int8)
    for lo in range(0, src.size, _CHUNK_ROWS):
        s, t = src[lo:lo + _CHUNK_ROWS], dst[lo:lo + _CHUNK_ROWS]
        r = rank[lo:lo + _CHUNK_ROWS].copy()
        here = s.astype(np.int64)
        length = dist[s, t].astype(np.int32)
        rows = np.arange(s.size)
        for h in range(int(length.max(initial=0))):
            active = h < length
            nb = neighbor[here]
            nbc = np.maximum(nb, 0)
            closer = (nb >= 0) & (dist[nbc, t[:, None]].astype(np.int32)
                                  == dist[here, t].astype(np.int32)[:, None] - 1)
            weight = np.where(closer, counts[nbc, t[:, None]], 0.0)
            cum = np.cumsum(weight, axis=1)
            past = cum > r[:, None]
            last_child = n_ports - 1 - np.argmax(closer[:, ::-1], axis=1)
            port = np.where(past.any(axis=1), np.argmax(past, axis=1), last_child)
            port = np.where(closer[rows, port], port, last_child)  # guards float rounding
            r = np.clip(r - np.where(port > 0, cum[rows, np.maximum(port - 1, 0)], 0.0), 0.0,
                        counts[nbc[rows, port], t] - 1)
            out[lo + rows[active], h] = port[active]
            here = np.where(active, nbc[rows, port], here)
    return out


def minimal_routes(topo: Topology, cap: int | None, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimal paths of every ordered pair: (pair [n], ports int8 [n, diameter], per-pair
    kept count [R * R]). cap=None keeps all of them, else at most `cap` per pair."""
    n = topo.n_routers
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    total = topo.path_counts[src, dst]
    which, rank = _choose_ranks(total, cap, seed)
    ports = _unrank_minimal(topo, src[which], dst[which], rank)
    pair = src.astype(np.int64) * n + dst
    kept = np.zeros(n * n, np.int64)
    kept[pair] = np.bincount(which, minlength=pair.size)
    return pair[which], ports, kept


def _simple_paths_of_length(topo: Topology, src, dst, length):
    """All simple paths of exactly `length[i]` hops from src[i] to dst[i] (vectorised
    prefix expansion, pruned by distance to the destination). Returns (owner [n] index
    into the inputs, ports int8 [n, max length]), in lexicographic port order per owner."""
    neighbor, dist = topo.neighbor, topo.distances
    max_len = int(length.max())
    owner = np.arange(src.size)
    nodes = src[:, None].astype(np.int32)
    ports = np.zeros((src.size, 0), np.int8)
    done_owner, done_ports = [], []
    for i in range(max_len):
        finished = length[owner] == i
        if finished.any():
            done_owner.append(owner[finished])
            done_ports.append(np.pad(ports[finished], ((0, 0), (0, max_len - i)), constant_values=-1))
            owner, nodes, ports = owner[~finished], nodes[~finished], ports[~finished]
        if owner.size == 0:
            break
        t = dst[owner]
        nb = neighbor[nodes[:, -1]]
        nbc = np.maximum(nb, 0)
        remaining = (length[owner] - i - 1)[:, None]
        ok = (nb >= 0) & (dist[nbc, t[:, None]] <= remaining)
        ok &= (nbc != t[:, None]) | (remaining == 0)
        ok &= ~(nbc[:, :, None] == nodes[:, None, :]).any(axis=2)
        row, port = np.nonzero(ok)
        owner, nodes = owner[row], np.concatenate([nodes[row], nbc[row, port][:, None]], axis=1)
        ports = np.concatenate([ports[row], port[:, None].astype(np.int8)], axis=1)
    if owner.size:
        done_owner.append(owner)
        done_ports.append(ports)
    owner = np.concatenate(done_owner) if done_owner else np.zeros(0, np.int64)
    ports = np.concatenate(done_ports) if done_ports else np.zeros((0, max_len), np.int8)
    order = np.argsort(owner, kind="stable")
    return owner[order], ports[order]


def _nonbacktracking_counts(topo: Topology, targets: np.ndarray, max_len: int) -> np.ndarray:
    """float64 [max_len + 1, R * P, T]: g[l, (u, p), j] = number of walks of exactly l hops
    that start u -> neighbor[u, p], never step straight back to the router they just left,
    and end at targets[j]."""
    import scipy.sparse as sp

    n, ports = topo.neighbor.shape
    nb = topo.neighbor.reshape(-1)
    edges = np.nonzero(nb >= 0)[0]
    u_of = edges // ports
    rows, cols = [], []
    for q in range(ports):  # edge (u, p) -> (v, q), v = neighbor[u, p], neighbor[v, q] != u
        nxt = nb[edges] * ports + q
        ok = (nb[nxt] >= 0) & (nb[nxt] != u_of)
        rows.append(edges[ok])
        cols.append(nxt[ok])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    step = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n * ports,) * 2)
    g = np.zeros((max_len + 1, n * ports, targets.size))
    g[1] = (nb[:, None] == targets[None, :]) & (nb[:, None] >= 0)
    for length in range(2, max_len + 1):
        g[length] = step @ g[length - 1]
    return g


def _unrank_nonbacktracking(topo: Topology, g, src, dst_col, dst, length, rank) -> np.ndarray:
    """Ports int8 [N, max length] of the rank-th non-backtracking walk of length[i] hops from
    src[i] to dst[i] (column dst_col[i] of g), in lexicographic port order."""
    neighbor, ports = topo.neighbor, topo.n_ports
    out = np.full((src.size, int(length.max())), -1, np.int8)
    rows = np.arange(src.size)
    here, prev, r = src.astype(np.int64), np.full(src.size, -1), rank.copy()
    for h in range(int(length.max())):
        active = h < length
        nb = neighbor[here]
        ok = (nb >= 0) & (nb != prev[:, None])
        left = np.maximum(length - h, 0)
        edge = here[:, None] * ports + np.arange(ports)
        weight = np.where(ok, g[left[:, None], edge, dst_col[:, None]], 0.0)
        cum = np.cumsum(weight, axis=1)
        past = cum > r[:, None]
        usable = weight > 0
        last = ports - 1 - np.argmax(usable[:, ::-1], axis=1)
        port = np.where(past.any(axis=1), np.argmax(past, axis=1), last)
        port = np.where(usable[rows, port], port, last)  # guards float rounding
        r = np.clip(r - np.where(port > 0, cum[rows, np.maximum(port - 1, 0)], 0.0), 0.0,
                    weight[rows, port] - 1)
        out[rows[active], h] = port[active]
        prev = np.where(active, here, prev)
        here = np.where(active, nb[rows, port], here)
    if not (here == dst).all():
        raise AssertionError("non-backtracking unranking did not reach the destination")
    return out


def longer_routes_layers(topo: Topology, pair: np.ndarray, need: np.ndarray, seed: int):
    """For each pair needing need[i] > 0 more paths: the shortest non-minimal simple paths,
    one length at a time (minimal + 1, + 2, ...) until it has enough or none longer exist.
    When a length has more than needed, a uniform random subset is kept (seeded).

    Lengths minimal + 1 and + 2 are exact and fast: such a walk is simple iff it never
    steps straight back (every revisit would need a step back), so non-backtracking walk
    counts (a sparse matrix power per block of targets) rank them and they are drawn by
    unranking, as minimal paths. Longer ones (only pairs with fewer than k paths of length
    <= minimal + 2) are enumerated by pruned prefix expansion. Returns (pair, ports int8)."""
    n = topo.n_routers
    need = need.astype(np.int64).copy()
    src, dst = (pair // n).astype(np.int64), (pair % n).astype(np.int64)
    base = topo.distances[src, dst].astype(np.int64)
    out_pair, out_ports = [], []
    targets = np.unique(dst)
    block = max(1, min(256, (1 << 24) // max(1, n * topo.n_ports * (topo.diameter + 3))))
    for lo in range(0, targets.size, block):
        chunk = targets[lo:lo + block]
        rows = np.nonzero(np.isin(dst, chunk))[0]
        col = np.searchsorted(chunk, dst[rows])
        g = _nonbacktracking_counts(topo, chunk, int(base[rows].max()) + 2)
        for slack in (1, 2):
            length = base[rows] + slack
            walks = g[length[:, None], src[rows, None] * topo.n_ports + np.arange(topo.n_ports),
                      col[:, None]].sum(axis=1)
            live = need[rows] > 0
            which, rank = _choose_ranks(np.where(live, walks, 0), need[rows], seed + 7919 * slack + lo)
            if which.size:
                r = rows[which]
                out_pair.append(pair[r])
                out_ports.append(_unrank_nonbacktracking(topo, g, src[r], col[which], dst[r],
                                                         length[which], rank))
                need[rows] -= np.bincount(which, minlength=rows.size)
    rest = np.nonzero(need > 0)[0]
    if rest.size:
        extra_pair, extra_ports = _enumerate_longer(topo, pair[rest], need[rest], seed, first_slack=3)
        out_pair.append(extra_pair)
        out_ports.append(extra_ports)
    return _concat_ports(out_pair, out_ports)


def _enumerate_longer(topo: Topology, pair: np.ndarray, need: np.ndarray, seed: int, first_slack: int):
    """Like `longer_routes_layers` from minimal + first_slack on, by enumerating all simple
    paths of each length (pruned prefix expansion); the kept subset of the last length is
    chosen by a hash of (seed, pair, enumeration index)."""
    n = topo.n_routers
    out_pair, out_ports = [], []
    for lo in range(0, pair.size, _CHUNK_PAIRS):
        p = pair[lo:lo + _CHUNK_PAIRS]
        left = need[lo:lo + _CHUNK_PAIRS].astype(np.int64).copy()
        src, dst = (p // n).astype(np.int32), (p % n).astype(np.int32)
        base = topo.distances[src, dst].astype(np.int64)
        for slack in itertools.count(first_slack):
            active = np.nonzero((left > 0) & (base + slack <= n - 1))[0]
            if active.size == 0:
                break
            owner, ports = _simple_paths_of_length(topo, src[active], dst[active], base[active] + slack)
            owner = active[owner]
            if owner.size == 0:
                continue
            index = np.arange(owner.size) - np.searchsorted(owner, owner)  # index within owner
            key = _splitmix(_splitmix(np.uint64(seed) ^ p[owner].astype(np.uint64)) + index.astype(np.uint64))
            by_key = np.lexsort((key, owner))
            rank = np.empty(owner.size, np.int64)
            rank[by_key] = np.arange(owner.size) - np.searchsorted(owner[by_key], owner[by_key])
            keep = rank < left[owner]  # keeps enumeration order among the kept ones
            out_pair.append(p[owner[keep]])
            out_ports.append(ports[keep])
            left -= np.bincount(owner[keep], minlength=left.size)
    return _concat_ports(out_pair, out_ports)


def longer_routes_yen(topo: Topology, pair: np.ndarray, k: int):
    """The k shortest simple paths of each pair from networkx (Yen); minimal ones first."""
    graph, n = topo.graph, topo.n_routers
    pairs, seqs = [], []
    for p in pair.tolist():
        for path in itertools.islice(nx_shortest_simple_paths(graph, p // n, p % n), k):
            pairs.append(p)
            seqs.append(path)
    width = max(len(s) for s in seqs)
    routers = np.full((len(seqs), width), -1, np.int32)
    for i, s in enumerate(seqs):
        routers[i, : len(s)] = s
    pairs = np.asarray(pairs, np.int64)
    return pairs, routes_from_routers(topo, pairs, routers, "routing")


def nx_shortest_simple_paths(graph, s, t):
    import networkx as nx

    return nx.shortest_simple_paths(graph, s, t)


def _concat_ports(pairs: list, ports: list):
    if not pairs:
        return np.zeros(0, np.int64), np.zeros((0, 1), np.int8)
    width = max(x.shape[1] for x in ports)
    return (np.concatenate(pairs),
            np.concatenate([np.pad(x, ((0, 0), (0, width - x.shape[1])), constant_values=-1)
                            for x in ports]))


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> Routes:
    """Routes from (pair, ports) parts: stable by pair, so part order is path order."""
    pair, ports = _concat_ports([p for p, _ in parts], [x for _, x in parts])
    order = np.argsort(pair, kind="stable")
    return Routes(pair=pair[order], ports=ports[order])


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
    u = pk.uniform01(bits) * cum[:, -1]
    j = jnp.sum(cum <= u[:, None], axis=1)
    j = jnp.minimum(j, jnp.max(jnp.where(w > 0, lanes, 0), axis=1))  # never a zero weight
    return jnp.where(count > 0, first + j, -1).astype(jnp.int32)


@dataclasses.dataclass(frozen=True)
class PathTableRouting(RoutingScheme):
    """Base of the path-table schemes: subclasses implement `build_routes`."""

    name: ClassVar[str] = "path_table"

    def build_routes(self, topo: Topology) -> Routes:
        raise NotImplementedError

    def build_tables(self, topo: Topology) -> PathTables:
        return tables_from_routes(topo, self.build_routes(topo))

    def max_hops(self, topo, tables):
        return int(max(1, (np.asarray(tables.route) >= 0).sum(axis=1).max()))

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


def _require_int(value, parameter: str, minimum: int) -> None:
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum
    require(ok, parameter, value, f"an integer >= {minimum}")


@dataclasses.dataclass(frozen=True)
class KShortestPaths(PathTableRouting):
    """k shortest simple paths per pair, one drawn uniformly (or by weight) per packet.

    k: paths per pair (fewer only where fewer simple paths exist).
    seed: which k minimal paths a pair with more than k keeps, and which paths of the last
      needed length a pair with fewer keeps (method=layers); fixed per seed.
    method: layers (vectorised search by length) | yen (networkx shortest_simple_paths,
      slow: for checks on small networks) for the pairs with fewer than k minimal paths.
    """

    name: ClassVar[str] = "ksp"
    k: int = 8
    seed: int = 1
    method: str = "layers"

    def __post_init__(self):
        _require_int(self.k, "routing.k", 1)
        _require_int(self.seed, "routing.seed", 0)
        require(self.method in ("layers", "yen"), "routing.method", self.method, "layers | yen")

    def build_routes(self, topo):
        pair, ports, kept = minimal_routes(topo, self.k, self.seed)
        n = topo.n_routers
        short = np.nonzero((kept < self.k) & ((np.arange(n * n) // n) != (np.arange(n * n) % n)))[0]
        if self.method == "yen":
            mask = np.isin(pair, short, invert=True)
            return _merge([(pair[mask], ports[mask]), longer_routes_yen(topo, short, self.k)])
        extra = longer_routes_layers(topo, short, self.k - kept[short], self.seed)
        return _merge([(pair, ports), extra])


@dataclasses.dataclass(frozen=True)
class AllMinimalPaths(PathTableRouting):
    """Every minimal path of every pair (parallel links count apart, as topology.path_counts).

    max_paths: the largest number of minimal paths a pair may have; more is a ValueError.
    """

    name: ClassVar[str] = "allpaths"
    max_paths: int = 64

    def __post_init__(self):
        _require_int(self.max_paths, "routing.max_paths", 1)

    def build_routes(self, topo):
        counts = topo.path_counts
        worst = int(np.argmax(counts * ~np.eye(topo.n_routers, dtype=bool)))
        most = counts.reshape(-1)[worst]
        require(most <= self.max_paths, "routing.max_paths", self.max_paths,
                f">= {most:.0f}: router pair {divmod(worst, topo.n_routers)} of {topo.name} has "
                f"{most:.0f} minimal paths (raise max_paths, or use routing=ksp to keep k)")
        pair, ports, _ = minimal_routes(topo, None, 0)
        return _merge([(pair, ports)])


@dataclasses.dataclass(frozen=True)
class TablePaths(PathTableRouting):
    """Any path set with per-path weights.

    path_file: a `PathSet` .npz (`jaxnet-paths` writes paths.npz): router sequences
      paths [n_pairs, k, L + 1] (-1 padded), pair_src, pair_dst, valid [n_pairs, k].
    weights: `uniform`, or the name of a float array [n_pairs, k] in `weights_file`.
    weights_file: .npz holding the weights; default: path_file itself if it holds that
      array, else weights.npz next to it (where jaxnet-paths puts uniform/optimal/optax).
    Every ordered router pair needs at least one valid path. Paths of a pair keep their
    order in the file; invalid ones are dropped.

    `TablePaths.from_arrays(...)` builds one from arrays (tests, notebooks); the arrays
    are not part of its identity (two such schemes compare equal and share compiled code,
    which is right: the path set only reaches the engine as traced tables).
    """

    name: ClassVar[str] = "table"
    path_file: str | None = None
    weights: str = "uniform"
    weights_file: str | None = None
    arrays: Any = dataclasses.field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self):
        if self.arrays is None:
            require(self.path_file is not None and os.path.isfile(str(self.path_file)),
                    "routing.path_file", self.path_file, "an existing .npz path set (jaxnet-paths)")
        require(isinstance(self.weights, str), "routing.weights", self.weights,
                "'uniform' or the name of an array in the weights file")

    @classmethod
    def from_arrays(cls, paths, pair_src, pair_dst, valid=None, weights=None) -> "TablePaths":
        """paths int [n_pairs, k, L + 1] router sequences (-1 padded); weights [n_pairs, k]."""
        paths = np.asarray(paths, np.int32)
        valid = (paths[:, :, 0] >= 0) if valid is None else np.asarray(valid, bool)
        arrays = dict(paths=paths, pair_src=np.asarray(pair_src), pair_dst=np.asarray(pair_dst),
                      valid=valid, weights=None if weights is None else np.asarray(weights, np.float32))
        return cls(weights="arrays" if weights is not None else "uniform", arrays=arrays)

    @classmethod
    def from_pathset(cls, path_set, weights=None) -> "TablePaths":
        return cls.from_arrays(path_set.paths, path_set.pair_src, path_set.pair_dst,
                               path_set.valid, weights)

    def _load(self):
        if self.arrays is not None:
            return self.arrays
        with np.load(self.path_file) as f:
            for key in ("paths", "pair_src", "pair_dst"):
                require(key in f, "routing.path_file", self.path_file, f"an .npz with array '{key}'")
            arrays = {key: f[key] for key in ("paths", "pair_src", "pair_dst")}
            arrays["valid"] = f["valid"] if "valid" in f else arrays["paths"][:, :, 0] >= 0
        arrays["weights"] = None if self.weights == "uniform" else self._load_weights()
        return arrays

    def _load_weights(self):
        candidates = [self.weights_file] if self.weights_file else [
            self.path_file, str(Path(self.path_file).with_name("weights.npz"))]
        for name in candidates:
            if name and os.path.isfile(name):
                with np.load(name) as f:
                    if self.weights in f:
                        return f[self.weights].astype(np.float32)
        raise ValueError(f"routing.weights: no array '{self.weights}' in {candidates} "
                         "(allowed: 'uniform' or an array [n_pairs, k] of the weights file)")

    def build_routes(self, topo):
        a = self._load()
        paths, valid = a["paths"], a["valid"]
        n = topo.n_routers
        require(paths.ndim == 3 and valid.shape == paths.shape[:2], "routing.path_file",
                self.path_file, "paths [n_pairs, k, L + 1] and valid [n_pairs, k]")
        require(int(max(a["pair_src"].max(), a["pair_dst"].max())) < n, "routing.path_file",
                self.path_file, f"router ids < {n} (the topology's routers)")
        weights = a["weights"]
        if weights is not None:
            require(weights.shape == valid.shape, "routing.weights", self.weights,
                    f"an array of shape {valid.shape} (n_pairs, k)")
            require(bool(np.isfinite(weights).all() & (weights >= 0).all()), "routing.weights",
                    self.weights, "finite weights >= 0")
        which, lane = np.nonzero(valid)
        pair = a["pair_src"][which].astype(np.int64) * n + a["pair_dst"][which]
        covered = np.zeros(n * n, bool)
        covered[pair] = True
        missing = np.nonzero(~covered & ~np.eye(n, dtype=bool).reshape(-1))[0]
        require(missing.size == 0, "routing.path_file", self.path_file,
                f"a valid path for every ordered router pair (pair "
                f"{divmod(int(missing[0]), n) if missing.size else ''} has none)")
        routers = paths[which, lane].astype(np.int32)
        ports = routes_from_routers(topo, pair, routers, "routing.path_file")
        w = None if weights is None else weights[which, lane]
        order = np.argsort(pair, kind="stable")
        return Routes(pair=pair[order], ports=ports[order],
                      weight=None if w is None else w[order])


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


SCHEMES = (KShortestPaths, AllMinimalPaths, TablePaths)

__all__ = ["AllMinimalPaths", "KShortestPaths", "PathTableRouting", "PathTables", "Routes",
           "TablePaths", "minimal_routes", "route_routers", "tables_from_routes",
           "with_weights"]
