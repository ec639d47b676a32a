"""Simulation state: frozen pytrees of fixed-shape arrays (sizes from `Layout`)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.core.packets import N_FIELDS, N_QUEUE_FIELDS
from jaxnet.sim.layout import Layout
from jaxnet.sim.spec import MAX_DEPTH
from jaxnet.sim.stats import Measurement, Stats, empty_stats
from jaxnet.sim.window import Window, empty_window
from jaxnet.sim.workload import Workload, empty_workload


# A ring's three counters share one int32 word, first | taken << 10 | gone << 20, so that
# the rings a cycle visits are read with one gather and written with one scatter. Each
# counter is at most the ring's depth, which the router spec bounds by MAX_DEPTH packets.
COUNTER_BITS = MAX_DEPTH.bit_length()
TAKEN = 1 << COUNTER_BITS  # one packet more taken, in counter words
GONE = 1 << 2 * COUNTER_BITS  # one packet more gone


def pack_counters(first, taken, gone):
    """int32 counter words of rings (`Rings.counters`)."""
    return first | taken << COUNTER_BITS | gone << 2 * COUNTER_BITS


def unpack_counters(word):
    """(first, taken, gone) of counter words (`Rings.counters`)."""
    return word & MAX_DEPTH, (word >> COUNTER_BITS) & MAX_DEPTH, word >> 2 * COUNTER_BITS


class Rings(NamedTuple):
    """One FIFO ring of packet records per (port, VC), all of the same depth.

    slots: int32 [n * depth, fields] records; ring k owns rows k*depth .. k*depth+depth-1.
    counters: int32 [n] three counters per ring (`pack_counters`):
      first: ring index of the oldest slot still taken.
      taken: slots taken: packets waiting plus packets gone whose slot is not yet free (its
        tail is still leaving, or the credit is still on its way upstream). The upstream
        router sees `depth - taken` credits, so credits can never go negative.
      gone: packets that left but whose slot is not yet free.
    The properties `first`, `taken` and `gone` unpack them for every ring.
    free_at: int32 [n * depth] cycle each gone packet's slot frees (set when it leaves): a
      dense array beside the records, so that the releases and the credit counts, which
      read it for every visited ring each cycle, read 4 bytes per ring instead of a record's
      cache line. None for the source queues, whose slots free at once.
    lent: int32 [n] of the input rings under `router.output_queue: reserved`, the last `lent`
      of a ring's gone slots: those whose packet still waits in an output queue, so that
      their credit has not started back (their `free_at` is `rings.LENT` until it leaves on
      the link). None otherwise.
    head_ready: int32 [n] of large input rings (`HEAD_READY_FROM_SLOTS`), the READY field of
      each ring's first waiting packet (meaningless where none waits), kept beside the records
      so that deciding which heads may move, for every waiting ring each cycle, reads 4 bytes
      of a small array instead of a record from the large slots array. None otherwise.
    """

    slots: jnp.ndarray
    counters: jnp.ndarray
    free_at: jnp.ndarray | None = None
    lent: jnp.ndarray | None = None
    head_ready: jnp.ndarray | None = None

    @property
    def first(self):
        return unpack_counters(self.counters)[0]

    @property
    def taken(self):
        return unpack_counters(self.counters)[1]

    @property
    def gone(self):
        return unpack_counters(self.counters)[2]


class Watchdog(NamedTuple):
    """Deadlock detection: packets inside and nothing moving for `sim.watchdog` cycles.

    last_move: int32 [] last cycle a packet moved inside the network.
    deadlock_at: int32 [] first cycle the watchdog fired, -1 if never.
    """

    last_move: jnp.ndarray
    deadlock_at: jnp.ndarray


class SimState(NamedTuple):
    """Everything that changes from one cycle to the next, for one simulation.

    cycle: int32 [] current cycle.
    seed: uint32 [] random seed word (from the PRNG key of the simulation seed).
    inputs: Rings over input (port, VC)s, depth `Layout.input_depth` (the larger of the
      transit and injection buffers; each kind holds at most its own size).
    outputs: Rings over output (port, VC)s, depth router.output_buffer.
    queue: Rings over servers (source queues), depth router.source_queue.
    in_busy: int32 [in_vcs] cycle from which an input VC may start another transfer.
    out_held: int32 [out_vcs] cycle from which an output VC accepts another packet.
    port_busy: int32 [out_ports] cycle from which an output link is idle.
    port_rr: int32 [out_ports] round-robin VC pointer of each output link.
    server_busy: int32 [S] cycle from which a server's link to its router is idle.
    waiting: int32 [2, V] packets waiting in input (row 0) and output (row 1) buffers, per VC
      (the packets inside routers are its sum).
    watchdog: Watchdog.
    stats: Stats.
    window: Window: where the measurement window is.
    workload: `jaxnet.sim.workload.Workload` of a finite workload, None for open-loop traffic.
    Records (and queue entries) of finite workloads carry one more field, their step.
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
    waiting: jnp.ndarray
    watchdog: Watchdog
    stats: Stats
    window: Window
    workload: Workload | None = None


# Input rings keep their heads' READY beside the records (`Rings.head_ready`) where they hold
# at least this many slots per simulation: there the slot array outgrows a CPU's caches and
# reading a record for every waiting ring costs more than keeping the copy; the RRG 720 of the
# Polarized paper lies below it (keeping it changed nothing measurable there) and small
# networks far below (it cost more than it saved): benchmarks/README.md, "Heads' READY".
HEAD_READY_FROM_SLOTS = 1 << 20


def state_bytes(tree) -> int:
    """Bytes of every array of a pytree of states (or of their shapes, `jax.eval_shape`)."""
    return sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(tree))


def _rings(n: int, depth: int, fields: int, freed_later: bool = True, lent: bool = False,
           heads_ready: bool = False) -> Rings:
    per_ring = lambda kept: jnp.zeros(n, jnp.int32) if kept else None  # noqa: E731
    return Rings(jnp.zeros((n * depth, fields), jnp.int32), jnp.zeros(n, jnp.int32),
                 jnp.zeros(n * depth, jnp.int32) if freed_later else None, per_ring(lent), per_ring(heads_ready))


def init_state(layout: Layout, key: jax.Array, measurement: Measurement = Measurement()) -> SimState:
    """Empty network at cycle 0; `key` seeds all random draws of this simulation;
    `measurement` what it counts beyond the usual statistics."""
    spec = layout.router
    s = layout.servers
    zeros = lambda n: jnp.zeros(n, jnp.int32)  # noqa: E731
    finite = int(measurement.steps > 0)  # a finite workload: records carry their step
    reserved = spec.output_queue == "reserved"  # records carry their input ring last (ORIGIN)
    fields = N_FIELDS + finite + reserved
    return SimState(
        cycle=jnp.int32(0),
        seed=jax.random.bits(key, (), jnp.uint32),
        inputs=_rings(layout.in_vcs, layout.input_depth, fields, lent=reserved,
                      heads_ready=layout.in_vcs * layout.input_depth >= HEAD_READY_FROM_SLOTS),
        outputs=_rings(layout.out_vcs, spec.output_buffer, fields),
        queue=_rings(s, spec.source_queue, N_QUEUE_FIELDS + finite, freed_later=False),
        in_busy=zeros(layout.in_vcs),
        out_held=zeros(layout.out_vcs),
        port_busy=zeros(layout.out_ports),
        port_rr=zeros(layout.out_ports),
        server_busy=zeros(s),
        waiting=jnp.zeros((2, layout.vcs), jnp.int32),
        watchdog=Watchdog(jnp.int32(0), jnp.int32(-1)),
        stats=empty_stats(s, layout.out_ports, layout.vcs, layout.max_hops, measurement),
        window=empty_window(),
        workload=empty_workload(s, measurement.steps) if finite else None,
    )
