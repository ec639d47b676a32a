"""Polarized routing (Camarero, Martinez, Beivide, HOTI 2021, section 3).

With mu(c) = D(c, s) - D(c, t) for source s and target t, a neighbour c' of the current
router c is a candidate when
  C1  dmu > 0, or
  C2  dmu = 0 and D(c', s) > D(c, s) and D(c, s) < D(c, t)  (leave the source when near it), or
  C3  dmu = 0 and D(c', t) < D(c, t) and D(c, s) >= D(c, t) (approach the target when near it).
`strong` keeps C1 only (routes of at most 2D hops). The cost of a candidate is
w[best dmu - dmu] with w = `weights` (default (0, 64, 80), the paper's w2, w1, w0), best over
all candidates; the engine adds the occupancy of its output (output buffer of the VC plus
credits consumed downstream, in phits). The weights are a traced table, so tuning them
(`jaxnet.tune`) never recompiles; adding a constant to all three changes nothing. VC = hop index; routes are at most 4D - 3 hops long. A packet with no candidate (a
corner, possible in meshes or paths) waits and is counted in `no_route_events`.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.gather import take_pair
from jaxnet.core.validate import is_int, require
from jaxnet.routing.base import NOT_CANDIDATE, Candidates, RoutingScheme, narrow_ints

WEIGHTS = (0, 64, 80)
MAX_WEIGHT = 1 << 14  # phits; costs stay far below the engine's clip at 2**16 - 2


class PolarizedTables(NamedTuple):
    """distance: [R, R] hop distances (`narrow_ints`: read per candidate); neighbor: int32
    [R, P] (-1 unused ports); cost: int32 [4] the weights w[0..2], then NOT_CANDIDATE."""

    distance: jnp.ndarray
    neighbor: jnp.ndarray
    cost: jnp.ndarray


def cost_table(weights) -> np.ndarray:
    """int32 [4]: the three weights, then NOT_CANDIDATE (what a non-candidate reads)."""
    return np.asarray((*weights, NOT_CANDIDATE), np.int32)


@dataclasses.dataclass(frozen=True)
class Polarized(RoutingScheme):
    """weights: phits added to candidates 0, 1 and 2 or more steps of mu below the best one.
    Not part of the compiled structure: schemes that differ only in weights share code."""

    name: ClassVar[str] = "polarized"
    # the paper's Algorithm 1: the lowest w + q first, then virtual cut-through (docs/routing.md)
    selection: ClassVar[str] = "best_first"
    strong: bool = False
    weights: tuple = dataclasses.field(default=WEIGHTS, compare=False)

    def __post_init__(self):
        ok = (isinstance(self.weights, (list, tuple)) and len(self.weights) == 3
              and all(is_int(w) and 0 <= w <= MAX_WEIGHT for w in self.weights))
        require(ok, "routing.weights", self.weights, f"three integers in [0, {MAX_WEIGHT}] (phits)")
        object.__setattr__(self, "weights", tuple(int(w) for w in self.weights))

    def build_tables(self, topo):
        return PolarizedTables(narrow_ints(topo.distances), topo.neighbor.astype(np.int32),
                               cost_table(self.weights))

    def max_hops(self, topo, tables):
        diameter = topo.diameter
        return 2 * diameter if self.strong else max(4 * diameter - 3, 2 * diameter)

    def candidates(self, tables, router, packets, ports):
        def distance(a, b):
            return take_pair(tables.distance, a, b).astype(jnp.int32)

        source, target = packets[:, pk.SRC], packets[:, pk.DST_R]
        neighbor = tables.neighbor[router]
        valid = neighbor >= 0
        nxt = jnp.maximum(neighbor, 0)
        from_source = distance(router, source)[:, None]
        to_target = distance(router, target)[:, None]
        d_source = distance(nxt, source[:, None]) - from_source
        d_target = distance(nxt, target[:, None]) - to_target
        d_mu = d_source - d_target
        ok = d_mu > 0
        if not self.strong:
            near_source = from_source < to_target
            ok |= (d_mu == 0) & jnp.where(near_source, d_source > 0, d_target < 0)
        ok &= valid
        best = jnp.max(jnp.where(ok, d_mu, -3), axis=1, keepdims=True)
        # one table read per candidate (a non-candidate reads NOT_CANDIDATE): XLA then keeps
        # the cost in memory instead of redoing the arithmetic above in each of its uses
        rank = jnp.where(ok, jnp.clip(best - d_mu, 0, 2), 3)
        return Candidates(tables.cost[rank])
