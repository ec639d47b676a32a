"""One router cycle of the whole network, as a pure function of the state: the phases of
`jaxnet.sim.phases` in DESIGN order, then the statistics and the watchdog. With link
latency 1 an uncontended packet needs L + H cycles from its head entering the first router
to its tail reaching the destination server (docs/engine.md)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.routing.base import RoutingScheme
from jaxnet.sim import phases
from jaxnet.sim.layout import Layout, NetArrays
from jaxnet.sim.state import SimState, Watchdog
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


def _waiting_per_vc(rings, v_count: int):
    return (rings.taken - rings.gone).reshape(-1, v_count).sum(axis=0)


def watch(watchdog: Watchdog, moved, n_injected, n_ejected, limit, t) -> Watchdog:
    """The watchdog after one cycle: fires (once) when packets are inside and nothing has
    moved for more than `limit` cycles."""
    in_network = watchdog.in_network + n_injected - n_ejected
    last_move = jnp.where(moved, t, watchdog.last_move)
    stuck = (in_network > 0) & (t - last_move > limit) & (watchdog.deadlock_at < 0)
    return Watchdog(in_network, last_move, jnp.where(stuck, t, watchdog.deadlock_at))


def cycle_step(layout: Layout, routing: RoutingScheme, net: NetArrays, tables, params: Params,
               state: SimState) -> SimState:
    """Advance one simulation by one cycle."""
    t, seed = state.cycle, state.seed
    inputs, outputs = phases.release_slots(layout, state.inputs, state.outputs, t)
    out_cost = phases.output_status(layout, net, inputs, outputs, state.out_held, t)
    requests = phases.route(layout, routing, net, tables, inputs, state.in_busy, out_cost, seed, t)
    granted = phases.allocate(layout, net, requests, seed, t)
    inputs, outputs, in_busy, out_held = phases.transfer(
        layout, routing, net, tables, inputs, outputs, state.in_busy, state.out_held, requests,
        granted, seed, t)
    inputs, outputs, port_busy, port_rr, sent = phases.send_on_links(
        layout, net, inputs, outputs, state.port_busy, state.port_rr, t)
    inputs, queue, server_busy, injected = phases.inject(
        layout, routing, net, tables, inputs, state.queue, state.server_busy, seed, t)
    queue, enqueued, missed = phases.generate(
        layout, params.traffic, params.load, params.generate_until, queue, seed, t)

    events = Events(
        no_route=requests.no_route, sent=sent.records, to_router=sent.to_router,
        to_server=sent.to_server, injected=injected, enqueued=enqueued, missed=missed,
        waiting_in=_waiting_per_vc(inputs, layout.vcs), waiting_out=_waiting_per_vc(outputs, layout.vcs))
    stats = record(state.stats, events, t, layout.router.packet_size, layout.max_hops,
                   params.warmup, params.measure)
    watchdog = watch(state.watchdog, jnp.any(granted) | jnp.any(sent.to_router | sent.to_server),
                     jnp.sum(injected, dtype=jnp.int32), jnp.sum(sent.to_server, dtype=jnp.int32),
                     params.watchdog, t)
    return SimState(
        cycle=t + 1, seed=seed, inputs=inputs, outputs=outputs, queue=queue, in_busy=in_busy,
        out_held=out_held, port_busy=port_busy, port_rr=port_rr, server_busy=server_busy,
        watchdog=watchdog, stats=stats)


def run_cycles(layout, routing, net, tables, params, state, n_cycles: int):
    """Advance `n_cycles` cycles with lax.scan (one simulation; vmap for a batch)."""

    def body(carry, _):
        return cycle_step(layout, routing, net, tables, params, carry), None

    state, _ = jax.lax.scan(body, state, None, length=n_cycles)
    return state
