"""The Angara routing graph for tori and meshes (Mukosey, Semenov, Tretiakov, section 3).

Geometry. An n-D torus or mesh (n = 1..4) with `sides` d_0..d_{n-1} >= 2. Node index is
mixed radix with coordinate 0 fastest (as `jaxnet.topology.cartesian`). A torus dimension
closes into a ring when its side is >= 3; a side of 2 is a single link, i.e. a mesh
dimension, as in the paper's Desmos system (4x2x2x2).

Directions. Index k in 0..2n-1: k < n is +dim k, k >= n is -dim (k - n); the index order
is the Angara direction order +X +Y +Z +K -X -Y -Z -K. Channel id = node * 2n + k; a
channel exists where `neighbor[node, k] >= 0` (mesh borders and the missing side of a
side-2 dimension have none).

Routing rules. A route is a direction sequence from its source, parsed as
    [FS] dirbit [LS]
- dirbit: directions in non-decreasing order (DOR) with the direction-bit rule: never both
  signs of one dimension;
- FS: an optional first positive step; the next step must come later in the order, or be
  an earlier direction where the deadlock-free augmentation allowed that turn;
- LS: an optional last negative step after a non-empty dirbit part; it must come later
  than the dirbit part's last direction, or be earlier where the augmentation allowed it.
Turn permissions are `extra_turn[w, a, b]`: at node w, after arriving by direction a, the
route may leave by direction b < a (a and b of the same sign). `deadlock_free_turns`
computes them by Theorem 2 (section 3.2); `no_extra_turns` gives plain DOR.

Routing graph (section 3.1). Per node 3^n + 2n + 1 vertices (states): BEGIN, FS(a) for the
n positive directions, DIRBIT(S) for the 3^n - 1 non-empty direction-bit sets, LS(b) for the
n negative directions, END. Theorem 1: a route exists iff a BEGIN(s) -> END(t) path exists;
`RoutingGraph.admits` walks the graph, `obeys_routing_rules` applies the rules directly,
and the tests check that both agree on every short direction sequence.

Minimal routes. Every generator routes minimally; `jaxnet.paths.torus_routes` lists every
minimal route the rules admit, per pair.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np

from jaxnet.core.validate import is_int, require

DIMENSION_NAMES = "XYZK"
KINDS = ("torus", "mesh")
MAX_DIMENSIONS = 4


# ---------------------------------------------------------------------------- geometry
@dataclasses.dataclass(frozen=True, eq=False)
class TorusShape:
    """Sides and per-dimension wrap-around of an n-D torus or mesh, with derived arrays."""

    sides: tuple[int, ...]
    wrap: tuple[bool, ...]

    @classmethod
    def build(cls, sides, kind: str = "torus") -> "TorusShape":
        """Validate `sides` (1..4 integers >= 2) and `kind` ("torus" or "mesh")."""
        require(kind in KINDS, "kind", kind, f"one of {KINDS}")
        ok = not isinstance(sides, (str, bytes)) and hasattr(sides, "__len__")
        require(ok and 1 <= len(sides) <= MAX_DIMENSIONS, "sides", sides,
                f"must list 1..{MAX_DIMENSIONS} side lengths")
        for side in sides:
            require(is_int(side) and side >= 2, "sides", list(sides), "every side must be an integer >= 2")
        sides = tuple(int(s) for s in sides)
        return cls(sides, tuple(kind == "torus" and s >= 3 for s in sides))

    @property
    def n(self) -> int:
        return len(self.sides)

    @property
    def n_dirs(self) -> int:
        return 2 * len(self.sides)

    @functools.cached_property
    def n_nodes(self) -> int:
        return int(np.prod(self.sides))

    @property
    def n_channel_ids(self) -> int:
        """Size of the channel id space (node * 2n + k), existing or not."""
        return self.n_nodes * self.n_dirs

    @functools.cached_property
    def coords(self) -> np.ndarray:
        """int32 [R, n] coordinates, coordinate 0 fastest."""
        index = np.arange(self.n_nodes)
        strides = np.cumprod((1,) + self.sides[:-1])
        return ((index[:, None] // strides) % np.array(self.sides)).astype(np.int32)

    @functools.cached_property
    def neighbor(self) -> np.ndarray:
        """int32 [R, 2n]: node reached by direction k, -1 where there is no channel."""
        strides = np.cumprod((1,) + self.sides[:-1])
        out = np.full((self.n_nodes, self.n_dirs), -1, np.int32)
        index = np.arange(self.n_nodes)
        for j, (side, wrap) in enumerate(zip(self.sides, self.wrap)):
            c = self.coords[:, j]
            for k, step in ((j, 1), (j + self.n, -1)):
                target = (c + step) % side if wrap else c + step
                ok = (target >= 0) & (target < side)
                out[ok, k] = index[ok] + (target[ok] - c[ok]) * strides[j]
        return out

    @functools.cached_property
    def channel_exists(self) -> np.ndarray:
        """bool [R * 2n] by channel id."""
        return (self.neighbor >= 0).ravel()

    @functools.cached_property
    def distance(self) -> np.ndarray:
        """int16 [R, R] hop distances (sum of per-dimension ring or line distances)."""
        dist = np.zeros((self.n_nodes, self.n_nodes), np.int16)
        for j, (side, wrap) in enumerate(zip(self.sides, self.wrap)):
            c = self.coords[:, j]
            delta = np.abs(c[:, None] - c[None, :])
            dist += np.minimum(delta, side - delta) if wrap else delta
        return dist

    def opposite(self, k):
        return (k + self.n) % self.n_dirs

    def direction_name(self, k: int) -> str:
        return ("+" if k < self.n else "-") + DIMENSION_NAMES[k % self.n]


def no_extra_turns(shape: TorusShape) -> np.ndarray:
    """Turn permissions of plain direction-order routing: no FS/LS turn is allowed."""
    return np.zeros((shape.n_nodes, shape.n_dirs, shape.n_dirs), bool)


# ------------------------------------------------------ deadlock-free augmentation (3.2)
def deadlock_free_turns(shape: TorusShape) -> np.ndarray:
    """Theorem 2 augmentation: bool [R, 2n, 2n] FS/LS turns that keep the CDG acyclic.

    The channel dependency graph starts with every direction-order dependency
    (u, a) -> (u + a, b), b >= a. The used-direction set B(c) is the set of directions
    reachable from channel c. In channel-id order, every dependency (u, a) -> (v, b) with
    b < a that the routing graph can use (both positive: an FS turn; both negative: an LS
    turn) is added when a is not in B(v, b); B then grows along the reversed graph. Since
    B only grows, a single pass adds edges until none can be added.
    """
    n_dirs, neighbor = shape.n_dirs, shape.neighbor
    used = _initial_used_directions(shape)
    turns = no_extra_turns(shape)
    added_predecessors: dict[int, list[int]] = {}

    for channel, successor, a, b in _turn_candidates(shape, used):
        if used[successor] >> a & 1:
            continue  # B grew since the pre-filter: the edge would now close a cycle
        v = successor // n_dirs
        turns[v, a, b] = True
        added_predecessors.setdefault(successor, []).append(channel)
        grown = used[channel] | used[successor]
        if grown == used[channel]:
            continue
        used[channel] = grown
        stack = [channel]
        while stack:  # every ancestor of `channel` can now reach B(successor) too
            x = stack.pop()
            for p in _predecessors(x, n_dirs, neighbor, added_predecessors):
                if used[p] | grown != used[p]:
                    used[p] |= grown
                    stack.append(p)
    return turns


def _initial_used_directions(shape: TorusShape) -> np.ndarray:
    """B(c) of the direction-order CDG as bitmasks, int64 [R * 2n] (0 for missing channels)."""
    n_dirs = shape.n_dirs
    successors = _dor_successors(shape)  # [C, 2n], -1 padded
    own = np.where(shape.channel_exists, 1 << (np.arange(shape.n_channel_ids) % n_dirs), 0)
    used = own.astype(np.int64)
    while True:
        reach = np.where(successors >= 0, np.append(used, 0)[successors], 0)
        grown = own | np.bitwise_or.reduce(reach, axis=1)
        if np.array_equal(grown, used):
            return used
        used = grown


def _dor_successors(shape: TorusShape) -> np.ndarray:
    """int64 [C, 2n]: successor channel ids (v, b), b >= a, of every channel (u, a); -1 pad."""
    n_dirs = shape.n_dirs
    channels = np.arange(shape.n_channel_ids)
    a = channels % n_dirs
    v = shape.neighbor.ravel()
    b = np.arange(n_dirs)[None, :]
    succ = v[:, None] * n_dirs + b
    ok = (v[:, None] >= 0) & (b >= a[:, None])
    ok &= shape.channel_exists[np.where(ok, succ, 0)]
    return np.where(ok, succ, -1)


def _turn_candidates(shape: TorusShape, used: np.ndarray):
    """(channel, successor, a, b) in channel-id order for usable turns b < a of one sign,
    keeping those not already blocked by the initial used-direction sets."""
    n, n_dirs = shape.n, shape.n_dirs
    pairs = [(a, b) for a in range(n_dirs) for b in range(a) if (a < n) == (b < n)]
    if not pairs:
        return []
    a, b = (np.tile(x, shape.n_nodes) for x in np.array(pairs).T)
    u = np.repeat(np.arange(shape.n_nodes), len(pairs))
    v = shape.neighbor[u, a]
    successor = np.where(v >= 0, v * n_dirs + b, 0)
    ok = (v >= 0) & shape.channel_exists[successor] & ((used[successor] >> a & 1) == 0)
    channel = u * n_dirs + a
    return list(zip(channel[ok].tolist(), successor[ok].tolist(), a[ok].tolist(), b[ok].tolist()))


def _predecessors(channel: int, n_dirs: int, neighbor: np.ndarray, added: dict) -> list[int]:
    """Channels with a dependency into `channel`: direction-order ones plus added turns."""
    v, b = divmod(channel, n_dirs)
    n = n_dirs // 2
    out = []
    for a in range(b + 1):
        u = neighbor[v, (a + n) % n_dirs]  # the channel (u, a) arrives at v
        if u >= 0:
            out.append(int(u) * n_dirs + a)
    return out + added.get(channel, [])


# ------------------------------------------------------------------- routing rules
def obeys_routing_rules(shape: TorusShape, turns: np.ndarray, source: int, directions) -> bool:
    """The Angara rules applied directly to a direction sequence (no routing graph)."""
    directions = [int(k) for k in directions]
    nodes = [int(source)]
    for k in directions:
        nxt = int(shape.neighbor[nodes[-1], k])
        if nxt < 0:
            return False
        nodes.append(nxt)
    m, n = len(directions), shape.n
    for fs in (False, True):
        for ls in (False, True):
            if (fs and (m < 1 or directions[0] >= n)) or (ls and (m < 1 or directions[-1] < n)):
                continue
            middle = directions[int(fs): m - int(ls)]
            if (fs and ls and not middle) or (ls and not middle) or not _is_dirbit(middle, n):
                continue
            if fs and middle:
                a, b = directions[0], middle[0]
                if not (b > a or (b < a and turns[nodes[1], a, b])):
                    continue
            if ls:
                a, b = middle[-1], directions[-1]
                if not (b > a or (b < a and turns[nodes[-2], a, b])):
                    continue
            return True
    return False


def _is_dirbit(directions: list[int], n: int) -> bool:
    """Non-decreasing direction order, and no dimension used with both signs."""
    in_order = all(x <= y for x, y in zip(directions, directions[1:]))
    signs = {(k % n, k < n) for k in directions}
    return in_order and len(signs) == len({dim for dim, _ in signs})


# ------------------------------------------------------------------ routing graph
@dataclasses.dataclass(frozen=True, eq=False)
class RoutingGraph:
    """The routing graph as per-state transitions, allowed per node.

    Vertex = node * n_states + state. Network transitions t go from `state[t]` along
    direction `direction[t]` to `next_state[t]` at the neighbour, where `allowed[t, node]`.
    Every state but END also has an END edge at its own node (route ends there).
    `out[state]` lists a state's transitions in order (-1 padded).
    """

    shape: TorusShape
    turns: np.ndarray
    state_names: tuple[str, ...]
    state: np.ndarray
    direction: np.ndarray
    next_state: np.ndarray
    allowed: np.ndarray
    out: np.ndarray

    BEGIN = 0

    @property
    def n_states(self) -> int:
        return len(self.state_names)

    @property
    def end(self) -> int:
        return self.n_states - 1

    @classmethod
    def build(cls, shape: TorusShape, turns: np.ndarray) -> "RoutingGraph":
        n, n_dirs = shape.n, shape.n_dirs
        sets = [v for v in itertools.product(range(3), repeat=n) if any(v)]
        dirbit = {v: 1 + n + i for i, v in enumerate(sets)}
        ls_state = {b: 1 + n + len(sets) + (b - n) for b in range(n, n_dirs)}
        names = (["BEGIN"] + [f"FS{shape.direction_name(a)}" for a in range(n)]
                 + ["DIRBIT{" + "".join(shape.direction_name(k) for k in _members(v, n)) + "}"
                    for v in sets]
                 + [f"LS{shape.direction_name(b)}" for b in range(n, n_dirs)] + ["END"])

        def with_direction(v, k):
            sign = 1 if k < n else 2
            if v[k % n] not in (0, sign):
                return None  # direction-bit rule
            w = list(v)
            w[k % n] = sign
            return tuple(w)

        exists = shape.neighbor >= 0  # [R, 2n]
        rows = []  # (state, direction, next_state, allowed [R])
        for k in range(n_dirs):  # BEGIN
            if k < n:
                rows.append((0, k, 1 + k, exists[:, k]))
            rows.append((0, k, dirbit[with_direction((0,) * n, k)], exists[:, k]))
        for a in range(n):  # FS(a): later directions, or earlier ones by an allowed turn
            for k in range(n_dirs):
                target = dirbit[with_direction((0,) * n, k)]
                if k > a:
                    rows.append((1 + a, k, target, exists[:, k]))
                elif k < a:
                    rows.append((1 + a, k, target, exists[:, k] & turns[:, a, k]))
        for v in sets:  # DIRBIT(v)
            last = max(_members(v, n))
            for k in range(n_dirs):
                w = with_direction(v, k)
                if k >= last and w is not None:
                    rows.append((dirbit[v], k, dirbit[w], exists[:, k]))
                if k >= n and k > last:
                    rows.append((dirbit[v], k, ls_state[k], exists[:, k]))
                elif k >= n and k < last:
                    rows.append((dirbit[v], k, ls_state[k], exists[:, k] & turns[:, last, k]))
        state, direction, next_state, allowed = (np.array(x) for x in zip(*rows))
        degree = np.bincount(state, minlength=len(names))
        out = np.full((len(names), degree.max()), -1, np.int64)
        for s in range(len(names)):
            ts = np.flatnonzero(state == s)
            out[s, : len(ts)] = ts
        return cls(shape, turns, tuple(names), state, direction, next_state,
                   np.asarray(allowed, bool), out)

    def admits(self, source: int, directions) -> bool:
        """Is there a BEGIN(source) -> END path whose steps take these directions?"""
        node, states = int(source), {self.BEGIN}
        for k in directions:
            nxt = int(self.shape.neighbor[node, int(k)])
            if nxt < 0:
                return False
            states = {int(self.next_state[t]) for s in states for t in self.out[s]
                      if t >= 0 and self.direction[t] == k and self.allowed[t, node]}
            node = nxt
            if not states:
                return False
        return True  # every state has an END edge


def _members(v: tuple[int, ...], n: int) -> list[int]:
    """Direction indices present in a direction-bit set (1 = +, 2 = - per dimension)."""
    return sorted(j if s == 1 else j + n for j, s in enumerate(v) if s)
