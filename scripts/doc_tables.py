"""Regenerate the measured tables of docs/routing.md and docs/routing_adaptive.md.

    python scripts/doc_tables.py [--out outputs/doc_tables] [--tables polarized ugal omni torus rrg1224]

polarized  RRG 32/8 p=5: minimal (3 VCs) and Polarized (9 VCs) under uniform and neighbour
           permutation, both selection orders, offered 0.6 / 0.8 / 1.0 (1000 + 3000 cycles, seed 1)
ugal       Dragonfly a=4 h=2 p=2: dragonfly_minimal, minimal, valiant, ugal (and threshold 48)
           under ADV+1, ADV+2 and uniform (1000 + 2000 cycles, seed 1)
omni       Hamming 3x3x3 p=2: minimal and omni under uniform and next-router-in-row traffic
torus      4x4 torus p=2, uniform: dor (dateline and bubble flow control), minimal
rrg1224    RRG 1224/14 p=5 (the Ant Mill paper's largest RRG): minimal and Polarized, 13 VCs,
           uniform, offered 0.5 .. 1.0 (1000 + 3000 cycles, seed 1)
Prints one line per curve and writes results.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from jaxnet import build
from jaxnet.core.files import write_atomic
from jaxnet.sim.run import simulate
from jaxnet.sim.spec import SimSpec
from jaxnet.traffic import tables_for_points


def run(label, topology, routing, router, traffic, loads, warmup, measure, out):
    topo = build.topology(topology)
    network = build.network(topo, build.routing(routing), build.router(router))
    points = [(load, 1) for load in loads]
    rows, _ = simulate(network, tables_for_points(traffic, topo, points), points,
                       SimSpec(warmup=warmup, measure=measure, chunk=(warmup + measure) // 2))
    print(f"{label:52s} " + " | ".join(f"{r['offered_load']:g}: {r['accepted_load']:.3f} "
                                         f"({r['average_hops']:.2f} hops){' D' if r['deadlock'] else ''}"
                                         for r in rows), flush=True)
    out += [{"table": label, **r} for r in rows]


def polarized(out):
    rrg = {"name": "rrg", "routers": 32, "degree": 8, "seed": 1, "medoid_of": 1, "servers_per_router": 5}
    for traffic in ("uniform", "neighbour_permutation"):
        for selection in ("available_first", "best_first"):
            for routing, vcs in (("minimal", 3), ("polarized", 9)):
                run(f"rrg32 {traffic} {selection} {routing}", rrg, {"name": routing},
                    {"vcs": vcs, "selection": selection}, {"name": traffic}, [0.6, 0.8, 1.0], 1000, 3000, out)


def ugal(out):
    df = {"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}
    cases = [("dragonfly_minimal", {"name": "dragonfly_minimal"}, 3), ("minimal", {"name": "minimal"}, 3),
             ("valiant", {"name": "valiant"}, 6), ("ugal", {"name": "ugal"}, 6),
             ("ugal threshold 48", {"name": "ugal", "threshold": 48}, 6)]
    for label, routing, vcs in cases:
        run(f"df ADV+1 {label}", df, routing, {"vcs": vcs}, {"name": "adv_group", "offset": 1},
            [0.2, 0.5, 1.0], 1000, 2000, out)
        run(f"df ADV+2 {label}", df, routing, {"vcs": vcs}, {"name": "adv_group", "offset": 2}, [1.0], 1000, 2000, out)
        run(f"df uniform {label}", df, routing, {"vcs": vcs}, {"name": "uniform"}, [1.0], 1000, 2000, out)


def omni(out):
    ham = {"name": "hamming", "sides": [3, 3, 3], "servers_per_router": 2}
    row = {"name": "destination_table",
           "routers": [r - (r % 3) + (r % 3 + 1) % 3 for r in range(27)]}  # next router in the row
    for routing, vcs in (("minimal", 3), ("omni", 6)):
        run(f"hamming uniform {routing}", ham, {"name": routing}, {"vcs": vcs}, {"name": "uniform"},
            [0.5, 1.0], 1000, 2000, out)
        run(f"hamming next-in-row {routing}", ham, {"name": routing}, {"vcs": vcs}, row, [1.0], 1000, 2000, out)


def torus(out):
    tor = {"name": "torus", "sides": [4, 4], "servers_per_router": 2}
    for label, routing, router in (("dor dateline 2 VCs", {"name": "dor"}, {"vcs": 2}),
                                   ("dor plus-ties 2 VCs", {"name": "dor", "tie": "plus"}, {"vcs": 2}),
                                   ("dor bubble 1 VC", {"name": "dor"}, {"vcs": 1, "flow_control": "bubble"}),
                                   ("minimal 4 VCs", {"name": "minimal"}, {"vcs": 4})):
        run(f"torus4x4 uniform {label}", tor, routing, router, {"name": "uniform"}, [0.4, 0.7, 1.0], 1000, 2000, out)


def rrg1224(out):
    rrg = {"name": "rrg", "routers": 1224, "degree": 14, "seed": 1, "medoid_of": 1, "servers_per_router": 5}
    for routing in ("minimal", "polarized"):
        run(f"rrg1224 uniform {routing}", rrg, {"name": routing}, {"vcs": 13}, {"name": "uniform"},
            [0.5, 0.7, 0.8, 0.9, 1.0], 1000, 3000, out)


TABLES = {"polarized": polarized, "ugal": ugal, "omni": omni, "torus": torus, "rrg1224": rrg1224}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/doc_tables")
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    args = parser.parse_args()
    rows = []
    for name in args.tables:
        TABLES[name](rows)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    write_atomic(Path(args.out) / "results.json", json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
