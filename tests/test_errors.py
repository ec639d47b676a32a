"""Bad input gives one line naming the parameter (exit 2), never a traceback; unexpected
errors give one line and the debug hint (exit 1). The Hydra apps run in-process here (the
same `main` the console scripts call), which keeps each case well under a second."""
import numpy as np
import pytest
from apps import assert_one_line, run_app

import jaxnet
from jaxnet import build
from jaxnet.cli import simulate, topo
from jaxnet.paths.torus_graph import TorusShape
from jaxnet.paths.torus_tables import RoutingTable, build_table, save_table
from jaxnet.routing import build_routing
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology

TINY = ["topology.routers=12", "topology.degree=4", "topology.servers_per_router=2", "sim.seeds=[1]",
        "sim.warmup=20", "sim.measure=20", "sim.chunk=20", "sim.loads=[0.3]"]


@pytest.mark.parametrize("override, parameter, allowed", [
    ("sim.loads=[null]", "sim.loads=None", "a number in (0.0, 1.0]"),
    ("sim.loads=[abc]", "sim.loads='abc'", "a number"),
    ("sim.loads=[]", "sim.loads=[]", "a non-empty list"),
    ("sim.watchdog=null", "sim.watchdog=None", "an integer in [1, 1073741824]"),
    ("sim.warmup=abc", "sim.warmup='abc'", "an integer in [0, 1073741824]"),
    ("sim.seeds=[-1]", "sim.seeds=-1", "an integer in [0,"),
    ("sim.seeds=[1.5]", "sim.seeds=1.5", "an integer"),
    ("sim.measure=500.7", "sim.measure=500.7", "an integer in [1, 1073741824]"),
    ("sim.generate_until=10", "sim.generate_until=10", ">= sim.warmup=20"),
    ("sim.checkpoint_every=30", "sim.checkpoint_every=30", "a multiple of sim.chunk=20"),
    ("+traffic.foo=3", "traffic.foo=3", "traffic=uniform takes only"),
    ("router.vcs=1", "router.vcs=1", "needs"),
    ("router.input_buffer=1024", "router.input_buffer=1024", "an integer in [1, 1023]"),
    ("routing=table", "routing.path_file=None", "jaxnet-paths"),
])
def test_bad_simulation_parameters_are_one_line(tmp_path, override, parameter, allowed):
    code, stderr = run_app(simulate, tmp_path, *TINY, override)
    assert code == 2
    assert_one_line(stderr, f"error: {parameter} is invalid", allowed)


def test_files_that_are_not_what_a_parameter_needs(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_text("not numpy")
    cases = [("routing=table", f"routing.path_file={junk}", "routing.path_file"),
             ("traffic=demand", f"traffic.file={tmp_path / 'junk.npy'}", "traffic.file")]
    (tmp_path / "junk.npy").write_text("not numpy either")
    for group, override, parameter in cases:
        code, stderr = run_app(simulate, tmp_path / "run", *TINY, group, override)
        assert code == 2
        assert_one_line(stderr, f"error: {parameter}=", "not readable as numpy arrays")
    torus = ["topology=torus", "topology.sides=[4,4]", "routing=torus_table", f"routing.table_file={junk}",
             "sim.loads=[0.3]", "sim.warmup=20", "sim.measure=20", "sim.chunk=20"]
    code, stderr = run_app(simulate, tmp_path / "torus", *torus)
    assert code == 2
    assert_one_line(stderr, "error: routing.table_file=", "a routing table written by jaxnet-tables")


def test_export_to_a_missing_directory_is_one_line(tmp_path):
    code, stderr = run_app(topo, tmp_path, "export=/no/such/dir/g.graphml")
    assert code == 2
    assert_one_line(stderr, "error: export='/no/such/dir/g.graphml' is invalid", "existing directory")


def test_unexpected_error_is_one_line_with_the_debug_hint(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("something inside\nbroke")

    monkeypatch.setattr(simulate, "run_sweep", broken)
    code, stderr = run_app(simulate, tmp_path, *TINY)
    assert code == 1
    assert_one_line(stderr, "error: RuntimeError: something inside broke", "JAXNET_DEBUG=1")
    monkeypatch.setenv("JAXNET_DEBUG", "1")
    code, stderr = run_app(simulate, tmp_path, *TINY)
    assert code == 1 and "Traceback" in stderr and "RuntimeError: something inside" in stderr


def test_duplicate_loads_and_seeds_are_merged_not_simulated_twice():
    spec = build.sim({"loads": [0.5, 0.3, 0.5, 0.50], "seeds": [2, 1, 2]})
    assert spec.points == [(0.5, 2), (0.5, 1), (0.3, 2), (0.3, 1)]


@pytest.mark.parametrize("points, tables, message", [
    ([], 0, r"sim.loads x sim.seeds=\[\] is invalid: at least one point"),
    ([(0.3, 1), (0.6, 1)], 1, r"traffic=1 is invalid: one table per point \(2\)"),
    ([(1.5, 1)], 1, r"sim.loads=1.5 is invalid: offered loads in \(0, 1\]"),
    ([(float("nan"), 1)], 1, r"sim.loads=nan is invalid"),
    ([(0.3, "a")], 1, r"sim.seeds='a' is invalid: must be an integer in \[0, 2147483647\]"),
    ([(0.3, -1)], 1, r"sim.seeds=-1 is invalid"),
])
def test_points_given_to_simulate_are_checked_like_the_sim_group(points, tables, message):
    """The Python API's `simulate` refuses what `sim.loads` and `sim.seeds` refuse, before
    anything is traced."""
    topo = build_topology({"name": "rrg", "routers": 8, "degree": 3, "servers_per_router": 1})
    network = build.network(topo, build_routing({"name": "minimal"}), build.router({}))
    traffic = [build.traffic({"name": "uniform"}, topo, 1)] * tables
    with pytest.raises(ValueError, match=message):
        jaxnet.simulate(network, traffic, points, SimSpec(warmup=20, measure=20))


def test_a_cyclic_routing_table_file_is_refused_naming_the_cycle(tmp_path):
    """Four 2-hop routes turning around the square 0 -> 1 -> 5 -> 4 -> 0 of a 4x4 torus close
    a dependency cycle under either VC policy; the generated table is accepted."""
    shape = TorusShape.build([4, 4])
    table = build_table(shape, "sssp")
    directions = table.directions.copy()
    square, turns = [0, 1, 5, 4], [(0, 1), (1, 2), (2, 3), (3, 0)]  # +X+Y, +Y-X, -X-Y, -Y+X
    for i, (a, b) in enumerate(turns):
        directions[square[i], square[(i + 2) % 4], :2] = (a, b)
    save_table(table, tmp_path / "good.npz")
    save_table(RoutingTable(shape, table.turns, "hand", directions, {}), tmp_path / "cyclic.npz")
    torus = build_topology({"name": "torus", "sides": [4, 4], "servers_per_router": 1})
    good = build_routing({"name": "torus_table", "table_file": str(tmp_path / "good.npz")})
    assert build.network(torus, good, RouterSpec(vcs=2)).layout.vcs == 2
    cyclic = build_routing({"name": "torus_table", "table_file": str(tmp_path / "cyclic.npz")})
    for router in (RouterSpec(vcs=2), RouterSpec(vcs=1, flow_control="bubble")):
        with pytest.raises(ValueError, match=r"routing.table_file=.*cyclic.npz.* is invalid: deadlock-free "
                                             r"routes under vc_policy=\w+; .* in a cycle: .+ -> ") as refused:
            build.network(torus, cyclic, router)
        named = str(refused.value).split("in a cycle: ")[1]
        assert any(f"{r}" in named for r in square)


def test_table_routing_rejects_an_npz_without_paths(tmp_path):
    np.savez(tmp_path / "weights.npz", uniform=np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"routing.path_file=.*\(missing array\(s\) \['paths'"):
        build_routing({"name": "table", "path_file": str(tmp_path / "weights.npz")}).build_tables(
            build_topology({"name": "rrg", "routers": 8, "degree": 3, "servers_per_router": 1}))
