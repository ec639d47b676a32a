"""Analytic bounds and the papers' qualitative results, on small networks (issues 4 and 5)."""
import pytest
from conftest import simulate_cfg

from jaxnet.routing import build_routing
from jaxnet.sim.run import Network
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology

WINDOW = SimSpec(warmup=1000, measure=3000, chunk=1000)
P = 2  # servers per router
DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": P}
RRG = {"name": "rrg", "routers": 32, "degree": 8, "seed": 1, "medoid_of": 1,
       "servers_per_router": 5}  # about degree / average distance, as the Polarized paper


def saturated(topology, routing, traffic, vcs, policy="hops", load=1.0, selection="available_first"):
    network = Network.build(build_topology(topology), build_routing(routing),
                            RouterSpec(vcs=vcs, vc_policy=policy, selection=selection))
    rows, _ = simulate_cfg(network, traffic, [(load, 1)], WINDOW)
    assert not rows[0]["deadlock"]
    return rows[0]["accepted_load"]


@pytest.mark.parametrize("lam", [1, 2])
def test_antmill_caps_minimal_at_one_over_p_lambda(lam):
    topo = {"name": "rrg", "routers": 24, "degree": 4, "seed": 1, "medoid_of": 1, "servers_per_router": P}
    traffic = {"name": "antmill", "lam": lam, "unique": True, "delta": None, "server_map": "same",
               "search_seed": 1, "search_seconds": 20.0}
    accepted = saturated(topo, {"name": "minimal"}, traffic, vcs=5)
    bound = 1 / (P * lam)
    assert accepted <= bound * 1.005
    assert accepted >= bound * 0.9


def test_adv_local_caps_minimal_at_one_over_p():
    accepted = saturated(DRAGONFLY, {"name": "minimal"}, {"name": "adv_local"}, vcs=3)
    assert accepted == pytest.approx(1 / P, rel=0.02)


def test_adv_group_caps_hierarchical_minimal_but_not_graph_minimal():
    traffic = {"name": "adv_group", "offset": 1}
    hierarchical = saturated(DRAGONFLY, {"name": "dragonfly_minimal"}, traffic, vcs=2, policy="dragonfly")
    assert hierarchical == pytest.approx(1 / (4 * P), rel=0.02)  # one global link per group pair
    graph_minimal = saturated(DRAGONFLY, {"name": "minimal"}, traffic, vcs=3)
    assert graph_minimal > 1.5 * hierarchical  # some shortest routes use two global links


def test_hot_region_stays_under_the_valiant_paper_bound():
    """25% of traffic to 12.5% of servers: MIN accepts at most 12.5 / (25 + 0.125 * 75)."""
    accepted = saturated(DRAGONFLY, {"name": "dragonfly_minimal"}, {"name": "hot_region"},
                         vcs=2, policy="dragonfly")
    assert accepted <= 0.125 / (0.25 + 0.125 * 0.75) * 1.02


def test_valiant_reaches_about_half_of_minimal_under_uniform():
    minimal = saturated(RRG, {"name": "minimal"}, {"name": "uniform"}, vcs=3)
    valiant = saturated(RRG, {"name": "valiant"}, {"name": "uniform"}, vcs=6)
    assert 0.35 <= valiant / minimal <= 0.65


def test_rval_on_adv_local_far_above_valiant():
    kwargs = dict(topology=DRAGONFLY, traffic={"name": "adv_local"}, vcs=4, policy="dragonfly")
    valiant = saturated(routing={"name": "valiant", "base": "dragonfly_minimal"}, **kwargs)
    restricted = saturated(routing={"name": "rval", "base": "dragonfly_minimal"}, **kwargs)
    assert restricted > 1.3 * valiant


NEIGHBOUR = {"name": "neighbour_permutation", "server_map": "same", "mixing_sweeps": 20}


def test_polarized_algorithm_1_against_minimal_on_a_small_rrg():
    """The Polarized paper's Algorithm 1 (best_first): at least minimal's throughput under
    neighbour permutations (equal here: the occupancy it sees on the saturated link stays
    below w1 = 64 phits, so it never leaves the direct link) and within 10% of it under
    uniform traffic. docs/routing.md, "Polarized and selection order"."""
    def pair(traffic):
        return [saturated(RRG, {"name": name}, traffic, vcs=vcs, selection="best_first")
                for name, vcs in (("minimal", 3), ("polarized", 9))]

    minimal_n, polarized_n = pair(NEIGHBOUR)
    assert polarized_n >= 0.98 * minimal_n
    minimal_u, polarized_u = pair({"name": "uniform"})
    assert polarized_u >= 0.9 * minimal_u


def test_polarized_leaves_a_saturated_link_when_unavailable_outputs_are_dropped_first():
    """DESIGN's order (available_first): Polarized takes a longer route whenever the direct
    output cannot take the packet, and beats minimal by 2x on neighbour permutations."""
    minimal_n = saturated(RRG, {"name": "minimal"}, NEIGHBOUR, vcs=3)
    polarized_n = saturated(RRG, {"name": "polarized"}, NEIGHBOUR, vcs=9)
    assert polarized_n >= 2 * minimal_n
