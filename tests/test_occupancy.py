"""Occupancy as adaptive selection sees it, traced by hand on two routers: one packet of L
phits from server 0 (router 0) to server 1 (router 1) over a link of latency 3.

Timeline (speedup 1, the engine's conventions, docs/engine.md): the head reaches router 0's
injection buffer at cycle g and is granted at once; phit k crosses router 0's crossbar and
leaves on the link at g + k, reaches router 1 at g + k + 3, crosses router 1's crossbar
(ejection) at g + 3 + k, and its credit is usable at router 0 from g + 3 + k + 1 + 3.
The occupancy of router 0's output (port 0, VC 0) at the start of cycle t is therefore
  phits crossed - phits sent          (output buffer: 0, each phit leaves as it arrives)
+ phits sent - credits back           (downstream)
= min(t - g, L) - clip(t - g - 6, 0, L),
rising one phit per cycle while the packet streams out and falling one phit per cycle as
its credits come back, where a whole-packet count would show 2 L, then L, then 0."""
import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from conftest import make_network

from jaxnet.core import packets as pk
from jaxnet.sim import phases
from jaxnet.sim.rings import EVERY
from jaxnet.sim.route import candidate_views, output_view
from jaxnet.sim.state import TAKEN, init_state
from jaxnet.sim.step import Params, cycle_step
from jaxnet.sim.work import EveryBuffer
from jaxnet.traffic import build_traffic
from jaxnet.traffic.device import stack_tables

L, LATENCY = 4, 3


def _trace(cycles: int):
    network = make_network(nx.path_graph(2), servers_per_router=1, vcs=1, packet_size=L,
                           link_latency=LATENCY)
    layout, model = network.layout, network.model
    state = init_state(layout, jax.random.PRNGKey(0))
    # one packet queued at server 0 for server 1, created at cycle 0
    queue = state.queue
    depth = layout.router.source_queue
    queue = queue._replace(slots=queue.slots.at[0, pk.Q_DST].set(1).at[0, pk.Q_DST_R].set(1),
                           counters=queue.counters.at[0].add(TAKEN))
    state = state._replace(queue=queue)
    assert depth >= 1
    table = build_traffic({"name": "uniform"}, network.topo, 1)
    traffic = jax.tree_util.tree_map(lambda a: a[0], stack_tables([table]))
    params = Params(load=jnp.float32(1e-9), traffic=traffic, warmup=jnp.int32(0),
                    measure=jnp.int32(10**6), watchdog=jnp.int32(10**6), generate_until=jnp.int32(0))
    work = EveryBuffer()
    step = jax.jit(lambda s, todo: cycle_step(model, work, params, s, todo))
    todo = work.start(model, state)
    port, vc = jnp.asarray([0]), jnp.asarray([0])  # router 0, port 0, VC 0
    occupancy = jax.jit(lambda s: output_view(
        model, *phases.release_slots(model, s.inputs, s.outputs, EVERY, EVERY, s.cycle)[:2],
        s.out_held, port, vc, s.cycle).occupancy[0])
    seen, injected_at = [], None
    for _ in range(cycles):
        seen.append(int(occupancy(state)))
        state, todo = step(state, todo)
        if injected_at is None and int(state.waiting.sum()) == 1:
            injected_at = int(state.cycle)  # the head is in the injection buffer from here
    return np.array(seen), injected_at


def test_occupancy_streams_phit_by_phit():
    seen, g = _trace(20)
    t = np.arange(len(seen))
    expected = np.clip(t - g, 0, L) - np.clip(t - g - 2 * LATENCY, 0, L)
    assert g is not None and g >= 1
    np.testing.assert_array_equal(seen, expected)
    # it rises to a whole packet and falls back one phit per cycle
    assert seen.max() == L and list(seen[g:g + L + 1]) == list(range(L + 1))


def _saturating(network):
    """(jitted cycle, empty state, its todo) of `network` under uniform traffic at load 1.0,
    every buffer visited: a network that saturates within a hundred cycles."""
    table = build_traffic({"name": "uniform"}, network.topo, 1)
    traffic = jax.tree_util.tree_map(lambda a: a[0], stack_tables([table]))
    params = Params(load=jnp.float32(1.0), traffic=traffic, warmup=jnp.int32(0), measure=jnp.int32(10**6),
                    watchdog=jnp.int32(10**6), generate_until=jnp.int32(10**6))
    work = EveryBuffer()
    state = init_state(network.layout, jax.random.PRNGKey(1))
    step = jax.jit(lambda s, todo: cycle_step(network.model, work, params, s, todo))
    return step, state, work.start(network.model, state)


def test_credits_are_the_downstream_part_of_the_occupancy():
    """`router.occupancy: credits` reads only the phits sent downstream whose credits have not
    returned: on a saturated network, for every output, between none and the downstream
    buffer's packets, and below the whole occupancy by the output buffer's own phits (at
    most its packets), which differ from none somewhere."""
    graph = nx.random_regular_graph(4, 16, seed=3)
    networks = {occupancy: make_network(graph, servers_per_router=3, vcs=3, packet_size=L, occupancy=occupancy)
                for occupancy in ("vc", "credits")}
    network = networks["vc"]
    layout, model = network.layout, network.model
    step, state, todo = _saturating(network)
    ports, vcs = jnp.arange(layout.out_ports)[:, None], jnp.arange(layout.vcs)[None, :]

    def viewer(reading):
        return jax.jit(lambda s: output_view(
            reading.model, *phases.release_slots(model, s.inputs, s.outputs, EVERY, EVERY, s.cycle)[:2],
            s.out_held, ports, vcs, s.cycle).occupancy)

    views = {occupancy: viewer(reading) for occupancy, reading in networks.items()}
    seen = {occupancy: [] for occupancy in views}
    for _ in range(150):
        state, todo = step(state, todo)
        for occupancy, view in views.items():
            seen[occupancy].append(np.asarray(view(state)))
    network_ports = np.asarray(network.net.out_down) >= 0
    whole, credits = np.stack(seen["vc"])[:, network_ports], np.stack(seen["credits"])[:, network_ports]
    spec = layout.router
    assert credits.min() >= 0 and credits.max() <= L * spec.input_buffer
    assert (whole - credits).min() >= 0 and (whole - credits).max() <= L * spec.output_buffer
    assert (whole != credits).any() and credits.max() > 0


def test_link_order_arrival_sends_the_oldest_head_where_round_robin_sends_the_next_vc():
    """Router 0's output port 0 holds a packet on VC 1 granted at cycle 2 and one on VC 0
    granted at cycle 5, its round-robin pointer at VC 0. At cycle 6 its link starts VC 0's
    packet round-robin and VC 1's, the older, under `router.link_order: arrival`: visiting
    every output port and through a list of output rings alike."""
    from jaxnet.sim.rings import Subset, push

    for order, expected in (("round_robin", 0), ("arrival", 1)):
        network = make_network(nx.path_graph(2), servers_per_router=1, vcs=2, packet_size=L, link_order=order)
        layout, model = network.layout, network.model
        state = init_state(layout, jax.random.PRNGKey(0))
        records = jnp.zeros((2, state.outputs.slots.shape[1]), jnp.int32)
        records = records.at[:, pk.DST].set(1).at[:, pk.DST_R].set(1).at[:, pk.READY].set(jnp.asarray([2, 5]))
        outputs, _ = push(state.outputs, jnp.asarray([1, 0]), jnp.asarray([True, True]), records,
                          layout.router.output_buffer)
        for rings in (EVERY, Subset(jnp.asarray([0, 1]), jnp.asarray([True, True]))):
            _, _, _, _, sent = phases.send_on_links(model, state.inputs, outputs, state.port_busy, state.port_rr,
                                                    rings, jnp.int32(6))
            started = np.asarray(sent.to_router | sent.to_server)
            assert started.sum() == 1, (order, rings.ids)
            assert int(np.asarray(sent.vc)[started][0]) == expected, (order, rings.ids)
            assert int(np.asarray(sent.records)[started][0, pk.READY]) == (2 if expected == 1 else 5)


@pytest.mark.parametrize("router", [{}, {"occupancy": "port"}, {"occupancy": "credits"},
                                    {"output_queue": "reserved", "request_busy_port": False, "output_buffer": 2}])
def test_candidate_views_read_from_every_output_equal_views_computed_per_lookup(router):
    """Where every head is routed, `candidate_views` reads its candidates from a view of every
    output computed once (a head's candidates as one row where they share a VC); a few heads
    compute their own (`output_view`). On a saturated network both give the same views."""
    graph = nx.random_regular_graph(4, 16, seed=3)
    network = make_network(graph, servers_per_router=3, vcs=3, packet_size=L, **router)
    layout, model = network.layout, network.model
    step, state, todo = _saturating(network)
    for _ in range(120):
        state, todo = step(state, todo)
    inputs, outputs = phases.release_slots(model, state.inputs, state.outputs, EVERY, EVERY, state.cycle)[:2]
    heads = layout.in_vcs  # as many lookups as outputs: the view of every output is read
    assert heads * (layout.ports + layout.vcs) >= layout.out_vcs
    keys = jax.random.split(jax.random.PRNGKey(2), 3)
    router_of = jax.random.randint(keys[0], (heads,), 0, layout.routers)
    vc = jax.random.randint(keys[1], (heads, layout.ports), 0, layout.vcs)
    eject_port = router_of * layout.ports_per_router + layout.ports + jax.random.randint(
        keys[2], (heads,), 0, layout.servers_per_router)
    cand_port = router_of[:, None] * layout.ports_per_router + jnp.arange(layout.ports)
    expected = output_view(model, inputs, outputs, state.out_held, cand_port, vc, state.cycle)
    expected_eject = output_view(model, inputs, outputs, state.out_held, eject_port[:, None],
                                 jnp.arange(layout.vcs), state.cycle).available
    for head_vc in (None, vc[:, 0]):
        vcs = vc if head_vc is None else jnp.broadcast_to(head_vc[:, None], vc.shape)
        want = expected if head_vc is None else output_view(model, inputs, outputs, state.out_held, cand_port, vcs,
                                                            state.cycle)
        view, eject = candidate_views(model, inputs, outputs, state.out_held, state.cycle, router_of, vcs, head_vc,
                                      eject_port)
        for field in ("occupancy", "available", "room_for_two"):
            np.testing.assert_array_equal(getattr(view, field), getattr(want, field), err_msg=field)
        np.testing.assert_array_equal(eject, expected_eject)
    assert np.asarray(expected.occupancy).max() > 0 and not np.asarray(expected.available).all()
