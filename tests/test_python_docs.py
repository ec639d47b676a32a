"""docs/python.md works as written: every Python block runs as it stands (its sizes are
already small), and the notebook-style example runs at tiny sizes and writes its figure."""
import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "python.md").read_text(), flags=re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_python_block_runs(code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/python.md", "exec"), {})  # noqa: S102 (the documentation's own code)
    assert capsys.readouterr().out.strip()


def test_the_example_notebook_runs_and_plots(tmp_path, monkeypatch):
    figure = tmp_path / "sweep.png"
    monkeypatch.setattr(sys, "argv", ["load_sweep.py", "--out", str(figure), "--warmup", "20", "--measure", "60"])
    runpy.run_path(str(ROOT / "docs" / "examples" / "load_sweep.py"), run_name="__main__")
    assert figure.stat().st_size > 0
