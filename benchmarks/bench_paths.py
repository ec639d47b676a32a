"""Benchmark balanced path sets and path weights; writes one JSON file.

  python benchmarks/bench_paths.py [out.json] [--cycle-network DF510] [--weights DF36 DF114 DF264]

- seconds for one multi_mcf_cyclic cycle (k = 4) on --cycle-network, solved after a first
  penal cycle so the pass is a genuine "remove and re-solve" cycle, plus the compile time;
- for every --weights network: max link load and seconds of the LP (HiGHS IPM), of the
  Optax fit and of the Optax dual bound on multi_mcf_cyclic paths (3 cycles), the ratios
  Optax / LP and LP / bound, and the problem size;
- peak resident memory of the process.
Run it alone on an otherwise idle core: times are wall-clock.
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import time
from pathlib import Path

import jax

from jaxnet.core.files import write_atomic
from jaxnet.paths.mcf import find_paths
from jaxnet.paths.weights import (
    lp_weights,
    optax_dual_bound,
    optax_weights,
    random_demand,
    uniform_weights,
)
from jaxnet.topology import build_topology

DRAGONFLIES = {"DF36": (4, 2), "DF114": (6, 3), "DF264": (8, 4), "DF510": (10, 5)}


def dragonfly(name: str):
    a, h = DRAGONFLIES[name]
    return build_topology(dict(name="dragonfly", a=a, h=h))


def cycle_seconds(name: str) -> dict:
    topology = dragonfly(name)
    seconds = []
    find_paths(topology, 4, "multi_mcf_cyclic", cycles=2, seed=1,
               on_cycle=lambda cycle, counts, s: seconds.append(s))
    return dict(network=name, routers=topology.n_routers, pairs=topology.n_routers * (topology.n_routers - 1),
                first_cycle_seconds_with_compile=round(seconds[0], 2), cycle_seconds=round(seconds[1], 2))


def weights_row(name: str) -> dict:
    topology = dragonfly(name)
    paths = find_paths(topology, 4, "multi_mcf_cyclic", cycles=3, seed=1)
    demand = random_demand(paths, 1)
    lp = lp_weights(paths, demand)
    learned = optax_weights(paths, demand)
    bound, dual_seconds = optax_dual_bound(paths, demand)
    optimum, optax = lp.max_load(paths, demand), learned.max_load(paths, demand)
    return dict(
        network=name, routers=topology.n_routers, links=paths.n_links, lp_variables=lp.info["variables"],
        uniform=uniform_weights(paths).max_load(paths, demand), lp=optimum, optax=optax, dual_bound=bound,
        ratio=optax / optimum, lp_over_bound=optimum / bound,
        lp_seconds=round(lp.seconds, 2), optax_seconds=round(learned.seconds, 2), dual_seconds=round(dual_seconds, 2),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", type=Path, default=Path("outputs/bench_paths.json"))
    parser.add_argument("--cycle-network", default="DF510", choices=list(DRAGONFLIES))
    parser.add_argument("--weights", nargs="*", default=["DF36", "DF114", "DF264"], choices=list(DRAGONFLIES))
    args = parser.parse_args()
    result = dict(machine=platform.processor() or platform.machine(), jax=jax.__version__,
                  devices=[str(d) for d in jax.devices()])
    result["weights"] = []
    for name in args.weights:
        result["weights"].append(weights_row(name))
        print(json.dumps(result["weights"][-1]), flush=True)
    start = time.perf_counter()
    result["cycle"] = cycle_seconds(args.cycle_network)
    result["cycle"]["wall_seconds_two_cycles"] = round(time.perf_counter() - start, 2)
    result["peak_memory_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
