"""scripts/antmill_bounds.py: channel-load bounds of minimal and 8-KSP routing on RRGs, the
measure behind the Ant Mill rows of docs/fidelity.md."""
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from conftest import load_script

from jaxnet.routing.ksp import KShortestPaths
from jaxnet.topology import build_topology

ROOT = Path(__file__).resolve().parents[1]
TINY = {"name": "rrg", "routers": 16, "degree": 3, "seed": 2, "medoid_of": 1, "servers_per_router": 2}


@pytest.fixture(scope="module")
def ab():
    return load_script(ROOT / "scripts" / "antmill_bounds.py")


@pytest.fixture(scope="module")
def topo():
    return build_topology(TINY)


def graph_of(topo):
    return nx.DiGraph([(u, int(v)) for u in range(topo.n_routers) for v in topo.neighbor[u] if v >= 0])


def port_of(topo, u, v):
    return int(np.nonzero(topo.neighbor[u] == v)[0][0])


def random_demand(topo, seed=3):
    rng = np.random.default_rng(seed)
    demand = rng.integers(0, 3, size=(topo.n_routers, topo.n_routers)).astype(float)
    np.fill_diagonal(demand, 0.0)
    return demand


def test_minimal_split_matches_an_enumeration_of_every_shortest_path(ab, topo):
    demand = random_demand(topo)
    graph = graph_of(topo)
    expected = np.zeros(topo.neighbor.shape)
    for s, t in zip(*np.nonzero(demand)):
        paths = list(nx.all_shortest_paths(graph, int(s), int(t)))
        for path in paths:
            for u, v in zip(path, path[1:]):
                expected[u, port_of(topo, u, v)] += demand[s, t] / len(paths)
    assert np.allclose(ab.minimal_split_loads(topo, demand, chunk=7), expected)


def test_the_mean_minimal_load_is_the_split_loads_mean_and_at_most_their_maximum(ab, topo):
    demand = np.ones((topo.n_routers, topo.n_routers))
    loads = ab.minimal_split_loads(topo, demand)
    mean = ab.mean_minimal_load(topo, demand)
    assert mean == pytest.approx(loads[topo.neighbor >= 0].mean())
    assert mean <= loads.max()


def test_ksp_loads_match_walking_each_route(ab, topo):
    demand = random_demand(topo, seed=5)
    routes = KShortestPaths(k=4, seed=1).build_routes(topo)
    R = topo.n_routers
    expected = np.zeros(topo.neighbor.shape)
    per_pair = np.bincount(routes.pair, minlength=R * R)
    hops_total, weight_total = 0.0, 0.0
    for pair, ports in zip(routes.pair, routes.ports):
        s, t = divmod(int(pair), R)
        here, hops = s, 0
        for port in ports:
            if port < 0:
                break
            expected[here, port] += demand[s, t] / per_pair[pair]
            here, hops = int(topo.neighbor[here, port]), hops + 1
        assert here == t
        hops_total += hops * demand[s, t] / per_pair[pair]
        weight_total += demand[s, t] / per_pair[pair]
    loads, mean_hops = ab.path_loads(topo, routes, demand)
    assert np.allclose(loads, expected)
    assert mean_hops == pytest.approx(hops_total / weight_total)


def test_the_antmill_cycle_under_minimal_meets_remark_1_exactly(ab):
    """(H, lam) with unique shortest paths: minimal routing carries at most 1 / (p lam)."""
    topo = build_topology({"name": "rrg", "routers": 64, "degree": 5, "seed": 1, "medoid_of": 1,
                           "servers_per_router": 2})
    for lam in (1, 2):
        demand = ab.router_demand(topo, {"name": "antmill", "lam": lam, "unique": True, "delta": 2,
                                         "search_seed": 1})
        load = ab.minimal_split_loads(topo, demand).max()
        assert ab.bound(load, demand, 2) == pytest.approx(1 / (2 * lam))


def test_the_bound_counts_ejection(ab):
    demand = np.array([[0.0, 1.0], [1.0, 0.0]]) * 2  # 2 servers per router, each sending 1
    assert ab.bound(0.5, demand, 2) == pytest.approx(1.0)
    assert ab.bound(4.0, demand, 2) == pytest.approx(0.25)
