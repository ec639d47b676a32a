"""Router options that change what a head sees of its candidate outputs.

`router.request_busy_port: false`: an output port receiving a packet through the crossbar (on
any of its VCs) takes no new request, as the reference simulator's
`allow_request_busy_port: false` does; `true` (the default) refuses only the held VC.
`router.occupancy: port`: adaptive selection reads the port's phits, every VC summed."""
import jax
import jax.numpy as jnp
import networkx as nx
import pytest
from conftest import make_network, simulate_cfg

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
