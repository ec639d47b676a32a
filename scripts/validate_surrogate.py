"""The latency surrogate against the simulator (issue 38, item 1): predicted and simulated mean
message latency per offered load, on a Dragonfly and an RRG, under uniform and adversarial
traffic, for several path weightings on k = 4 multi-MCF-cyclic paths.

    python scripts/validate_surrogate.py [--out outputs/tune/surrogate] [--measure 3000]

Loads are fractions of each weighting's fluid saturation load (the load at which its busiest
link is full), so every row reads the same way: 0.9 is close to saturation. The model is
the ideal one (kappa = alpha = 1); the table also gives the model calibrated on these points
(`surrogate.calibrate`), what the closed loop corrects. Writes table.md and rows.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxnet import build
from jaxnet.core.files import write_atomic
from jaxnet.paths.surrogate import SurrogateModel, calibrate, latency_weights, predict_latency, saturation_load
from jaxnet.routing import build_routing
from jaxnet.routing.path_weights import path_set, pattern_demand, strategy_weights
from jaxnet.routing.route_tables import with_weights
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology
from jaxnet.tune.simulation import measure

NETWORKS = {
    "DF36": ({"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2},
             {"uniform": {"name": "uniform"}, "ADV+1": {"name": "adv_group", "offset": 1}}),
    "RRG24": ({"name": "rrg", "routers": 24, "degree": 5, "seed": 1, "medoid_of": 1, "servers_per_router": 2},
              {"uniform": {"name": "uniform"},
               "(H,1)": {"name": "antmill", "lam": 1, "unique": True, "delta": 1, "search_seed": 1}}),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/tune/surrogate")
    parser.add_argument("--networks", nargs="+", default=list(NETWORKS), choices=list(NETWORKS))
    parser.add_argument("--weights", nargs="+", default=["shortest", "lp", "latency"])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.2, 0.4, 0.6, 0.8, 0.9])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=3000)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    router = RouterSpec(vcs="auto")
    window = SimSpec(warmup=args.warmup, measure=args.measure, chunk=1000)
    rows = []
    for net_name in args.networks:
        topo_cfg, patterns = NETWORKS[net_name]
        topo = build_topology(topo_cfg)
        paths = path_set(topo, {"k": 4, "cycles": 5})
        network = build.network(topo, build_routing({"name": "table", "paths": {"k": 4, "cycles": 5}}), router)
        model = SurrogateModel.for_router(topo, router)
        for label, pattern in patterns.items():
            demand = pattern_demand(paths, topo, pattern, [1])
            lp = strategy_weights("lp", paths, demand)
            target = 0.8 * min(1.0, saturation_load(paths, lp, demand))
            for name in args.weights:
                weights = (latency_weights(paths, demand, model, target, init=lp).weights if name == "latency"
                           else strategy_weights(name, paths, demand))
                saturation = saturation_load(paths, weights, demand)
                loads = [round(min(1.0, f * saturation), 4) for f in args.fractions]
                points = [(load, seed) for load in loads for seed in args.seeds]
                result = measure(with_weights(network, weights, paths.valid), pattern, points, window)
                latency = result.column("message_latency").reshape(len(loads), -1)
                accepted = result.column("accepted_load").reshape(len(loads), -1)
                predicted = predict_latency(paths, weights, demand, model, loads)
                fitted = calibrate(paths, demand, model, [weights], [loads], [latency.mean(axis=1)],
                                   [accepted.mean(axis=1)])
                corrected = predict_latency(paths, weights, demand, fitted, loads)
                for i, load in enumerate(loads):
                    rows.append({"network": net_name, "traffic": label, "weights": name, "fraction": args.fractions[i],
                                 "load": load, "accepted": float(accepted[i].mean()),
                                 "simulated": float(latency[i].mean()), "simulated_min": float(latency[i].min()),
                                 "simulated_max": float(latency[i].max()), "predicted": float(predicted[i]),
                                 "calibrated": float(corrected[i]), "capacity": fitted.capacity,
                                 "queue_scale": fitted.queue_scale})
                    r = rows[-1]
                    print(f"{net_name} {label} {name} load {load:.3f}: simulated {r['simulated']:.1f}, "
                          f"predicted {r['predicted']:.1f} ({100 * (r['predicted'] / r['simulated'] - 1):+.1f} %)",
                          flush=True)
    write_atomic(out / "rows.json", json.dumps(rows, indent=1))
    write_atomic(out / "table.md", table(rows, args.seeds))
    print(table(rows, args.seeds))


def table(rows, seeds) -> str:
    head = ("| network | traffic | weights | fraction of saturation | offered load | accepted | simulated latency "
            f"(seeds {', '.join(map(str, seeds))}) | predicted | error | calibrated (kappa, alpha) | error |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        err = 100 * (r["predicted"] / r["simulated"] - 1)
        cal = 100 * (r["calibrated"] / r["simulated"] - 1)
        lines.append(f"| {r['network']} | {r['traffic']} | {r['weights']} | {r['fraction']:g} | {r['load']:.3f} | "
                     f"{r['accepted']:.3f} | {r['simulated']:.1f} ({r['simulated_min']:.1f}-{r['simulated_max']:.1f}) | "
                     f"{r['predicted']:.1f} | {err:+.1f} % | {r['calibrated']:.1f} ({r['capacity']:.2f}, "
                     f"{r['queue_scale']:.2f}) | {cal:+.1f} % |")
    errors = np.asarray([abs(r["predicted"] / r["simulated"] - 1) for r in rows if r["fraction"] <= 0.6])
    lines.append("")
    lines.append(f"Mean absolute error of the ideal model up to 0.6 of saturation: {100 * errors.mean():.1f} % "
                 f"(largest {100 * errors.max():.1f} %).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
