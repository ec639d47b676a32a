"""Two engines side by side: is a change to the engine faster? (benchmarks/README.md)

    python benchmarks/bench_ab.py [--before HEAD] [--after WORKTREE] [--network rrg720]
                               [--cases minimal:4:0.5,polarized:13:0.5] [--batch 1]
                               [--base dragonfly_minimal] [--router '{"packet_size": 10}']
                               [--rounds 2] [--mode auto] [--selection available_first] [--every-buffer]
                               [--chunk 200] [--chunks 3] [--warmup-chunks N]
                               [--out outputs/bench/ab.jsonl]

This machine's speed drifts by 15-30 % within minutes and once halved for a whole session,
so a change to the engine is judged against the code before it, measured in the same
minutes. Each revision's `jaxnet/` and benchmarks (`benchmarks/`, or `scripts/` in revisions
that kept them there) are taken from git (`git archive`;
`WORKTREE` is the checkout as it is now, uncommitted changes included), and each
measurement (`bench.measure` of that revision: router-cycles/s of `--batch` simulations at
the case's load after the warm-up, best of `--repeats` windows) runs in a fresh process
that imports that revision's engine.

`--mode side-by-side` (the default on a CPU with at least two cores) runs the two revisions
at once, each pinned to its own core, then swapped in the next round, so that neither keeps
the faster core or the quieter minutes; `alternate` (the default on an accelerator, or with
one core) runs them one after the other, before first in even rounds and after first in odd
ones. `interleaved` warms both up once, in two processes on one core (or one accelerator),
and then lets them take turns: each round is one window of each, the order alternating, so
that the two windows of a round are seconds apart and never run at once. It is the finest of
the three where the machine's speed drifts within minutes: a 10 % change that side-by-side
rounds could not tell from noise showed in 24 rounds of one 200-cycle window each
(benchmarks/README.md). Every measurement is a line of JSON in
`--out`, followed by one summary line per case: the ratio after / before of each round and
their geometric mean (above 1: after is faster).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the networks are the benchmarks')

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKTREE = "WORKTREE"

# One measurement in a fresh process: argv = revision root, core or "-", case (JSON). The
# revision's own engine and bench come first on the path (the process runs in its root).
MEASURE = """
import json, os, sys
root, core, case = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path[:0] = [root, os.path.join(root, "benchmarks"), os.path.join(root, "scripts")]
if core != "-":
    os.sched_setaffinity(0, {int(core)})
import bench, jaxnet
if not os.path.abspath(jaxnet.__file__).startswith(os.path.abspath(root) + os.sep):
    raise SystemExit(f"imported {jaxnet.__file__}, not the engine under {root}")
row = bench.measure(case["topology"], case["routing"], case["router"], case["load"],
                    case["batch"], chunk=case["chunk"], chunks=case["chunks"], repeats=case["repeats"], **case["options"])
print(json.dumps(row))
"""


# Interleaved: argv = revision root, core or "-", case (JSON). Warms up, prints a line, then
# measures one window of `chunks` chunks per line read from stdin (until it closes) and prints
# its router-cycles/s, and whether XLA compiled during it (such a window is measured again).
TURNS = """
import json, os, sys, time
root, core, case = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path[:0] = [root, os.path.join(root, "benchmarks"), os.path.join(root, "scripts")]
if core != "-":
    os.sched_setaffinity(0, {int(core)})
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # two processes share an accelerator
import bench, jaxnet
if not os.path.abspath(jaxnet.__file__).startswith(os.path.abspath(root) + os.sep):
    raise SystemExit(f"imported {jaxnet.__file__}, not the engine under {root}")
if not hasattr(bench, "window"):
    raise SystemExit(f"the benchmarks under {root} predate bench.window: use --mode alternate or side-by-side")
warm = bench.warmed_up(case["topology"], case["routing"], case["router"], case["load"],
                       case["batch"], chunk=case["chunk"], **case["options"])
cycles = case["chunk"] * case["chunks"] * case["batch"] * warm.topo.n_routers
print(json.dumps({"warmup_s": warm.warmup_s}), flush=True)
for _ in sys.stdin:
    warm, wall, _, compiled = bench.window(warm, case["chunk"], case["chunks"])
    print(json.dumps({"router_cycles_per_s": round(cycles / wall), "compiled": compiled}), flush=True)
"""


def git(*command: str) -> str:
    return subprocess.run(["git", "-C", REPO, *command], capture_output=True, text=True, check=True).stdout.strip()


def checkout(revision: str, into: str) -> tuple[str, str]:
    """(root holding the revision's jaxnet/ and benchmarks, its short commit): the checkout
    itself for WORKTREE ("+" when it has uncommitted changes), else extracted under `into`."""
    head = git("rev-parse", "--short", "HEAD")
    if revision == WORKTREE:
        changed = git("status", "--porcelain", "-uno", "--", "jaxnet", "benchmarks", "scripts")
        return REPO, head + ("+" if changed else "")
    commit = git("rev-parse", "--short", f"{revision}^{{commit}}")
    root = os.path.join(into, commit)
    os.makedirs(root, exist_ok=True)
    folders = [f for f in ("jaxnet", "benchmarks", "scripts") if git("ls-tree", "--name-only", commit, f)]
    archive = subprocess.Popen(["git", "-C", REPO, "archive", commit, *folders], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", root], stdin=archive.stdout, check=True)
    if archive.wait():
        raise RuntimeError(f"git archive {commit} failed")
    return root, commit


def start(root: str, core: int | None, case: dict, code: str = MEASURE) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, root, "-" if core is None else str(core), json.dumps(case)],
                            cwd=root, stdin=subprocess.PIPE if code is TURNS else None, stdout=subprocess.PIPE,
                            text=True)


def window(process: subprocess.Popen) -> dict:
    """One measured window of an interleaved process (`TURNS`)."""
    process.stdin.write("\n")
    process.stdin.flush()
    return turn_reply(process)


def turn_reply(process: subprocess.Popen) -> dict:
    line = process.stdout.readline()
    if not line:
        raise RuntimeError(f"benchmark process failed (exit {process.wait()})")
    return json.loads(line)


def order_of(round_: int) -> list[str]:
    """Which revision goes first in a round: before in even rounds, after in odd ones."""
    return ["before", "after"] if round_ % 2 == 0 else ["after", "before"]


def interleaved(revisions: dict, case: dict, rounds: int, core: int | None):
    """Per round, {revision: (core, {"router_cycles_per_s": ...})}: one window of each, the two
    processes on one core (or accelerator) taking turns; a window during which XLA compiled
    is measured again (at most MAX_COMPILING_WINDOWS times per round)."""
    running = {name: start(root, core, case, TURNS) for name, (root, _) in revisions.items()}
    try:
        for process in running.values():
            turn_reply(process)  # warmed up
        for round_ in range(rounds):
            measured = {}
            for name in order_of(round_):
                for _ in range(bench.MAX_COMPILING_WINDOWS + 1):
                    reply = window(running[name])
                    if not reply["compiled"]:
                        measured[name] = (core, reply)
                        break
                else:
                    raise RuntimeError(f"{name}: every window compiled; no steady state to measure")
            yield measured
    finally:
        for process in running.values():
            process.kill()


def fresh_processes(revisions: dict, case: dict, rounds: int, cores: list[int] | None):
    """Per round, {revision: (core, the revision's `bench.measure` row)}: each revision in a
    fresh process, both at once on their own cores (`cores`, swapped every round) or one
    after the other (None)."""
    for round_ in range(rounds):
        order = order_of(round_)
        if cores is None:
            yield {name: (None, bench.result(start(revisions[name][0], None, case))) for name in order}
            continue
        running = {name: (core, start(revisions[name][0], core, case)) for name, core in zip(order, cores)}
        try:
            yield {name: (core, bench.result(process)) for name, (core, process) in running.items()}
        finally:  # one failed: the other does not run on alone
            for _, process in running.values():
                process.kill()


def parse_cases(text: str) -> list[tuple[str, int, float]]:
    """'routing:vcs:load,...' -> [(routing, vcs, load)], or a one-line error."""
    cases = []
    for item in text.split(","):
        parts = item.split(":")
        try:
            routing, vcs, load = parts[0], int(parts[1]), float(parts[2])
            assert len(parts) == 3 and routing and vcs >= 1 and 0 < load <= 1
        except (IndexError, ValueError, AssertionError):
            raise SystemExit(f"--cases {text!r}: {item!r} must be routing:vcs:load with vcs >= 1 and load in (0, 1]")
        cases.append((routing, vcs, load))
    return cases


def on_cpu() -> bool:
    """Whether JAX runs on the CPU here (asked in a fresh process: this one never imports it)."""
    return subprocess.run([sys.executable, "-c", "import jax; print(jax.default_backend())"],
                          capture_output=True, text=True).stdout.strip() == "cpu"


def default_mode(cpu: bool) -> str:
    """side-by-side on a CPU with two cores or more, else alternate (an accelerator is one
    device: two processes on it would share it)."""
    return "side-by-side" if cpu and len(os.sched_getaffinity(0)) >= 2 else "alternate"


def compare(args, cpu: bool) -> list[dict]:
    """Every case, every round, both revisions: the rows, then a summary per case (`cpu`:
    JAX runs on the CPU, where interleaved processes are pinned to the first core)."""
    cores = sorted(os.sched_getaffinity(0))[:2]
    rows, summaries = [], []
    with tempfile.TemporaryDirectory() as into:
        revisions = {"before": checkout(args.before, into), "after": checkout(args.after, into)}
        for routing, vcs, load in parse_cases(args.cases):
            case = {"topology": bench.NETWORKS[args.network], "load": load, "batch": args.batch,
                    "routing": {"name": routing, **({"base": args.base} if args.base else {})},
                    "router": {"vcs": vcs, "selection": args.selection, **args.router},
                    "chunk": args.chunk, "chunks": args.chunks, "repeats": args.repeats,
                    "options": {**({} if args.warmup_chunks is None else {"warmup_chunks": args.warmup_chunks}),
                                **({"active_lists": None} if args.every_buffer else {})}}
            speeds = {"before": [], "after": []}
            if args.mode == "interleaved":
                rounds = interleaved(revisions, case, args.rounds, cores[0] if cpu else None)
            else:
                rounds = fresh_processes(revisions, case, args.rounds, cores if args.mode == "side-by-side" else None)
            for round_, measured in enumerate(rounds):
                for name in order_of(round_):
                    core, row = measured[name]
                    speeds[name].append(row["router_cycles_per_s"])
                    rows.append({"revision": name, "commit": revisions[name][1], "round": round_, "core": core,
                                 "network": args.network, "routing": routing, "vcs": case["router"]["vcs"], "load": load,
                                 "batch": args.batch, **({"router": args.router} if args.router else {}),
                                 **{k: row.get(k) for k in ("router_cycles_per_s", "router_cycles_per_s_median",
                                                            "compile_s", "peak_device_bytes") if k in row}})
                    print(json.dumps(rows[-1]), flush=True)
            ratios = [a / b for a, b in zip(speeds["after"], speeds["before"])]
            summaries.append({"summary": f"{args.network} {routing} {case['router']['vcs']} VCs, load {load}, batch {args.batch}"
                                         + (f", router {json.dumps(args.router)}" if args.router else ""),
                              "before": revisions["before"][1], "after": revisions["after"][1], "mode": args.mode,
                              "after_over_before": [round(r, 3) for r in ratios],
                              "geometric_mean": round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3)})
            print(json.dumps(summaries[-1]), flush=True)
    return rows + summaries


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="HEAD", help="a git revision, or WORKTREE")
    parser.add_argument("--after", default=WORKTREE, help="a git revision, or WORKTREE (the checkout as it is)")
    parser.add_argument("--network", default="rrg720", choices=sorted(bench.NETWORKS))
    parser.add_argument("--cases", default="minimal:4:0.5,polarized:13:0.5", help="routing:vcs:load,...")
    parser.add_argument("--batch", type=int, default=1, help="simulations vmapped together")
    parser.add_argument("--selection", default="available_first",
                        help="router.selection of every case (auto: each scheme's own, Polarized best_first)")
    parser.add_argument("--base", help="routing.base of every case (schemes built on another: rval on a Dragonfly)")
    parser.add_argument("--router", type=bench.json_object, default={},
                        help="router settings of every case, a JSON object (over its VCs and selection)")
    parser.add_argument("--rounds", type=int, default=2, help="measurements of each revision per case")
    parser.add_argument("--mode", choices=("auto", "side-by-side", "alternate", "interleaved"), default="auto")
    parser.add_argument("--chunk", type=int, default=200, help="cycles per chunk")
    parser.add_argument("--chunks", type=int, default=3, help="chunks per measured window")
    parser.add_argument("--repeats", type=int, default=3, help="windows per measurement (the best is kept)")
    parser.add_argument("--warmup-chunks", type=int, default=None,
                        help="chunks of warm-up after the first (default: the revision's bench.warmed_up default); "
                             "more where the network fills slowly, past saturation")
    parser.add_argument("--every-buffer", action="store_true",
                        help="visit every buffer every cycle (sim.active_lists: null) instead of the lists")
    parser.add_argument("--out", default="outputs/bench/ab.jsonl")
    args = parser.parse_args()
    for name in ("batch", "rounds", "chunk", "chunks", "repeats", "warmup_chunks"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: must be at least 1")
    if shutil.which("git") is None:
        parser.error("git is needed to take the revisions' engines")
    for name in ("before", "after"):
        revision = getattr(args, name)
        if revision != WORKTREE and subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "--quiet",
                                                    f"{revision}^{{commit}}"], capture_output=True).returncode:
            parser.error(f"--{name} {revision}: not a commit of this repository (a git revision, or {WORKTREE})")
    cpu = on_cpu()
    if args.mode == "auto":
        args.mode = default_mode(cpu)
    parse_cases(args.cases)
    rows = compare(args, cpu)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
