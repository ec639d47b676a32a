"""Every script under scripts/ and benchmarks/ imports against the current package (names they
use exist); scripts/ imports only public names."""
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_script_imports(path, monkeypatch):
    monkeypatch.syspath_prepend(str(path.parent))
    module = load_script(path)  # top level only: main() runs under __name__ == "__main__"
    assert callable(getattr(module, "main", None)), f"{path.name} has no main()"


@pytest.mark.parametrize("every_buffer", [False, True])
def test_profile_charges_the_cycle_to_its_phases(monkeypatch, every_buffer):
    """benchmarks/profile.py maps the profiled XLA operations back to the engine's phases: on a
    tiny network most of the operations run land on named phases, routing among them. Counted
    in operations, not time: the time shares move with the load on the machine. With
    --every-buffer the chunk runs without the work lists."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "profile.py"
    monkeypatch.syspath_prepend(str(path.parent))
    module = load_script(path)
    report = module.profile("hamming", "minimal", 4, 0.5, cycles=20, every_buffer=every_buffer)
    phases = report["by_phase_us_per_cycle"]
    assert (report["lists"] == []) == every_buffer
    assert report["us_per_cycle_in_operations"] > 0 and report["us_per_cycle_wall_profiled"] > 0
    assert report["state_bytes_per_simulation"] > 0
    assert {"route", "release_slots", "send_on_links", "generate"} <= set(phases)
    assert report["operations_in_a_phase"] > 0.6 * report["operations_run"]
    assert report["profiled_chunks"] == 1 and not report["profiled_chunk_redone"]
    assert all(chain.startswith("cycle_step:") for chain in report["by_call_chain_us_per_cycle"])


def test_profile_runs_again_a_chunk_redone_under_the_profiler(monkeypatch):
    """A profiled chunk whose lists overflowed was redone (and its larger lists compiled)
    inside the profiled time: benchmarks/profile.py profiles another chunk, now with those
    lists, and says how many it took. The overflow is simulated: the first chunk under the
    profiler reports larger capacities used than it was given."""
    import jax

    import jaxnet.sim.run as run
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "profile.py"
    monkeypatch.syspath_prepend(str(path.parent))
    module = load_script(path)
    tracing, overflowed, advance_chunk = [False], [], run.advance_chunk
    start_trace, stop_trace = jax.profiler.start_trace, jax.profiler.stop_trace
    monkeypatch.setattr(jax.profiler, "start_trace", lambda *a: (tracing.__setitem__(0, True), start_trace(*a))[1])
    monkeypatch.setattr(jax.profiler, "stop_trace", lambda: (tracing.__setitem__(0, False), stop_trace())[1])

    def overflowing_once(*args, **kwargs):
        state, sleep, peak, used = advance_chunk(*args, **kwargs)
        if tracing[0] and not overflowed:
            overflowed.append(used)
            used = tuple(2 * capacity for capacity in used)
        return state, sleep, peak, used

    monkeypatch.setattr(run, "advance_chunk", overflowing_once)
    report = module.profile("hamming", "minimal", 4, 0.5, cycles=20)
    assert overflowed and report["profiled_chunks"] >= 2 and not report["profiled_chunk_redone"]
    assert report["lists"] == [2 * capacity for capacity in overflowed[0]]
    assert report["us_per_cycle_in_operations"] > 0


@pytest.mark.parametrize("mode", ["alternate", "interleaved"])
def test_bench_ab_measures_two_revisions_and_their_ratio(tmp_path, mode):
    """benchmarks/bench_ab.py takes each revision's engine from git, measures each in its own
    process (one after the other, or taking turns window by window), and writes every
    measurement and the after / before ratio per case. Every buffer visited: each capacity
    tier of the lists would compile, and the tool's mechanics are the same."""
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "ab.jsonl"
    subprocess.run([sys.executable, str(root / "benchmarks" / "bench_ab.py"), "--before", "HEAD", "--network", "hamming",
                    "--cases", "minimal:2:0.3", "--rounds", "1", "--mode", mode, "--chunk", "50",
                    "--chunks", "1", "--repeats", "1", "--warmup-chunks", "1", "--every-buffer", "--out", str(out)],
                   check=True, cwd=tmp_path)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert [(row["revision"], row["commit"].rstrip("+")) for row in rows[:2]] == [("before", head), ("after", head)]
    assert all(row["router_cycles_per_s"] > 0 and row["vcs"] == 2 for row in rows[:2])
    summary = rows[2]
    assert summary["after_over_before"] == [round(rows[1]["router_cycles_per_s"] / rows[0]["router_cycles_per_s"], 3)]


@pytest.mark.parametrize("arguments, message", [
    (["--cases", "minimal:4"], "--cases 'minimal:4': 'minimal:4' must be routing:vcs:load"),
    (["--cases", "minimal:4:1.5"], "load in (0, 1]"),
    (["--before", "no-such-revision"], "--before no-such-revision: not a commit of this repository"),
    (["--rounds", "0"], "--rounds 0: must be at least 1"),
    (["--warmup-chunks", "0"], "--warmup-chunks 0: must be at least 1"),
    (["--router", "[1]"], "argument --router: '[1]' must be a JSON object of router settings"),
])
def test_bench_ab_bad_arguments_are_one_line_errors(arguments, message):
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, str(root / "benchmarks" / "bench_ab.py"), *arguments, "--mode", "alternate"],
                            capture_output=True, text=True)
    assert result.returncode != 0 and message in result.stderr and "Traceback" not in result.stderr


def test_why_awake_bad_load_is_a_one_line_error():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "why_awake.py"), "--load", "1.5"],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "--load 1.5: must be in (0, 1]" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("setting", ["sim.loads=[1.0]", "sim.checkpoint_every"])
def test_gallery_takes_only_settings_that_leave_results_unchanged(setting):
    """scripts/gallery.py --set passes a setting to every sweep only if it leaves the rows
    unchanged (a figure's points would otherwise mix two configurations)."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gallery.py"), "--set", setting, "polarized/fig4"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and f"--set {setting}: must be KEY=VALUE with KEY one of" in result.stderr
    assert "sim.checkpoint_every" in result.stderr and "Traceback" not in result.stderr


def test_device_gallery_stops_at_its_budget_and_archives_what_a_later_run_needs(tmp_path):
    """scripts/device_gallery.sh starts no figure it has no time for, and archives the gallery's
    records and page in $OUT/gallery.tar.gz."""
    result = subprocess.run(["bash", str(ROOT / "scripts" / "device_gallery.sh"), "1", "polarized/fig4"],
                            cwd=ROOT, env={**os.environ, "OUT": str(tmp_path)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "budget spent: polarized/fig4" in result.stdout
    with tarfile.open(tmp_path / "gallery.tar.gz") as archive:
        names = archive.getnames()
    assert "docs/gallery.md" in names and any(n.startswith("docs/gallery/records/") for n in names)


def test_prepare_device_without_a_figure_says_what_it_needs():
    """scripts/prepare_device.sh without a figure stops with its usage, before it fetches or
    builds anything."""
    result = subprocess.run(["bash", str(ROOT / "scripts" / "prepare_device.sh")], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "usage: bash scripts/prepare_device.sh NAME..." in result.stderr


def test_gallery_build_only_fills_the_network_cache_and_simulates_nothing(tmp_path):
    """scripts/gallery.py --build-only builds each distinct network of the named figures (one
    per routing here) into JAXNET_NETWORK_CACHE and runs no sweep; a second call rebuilds
    nothing; without a figure it says what it needs."""
    cache = tmp_path / "cache"
    env = {**os.environ, "JAXNET_NETWORK_CACHE": str(cache)}
    command = [sys.executable, str(ROOT / "scripts" / "gallery.py"), "--build-only", "--scale", "small", "valiant/fig3"]
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count(": in the cache") == 3 and "$ jaxnet" not in first.stdout  # MIN, RVAL, RVAL-Recomp
    entries = {p.name: p.stat().st_mtime_ns for p in cache.glob("*.pkl")}
    assert len([name for name in entries if not name.startswith("topology-")]) == 3
    second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert {p.name: p.stat().st_mtime_ns for p in cache.glob("*.pkl")} == entries
    bare = subprocess.run(command[:3], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert bare.returncode != 0 and "--build-only: name the figures" in bare.stderr
    unknown = subprocess.run([*command[:-1], "valiant/fig99"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "unknown experiment valiant/fig99" in unknown.stderr
    assert "Traceback" not in unknown.stderr and "valiant/fig3" in unknown.stderr  # the allowed names


def test_gallery_refresh_merges_only_the_named_figures_and_keeps_records_without_rows(monkeypatch):
    """scripts/gallery.py --refresh NAME --scale S re-merges only that figure, with its title and
    claims as the experiment file states them now; a record whose sweep holds no rows on this
    machine (figures filed from another machine) keeps its figures and only has its causes
    restated."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    gallery = load_script(ROOT / "scripts" / "gallery.py")
    claim = {"claim": "c", "cause": "now"}
    records = [{"name": "a/fig1", "scale": "paper", "claims": "| c | was |"},
               {"name": "a/fig1", "scale": "small", "claims": "| c | was |"},
               {"name": "b/fig2", "scale": "paper", "claims": "| c | was |"}]
    merged, published, saved = [], [], []
    monkeypatch.setattr(gallery, "records", lambda: [dict(r) for r in records])
    monkeypatch.setattr(gallery, "sweep_jobs", lambda name, scale: [{"experiment": {"title": "T", "claims": [claim]}}])
    monkeypatch.setattr(gallery, "sweep_rows", lambda sweep: [{"experiment": "a/fig1"}] if "a_fig1" in str(sweep) else [])
    monkeypatch.setattr(gallery.collect, "write_outputs", lambda rows, out, experiments_now: merged.append(experiments_now))
    monkeypatch.setattr(gallery, "publish", lambda out, record: published.append((record["name"], record["scale"])))
    monkeypatch.setattr(gallery.claim_tables, "with_causes", lambda table, causes: f"restated {causes}")
    monkeypatch.setattr(gallery, "save_record", lambda key, record: saved.append(record))
    gallery.refresh(["a/fig1", "b/fig2"], "paper")
    assert merged == [{"a/fig1": {"title": "T", "claims": [claim]}}] and published == [("a/fig1", "paper")]
    assert [(r["name"], r["claims"]) for r in saved] == [("b/fig2", "restated {'c': 'now'}")]


def test_gallery_files_the_complete_figures_of_an_interrupted_sweep(monkeypatch):
    """An interrupted sweep of several figures (Ctrl-C, or device_gallery.sh's budget) files
    each figure whose points are all done, and only those, each record saying how many of its
    points earlier runs made; the exit message names them."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    gallery = load_script(ROOT / "scripts" / "gallery.py")

    class InterruptedApp:  # a SIGTERM to the script alone: the app is told to stop
        calls: list = []

        def __init__(self, *args, **kwargs):
            pass

        def wait(self, timeout=None):
            InterruptedApp.calls.append(("wait", timeout))
            if len(InterruptedApp.calls) == 1:
                raise KeyboardInterrupt
            if timeout is not None:
                raise gallery.subprocess.TimeoutExpired("jaxnet", timeout)
            return 130

        def terminate(self):
            InterruptedApp.calls.append(("terminate", None))

    def row(experiment, load, device="cpu", batch=1):
        return {"experiment": experiment, "config_id": experiment, "offered_load": load, "seed": 1,
                "device": device, "batch": batch}

    calls = iter([[row("a/fig1", 0.1, "NVIDIA H200", 60)],
                  [row("a/fig1", 0.1, "NVIDIA H200", 60), row("a/fig1", 0.2), row("b/fig2", 0.1)]])
    merged, published = [], []
    monkeypatch.setattr(gallery.subprocess, "Popen", InterruptedApp)
    monkeypatch.setattr(gallery, "sweep_rows", lambda out: next(calls))
    monkeypatch.setattr(gallery, "figure_points", lambda name, scale: 2)
    monkeypatch.setattr(gallery, "router_cycles", lambda rows: 10**6)
    monkeypatch.setattr(gallery, "paper_cost", lambda name: None)
    monkeypatch.setattr(gallery.collect, "write_outputs", lambda rows, out: merged.append(len(rows)))
    monkeypatch.setattr(gallery, "publish", lambda out, record: published.append(record))
    with pytest.raises(SystemExit, match="3 point.*filed: a/fig1\\)"):
        gallery.run(["a/fig1", "b/fig2"], "paper", [])
    assert InterruptedApp.calls == [("wait", None), ("wait", gallery.APP_STOPS_S), ("terminate", None), ("wait", None)]
    assert merged == [2] and [(r["name"], r["exit"]) for r in published] == [("a/fig1", 0)]
    assert "interrupted after every point of this figure" in published[0]["note"]
    assert ("1 of this figure's 2 points came from earlier, interrupted runs of the sweep (its points by device: "
            "1 on NVIDIA H200 (batch 60), 1 on cpu (batch 1))") in published[0]["note"]


def test_gallery_keeps_the_record_of_a_figure_that_ran_nothing(monkeypatch, tmp_path):
    """A sweep rerun after some of its figures were filed (a later lease going on from the
    committed points) files only the figures it simulated: a filed figure whose every point was
    done before keeps its record, which names the device and wall time that made it."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    gallery = load_script(ROOT / "scripts" / "gallery.py")

    class App:
        def __init__(self, *args, **kwargs):
            pass

        def wait(self, timeout=None):
            return 0

    def row(experiment, load):
        return {"experiment": experiment, "config_id": experiment, "offered_load": load, "seed": 1}

    done_before = [row("a/fig1", 0.1), row("a/fig1", 0.2), row("c/fig3", 0.1)]
    calls = iter([done_before, done_before + [row("b/fig2", 0.1)]])
    monkeypatch.setattr(gallery, "RECORDS", tmp_path)
    (tmp_path / "a_fig1_paper.json").write_text("{}")  # a/fig1 was filed, c/fig3 never was
    published = []
    monkeypatch.setattr(gallery.subprocess, "Popen", App)
    monkeypatch.setattr(gallery, "sweep_rows", lambda out: next(calls))
    monkeypatch.setattr(gallery, "router_cycles", lambda rows: 10**6)
    monkeypatch.setattr(gallery, "paper_cost", lambda name: None)
    monkeypatch.setattr(gallery.collect, "write_outputs", lambda rows, out: None)
    monkeypatch.setattr(gallery, "publish", lambda out, record: published.append(record["name"]))
    gallery.run(["a/fig1", "b/fig2", "c/fig3"], "paper", [])
    assert published == ["b/fig2", "c/fig3"]


def test_gallery_reuses_points_other_figures_simulated_and_counts_only_its_own(monkeypatch, tmp_path):
    """A gallery sweep takes the points other figures already simulated (`reuse` of the scale's
    outputs and filed rows), and its record counts only the router-cycles it simulated."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    gallery = load_script(ROOT / "scripts" / "gallery.py")
    commands = []

    class App:
        def __init__(self, command, **kwargs):
            commands.append((command, kwargs.get("cwd")))

        def wait(self, timeout=None):
            return 0

    def row(load, reused_from=""):
        return {"experiment": "a/fig1", "config_id": "a", "offered_load": load, "seed": 1, "reused_from": reused_from}

    new = [row(0.1, "docs/gallery/paper/b_fig2_paper/results.csv"), row(0.2)]
    calls = iter([[], new])
    counted, published = [], []
    monkeypatch.setattr(gallery, "RECORDS", tmp_path)
    monkeypatch.setattr(gallery.subprocess, "Popen", App)
    monkeypatch.setattr(gallery, "sweep_rows", lambda out: next(calls))
    monkeypatch.setattr(gallery, "router_cycles", lambda rows: counted.append(rows) or 10**6 * len(rows))
    monkeypatch.setattr(gallery, "paper_cost", lambda name: None)
    monkeypatch.setattr(gallery, "publish", lambda out, record: published.append(record))
    gallery.run(["a/fig1"], "paper", [])
    (command, cwd), = commands
    assert cwd == gallery.ROOT and "reuse=['outputs/gallery/paper','docs/gallery/paper']" in command
    assert counted == [[new[1]]]
    assert published[0]["note"].startswith("1.00e+06 router-cycles simulated in this run")
    assert "; 1 point(s) reused from other figures' runs" in published[0]["note"]
