"""Every minimal route the Angara routing rules admit (Mukosey, Semenov, Tretiakov, section
3), per ordered node pair, vectorised. A minimal route is fixed by its sign choice in
half-ring dimensions (offset d/2) plus its FS and LS steps (`jaxnet.paths.torus_graph`
states the rules); every table generator picks among these candidates, and the tests check
the list against the routing graph."""
from __future__ import annotations

import dataclasses

import numpy as np

from jaxnet.paths.torus_graph import TorusShape


@dataclasses.dataclass(frozen=True, eq=False)
class RouteCandidates:
    """Every minimal route the rules admit, for every ordered pair s != t.

    Pair id = s * R + t. Candidates of pair p are rows offsets[p]:offsets[p + 1] of
    `channels` (int32 [n_candidates, max_len], padded with `shape.n_channel_ids`); row
    order within a pair: sign choice (all + first), then FS step, then LS step, so the
    first row is the direction-order route. `length[p]` is the hop distance.
    """

    shape: TorusShape
    offsets: np.ndarray
    channels: np.ndarray
    length: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def pad(self) -> int:
        return self.shape.n_channel_ids


def minimal_route_candidates(shape: TorusShape, turns: np.ndarray,
                             chunk_pairs: int = 1 << 18) -> RouteCandidates:
    """All minimal admitted routes of all pairs, vectorised over pairs in chunks."""
    R = shape.n_nodes
    width = max(int(shape.distance.max()), 1)
    parts_pair, parts_channels = [], []
    for start in range(0, R * R, chunk_pairs):
        pairs = np.arange(start, min(start + chunk_pairs, R * R))
        pairs = pairs[pairs // R != pairs % R]
        pair, channels = _candidates_of(shape, turns, pairs, width)
        parts_pair.append(pair)
        parts_channels.append(channels)
    pair = np.concatenate(parts_pair)
    offsets = np.zeros(R * R + 1, np.int64)
    offsets[1:] = np.cumsum(np.bincount(pair, minlength=R * R))
    length = shape.distance.ravel().astype(np.int32)
    return RouteCandidates(shape, offsets, np.concatenate(parts_channels), length)


def _candidates_of(shape: TorusShape, turns: np.ndarray, pairs: np.ndarray, width: int):
    """(pair id, channel rows) of the minimal routes of `pairs`, grouped by pair."""
    n, n_dirs, R = shape.n, shape.n_dirs, shape.n_nodes
    src, dst = pairs // R, pairs % R
    plus = np.zeros((len(pairs), n), np.int64)
    minus = np.zeros((len(pairs), n), np.int64)
    for j, (side, wrap) in enumerate(zip(shape.sides, shape.wrap)):
        delta = shape.coords[dst, j].astype(np.int64) - shape.coords[src, j]
        if wrap:
            forward = delta % side
            plus[:, j] = np.where(2 * forward <= side, forward, 0)
            minus[:, j] = np.where((forward > 0) & (2 * forward >= side), side - forward, 0)
        else:
            plus[:, j], minus[:, j] = np.maximum(delta, 0), np.maximum(-delta, 0)
    half = (plus > 0) & (minus > 0)  # half-ring offset: both signs are minimal
    # sign choices: bit j set = go minus in half-ring dimension j
    rows_pair, rows_counts = [], []
    for pattern in range(1 << n):
        bits = (pattern >> np.arange(n)) & 1
        ok = np.all(half | (bits == 0), axis=1)
        take_minus = bits.astype(bool)[None, :] & half
        counts = np.concatenate([np.where(take_minus, 0, plus), np.where(half & ~take_minus, 0, minus)],
                                axis=1)
        rows_pair.append(np.flatnonzero(ok))
        rows_counts.append(counts[ok])
    base_index = np.concatenate(rows_pair)
    base_counts = np.concatenate(rows_counts)
    order = np.argsort(base_index, kind="stable")
    base_index, base_counts = base_index[order], base_counts[order]

    variants = []  # (base row, fs, ls), ordered by base row, then (fs, ls)
    direction_ids = np.arange(n_dirs)
    s, t = src[base_index], dst[base_index]
    fs_options = [-1] + [a for a in range(n) if turns[:, a, :].any()]
    ls_options = [-1] + [b for b in range(n, n_dirs) if turns[:, :, b].any()]
    for fs in fs_options:
        for ls in ls_options:
            middle = base_counts.copy()
            ok = np.ones(len(middle), bool)
            for step in (fs, ls):
                if step >= 0:
                    ok &= middle[:, step] > 0
                    middle[:, step] -= ok
            present = middle > 0
            if fs >= 0:  # FS must be a real turn: next step earlier than fs, allowed there
                first = np.where(present, direction_ids, n_dirs).min(axis=1)
                w = shape.neighbor[s, fs]
                ok &= (first < fs) & (w >= 0)
                ok &= turns[np.maximum(w, 0), fs, np.minimum(first, n_dirs - 1)]
            if ls >= 0:  # LS must be a real turn: after a later direction, allowed there
                last = np.where(present, direction_ids, -1).max(axis=1)
                w = shape.neighbor[t, shape.opposite(ls)]
                ok &= (last > ls) & (w >= 0)
                ok &= turns[np.maximum(w, 0), np.maximum(last, 0), ls]
            rows = np.flatnonzero(ok)
            variants.append((rows, middle[rows], fs, ls))
    rows = np.concatenate([v[0] for v in variants])
    middle = np.concatenate([v[1] for v in variants])
    fs = np.concatenate([np.full(len(v[0]), v[2]) for v in variants])
    ls = np.concatenate([np.full(len(v[0]), v[3]) for v in variants])
    order = np.argsort(rows, kind="stable")
    rows, middle, fs, ls = rows[order], middle[order], fs[order], ls[order]
    directions = _sequences(middle, fs, ls, width)
    channels = _walk_many(shape, src[base_index[rows]], directions)
    return pairs[base_index[rows]], channels


def _sequences(middle: np.ndarray, fs: np.ndarray, ls: np.ndarray, width: int) -> np.ndarray:
    """int64 [N, width] direction sequences FS + DOR(middle) + LS, -1 padded."""
    n_rows, n_dirs = middle.shape
    out = np.full((n_rows, width), -1, np.int64)
    has_fs, has_ls = fs >= 0, ls >= 0
    middle_length = middle.sum(axis=1)
    row = np.repeat(np.arange(n_rows), middle_length)
    start = np.cumsum(middle_length) - middle_length
    position = np.arange(len(row)) - np.repeat(start, middle_length) + has_fs[row]
    out[row, position] = np.repeat(np.tile(np.arange(n_dirs), n_rows), middle.ravel())
    out[has_fs, 0] = fs[has_fs]
    out[has_ls, has_fs[has_ls] + middle_length[has_ls]] = ls[has_ls]
    return out


def _walk_many(shape: TorusShape, sources: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """int32 channel ids of direction sequences (padded with shape.n_channel_ids)."""
    node = sources.astype(np.int64).copy()
    out = np.full(directions.shape, shape.n_channel_ids, np.int32)
    for p in range(directions.shape[1]):
        k = directions[:, p]
        step = k >= 0
        out[step, p] = node[step] * shape.n_dirs + k[step]
        node[step] = shape.neighbor[node[step], k[step]]
    return out
