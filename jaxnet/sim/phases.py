"""The phases of one router cycle (DESIGN section 3), each a pure function of the state it
reads. `step.cycle_step` calls them in order:

  release         free the slots whose tail left and whose credit came back
  route           every input-buffer head asks its scheme for candidates and selects one,
                  seeing each candidate's occupancy and availability (`output_view`)
  allocate        each output (port, VC) grants one random requester
  transfer        winners move to their output buffer (crossbar)
  send_on_links   every idle output link starts one packet (downstream credits required)
  inject          servers move queued packets into their injection buffers
  generate        servers generate packets into their source queues

Work follows the packets: the input-side phases take the list of occupied input rings and
`send_on_links` the list of occupied output rings (`rings.RingList`, or every ring), so a
cycle costs in proportion to the buffers in use, not to routers x ports x VCs.
Shapes: K entries of a ring list (in_vcs or out_vcs for every ring); S servers; F packet
fields; P network ports. Times are cycles. Phit timing lives in timestamps: a head that
reaches a buffer at cycle READY may move on in that same cycle (virtual cut-through), a
link or crossbar stays busy for the packet's length, and slots free when the tail leaves
(`Rings.free_at`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core import rng
from jaxnet.core.gather import take_pair
from jaxnet.routing import vc_policy
from jaxnet.routing.base import NOT_CANDIDATE, RoutingScheme
from jaxnet.sim import keys
from jaxnet.sim.layout import Layout, NetArrays
from jaxnet.sim.rings import (
    DROP,
    RingList,
    counters,
    head_rows,
    pick,
    pop_front,
    pop_heads,
    push,
    put,
    release,
    ring_ids,
    take_rows,
)
from jaxnet.sim.state import Rings, unpack_counters
from jaxnet.traffic.device import Traffic, sample_destinations


class Kept(NamedTuple):
    """Which listed rings still hold a slot after `release_slots` (bool [K_in], [K_out]), and
    which hold a packet waiting to leave (`waiting_in`, `waiting_out`)."""

    inputs: jnp.ndarray
    outputs: jnp.ndarray
    waiting_in: jnp.ndarray
    waiting_out: jnp.ndarray


def release_slots(layout: Layout, inputs: Rings, outputs: Rings, in_list: RingList, out_list: RingList, t):
    """(inputs, outputs, Kept): the rings after freeing the listed rings' slots whose
    `free_at` has come, and which listed rings still hold one or a waiting packet."""
    inputs, in_kept, waiting_in = release(inputs, in_list, t, layout.input_depth)
    outputs, out_kept, waiting_out = release(outputs, out_list, t, layout.router.output_buffer)
    return inputs, outputs, Kept(in_kept, out_kept, waiting_in, waiting_out)


class OutputView(NamedTuple):
    """What a head sees of candidate outputs (port, VC) (arrays of the candidates' shape).

    occupancy: int32 phits in the output buffer plus downstream phits whose credits have not
      returned, phit by phit (DESIGN section 3), clipped below 2**20.
    available: bool it can take a whole packet now (not held by another packet whose tail is
      still crossing, and its output buffer has room).
    room_for_two: bool its output buffer has room for two packets (bubble flow control).
    """

    occupancy: jnp.ndarray
    available: jnp.ndarray
    room_for_two: jnp.ndarray


def output_view(layout: Layout, net: NetArrays, inputs: Rings, outputs: Rings, out_held, port, vc, t):
    """OutputView of the outputs (port, VC): output ports `port` and VCs `vc` (int32 arrays
    that broadcast together; given apart, as the callers know them, so that no candidate
    divides by V).

    Occupancy = L x (packets in the output ring + packets in the downstream input ring - the
    packet streaming on the link, which is in both) - phits of the last granted packet not
    yet across the crossbar (one per cycle, the tail at `out_held` - 1) - credits already
    back of the oldest packet leaving the downstream buffer (its tail's credit is usable at
    its `free_at`, the credit of each phit before it one cycle earlier)."""
    spec = layout.router
    size, v_count = spec.packet_size, layout.vcs
    out_vc = port * v_count + vc
    _, taken, gone = counters(outputs, out_vc)
    held = take_rows(out_held, out_vc)
    down_port = take_rows(net.out_down, port)
    has_down = down_port >= 0
    down = jnp.where(has_down, down_port * v_count + vc, 0)
    first_down, taken_down, gone_down = counters(inputs, down)
    taken_down, gone_down = jnp.where(has_down, taken_down, 0), jnp.where(has_down, gone_down, 0)
    oldest_free = take_rows(inputs.free_at, down * layout.input_depth + first_down)
    credited = jnp.where(gone_down > 0, size - jnp.clip(oldest_free - t, 0, size), 0)
    streaming = jnp.where(has_down, gone, 0)
    occupancy = size * (taken + taken_down - streaming) - jnp.clip(held - t, 0, size) - credited
    return OutputView(
        occupancy=jnp.clip(occupancy, 0, (1 << 20) - 1),
        available=(held <= t) & (taken < spec.output_buffer),
        room_for_two=taken <= spec.output_buffer - 2,
    )


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
    """The request of every listed input ring's head this cycle (all [K]).

    ring: int32 input (port, VC) id; row: int32 slot row of its head; head: int32 [K, F] the
    head's record. active: bool the head may request (waiting, arrived, input VC free).
    at_dest: bool the head is at its destination router (requests its ejection port).
    port: int32 network port chosen (meaningless where at_dest or not requesting).
    out_vc: int32 output (port, VC) id requested; request: bool a request is made.
    no_route: bool an active head in transit that had no candidate at all.
    enters: bool the chosen hop enters a ring (bubble flow control; False otherwise).
    usable: bool [K, P] the head's candidate network ports (fixed while it waits).
    wait_vc: int32 the VC of all its candidates, V where they differ (fixed while it waits).
    blocked: bool an active head in transit with candidates, none of which can take it now:
      under available_first it cannot request until some candidate's `availability` rises.
    """

    ring: jnp.ndarray
    row: jnp.ndarray
    head: jnp.ndarray
    active: jnp.ndarray
    at_dest: jnp.ndarray
    port: jnp.ndarray
    out_vc: jnp.ndarray
    request: jnp.ndarray
    no_route: jnp.ndarray
    enters: jnp.ndarray
    usable: jnp.ndarray
    wait_vc: jnp.ndarray
    blocked: jnp.ndarray


def movable_heads(layout: Layout, inputs: Rings, in_busy, in_list: RingList, t):
    """(slot row of each listed input ring's head, bool [K] the head may move this cycle:
    waiting, arrived (router latency included) and its input VC free)."""
    row, waiting = head_rows(inputs, in_list.ids, layout.input_depth)
    arrived = take_pair(inputs.slots, row, pk.READY) + layout.router.router_latency <= t
    return row, in_list.valid & waiting & arrived & (pick(in_busy, in_list.ids) <= t)


def route(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, inputs: Rings,
          outputs: Rings, out_held, in_busy, in_list: RingList, seed, t) -> Requests:
    """Route computation, request filtering and selection for the listed input rings' heads."""
    spec = layout.router
    v_count, ports, width = layout.vcs, layout.ports, layout.ports_per_router
    ids = in_list.ids
    ring = ring_ids(inputs, ids)
    row, active = movable_heads(layout, inputs, in_busy, in_list, t)
    head = take_rows(inputs.slots, row)
    router = layout.router_of(ring)
    at_dest = head[:, pk.DST_R] == router

    cost, scheme_vc, scale = routing.candidates(tables, router, head, ports)
    vc = vc_policy.candidate_vcs(layout.vc_policy, net.port_class, router, head, scheme_vc)
    candidate = cost < NOT_CANDIDATE
    has_candidate = jnp.any(candidate, axis=1)
    if vc.ndim == 1:  # one VC for all of a head's candidates: no reductions over the ports for it
        head_vc, vc = vc, jnp.broadcast_to(vc[:, None], cost.shape)
        usable = candidate & (head_vc < v_count)[:, None]
        any_usable = has_candidate & (head_vc < v_count)
        wait_vc = jnp.where(any_usable, head_vc, v_count)
    else:
        head_vc, usable = None, candidate & (vc < v_count)
        lowest_vc = jnp.where(usable, vc, v_count).min(axis=1)
        any_usable = lowest_vc < v_count
        wait_vc = jnp.where(lowest_vc == jnp.where(usable, vc, -1).max(axis=1), lowest_vc, v_count)
    cand_port = router[:, None] * width + jnp.arange(ports)
    view = output_view(layout, net, inputs, outputs, out_held, cand_port, jnp.minimum(vc, v_count - 1), t)
    occupancy = view.occupancy if scale is None else view.occupancy * scale
    available = view.available
    enters = jnp.zeros(cost.shape, bool)
    if spec.flow_control == "bubble":  # a head entering a ring needs room for two packets
        enters = pick(net.in_ring, ids)[:, None] != net.port_ring[router]
        available &= ~enters | view.room_for_two
    bits = rng.random_bits_at(seed, t, rng.RNG_SELECT, ring)
    best = select_output(spec.selection, cost, occupancy, usable, available, bits)
    best_port = keys.choice_index(best)
    best_vc = head_vc if head_vc is not None else jnp.take_along_axis(vc, best_port[:, None], axis=1)[:, 0]

    # at the destination: the lowest-index free VC of the server's ejection port
    eject_port = router * width + ports + head[:, pk.DST] - head[:, pk.DST_R] * layout.servers_per_router
    vc_ids = jnp.arange(v_count)
    eject_free = output_view(layout, net, inputs, outputs, out_held, eject_port[:, None], vc_ids, t).available
    eject_vc = jnp.where(eject_free, vc_ids, v_count).min(axis=1)
    return Requests(
        ring=ring, row=row, head=head, active=active, at_dest=at_dest, port=best_port,
        out_vc=jnp.where(at_dest, eject_port * v_count + eject_vc,
                         (router * width + best_port) * v_count + best_vc),
        request=active & jnp.where(at_dest, eject_vc < v_count, best != keys.NONE),
        no_route=active & ~at_dest & ~has_candidate,
        enters=~at_dest & jnp.take_along_axis(enters, best_port[:, None], axis=1)[:, 0],
        usable=usable,
        wait_vc=wait_vc,
        blocked=active & ~at_dest & any_usable & ~jnp.any(usable & available, axis=1),
    )


def availability(layout: Layout, outputs: Rings, out_held, out_list: RingList, t):
    """int32 [K] what each listed output (port, VC) can take now: 0 nothing, 1 a packet
    (`OutputView.available`), 2 a packet and room for another (`room_for_two` too). A head
    that no candidate can take stays so until one of its candidates' values rises. Only the
    occupied outputs (the list) can rise: an empty one is never held and always at its
    highest value, min(2, output buffer)."""
    _, taken, _ = counters(outputs, out_list.ids)
    room = jnp.clip(layout.router.output_buffer - taken, 0, 2)
    return jnp.where(pick(out_held, out_list.ids) <= t, room, 0)


def port_mask(ports):
    """uint32 [..., W] bit p % 32 of word p // 32 set where ports (bool [..., P]) holds. Each
    word sums its own ports' bits (padding the ports to whole words made XLA:CPU's
    reduction 7x slower)."""
    n = ports.shape[-1]
    words = [ports[..., first:first + 32] for first in range(0, n, 32)]
    return jnp.stack([jnp.sum(word.astype(jnp.uint32) << jnp.arange(word.shape[-1], dtype=jnp.uint32), axis=-1,
                              dtype=jnp.uint32) for word in words], axis=-1)


def rose_ports(layout: Layout, out_list: RingList, rose):
    """uint32 [R, V + 1, W]: per router and VC, the `port_mask` of network ports where a
    listed output's `availability` rose (`rose` bool [K]); row V: where some VC's did (one
    bit per port, from its lowest VC that rose). Built by one scatter-add of the K listed
    outputs' bits (distinct bits, so adding never carries), not by a computed mask that
    XLA:CPU would fuse into, and redo for, each head's lookup."""
    r_count, v_count, ports = layout.routers, layout.vcs, layout.ports
    words = -(-ports // 32)
    ids = jnp.arange(layout.out_vcs, dtype=jnp.int32) if out_list.ids is None else out_list.ids
    router, rest = layout.router_of(ids), ids % (layout.ports_per_router * v_count)
    port, vc = rest // v_count, rest % v_count
    rose = rose & out_list.valid & (port < ports)
    # outputs that did not rise go out of bounds (dropped), not onto one spare slot: a GPU
    # serializes atomic updates of one address
    network_port = jnp.where(rose, router * ports + port, r_count * ports)
    lowest_vc = jnp.full(r_count * ports, v_count, jnp.int32).at[network_port].min(vc, **DROP)
    lead = rose & (take_rows(lowest_vc, jnp.minimum(network_port, r_count * ports - 1)) == vc)
    bit = jnp.uint32(1) << (port % 32).astype(jnp.uint32)
    slots = r_count * (v_count + 1) * words
    word = (router * (v_count + 1) + vc) * words + port // 32
    index = jnp.concatenate([jnp.where(rose, word, slots), jnp.where(lead, word + (v_count - vc) * words, slots)])
    return jnp.zeros(slots, jnp.uint32).at[index].add(jnp.concatenate([bit, bit]), **DROP).reshape(
        r_count, v_count + 1, words)


def allocate(layout: Layout, net: NetArrays, requests: Requests, seed, t):
    """bool [K]: the requests granted. Each output (port, VC) grants one random requester
    (the highest random bid); each input VC has at most one request."""
    per_router = layout.ports_per_router * layout.vcs
    local = requests.ring % per_router
    bits = rng.random_bits_at(seed, t, rng.RNG_ALLOCATE, requests.ring)
    bid = keys.pack_bid(bits, local, keys.local_bits(per_router))
    winner = jnp.full(layout.out_vcs, -1, jnp.int32).at[
        jnp.where(requests.request, requests.out_vc, layout.out_vcs)].max(bid, mode="drop")
    return requests.request & (take_rows(winner, requests.out_vc) == bid)


def take_port(routing: RoutingScheme, tables, net: NetArrays, router, packets, port):
    """Packets after being sent through network `port` of `router` (-1: to their server):
    hop counters first, then the scheme's own update (which may start a new phase)."""
    hop = port >= 0
    width = net.port_class.shape[1]
    crossed = hop & (take_pair(net.port_class, router, jnp.clip(port, 0, width - 1)) > 0)
    packets = packets.at[:, pk.HOPS].add(hop.astype(jnp.int32))
    packets = packets.at[:, pk.CLASS_HOPS].add(crossed.astype(jnp.int32))
    return routing.on_hop(tables, router, packets, port)


def transfer(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, inputs: Rings,
             outputs: Rings, in_busy, out_held, in_list: RingList, requests: Requests, granted, seed, t):
    """(inputs, outputs, in_busy, out_held, filled bool [K]: granted into an empty output
    ring) after the granted heads crossed the crossbar.

    The input VC and the output VC stay held until the tail has passed
    (`router.transfer_cycles`, and never before the tail has arrived); the input slot's
    credit returns `link_latency` cycles after the tail left. Schemes that recompute redraw
    the routing fields of heads that stayed stuck at the head of an injection buffer."""
    spec = layout.router
    ids, head, ring = in_list.ids, requests.head, requests.ring
    tail_out = jnp.maximum(t + spec.transfer_cycles - 1, head[:, pk.READY] + spec.packet_size - 1)
    inputs = pop_heads(inputs, ids, requests.row, granted, tail_out + 1 + pick(net.in_latency, ids))
    in_busy = put(in_busy, ids, granted, tail_out + 1)
    hop_port = jnp.where(requests.at_dest, -1, requests.port)
    router = layout.router_of(ring)
    moved = take_port(routing, tables, net, router, head, hop_port).at[:, pk.READY].set(t)
    moved = moved.at[:, pk.ENTERS_RING].set(requests.enters.astype(jnp.int32))
    outputs, was_empty = push(outputs, requests.out_vc, granted, moved, spec.output_buffer)
    if routing.recomputes:
        stuck = requests.active & ~granted & (head[:, pk.HOPS] == 0) & ~requests.at_dest
        redrawn = routing.on_blocked(tables, router, head,
                                     rng.random_bits_at(seed, t, rng.RNG_RECOMPUTE, ring))
        inputs = inputs._replace(slots=inputs.slots.at[
            jnp.where(stuck, requests.row, inputs.slots.shape[0])].set(redrawn, mode="drop"))
    out_held = out_held.at[jnp.where(granted, requests.out_vc, layout.out_vcs)].set(
        tail_out + 1, mode="drop")
    return inputs, outputs, in_busy, out_held, granted & was_empty


class Sent(NamedTuple):
    """What the listed output rings sent on their links this cycle (all [K]).

    records: int32 [K, F] each ring's head (valid where to_router or to_server).
    to_router, to_server: bool the ring's link started its head towards a router / a server.
    port: int32 output port of each ring; vc: int32 its VC; down: int32 the downstream input
    ring the packet enters (where to_router); down_empty: bool that ring held nothing before.
    """

    records: jnp.ndarray
    to_router: jnp.ndarray
    to_server: jnp.ndarray
    port: jnp.ndarray
    vc: jnp.ndarray
    down: jnp.ndarray
    down_empty: jnp.ndarray


def send_on_links(layout: Layout, net: NetArrays, inputs: Rings, outputs: Rings, port_busy,
                  port_rr, out_list: RingList, t):
    """(inputs, outputs, port_busy, port_rr, Sent): every idle output link starts one packet
    from its listed VCs, round-robin, whose head is in the buffer and whose downstream VC has
    room for the whole packet. The link is busy L cycles; the packet enters the downstream
    input ring with READY = t + link latency. Ejection links deliver to the server (never
    blocked). Under bubble flow control a packet entering a ring needs room for two."""
    spec = layout.router
    v_count, size = layout.vcs, spec.packet_size
    ids = out_list.ids
    ring = ring_ids(outputs, ids)
    port, vc = ring // v_count, ring % v_count
    row, waiting = head_rows(outputs, ids, spec.output_buffer)
    head = take_rows(outputs.slots, row)
    down_port = take_rows(net.out_down, port)
    down = jnp.where(down_port >= 0, down_port * v_count + vc, 0)
    room = spec.input_buffer - (head[:, pk.ENTERS_RING] if spec.flow_control == "bubble" else 0)
    credit = (down_port < 0) | (counters(inputs, down)[1] < room)
    rr = take_rows(port_rr, port)
    order = jnp.where(vc >= rr, vc - rr, vc - rr + v_count)  # round-robin position of the VC
    eligible = out_list.valid & waiting & (head[:, pk.READY] <= t) & credit & (take_rows(port_busy, port) <= t)
    key = jnp.where(eligible, order, v_count)
    if ids is None:  # every VC of every port: the first in round-robin order per port
        first = jnp.repeat(key.reshape(-1, v_count).min(axis=1), v_count)
    else:
        first = take_rows(jnp.full(layout.out_ports, v_count, jnp.int32).at[port].min(key), port)
    send = eligible & (key == first)
    outputs = pop_heads(outputs, ids, row, send, t + size)
    at_port = jnp.where(send, port, layout.out_ports)
    port_busy = port_busy.at[at_port].set(t + size, mode="drop")
    port_rr = port_rr.at[at_port].set(jnp.where(vc + 1 == v_count, 0, vc + 1), mode="drop")
    to_router = send & (down_port >= 0)
    arriving = head.at[:, pk.READY].set(t + take_rows(net.out_latency, port))
    inputs, down_empty = push(inputs, down, to_router, arriving, layout.input_depth)
    return inputs, outputs, port_busy, port_rr, Sent(head, to_router, send & (down_port < 0), port, vc, down,
                                                     down_empty)


def choose_injection_vc(layout: Layout, net: NetArrays, inputs: Rings, ids, server, q_head, seed, t):
    """Injection buffer (VC of the injection port) for the listed servers' next packets, or V
    (`ids`: the list, None for every server; `server`: their ids either way)."""
    spec = layout.router
    v_count, n_inj = layout.vcs, spec.injection_vcs
    vc_ids = jnp.arange(v_count)
    if ids is None:  # the injection ports of every server: the last p ports of each
        # router, a slice (taken from the slice's counters, not from every ring's)
        per_port = inputs.counters.reshape(layout.routers, layout.ports_per_router, v_count)
        words = per_port[:, layout.ports:].reshape(layout.servers, v_count)
    else:
        words = take_rows(inputs.counters, take_rows(net.inject_vc, ids))
    _, taken, _ = unpack_counters(words)
    room = (taken < spec.injection_depth) & (vc_ids < n_inj)
    if spec.injection_policy == "dest":
        section = (q_head[:, pk.Q_DST] * n_inj) // layout.servers
        return jnp.where(jnp.take_along_axis(room, section[:, None], axis=1)[:, 0], section, v_count)
    if spec.injection_policy == "random":
        bits = rng.random_bits_at(seed, t, rng.RNG_INJECT_VC, server)
        order = keys.pack_choice(0, keys.tie_break(bits, vc_ids), vc_ids)
    else:
        order = vc_ids[None, :]
    best = jnp.where(room, order, keys.NONE).min(axis=1)
    return jnp.where(best == keys.NONE, v_count, keys.choice_index(best))


def generating(layout: Layout, traffic: Traffic, load, generate_until, seed, t):
    """bool [S]: the servers that generate a packet this cycle, each with probability
    load x rate / L (before `generate_until`)."""
    chance = load * traffic.rate / layout.router.packet_size
    generates = rng.uniform01(rng.random_bits(seed, t, rng.RNG_GENERATE, layout.servers)) < chance
    return generates & (t < generate_until)


def active_servers(queue: Rings, server_busy, generates, t):
    """bool [S]: the servers with something to do this cycle: a packet to inject (queued, and
    their link idle) or one to generate. The others' `inject` and `generate` change nothing."""
    return generates | ((queue.taken > 0) & (server_busy <= t))


def inject(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, inputs: Rings,
           queue: Rings, server_busy, servers: RingList, seed, t):
    """(inputs, queue, server_busy, injected bool [N], ring int32 [N], ring_was_empty bool
    [N], queue_heads int32 [N, Q_FIELDS] the source queues' heads as read), N the listed
    servers (`servers`: EVERY_RING for every server): an idle server link moves the head of
    its source queue into an injection buffer (input ring `ring`, which held nothing before
    where ring_was_empty); the link is then busy L cycles and the head reaches the router at
    t + 1. The scheme fills its routing fields (`at_injection`)."""
    spec = layout.router
    v_count, q_depth = layout.vcs, spec.source_queue
    ids, server = servers.ids, ring_ids(queue, servers.ids)  # a source queue per server
    first, taken, _ = counters(queue, ids)
    q_head = take_rows(queue.slots, server * q_depth + first)
    inject_vc = choose_injection_vc(layout, net, inputs, ids, server, q_head, seed, t)
    injected = servers.valid & (pick(server_busy, ids) <= t) & (taken > 0) & (inject_vc < v_count)
    src_router = server // layout.servers_per_router
    new = jnp.zeros((server.shape[0], pk.N_FIELDS), jnp.int32)
    new = new.at[:, pk.DST].set(q_head[:, pk.Q_DST]).at[:, pk.DST_R].set(q_head[:, pk.Q_DST_R])
    new = new.at[:, pk.CREATED].set(q_head[:, pk.Q_CREATED])
    new = new.at[:, pk.INJECTED].set(t + 1).at[:, pk.READY].set(t + 1)
    new = new.at[:, pk.SRC].set(src_router).at[:, pk.MID].set(-1)
    new = routing.at_injection(tables, src_router, new, rng.random_bits_at(seed, t, rng.RNG_INJECT, server))
    ring = take_pair(net.inject_vc, server, jnp.minimum(inject_vc, v_count - 1))
    inputs, was_empty = push(inputs, ring, injected, new, layout.input_depth)
    queue = pop_front(queue, ids, injected, q_depth)
    server_busy = put(server_busy, ids, injected, t + spec.packet_size)
    return inputs, queue, server_busy, injected, ring, was_empty, q_head


def generate(layout: Layout, traffic: Traffic, generates, queue: Rings, queue_heads, servers: RingList, seed, t):
    """(queue, enqueued bool [N], missed bool [N]) of the listed servers: a server that
    generates (`generating`) draws the destination from the traffic table; a full source
    queue counts a missed generation. `queue_heads`: what `inject` read of the queues;
    written where nothing is enqueued (writes that are dropped), so that the write depends on
    that read and XLA orders the read first instead of copying the queues every cycle (it
    made two copies: 2 x 1.2 MB a cycle on RRG 720)."""
    q_depth = layout.router.source_queue
    ids, server = servers.ids, ring_ids(queue, servers.ids)  # a source queue per server
    generates = servers.valid & pick(generates, ids)
    dst, dst_router = sample_destinations(traffic, layout.servers_per_router, seed, t, server)
    _, taken, _ = counters(queue, ids)
    fits = taken < q_depth
    enqueued = generates & fits
    entry = jnp.stack([dst, dst_router, jnp.full_like(dst, t)], axis=1)
    entry = jnp.where(enqueued[:, None], entry, queue_heads)
    queue, _ = push(queue, server, enqueued, entry, q_depth)
    return queue, enqueued, generates & ~fits


def vc_counts(vc, amount, v_count: int):
    """int32 [V]: `amount` (bool or int [K]) summed per VC `vc` [K]. Zero amounts go to an
    index out of bounds (dropped): a GPU serializes atomic adds to one address, and most of
    the K are zero."""
    return jnp.zeros(v_count, jnp.int32).at[jnp.where(amount != 0, vc, v_count)].add(
        amount.astype(jnp.int32), mode="drop")
