"""Reproduce the Angara routing-table paper: Table 2, the random-tori study (Figures 4 and 5)
and the tornado pattern of Figure 6 on the paper's subsystems.

    python scripts/reproduce_angara.py                  # writes outputs/angara/
    python scripts/reproduce_angara.py --out DIR --n3 20 --n4 20
    python scripts/reproduce_angara.py --parts tornado  # only the tornado table

Table 2: the 4x2x2x2 Desmos system and its 2-, 4-, 8- and 16-node subsystems, taken as
the first nodes in router order (coordinate 0 fastest), i.e. the sub-tori 2, 4, 4x2, 4x2x2.
Random tori: side tuples drawn from [2, 8]^n with at most --max-nodes nodes (the paper's 49
2D and 339 3D systems are all tuples up to any cap from 392 to 447 nodes; no cap gives its
1173 4D systems: 432 gives 1183); all 2D tuples, a seeded sample of 3D and 4D ones. Genetic
runs only up to --genetic-max-nodes nodes (it is slow, as in the paper).
Figure 4: BUILD_SSSP calls per random torus, with the unique-routes stage and without it
("sort and group" only), beside the paper's bounds |N| and |N|^2 and its shares of pairs with
a single minimal route (81.6 % 2D, 58.2 % 3D, 36.6 % 4D; the figure's points are not in the
paper's text).
Shares (--parts shares): the share of pairs with a single minimal route under each candidate
definition of "route", "pair" and "system" (`SHARE_DEFINITIONS`), over the same random tori,
to find which (if any) gives the paper's 81.6 / 58.2 / 36.6 %. --parts every_4d --max-nodes
440: that share under the definition the 2D share pins for every 4D system up to 440 nodes,
and the mean over any 1173 of them that hold the 1155 up to 431 nodes.
Tornado: the paper's MPI tornado (Figure 6c) is not defined beyond its name; each subsystem's
tables are compared on the coordinate tornado (every coordinate + ceil(k/2) - 1, jaxnet's
`tornado`) and on the tornado of node ranks (node i to i + ceil(N/2) - 1 mod N), with how
many of its pairs have more than one minimal route to choose from, the largest number of its
routes on one channel, and its accepted load if every flow got an equal share of its most
loaded channel.
"""
from __future__ import annotations

import argparse
import functools
import itertools
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxnet.core.files import write_atomic  # noqa: E402
from jaxnet.paths.torus_graph import TorusShape, deadlock_free_turns, no_extra_turns  # noqa: E402
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
PAPER_4D_SYSTEMS = 1173
PARTS = ("table2", "random", "tornado", "shares", "every_4d")
DEFAULT_PARTS = ("table2", "random", "tornado", "shares")  # every_4d counts every 4D system: on request
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


def graph_path_counts(shape: TorusShape, turns: np.ndarray, candidates) -> np.ndarray:
    """int [n_candidates]: routing-graph paths BEGIN(s) -> END(t) that take each candidate's
    direction sequence. The graph of section 3.1 lets a route be split as [FS] dirbit [LS] in
    more than one way: a first positive step followed by a later direction is an FS step or the
    start of the dirbit part, a last negative step after an earlier direction an LS step or the
    end of it; each split is a separate path of the graph (`RoutingGraph` has the same edges)."""
    n, n_dirs, pad = shape.n, shape.n_dirs, candidates.pad
    channels = candidates.channels
    step = channels < pad
    direction = np.where(step, channels % n_dirs, -1)
    at = np.where(step, channels // n_dirs, 0)  # node each step leaves from
    length = step.sum(axis=1)
    rows = np.arange(len(channels))
    position = np.arange(channels.shape[1])[None, :]
    first, last = direction[:, 0], direction[rows, length - 1]
    second = min(1, channels.shape[1] - 1)
    total = np.zeros(len(channels), np.int64)
    for fs in (0, 1):
        for ls in (0, 1):
            middle_length = length - fs - ls
            in_middle = (position >= fs) & (position < (length - ls)[:, None])
            middle = np.where(in_middle, direction, -1)
            descending = in_middle[:, :-1] & in_middle[:, 1:] & (middle[:, :-1] > middle[:, 1:])
            ok = (middle_length >= ls) & ~np.any(descending, axis=1)  # LS needs a dirbit part
            for j in range(n):  # direction-bit rule
                ok &= ~(np.any(middle == j, axis=1) & np.any(middle == j + n, axis=1))
            if fs:  # FS: a positive first step, then a later direction or an allowed turn
                after = direction[:, second]
                turn = turns[at[:, second], first, np.maximum(after, 0)]
                ok &= (first < n) & ((middle_length == 0) | (after > first) | ((after < first) & turn))
            if ls:  # LS: a negative last step after an earlier direction or an allowed turn
                before = direction[rows, np.maximum(length - 2, 0)]
                turn = turns[at[rows, length - 1], np.maximum(before, 0), last]
                ok &= (last >= n) & ((last > before) | ((last < before) & turn))
            total += ok
    return total


def route_counts(shape: TorusShape, turns: np.ndarray, graph_paths: bool = False) -> np.ndarray:
    """int [R, R]: minimal routes per ordered pair (0 on the diagonal): distinct direction
    sequences the rules admit with these turns, or routing-graph paths (`graph_path_counts`)."""
    R = shape.n_nodes
    candidates = minimal_route_candidates(shape, turns)
    if not graph_paths:
        return candidates.counts.reshape(R, R)
    pair = np.repeat(np.arange(R * R), candidates.counts)
    per_pair = np.bincount(pair, weights=graph_path_counts(shape, turns, candidates), minlength=R * R)
    return per_pair.astype(np.int64).reshape(R, R)


def two_node_rings(shape: TorusShape) -> TorusShape:
    """The same sides with every side-2 dimension a ring of two nodes (two links between them,
    so a one-hop offset there is a tie of + and -), instead of the paper's single mesh link."""
    return TorusShape(shape.sides, (True,) * shape.n)


def single_route_share(counts: np.ndarray, with_self: bool = False) -> float:
    """Share of ordered pairs with exactly one minimal route; with_self counts each node's
    pair with itself as one (the empty route)."""
    R = len(counts)
    if with_self:
        return float(((counts == 1) | np.eye(R, dtype=bool)).mean())
    return float((counts[~np.eye(R, dtype=bool)] == 1).mean())


def any_turn(shape: TorusShape) -> np.ndarray:
    """Every FS/LS turn the Angara rules allow, deadlock freedom ignored."""
    return np.ones((shape.n_nodes, shape.n_dirs, shape.n_dirs), bool)


TURN_SETS = {"theorem_2": deadlock_free_turns, "none": no_extra_turns, "any": any_turn}


@functools.cache
def cached_route_counts(sides: tuple[int, ...], turn_set: str, graph_paths: bool = False,
                        two_node: bool = False) -> np.ndarray:
    """`route_counts` of one system, computed once per variant (cleared per system)."""
    shape = TorusShape.build(list(sides))
    shape = two_node_rings(shape) if two_node else shape
    return route_counts(shape, TURN_SETS[turn_set](shape), graph_paths)


SHARE_DEFINITIONS = {  # name: (what it counts, sides -> share of the system's pairs)
    "admitted": ("distinct minimal direction sequences the rules admit with the Theorem 2 "
                 "turns (jaxnet's SSSP stage 1)",
                 lambda sides: single_route_share(cached_route_counts(sides, "theorem_2"))),
    "with_self": ("as admitted, each node's pair with itself counted (one route)",
                  lambda sides: single_route_share(cached_route_counts(sides, "theorem_2"), with_self=True)),
    "direction_order": ("as admitted without FS/LS turns (also: a route as its set of "
                        "directions, which FS/LS variants share)",
                        lambda sides: single_route_share(cached_route_counts(sides, "none"))),
    "any_turn": ("as admitted with every FS/LS turn, deadlock freedom ignored",
                 lambda sides: single_route_share(cached_route_counts(sides, "any"))),
    "bound": ("every FS/LS turn where a side is 2, none in tori of rings only (Theorem 2 "
              "admits none there): the lowest share any Theorem 2 turn set can give",
              lambda sides: single_route_share(cached_route_counts(sides, "any" if 2 in sides else "none"))),
    "graph_paths": ("routing-graph paths BEGIN(s) -> END(t), one per [FS] dirbit [LS] split",
                    lambda sides: single_route_share(cached_route_counts(sides, "theorem_2", graph_paths=True))),
    "side_2_ring": ("as admitted, a side of 2 a two-node ring (a one-hop offset there a tie)",
                    lambda sides: single_route_share(cached_route_counts(sides, "theorem_2", two_node=True))),
}


def route_shares(args) -> dict:
    """Per dimension count: each definition's share of single-route pairs, averaged over the
    systems (and `admitted` pooled over all the systems' pairs), beside the paper's."""
    rng = np.random.default_rng(args.seed)
    out = {}
    for n, count in ((2, None), (3, args.n3), (4, args.n4)):
        systems = sample_systems(n, count, args.max_nodes, rng)
        shares = {name: [] for name in SHARE_DEFINITIONS}
        pairs = []
        for sides in systems:
            nodes = int(np.prod(sides))
            pairs.append(nodes * (nodes - 1))
            for name, (_, share) in SHARE_DEFINITIONS.items():
                shares[name].append(share(tuple(sides)))
            cached_route_counts.cache_clear()
        row = {"systems": len(systems), "paper": PAPER_UNIQUE_SHARE[n],
               **{name: float(np.mean(v)) for name, v in shares.items()},
               "pooled": float(np.average(shares["admitted"], weights=pairs))}
        out[f"{n}D"] = row
        print(f"shares {n}D ({len(systems)} systems): "
              + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if k != "systems"), flush=True)
    return out


def every_4d_system(max_nodes: int, core_nodes: int = 431, count: int = PAPER_4D_SYSTEMS) -> dict:
    """Every 4D system up to `max_nodes` under `admitted`, the definition the paper's 2D share
    pins: each system's share of single-route pairs, the mean over the systems up to
    `core_nodes` (1155 of them up to 431 nodes) and up to `max_nodes`, and the range of the
    mean over every set of `count` systems (the paper's 1173; no node cap gives it) that holds
    those up to `core_nodes` and adds others up to `max_nodes`."""
    systems = sample_systems(4, None, max_nodes, None)
    admitted = SHARE_DEFINITIONS["admitted"][1]
    shares = {}
    for sides in systems:
        shares[sides] = admitted(sides)
        cached_route_counts.cache_clear()
    core = [sides for sides in systems if np.prod(sides) <= core_nodes]
    extra = sorted(shares[sides] for sides in systems if np.prod(sides) > core_nodes)
    added = count - len(core)
    if not 0 <= added <= len(extra):
        raise SystemExit(f"--max-nodes {max_nodes}: {len(systems)} 4D systems, {len(core)} up to {core_nodes} "
                         f"nodes; a set of {count} needs between them")
    base = sum(shares[sides] for sides in core)
    out = {"systems": len(systems), "paper": PAPER_UNIQUE_SHARE[4],
           "mean_up_to_core_nodes": base / len(core), "mean_up_to_max_nodes": float(np.mean(list(shares.values()))),
           "lowest_mean_of_count": (base + sum(extra[:added])) / count,
           "highest_mean_of_count": (base + sum(extra[len(extra) - added:])) / count,
           "lowest_system_share": min(shares.values()),
           "shares": {"x".join(map(str, sides)): share for sides, share in shares.items()}}
    print(f"every 4D system up to {max_nodes} nodes ({len(systems)}): single-route share "
          f"{out['mean_up_to_core_nodes']:.3f} up to {core_nodes} nodes ({len(core)} systems), "
          f"{out['mean_up_to_max_nodes']:.3f} up to {max_nodes}; any {count} between: "
          f"{out['lowest_mean_of_count']:.3f}-{out['highest_mean_of_count']:.3f} (paper {PAPER_UNIQUE_SHARE[4]})",
          flush=True)
    return out


def shares_markdown(shares: dict) -> str:
    names = list(SHARE_DEFINITIONS) + ["pooled"]
    lines = ["| definition | " + " | ".join(f"{d} ({r['systems']} systems)" for d, r in shares.items()) + " |",
             "|---|" + "---|" * len(shares),
             "| the paper | " + " | ".join(f"{r['paper']:.1%}" for r in shares.values()) + " |"]
    lines += [f"| {name} | " + " | ".join(f"{r[name]:.1%}" for r in shares.values()) + " |" for name in names]
    return "\n".join(lines) + "\n"


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
    parser.add_argument("--parts", nargs="+", default=list(DEFAULT_PARTS), choices=list(PARTS),
                        help="table2; random (Figures 4 and 5); tornado (Figure 6c's pattern); "
                             "shares (Figure 4's single-route pairs under each definition); "
                             "every_4d (every 4D system's share under the definition the 2D share pins; "
                             "not run by default)")
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
    if "every_4d" in args.parts:
        write_atomic(args.out / "every_4d.json", json.dumps(every_4d_system(args.max_nodes), indent=2))
    if "shares" in args.parts:
        shares = route_shares(args)
        write_atomic(args.out / "shares.json", json.dumps(shares, indent=2))
        write_atomic(args.out / "shares.md", shares_markdown(shares))


if __name__ == "__main__":
    main()
