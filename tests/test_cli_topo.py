"""`jaxnet-topo` end to end, as a subprocess (the Hydra app with its real config)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jaxnet.topology import build_topology


def run_topo(tmp_path, *overrides):
    return subprocess.run(
        [sys.executable, "-m", "jaxnet.cli.topo", f"hydra.run.dir={tmp_path}", *overrides],
        capture_output=True, text=True, timeout=120,
    )


def test_text_summary(tmp_path):
    out = run_topo(tmp_path, "topology=slimfly", "topology.q=5", "topology.servers_per_router=3")
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(None, 1) for line in out.stdout.strip().splitlines())
    assert lines["routers"] == "50" and lines["servers"] == "150" and lines["diameter"] == "2"
    assert json.loads((tmp_path / "summary.json").read_text())["routers"] == 50


def test_json_is_exactly_one_object_and_export_writes_the_graph(tmp_path):
    target = tmp_path / "df.graphml"
    out = run_topo(tmp_path, "topology=dragonfly", "topology.a=4", "topology.h=2",
                   "format=json", f"export={target}")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)  # fails on anything else on stdout
    assert {"routers", "servers", "degree_min", "degree_max", "radius", "diameter",
            "average_distance"} <= set(summary)
    assert (summary["routers"], summary["degree_max"], summary["diameter"]) == (36, 5, 3)
    again = build_topology(dict(name="file", path=str(target)))
    assert again.n_routers == 36 and set(again.link_class_names) == {"local", "global"}


@pytest.mark.parametrize("overrides,message", [
    (["topology=rrg", "topology.routers=9", "topology.degree=3"], "topology.degree=3 is invalid"),
    (["topology=slimfly", "topology.q=6"], "topology.q=6 is invalid"),
    (["topology=file", "topology.path=/no/such.edgelist"], "topology.path='/no/such.edgelist'"),
    (["topology=torus", "topology.sides=[4,1]"], "topology.sides=1 is invalid"),
    (["format=yaml"], "format='yaml' is invalid"),
])
def test_bad_parameters_print_one_line_without_traceback(tmp_path, overrides, message):
    out = run_topo(tmp_path, *overrides)
    assert out.returncode != 0
    assert out.stdout == ""
    assert out.stderr.startswith("error: ") and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_the_app_leaves_jaxnets_loggers_working_in_its_process(tmp_path):
    """The info apps log nothing below an error, without disabling the loggers that exist
    already (Hydra's `disabled` logging did): jaxnet's warnings still reach whatever runs in
    the same process afterwards."""
    import logging

    from apps import run_app
    from jaxnet.cli import topo

    logger = logging.getLogger("jaxnet")
    assert run_app(topo, tmp_path, "topology=rrg", "topology.routers=8", "topology.degree=3")[0] == 0
    heard, level = [], logger.level
    handler = logging.Handler(logging.WARNING)
    handler.emit = heard.append
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)  # as the jaxnet app's logging or a caplog sets it
    try:
        logger.warning("still heard")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert not logger.disabled and [record.getMessage() for record in heard] == ["still heard"]
