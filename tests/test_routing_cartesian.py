"""Dimension-order routing (tori, meshes) and Omni-WAR-style routing (Hamming graphs):
route lengths, channel dependency graphs, delivery, and parameter errors."""
import networkx as nx
import numpy as np
import pytest
from conftest import simulate_cfg
from routing_trace import trace_routes
from test_engine import _check_invariants

from jaxnet import build
from jaxnet.paths.deadlock import find_deadlock_cycle, is_deadlock_free
from jaxnet.routing import build_routing
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology, from_graph


def _ring_distances(topo, src, dst):
    """Sum over dimensions of the ring (torus) or line (mesh) distance."""
    delta = np.abs(topo.coords[src] - topo.coords[dst])
    sides = np.asarray(topo.sides)
    if topo.name.startswith("torus"):
        delta = np.where(sides >= 3, np.minimum(delta, sides - delta), delta)
    return delta.sum(axis=1)


GRIDS = [("torus", [4, 4]), ("torus", [5, 3]), ("torus", [6]), ("torus", [2, 5]),
         ("mesh", [4, 3])]


@pytest.mark.parametrize("tie", ["plus", "source_parity"])
@pytest.mark.parametrize("name, sides", GRIDS)
def test_dor_routes_are_dimension_ordered_shortest_and_acyclic(name, sides, tie):
    topo = build_topology({"name": name, "sides": sides})
    scheme = build_routing({"name": "dor", "tie": tie})
    src, dst, routes = trace_routes(scheme, topo)
    assert [len(r) for r in routes] == _ring_distances(topo, src, dst).tolist()
    for route in routes:  # dimensions never decrease along a route
        moved = [int(np.flatnonzero(topo.coords[topo.neighbor[r, p]] != topo.coords[r])[0])
                 for r, p, _ in route]
        assert moved == sorted(moved)
    vcs = {vc for route in routes for _, _, vc in route}
    tables = scheme.build_tables(topo)
    assert vcs <= set(range(scheme.own_vcs(topo, tables)))
    assert scheme.own_vcs(topo, tables) == (2 if name == "torus" else 1)
    assert is_deadlock_free(routes)  # channels are (router, port, vc)


def test_dor_tie_rule_on_even_rings():
    topo = build_topology({"name": "torus", "sides": [4]})  # router r has coordinate r
    plus_port, minus_port = 0, 1
    for tie, expected in (("plus", {0: plus_port, 1: plus_port}),
                          ("source_parity", {0: plus_port, 1: minus_port})):
        _, _, routes = trace_routes(build_routing({"name": "dor", "tie": tie}), topo)
        by_pair = {(route[0][0], len(route)): route[0][1] for route in routes if len(route) == 2}
        for s in (0, 1):
            assert by_pair[(s, 2)] == expected[s]


def test_dor_dateline_vcs_on_a_ring():
    topo = build_topology({"name": "torus", "sides": [6]})
    _, _, routes = trace_routes(build_routing({"name": "dor"}), topo)
    for route in routes:
        crossed = False
        for r, p, vc in route:
            nxt = topo.neighbor[r, p]
            crossed |= {r, nxt} == {0, 5}  # the wrap link is the dateline
            assert vc == int(crossed)


def test_without_the_dateline_a_ring_has_a_dependency_cycle():
    """The check can fail: the same routes with every VC 0 close a cycle around the ring."""
    topo = build_topology({"name": "torus", "sides": [6]})
    _, _, routes = trace_routes(build_routing({"name": "dor"}), topo)
    flat = [[(r, p, 0) for r, p, _ in route] for route in routes]
    assert not is_deadlock_free(flat)
    assert find_deadlock_cycle(_cdg(flat)) is not None
    assert is_deadlock_free(routes)


def _cdg(routes):
    graph = nx.DiGraph()
    for route in routes:
        graph.add_edges_from(zip(route, route[1:]))
    return graph


def test_dor_on_a_3d_torus_is_acyclic_with_networkx():
    topo = build_topology({"name": "torus", "sides": [3, 4, 3]})
    _, _, routes = trace_routes(build_routing({"name": "dor"}), topo)
    assert nx.is_directed_acyclic_graph(_cdg(routes))


def _uniform_channel_bound(topo, scheme):
    """1 / max channel load of a deterministic scheme's routes under the papers' uniform
    (each server sends to every other server with probability 1 / (S - 1))."""
    _, _, routes = trace_routes(scheme, topo)
    p, s = topo.servers_per_router, topo.n_servers
    load = np.zeros(topo.neighbor.shape)
    for route in routes:
        for router, port, _ in route:
            load[router, port] += p * p / (s - 1)
    return 1 / load.max()


@pytest.mark.parametrize("name, sides, vcs, reached", [
    pytest.param("torus", [4, 4], 2, 0.6, marks=pytest.mark.slow),  # DOR on a torus drains in tests/test_behaviour.py
    ("mesh", [4, 3], 1, 0.7)])
def test_dor_delivers_every_packet(name, sides, vcs, reached):
    """Saturated, DOR reaches a share of its channel-load bound: about 2/3 on the torus
    (dateline VCs; seeds 1-4: 0.66-0.68 of 0.97), about 0.8 on the mesh (0.79-0.83 of 0.48)."""
    topo = build_topology({"name": name, "sides": sides, "servers_per_router": 2})
    scheme = build_routing({"name": "dor"})
    network = build.network(topo, scheme, RouterSpec(vcs=vcs))
    points = [(0.2, 1), (1.0, 2)]
    rows, state = simulate_cfg(network, {"name": "uniform"}, points, SimSpec(warmup=300, measure=1500, chunk=300))
    for i, row in enumerate(rows):
        _check_invariants(network, state, i)
        assert not row["deadlock"] and row["no_route_events"] == 0
        assert len(row["hop_histogram"]) == topo.diameter + 1
    assert rows[0]["accepted_load"] == pytest.approx(0.2, rel=0.1)
    bound = _uniform_channel_bound(topo, scheme)
    assert reached * bound <= rows[1]["accepted_load"] <= 1.02 * bound


def test_dor_single_pair_hops_exact():
    topo = build_topology({"name": "torus", "sides": [5, 4], "servers_per_router": 1})
    src, dst = 0, 3 + 5 * 2  # ring distances 2 and 2
    routers = [-1] * topo.n_routers
    routers[src] = dst
    network = build.network(topo, build_routing({"name": "dor"}), RouterSpec(vcs=2))
    rows, _ = simulate_cfg(network, {"name": "destination_table", "routers": routers}, [(0.05, 1)],
                       SimSpec(warmup=0, measure=3000, chunk=1000))
    assert rows[0]["packets_consumed"] > 0 and rows[0]["average_hops"] == 4


def test_dor_errors():
    with pytest.raises(ValueError, match="routing.tie"):
        build_routing({"name": "dor", "tie": "minus"})
    with pytest.raises(ValueError, match="topology"):
        build_routing({"name": "dor"}).build_tables(build_topology({"name": "hamming",
                                                                    "sides": [4, 4]}))
    with pytest.raises(ValueError, match="topology"):
        build_routing({"name": "dor"}).build_tables(from_graph(nx.cycle_graph(5), "ring", 1))
    with pytest.raises(ValueError, match="router.vcs"):
        build.network(build_topology({"name": "torus", "sides": [4, 4]}),
                      build_routing({"name": "dor"}), RouterSpec(vcs=1))
    with pytest.raises(ValueError, match="routing=dor"):
        build_routing({"name": "dor", "bogus": 1})


# ---- Omni-WAR-style routing on Hamming graphs -----------------------------------------------

@pytest.mark.parametrize("sides, max_deroutes", [([4, 4], None), ([3, 4, 2], None), ([4, 3], 1),
                                                 ([5, 3], 0)])
def test_omni_random_walks_respect_the_rules(sides, max_deroutes):
    topo = build_topology({"name": "hamming", "sides": sides})
    scheme = build_routing({"name": "omni", "max_deroutes": max_deroutes})
    limit = len(sides) if max_deroutes is None else max_deroutes
    tables = scheme.build_tables(topo)
    assert scheme.max_hops(topo, tables) == topo.diameter + limit
    for seed in (0, 1):
        src, dst, routes = trace_routes(scheme, topo, choose="random", seed=seed)
        extra = [len(r) - topo.distances[s, t] for r, s, t in zip(routes, src, dst)]
        assert min(extra) >= 0 and max(extra) <= limit
        if limit:
            assert max(extra) >= 1  # random choices do deroute
        for route, t in zip(routes, dst):
            last_deroute_dim = -1
            for hop, (r, p, vc) in enumerate(route):
                assert vc == hop
                here, there = topo.coords[r], topo.coords[topo.neighbor[r, p]]
                d = int(np.flatnonzero(here != there)[0])
                assert here[d] != topo.coords[t][d]  # only unaligned dimensions move
                derouted = there[d] != topo.coords[t][d]
                assert not (derouted and d == last_deroute_dim)
                last_deroute_dim = d if derouted else -1
        assert is_deadlock_free(routes)
    _, _, routes = trace_routes(scheme, topo, choose="first")  # no load: minimal preferred
    assert all(len(r) == topo.distances[s, t] for r, s, t in zip(routes, src, dst))


@pytest.mark.slow  # a larger reproduction: slow tier
def test_omni_delivers_every_packet_and_bounds_hops():
    topo = build_topology({"name": "hamming", "sides": [3, 3, 3], "servers_per_router": 2})
    network = build.network(topo, build_routing({"name": "omni"}), RouterSpec(vcs=6))
    sides = np.asarray(topo.sides)
    shifted = topo.coords.copy()
    shifted[:, 0] = (shifted[:, 0] + 1) % sides[0]
    index = {tuple(c): r for r, c in enumerate(topo.coords.tolist())}
    neighbour = {"name": "destination_table",
                 "routers": [index[tuple(c)] for c in shifted.tolist()]}
    window = SimSpec(warmup=300, measure=1500, chunk=300)
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.2, 1), (1.0, 2)], window)
    for i, row in enumerate(rows):
        _check_invariants(network, state, i)
        assert not row["deadlock"] and row["no_route_events"] == 0
        assert len(row["hop_histogram"]) == topo.diameter + 3 + 1
    assert rows[0]["accepted_load"] == pytest.approx(0.2, rel=0.1)
    # every server of a row sends to the next router of its row: minimal gets 1 / p = 0.5.
    # A deroute through the row's third router takes two "-1" links, so with a share x
    # direct the "+1" links carry 2x and the "-1" links 4 (1 - x) times the offered load:
    # at best x = 2/3, load 0.75 over 4/3 hops, which Omni reaches (seeds 1-4: within 0.4%)
    adv, state = simulate_cfg(network, neighbour, [(1.0, 3)], window)
    _check_invariants(network, state, 0)
    assert not adv[0]["deadlock"] and sum(adv[0]["hop_histogram"][3:]) == 0
    assert adv[0]["accepted_load"] == pytest.approx(0.75, rel=0.02)
    assert adv[0]["average_hops"] == pytest.approx(4 / 3, rel=0.02)


def test_omni_errors():
    for key, value in (("max_deroutes", -1), ("max_deroutes", 1.5), ("deroute_penalty", -3)):
        with pytest.raises(ValueError, match=f"routing.{key}"):
            build_routing({"name": "omni", key: value})
    with pytest.raises(ValueError, match="topology"):
        build_routing({"name": "omni"}).build_tables(build_topology({"name": "torus",
                                                                     "sides": [4, 4]}))
    with pytest.raises(ValueError, match="router.vcs"):
        build.network(build_topology({"name": "hamming", "sides": [3, 3]}),
                      build_routing({"name": "omni"}), RouterSpec(vcs=3))
