"""Path enumeration on a topology (host side, numpy): every minimal path of every router
pair, at most k of them chosen at random, and the next-shortest simple paths for pairs
with fewer than k minimal paths (by length layers, vectorised, or Yen's algorithm from
networkx). Paths are kept in port form (`Routes`): the output port taken at each hop.
Routing schemes turn `Routes` into device tables (`jaxnet.routing.route_tables`)."""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from jaxnet.topology import Topology

_CHUNK_ROWS = 1 << 16  # rows per vectorised step (bounds host scratch memory)
_CHUNK_PAIRS = 2048  # pairs per chunk of the longer-path search

@dataclasses.dataclass(frozen=True)
class Routes:
    """Host path set in port form: path i of pair[i] = src * R + dst leaves src and takes
    port ports[i, h] at hop h (-1 padded); weight [n] or None (uniform)."""

    pair: np.ndarray
    ports: np.ndarray
    weight: np.ndarray | None = None


def port_lookup(topo: Topology) -> np.ndarray:
    """int16 [R, R]: the (first) port of r leading to v, -1 if none."""
    r_ids, p_ids = np.nonzero(topo.neighbor >= 0)
    lookup = np.full((topo.n_routers,) * 2, -1, np.int16)
    # reversed so the lowest port wins for parallel links
    lookup[r_ids[::-1], topo.neighbor[r_ids, p_ids][::-1]] = p_ids[::-1]
    return lookup

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


def merge_routes(parts: list[tuple[np.ndarray, np.ndarray]]) -> Routes:
    """Routes from (pair, ports) parts: stable by pair, so part order is path order."""
    pair, ports = _concat_ports([p for p, _ in parts], [x for _, x in parts])
    order = np.argsort(pair, kind="stable")
    return Routes(pair=pair[order], ports=ports[order])
