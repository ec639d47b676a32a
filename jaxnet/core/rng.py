"""Counter-based random numbers: one 32-bit hash (lowbias32) per value. A draw depends only
on (seed, cycle, purpose, index), so a simulation gives the same numbers alone or in any
batch, and a per-candidate draw costs a multiply, not a threefry call."""
from __future__ import annotations

import jax.numpy as jnp

# Purposes (one independent stream each).
(RNG_GENERATE, RNG_ALIAS_COLUMN, RNG_ALIAS_COIN, RNG_SERVER, RNG_INJECT, RNG_SELECT, RNG_ALLOCATE,
 RNG_RECOMPUTE, RNG_INJECT_VC) = range(9)


def _mix(x):
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def random_bits(seed, cycle, purpose: int, n: int):
    """uint32 [n] random words for one purpose in one cycle, for indices 0 .. n - 1."""
    return random_bits_at(seed, cycle, purpose, jnp.arange(n, dtype=jnp.uint32))


def random_bits_at(seed, cycle, purpose: int, index):
    """uint32 random words for one purpose in one cycle at the given indices (any shape):
    the same word for an index whatever else is drawn."""
    base = _mix(seed ^ _mix(cycle.astype(jnp.uint32) * jnp.uint32(64) + jnp.uint32(purpose)))
    return _mix(base + index.astype(jnp.uint32) * jnp.uint32(0x9E3779B9))


def hash_words(a, b):
    """uint32 hash of two int32/uint32 arrays (e.g. a packet's random word and its hop index)."""
    return _mix(a.astype(jnp.uint32) * jnp.uint32(0x9E3779B9) ^ _mix(b.astype(jnp.uint32)))


def uniform01(bits):
    """float32 in [0, 1) from the top 24 bits of a random word."""
    return (bits >> 8).astype(jnp.float32) * jnp.float32(1.0 / (1 << 24))


def below(bits, n):
    """Integers uniform in [0, n) (n an int32 array or int), without integer modulo."""
    return jnp.minimum((uniform01(bits) * n).astype(jnp.int32), jnp.asarray(n, jnp.int32) - 1)
