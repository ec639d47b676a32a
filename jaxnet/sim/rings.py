"""FIFO ring operations on `Rings` (one ring per (port, VC), all of depth `depth`).

Most operations take `ids`, the rings to touch (int32 [K], a `Subset` of the rings), or
None for every ring. The two forms give the same results; a subset costs K, not the
number of rings. Which rings a cycle visits is decided by `jaxnet.sim.work`.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core.gather import take_pair, take_rows
from jaxnet.sim.state import GONE, TAKEN, Rings, pack_counters, unpack_counters


class Subset(NamedTuple):
    """The rings (or servers) a phase visits: ids int32 [K] (in increasing order, padded
    with 0) where valid bool [K]; or ids None for every one (valid then True)."""

    ids: jnp.ndarray | None
    valid: jnp.ndarray | bool


EVERY = Subset(None, True)
# Scatters to the row past the end are left out (masked entries); indices are never
# negative (`jaxnet.core.gather.IN_BOUNDS`).
DROP = {"mode": "drop", "wrap_negative_indices": False}
# `Rings.free_at` of a lent slot (`Rings.lent`): never, until its credit starts back.
LENT = jnp.iinfo(jnp.int32).max


def where_read(needed, index):
    """index where `needed` (bool), 0 elsewhere: the index of a gather whose other entries
    are not used. Those then read one line that stays cached instead of their own, which in
    the large slot arrays is mostly a miss to memory (a masked entry of a gather costs what
    an unmasked one does)."""
    return jnp.where(needed, index, 0)


def pick(array, ids):
    """array[ids] (ids in bounds), or the whole array when ids is None."""
    return array if ids is None else take_rows(array, ids)


def put(array, ids, where, value):
    """array with array[ids[k]] = value[k] where where[k]; elementwise when ids is None."""
    if ids is None:
        return jnp.where(where, value, array)
    return array.at[jnp.where(where, ids, array.shape[0])].set(value, **DROP)


def bump(array, ids, amount):
    """array with amount[k] added at ids[k] (ids distinct); elementwise when ids is None."""
    if ids is None:
        return array + amount
    return array.at[ids].add(amount, **DROP)


def ring_ids(rings: Rings, ids):
    """int32 ring ids of `ids` (arange for every ring)."""
    return jnp.arange(rings.counters.shape[0], dtype=jnp.int32) if ids is None else ids


def counters(rings: Rings, ids):
    """(first, taken, gone) int32 [K] of the rings `ids` (`Rings.counters`, one gather)."""
    return unpack_counters(pick(rings.counters, ids))


def _wrap(index, depth: int):
    return jnp.where(index >= depth, index - depth, index)


def release(rings: Rings, visited: Subset, cycle, depth: int) -> tuple[Rings, jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """(rings after freeing the oldest gone slot of the visited rings whose `free_at` has come,
    bool [K] the ring still holds a slot, bool [K] it holds a packet waiting to leave, bool
    [K] it freed a slot).
    One per cycle suffices: packets leave a ring at most once per cycle (under
    `router.output_queue: reserved` two credits of a ring that start back in one cycle, from
    two output queues, free a cycle apart). New counters are
    written from the values read, so XLA orders every read before the write instead of
    copying the array."""
    ids = visited.ids
    first, taken, gone = counters(rings, ids)
    oldest = take_rows(rings.free_at, where_read(gone > 0, ring_ids(rings, ids) * depth + first))
    free = visited.valid & (gone > 0) & (oldest <= cycle)
    freed = pack_counters(_wrap(first + 1, depth), taken - 1, gone - 1)
    rings = rings._replace(counters=put(rings.counters, ids, free, freed))
    return rings, visited.valid & (taken > free), visited.valid & (taken > gone), free


def head_rows(rings: Rings, ids, depth: int):
    """(row, waiting bool) of the first waiting packet of the rings `ids`."""
    first, taken, gone = counters(rings, ids)
    return ring_ids(rings, ids) * depth + _wrap(first + gone, depth), taken > gone


def pop_heads(rings: Rings, ids, row, leaving, free_at) -> Rings:
    """The head packets (slot `row`) of the rings `ids` leave where `leaving`; their slots
    free at `free_at`. The packet behind each, if any, becomes its ring's head."""
    free_at = rings.free_at.at[jnp.where(leaving, row, rings.free_at.shape[0])].set(free_at, **DROP)
    if rings.head_ready is not None:
        first, taken, gone = counters(rings, ids)
        depth = rings.slots.shape[0] // rings.counters.shape[0]
        uncovered = leaving & (taken > gone + 1)
        behind = ring_ids(rings, ids) * depth + _wrap(first + gone + 1, depth)
        rings = rings._replace(head_ready=put(rings.head_ready, ids, uncovered,
                                              take_pair(rings.slots, where_read(uncovered, behind), pk.READY)))
    return rings._replace(counters=bump(rings.counters, ids, jnp.where(leaving, GONE, 0)), free_at=free_at)


def lend(rings: Rings, ids, row, leaving) -> Rings:
    """The head packets (slot `row`) of the rings `ids` leave where `leaving` into an output
    queue that keeps their credit (`Rings.lent`): their slots free only after `return_lent`."""
    rings = pop_heads(rings, ids, row, leaving, LENT)
    return rings._replace(lent=bump(rings.lent, ids, leaving.astype(jnp.int32)))


def _rank_within(group, valid):
    """int32 [K]: how many valid entries before each one share its group (a stable sort)."""
    key = jnp.where(valid, group, jnp.iinfo(jnp.int32).max)
    order = jnp.argsort(key, stable=True)
    ordered = key[order]
    position = jnp.arange(key.shape[0], dtype=jnp.int32)
    starts = jnp.where(jnp.concatenate([jnp.ones(1, bool), ordered[1:] != ordered[:-1]]), position, 0)
    return jnp.zeros_like(position).at[order].set(position - jax.lax.cummax(starts))


def return_lent(rings: Rings, ring, valid, free_at, depth: int) -> Rings:
    """Rings after the credits lent by rings `ring` [K] start back where `valid` (several
    per ring allowed), usable at `free_at` [K]: each takes the oldest lent slot of its ring.
    Credits of one ring start back in time order with the same delay, so the gone slots'
    `free_at` stay in order and the oldest still frees first."""
    safe = jnp.where(valid, ring, 0)
    first, _, gone = counters(rings, safe)
    lent = take_rows(rings.lent, safe)
    row = safe * depth + _wrap(first + gone - lent + _rank_within(ring, valid), depth)
    rows = jnp.where(valid, row, rings.free_at.shape[0])
    ring_out = jnp.where(valid, ring, rings.lent.shape[0])
    return rings._replace(free_at=rings.free_at.at[rows].set(free_at, **DROP),
                          lent=rings.lent.at[ring_out].add(-1, **DROP))


def push(rings: Rings, ring, valid, records, depth: int) -> tuple[Rings, jnp.ndarray]:
    """(rings with records [m, F] appended to rings `ring` [m] where `valid`, at most one
    per ring; bool [m] the ring held nothing before). A record appended to a ring with no
    packet waiting is its head. Where the rings keep their heads' READY, the records not
    appended (dropped) are made of it, so that the write depends on what `pop_heads` read
    of the slots and XLA orders that read first instead of copying the slots every cycle."""
    safe = jnp.where(valid, ring, 0)
    word = take_rows(rings.counters, safe)
    first, taken, gone = unpack_counters(word)
    row = safe * depth + _wrap(first + taken, depth)
    at = jnp.where(valid, row, rings.slots.shape[0])
    if rings.head_ready is not None:
        records = jnp.where(valid[:, None], records, take_rows(rings.head_ready, safe)[:, None])
    rings = rings._replace(slots=rings.slots.at[at].set(records, **DROP),
                           counters=put(rings.counters, ring, valid, word + TAKEN))
    if rings.head_ready is not None:
        rings = rings._replace(head_ready=put(rings.head_ready, ring, valid & (taken == gone), records[:, pk.READY]))
    return rings, taken == 0


def pop_front(rings: Rings, ids, leaving, depth: int) -> Rings:
    """Remove the first entry of the rings `ids` (None: every ring) where `leaving`,
    freeing its slot at once (queues)."""
    first, taken, gone = counters(rings, ids)
    return rings._replace(counters=put(rings.counters, ids, leaving,
                                       pack_counters(_wrap(first + 1, depth), taken - 1, gone)))
