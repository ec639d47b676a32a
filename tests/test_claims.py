"""Honest claims tables (no simulation): every claim shows its relation, tolerance and the
paper's sentence; a claim that passes only through its tolerance says so; claims past
saturation catch a collapse that peaks hide; every experiment's claims are well-formed
(quotes verbatim from the papers where their texts are at hand; tests/test_experiments.py
checks their expressions against the experiment's own lines, patterns and networks)."""
from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from synthetic import experiment_rows

from jaxnet.cli.common import CONF_DIR
from jaxnet.results import claims, collect

# the experiments whose claims are a paper's (the fidelity experiments' are the reference
# simulator's; jaxnet's own experiments, such as faults/ and collectives/, claim nothing)
EXPERIMENTS = sorted(str(p.relative_to(Path(CONF_DIR) / "experiment").with_suffix(""))
                     for p in Path(CONF_DIR).glob("experiment/*/*.yaml")
                     if p.parent.name != "fidelity" and "\nexperiment:" in p.read_text()
                     and "\n  name: " in p.read_text() and "\n  claims:" in p.read_text())
# every paper figure (fig<N>.yaml) compares itself with its paper
FIGURES = sorted(str(p.relative_to(Path(CONF_DIR) / "experiment").with_suffix(""))
                 for p in Path(CONF_DIR).glob("experiment/*/fig*.yaml"))
# the papers' texts (not part of the repository): set JAXNET_PAPERS to check the quotes
PAPERS = Path(os.environ.get("JAXNET_PAPERS", "/work/shared/papers"))
PAPER_FILES = {"Polarized routing": "polarized-routing.md", "Ant Mill": "ant-mill-adversarial-traffic.md",
               "Restricted Valiant": "restricted-valiant-recomputation.md",
               "Globally balanced paths": "globally-balanced-paths-gbamcf.md",
               "Angara routing tables": "angara-torus-routing-tables.md"}


def _claim(relation, paper, tolerance=None, expression="peak(line='a')", **extra):
    claim = {"claim": "c", "source": "Paper, Sec. 1", "quote": "It is so.", "paper": paper, "relation": relation,
             "jaxnet": expression, **extra}
    if tolerance is not None:
        claim["tolerance"] = tolerance
    return claim


def _rows(**accepted_by_line):
    """Rows of lines whose accepted load at offered loads 0.5, 0.8, 1.0 is given."""
    return [{"line": line, "offered_load": load, "accepted_load": value, "seed": 1, "message_latency": 10.0,
             "average_hops": 2.0, "jain_generated": 0.9}
            for line, values in accepted_by_line.items() for load, value in zip((0.5, 0.8, 1.0), values)]


@pytest.mark.parametrize("relation, paper, tolerance, value, expected", [
    (">=", 1.0, 0.0, 1.02, "agrees"),
    (">=", 1.0, 0.0, 0.99, "disagrees"),
    (">=", 1.0, 0.05, 0.97, "agrees within tolerance 0.05"),
    ("<=", 0.25, 0.005, 0.2503, "agrees within tolerance 0.005"),
    ("<=", 0.25, 0.005, 0.249, "agrees"),
    ("<=", 0.25, 0.005, 0.26, "disagrees"),
    ("~", 1.0, 0.1, 0.906, "agrees within tolerance 0.1"),  # issue 35: a peak ratio of 0.906 "agreed"
    ("~", 1.0, 0.1, 0.97, "agrees"),  # equal at the precision the paper states (1.0: +-0.05)
    ("~", 0.12, 0.05, 0.124, "agrees"),
    ("~", 0.12, 0.05, 0.13, "agrees within tolerance 0.05"),
    ("~", 0.12, 0.05, 0.2, "disagrees"),
    ("~", 1.0, 0.1, float("nan"), "not run"),
])
def test_verdicts_say_when_only_the_tolerance_makes_a_claim_agree(relation, paper, tolerance, value, expected):
    assert claims.verdict(value, paper, relation, tolerance) == expected


def test_the_evaluator_reports_relation_tolerance_and_defaults():
    rows = _rows(a=[0.5, 0.7, 0.7])
    out = claims.evaluate(rows, [_claim("~", 0.7), _claim(">=", 0.8), _claim("<=", 0.69, 0.02)])
    assert [(c["relation"], c["tolerance"]) for c in out] == [("~", 0.05), (">=", 0.0), ("<=", 0.02)]
    assert [c["verdict"] for c in out] == ["agrees", "disagrees", "agrees within tolerance 0.02"]
    assert out[1]["difference"] == pytest.approx(-0.1)


def test_a_collapse_past_saturation_fails_the_post_saturation_claim_while_the_peak_passes():
    """Polarized peaking at 0.695 and collapsing to 0.516 at offered load 1.0, minimal at
    0.767 (as available_first on the small Fig. 4 network): the peak claim passes only
    through its tolerance, the claim at offered load 1.0 disagrees."""
    rows = _rows(minimal=[0.5, 0.76, 0.767], polarized=[0.5, 0.695, 0.516])
    peak, after = claims.evaluate(rows, [
        _claim("~", 1.0, 0.1, "peak(line='polarized') / peak(line='minimal')"),
        _claim(">=", 0.95, None, "accepted(1.0, line='polarized') / accepted(1.0, line='minimal')")])
    assert peak["verdict"] == "agrees within tolerance 0.1" and peak["value"] == pytest.approx(0.695 / 0.767)
    assert after["verdict"] == "disagrees" and after["value"] == pytest.approx(0.516 / 0.767)
    rows = _rows(minimal=[0.5, 0.76, 0.767], polarized=[0.5, 0.76, 0.766])  # best_first on the small network
    assert claims.evaluate(rows, [_claim(">=", 0.95, None, after["jaxnet"])])[0]["verdict"] == "agrees"


def test_claims_over_parts_that_did_not_run_are_not_run_and_zero_is_undefined():
    rows = _rows(a=[0.5, 0.6, 0.6], zero=[0.0, 0.0, 0.0])
    partial, undefined = claims.evaluate(rows, [
        _claim(">=", 1.0, None, "min(peak(line='a'), peak(line='missing'))"),
        _claim(">=", 1.0, None, "peak(line='a') / peak(line='zero')")])
    assert partial["verdict"] == "not run" and math.isnan(partial["value"])
    assert undefined["verdict"].startswith("undefined")


def test_a_broken_expression_is_one_line_naming_the_claim():
    with pytest.raises(ValueError, match=r"experiment.claims\[0\].jaxnet=.* is invalid: NameError"):
        claims.evaluate(_rows(a=[0.5, 0.6, 0.6]), [_claim(">=", 1.0, None, "peek(line='a')")])
    with pytest.raises(ValueError, match=r"experiment.claims\[0\].relation='>' is invalid"):
        claims.evaluate(_rows(a=[0.5, 0.6, 0.6]), [_claim(">", 1.0)])


def test_the_table_shows_relation_tolerance_quote_verdict_and_cause():
    rows = _rows(minimal=[0.5, 0.76, 0.767], polarized=[0.5, 0.695, 0.516])
    text = claims.markdown(claims.evaluate(rows, [
        _claim("~", 1.0, 0.1, "peak(line='polarized') / peak(line='minimal')", source="Polarized routing, Sec. 4.2",
               quote="Polarized is able to achieve almost the same throughput | as minimal."),
        _claim(">=", 0.95, None, "accepted(1.0, line='polarized') / accepted(1.0, line='minimal')",
               cause="selection order: available_first drops outputs before choosing")]))
    header, rule, first, second = text.splitlines()
    assert header.split(" | ")[2:5] == ["relation", "tolerance", "paper"] and header.endswith("| verdict | cause |")
    assert "“Polarized is able to achieve almost the same throughput \\| as minimal.” (Polarized routing, Sec. 4.2)" \
        in first
    assert "| ≈ | 0.1 | 1 | 0.906 | -0.094 | agrees within tolerance 0.1 |  |" in first
    assert "| ≥ | 0 | 0.95 | 0.673 | -0.277 | disagrees | selection order: available_first drops outputs" in second
    assert rule.count("|") == header.count("|")


def test_write_outputs_puts_the_claims_of_the_experiment_in_claims_md(tmp_path):
    def capacity(job, label):  # Polarized (best first) as minimal, available first collapsing
        return {"minimal": 0.8, "polarized": 0.8, "polarized_available_first": 0.6}.get(job["line"], 0.5)

    rows = experiment_rows("polarized/fig4", capacity=capacity)
    collect.write_outputs(rows, tmp_path, formats=["svg"])
    text = (tmp_path / "claims.md").read_text()
    assert text.startswith("# Polarized routing, Fig. 4: uniform traffic: paper vs jaxnet")
    row = next(line for line in text.splitlines() if line.startswith("| Past saturation Polarized keeps"))
    assert "“Polarized is able to achieve almost the same throughput" in row and "| ≥ | 0 | 0.95 | 1.000 |" in row
    assert row.endswith("| agrees |  |")


def test_write_outputs_evaluates_the_claims_as_they_read_now(tmp_path):
    """A claim or title edited after the run (here a cause and the title) is what claims.md
    shows when the rows are merged again with the experiment as its file reads now
    (`scripts/gallery.py --refresh`)."""
    rows = experiment_rows("polarized/fig4", capacity=lambda job, label: 0.8)
    now = [dict(claim, cause="edited after the run") for claim in _experiment("polarized/fig4")["claims"]]
    collect.write_outputs(rows, tmp_path, formats=["svg"],
                          experiments_now={"polarized/fig4": {"title": "Retitled", "claims": now}})
    text = (tmp_path / "claims.md").read_text()
    assert text.startswith("# Retitled: paper vs jaxnet")
    lines = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(lines) == 1 + len(now) and all(line.endswith("| edited after the run |") for line in lines[1:])
    collect.write_outputs(rows, tmp_path, formats=["svg"])
    assert "edited after the run" not in (tmp_path / "claims.md").read_text()


def test_with_causes_restates_only_the_named_claims_causes():
    rows = _rows(minimal=[0.5, 0.76, 0.767], polarized=[0.5, 0.695, 0.516])
    stated = [_claim("~", 1.0, 0.1, "peak(line='polarized') / peak(line='minimal')", cause="old | cause"),
              _claim(">=", 0.95, None, "accepted(1.0, line='polarized') / accepted(1.0, line='minimal')")]
    stated[1]["claim"] = "Past saturation too"
    table = claims.markdown(claims.evaluate(rows, stated))
    restated = claims.with_causes(table, {stated[0]["claim"]: "new | cause", "a claim not in the table": "x"})
    edited = [dict(stated[0], cause="new | cause"), stated[1]]
    assert restated == claims.markdown(claims.evaluate(rows, edited)) and restated != table


# ---- the experiments' claims ------------------------------------------------------------

@functools.cache
def _experiment(name):
    """The experiment block of `name` (read only: shared by the tests of one process),
    composed once: every job of its sweep (one per line and network, each a Hydra
    composition) carries the same block."""
    with initialize_config_dir(config_dir=CONF_DIR, version_base=None):
        config = compose(config_name="config", overrides=[f"+experiment={name}", "scale=small"])
    return OmegaConf.to_container(config.experiment, resolve=True)


def test_every_paper_figure_has_claims():
    assert FIGURES and set(FIGURES) <= set(EXPERIMENTS)


def _from_a_paper(claim) -> bool:
    """Whether a claim quotes a paper; the others compare with jaxnet's own analysis, which
    their source names as a script (an analytic bound)."""
    return claim["source"].split(",")[0] in PAPER_FILES


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_claim_quotes_its_paper(name):
    """Each claim quotes a paper (or names the script of jaxnet's own analysis it compares
    with); tests/test_experiments.py checks that it selects rows the experiment runs."""
    experiment = _experiment(name)
    assert experiment["claims"]
    for claim in experiment["claims"]:
        assert claim["quote"].strip() and (_from_a_paper(claim) or "python scripts/" in claim["source"]), claim["claim"]


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers' texts are not here (JAXNET_PAPERS)")
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_quote_is_verbatim_from_its_paper(name):
    """Each quote (fragments joined by ' … ') occurs in the paper its source names, up to
    white space."""
    def normal(text):
        return " ".join(text.split())

    for claim in filter(_from_a_paper, _experiment(name)["claims"]):
        paper = normal((PAPERS / PAPER_FILES[claim["source"].split(",")[0]]).read_text())
        for fragment in claim["quote"].split(" … "):
            assert normal(fragment) in paper, (claim["claim"], fragment)


def test_the_polarized_figures_check_behaviour_past_saturation():
    for name in ("polarized/fig4", "polarized/fig5", "polarized/fig6", "polarized/fig8"):
        expressions = [c["jaxnet"] for c in _experiment(name)["claims"]]
        assert any("accepted(1.0, " in e and "line='polarized'" in e for e in expressions), name
    lines = _experiment("polarized/fig4")["lines"]
    assert lines["polarized"]["router"]["selection"] == "best_first"
    assert lines["polarized_available_first"]["router"]["selection"] == "available_first"


# The verdicts a claim's cause may give (docs/fidelity.md): the comparison with the reference
# simulator's own run has its counterpart of a parameter the paper leaves out.
VERDICTS = ("a model error", "scale", "a parameter the paper leaves out", "a parameter the reference's run leaves out",
            "a mistake in the paper")


def _gives_a_verdict(cause: str) -> bool:
    """Whether a cause opens with one of the verdicts, or with the part of the claim it explains
    and then one."""
    parts = [part.strip() for part in cause.split(":")]
    return parts[0].startswith(VERDICTS) or (len(parts) > 1 and parts[1].startswith(VERDICTS))


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_cause_gives_a_verdict(name):
    for claim in _experiment(name)["claims"]:
        cause = claim.get("cause")
        assert not cause or _gives_a_verdict(cause), (claim["claim"], cause[:80])


def test_every_disagreement_in_the_gallery_gives_its_cause():
    """The committed gallery's claims tables (docs/gallery/records, what docs/gallery.md shows)
    fill the cause of every row that disagrees, with one of the verdicts."""
    records = sorted((Path(CONF_DIR).parent / "docs" / "gallery" / "records").glob("*.json"))
    disagreements = 0
    for record in records:
        for line in (json.loads(record.read_text()).get("claims") or "").splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            assert len(cells) == 9, (record.name, line[:80])
            if cells[7] == "disagrees":
                disagreements += 1
                assert _gives_a_verdict(cells[8]), (record.name, cells[0], cells[8][:80])
    assert records and disagreements > 0
