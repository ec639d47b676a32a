"""Nothing lost, nothing silent, no hang (issues 36 and 40): the apps' help and their one-line
errors for what Hydra itself refuses, range checks of every count that reaches the device,
router settings that make a run meaningless, sizes refused before building, a run directory
checked before simulating and a fallback file when results cannot be written, failure
markers that a successful rerun clears, and Ctrl-C acting at once."""
import logging
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from apps import assert_one_line, run_app

from jaxnet.cli import common, launcher, paths, simulate, sweep, tables, topo
from jaxnet.core.files import require_writable
from jaxnet.results import read_rows
from jaxnet.sim.spec import RouterSpec, SimSpec, check_measurable
from jaxnet.topology import build_topology
from jaxnet.topology.export import export_topology
from jaxnet.traffic import build_traffic

TINY = ["topology.routers=12", "topology.degree=4", "topology.servers_per_router=2", "sim.seeds=[1]",
        "sim.warmup=20", "sim.measure=20", "sim.chunk=20", "sim.loads=[0.3]"]


# ----- help --------------------------------------------------------------------------------

@pytest.mark.parametrize("app, groups", [
    (simulate, ["topology", "routing", "traffic", "router", "sim", "hydra/launcher"]),
    (topo, ["topology"]), (paths, ["topology"]), (tables, ["topology", "tables"])])
def test_help_says_what_the_app_does_and_lists_groups_and_experiments(tmp_path, capsys, app, groups):
    code, _ = run_app(app, tmp_path, "--help")
    out = capsys.readouterr().out
    assert code == 0 and "powered by Hydra" not in out
    assert out.startswith(app.__doc__.strip().splitlines()[0])
    lines = out.splitlines()
    for group in groups:
        line = next(line for line in lines if line.split()[:1] == [group])
        options = [p.stem for p in (Path(common.CONF_DIR) / group).glob("*.yaml")]
        assert all(o in line for o in options), line
    experiments = [line.split()[0] for line in lines if line.startswith("  ") and "/fig" in line.split()[0]]
    if app is simulate:
        assert "antmill/fig5" in experiments and "valiant/fig2" in experiments and "polarized/fig4" in experiments
        assert "Restricted Valiant, Fig. 2" in out and "[minimal]" in out  # titles; defaults marked
    else:
        assert experiments == []


# ----- what Hydra refuses, as one line ------------------------------------------------------

@pytest.mark.parametrize("override, expected", [
    ("routing=minmal", ["routing=minmal is invalid: no such routing option", "closest: minimal"]),
    ("+experiment=antmill/fig55", ["experiment=antmill/fig55 is invalid", "closest: antmill/fig5"]),
    ("sim.lodas=[0.5]", ["sim.lodas is not a key of sim", "closest: sim.loads"]),
    ("simm.loads=[0.5]", ["simm is not a key of the config", "closest: sim"]),
    ("routing.base=minimal", ["routing.base is not a key of routing", "routing.name"]),
    ("sim.loads=[0.5", ["sim.loads=[0.5 is not a valid override"]),
])
def test_what_hydra_refuses_is_one_line_exit_2(tmp_path, override, expected):
    code, stderr = run_app(simulate, tmp_path, *TINY, override)
    assert code == 2
    assert_one_line(stderr, "error: ", *expected)


def test_a_missing_launcher_plugin_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "submitit", None)  # as if the slurm extra were not installed
    code, stderr = run_app(simulate, tmp_path, "-m", f"hydra.sweep.dir={tmp_path}", *TINY, "hydra/launcher=slurm")
    assert code == 2
    assert_one_line(stderr, "hydra/launcher='slurm' is invalid", 'pip install -e ".[slurm]"')


def test_an_unwritable_run_directory_is_one_line(tmp_path):
    code, stderr = run_app(simulate, tmp_path, *TINY, "hydra.run.dir=/proc/1/jaxnet")
    assert code == 2
    assert_one_line(stderr, "error: the run directory cannot be written", "/proc/1/jaxnet", "hydra.run.dir=")


def test_a_key_of_a_swept_group_applies_to_the_swept_options(tmp_path, monkeypatch):
    """`routing=valiant,rval routing.base=dragonfly_minimal` runs both jobs with that base (Hydra
    composes a sweep from the group's default, minimal, which has no `base`); a key that no
    swept option has is one line."""
    seen = []
    monkeypatch.setattr(launcher, "run_jobs", lambda *a, **k: None)  # the batch of phase one: not needed here
    monkeypatch.setattr(simulate, "run_sweep", lambda config, *a, **k: seen.append(config["routing"]) or [])
    sweep_args = ["-m", f"hydra.sweep.dir={tmp_path / 'sweep'}", "topology=dragonfly", "routing=valiant,rval"]
    code, stderr = run_app(simulate, tmp_path, *sweep_args, "routing.base=dragonfly_minimal")
    assert code == 0, stderr
    assert seen == [{"name": "valiant", "base": "dragonfly_minimal", "intermediates": "all", "first_leg": "shortcut"},
                    {"name": "rval", "base": "dragonfly_minimal", "intermediates": "all", "first_leg": "shortcut"}]
    code, stderr = run_app(simulate, tmp_path, *sweep_args, "routing.bsae=dragonfly_minimal")
    assert code == 2
    assert_one_line(stderr, "routing.bsae=dragonfly_minimal is invalid: no option of the sweep routing=valiant,rval",
                    "closest: base")


def test_a_job_that_succeeds_clears_its_failure_marker(tmp_path, monkeypatch):
    """A sweep whose job failed exits 1; rerun into the same sweep directory, the job succeeds
    and the sweep exits 0 (its FAILED file is gone)."""
    args = ["-m", f"hydra.sweep.dir={tmp_path / 'sweep'}", *TINY]

    def failing(*args, **kwargs):
        raise ValueError("sim.loads=[0.3] is invalid: a failure for the test")

    monkeypatch.setattr(launcher, "run_jobs", lambda *a, **k: None)  # the batch of phase one: not needed here
    monkeypatch.setattr(simulate, "run_sweep", failing)
    code, stderr = run_app(simulate, tmp_path, *args)
    assert code == 1 and "a failure for the test" in stderr
    assert (tmp_path / "sweep" / "0" / common.FAILED).exists()
    monkeypatch.setattr(simulate, "run_sweep", lambda *args, **kwargs: [])
    code, stderr = run_app(simulate, tmp_path, *args)
    assert code == 0, stderr
    assert not (tmp_path / "sweep" / "0" / common.FAILED).exists()


# ----- no silent nonsense ---------------------------------------------------------------------

@pytest.mark.parametrize("override, expected", [
    ("sim.measure=3000000000", "sim.measure=3000000000 is invalid: must be an integer in [1, 1073741824]"),
    ("sim.warmup=1073741820", "sim.warmup=1073741820 is invalid: sim.warmup + sim.measure, rounded up to a multiple of sim.chunk, must be at most"),
    ("sim.generate_until=3000000000", "sim.generate_until=3000000000 is invalid: must be an integer in [0, 1073741824]"),
    ("sim.watchdog=3000000000", "sim.watchdog=3000000000 is invalid: must be an integer in [1, 1073741824]"),
    ("router.packet_size=100000", "router.packet_size=100000 is invalid: must be at most sim.measure=20 phits"),
    ("router.link_latency=100000", "router.link_latency=100000 is invalid: must be shorter than the whole run"),
    ("router.link_latency=40", "router.link_latency=40 is invalid: must be shorter than the whole run"),
    ("router.router_latency=40", "router.router_latency=40 is invalid: must be shorter than the whole run"),
    ("topology.servers_per_router=100000", "topology.servers_per_router=100000 is invalid: must be an integer in [1, 127]"),
    ("topology.routers=100000", "topology.routers=100000 is invalid: gives 100000 routers; at most 8192"),
])
def test_counts_beyond_the_device_and_meaningless_runs_are_refused(tmp_path, override, expected):
    start = time.perf_counter()
    code, stderr = run_app(simulate, tmp_path, *TINY, override)
    assert code == 2
    assert_one_line(stderr, f"error: {expected}")
    assert time.perf_counter() - start < 30  # refused up front, not after building for minutes
    assert not (tmp_path / "results.csv").exists()


def test_a_window_of_few_packets_is_warned_about_in_one_line(caplog):
    with caplog.at_level(logging.WARNING, "jaxnet"):
        check_measurable(RouterSpec(packet_size=16), SimSpec(warmup=20, measure=100))
        check_measurable(RouterSpec(packet_size=16), SimSpec(warmup=20, measure=160))
    assert [r.getMessage().count("\n") for r in caplog.records] == [0]
    assert "router.packet_size=16" in caplog.records[0].getMessage()


@pytest.mark.parametrize("builder, expected", [
    ({"name": "dragonfly", "a": 40, "h": 20}, "topology.a=40 is invalid: gives 32040 routers"),
    ({"name": "slimfly", "q": 101}, "topology.q=101 is invalid: gives 20402 routers"),
    ({"name": "projective", "q": 101}, "topology.q=101 is invalid: gives 20606 routers"),
    ({"name": "hamming", "sides": [100, 100]}, "topology.sides=[100, 100] is invalid: gives 10000 routers"),
    ({"name": "rrg", "routers": 1000, "degree": 200}, "topology.degree=200 is invalid: gives 200 ports per router"),
])
def test_networks_too_large_to_build_are_refused_before_building(builder, expected):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=expected.replace("[", r"\[")):
        build_topology(builder)
    assert time.perf_counter() - start < 1


def test_a_state_beyond_int32_indexing_is_refused(tmp_path):
    code, stderr = run_app(simulate, tmp_path, *TINY, "topology.routers=64", "topology.servers_per_router=127",
                           "router.vcs=64", "router.input_buffer=1023", "router.injection_buffers=1")
    assert code == 2
    assert_one_line(stderr, "error: topology=", "simulation state array of", "int32")


# ----- nothing lost ------------------------------------------------------------------------------

def test_the_run_directory_is_checked_before_simulating(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"hydra.run.dir='/proc/1' is invalid: not a writable directory"):
        require_writable(Path("/proc/1"), "hydra.run.dir")
    built = []
    monkeypatch.setattr(sweep, "require_writable", lambda d, p: (_ for _ in ()).throw(
        ValueError(f"{p}='{d}' is invalid: not a writable directory")))
    monkeypatch.setattr(sweep.build, "network_of", lambda *a: built.append(a))
    code, stderr = run_app(simulate, tmp_path, *TINY)
    assert code == 2 and built == []
    assert_one_line(stderr, f"error: hydra.run.dir='{tmp_path}' is invalid: not a writable directory")


def test_rows_that_cannot_be_written_go_to_a_fallback_file(tmp_path, monkeypatch):
    """results.csv cannot be written after the simulation: the rows go to a file in the
    temporary directory that the one-line error names; copied to results.csv, the same
    command finds every point done."""
    write_rows, fallback_dir = sweep.write_rows, tmp_path / "tmp"
    fallback_dir.mkdir()

    def full_disk(path, rows):
        if path.name == "results.csv":
            raise OSError(28, "No space left on device")
        write_rows(path, rows)

    monkeypatch.setattr(sweep, "write_rows", full_disk)
    monkeypatch.setattr("tempfile.tempdir", str(fallback_dir))
    run = tmp_path / "run"
    code, stderr = run_app(simulate, run, *TINY, "sim.loads=[0.3,0.6]")
    assert code == 2
    fallback = next(fallback_dir.glob("jaxnet-results-*.csv"))
    progress = "\n".join(line for line in stderr.splitlines() if not line.startswith("simulating"))
    assert_one_line(progress, f"{run / 'results.csv'} could not be written", "No space left on device",
                    f"the 2 finished row(s) are in {fallback}")
    rows, damaged = read_rows(fallback)
    assert len(rows) == 2 and damaged == 0
    monkeypatch.undo()
    shutil.copy(fallback, run / "results.csv")
    code, stderr = run_app(simulate, run, *TINY, "sim.loads=[0.3,0.6]")
    assert code == 0 and read_rows(run / "results.csv")[0] == rows


# ----- clear messages ------------------------------------------------------------------------------

def test_a_demand_csv_with_a_short_row_names_the_file_and_the_row(tmp_path):
    topology = build_topology({"name": "rrg", "routers": 4, "degree": 3, "servers_per_router": 1})
    matrix = tmp_path / "demand.csv"
    matrix.write_text("0,1,1,1\n1,0,1\n1,1,0,1\n1,1,1,0\n")
    with pytest.raises(ValueError, match=r"traffic.file='.*demand.csv' is invalid: row 2 has 3 value\(s\); every "
                                         r"row must have 4"):
        build_traffic({"name": "demand", "file": str(matrix)}, topology, 1)
    matrix.write_text("# a comment\n0,1,1,1\n1,0,x,1\n1,1,0,1\n1,1,1,0\n")
    with pytest.raises(ValueError, match=r"row 3 holds 'x', not a number"):
        build_traffic({"name": "demand", "file": str(matrix)}, topology, 1)
    matrix.write_text("# a comment\n0,1,1,1\n\n1,0,2,1\n1,1,0,1\n1,1,1,0\n")
    build_traffic({"name": "demand", "file": str(matrix)}, topology, 1)


def test_a_garbage_graph_file_is_unreadable_not_disconnected(tmp_path):
    text, binary = tmp_path / "text.edgelist", tmp_path / "binary.edgelist"
    text.write_text("this is not a graph\nat all\n")
    binary.write_bytes(np.random.default_rng(1).integers(0, 256, 500, dtype=np.uint8).tobytes())
    for path, why in ((text, "line 1 is 'this is not a graph', not an edge"), (binary, "binary data")):
        with pytest.raises(ValueError, match=rf"topology.path='{path}' is invalid: not a readable edgelist file "
                                             rf"\({why}"):
            build_topology({"name": "file", "path": str(path)})
    exported = export_topology(build_topology({"name": "rrg", "routers": 8, "degree": 3}), tmp_path / "g.edgelist")
    assert build_topology({"name": "file", "path": str(exported)}).n_routers == 8
    weighted = tmp_path / "weighted.edgelist"
    nx.write_edgelist(nx.cycle_graph(5), weighted, data=True)
    assert build_topology({"name": "file", "path": str(weighted)}).n_routers == 5


# ----- no hang ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("sweep", [False, True], ids=["run", "sweep"])
def test_ctrl_c_acts_within_a_second_during_a_long_device_call(tmp_path, sweep):
    """One chunk of 10**6 cycles is one long XLA call; Ctrl-C during it (or during its
    compilation) stops the app within a second, exit 130, saying how to resume: in a run's
    task, and in a sweep's launcher, which simulates the jobs' points together."""
    where = (["-m", f"hydra.sweep.dir={tmp_path}", "traffic=uniform,server_permutation"] if sweep
             else [f"hydra.run.dir={tmp_path}"])
    job = subprocess.Popen([sys.executable, "-m", "jaxnet.cli.simulate", *where, *TINY,
                            "sim.warmup=0", "sim.measure=1000000", "sim.chunk=1000000", "sim.workers=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    for line in job.stdout:  # Hydra logs to stdout; compilation starts right after this line
        if "new point(s)" in line or time.time() > deadline:
            break
    time.sleep(3.0)  # compiling or running its one chunk: a call into XLA either way
    job.send_signal(signal.SIGINT)
    sent = time.time()
    _, stderr = job.communicate(timeout=600)
    assert time.time() - sent < 1.0, "Ctrl-C waited for the device call"
    assert job.returncode == 130, stderr
    assert f"interrupted: finished points are kept in {tmp_path}" in stderr and "Traceback" not in stderr
