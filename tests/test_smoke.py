"""Jit smoke tests over every registered routing scheme and traffic pattern, each with its
own conf/ defaults: a new registry entry without a case here fails."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from jaxnet.routing import ROUTINGS, build_routing
from jaxnet.sim.layout import RouterSpec
from jaxnet.sim.run import Network, Window, simulate
from jaxnet.topology import build_topology
from jaxnet.traffic import PATTERNS

CONF = Path(__file__).resolve().parents[1] / "conf"
TORUS = {"name": "torus", "sides": [4, 4], "servers_per_router": 2}
HAMMING = {"name": "hamming", "sides": [4, 4], "servers_per_router": 2}
DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}
RRG = {"name": "rrg", "routers": 16, "degree": 8, "seed": 1, "medoid_of": 1, "servers_per_router": 2}

ROUTING_TOPOLOGY = {
    "allpaths": RRG, "dor": TORUS, "dragonfly_minimal": DRAGONFLY, "ksp": RRG, "minimal": RRG,
    "omni": HAMMING, "polarized": RRG, "rval": HAMMING, "rval_recomp": DRAGONFLY,
    "source_minimal": RRG, "table": RRG, "torus_table": TORUS, "ugal": DRAGONFLY,
    "valiant": RRG, "valiant_recomp": RRG,
}
PATTERN_TOPOLOGY = {name: TORUS for name in PATTERNS} | {
    "adv_group": DRAGONFLY, "adv_local": DRAGONFLY, "antmill": RRG}
PATTERN_OVERRIDES = {"destination_table": {"routers": [(r + 1) % 16 for r in range(16)]}}


def _conf(group, name):
    return yaml.safe_load((CONF / group / f"{name}.yaml").read_text())


def _table_paths(topo):
    """A PathSet-like .npz with the first shortest path of every pair."""
    from jaxnet.routing.path_table import AllMinimalPaths, route_routers

    scheme = AllMinimalPaths()
    tables = scheme.build_tables(topo)
    pair, routers = route_routers(topo, tables)
    first = np.unique(pair, return_index=True)[1]
    return {"paths": routers[first][:, None, :], "pair_src": (pair[first] // topo.n_routers),
            "pair_dst": pair[first] % topo.n_routers}


def _smoke(topology, routing_cfg, traffic_cfg, tmp_path=None):
    topo = build_topology(topology)
    if routing_cfg["name"] == "table":
        path_file = tmp_path / "paths.npz"
        np.savez(path_file, **_table_paths(topo))
        routing_cfg = {**routing_cfg, "path_file": str(path_file)}
    routing = build_routing(routing_cfg)
    vcs = routing.vcs_needed(topo, routing.build_tables(topo), "hops")
    network = Network.build(topo, routing, RouterSpec(vcs=vcs))
    rows, _ = simulate(network, traffic_cfg, [(0.5, 1)], Window(50, 150, chunk=100))
    assert rows[0]["generated_load"] > 0


def test_every_registered_variant_has_a_smoke_case():
    assert set(ROUTINGS) == set(ROUTING_TOPOLOGY)
    assert set(PATTERNS) <= set(PATTERN_TOPOLOGY)


@pytest.mark.parametrize("name", sorted(ROUTINGS))
def test_routing_jits_and_runs(name, tmp_path):
    _smoke(ROUTING_TOPOLOGY[name], _conf("routing", name), {"name": "uniform"}, tmp_path)


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_traffic_jits_and_runs(name):
    cfg = {**_conf("traffic", name), **PATTERN_OVERRIDES.get(name, {})}
    _smoke(PATTERN_TOPOLOGY[name], {"name": "minimal"}, cfg)
