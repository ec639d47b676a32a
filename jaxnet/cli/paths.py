"""`jaxnet-paths`: globally balanced path sets (GBAMCF heuristics) and their path weights.

    jaxnet-paths topology=dragonfly topology.a=6 topology.h=3 paths.k=4 \
        paths.algorithm=multi_mcf_cyclic paths.cycles=20 format=json

Finds k edge-disjoint minimum-length paths per ordered router pair, then the maximum link
load under the random demand `paths.demand_seed` (or any traffic pattern given as
`paths.demand`) with uniform, LP-optimal and Optax weights, and a lower bound on the LP
optimum from LP duality (`max_link_load_lower_bound`), which certifies the Optax result
where the LP is too big (`paths.lp_method=none` skips the LP). The run directory receives
`paths.npz` (the `PathSet`), `weights.npz` (demand and the weight arrays), `summary.json`
and `path_counts` (in each of `plot.formats`; the paper's histogram: relative contribution of
the links with each path count, by link class). Pairs with fewer than k edge-disjoint paths
are counted in a warning and in `pairs_short_of_k`.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from omegaconf import DictConfig, OmegaConf

from jaxnet.cli.common import (
    console_script,
    hydra_app,
    print_report,
    require_format,
    run_dir,
)
from jaxnet.core.files import write_atomic
from jaxnet.core.validate import require
from jaxnet.paths.mcf import find_paths
from jaxnet.paths.weights import (
    LP_METHODS,
    lp_weights,
    optax_dual_bound,
    optax_weights,
    random_demand,
    traffic_demand,
    uniform_weights,
)
from jaxnet.results import plots
from jaxnet.topology import build_topology
from jaxnet.traffic import PATTERNS, build_traffic


@hydra_app("jaxnet-paths", "paths")
def main(cfg: DictConfig) -> None:
    require_format(cfg)
    formats = plots.check_formats(OmegaConf.select(cfg, "plot.formats", default=plots.DEFAULT_FORMATS))
    p = cfg.paths
    require(p.lp_method in (*LP_METHODS, "none"), "paths.lp_method", p.lp_method,
            f"must be one of {', '.join(LP_METHODS)} or none")
    topology = build_topology(OmegaConf.to_container(cfg.topology, resolve=True))
    start = time.perf_counter()
    paths = find_paths(topology, p.k, p.algorithm, cycles=p.cycles, seed=p.seed)
    path_seconds = time.perf_counter() - start
    short = int((paths.valid.sum(axis=1) < p.k).sum())
    if short:
        print(f"warning: {short} of {paths.n_pairs} router pairs have fewer than paths.k={p.k} edge-disjoint "
              f"paths (as few as {int(paths.valid.sum(axis=1).min())})", file=sys.stderr)
    if p.get("demand") is None:
        demand = random_demand(paths, p.demand_seed)
    else:
        table = build_traffic(demand_pattern(p.demand), topology, p.demand_seed)
        demand = traffic_demand(paths, table, topology.servers_per_router)
    weights = {"uniform": uniform_weights(paths)}
    if p.lp_method != "none":
        weights["optimal"] = lp_weights(paths, demand, method=p.lp_method)
    weights["optax"] = optax_weights(paths, demand, **OmegaConf.to_container(p.optax))
    lower_bound, dual_seconds = optax_dual_bound(paths, demand, **OmegaConf.to_container(p.dual))
    optax_load = weights["optax"].max_load(paths, demand)
    counts = paths.link_path_counts()
    summary = {
        "topology": topology.name,
        "algorithm": p.algorithm,
        "k": p.k,
        "cycles": paths.params["cycles"],
        "pmax": int(counts.max()),
        "pmax_by_cycle": None if paths.link_counts_by_cycle is None
        else paths.link_counts_by_cycle.max(axis=1).tolist(),
        "paths": int(paths.valid.sum()),
        "pairs_short_of_k": short,
        "mean_path_length": round(paths.mean_path_length, 6),
        "max_link_load_optimal": None,
        **{f"max_link_load_{name}": round(w.max_load(paths, demand), 6) for name, w in weights.items()},
        "max_link_load_lower_bound": round(lower_bound, 6),
        "optax_gap": round(optax_load / lower_bound, 6) if lower_bound > 0 else None,
        "path_seconds": round(path_seconds, 3),
        "lp_seconds": round(weights["optimal"].seconds, 3) if "optimal" in weights else None,
        "optax_seconds": round(weights["optax"].seconds, 3),
        "dual_seconds": round(dual_seconds, 3),
        "seconds": round(time.perf_counter() - start, 3),
    }
    out = run_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths.save(out / "paths.npz")
    np.savez_compressed(out / "weights.npz", demand=demand, **{n: w.weights for n, w in weights.items()})
    save_histograms(topology, {p.algorithm: counts}, out / "path_counts.png", formats)
    write_atomic(out / "summary.json", json.dumps(summary, indent=2))
    print_report(summary, cfg.format)


def demand_pattern(demand) -> dict:
    """`paths.demand` as a traffic config: a mapping, or a pattern's name (its defaults)."""
    if isinstance(demand, str):
        demand = {"name": demand}
    elif OmegaConf.is_config(demand):
        demand = OmegaConf.to_container(demand, resolve=True)
    require(isinstance(demand, dict), "paths.demand", demand,
            "a traffic pattern: its name (e.g. adv_group) or a mapping such as {name: adv_group, offset: 1}")
    PATTERNS.split(demand, "paths.demand")
    return demand


def save_histograms(topology, panels: dict[str, np.ndarray], path: Path,
                    formats=plots.DEFAULT_FORMATS) -> list[Path]:
    """`histogram_figure` written to `path` in each of `formats`; returns the files."""
    return plots.save(histogram_figure(topology, panels), path, formats)


def histogram_figure(topology, panels: dict[str, np.ndarray]):
    """One panel per entry: bar height at path count c = c * (links with count c) / sum P_e,
    so every panel sums to one; link classes (Dragonfly local / global) stacked in colour."""
    link_class = topology.link_class[topology.neighbor >= 0]
    fig, axes = plots.pyplot().subplots(len(panels), 1, figsize=(6.5, 1.9 * len(panels) + 0.4), squeeze=False,
                                        sharex=True, layout="constrained")
    for ax, (title, counts) in zip(axes[:, 0], panels.items()):
        total = counts.sum()
        bottom = np.zeros(int(counts.max()) + 1)
        for index, name in enumerate(topology.link_class_names):
            share = np.bincount(counts[link_class == index], minlength=bottom.size)
            height = share * np.arange(bottom.size) / total
            ax.bar(np.arange(bottom.size), height, width=1.0, bottom=bottom, label=name)
            bottom += height
        ax.set_ylim(0, 1.08 * bottom.max())  # stacked bars set no margin above the tallest
        ax.set_title(f"{title} (P_max = {counts.max()})", fontsize=plots.FONT)
        ax.set_ylabel("relative contribution", fontsize=plots.FONT)
        ax.tick_params(labelsize=plots.FONT - 1)
    axes[-1, 0].set_xlabel("path count", fontsize=plots.FONT)
    axes[-1, 0].set_xlim(-1, max(int(c.max()) for c in panels.values()) + 1)
    if len(topology.link_class_names) > 1:
        axes[0, 0].legend(fontsize=plots.FONT - 1, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


script = console_script(main)

if __name__ == "__main__":
    script()
