"""The closed loop with the simulator (issue 38, item 2): rounds of surrogate fit and
simulation on a Dragonfly and an RRG, under uniform and adversarial traffic, each round's
simulated mean latency at the target load with its seeds.

    python scripts/closed_loop.py [--out outputs/tune/closed_loop] [--rounds 4]

Runs `jaxnet.tune.resolve_weights` for `routing.weights=closed_loop` (what the gbamcf/weights
experiment runs), from the latency surrogate's weights and from uniform weights. Writes
table.md, rounds.json and rounds.png (simulated latency at the target load per round, the
seeds' range as error bars).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxnet.core.files import write_atomic
from jaxnet.sim.spec import RouterSpec
from jaxnet.topology import build_topology
from jaxnet.tune import resolve_weights

NETWORKS = {
    "DF36": {"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2},
    "RRG24": {"name": "rrg", "routers": 24, "degree": 5, "seed": 1, "medoid_of": 1, "servers_per_router": 2},
}
PATTERNS = {"uniform": {"name": "uniform"}, "ADV+1": {"name": "adv_group", "offset": 1},
            "(H,1)": {"name": "antmill", "lam": 1, "unique": True, "delta": 1, "search_seed": 1}}
CASES = [("DF36", "uniform"), ("DF36", "ADV+1"), ("RRG24", "uniform"), ("RRG24", "(H,1)")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/tune/closed_loop")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--starts", nargs="+", default=["latency", "uniform"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[101, 102, 103])
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=2000)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for net_name, label in CASES:
        topo = build_topology(NETWORKS[net_name])
        for start in args.starts:
            cfg = {"name": "table", "paths": {"k": 4, "cycles": 5}, "weights": "closed_loop",
                   "tune": {"rounds": args.rounds, "start": start, "seeds": args.seeds,
                            "warmup": args.warmup, "measure": args.measure}}
            case_dir = out / f"{net_name}_{label}_{start}".replace("(", "").replace(")", "").replace(",", "")
            resolved = resolve_weights(cfg, topo, RouterSpec(vcs="auto"), {label: PATTERNS[label]}, [1], case_dir)
            with np.load(resolved["weights_file"]) as f:
                record = json.loads(str(f["record"]))
            records.append({"network": net_name, "traffic": label, "start": start, **record})
            for i, r in enumerate(record["rounds"]):
                print(f"{net_name} {label} from {start}, round {i}: latency at {record['target_load']:.3f} "
                      f"{r['objective_mean']:.1f} +- {r['objective_std']:.1f} (kappa {r['capacity']:.2f}, "
                      f"alpha {r['queue_scale']:.2f})", flush=True)
    write_atomic(out / "rounds.json", json.dumps(records, indent=1))
    write_atomic(out / "table.md", table(records, args.seeds))
    figure(records, out / "rounds.png")
    print(table(records, args.seeds))


def table(records, seeds) -> str:
    lines = [f"| network | traffic | start | target load | round | kappa | alpha | predicted at target | "
             f"simulated at target (seeds {', '.join(map(str, seeds))}: mean, min-max) | accepted at target |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for rec in records:
        for i, r in enumerate(rec["rounds"]):
            at = int(np.argmin(np.abs(np.asarray(r["loads"]) - rec["target_load"])))
            lines.append(f"| {rec['network']} | {rec['traffic']} | {rec['start']} | {rec['target_load']:.3f} | {i} | "
                         f"{r['capacity']:.2f} | {r['queue_scale']:.2f} | {r['predicted'][at]:.1f} | "
                         f"{r['objective_mean']:.1f} ({min(r['objective']):.1f}-{max(r['objective']):.1f}) | "
                         f"{r['accepted'][at]:.3f} |")
    return "\n".join(lines) + "\n"


def figure(records, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CASES), figsize=(3.2 * len(CASES), 3.2), squeeze=False)
    for ax, (net_name, label) in zip(axes[0], CASES):
        for rec in (r for r in records if r["network"] == net_name and r["traffic"] == label):
            rounds = rec["rounds"]
            mean = np.asarray([r["objective_mean"] for r in rounds])
            low = mean - np.asarray([min(r["objective"]) for r in rounds])
            high = np.asarray([max(r["objective"]) for r in rounds]) - mean
            ax.errorbar(np.arange(len(rounds)), mean, yerr=[low, high], marker="o", ms=3, capsize=3,
                        label=f"from {rec['start']}")
        ax.set_xticks(range(max((len(r["rounds"]) for r in records), default=1)))
        ax.set_title(f"{net_name}, {label}", fontsize=8)
        ax.set_xlabel("round", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("simulated latency at the target load (cycles)", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
