"""UGAL-L at the source router: route rules, deadlock freedom under adversarial Dragonfly
traffic, throughput against minimal routing, and parameter errors."""
import networkx as nx
import numpy as np
import pytest
from conftest import simulate_cfg
from routing_trace import trace_routes
from test_engine import _check_invariants

from jaxnet import build
from jaxnet.paths.deadlock import is_deadlock_free
from jaxnet.routing import ROUTINGS, build_routing, vc_policy
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology, from_graph
from jaxnet.traffic import PATTERNS

WINDOW = SimSpec(warmup=1000, measure=2000, chunk=500)


@pytest.fixture(scope="module")
def dragonfly():
    return build_topology({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2})


def _adversarial(topo):
    """Every server of group g sends to group g + 1 (ADV+1)."""
    if "adv_group" in PATTERNS:
        return {"name": "adv_group", "offset": 1}
    n_groups = int(topo.group.max()) + 1
    first = {g: int(np.flatnonzero(topo.group == g)[0]) for g in range(n_groups)}
    return {"name": "destination_table",  # fallback: one router of group g + 1
            "routers": [first[(int(g) + 1) % n_groups] + r % 4 for r, g in enumerate(topo.group)]}


@pytest.mark.parametrize("graph", ["dragonfly", "rrg"])
def test_ugal_routes_are_minimal_or_valiant_with_hop_vcs(graph, dragonfly):
    topo = dragonfly if graph == "dragonfly" else from_graph(
        nx.random_regular_graph(4, 20, seed=2), "rrg", 1)
    scheme = build_routing({"name": "ugal"})
    tables = scheme.build_tables(topo)
    assert scheme.max_hops(topo, tables) == 2 * topo.diameter
    assert vc_policy.VC_POLICIES["hops"].vcs_needed(scheme, topo, tables) == 2 * topo.diameter
    src, dst, routes = trace_routes(scheme, topo, choose="random", seed=3)
    lengths = np.array([len(r) for r in routes])
    assert (lengths >= topo.distances[src, dst]).all()
    assert lengths.max() <= 2 * topo.diameter and lengths.max() > topo.diameter
    dist = topo.distances.astype(int)
    for route, s, t in zip(routes, src, dst):
        assert [vc for _, _, vc in route] == list(range(len(route)))
        nodes = [r for r, _, _ in route] + [t]
        # a shortest path s -> m followed by a shortest path m -> t, for some m on the route
        assert any(dist[s, m] == k and dist[m, t] == len(route) - k for k, m in enumerate(nodes))
    assert is_deadlock_free(routes)
    # idle network: exact ties go to the minimal route
    _, _, idle = trace_routes(scheme, topo, choose="first")
    assert [len(r) for r in idle] == topo.distances[src, dst].tolist()


def _run(topo, routing, vcs, traffic, loads, window=WINDOW):
    network = build.network(topo, build_routing(routing), RouterSpec(vcs=vcs))
    rows, state = simulate_cfg(network, traffic, [(load, i + 1) for i, load in enumerate(loads)], window)
    return network, rows, state


@pytest.mark.slow  # about 25 s; UGAL's routes and drain stay in the fast tier (here and tests/test_behaviour.py)
def test_ugal_adversarial_dragonfly_no_deadlock_and_beats_minimal(dragonfly):
    traffic = _adversarial(dragonfly)
    loads = [0.3, 0.6, 1.0]
    network, rows, state = _run(dragonfly, {"name": "ugal"}, 6, traffic, loads)
    for i, row in enumerate(rows):
        _check_invariants(network, state, i)
        assert not row["deadlock"] and row["no_route_events"] == 0
    assert rows[0]["accepted_load"] == pytest.approx(0.3, rel=0.05)
    saturated = rows[-1]["accepted_load"]
    assert saturated > 0.45
    _, minimal, _ = _run(dragonfly, {"name": "minimal"}, 3, traffic, [1.0])
    assert saturated > 1.1 * minimal[0]["accepted_load"]  # graph-minimal (2-global detours)
    if "dragonfly_minimal" in ROUTINGS:  # hierarchical minimal: 1 / (a p) = 0.125
        _, hier, _ = _run(dragonfly, {"name": "dragonfly_minimal"}, 3, traffic, [1.0])
        assert hier[0]["accepted_load"] < 0.14
        assert saturated > 3 * hier[0]["accepted_load"]


def test_ugal_uniform_delivers_and_stays_mostly_minimal(dragonfly):
    network, rows, state = _run(dragonfly, {"name": "ugal"}, 6, {"name": "uniform"}, [0.2, 1.0],
                                SimSpec(warmup=500, measure=1500, chunk=500))
    for i, row in enumerate(rows):
        _check_invariants(network, state, i)
        assert not row["deadlock"]
    assert rows[0]["accepted_load"] == pytest.approx(0.2, rel=0.05)
    assert rows[0]["average_hops"] < dragonfly.average_distance + 0.5


@pytest.mark.slow  # a larger reproduction: slow tier
def test_ugal_threshold_biases_towards_minimal(dragonfly):
    traffic = {"name": "uniform"}
    _, plain, _ = _run(dragonfly, {"name": "ugal"}, 6, traffic, [0.5])
    _, biased, _ = _run(dragonfly, {"name": "ugal", "threshold": 64}, 6, traffic, [0.5])
    assert biased[0]["average_hops"] < plain[0]["average_hops"]


def test_ugal_errors(dragonfly):
    for value in (-1, 1.5, True, "x"):
        with pytest.raises(ValueError, match="routing.threshold"):
            build_routing({"name": "ugal", "threshold": value})
    with pytest.raises(ValueError, match="router.vcs"):
        build.network(dragonfly, build_routing({"name": "ugal"}), RouterSpec(vcs=5))
