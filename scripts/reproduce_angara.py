"""Reproduce the Angara routing-table paper: Table 2, the random-tori study (Figures 4 and 5)
and the tornado pattern of Figure 6 on the paper's subsystems.

    python scripts/reproduce_angara.py                  # writes outputs/angara/
    python scripts/reproduce_angara.py --out DIR --n3 20 --n4 20
    python scripts/reproduce_angara.py --parts tornado  # only the tornado table

Table 2: the 4x2x2x2 Desmos system and its 2-, 4-, 8- and 16-node subsystems, taken as
the first nodes in router order (coordinate 0 fastest), i.e. the sub-tori 2, 4, 4x2, 4x2x2.
Random tori: side tuples drawn from [2, 8]^n with at most --max-nodes nodes (the paper's
49 / 339 / 1173 systems match a cap near 430 nodes); all 2D tuples, a seeded sample of 3D
and 4D ones. Genetic runs only up to --genetic-max-nodes nodes (it is slow, as in the paper).
Figure 4: BUILD_SSSP calls per random torus, with the unique-routes stage and without it
("sort and group" only), beside the paper's bounds |N| and |N|^2 and its shares of pairs with
a single minimal route (81.6 % 2D, 58.2 % 3D, 36.6 % 4D; the figure's points are not in the
paper's text).
Tornado: the paper's MPI tornado (Figure 6c) is not defined beyond its name; each subsystem's
tables are compared on the coordinate tornado (every coordinate + ceil(k/2) - 1, jaxnet's
`tornado`) and on the tornado of node ranks (node i to i + ceil(N/2) - 1 mod N), with how
many of its pairs have more than one minimal route to choose from, the largest number of its
routes on one channel, and its accepted load if every flow got an equal share of its most
loaded channel.
"""
from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxnet.core.files import write_atomic  # noqa: E402
from jaxnet.paths.torus_graph import TorusShape, deadlock_free_turns  # noqa: E402
from jaxnet.paths.torus_routes import minimal_route_candidates  # noqa: E402
from jaxnet.paths.torus_tables import build_table, deadlock_cycle, table_metrics  # noqa: E402

ALGORITHMS = ("bfs", "genetic", "sssp")
SUBSYSTEMS = {2: [2], 4: [4], 8: [4, 2], 16: [4, 2, 2], 32: [4, 2, 2, 2]}
PAPER_TABLE2 = {  # (max load, min load, sigma4, max D)
    "bfs": {2: (1, 1, 0, 1), 4: (2, 2, 0, 2), 8: (6, 2, 1.429, 3), 16: (18, 3, 4.341, 4),
            32: (48, 3, 12.254, 5)},
    "genetic": {2: (1, 1, 0, 1), 4: (2, 2, 0, 2), 8: (4, 4, 0, 3), 16: (11, 5, 1.745, 4),
                32: (27, 8, 6.274, 5)},
    "sssp": {2: (1, 1, 0, 1), 4: (2, 2, 0, 2), 8: (5, 3, 0.707, 3), 16: (12, 3, 2.319, 4),
             32: (28, 8, 6.298, 5)},
}
PAPER_IMPROVEMENT_OVER_BFS = {2: 0.13, 3: 0.11, 4: 0.17}
PAPER_UNIQUE_SHARE = {2: 0.816, 3: 0.582, 4: 0.366}  # pairs with a single minimal route (Sec. 4.3)
PARTS = ("table2", "random", "tornado")
TORNADO_TABLES = {"bfs": {}, "sssp": {}, "genetic": {}, "bfs, direction order only": {"augment": False}}


def run(sides, algorithm: str, seed: int = 0) -> dict:
    params = {"seed": seed} if algorithm == "genetic" else {}
    table = build_table(TorusShape.build(list(sides)), algorithm, **params)
    return {"sides": list(sides), "algorithm": algorithm, **table_metrics(table),
            "deadlock_free": deadlock_cycle(table) is None, "seconds": table.info["seconds"],
            **{k: v for k, v in table.info.items() if k not in ("seconds", "best_sigma4_history")}}


def table2() -> list[dict]:
    rows = []
    for algorithm in ALGORITHMS:
        for nodes, sides in SUBSYSTEMS.items():
            row = run(sides, algorithm)
            paper = PAPER_TABLE2[algorithm][nodes]
            row["paper"] = dict(zip(("max_channel_load", "min_channel_load", "sigma4",
                                     "max_route_length"), paper))
            rows.append(row)
            print(f"table2 {algorithm:8s} {nodes:3d} nodes: {row['max_channel_load']:3d} "
                  f"{row['min_channel_load']:3d} {row['sigma4']:7.3f} (paper {paper[:3]})", flush=True)
    return rows


def table2_markdown(rows: list[dict]) -> str:
    lines = ["| algorithm | nodes | sides | max load (paper) | min load (paper) | "
             "sigma4 (paper) | max D (paper) | deadlock-free | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["paper"]
        lines.append(
            f"| {r['algorithm']} | {r['nodes']} | {'x'.join(map(str, r['sides']))} | "
            f"{r['max_channel_load']} ({p['max_channel_load']}) | "
            f"{r['min_channel_load']} ({p['min_channel_load']}) | "
            f"{r['sigma4']:.3f} ({p['sigma4']}) | {r['max_route_length']} ({p['max_route_length']}) | "
            f"{r['deadlock_free']} | {r['seconds']:.3f} |")
    return "\n".join(lines) + "\n"


def sample_systems(n: int, count: int | None, max_nodes: int, rng) -> list[tuple[int, ...]]:
    everything = [t for t in itertools.product(range(2, 9), repeat=n) if np.prod(t) <= max_nodes]
    if count is None or count >= len(everything):
        return everything
    return [everything[i] for i in sorted(rng.choice(len(everything), count, replace=False))]


def random_tori(args) -> list[dict]:
    rng = np.random.default_rng(args.seed)
    rows = []
    for n, count in ((2, None), (3, args.n3), (4, args.n4)):
        for sides in sample_systems(n, count, args.max_nodes, rng):
            for algorithm in ALGORITHMS:
                if algorithm == "genetic" and np.prod(sides) > args.genetic_max_nodes:
                    continue
                row = {"dimensions": n, **run(sides, algorithm, args.seed)}
                if algorithm == "sssp":
                    alone = build_table(TorusShape.build(list(sides)), "sssp", unique_first=False)
                    row["build_sssp_calls_sort_and_group_only"] = alone.info["build_sssp_calls"]
                rows.append(row)
        print(f"random tori {n}D: {sum(r['dimensions'] == n for r in rows)} tables", flush=True)
    return rows


def summarise(rows: list[dict]) -> dict:
    """Per dimension count: EFI of SSSP (and genetic) relative to BFS, as in Figure 5."""
    summary = {}
    by_key = {(tuple(r["sides"]), r["algorithm"]): r for r in rows}
    for n in (2, 3, 4):
        systems = sorted({tuple(r["sides"]) for r in rows if r["dimensions"] == n})
        out = {"systems": len(systems)}
        for algorithm in ("sssp", "genetic"):
            pairs = [(by_key[s, algorithm]["max_channel_load"], by_key[s, "bfs"]["max_channel_load"])
                     for s in systems if (s, algorithm) in by_key]
            if not pairs:
                continue
            ours, bfs = np.array(pairs, float).T
            out[algorithm] = {
                "systems": len(pairs),
                "mean_improvement_over_bfs": float(np.mean(1 - ours / bfs)),
                "total_efi_ratio_to_bfs": float(ours.sum() / bfs.sum()),
                "better": int((ours < bfs).sum()), "equal": int((ours == bfs).sum()),
                "worse": int((ours > bfs).sum()),
                "ratio_by_group": {
                    name: float(ours[mask].sum() / bfs[mask].sum()) if mask.any() else None
                    for name, mask in (("better", ours < bfs), ("equal", ours == bfs),
                                       ("worse", ours > bfs))},
            }
        out["paper_sssp_improvement_over_bfs"] = PAPER_IMPROVEMENT_OVER_BFS[n]
        sssp = [r for r in rows if r["dimensions"] == n and r["algorithm"] == "sssp"]
        out["unique_pair_share"] = float(np.mean([r["unique_pairs"] / r["pairs"] for r in sssp]))
        out["paper_unique_pair_share"] = PAPER_UNIQUE_SHARE[n]
        out["all_deadlock_free"] = all(r["deadlock_free"] for r in rows if r["dimensions"] == n)
        summary[f"{n}D"] = out
    return summary


def figure5(rows: list[dict], summary: dict, path: Path) -> None:
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    colors = {"bfs": "tab:blue", "genetic": "tab:orange", "sssp": "tab:green"}
    for col, n in enumerate((2, 3, 4)):
        ax = axes[0, col]
        groups = ("better", "equal", "worse")
        for i, algorithm in enumerate(("genetic", "sssp")):
            stats = summary[f"{n}D"].get(algorithm)
            if stats is None:
                continue
            ratios = [stats["ratio_by_group"][g] or 0 for g in groups]
            bars = ax.bar(np.arange(3) + 0.38 * i, ratios, 0.38, color=colors[algorithm],
                          label=algorithm)
            for bar, g in zip(bars, groups):
                ax.annotate(str(stats[g]), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=8)
        ax.set_xticks(np.arange(3) + 0.19, [f"{g} than BFS" for g in groups])
        ax.set_ylim(0, 1.25)
        ax.axhline(1, color="grey", lw=0.5)
        ax.set_title(f"{n}D: total EFI / BFS (numbers: systems)")
        ax.legend(fontsize=8)
        ax = axes[1, col]
        for algorithm in ALGORITHMS:
            pts = sorted((r["nodes"], r["seconds"]) for r in rows
                         if r["dimensions"] == n and r["algorithm"] == algorithm)
            if pts:
                ax.plot(*zip(*pts), "o", ms=3, color=colors[algorithm], label=algorithm)
        ax.axhline(0.25, color="grey", ls="--", lw=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("nodes")
        ax.set_ylabel("seconds")
        ax.set_title(f"{n}D: runtime")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def figure4(rows: list[dict], summary: dict, path: Path) -> None:
    """BUILD_SSSP calls per random torus against its node count, with and without the
    unique-routes stage, between the paper's bounds |N| and |N|^2."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, n in zip(axes, (2, 3, 4)):
        sssp = sorted((r["nodes"], r["build_sssp_calls"], r["build_sssp_calls_sort_and_group_only"])
                      for r in rows if r["dimensions"] == n and r["algorithm"] == "sssp")
        nodes, with_unique, alone = (np.array(c, float) for c in zip(*sssp))
        ax.plot(nodes, alone, "s", ms=3, color="tab:red", label="sort and group only")
        ax.plot(nodes, with_unique, "o", ms=3, color="tab:green", label="unique routes, then sort and group")
        span = np.array([nodes.min(), nodes.max()])
        ax.plot(span, span, color="grey", ls="--", lw=0.8, label="|N| (paper's lower bound)")
        ax.plot(span, span ** 2, color="grey", ls=":", lw=0.8, label="|N|$^2$ (paper's upper bound)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes |N|")
        ax.set_ylabel("BUILD_SSSP calls")
        stats = summary[f"{n}D"]
        ax.set_title(f"{n}D: single-route pairs {stats['unique_pair_share']:.1%} "
                     f"(paper {stats['paper_unique_pair_share']:.1%})", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def tornado_destinations(shape: TorusShape, kind: str) -> np.ndarray:
    """int [R]: the destination node of every node: `coordinates` (each coordinate + ceil(k/2)
    - 1) or `ranks` (node i to i + ceil(N/2) - 1 mod N, nodes in router order)."""
    R = shape.n_nodes
    if kind == "ranks":
        return (np.arange(R) + (R + 1) // 2 - 1) % R
    sides = np.asarray(shape.sides)
    stride = np.concatenate([[1], np.cumprod(sides)[:-1]])
    return ((shape.coords + (sides + 1) // 2 - 1) % sides) @ stride


def pattern_loads(table, destinations: np.ndarray) -> tuple[int, float]:
    """(the largest number of the permutation's routes on one channel, the mean over its flows
    of 1 / the most loaded channel of the flow's route): the second is the accepted load if
    every flow got an equal share of its bottleneck channel."""
    R = table.shape.n_nodes
    sources = np.flatnonzero(destinations != np.arange(R))
    if sources.size == 0:
        return 0, 1.0
    pad = table.shape.n_channel_ids
    routes = table.channels(sources)[np.arange(sources.size), destinations[sources]]
    load = np.bincount(routes.ravel(), minlength=pad + 1)
    load[pad] = 0
    bottleneck = load[routes].max(axis=1)
    return int(bottleneck.max()), float(np.mean(1.0 / bottleneck))


def tornado() -> list[dict]:
    """Per subsystem and tornado definition: pairs with a choice of minimal route, and the
    pattern's channel load under each table."""
    rows = []
    for nodes, sides in SUBSYSTEMS.items():
        shape = TorusShape.build(sides)
        choices = minimal_route_candidates(shape, deadlock_free_turns(shape)).counts.reshape(nodes, nodes)
        tables = {name: build_table(shape, name.split(",")[0], **options)
                  for name, options in TORNADO_TABLES.items()}
        for kind in ("coordinates", "ranks"):
            dest = tornado_destinations(shape, kind)
            moving = np.flatnonzero(dest != np.arange(nodes))
            loads = {name: pattern_loads(t, dest) for name, t in tables.items()}
            row = {"nodes": nodes, "sides": sides, "tornado": kind, "pairs": int(moving.size),
                   "pairs_with_a_choice": int((choices[moving, dest[moving]] > 1).sum()),
                   "max_channel_load": {name: load for name, (load, _) in loads.items()},
                   "fair_share": {name: share for name, (_, share) in loads.items()}}
            rows.append(row)
            print(f"tornado {kind:11s} {nodes:3d} nodes: {row['pairs_with_a_choice']}/{row['pairs']} pairs "
                  f"with a choice, max channel load {row['max_channel_load']}, fair share "
                  f"{ {k: round(v, 3) for k, v in row['fair_share'].items()} }", flush=True)
    return rows


def tornado_markdown(rows: list[dict]) -> str:
    names = list(TORNADO_TABLES)
    lines = ["| nodes | tornado | pairs with a choice | " + " | ".join(names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    for r in rows:
        cells = " | ".join(f"{r['max_channel_load'][name]} / {r['fair_share'][name]:.3f}" for name in names)
        lines.append(f"| {r['nodes']} | {r['tornado']} | {r['pairs_with_a_choice']} of {r['pairs']} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("outputs/angara"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n3", type=int, default=40, help="3D systems sampled")
    parser.add_argument("--n4", type=int, default=40, help="4D systems sampled")
    parser.add_argument("--max-nodes", type=int, default=432)
    parser.add_argument("--genetic-max-nodes", type=int, default=64)
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS),
                        help="table2; random (Figures 4 and 5); tornado (Figure 6c's pattern)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    if "table2" in args.parts:
        rows = table2()
        write_atomic(args.out / "table2.json", json.dumps(rows, indent=2))
        write_atomic(args.out / "table2.md", table2_markdown(rows))
    if "tornado" in args.parts:
        rows = tornado()
        write_atomic(args.out / "tornado.json", json.dumps(rows, indent=2))
        write_atomic(args.out / "tornado.md", tornado_markdown(rows))
    if "random" in args.parts:
        study = random_tori(args)
        summary = summarise(study)
        write_atomic(args.out / "random_tori.json", json.dumps(
            {"arguments": {k: str(v) for k, v in vars(args).items()}, "summary": summary,
             "systems": study}, indent=2))
        figure5(study, summary, args.out / "figure5.png")
        figure4(study, summary, args.out / "figure4.png")
        print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
