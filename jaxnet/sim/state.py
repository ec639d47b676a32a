"""Simulation state: frozen pytrees of fixed-shape arrays (sizes from `Layout`)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.sim.layout import Layout
from jaxnet.sim.packets import N_FIELDS, N_QUEUE_FIELDS


class Rings(NamedTuple):
    """One FIFO ring of packet records per (port, VC), all of the same depth.

    slots: int32 [n * depth, fields] records; ring k owns rows k*depth .. k*depth+depth-1.
    first: int32 [n] ring index of the oldest slot still taken.
    taken: int32 [n] slots taken: packets waiting plus packets gone whose slot is not yet
      free (its tail is still leaving, or the credit is still on its way upstream). The
      upstream router sees `depth - taken` credits, so credits can never go negative.
    gone: int32 [n] packets that left but whose slot is not yet free.
    """

    slots: jnp.ndarray
    first: jnp.ndarray
    taken: jnp.ndarray
    gone: jnp.ndarray


class Stats(NamedTuple):
    """On-device statistics. Window counters count events inside [warmup, warmup+measure);
    wide counters are int32 pairs [..., 2] (see packets.wide_add).

    generated: int32 [S] packets that entered each source queue (window).
    missed: int32 [S] generations that found the source queue full (window).
    injected: int32 [S] packets each server put into its router (window).
    consumed: int32 [S] packets whose tail each destination server consumed (window).
    message_latency: wide [2] sum of creation -> tail consumed, cycles (window).
    network_latency: wide [2] sum of head enters first router -> tail consumed (window).
    hops: wide [max_hops + 2, 2] histogram of router-to-router hops of consumed packets; the
      last bin counts routes longer than the scheme's max_hops (a bound violation).
    link_packets: int32 [out_ports] packets sent per output port (window; L phits each).
    input_occupancy: wide [V, 2] sum over cycles of packets in input buffers, per VC.
    output_occupancy: wide [V, 2] the same for output buffers.
    no_route: wide [2] head-cycles with no candidate at all (e.g. Polarized corners).
    generated_all: wide [2] packets queued since cycle 0 (conservation checks).
    consumed_all: wide [2] packets sent to their server since cycle 0.
    in_network: int32 [] packets in router buffers now.
    last_move: int32 [] last cycle a packet moved inside the network.
    deadlock_at: int32 [] first cycle the watchdog fired, -1 if never.
    """

    generated: jnp.ndarray
    missed: jnp.ndarray
    injected: jnp.ndarray
    consumed: jnp.ndarray
    message_latency: jnp.ndarray
    network_latency: jnp.ndarray
    hops: jnp.ndarray
    link_packets: jnp.ndarray
    input_occupancy: jnp.ndarray
    output_occupancy: jnp.ndarray
    no_route: jnp.ndarray
    generated_all: jnp.ndarray
    consumed_all: jnp.ndarray
    in_network: jnp.ndarray
    last_move: jnp.ndarray
    deadlock_at: jnp.ndarray


class SimState(NamedTuple):
    """Everything that changes from one cycle to the next, for one simulation.

    cycle: int32 [] current cycle.
    seed: uint32 [] random seed word (from the PRNG key of the simulation seed).
    inputs: Rings over input (port, VC)s, depth router.input_buffer.
    outputs: Rings over output (port, VC)s, depth router.output_buffer.
    queue: Rings over servers (source queues), depth router.source_queue.
    in_busy: int32 [in_vcs] cycle from which an input VC may start another transfer.
    out_held: int32 [out_vcs] cycle from which an output VC accepts another packet.
    port_busy: int32 [out_ports] cycle from which an output link is idle.
    port_rr: int32 [out_ports] round-robin VC pointer of each output link.
    server_busy: int32 [S] cycle from which a server's link to its router is idle.
    stats: Stats.
    """

    cycle: jnp.ndarray
    seed: jnp.ndarray
    inputs: Rings
    outputs: Rings
    queue: Rings
    in_busy: jnp.ndarray
    out_held: jnp.ndarray
    port_busy: jnp.ndarray
    port_rr: jnp.ndarray
    server_busy: jnp.ndarray
    stats: Stats


def _rings(n: int, depth: int, fields: int) -> Rings:
    zeros = jnp.zeros(n, jnp.int32)
    return Rings(jnp.zeros((n * depth, fields), jnp.int32), zeros, zeros, zeros)


def init_state(layout: Layout, key: jax.Array) -> SimState:
    """Empty network at cycle 0; `key` seeds all random draws of this simulation."""
    spec = layout.router
    s, v = layout.servers, layout.vcs
    zeros = lambda n: jnp.zeros(n, jnp.int32)  # noqa: E731
    wide = lambda *shape: jnp.zeros((*shape, 2), jnp.int32)  # noqa: E731
    stats = Stats(
        generated=zeros(s), missed=zeros(s), injected=zeros(s), consumed=zeros(s),
        message_latency=wide(), network_latency=wide(), hops=wide(layout.max_hops + 2),
        link_packets=zeros(layout.out_ports), input_occupancy=wide(v), output_occupancy=wide(v),
        no_route=wide(), generated_all=wide(), consumed_all=wide(),
        in_network=jnp.int32(0), last_move=jnp.int32(0), deadlock_at=jnp.int32(-1),
    )
    return SimState(
        cycle=jnp.int32(0),
        seed=jax.random.bits(key, (), jnp.uint32),
        inputs=_rings(layout.in_vcs, spec.input_buffer, N_FIELDS),
        outputs=_rings(layout.out_vcs, spec.output_buffer, N_FIELDS),
        queue=_rings(s, spec.source_queue, N_QUEUE_FIELDS),
        in_busy=zeros(layout.in_vcs),
        out_held=zeros(layout.out_vcs),
        port_busy=zeros(layout.out_ports),
        port_rr=zeros(layout.out_ports),
        server_busy=zeros(s),
        stats=stats,
    )
