"""The phases of one router cycle (DESIGN section 3), each a pure function of the state it
reads. `step.cycle_step` calls them in this order:

  release         free the slots whose tail left and whose credit came back
  route           every head that may move asks its scheme for candidates and selects one
                  (`jaxnet.sim.route`)
  allocate        the allocator grants requests (each output (port, VC) one, by default)
  transfer        winners move to their output buffer (crossbar)
  send_on_links   every idle output link starts one packet (downstream credits required)
  inject          servers move queued packets into their injection buffers
  generate        servers generate packets into their source queues

Each phase visits the rings (or servers) it is given as a `rings.Subset` (`jaxnet.sim.work`
decides which); results never depend on it. Shapes: K entries of a subset; F packet
fields. Times are cycles. Phit timing lives in timestamps: a head that reaches a buffer at
cycle READY may move on in that same cycle (virtual cut-through), a link or crossbar stays
busy for the packet's length, and slots free when the tail leaves (`Rings.free_at`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core import rng
from jaxnet.core.gather import take_pair
from jaxnet.routing.base import RoutingScheme
from jaxnet.sim import keys
from jaxnet.sim import workload as workloads
from jaxnet.sim.layout import Model, NetArrays
from jaxnet.sim.policies import ALLOCATORS, FLOW_CONTROLS, INJECTION_POLICIES
from jaxnet.sim.rings import (
    Subset,
    counters,
    head_rows,
    lend,
    pick,
    pop_front,
    pop_heads,
    push,
    put,
    release,
    return_lent,
    ring_ids,
    take_rows,
    where_read,
)
from jaxnet.sim.route import Requests, downstream_ring
from jaxnet.sim.state import Rings, unpack_counters
from jaxnet.traffic.device import Traffic, sample_destinations

# `router.link_order: arrival` orders a port's heads by their age in the output buffer up to
# this many cycles (older ones tie, then go round-robin): the keys stay within int32 for 64 VCs.
LINK_AGES = 2**20


class Kept(NamedTuple):
    """Which visited rings still hold a slot after `release_slots` (bool [K_in], [K_out]),
    which hold a packet waiting to leave (`waiting_in`, `waiting_out`), and which visited
    output rings freed a slot this cycle (`freed_out`)."""

    inputs: jnp.ndarray
    outputs: jnp.ndarray
    waiting_in: jnp.ndarray
    waiting_out: jnp.ndarray
    freed_out: jnp.ndarray


def release_slots(model: Model, inputs: Rings, outputs: Rings, in_rings: Subset, out_rings: Subset, t):
    """(inputs, outputs, Kept): the rings after freeing the visited rings' slots whose
    `free_at` has come, which of them still hold one or a waiting packet, and which outputs
    freed one."""
    inputs, in_kept, waiting_in, _ = release(inputs, in_rings, t, model.layout.input_depth)
    outputs, out_kept, waiting_out, freed_out = release(outputs, out_rings, t, model.layout.router.output_buffer)
    return inputs, outputs, Kept(in_kept, out_kept, waiting_in, waiting_out, freed_out)


def allocate(model: Model, requests: Requests, seed, t):
    """bool [K]: the requests granted by the router's allocator (`router.allocator`:
    `policies.ALLOCATORS`); each input VC has at most one request."""
    layout = model.layout
    per_router = layout.ports_per_router * layout.vcs
    bits = rng.random_bits_at(seed, t, rng.RNG_ALLOCATE, requests.ring)
    return ALLOCATORS[layout.router.allocator].grant(layout, requests.request, requests.ring, requests.out_vc,
                                                     bits, requests.ring % per_router, keys.local_bits(per_router))


def take_port(routing: RoutingScheme, tables, net: NetArrays, router, packets, port):
    """Packets after being sent through network `port` of `router` (-1: to their server):
    hop counters first, then the scheme's own update (which may start a new phase)."""
    hop = port >= 0
    width = net.port_class.shape[1]
    crossed = hop & (take_pair(net.port_class, router, jnp.clip(port, 0, width - 1)) > 0)
    packets = packets.at[:, pk.HOPS].add(hop.astype(jnp.int32))
    packets = packets.at[:, pk.CLASS_HOPS].add(crossed.astype(jnp.int32))
    return routing.on_hop(tables, router, packets, port)


def redrawn_if_stuck(routing: RoutingScheme, requests: Requests):
    """bool [K]: the routed heads a recomputing scheme redraws when they are not granted:
    those still at the head of an injection buffer (no hop taken) with somewhere to go.
    All False for a scheme that does not recompute."""
    if not routing.recomputes:
        return jnp.zeros_like(requests.at_dest)
    return (requests.head[:, pk.HOPS] == 0) & ~requests.at_dest


def transfer(model: Model, inputs: Rings, outputs: Rings, in_busy, out_held, heads: Subset,
             requests: Requests, granted, seed, t):
    """(inputs, outputs, in_busy, out_held, filled bool [K]: granted into an empty output
    ring) after the granted heads crossed the crossbar.

    The input VC and the output VC stay held until the tail has passed
    (`router.transfer_cycles`, and never before the tail has arrived); the input slot's
    credit returns `link_latency` cycles after the tail left (under `router.output_queue:
    reserved`, after it left the output on the link). Schemes that recompute redraw
    the routing fields of heads that stayed stuck at the head of an injection buffer."""
    layout, net, routing = model.layout, model.net, model.routing
    spec = layout.router
    ids, head, ring = heads.ids, requests.head, requests.ring
    tail_out = jnp.maximum(t + spec.transfer_cycles - 1, head[:, pk.READY] + spec.packet_size - 1)
    router = layout.router_of(ring)
    # redrawn before the granted heads leave: `pop_heads` then reads the slots this write
    # produced, so XLA need not copy them to keep that read ahead of the write
    if routing.recomputes:
        stuck = requests.active & ~granted & redrawn_if_stuck(routing, requests)
        redrawn = routing.on_blocked(model.tables, router, head,
                                     rng.random_bits_at(seed, t, rng.RNG_RECOMPUTE, ring))
        inputs = inputs._replace(slots=inputs.slots.at[
            jnp.where(stuck, requests.row, inputs.slots.shape[0])].set(redrawn, mode="drop"))
    reserved = spec.output_queue == "reserved"
    if reserved:  # the credit waits for the link (`send_on_links`)
        inputs = lend(inputs, ids, requests.row, granted)
    else:
        inputs = pop_heads(inputs, ids, requests.row, granted, tail_out + 1 + pick(net.in_latency, ids))
    in_busy = put(in_busy, ids, granted, tail_out + 1)
    hop_port = jnp.where(requests.at_dest, -1, requests.port)
    moved = take_port(routing, model.tables, net, router, head, hop_port).at[:, pk.READY].set(t)
    moved = moved.at[:, pk.ENTERS_RING].set(requests.enters.astype(jnp.int32))
    if reserved:
        moved = moved.at[:, pk.ORIGIN].set(ring)
    outputs, was_empty = push(outputs, requests.out_vc, granted, moved, spec.output_buffer)
    out_held = out_held.at[jnp.where(granted, requests.out_vc, layout.out_vcs)].set(
        tail_out + 1, mode="drop")
    return inputs, outputs, in_busy, out_held, granted & was_empty


class Sent(NamedTuple):
    """What the visited output rings sent on their links this cycle (all [K]: one entry per
    visited output ring, or per output port where every ring is visited).

    records: int32 [K, F] the head each entry started (valid where to_router or to_server).
    to_router, to_server: bool the entry's link started its head towards a router / a server.
    port: int32 output port of each entry; vc: int32 its VC; down: int32 the downstream input
    ring the packet enters (where to_router); down_empty: bool that ring held nothing before.
    """

    records: jnp.ndarray
    to_router: jnp.ndarray
    to_server: jnp.ndarray
    port: jnp.ndarray
    vc: jnp.ndarray
    down: jnp.ndarray
    down_empty: jnp.ndarray


def send_on_links(model: Model, inputs: Rings, outputs: Rings, port_busy, port_rr, out_rings: Subset, t):
    """(inputs, outputs, port_busy, port_rr, Sent): every idle output link starts one packet
    from its visited VCs, round-robin (or the oldest first, `router.link_order: arrival`),
    whose head is in the buffer and whose downstream VC has room for the whole packet. The
    link is busy L cycles; the packet enters the downstream input ring with READY = t + link
    latency. Ejection links deliver to the server (never blocked). Flow control may ask for
    more downstream room. Under `router.output_queue: reserved` the credit of the input slot
    the packet came from starts back now, usable `link_latency` cycles after its tail left.
    Where every ring is visited, `Sent` has one entry per output port (the VC it sends, if
    any), whose record alone is read."""
    layout, net = model.layout, model.net
    spec = layout.router
    v_count, size = layout.vcs, spec.packet_size
    flow_control = FLOW_CONTROLS[spec.flow_control]
    ids = out_rings.ids
    ring = ring_ids(outputs, ids)
    port, vc = ring // v_count, ring % v_count
    row, waiting = head_rows(outputs, ids, spec.output_buffer)
    if ids is None:
        head = None
        head_row = where_read(waiting, row)
        ready, extra = take_pair(outputs.slots, head_row, pk.READY), flow_control.extra_room(outputs.slots, head_row)
    else:
        head = take_rows(outputs.slots, row)
        ready, extra = head[:, pk.READY], flow_control.extra_room(outputs.slots, row, head)
    has_down, down = downstream_ring(model, port, vc)
    credit = ~has_down | (counters(inputs, down)[1] < spec.input_buffer - extra)
    rr = take_rows(port_rr, port)
    order = jnp.where(vc >= rr, vc - rr, vc - rr + v_count)  # round-robin position of the VC
    eligible = out_rings.valid & waiting & (ready <= t) & credit & (take_rows(port_busy, port) <= t)
    if spec.link_order == "arrival":  # the oldest head first: crossed the crossbar earliest
        order = order + v_count * (LINK_AGES - 1 - jnp.minimum(t - ready, LINK_AGES - 1))
    none = v_count * (LINK_AGES if spec.link_order == "arrival" else 1)
    key = jnp.where(eligible, order, none)
    if ids is None:  # every VC of every port: one entry per port, its first VC in the link's order
        first = key.reshape(-1, v_count).min(axis=1)
        send = first < none
        first = first % v_count  # its round-robin position
        vc = jnp.where(first + port_rr >= v_count, first + port_rr - v_count, first + port_rr)
        port = jnp.arange(layout.out_ports, dtype=jnp.int32)
        row = jnp.take_along_axis(row.reshape(-1, v_count), vc[:, None], axis=1)[:, 0]
        ids = port * v_count + vc
        has_down, down = downstream_ring(model, port, vc)
        head = take_rows(outputs.slots, row)
    else:
        first = take_rows(jnp.full(layout.out_ports, none, jnp.int32).at[port].min(key), port)
        send = eligible & (key == first)
    outputs = pop_heads(outputs, ids, row, send, t + size)
    at_port = jnp.where(send, port, layout.out_ports)
    port_busy = port_busy.at[at_port].set(t + size, mode="drop")
    port_rr = port_rr.at[at_port].set(jnp.where(vc + 1 == v_count, 0, vc + 1), mode="drop")
    if spec.output_queue == "reserved":  # the input slot's credit starts back as the tail leaves
        origin = jnp.where(send, head[:, pk.ORIGIN], 0)
        inputs = return_lent(inputs, origin, send, t + size + take_rows(net.in_latency, origin), layout.input_depth)
    to_router = send & has_down
    arriving = head.at[:, pk.READY].set(t + take_rows(net.out_latency, port))
    inputs, down_empty = push(inputs, down, to_router, arriving, layout.input_depth)
    return inputs, outputs, port_busy, port_rr, Sent(head, to_router, send & ~has_down, port, vc, down,
                                                     down_empty)


def choose_injection_vc(model: Model, inputs: Rings, ids, server, q_head, seed, t):
    """Injection buffer (VC of the injection port) for the next packets of the servers
    visited, or V (`ids`: the subset's ids, None for every server; `server`: their ids
    either way), by `router.injection_policy`."""
    layout = model.layout
    spec = layout.router
    v_count = layout.vcs
    if ids is None:  # the injection ports of every server: the last p ports of each
        # router, a slice (taken from the slice's counters, not from every ring's)
        per_port = inputs.counters.reshape(layout.routers, layout.ports_per_router, v_count)
        words = per_port[:, layout.ports:].reshape(layout.servers, v_count)
    else:
        words = take_rows(inputs.counters, take_rows(model.net.inject_vc, ids))
    _, taken, _ = unpack_counters(words)
    room = (taken < spec.injection_depth) & (jnp.arange(v_count) < spec.injection_vcs)
    return INJECTION_POLICIES[spec.injection_policy](room, q_head, spec.injection_vcs, layout.servers, seed, t,
                                                     server)


def generating(model: Model, traffic: Traffic, load, generate_until, seed, t):
    """bool [S]: the servers that generate a packet this cycle, each with probability
    load x rate / L (before `generate_until`)."""
    layout = model.layout
    chance = load * traffic.rate / layout.router.packet_size
    generates = rng.uniform01(rng.random_bits(seed, t, rng.RNG_GENERATE, layout.servers)) < chance
    return generates & (t < generate_until)


class Injected(NamedTuple):
    """What the servers visited did in `inject` (all [N]).

    moved: bool the server moved a packet into its router (its head arrives at t + 1).
    ring: int32 the input ring it entered; ring_was_empty: bool that ring held nothing before.
    queue_heads: int32 [N, Q_FIELDS] the source queues' heads as read.
    """

    moved: jnp.ndarray
    ring: jnp.ndarray
    ring_was_empty: jnp.ndarray
    queue_heads: jnp.ndarray


def inject(model: Model, inputs: Rings, queue: Rings, server_busy, servers: Subset, seed, t):
    """(inputs, queue, server_busy, Injected): an idle server link moves the head of its
    source queue into an injection buffer; the link is then busy L cycles and the head
    reaches the router at t + 1. The scheme fills its routing fields (`at_injection`)."""
    layout, net, routing = model.layout, model.net, model.routing
    spec = layout.router
    v_count, q_depth = layout.vcs, spec.source_queue
    ids, server = servers.ids, ring_ids(queue, servers.ids)  # a source queue per server
    first, taken, _ = counters(queue, ids)
    q_head = take_rows(queue.slots, server * q_depth + first)
    inject_vc = choose_injection_vc(model, inputs, ids, server, q_head, seed, t)
    injected = servers.valid & (pick(server_busy, ids) <= t) & (taken > 0) & (inject_vc < v_count)
    src_router = server // layout.servers_per_router
    new = jnp.zeros((server.shape[0], inputs.slots.shape[1]), jnp.int32)  # finite workloads: and their step
    new = new.at[:, pk.DST].set(q_head[:, pk.Q_DST]).at[:, pk.DST_R].set(q_head[:, pk.Q_DST_R])
    new = new.at[:, pk.CREATED].set(q_head[:, pk.Q_CREATED])
    if q_head.shape[1] > pk.Q_STEP:
        new = new.at[:, pk.STEP].set(q_head[:, pk.Q_STEP])
    new = new.at[:, pk.INJECTED].set(t + 1).at[:, pk.READY].set(t + 1)
    new = new.at[:, pk.SRC].set(src_router).at[:, pk.MID].set(-1)
    new = routing.at_injection(model.tables, src_router, new, rng.random_bits_at(seed, t, rng.RNG_INJECT, server))
    ring = take_pair(net.inject_vc, server, jnp.minimum(inject_vc, v_count - 1))
    inputs, was_empty = push(inputs, ring, injected, new, layout.input_depth)
    queue = pop_front(queue, ids, injected, q_depth)
    server_busy = put(server_busy, ids, injected, t + spec.packet_size)
    return inputs, queue, server_busy, Injected(injected, ring, was_empty, q_head)


def generate(model: Model, traffic: Traffic, generates, queue: Rings, queue_heads, servers: Subset, seed, t,
             workload=None):
    """(queue, enqueued bool [N], missed bool [N]) of the servers visited: a server that
    generates (`generating`) draws the destination from the traffic table, or takes the
    next of its finite `workload`'s program (`jaxnet.sim.workload`); a full source queue
    counts a missed generation. `queue_heads`: what `inject` read of the queues;
    written where nothing is enqueued (writes that are dropped), so that the write depends on
    that read and XLA orders the read first instead of copying the queues every cycle."""
    layout = model.layout
    q_depth = layout.router.source_queue
    ids, server = servers.ids, ring_ids(queue, servers.ids)  # a source queue per server
    generates = servers.valid & pick(generates, ids)
    dst, dst_router = sample_destinations(traffic, layout.servers_per_router, seed, t, server)
    columns = [dst, dst_router, jnp.full_like(dst, t)]
    if workload is not None:
        dst, step = workloads.destinations(traffic.program, workload, server, dst)
        columns = [dst, dst // layout.servers_per_router, jnp.full_like(dst, t), step]
    _, taken, _ = counters(queue, ids)
    fits = taken < q_depth
    enqueued = generates & fits
    entry = jnp.stack(columns, axis=1)
    entry = jnp.where(enqueued[:, None], entry, queue_heads)
    queue, _ = push(queue, server, enqueued, entry, q_depth)
    return queue, enqueued, generates & ~fits


def vc_counts(vc, amount, v_count: int):
    """int32 [V]: `amount` (bool or int [K]) summed per VC `vc` [K]. Zero amounts go to an
    index out of bounds (dropped): a GPU serializes atomic adds to one address, and most of
    the K are zero."""
    return jnp.zeros(v_count, jnp.int32).at[jnp.where(amount != 0, vc, v_count)].add(
        amount.astype(jnp.int32), mode="drop")


def count_waiting(model: Model, waiting, requests: Requests, granted, sent: Sent, injected: Injected):
    """int32 [2, V]: packets waiting in input (row 0) and output (row 1) buffers per VC,
    after the cycle's moves."""
    v_count = model.layout.vcs
    leaving = sent.to_router | sent.to_server
    return waiting + jnp.stack([
        vc_counts(sent.vc, sent.to_router, v_count) + vc_counts(injected.ring % v_count, injected.moved, v_count)
        - vc_counts(requests.ring % v_count, granted, v_count),
        vc_counts(requests.out_vc % v_count, granted, v_count) - vc_counts(sent.vc, leaving, v_count),
    ])
