"""Balanced path sets in the simulator (issue 6, item 6): table routing on DF114 with
uniform, LP-optimal and Optax path weights, under uniform traffic and under the demand
pattern the weights were optimised for.

    python scripts/compare_path_weights.py [--out outputs/path_weights_sim] [--cycles 5]

Path weights are traced inputs of the `table` routing: the three weightings share one
compiled simulation. Writes results.csv, curves.png and summary.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxnet.paths.mcf import find_paths
from jaxnet.paths.weights import (
    lp_weights,
    optax_weights,
    random_demand,
    uniform_weights,
)
from jaxnet.results import write_rows
from jaxnet.results.plots import curves_figure
from jaxnet.routing.table import TablePaths
from jaxnet import build
from jaxnet.sim.run import simulate
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology
from jaxnet.traffic import tables_for_points


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/path_weights_sim")
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--cycles", type=int, default=5, help="multi_mcf_cyclic passes")
    parser.add_argument("--demand-seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=3000)
    parser.add_argument("--loads", type=float, nargs="+", default=[0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    topo = build_topology({"name": "dragonfly", "a": 6, "h": 3, "servers_per_router": args.servers})
    paths = find_paths(topo, k=args.k, algorithm="multi_mcf_cyclic", cycles=args.cycles)
    demand = random_demand(paths, args.demand_seed)
    weights = {"uniform": uniform_weights(paths), "lp": lp_weights(paths, demand),
               "optax": optax_weights(paths, demand)}
    demand_file = out / "demand.npy"
    matrix = np.zeros((topo.n_routers, topo.n_routers))
    matrix[paths.pair_src, paths.pair_dst] = demand
    np.save(demand_file, matrix)
    traffics = {"uniform": {"name": "uniform"},
                "demand": {"name": "demand", "file": str(demand_file), "matrix": None,
                           "max_value": 7, "seed": None}}

    window = SimSpec(warmup=args.warmup, measure=args.measure, chunk=1000)
    rows, summary = [], {"topology": topo.name, "k": args.k, "cycles": args.cycles,
                         "max_link_load": {n: w.max_load(paths, demand) for n, w in weights.items()}}
    vcs = int(paths.length.max())
    for wname, w in weights.items():
        network = build.network(topo, TablePaths.from_pathset(paths, w.weights), RouterSpec(vcs=vcs))
        for tname, traffic in traffics.items():
            points = [(load, 1) for load in args.loads]
            result, _ = simulate(network, tables_for_points(traffic, topo, points), points, window)
            rows += [{"topology": topo.name, "routing": f"table/{wname}", "traffic": tname,
                      "warmup": args.warmup, "measure": args.measure, **r} for r in result]
            peak = max(r["accepted_load"] for r in result)
            summary[f"peak_{tname}_{wname}"] = peak
            print(f"{wname:8s} {tname:8s} peak accepted {peak:.3f}")
    write_rows(out / "results.csv", rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for row in rows:
        row["curve"] = row["routing"]
    curves_figure(rows, "throughput", out / "curves.png", "DF114, k=4 multi-MCF cyclic paths")


if __name__ == "__main__":
    main()
