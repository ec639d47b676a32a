"""FIFO ring operations on `Rings` (one ring per (port, VC), all of depth `depth`)."""
from __future__ import annotations

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.sim.state import Rings


def take_rows(array, index):
    """array[index] for indices known to be in bounds (skips XLA's clamping: ~2x faster)."""
    return array.at[index].get(mode="promise_in_bounds")


def _wrap(index, depth: int):
    return jnp.where(index >= depth, index - depth, index)


def release(rings: Rings, cycle, depth: int) -> Rings:
    """Free the oldest gone slot of every ring whose FREE_AT has come (one per cycle
    suffices: packets leave a ring at most once per cycle)."""
    n = rings.first.shape[0]
    oldest = rings.slots[jnp.arange(n) * depth + rings.first, pk.FREE_AT]
    free = (rings.gone > 0) & (oldest <= cycle)
    step = free.astype(jnp.int32)
    return rings._replace(
        first=_wrap(rings.first + step, depth), taken=rings.taken - step, gone=rings.gone - step
    )


def head_rows(rings: Rings, depth: int):
    """(row [n], waiting bool [n]): slot row of the first waiting packet of every ring."""
    n = rings.first.shape[0]
    return jnp.arange(n) * depth + _wrap(rings.first + rings.gone, depth), rings.taken > rings.gone


def heads(rings: Rings, depth: int):
    """(row, record [n, F], waiting bool [n]) of the first waiting packet of every ring."""
    row, waiting = head_rows(rings, depth)
    return row, take_rows(rings.slots, row), waiting


def pop_heads(rings: Rings, row, leaving, free_at) -> Rings:
    """The head packets where `leaving` (bool [n]) leave; their slots free at `free_at`."""
    drop = rings.slots.shape[0]
    slots = rings.slots.at[jnp.where(leaving, row, drop), pk.FREE_AT].set(free_at, mode="drop")
    return rings._replace(slots=slots, gone=rings.gone + leaving.astype(jnp.int32))


def push(rings: Rings, ring, valid, records, depth: int) -> Rings:
    """Append records [m, F] to rings `ring` [m] where `valid`; at most one per ring."""
    n = rings.first.shape[0]
    safe = jnp.where(valid, ring, 0)
    row = safe * depth + _wrap(rings.first[safe] + rings.taken[safe], depth)
    slots = rings.slots.at[jnp.where(valid, row, rings.slots.shape[0])].set(records, mode="drop")
    taken = rings.taken.at[jnp.where(valid, ring, n)].add(1, mode="drop")
    return rings._replace(slots=slots, taken=taken)


def pop_front(rings: Rings, leaving, depth: int) -> Rings:
    """Remove the first entry of rings where `leaving`, freeing its slot at once (queues)."""
    step = leaving.astype(jnp.int32)
    return rings._replace(first=_wrap(rings.first + step, depth), taken=rings.taken - step)
