"""Reproduce the delta column of Ant Mill Table 1 and time the Hamiltonian-cycle search.

For each network of Table 1 the search climbs delta = 1, 2, ... (up to the radius) and
stops at the first level it cannot reach within the budget. Writes one JSON record per
network: delta reached, the paper's delta, seconds per level, topology analysis time.

    python benchmarks/bench_antmill.py [out.json] [--seed S] [--medoid-of K] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from jaxnet.topology import build_topology
from jaxnet.traffic.hamiltonian import check_cycle, search_max_delta

# (label, topology config, delta in Table 1)
TABLE_1 = [
    ("RRG k=2.2", dict(name="rrg", routers=242, degree=36, servers_per_router=19), 1),
    ("RRG k=2.5", dict(name="rrg", routers=353, degree=28, servers_per_router=13), 1),
    ("RRG k=3.2", dict(name="rrg", routers=780, degree=18, servers_per_router=7), 2),
    ("RRG k=3.7", dict(name="rrg", routers=1224, degree=14, servers_per_router=5), 2),
    ("Dragonfly", dict(name="dragonfly", a=12, h=6, servers_per_router=6), 2),
    ("Slimfly", dict(name="slimfly", q=13, servers_per_router=9), 2),
    ("Projective", dict(name="projective", q=17, servers_per_router=8), 2),
    ("Demi-projective", dict(name="demiprojective", q=19, servers_per_router=10), 2),
]


def run(seed: int, medoid_of: int, only: list[str] | None, time_budget: float) -> list[dict]:
    """Search every selected network once; one JSON-ready record each."""
    rows = []
    for label, cfg, paper_delta in TABLE_1:
        if only and not any(word.lower() in label.lower() for word in only):
            continue
        if cfg["name"] == "rrg":
            cfg = dict(cfg, seed=seed, medoid_of=medoid_of)
        t0 = time.perf_counter()
        topo = build_topology(cfg)
        topo.path_counts  # noqa: B018  (distances and path counts, timed apart from the search)
        analysis = time.perf_counter() - t0
        t0 = time.perf_counter()
        found = search_max_delta(topo, seed=seed, time_budget=time_budget)
        search = time.perf_counter() - t0
        check_cycle(topo, found.cycle, found.delta)
        rows.append(dict(
            network=label, topology=topo.name, routers=topo.n_routers,
            degree=[int(topo.degrees.min()), int(topo.degrees.max())],
            radius=topo.radius, diameter=topo.diameter,
            delta=found.delta, paper_delta=paper_delta,
            search_seconds=round(search, 3),
            seconds_per_delta={int(k): round(v, 3) for k, v in found.seconds.items()},
            analysis_seconds=round(analysis, 3), seed=seed,
        ))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="outputs/bench_antmill.json")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--medoid-of", type=int, default=1,
                        help="RRG instance: medoid of this many samples (the paper uses 100)")
    parser.add_argument("--time-budget", type=float, default=60.0, help="seconds per network")
    parser.add_argument("--only", nargs="*", help="substrings of network labels to run")
    args = parser.parse_args()
    rows = run(args.seed, args.medoid_of, args.only, args.time_budget)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    record = dict(machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
                  networks=rows)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
