"""The paper's statements next to jaxnet's numbers: every claim of an experiment
(`experiment.claims` in conf/experiment/<paper>/<figure>.yaml) evaluated over the merged rows,
and the Markdown table of them (claims.md).

A claim holds its statement (`claim`), where the paper says it (`source`, and `quote`: the
sentence, verbatim), the paper's number (`paper`), the relation jaxnet's number must have to
it (`relation`: ~, >= or <=, with a `tolerance`), the `jaxnet` expression that measures it
over the rows (`peak()`, `accepted(load)`, `latency(load)`, `hops(load)`, `jain(load)`,
filtered by any column, e.g. `accepted(1.0, line='polarized')`) and, once investigated, the
`cause` of a disagreement."""
from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

import numpy as np

from jaxnet.results import plots

RELATIONS = {"~": "≈", ">=": "≥", "<=": "≤"}
# ~: the paper's number is approximate; >= and <=: exact unless a tolerance is given (an
# analytic bound met exactly is measured a hair above or below it: packets generated before
# the measurement window are counted in it)
DEFAULT_TOLERANCE = {"~": 0.05, ">=": 0.0, "<=": 0.0}
NOT_RUN, UNDEFINED, AGREES, DISAGREES = "not run", "undefined (a zero denominator)", "agrees", "disagrees"


def _select(rows, where):
    return [r for r in rows if all(str(r.get(k)) == str(v) for k, v in where.items())]


def _metric(rows, column, load=None, **where):
    chosen = _select(rows, where)
    if load is not None:
        chosen = [r for r in chosen if math.isclose(float(r["offered_load"]), load)]
    values = [float(r[column]) for r in chosen]
    return float(np.mean(values)) if values else float("nan")


def namespace(rows: Sequence[Mapping]) -> dict:
    """The functions a claim's `jaxnet` expression may use, over the rows (keyword arguments
    select rows by column value: line='minimal', traffic='uniform', network='rrg_k3.7')."""
    return {
        "peak": lambda **where: plots.peak_accepted(_select(rows, where)),
        "accepted": lambda load, **where: _metric(rows, "accepted_load", load, **where),
        "hops": lambda load=None, **where: _metric(rows, "average_hops", load, **where),
        "latency": lambda load, **where: _metric(rows, "message_latency", load, **where),
        "network_latency": lambda load, **where: _metric(rows, "network_latency", load, **where),
        "jain": lambda load, **where: _metric(rows, "jain_generated", load, **where),
        "min": _propagating(min), "max": _propagating(max), "abs": abs,
    }


def _propagating(extreme):
    """min or max that is nan when any argument is (a claim over parts that did not all run)."""
    def of(*values):
        return float("nan") if any(math.isnan(v) for v in values) else extreme(values)

    return of


def stated_precision(number: float) -> float:
    """Half a unit of the last digit a number is written with: 0.12 -> 0.005, 1.0 -> 0.05."""
    text = repr(float(number))
    if "e" in text or "." not in text:
        return 0.5
    return 0.5 * 10.0 ** -len(text.split(".")[1])


def verdict(value: float, paper: float, relation: str, tolerance: float) -> str:
    """`agrees` when the relation holds as the paper states it (≈: equal at the precision the
    paper's number is written with), `agrees within tolerance t` when it holds only thanks to
    the tolerance, else `disagrees`; `not run` without rows to measure."""
    if math.isnan(value):
        return NOT_RUN
    difference = value - paper
    if relation == ">=":
        strict, loose = difference >= 0, difference >= -tolerance
    elif relation == "<=":
        strict, loose = difference <= 0, difference <= tolerance
    else:
        strict = abs(difference) <= min(stated_precision(paper), tolerance) + 1e-12
        loose = abs(difference) <= tolerance + 1e-12
    if strict:
        return AGREES
    return f"{AGREES} within tolerance {tolerance:g}" if loose else DISAGREES


def evaluate(rows: Sequence[Mapping], claims: Sequence[Mapping]) -> list[dict]:
    """Each claim with jaxnet's value of its expression, the difference to the paper's
    number, its relation's tolerance and the verdict."""
    functions = namespace(rows)
    out = []
    for index, claim in enumerate(claims):
        relation = claim.get("relation", "~")
        if relation not in RELATIONS:
            raise ValueError(f"experiment.claims[{index}].relation={relation!r} is invalid: "
                             f"one of {list(RELATIONS)}")
        paper = float(claim["paper"])
        tolerance = float(claim.get("tolerance", DEFAULT_TOLERANCE[relation]))
        try:
            value = float(eval(claim["jaxnet"], {"__builtins__": {}}, functions))  # noqa: S307 (config text)
            judged = verdict(value, paper, relation, tolerance)
        except ZeroDivisionError:
            value, judged = float("nan"), UNDEFINED
        except (NameError, SyntaxError, TypeError, KeyError) as err:
            raise ValueError(f"experiment.claims[{index}].jaxnet={claim['jaxnet']!r} is invalid: "
                             f"{type(err).__name__}: {err}") from None
        out.append({**claim, "relation": relation, "tolerance": tolerance, "value": value,
                    "difference": value - paper, "verdict": judged})
    return out


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _number(x: float, digits: str = ".3f") -> str:
    return "—" if math.isnan(x) else format(x, digits)


def with_causes(table: str, causes: Mapping[str, str]) -> str:
    """A claims table (`markdown`'s text) with the cause of each claim named in `causes`
    (claim -> cause) restated, every other cell as it was: for a table whose rows are gone
    when a claim's cause was edited after the run."""
    cells = {_cell(claim): _cell(cause or "") for claim, cause in causes.items()}
    lines = []
    for line in table.split("\n"):
        parts = re.split(r"(?<!\\) \| ", line[2:-2]) if line.startswith("| ") and line.endswith(" |") else None
        if parts and parts[0] in cells and len(parts) >= 2:
            line = "| " + " | ".join(parts[:-1] + [cells[parts[0]]]) + " |"
        lines.append(line)
    return "\n".join(lines)


def markdown(results: Sequence[Mapping]) -> str:
    """The claims table: statement, source (quote and location), relation, tolerance, the
    paper's and jaxnet's numbers, the verdict and the cause of a disagreement."""
    columns = ["paper's claim", "source", "relation", "tolerance", "paper", "jaxnet", "jaxnet − paper", "verdict",
               "cause"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in results:
        source = _cell(r.get("source", ""))
        if r.get("quote"):
            source = f"“{_cell(r['quote'])}” ({source})"
        lines.append(f"| {_cell(r['claim'])} | {source} | {RELATIONS[r['relation']]} | {r['tolerance']:g} | "
                     f"{float(r['paper']):g} | {_number(r['value'])} | {_number(r['difference'], '+.3f')} | "
                     f"{r['verdict']} | {_cell(r.get('cause') or '')} |")
    return "\n".join(lines) + "\n"
