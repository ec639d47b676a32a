"""scripts/valiant_bounds.py: channel-load bounds of MIN, VAL and RVAL on a Dragonfly, the
measure behind the Restricted Valiant rows of docs/fidelity.md."""
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script

from jaxnet.topology import build_topology
from jaxnet.traffic import build_traffic

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2}


@pytest.fixture(scope="module")
def vb():
    return load_script(ROOT / "scripts" / "valiant_bounds.py")


def brute_force_valiant(topo, paths, demand, choose):
    """Link loads by enumerating every (source, destination, intermediate)."""
    port_of = {(int(u), int(v)): p for u in range(topo.n_routers) for p, v in enumerate(topo.neighbor[u]) if v >= 0}
    load = np.zeros(topo.neighbor.shape)

    def route(a, b):
        return [int(r) for r in paths[a, b] if r >= 0]

    for s in range(topo.n_routers):
        for t in range(topo.n_routers):
            if demand[s, t] == 0:
                continue
            for mid in range(topo.n_routers):
                if choose[s, mid] == 0:
                    continue
                first = route(s, mid)
                hops = first[: first.index(t) + 1] if t in first else first + route(mid, t)[1:]
                for u, v in zip(hops, hops[1:]):
                    load[u, port_of[u, v]] += demand[s, t] * choose[s, mid]
    return load


def test_valiant_loads_equal_the_enumeration_of_every_intermediate(vb):
    """The summed formula (no (s, t, i) triples) against brute force, for VAL's and RVAL's
    intermediate choices and a random demand, first legs that pass the destination included."""
    topo = build_topology(SMALL)
    paths = vb.unique_paths(topo)
    demand = np.random.default_rng(3).random((topo.n_routers, topo.n_routers))
    np.fill_diagonal(demand, 0.0)
    for choose in vb.intermediate_choice(topo, restricted=True):
        assert np.allclose(vb.valiant_loads(topo, paths, demand, choose),
                           brute_force_valiant(topo, paths, demand, choose))


def test_unique_paths_are_the_local_global_local_routes(vb):
    topo = build_topology(SMALL)
    paths = vb.unique_paths(topo)
    hops = (paths >= 0).sum(axis=2) - 1
    assert (np.diag(hops) == 0).all() and hops.max() == 3
    ends = paths[np.arange(topo.n_routers)[:, None], np.arange(topo.n_routers)[None, :], hops]
    assert (ends == np.arange(topo.n_routers)[None, :]).all()


def test_every_server_receives_its_share(vb):
    topo = build_topology(SMALL)
    uniform = vb.arrivals(build_traffic({"name": "uniform"}, topo, 1), 2)
    assert np.allclose(uniform, 1.0)
    hot = vb.arrivals(build_traffic({"name": "hot_region", "fraction": 0.25, "region": 0.125}, topo, 1), 2)
    assert hot.sum() == pytest.approx(topo.n_servers)  # every packet lands somewhere
    assert hot[:9] == pytest.approx(2.75, abs=0.03)  # 0.25 / 0.125 + 0.75, less self-traffic


def test_small_dragonfly_bounds(vb):
    """The Restricted Valiant paper's own bounds where it states them (1/p, 1/(a p), the HOT
    ejection bound) and the channel loads tests/test_paper_bounds.py derives separately."""
    adv_local = vb.bounds(SMALL, vb.PATTERNS["ADV-Local"])
    assert adv_local["MIN"]["bound"] == pytest.approx(1 / 2)
    assert adv_local["VAL"]["bound"] == pytest.approx(0.6)
    assert adv_local["RVAL"]["bound"] == pytest.approx(1.0)
    assert vb.bounds(SMALL, vb.PATTERNS["ADV"])["MIN"]["bound"] == pytest.approx(1 / 8)
    hot = vb.bounds(SMALL, vb.PATTERNS["HOT"])
    assert hot["MIN"]["binding"] == "ejection" and hot["MIN"]["bound"] == pytest.approx(0.3636, abs=0.002)
    # VAL's transit traffic never uses the hot servers' ejection links: a network link binds
    assert hot["VAL"]["binding"] == "global" and hot["VAL"]["bound"] > vb.PAPER_HOT["VAL"]
