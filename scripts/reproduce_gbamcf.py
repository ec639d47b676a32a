"""Reproduce De Neve et al., "Globally balanced paths": P_max per algorithm, Figures 1-2
(path-count histograms) and Table 1 (max link load, uniform and optimal weights), k = 4.

Path sets are cached as outputs/gbamcf/paths/<network>_<algorithm>.npz, so the expensive
cyclic runs are done once; `--stage paths` only computes them, `--stage table` only reads
them. Results: outputs/gbamcf/table1.md, table1.json and the figures.

  python scripts/reproduce_gbamcf.py                       # everything (hours on one core)
  python scripts/reproduce_gbamcf.py --networks DF114 PF307 --stage paths
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from jaxnet.core.files import write_atomic
from jaxnet.paths.mcf import ALGORITHMS, find_paths
from jaxnet.paths.pathset import PathSet
from jaxnet.topology import build_topology

ORDER = list(ALGORITHMS)  # the paper's order

NETWORKS = {
    "DF114": dict(name="dragonfly", a=6, h=3),
    "PF307": dict(name="demiprojective", q=17),
    "DF510": dict(name="dragonfly", a=10, h=5),
    "SF722": dict(name="slimfly", q=19),
}
# Table 1 of the paper: (uniform, optimal) max link load per network and algorithm.
PAPER_TABLE = {
    "DF114": [(535.0, 136.14), (302.25, 135.59), (349.0, 134.23), (256.75, 133.61)],
    "PF307": [(821.5, 120.75), (217.25, 119.48), (239.0, 119.46), (190.25, 119.46)],
    "DF510": [(2721.75, 370.55), (895.5, 367.89), (987.25, 363.37), (679.5, 360.57)],
    "SF722": [(1635.25, 193.54), (319.75, 192.94), (339.25, 192.96), (275.25, 192.94)],
}


def compute_paths(network: str, algorithm: str, out: Path, cycles: int, seed: int) -> PathSet:
    """Load the cached path set or compute (and cache) it, logging P_max per cycle.

    A cached cyclic run with fewer cycles is resumed up to `cycles`; the cache is rewritten
    after every cycle, so an interrupted run loses at most one cycle.
    """
    cache = out / "paths" / f"{network}_{algorithm}.npz"
    cached = PathSet.load(cache) if cache.exists() else None
    if cached is not None and (algorithm != "multi_mcf_cyclic" or cached.params["cycles"] >= cycles):
        return cached
    topology = build_topology(NETWORKS[network])
    start = time.perf_counter()

    def log(cycle, counts, seconds):
        print(f"{network} {algorithm} cycle {cycle}: P_max {counts.max()} ({seconds:.1f} s)", flush=True)

    earlier = cached.params.get("seconds", 0.0) if cached is not None else 0.0
    cache.parent.mkdir(parents=True, exist_ok=True)

    def save(paths):
        paths.params["seconds"] = round(earlier + time.perf_counter() - start, 2)
        paths.save(cache)

    paths = find_paths(topology, 4, algorithm, cycles=cycles, seed=seed, on_cycle=log, resume=cached,
                       checkpoint=save)
    save(paths)
    return paths


def table_rows(network: str, algorithms: list[str], out: Path, demand_seed: int, with_optax: bool,
               with_lp: bool) -> list[dict]:
    """Max link load with uniform, LP-optimal and (optionally) Optax weights per algorithm."""
    from jaxnet.paths.weights import (
        lp_weights,
        optax_dual_bound,
        optax_weights,
        random_demand,
        uniform_weights,
    )

    rows = []
    for algorithm in algorithms:
        i = ORDER.index(algorithm)
        cache = out / "paths" / f"{network}_{algorithm}.npz"
        if not cache.exists():
            continue
        paths = PathSet.load(cache)
        demand = random_demand(paths, demand_seed)
        row = dict(
            network=network,
            algorithm=algorithm,
            cycles=paths.params["cycles"],
            pmax=paths.pmax,
            mean_path_length=round(paths.mean_path_length, 4),
            path_seconds=paths.params.get("seconds"),
            uniform=uniform_weights(paths).max_load(paths, demand),
            paper_uniform=PAPER_TABLE[network][i][0],
            paper_optimal=PAPER_TABLE[network][i][1],
        )
        if with_lp:
            lp = lp_weights(paths, demand)
            row["optimal"] = lp.max_load(paths, demand)
            row["lp_seconds"] = round(lp.seconds, 2)
        if with_optax:
            learned = optax_weights(paths, demand)
            row["optax"] = learned.max_load(paths, demand)
            row["optax_seconds"] = round(learned.seconds, 2)
            row["lower_bound"], seconds = optax_dual_bound(paths, demand)
            row["dual_seconds"] = round(seconds, 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def merge_rows(table: Path, rows: list[dict]) -> list[dict]:
    """The new rows over the saved table: rows not recomputed are kept, and a recomputed row
    keeps the saved columns it lacks (e.g. an LP optimum when run with --skip-lp) as long
    as its path set is the same one (same cycles and path-finding time)."""
    if not table.exists():
        return rows
    saved = {(r["network"], r["algorithm"]): r for r in json.loads(table.read_text())}
    for row in rows:
        old = saved.get((row["network"], row["algorithm"]), {})
        same_paths = all(old.get(key) == row[key] for key in ("cycles", "pmax", "path_seconds"))
        saved[(row["network"], row["algorithm"])] = {**old, **row} if same_paths else row
    return sorted(saved.values(), key=lambda r: (list(NETWORKS).index(r["network"]), ORDER.index(r["algorithm"])))


def markdown(rows: list[dict]) -> str:
    lines = [
        "| network | algorithm | cycles | P_max | uniform | dual bound | optimal (LP) | Optax "
        "| paper uniform | paper optimal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        bound, optimal, optax = (f"{r[key]:.2f}" if key in r else "-" for key in ("lower_bound", "optimal", "optax"))
        lines.append(
            f"| {r['network']} | {r['algorithm']} | {r['cycles']} | {r['pmax']} | {r['uniform']:.2f} "
            f"| {bound} | {optimal} | {optax} | {r['paper_uniform']} | {r['paper_optimal']} |"
        )
    return "\n".join(lines) + "\n"


def figures(network: str, out: Path) -> None:
    """Figure 1 (three single-pass algorithms) and Figure 2 (cyclic after c cycles)."""
    from jaxnet.cli.paths import save_histograms

    topology = build_topology(NETWORKS[network])
    single = {
        alg: PathSet.load(out / "paths" / f"{network}_{alg}.npz").link_path_counts()
        for alg in ORDER[:3]
        if (out / "paths" / f"{network}_{alg}.npz").exists()
    }
    if single:
        save_histograms(topology, single, out / f"{network}_figure1.png")
    cyclic = out / "paths" / f"{network}_multi_mcf_cyclic.npz"
    if cyclic.exists():
        history = PathSet.load(cyclic).link_counts_by_cycle
        shown = [c for c in (1, 2, 5, 10, 20, len(history)) if c <= len(history)]
        panels = {f"cyclic, c = {c}": history[c - 1] for c in dict.fromkeys(shown)}
        save_histograms(topology, panels, out / f"{network}_figure2.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=list(NETWORKS), choices=list(NETWORKS))
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=list(ALGORITHMS))
    parser.add_argument("--stage", choices=["paths", "table", "all"], default="all")
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--demand-seed", type=int, default=1)
    parser.add_argument("--optax", action="store_true", help="also fit Optax weights")
    parser.add_argument("--skip-lp", action="store_true", help="no LP (minutes per large network)")
    parser.add_argument("--out", type=Path, default=Path("outputs/gbamcf"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    if args.stage in ("paths", "all"):
        for network in args.networks:
            for algorithm in args.algorithms:
                compute_paths(network, algorithm, args.out, args.cycles, args.seed)
    if args.stage in ("table", "all"):
        rows = [
            row
            for network in args.networks
            for row in table_rows(network, args.algorithms, args.out, args.demand_seed, args.optax, not args.skip_lp)
        ]
        rows = merge_rows(args.out / "table1.json", rows)
        write_atomic(args.out / "table1.json", json.dumps(rows, indent=1))
        write_atomic(args.out / "table1.md", markdown(rows))
        for network in args.networks:
            figures(network, args.out)
        print(markdown(rows))


if __name__ == "__main__":
    main()
