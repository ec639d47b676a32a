"""Packet records, counter-based random numbers and wide counters: the engine's small parts.

A packet is one int32 row of `N_FIELDS` fields; buffers hold rows, so moving a packet
is one row gather and one row scatter, whatever the routing scheme stores in it.
"""
from __future__ import annotations

import jax.numpy as jnp

# Packet record fields (int32 each).
DST = 0  # destination server
DST_R = 1  # destination router
CREATED = 2  # cycle the packet was generated
INJECTED = 3  # cycle its head entered the first router
HOPS = 4  # router-to-router hops taken so far
READY = 5  # cycle its head is in the current buffer
FREE_AT = 6  # cycle its buffer slot is free again (set when it leaves)
SRC = 7  # source router
MID = 8  # intermediate router (Valiant family), -1 if none
PHASE = 9  # routing phase
PATH = 10  # path id (source routing) or per-packet random word
CLASS_HOPS = 11  # hops on links of class >= 1 (Dragonfly: global) in the current phase
N_FIELDS = 12

# Fields of a source-queue entry.
Q_DST, Q_DST_R, Q_CREATED = 0, 1, 2
N_QUEUE_FIELDS = 3


# ---- counter-based random numbers ---------------------------------------------------
# One 32-bit hash per value (lowbias32): cheap on CPU and GPU, and a draw depends only on
# (seed, cycle, purpose, index), so a simulation gives the same numbers alone or batched.

def _mix(x):
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def random_bits(seed, cycle, purpose: int, n: int):
    """uint32 [n] random words for one purpose in one cycle."""
    base = _mix(seed ^ _mix(cycle.astype(jnp.uint32) * jnp.uint32(64) + jnp.uint32(purpose)))
    return _mix(base + jnp.arange(n, dtype=jnp.uint32) * jnp.uint32(0x9E3779B9))


def hash_words(a, b):
    """uint32 hash of two int32/uint32 arrays (e.g. a packet's random word and its hop index)."""
    return _mix(a.astype(jnp.uint32) * jnp.uint32(0x9E3779B9) ^ _mix(b.astype(jnp.uint32)))


def uniform01(bits):
    """float32 in [0, 1) from the top 24 bits of a random word."""
    return (bits >> 8).astype(jnp.float32) * jnp.float32(1.0 / (1 << 24))


def below(bits, n):
    """Integers uniform in [0, n) (n an int32 array or int), without integer modulo."""
    return jnp.minimum((uniform01(bits) * n).astype(jnp.int32), jnp.asarray(n, jnp.int32) - 1)


# Purposes (one independent stream each).
(RNG_GENERATE, RNG_ALIAS_COLUMN, RNG_ALIAS_COIN, RNG_SERVER, RNG_INJECT, RNG_SELECT, RNG_ALLOCATE,
 RNG_RECOMPUTE, RNG_INJECT_VC) = range(9)


# ---- wide counters --------------------------------------------------------------------
# An exact 60-bit counter as int32 pairs [..., 2] = (high, low), low < 2**30: sums of
# latencies over 10**6 saturated cycles overflow int32, and x64 stays off for speed.

_LOW_BITS = 30


def wide_add(counter, x):
    """Add non-negative int32 values x (< 2**30) to wide counters [..., 2]."""
    low = counter[..., 1] + x
    high = counter[..., 0] + (low >> _LOW_BITS)
    return jnp.stack([high, low & ((1 << _LOW_BITS) - 1)], axis=-1)


def wide_value(counter):
    """Host side: wide counters to int64 numbers."""
    import numpy as np

    c = np.asarray(counter).astype(np.int64)
    return (c[..., 0] << _LOW_BITS) + c[..., 1]
