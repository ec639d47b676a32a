"""Route computation, request filtering and selection (DESIGN section 3): each head that
may move asks its routing scheme for candidate output ports, sees each candidate's
occupancy and whether it can take the packet (`output_view`), and selects one by
`router.selection` (`jaxnet.sim.policies`), or requests its ejection port at its
destination router.

Shapes: K heads (the input rings visited), P network ports, F packet fields. Times are
cycles, occupancies phits.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core import rng
from jaxnet.core.gather import take_pair
from jaxnet.routing.base import NOT_CANDIDATE
from jaxnet.sim import keys
from jaxnet.sim.layout import Model
from jaxnet.sim.policies import ALLOCATORS, FLOW_CONTROLS, SELECTIONS
from jaxnet.sim.rings import Subset, counters, head_rows, pick, ring_ids, take_rows, where_read
from jaxnet.sim.state import Rings


# Routing computes the view of every output once a cycle where its heads look up at least this
# many outputs per output of the network (`candidate_views`), and each lookup's own otherwise
# (measured on RRG 720 with Polarized, on either side of it: benchmarks/README.md).
EVERY_OUTPUT_FROM = 1.0
# Occupancies are clipped below 2**OCCUPANCY_BITS phits: a view then packs into one int32
# (`_packed`), its two flags in the bits above.
OCCUPANCY_BITS = 20


class OutputView(NamedTuple):
    """What a head sees of candidate outputs (port, VC) (arrays of the candidates' shape).

    occupancy: int32 phits in the output buffer plus downstream phits whose credits have not
      returned, phit by phit (DESIGN section 3), clipped below 2**OCCUPANCY_BITS.
    available: bool it can take a whole packet now (not held by another packet whose tail is
      still crossing, and its output buffer has room).
    room_for_two: bool its output buffer has room for two packets (bubble flow control).
    """

    occupancy: jnp.ndarray
    available: jnp.ndarray
    room_for_two: jnp.ndarray


def output_view(model: Model, inputs: Rings, outputs: Rings, out_held, port, vc, t):
    """OutputView of the outputs (port, VC): output ports `port` and VCs `vc` (int32 arrays
    that broadcast together; given apart, as the callers know them, so that no candidate
    divides by V). The occupancy is the VC's, with `router.occupancy: port` the sum over
    every VC of the port, with `credits` only the VC's downstream part (`vc_occupancy`)."""
    spec = model.layout.router
    v_count = model.layout.vcs
    occupancy, taken, held = vc_occupancy(model, inputs, outputs, out_held, port, vc, t)
    if spec.occupancy == "port":
        occupancy = sum(vc_occupancy(model, inputs, outputs, out_held, port, jnp.full_like(vc, v), t)[0]
                        for v in range(v_count))
    if spec.output_queue == "reserved":
        available = (held <= t) & reserved_room(model, inputs, outputs, port, vc)
    else:
        available = (held <= t) & (taken < spec.output_buffer)
    if not spec.request_busy_port:  # no VC of the port receiving through the crossbar
        available &= take_rows(out_held.reshape(-1, v_count).max(axis=1), port) <= t
    return OutputView(
        occupancy=jnp.clip(occupancy, 0, (1 << OCCUPANCY_BITS) - 1),
        available=available,
        room_for_two=taken <= spec.output_buffer - 2,
    )


def candidate_views(model: Model, inputs: Rings, outputs: Rings, out_held, t, router, vc, head_vc, eject_port,
                    only=None):
    """(OutputView of the candidate outputs of K heads at routers `router` [K], network port
    p of each on VC `vc` [K, P] (`head_vc` [K]: the one VC of all of a head's candidates, or
    None), bool [K, V] which VCs of each head's ejection port `eject_port` can take it).
    Where the heads look up at least as many outputs as the network has (every head routed,
    as on small networks), the view of every output (port, VC) is computed once and read, a
    head's candidates as one row where they share a VC; otherwise each lookup computes its own.
    Either way the same views. `only` (int32 [K], `Layout.one_candidate`): each head's one
    candidate port; only its output is looked up, and no occupancy (0 in the view): with one
    candidate to take or wait for, selection compares nothing."""
    layout = model.layout
    v_count, ports, width, routers = layout.vcs, layout.ports, layout.ports_per_router, layout.routers
    if only is not None:
        only_vc = head_vc if head_vc is not None else jnp.take_along_axis(vc, only[:, None], axis=1)[:, 0]
        one = output_view(model, inputs, outputs, out_held, (router * width + only)[:, None],
                          jnp.minimum(only_vc, v_count - 1)[:, None], t)
        eject = output_view(model, inputs, outputs, out_held, eject_port[:, None], jnp.arange(v_count), t)
        at_only = jnp.arange(ports) == only[:, None]
        return OutputView(occupancy=jnp.zeros(at_only.shape, jnp.int32), available=at_only & one.available,
                          room_for_two=at_only & one.room_for_two), eject.available
    cand_port = router[:, None] * width + jnp.arange(ports)
    if router.shape[0] * (ports + v_count) < EVERY_OUTPUT_FROM * layout.out_vcs:
        view = output_view(model, inputs, outputs, out_held, cand_port, jnp.minimum(vc, v_count - 1), t)
        eject = output_view(model, inputs, outputs, out_held, eject_port[:, None], jnp.arange(v_count), t)
        return view, eject.available
    every = output_view(model, inputs, outputs, out_held, jnp.arange(layout.out_ports, dtype=jnp.int32)[:, None],
                        jnp.arange(v_count, dtype=jnp.int32), t)
    # materialised once: XLA would otherwise compute it again inside every lookup
    word = jax.lax.optimization_barrier(_packed(every))
    if head_vc is None:
        candidates = take_rows(word.reshape(-1), cand_port * v_count + jnp.minimum(vc, v_count - 1))
    else:  # rows of a [V x R, network ports] view: one read per head
        rows = jax.lax.optimization_barrier(word.reshape(routers, width, v_count)[:, :ports].transpose(2, 0, 1)
                                            .reshape(v_count * routers, ports))
        candidates = take_rows(rows, jnp.minimum(head_vc, v_count - 1) * routers + router)
    return _unpacked(candidates), _unpacked(take_rows(word, eject_port)).available


def _packed(view: OutputView):
    """An OutputView as one int32 word per output: occupancy, available, room_for_two."""
    flags = view.available.astype(jnp.int32) | (view.room_for_two.astype(jnp.int32) << 1)
    return view.occupancy | (flags << OCCUPANCY_BITS)


def _unpacked(word) -> OutputView:
    """The OutputView a `_packed` word holds."""
    flags = word >> OCCUPANCY_BITS
    return OutputView(occupancy=word & ((1 << OCCUPANCY_BITS) - 1), available=flags & 1 == 1,
                      room_for_two=flags & 2 == 2)


def downstream_ring(model: Model, port, vc):
    """(bool: output port `port` leads to a router, not a server; int32: the input ring its
    VC `vc` feeds there, 0 where it does not)."""
    down_port = take_rows(model.net.out_down, port)
    has_down = down_port >= 0
    return has_down, jnp.where(has_down, down_port * model.layout.vcs + vc, 0)


def reserved_room(model: Model, inputs: Rings, outputs: Rings, port, vc):
    """bool: FOGSim's output queue of `port` can take a packet of VC `vc` (`router.output_queue:
    reserved`): the port's packets, every VC's, fill less than `router.output_buffer`, and
    the downstream buffer has a credit for it beyond those of the VC's packets queued at the
    output (the packet on the link is already downstream). Ejection ports have no credits."""
    spec, v_count = model.layout.router, model.layout.vcs
    port_taken = sum(counters(outputs, port * v_count + v)[1] for v in range(v_count))
    _, taken, gone = counters(outputs, port * v_count + vc)
    has_down, down = downstream_ring(model, port, vc)
    credit = ~has_down | (taken - gone + counters(inputs, down)[1] < spec.input_buffer)
    return (port_taken < spec.output_buffer) & credit


def vc_occupancy(model: Model, inputs: Rings, outputs: Rings, out_held, port, vc, t):
    """(occupancy, packets taken in the output ring, cycle its VC is held until) of the
    outputs (port, VC) (int32, shapes as `output_view`'s). Occupancy in phits = L x (packets in
    the output ring + packets in the downstream input ring - the packet streaming on the link,
    which is in both) - phits of the last granted packet not yet across the crossbar (one per
    cycle, the tail at `out_held` - 1) - credits already back of the oldest packet leaving the
    downstream buffer (its tail's credit is usable at its `free_at`, the credit of each phit
    before it one cycle earlier). With `router.occupancy: credits` only the downstream part:
    phits sent towards the downstream buffer whose credits have not returned (L x packets in
    the downstream input ring - credits back - phits of the packet on the link not yet sent,
    its tail leaving at its output slot's `free_at`)."""
    layout = model.layout
    size, v_count = layout.router.packet_size, layout.vcs
    out_vc = port * v_count + vc
    first, taken, gone = counters(outputs, out_vc)
    held = take_rows(out_held, out_vc)
    has_down, down = downstream_ring(model, port, vc)
    first_down, taken_down, gone_down = counters(inputs, down)
    taken_down, gone_down = jnp.where(has_down, taken_down, 0), jnp.where(has_down, gone_down, 0)
    oldest_free = take_rows(inputs.free_at, where_read(gone_down > 0, down * layout.input_depth + first_down))
    credited = jnp.where(gone_down > 0, size - jnp.clip(oldest_free - t, 0, size), 0)
    if layout.router.occupancy == "credits":
        sending = has_down & (gone > 0)
        leaving = take_rows(outputs.free_at, where_read(sending, out_vc * layout.router.output_buffer + first))
        unsent = jnp.where(sending, jnp.clip(leaving - t, 0, size), 0)
        return size * taken_down - credited - unsent, taken, held
    streaming = jnp.where(has_down, gone, 0)
    return size * (taken + taken_down - streaming) - jnp.clip(held - t, 0, size) - credited, taken, held


def occupancy_step(model: Model) -> int | None:
    """The most the occupancy of an output (port, VC) can change from one cycle's route to
    the next (phits), or None where it is not bounded below a packet. With a crossbar of
    speedup 1 (and links of at least one cycle) it rises by at most one, from the packet
    crossing into its buffer or the grant that starts it, and falls by at most one, from
    the credits of the oldest packet leaving the downstream buffer or the slot that frees;
    a packet starting on the link moves it from the output to the downstream buffer
    (`vc_occupancy`; checked in tests/test_sleep.py). Summed over a port's VCs, V times that.
    The downstream part alone (`credits`) is left unbounded here."""
    spec = model.layout.router
    if spec.transfer_cycles != spec.packet_size or spec.occupancy == "credits":
        return None
    return model.layout.vcs if spec.occupancy == "port" else 1


def select_output(selection: str, total, usable, available, bits):
    """Chosen candidate per head, int32 [H]: a choice key (jaxnet.sim.keys) of
    (total, random tie, port), or keys.NONE when the head must wait.
    total: int32 [H, P] cost + occupancy (`candidate_totals`); usable, available: bool
    [H, P]; bits: uint32 [H] random bits for the tie-break; `selection` a `router.selection`."""
    port_ids = jnp.arange(total.shape[1])
    chosen = SELECTIONS[selection](total, usable, available)
    choice = keys.pack_choice(total, keys.tie_break(bits, port_ids), port_ids)
    return jnp.where(chosen, choice, keys.NONE).min(axis=1)


def candidate_totals(cost, occupancy, usable):
    """int32 [H, P]: cost + occupancy of each candidate (occupancy in phits), clipped at
    keys.COST_CAP: what selection compares."""
    return jnp.minimum(cost + jnp.where(usable, occupancy, 0), keys.COST_CAP)


def waiting_margin(total, usable, available, request):
    """int32 [H]: for a head that waits for its lowest-total candidates while another one
    could take it (best_first), the lowest total of those that could take it minus the
    lowest of all; 0 for every other head."""
    lowest = jnp.where(usable, total, keys.COST_CAP).min(axis=1)
    lowest_available = _lowest_available(total, usable, available)
    return jnp.where(~request & (lowest_available <= keys.COST_CAP), lowest_available - lowest, 0)


def _lowest_available(total, usable, available):
    """int32 [H]: the lowest total among the candidates that can take the head now,
    keys.COST_CAP + 1 (above every total) where none can."""
    return jnp.where(usable & available, total, keys.COST_CAP + 1).min(axis=1)


def wake_candidates(total, usable, available):
    """bool [H, P]: the candidates whose availability rising could let a waiting head request
    before it is routed again anyway: those whose total lies below that of every candidate
    that can take it now (every usable one when none can). Another one would first have to
    close the head's whole margin on the lowest total (`waiting_margin`), which takes at least
    as long as the head sleeps on it."""
    return usable & (total < _lowest_available(total, usable, available)[:, None])


class Requests(NamedTuple):
    """The request of the head of every input ring visited this cycle (all [K]).

    ring: int32 input (port, VC) id; row: int32 slot row of its head; head: int32 [K, F] the
    head's record. active: bool the head may request (waiting, arrived, input VC free).
    at_dest: bool the scheme delivers the head here, at its destination router (it requests
      its ejection port).
    port: int32 network port chosen (meaningless where at_dest or not requesting).
    out_vc: int32 output (port, VC) id requested; request: bool a request is made.
    no_route: bool an active head in transit that had no candidate at all.
    enters: bool the chosen hop enters a ring (bubble flow control; False otherwise).
    wakes_on: bool [K, P] the candidate network ports whose rise wakes the head while it
      sleeps (`wake_candidates`; the candidates are fixed while it waits).
    wait_vc: int32 the VC of all its candidates, V where they differ (fixed while it waits).
    blocked: bool an active head in transit with candidates, none of which can take it now:
      under either selection it cannot request until some candidate's availability rises.
    margin: int32 a head waiting under best_first for its lowest-total candidates while
      another could take it: how far the lowest total of those that could take it lies
      above the lowest of all (`waiting_margin`); 0 for every other head, and everywhere
      where occupancies are scaled or not bounded in their steps (`occupancy_step`).
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
    wakes_on: jnp.ndarray
    wait_vc: jnp.ndarray
    blocked: jnp.ndarray
    margin: jnp.ndarray


def movable_heads(model: Model, inputs: Rings, in_busy, heads: Subset, t):
    """(slot row of the head of each input ring `heads`, bool [K] the head may move this
    cycle: waiting, arrived (router latency included) and its input VC free (with
    `router.allocator: port`, its whole input port))."""
    layout = model.layout
    row, waiting = head_rows(inputs, heads.ids, layout.input_depth)
    ready = (take_pair(inputs.slots, where_read(heads.valid & waiting, row), pk.READY) if inputs.head_ready is None
             else pick(inputs.head_ready, heads.ids))
    arrived = ready + layout.router.router_latency <= t
    busy_until = ALLOCATORS[layout.router.allocator].input_busy_until(layout, in_busy)
    return row, heads.valid & waiting & arrived & (pick(busy_until, heads.ids) <= t)


def route(model: Model, inputs: Rings, outputs: Rings, out_held, in_busy, heads: Subset, seed, t) -> Requests:
    """Route computation, request filtering and selection for the heads of the input
    rings `heads`: every ring (EVERY), of which those that may move take part, or a list of
    heads that may move (`jaxnet.sim.work` compacts it from `movable_heads`)."""
    layout, net, routing = model.layout, model.net, model.routing
    spec = layout.router
    v_count, ports, width = layout.vcs, layout.ports, layout.ports_per_router
    ring = ring_ids(inputs, heads.ids)
    if heads.ids is None:
        row, active = movable_heads(model, inputs, in_busy, heads, t)
    else:  # a list of heads is compacted from those that may move (`jaxnet.sim.work`)
        row, active = head_rows(inputs, heads.ids, layout.input_depth)[0], heads.valid
    head = take_rows(inputs.slots, row)
    router = layout.router_of(ring)
    at_dest = routing.delivers(model.tables, router, head)

    cost, scheme_vc, scale = routing.candidates(model.tables, router, head, ports)
    vc = layout.vc_policy.candidate_vcs(net.port_class, router, head, scheme_vc)
    candidate = cost < NOT_CANDIDATE
    has_candidate = jnp.any(candidate, axis=1)
    assert vc.ndim == 1 or not layout.vc_policy.one_vc_per_head, layout.vc_policy
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
    eject_port = router * width + ports + head[:, pk.DST] - head[:, pk.DST_R] * layout.servers_per_router
    only = jnp.argmin(cost, axis=1) if layout.one_candidate else None
    view, eject_free = candidate_views(model, inputs, outputs, out_held, t, router, vc, head_vc, eject_port, only)
    occupancy = view.occupancy if scale is None else view.occupancy * scale
    flow_control = FLOW_CONTROLS[spec.flow_control]
    enters = flow_control.enters_ring(net, heads.ids, router, cost.shape)
    available = flow_control.requestable(view, enters)
    bits = rng.random_bits_at(seed, t, rng.RNG_SELECT, ring)
    total = candidate_totals(cost, occupancy, usable)
    best = select_output(spec.selection, total, usable, available, bits)
    best_port = keys.choice_index(best)
    best_vc = head_vc if head_vc is not None else jnp.take_along_axis(vc, best_port[:, None], axis=1)[:, 0]

    # at the destination: the lowest-index free VC of the server's ejection port
    vc_ids = jnp.arange(v_count)
    eject_vc = jnp.where(eject_free, vc_ids, v_count).min(axis=1)
    request = active & jnp.where(at_dest, eject_vc < v_count, best != keys.NONE)
    if spec.selection == "best_first" and scale is None and occupancy_step(model) is not None:
        margin = jnp.where(active & ~at_dest, waiting_margin(total, usable, available, request), 0)
    else:
        margin = jnp.zeros_like(request, jnp.int32)
    return Requests(
        ring=ring, row=row, head=head, active=active, at_dest=at_dest, port=best_port,
        out_vc=jnp.where(at_dest, eject_port * v_count + eject_vc,
                         (router * width + best_port) * v_count + best_vc),
        request=request,
        no_route=active & ~at_dest & ~has_candidate,
        enters=~at_dest & jnp.take_along_axis(enters, best_port[:, None], axis=1)[:, 0],
        wakes_on=wake_candidates(total, usable, available),
        wait_vc=wait_vc,
        blocked=active & ~at_dest & any_usable & ~jnp.any(usable & available, axis=1),
        margin=margin,
    )
