"""The phases of one router cycle (DESIGN section 3), each a pure function of the state it
reads. `step.cycle_step` calls them in order:

  release         free the slots whose tail left and whose credit came back
  output_status   occupancy (phits) and availability of every output (port, VC)
  route           every input-buffer head asks its scheme for candidates and selects one
  allocate        each output (port, VC) grants one random requester
  transfer        winners move to their output buffer (crossbar)
  send_on_links   every idle output link starts one packet (downstream credits required)
  inject          servers move queued packets into their injection buffers
  generate        servers generate packets into their source queues

Shapes: in_vcs = routers x (ports + servers) x VCs input (port, VC)s, likewise out_vcs;
out_ports = routers x (ports + servers); S servers; F packet fields. Times are cycles.
Phit timing lives in the records' timestamps: a head that reaches a buffer at cycle READY
may move on in that same cycle (virtual cut-through), a link or crossbar stays busy for the
packet's length, and slots free when the tail leaves.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core import rng
from jaxnet.routing import vc_policy
from jaxnet.routing.base import NOT_CANDIDATE, RoutingScheme
from jaxnet.sim import keys
from jaxnet.sim.layout import Layout, NetArrays
from jaxnet.sim.rings import (
    head_rows,
    heads,
    pop_front,
    pop_heads,
    push,
    release,
    take_rows,
)
from jaxnet.sim.state import Rings
from jaxnet.traffic.device import Traffic, sample_destinations

# Flags added to an output's occupancy (phits, clipped below 2**20): it cannot take a whole
# packet now; it cannot take two (what a head entering a ring needs, bubble flow control).
UNAVAILABLE = 1 << 20
NO_BUBBLE = 1 << 21


def release_slots(layout: Layout, inputs: Rings, outputs: Rings, t) -> tuple[Rings, Rings]:
    """Input and output rings after freeing the slots whose FREE_AT has come."""
    spec = layout.router
    return release(inputs, t, spec.input_buffer), release(outputs, t, spec.output_buffer)


def downstream_vcs(layout: Layout, net: NetArrays):
    """int32 [out_ports, V] input (port, VC) fed by each network output (port, VC); 0 elsewhere."""
    vc_ids = jnp.arange(layout.vcs)
    return jnp.where(net.out_down[:, None] >= 0, net.out_down[:, None] * layout.vcs + vc_ids, 0)


def output_status(layout: Layout, net: NetArrays, inputs: Rings, outputs: Rings, out_held, t):
    """int32 [out_vcs]: occupancy in phits of every output (port, VC) as adaptive selection
    sees it, plus UNAVAILABLE if it cannot take a whole packet now (held by another packet
    whose tail is still crossing, or its output buffer is full), plus NO_BUBBLE (bubble flow
    control only) if its output buffer has no room for two packets.

    Occupancy (DESIGN section 3) = phits in the output buffer + downstream phits whose
    credits have not come back, phit by phit: every packet in the output ring or in the
    downstream input ring counts L, a packet streaming on the link counts once (it is in
    both rings), minus the phits of the last granted packet not yet across the crossbar
    (one per cycle, the tail at `out_held` - 1) and the credits already back of the oldest
    packet leaving the downstream buffer (its tail's credit is usable at its FREE_AT, the
    credit of each phit before it one cycle earlier)."""
    spec = layout.router
    size = spec.packet_size
    down_vc = downstream_vcs(layout, net)
    has_down = net.out_down[:, None] >= 0
    taken_down = jnp.where(has_down, inputs.taken[down_vc], 0)
    gone_down = jnp.where(has_down, inputs.gone[down_vc], 0)
    oldest_free = take_rows(inputs.slots, down_vc * spec.input_buffer + inputs.first[down_vc])[..., pk.FREE_AT]
    credited = jnp.where(gone_down > 0, size - jnp.clip(oldest_free - t, 0, size), 0)
    streaming = jnp.where(has_down, outputs.gone.reshape(-1, layout.vcs), 0)
    not_crossed = jnp.clip(out_held - t, 0, size)
    occupancy = (size * (outputs.taken + (taken_down - streaming).reshape(-1)) - not_crossed
                 - credited.reshape(-1))
    requestable = (out_held <= t) & (outputs.taken < spec.output_buffer)
    out_cost = jnp.clip(occupancy, 0, UNAVAILABLE - 1) + jnp.where(requestable, 0, UNAVAILABLE)
    if spec.flow_control == "bubble":
        out_cost += jnp.where(outputs.taken <= spec.output_buffer - 2, 0, NO_BUBBLE)
    # materialise once: otherwise XLA recomputes it inside every per-candidate gather
    return jax.lax.optimization_barrier(out_cost)


def select_output(selection: str, cost, occupancy, usable, available, bits):
    """Chosen candidate per head, int32 [H]: a choice key (jaxnet.sim.keys) of
    (cost + occupancy, random tie, port), or keys.NONE when the head must wait.
    cost, occupancy: int32 [H, P] (occupancy in phits); usable, available: bool [H, P];
    bits: uint32 [H] random bits for the tie-break.

    available_first (DESIGN): drop outputs that cannot take the packet, then take the lowest
    total. best_first (Polarized paper, Algorithm 1): keep the candidates of lowest total, then
    drop those that cannot take the packet; random among what is left, or wait if nothing is.
    """
    port_ids = jnp.arange(cost.shape[1])
    total = jnp.minimum(cost + jnp.where(usable, occupancy, 0), keys.COST_CAP)
    if selection == "best_first":
        usable &= total == jnp.where(usable, total, keys.COST_CAP).min(axis=1, keepdims=True)
    usable &= available
    choice = keys.pack_choice(total, keys.tie_break(bits, port_ids), port_ids)
    return jnp.where(usable, choice, keys.NONE).min(axis=1)


class Requests(NamedTuple):
    """The request of every input-buffer head this cycle (all [in_vcs]).

    row: int32 slot row of the head in the input rings; head: int32 [in_vcs, F] its record.
    active: bool the head may request (waiting, arrived, input VC free).
    at_dest: bool the head is at its destination router (requests its ejection port).
    port: int32 network port chosen (meaningless where at_dest or not requesting).
    out_vc: int32 output (port, VC) id requested; request: bool a request is made.
    no_route: bool an active head in transit that had no candidate at all.
    enters: bool the chosen hop enters a ring (bubble flow control; False otherwise).
    """

    row: jnp.ndarray
    head: jnp.ndarray
    active: jnp.ndarray
    at_dest: jnp.ndarray
    port: jnp.ndarray
    out_vc: jnp.ndarray
    request: jnp.ndarray
    no_route: jnp.ndarray
    enters: jnp.ndarray


def route(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, inputs: Rings, in_busy,
          out_cost, seed, t) -> Requests:
    """Route computation, request filtering and selection for every input-buffer head."""
    spec = layout.router
    v_count, ports, width = layout.vcs, layout.ports, layout.ports_per_router
    in_row, head, waiting = heads(inputs, spec.input_buffer)
    router = net.in_router
    active = waiting & (head[:, pk.READY] + spec.router_latency <= t) & (in_busy <= t)
    at_dest = head[:, pk.DST_R] == router

    cost, scheme_vc, scale = routing.candidates(tables, router, head, ports)
    vc = vc_policy.candidate_vcs(layout.vc_policy, net.port_class, router, head, scheme_vc)
    if vc.ndim == 1:  # one VC for every port: read whole rows of the [V, R, width] view
        by_vc = out_cost.reshape(layout.routers, width, v_count).transpose(2, 0, 1)
        by_vc = jax.lax.optimization_barrier(by_vc.reshape(v_count * layout.routers, width))
        cand_out = take_rows(by_vc, jnp.clip(vc, 0, v_count - 1) * layout.routers + router)[:, :ports]
        vc_fits = (vc < v_count)[:, None]
    else:
        cand_out = out_cost[(router[:, None] * width + jnp.arange(ports)) * v_count + jnp.minimum(vc, v_count - 1)]
        vc_fits = vc < v_count
    usable = (cost < NOT_CANDIDATE) & vc_fits
    occupancy = cand_out & (UNAVAILABLE - 1)
    if scale is not None:
        occupancy = occupancy * scale
    available = (cand_out & UNAVAILABLE) == 0
    enters = jnp.zeros(cost.shape, bool)
    if spec.flow_control == "bubble":  # a head entering a ring needs room for two packets
        enters = net.in_ring[:, None] != net.port_ring[router]
        available &= ~enters | ((cand_out & NO_BUBBLE) == 0)
    select_bits = rng.random_bits(seed, t, rng.RNG_SELECT, head.shape[0])
    best = select_output(spec.selection, cost, occupancy, usable, available, select_bits)
    best_port = keys.choice_index(best)
    best_vc = vc if vc.ndim == 1 else jnp.take_along_axis(vc, best_port[:, None], axis=1)[:, 0]
    net_vc = (router * width + best_port) * v_count + best_vc

    vc_ids = jnp.arange(v_count)
    free_vc = jnp.where((out_cost.reshape(-1, v_count) & UNAVAILABLE) == 0, vc_ids, v_count).min(axis=1)
    eject_port = router * width + ports + head[:, pk.DST] - head[:, pk.DST_R] * layout.servers_per_router
    eject_vc = free_vc[eject_port]
    return Requests(
        row=in_row, head=head, active=active, at_dest=at_dest, port=best_port,
        out_vc=jnp.where(at_dest, eject_port * v_count + eject_vc, net_vc),
        request=active & jnp.where(at_dest, eject_vc < v_count, best != keys.NONE),
        no_route=active & ~at_dest & jnp.all(cost >= NOT_CANDIDATE, axis=1),
        enters=~at_dest & jnp.take_along_axis(enters, best_port[:, None], axis=1)[:, 0],
    )


def allocate(layout: Layout, net: NetArrays, requests: Requests, seed, t):
    """bool [in_vcs]: the requests granted. Each output (port, VC) grants one random
    requester (the highest random bid); each input VC has at most one request."""
    n = requests.request.shape[0]
    n_local = keys.local_bits(layout.ports_per_router * layout.vcs)
    local = jnp.arange(n, dtype=jnp.int32) - net.in_router * (layout.ports_per_router * layout.vcs)
    bid = keys.pack_bid(rng.random_bits(seed, t, rng.RNG_ALLOCATE, n), local, n_local)
    winner = jnp.full(layout.out_vcs, -1, jnp.int32).at[
        jnp.where(requests.request, requests.out_vc, layout.out_vcs)].max(bid, mode="drop")
    return requests.request & (winner[requests.out_vc] == bid)


def take_port(routing: RoutingScheme, tables, net: NetArrays, router, packets, port):
    """Packets after being sent through network `port` of `router` (-1: to their server):
    hop counters first, then the scheme's own update (which may start a new phase)."""
    hop = port >= 0
    width = net.port_class.shape[1]
    crossed = hop & (net.port_class[router, jnp.clip(port, 0, width - 1)] > 0)
    packets = packets.at[:, pk.HOPS].add(hop.astype(jnp.int32))
    packets = packets.at[:, pk.CLASS_HOPS].add(crossed.astype(jnp.int32))
    return routing.on_hop(tables, router, packets, port)


def transfer(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, inputs: Rings,
             outputs: Rings, in_busy, out_held, requests: Requests, granted, seed, t):
    """(inputs, outputs, in_busy, out_held) after the granted heads crossed the crossbar.

    The input VC and the output VC stay held until the tail has passed
    (`router.transfer_cycles`, and never before the tail has arrived); the input slot's
    credit returns `link_latency` cycles after the tail left. Schemes that recompute redraw
    the routing fields of heads that stayed stuck at the head of an injection buffer."""
    spec = layout.router
    head = requests.head
    tail_out = jnp.maximum(t + spec.transfer_cycles - 1, head[:, pk.READY] + spec.packet_size - 1)
    inputs = pop_heads(inputs, requests.row, granted, tail_out + 1 + net.in_latency)
    in_busy = jnp.where(granted, tail_out + 1, in_busy)
    hop_port = jnp.where(requests.at_dest, -1, requests.port)
    moved = take_port(routing, tables, net, net.in_router, head, hop_port).at[:, pk.READY].set(t)
    moved = moved.at[:, pk.ENTERS_RING].set(requests.enters.astype(jnp.int32))
    outputs = push(outputs, requests.out_vc, granted, moved, spec.output_buffer)
    if routing.recomputes:
        stuck = requests.active & ~granted & (head[:, pk.HOPS] == 0) & ~requests.at_dest
        redrawn = routing.on_blocked(tables, net.in_router, head,
                                     rng.random_bits(seed, t, rng.RNG_RECOMPUTE, head.shape[0]))
        inputs = inputs._replace(slots=inputs.slots.at[
            jnp.where(stuck, requests.row, inputs.slots.shape[0])].set(redrawn, mode="drop"))
    out_held = out_held.at[jnp.where(granted, requests.out_vc, layout.out_vcs)].set(
        tail_out + 1, mode="drop")
    return inputs, outputs, in_busy, out_held


class Sent(NamedTuple):
    """What the output links started this cycle ([out_ports]).

    records: int32 [out_ports, F] the packet each link started (valid where to_router or
    to_server). to_router, to_server: bool a router link / a server link started a packet.
    """

    records: jnp.ndarray
    to_router: jnp.ndarray
    to_server: jnp.ndarray


def send_on_links(layout: Layout, net: NetArrays, inputs: Rings, outputs: Rings, port_busy,
                  port_rr, t):
    """(inputs, outputs, port_busy, port_rr, Sent): every idle output link starts one packet
    from its VCs, round-robin, whose head is in the buffer and whose downstream VC has room
    for the whole packet. The link is busy L cycles; the packet enters the downstream input
    ring with READY = t + link latency. Ejection links deliver to the server (never blocked).
    Under bubble flow control a packet entering a ring needs downstream room for two."""
    spec = layout.router
    v_count, size = layout.vcs, spec.packet_size
    vc_ids = jnp.arange(v_count)
    down_vc = downstream_vcs(layout, net)
    out_row, out_waiting = head_rows(outputs, spec.output_buffer)  # full records only for sent packets
    room = spec.input_buffer
    if spec.flow_control == "bubble":
        room = room - outputs.slots[out_row, pk.ENTERS_RING].reshape(-1, v_count)
    credit = jnp.where(net.out_down[:, None] >= 0, inputs.taken[down_vc] < room, True)
    eligible = (out_waiting & (outputs.slots[out_row, pk.READY] <= t)).reshape(-1, v_count) & credit
    rr = port_rr[:, None]
    order = jnp.where(vc_ids >= rr, vc_ids - rr, vc_ids - rr + v_count)
    first = jnp.where(eligible, order, v_count).min(axis=1)
    send = (port_busy <= t) & (first < v_count)
    send_vc = jnp.where(first + port_rr >= v_count, first + port_rr - v_count, first + port_rr)
    leaving = (send[:, None] & (vc_ids == send_vc[:, None])).reshape(-1)
    sent = outputs.slots[out_row.reshape(-1, v_count)[jnp.arange(layout.out_ports), send_vc]]
    outputs = pop_heads(outputs, out_row, leaving, t + size)
    port_busy = jnp.where(send, t + size, port_busy)
    port_rr = jnp.where(send, jnp.where(send_vc + 1 == v_count, 0, send_vc + 1), port_rr)
    to_router = send & net.out_network
    arriving = sent.at[:, pk.READY].set(t + net.out_latency)
    inputs = push(inputs, net.out_down * v_count + send_vc, to_router, arriving, spec.input_buffer)
    return inputs, outputs, port_busy, port_rr, Sent(sent, to_router, send & ~net.out_network)


def choose_injection_vc(layout: Layout, net: NetArrays, inputs: Rings, q_head, seed, t):
    """Injection buffer (VC of the injection port) for each server's next packet, or V."""
    spec = layout.router
    v_count, n_inj = layout.vcs, spec.injection_vcs
    vc_ids = jnp.arange(v_count)
    room = (inputs.taken[net.inject_vc] < spec.input_buffer) & (vc_ids < n_inj)
    if spec.injection_policy == "dest":
        section = (q_head[:, pk.Q_DST] * n_inj) // layout.servers
        return jnp.where(room[jnp.arange(layout.servers), section], section, v_count)
    if spec.injection_policy == "random":
        bits = rng.random_bits(seed, t, rng.RNG_INJECT_VC, layout.servers)
        order = keys.pack_choice(0, keys.tie_break(bits, vc_ids), vc_ids)
    else:
        order = vc_ids[None, :]
    best = jnp.where(room, order, keys.NONE).min(axis=1)
    return jnp.where(best == keys.NONE, v_count, keys.choice_index(best))


def inject(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, inputs: Rings,
           queue: Rings, server_busy, seed, t):
    """(inputs, queue, server_busy, injected bool [S]): an idle server link moves the head of
    its source queue into an injection buffer; the link is then busy L cycles and the head
    reaches the router at t + 1. The scheme fills its routing fields (`at_injection`)."""
    spec = layout.router
    v_count, s_count, q_depth = layout.vcs, layout.servers, spec.source_queue
    servers = jnp.arange(s_count)
    q_head = queue.slots[servers * q_depth + queue.first]
    inject_vc = choose_injection_vc(layout, net, inputs, q_head, seed, t)
    injected = (server_busy <= t) & (queue.taken > 0) & (inject_vc < v_count)
    src_router = servers // layout.servers_per_router
    new = jnp.zeros((s_count, pk.N_FIELDS), jnp.int32)
    new = new.at[:, pk.DST].set(q_head[:, pk.Q_DST]).at[:, pk.DST_R].set(q_head[:, pk.Q_DST_R])
    new = new.at[:, pk.CREATED].set(q_head[:, pk.Q_CREATED])
    new = new.at[:, pk.INJECTED].set(t + 1).at[:, pk.READY].set(t + 1)
    new = new.at[:, pk.SRC].set(src_router).at[:, pk.MID].set(-1)
    new = routing.at_injection(tables, src_router, new, rng.random_bits(seed, t, rng.RNG_INJECT, s_count))
    inject_ring = net.inject_vc[servers, jnp.minimum(inject_vc, v_count - 1)]
    inputs = push(inputs, inject_ring, injected, new, spec.input_buffer)
    queue = pop_front(queue, injected, q_depth)
    server_busy = jnp.where(injected, t + spec.packet_size, server_busy)
    return inputs, queue, server_busy, injected


def generate(layout: Layout, traffic: Traffic, load, generate_until, queue: Rings, seed, t):
    """(queue, enqueued bool [S], missed bool [S]): each server generates with probability
    load x rate / L; the destination comes from the traffic table; a full source queue
    counts a missed generation."""
    spec = layout.router
    s_count, q_depth = layout.servers, spec.source_queue
    chance = load * traffic.rate / spec.packet_size
    generates = rng.uniform01(rng.random_bits(seed, t, rng.RNG_GENERATE, s_count)) < chance
    generates &= t < generate_until
    dst, dst_router = sample_destinations(traffic, layout.servers_per_router, seed, t)
    fits = queue.taken < q_depth
    enqueued = generates & fits
    entry = jnp.stack([dst, dst_router, jnp.full_like(dst, t)], axis=1)
    queue = push(queue, jnp.arange(s_count), enqueued, entry, q_depth)
    return queue, enqueued, generates & ~fits
