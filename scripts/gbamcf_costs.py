"""What the balanced-paths reproduction needs on SF722: the path-weight LP's time and memory,
measured on smaller networks and extrapolated, and one path-finding pass per network.

    python scripts/gbamcf_costs.py                    # DF114, DF264, PF307, DF510 (about an hour)
    python scripts/gbamcf_costs.py --networks DF114 DF264 --out outputs/gbamcf/costs.json

For each network: one `multi_mcf_random` pass (seconds, and per router pair), and the LP of
Table 1 (HiGHS interior point, the paper's random demand, seed 1) in a child process, whose
resident memory is sampled while the LP runs (the peak above the child's memory before it).
A power law in the LP's number of variables, fitted to the measured networks, predicts
SF722 (and any measured network left out, to check the fit).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from jaxnet.core.files import write_atomic
from jaxnet.paths.mcf import find_paths
from jaxnet.paths.pathset import PathSet
from jaxnet.paths.weights import lp_weights, random_demand
from jaxnet.topology import build_topology

NETWORKS = {
    "DF36": dict(name="dragonfly", a=4, h=2),
    "DF114": dict(name="dragonfly", a=6, h=3),
    "DF264": dict(name="dragonfly", a=8, h=4),
    "PF307": dict(name="demiprojective", q=17),
    "DF510": dict(name="dragonfly", a=10, h=5),
    "SF722": dict(name="slimfly", q=19),
}
K = 4


def resident_mb() -> float:
    """This process's resident memory now (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def lp_child(path: Path) -> None:
    """Solve the LP of a saved path set; print its seconds, variables and the peak of its
    resident memory above the memory before it (sampled every 0.1 s)."""
    paths = PathSet.load(path)
    demand = random_demand(paths, 1)
    before, peak, done = resident_mb(), [0.0], threading.Event()

    def sample():
        while not done.wait(0.1):
            peak[0] = max(peak[0], resident_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    weights = lp_weights(paths, demand)
    done.set()
    sampler.join()
    print(json.dumps({"lp_seconds": weights.seconds, "variables": weights.info["variables"],
                      "constraints": weights.info["constraints"], "lp_peak_mb": max(peak[0] - before, 0.0),
                      "optimal": weights.max_load(paths, demand)}))


def lp_variables(network: str) -> int:
    """Path weights of the LP (valid paths of pairs with demand) plus its objective, counted
    without finding paths: every pair of these networks has k edge-disjoint paths."""
    R = build_topology(NETWORKS[network]).n_routers
    pairs = R * (R - 1)
    demand = np.random.default_rng(1).integers(0, 8, pairs)
    return int((demand > 0).sum()) * K + 1


def measure(network: str) -> dict:
    topology = build_topology(NETWORKS[network])
    start = time.perf_counter()
    paths = find_paths(topology, K, "multi_mcf_random")
    seconds = time.perf_counter() - start
    row = {"network": network, "routers": topology.n_routers, "links": int(paths.n_links),
           "pairs": int(paths.n_pairs),
           "pass_seconds": seconds, "pass_us_per_pair": 1e6 * seconds / paths.n_pairs}
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "paths.npz"
        paths.save(file)
        child = subprocess.run([sys.executable, __file__, "--lp-child", str(file)], capture_output=True,
                               text=True, check=True)
    row.update(json.loads(child.stdout.strip().splitlines()[-1]))
    print(json.dumps(row), flush=True)
    return row


def power_law(x, y) -> tuple[float, float]:
    """(exponent, factor) of y = factor * x ** exponent, least squares in log-log."""
    exponent, log_factor = np.polyfit(np.log(x), np.log(y), 1)
    return float(exponent), float(np.exp(log_factor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", default=["DF114", "DF264", "PF307", "DF510"],
                        choices=[n for n in NETWORKS if n != "SF722"])
    parser.add_argument("--out", type=Path, default=Path("outputs/gbamcf/costs.json"))
    parser.add_argument("--lp-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lp_child:
        lp_child(args.lp_child)
        return
    rows = [measure(network) for network in args.networks]
    variables = [r["variables"] for r in rows]
    time_law = power_law(variables, [r["lp_seconds"] for r in rows])
    fitted = [r for r in rows if r["lp_peak_mb"] > 0]  # memory below the sampling's resolution: left out
    memory_law = power_law([r["variables"] for r in fitted], [r["lp_peak_mb"] for r in fitted])
    predictions = {}
    for network in [n for n in NETWORKS if n not in args.networks]:
        n = lp_variables(network)
        predictions[network] = {"variables": n, "lp_seconds": time_law[1] * n ** time_law[0],
                                "lp_peak_mb": memory_law[1] * n ** memory_law[0]}
        print(f"{network}: {n} LP variables, predicted LP {predictions[network]['lp_seconds']:.0f} s, "
              f"{predictions[network]['lp_peak_mb']:.0f} MB", flush=True)
    result = {"measured": rows, "lp_seconds_law": {"exponent": time_law[0], "factor": time_law[1]},
              "lp_peak_mb_law": {"exponent": memory_law[0], "factor": memory_law[1]},
              "predicted": predictions}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
