"""Globally balanced edge-disjoint path sets (the GBAMCF heuristics of De Neve et al.).

For every ordered router pair (s, t) we find k edge-disjoint paths of minimum total length:
a min-cost flow of value k from s to t with unit capacities, solved by successive shortest
paths (Busacker-Gowen). The four algorithms differ in link costs and tie-breaking:

  multi_mcf         cost 1 per link, ties broken towards the lowest link index (biased);
  multi_mcf_random  cost 1 per link, ties broken at random;
  multi_mcf_penal   cost 1 + P_e * delta, P_e = path count of link e over the pairs solved
                    so far, pairs solved one after another in row-major order;
  multi_mcf_cyclic  `cycles` passes of multi_mcf_penal: each pass removes a pair's old paths
                    from P and solves it again against the counts of all other pairs.

delta is treated as infinitesimal: a path cost is the pair (hops, sum of P_e) compared
lexicographically. That is exactly the paper's condition that delta * sum P_e < 1 (so the
total length stays minimal), and it keeps the arithmetic in int32. Penalised variants
break the remaining ties at random.

Speed: one pair is solved entirely inside XLA (Bellman-Ford in the residual graph as
vectorised rounds over a [routers, 2 * ports] table of incoming residual arcs, path
augmentation and decomposition as while loops), and a whole pass over all pairs is one
`lax.scan` that carries P, so the sequential semantics of the penalised variants are exact
and no Python runs per pair. (vmapping independent pairs is slower on CPU: batched while
loops run every pair for as many rounds as the slowest.)
"""
from __future__ import annotations

import functools
import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core.registry import Registry
from jaxnet.core.validate import require, require_int
from jaxnet.paths.pathset import PathSet, all_pairs, directed_links


class Variant(NamedTuple):
    """One of the GBAMCF heuristics: random tie-breaking among equal paths (`randomised`),
    link penalties from the paths found so far (`penalised`), repeated passes (`cyclic`)."""

    randomised: bool
    penalised: bool
    cyclic: bool


# `paths.algorithm`, in the paper's order.
ALGORITHMS = Registry("paths.algorithm", {
    "multi_mcf": Variant(False, False, False),
    "multi_mcf_random": Variant(True, False, False),
    "multi_mcf_penal": Variant(True, True, False),
    "multi_mcf_cyclic": Variant(True, True, True),
})
_INF = 1 << 30


def _rank_modulus(n_slots: int) -> int:
    """Smallest prime >= n_slots: random ranks are affine permutations modulo it."""
    m = max(n_slots, 2)
    while any(m % d == 0 for d in range(2, int(m**0.5) + 1)):
        m += 1
    return m


def _pair_solver(neighbor: np.ndarray, k: int, max_len: int, randomised: bool, penalised: bool):
    """Build `solve(counts, s, t, key) -> (path_links [k, max_len], n_paths, overflow)`.

    counts int32 [L + 1] are the link penalties P_e (slot L is a dump for padding, kept 0).
    Path links are -1 padded; overflow is True if a path needed more than max_len hops.

    The residual graph is a table of incoming arcs per router: slot p < P is the forward
    arc over link neighbor[r, p] -> r (usable while that link carries no flow), slot P + p
    the backward arc of link r -> neighbor[r, p] (usable while it carries flow); both start
    at neighbor[r, p]. A Bellman-Ford round packs (distance, tie-break rank) into one int32
    key, so a row minimum yields the distance and the predecessor slot at once.
    """
    n_routers, n_ports = neighbor.shape
    n_slots = 2 * n_ports
    modulus = _rank_modulus(n_slots)
    rank_bits = int(np.ceil(np.log2(modulus)))
    link_src, link_dst, link_id = directed_links(neighbor)
    n_links = link_src.size
    port_used = neighbor >= 0
    tail = np.where(port_used, neighbor, 0)
    lookup = np.full((n_routers, n_routers), n_links, np.int32)
    lookup[link_src, link_dst] = np.arange(n_links, dtype=np.int32)
    link_out = np.where(port_used, link_id, n_links)  # r -> neighbor[r, p]
    link_in = np.where(port_used, lookup[tail, np.arange(n_routers)[:, None]], n_links)
    # lowest-index tie-breaking: slots ranked by the id of the link they use
    by_link_id = np.argsort(np.concatenate([link_in, link_out], axis=1), axis=1, kind="stable")
    link_rank = jnp.asarray(np.argsort(by_link_id, axis=1).astype(np.int32))
    slot_of_rank = jnp.asarray(by_link_id.astype(np.int32))
    link_out, link_in = jnp.asarray(link_out), jnp.asarray(link_in)
    tail = jnp.asarray(tail)
    tails = jnp.concatenate([tail, tail], axis=1)
    slot_used = jnp.asarray(np.concatenate([port_used, port_used], axis=1))
    link_dst_j = jnp.asarray(np.append(link_dst, 0).astype(np.int32))
    hop_cost = jnp.asarray(np.repeat([1, -1], n_ports)[None, :].astype(np.int32))
    slots = jnp.arange(n_slots, dtype=jnp.int32)
    inverse = jnp.asarray([pow(a, -1, modulus) if a else 0 for a in range(modulus)], jnp.int32)
    rank_mask = (1 << rank_bits) - 1

    def bellman_ford(s, active, cost, rank):
        """Shortest residual paths from s; returns distance and predecessor rank per router."""
        key_inf = jnp.int32(_INF)

        def relax(state):
            dist, pred, _ = state
            there = dist[tails]
            ok = active & (there < _INF)
            key = jnp.where(ok, (there + cost) * (1 << rank_bits) + rank, key_inf)
            best = key.min(axis=1)
            value = jnp.right_shift(best, rank_bits)
            better = (best < key_inf) & (value < dist)
            return jnp.where(better, value, dist), jnp.where(better, best & rank_mask, pred), better.any()

        dist = jnp.full(n_routers, _INF, jnp.int32).at[s].set(0)
        pred = jnp.zeros(n_routers, jnp.int32)
        dist, pred, _ = jax.lax.while_loop(lambda st: st[2], relax, (dist, pred, True))
        return dist, pred

    def augment(flow, slot_of, s, t, reachable):
        """Push one unit along the predecessor path t -> s of the residual graph."""

        def step(state):
            v, flow = state
            slot = slot_of(v)
            port = slot % n_ports
            forward = slot < n_ports
            link = jnp.where(forward, link_in[v, port], link_out[v, port])
            return tail[v, port], flow.at[link].set(forward.astype(flow.dtype))

        _, flow = jax.lax.while_loop(lambda st: reachable & (st[0] != s), step, (t, flow))
        return flow

    def decompose(flow, s, t, n_paths):
        """Split an acyclic unit flow into paths (lowest port first at branchings), as link ids."""

        def one_path(x, carry):
            flow, out, overflow = carry

            def step(state):
                cur, i, flow, row = state
                outs = link_out[cur]
                link = outs[jnp.argmax(flow[outs] == 1)]
                return link_dst_j[link], i + 1, flow.at[link].set(0), row.at[i].set(link)

            start = jnp.where(x < n_paths, s, t)
            row = jnp.full(max_len, -1, jnp.int32)
            cur, _, flow, row = jax.lax.while_loop(
                lambda st: (st[0] != t) & (st[1] < max_len), step, (start, 0, flow, row)
            )
            return flow, out.at[x].set(row), overflow | (cur != t)

        out = jnp.full((k, max_len), -1, jnp.int32)
        _, out, overflow = jax.lax.fori_loop(0, k, one_path, (flow, out, False))
        return out, overflow

    def solve(counts, s, t, key):
        if randomised:  # a random affine permutation of the slots per router
            bits = jax.random.bits(key, (n_routers,), jnp.uint32)
            scale = (1 + bits % (modulus - 1)).astype(jnp.int32)[:, None]
            shift = ((bits >> 8) % modulus).astype(jnp.int32)[:, None]
            rank = (scale * slots + shift) % modulus

            def pred_slot(pred, v):
                return ((pred[v] - shift[v, 0]) * inverse[scale[v, 0]]) % modulus

        else:
            rank = link_rank

            def pred_slot(pred, v):
                return slot_of_rank[v, pred[v]]

        pen_cost = jnp.concatenate([counts[link_in], -counts[link_out]], axis=1)

        def one_unit(_, carry):
            flow, n_paths = carry
            active = slot_used & jnp.concatenate([flow[link_in] == 0, flow[link_out] == 1], axis=1)
            dist, pred = bellman_ford(s, active, hop_cost, rank)
            if penalised:  # least penalty among the hop-shortest residual paths
                tight = active & (dist[tails] + hop_cost == dist[:, None]) & (dist[:, None] < _INF)
                _, pred = bellman_ford(s, tight, pen_cost, rank)
            reachable = dist[t] < _INF
            return augment(flow, lambda v: pred_slot(pred, v), s, t, reachable), n_paths + reachable.astype(jnp.int32)

        flow = jnp.zeros(n_links + 1, jnp.int8)
        flow, n_paths = jax.lax.fori_loop(0, k, one_unit, (flow, jnp.int32(0)))
        links, overflow = decompose(flow, s, t, n_paths)
        return links, n_paths, overflow

    return solve


def _add_links(counts, links, sign):
    """counts[L + 1] += sign at every link id of `links` (-1 entries go to the dump slot)."""
    n_links = counts.shape[0] - 1
    counts = counts.at[jnp.where(links < 0, n_links, links).ravel()].add(sign)
    return counts.at[n_links].set(0)


@functools.lru_cache(maxsize=8)
def _compiled(neighbor_bytes: bytes, shape: tuple, k: int, max_len: int, randomised: bool, penalised: bool):
    """Jitted pass over a list of pairs, solved one after another in a `lax.scan`.

    Penalised passes carry the path counts: a pair's old paths are removed, the pair is
    solved against the counts of all other pairs, and its new paths are added.
    """
    neighbor = np.frombuffer(neighbor_bytes, np.int32).reshape(shape)
    solve = _pair_solver(neighbor, k, max_len, randomised, penalised)

    @jax.jit
    def one_pass(counts, src, dst, pair_index, cycle_key, old_links):
        def step(counts, xs):
            s, t, i, old = xs
            if penalised:
                counts = _add_links(counts, old, -1)
            links, n_paths, overflow = solve(counts, s, t, jax.random.fold_in(cycle_key, i))
            if penalised:
                counts = _add_links(counts, links, 1)
            return counts, (links, n_paths, overflow)

        return jax.lax.scan(step, counts, (src, dst, pair_index, old_links))

    return one_pass


def _validate(k: int, algorithm: str, cycles: int) -> None:
    """Raise a ValueError naming the first bad path-set parameter."""
    require_int(k, "paths.k", 1)
    ALGORITHMS.get(algorithm, "paths.algorithm")
    require_int(cycles, "paths.cycles", 1)


def find_paths(
    topology,
    k: int = 4,
    algorithm: str = "multi_mcf",
    cycles: int = 20,
    seed: int = 1,
    on_cycle: Callable[[int, np.ndarray, float], None] | None = None,
    resume: PathSet | None = None,
    checkpoint: Callable[[PathSet], None] | None = None,
) -> PathSet:
    """k edge-disjoint minimum-total-length paths for every ordered router pair.

    cycles is used by multi_mcf_cyclic only; seed drives random tie-breaking.
    on_cycle(cycle, link_counts, seconds) is called after every pass (one pass for the
    non-cyclic algorithms), e.g. to log P_max as the cyclic algorithm converges.
    resume: a multi_mcf_cyclic result of this topology, k and seed after at most `cycles`
    cycles; the run goes on from it to `cycles` in total, exactly as an uninterrupted run
    (a result that has them all is returned as it is).
    checkpoint(paths) receives the cyclic result after every cycle but the last (e.g. to
    save it and `resume` from it), so a long run interrupted loses at most one cycle.
    """
    _validate(k, algorithm, cycles)
    if resume is not None:
        same = (resume.algorithm, resume.k, resume.params.get("seed"), resume.params.get("topology"))
        require(same == ("multi_mcf_cyclic", k, seed, topology.name) and algorithm == "multi_mcf_cyclic",
                "resume", same, f"must be a multi_mcf_cyclic run of {topology.name} with k={k}, seed={seed}")
        require(resume.params["cycles"] <= cycles, "paths.cycles", cycles,
                f"must be at least the {resume.params['cycles']} cycles to resume from")
        if resume.params["cycles"] == cycles:
            return resume
    neighbor = np.ascontiguousarray(topology.neighbor, np.int32)
    n_routers = neighbor.shape[0]
    link_src, link_dst, _ = directed_links(neighbor)
    pair_src, pair_dst = all_pairs(n_routers)
    randomised, penalised, cyclic = ALGORITHMS[algorithm]
    n_cycles = cycles if cyclic else 1
    max_len = int(2 * topology.distances.max() + 2)
    if resume is not None:
        max_len = max(max_len, resume.max_len)
    xs = (jnp.asarray(pair_src), jnp.asarray(pair_dst), jnp.arange(pair_src.size))

    def result(links, n_paths, history):
        return _to_pathset(
            np.asarray(links), np.asarray(n_paths), pair_src, pair_dst, link_src, link_dst, algorithm,
            dict(k=k, cycles=len(history), seed=seed, topology=topology.name),
            np.stack(history) if cyclic else None,
        )

    while True:
        one_pass = _compiled(neighbor.tobytes(), neighbor.shape, k, max_len, randomised, penalised)
        counts = jnp.zeros(link_src.size + 1, jnp.int32)
        links = jnp.full((pair_src.size, k, max_len), -1, jnp.int32)
        history = []
        if resume is not None:
            links = links.at[:, :, : resume.max_len].set(resume.path_links)
            counts = counts.at[:-1].set(resume.link_path_counts().astype(np.int32))
            history = list(resume.link_counts_by_cycle)
        for cycle in range(len(history), n_cycles):
            start = time.perf_counter()
            cycle_key = jax.random.fold_in(jax.random.PRNGKey(seed), cycle)
            counts, (links, n_paths, overflow) = one_pass(counts, *xs, cycle_key, links)
            if bool(overflow.any()):
                break
            cycle_counts = np.bincount(np.asarray(links).ravel() + 1, minlength=link_src.size + 1)[1:]
            if penalised:
                _check_penalty_range(history[-1] if history else cycle_counts, cycle_counts, neighbor)
            history.append(cycle_counts.astype(np.int32))
            if on_cycle is not None:
                on_cycle(cycle + 1, cycle_counts, time.perf_counter() - start)
            if checkpoint is not None and cycle + 1 < n_cycles:
                checkpoint(result(links, n_paths, history))
        else:
            break
        max_len *= 2  # rare: some path is longer than 2 * diameter + 2; solve again with room
    return result(links, n_paths, history)


def _check_penalty_range(before: np.ndarray, after: np.ndarray, neighbor: np.ndarray) -> None:
    """Penalty sums along a residual path (< R arcs) must fit the int32 key's value range.

    During a pass a link's count never exceeds its count before plus after the pass.
    """
    n_routers, n_ports = neighbor.shape
    rank_bits = int(np.ceil(np.log2(_rank_modulus(2 * n_ports))))
    bound = (int(before.max()) + int(after.max())) * n_routers
    if bound >= _INF >> rank_bits:
        raise ValueError(f"path counts up to {bound // n_routers} overflow the penalty range of this network")


def _to_pathset(links, n_paths, pair_src, pair_dst, link_src, link_dst, algorithm, params, history):
    """Turn link-id paths into the router-sequence `PathSet` (trimmed to the longest path)."""
    hops = links >= 0
    length = hops.sum(axis=2).astype(np.int32)
    width = max(int(length.max()), 1)
    routers = np.where(hops[:, :, :width], link_dst[np.maximum(links[:, :, :width], 0)], -1)
    valid = np.arange(links.shape[1])[None, :] < n_paths[:, None]
    start = np.where(valid, pair_src[:, None], -1)
    paths = np.concatenate([start[:, :, None], routers], axis=2).astype(np.int32)
    return PathSet(
        paths=paths,
        pair_src=pair_src,
        pair_dst=pair_dst,
        length=length,
        valid=valid,
        link_src=link_src,
        link_dst=link_dst,
        algorithm=algorithm,
        params=params,
        link_counts_by_cycle=history,
    )
