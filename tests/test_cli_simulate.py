"""The `jaxnet` Hydra app: results.csv columns, plots, resume, clear errors (in-process, as
the console script runs it; tests/test_sweep.py starts it as a process)."""
import os
import subprocess
import sys

from apps import run_app

from jaxnet.cli import simulate
from jaxnet.results import LEADING_COLUMNS, read_rows

SMALL = ["topology.routers=12", "topology.degree=4", "topology.servers_per_router=2",
         "sim.seeds=[1]", "sim.warmup=100", "sim.measure=300", "sim.chunk=200"]


def _run(tmp_path, *overrides):
    """(exit code, stderr) of `jaxnet` with the small network and these overrides."""
    return run_app(simulate, tmp_path, *SMALL, *overrides)


def _rows(tmp_path):
    return read_rows(tmp_path / "results.csv")[0]


def test_results_plots_and_resume(tmp_path, capfd):
    code, stderr = _run(tmp_path, "sim.loads=[0.2,0.4]")
    assert code == 0, stderr
    rows = _rows(tmp_path)
    assert len(rows) == 2
    assert list(rows[0])[: len(LEADING_COLUMNS)] == LEADING_COLUMNS
    assert {"config", "config_id", "jaxnet_version"} <= set(rows[0])
    for name in ("throughput.png", "latency.png", "jain.png"):
        assert (tmp_path / name).stat().st_size > 0
    capfd.readouterr()
    code, stderr = _run(tmp_path, "sim.loads=[0.2,0.4,0.6]")
    assert code == 0, stderr
    again = _rows(tmp_path)
    assert len(again) == 3
    assert again[:2] == rows  # finished points are kept, not recomputed
    assert "1 new point(s), 2 already" in capfd.readouterr().out + stderr


def test_bad_parameter_is_one_line_without_traceback(tmp_path):
    code, stderr = _run(tmp_path, "router.vcs=1", "sim.loads=[0.5]")
    assert code == 2
    assert "router.vcs=1 is invalid" in stderr
    assert "Traceback" not in stderr


def test_console_script_runs_the_exit_handlers_flushes_and_exits_with_the_apps_code():
    """The console scripts end the process without unloading every module
    (`common.console_script`): what a normal exit does first still happens (exit handlers
    such as logging's, buffered output written), and the exit code is the app's."""
    app = ("import atexit, sys; from jaxnet.cli.common import console_script; "
           "atexit.register(lambda: print('handled')); "
           "console_script(lambda: print('result') or int(sys.argv[1]))()")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as in a pipe
    for code in (0, 3):
        done = subprocess.run([sys.executable, "-c", app, str(code)], capture_output=True, text=True, env=env)
        assert (done.returncode, done.stdout) == (code, "result\nhandled\n"), done.stderr


def test_an_app_whose_reader_stops_reading_exits_without_a_traceback():
    """`jaxnet --help | head -1`: the pipe closes before the app writes; the app ends with
    exit code 1 and nothing on stderr (Python's default is a BrokenPipeError traceback)."""
    reader, writer = os.pipe()
    os.close(reader)  # nobody reads: the app's first write to stdout fails
    done = subprocess.run([sys.executable, "-m", "jaxnet.cli.simulate", "--help"], stdout=writer,
                          stderr=subprocess.PIPE, text=True)
    os.close(writer)
    assert (done.returncode, done.stderr) == (1, "")
