"""One router cycle of the whole network, as a pure function of the state: the phases of
DESIGN section 3 in order (`jaxnet.sim.phases`, `jaxnet.sim.route`), then the statistics
and the deadlock watchdog; and `run_cycles`, a chunk of cycles under `lax.scan`. With link
latency 1 an uncontended packet needs L + H cycles from its head entering the first router
to its tail reaching the destination server (docs/engine.md)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.sim import phases, window
from jaxnet.sim import workload as workloads
from jaxnet.sim.layout import Model
from jaxnet.sim.route import route
from jaxnet.sim.state import SimState, Watchdog
from jaxnet.sim.stats import Events, Measurement, record
from jaxnet.sim.work import Sleep, Todo, Work
from jaxnet.traffic.device import Traffic


class Params(NamedTuple):
    """Traced inputs of one simulation: changing them never recompiles.

    load: float32 [] offered load, phits/cycle/server.
    traffic: Traffic of this simulation.
    warmup, measure: int32 [] the measurement window is [warmup, warmup + measure) (under an
      automatic warm-up, `warmup` is found per simulation: `jaxnet.sim.window`).
    watchdog: int32 [] cycles without movement (packets inside) that count as deadlock.
    generate_until: int32 [] servers generate only before this cycle (then the network drains).
    """

    load: jnp.ndarray
    traffic: Traffic
    warmup: jnp.ndarray
    measure: jnp.ndarray
    watchdog: jnp.ndarray
    generate_until: jnp.ndarray


def watch(watchdog: Watchdog, moved, was_empty, in_network, limit, t) -> Watchdog:
    """The watchdog after one cycle: fires (once) when packets are inside and nothing has
    moved for more than `limit` cycles. Quiet time counts from the last cycle a packet was
    granted or started on a link, or the network was empty: a packet entering an empty
    network starts it afresh (`limit` covers the longest a moving packet can rest: its tail
    crossing, its link, its credit's way back, the router's latency)."""
    last_move = jnp.where(moved | was_empty, t, watchdog.last_move)
    stuck = (in_network > 0) & (t - last_move > limit) & (watchdog.deadlock_at < 0)
    return Watchdog(last_move, jnp.where(stuck, t, watchdog.deadlock_at))


def cycle_step(model: Model, work: Work, params: Params, state: SimState, todo: Todo,
               measurement: Measurement = Measurement()) -> tuple[SimState, Todo]:
    """(state, todo) after one cycle. `work` says which rings, heads, links and servers each
    phase visits (`jaxnet.sim.work`); results do not depend on it. `measurement`: what is
    counted beyond the usual statistics, and how the measurement window is found."""
    t, seed = state.cycle, state.seed
    inputs, outputs, kept = phases.release_slots(model, state.inputs, state.outputs, todo.inputs, todo.outputs, t)
    heads, todo = work.heads(model, todo, state, inputs, outputs, kept)
    requests = route(model, inputs, outputs, state.out_held, state.in_busy, heads, seed, t)
    granted = phases.allocate(model, requests, seed, t)
    todo = work.routed(model, todo, heads, requests, t)
    inputs, outputs, in_busy, out_held, filled = phases.transfer(
        model, inputs, outputs, state.in_busy, state.out_held, heads, requests, granted, seed, t)
    links, todo = work.links(model, todo, state.port_busy, kept, requests, filled, t)
    inputs, outputs, port_busy, port_rr, sent = phases.send_on_links(
        model, inputs, outputs, state.port_busy, state.port_rr, links, t)
    program, workload = params.traffic.program, state.workload
    if workload is None:
        generates = phases.generating(model, params.traffic, params.load, params.generate_until, seed, t)
    else:
        generates = workloads.generating(program, workload, state.queue.taken, model.layout.router.source_queue,
                                         params.generate_until, t)
    servers, todo = work.servers(model, todo, state.queue, state.server_busy, generates, t)
    inputs, queue, server_busy, injected = phases.inject(model, inputs, state.queue, state.server_busy, servers,
                                                         seed, t)
    queue, enqueued, missed = phases.generate(model, params.traffic, generates, queue, injected.queue_heads,
                                              servers, seed, t, workload)
    todo = work.next_cycle(model, todo, inputs, outputs, kept, requests, filled, sent, injected)

    waiting = work.waiting(model, state.waiting, inputs, outputs, requests, granted, sent, injected)
    layout = model.layout
    events = Events(
        no_route=requests.no_route, sent=sent.records, port=sent.port, to_router=sent.to_router,
        to_server=sent.to_server, servers=servers.ids, injected=injected.moved, enqueued=enqueued, missed=missed,
        waiting=waiting, vc=sent.vc, down=sent.down, granted=granted, granted_ring=requests.ring,
        granted_out=requests.out_vc, injected_ring=injected.ring,
        output_grid=(layout.routers, layout.ports) if links.ids is None else None)
    size = layout.router.packet_size
    start = window.start_of(state.window, measurement, params.warmup)
    stats = record(state.stats, events, t, size, layout.max_hops, start, params.measure, measurement.window)
    measured = window.advance(state.window, measurement, stats, events, t, size, params.warmup, params.measure)
    if workload is not None:
        drained = jnp.all(stats.generated_all == stats.consumed_all)
        workload = workloads.advance(program, workload, servers.ids, enqueued, sent.records, sent.to_server, t, size,
                                     params.load, drained)
    moved = jnp.any(granted) | jnp.any(sent.to_router | sent.to_server)
    watchdog = watch(state.watchdog, moved, jnp.sum(state.waiting) == 0, jnp.sum(waiting), params.watchdog, t)
    return SimState(
        cycle=t + 1, seed=seed, inputs=inputs, outputs=outputs, queue=queue, in_busy=in_busy,
        out_held=out_held, port_busy=port_busy, port_rr=port_rr, server_busy=server_busy,
        waiting=waiting, watchdog=watchdog, stats=stats, window=measured, workload=workload), todo


def run_cycles(model: Model, work: Work, params: Params, state: SimState, sleep: Sleep | None, n_cycles: int,
               measurement: Measurement = Measurement()):
    """(state, heads asleep, int32 [6] the most entries each work list needed in a cycle)
    after `n_cycles` cycles with lax.scan, for one simulation (vmap for a batch)."""

    def body(carry, _):
        state, todo, peak = carry
        state, todo = cycle_step(model, work, params, state, todo, measurement)
        return (state, todo, jnp.maximum(peak, todo.counts)), None

    todo = work.start(model, state, sleep)
    (state, todo, peak), _ = jax.lax.scan(body, (state, todo, todo.counts), None, length=n_cycles)
    return state, todo.sleep, peak
