"""Time and memory of routing-table generation by torus size.

    python benchmarks/bench_tables.py                       # writes outputs/bench_tables.json
    python benchmarks/bench_tables.py out.json --sizes 5x3x3x2 10x10x10

Each (size, algorithm) is built twice: once timed (wall seconds, includes the Theorem 2
augmentation and route enumeration) and once under tracemalloc for the peak of
Python-visible allocations (numpy arrays included). `max_rss_mb` is the process peak.
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import time
import tracemalloc
from pathlib import Path

from jaxnet.paths.torus_graph import TorusShape
from jaxnet.paths.torus_tables import build_table, table_metrics

DEFAULT_SIZES = ["5x3x3x2", "6x5x3", "8x8x8", "10x10x10", "8x8x4x4"]
BFS_MAX_NODES = 512


def measure(sides: list[int], algorithm: str) -> dict:
    shape = TorusShape.build(sides)
    start = time.perf_counter()
    table = build_table(shape, algorithm)
    seconds = time.perf_counter() - start
    metrics = table_metrics(table)
    del table
    tracemalloc.start()
    build_table(shape, algorithm)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"sides": sides, "nodes": shape.n_nodes, "dimensions": len(sides),
            "algorithm": algorithm, "seconds": seconds, "peak_traced_mb": peak / 2 ** 20,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "max_channel_load": metrics["max_channel_load"], "sigma4": metrics["sigma4"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path("outputs/bench_tables.json"))
    parser.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES, help="e.g. 4x2x2x2")
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        sides = [int(s) for s in size.split("x")]
        for algorithm in ("sssp", "bfs"):
            if algorithm == "bfs" and TorusShape.build(sides).n_nodes > BFS_MAX_NODES:
                continue
            rows.append(measure(sides, algorithm))
            r = rows[-1]
            print(f"{size:>10s} {r['nodes']:5d} nodes {algorithm:5s} {r['seconds']:8.3f} s "
                  f"peak {r['peak_traced_mb']:8.1f} MB", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": platform.platform(), "processor": platform.processor(),
                                    "results": rows}, indent=2))


if __name__ == "__main__":
    main()
