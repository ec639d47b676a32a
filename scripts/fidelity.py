"""Side-by-side figures against the reference simulator (CAMINOS), issue 16 (docs/fidelity.md).

    python scripts/fidelity.py --out outputs/fidelity [--sections polarized torus]

polarized: Polarized at its tipping point with the papers' uniform traffic, over six
  seeds: Dragonfly a=4 h=2 p=2 (9 VCs), Slim Fly q=5 p=3 (5 VCs), Hamming 4x4 p=3 at low
  load (average hops); 16-phit packets, 4/2-packet buffers, 5000 + 5000 cycles.
torus: 8x8 torus, one server per router, DOR under uniform, random server permutation,
  the x + 3 tornado and the 2-D tornado, with bubble flow control on one VC and with
  dateline VCs; the 4x2x2x2 torus with the Angara tables (BFS, SSSP, genetic) on one VC
  with bubble flow control.
Writes results.json (one row per point) and prints a summary per curve.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxnet.core.files import write_atomic
from jaxnet.routing import build_routing
from jaxnet.sim.run import Network, simulate
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology
from jaxnet.traffic import tables_for_points

POLARIZED = {
    "dragonfly a=4 h=2 p=2": ({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}, 9,
                              [0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.0]),
    "slimfly q=5 p=3": ({"name": "slimfly", "q": 5, "servers_per_router": 3}, 5,
                        [0.7, 0.8, 0.85, 0.9, 0.95, 1.0]),
    "hamming 4x4 p=3": ({"name": "hamming", "sides": [4, 4], "servers_per_router": 3}, 5, [0.1, 0.3]),
}
SEEDS = [1, 2, 3, 4, 5, 6]


def run(topo, routing, router, traffic, loads, seeds, warmup, measure):
    network = Network.build(topo, build_routing(routing), RouterSpec(**router))
    points = [(load, seed) for load in loads for seed in seeds]
    spec = SimSpec(warmup=warmup, measure=measure, chunk=(warmup + measure) // 2, watchdog=2000)
    rows, _ = simulate(network, tables_for_points(traffic, topo, points), points, spec)
    return rows


def summary(label, rows):
    by_load = {}
    for row in rows:
        by_load.setdefault(row["offered_load"], []).append(row)
    parts = []
    for load, group in sorted(by_load.items()):
        acc = [r["accepted_load"] for r in group]
        hops = np.mean([r["average_hops"] for r in group])
        dead = "D" if any(r["deadlock"] for r in group) else ""
        parts.append(f"{load:g}: {np.mean(acc):.3f} [{min(acc):.3f}-{max(acc):.3f}] h{hops:.3f}{dead}")
    print(f"{label:44s} " + " | ".join(parts), flush=True)


def polarized(uniform, networks):
    out = []
    for name, (cfg, vcs, loads) in POLARIZED.items():
        if networks and not any(name.startswith(n) for n in networks):
            continue
        topo = build_topology(cfg)
        for routing in ("polarized", "minimal") if name.startswith("hamming") else ("polarized",):
            rows = run(topo, {"name": routing}, {"vcs": vcs}, {"name": uniform}, loads, SEEDS, 5000, 5000)
            summary(f"{name} {routing}", rows)
            out += [{"network": name, "routing": routing, **r} for r in rows]
    return out


def torus(uniform, networks):
    out = []
    topo = build_topology({"name": "torus", "sides": [8, 8], "servers_per_router": 1})
    coords = np.asarray(topo.coords)
    x_plus_3 = [int(np.nonzero((coords[:, 0] == (coords[r, 0] + 3) % 8) & (coords[:, 1] == coords[r, 1]))[0][0])
                for r in range(topo.n_routers)]
    patterns = {"uniform": {"name": uniform}, "server_permutation": {"name": "server_permutation"},
                "tornado x+3": {"name": "destination_table", "routers": x_plus_3},
                "tornado 2-D": {"name": "tornado"}}
    loads = [0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    for label, router in (("bubble, 1 VC", {"vcs": 1, "flow_control": "bubble"}),
                          ("dateline, 2 VCs", {"vcs": 2})):
        for pname, traffic in patterns.items():
            rows = run(topo, {"name": "dor"}, router, traffic, loads, [1], 3000, 5000)
            summary(f"8x8 dor {label} {pname}", rows)
            out += [{"network": "torus 8x8", "routing": f"dor {label}", "traffic": pname, **r} for r in rows]
    angara = build_topology({"name": "torus", "sides": [4, 2, 2, 2], "servers_per_router": 1})
    patterns = {"transpose (bits)": {"name": "transpose", "address": "bits"}, "neighbour": {"name": "neighbour"},
                "tornado": {"name": "tornado"}, "uniform": {"name": uniform}}
    loads = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    for algorithm in ("bfs", "sssp", "genetic"):
        for pname, traffic in patterns.items():
            rows = run(angara, {"name": "torus_table", "algorithm": algorithm},
                       {"vcs": 1, "flow_control": "bubble"}, traffic, loads, [1], 1000, 3000)
            summary(f"4x2x2x2 {algorithm} bubble {pname}", rows)
            out += [{"network": "torus 4x2x2x2", "routing": f"torus_table {algorithm} bubble",
                     "traffic": pname, **r} for r in rows]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/fidelity")
    parser.add_argument("--sections", nargs="+", default=["polarized", "torus"], choices=["polarized", "torus"])
    parser.add_argument("--uniform", default="uniform", help="pattern name of the papers' uniform")
    parser.add_argument("--networks", nargs="*", default=[], help="polarized: only these (dragonfly, slimfly, hamming)")
    args = parser.parse_args()
    rows = []
    for section in args.sections:
        rows += {"polarized": polarized, "torus": torus}[section](args.uniform, args.networks)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    write_atomic(Path(args.out) / "results.json", json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
