"""Saturation summary of an experiment (its `summary` block: `reference`, `fractions`): per
panel and curve, the peak accepted load and the mean message latency at fractions of the
reference line's peak, e.g. latency at 50 % and 80 % of minimal routing's saturation load.

A curve's latency at offered load x is interpolated linearly between its two nearest
offered loads, per seed and on the mean over seeds; where x is above 95 % of the curve's
peak accepted load the curve is saturated at x and shows "sat." instead (its latency would
be the source queue's). The peak is that of the mean over seeds, its range each seed's own.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Mapping, Sequence

import numpy as np

from jaxnet.results.plots import peak_accepted


def _num(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _at(rows: Sequence[Mapping], load: float, column: str) -> float:
    """Mean over rows of `column` interpolated at offered load `load` (nan outside the sweep)."""
    by_load = defaultdict(list)
    for row in rows:
        by_load[_num(row["offered_load"])].append(_num(row[column]))
    loads = np.asarray(sorted(by_load))
    if not len(loads) or load < loads[0] - 1e-9 or load > loads[-1] + 1e-9:
        return float("nan")
    return float(np.interp(load, loads, [np.nanmean(by_load[x]) for x in loads]))


def latency_at(rows: Sequence[Mapping], load: float) -> float:
    """Mean message latency at offered load `load`, or inf past 0.95 x the rows' peak
    accepted load (saturated there)."""
    if load > 0.95 * peak_accepted(rows):
        return float("inf")
    return _at(rows, load, "message_latency")


def _cell(rows: Sequence[Mapping], load: float) -> str:
    mean = latency_at(rows, load)
    if math.isinf(mean):
        return "sat."
    seeds = [latency_at([r for r in rows if r["seed"] == s], load) for s in sorted({r["seed"] for r in rows})]
    spread = f" ({min(seeds):.1f}-{max(seeds):.1f})" if len(seeds) > 1 and all(map(math.isfinite, seeds)) else ""
    return "-" if math.isnan(mean) else f"{mean:.1f}{spread}"


def saturation_table(rows: Sequence[Mapping], panel_key: str, labels: Mapping[str, str], reference: str,
                     fractions: Sequence[float]) -> str:
    """Markdown: a row per panel (in the rows' order) and curve, the reference line first (rows
    carry `curve`, `line`, `seed`)."""
    head = ["panel", "line", "peak accepted (seeds)"] + [f"latency at {f:g} x {reference} peak" for f in fractions]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    panels = defaultdict(list)
    for row in rows:
        panels[row[panel_key]].append(row)
    for panel, members in panels.items():
        ref = peak_accepted([r for r in members if r.get("line") == reference])
        by_curve = defaultdict(list)
        for row in members:
            by_curve[row["curve"]].append(row)
        # the reference first, then the lines by name
        for curve, crows in sorted(by_curve.items(), key=lambda item: (item[1][0].get("line") != reference,
                                                                        labels.get(item[0], item[0]))):
            seeds = sorted({r["seed"] for r in crows})
            peaks = [peak_accepted([r for r in crows if r["seed"] == s]) for s in seeds]
            spread = f" ({min(peaks):.3f}-{max(peaks):.3f})" if len(peaks) > 1 else ""
            cells = [_cell(crows, f * ref) if math.isfinite(ref) else "-" for f in fractions]
            out.append(f"| {panel} | {labels.get(curve, curve)} | {peak_accepted(crows):.3f}{spread} | "
                       + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"
