"""Every experiment (`conf/experiment/<paper>/<name>.yaml`: the papers' figures, the
fidelity checks) composes, resolves into valid jobs at each of its scales, and runs; the
collector merges a sweep's jobs into its figures."""
import ast
import math
from pathlib import Path

import pytest
import yaml
from apps import run_app

from jaxnet import build
from jaxnet.cli import simulate
from jaxnet.cli.common import CONF_DIR, checked_overrides
from jaxnet.cli.experiment import compose_jobs, sweep_jobs
from jaxnet.cli.sweep import run_sweep
from jaxnet.results import claims, collect
from jaxnet.results.table import read_rows
from jaxnet.routing import ROUTINGS
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import TOPOLOGIES, build_topology
from jaxnet.traffic import PATTERNS, build_traffic

TINY_SIM = {"loads": [0.3], "seeds": [1], "warmup": 20, "measure": 40, "chunk": 20}
EXPLICIT = tuple(f"sim.{key}" for key in (*TINY_SIM, "check_invariants"))  # as if given on the command line
# an experiment's scales: its own, or (the papers' figures) those of the parts it includes: both
SCALES = {str(p.relative_to(Path(CONF_DIR) / "experiment").with_suffix("")):
          sorted(experiment.get("scales") or ("small", "paper"))
          for p in Path(CONF_DIR).glob("experiment/*/*.yaml")
          if (experiment := yaml.safe_load(p.read_text()).get("experiment") or {}).get("name")}
EXPERIMENTS = sorted(SCALES)


def test_the_papers_figures_are_there():
    expected = {"polarized/fig4", "polarized/fig5", "polarized/fig6", "polarized/fig8",
                *(f"antmill/fig{i}" for i in range(5, 11)), *(f"valiant/fig{i}" for i in range(2, 6))}
    assert expected <= set(EXPERIMENTS)


def _selections(expression: str) -> list[tuple[str, str]]:
    """(column, value) of every keyword a claim's expression selects rows by."""
    return [(k.arg, k.value.value) for node in ast.walk(ast.parse(expression, mode="eval"))
            if isinstance(node, ast.Call) for k in node.keywords]


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_job_resolves_to_valid_groups_and_every_claim_selects_what_runs(name):
    """At each of its scales every job's groups are valid; each claim's expression selects
    rows by lines, networks and patterns that some scale runs (each scale's jobs composed
    once, here: for the large experiments composing takes longer than every check)."""
    jobs = []
    for scale in SCALES[name]:
        resolved = sweep_jobs(name, scale)
        assert resolved, (name, scale)
        experiment = resolved[0]["experiment"]
        assert {job["line"] for job in resolved} == set(experiment["lines"]), "every line runs on some network"
        for job in resolved:
            TOPOLOGIES.split(job["topology"], "topology")
            ROUTINGS.split(job["routing"], "routing")
            for pattern in job["patterns"].values():
                PATTERNS.split(pattern, "traffic")
            build.router(job["router"])
            spec = build.sim(job["sim"])
            assert job["scale"] == scale and spec.points
        jobs += resolved
    allowed = {"line": {job["line"] for job in jobs}, "network": {job.get("network") for job in jobs},
               "traffic": {label for job in jobs for label in job["patterns"]}}
    for claim in jobs[0]["experiment"].get("claims", []):  # one block, every scale's
        assert {"claim", "source", "quote", "paper", "jaxnet"} <= set(claim)
        assert claim.get("relation", "~") in claims.RELATIONS
        for column, value in _selections(claim["jaxnet"]):
            assert value in allowed[column], (claim["claim"], column, value)


def test_overrides_act_on_the_jobs_as_on_the_command_line():
    """`jaxnet -m +experiment=polarized/fig4 scale=paper line=minimal,polarized 'sim.seeds=[1]'`
    runs two jobs at paper scale with one seed: a sweep given replaces the experiment's own
    for that key, a value given wins over the scale's."""
    jobs = sweep_jobs("polarized/fig4", "paper", ["line=minimal,polarized", "sim.seeds=[1]"])
    assert [job["routing"]["name"] for job in jobs] == ["minimal", "polarized"]
    assert all(job["sim"]["seeds"] == [1] and job["topology"]["routers"] == 720 for job in jobs)
    assert sweep_jobs("polarized/fig4", "paper")[0]["sim"]["seeds"] == [1, 2]


def test_experiments_and_config_options_outside_the_checkout(tmp_path, capsys):
    """`hydra.searchpath=[file://DIR]` adds DIR's experiments and config-group options to
    jaxnet's own (docs/experiments.md): what a plain `pip install .` leaves users to edit."""
    (tmp_path / "experiment").mkdir()
    (tmp_path / "topology").mkdir()
    fig4 = (Path(CONF_DIR) / "experiment" / "polarized" / "fig4.yaml").read_text()
    (tmp_path / "experiment" / "mine.yaml").write_text(fig4.replace("Polarized routing, Fig. 4", "Mine"))
    (tmp_path / "experiment" / "also_mine.yaml").write_text(fig4.replace("name: polarized/fig4", "name: also_mine"))
    (tmp_path / "topology" / "ring12.yaml").write_text("name: torus\nsides: [12]\n")
    searchpath = f"hydra.searchpath=[file://{tmp_path}]"
    mine, theirs = sweep_jobs("mine", "small", [searchpath]), sweep_jobs("polarized/fig4", "small")
    assert [job["line"] for job in mine] == [job["line"] for job in theirs]
    assert mine[0]["experiment"]["title"].startswith("Mine") and theirs[0]["experiment"]["title"].startswith("Polarized")
    ring, = compose_jobs([searchpath, "topology=ring12"])
    assert ring["topology"]["name"] == "torus" and ring["topology"]["sides"] == [12]
    # the apps' help and errors list them beside jaxnet's own
    code, stderr = run_app(simulate, tmp_path / "run", "-m", searchpath, "+experiment=mien")
    assert code == 2 and "no such experiment option; closest: mine" in stderr, stderr
    code, _ = run_app(simulate, tmp_path / "run", "--help", searchpath)
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and ["mine", "Mine:"] in [line.split()[:2] for line in lines]  # with its title
    assert "ring12" in next(line for line in lines if line.split()[:1] == ["topology"]).split()
    # `jaxnet -m`: Hydra hands its launcher the `hydra.*` overrides apart from the jobs', and
    # a key the swept experiments set (`scale`) is found in their files outside the checkout
    swept = ["-m", searchpath, "+experiment=mine,also_mine"]
    assert checked_overrides([*swept, "scale=small"]) == [*swept, "++scale=small"]  # Hydra's searchpath left as given
    sweep = tmp_path / "sweep"
    code, stderr = run_app(simulate, tmp_path / "run", "-m", searchpath, f"hydra.sweep.dir={sweep}",
                           "+experiment=mine,also_mine", "scale=small", "line=minimal",
                           *(f"sim.{k}={v}" for k, v in TINY_SIM.items()))
    assert code == 0, stderr
    rows, damaged = read_rows(sweep / "results.csv")
    assert sorted((row["experiment"], row["line"], float(row["offered_load"])) for row in rows) == [
        ("also_mine", "minimal", 0.3), ("polarized/fig4", "minimal", 0.3)] and not damaged


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_small_scale_networks_and_patterns_build(name):
    """Small scale: every job's network, routing tables and traffic patterns build (the VCs
    sized by the exact longest route), so the figure cannot fail after its first job."""
    for job in sweep_jobs(name, "small"):
        network = build.network_of(job)
        assert network.layout.vcs >= 1
        for pattern in job["patterns"].values():
            build_traffic(pattern, network.topo, 1)


@pytest.mark.parametrize("name", ["polarized/fig8", "antmill/fig9", "valiant/fig4"])
def test_one_job_per_paper_runs_and_the_claims_evaluate(name, tmp_path):
    job = sweep_jobs(name, "small")[0]
    job["sim"].update(TINY_SIM, check_invariants=True)
    rows = run_sweep(job, tmp_path, progress=False, explicit=EXPLICIT)
    assert len(rows) == len(job["patterns"])
    for row in rows:
        assert float(row["accepted_load"]) > 0 and str(row["deadlock"]) == "False"
    written = collect.write_outputs(rows, tmp_path, merged_csv=False)
    for kind in job["experiment"]["plots"]:
        assert tmp_path / f"{kind}.png" in written
    evaluated = claims.evaluate(rows, job["experiment"]["claims"])
    assert all(c["verdict"].startswith(("agrees", "disagrees", "not run")) for c in evaluated)


def test_scale_keeps_bounds_and_claims_to_their_scale(tmp_path):
    job = sweep_jobs("valiant/fig2", "small")[0]
    job["sim"].update(TINY_SIM)
    rows = run_sweep(job, tmp_path, progress=False, explicit=EXPLICIT)
    collect.write_outputs(rows, tmp_path, merged_csv=False)
    text = (tmp_path / "claims.md").read_text()
    assert "(small p=2)" in text and "= 16.6%" not in text
    values = [c["value"] for c in claims.evaluate(rows, job["experiment"]["claims"])]
    assert any(math.isnan(v) for v in values)  # claims over lines this job did not run


def _polarized_longest_route(topo) -> int:
    """Longest route Polarized's conditions C1-C3 allow, by brute force over every pair: its
    candidate moves never decrease (mu, D(c,s) - D(c,t) order), so they form a DAG."""
    dist = topo.distances.astype(int)
    neighbours = [[int(n) for n in row if n >= 0] for row in topo.neighbor]

    def longest(s, t):
        memo = {}

        def from_(c):
            if c == t:
                return 0
            if c not in memo:
                best = -10**9
                for n in neighbours[c]:
                    d_mu = (dist[n, s] - dist[c, s]) - (dist[n, t] - dist[c, t])
                    near_source = dist[c, s] < dist[c, t]
                    tie = d_mu == 0 and ((dist[n, s] > dist[c, s]) if near_source else (dist[n, t] < dist[c, t]))
                    if d_mu > 0 or tie:
                        best = max(best, 1 + from_(n))
                memo[c] = best
            return memo[c]

        return from_(s)

    return max(longest(s, t) for s in range(topo.n_routers) for t in range(topo.n_routers) if s != t)


@pytest.mark.parametrize("topology, expected", [
    ({"name": "hamming", "sides": [4, 4], "servers_per_router": 1}, 4),
    ({"name": "projective", "q": 3, "servers_per_router": 1}, 5),
])
def test_auto_vcs_are_the_exact_longest_route(topology, expected):
    """`router.vcs: auto` = the longest Polarized route (brute force), not the bound 4D - 3."""
    topo = build_topology(topology)
    assert _polarized_longest_route(topo) == expected
    network = build.network(topo, ROUTINGS.build({"name": "polarized"}), RouterSpec(vcs="auto"))
    assert network.layout.vcs == expected < max(4 * topo.diameter - 3, 2 * topo.diameter)
