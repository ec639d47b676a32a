"""Figures that read like the papers': accepted vs offered load, latency (mean and 99th
percentile) vs accepted load, Jain index, path length, and maximum-throughput bars; a panel per traffic pattern (or per
network), a line per curve, seeds as a band, analytic bounds as dashed lines.

A curve is one configuration: rows of different configurations are never averaged. Its
label and its colour follow `labels` (curve -> label, in legend order; curves with the same
label, such as one routing on several networks, share a colour). Panels whose values are
comparable share their y-range (accepted load, Jain index, hops); the legend sits to the
right of the panels; the layout is constrained so that no title or label is cut off. Every
figure is written in each requested format (`plot.formats`: png at `DPI`, pdf, svg)."""
from __future__ import annotations

import math
import os
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from jaxnet.core.validate import require
from jaxnet.results.labels import figure_text

FORMATS = ("png", "pdf", "svg")
DEFAULT_FORMATS = ("png", "pdf")
DPI = 150
PANEL = (2.9, 2.3)  # inches per curve panel (width, height)
FONT = 8
BOUND = "analytic bound"  # the legend entry of a bar figure's bounds

# figure name -> (x column, y column, x label, y label, panels share the y-range, y from 0)
CURVES = {
    "throughput": ("offered_load", "accepted_load", "offered load (phits/cycle/server)",
                   "accepted load (phits/cycle/server)", True, True),
    "latency": ("accepted_load", "message_latency", "accepted load (phits/cycle/server)",
                "average message latency (cycles)", False, True),
    "tail": ("accepted_load", "latency_p99", "accepted load (phits/cycle/server)",
             "99th percentile message latency (cycles)", False, True),
    "jain": ("offered_load", "jain_generated", "offered load (phits/cycle/server)",
             "Jain index of generated load", True, True),
    "hops": ("offered_load", "average_hops", "offered load (phits/cycle/server)",
             "average path length (hops)", True, False),
}


def check_formats(formats, parameter: str = "plot.formats") -> tuple[str, ...]:
    """The figure formats to write (a name or a list of them), or a one-line ValueError."""
    names = [formats] if isinstance(formats, str) else formats
    ok = isinstance(names, Iterable) and not isinstance(names, Mapping)
    names = list(names) if ok else []
    require(ok and bool(names) and all(n in FORMATS for n in names), parameter, formats,
            f"a non-empty list of {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(names))


def pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None}, "svg": {"Date": None}}


def save(fig, path: Path, formats: Sequence[str] = DEFAULT_FORMATS) -> list[Path]:
    """Write `fig` as path with each format's suffix (atomically), close it, return the files."""
    plt = pyplot()
    written = []
    for fmt in check_formats(formats):
        target = Path(path).with_suffix(f".{fmt}")
        tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
        fig.savefig(tmp, format=fmt, dpi=DPI, bbox_inches="tight", pad_inches=0.03, metadata=_METADATA[fmt])
        os.replace(tmp, target)
        written.append(target)
    plt.close(fig)
    return written


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
        out.append((x, np.nanmean(y), np.nanmin(y), np.nanmax(y)) if np.isfinite(y).any() else (x, *[np.nan] * 3))
    return np.array(out).reshape(-1, 4)


def peak_accepted(rows: Sequence[Mapping]) -> float:
    """The highest accepted load over offered loads, each the mean over seeds."""
    pts = curve_points(rows, "offered_load", "accepted_load")
    return float(np.nanmax(pts[:, 1])) if len(pts) and np.isfinite(pts[:, 1]).any() else float("nan")


def _panels(rows, panel_key):
    panels = defaultdict(list)
    for row in rows:
        panels[row[panel_key]].append(row)
    return dict(panels)


def _bounds_for(bounds: Sequence[Mapping], panel) -> list[Mapping]:
    return [b for b in bounds if b.get("panel") in (None, "", panel)]


def _order(rows, labels):
    """The curves in legend order (that of `labels`), their labels and colours (one per label)."""
    plt = pyplot()
    labels = labels or {}
    curves = list(dict.fromkeys(r["curve"] for r in rows))
    names = {c: labels.get(c, c) for c in curves}
    rank = {name: i for i, name in enumerate(dict.fromkeys([*labels.values(), *names.values()]))}
    curves.sort(key=lambda c: rank[names[c]])
    cmap = plt.cm.tab10 if len(rank) <= 10 else plt.cm.tab20
    return curves, names, {c: cmap(rank[names[c]] % cmap.N) for c in curves}


def _wrap(text: str, width_in: float, size: float) -> str:
    """Text wrapped to a width in inches (about 0.55 em per character)."""
    chars = max(12, int(width_in * 72 / (0.55 * size)))
    return "\n".join(textwrap.fill(line, chars) for line in str(text).splitlines())


def _panel_title(text: str, panel_width_in: float) -> str:
    """A panel's title wrapped to its axes: about half an inch of the panel's width is tick
    labels and the space to the next panel, which a longer title would run into."""
    return _wrap(text, panel_width_in - 0.5, FONT)


def _columns(n_panels: int, widest: int) -> int:
    """Panels per row: at most `widest`, leaving the fewest empty places (then the most per row)."""
    options = range(1, min(n_panels, widest) + 1)
    return min(options, key=lambda cols: (math.ceil(n_panels / cols) * cols - n_panels, -cols))


def _figure(n_panels: int, cols: int, panel_size: tuple[float, float], legend_labels: Sequence[str],
            share_y: bool):
    """A constrained-layout figure of `n_panels` panels, `cols` per row, room for the legend."""
    plt = pyplot()
    rows = math.ceil(n_panels / cols)
    legend_width = 0.35 + 0.055 * max((len(str(s)) for s in legend_labels), default=0)
    fig = plt.figure(figsize=(panel_size[0] * cols + legend_width, panel_size[1] * rows + 0.5),
                     layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, sharey=share_y)
    for ax in axes.ravel()[n_panels:]:
        ax.set_visible(False)
    return fig, axes


def _finish(fig, axes, n_panels: int, x_label: str | None, y_label: str, title: str) -> None:
    """Axis labels on the outer panels, one legend right of the panels, the wrapped title."""
    visible = axes.ravel()[:n_panels]
    n_cols = axes.shape[1]
    for index, ax in enumerate(visible):
        if index % n_cols == 0:
            ax.set_ylabel(y_label, fontsize=FONT)
        if x_label and index + n_cols >= n_panels:  # no panel below
            ax.set_xlabel(x_label, fontsize=FONT)
    entries = {}
    for ax in visible:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(name, handle)
    if BOUND in entries:
        entries[BOUND] = entries.pop(BOUND)  # after the curves
    if entries:  # beside the first row's last panel (under the title, inside the layout)
        axes[0, -1].legend(list(entries.values()), list(entries), loc="upper left", bbox_to_anchor=(1.02, 1.0),
                           borderaxespad=0.0, fontsize=FONT - 1, frameon=False)
    width = fig.get_size_inches()[0]
    fig.suptitle(_wrap(title, width, FONT + 1), fontsize=FONT + 1)


def _y_range(axes, values: Iterable[float], from_zero: bool) -> None:
    finite = [v for v in values if np.isfinite(v)]
    if not finite:
        return
    top, bottom = max(finite), (0.0 if from_zero else min(finite))
    pad = 0.06 * (top - bottom or abs(top) or 1.0)
    axes.ravel()[0].set_ylim(bottom if from_zero else bottom - pad, top + pad)


def build_curves(rows: Sequence[Mapping], kind: str, title: str, panel_key: str = "traffic",
                 bounds: Sequence[Mapping] = (), labels: Mapping[str, str] | None = None,
                 panel_titles: Mapping | None = None):
    """The figure of `kind` (a key of CURVES): a panel per value of `panel_key` (titled by
    `panel_titles`), a line per curve (the `curve` column), the band spanning the seeds."""
    x_key, y_key, x_label, y_label, share_y, from_zero = CURVES[kind]
    panels = _panels(rows, panel_key)
    curves, names, colours = _order(rows, labels)
    fig, axes = _figure(len(panels), _columns(len(panels), 5), PANEL, list(dict.fromkeys(names.values())), share_y)
    extent = []
    for ax, (panel, members) in zip(axes.ravel(), panels.items()):
        by_curve = defaultdict(list)
        for row in members:
            by_curve[row["curve"]].append(row)
        for curve in (c for c in curves if c in by_curve):
            crows = by_curve[curve]
            pts = curve_points(crows, x_key, y_key)
            ax.plot(pts[:, 0], pts[:, 1], marker="o", ms=2.5, lw=1.2, color=colours[curve], label=names[curve])
            if len({r["seed"] for r in crows}) > 1:
                ax.fill_between(pts[:, 0], pts[:, 2], pts[:, 3], alpha=0.2, color=colours[curve], lw=0)
            extent += list(pts[:, 3]) + list(pts[:, 2])
        if kind == "throughput":
            for bound in _bounds_for(bounds, panel):
                value = float(bound["value"])
                extent.append(value)
                ax.axhline(value, ls="--", lw=0.9, color="grey")
                ax.annotate(figure_text(bound.get("label", "")), (0.02, value), fontsize=FONT - 2, color="grey",
                            xycoords=("axes fraction", "data"), va="bottom")
        ax.set_title(_panel_title((panel_titles or {}).get(panel, panel), PANEL[0]), fontsize=FONT)
        ax.tick_params(labelsize=FONT - 1)
        ax.grid(alpha=0.3)
        if x_key == "offered_load":
            ax.set_xlim(0, 1.04 * max([_num(r[x_key]) for r in members] + [0.1]))
        if not share_y:
            ax.set_ylim(bottom=0 if from_zero else None)
    if share_y:
        _y_range(axes, extent, from_zero)
    _finish(fig, axes, len(panels), x_label, y_label, title)
    return fig


def curves_figure(rows: Sequence[Mapping], kind: str, path: Path, title: str, panel_key: str = "traffic",
                  bounds: Sequence[Mapping] = (), labels: Mapping[str, str] | None = None,
                  panel_titles: Mapping | None = None, formats: Sequence[str] = DEFAULT_FORMATS) -> list[Path]:
    """`build_curves` written to `path` in each format; returns the files."""
    return save(build_curves(rows, kind, title, panel_key, bounds, labels, panel_titles), path, formats)


def build_bars(rows: Sequence[Mapping], title: str, panel_key: str = "network", group_key: str = "traffic",
               bounds: Sequence[Mapping] = (), labels: Mapping[str, str] | None = None,
               panel_titles: Mapping | None = None, group_titles: Mapping | None = None):
    """Maximum accepted load (the peak over offered loads of the mean over seeds) as bars: a
    panel per `panel_key`, a bar group per `group_key`, a bar per curve; bounds as dashes
    over their bar group (a bound with `traffic`) or across the panel."""
    panels = _panels(rows, panel_key)
    curves, names, colours = _order(rows, labels)
    bars = max(len({r[group_key] for r in members}) * len({r["curve"] for r in members})
               for members in panels.values())
    size = (0.9 + 0.2 * bars, 2.4)
    fig, axes = _figure(len(panels), _columns(len(panels), 2), size, list(dict.fromkeys(names.values())), True)
    extent = []
    for ax, (panel, members) in zip(axes.ravel(), panels.items()):
        groups = list(dict.fromkeys(r[group_key] for r in members))
        present = [c for c in curves if any(r["curve"] == c for r in members)]  # this panel's bars
        width = 0.8 / max(len(present), 1)
        for j, curve in enumerate(present):
            heights = []
            for group in groups:
                crows = [r for r in members if r["curve"] == curve and r[group_key] == group]
                heights.append(peak_accepted(crows) if crows else np.nan)
            extent += heights
            ax.bar(np.arange(len(groups)) + (j - (len(present) - 1) / 2) * width, heights, width,
                   color=colours[curve], label=names[curve])
        for bound in bounds:  # this panel's, and those of a pattern's panel in a curve figure
            if not (bound in _bounds_for(bounds, panel) or bound.get("panel") == bound.get("traffic")):
                continue
            value = float(bound["value"])
            extent.append(value)
            if bound.get("traffic") in groups:
                g = groups.index(bound["traffic"])
                ax.plot([g - 0.45, g + 0.45], [value, value], ls="--", color="black", lw=1, label=BOUND)
            elif not bound.get("traffic"):
                ax.axhline(value, ls="--", color="black", lw=0.9, label=BOUND)
        ax.set_xticks(np.arange(len(groups)))
        ax.set_xticklabels([(group_titles or {}).get(g, g) for g in groups], rotation=45, ha="right",
                           rotation_mode="anchor", fontsize=FONT - 1)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_title(_panel_title((panel_titles or {}).get(panel, panel), size[0]), fontsize=FONT)
        ax.tick_params(axis="y", labelsize=FONT - 1)
        ax.grid(axis="y", alpha=0.3)
    _y_range(axes, extent, True)
    _finish(fig, axes, len(panels), None, "maximum accepted load\n(phits/cycle/server)", title)
    return fig


def bars_figure(rows: Sequence[Mapping], path: Path, title: str, panel_key: str = "network",
                group_key: str = "traffic", bounds: Sequence[Mapping] = (),
                labels: Mapping[str, str] | None = None, panel_titles: Mapping | None = None,
                group_titles: Mapping | None = None, formats: Sequence[str] = DEFAULT_FORMATS) -> list[Path]:
    """`build_bars` written to `path` in each format; returns the files."""
    return save(build_bars(rows, title, panel_key, group_key, bounds, labels, panel_titles, group_titles),
                path, formats)


def _point_label(row: Mapping) -> str:
    return f"load {_num(row['offered_load']):g}, seed {row['seed']}"


def build_series(recorded: Sequence[tuple[Mapping, Mapping]], title: str):
    """Time series of recorded points (`sim.record: [series]`): accepted load (top) and mean
    message latency (bottom) per window against the cycle, a column per pattern, a line per
    point, its measurement window shaded."""
    plt = pyplot()
    columns = list(dict.fromkeys(row["traffic"] for row, _ in recorded))
    loads = sorted({_num(row["offered_load"]) for row, _ in recorded})
    cmap = plt.cm.viridis
    fig = plt.figure(figsize=(PANEL[0] * len(columns) + 1.6, 2 * PANEL[1] + 0.5), layout="constrained")
    axes = fig.subplots(2, len(columns), squeeze=False, sharex="col")
    for col, label in enumerate(columns):
        top, bottom = axes[0, col], axes[1, col]
        for row, arrays in recorded:
            if row["traffic"] != label:
                continue
            colour = cmap(loads.index(_num(row["offered_load"])) / max(len(loads) - 1, 1) * 0.9)
            width = float(arrays["cycle"][1] - arrays["cycle"][0]) if len(arrays["cycle"]) > 1 else 1.0
            middle = arrays["cycle"] + width / 2
            top.plot(middle, arrays["accepted_load"], lw=1.1, color=colour, label=_point_label(row))
            bottom.plot(middle, arrays["latency"], lw=1.1, color=colour)
            start = _num(row.get("warmup_cycles", row.get("warmup")))
            if np.isfinite(start):
                for ax in (top, bottom):
                    ax.axvspan(start, start + _num(row["measure"]), color=colour, alpha=0.06, lw=0)
        top.set_title(_panel_title(label, PANEL[0]), fontsize=FONT)
        bottom.set_xlabel("cycle", fontsize=FONT)
        for ax in (top, bottom):
            ax.tick_params(labelsize=FONT - 1)
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=0)
    axes[0, 0].set_ylabel("accepted load\n(phits/cycle/server)", fontsize=FONT)
    axes[1, 0].set_ylabel("mean message latency\n(cycles)", fontsize=FONT)
    handles, names = axes[0, -1].get_legend_handles_labels()
    if handles:
        axes[0, -1].legend(handles, names, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                           fontsize=FONT - 1, frameon=False)
    fig.suptitle(_wrap(title + "\n(shaded: each point's measurement window)", fig.get_size_inches()[0], FONT + 1),
                 fontsize=FONT + 1)
    return fig


def build_links(recorded: Sequence[tuple[Mapping, Mapping]], title: str):
    """Per-port records of points (`sim.record: [links]`) as heatmaps, router by port, a
    column per point: the utilisation of router-to-router links (top; blank: no link on that
    port) and the mean packets waiting in each input port's buffers, its VCs summed (bottom;
    the injection ports last), each row on one colour scale."""
    plt = pyplot()
    occupancy = [arrays["input_occupancy"].sum(axis=-1) for _, arrays in recorded]
    rows_of = [("link_utilisation", "link utilisation\n(phits/cycle)", "magma",
                [arrays["link_utilisation"] for _, arrays in recorded]),
               ("input_occupancy", "packets waiting in\ninput buffers", "viridis", occupancy)]
    cols = len(recorded)
    fig = plt.figure(figsize=(1.8 * cols + 1.4, 2 * PANEL[1] * 1.2 + 0.6), layout="constrained")
    axes = fig.subplots(2, cols, squeeze=False)
    for r, (_, label, cmap, images) in enumerate(rows_of):
        top = max(float(np.nanmax(image)) for image in images) or 1.0
        for c, ((row, _), image) in enumerate(zip(recorded, images)):
            ax = axes[r, c]
            shown = ax.imshow(image, aspect="auto", interpolation="nearest", vmin=0, vmax=top, cmap=cmap)
            ax.set_title(f"{_point_label(row)}\nmean {np.nanmean(image):.3f}, max {np.nanmax(image):.3f}",
                         fontsize=FONT - 1)
            ax.set_xlabel("port", fontsize=FONT)
            ax.tick_params(labelsize=FONT - 1)
            if c == 0:
                ax.set_ylabel("router", fontsize=FONT)
        bar = fig.colorbar(shown, ax=axes[r].tolist(), shrink=0.9)
        bar.set_label(label, fontsize=FONT)
        bar.ax.tick_params(labelsize=FONT - 1)
    fig.suptitle(_wrap(title, fig.get_size_inches()[0], FONT + 1), fontsize=FONT + 1)
    return fig


def build_faults(rows: Sequence[Mapping], title: str, line_labels: Mapping[str, str], panel_of, panel_titles):
    """Throughput against failed links: the maximum accepted load (the peak over the offered
    loads of the mean over seeds) against the fraction of links failed (`failed_link_fraction`,
    0 without faults), a line per experiment line, a panel per network family (`panel_of(row)`,
    titled by `panel_titles`)."""
    panels = defaultdict(list)
    for row in rows:
        panels[panel_of(row)].append(row)
    names = [line_labels.get(line, line) for line in dict.fromkeys(r.get("line", "") for r in rows)]
    cmap = pyplot().cm.tab10
    colours = {name: cmap(i % cmap.N) for i, name in enumerate(dict.fromkeys([*line_labels.values(), *names]))}
    fig, axes = _figure(len(panels), _columns(len(panels), 4), PANEL, names, True)
    extent = []
    for ax, (panel, members) in zip(axes.ravel(), panels.items()):
        by_line = defaultdict(lambda: defaultdict(list))
        for row in members:
            by_line[row.get("line", "")][_num(row.get("failed_link_fraction", 0.0))].append(row)
        for line, by_fraction in by_line.items():
            fractions = sorted(by_fraction)
            peaks = [peak_accepted(by_fraction[f]) for f in fractions]
            extent += peaks
            name = line_labels.get(line, line)
            ax.plot(100 * np.asarray(fractions), peaks, marker="o", ms=3, lw=1.2, color=colours[name], label=name)
        ax.set_title(_panel_title(panel_titles.get(panel, panel), PANEL[0]), fontsize=FONT)
        ax.tick_params(labelsize=FONT - 1)
        ax.grid(alpha=0.3)
    _y_range(axes, extent, True)
    _finish(fig, axes, len(panels), "links failed (%)", "maximum accepted load\n(phits/cycle/server)", title)
    return fig


COMPLETION = {  # figure -> (y column, y label): finite workloads (traffic=collective)
    "completion": ("completion_cycles", "completion time (cycles)"),
    "bandwidth": ("effective_bandwidth", "effective bandwidth\n(phits/cycle/server)"),
}


def build_completion(rows: Sequence[Mapping], kind: str, title: str, curve_labels: Mapping[str, str],
                     panel_of, panel_titles: Mapping[str, str]):
    """Finite workloads: completion time (or effective bandwidth, `kind` of COMPLETION) against
    the packets each server sends, a panel per `panel_of(row)` (network and collective), a line
    per curve, the seeds' range as a band; rows that did not complete are left out."""
    y_key, y_label = COMPLETION[kind]
    done = [r for r in rows if str(r.get("complete")) == "True"]
    panels = defaultdict(list)
    for row in done:
        panels[panel_of(row)].append(row)
    curves, names, colours = _order(done, curve_labels)
    fig, axes = _figure(max(len(panels), 1), _columns(max(len(panels), 1), 4), PANEL,
                        list(dict.fromkeys(names.values())), False)
    for ax, (panel, members) in zip(axes.ravel(), panels.items()):
        for curve in (c for c in curves if any(r["curve"] == c for r in members)):
            by_size = defaultdict(list)
            for row in members:
                if row["curve"] == curve:
                    by_size[_num(row["packets_per_server"])].append(_num(row[y_key]))
            sizes = sorted(by_size)
            values = [by_size[s] for s in sizes]
            ax.plot(sizes, [np.mean(v) for v in values], marker="o", ms=3, lw=1.2, color=colours[curve],
                    label=names[curve])
            if any(len(v) > 1 for v in values):
                ax.fill_between(sizes, [min(v) for v in values], [max(v) for v in values], alpha=0.2,
                                color=colours[curve], lw=0)
        ax.set_title(_panel_title(panel_titles.get(panel, panel), PANEL[0]), fontsize=FONT)
        ax.tick_params(labelsize=FONT - 1)
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    _finish(fig, axes, max(len(panels), 1), "packets sent per server", y_label, title)
    return fig
