"""Behaviour fixture: the full results rows of a fixed matrix of small runs covering every
routing scheme, every traffic pattern and the router options. A refactor or a speed-up must
reproduce them exactly; a deliberate model change re-records them
(`JAXNET_RECORD_BEHAVIOUR=1 python -m pytest tests/test_behaviour.py`) and says why in the
commit. Every run also drains to empty: every generated packet is delivered.

Every registered routing and pattern has a case: a routing on its network below, or else on
the first of the test networks it builds on; a pattern on the 4x4 torus unless named below.
A new entry's case runs and must drain from the start; recording pins its rows."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import simulate_cfg

from jaxnet import build
from jaxnet.routing import ROUTINGS, build_routing, vc_policy
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology
from jaxnet.traffic import PATTERNS

CONF = Path(__file__).resolve().parents[1] / "conf"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "behaviour_rows.json"
RECORD = os.environ.get("JAXNET_RECORD_BEHAVIOUR") == "1"
# how and where a row was simulated, not what: left out of the comparison
TIMING_KEYS = {"wall_s", "first_chunk_s", "batch", "device", "devices", "cycles_simulated", "topology_name",
               # provenance: what `auto` resolved to and how the batch ran (the rows pin the results)
               "vcs", "vc_policy", "selection", "vmap_width", "work_lists"}

TORUS = {"name": "torus", "sides": [4, 4], "servers_per_router": 2}
HAMMING = {"name": "hamming", "sides": [4, 4], "servers_per_router": 2}
DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}
RRG = {"name": "rrg", "routers": 16, "degree": 8, "seed": 1, "medoid_of": 1, "servers_per_router": 2}

# where each routing runs (others: the first of NETWORKS they build on)
ROUTING_TOPOLOGY = {
    "allpaths": RRG, "dor": TORUS, "dragonfly_minimal": DRAGONFLY, "ksp": RRG, "minimal": RRG,
    "omni": HAMMING, "polarized": RRG, "rval": HAMMING, "rval_recomp": DRAGONFLY,
    "source_minimal": RRG, "table": RRG, "torus_table": TORUS, "ugal": DRAGONFLY,
    "valiant": RRG, "valiant_recomp": RRG,
}
NETWORKS = (RRG, HAMMING, TORUS, DRAGONFLY)
PATTERN_TOPOLOGY = {name: TORUS for name in PATTERNS} | {
    "adv_group": DRAGONFLY, "adv_local": DRAGONFLY, "antmill": RRG}
PATTERN_OVERRIDES = {"destination_table": {"routers": [(r + 1) % 16 for r in range(16)]}}

# Router and scheme options beyond the defaults: (case name, topology, routing, traffic, router).
OPTION_CASES = [
    ("polarized_best_first", HAMMING, {"name": "polarized"}, {"name": "uniform"},
     {"selection": "best_first"}),
    ("valiant_dragonfly_vcs", DRAGONFLY, {"name": "valiant", "base": "dragonfly_minimal"},
     {"name": "adv_group"}, {"vc_policy": "dragonfly", "vcs": 4}),
    ("rval_recomp_dest_injection", DRAGONFLY, {"name": "rval_recomp", "base": "dragonfly_minimal"},
     {"name": "adv_local"}, {"vc_policy": "dragonfly", "vcs": 4, "injection_buffers": 2,
                             "injection_policy": "dest"}),
    ("minimal_random_injection", HAMMING, {"name": "minimal"}, {"name": "uniform"},
     {"injection_buffers": 2, "injection_policy": "random"}),
    ("latencies_and_speedup", DRAGONFLY, {"name": "dragonfly_minimal"}, {"name": "uniform"},
     {"link_latency": {"local": 1, "global": 3}, "router_latency": 1, "crossbar_speedup": 2}),
    ("small_packets_and_buffers", RRG, {"name": "minimal"}, {"name": "uniform"},
     {"packet_size": 8, "input_buffer": 3, "output_buffer": 1, "source_queue": 5}),
    ("injection_buffer_deeper", RRG, {"name": "minimal"}, {"name": "uniform"},
     {"input_buffer": 2, "injection_buffer": 6}),
    ("polarized_strong", HAMMING, {"name": "polarized", "strong": True}, {"name": "tornado"}, {}),
    ("ugal_threshold", DRAGONFLY, {"name": "ugal", "threshold": 32}, {"name": "adv_group"}, {}),
    ("dor_bubble", TORUS, {"name": "dor"}, {"name": "tornado", "dimensions": [0]},
     {"flow_control": "bubble", "vcs": 1}),
    ("valiant_fogsim_allocator", DRAGONFLY, {"name": "valiant", "base": "dragonfly_minimal"}, {"name": "uniform"},
     {"vc_policy": "dragonfly", "vcs": 4, "allocator": "port", "request_busy_port": False}),
    ("minimal_reserved_output_queue", RRG, {"name": "minimal"}, {"name": "uniform"}, {"output_queue": "reserved"}),
    ("valiant_fogsim_output_queue", DRAGONFLY, {"name": "valiant", "base": "dragonfly_minimal"}, {"name": "uniform"},
     {"vc_policy": "dragonfly", "vcs": 4, "allocator": "port", "request_busy_port": False,
      "output_queue": "reserved", "output_buffer": 4}),
    ("rval_recomp_fogsim_output_queue", DRAGONFLY, {"name": "rval_recomp", "base": "dragonfly_minimal"},
     {"name": "adv_group"}, {"vc_policy": "dragonfly", "vcs": 4, "allocator": "port", "request_busy_port": False,
                             "output_queue": "reserved", "output_buffer": 8}),
    ("torus_table_bubble", TORUS, {"name": "torus_table", "algorithm": "bfs"}, {"name": "uniform"},
     {"flow_control": "bubble", "vcs": 1}),
]

POINTS = [(0.4, 1), (0.9, 2)]
WINDOW = dict(warmup=100, measure=900, chunk=500)
DRAIN_AFTER = 300  # generation stops here; the rest of the window drains the network
# minimal routing under ADV+1 queues a group's packets behind one global link: 500 more cycles to drain
LONGER_DRAIN = {"traffic_adv_group": 500}


def _conf(group, name):
    return yaml.safe_load((CONF / group / f"{name}.yaml").read_text())


def _table_paths(topo):
    """A PathSet-like .npz with the first shortest path of every pair."""
    from jaxnet.routing.allpaths import AllMinimalPaths
    from jaxnet.routing.route_tables import route_routers

    scheme = AllMinimalPaths()
    pair, routers = route_routers(topo, scheme.build_tables(topo))
    first = np.unique(pair, return_index=True)[1]
    return {"paths": routers[first][:, None, :], "pair_src": pair[first] // topo.n_routers,
            "pair_dst": pair[first] % topo.n_routers}


def _network_for(routing: str) -> dict:
    """The test network a routing runs on: its own, else the first of NETWORKS it builds on."""
    if routing in ROUTING_TOPOLOGY:
        return ROUTING_TOPOLOGY[routing]
    for topology in NETWORKS:
        try:
            build.network(build.topology(topology), build.routing(_conf("routing", routing)), RouterSpec(vcs="auto"))
            return topology
        except ValueError:
            continue
    raise AssertionError(f"routing={routing} builds on none of the test networks")


def _cases():
    cases = {f"routing_{name}": (_network_for(name), _conf("routing", name), {"name": "uniform"}, {})
             for name in sorted(ROUTINGS)}
    cases |= {f"traffic_{name}": (PATTERN_TOPOLOGY[name], {"name": "minimal"},
                                  {**_conf("traffic", name), **PATTERN_OVERRIDES.get(name, {})}, {})
              for name in sorted(PATTERNS)}
    cases |= {name: rest for name, *rest in OPTION_CASES}
    return cases


CASES = _cases()


def run_case(name, tmp_path, active_lists="auto"):
    topology, routing_cfg, traffic_cfg, router = CASES[name]
    topo = build_topology(topology)
    if routing_cfg["name"] == "table":
        path_file = tmp_path / "paths.npz"
        np.savez(path_file, **_table_paths(topo))
        routing_cfg = {**routing_cfg, "path_file": str(path_file)}
    routing = build_routing(routing_cfg)
    if "vcs" not in router:
        policy = vc_policy.resolve(router.get("vc_policy", "auto"), routing,
                                   router.get("flow_control", "cut_through"))
        router = {**router, "vcs": policy.vcs_needed(routing, topo, routing.build_tables(topo))}
    network = build.network(topo, routing, build.router(router))
    window = SimSpec(**{**WINDOW, "measure": WINDOW["measure"] + LONGER_DRAIN.get(name, 0)},
                     generate_until=DRAIN_AFTER, active_lists=active_lists)
    rows, state = simulate_cfg(network, traffic_cfg, POINTS, window)
    return [{k: v for k, v in row.items() if k not in TIMING_KEYS} for row in rows], state


def _recorded():
    return json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}


def _as_recorded(rows, recorded):
    """The rows' recorded columns: columns added since the recording (statistics beyond
    those it pins) have their own tests, and every recorded column must be identical."""
    return [{k: row.get(k, "(missing)") for k in old} for row, old in zip(rows, recorded)]


# fast tier: every routing scheme and most router options; in the slow tier the traffic
# patterns (each also tested on its own in tests/test_traffic.py) and the options that fast
# tests of their own cover (injection buffers and policies, short packets, small buffers:
# tests/test_engine.py and tests/test_routing.py)
SLOW_CASES = {"minimal_random_injection", "injection_buffer_deeper", "rval_recomp_dest_injection",
              "small_packets_and_buffers"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow if n.startswith("traffic_") or n in SLOW_CASES
                                               else ()) for n in sorted(CASES)])
def test_rows_match_the_fixture_and_drain(name, tmp_path):
    rows, state = run_case(name, tmp_path)
    for row in rows:
        assert row["generated_load"] > 0 and row["packets_consumed"] > 0
        assert not row["deadlock"]
    in_network = np.asarray(state.waiting).sum(axis=(1, 2))
    queued = np.asarray(state.queue.taken).sum(axis=1)
    assert (in_network == 0).all() and (queued == 0).all(), "the network did not drain"
    recorded = _recorded()
    if RECORD:
        recorded[name] = rows
        FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    elif name in recorded:  # a new entry's case drains (above) until its rows are recorded
        assert len(rows) == len(recorded[name]) and _as_recorded(rows, recorded[name]) == recorded[name]


# Lists of buffers in use small enough that chunks overflow them, are redone with larger
# ones and end up listing every buffer: the rows must not change.
LISTS = [[8, 30], [3, 12], [2, 8], [12, 60], [6, 30], [2, 6]]
LIST_CASES = [pytest.param(name, marks=() if name in ("dor_bubble", "minimal_reserved_output_queue") else pytest.mark.slow)
              for name in ("routing_polarized", "routing_valiant_recomp", "routing_torus_table", "ugal_threshold",
                           "dor_bubble", "rval_recomp_dest_injection", "latencies_and_speedup",
                           "valiant_fogsim_allocator", "minimal_reserved_output_queue",
                           "valiant_fogsim_output_queue", "rval_recomp_fogsim_output_queue")]


@pytest.mark.parametrize("name", LIST_CASES)
def test_rows_do_not_depend_on_the_active_lists(name, tmp_path):
    rows, _ = run_case(name, tmp_path, active_lists=LISTS)
    assert _as_recorded(rows, _recorded()[name]) == _recorded()[name]


def test_every_recorded_case_still_exists():
    """Records of cases that no longer exist (a renamed entry) are stale: re-record."""
    assert {f"routing_{name}" for name in ROUTINGS} | {f"traffic_{name}" for name in PATTERNS} <= set(CASES)
    if not RECORD:
        assert set(_recorded()) <= set(CASES)
