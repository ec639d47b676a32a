"""Link faults (`topology.faults`, jaxnet.topology.faults): links removed from any topology,
routing rebuilt on the faulty graph and every route checked (jaxnet.build.check_faults)."""
import dataclasses

import numpy as np
import pytest
from conftest import simulate_cfg

from jaxnet import build
from jaxnet.sim.explore import explore_routes
from jaxnet.sim.spec import SimSpec
from jaxnet.topology.faults import links_of

RING = {"name": "torus", "sides": [6], "servers_per_router": 2}  # a ring of 6 routers


def test_removing_one_link_of_a_ring_reroutes_the_long_way_and_stays_deadlock_free():
    """Without link 0-1 the ring is a path: minimal routes from 0 to 1 take the 5 hops round
    the other way, nothing crosses the failed link, and every packet is delivered."""
    whole = build.network(build.topology(RING), build.routing({"name": "minimal"}), build.router({"vcs": "auto"}))
    faulty_topo = build.topology({**RING, "faults": {"links": [[1, 0]]}})
    assert faulty_topo.failed_links.tolist() == [[0, 1]] and "faults" in faulty_topo.name
    assert whole.topo.distances[0, 1] == 1 and faulty_topo.distances[0, 1] == faulty_topo.distances[1, 0] == 5
    assert sorted(links_of(faulty_topo).tolist()) == [[0, 5], [1, 2], [2, 3], [3, 4], [4, 5]]
    network = build.network(faulty_topo, build.routing({"name": "minimal"}), build.router({"vcs": "auto"}))
    routes = explore_routes(network)
    assert routes.longest == network.layout.vcs == 5 and whole.layout.vcs == 3
    assert len(routes.served) == 30 and len(routes.stuck) == 0 and len(routes.dangling) == 0
    # the channels used: none leaves router 0 or 1 towards the other
    ports, vcs = network.layout.ports, network.layout.vcs
    used = np.unique(routes.dependencies) // vcs
    router, port = used // ports, used % ports
    assert not np.any((faulty_topo.neighbor[router, port] < 0))
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.3, 1)],
                               SimSpec(warmup=0, measure=2400, chunk=600, generate_until=600))
    assert not rows[0]["deadlock"] and rows[0]["packets_consumed"] > 0
    assert int(np.asarray(state.waiting).sum()) == 0 and int(np.asarray(state.queue.taken).sum()) == 0
    assert rows[0]["failed_links"] == 1 and rows[0]["failed_link_fraction"] == pytest.approx(1 / 6)


def test_random_faults_follow_their_seed():
    rrg = {"name": "rrg", "routers": 16, "degree": 4, "seed": 1, "servers_per_router": 1}
    drawn = lambda **faults: build.topology({**rrg, "faults": faults}).failed_links.tolist()  # noqa: E731
    assert drawn(count=3, seed=1) == drawn(count=3, seed=1) != drawn(count=3, seed=2)
    assert len(drawn(fraction=0.125, seed=1)) == 4  # of 32 links
    topo = build.topology({**rrg, "faults": {"count": 3, "seed": 1}})
    assert (topo.neighbor >= 0).sum() == 2 * (32 - 3) and np.array_equal(topo.neighbor >= 0, topo.peer_port >= 0)
    assert build.topology({**rrg, "faults": None}).failed_links is None


TORUS = {"name": "torus", "sides": [4, 4], "servers_per_router": 1}  # 32 links


@pytest.mark.parametrize("topology, faults, message", [
    (TORUS, {"count": 1, "fraction": 0.1}, "exactly one of count, fraction or links"),
    (TORUS, {"links": [[0, 5]]}, "a link of"),
    (TORUS, {"count": 99}, "must be an integer in [0, 32]"),
    (TORUS, {"fraction": 1.0}, "must be a number in [0.0, 1.0)"),
    (TORUS, {"counts": 2}, "unknown key"),
    (RING, {"links": [[0, 1], [3, 4]]}, "disconnects"),
])
def test_bad_faults_are_one_line(topology, faults, message):
    with pytest.raises(ValueError, match="topology.faults") as err:
        build.topology({**topology, "faults": faults})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_schemes_that_do_not_follow_the_graph_are_refused():
    """DOR and the Angara tables follow coordinates and their own tables, not the graph: on a
    torus with a failed link DOR is left with no candidate towards the pairs that needed it,
    and the tables' routes take the failed link (refused where the table is turned into
    ports); each is refused in one line."""
    topo = build.topology({"name": "torus", "sides": [4, 4], "servers_per_router": 1, "faults": {"links": [[0, 1]]}})
    with pytest.raises(ValueError, match=r"routing=dor is invalid on torus.*cannot serve \d+ router pair\(s\) \(0->1, "):
        build.network(topo, build.routing({"name": "dor"}), build.router({"vcs": 2}))
    with pytest.raises(ValueError, match=r"path \[0, 1\] of pair \(0, 1\) is not a walk .* over links of torus.*faults"):
        build.network(topo, build.routing({"name": "torus_table", "algorithm": "bfs"}), build.router({"vcs": 2}))
    build.network(topo, build.routing({"name": "minimal"}), build.router({"vcs": "auto"}))  # rebuilt on the graph


def test_corners_are_logged_and_pairs_without_a_route_refused(caplog, monkeypatch):
    """On a path (a ring with a failed link) every pair has a Polarized route that arrives, but
    some routes head for the wrong end and stop there (corners, as the paper says of paths):
    the network is built and the corners logged. A pair without any route that arrives is
    refused, naming it."""
    topo = build.topology({**RING, "faults": {"links": [[2, 3]]}})  # the path 3-4-5-0-1-2
    with caplog.at_level("WARNING", logger="jaxnet"):
        network = build.network(topo, build.routing({"name": "polarized"}), build.router({"vcs": "auto"}))
    routes = explore_routes(network)
    assert len(routes.served) == 30 and len(routes.stuck) > 0
    assert "may reach a router with no candidate port" in caplog.text
    served = routes.served[1:]  # as if the first pair had no route that arrives
    monkeypatch.setattr(build, "explore_routes", lambda *a, **k: dataclasses.replace(routes, served=served))
    pair = "->".join(map(str, routes.served[0]))
    with pytest.raises(ValueError, match=f"routing=polarized is invalid on .*cannot serve 1 router pair.*{pair}"):
        build.network(topo, build.routing({"name": "polarized"}), build.router({"vcs": "auto"}))


def test_routes_over_failed_links_are_refused(monkeypatch):
    """A scheme whose candidates include a port with no link behind it is refused, naming one."""
    topo = build.topology({**RING, "faults": {"links": [[0, 1]]}})
    routes = explore_routes(build.network(topo, build.routing({"name": "minimal"}), build.router({"vcs": "auto"})))
    dangling = np.asarray([[0, 1, 1]])
    monkeypatch.setattr(build, "explore_routes", lambda *a, **k: dataclasses.replace(routes, dangling=dangling))
    with pytest.raises(ValueError, match=r"routing=minimal is invalid on torus.*take 1 failed link\(s\) \(router 0 port 1 "
                                         r"towards router 1"):
        build.network(topo, build.routing({"name": "minimal"}), build.router({"vcs": "auto"}))
