"""Merge the results of any set of runs (a multirun sweep's jobs, several sweeps) into one
table, comparison figures and, for experiments, the "paper vs jaxnet" claims table.

Curves are configurations: two rows belong to the same curve only if everything that
changes results but the traffic pattern, the offered load and the seed is equal, so rows
of different configurations are never averaged into one line. A curve's label is its
experiment line, or the parameters that differ between the curves of the figure."""
from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from jaxnet.core.files import write_atomic
from jaxnet.results import plots, summary
from jaxnet.results.table import NOT_RESULTS, read_rows, write_rows

# configuration keys that never distinguish curves (the grid, bookkeeping, the panel)
_IGNORED = tuple(f"sim.{key}" for key in NOT_RESULTS["sim"]) + (
    "experiment", "line", "network", "scale", "traffic", "patterns", "format", "hydra")


def result_files(dirs: Iterable[Path]) -> list[Path]:
    """The results of each given directory: its own results.csv (a run, or a merged sweep),
    else every results.csv below it (a sweep's jobs); files are taken as given."""
    found = []
    for d in map(Path, dirs):
        if d.is_file() or (d / "results.csv").is_file():
            found.append(d if d.is_file() else d / "results.csv")
        else:
            found += sorted(d.rglob("results.csv"))
    return list(dict.fromkeys(found))


def load(dirs: Iterable[Path]) -> tuple[list[dict], int]:
    """(rows of every results.csv found, each point once; damaged rows dropped)."""
    rows, damaged, seen = [], 0, set()
    for path in result_files(dirs):
        good, bad = read_rows(path)
        damaged += bad
        for row in good:
            key = (row["config_id"], row["offered_load"], row["seed"])
            if key not in seen:
                seen.add(key)
                rows.append(row)
    return rows, damaged


def _flat(prefix: str, value, out: dict) -> dict:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flat(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = json.dumps(value, sort_keys=True, default=str)
    return out


def _curve_config(row: Mapping) -> dict:
    config = json.loads(row["config"])
    flat = _flat("", config, {})
    return {k: v for k, v in flat.items() if not any(k == i or k.startswith(i + ".") for i in _IGNORED)}


def assign_curves(rows: Sequence[dict], networks_are_panels: bool = False) -> dict[str, str]:
    """Set row['curve'] (an id) on every row; return {curve id: label}. The label is the
    experiment line if the rows have one (with its network where several networks share a
    panel), else the parameters that differ between curves."""
    configs, line_labels = {}, {}
    several_networks = len({r.get("network") for r in rows}) > 1
    for row in rows:
        cfg = _curve_config(row)
        key = row.get("line")
        if key and several_networks:  # the same line on several networks: still one curve each
            key = f"{key} @ {row['network']}"
        line_labels[key] = row.get("line") if networks_are_panels else key
        key = key or hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:10]
        row["curve"] = key
        configs.setdefault(key, cfg)
    if all(row.get("line") for row in rows):
        return {k: line_labels[k] for k in configs}
    keys = sorted({k for cfg in configs.values() for k in cfg})
    differing = [k for k in keys if len({cfg.get(k) for cfg in configs.values()}) > 1]
    labels = {}
    for key, cfg in configs.items():
        parts = [str(json.loads(cfg[k])) if k.endswith(".name") else f"{k.split('.')[-1]}={json.loads(cfg[k])}"
                 for k in differing if k in cfg]
        labels[key] = ", ".join(parts) or json.loads(cfg.get("routing.name", '"run"'))
    return labels


def experiment_of(rows: Sequence[Mapping]) -> dict:
    """The experiment block of the rows' configuration ({} for plain runs)."""
    for row in rows:
        block = json.loads(row["config"]).get("experiment")
        if block:
            return block
    return {}


def _title(rows: Sequence[Mapping], experiment: Mapping) -> str:
    networks = sorted({r.get("topology_name") or r["topology"] for r in rows})
    head = experiment.get("title") or experiment.get("name") or "jaxnet"
    scale = sorted({r.get("scale") for r in rows if r.get("scale")})
    return f"{head}{' (' + ', '.join(scale) + ' scale)' if scale else ''}\n{'; '.join(networks)}"[:300]


# ---- claims ---------------------------------------------------------------------------

def _select(rows, where):
    return [r for r in rows if all(str(r.get(k)) == str(v) for k, v in where.items())]


def _metric(rows, column, load=None, **where):
    chosen = _select(rows, where)
    if load is not None:
        chosen = [r for r in chosen if math.isclose(float(r["offered_load"]), load)]
    values = [float(r[column]) for r in chosen]
    return float(np.mean(values)) if values else float("nan")


def claim_namespace(rows: Sequence[Mapping]) -> dict:
    """Functions a claim's `jaxnet` expression may use, over the merged rows (where=column
    values, e.g. line='minimal', traffic='uniform', network='rrg1224')."""
    return {
        "peak": lambda **where: plots.peak_accepted(_select(rows, where)),
        "accepted": lambda load, **where: _metric(rows, "accepted_load", load, **where),
        "hops": lambda load=None, **where: _metric(rows, "average_hops", load, **where),
        "latency": lambda load, **where: _metric(rows, "message_latency", load, **where),
        "jain": lambda load, **where: _metric(rows, "jain_generated", load, **where),
        "min": min, "max": max, "abs": abs,
    }


def evaluate_claims(rows: Sequence[Mapping], claims: Sequence[Mapping]) -> list[dict]:
    """Each claim with the jaxnet value of its expression, the difference to the paper's
    number and whether the paper's relation holds: ~ within `tolerance` (default 0.05), >= and
    <= up to `tolerance` (default 0; an analytic bound met exactly is measured a hair above
    or below it, as packets generated before the window are counted in it)."""
    namespace = claim_namespace(rows)
    out = []
    for claim in claims:
        try:
            value = float(eval(claim["jaxnet"], {"__builtins__": {}}, namespace))  # noqa: S307 (config text)
        except (ZeroDivisionError, ValueError, TypeError):
            value = float("nan")
        paper = float(claim["paper"])
        relation = claim.get("relation", "~")
        tolerance = float(claim.get("tolerance", 0.05 if relation == "~" else 0.0))
        if math.isnan(value):
            verdict = "not run"
        elif relation == ">=":
            verdict = "agrees" if value >= paper - tolerance else "disagrees"
        elif relation == "<=":
            verdict = "agrees" if value <= paper + tolerance else "disagrees"
        else:
            verdict = "agrees" if abs(value - paper) <= tolerance else "disagrees"
        out.append({**claim, "value": value, "difference": value - paper, "verdict": verdict})
    return out


def claims_markdown(results: Sequence[Mapping]) -> str:
    lines = ["| paper's claim | source | paper | jaxnet | jaxnet - paper | |",
             "|---|---|---|---|---|---|"]
    for r in results:
        rel = {"~": "≈", ">=": "≥", "<=": "≤"}.get(r.get("relation", "~"), "≈")
        lines.append(f"| {r['claim']} | {r.get('source', '')} | {rel} {r['paper']:g} | "
                     f"{r['value']:.3f} | {r['difference']:+.3f} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


# ---- outputs ----------------------------------------------------------------------------

def write_outputs(rows: list[dict], out_dir: Path, merged_csv: bool = True) -> list[Path]:
    """Merged results.csv (unless `merged_csv` is false: the rows are already there), the
    figures and (experiments) claims.md in out_dir."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if rows and merged_csv:
        write_rows(out_dir / "results.csv", rows)
        written.append(out_dir / "results.csv")
    by_experiment = defaultdict(list)
    for row in rows:
        by_experiment[row.get("experiment", "")].append(row)
    for name, group in by_experiment.items():
        experiment = experiment_of(group)
        # panels in the experiment's network order; within a job, rows are in its pattern order
        order = list(experiment.get("networks") or {})
        group.sort(key=lambda r: order.index(r["network"]) if r.get("network") in order else len(order))
        panel = experiment.get("panel", "traffic")
        labels = assign_curves(group, networks_are_panels=panel == "network")
        prefix = f"{name.replace('/', '_')}_" if len(by_experiment) > 1 and name else ""
        title = _title(group, experiment)
        scales = {r.get("scale") for r in group}
        bounds = [b for b in experiment.get("bounds", []) if b.get("scale", None) in (None, *scales)]
        claims = [c for c in experiment.get("claims", []) if c.get("scale", None) in (None, *scales)]
        for kind in experiment.get("plots", ["throughput", "latency", "jain", "hops"]):
            path = out_dir / f"{prefix}{kind}.png"
            if kind == "bars":
                plots.bars_figure(group, path, title, panel_key="network",
                                  group_key=experiment.get("group", "traffic"), bounds=bounds, labels=labels)
            else:
                plots.curves_figure(group, kind, path, title, panel_key=panel, bounds=bounds, labels=labels)
            written.append(path)
        if experiment.get("summary"):
            block = experiment["summary"]
            text = f"# {experiment.get('title', name)}: saturation summary\n\n" + summary.saturation_table(
                group, panel, labels, block["reference"], block.get("fractions", [0.5, 0.8]))
            write_atomic(out_dir / f"{prefix}summary.md", text)
            written.append(out_dir / f"{prefix}summary.md")
        if claims:
            text = f"# {experiment.get('title', name)}: paper vs jaxnet\n\n" + claims_markdown(
                evaluate_claims(group, claims))
            write_atomic(out_dir / f"{prefix}claims.md", text)
            written.append(out_dir / f"{prefix}claims.md")
    return written
