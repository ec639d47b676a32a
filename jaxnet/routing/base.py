"""The routing interface: a scheme proposes candidate output ports, the engine selects.

This docstring is the one place that states the candidate contract.

A scheme is a frozen (hashable) dataclass holding its static options; its tables are a
pytree of arrays built once on the host and passed to the jitted step as traced inputs
(so e.g. path weights can change without recompiling). Every cycle, for the packets at
the heads of input buffers that are not yet at their destination router, `candidates`
returns a `Candidates`:

  cost  int32 [N, P]: per network port, a cost in phit units, NOT_CANDIDATE if the port
        may not be taken. A strict priority is a cost offset larger than any occupancy.
  vc    int32 [N] or [N, P], or None: the VC to request on each port, for schemes whose
        VC policy is their own (`dateline`); None for every other policy, which the
        engine applies (`jaxnet.routing.vc_policy`).
  scale int32 [N, P] or None: multiplier of the occupancy (UGAL-style hop weighting).

The engine adds scale x occupancy of that output VC (its output buffer plus the credits
consumed downstream, in phits) to the cost, and selects by `router.selection`: drop the
outputs that cannot take the whole packet and keep the lowest total (available_first), or
keep the lowest totals and then drop those that cannot take the packet (best_first); ties
at random. Totals are clipped at 2**16 - 2. A head with no candidate at all waits and is
counted (`no_route_events`).

Around `candidates`, a scheme fills its per-packet fields at injection (`at_injection`),
updates them after each hop (`on_hop`; the engine has already counted HOPS and
CLASS_HOPS) and, if `recomputes`, redraws them while the packet is stuck at the head of
an injection buffer (`on_blocked`). `vc_policies` lists the VC policies it honours, its
default first; `max_hops` bounds its routes (the hop histogram and the `hops` policy).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.topology.base import Topology

NOT_CANDIDATE = 1 << 30


class Candidates(NamedTuple):
    cost: jnp.ndarray
    vc: jnp.ndarray | None = None
    scale: jnp.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class RoutingScheme:
    """Base class. Subclasses set `name` and implement build_tables, max_hops, candidates."""

    name: ClassVar[str] = "base"
    # VC policies this scheme honours (jaxnet.routing.vc_policy), its default first.
    vc_policies: ClassVar[tuple[str, ...]] = ("hops",)
    # True if the scheme redraws routing fields of packets blocked at the head of an
    # injection buffer (`on_blocked`); the engine skips that work otherwise.
    recomputes: ClassVar[bool] = False
    # True if `max_hops` is the longest route itself, not only a bound on it.
    exact_max_hops: ClassVar[bool] = False
    # Random draws of the fields set at injection that the route explorer follows per router
    # pair (schemes with random intermediates need more to meet their longest route).
    explore_draws: ClassVar[int] = 1
    # Minimal phases every route consists of (Valiant: 2, to the intermediate and on).
    phases: ClassVar[int] = 1
    # The selection order `router.selection: auto` takes for this scheme (`jaxnet.sim.policies`).
    selection: ClassVar[str] = "available_first"
    # Keys of the routing group that change only values of the tables, never their shapes
    # (path weights): jobs that differ only in them run as one batch, each simulation with
    # its own tables (`jaxnet.cli.sweep.structure_key`).
    table_values: ClassVar[tuple[str, ...]] = ()

    def build_tables(self, topo: Topology) -> Any:
        """Host-side tables (a pytree of numpy arrays)."""
        raise NotImplementedError

    def max_hops(self, topo: Topology, tables: Any) -> int:
        """Longest route in router-to-router hops (sizes the hop histogram and VC check)."""
        raise NotImplementedError

    def most_candidates(self, topo: Topology, tables: Any) -> int:
        """The most candidate ports `candidates` offers a head, from the host `tables`
        (every port by default). Where it is one, the engine looks up only that port's
        output and no occupancy: selection has nothing to compare."""
        return topo.n_ports

    def own_vcs(self, topo: Topology, tables: Any) -> int:
        """VCs the scheme's own `Candidates.vc` take (schemes that choose their VCs)."""
        raise NotImplementedError

    def check_deadlock_free(self, topo: Topology, tables: Any, policy: str) -> None:
        """Refuse (ValueError naming the cycle) routes whose channel dependencies close a
        cycle under the resolved VC `policy`. Nothing to check by default: under `hops` every
        route climbs one VC per hop and `dragonfly` climbs one per phase, so their channel
        dependency graphs are acyclic by construction; schemes that follow routes given as
        data under `dateline` or `ring` check them here."""

    def at_injection(self, tables, router, packets, bits):
        """Fill per-packet routing fields when a packet enters its first router.

        router: int32 [N]; packets: int32 [N, F]; bits: uint32 [N] fresh random words.
        The default stores the random word in PATH (schemes may use it to draw a path).
        """
        return packets.at[:, pk.PATH].set(bits.astype(jnp.int32))

    def delivers(self, tables, router, packets):
        """bool [N]: the packets (int32 [N, F]) at `router` (int32 [N]) that leave the network
        here, for their server's ejection port: those at their destination's router."""
        return packets[:, pk.DST_R] == router

    def candidates(self, tables, router, packets, ports: int) -> Candidates:
        """Candidate ports of packets at `router` (int32 [N]) that it does not deliver."""
        raise NotImplementedError

    def on_hop(self, tables, router, packets, port):
        """Update routing fields when a packet is sent through network `port` (int32 [N];
        -1 when it goes to its server). HOPS and CLASS_HOPS already count this hop; a
        scheme that starts a new phase resets CLASS_HOPS (hops on class >= 1 links in the
        current phase, used by vc_policy=dragonfly)."""
        return packets

    def on_blocked(self, tables, router, packets, bits):
        """Redraw routing fields of packets stuck at the head of an injection buffer."""
        return packets


def narrow_ints(table: np.ndarray) -> np.ndarray:
    """A table of non-negative integers in the narrowest unsigned type that holds them
    (hop distances: uint8 up to 255). Tables gathered once per candidate then take a
    quarter of the cache they would as int32. Cast what is read to int32."""
    top = int(table.max(initial=0))
    dtype = next(t for t in (np.uint8, np.uint16, np.uint32) if top <= np.iinfo(t).max)
    return table.astype(dtype)


def next_hop_words(neighbor: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """uint32 [R, T, W]: bit p set iff port p leads to a router one step closer to target
    t under `distance` [R, T] (hop distances, or any other route-length table)."""
    dist = distance.astype(np.int16)
    n_routers, ports = neighbor.shape
    words = (ports + 31) // 32
    out = np.zeros((n_routers, dist.shape[1], words), np.uint32)
    for p in range(ports):
        valid = neighbor[:, p] >= 0
        closer = dist[np.maximum(neighbor[:, p], 0)] == dist - 1  # [R, T]
        closer &= valid[:, None]
        out[:, :, p // 32] |= closer.astype(np.uint32) << np.uint32(p % 32)
    return out


@functools.lru_cache(maxsize=8)
def minimal_port_words(topo: Topology) -> np.ndarray:
    """uint32 [R, R, W] bit p set iff port p of r is on a shortest path to the target."""
    return next_hop_words(topo.neighbor, topo.distances)


def most_bits(words: np.ndarray) -> int:
    """The most bits set in one row of bit words uint32 [..., W] (`next_hop_words`): the
    most candidate ports such a table offers."""
    bits = np.unpackbits(np.ascontiguousarray(words, np.uint32).view(np.uint8), axis=-1)
    return int(bits.reshape(-1, bits.shape[-1]).sum(axis=1).max(initial=0))


def port_bits(words, ports: int):
    """bool [N, ports] from bit words [N, W] (rows of `next_hop_words`)."""
    p = np.arange(ports)
    chosen = words[:, p // 32]
    return ((chosen >> jnp.asarray(p % 32, jnp.uint32)) & 1).astype(bool)
