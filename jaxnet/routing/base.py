"""The routing interface: a scheme proposes candidate output ports, the engine selects.

A scheme is a frozen (hashable) dataclass holding its static options; its tables are a
pytree of arrays built once on the host and passed to the jitted step as traced inputs
(so e.g. path weights can change without recompiling). Per cycle, for the packets at the
heads of input buffers, `candidates` returns for every network port a cost in phit units
(NOT_CANDIDATE if the port may not be taken) and the VC to use there. The engine adds the
occupancy of that output VC (its output buffer plus the credits consumed downstream, in
phits), keeps the lowest total and breaks ties at random. A strict priority is a cost
offset larger than any occupancy. Costs plus occupancy are clipped at 2**16 - 1.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax.numpy as jnp
import numpy as np

from jaxnet.sim import packets as pk
from jaxnet.topology import Topology

NOT_CANDIDATE = 1 << 30


@dataclasses.dataclass(frozen=True)
class RoutingScheme:
    """Base class: hop-index VCs, nothing stored at injection, nothing changed per hop."""

    name: ClassVar[str] = "base"

    def build_tables(self, topo: Topology) -> Any:
        """Host-side tables (a pytree of numpy arrays)."""
        raise NotImplementedError

    def max_hops(self, topo: Topology, tables: Any) -> int:
        """Longest route in router-to-router hops (sizes the hop histogram and VC check)."""
        raise NotImplementedError

    def vcs_needed(self, topo: Topology, tables: Any) -> int:
        """VCs the scheme's VC policy needs; default VC = hops so far."""
        return self.max_hops(topo, tables)

    def at_injection(self, tables, router, packets, bits):
        """Fill per-packet routing fields when a packet enters its first router.

        router: int32 [N]; packets: int32 [N, F]; bits: uint32 [N] fresh random words.
        The default stores the random word in PATH (schemes may use it to draw a path).
        """
        return packets.at[:, pk.PATH].set(bits.astype(jnp.int32))

    def candidates(self, tables, router, packets, ports: int):
        """(cost int32 [N, ports], vc int32 [N] or [N, ports]) for packets not at their router.

        A vc of shape [N] means the same VC on every port (cheaper for the engine)."""
        raise NotImplementedError

    def on_hop(self, tables, router, packets, port):
        """Update routing fields when a packet is sent through network `port` (int32 [N])."""
        return packets

    def hop_vc(self, packets):
        """Default VC policy: VC index = router-to-router hops taken so far (int32 [N])."""
        return packets[:, pk.HOPS]


def minimal_port_words(topo: Topology) -> np.ndarray:
    """uint32 [R, R, W] bit p set iff port p of r leads one hop closer to the destination."""
    dist = topo.distances.astype(np.int16)
    nbr = topo.neighbor
    words = (topo.n_ports + 31) // 32
    out = np.zeros((topo.n_routers, topo.n_routers, words), np.uint32)
    for p in range(topo.n_ports):
        valid = nbr[:, p] >= 0
        closer = dist[np.maximum(nbr[:, p], 0)] == dist - 1  # [R, R]
        closer &= valid[:, None]
        out[:, :, p // 32] |= closer.astype(np.uint32) << np.uint32(p % 32)
    return out


def port_bits(words, ports: int):
    """bool [N, ports] from the bit words [N, W] of `minimal_port_words` rows."""
    p = np.arange(ports)
    chosen = words[:, p // 32]
    return ((chosen >> jnp.asarray(p % 32, jnp.uint32)) & 1).astype(bool)
