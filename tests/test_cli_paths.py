"""`jaxnet-paths`: one JSON object on stdout, files in the run directory, one-line errors
(in-process, as the console script runs it)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from apps import run_app

from jaxnet.cli import paths

BASE = ["topology=dragonfly", "topology.a=3", "topology.h=2", "paths.k=3", "paths.cycles=2",
        "paths.optax.steps=200", "paths.dual.steps=200"]


@pytest.fixture
def run_cli(capfd):
    def run(tmp_path, *overrides):
        """returncode, stdout and stderr of `jaxnet-paths` with these overrides."""
        capfd.readouterr()
        code, stderr = run_app(paths, tmp_path, *BASE, *overrides)
        return SimpleNamespace(returncode=code, stdout=capfd.readouterr().out, stderr=stderr)

    return run


def test_json_output_and_files(tmp_path, run_cli):
    result = run_cli(tmp_path, "paths.algorithm=multi_mcf_cyclic", "format=json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)  # exactly one JSON object, nothing else
    for key in ("pmax", "paths", "mean_path_length", "max_link_load_uniform",
                "max_link_load_optimal", "max_link_load_optax", "seconds"):
        assert key in summary
    assert summary["max_link_load_optimal"] <= summary["max_link_load_uniform"]
    bound, optimal = summary["max_link_load_lower_bound"], summary["max_link_load_optimal"]
    assert bound <= optimal * (1 + 1e-6) <= summary["max_link_load_optax"] * (1 + 2e-6)
    assert summary["paths"] == 21 * 20 * 3
    for name in ("paths.npz", "weights.npz", "summary.json", "path_counts.png"):
        assert (tmp_path / name).exists()


@pytest.mark.parametrize(
    "override, parameter",
    [("paths.k=0", "paths.k"), ("paths.algorithm=ksp", "paths.algorithm"), ("format=yaml", "format"),
     ("paths.lp_method=simplex", "paths.lp_method")],
)
def test_bad_parameters_give_one_line(tmp_path, run_cli, override, parameter):
    result = run_cli(tmp_path, override)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and parameter in lines[0]


def test_without_lp_the_dual_bound_still_certifies(tmp_path, run_cli):
    result = run_cli(tmp_path, "paths.lp_method=none", "format=json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["max_link_load_optimal"] is None and summary["lp_seconds"] is None
    assert 1.0 <= summary["optax_gap"] == pytest.approx(
        summary["max_link_load_optax"] / summary["max_link_load_lower_bound"], rel=1e-5)
