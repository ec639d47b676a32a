"""Packed integer keys: several small numbers in one int32 so that one `min` or `max`
picks a winner with its tie-break and its index. One bit-width constant each.

  choice  (total << (TIE_BITS + INDEX_BITS)) | (tie << INDEX_BITS) | index
          the lowest total wins, ties broken by the random `tie`, then by `index` (a port
          or a VC, < 2**INDEX_BITS); totals are clipped at COST_CAP.
  bid     (random << local_bits) | local: an allocation request; the highest bid wins, and
          `local` (the requester's index inside its router) identifies it.
"""
from __future__ import annotations

import jax.numpy as jnp

INDEX_BITS = 7  # ports per router and VCs are < 2**7
TIE_BITS = 8
COST_CAP = (1 << (31 - TIE_BITS - INDEX_BITS)) - 2  # keeps every choice below NONE
NONE = jnp.iinfo(jnp.int32).max  # "no choice": larger than every packed choice
_INDEX_MASK = (1 << INDEX_BITS) - 1


def tie_break(bits, index):
    """int32 [N, K] random tie-break in [0, 2**TIE_BITS) of each head (uint32 bits [N]) for
    each index [K]: one random word per head, spread over its candidates by a multiply."""
    spread = jnp.asarray(2 * index + 0x9E37, jnp.uint32)
    return ((bits[:, None] * spread) >> (32 - TIE_BITS)).astype(jnp.int32)


def pack_choice(total, tie, index):
    """The choice key of (total <= COST_CAP, tie, index)."""
    return (total << (TIE_BITS + INDEX_BITS)) | (tie << INDEX_BITS) | index


def choice_index(key):
    """The index (port or VC) a choice key holds."""
    return key & _INDEX_MASK


def local_bits(requesters_per_router: int) -> int:
    """Bits that number the requesters of one router."""
    return max(1, (requesters_per_router - 1).bit_length())


def pack_bid(bits, local, n_local_bits: int):
    """Bid of each requester: random high bits (uint32 bits), its local index low."""
    return ((bits >> (n_local_bits + 1)).astype(jnp.int32) << n_local_bits) | local
