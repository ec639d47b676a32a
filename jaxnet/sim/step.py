"""One router cycle of the whole network, as a pure function of the state.

Order inside a cycle (DESIGN section 3): free slots whose tail left / credit returned;
route every input-buffer head; drop candidates whose output VC is held or full; select
by cost + occupancy, then at random; allocate each output (port, VC) to one random
requester; move winners to output buffers; start one packet per idle output link (VCs
round-robin, downstream credits for the whole packet required); servers inject; servers
generate. Packets are records; phit timing is kept in their timestamps: a head that
reaches a buffer at cycle READY may move on in that same cycle (virtual cut-through), a
link or crossbar stays busy for the packet's length, and slots free when the tail leaves.
With link latency 1 an uncontended packet needs L + H cycles from its head entering the
first router to its tail reaching the destination server (docs/engine.md).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.routing.base import NOT_CANDIDATE, RoutingScheme
from jaxnet.sim import packets as pk
from jaxnet.sim.layout import Layout, NetArrays
from jaxnet.sim.rings import head_rows, heads, pop_front, pop_heads, push, release, take_rows
from jaxnet.sim.state import SimState

UNAVAILABLE = 1 << 20  # flag added to an output's occupancy (phits, < 2**20) when not requestable
_NONE = jnp.iinfo(jnp.int32).max
_COST_CAP = (1 << 16) - 2  # keeps every packed key below _NONE


class Traffic(NamedTuple):
    """A `TrafficTable` on device (see jaxnet/traffic/base.py), per simulation."""

    entry_router: jnp.ndarray
    entry_server: jnp.ndarray
    alias_prob: jnp.ndarray
    alias_index: jnp.ndarray
    rate: jnp.ndarray


class Params(NamedTuple):
    """Traced inputs: changing them never recompiles.

    load: float32 [] offered load, phits/cycle/server.
    traffic: Traffic of this simulation.
    warmup, measure: int32 [] the measurement window is [warmup, warmup + measure).
    watchdog: int32 [] cycles without movement (packets inside) that count as deadlock.
    generate_until: int32 [] servers generate only before this cycle (then the network drains).
    """

    load: jnp.ndarray
    traffic: Traffic
    warmup: jnp.ndarray
    measure: jnp.ndarray
    watchdog: jnp.ndarray
    generate_until: jnp.ndarray


def sample_destinations(traffic: Traffic, layout: Layout, seed, cycle):
    """(server, router) int32 [S] destinations drawn from the pattern for every server."""
    s, p = layout.servers, layout.servers_per_router
    k = traffic.alias_prob.shape[1]
    column = pk.below(pk.random_bits(seed, cycle, pk.RNG_ALIAS_COLUMN, s), k)
    rows = jnp.arange(s)
    keep = pk.uniform01(pk.random_bits(seed, cycle, pk.RNG_ALIAS_COIN, s)) < traffic.alias_prob[rows, column]
    entry = jnp.where(keep, column, traffic.alias_index[rows, column])
    router = traffic.entry_router[rows, entry]
    server = traffic.entry_server[rows, entry]
    pick = pk.random_bits(seed, cycle, pk.RNG_SERVER, s)
    own_first = (rows // p) * p
    uniform = pk.below(pick, s - p)
    uniform = jnp.where(uniform >= own_first, uniform + p, uniform)
    at_router = router * p + jnp.where(server >= 0, server, pk.below(pick, p))
    dst = jnp.where(router < 0, uniform, at_router)
    return dst, dst // p


def vc_by_policy(policy: str, net: NetArrays, router, head):
    """VC per candidate port under the router's VC policy."""
    if policy == "dragonfly":  # slots l0 g0 l1 | l2 g1 l3 of two local-global-local phases
        phase = head[:, pk.PHASE, None]
        return jnp.where(net.port_class[router] > 0, phase, 2 * phase + head[:, pk.CLASS_HOPS, None])
    return head[:, pk.HOPS]


def take_port(routing: RoutingScheme, tables, net: NetArrays, router, packets, port):
    """Packets after being sent through network `port` of `router` (-1: to their server):
    hop counters first, then the scheme's own update (which may start a new phase)."""
    hop = port >= 0
    width = net.port_class.shape[1]
    crossed = hop & (net.port_class[router, jnp.clip(port, 0, width - 1)] > 0)
    packets = packets.at[:, pk.HOPS].add(hop.astype(jnp.int32))
    packets = packets.at[:, pk.CLASS_HOPS].add(crossed.astype(jnp.int32))
    return routing.on_hop(tables, router, packets, port)


def choose_injection_vc(spec, net: NetArrays, inputs, q_head, layout: Layout, seed, cycle):
    """Injection buffer (VC of the injection port) for each server's next packet, or V."""
    v_count, n_inj = layout.vcs, spec.injection_vcs
    vc_ids = jnp.arange(v_count)
    room = (inputs.taken[net.inject_vc] < spec.input_buffer) & (vc_ids < n_inj)
    if spec.injection_policy == "dest":
        section = (q_head[:, pk.Q_DST] * n_inj) // layout.servers
        return jnp.where(room[jnp.arange(layout.servers), section], section, v_count)
    order = vc_ids[None, :]
    if spec.injection_policy == "random":
        bits = pk.random_bits(seed, cycle, pk.RNG_INJECT_VC, layout.servers)
        order = ((bits[:, None] * jnp.asarray(2 * vc_ids + 0x9E37, jnp.uint32)) >> 24).astype(jnp.int32)
        order = (order << 7) | vc_ids
    best = jnp.where(room, order, _NONE).min(axis=1)
    return jnp.where(best == _NONE, v_count, best & 0x7F)


def select_output(selection: str, cost, occupancy, usable, available, bits):
    """Chosen candidate per head, int32 [H]: (cost + occupancy) << 15 | tie << 7 | port, or
    _NONE when the head must wait. cost, occupancy: int32 [H, P] (occupancy in phits);
    usable, available: bool [H, P]; bits: uint32 [H] random bits for the tie-break.

    available_first (DESIGN): drop outputs that cannot take the packet, then take the lowest
    total. best_first (Polarized paper, Algorithm 1): keep the candidates of lowest total, then
    drop those that cannot take the packet; random among what is left, or wait if nothing is.
    """
    port_ids = jnp.arange(cost.shape[1])
    total = jnp.minimum(cost + jnp.where(usable, occupancy, 0), _COST_CAP)
    if selection == "best_first":
        usable &= total == jnp.where(usable, total, _COST_CAP).min(axis=1, keepdims=True)
    usable &= available
    tie = ((bits[:, None] * jnp.asarray(2 * port_ids + 0x9E37, jnp.uint32)) >> 24).astype(jnp.int32)
    return jnp.where(usable, (total << 15) | (tie << 7) | port_ids, _NONE).min(axis=1)


def cycle_step(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, params: Params,
               state: SimState) -> SimState:
    """Advance one simulation by one cycle."""
    spec = layout.router
    size, v_count, ports = spec.packet_size, layout.vcs, layout.ports
    width, p_srv = layout.ports_per_router, layout.servers_per_router
    depth_in, depth_out = spec.input_buffer, spec.output_buffer
    t = state.cycle
    stats = state.stats
    in_window = lambda c: (c >= params.warmup) & (c < params.warmup + params.measure)  # noqa: E731
    vc_ids = jnp.arange(v_count)

    inputs = release(state.inputs, t, depth_in)
    outputs = release(state.outputs, t, depth_out)

    # ---- availability and occupancy of every output (port, VC), in phits ----------------
    down_vc = jnp.where(net.out_down[:, None] >= 0, net.out_down[:, None] * v_count + vc_ids, 0)
    downstream = jnp.where(net.out_down[:, None] >= 0, inputs.taken[down_vc], 0).reshape(-1)
    requestable = (state.out_held <= t) & (outputs.taken < depth_out)
    out_cost = size * (outputs.taken + downstream) + jnp.where(requestable, 0, UNAVAILABLE)
    # materialise once: otherwise XLA recomputes it inside every per-candidate gather
    out_cost = jax.lax.optimization_barrier(out_cost)

    # ---- route computation and selection for every input-buffer head ----------------------
    in_row, head, waiting = heads(inputs, depth_in)
    router = net.in_router
    active = waiting & (head[:, pk.READY] + spec.router_latency <= t) & (state.in_busy <= t)
    at_dest = head[:, pk.DST_R] == router

    cost, vc, scale = routing.candidates(tables, router, head, ports)
    if vc is None:
        vc = vc_by_policy(spec.vc_policy, net, router, head)
    if vc.ndim == 1:  # one VC for every port: read whole rows of the [V, R, width] view
        by_vc = out_cost.reshape(layout.routers, width, v_count).transpose(2, 0, 1)
        by_vc = jax.lax.optimization_barrier(by_vc.reshape(v_count * layout.routers, width))
        cand_out = take_rows(by_vc, jnp.clip(vc, 0, v_count - 1) * layout.routers + router)[:, :ports]
    else:
        cand_out = out_cost[(router[:, None] * width + jnp.arange(ports)) * v_count + jnp.minimum(vc, v_count - 1)]
    vc_fits = (vc < v_count)[:, None] if vc.ndim == 1 else vc < v_count
    usable = (cost < NOT_CANDIDATE) & vc_fits
    occupancy = cand_out & (UNAVAILABLE - 1)
    if scale is not None:
        occupancy = occupancy * scale
    select_bits = pk.random_bits(state.seed, t, pk.RNG_SELECT, head.shape[0])
    best = select_output(spec.selection, cost, occupancy, usable, cand_out < UNAVAILABLE, select_bits)
    best_port = best & 0x7F
    best_vc = vc if vc.ndim == 1 else jnp.take_along_axis(vc, best_port[:, None], axis=1)[:, 0]
    net_vc = (router * width + best_port) * v_count + best_vc
    no_route = active & ~at_dest & jnp.all(cost >= NOT_CANDIDATE, axis=1)

    free_vc = jnp.where(out_cost.reshape(-1, v_count) < UNAVAILABLE, vc_ids, v_count).min(axis=1)
    eject_port = router * width + ports + head[:, pk.DST] - head[:, pk.DST_R] * p_srv
    eject_vc = free_vc[eject_port]
    request = active & jnp.where(at_dest, eject_vc < v_count, best != _NONE)
    out_vc = jnp.where(at_dest, eject_port * v_count + eject_vc, net_vc)

    # ---- allocation: each output (port, VC) grants one random requester -------------------
    local_bits = max(1, (width * v_count - 1).bit_length())
    local = jnp.arange(head.shape[0], dtype=jnp.int32) - router * (width * v_count)
    alloc_bits = pk.random_bits(state.seed, t, pk.RNG_ALLOCATE, head.shape[0])
    bid = ((alloc_bits >> (local_bits + 1)).astype(jnp.int32) << local_bits) | local
    winner = jnp.full(layout.out_vcs, -1, jnp.int32).at[
        jnp.where(request, out_vc, layout.out_vcs)].max(bid, mode="drop")
    granted = request & (winner[out_vc] == bid)

    # ---- transfer input -> output buffer -------------------------------------------------
    tail_out = jnp.maximum(t + spec.transfer_cycles - 1, head[:, pk.READY] + size - 1)
    inputs = pop_heads(inputs, in_row, granted, tail_out + 1 + net.in_latency)
    in_busy = jnp.where(granted, tail_out + 1, state.in_busy)
    hop_port = jnp.where(at_dest, -1, best_port)
    moved = take_port(routing, tables, net, router, head, hop_port).at[:, pk.READY].set(t)
    outputs = push(outputs, out_vc, granted, moved, depth_out)
    if routing.recomputes:  # packets stuck at the head of an injection buffer redraw
        stuck = active & ~granted & (head[:, pk.HOPS] == 0) & ~at_dest
        redrawn = routing.on_blocked(tables, router, head,
                                     pk.random_bits(state.seed, t, pk.RNG_RECOMPUTE, head.shape[0]))
        inputs = inputs._replace(slots=inputs.slots.at[
            jnp.where(stuck, in_row, inputs.slots.shape[0])].set(redrawn, mode="drop"))
    out_held = state.out_held.at[jnp.where(granted, out_vc, layout.out_vcs)].set(
        tail_out + 1, mode="drop")

    # ---- link traversal: each idle output link starts one packet --------------------------
    out_row, out_waiting = head_rows(outputs, depth_out)  # full records only for sent packets
    credit = jnp.where(net.out_down[:, None] >= 0, inputs.taken[down_vc] < depth_in, True)
    eligible = (out_waiting & (outputs.slots[out_row, pk.READY] <= t)).reshape(-1, v_count) & credit
    rr = state.port_rr[:, None]
    order = jnp.where(vc_ids >= rr, vc_ids - rr, vc_ids - rr + v_count)
    first = jnp.where(eligible, order, v_count).min(axis=1)
    send = (state.port_busy <= t) & (first < v_count)
    send_vc = jnp.where(first + state.port_rr >= v_count, first + state.port_rr - v_count,
                        first + state.port_rr)
    leaving = (send[:, None] & (vc_ids == send_vc[:, None])).reshape(-1)
    sent = outputs.slots[out_row.reshape(-1, v_count)[jnp.arange(layout.out_ports), send_vc]]
    outputs = pop_heads(outputs, out_row, leaving, t + size)
    port_busy = jnp.where(send, t + size, state.port_busy)
    port_rr = jnp.where(send, jnp.where(send_vc + 1 == v_count, 0, send_vc + 1), state.port_rr)

    to_router = send & net.out_network
    arriving = sent.at[:, pk.READY].set(t + net.out_latency)
    inputs = push(inputs, net.out_down * v_count + send_vc, to_router, arriving, depth_in)

    to_server = send & ~net.out_network
    done = t + size  # tail reaches the server: head after the 1-cycle server link, then L-1 phits
    counted = to_server & in_window(done)
    counted_i = counted.astype(jnp.int32)
    consumed = stats.consumed.at[jnp.where(counted, sent[:, pk.DST], layout.servers)].add(
        1, mode="drop")
    message_latency = pk.wide_add(stats.message_latency,
                                  jnp.sum(counted_i * (done - sent[:, pk.CREATED])))
    network_latency = pk.wide_add(stats.network_latency,
                                  jnp.sum(counted_i * (done - sent[:, pk.INJECTED])))
    hop_bins = jnp.minimum(sent[:, pk.HOPS], layout.max_hops + 1)  # last bin: longer than max
    hops = pk.wide_add(stats.hops, jnp.zeros(layout.max_hops + 2, jnp.int32).at[hop_bins].add(counted_i))
    link_packets = stats.link_packets + (to_router & in_window(t)).astype(jnp.int32)

    # ---- injection: servers move queued packets into their injection buffers --------------
    queue = state.queue
    s_count, q_depth = layout.servers, spec.source_queue
    servers = jnp.arange(s_count)
    q_head = queue.slots[servers * q_depth + queue.first]
    inject_vc = choose_injection_vc(spec, net, inputs, q_head, layout, state.seed, t)
    inject = (state.server_busy <= t) & (queue.taken > 0) & (inject_vc < v_count)
    src_router = servers // p_srv
    new = jnp.zeros((s_count, pk.N_FIELDS), jnp.int32)
    new = new.at[:, pk.DST].set(q_head[:, pk.Q_DST]).at[:, pk.DST_R].set(q_head[:, pk.Q_DST_R])
    new = new.at[:, pk.CREATED].set(q_head[:, pk.Q_CREATED])
    new = new.at[:, pk.INJECTED].set(t + 1).at[:, pk.READY].set(t + 1)
    new = new.at[:, pk.SRC].set(src_router).at[:, pk.MID].set(-1)
    new = routing.at_injection(tables, src_router, new,
                               pk.random_bits(state.seed, t, pk.RNG_INJECT, s_count))
    inject_ring = net.inject_vc[servers, jnp.minimum(inject_vc, v_count - 1)]
    inputs = push(inputs, inject_ring, inject, new, depth_in)
    queue = pop_front(queue, inject, q_depth)
    server_busy = jnp.where(inject, t + size, state.server_busy)
    injected = stats.injected + (inject & in_window(t + 1)).astype(jnp.int32)

    # ---- generation: Bernoulli(load * rate / L) per server --------------------------------
    chance = params.load * params.traffic.rate / size
    generate = pk.uniform01(pk.random_bits(state.seed, t, pk.RNG_GENERATE, s_count)) < chance
    generate &= t < params.generate_until
    dst, dst_router = sample_destinations(params.traffic, layout, state.seed, t)
    fits = queue.taken < q_depth
    enqueue = generate & fits
    entry = jnp.stack([dst, dst_router, jnp.full_like(dst, t)], axis=1)
    queue = push(queue, servers, enqueue, entry, q_depth)
    window_now = in_window(t)
    generated = stats.generated + (enqueue & window_now).astype(jnp.int32)
    missed = stats.missed + (generate & ~fits & window_now).astype(jnp.int32)

    # ---- occupancy, conservation and watchdog ---------------------------------------------
    window_i = window_now.astype(jnp.int32)
    waiting_in = (inputs.taken - inputs.gone).reshape(-1, v_count).sum(axis=0)
    waiting_out = (outputs.taken - outputs.gone).reshape(-1, v_count).sum(axis=0)
    n_inject, n_eject = jnp.sum(inject, dtype=jnp.int32), jnp.sum(to_server, dtype=jnp.int32)
    in_network = stats.in_network + n_inject - n_eject
    moving = jnp.any(granted) | jnp.any(send)
    last_move = jnp.where(moving, t, stats.last_move)
    stuck = (in_network > 0) & (t - last_move > params.watchdog) & (stats.deadlock_at < 0)

    stats = stats._replace(
        generated=generated, missed=missed, injected=injected, consumed=consumed,
        message_latency=message_latency, network_latency=network_latency, hops=hops,
        link_packets=link_packets,
        input_occupancy=pk.wide_add(stats.input_occupancy, waiting_in * window_i),
        output_occupancy=pk.wide_add(stats.output_occupancy, waiting_out * window_i),
        no_route=pk.wide_add(stats.no_route, jnp.sum(no_route, dtype=jnp.int32) * window_i),
        generated_all=pk.wide_add(stats.generated_all, jnp.sum(enqueue, dtype=jnp.int32)),
        consumed_all=pk.wide_add(stats.consumed_all, n_eject),
        in_network=in_network, last_move=last_move,
        deadlock_at=jnp.where(stuck, t, stats.deadlock_at),
    )
    return SimState(
        cycle=t + 1, seed=state.seed, inputs=inputs, outputs=outputs, queue=queue,
        in_busy=in_busy, out_held=out_held, port_busy=port_busy, port_rr=port_rr,
        server_busy=server_busy, stats=stats,
    )


def run_cycles(layout, routing, net, tables, params, state, n_cycles: int):
    """Advance `n_cycles` cycles with lax.scan (one simulation; vmap for a batch)."""

    def body(carry, _):
        return cycle_step(layout, routing, net, tables, params, carry), None

    state, _ = jax.lax.scan(body, state, None, length=n_cycles)
    return state
