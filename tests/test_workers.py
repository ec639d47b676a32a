"""Killing a job kills its workers, and loses nothing: a parent killed with SIGKILL takes its
worker processes with it at once (no orphan finishes its sub-batch and deletes its
checkpoint, no traceback), and the rerun resumes every sub-batch from its last checkpoint,
with the rows of a run that was never interrupted. Real processes throughout."""
import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from apps import run_app

from jaxnet.cli import simulate as simulate_app
from jaxnet.sim import checkpoint as checkpoints

# Two points, one sub-batch each, one per worker; long enough that both workers have saved
# a checkpoint well before they finish.
RUN = ["topology.routers=12", "topology.degree=4", "topology.servers_per_router=2", "sim.seeds=[1]",
       "sim.loads=[0.3,0.9]", "sim.sub_batch=1", "sim.warmup=100", "sim.measure=100000", "sim.chunk=500",
       "sim.checkpoint_every=500"]
RESULTS_ONLY = ("wall_s", "first_chunk_s", "date", "row_sha", "config")  # differ between runs


def _rows(directory: Path) -> dict:
    with open(directory / "results.csv", newline="") as f:
        return {row["offered_load"]: {k: v for k, v in row.items() if k not in RESULTS_ONLY}
                for row in csv.DictReader(f)}


def _children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for a reaper that may never come)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigkill_takes_the_workers_and_the_rerun_resumes_every_checkpoint(tmp_path, monkeypatch):
    killed = tmp_path / "killed"
    job = subprocess.Popen([sys.executable, "-m", "jaxnet.cli.simulate", f"hydra.run.dir={killed}", *RUN,
                            "sim.workers=2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while len(list(killed.glob("checkpoint-*.npz"))) < 2 and time.time() < deadline and job.poll() is None:
        time.sleep(0.02)
    assert job.poll() is None, job.communicate()
    children = _children(job.pid)  # the pool's workers and multiprocessing's resource tracker
    assert len([pid for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]) == 2
    os.kill(job.pid, signal.SIGKILL)
    killed_at = time.time()
    _, stderr = job.communicate(timeout=60)  # the workers share its stdout and stderr
    while [pid for pid in children if _running(pid)] and time.time() < killed_at + 5:
        time.sleep(0.02)
    assert not [pid for pid in children if _running(pid)], "the workers outlived their parent"
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    assert not (killed / "results.csv").exists()  # neither point finished: both are in checkpoints
    left = sorted(killed.glob("checkpoint-*.npz"))
    assert len(left) == 2

    loaded = []
    load = checkpoints.load

    def recording(path, like, signature):
        restored = load(path, like, signature)
        loaded.append((Path(path).name, None if restored is None else restored[1]))
        return restored

    # the rerun in this process (one worker) to see every checkpoint loaded: results never
    # depend on where a point runs
    monkeypatch.setattr(checkpoints, "load", recording)
    code, stderr = run_app(simulate_app, killed, *RUN, "sim.workers=1")
    assert code == 0, stderr
    assert sorted(name for name, _ in loaded) == [p.name for p in left]
    assert all(chunk is not None and chunk >= 1 for _, chunk in loaded), loaded  # resumed, not restarted
    monkeypatch.undo()
    code, stderr = run_app(simulate_app, tmp_path / "whole", *RUN, "sim.workers=1", "sim.checkpoint_every=null")
    assert code == 0, stderr
    assert _rows(killed) == _rows(tmp_path / "whole")
    assert not list(killed.glob("checkpoint-*")) and not (killed / "checkpoints.json").exists()
