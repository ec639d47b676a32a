"""routing.intermediates: where the Valiant family draws an intermediate over the whole network.
`all` (the default) among every router; `other_groups` (Dragonfly) outside the source's group,
as FOGSim, the Restricted Valiant paper's simulator, draws its Valiant node."""
import numpy as np
import pytest
from conftest import simulate_cfg

from jaxnet import build
from jaxnet.routing import build_routing
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.sim.stats import wide_value
from jaxnet.topology import build_topology

DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2}
DRAWS = 4000


def _draws(routing, source, destination):
    """MID of DRAWS packets from router `source` to router `destination`."""
    topo = build_topology(DRAGONFLY)
    scheme = build_routing({"base": "dragonfly_minimal", **routing})
    tables = scheme.build_tables(topo)
    bits = np.random.default_rng(7).integers(0, 2**32, DRAWS, dtype=np.uint32)
    n = np.full(DRAWS, 1, np.int32)
    mid = scheme.draw_intermediate(tables, n * source, n * destination, bits)
    return topo, np.asarray(mid)


@pytest.mark.parametrize("name", ["valiant", "rval_recomp"])
def test_default_draws_among_all_routers(name):
    """The default keeps the source's group: about 1 of the 9 groups' routers."""
    topo, mid = _draws({"name": name}, 0, 20)  # groups 0 and 5
    assert build_routing({"name": name}).intermediates == "all"
    counts = np.bincount(mid, minlength=topo.n_routers)
    assert (counts > 0).all()
    assert (topo.group[mid] == 0).mean() == pytest.approx(1 / 9, abs=0.02)


@pytest.mark.parametrize("name", ["valiant", "rval", "valiant_recomp", "rval_recomp"])
def test_other_groups_never_draw_the_source_group(name):
    topo, mid = _draws({"name": name, "intermediates": "other_groups"}, 0, 20)
    outside = topo.group != 0
    counts = np.bincount(mid, minlength=topo.n_routers)
    assert (counts[~outside] == 0).all()
    assert counts[outside].min() > 0.6 * DRAWS / outside.sum()  # uniform over the 32 others
    assert counts[outside].max() < 1.4 * DRAWS / outside.sum()


def test_other_groups_keep_rval_inside_a_shared_group_and_valiant_outside():
    topo, rval = _draws({"name": "rval", "intermediates": "other_groups"}, 0, 2)  # both in group 0
    assert (topo.group[rval] == 0).all() and len(set(rval)) == 4
    _, val = _draws({"name": "valiant", "intermediates": "other_groups"}, 0, 2)
    assert (topo.group[val] != 0).all()


def test_bad_intermediates_name_the_parameter():
    topo = build_topology(DRAGONFLY)
    with pytest.raises(ValueError, match="routing.intermediates"):
        build_routing({"name": "rval", "base": "dragonfly_minimal", "intermediates": "nope"}).build_tables(topo)
    rrg = build_topology({"name": "rrg", "routers": 12, "degree": 4, "seed": 2, "servers_per_router": 2})
    with pytest.raises(ValueError, match="routing.intermediates"):
        build_routing({"name": "valiant", "intermediates": "other_groups"}).build_tables(rrg)


def test_other_groups_deliver_every_packet():
    """Drains (VCs l0 g0 l1 | l2 g1 l3 hold for any intermediate) within the route bound."""
    network = build.network(build_topology(DRAGONFLY),
                            build_routing({"name": "rval_recomp", "base": "dragonfly_minimal",
                                           "intermediates": "other_groups"}),
                            RouterSpec(vcs=4, vc_policy="dragonfly"))
    window = SimSpec(warmup=0, measure=3000, chunk=1000, generate_until=400)  # then drain
    rows, state = simulate_cfg(network, {"name": "adv_group", "offset": 1}, [(1.0, 1)], window)
    generated = int(wide_value(np.asarray(state.stats.generated_all[0])))
    assert generated > 0 and int(wide_value(np.asarray(state.stats.consumed_all[0]))) == generated
    assert rows[0]["routes_over_max_hops"] == 0 and not rows[0]["deadlock"]
