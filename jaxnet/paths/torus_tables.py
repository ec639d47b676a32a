"""Deadlock-free routing tables for tori and meshes: BFS, SSSP and genetic generators.

Mukosey, Semenov, Tretiakov, "Optimized graph based routing algorithm for the Angara
interconnect", section 4. Every generator routes each ordered pair (s, t) along one minimal
route admitted by the deadlock-free routing graph (`torus_graph`), balancing channel loads:

- `bfs`: Algorithms 1-2. Sources in most-remote order (the next source is the unprocessed
  node farthest from the last one); from each, a BFS in the routing graph whose queue is
  sorted by the summed load of each vertex's outgoing edges; all its routes then add 1 to
  the load of every channel they use.
- `sssp`: Algorithms 3-4. Pairs with a single minimal route are fixed first. The rest are
  sorted by (turn count, length, source) and grouped per source; each BUILD_SSSP call gives
  every pending destination of a group its cheapest minimal route (hops first, then summed
  channel load, i.e. BFS with relaxation under the paper's |N|^2 edge offset); routes that
  share no channel with an earlier one in the group are applied, loads updated, repeat.
- `genetic`: section 4.2. A chromosome picks one minimal route per pair with a choice;
  random initial population, panmictic two-point crossover, per-gene mutation, the best
  `population` of parents and children survive, fitness sigma(4, R). Stops when the best
  fitness improved by less than `tolerance` (relative) over the last `patience`
  generations, when it reaches 0, or after `max_generations`.

Table format (`RoutingTable`, `simulator_tables`, `save_table`). Angara routes are source
routes (the header carries the route), so a route depends on (source, destination), not
only on (current router, destination). `directions[s, t, h]` (int8 [R, R, max_len]) is the
direction taken at the h-th router of the route s -> t (-1 once arrived; the route's h-th
router is s moved by the first h directions); direction k < n is +dim k, k >= n is
-dim (k - n). `simulator_tables` gives the same as `dimension` and `sign` (+1 / -1, 0
once arrived) plus `router[s, t, h]` and `length[s, t]`; a simulator with the packet's
source and hop index reads the output port as (dimension, sign) at [source, dest, hop].
Router index = mixed radix with coordinate 0 fastest, as `jaxnet.topology.cartesian`.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from jaxnet.core.files import load_arrays
from jaxnet.core.registry import Registry
from jaxnet.core.validate import require, require_int, require_number
from jaxnet.paths.deadlock import (
    channel_dependency_graph,
    dependency_pairs,
    find_deadlock_cycle,
)
from jaxnet.paths.torus_graph import (
    RoutingGraph,
    TorusShape,
    deadlock_free_turns,
    no_extra_turns,
)
from jaxnet.paths.torus_routes import RouteCandidates, minimal_route_candidates



@dataclasses.dataclass(frozen=True, eq=False)
class RoutingTable:
    """One minimal route per ordered router pair, as direction sequences (see module doc)."""

    shape: TorusShape
    turns: np.ndarray
    algorithm: str
    directions: np.ndarray
    info: dict

    @property
    def length(self) -> np.ndarray:
        """int16 [R, R] hops of every route."""
        return (self.directions >= 0).sum(axis=2).astype(np.int16)

    def channels(self, sources: np.ndarray) -> np.ndarray:
        """int32 [len(sources), R, max_len] channel ids, padded with shape.n_channel_ids."""
        shape = self.shape
        dirs = self.directions[sources].astype(np.int64)
        node = np.broadcast_to(np.asarray(sources)[:, None], dirs.shape[:2]).copy()
        out = np.full(dirs.shape, shape.n_channel_ids, np.int32)
        for h in range(dirs.shape[2]):
            k = dirs[:, :, h]
            step = k >= 0
            out[:, :, h][step] = node[step] * shape.n_dirs + k[step]
            node[step] = shape.neighbor[node[step], k[step]]
        return out

    def source_blocks(self, block: int = 256):
        """Source index blocks, so that channel arrays of large tables stay small."""
        R = self.shape.n_nodes
        return (np.arange(start, min(start + block, R)) for start in range(0, R, block))


# --------------------------------------------------------------------------- entry point
def build_table(shape: TorusShape, algorithm: str = "sssp", augment: bool = True,
                **params) -> RoutingTable:
    """Generate a routing table; `seconds` in `info` covers the graph work and generation.

    augment: use the Theorem 2 FS/LS turns (the paper's deadlock-free routing graph);
    False restricts routes to plain direction order.
    """
    require(isinstance(augment, bool), "tables.augment", augment, "must be true or false")
    ALGORITHMS.get(algorithm, "tables.algorithm")
    ALGORITHMS.split({"name": algorithm, **params}, "tables")
    start = time.perf_counter()
    turns = deadlock_free_turns(shape) if augment else no_extra_turns(shape)
    channels, info = ALGORITHMS.build({"name": algorithm, **params}, shape, turns, where="tables")
    directions = np.where(channels < shape.n_channel_ids, channels % shape.n_dirs, -1)
    info = {**info, "seconds": time.perf_counter() - start}
    R = shape.n_nodes
    return RoutingTable(shape, turns, algorithm,
                        directions.reshape(R, R, -1).astype(np.int8), info)


# ----------------------------------------------------------------------------------- BFS
def bfs_routes(graph: RoutingGraph) -> tuple[np.ndarray, dict]:
    """Algorithm 1: channel rows [R * R, max_len] of the BFS table (pad = n_channel_ids)."""
    shape = graph.shape
    R, pad = shape.n_nodes, shape.n_channel_ids
    width = max(int(shape.distance.max()), 1)
    loads = np.zeros(pad + 1, np.int64)
    routes = np.full((R, R, width), pad, np.int32)
    processed = np.zeros(R, bool)
    source = 0
    for _ in range(R):
        routes[source] = _bfs_from(graph, source, loads, width)
        loads += np.bincount(routes[source].ravel(), minlength=pad + 1)
        loads[pad] = 0
        processed[source] = True
        # GET_MAX_REMOTE: the unprocessed node farthest from the last source (first on ties)
        source = int(np.argmax(np.where(processed, -1, shape.distance[source])))
    return routes.reshape(R * R, width), {}


def _bfs_from(graph: RoutingGraph, source: int, loads: np.ndarray, width: int) -> np.ndarray:
    """Algorithm 2 from BEGIN(source): int32 [R, width] routes to every node.

    Only minimal routes matter, so the search keeps vertices whose node is first reached
    at this level; any parent of such a vertex is one too, so the BFS tree restricted to
    them is the paper's. Q is processed sorted by the summed load of each vertex's
    outgoing edges (stable, so ties keep discovery order); a vertex's parent is the first
    Q vertex with an edge to it, and END(t)'s parent is the first Q vertex at t.
    """
    shape = graph.shape
    S, n_dirs, pad = graph.n_states, shape.n_dirs, shape.n_channel_ids
    dist = shape.distance[source]
    parent = np.full(shape.n_nodes * S, -1, np.int64)
    parent_channel = np.full(shape.n_nodes * S, pad, np.int32)
    end_parent = np.full(shape.n_nodes, -1, np.int64)
    frontier = np.array([source * S + graph.BEGIN], np.int64)
    level = 0
    while frontier.size:
        node = frontier // S
        trans = graph.out[frontier % S]
        ok = trans >= 0
        trans = np.where(ok, trans, 0)
        ok &= graph.allowed[trans, node[:, None]]
        channel = node[:, None] * n_dirs + graph.direction[trans]
        key = np.where(ok, loads[np.where(ok, channel, pad)], 0).sum(axis=1)
        order = np.argsort(key, kind="stable")
        frontier, node, trans, ok, channel = (x[order] for x in (frontier, node, trans, ok, channel))
        at, first = np.unique(node, return_index=True)
        end_parent[at] = frontier[first]
        target = shape.neighbor[node[:, None], graph.direction[trans]]
        ok &= (target >= 0) & (dist[np.maximum(target, 0)] == level + 1)
        vertex = (target * S + graph.next_state[trans])[ok]
        came_from = np.broadcast_to(frontier[:, None], ok.shape)[ok]
        came_by = channel[ok]
        _, first = np.unique(vertex, return_index=True)
        first.sort()  # discovery order is the next Q order
        frontier = vertex[first]
        parent[frontier] = came_from[first]
        parent_channel[frontier] = came_by[first]
        level += 1
    routes = np.full((shape.n_nodes, width), pad, np.int32)
    current = end_parent
    for step in range(int(dist.max())):
        position = dist.astype(np.int64) - 1 - step
        walking = np.flatnonzero(position >= 0)
        routes[walking, position[walking]] = parent_channel[current[walking]]
        current[walking] = parent[current[walking]]
    return routes


# ---------------------------------------------------------------------------------- SSSP
def sssp_routes(candidates: RouteCandidates, unique_first: bool = True) -> tuple[np.ndarray, dict]:
    """Algorithm 3: channel rows [R * R, max_len] of the SSSP table, and call statistics.
    unique_first=False skips stage 1, so every pair goes through the grouped BUILD_SSSP calls
    (the "sort and group" only variant of the paper's Figure 4)."""
    shape = candidates.shape
    R, pad = shape.n_nodes, candidates.pad
    counts = candidates.counts
    loads = np.zeros(pad + 1, np.int64)
    choice = np.full(R * R, -1, np.int64)

    unique = np.flatnonzero(counts == 1)  # 1) unique routes
    if unique_first:
        choice[unique] = candidates.offsets[unique]
        loads += np.bincount(candidates.channels[choice[unique]].ravel(), minlength=pad + 1)
        loads[pad] = 0

    rest = np.flatnonzero(counts > (1 if unique_first else 0))  # 2) sort and group
    src, dst = rest // R, rest % R
    turns = (shape.coords[src] != shape.coords[dst]).sum(axis=1) - 1
    length = candidates.length[rest]
    order = np.lexsort((dst, src, length, turns))
    rest, key = rest[order], np.stack([turns, length, src], axis=1)[order]
    # candidate rows of the sorted pairs, contiguous per pair: rows[first[i]:first[i + 1]]
    n_candidates = counts[rest]
    first = np.concatenate([[0], np.cumsum(n_candidates)])
    local = np.arange(first[-1]) - np.repeat(first[:-1], n_candidates)
    rows = np.repeat(candidates.offsets[rest], n_candidates) + local
    group_start = np.flatnonzero(np.concatenate([rest[:1] >= 0, np.any(key[1:] != key[:-1], axis=1)]))
    group_end = np.append(group_start[1:], rest.size)
    calls = 0
    for p0, p1 in zip(group_start.tolist(), group_end.tolist()):
        c0, c1 = int(first[p0]), int(first[p1])
        hops = int(candidates.length[rest[p0]])
        group_channels = candidates.channels[rows[c0:c1], :hops]
        segment = first[p0:p1] - c0
        spread = int(n_candidates[p0:p1].max()) + 1
        pending = np.arange(p1 - p0)
        while pending.size:
            calls += 1
            best = _cheapest_routes(group_channels, loads, segment, local[c0:c1], spread)[pending]
            routes = group_channels[best]
            accepted = _non_crossing(routes)
            loads[routes[accepted]] += 1  # accepted routes share no channel
            choice[rest[p0 + pending[accepted]]] = rows[c0 + best[accepted]]
            keep = np.ones(pending.size, bool)
            keep[accepted] = False
            pending = pending[keep]
    channels = np.full((R * R, candidates.channels.shape[1]), pad, np.int32)
    routed = choice >= 0
    channels[routed] = candidates.channels[choice[routed]]
    info = {"unique_pairs": int(unique.size), "pairs": R * (R - 1), "build_sssp_calls": calls}
    return channels, info


def _cheapest_routes(channels: np.ndarray, loads: np.ndarray, segment: np.ndarray,
                     local: np.ndarray, spread: int) -> np.ndarray:
    """BUILD_SSSP for one group: per pair, the row of its cheapest candidate.

    `channels` holds the group's candidates, pair i's in rows segment[i]:segment[i + 1].
    All candidates are minimal, so the least summed load is the shortest path under edge
    weight |N|^2 + load; ties go to the earliest candidate (direction order first).
    """
    cost = loads[channels].sum(axis=1)
    best = np.minimum.reduceat(cost * spread + local, segment) % spread
    return segment + best


def _non_crossing(rows: np.ndarray) -> list[int]:
    """Indices of routes, in order, that share no channel with an earlier accepted one."""
    if len(rows) == 1:
        return [0]
    used: set[int] = set()
    accepted = []
    for i, row in enumerate(rows.tolist()):
        if used.isdisjoint(row):
            used.update(row)
            accepted.append(i)
    return accepted


# ------------------------------------------------------------------------------- genetic
def genetic_routes(candidates: RouteCandidates, population: int, mutation_rate: float,
                   patience: int, tolerance: float, max_generations: int,
                   seed: int) -> tuple[np.ndarray, dict]:
    """Section 4.2: channel rows [R * R, max_len] of the best chromosome found."""
    _check_genetic(population, mutation_rate, patience, tolerance, max_generations, seed)
    shape = candidates.shape
    R, pad = shape.n_nodes, candidates.pad
    counts = candidates.counts
    genes = np.flatnonzero(counts > 1)
    fixed = np.flatnonzero(counts == 1)
    variants = counts[genes]
    base_loads = np.bincount(candidates.channels[candidates.offsets[fixed]].ravel(),
                             minlength=pad + 1)[:pad]
    exists = shape.channel_exists
    rng = np.random.default_rng(seed)

    def random_genes(n_chromosomes: int) -> np.ndarray:
        return (rng.random((n_chromosomes, genes.size)) * variants).astype(np.int64)

    def fitness(chromosomes: np.ndarray) -> np.ndarray:
        rows = candidates.offsets[genes] + chromosomes
        ids = candidates.channels[rows] + (np.arange(len(chromosomes)) * (pad + 1))[:, None, None]
        loads = np.bincount(ids.ravel(), minlength=len(chromosomes) * (pad + 1))
        loads = loads.reshape(len(chromosomes), pad + 1)[:, :pad] + base_loads
        return deviation(loads[:, exists], 4)

    pool = random_genes(population)
    scores = fitness(pool)
    ranked = np.argsort(scores, kind="stable")
    pool, scores = pool[ranked], scores[ranked]
    history = [float(scores[0])]
    n_pairs = (population + 1) // 2
    while len(history) <= max_generations and genes.size:
        if history[-1] == 0 or (len(history) > patience and
                                history[-1 - patience] - history[-1] < tolerance * history[-1 - patience]):
            break
        mothers, fathers = rng.integers(population, size=(2, n_pairs))
        cuts = np.sort(rng.integers(0, genes.size + 1, size=(n_pairs, 2)), axis=1)
        inside = (np.arange(genes.size) >= cuts[:, :1]) & (np.arange(genes.size) < cuts[:, 1:])
        children = np.concatenate([np.where(inside, pool[fathers], pool[mothers]),
                                   np.where(inside, pool[mothers], pool[fathers])])[:population]
        mutate = rng.random(children.shape) < mutation_rate
        children = np.where(mutate, random_genes(len(children)), children)
        pool = np.concatenate([pool, children])
        scores = np.concatenate([scores, fitness(children)])
        survivors = np.argsort(scores, kind="stable")[:population]
        pool, scores = pool[survivors], scores[survivors]
        history.append(float(scores[0]))
    choice = np.full(R * R, -1, np.int64)
    choice[fixed] = candidates.offsets[fixed]
    choice[genes] = candidates.offsets[genes] + pool[0]
    channels = np.full((R * R, candidates.channels.shape[1]), pad, np.int32)
    routed = choice >= 0
    channels[routed] = candidates.channels[choice[routed]]
    return channels, {"generations": len(history) - 1, "genes": int(genes.size),
                      "best_sigma4_history": history}


def _check_genetic(population, mutation_rate, patience, tolerance, max_generations, seed):
    require_int(population, "tables.population", 2)
    require_number(mutation_rate, "tables.mutation_rate", 0, 1)
    require_int(patience, "tables.patience", 1)
    require_number(tolerance, "tables.tolerance", 0, 1, high_open=True)
    require_int(max_generations, "tables.max_generations", 0)
    require_int(seed, "tables.seed", 0)


# ------------------------------------------------------------------------------- metrics
def bfs(shape: TorusShape, turns) -> tuple[np.ndarray, dict]:
    """The BFS table (Algorithm 1) on the routing graph of the allowed turns."""
    return bfs_routes(RoutingGraph.build(shape, turns))


def sssp(shape: TorusShape, turns, unique_first: bool = True) -> tuple[np.ndarray, dict]:
    """The SSSP table (Algorithm 2) among the minimal routes the turns allow."""
    require(isinstance(unique_first, bool), "tables.unique_first", unique_first, "must be true or false")
    return sssp_routes(minimal_route_candidates(shape, turns), unique_first)


def genetic(shape: TorusShape, turns, population: int = 100, mutation_rate: float = 0.02, patience: int = 30,
            tolerance: float = 0.05, max_generations: int = 2000, seed: int = 0) -> tuple[np.ndarray, dict]:
    """The genetic table (section 4.2) among the minimal routes the turns allow."""
    return genetic_routes(minimal_route_candidates(shape, turns), population, mutation_rate, patience, tolerance,
                          max_generations, seed)


# `tables.algorithm`: (shape, turns, **options) -> (channel rows, info).
ALGORITHMS = Registry("tables.algorithm", {"bfs": bfs, "sssp": sssp, "genetic": genetic}, leading=2)


def deviation(loads: np.ndarray, k: int = 4) -> np.ndarray:
    """sigma(k, R): k-th root of the mean |gamma_perfect - gamma_c|^k over channels (last axis).

    gamma_perfect is the mean channel load, which for minimal routes is the paper's
    perfect channel load.
    """
    loads = np.asarray(loads, np.float64)
    perfect = loads.mean(axis=-1, keepdims=True)
    return (np.abs(perfect - loads) ** k).mean(axis=-1) ** (1.0 / k)


def channel_loads(table: RoutingTable) -> np.ndarray:
    """int64 [number of existing channels] routes crossing each channel, by channel id."""
    pad = table.shape.n_channel_ids
    loads = np.zeros(pad + 1, np.int64)
    for sources in table.source_blocks():
        loads += np.bincount(table.channels(sources).ravel(), minlength=pad + 1)
    return loads[:pad][table.shape.channel_exists]


def table_metrics(table: RoutingTable) -> dict:
    """Edge-forwarding index and the other numbers of the paper's Table 2."""
    loads = channel_loads(table)
    return {
        "nodes": table.shape.n_nodes,
        "channels": int(loads.size),
        "max_channel_load": int(loads.max()),
        "min_channel_load": int(loads.min()),
        "perfect_channel_load": float(loads.mean()),
        "sigma4": float(deviation(loads, 4)),
        "max_route_length": int(table.length.max()),
        "minimal": bool(np.array_equal(table.length, table.shape.distance)),
    }


# ------------------------------------------------------------------------------ deadlock
def deadlock_cycle(table: RoutingTable) -> list[str] | None:
    """A dependency cycle of the table's routes that bubble flow control cannot break.

    Dependencies between channels of one direction (straight on along a ring) are
    tolerated; any cycle through a turn is a deadlock. Returns the cycle's channels as
    "node(+X)" strings, or None when the table is deadlock-free.
    """
    shape = table.shape
    pairs = np.unique(np.concatenate([dependency_pairs(table.channels(sources), shape.n_channel_ids)
                                      for sources in table.source_blocks()]), axis=0)
    cycle = find_deadlock_cycle(channel_dependency_graph(pairs),
                                tolerated=lambda a, b: a % shape.n_dirs == b % shape.n_dirs)
    if cycle is None:
        return None
    return [f"{c // shape.n_dirs}({shape.direction_name(c % shape.n_dirs)})" for c in cycle]


# -------------------------------------------------------------------------------- export
def simulator_tables(table: RoutingTable) -> dict[str, np.ndarray]:
    """Hop-indexed tables for a simulator (see module doc): all [R, R, max_len] or [R, R].

    dimension int8 and sign int8 (+1 / -1, 0 once arrived) of the output at hop h of route
    s -> t, router int32 (the router at hop h, -1 once arrived), length int16.
    """
    shape, dirs = table.shape, table.directions
    moving = dirs >= 0
    router = np.full(dirs.shape, -1, np.int32)
    node = np.broadcast_to(np.arange(shape.n_nodes)[:, None], dirs.shape[:2]).copy()
    for h in range(dirs.shape[2]):
        step = moving[:, :, h]
        router[:, :, h][step] = node[step]
        node[step] = shape.neighbor[node[step], dirs[:, :, h][step]]
    return {
        "dimension": np.where(moving, dirs % shape.n, -1).astype(np.int8),
        "sign": np.where(moving, np.where(dirs < shape.n, 1, -1), 0).astype(np.int8),
        "router": router,
        "length": table.length,
    }


def save_table(table: RoutingTable, path: Path) -> Path:
    """Write the table as .npz: directions, sides, wrap, turns, algorithm."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp.npz")
    np.savez_compressed(tmp, directions=table.directions, sides=np.array(table.shape.sides),
                        wrap=np.array(table.shape.wrap), turns=table.turns,
                        algorithm=np.array(table.algorithm))
    tmp.replace(path)
    return path


def load_table(path: Path, parameter: str = "routing.table_file") -> RoutingTable:
    """Read a table written by `save_table` (info is empty)."""
    data = load_arrays(path, parameter, ("sides", "wrap", "turns", "algorithm", "directions"),
                       "a routing table written by jaxnet-tables (table.npz)")
    shape = TorusShape(tuple(int(s) for s in data["sides"]), tuple(bool(w) for w in data["wrap"]))
    return RoutingTable(shape, data["turns"], str(data["algorithm"]), data["directions"], {})
