"""Bubble flow control on tori (`router.flow_control: bubble`): one VC, deadlock-free, and
one VC without it refused."""
import numpy as np
import pytest
from conftest import simulate_cfg

from jaxnet import build
from jaxnet.routing import build_routing
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology


def _torus(sides, servers=2):
    return build_topology({"name": "torus", "sides": sides, "servers_per_router": servers})


def _bubble(topo, routing):
    return build.network(topo, build_routing(routing), RouterSpec(vcs=1, flow_control="bubble"))


@pytest.mark.parametrize("sides, routing, traffic", [
    ([4, 4], {"name": "dor"}, {"name": "uniform"}),
    ([4, 4], {"name": "dor"}, {"name": "tornado"}),
    ([4, 2, 2, 2], {"name": "torus_table", "algorithm": "sssp"}, {"name": "transpose", "address": "bits"}),
])
def test_bubble_on_one_vc_never_deadlocks_at_saturation(sides, routing, traffic):
    """Saturated for 1500 cycles, then drained: nothing stuck, every packet delivered."""
    network = _bubble(_torus(sides), routing)
    assert network.layout.vcs == 1 and network.layout.vc_policy.name == "ring"
    spec = SimSpec(warmup=500, measure=5500, chunk=3000, watchdog=500, generate_until=1500)
    rows, state = simulate_cfg(network, traffic, [(1.0, 1), (1.0, 2)], spec)
    assert not any(row["deadlock"] for row in rows)
    assert all(row["packets_consumed"] > 0 for row in rows)
    assert np.all(np.asarray(state.waiting) == 0)
    assert np.all(np.asarray(state.queue.taken) == 0)


def test_bubble_lets_one_dimension_tornado_reach_the_reference():
    """8x8 torus, DOR, x + 3 tornado (the reference simulator accepts 0.267): continuing
    packets keep their ring moving while entering ones wait for two free slots."""
    network = _bubble(_torus([8, 8], servers=1), {"name": "dor"})
    rows, _ = simulate_cfg(network, {"name": "tornado", "dimensions": [0]}, [(0.5, 1)],
                           SimSpec(warmup=2000, measure=4000, chunk=3000))
    assert abs(rows[0]["accepted_load"] - 0.267) < 0.02


def test_one_vc_on_a_torus_without_bubble_is_refused():
    topo = _torus([4, 4])
    with pytest.raises(ValueError, match="router.vcs"):  # the dateline needs two VCs
        build.network(topo, build_routing({"name": "dor"}), RouterSpec(vcs=1))
    with pytest.raises(ValueError, match="router.vc_policy.*bubble"):
        build.network(topo, build_routing({"name": "dor"}), RouterSpec(vcs=1, vc_policy="ring"))


def test_bubble_needs_rings():
    hamming = build_topology({"name": "hamming", "sides": [4, 4], "servers_per_router": 1})
    with pytest.raises(ValueError, match="topology"):
        build.network(hamming, build_routing({"name": "minimal"}), RouterSpec(vcs=2, flow_control="bubble"))
    with pytest.raises(ValueError, match="router.flow_control"):
        RouterSpec(flow_control="wormhole")
