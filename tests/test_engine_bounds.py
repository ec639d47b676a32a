"""Analytic throughput bounds where the minimal path is unique (issue 3, item 7)."""
import numpy as np
import pytest
from conftest import simulate_cfg

from jaxnet import build
from jaxnet.routing import build_routing
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology


def _saturated(topo, dest_routers, vcs):
    network = build.network(topo, build_routing({"name": "minimal"}), RouterSpec(vcs=vcs))
    traffic = {"name": "destination_table", "routers": [int(r) for r in dest_routers]}
    rows, _ = simulate_cfg(network, traffic, [(1.0, 1)], SimSpec(warmup=1000, measure=4000, chunk=1000))
    return rows[0]


def test_hamming_next_router_in_row_accepts_one_over_p():
    p = 3
    topo = build_topology({"name": "hamming", "sides": [4, 3], "servers_per_router": p})
    sides = np.array(topo.sides)
    coords = topo.coords.copy()
    coords[:, 0] = (coords[:, 0] + 1) % sides[0]
    index = {tuple(c): r for r, c in enumerate(topo.coords.tolist())}
    dest = [index[tuple(c)] for c in coords.tolist()]
    row = _saturated(topo, dest, vcs=topo.diameter)
    assert row["accepted_load"] == pytest.approx(1 / p, rel=0.02)
    assert row["link_util_max"] == pytest.approx(1.0, abs=0.01)


def test_dragonfly_next_switch_in_group_accepts_one_over_p():
    p = 2
    topo = build_topology({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": p})
    group = topo.group
    dest = []
    for r in range(topo.n_routers):
        members = np.flatnonzero(group == group[r])
        dest.append(members[(np.searchsorted(members, r) + 1) % len(members)])
    row = _saturated(topo, dest, vcs=topo.diameter)
    assert row["accepted_load"] == pytest.approx(1 / p, rel=0.02)
