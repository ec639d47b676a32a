"""Every routing scheme delivers every packet, respects its route-length bound, and its
channel dependency graph (with its VC policy) is acyclic; the watchdog reports deadlock."""
import dataclasses
from typing import ClassVar

import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from conftest import simulate_cfg
from test_engine import _check_invariants

from jaxnet import build
from jaxnet.paths.deadlock import channel_dependency_graph
from jaxnet.routing import ROUTINGS, build_routing
from jaxnet.routing.base import NOT_CANDIDATE, Candidates, RoutingScheme
from jaxnet.sim.explore import explore_routes
from jaxnet.sim.run import quiet_cycles
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.sim.stats import wide_value
from jaxnet.topology import build_topology, from_graph

RRG = {"name": "rrg", "routers": 12, "degree": 4, "seed": 2, "medoid_of": 1, "servers_per_router": 2}
DENSE_RRG = {"name": "rrg", "routers": 16, "degree": 8, "seed": 1, "medoid_of": 1, "servers_per_router": 2}
DRAGONFLY = {"name": "dragonfly", "a": 3, "h": 1, "servers_per_router": 2}
HAMMING = {"name": "hamming", "sides": [3, 3], "servers_per_router": 2}

# (topology, routing config, VC policy, VCs)
CASES = [
    (RRG, {"name": "minimal"}, "hops", 4),
    (RRG, {"name": "source_minimal"}, "hops", 4),
    (RRG, {"name": "valiant"}, "hops", 8),
    (RRG, {"name": "valiant_recomp"}, "hops", 8),
    (DENSE_RRG, {"name": "polarized"}, "hops", 8),
    (HAMMING, {"name": "polarized", "strong": True}, "hops", 4),  # strong has corners on RRGs
    (HAMMING, {"name": "rval"}, "hops", 4),
    (HAMMING, {"name": "polarized"}, "hops", 8),
    (DRAGONFLY, {"name": "dragonfly_minimal"}, "dragonfly", 2),
    (DRAGONFLY, {"name": "dragonfly_minimal"}, "hops", 3),
    (DRAGONFLY, {"name": "valiant", "base": "dragonfly_minimal"}, "dragonfly", 4),
    (DRAGONFLY, {"name": "rval", "base": "dragonfly_minimal"}, "dragonfly", 4),
    (DRAGONFLY, {"name": "rval_recomp", "base": "dragonfly_minimal"}, "dragonfly", 4),
]


def _network(topology, routing, policy, vcs):
    return build.network(build_topology(topology), build_routing(routing),
                         RouterSpec(vcs=vcs, vc_policy=policy))


def _label(case):
    topology, routing, policy, _ = case
    return f"{routing['name']}{'-strong' if routing.get('strong') else ''}-{topology['name']}-{policy}"


# fast tier: one case (every routing also drains in tests/test_behaviour.py); all in the slow tier
DRAIN_FAST = {"rval_recomp-dragonfly-dragonfly"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=() if _label(c) in DRAIN_FAST else pytest.mark.slow)
                                  for c in CASES], ids=[_label(c) for c in CASES])
def test_delivers_every_packet_within_route_bound(case):
    network = _network(*case)
    n = network.topo.n_routers
    rng = np.random.default_rng(0)
    permutation = {"name": "destination_table",
                   "routers": [int(r) for r in rng.permutation(n)]}  # random pairs (some silent)
    window = SimSpec(warmup=0, measure=5000, chunk=1000, generate_until=400)  # then drain
    for traffic in ({"name": "uniform"}, permutation):
        rows, state = simulate_cfg(network, traffic, [(0.6, 1), (1.0, 2)], window)
        for i, row in enumerate(rows):
            generated = int(wide_value(np.asarray(state.stats.generated_all[i])))
            consumed = int(wide_value(np.asarray(state.stats.consumed_all[i])))
            assert generated > 0 and consumed == generated, "packets left undelivered"
            assert int(np.asarray(state.waiting[i]).sum()) == 0
            assert row["routes_over_max_hops"] == 0
            assert not row["deadlock"]


@pytest.mark.parametrize("case", CASES, ids=[_label(c) for c in CASES])
def test_channel_dependencies_acyclic_and_routes_bounded(case):
    network = _network(*case)
    routes = explore_routes(network)
    assert routes.longest <= network.layout.max_hops
    assert nx.is_directed_acyclic_graph(channel_dependency_graph(routes.dependencies))


def test_route_bounds_are_the_papers():
    topo = build_topology(DENSE_RRG)
    d = topo.diameter
    assert ROUTINGS["valiant"]().max_hops(topo, None) == 2 * d
    assert ROUTINGS["polarized"]().max_hops(topo, None) == max(4 * d - 3, 2 * d)


def test_dragonfly_minimal_uses_at_most_one_global_link():
    network = _network({**DRAGONFLY, "a": 4, "h": 2}, {"name": "dragonfly_minimal"}, "hops", 3)
    topo = network.topo
    longest = explore_routes(network).longest
    assert longest == 3 and topo.diameter <= 3
    # graph-minimal routes are sometimes global-global; hierarchical ones never
    from jaxnet.routing.dragonfly import hierarchical_routes
    length, _ = hierarchical_routes(topo)
    assert (length >= topo.distances).all() and (length > topo.distances).any()


def test_polarized_corners_are_counted_not_fatal():
    """On a path graph Polarized may walk away from the target into a corner, where the
    packet waits for good: every such head-cycle is counted, every other packet is
    delivered, and only once nothing else moves does the watchdog report the stuck ones."""
    topo = from_graph(nx.path_graph(5), "path5", 1)
    # available_first: a head takes any free candidate, so some walk into the corner
    network = build.network(topo, build_routing({"name": "polarized"}), RouterSpec(vcs=13, selection="available_first"))
    assert explore_routes(network).corners > 0
    spec = SimSpec(warmup=0, measure=3000, chunk=1000, generate_until=1000, watchdog=300)
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.5, 1)], spec)
    row = rows[0]
    _check_invariants(network, state, 0)  # stuck packets stay counted in the network
    stuck = int(np.asarray(state.waiting[0]).sum())
    generated = int(wide_value(np.asarray(state.stats.generated_all[0])))
    assert stuck > 0 and int(np.asarray(state.queue.taken[0]).sum()) == 0
    assert row["packets_consumed"] == generated - stuck  # the rest drained
    assert row["accepted_load_min"] > 0 and row["routes_over_max_hops"] == 0
    # the watchdog fires watchdog + 1 cycles after the last move, which came after the
    # other packets drained; from then on at least one corner head waits every cycle
    last_move = int(state.watchdog.last_move[0])
    assert row["deadlock"] and spec.generate_until < last_move
    threshold = spec.watchdog + quiet_cycles(network.layout)  # sim.watchdog counts from the longest quiet spell
    assert row["deadlock_at"] == last_move + threshold + 1 < spec.total
    assert spec.total - last_move <= row["no_route_events"] <= stuck * spec.total


@dataclasses.dataclass(frozen=True)
class _Clockwise(RoutingScheme):
    """Test-only: always clockwise around a ring on VC 0 (a cyclic channel dependency)."""

    name: ClassVar[str] = "clockwise"
    vc_policies: ClassVar[tuple[str, ...]] = ("dateline",)  # its own VC: always 0

    def build_tables(self, topo):
        return {"next": jnp.asarray(topo.neighbor[:, 0])}

    def max_hops(self, topo, tables):
        return 3

    def own_vcs(self, topo, tables):
        return 1  # deliberately claims one VC is enough

    def candidates(self, tables, router, packets, ports):
        cost = jnp.full((router.shape[0], ports), NOT_CANDIDATE).at[:, 0].set(0)
        return Candidates(cost, vc=jnp.zeros_like(router))


def test_watchdog_reports_a_deadlock():
    ring = nx.cycle_graph(6)
    topo = from_graph(ring, "ring6", 1, port_order=lambda r: [(r + 1) % 6, (r - 1) % 6])
    network = build.network(topo, _Clockwise(), RouterSpec(vcs=1, input_buffer=1, output_buffer=1))
    traffic = {"name": "destination_table", "routers": [(r + 3) % 6 for r in range(6)]}
    rows, _ = simulate_cfg(network, traffic, [(1.0, 1)], SimSpec(warmup=0, measure=4000, chunk=1000, watchdog=200))
    assert rows[0]["deadlock"] and rows[0]["deadlock_at"] > 0
    assert explore_routes(network).dependencies.size > 0


def test_bad_routing_parameters():
    with pytest.raises(ValueError, match="routing.name"):
        build_routing({"name": "nope"})
    with pytest.raises(ValueError, match="routing.base"):
        _network(RRG, {"name": "valiant", "base": "nope"}, "hops", 8)
    with pytest.raises(ValueError, match="routing.name"):
        _network(RRG, {"name": "rval"}, "hops", 8)  # an RRG has no partitions
    with pytest.raises(ValueError, match="router.vc_policy"):
        _network(RRG, {"name": "minimal"}, "dragonfly", 8)
    with pytest.raises(ValueError, match="router.vcs"):
        _network(DRAGONFLY, {"name": "valiant", "base": "dragonfly_minimal"}, "dragonfly", 3)


@pytest.mark.parametrize("policy, buffers", [("lowest", None), ("random", 2), ("dest", 3), ("dest", 1)])
def test_injection_buffer_policies_deliver(policy, buffers):
    topo = build_topology(RRG)
    network = build.network(topo, build_routing({"name": "minimal"}),
                            RouterSpec(vcs=4, injection_buffers=buffers, injection_policy=policy))
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.8, 1)], SimSpec(warmup=0, measure=2000, chunk=500,
                                                                           generate_until=800))
    assert int(wide_value(np.asarray(state.stats.consumed_all[0]))) == int(
        wide_value(np.asarray(state.stats.generated_all[0]))) > 0
    occupancy = rows[0]["input_vc_occupancy"]
    assert len(occupancy) == 4


def test_too_many_injection_buffers_is_an_error():
    with pytest.raises(ValueError, match="router.injection_buffers"):
        RouterSpec(vcs=2, injection_buffers=3)


def test_narrow_tables_keep_their_values():
    """Distances stored narrow for the cache (`routing.base.narrow_ints`) read back exactly."""
    from jaxnet.routing.base import narrow_ints

    for top, dtype in ((0, np.uint8), (255, np.uint8), (256, np.uint16), (70000, np.uint32)):
        table = np.array([[0, top], [top // 2, 1]], np.int64)
        narrow = narrow_ints(table)
        assert narrow.dtype == dtype
        np.testing.assert_array_equal(narrow.astype(np.int64), table)
