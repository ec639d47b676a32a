"""Nothing lost, nothing silent: interrupted and killed runs resume without redoing finished
points, damaged results rows are recomputed, checkpoints resume bit-identically, a failing
job of a multirun is reported while the others run, the deadlock watchdog fires only on
deadlocks, and invariant checks catch a broken state."""
import os
import signal
import subprocess
import sys
import time

import networkx as nx
import numpy as np
import pytest
from apps import assert_one_line, run_app
from conftest import make_network

from jaxnet import build
from jaxnet.cli import simulate as simulate_app
from jaxnet.results import collect, read_rows
from jaxnet.sim import checkpoint as checkpoints
from jaxnet.sim import run as sim_run
from jaxnet.sim.spec import SimSpec
from jaxnet.sim.state import pack_counters
from jaxnet.traffic import tables_for_points

TINY = ["topology.routers=12", "topology.degree=4", "topology.servers_per_router=2", "sim.seeds=[1]",
        "sim.warmup=50", "sim.measure=150", "sim.chunk=100"]
# columns that say how a run went, and differ between runs of the same points
RESULTS_ONLY = ("wall_s", "first_chunk_s", "batch", "vmap_width", "sub_batch", "workers", "work_lists", "date", "row_sha")


def _rows(directory):
    return read_rows(directory / "results.csv")[0]


def _same_results(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k not in RESULTS_ONLY} == {
        k: v for k, v in b.items() if k not in RESULTS_ONLY}


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # pytest-xdist workers ignore SIGINT; children inherit that


def _start(tmp_path, *overrides):
    return subprocess.Popen([sys.executable, "-m", "jaxnet.cli.simulate", f"hydra.run.dir={tmp_path}", *TINY,
                             *overrides], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)


def test_sigterm_keeps_finished_points_and_the_same_command_resumes(tmp_path):
    """Points are written as their sub-batch finishes; SIGTERM stops the run cleanly (exit 130,
    a resume hint, no traceback); the same command then simulates only the missing points."""
    loads = "sim.loads=[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8]"
    job = _start(tmp_path, loads, "sim.sub_batch=1", "sim.measure=1500")
    deadline = time.time() + 300
    while not (tmp_path / "results.csv").exists() and time.time() < deadline and job.poll() is None:
        time.sleep(0.05)
    job.send_signal(signal.SIGTERM)
    _, stderr = job.communicate(timeout=300)
    assert job.returncode == 130, stderr
    assert "interrupted: finished points are kept" in stderr and "Traceback" not in stderr
    kept = _rows(tmp_path)
    assert 1 <= len(kept) < 8
    resumed = subprocess.run([sys.executable, "-m", "jaxnet.cli.simulate", f"hydra.run.dir={tmp_path}", *TINY, loads,
                              "sim.sub_batch=1", "sim.measure=1500"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{8 - len(kept)} new point(s), {len(kept)} already" in resumed.stdout + resumed.stderr
    rows = _rows(tmp_path)
    assert len(rows) == 8 and rows[: len(kept)] == kept  # finished points kept as they were


def test_worker_processes_give_the_rows_of_one_process_and_stop_cleanly(tmp_path):
    """sim.workers=2 runs the points in two worker processes: SIGTERM stops them with the
    parent (exit 130, no traceback, finished points kept), the same command resumes, the rows
    are those a one-process run writes, and each run writes its rows in the job's order
    whatever order its sub-batches finished in."""
    loads = ["sim.loads=[0.2,0.4,0.6,0.8,1.0]", "sim.measure=1500", "sim.workers=2"]
    job = _start(tmp_path / "two", *loads)
    deadline = time.time() + 300
    while not (tmp_path / "two" / "results.csv").exists() and time.time() < deadline and job.poll() is None:
        time.sleep(0.05)
    job.send_signal(signal.SIGTERM)
    _, stderr = job.communicate(timeout=300)
    assert job.returncode == 130 and "Traceback" not in stderr, stderr
    kept = len(_rows(tmp_path / "two"))
    assert 1 <= kept < 5
    resumed = subprocess.run([sys.executable, "-m", "jaxnet.cli.simulate", f"hydra.run.dir={tmp_path / 'two'}", *TINY,
                              *loads], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert "2 worker process(es)" in resumed.stdout + resumed.stderr
    code, stderr = run_app(simulate_app, tmp_path / "one", *TINY, *loads[:2], "sim.workers=1")
    assert code == 0, stderr
    one, parallel = _rows(tmp_path / "one"), _rows(tmp_path / "two")
    assert len(one) == len(parallel) == 5
    loads = [float(r["offered_load"]) for r in parallel]
    assert loads[:kept] == sorted(loads[:kept]) and loads[kept:] == sorted(loads[kept:])
    by_load = {r["offered_load"]: r for r in parallel}
    for row in one:
        assert _same_results({**row, "config": ""}, {**by_load[row["offered_load"]], "config": ""})
    assert not list((tmp_path / "two").glob("checkpoint-*.npz"))


FIRST_CHUNK_THEN_SIMULATE = """
import os, sys
import jax
import networkx as nx
from jaxnet import build
from jaxnet.routing import build_routing
from jaxnet.sim.run import compile_first_chunk, simulate
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import from_graph
from jaxnet.traffic import tables_for_points

jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # tiny networks compile in < 1 s
entries = lambda: sorted(name for name in os.listdir(sys.argv[1]) if name.startswith("jit_batch"))
topo = from_graph(nx.random_regular_graph(4, 12, seed=5), "test", 2)
network = build.network(topo, build_routing({"name": "minimal"}), RouterSpec(vcs=3))
points = [(0.4, 1), (0.7, 2), (0.7, 3)]
traffic = tables_for_points({"name": "uniform"}, topo, points)
spec = SimSpec(warmup=30, measure=60, chunk=30)
compile_first_chunk(network, traffic[:2], points[:2], spec, pad_to=2)
compiled = entries()
simulate(network, traffic[:2], points[:2], spec, pad_to=2)
print(len(compiled), compiled == entries())
"""


def test_the_first_chunk_compiled_ahead_is_the_one_simulate_loads(tmp_path):
    """The parent of a job's workers compiles their first chunk into the persistent cache
    (`run.compile_first_chunk`) while they start: `simulate` must then find that very
    program there, not compile another (which would leave a second `jit_batch` entry)."""
    cache = tmp_path / "xla"
    cache.mkdir()
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", FIRST_CHUNK_THEN_SIMULATE, str(cache)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True"]


def test_sub_batches_of_one_point_run_seed_by_seed():
    """One point a sub-batch, the points run seed by seed (two workers would otherwise run a
    load's seeds side by side and compile the same list capacities twice); larger
    sub-batches keep the job's order (loads outermost)."""
    from jaxnet.cli.sweep import plan_sub_batches

    todo = [("c", "", (load, seed)) for load in (0.3, 0.9) for seed in (1, 2)]
    assert [places for places, _, _ in plan_sub_batches(todo, 1, None, False)] == [[0], [2], [1], [3]]
    assert [places for places, _, _ in plan_sub_batches(todo, 2, None, False)] == [[0, 1], [2, 3]]


def test_ctrl_c_during_compilation_exits_cleanly(tmp_path):
    job = _start(tmp_path, "sim.loads=[0.3]", "routing=polarized")
    deadline = time.time() + 300
    for line in job.stdout:  # Hydra logs to stdout; compilation starts right after this line
        if "new point(s)" in line or time.time() > deadline:
            break
    job.send_signal(signal.SIGINT)
    _, stderr = job.communicate(timeout=300)
    assert job.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "results.csv").exists()


def test_damaged_rows_are_recomputed_never_trusted(tmp_path):
    code, _ = run_app(simulate_app, tmp_path, *TINY, "sim.loads=[0.2,0.4,0.6]")
    assert code == 0
    good = _rows(tmp_path)
    text = (tmp_path / "results.csv").read_text().splitlines()
    # edit one number of the second row and cut the third row in half
    edited = text[2].replace(good[1]["accepted_load"], "0.999", 1)
    (tmp_path / "results.csv").write_text("\n".join([text[0], text[1], edited, text[3][: len(text[3]) // 2]]))
    assert len(read_rows(tmp_path / "results.csv")[0]) == 1
    code, stderr = run_app(simulate_app, tmp_path, *TINY, "sim.loads=[0.2,0.4,0.6]")
    assert code == 0
    rows = _rows(tmp_path)
    assert len(rows) == 3 and read_rows(tmp_path / "results.csv")[1] == 0
    by_load = {r["offered_load"]: r for r in rows}
    for row in good:  # recomputed: the same numbers as the first time (fixed seeds)
        assert _same_results(by_load[row["offered_load"]], row)


def test_checkpoint_of_another_state_layout_is_ignored(tmp_path):
    """A checkpoint of the same run written by an engine whose state has other arrays is not
    loaded into this engine's state: the run starts again."""
    like = {"a": np.zeros(3, np.int32), "b": np.zeros((2, 2), np.int32)}
    path = tmp_path / "checkpoint.npz"
    checkpoints.save(path, {"a": np.zeros(3, np.int32), "b": np.zeros(4, np.int32)}, 1, "run")
    assert checkpoints.load(path, like, "run") is None
    checkpoints.save(path, like, 2, "run")
    assert checkpoints.load(path, like, "run")[1] == 2


def test_checkpoint_resume_is_bit_identical(tmp_path):
    """A run killed after 3 of 6 chunks resumes from its checkpoint and ends with exactly
    the statistics of a run that was never interrupted."""
    network = make_network(nx.random_regular_graph(3, 10, seed=2), servers_per_router=2)
    points = [(0.4, 1), (0.8, 2)]
    traffic = tables_for_points({"name": "uniform"}, network.topo, points)
    spec = SimSpec(warmup=200, measure=400, chunk=100, checkpoint_every=100)
    whole, _ = sim_run.simulate(network, traffic, points, spec)

    advance, calls = sim_run.advance_chunk, []

    def killed_after_three(*args, **kwargs):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(1)
        return advance(*args, **kwargs)

    checkpoint = tmp_path / "checkpoint.npz"
    sim_run.advance_chunk = killed_after_three
    try:
        with pytest.raises(KeyboardInterrupt):
            sim_run.simulate(network, traffic, points, spec, checkpoint=checkpoint)
    finally:
        sim_run.advance_chunk = advance
    assert checkpoint.exists()
    resumed, _ = sim_run.simulate(network, traffic, points, spec, checkpoint=checkpoint)
    assert not checkpoint.exists()  # removed once the run is complete
    for a, b in zip(whole, resumed):
        assert _same_results(a, b)
    assert resumed[0]["packets_consumed"] > 0


def test_multirun_merges_jobs_and_reports_a_failed_one(tmp_path):
    """Three jobs: two routings that run and one with a bad parameter. The bad one is
    reported, the others run, the sweep exits non-zero, and the sweep root has one merged
    table and figure with both good routings as separate lines."""
    code, stderr = run_app(simulate_app, tmp_path, "-m", f"hydra.sweep.dir={tmp_path}", *TINY,
                           "sim.loads=[0.2,0.5]", "routing=minimal,table,source_minimal")
    assert code == 1, stderr
    assert "job 1 failed: error: routing.path_file=None is invalid" in stderr
    assert "Traceback" not in stderr
    rows = _rows(tmp_path)
    assert {r["routing"] for r in rows} == {"minimal", "source_minimal"} and len(rows) == 4
    assert len(set(collect.assign_curves(rows).values())) == 2
    assert (tmp_path / "throughput.png").stat().st_size > 0


def test_watchdog_has_no_false_alarm_on_long_links(tmp_path):
    """Links of 10 cycles leave a moving network quiet for longer than a 3-cycle watchdog:
    the threshold adds the longest quiet time, so no deadlock is reported."""
    code, stderr = run_app(simulate_app, tmp_path, *TINY, "sim.loads=[0.3]", "sim.watchdog=3",
                           "router.link_latency=10")
    assert code == 0, stderr
    row = _rows(tmp_path)[0]
    assert row["deadlock"] == "False" and float(row["accepted_load"]) > 0.25


def test_a_deadlock_fails_the_run_naming_the_cycle_and_stuck_buffers(tmp_path):
    """Polarized on a path graph strands packets in its end corners (test_routing): once the
    rest drained the watchdog fires; the run keeps its row and exits 3 with one line."""
    graph = tmp_path / "path.edgelist"
    nx.write_edgelist(nx.path_graph(5), graph, data=False)
    overrides = ["topology=file", f"topology.path={graph}", "routing=polarized", "router.selection=available_first",
                 "sim.loads=[0.5]",
                 "sim.warmup=0", "sim.measure=3000", "sim.chunk=1000", "sim.generate_until=1000",
                 "sim.watchdog=300"]
    code, stderr = run_app(simulate_app, tmp_path / "run", *overrides)
    assert code == 3
    stderr = "\n".join(line for line in stderr.splitlines() if "simulating" not in line)  # progress bar
    assert_one_line(stderr, "error: deadlock watchdog fired: uniform load 0.5 seed 1 at cycle",
                    "stuck router", "VC", "sim.allow_deadlock=true")
    row = _rows(tmp_path / "run")[0]
    assert row["deadlock"] == "True" and int(row["deadlock_at"]) > 1000
    code, _ = run_app(simulate_app, tmp_path / "run", *overrides, "sim.allow_deadlock=true")
    assert code == 0


def test_invariant_checks_pass_on_runs_and_catch_a_broken_state(small_rrg, heads_ready_from):
    heads_ready_from(0)
    points = [(0.9, 1)]
    traffic = tables_for_points({"name": "uniform"}, small_rrg.topo, points)
    _, state = sim_run.simulate(small_rrg, traffic, points, SimSpec(warmup=100, measure=200, chunk=100,
                                                                     check_invariants=True))
    sim_run.check_invariants(small_rrg, state, points)
    lost = state._replace(waiting=state.waiting.at[0, 0].add(-1))
    with pytest.raises(sim_run.InvariantError, match="at cycle 300, load 0.9 seed 1: packet conservation"):
        sim_run.check_invariants(small_rrg, lost, points)
    inputs = state.inputs
    taken = np.asarray(inputs.taken).copy()
    taken[0, 0] = small_rrg.layout.router.input_buffer + 1
    overfull = state._replace(inputs=inputs._replace(
        counters=pack_counters(np.asarray(inputs.first), taken, np.asarray(inputs.gone))))
    with pytest.raises(sim_run.InvariantError, match="credit bounds"):
        sim_run.check_invariants(small_rrg, overfull, points)
    waiting = np.nonzero(np.asarray(inputs.taken[0] > inputs.gone[0]))[0]
    assert waiting.size  # a head waits somewhere at load 0.9
    stale = state._replace(inputs=inputs._replace(head_ready=inputs.head_ready.at[0, waiting[0]].add(1)))
    with pytest.raises(sim_run.InvariantError, match="seed 1: the heads' READY kept beside the records$"):
        sim_run.check_invariants(small_rrg, stale, points)


@pytest.mark.slow
def test_killed_million_cycle_run_resumes_bit_identically(tmp_path):
    """A 10^6-cycle run killed (SIGKILL) after its first checkpoints resumes from the last
    one and writes the same row as an uninterrupted run."""
    overrides = ["topology.routers=8", "topology.degree=3", "topology.servers_per_router=1", "sim.seeds=[1]",
                 "sim.loads=[0.6]", "sim.warmup=100000", "sim.measure=900000", "sim.chunk=50000",
                 "sim.checkpoint_every=100000"]
    code, _ = run_app(simulate_app, tmp_path / "whole", *overrides)
    assert code == 0
    run = tmp_path / "killed"
    job = subprocess.Popen([sys.executable, "-m", "jaxnet.cli.simulate", f"hydra.run.dir={run}", *overrides],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 1200
    while not (run / "checkpoint.npz").exists() and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(2)
    os.kill(job.pid, signal.SIGKILL)
    job.wait()
    assert (run / "checkpoint.npz").exists() and not (run / "results.csv").exists()
    code, _ = run_app(simulate_app, run, *overrides)
    assert code == 0
    assert _same_results(_rows(run)[0], _rows(tmp_path / "whole")[0])
