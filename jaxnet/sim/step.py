"""One router cycle of the whole network, as a pure function of the state: the phases of
`jaxnet.sim.phases` in DESIGN order, then the statistics and the watchdog. With link
latency 1 an uncontended packet needs L + H cycles from its head entering the first router
to its tail reaching the destination server (docs/engine.md).

Work follows the packets: a cycle lists the occupied input and output rings
(`rings.compact`) and processes only those. Of the input rings' heads it routes only those
that may move: arrived, input VC free, and not asleep. Under available_first selection a
head that none of its candidate outputs could take sleeps until the `availability` of an
output VC on one of its candidate ports rises (exact: nothing else lets it request, and
its candidates depend only on the packet). At saturation that skips most heads. The
check runs on the rings with a packet waiting to leave, listed first from the occupied
ones: most occupied rings hold only slots whose packets have left and whose tails or
credits have not (RRG 720 at load 0.5: 1.2k of 10.6k). Likewise only the output rings
whose link is idle are listed for sending (a link is busy for a packet's length: 0.3k of
3.6k waiting at load 0.5), and only the servers with a packet to inject or to generate
inject and generate (0.4k of 5k). The lists have static capacities (a `tier`); each cycle
reports how many rings it had to list, so a run whose lists overflowed is redone with a
larger tier (`jaxnet.sim.run`), and every ring (tier None) always fits."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.core.gather import take_pair
from jaxnet.routing.base import RoutingScheme
from jaxnet.sim import phases
from jaxnet.sim.layout import Layout, NetArrays
from jaxnet.sim.rings import EVERY_RING, RingList, compact, compact_listed, pick, put, take_rows
from jaxnet.sim.state import SimState, Sleep, Watchdog
from jaxnet.sim.stats import Events, record
from jaxnet.traffic.device import Traffic


class Params(NamedTuple):
    """Traced inputs of one simulation: changing them never recompiles.

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


def watch(watchdog: Watchdog, moved, in_network, limit, t) -> Watchdog:
    """The watchdog after one cycle: fires (once) when packets are inside and nothing has
    moved for more than `limit` cycles."""
    last_move = jnp.where(moved, t, watchdog.last_move)
    stuck = (in_network > 0) & (t - last_move > limit) & (watchdog.deadlock_at < 0)
    return Watchdog(last_move, jnp.where(stuck, t, watchdog.deadlock_at))


class Listed(NamedTuple):
    """The buffers in use, carried from cycle to cycle: in_list the occupied input rings,
    out_list the occupied output rings (`rings.RingList`, EVERY_RING when not listing)."""

    in_list: RingList
    out_list: RingList


def list_in_use(state: SimState, tier):
    """(the occupied rings of a state listed from scratch, int32 [6] their counts as
    `cycle_step` reports them); done once per chunk."""
    if tier is None:
        return Listed(EVERY_RING, EVERY_RING), jnp.zeros(6, jnp.int32)
    in_list, n_in = compact(state.inputs.taken > 0, tier[0])
    out_list, n_out = compact(state.outputs.taken > 0, tier[3])
    return Listed(in_list, out_list), jnp.stack([n_in, 0, 0, n_out, 0, 0])


def sleeps(layout: Layout, routing: RoutingScheme) -> bool:
    """Whether blocked heads sleep (`Sleep`): under available_first selection (under
    best_first a head may wait on a candidate's occupancy) and with a scheme that does not
    redraw stuck heads."""
    return layout.router.selection == "available_first" and not routing.recomputes


def awake_heads(layout: Layout, inputs, in_busy, sleep: Sleep, rose, in_list: RingList, t):
    """bool [K]: the listed input rings whose head may move this cycle (`phases.movable_heads`)
    and is awake or woken (`rose`: `phases.rose_ports` this cycle, None if nobody sleeps)."""
    _, movable = phases.movable_heads(layout, inputs, in_busy, in_list, t)
    if rose is None:
        return movable
    ids = in_list.ids
    wait_vc = take_rows(sleep.wait_vc, ids)
    rose_here = take_pair(rose, layout.router_of(ids), jnp.maximum(wait_vc, 0))
    woken = jnp.any(take_rows(sleep.waits_on, ids) & rose_here, axis=1)
    return movable & (woken | (wait_vc < 0))


def list_waiting(in_list: RingList, waiting, tier):
    """(the listed input rings with a packet waiting, how many): compacted where that list's
    capacity is at most half the occupied rings' (below saturation: RRG 720 at load 0.5,
    1781 of 16952); near saturation most occupied rings hold a waiting packet (at load 1.0,
    47948 of 67809), and compacting them cost more than checking them all (0.88x,
    docs/benchmarks.md), so the occupied list is used with the mask."""
    if 2 * tier[1] <= tier[0]:
        return compact_listed(in_list, waiting, tier[1])
    return RingList(in_list.ids, waiting), jnp.sum(waiting, dtype=jnp.int32)


def cycle_step(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, params: Params,
               state: SimState, listed: Listed, tier: tuple[int, ...] | None = None):
    """(state, buffers in use after one cycle, int32 [6] counts: occupied input rings, input
    rings with a packet waiting, heads routed (`awake_heads`), occupied output rings, output
    rings with a packet to send on an idle link, servers with a packet to inject or to
    generate (`phases.active_servers`); every ring: the waiting ones).
    `tier`: the capacities of those lists (None: every ring every cycle). Results are exact
    while no count exceeds its capacity; the lists are kept up to date from the cycle's
    pushes, so a cycle never scans every ring."""
    t, seed, v_count = state.cycle, state.seed, layout.vcs
    in_list, out_list = listed
    # The lists carry what is still occupied after the release; a ring emptied by it is listed
    # again only if a packet enters it this cycle, so no ring is listed twice.
    inputs, outputs, kept = phases.release_slots(layout, state.inputs, state.outputs, in_list, out_list, t)
    sleep, rose = state.sleep, None
    if tier is not None and sleeps(layout, routing):  # every ring visited: nobody sleeps
        now = phases.availability(layout, outputs, state.out_held, out_list, t)
        before = pick(sleep.availability, out_list.ids)
        rose = phases.rose_ports(layout, out_list, now > before)
    heads = in_list
    if tier is not None:
        waiting_rings, n_waiting = list_waiting(in_list, kept.waiting_in, tier)
        movable = awake_heads(layout, inputs, state.in_busy, sleep, rose, waiting_rings, t)
        heads, n_heads = compact_listed(waiting_rings, movable, tier[2])
    requests = phases.route(layout, routing, net, tables, inputs, outputs, state.out_held,
                            state.in_busy, heads, seed, t)
    granted = phases.allocate(layout, net, requests, seed, t)
    if rose is not None:  # the routed heads that found no output sleep, the others wake
        # (availability written only where it changed: the write then depends on the read,
        # which XLA orders before it instead of copying the array)
        sleep = Sleep(wait_vc=put(sleep.wait_vc, heads.ids, heads.valid,
                                  jnp.where(requests.blocked, requests.wait_vc, -1)),
                      waits_on=put(sleep.waits_on, heads.ids, heads.valid, phases.port_mask(requests.usable)),
                      availability=put(sleep.availability, out_list.ids, out_list.valid & (now != before), now))
    inputs, outputs, in_busy, out_held, filled = phases.transfer(
        layout, routing, net, tables, inputs, outputs, state.in_busy, state.out_held, heads,
        requests, granted, seed, t)
    sending = out_list
    if tier is not None:  # rings with a packet to send: those listed whose link is idle (a busy
        # link sends nothing), and those just filled
        idle = take_rows(state.port_busy, out_list.ids // v_count) <= t
        sending, n_sending = compact_listed(out_list, kept.waiting_out & idle, tier[4])
        filled_ring = jnp.where(filled, requests.out_vc, 0)
        sending = RingList(jnp.concatenate([sending.ids, filled_ring]), jnp.concatenate([sending.valid, filled]))
    inputs, outputs, port_busy, port_rr, sent = phases.send_on_links(
        layout, net, inputs, outputs, state.port_busy, state.port_rr, sending, t)
    generates = phases.generating(layout, params.traffic, params.load, params.generate_until, seed, t)
    active = phases.active_servers(state.queue, state.server_busy, generates, t)
    if tier is None:
        servers, n_servers = EVERY_RING, jnp.sum(active, dtype=jnp.int32)
    else:
        servers, n_servers = compact(active, tier[5])
    inputs, queue, server_busy, injected, inject_ring, inject_empty, queue_heads = phases.inject(
        layout, routing, net, tables, inputs, state.queue, state.server_busy, servers, seed, t)
    queue, enqueued, missed = phases.generate(
        layout, params.traffic, generates, queue, queue_heads, servers, seed, t)

    if tier is None:
        in_waiting = jnp.sum(inputs.taken > inputs.gone, dtype=jnp.int32)
        counts = jnp.stack([jnp.sum(inputs.taken > 0, dtype=jnp.int32), in_waiting, in_waiting,
                            jnp.sum(outputs.taken > 0, dtype=jnp.int32),
                            jnp.sum(outputs.taken > outputs.gone, dtype=jnp.int32), n_servers])
    else:  # next cycle's lists: the rings kept, and those a packet entered empty
        arrived = jnp.where(sent.to_router, sent.down, 0)
        in_list, n_in = compact_listed(
            RingList(jnp.concatenate([in_list.ids, arrived, inject_ring]), None),
            jnp.concatenate([kept.inputs, sent.to_router & sent.down_empty, injected & inject_empty]), tier[0])
        out_list, n_out = compact_listed(
            RingList(jnp.concatenate([out_list.ids, filled_ring]), None), jnp.concatenate([kept.outputs, filled]),
            tier[3])
        counts = jnp.stack([n_in, n_waiting, n_heads, n_out, n_sending, n_servers])

    leaving = sent.to_router | sent.to_server
    waiting = state.waiting + jnp.stack([
        phases.vc_counts(sent.vc, sent.to_router, v_count) + phases.vc_counts(inject_ring % v_count, injected, v_count)
        - phases.vc_counts(requests.ring % v_count, granted, v_count),
        phases.vc_counts(requests.out_vc % v_count, granted, v_count) - phases.vc_counts(sent.vc, leaving, v_count),
    ])
    events = Events(
        no_route=requests.no_route, sent=sent.records, port=sent.port, to_router=sent.to_router,
        to_server=sent.to_server, servers=servers.ids, injected=injected, enqueued=enqueued, missed=missed,
        waiting=waiting)
    stats = record(state.stats, events, t, layout.router.packet_size, layout.max_hops,
                   params.warmup, params.measure)
    watchdog = watch(state.watchdog, jnp.any(granted) | jnp.any(leaving), jnp.sum(waiting),
                     params.watchdog, t)
    state = SimState(
        cycle=t + 1, seed=seed, inputs=inputs, outputs=outputs, queue=queue, in_busy=in_busy,
        out_held=out_held, port_busy=port_busy, port_rr=port_rr, server_busy=server_busy,
        waiting=waiting, sleep=sleep, watchdog=watchdog, stats=stats)
    return state, Listed(in_list, out_list), counts


def run_cycles(layout, routing, net, tables, params, state, n_cycles: int, tier=None):
    """(state after `n_cycles` cycles with lax.scan, int32 [6] largest counts of buffers in
    use in a cycle) for one simulation; vmap for a batch. The lists of buffers in use are
    built once from the state and then kept up to date by each cycle."""

    def body(carry, _):
        state, listed, peak = carry
        state, listed, counts = cycle_step(layout, routing, net, tables, params, state, listed, tier)
        return (state, listed, jnp.maximum(peak, counts)), None

    start = (state, *list_in_use(state, tier))
    (state, _, peak), _ = jax.lax.scan(body, start, None, length=n_cycles)
    return state, peak
