"""Omni-dimensional weighted adaptive routing for Hamming graphs (HyperX / flattened
butterfly), in the style of Omni-WAR (McDonald et al., SC 2019).

Rules, applied at every hop to a packet at router c bound for router t (dimension d is
*unaligned* when c_d != t_d):

1. Minimal candidates: for every unaligned dimension d, the port to the router with
   coordinate d set to t_d (the hop aligns d). Cost 0, scale D(c, t) (= the number of
   unaligned dimensions, the hops still to go).
2. Deroute candidates, only while the packet has deroutes left (taken < max_deroutes):
   for every unaligned dimension d, except the dimension of the packet's previous hop if
   that hop was a deroute, the ports to routers with coordinate d set to any value other
   than c_d and t_d (the hop leaves d unaligned). Cost `deroute_penalty` (phits), scale
   D(c, t) + 1 (one hop more to go than minimal).
3. Aligned dimensions are never touched (no hop may unalign an aligned dimension).

The engine then picks the lowest  cost + scale x occupancy  (occupancy of the output VC in
phits), ties at random: a deroute wins only where its queue is shorter by enough to pay
the penalty and its extra hop. Every minimal hop reduces the distance by one and a deroute
keeps it, so a route has exactly D(s, t) minimal hops plus at most `max_deroutes`
deroutes: max_hops = diameter + max_deroutes, and no livelock. Forbidding two deroutes in
a row in one dimension avoids wasted hops inside one clique (a second deroute in the same
dimension can always be replaced by one deroute).

Per-packet state in PHASE: deroutes taken (low 8 bits) and 1 + the dimension of the last
hop if it was a deroute, else 0 (bits 8 and up).

Virtual channels: VC = hops taken so far (`vc_policy: hops`, the only one it honours),
so the channel dependency graph only has edges from VC i to VC i + 1 and is acyclic:
deadlock-free with diameter + max_deroutes VCs.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.validate import is_int, require, require_int
from jaxnet.routing.base import NOT_CANDIDATE, Candidates, RoutingScheme
from jaxnet.topology.base import Topology

_COUNT_BITS = 8


class OmniTables(NamedTuple):
    """coords int32 [R, n]; port_dim int32 [R, P] dimension a port moves in (0 for unused
    ports, masked by port_valid); port_value int32 [R, P] that dimension's coordinate at
    the far end (-1 for unused ports)."""

    coords: np.ndarray
    port_dim: np.ndarray
    port_value: np.ndarray


def hamming_structure(topo: Topology, scheme: str):
    """(port_dim, port_value) of a Hamming graph, or a ValueError naming `topology`."""
    require(topo.coords is not None and topo.sides is not None, "topology", topo.name,
            f"routing={scheme} needs a Hamming graph (a Cartesian topology with coords)")
    coords = np.asarray(topo.coords)
    sides = np.asarray(topo.sides)
    valid = topo.neighbor >= 0
    far = coords[np.maximum(topo.neighbor, 0)]  # [R, P, n]
    differ = far != coords[:, None, :]
    single = differ.sum(axis=2) == 1
    require(bool(np.all(single[valid])) and bool(np.all(topo.degrees == (sides - 1).sum())),
            "topology", topo.name,
            f"routing={scheme} needs a Hamming graph: every router linked to all routers that "
            "differ from it in exactly one coordinate")
    port_dim = np.where(valid, np.argmax(differ, axis=2), 0).astype(np.int32)
    port_value = np.where(valid, np.take_along_axis(far, port_dim[:, :, None], axis=2)[:, :, 0],
                          -1).astype(np.int32)
    return port_dim, port_value


@dataclasses.dataclass(frozen=True)
class OmniWar(RoutingScheme):
    """Omni-dimensional weighted adaptive routing (see the module docstring).

    max_deroutes: deroutes allowed per packet (None: the number of dimensions).
    deroute_penalty: cost in phits added to every deroute candidate.
    """

    name: ClassVar[str] = "omni"
    max_deroutes: int | None = None
    deroute_penalty: int = 16

    def __post_init__(self):
        limit = self.max_deroutes
        require(limit is None or (is_int(limit) and 0 <= limit < 1 << _COUNT_BITS),
                "routing.max_deroutes", self.max_deroutes,
                "null (= the number of dimensions) or an integer in [0, 255]")
        require_int(self.deroute_penalty, "routing.deroute_penalty", 0, 1 << 14)  # phits

    def deroutes(self, topo: Topology) -> int:
        return len(topo.sides) if self.max_deroutes is None else int(self.max_deroutes)

    def build_tables(self, topo):
        port_dim, port_value = hamming_structure(topo, self.name)
        return OmniTables(np.asarray(topo.coords, np.int32), port_dim, port_value)

    def max_hops(self, topo, tables):
        return topo.diameter + self.deroutes(topo)

    def at_injection(self, tables, router, packets, bits):
        return packets.at[:, pk.PATH].set(bits.astype(jnp.int32)).at[:, pk.PHASE].set(0)

    def _limit(self, tables):
        return tables.coords.shape[1] if self.max_deroutes is None else self.max_deroutes

    def candidates(self, tables, router, packets, ports):
        here = tables.coords[router]  # [N, n]
        dest = tables.coords[packets[:, pk.DST_R]]
        dim = tables.port_dim[router][:, :ports]  # [N, P]
        value = tables.port_value[router][:, :ports]
        target = jnp.take_along_axis(dest, dim, axis=1)  # t_d of each port's dimension
        current = jnp.take_along_axis(here, dim, axis=1)
        valid = value >= 0
        unaligned = valid & (target != current)
        minimal = unaligned & (value == target)
        phase = packets[:, pk.PHASE]
        taken = phase & ((1 << _COUNT_BITS) - 1)
        last = (phase >> _COUNT_BITS) - 1  # dimension of the previous deroute, or -1
        deroute = (unaligned & ~minimal & (taken < self._limit(tables))[:, None]
                   & (dim != last[:, None]))
        remaining = jnp.sum(here != dest, axis=1, dtype=jnp.int32)[:, None]
        cost = jnp.where(minimal, 0, jnp.where(deroute, self.deroute_penalty, NOT_CANDIDATE))
        scale = jnp.where(deroute, remaining + 1, remaining)
        return Candidates(cost, scale=scale)

    def on_hop(self, tables, router, packets, port):
        p = jnp.maximum(port, 0)
        dim = tables.port_dim[router, p]
        value = tables.port_value[router, p]
        dest = tables.coords[packets[:, pk.DST_R]]
        target = jnp.take_along_axis(dest, dim[:, None], axis=1)[:, 0]
        derouted = (port >= 0) & (value != target)
        taken = packets[:, pk.PHASE] & ((1 << _COUNT_BITS) - 1)
        phase = jnp.where(derouted, ((dim + 1) << _COUNT_BITS) | (taken + 1), taken)
        return packets.at[:, pk.PHASE].set(jnp.where(port >= 0, phase, packets[:, pk.PHASE]))
