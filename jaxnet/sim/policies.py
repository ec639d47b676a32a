"""The router's named policies (`router.selection`, `router.flow_control`,
`router.injection_policy`, `router.allocator`): one registry each, the engine looks the
configured one up.

Selection orders request filtering and selection:
  available_first  drop the outputs that cannot take the whole packet, then take the lowest
                   total (DESIGN; the reference simulator's usual policy chain);
  best_first       keep the candidates of lowest total among all of them, then drop those
                   that cannot take the packet, and wait if none is left (the Polarized
                   paper's Algorithm 1).
Flow control:
  cut_through      virtual cut-through on every hop: room for one whole packet;
  bubble           tori: a head entering a ring (injection, a change of dimension or
                   direction) needs room for two packets, at the crossbar in the local output
                   buffer and at the link downstream; a head continuing in its ring for one.
Injection policy, which injection buffer (VC of the injection port) a new packet takes:
  lowest           the lowest-index one with room (DESIGN);
  random           a random one with room;
  dest             the one fixed by the destination's section of the servers (Valiant
                   paper, section IV-C), if it has room.
Allocator, which requests the crossbar grants in a cycle (a request's bid is random, its
router-local index in the low bits):
  vc               every input VC requests on its own and each output (port, VC) grants its
                   highest bid (DESIGN): several VCs of one input port, and of one output
                   port, may move in one cycle;
  port             FOGSim's separable allocator (the Restricted Valiant paper's simulator):
                   an input port sends one packet at a time and forwards one request per
                   iteration (its VCs' highest bid), and each output port grants one of those,
                   transit inputs before injection inputs (FOGSim's default PrioLRS output
                   arbiter; its least-recently-served order is random here). With
                   `router.allocator_iterations` > 1 (FOGSim's `ArbiterIterations`) the input
                   and output ports left unmatched try again, with the same bids, among their
                   other requests, as FOGSim's switch does within a cycle.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core import rng
from jaxnet.core.gather import take_pair, take_rows
from jaxnet.core.registry import Registry
from jaxnet.sim import keys


def available_first(total, usable, available):
    """bool [H, P]: the candidates a head may choose among (`total` int32 [H, P]: cost +
    occupancy; `usable`: its candidates; `available`: can take the packet now)."""
    return usable & available


def best_first(total, usable, available):
    """As `available_first`, after keeping only the candidates of lowest total."""
    lowest = total == jnp.where(usable, total, keys.COST_CAP).min(axis=1, keepdims=True)
    return usable & lowest & available


SELECTIONS = Registry("router.selection", {"available_first": available_first, "best_first": best_first})


@dataclasses.dataclass(frozen=True)
class CutThrough:
    """Virtual cut-through: an output VC with room for the whole packet can take it."""

    def enters_ring(self, net, ids, router, shape):
        """bool [shape]: the candidate hops of the heads of input rings `ids` at `router`
        that enter a ring (never, here)."""
        return jnp.zeros(shape, bool)

    def requestable(self, view, enters):
        """bool: which candidate outputs (`route.OutputView`) a head may request."""
        return view.available

    def extra_room(self, slots, row, head=None):
        """Packets of downstream room needed beyond one to start the head in slot `row` [K]
        of `slots` on a link (`head` [K, F]: its record, where already read)."""
        return 0


@dataclasses.dataclass(frozen=True)
class Bubble(CutThrough):
    """Bubble flow control (see the module docstring): needs the ring of every port."""

    def enters_ring(self, net, ids, router, shape):
        in_ring = net.in_ring if ids is None else take_rows(net.in_ring, ids)
        return in_ring[:, None] != net.port_ring[router]

    def requestable(self, view, enters):
        return view.available & (~enters | view.room_for_two)

    def extra_room(self, slots, row, head=None):
        return take_pair(slots, row, pk.ENTERS_RING) if head is None else head[:, pk.ENTERS_RING]


FLOW_CONTROLS = Registry("router.flow_control", {"cut_through": CutThrough(), "bubble": Bubble()})


def lowest_with_room(room, q_head, injection_vcs: int, servers: int, seed, t, server):
    """int32 [N]: the injection VC each listed server's next packet takes, V if none
    (room: bool [N, V] which VCs have room; q_head: int32 [N, Q_FIELDS] the queued packet;
    injection_vcs: VCs servers may use; server: int32 [N] the servers' ids)."""
    return _first(room, jnp.arange(room.shape[1])[None, :])


def random_with_room(room, q_head, injection_vcs: int, servers: int, seed, t, server):
    vc_ids = jnp.arange(room.shape[1])
    bits = rng.random_bits_at(seed, t, rng.RNG_INJECT_VC, server)
    return _first(room, keys.pack_choice(0, keys.tie_break(bits, vc_ids), vc_ids))


def by_destination(room, q_head, injection_vcs: int, servers: int, seed, t, server):
    section = (q_head[:, pk.Q_DST] * injection_vcs) // servers
    return jnp.where(jnp.take_along_axis(room, section[:, None], axis=1)[:, 0], section, room.shape[1])


def _first(room, order):
    """The VC of lowest `order` key among those with room, V if none."""
    best = jnp.where(room, order, keys.NONE).min(axis=1)
    return jnp.where(best == keys.NONE, room.shape[1], keys.choice_index(best))


INJECTION_POLICIES = Registry("router.injection_policy", {
    "lowest": lowest_with_room, "random": random_with_room, "dest": by_destination})


def _highest(bid, group, groups: int, request):
    """bool [K]: the requests (`request`) whose bid is the highest of their group (int32 [K]
    in [0, groups)); bids are distinct within a group."""
    top = jnp.full(groups, -1, jnp.int32).at[jnp.where(request, group, groups)].max(bid, mode="drop")
    return request & (take_rows(top, group) == bid)


def _taken(chosen, group, groups: int):
    """bool [K]: whether any request of the same group (int32 [K] in [0, groups)) is `chosen`."""
    return take_rows(jnp.zeros(groups, bool).at[jnp.where(chosen, group, groups)].set(True, mode="drop"), group)


@dataclasses.dataclass(frozen=True)
class PerVcAllocator:
    """`vc` (see the module docstring)."""

    # True where a VC's transfer holds every VC of its input port (`input_busy_until`).
    holds_input_port: ClassVar[bool] = False
    # True where ports left unmatched can try again (`router.allocator_iterations` > 1).
    iterates: ClassVar[bool] = False

    def input_busy_until(self, layout, in_busy):
        """int32 [in_vcs]: the cycle from which each input (port, VC) may send again."""
        return in_busy

    def grant(self, layout, request, ring, out_vc, bits, local, local_bits: int):
        """bool [K]: which requests (bool [K]; input ring, output (port, VC) and uint32 random
        `bits` of each; `local`: the requester's index inside its router, below
        2**local_bits) are granted."""
        return _highest(keys.pack_bid(bits, local, local_bits), out_vc, layout.out_vcs, request)


@dataclasses.dataclass(frozen=True)
class PerPortAllocator(PerVcAllocator):
    """`port` (see the module docstring)."""

    holds_input_port: ClassVar[bool] = True
    iterates: ClassVar[bool] = True

    def input_busy_until(self, layout, in_busy):
        """Every VC of an input port waits while any of them sends through the crossbar."""
        return jnp.repeat(in_busy.reshape(-1, layout.vcs).max(axis=1), layout.vcs)

    def grant(self, layout, request, ring, out_vc, bits, local, local_bits: int):
        v_count = layout.vcs
        in_port, out_port = ring // v_count, out_vc // v_count
        bid = keys.pack_bid(bits >> 1, local, local_bits)  # bit 30 free for the priority
        transit = (local // v_count) < layout.ports
        priority_bid = (transit.astype(jnp.int32) << 30) | bid
        granted = jnp.zeros_like(request)
        for iteration in range(layout.router.allocator_iterations):
            open_ = request if iteration == 0 else (
                request & ~_taken(granted, in_port, layout.in_ports) & ~_taken(granted, out_port, layout.out_ports))
            forwarded = _highest(bid, in_port, layout.in_ports, open_)
            granted = granted | _highest(priority_bid, out_port, layout.out_ports, forwarded)
        return granted


ALLOCATORS = Registry("router.allocator", {"vc": PerVcAllocator(), "port": PerPortAllocator()})
