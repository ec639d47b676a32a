"""A sweep's jobs that share a network run as one batch (the `jaxnet` launcher), with rows
identical to running each job on its own, also through the cluster code path (submitit's
debug executor in place of SLURM); a network is built once and then comes from the network
cache until its config changes; points simulated before are reused; `jaxnet.run` returns the
command's rows."""
import logging
import re
from pathlib import Path

import pytest
from apps import assert_one_line, run_app

import jaxnet
from jaxnet import build
from jaxnet.cli import simulate as simulate_app
from jaxnet.cli.common import checked_overrides
from jaxnet.cli.experiment import compose_jobs
from jaxnet.cli.sweep import run_jobs, structure_key
from jaxnet.results.table import NOT_RESULTS, config_id, equivalent_config_ids, read_rows, results_sim

TINY = ["topology=hamming", "topology.sides=[3,3]", "topology.servers_per_router=1", "routing=minimal",
        "sim.loads=[0.3,0.6]", "sim.seeds=[1]", "sim.warmup=40", "sim.measure=120", "sim.chunk=40"]
# columns that say how and when a row was made, not what was simulated
HOW = {"wall_s", "first_chunk_s", "batch", "vmap_width", "sub_batch", "workers", "work_lists", "date", "row_sha", "git_commit",
       "host"}


def _rows(path):
    rows, damaged = read_rows(path)
    assert damaged == 0
    return rows


def _results(rows):
    return [{k: v for k, v in row.items() if k not in HOW} for row in rows]


def _each_job_alone_gives_its_rows(tmp_path, sweep, base, jobs):
    """Each job of the sweep (its number: its override), run on its own, gives the rows it
    has in the sweep, in a batch of its own two points."""
    for job, override in jobs.items():
        code, stderr = run_app(simulate_app, tmp_path / f"alone_{job}", *base, override)
        assert code == 0, stderr
        alone = _rows(tmp_path / f"alone_{job}" / "results.csv")
        assert {row["batch"] for row in alone} == {"2"}
        assert _results(alone) == _results(_rows(sweep / job / "results.csv"))


@pytest.fixture
def network_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXNET_NETWORK_CACHE", str(tmp_path / "networks"))
    return tmp_path / "networks"


@pytest.mark.parametrize("launcher", [[], ["hydra/launcher=slurm", "hydra.launcher.submitit.cluster=debug"]],
                         ids=["local", "cluster code path"])
def test_a_two_pattern_sweep_runs_as_one_batch(tmp_path, launcher, network_cache):
    sweep = tmp_path / "sweep"
    code, stderr = run_app(simulate_app, tmp_path / "run", "-m", *TINY, "traffic=uniform,server_permutation",
                           f"hydra.sweep.dir={sweep}", *launcher)
    assert code == 0, stderr
    together = [_rows(sweep / job / "results.csv") for job in ("0", "1")]
    assert [row["traffic"] for row in together[0] + together[1]] == ["uniform"] * 2 + ["server_permutation"] * 2
    assert {row["batch"] for rows in together for row in rows} == {"4"}  # 2 patterns x 2 loads stepped together
    assert (sweep / "results.csv").exists() and (sweep / "throughput.png").exists()
    _each_job_alone_gives_its_rows(tmp_path, sweep, TINY, {"0": "traffic=uniform", "1": "traffic=server_permutation"})


def test_a_sweep_over_path_weights_runs_as_one_batch(tmp_path, network_cache):
    """Jobs whose routing differs only in its tables' values (`table` path weights) share a
    structure and run as one batch, each point with its own weights, with rows identical to
    each job run alone."""
    table = [*TINY[:3], "routing=table", "+routing.paths={k: 2}", *TINY[4:]]
    jobs = [compose_jobs([*table, f"routing.weights={weights}"])[0] for weights in ("uniform", "shortest")]
    assert structure_key(jobs[0]) == structure_key(jobs[1])
    sweep = tmp_path / "sweep"
    code, stderr = run_app(simulate_app, tmp_path / "run", "-m", *table, "routing.weights=uniform,shortest",
                           f"hydra.sweep.dir={sweep}")
    assert code == 0, stderr
    together = [_rows(sweep / job / "results.csv") for job in ("0", "1")]
    assert {row["batch"] for rows in together for row in rows} == {"4"}  # 2 weightings x 2 loads stepped together
    assert together[0][1]["average_hops"] != together[1][1]["average_hops"]  # each point routed by its own weights
    _each_job_alone_gives_its_rows(tmp_path, sweep, table, {"0": "routing.weights=uniform", "1": "routing.weights=shortest"})


def test_experiments_swept_by_name_run_every_line_with_the_scale_given(tmp_path, network_cache):
    """The README's study command, `jaxnet -m +experiment=a,b scale=...`: `scale` exists only
    once an experiment is composed, so it is passed on to every job (`++scale`); the two
    figures' points of one line run as one batch, each job keeping its own rows."""
    assert checked_overrides(["-m", "+experiment=polarized/fig4,antmill/fig6", "scale=paper", "sim.seeds=[1]"]) == [
        "-m", "+experiment=polarized/fig4,antmill/fig6", "++scale=paper", "sim.seeds=[1]"]  # fig6's via its defaults
    single = ["+experiment=polarized/fig4", "scale=paper"]  # not a multirun: Hydra composes the experiment first
    assert checked_overrides(single) == single
    sweep = tmp_path / "sweep"
    code, stderr = run_app(simulate_app, tmp_path / "run", "-m", "+experiment=polarized/fig4,polarized/fig5",
                           "scale=small", "line=minimal", "sim.loads=[0.3]", "sim.seeds=[1]", "sim.warmup=40",
                           "sim.measure=80", f"hydra.sweep.dir={sweep}")
    assert code == 0, stderr
    rows = [_rows(sweep / job / "results.csv") for job in ("0", "1")]
    assert [(row["experiment"], row["traffic"], row["batch"]) for job in rows for row in job] == [
        ("polarized/fig4", "uniform", "2"), ("polarized/fig5", "server permutation", "2")]
    assert (sweep / "polarized_fig4_claims.md").exists() and (sweep / "polarized_fig5_claims.md").exists()


def test_jobs_of_different_networks_run_apart_and_shared_points_once(tmp_path, network_cache):
    jobs = compose_jobs([*TINY, "routing=minimal,polarized", "traffic=uniform"])
    assert len({structure_key(job) for job in jobs}) == 2
    twice = compose_jobs([*TINY, "traffic=uniform"]) * 2  # the same points in two jobs: simulated once
    first, second = run_jobs([(job, tmp_path / str(n)) for n, job in enumerate(twice)], progress=False)
    assert _results(first) == _results(second) and {row["batch"] for row in first} == {2}


def test_the_network_cache_is_keyed_by_groups_over_their_defaults(network_cache, caplog):
    """A group that leaves keys to its config file's defaults and one that spells them out
    are one network in the cache (a changed default file is then a changed key)."""
    config = compose_jobs(TINY)[0]
    spelled = {**config, "router": build.defaults("router", {}) | config["router"]}
    short = {**config, "router": {key: value for key, value in config["router"].items()
                                  if build.defaults("router", {}).get(key) != value}}
    assert short["router"] != spelled["router"]
    with caplog.at_level(logging.INFO, logger="jaxnet"):
        build.network_of(spelled)
        build.network_of(short)
    messages = [record.getMessage() for record in caplog.records]
    assert sum("network built" in m for m in messages) == 1 and sum("network from the cache" in m for m in messages) == 1


def test_the_network_cache_is_keyed_by_the_code_that_builds_networks():
    """The cache key covers every module a network's building may import (topologies,
    routings, paths, the engine's layout) and leaves out the apps, the Python API and the
    results code, so that a change to a plot keeps the cached networks; no building module
    imports those."""
    package = Path(build.__file__).resolve().parent
    sources = {source.relative_to(package).as_posix() for source in build.building_sources()}
    assert {"build.py", "topology/rrg.py", "routing/polarized.py", "paths/pathset.py", "sim/layout.py"} <= sources
    assert not any(source.startswith(("cli/", "results/")) or source == "api.py" for source in sources)
    not_building = "|".join(module.removesuffix(".py") for module in build.NOT_BUILDING)
    for source in build.building_sources():  # module-level imports (jaxnet/__init__'s are lazy)
        assert not re.search(rf"^(from|import) jaxnet\.({not_building})\b", source.read_text(), re.M), source


def test_the_network_cache_is_hit_on_a_second_sweep_and_missed_after_a_change(tmp_path, network_cache, caplog):
    """A second build of a network reads it from the cache; a changed router builds a new
    network on the cached topology (a sweep's routings share their topology); a changed
    topology builds both."""
    config = compose_jobs(TINY)[0]
    with caplog.at_level(logging.INFO, logger="jaxnet"):
        first = build.network_of(config)
        again = build.network_of(config)
        changed = build.network_of({**config, "router": {**config["router"], "input_buffer": 3}})
        other = build.network_of({**config, "topology": {**config["topology"], "sides": [3, 4]}})
    messages = [record.getMessage() for record in caplog.records]
    assert sum("network built" in m for m in messages) == 3 and sum("network from the cache" in m for m in messages) == 1
    assert sum("topology built" in m for m in messages) == 2 and sum("topology from the cache" in m for m in messages) == 1
    assert again.layout == first.layout and changed.layout.router.input_buffer == 3
    assert changed.topo.name == first.topo.name and (changed.topo.neighbor == first.topo.neighbor).all()
    assert other.topo.neighbor.shape[0] == 12
    assert len(list(network_cache.glob("topology-*.pkl"))) == 2 and len(list(network_cache.glob("*.pkl"))) == 5


def test_list_sizing_leaves_a_points_identity_unchanged(tmp_path, network_cache):
    """Rows are the same whatever `sim.list_sizing`, so a point's config id is too, and the id
    is the one computed before the key was known not to change results (its `auto` value)."""
    job = compose_jobs(TINY)[0]
    ids = {sizing: config_id({**job, "sim": {**job["sim"], "list_sizing": sizing}}, job["patterns"]["uniform"])
           for sizing in ("auto", "once", "grow")}
    assert len(set(ids.values())) == 1
    assert "list_sizing" in NOT_RESULTS["sim"] and job["sim"]["list_sizing"] == "auto"
    assert results_sim({**job["sim"], "list_sizing": "grow"}) == results_sim(job["sim"])
    assert results_sim(job["sim"])["list_sizing"] == "auto"
    code, stderr = run_app(simulate_app, tmp_path / "run", *TINY, "sim.list_sizing=once")
    assert code == 0, stderr
    done = (tmp_path / "run" / "results.csv").read_text()
    code, stderr = run_app(simulate_app, tmp_path / "run", *TINY, "sim.list_sizing=grow")  # its points are done
    assert code == 0 and (tmp_path / "run" / "results.csv").read_text() == done, stderr


def test_points_simulated_before_are_reused_not_simulated(tmp_path, network_cache, capfd):
    """`reuse` names earlier runs: their points of this configuration are copied (with how
    and where they ran, and `reused_from` naming their file), the others simulated; a copy
    reused again names the file its point was simulated for."""
    first = tmp_path / "first" / "results.csv"
    assert run_app(simulate_app, first.parent, *TINY)[0] == 0
    more = [*TINY, "sim.loads=[0.3,0.6,0.9]"]
    code, stderr = run_app(simulate_app, tmp_path / "second", *more, f"reuse=[{first.parent}]")
    assert code == 0, stderr
    log = capfd.readouterr().out
    assert "2 point(s) reused" in log and "1 new point(s), 2 already done" in log
    rows = _rows(tmp_path / "second" / "results.csv")
    assert [row["reused_from"] for row in rows] == [str(first), str(first), ""]
    copied = {"config", "reused_from", "row_sha"}
    assert [{k: v for k, v in row.items() if k not in copied} for row in rows[:2]] == [
        {k: v for k, v in row.items() if k not in copied} for row in _rows(first)]
    assert run_app(simulate_app, tmp_path / "third", *more, "traffic=tornado", f"reuse=[{tmp_path / 'second'}]")[0] == 0
    assert not any("reused_from" in row for row in _rows(tmp_path / "third" / "results.csv"))  # another pattern
    assert run_app(simulate_app, tmp_path / "fourth", *more, f"reuse=[{tmp_path / 'second'}]")[0] == 0
    assert [row["reused_from"] for row in _rows(tmp_path / "fourth" / "results.csv")] == [
        str(first), str(first), str(tmp_path / "second" / "results.csv")]


def test_with_one_injection_buffer_every_injection_policy_gives_the_same_rows_and_is_reused(tmp_path, network_cache,
                                                                                              capfd):
    """One injection buffer per server port is the buffer every `router.injection_policy`
    takes: two policies' rows are the same, so a sweep under one reuses the points of the
    other (relabelled as its own); with two buffers the policies are different configurations."""
    one = [*TINY, "router.vcs=2", "router.injection_buffers=1"]
    for policy in ("dest", "random"):
        assert run_app(simulate_app, tmp_path / policy, *one, f"router.injection_policy={policy}")[0] == 0
    dest, random = (_rows(tmp_path / policy / "results.csv") for policy in ("dest", "random"))
    identity = HOW | {"config", "config_id"}
    assert [{k: v for k, v in row.items() if k not in identity} for row in dest] == [
        {k: v for k, v in row.items() if k not in identity} for row in random]
    capfd.readouterr()
    code, stderr = run_app(simulate_app, tmp_path / "reused", *one, "router.injection_policy=random",
                           f"reuse=[{tmp_path / 'dest'}]")
    assert code == 0, stderr
    assert "2 point(s) reused" in capfd.readouterr().out
    reused = _rows(tmp_path / "reused" / "results.csv")
    assert [row["reused_from"] for row in reused] == [str(tmp_path / "dest" / "results.csv")] * 2
    assert [{k: v for k, v in row.items() if k not in HOW | {"reused_from", "config"}} for row in reused] == [
        {k: v for k, v in row.items() if k not in HOW | {"config"}} for row in random]  # config: its `reuse`
    job = compose_jobs([*TINY, "router.vcs=2", "router.injection_buffers=2"])[0]
    assert equivalent_config_ids(job, job["patterns"]["uniform"]) == {config_id(job, job["patterns"]["uniform"])}


def test_reuse_of_a_missing_path_is_one_line(tmp_path):
    code, stderr = run_app(simulate_app, tmp_path, *TINY, f"reuse=[{tmp_path / 'nowhere'}]")
    assert code == 2
    assert_one_line(stderr, "reuse=", "nowhere", "existing directories or results.csv files")
    assert not (tmp_path / "results.csv").exists()


def test_the_python_api_returns_the_command_lines_rows(tmp_path, network_cache):
    code, stderr = run_app(simulate_app, tmp_path / "run", *TINY, "traffic=tornado")
    assert code == 0, stderr
    rows = jaxnet.run([*TINY, "traffic=tornado"])
    assert _results([{k: str(v) for k, v in row.items()} for row in rows]) == _results(
        _rows(tmp_path / "run" / "results.csv"))
    assert not list(tmp_path.glob("outputs"))  # nothing written
    mapped = jaxnet.run({**dict(o.split("=", 1) for o in TINY), "traffic": "tornado"}, out_dir=tmp_path / "api")
    assert _results(mapped) == _results(rows)
    assert (tmp_path / "api" / "0" / "results.csv").exists() and (tmp_path / "api" / "results.csv").exists()


def test_the_python_api_refuses_bad_input_in_one_line():
    with pytest.raises(ValueError, match="routing=minmal is invalid.*minimal"):
        jaxnet.run(["routing=minmal"])
    with pytest.raises(ValueError, match="sim.lodas.*sim.loads"):
        jaxnet.run(["sim.lodas=[0.5]"])


def test_python_defaults_are_the_config_files():
    """The building blocks default to what the command line composes from conf/."""
    import dataclasses

    import yaml

    from jaxnet.sim.spec import RouterSpec, SimSpec

    for cls, group in ((RouterSpec, "router"), (SimSpec, "sim")):
        conf = yaml.safe_load((Path(build.CONF_DIR) / group / "default.yaml").read_text())
        fields = {f.name: f.default for f in dataclasses.fields(cls)}
        for key, value in conf.items():
            assert fields[key] == (tuple(value) if isinstance(value, list) else value), (group, key)
    assert build.topology({"name": "dragonfly"}).servers_per_router == 2  # conf/topology/dragonfly.yaml
    assert build.routing({"name": "ksp"}).k == yaml.safe_load((Path(build.CONF_DIR) / "routing" / "ksp.yaml").read_text())["k"]
