"""routing.first_leg: what a Valiant packet does when its way to the intermediate passes its
destination's router. `shortcut` (the default) is delivered there; `full` goes on to the
intermediate and back, as FOGSim's Valiant does."""
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnet import build
from jaxnet.core import packets as pk
from jaxnet.routing import build_routing
from jaxnet.sim.explore import explore_routes
from jaxnet.sim.spec import RouterSpec
from jaxnet.topology import build_topology

DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2}


def _packet(destination, intermediate, phase):
    packet = np.zeros((1, pk.N_FIELDS), np.int32)
    packet[0, pk.DST_R], packet[0, pk.MID], packet[0, pk.PHASE] = destination, intermediate, phase
    return jnp.asarray(packet)


@pytest.mark.parametrize("first_leg", ["shortcut", "full"])
def test_a_packet_at_its_destination_before_its_intermediate(first_leg):
    scheme = build_routing({"name": "valiant", "base": "dragonfly_minimal", "first_leg": first_leg})
    tables = scheme.build_tables(build_topology(DRAGONFLY))
    here = jnp.asarray([3])
    on_its_way = bool(scheme.delivers(tables, here, _packet(3, 20, 0))[0])
    assert on_its_way == (first_leg == "shortcut")
    assert bool(scheme.delivers(tables, here, _packet(3, 20, 1))[0])  # after the intermediate: always
    assert not bool(scheme.delivers(tables, here, _packet(4, 20, 1))[0])  # elsewhere: never


def test_full_first_legs_are_longer_and_still_reach_every_destination():
    """Every router pair is served under both; some routes grow (those that passed the
    destination), none beyond twice the base's longest."""
    topo = build_topology(DRAGONFLY)
    routes = {}
    for first_leg in ("shortcut", "full"):
        routing = build_routing({"name": "valiant", "base": "dragonfly_minimal", "first_leg": first_leg})
        network = build.network(topo, routing, RouterSpec(vcs=6))
        routes[first_leg] = explore_routes(network, draws=16, seed=1)
        pairs = {tuple(pair) for pair in routes[first_leg].served}
        assert len(pairs) == topo.n_routers * (topo.n_routers - 1) and routes[first_leg].corners == 0
        assert routes[first_leg].longest <= network.layout.max_hops
    assert routes["full"].longest == routes["shortcut"].longest == 6
    assert len(routes["full"].dependencies) > len(routes["shortcut"].dependencies)


def test_bad_first_leg_names_the_parameter():
    with pytest.raises(ValueError, match="routing.first_leg"):
        build_routing({"name": "rval", "first_leg": "half"}).build_tables(build_topology(DRAGONFLY))
