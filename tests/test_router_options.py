"""Router options that change what a head sees of its candidate outputs.

`router.request_busy_port: false`: an output port receiving a packet through the crossbar (on
any of its VCs) takes no new request, as the reference simulator's
`allow_request_busy_port: false` does; `true` (the default) refuses only the held VC.
`router.occupancy: port`: adaptive selection reads the port's phits, every VC summed.
`router.allocator: port`: FOGSim's allocator, one request per input port and one grant per
output port an iteration, transit before injection; an input port sends one packet at a time;
`router.allocator_iterations` iterations a cycle."""
import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from conftest import make_network, simulate_cfg

from jaxnet.sim.policies import ALLOCATORS
from jaxnet.sim.route import output_view
from jaxnet.sim.spec import SimSpec
from jaxnet.sim.state import init_state

V = 3


@pytest.mark.parametrize("request_busy_port", [True, False])
def test_a_held_vc_blocks_its_port_only_when_busy_ports_are_refused(request_busy_port):
    network = make_network(nx.cycle_graph(4), servers_per_router=1, vcs=V, request_busy_port=request_busy_port)
    layout, model = network.layout, network.model
    state = init_state(layout, jax.random.PRNGKey(0))
    t = jnp.int32(10)
    held_port, other_port = 0, 1  # router 0's two network ports
    out_held = state.out_held.at[held_port * V + 1].set(t + 5)  # VC 1 of port 0 receives until t + 5
    port = jnp.asarray([[held_port] * V + [other_port] * V])
    vc = jnp.asarray([list(range(V)) * 2])
    available = output_view(model, state.inputs, state.outputs, out_held, port, vc, t).available[0].tolist()
    assert available[V:] == [True] * V  # the other port is untouched
    assert available[1] is False  # the held VC itself, either way
    assert available[0] == available[2] == request_busy_port
    later = output_view(model, state.inputs, state.outputs, out_held, port, vc, t + 5).available[0].tolist()
    assert later == [True] * (2 * V)  # free again once the tail has crossed


def test_refusing_busy_ports_costs_latency_under_load_and_keeps_packets():
    """Same network and traffic: at load the refusal makes heads wait for the crossbar (higher
    latency, never lower); every packet is still accounted for (invariants checked)."""
    spec = SimSpec(warmup=300, measure=900, chunk=300, check_invariants=True)
    latency = {}
    for request_busy_port in (True, False):
        network = make_network(nx.random_regular_graph(4, 12, seed=2), servers_per_router=2, vcs=4,
                               request_busy_port=request_busy_port)
        rows, _ = simulate_cfg(network, {"name": "uniform"}, [(0.8, 1)], spec)
        assert not rows[0]["deadlock"]
        latency[request_busy_port] = rows[0]["message_latency"]
    assert latency[False] > latency[True]


def test_request_busy_port_must_be_a_boolean():
    with pytest.raises(ValueError, match="router.request_busy_port"):
        make_network(nx.cycle_graph(4), request_busy_port="no")


@pytest.mark.parametrize("occupancy", ["vc", "port"])
def test_port_occupancy_sums_every_vc_of_the_port(occupancy):
    """`router.occupancy: port`: adaptive selection reads the phits of every VC of the port;
    `vc` (the default) only the candidate VC's."""
    from jaxnet.sim.state import TAKEN

    L = 8
    network = make_network(nx.cycle_graph(4), servers_per_router=1, vcs=V, packet_size=L, occupancy=occupancy)
    layout, model = network.layout, network.model
    state = init_state(layout, jax.random.PRNGKey(0))
    outputs = state.outputs._replace(counters=state.outputs.counters.at[0 * V + 1].add(TAKEN))  # one packet, port 0 VC 1
    port, vc = jnp.asarray([[0, 0, 1]]), jnp.asarray([[0, 1, 0]])
    seen = output_view(model, state.inputs, outputs, state.out_held, port, vc, jnp.int32(0)).occupancy[0].tolist()
    assert seen == ([L, L, 0] if occupancy == "port" else [0, L, 0])


def test_occupancy_must_be_vc_or_port():
    with pytest.raises(ValueError, match="router.occupancy"):
        make_network(nx.cycle_graph(4), occupancy="buffer")


def _grants(allocator, ring, out_vc, trials=64, iterations=1):
    """bool [trials, K]: the allocator's grants of requests (input ring, output (port, VC)) on
    a 4-router ring network (2 network ports and 1 injection port per router, V = 2) under
    `trials` draws of the random bids."""
    network = make_network(nx.cycle_graph(4), servers_per_router=1, vcs=2, allocator=allocator,
                           allocator_iterations=iterations)
    layout = network.layout
    per_router = layout.ports_per_router * layout.vcs
    ring, out_vc = jnp.asarray(ring), jnp.asarray(out_vc)
    grant = ALLOCATORS[allocator].grant
    return np.stack([np.asarray(grant(layout, jnp.ones(ring.shape, bool), ring, out_vc,
                                      jax.random.bits(jax.random.PRNGKey(trial), ring.shape, jnp.uint32),
                                      ring % per_router, 3)) for trial in range(trials)])


# router 0, V = 2: input rings 0, 1 (network port 0), 2 (port 1, VC 0), 4 (injection port 2,
# VC 0); output (port, VC) ids port * 2 + vc
RINGS, OUTPUTS = [0, 1, 2, 4], [1 * 2 + 0, 1 * 2 + 1, 0 * 2 + 1, 0 * 2 + 0]


def test_vc_allocator_grants_every_output_vc_its_own_request():
    """Four requests for four distinct output VCs (two on each port, two from one input port):
    all granted, every cycle."""
    assert _grants("vc", RINGS, OUTPUTS).all()


def test_port_allocator_grants_one_per_input_port_and_per_output_port_transit_first():
    grants = _grants("port", RINGS, OUTPUTS)
    # input port 0's two VCs: exactly one forwarded (and granted: nobody else wants port 1)
    assert (grants[:, 0] ^ grants[:, 1]).all() and grants[:, 0].any() and grants[:, 1].any()
    # output port 0: the transit input (ring 2) before the injection input (ring 4), always
    assert grants[:, 2].all() and not grants[:, 3].any()
    # alone, the injection input is granted
    assert _grants("port", [4], [0])[:, 0].all()


# input port 0 asks for output ports 1 (ring 0) and 2, the ejection port (ring 1); input port 1
# (ring 2) for output port 1 too
CONTESTED_RINGS, CONTESTED_OUTPUTS = [0, 1, 2], [1 * 2 + 0, 2 * 2 + 0, 1 * 2 + 1]


def test_a_second_iteration_matches_the_ports_the_first_left_unmatched():
    """One iteration leaves input port 0 unmatched whenever it forwards ring 0 and loses output
    port 1 to ring 2; a second one then grants its other request (ring 1), so input port 0 is
    always matched, while every grant of the first iteration stands and each input and output
    port still takes at most one."""
    once = _grants("port", CONTESTED_RINGS, CONTESTED_OUTPUTS)
    twice = _grants("port", CONTESTED_RINGS, CONTESTED_OUTPUTS, iterations=2)
    assert not (once[:, 0] | once[:, 1]).all()
    assert (twice[:, 0] | twice[:, 1]).all() and not (twice[:, 0] & twice[:, 1]).any()
    assert not (twice[:, 0] & twice[:, 2]).any()
    assert (twice >= once).all()
    assert (twice.sum(axis=1) > once.sum(axis=1)).any()


def test_allocator_iterations_need_the_port_allocator():
    with pytest.raises(ValueError, match="router.allocator_iterations"):
        make_network(nx.cycle_graph(4), allocator="vc", allocator_iterations=2)
    with pytest.raises(ValueError, match="router.allocator_iterations"):
        make_network(nx.cycle_graph(4), allocator="port", allocator_iterations=0)


@pytest.mark.parametrize("allocator", ["vc", "port"])
def test_a_busy_input_vc_holds_its_whole_port_only_under_the_port_allocator(allocator):
    network = make_network(nx.cycle_graph(4), servers_per_router=1, vcs=V, allocator=allocator)
    layout = network.layout
    in_busy = jnp.zeros(layout.in_vcs, jnp.int32).at[1 * V + 2].set(9)  # port 1, VC 2 sends until 9
    busy = np.asarray(ALLOCATORS[allocator].input_busy_until(layout, in_busy)).reshape(-1, V)
    assert busy[1].tolist() == ([9] * V if allocator == "port" else [0, 0, 9])
    assert (np.delete(busy, 1, axis=0) == 0).all()


def test_port_allocator_keeps_packets_under_load():
    """FOGSim's reading (allocator per port, no request to a port receiving through the
    crossbar) on a loaded network: no deadlock, invariants hold, and fewer packets cross per
    cycle than with per-VC allocation, so latency is higher."""
    spec = SimSpec(warmup=300, measure=900, chunk=300, check_invariants=True)
    latency = {}
    for allocator in ("vc", "port"):
        network = make_network(nx.random_regular_graph(4, 12, seed=2), servers_per_router=2, vcs=4,
                               allocator=allocator, request_busy_port=allocator == "vc")
        rows, _ = simulate_cfg(network, {"name": "uniform"}, [(0.8, 1)], spec)
        assert not rows[0]["deadlock"] and rows[0]["packets_consumed"] > 0
        latency[allocator] = rows[0]["message_latency"]
    assert latency["port"] > latency["vc"]


def test_port_allocator_iterations_keep_packets_under_load():
    """Three matching iterations a cycle on a loaded network: invariants hold, no deadlock,
    and the run differs from one iteration's (the option reaches the engine)."""
    spec = SimSpec(warmup=300, measure=900, chunk=300, check_invariants=True)
    latency = {}
    for iterations in (1, 3):
        network = make_network(nx.random_regular_graph(4, 12, seed=2), servers_per_router=2, vcs=4,
                               allocator="port", request_busy_port=False, allocator_iterations=iterations)
        rows, _ = simulate_cfg(network, {"name": "uniform"}, [(0.8, 1)], spec)
        assert not rows[0]["deadlock"] and rows[0]["packets_consumed"] > 0
        latency[iterations] = rows[0]["message_latency"]
    assert latency[3] != latency[1]


def test_allocator_must_be_a_known_name():
    with pytest.raises(ValueError, match="router.allocator"):
        make_network(nx.cycle_graph(4), allocator="islip")


# `router.output_queue: reserved`: FOGSim's input-output queue. Router 0 of a 4-router ring,
# network port 0 and V VCs; packets of L phits, input buffers of 4 packets, 3 per output port.
RESERVED = dict(servers_per_router=1, vcs=V, packet_size=8, input_buffer=4, output_buffer=3)


def _with(rings, ring, taken, gone=0):
    """Rings with ring `ring`'s counters set to `taken` slots, `gone` of them gone."""
    from jaxnet.sim.state import pack_counters

    return rings._replace(counters=rings.counters.at[ring].set(pack_counters(0, taken, gone)))


@pytest.mark.parametrize("output_queue", ["buffer", "reserved"])
def test_a_reserved_output_queue_needs_downstream_credits_for_its_packets_and_room_in_its_port(output_queue):
    network = make_network(nx.cycle_graph(4), output_queue=output_queue, **RESERVED)
    model = network.model
    state = init_state(network.layout, jax.random.PRNGKey(0))
    down = int(network.net.out_down[0]) * V + 1  # the input ring that output (0, VC 1) feeds

    def available(inputs, outputs):
        return bool(output_view(model, inputs, outputs, state.out_held, jnp.asarray([0]), jnp.asarray([1]),
                                jnp.int32(0)).available[0])

    inputs, outputs = _with(state.inputs, down, 3), state.outputs
    assert available(inputs, outputs)  # 3 of 4 credits in use: one left for this packet
    # one packet of VC 1 queued at the output takes that last credit
    assert available(inputs, _with(outputs, 1, 1)) == (output_queue == "buffer")
    # the packet on the link is already downstream: counted once
    assert available(_with(inputs, down, 4, 0), _with(outputs, 1, 1, 1)) == (output_queue == "buffer")
    assert available(inputs, _with(outputs, 1, 1, 1))
    # 3 packets of the port's other VCs fill its shared queue, not VC 1's own buffer
    full_port = _with(_with(outputs, 0, 2), 2, 1)
    assert available(state.inputs, full_port) == (output_queue == "buffer")
    assert not available(state.inputs, _with(outputs, 1, 3))


def test_a_lent_credit_returns_only_when_its_packet_leaves_the_output_queue():
    """A packet that crossed the crossbar under `reserved` keeps its input slot taken (`lend`);
    credits that start back take the oldest lent slots of their ring, several in one cycle,
    and free in order at their time."""
    from jaxnet.sim.rings import Subset, head_rows, lend, push, release, return_lent

    network = make_network(nx.cycle_graph(4), output_queue="reserved", **RESERVED)
    depth = network.layout.input_depth
    inputs = init_state(network.layout, jax.random.PRNGKey(0)).inputs
    ring, ids = jnp.asarray([5]), jnp.asarray([5])
    for _ in range(3):
        inputs, _ = push(inputs, ring, jnp.asarray([True]), jnp.zeros((1, inputs.slots.shape[1]), jnp.int32), depth)
    for _ in range(2):
        row, _ = head_rows(inputs, ids, depth)
        inputs = lend(inputs, ids, row, jnp.asarray([True]))
    assert (int(inputs.taken[5]), int(inputs.gone[5]), int(inputs.lent[5])) == (3, 2, 2)
    visited = Subset(ids, jnp.asarray([True]))
    assert not bool(release(inputs, visited, jnp.int32(10**6), depth)[3][0])  # lent: never frees
    inputs = return_lent(inputs, jnp.asarray([5, 7, 5]), jnp.asarray([True, False, True]), jnp.asarray([20, 1, 20]),
                         depth)
    assert int(inputs.lent[5]) == 0 and int(inputs.lent[7]) == 0
    freed = []
    for t in range(18, 23):
        inputs, _, _, free = release(inputs, visited, jnp.int32(t), depth)
        freed.append(bool(free[0]))
    assert freed == [False, False, True, True, False]  # one a cycle, from cycle 20
    assert (int(inputs.taken[5]), int(inputs.gone[5])) == (1, 0)


def test_reserved_output_queues_hold_only_credited_packets_under_load():
    """At the end of a loaded run: every input slot lent is a packet waiting in an output
    queue, no output VC holds more packets than its downstream buffer has credits for, no
    port more than its queue; invariants hold all along, nothing deadlocks."""
    network = make_network(nx.random_regular_graph(4, 12, seed=2), output_queue="reserved", output_buffer=3,
                           servers_per_router=2, vcs=4, input_buffer=3)
    layout = network.layout
    spec = SimSpec(warmup=200, measure=600, chunk=200, check_invariants=True)
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.9, 1)], spec)
    assert not rows[0]["deadlock"] and rows[0]["accepted_load"] > 0.3
    inputs, outputs = state.inputs, state.outputs
    waiting_out = np.asarray(outputs.taken - outputs.gone)[0]
    assert int(np.asarray(inputs.lent).sum()) == int(waiting_out.sum()) > 0
    v_count = layout.vcs
    out_vc = np.arange(layout.out_vcs)
    down_port = np.asarray(network.net.out_down)[out_vc // v_count]
    has_down = down_port >= 0
    taken_down = np.asarray(inputs.taken)[0][np.where(has_down, down_port * v_count + out_vc % v_count, 0)]
    assert (waiting_out[has_down] + taken_down[has_down] <= 3).all()
    assert (np.asarray(outputs.taken)[0].reshape(-1, v_count).sum(axis=1) <= 3).all()


def test_reserved_output_queues_need_cut_through():
    with pytest.raises(ValueError, match="router.output_queue"):
        make_network(nx.cycle_graph(4), output_queue="shared")
    with pytest.raises(ValueError, match="router.output_queue"):
        make_network(nx.cycle_graph(4), output_queue="reserved", flow_control="bubble", vcs=1)
