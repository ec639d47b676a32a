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
