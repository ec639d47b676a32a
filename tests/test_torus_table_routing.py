"""Angara routing tables drive the engine (issue 7, item 7)."""
import networkx as nx
import numpy as np
import pytest
from conftest import simulate_cfg

from jaxnet import build
from jaxnet.paths.deadlock import channel_dependency_graph
from jaxnet.routing import build_routing
from jaxnet.routing.route_tables import route_routers
from jaxnet.routing.torus_table import dateline_vcs
from jaxnet.sim.explore import explore_routes
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.sim.stats import wide_value
from jaxnet.topology import build_topology
from jaxnet.traffic import build_traffic

ANGARA = {"name": "torus", "sides": [4, 2, 2, 2], "servers_per_router": 1}


def _network(topology, algorithm):
    return build.network(build_topology(topology), build_routing({"name": "torus_table", "algorithm": algorithm}),
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


TRAFFIC = [
    {"name": "transpose", "address": "bits", "server_map": "same"},
    {"name": "neighbour", "server_map": "same"},
    {"name": "tornado", "server_map": "same"},
    {"name": "all_to_all"},
]
SLOW_TRAFFIC = {"neighbour", "tornado", "all_to_all"}  # fast tier: transpose


def _table_loads(network, traffic):
    """From the tables and the pattern alone, per unit of offered load: the load of every
    channel [R, P] (phits per cycle; capacity 1), the mean route length, the route lengths
    used, and the share of servers that send (one server per router: rows are routers)."""
    topo, paths = network.topo, network.tables.paths
    table = build_traffic(traffic, topo, seed=1)
    demand = table.router_matrix(1) * table.rate[:, None]
    pair, routers = route_routers(topo, paths)
    ports = np.asarray(paths.route).astype(np.int64)
    load, weight = np.zeros(topo.neighbor.shape), {}
    for path, (s, t) in enumerate(zip(*np.divmod(pair, topo.n_routers))):
        if demand[s, t] > 0:
            hops = int((ports[path] >= 0).sum())
            weight[hops] = weight.get(hops, 0.0) + demand[s, t]
            np.add.at(load, (routers[path, :hops], ports[path, :hops]), demand[s, t])
    mean = sum(h * w for h, w in weight.items()) / sum(weight.values())
    return load, mean, set(weight), float(table.rate.mean())


def _sent(network, state):
    """Packets sent on every channel [R, P] in the measurement window."""
    layout = network.layout
    return np.asarray(state.stats.link_packets[0]).reshape(layout.routers, -1)[:, : layout.ports]


@pytest.mark.parametrize("traffic", [pytest.param(t, marks=pytest.mark.slow if t["name"] in SLOW_TRAFFIC else ())
                                     for t in TRAFFIC], ids=[t["name"] for t in TRAFFIC])
def test_tables_carry_the_pattern_along_their_routes(traffic):
    """At 0.7 x the tables' channel-load bound every offered packet is carried (within 4%;
    seeds 1-4 within 1.3%), over exactly the channels the table routes use and with their
    mean length (within 2%; seeds 1-4 within 0.9%); at offered load 1 a drain run delivers
    every packet."""
    network = _network(ANGARA, "sssp")
    load, hops, lengths, active = _table_loads(network, traffic)
    offered = 0.7 * min(1 / load.max(), 1.0)
    rows, state = simulate_cfg(network, traffic, [(offered, 1)],
                               SimSpec(warmup=500, measure=8000, chunk=500, watchdog=1000))
    row = rows[0]
    assert not row["deadlock"]
    assert row["accepted_load"] == pytest.approx(offered * active, rel=0.04)
    assert row["average_hops"] == pytest.approx(hops, rel=0.02)
    assert {h for h, count in enumerate(row["hop_histogram"]) if count} == lengths
    assert np.array_equal(_sent(network, state) > 0, load > 0)
    rows, state = simulate_cfg(network, traffic, [(1.0, 1)],
                               SimSpec(warmup=0, measure=5000, chunk=500, generate_until=500, watchdog=1000))
    generated = int(wide_value(np.asarray(state.stats.generated_all[0])))
    assert generated > 0 and int(wide_value(np.asarray(state.stats.consumed_all[0]))) == generated
    assert int(np.asarray(state.waiting[0]).sum()) == 0 and not rows[0]["deadlock"]


def test_a_wrong_table_fails_the_channel_check():
    """The channel check can fail: BFS tables route neighbour traffic over other channels
    than SSSP ones, and a run of the BFS tables matches its own tables only."""
    bfs, sssp = _network(ANGARA, "bfs"), _network(ANGARA, "sssp")
    traffic = TRAFFIC[1]
    rows, state = simulate_cfg(bfs, traffic, [(0.15, 1)], SimSpec(warmup=200, measure=3000, chunk=500))
    used = _sent(bfs, state) > 0
    assert np.array_equal(used, _table_loads(bfs, traffic)[0] > 0)
    assert not np.array_equal(used, _table_loads(sssp, traffic)[0] > 0)


def test_not_a_torus_is_a_clear_error():
    topo = build_topology({"name": "rrg", "routers": 8, "degree": 3, "seed": 1, "medoid_of": 1,
                           "servers_per_router": 1})
    with pytest.raises(ValueError, match="topology"):
        build.network(topo, build_routing({"name": "torus_table"}), RouterSpec(vcs=2))
