"""The Restricted Valiant paper's own simulator, FOGSim, with the paper's Table I
(docs/fidelity.md, "PERM past saturation").

    python scripts/fogsim_valiant.py --fogsim PATH [--network a4h2p2] [--routing VAL_ANY]
                                     [--traffic RANDOMPERMUTATION] [--loads 0.3,0.4,...]
                                     [--seeds 1,2,3,4] [--set OutQueueLength=80 ...]
                                     [--out docs/data/fogsim_valiant.csv]

FOGSim is public (github.com/fuentesp/fogsim); it is not part of jaxnet. Built from its commit
dcdd75f (`g++ -O2 -std=c++11 -w` over every .cc file but routing/flexibleRouting.cc, which
does not compile there and which no routing uses), it takes one configuration file per
simulation. This script writes them from Table I in cycles of 20 ns, as `valiant/dragonfly`
does for jaxnet: a phit per cycle, packets of 10 phits (1000 bytes at 40 Gbps), the switch's
200 ns as a crossbar delay of 10 cycles, links of 40 / 400 ns as 2 / 20 cycles, injection
queues of 200 packets and transit queues of 100 packets per VC, 4 local and 2 global VCs, one
injection VC (no injection delay), crossbar speedup 2, the palm-tree arrangement and the
paper's window of 500 + 1500 packet times. FOGSim needs settings the paper does not give: an output queue of 2
packets a port (`OutQueueLength`, jaxnet's fig2 output buffer) and one allocation iteration
a cycle (`ArbiterIterations`); `--set KEY=VALUE` changes any setting. The offered load is
FOGSim's `Probability` (percent of a phit per cycle); its `Accepted Load` (phits per node and
cycle over the measured cycles) is the accepted load, its `Average Total Latency` the message
latency and its `Average Distance` the mean path length.

Each simulation is a row of `--out` (CSV, written atomically after each one); a rerun skips
the rows already there. At the end, per seed, the accepted load at the highest offered load
over the peak."""
from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

NETWORKS = {"a4h2p2": (4, 2, 2), "a6h3p3": (6, 3, 3), "a12h6p6": (12, 6, 6)}
# Table I in cycles of 20 ns (one phit); the settings FOGSim requires that the paper leaves out
# are jaxnet's fig2 router's (an output queue of 2 packets, one allocation iteration).
TABLE_I = {
    "PacketSize": 10, "FlitSize": 10, "XbarDelay": 10, "InternalSpeedup": 2,
    "LocalLinkTransmissionDelay": 2, "GlobalLinkTransmissionDelay": 20, "InjectionDelay": 0,
    "InjectionQueueLength": 2000, "LocalQueueLength": 1000, "GlobalQueueLength": 1000,
    "LocalLinkChannels": 4, "GlobalChannels": 2, "InjectionChannels": 1, "PalmTreeConfiguration": 1,
    "Switch": "IOQ_SW", "deadlock_avoidance": "DALLY", "OutQueueLength": 20, "ArbiterIterations": 1,
    "WarmupCycles": 5000, "MaxCycles": 15000,
}
COLUMNS = ["network", "routing", "traffic", "settings", "seed", "offered_load", "accepted_load", "applied_load",
           "latency", "hops", "wall_s"]


def config_text(network: str, routing: str, traffic: str, load: float, seed: int, output: str,
                settings: dict) -> str:
    """One FOGSim configuration file: Table I, then `settings` over it."""
    a, h, p = NETWORKS[network]
    keys = {"A": a, "H": h, "P": p, **TABLE_I, "routing": routing, "Traffic": traffic,
            "Probability": f"{100 * load:g}", "Seed": seed, "OutputFileName": output, **settings}
    return "[CONFIG]\n" + "".join(f"{key}={value}\n" for key, value in keys.items())


def read_output(path: Path) -> dict:
    """Accepted and applied load, mean latency (generation to delivery, cycles) and mean path
    length (router-to-router hops) from a FOGSim output file."""
    text = path.read_text()

    def number(label):
        found = re.search(rf"^{label}: ([-+.\deE]+)", text, re.M)
        if found is None:
            raise SystemExit(f"{path}: no '{label}' line: not a finished FOGSim run")
        return float(found.group(1))

    return {"accepted_load": number("Accepted Load"), "applied_load": number("Applied Load"),
            "latency": number("Average Total Latency"), "hops": number("Average Distance")}


def simulate(fogsim: str, network: str, routing: str, traffic: str, load: float, seed: int,
             settings: dict) -> dict:
    """One FOGSim run in a scratch directory: its row (without the identifying columns)."""
    with tempfile.TemporaryDirectory() as scratch:
        conf, out = Path(scratch) / "run.conf", Path(scratch) / "run.out"
        conf.write_text(config_text(network, routing, traffic, load, seed, str(out), settings))
        start = time.perf_counter()
        done = subprocess.run([fogsim, str(conf)], cwd=scratch, capture_output=True, text=True)
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip().splitlines()[-3:]
            raise SystemExit(f"FOGSim stopped (exit {done.returncode}) at offered load {load:g}, seed {seed} "
                             f"({routing}, {traffic}, {settings or 'Table I'}): " + " / ".join(said))
        return {**read_output(out), "wall_s": round(time.perf_counter() - start, 2)}


def write_rows(path: Path, rows: list[dict]) -> None:
    """The CSV, replaced atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def sweep(fogsim: str, network: str, routing: str, traffic: str, loads: list[float], seeds: list[int],
          settings: dict, out: Path) -> list[dict]:
    """Every (seed, load) missing from `out`, each written as it finishes; all matching rows."""
    rows = []
    if out.exists():
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
    described = " ".join(f"{k}={v}" for k, v in sorted(settings.items()))
    same = {"network": network, "routing": routing, "traffic": traffic, "settings": described}
    mine = lambda row: all(row[k] == v for k, v in same.items())  # noqa: E731
    for seed in seeds:
        for load in loads:
            if any(mine(r) and int(r["seed"]) == seed and float(r["offered_load"]) == load for r in rows):
                continue
            row = {**same, "seed": seed, "offered_load": load,
                   **simulate(fogsim, network, routing, traffic, load, seed, settings)}
            rows.append(row)
            write_rows(out, rows)
            print(f"seed {seed}, offered {load:g}: accepted {row['accepted_load']:.4f} ({row['wall_s']} s)", flush=True)
    return [r for r in rows if mine(r) and int(r["seed"]) in seeds and float(r["offered_load"]) in loads]


def last_over_peak(rows: list[dict]) -> dict[int, float]:
    """Per seed, the accepted load at the highest offered load over the highest accepted load."""
    ratios = {}
    for seed in sorted({int(r["seed"]) for r in rows}):
        mine = sorted((float(r["offered_load"]), float(r["accepted_load"])) for r in rows if int(r["seed"]) == seed)
        ratios[seed] = mine[-1][1] / max(accepted for _, accepted in mine)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fogsim", required=True, help="the FOGSim binary")
    parser.add_argument("--network", choices=sorted(NETWORKS), default="a4h2p2")
    parser.add_argument("--routing", default="VAL_ANY", help="FOGSim's routing (VAL_ANY: 4 local / 2 global VCs)")
    parser.add_argument("--traffic", default="RANDOMPERMUTATION")
    parser.add_argument("--loads", default="0.3,0.4,0.45,0.5,0.6,0.8,1.0")
    parser.add_argument("--seeds", default="1,2,3,4")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a FOGSim setting over Table I (repeatable)")
    parser.add_argument("--out", default="docs/data/fogsim_valiant.csv")
    args = parser.parse_args()
    if not os.access(args.fogsim, os.X_OK):
        parser.error(f"--fogsim {args.fogsim!r} is not an executable file: build FOGSim (see this script's help)")
    settings = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--set {item!r} is invalid: KEY=VALUE, a FOGSim setting")
        settings[key] = value
    try:
        loads = [float(x) for x in args.loads.split(",")]
        seeds = [int(x) for x in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--loads {args.loads!r} / --seeds {args.seeds!r}: comma-separated numbers (seeds: integers)")
    if not all(0 < load <= 1 for load in loads):
        parser.error(f"--loads {args.loads!r}: offered loads in (0, 1]")
    rows = sweep(args.fogsim, args.network, args.routing, args.traffic, loads, seeds, settings, Path(args.out))
    for seed, ratio in last_over_peak(rows).items():
        print(f"seed {seed}: accepted at offered {max(loads):g} over the peak {ratio:.4f}")


if __name__ == "__main__":
    main()
