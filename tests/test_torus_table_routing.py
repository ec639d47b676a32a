"""Angara routing tables drive the engine (issue 7, item 7)."""
import networkx as nx
import numpy as np
import pytest
from conftest import simulate_cfg

from jaxnet.paths.deadlock import channel_dependency_graph
from jaxnet.routing import build_routing
from jaxnet.routing.torus_table import dateline_vcs
from jaxnet.sim.explore import explore_routes
from jaxnet.sim.run import Network
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology

ANGARA = {"name": "torus", "sides": [4, 2, 2, 2], "servers_per_router": 1}


def _network(topology, algorithm):
    return Network.build(build_topology(topology), build_routing({"name": "torus_table", "algorithm": algorithm}),
                         RouterSpec(vcs=2))


@pytest.mark.parametrize("topology", [ANGARA, {"name": "torus", "sides": [4, 4], "servers_per_router": 1}])
@pytest.mark.parametrize("algorithm", ["bfs", "sssp"])
def test_dateline_vcs_make_the_tables_deadlock_free(topology, algorithm):
    network = _network(topology, algorithm)
    routes = explore_routes(network, draws=1)
    assert routes.longest == network.layout.max_hops == network.topo.diameter  # minimal routes
    assert nx.is_directed_acyclic_graph(channel_dependency_graph(routes.dependencies))
    # on one VC the straight ring cycles remain: the check can fail
    one_vc = routes.dependencies - routes.dependencies % 2
    assert not nx.is_directed_acyclic_graph(channel_dependency_graph(one_vc))


def test_dateline_rule_on_a_ring():
    topo = build_topology({"name": "torus", "sides": [5], "servers_per_router": 1})
    routers = np.array([[3, 4, 0, 1], [1, 0, 4, -1], [4, 0, -1, -1]])
    assert dateline_vcs(topo, routers).tolist() == [[0, 1, 1], [0, 1, 0], [1, 0, 0]]


@pytest.mark.parametrize("traffic", [
    {"name": "transpose", "address": "bits", "server_map": "same"},
    {"name": "neighbour", "server_map": "same"},
    {"name": "tornado", "server_map": "same"},
    {"name": "all_to_all"},
])
def test_tables_simulate_without_deadlock(traffic):
    network = _network(ANGARA, "sssp")
    rows, _ = simulate_cfg(network, traffic, [(0.5, 1), (1.0, 1)], SimSpec(warmup=500, measure=1500, chunk=500, watchdog=1000))
    for row in rows:
        assert not row["deadlock"] and row["accepted_load"] > 0.1
        assert row["average_hops"] <= network.topo.diameter


def test_not_a_torus_is_a_clear_error():
    topo = build_topology({"name": "rrg", "routers": 8, "degree": 3, "seed": 1, "medoid_of": 1,
                           "servers_per_router": 1})
    with pytest.raises(ValueError, match="topology"):
        Network.build(topo, build_routing({"name": "torus_table"}), RouterSpec(vcs=2))
