"""Files that are not results, and the apps' output options: a results.csv that jaxnet did not
write stops a run with one line naming it (and is left as it is), a sweep's merge leaves it
out with a warning; `plot.formats` is checked before simulating; `jaxnet-paths` says when it
finds fewer than k paths and takes a pattern's name as its demand; the blocks an experiment's
rows share are written once per table and read back whole (no simulation here)."""
from __future__ import annotations

import csv
import json
import logging

import pytest
from apps import assert_one_line, run_app
from omegaconf import OmegaConf
from synthetic import experiment_rows, plain_job, rows_of_jobs

from jaxnet.cli import paths, simulate
from jaxnet.cli.sweep import CollectSweep
from jaxnet.results import collect
from jaxnet.results.table import SHARED_BLOCK, SHARED_BLOCKS, read_rows, write_rows

TINY = ["sim.loads=[0.3]", "sim.seeds=[1]", "sim.warmup=20", "sim.measure=40", "sim.chunk=20"]
PATHS = ["topology=dragonfly", "topology.a=3", "topology.h=2", "paths.cycles=1", "paths.lp_method=none",
         "paths.optax.steps=20", "paths.dual.steps=20", "format=json"]


@pytest.fixture(scope="module")
def rows():
    return rows_of_jobs([plain_job("sim.loads=[0.2,0.6]"), plain_job("routing=valiant", "sim.loads=[0.2,0.6]")])


def _binary(path):
    path.write_bytes(bytes(range(256)) * 4)


def _no_config_id(path, rows):
    write_rows(path, [{k: v for k, v in r.items() if k != "config_id"} for r in rows])


@pytest.mark.parametrize("kind", ["binary", "foreign"])
def test_a_run_directory_with_a_foreign_results_csv_stops_before_simulating(tmp_path, rows, kind):
    results = tmp_path / "results.csv"
    _binary(results) if kind == "binary" else _no_config_id(results, rows)
    before = results.read_bytes()
    code, stderr = run_app(simulate, tmp_path, *TINY)
    assert code == 2
    assert_one_line(stderr, f"error: {results} is not a jaxnet results table", "move it out of the way")
    assert results.read_bytes() == before  # never overwritten


def test_bad_figure_formats_stop_the_run_before_simulating(tmp_path):
    code, stderr = run_app(simulate, tmp_path, *TINY, "plot.formats=[png,gif]")
    assert code == 2
    assert_one_line(stderr, "plot.formats=", "is invalid: a non-empty list of png, pdf, svg")
    assert not (tmp_path / "results.csv").exists()


def test_a_sweep_merge_leaves_a_foreign_job_file_out_with_a_warning(tmp_path, rows, caplog):
    for job in ("0", "1"):
        (tmp_path / job).mkdir()
    write_rows(tmp_path / "0" / "results.csv", rows)
    _binary(tmp_path / "1" / "results.csv")
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}, "plot": {"formats": ["svg"]}})
    with caplog.at_level(logging.WARNING, logger="jaxnet"):
        CollectSweep().on_multirun_end(config)
    assert any(str(tmp_path / "1" / "results.csv") in record.getMessage() for record in caplog.records)
    assert len(collect.load([tmp_path])[0]) == len(rows)  # the merged table at the root
    assert (tmp_path / "throughput.svg").exists() and not (tmp_path / "throughput.png").exists()


def test_jaxnet_paths_says_how_many_pairs_have_fewer_than_k_paths(tmp_path, capfd):
    code, stderr = run_app(paths, tmp_path, *PATHS, "paths.k=10", "plot.formats=[svg]")
    assert code == 0, stderr
    summary = json.loads(capfd.readouterr().out)
    assert summary["pairs_short_of_k"] == 21 * 20  # degree 4: no pair has 10 edge-disjoint paths
    assert_one_line(stderr, "warning: 420 of 420 router pairs have fewer than paths.k=10", "(as few as 4)")
    assert (tmp_path / "path_counts.svg").exists() and not (tmp_path / "path_counts.png").exists()
    code, stderr = run_app(paths, tmp_path, *PATHS, "paths.k=3")
    assert code == 0 and not stderr.strip()
    assert json.loads(capfd.readouterr().out)["pairs_short_of_k"] == 0


def test_jaxnet_paths_takes_a_pattern_name_as_demand(tmp_path, capfd):
    code, stderr = run_app(paths, tmp_path, *PATHS, "paths.k=2", "paths.demand=adv_group")
    assert code == 0, stderr
    by_name = json.loads(capfd.readouterr().out)
    code, stderr = run_app(paths, tmp_path, *PATHS, "paths.k=2", "paths.demand={name: adv_group, offset: 1}")
    assert code == 0, stderr
    by_mapping = json.loads(capfd.readouterr().out)
    assert by_name["max_link_load_uniform"] == by_mapping["max_link_load_uniform"]


@pytest.mark.parametrize("demand, expected", [
    ("3", "paths.demand=3 is invalid: a traffic pattern: its name (e.g. adv_group) or a mapping"),
    ("adv_grop", "paths.demand.name='adv_grop' is invalid: one of ["),
    ("[1,2]", "paths.demand=[1, 2] is invalid: a traffic pattern"),
])
def test_a_bad_demand_is_one_line_naming_paths_demand(tmp_path, demand, expected):
    code, stderr = run_app(paths, tmp_path, *PATHS, "paths.k=2", f"paths.demand={demand}")
    assert code == 2
    assert_one_line(stderr, expected)


@pytest.fixture(scope="module")
def two_experiments():
    return experiment_rows("antmill/fig6") + experiment_rows("polarized/fig4")


def _raw_configs(path):
    with open(path, newline="") as f:
        return [json.loads(row["config"]) for row in csv.DictReader(f)]


def test_an_experiments_shared_blocks_are_written_once_and_read_back_whole(tmp_path, two_experiments):
    path = tmp_path / "results.csv"
    write_rows(path, two_experiments)
    raw = _raw_configs(path)
    configs = [json.loads(r["config"]) for r in two_experiments]
    for key in SHARED_BLOCKS:  # each distinct block in full once, a reference in every other row
        full = [config[key] for config in raw if set(config[key]) != {SHARED_BLOCK}]
        distinct = list({json.dumps(config[key], sort_keys=True): 1 for config in configs})
        assert sorted(json.dumps(block, sort_keys=True) for block in full) == sorted(distinct)
    back, damaged = read_rows(path)
    assert damaged == 0
    assert [r["config"] for r in back] == [r["config"] for r in two_experiments]  # the same text
    assert path.stat().st_size < 0.5 * sum(len(r["config"]) for r in two_experiments)


def test_rows_whose_shared_block_was_damaged_keep_their_results(tmp_path, two_experiments):
    """The first row of an experiment holds its blocks; when it is damaged (dropped, to be
    recomputed) the experiment's other rows keep their results and the rest of their
    configuration, without the blocks."""
    path = tmp_path / "results.csv"
    write_rows(path, two_experiments)
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(",uniform,", ",uniformly,", 1)  # edit the first row
    path.write_text("".join(lines))
    back, damaged = read_rows(path)
    assert damaged == 1 and len(back) == len(two_experiments) - 1
    first = json.loads(two_experiments[0]["config"])
    for row, before in zip(back, two_experiments[1:]):
        config, config_before = json.loads(row["config"]), json.loads(before["config"])
        lost = {key for key in SHARED_BLOCKS if config_before[key] == first[key]}
        assert lost or row["experiment"] != first["experiment"]["name"]
        assert config == {k: v for k, v in config_before.items() if k not in lost}
        assert row["config_id"] == before["config_id"] and row["accepted_load"] == str(before["accepted_load"])


def test_a_config_cell_that_is_not_json_is_written_and_read_as_it_is(tmp_path, rows):
    path = tmp_path / "results.csv"
    odd = [{**rows[0], "config": "not json"}, {**rows[1], "config": '{"$block": "x"'}, *rows[2:]]
    write_rows(path, odd)
    back, damaged = read_rows(path)
    assert damaged == 0 and [r["config"] for r in back] == [r["config"] for r in odd]
