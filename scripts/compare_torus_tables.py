"""Load-throughput curves of BFS, SSSP and genetic Angara tables on the 4x2x2x2 torus
(issue 7, item 7): transpose, neighbour, tornado and all-to-all traffic.

    python scripts/compare_torus_tables.py [--out outputs/torus_tables_sim] [--measure 3000]

Writes results.csv (one row per algorithm x traffic x load) and curves.png.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from jaxnet.results import write_rows
from jaxnet.results.plots import curves_figure
from jaxnet.routing import build_routing
from jaxnet.sim.run import Network, simulate
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology
from jaxnet.traffic import tables_for_points

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
    window = SimSpec(warmup=args.warmup, measure=args.measure, chunk=1000)
    rows = []
    for algorithm in ALGORITHMS:
        network = Network.build(topo, build_routing({"name": "torus_table", "algorithm": algorithm}),
                                RouterSpec(vcs=2))
        for name, traffic in TRAFFIC.items():
            points = [(load, 1) for load in args.loads]
            result, _ = simulate(network, tables_for_points(traffic, topo, points), points, window)
            for row in result:
                rows.append({"topology": topo.name, "routing": f"torus_table/{algorithm}",
                             "traffic": name, "warmup": args.warmup, "measure": args.measure, **row})
            peak = max(r["accepted_load"] for r in result)
            print(f"{algorithm:8s} {name:11s} peak accepted {peak:.3f}  deadlock "
                  f"{any(r['deadlock'] for r in result)}")
    write_rows(out / "results.csv", rows)
    for row in rows:
        row["curve"] = row["routing"]
    curves_figure(rows, "throughput", out / "curves.png", "4x2x2x2 torus, Angara tables")


if __name__ == "__main__":
    main()
