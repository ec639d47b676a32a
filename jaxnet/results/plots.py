"""Figures that read like the papers': accepted vs offered load, latency vs accepted load,
Jain index, path length, and maximum-throughput bars, one panel per traffic pattern (or per
network), one line per curve, seeds as a band, analytic bounds as dashed lines.

A curve is one configuration: rows of different configurations are never averaged. Its
label is given (an experiment's line) or made of the parameters that differ between the
curves of a figure (`collect.curve_labels`)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

# figure name -> (x column, y column, x label, y label)
CURVES = {
    "throughput": ("offered_load", "accepted_load", "offered load (phits/cycle/server)",
                   "accepted load (phits/cycle/server)"),
    "latency": ("accepted_load", "message_latency", "accepted load (phits/cycle/server)",
                "average message latency (cycles)"),
    "jain": ("offered_load", "jain_generated", "offered load (phits/cycle/server)",
             "Jain index of generated load"),
    "hops": ("offered_load", "average_hops", "offered load (phits/cycle/server)", "average path length (hops)"),
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _num(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def curve_points(rows: Sequence[Mapping], x_key: str, y_key: str):
    """(x, mean y, min y, max y) per offered load over the seeds of one curve."""
    by_load = defaultdict(list)
    for row in rows:
        by_load[_num(row["offered_load"])].append(row)
    out = []
    for load in sorted(by_load):
        at = by_load[load]
        x = np.nanmean([_num(r[x_key]) for r in at])
        y = np.array([_num(r[y_key]) for r in at])
        out.append((x, np.nanmean(y), np.nanmin(y), np.nanmax(y)))
    return np.array(out).reshape(-1, 4)


def _panels(rows, panel_key):
    panels = defaultdict(list)
    for row in rows:
        panels[row[panel_key]].append(row)
    return dict(panels)


def _colours(plt, curve_ids, labels):
    """A colour per curve, the same for curves of the same label (one line in several panels)."""
    names = [(labels or {}).get(c, c) for c in curve_ids]
    index = {name: i for i, name in enumerate(dict.fromkeys(names))}
    return {c: plt.cm.tab10(index[name] % 10) for c, name in zip(curve_ids, names)}


def _bounds_for(bounds: Sequence[Mapping], panel: str, line_labels: Sequence[str]):
    return [b for b in bounds if b.get("panel") in (None, "", panel)]


def curves_figure(rows: Sequence[Mapping], kind: str, path: Path, title: str, panel_key: str = "traffic",
                  bounds: Sequence[Mapping] = (), labels: Mapping[str, str] | None = None) -> Path:
    """One figure of `kind` (a key of CURVES): a panel per value of `panel_key`, a line per
    curve (the `curve` column of each row), the band spanning the seeds."""
    plt = _pyplot()
    x_key, y_key, x_label, y_label = CURVES[kind]
    panels = _panels(rows, panel_key)
    n = len(panels)
    cols = min(n, 5)
    nrows = (n + cols - 1) // cols
    n_curves = len({r["curve"] for r in rows})
    legend_rows = (n_curves + 2) // 3
    fig, axes = plt.subplots(nrows, cols, figsize=(max(5.5, 3.3 * cols), 2.8 * nrows + 0.8 + 0.22 * legend_rows),
                             squeeze=False)
    curve_ids = list(dict.fromkeys(r["curve"] for r in rows))
    colours = _colours(plt, curve_ids, labels)
    for ax, (panel, members) in zip(axes.ravel(), panels.items()):
        by_curve = defaultdict(list)
        for row in members:
            by_curve[row["curve"]].append(row)
        for curve, crows in by_curve.items():
            pts = curve_points(crows, x_key, y_key)
            label = (labels or {}).get(curve, curve)
            ax.plot(pts[:, 0], pts[:, 1], marker="o", ms=2.5, lw=1.2, color=colours[curve], label=label)
            if len({r["seed"] for r in crows}) > 1:
                ax.fill_between(pts[:, 0], pts[:, 2], pts[:, 3], alpha=0.2, color=colours[curve], lw=0)
        if kind == "throughput":
            for bound in _bounds_for(bounds, panel, curve_ids):
                ax.axhline(float(bound["value"]), ls="--", lw=0.9, color="grey")
                ax.annotate(bound.get("label", ""), (0.02, float(bound["value"])), fontsize=6, color="grey",
                            xycoords=("axes fraction", "data"), va="bottom")
        ax.set_title(str(panel), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(y_label, fontsize=7)
    for ax in axes[-1, :]:
        ax.set_xlabel(x_label, fontsize=7)
    _legend(fig, axes.ravel(), 3)
    fig.suptitle(title, fontsize=8)
    height = fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, (0.25 + 0.22 * legend_rows) / height, 1, 1 - 0.45 / height))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def _legend(fig, axes, ncol: int) -> None:
    """One legend under the figure with every panel's curves (a curve may be in one panel only)."""
    entries = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(name, handle)
    fig.legend(list(entries.values()), list(entries), loc="lower center", ncol=min(len(entries), ncol),
               fontsize=7, frameon=False)


def bars_figure(rows: Sequence[Mapping], path: Path, title: str, panel_key: str = "network",
                group_key: str = "traffic", bounds: Sequence[Mapping] = (),
                labels: Mapping[str, str] | None = None) -> Path:
    """Maximum accepted load (the peak over offered loads of the mean over seeds) as bars: a
    panel per `panel_key`, a bar group per `group_key`, a bar per curve; bounds as dashes
    over their bar group (a bound with `traffic`) or across the panel."""
    plt = _pyplot()
    panels = _panels(rows, panel_key)
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(max(4.0, 0.5 * max(len({r[group_key] for r in rows}), 4)) * n, 3.6),
                             squeeze=False)
    curve_ids = list(dict.fromkeys(r["curve"] for r in rows))
    colours = _colours(plt, curve_ids, labels)
    for ax, (panel, members) in zip(axes[0], panels.items()):
        groups = list(dict.fromkeys(r[group_key] for r in members))
        present = [c for c in curve_ids if any(r["curve"] == c for r in members)]  # this panel's bars
        width = 0.8 / max(len(present), 1)
        for j, curve in enumerate(present):
            heights = []
            for group in groups:
                crows = [r for r in members if r["curve"] == curve and r[group_key] == group]
                heights.append(peak_accepted(crows) if crows else np.nan)
            ax.bar(np.arange(len(groups)) + (j - (len(present) - 1) / 2) * width, heights, width,
                   color=colours[curve], label=(labels or {}).get(curve, curve))
        for bound in _bounds_for(bounds, panel, curve_ids):
            value = float(bound["value"])
            if bound.get("traffic") in groups:
                g = groups.index(bound["traffic"])
                ax.plot([g - 0.45, g + 0.45], [value, value], ls="--", color="black", lw=1)
            else:
                ax.axhline(value, ls="--", color="grey", lw=0.9)
        ax.set_xticks(np.arange(len(groups)))
        ax.set_xticklabels(groups, rotation=45, ha="right", fontsize=7)
        ax.set_title(str(panel), fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("maximum accepted load (phits/cycle/server)", fontsize=7)
    _legend(fig, axes[0], 4)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.94))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def peak_accepted(rows: Sequence[Mapping]) -> float:
    """The highest accepted load over offered loads, each the mean over seeds."""
    pts = curve_points(rows, "offered_load", "accepted_load")
    return float(np.nanmax(pts[:, 1])) if len(pts) else float("nan")
