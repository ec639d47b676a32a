"""UGAL-L (Universal Globally-Adaptive Load-balanced routing, local information), decided
at the source router, for any topology.

At injection a random intermediate router MID is drawn uniformly over all routers (field
MID) and PHASE is set to 0 (undecided). At the source router the packet's candidates are

  minimal ports  (one step closer to DST):  cost 0,          scale D(c, t)
  Valiant ports  (one step closer to MID):  cost threshold,  scale D(c, mid) + D(mid, t)

so the engine picks the lowest  cost + scale x occupancy  of the output VC (occupancy =
phits in the output buffer plus credits consumed downstream): the classic UGAL comparison
of queue length times hop count, with an optional bias `threshold` (phits) against the
Valiant route. The threshold is a traced table entry: tuning it (`jaxnet.tune`) never
recompiles. Valiant is offered only when MID is neither the source nor the destination
(otherwise the Valiant route is the minimal one). A port that is both minimal and on a
Valiant route is offered as minimal (it always wins there: same occupancy, D(c, t) <=
D(c, mid) + D(mid, t), threshold >= 0).

The first hop fixes the choice (`on_hop`): PHASE 2 (minimal, towards DST) if the port
taken is a minimal one, else PHASE 1 (towards MID); PHASE 1 becomes 2 on the hop that
reaches MID. After the first hop the packet routes hop by hop, adaptively among all
minimal next hops towards its current target (MID in phase 1, DST in phase 2), lowest
output occupancy wins (scale 1, cost 0).

Routes have at most D(s, mid) + D(mid, t) <= 2 x diameter hops. Virtual channels: VC =
hops taken so far (`vc_policy: hops`, the only one it honours), so a packet holding a
channel on VC i only ever waits for channels on VC i + 1: the channel dependency graph is
acyclic and the routing is deadlock-free with 2 x diameter VCs. (Reusing VCs between the
two phases, as some simulators do, makes cycles possible under adversarial Dragonfly
traffic; we do not.)
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.rng import below
from jaxnet.core.validate import require_int
from jaxnet.routing.base import (
    NOT_CANDIDATE,
    Candidates,
    RoutingScheme,
    minimal_port_words,
    port_bits,
)

UNDECIDED, TO_MID, TO_DST = 0, 1, 2


class UgalTables(NamedTuple):
    """closer: uint32 [R, R, W] minimal-port bit words; distance: int32 [R, R];
    neighbor: int32 [R, P] (-1 for unused ports); threshold: int32 [] phits."""

    closer: np.ndarray
    distance: np.ndarray
    neighbor: np.ndarray
    threshold: np.ndarray


@dataclasses.dataclass(frozen=True)
class Ugal(RoutingScheme):
    """UGAL-L at the source router, minimal adaptive afterwards; VC = hop index.

    threshold: cost (phits, >= 0) added to every Valiant candidate at the source; not part of
    the compiled structure (schemes that differ only in it share code).
    """

    name: ClassVar[str] = "ugal"
    explore_draws: ClassVar[int] = 16
    threshold: int = dataclasses.field(default=0, compare=False)

    def __post_init__(self):
        require_int(self.threshold, "routing.threshold", 0, 1 << 14)  # phits of bias against Valiant

    def build_tables(self, topo):
        return UgalTables(minimal_port_words(topo), topo.distances.astype(np.int32),
                          topo.neighbor.astype(np.int32), np.int32(self.threshold))

    def max_hops(self, topo, tables):
        return 2 * topo.diameter

    def at_injection(self, tables, router, packets, bits):
        n_routers = tables.distance.shape[0]
        mid = below(bits, n_routers)
        return (packets.at[:, pk.PATH].set(bits.astype(jnp.int32))
                .at[:, pk.MID].set(mid).at[:, pk.PHASE].set(UNDECIDED))

    def candidates(self, tables, router, packets, ports):
        dst, mid, phase = packets[:, pk.DST_R], packets[:, pk.MID], packets[:, pk.PHASE]
        target = jnp.where(phase == TO_MID, mid, dst)
        ok = port_bits(tables.closer[router, target], ports)
        cost = jnp.where(ok, 0, NOT_CANDIDATE)
        scale = jnp.ones(cost.shape, jnp.int32)

        # at the source: minimal ports vs ports towards MID, by occupancy x hops
        src = phase == UNDECIDED
        valiant_ok = src & (mid != router) & (mid != dst)
        to_mid = port_bits(tables.closer[router, mid], ports) & valiant_ok[:, None] & ~ok
        d_min = tables.distance[router, dst]
        d_val = tables.distance[router, mid] + tables.distance[mid, dst]
        # doubled so that +1 breaks exact ties towards minimal (minimal iff
        # q_min x D_min <= q_val x D_val + threshold, as in UGAL)
        cost = jnp.where(to_mid, 2 * tables.threshold + 1, cost)
        scale = jnp.where(src[:, None], 2 * jnp.where(to_mid, d_val[:, None], d_min[:, None]),
                          scale)
        return Candidates(cost, scale=scale)

    def on_hop(self, tables, router, packets, port):
        dst, mid, phase = packets[:, pk.DST_R], packets[:, pk.MID], packets[:, pk.PHASE]
        moved = port >= 0
        p = jnp.maximum(port, 0)
        words = tables.closer[router, dst]
        minimal = ((words[jnp.arange(p.shape[0]), p // 32] >> (p % 32).astype(jnp.uint32)) & 1) > 0
        phase = jnp.where(phase == UNDECIDED, jnp.where(minimal, TO_DST, TO_MID), phase)
        reaches_mid = tables.neighbor[router, p] == mid
        phase = jnp.where((phase == TO_MID) & reaches_mid, TO_DST, phase)
        return packets.at[:, pk.PHASE].set(jnp.where(moved, phase, packets[:, pk.PHASE]))
