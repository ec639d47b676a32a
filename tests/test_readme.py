"""The README and docs/ work as written: every `jaxnet*` command in their code blocks runs
(in-process, in a scratch directory, with tiny cycle counts and sizes added where the
command's own would take minutes), and every `python scripts/...` or `python benchmarks/...`
command, in a code block
or inline, parses: its script accepts those arguments (running them regenerates the docs'
tables and the gallery, minutes to hours each). Experiments at paper scale or on a SLURM
launcher are only composed and resolved here (their runs are the gallery's); small-scale
experiment commands, Polarized on RRGs, 100-sample RRG medoids and networks of the papers'
size run in the slow tier."""
import argparse
import re
import runpy
import shlex
import sys
from pathlib import Path

import pytest
from apps import run_app

from jaxnet.cli import paths, plot, simulate, tables, topo
from jaxnet.cli.experiment import sweep_jobs

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
APPS = {"jaxnet": simulate, "jaxnet-topo": topo, "jaxnet-paths": paths, "jaxnet-tables": tables}
TINY = {
    "jaxnet": ["sim.loads=[0.3]", "sim.seeds=[1]", "sim.warmup=20", "sim.measure=40", "sim.chunk=20"],
    "jaxnet-paths": ["paths.cycles=1", "paths.optax.steps=50", "paths.dual.steps=50"],
}
# sizes a command keeps but smaller, where it gives them (a 114-router Dragonfly's balanced paths
# and LP take 15 s; a 36-router one's exercise the same code)
SMALLER = {"topology.a": "4", "topology.h": "2"}
SCRIPT = re.compile(r"^python (scripts|benchmarks)/")
COMMAND = re.compile(r"^(jaxnet(-[a-z]+)?( |$)|python (scripts|benchmarks)/)")


def commands_in(text: str) -> list[str]:
    """The commands of a Markdown text: lines of its code blocks (fenced or indented) that
    start with an app or a script, continuation lines joined and trailing comments dropped,
    and inline `python scripts/...` and `python benchmarks/...` commands (optional `[...]`
    arguments left out); lines with
    placeholders (`<dir>`, `...`) only for jaxnet-plot, whose directories the test makes."""
    lines = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        lines += block.replace("\\\n", " ").splitlines()
    lines += [line[4:] for line in text.splitlines() if line.startswith("    ")]
    lines += [re.sub(r"\[[^]]*\]", "", inline)
              for inline in re.findall(r"`(python (?:scripts|benchmarks)/[^`]+)`", text)]
    commands = []
    for line in lines:
        line = line.split(" #")[0].split("&&")[-1].strip()
        placeholder = ("<" in line or "..." in line) and not line.startswith("jaxnet-plot")
        if COMMAND.match(line) and not placeholder:
            commands.append(" ".join(line.split()))
    return list(dict.fromkeys(commands))


def _as_run(command: str) -> str:
    """The command as the test runs it: the tiny values replace the command's own."""
    app, *args = shlex.split(command)
    tiny = TINY.get(app, [])
    shrunk = {t.split("=")[0] for t in tiny}
    args = [f"{a.split('=')[0]}={SMALLER[a.split('=')[0]]}" if a.split("=")[0] in SMALLER else a for a in args]
    return shlex.join([app, *[a for a in args if a.split("=")[0] not in shrunk], *tiny])


def _cases():
    """(document, command) for every command, each run once (the first document that has it)."""
    seen, cases = set(), []
    for doc in DOCUMENTS:
        for command in commands_in(doc.read_text()):
            if _as_run(command) not in seen:
                seen.add(_as_run(command))
                cases.append((doc.relative_to(ROOT).as_posix(), command))
    return cases


CASES = _cases()


def _composed_only(command: str) -> bool:
    """Experiments at paper scale or on a launcher: composed and resolved, not run."""
    return "+experiment=" in command and ("scale=paper" in command or "hydra/launcher" in command)


def _paper_size(command: str) -> bool:
    """A simulation of a network of the papers' size (hundreds of routers): seconds to build
    its tables and compile."""
    return command.startswith("jaxnet ") and any(
        int(n) >= 200 for n in re.findall(r"topology\.routers=(\d+)", command))


def _param(doc, command):
    slow = not _composed_only(command) and (
        "+experiment=" in command or ("polarized" in command and command.startswith("jaxnet "))
        or "medoid_of=100" in command or _paper_size(command))
    return pytest.param(command, marks=pytest.mark.slow if slow else (), id=f"{doc}: {command[:60]}")


def test_the_readme_has_commands_for_every_app():
    readme = commands_in(DOCUMENTS[0].read_text())
    assert {c.split()[0] for c in readme} >= {*APPS, "jaxnet-plot"}


def test_commands_are_found_in_the_docs_too():
    assert {doc for doc, _ in CASES} >= {"README.md", "docs/experiments.md", "docs/gallery.md", "docs/topologies.md"}
    assert any(c.startswith("python scripts/") for _, c in CASES)


class _Parsed(Exception):
    """Raised once a script has parsed its arguments: the test stops it there."""


def _parse_only(monkeypatch, command: str) -> None:
    script, *args = shlex.split(command)[1:]
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        parse(self, args, namespace)  # exits 2 on an argument the script does not take
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [script, *args])
    monkeypatch.syspath_prepend(str((ROOT / script).parent))
    with pytest.raises(_Parsed):
        runpy.run_path(str(ROOT / script), run_name="__main__")


def test_a_script_argument_it_does_not_take_fails_the_check(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        _parse_only(monkeypatch, "python benchmarks/bench.py --suite nope")


@pytest.mark.parametrize("command", [_param(doc, c) for doc, c in CASES])
def test_documented_command_runs(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # files a command writes (an export, outputs/) land here
    if SCRIPT.match(command):
        _parse_only(monkeypatch, command)
        return
    app, *args = shlex.split(command)
    if app == "jaxnet-plot":  # its arguments are placeholders for result directories
        code, _ = run_app(simulate, tmp_path / "run", *TINY["jaxnet"])
        assert code == 0
        assert plot.main([str(tmp_path / "run"), "--out", str(tmp_path / "merged")]) == 0
        assert (tmp_path / "merged" / "throughput.png").exists()
        return
    if _composed_only(command):
        name = next(a.split("=", 1)[1] for a in args if a.startswith("+experiment="))
        scale = next((a.split("=", 1)[1] for a in args if a.startswith("scale=")), "small")
        overrides = [a for a in args if "=" in a and not a.startswith(("+experiment", "scale", "hydra"))]
        assert sweep_jobs(name, scale, overrides)
        return
    args = shlex.split(_as_run(command))[1:]
    extra = [f"hydra.sweep.dir={tmp_path / 'sweep'}"] if "-m" in args else []
    code, stderr = run_app(APPS[app], tmp_path / "run", *args, *extra)
    assert code == 0, stderr
