"""Hamiltonian cycles for Ant Mill traffic (Camarero, Martinez, Beivide 2024, Sect. 5).

A cycle x_0 .. x_{n-1} has "delta" d when every window of the cycle is a unique shortest
path up to d hops: D(x_i, x_{i+j}) = j with one shortest path, for all i and j <= d. A
subpath of a unique shortest path is one too, so it suffices to check j = d.

The search grows a path by the moves of Bollobas, Fenner and Frieze:
  extension        append an unvisited neighbour w of the end x_l;
  cycle extension  when the path closes into a cycle but misses vertices, open the cycle
                   after a vertex x_i that has an outside neighbour y and append y;
  rotation         for a neighbour x_i of the end, reverse x_{i+1} .. x_l (new end x_{i+1}).
Extensions are tried first, then cycle extensions, then rotations (Operation 1 "at every
opportunity", Operation 3 otherwise). For d >= 2 only moves that keep every window of the
path a unique shortest path are candidates; that may leave none, so the walk is a
depth-first search that backtracks to the last untried candidate. d = 1 is any Hamiltonian
cycle (every edge is the unique shortest path between its ends): the paper's H-hat.

Seeded and deterministic: candidates are shuffled by a generator seeded with
(seed, delta, attempt), and the step budget (not the clock) decides when an attempt gives
up; the time budget is only a safety stop.
"""
from __future__ import annotations

import collections
import dataclasses
import time

import numpy as np

from jaxnet.core.validate import require
from jaxnet.topology import Topology

_EXTEND, _CYCLE_EXTEND, _ROTATE = 0, 1, 2


class CycleNotFound(ValueError):
    """No Hamiltonian cycle with the requested delta was found within the budget."""


@dataclasses.dataclass(frozen=True)
class CycleSearch:
    """Result of `search_max_delta`.

    cycle: int32 [R] routers in cycle order, valid for `delta`.
    delta: the largest delta the search reached.
    seconds: wall time per delta tried, {delta: seconds} (the failed level included).
    """

    cycle: np.ndarray
    delta: int
    seconds: dict


def window_ok_matrix(topo: Topology, delta: int) -> np.ndarray:
    """bool [R, R]: D(u, v) = delta with a unique shortest path (adjacency for delta = 1)."""
    require(delta >= 1, "delta", delta, "must be >= 1")
    return (topo.distances == delta) & (topo.path_counts == 1)


def check_cycle(topo: Topology, cycle, delta: int = 1) -> None:
    """Raise ValueError unless `cycle` is a Hamiltonian cycle of `topo` with this delta."""
    cycle = np.asarray(cycle, np.int64)
    n = topo.n_routers
    if cycle.shape != (n,) or not np.array_equal(np.sort(cycle), np.arange(n)):
        raise ValueError(f"cycle must visit each of the {n} routers exactly once")
    nxt = np.roll(cycle, -1)
    if not np.all(topo.distances[cycle, nxt] == 1):
        i = int(np.argmax(topo.distances[cycle, nxt] != 1))
        raise ValueError(f"cycle is broken: routers {cycle[i]} and {nxt[i]} are not adjacent")
    require(1 <= delta < n, "delta", delta, f"must be in 1..{n - 1}")
    far = np.roll(cycle, -delta)
    bad = ~window_ok_matrix(topo, delta)[cycle, far]
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"cycle fails delta={delta} at position {i}: D({cycle[i]}, {far[i]}) = "
            f"{topo.distances[cycle[i], far[i]]} with {topo.path_counts[cycle[i], far[i]]:.0f} "
            f"shortest paths (need {delta} and 1)")


def cycle_delta(topo: Topology, cycle) -> int:
    """The largest delta of a Hamiltonian cycle (>= 1; checks that it is one)."""
    check_cycle(topo, cycle, 1)
    cycle = np.asarray(cycle, np.int64)
    delta = 1
    while delta + 1 < topo.n_routers:
        far = np.roll(cycle, -(delta + 1))
        if not np.all((topo.distances[cycle, far] == delta + 1) & (topo.path_counts[cycle, far] == 1)):
            break
        delta += 1
    return delta


def find_cycle(topo: Topology, delta: int = 1, seed: int = 0, max_steps: int = 200_000,
               time_budget: float = 60.0, max_backtrack: int = 20_000,
               first_attempt_steps: int | None = None) -> np.ndarray:
    """A Hamiltonian cycle with unique shortest paths up to `delta` hops (int32 [R]).

    Attempts start from a random router with doubling step budgets (`first_attempt_steps`,
    default 10 R, then twice that, ...): a restart escapes a subtree with no cycle, where
    a single DFS could spend its whole budget. All attempts share `max_steps` moves and
    `time_budget` seconds; each backtracks over at most its last `max_backtrack` moves.
    Raises `CycleNotFound` when out of budget.
    """
    require(delta >= 1, "delta", delta, "must be >= 1")
    require(max_steps >= 1, "max_steps", max_steps, "must be >= 1")
    good = window_ok_matrix(topo, delta)
    if delta >= 2 and np.any(good.sum(axis=1) < 2):
        # every router needs a partner delta hops ahead and one delta hops behind
        raise CycleNotFound(f"no Hamiltonian cycle with delta={delta}: some router has fewer "
                            f"than 2 routers at distance {delta} by a unique shortest path")
    walk = _PathWalk(topo, good, delta)
    if first_attempt_steps is None:
        first_attempt_steps = 10 * topo.n_routers
    deadline = time.monotonic() + time_budget
    steps, attempt = 0, 0
    while steps < max_steps and time.monotonic() < deadline:
        rng = np.random.default_rng([seed, delta, attempt])
        attempt_steps = min(max_steps - steps, first_attempt_steps * 2**attempt)
        found, used = walk.search(rng, attempt_steps, deadline, max_backtrack)
        if found is not None:
            return found.astype(np.int32)
        steps += used
        attempt += 1
    raise CycleNotFound(f"no Hamiltonian cycle with delta={delta} found for {topo.name} within "
                        f"{steps} steps / {time_budget:g} s ({attempt} attempts)")


def search_max_delta(topo: Topology, seed: int = 0, time_budget: float = 60.0,
                     max_steps: int = 200_000, max_delta: int | None = None) -> CycleSearch:
    """Find cycles for delta = 1, 2, ... until one fails; return the largest reached.

    The radius bounds delta (D(x_i, x_{i+delta}) = delta <= eccentricity of x_i), so the
    ladder stops there or at `max_delta`. Each level gets `max_steps` moves; all levels
    share `time_budget` seconds.
    """
    cap = topo.radius if max_delta is None else min(int(max_delta), topo.radius)
    require(cap >= 1, "max_delta", max_delta, "must be >= 1")
    start = time.monotonic()
    best, reached, seconds = None, 0, {}
    for delta in range(1, cap + 1):
        t0 = time.monotonic()
        try:
            best = find_cycle(topo, delta, seed, max_steps, max(time_budget - (t0 - start), 0.0))
            reached = delta
        except CycleNotFound:
            if best is None:
                raise
            break
        finally:
            seconds[delta] = time.monotonic() - t0
    return CycleSearch(best, reached, seconds)


class _PathWalk:
    """Mutable path state (order `path[:length]`, position `pos`) and the DFS over moves."""

    def __init__(self, topo: Topology, good: np.ndarray, delta: int):
        self.n = topo.n_routers
        self.delta = delta
        self.good = good
        self.adjacent = topo.distances == 1
        self.neighbor = topo.neighbor.astype(np.int64)
        self.neighbours = [row[row >= 0] for row in self.neighbor]
        self.path = np.zeros(self.n, np.int64)
        self.pos = np.full(self.n, -1, np.int64)
        self.length = 0

    # ----- search --------------------------------------------------------------
    def search(self, rng, max_steps: int, deadline: float, max_backtrack: int):
        """One DFS attempt from a random start; returns (cycle or None, steps used)."""
        self.pos[:] = -1
        start = int(rng.integers(self.n))
        self.path[0], self.pos[start], self.length = start, 0, 1
        stack = collections.deque([[self.moves(rng), 0, None]], maxlen=max_backtrack)
        steps = 0
        while stack and steps < max_steps:
            steps += 1
            if steps % 4096 == 0 and time.monotonic() > deadline:
                break
            frame = stack[-1]
            moves, cursor, applied = frame
            if cursor == len(moves):
                stack.pop()
                if applied is not None:
                    self.undo(applied)
                continue
            frame[1] += 1
            move = moves[cursor]
            self.apply(move)
            if self.length == self.n and self.closes():
                return self.path.copy(), steps
            stack.append([self.moves(rng), 0, move])
        return None, steps

    def moves(self, rng) -> list:
        """Candidate moves at the current path, in the order the DFS tries them."""
        path, pos, length, delta = self.path, self.pos, self.length, self.delta
        nbrs = self.neighbours[path[length - 1]]
        where = pos[nbrs]
        moves = []
        if length < self.n:
            ext = nbrs[where < 0]
            if delta >= 2 and length >= delta:
                ext = ext[self.good[path[length - delta], ext]]
            moves += [(_EXTEND, int(w)) for w in rng.permutation(ext)]
            if length > 2 * delta and self.closes():
                moves += self.cycle_extensions(rng)
        pivots = where[(where >= 0) & (where < length - 2)]
        if delta >= 2 and pivots.size:
            pivots = pivots[self.rotation_ok(pivots)]
        moves += [(_ROTATE, int(i)) for i in rng.permutation(pivots)]
        return moves

    def closes(self) -> bool:
        """Whether path[:length] closes into a cycle whose wrap-around windows are valid."""
        path, length, delta = self.path, self.length, self.delta
        return bool(self.adjacent[path[length - 1], path[0]]
                    and self.good[path[length - delta:length], path[:delta]].all())

    def cycle_extensions(self, rng) -> list:
        """(i, y): open the closed path after position i, whose router has outside neighbour y."""
        path, length, delta = self.path, self.length, self.delta
        nb = self.neighbor[path[:length]]
        outside = (nb >= 0) & (self.pos[np.maximum(nb, 0)] < 0)
        i, k = np.nonzero(outside)
        y = nb[i, k]
        if delta >= 2:
            keep = self.good[path[(i + 1 - delta) % length], y]
            i, y = i[keep], y[keep]
        order = rng.permutation(i.size)
        return [(_CYCLE_EXTEND, int(i[j]), int(y[j])) for j in order]

    def rotation_ok(self, pivots: np.ndarray) -> np.ndarray:
        """bool per pivot i: the windows across the new edge (x_i, x_end) stay valid."""
        path, end, delta = self.path, self.length - 1, self.delta
        m = np.arange(delta)
        left = pivots[:, None] - delta + 1 + m[None, :]
        right = end - m
        exists = (left >= 0) & (right[None, :] > pivots[:, None])
        ok = self.good[path[np.maximum(left, 0)], path[right][None, :]]
        return np.all(ok | ~exists, axis=1)

    # ----- moves ---------------------------------------------------------------
    def apply(self, move) -> None:
        kind = move[0]
        if kind == _EXTEND:
            self._append(move[1])
        elif kind == _ROTATE:
            self._reverse_tail(move[1] + 1)
        else:
            self._roll(-(move[1] + 1))
            self._append(move[2])

    def undo(self, move) -> None:
        kind = move[0]
        if kind == _EXTEND:
            self._pop()
        elif kind == _ROTATE:
            self._reverse_tail(move[1] + 1)
        else:
            self._pop()
            self._roll(move[1] + 1)

    def _append(self, w: int) -> None:
        self.path[self.length] = w
        self.pos[w] = self.length
        self.length += 1

    def _pop(self) -> None:
        self.length -= 1
        self.pos[self.path[self.length]] = -1

    def _reverse_tail(self, start: int) -> None:
        seg = self.path[start:self.length][::-1].copy()
        self.path[start:self.length] = seg
        self.pos[seg] = np.arange(start, self.length)

    def _roll(self, shift: int) -> None:
        seg = np.roll(self.path[:self.length], shift)
        self.path[:self.length] = seg
        self.pos[seg] = np.arange(self.length)
