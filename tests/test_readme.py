"""The README works as written: every `jaxnet*` command of its bash blocks runs (in-process,
with tiny cycle counts and sizes added where the command's own would take minutes).
Experiments at paper scale are only composed and resolved here (their runs are the
gallery's); the small-scale experiment command and the Polarized ones run in the slow tier."""
import re
import shlex
from pathlib import Path

import pytest
from apps import run_app

from jaxnet.cli import paths, plot, simulate, tables, topo
from jaxnet.cli.experiment import sweep_jobs

README = Path(__file__).resolve().parents[1] / "README.md"
APPS = {"jaxnet": simulate, "jaxnet-topo": topo, "jaxnet-paths": paths, "jaxnet-tables": tables}
TINY = {
    "jaxnet": ["sim.loads=[0.3]", "sim.seeds=[1]", "sim.warmup=20", "sim.measure=40", "sim.chunk=20"],
    "jaxnet-paths": ["paths.cycles=1", "paths.optax.steps=50", "paths.dual.steps=50"],
}


def readme_commands() -> list[str]:
    """The README's commands, continuation lines joined and trailing comments dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#")[0] if " #" in line else line
            line = line.split("&&")[-1].strip()
            if line.startswith("jaxnet"):
                commands.append(" ".join(line.split()))
    return commands


COMMANDS = readme_commands()


def _param(command):
    # slow tier: a small-scale figure (minutes), and Polarized on RRGs (sizing its VCs follows
    # every route: about 20 s each)
    slow = ("+experiment=" in command and "scale=paper" not in command) or "polarized" in command
    return pytest.param(command, marks=pytest.mark.slow if slow else (), id=command[:60])


def test_the_readme_has_commands_for_every_app():
    assert {c.split()[0] for c in COMMANDS} >= {*APPS, "jaxnet-plot"}


@pytest.mark.parametrize("command", [_param(c) for c in COMMANDS])
def test_readme_command_runs(command, tmp_path):
    app, *args = shlex.split(command)
    if app == "jaxnet-plot":  # its argument is a placeholder for a sweep directory
        code, _ = run_app(simulate, tmp_path / "run", *TINY["jaxnet"])
        assert code == 0
        assert plot.main([str(tmp_path / "run"), "--out", str(tmp_path / "merged")]) == 0
        assert (tmp_path / "merged" / "throughput.png").exists()
        return
    if "+experiment=" in command and "scale=paper" in command:
        name = next(a.split("=", 1)[1] for a in args if a.startswith("+experiment="))
        overrides = [a for a in args if "=" in a and not a.startswith(("+experiment", "scale", "hydra"))]
        assert sweep_jobs(name, "paper", overrides)
        return
    extra = [f"hydra.sweep.dir={tmp_path / 'sweep'}"] if "-m" in args else []
    code, stderr = run_app(APPS[app], tmp_path / "run", *args, *TINY.get(app, []), *extra)
    assert code == 0, stderr
