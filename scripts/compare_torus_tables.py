"""Load-throughput curves of BFS, SSSP and genetic Angara tables on the 4x2x2x2 torus
(issue 7, item 7): transpose, neighbour, tornado and all-to-all traffic.

    python scripts/compare_torus_tables.py [--out outputs/torus_tables_sim] [--measure 3000]

Writes results.csv (one row per algorithm x traffic x load) and curves.png.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from jaxnet.results import write_rows
from jaxnet.routing import build_routing
from jaxnet.sim.layout import RouterSpec
from jaxnet.sim.run import Network, Window, simulate
from jaxnet.topology import build_topology

TRAFFIC = {
    "transpose": {"name": "transpose", "address": "bits", "server_map": "same"},
    "neighbour": {"name": "neighbour", "server_map": "same"},
    "tornado": {"name": "tornado", "server_map": "same"},
    "all_to_all": {"name": "all_to_all"},
}
ALGORITHMS = ("bfs", "sssp", "genetic")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/torus_tables_sim")
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=3000)
    parser.add_argument("--loads", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    topo = build_topology({"name": "torus", "sides": [4, 2, 2, 2], "servers_per_router": 1})
    window = Window(args.warmup, args.measure, chunk=1000)
    rows = []
    for algorithm in ALGORITHMS:
        network = Network.build(topo, build_routing({"name": "torus_table", "algorithm": algorithm}),
                                RouterSpec(vcs=2))
        for name, traffic in TRAFFIC.items():
            result, _ = simulate(network, traffic, [(load, 1) for load in args.loads], window)
            for row in result:
                rows.append({"topology": topo.name, "routing": f"torus_table/{algorithm}",
                             "traffic": name, "warmup": args.warmup, "measure": args.measure, **row})
            peak = max(r["accepted_load"] for r in result)
            print(f"{algorithm:8s} {name:11s} peak accepted {peak:.3f}  deadlock "
                  f"{any(r['deadlock'] for r in result)}")
    write_rows(out / "results.csv", rows)
    plot(rows, out / "curves.png")


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(TRAFFIC), figsize=(4 * len(TRAFFIC), 3.4), sharey=True)
    for ax, name in zip(axes, TRAFFIC):
        for algorithm in ALGORITHMS:
            at = [r for r in rows if r["traffic"] == name and r["routing"].endswith(algorithm)]
            ax.plot([r["offered_load"] for r in at], [r["accepted_load"] for r in at], marker="o",
                    ms=3, label=algorithm)
        ax.plot([0, 1], [0, 1], color="grey", lw=0.5)
        ax.set_title(f"4x2x2x2 torus, {name}")
        ax.set_xlabel("offered load")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accepted load (phits/cycle/server)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
