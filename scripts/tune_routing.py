"""Routing parameters tuned against the simulator (issue 38, item 4): Polarized's candidate
weights on an RRG and a Dragonfly, UGAL's threshold on a Dragonfly under uniform and
adversarial traffic, by SPSA over simulated batches (`jaxnet.tune.routing_params`).

    python scripts/tune_routing.py [--out outputs/tune/routing] [--steps 6]

Per case: the default's highest accepted load over offered loads 0.1 .. 1.0 (one seed) is
its saturation throughput p; the score is the mean accepted load at offered loads p and 1.0
minus latency_weight x (latency at offered load 0.6 p / the default's), measured on the
tuning seeds; SPSA starts from the papers' values. The default, SPSA's final iterate and the best value it
evaluated are then measured on fresh seeds.
Writes table.md and cases.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxnet import build
from jaxnet.core.files import write_atomic
from jaxnet.routing import build_routing
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology
from jaxnet.tune.routing_params import evaluate, tunable, tune
from jaxnet.tune.simulation import measure

DF36 = {"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2}
RRG24 = {"name": "rrg", "routers": 24, "degree": 5, "seed": 1, "medoid_of": 1, "servers_per_router": 2}
CASES = {
    "polarized RRG24 uniform": (RRG24, {"name": "polarized"}, {"name": "uniform"}),
    "polarized DF36 uniform": (DF36, {"name": "polarized"}, {"name": "uniform"}),
    "ugal DF36 uniform": (DF36, {"name": "ugal"}, {"name": "uniform"}),
    "ugal DF36 ADV+1": (DF36, {"name": "ugal"}, {"name": "adv_group", "offset": 1}),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/tune/routing")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2], help="tuning seeds")
    parser.add_argument("--check-seeds", type=int, nargs="+", default=[11, 12, 13], help="fresh seeds")
    parser.add_argument("--latency-weight", type=float, default=0.05)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--measure", type=int, default=1500)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    window = SimSpec(warmup=args.warmup, measure=args.measure, chunk=1000)
    cases = []
    for name in args.cases:
        topo_cfg, routing, traffic = CASES[name]
        network = build.network(build_topology(topo_cfg), build_routing(routing), RouterSpec(vcs="auto"))
        sweep = measure(network, traffic, [(x / 10, args.seeds[0]) for x in range(1, 11)], window)
        peak = round(float(sweep.column("accepted_load").max()), 2)
        mid, high = round(0.6 * peak, 3), sorted({peak, 1.0})
        result = tune(network, traffic, mid, high, args.seeds, window, steps=args.steps,
                      latency_weight=args.latency_weight)
        spec = tunable(network)
        check = evaluate(network, {"default": spec.default, "final": result["final"], "best": result["best"]},
                         traffic, mid, high, args.check_seeds, window)
        reference = float(check["default"].latency.mean())
        case = {"case": name, "names": list(spec.names), "peak_load": peak, "mid": mid, "high": high,
                "default": list(spec.default), "final": list(result["final"]), "best": list(result["best"]),
                "path": [[list(map(float, s.plus)), s.score_plus, list(map(float, s.minus)), s.score_minus]
                         for s in result["steps"]],
                "check": {k: {"value": list(v.value), "accepted": v.accepted.tolist(), "latency": v.latency.tolist(),
                              "score": v.score(reference, args.latency_weight)} for k, v in check.items()}}
        cases.append(case)
        print(json.dumps({k: case[k] for k in ("case", "default", "final", "best", "check", "path")}), flush=True)
    write_atomic(out / "cases.json", json.dumps(cases, indent=1))
    write_atomic(out / "table.md", table(cases, args))
    print(table(cases, args))


def table(cases, args) -> str:
    lines = [f"| case | parameters | saturation throughput p of the default | value | accepted at p and 1.0 (seeds "
             f"{', '.join(map(str, args.check_seeds))}: mean, min-max) | latency at 0.6 p | score |",
             "|---|---|---|---|---|---|---|"]
    for c in cases:
        for key in ("default", "final", "best"):
            v = c["check"][key]
            names = "w0 = 0, " + ", ".join(c["names"]) if c["case"].startswith("polarized") else ", ".join(c["names"])
            value = "0, " + ", ".join(map(str, v["value"])) if c["case"].startswith("polarized") else ", ".join(
                map(str, v["value"]))
            lines.append(f"| {c['case']} | {names} | {c['peak_load']:g} | {key}: {value} | "
                         f"{np.mean(v['accepted']):.3f} ({min(v['accepted']):.3f}-{max(v['accepted']):.3f}) | "
                         f"{np.mean(v['latency']):.1f} ({min(v['latency']):.1f}-{max(v['latency']):.1f}) | "
                         f"{v['score']:.4f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
