"""Results tables: one row per (configuration, offered load, seed), written atomically,
resumable (a sweep skips rows it already has), and plotted."""
from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from jaxnet import __version__
from jaxnet.core.files import write_atomic

# The columns every results.csv starts with (issue 3, item 6); then the rest of the row.
LEADING_COLUMNS = [
    "topology", "routing", "traffic", "offered_load", "seed", "accepted_load",
    "accepted_load_min", "injected_load", "message_latency", "network_latency",
    "average_hops", "jain_generated", "jain_consumed", "link_util_mean", "link_util_max",
    "missed_generations", "warmup", "measure", "wall_s", "device",
]


def config_id(config: Mapping) -> str:
    """Short stable hash of the parts of a configuration that change results."""
    keys = ("topology", "routing", "traffic", "router")
    sim = {k: config["sim"].get(k) for k in ("warmup", "measure", "generate_until")}
    blob = json.dumps({**{k: config[k] for k in keys}, "sim": sim}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def read_rows(path: Path) -> list[dict]:
    if not Path(path).exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def done_points(rows: Iterable[Mapping], cid: str) -> set[tuple[float, int]]:
    return {(float(r["offered_load"]), int(r["seed"])) for r in rows if r.get("config_id") == cid}


def decorate(row: dict, config: Mapping, cid: str) -> dict:
    """Add the configuration and software versions to a simulation row."""
    import jax

    return {
        "topology": config["topology"]["name"],
        "routing": config["routing"]["name"],
        "traffic": config["traffic"]["name"],
        "warmup": config["sim"]["warmup"],
        "measure": config["sim"]["measure"],
        **row,
        "config_id": cid,
        "config": json.dumps(config, sort_keys=True, default=str),
        "jaxnet_version": __version__,
        "jax_version": jax.__version__,
    }


def write_rows(path: Path, rows: list[Mapping]) -> None:
    """Write all rows as CSV atomically (temp file + rename)."""
    columns = list(LEADING_COLUMNS)
    for row in rows:
        columns += [k for k in row if k not in columns]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in row.items()})
    write_atomic(Path(path), buffer.getvalue())


def plot_curves(rows: list[Mapping], out_dir: Path) -> list[Path]:
    """throughput.png, latency.png and jain.png: mean over seeds, min-max band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[str, list[Mapping]] = {}
    for row in rows:
        label = f"{row['routing']} / {row['traffic']} / {row['topology']}"
        groups.setdefault(label, []).append(row)
    figures = {
        "throughput.png": ("offered_load", "accepted_load", "offered load (phits/cycle/server)",
                           "accepted load (phits/cycle/server)"),
        "latency.png": ("accepted_load", "message_latency", "accepted load (phits/cycle/server)",
                        "message latency (cycles)"),
        "jain.png": ("offered_load", "jain_consumed", "offered load (phits/cycle/server)",
                     "Jain index of consumed load"),
    }
    written = []
    for name, (xkey, ykey, xlabel, ylabel) in figures.items():
        fig, ax = plt.subplots(figsize=(5.5, 4))
        for label, members in sorted(groups.items()):
            loads = sorted({float(r["offered_load"]) for r in members})
            xs, mean, lo, hi = [], [], [], []
            for load in loads:
                at = [r for r in members if float(r["offered_load"]) == load]
                x = np.array([float(r[xkey]) for r in at])
                y = np.array([float(r[ykey]) for r in at])
                xs.append(x.mean()), mean.append(y.mean()), lo.append(y.min()), hi.append(y.max())
            ax.plot(xs, mean, marker="o", ms=3, label=label)
            ax.fill_between(xs, lo, hi, alpha=0.25)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = Path(out_dir) / name
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


def plot_panels(rows: list[Mapping], path: Path, panel_key: str = "traffic",
                line_key: str = "routing", title: str = "") -> Path:
    """Accepted vs offered load, one panel per value of `panel_key`, one line per `line_key`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(r[panel_key] for r in rows))
    lines = list(dict.fromkeys(r[line_key] for r in rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.5), sharey=True,
                             squeeze=False)
    for ax, panel in zip(axes[0], panels):
        for line in lines:
            at = [r for r in rows if r[panel_key] == panel and r[line_key] == line]
            ax.plot([float(r["offered_load"]) for r in at], [float(r["accepted_load"]) for r in at],
                    marker="o", ms=3, label=line)
        ax.set_title(f"{title}{panel}", fontsize=9)
        ax.set_xlabel("offered load (phits/cycle/server)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("accepted load (phits/cycle/server)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
