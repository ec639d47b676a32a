"""Engine speed and memory, written as JSON (figures and their history in benchmarks/README.md).

    python benchmarks/bench.py --suite cpu     [--out outputs/bench/cpu.json]
    python benchmarks/bench.py --suite scaling
    python benchmarks/bench.py --suite small   [--against d5c3373 --jobs-only --repeats 5]
    python benchmarks/bench.py --suite points
    python benchmarks/bench.py --suite gpu     [--budget-s 300]
    python benchmarks/bench.py --suite memory
    python benchmarks/bench.py --suite study   [--cycles 2000]
    python benchmarks/bench.py --suite sizing  [--cycles 5000]
    python benchmarks/bench.py --suite saturated [--cycles 13000]
    python benchmarks/bench.py --suite builds  [NAME ...]
    python benchmarks/bench.py --suite gallery [--against REV --repeats 1] [--cycles 15000] [OVERRIDE ...]

cpu      one core (the process pinned to CPU 0): RRG 720/17/7 under uniform traffic,
         minimal and Polarized at 4, 8 and 13 VCs, offered load 0.1 / 0.5 / 1.0
         (`--selection`, available_first by default, as the earlier runs).
scaling  a job of 8 points on RRG 720/17/7 (minimal, 4 VCs, load 0.5) in one process on
         one core and in one worker process per core (`sim.workers`), end to end, side by
         side, each job with a new, empty persistent compilation cache as the apps use one
         (`--cycles` per point, 4000 by default; the Polarized paper's points run 25000);
         the rows must be identical. Then the simulation alone (steady state): the 8 points
         on one core against a share on each core, side by side.
small    with `--against REV`, whole small jobs end to end (`SMALL_JOBS`: the 100-point
         Hamming 4x4 job, Dragonfly a=8 h=4 p=4 points at loads 0.1 / 0.4 / 0.7), this checkout
         and revision REV taking turns for `--repeats` rounds (`--jobs-only`: nothing else);
         then networks of at most 64 routers, a batch of 20 points on one core: every buffer
         or lists, one simulation at a time or vmapped (what `sim.vmap_width: auto` and
         `sim.active_lists: auto` are chosen from); then the 20 points over every core.
points   one point at a time on one core as `jaxnet` runs it (RRG 720/17/7, 1000 + 3000
         cycles, chunks of 500): wall time, compilations of the chunk and their seconds, for
         minimal 4 VCs at loads 0.1 / 0.5 / 1.0 and Polarized 13 VCs at 0.5.
gpu      first `backends_agree` (4 Hamming 4x4 points on the default device and on the CPU:
         rows identical), then RRG 720/17/7 (minimal 4 VCs, Polarized 13 VCs) and the
         Dragonfly a=12 h=6 p=6 (876 routers, dragonfly_minimal) at batch 1, 8, 32, 128, 512,
         most important first (`gpu_cases`), as many as `--budget-s` allows, the JSON
         rewritten after each row; router-cycles/s, compile time, device memory.
study    the Polarized paper's Figs 4-6 at paper scale as `jaxnet.run` runs them (6.5e9
         router-cycles at 25,000 cycles a point; `--cycles` shortens every point): wall time,
         router-cycles/s end to end, and each line's batch in steady state.
sizing   a study's batch (RRG 720/17/7, minimal 4 VCs and Polarized 13 VCs, loads 0.1..1.0 x 2
         seeds vmapped as one batch, as an accelerator runs it) with lists sized once, grown,
         and grown in two batches split by load, end to end for `--cycles` per point: wall
         time, router-cycles/s, identical rows.
saturated  lists sized once against grown, past saturation: one point of RRG 720/17/7 at load
         1.0 (minimal 4 VCs, Polarized 13, Valiant 8) warmed up with grown lists for
         `--cycles` (default 13,000), then `--chunks` chunks with each set of capacities in
         turn for `--repeats` rounds, on one core: router-cycles/s of each, the capacities and
         the counts they hold.
builds   the paper-scale networks of the gallery's figures (the experiments named, by default
         those of docs/gallery.md's paper-scale list), built as a sweep builds them, into a
         new, empty network cache: seconds per network and per traffic pattern.
memory   per-simulation state and compiled temporaries (XLA memory analysis) and peak host
         memory of the paper networks, and the largest batch that fits 24 GiB of host and
         80 GiB of GPU memory.
gallery  a slice of a paper-scale figure as the CPU gallery runs it (Restricted Valiant Fig. 4:
         RVAL, one injection buffer, PERM, loads 0.4 and 0.8, seeds 1-2 on the Dragonfly a=12
         h=6 p=6 with the FOGSim router) end to end on every core, each run with an empty
         compilation cache of its own: wall and CPU time, compilations, accepted loads;
         OVERRIDEs are added to the job (e.g. sim.sub_batch=1), `--against REV` takes turns
         with revision REV.

Speed is router-cycles per second aggregated over the batch (routers x cycles x
simulations / wall time of the measured chunks), after warm-up chunks that reach the
load's steady state (at least 3, and until the capacities of the lists of buffers in use
stop changing, each new capacity being one compilation; the warm-up's time is reported).
A measurement window during which XLA compiled anything (a saturating network still
outgrowing its lists) measured the compiler, not the simulation: it is counted
(`windows_with_compilation`) and another window is run in its place. Each figure is the
best of `--repeats` windows (the median is in the JSON; the machine drifts 15-30 %).
"""
from __future__ import annotations

import argparse
import csv
import functools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, NamedTuple

RRG720 = {"name": "rrg", "routers": 720, "degree": 17, "seed": 1, "medoid_of": 1, "servers_per_router": 7}
RRG1224 = {"name": "rrg", "routers": 1224, "degree": 14, "seed": 1, "medoid_of": 1, "servers_per_router": 5}
DF876 = {"name": "dragonfly", "a": 12, "h": 6, "servers_per_router": 6}
DF264 = {"name": "dragonfly", "a": 8, "h": 4, "servers_per_router": 4}
SMALL = {
    "hamming 4x4 p=3": ({"name": "hamming", "sides": [4, 4], "servers_per_router": 3}, "minimal", 4),
    "dragonfly a=4 h=2 p=2": ({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}, "dragonfly_minimal", 3),
    "slimfly q=5 p=3": ({"name": "slimfly", "q": 5, "servers_per_router": 3}, "minimal", 2),
    "rrg 64/8 p=4": ({"name": "rrg", "routers": 64, "degree": 8, "seed": 1, "servers_per_router": 4}, "minimal", 3),
}
# By name, for the scripts that take a --network (profile.py, bench_ab.py).
NETWORKS = {"rrg720": RRG720, "rrg1224": RRG1224, "df876": DF876, "df264": DF264, "hamming": SMALL["hamming 4x4 p=3"][0],
            "dragonfly": SMALL["dragonfly a=4 h=2 p=2"][0], "slimfly": SMALL["slimfly q=5 p=3"][0],
            "rrg64": SMALL["rrg 64/8 p=4"][0]}


def json_object(text: str) -> dict:
    """A command line's JSON object of settings (`--router`), or an argparse error."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON ({error})")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} must be a JSON object of router settings")
    return value


MAX_WARMUP_CHUNKS = 20  # chunks to reach the steady state before measuring (at most)
MAX_COMPILING_WINDOWS = 10  # measurement windows rerun because something compiled (at most)
COMPILATIONS: list[float] = []  # seconds of each XLA backend compilation in this process


@functools.cache
def count_compilations() -> None:
    """From now on record every XLA backend compilation of this process in COMPILATIONS."""
    import jax

    jax.monitoring.register_event_duration_secs_listener(
        lambda name, seconds, **_: COMPILATIONS.append(seconds) if name.endswith("backend_compile_duration") else None)


class WarmedUp(NamedTuple):
    """A batch run to its load's steady state (`warmed_up`): what measuring it goes on with,
    and what getting there cost (seconds, compilations included)."""

    topo: Any
    network: Any
    params: Any
    state: Any
    sleep: Any  # the heads asleep (`jaxnet.sim.work.Sleep`), None where nobody sleeps
    lists: tuple
    width: int | None
    tier: tuple | None
    peak: Any  # the last chunk's most entries of each work list in a cycle
    first_chunk_s: float
    warmup_chunks: int
    warmup_s: float
    compile_s: float


def warmed_up(topology: dict, routing: dict, router: dict, load, batch: int, *, chunk: int,
              warmup_chunks: int = 3, vmap_width="auto", traffic="uniform", active_lists="auto",
              first_seed: int = 1) -> WarmedUp:
    """A batch of `batch` points (seeds first_seed..) at `load` (or the loads of a list, in
    turn), run in chunks of `chunk` cycles for at least `warmup_chunks` chunks after the first
    and until the capacities of its lists stop changing (each new one compiles; at most
    MAX_WARMUP_CHUNKS)."""
    import jax

    from jaxnet import build
    from jaxnet.sim import capacities
    from jaxnet.sim.run import advance_chunk, batch_params, compiled_init, shard
    from jaxnet.sim.spec import SimSpec
    topo = build.topology(topology)
    network = build.network(topo, build.routing(routing), build.router(router))
    spec = SimSpec(warmup=0, measure=10**9, vmap_width=vmap_width, active_lists=active_lists)
    loads = load if isinstance(load, (list, tuple)) else [load]
    points = [(loads[i % len(loads)], seed) for i, seed in enumerate(range(first_seed, first_seed + batch))]
    params = batch_params([build.traffic({"name": traffic}, topo, 1)] * batch, points, spec, network.layout)
    keys = jax.numpy.stack([jax.random.PRNGKey(seed) for _, seed in points])
    params, keys = shard((params, keys), batch)
    lists = capacities.steps(spec.active_lists, network.layout, batch, 10**9)
    width = spec.resolved_vmap_width(network.layout)
    count_compilations()
    start, compiled = time.perf_counter(), len(COMPILATIONS)
    state, sleep = compiled_init(network.layout, capacities.sleeps(network.model, lists))(keys)
    sizing = capacities.sizing(lists, "grow")
    state, sleep, peak, tier = advance_chunk(network, params, state, sleep, chunk, width, lists,
                                             capacities.initial(network.model, lists, max(loads), sizing,
                                                                network.route_hops))
    jax.block_until_ready(state)
    first = time.perf_counter() - start
    tiers, warm, previous = [tier, capacities.next_capacities(network.layout, lists, peak, tier, 0, sizing)], 0, peak
    while warm < warmup_chunks or (len(tiers) < MAX_WARMUP_CHUNKS and tiers[-1] != tiers[-2]):
        # the load's steady state: until the list capacities stop changing (each new one compiles)
        state, sleep, peak, tier = advance_chunk(network, params, state, sleep, chunk, width, lists, tiers[-1])
        tiers.append(capacities.next_capacities(network.layout, lists, peak, tier, previous, sizing))
        warm, previous = warm + 1, peak
    jax.block_until_ready(state)
    return WarmedUp(topo, network, params, state, sleep, lists, width, tiers[-1], peak, first, warm,
                    time.perf_counter() - start, sum(COMPILATIONS[compiled:]))


def window(warm: WarmedUp, chunk: int, chunks: int) -> tuple[WarmedUp, float, int, bool]:
    """(the batch after `chunks` more chunks, their wall time, how many times the list
    capacities changed, whether XLA compiled meanwhile): one measurement window."""
    import jax

    from jaxnet.sim import capacities
    from jaxnet.sim.run import advance_chunk

    network, state, sleep, tier, previous = warm.network, warm.state, warm.sleep, warm.tier, warm.peak
    compiled, start, changes = len(COMPILATIONS), time.perf_counter(), 0
    for _ in range(chunks):
        state, sleep, peak, used = advance_chunk(network, warm.params, state, sleep, chunk, warm.width, warm.lists,
                                                 tier)
        fitted = capacities.next_capacities(network.layout, warm.lists, peak, used, previous,
                                            capacities.sizing(warm.lists, "grow"))
        changes += (used != tier) + (fitted != used)
        tier, previous = fitted, peak
    jax.block_until_ready(state)
    wall = time.perf_counter() - start
    return (warm._replace(state=state, sleep=sleep, tier=tier, peak=previous), wall, changes,
            len(COMPILATIONS) > compiled)


def measure(topology: dict, routing: dict, router: dict, load: float, batch: int, *, chunk: int,
            chunks: int, warmup_chunks: int = 3, repeats: int = 2, vmap_width="auto", traffic="uniform",
            active_lists="auto", first_seed: int = 1):
    """Speed of one configuration: a batch of `batch` points (seeds first_seed..) at `load`."""
    import jax

    from jaxnet.sim import capacities

    warm = warmed_up(topology, routing, router, load, batch, chunk=chunk, warmup_chunks=warmup_chunks,
                     vmap_width=vmap_width, traffic=traffic, active_lists=active_lists, first_seed=first_seed)
    topo, network, lists, width = warm.topo, warm.network, warm.lists, warm.width
    walls, compiling_windows, list_changes = [], 0, 0
    while len(walls) < repeats and compiling_windows <= MAX_COMPILING_WINDOWS:
        warm, wall, changes, compiled = window(warm, chunk, chunks)
        list_changes += changes
        if compiled:
            compiling_windows += 1
        else:
            walls.append(wall)
    tier, peak = warm.tier, warm.peak
    if not walls:
        raise RuntimeError(f"every measurement window compiled ({compiling_windows}): no steady state to measure")
    cycles = chunk * chunks
    device = jax.devices()[0]
    memory = device.memory_stats() if hasattr(device, "memory_stats") else None
    return {
        "topology": topo.name, "routing": routing["name"], "vcs": network.layout.vcs, "load": load,
        "batch": batch, "vmap_width": width, "devices": jax.device_count(), "cycles": cycles,
        "every_buffer": not lists, "work_lists": capacities.described(lists, capacities.sizing(lists, "grow")),
        "router_cycles_per_s": round(topo.n_routers * cycles * batch / min(walls)),
        "router_cycles_per_s_median": round(topo.n_routers * cycles * batch / sorted(walls)[len(walls) // 2]),
        "first_chunk_s_incl_compile": round(warm.first_chunk_s, 2), "warmup_chunks": warm.warmup_chunks,
        "warmup_s_incl_compiles": round(warm.warmup_s, 1), "compile_s": round(warm.compile_s, 1),
        "wall_s": round(min(walls), 3),
        "lists": list(map(int, tier or ())), "in_use_peak": list(map(int, peak)),
        "list_changes_while_measuring": int(list_changes), "windows_with_compilation": compiling_windows,
        "peak_host_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "peak_device_bytes": memory.get("peak_bytes_in_use") if memory else None,  # of the process so far
        "device_bytes_in_use": memory.get("bytes_in_use") if memory else None,  # this batch's state and tables
    }


def suite_cpu(args):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    rows = []
    for routing, needs in (("minimal", 4), ("polarized", 13)):
        for vcs in (4, 8, 13):
            for load in (0.1, 0.5, 1.0):
                if vcs < needs:
                    rows.append({"routing": routing, "vcs": vcs, "load": load,
                                 "note": f"not a valid configuration: routing={routing} needs {needs} VCs on RRG 720"})
                    continue
                rows.append(measure(RRG720, {"name": routing}, {"vcs": vcs, "selection": args.selection}, load, 1,
                                    chunk=200, chunks=args.chunks, repeats=args.repeats))
                print(json.dumps(rows[-1]), flush=True)
    base = next(r["router_cycles_per_s"] for r in rows
                if r.get("routing") == "minimal" and r.get("vcs") == 4 and r.get("load") == 0.5)
    for r in rows:
        if "router_cycles_per_s" in r:
            r["cost_vs_minimal_4vc_load_0.5"] = round(base / r["router_cycles_per_s"], 2)
    return rows


def run_job(workers: int, cycles: int, points: int = 8) -> dict:
    """A job of `points` points (RRG 720/17/7, minimal, 4 VCs, uniform, load 0.5, seeds 1..)
    run as `jaxnet` runs one (`jaxnet.sim.workers`, sub-batches as `sim.*: auto` makes them),
    timed end to end: network, traffic, worker start-up and compilation included."""
    from jaxnet import build
    from jaxnet.sim.spec import SimSpec
    from jaxnet.sim.workers import SubBatch, simulate_sub_batches
    from jaxnet.traffic import build_traffic

    start = time.perf_counter()
    network = build.network_of({"topology": RRG720, "routing": {"name": "minimal"}, "router": {"vcs": 4}})
    spec = SimSpec(warmup=cycles // 4, measure=cycles - cycles // 4, chunk=cycles // 8, workers=workers)
    size = spec.resolved_sub_batch(network.layout, points, 1, workers)
    grid = [(0.5, seed) for seed in range(1, points + 1)]
    subs = [SubBatch([build_traffic({"name": "uniform"}, network.topo, seed) for _, seed in grid[i:i + size]],
                     grid[i:i + size], size, None) for i in range(0, points, size)]
    setup = time.perf_counter() - start
    rows = [row for _, sub_rows, _ in simulate_sub_batches(network, subs, spec, workers, lambda _: None)
            for row in sub_rows]
    wall = time.perf_counter() - start
    simulating = sum(row["wall_s"] for row in rows) / size / workers  # per worker, sub-batches in turn
    first_chunks = sum(row["first_chunk_s"] for row in rows) / size / workers
    return {"workers": workers, "points": points, "cycles_per_point": cycles, "wall_s_end_to_end": round(wall, 1),
            "setup_s": round(setup, 1), "simulate_s_per_worker": round(simulating, 1),
            "first_chunks_s_per_worker": round(first_chunks, 1),
            "sub_batches_first_chunk_and_wall_s": [[row["first_chunk_s"], row["wall_s"]] for row in rows[::size]],
            "router_cycles_per_s_end_to_end": round(network.topo.n_routers * cycles * points / wall),
            "accepted_by_seed": {row["seed"]: row["accepted_load"] for row in rows}}


FIRST_CORE = "min(os.sched_getaffinity(0))"  # Python source: the first core this process may use


def start(call: str, core: str | None = None, env: dict | None = None) -> subprocess.Popen:
    """`bench.<call>` (Python source) in a fresh process, pinned to `core` (Python source for
    one CPU) where given, with `env` added to its environment; `result` reads the JSON it
    prints."""
    pin = f"os.sched_setaffinity(0, {{{core}}}); " if core is not None else ""
    code = (f"import json, os, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); {pin}"
            f"import bench; print(json.dumps(bench.{call}))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def result(process: subprocess.Popen) -> dict:
    out, _ = process.communicate()
    if process.returncode:
        raise RuntimeError(f"benchmark process failed (exit {process.returncode}): {process.args[-1]}")
    return json.loads(out.strip().splitlines()[-1])


def suite_scaling(args):
    """One process pinned to one core, then one worker process per core, each in a fresh
    process, side by side in this run, end to end; then the simulation alone (steady state,
    no compilation or start-up): 8 points in one process on one core against 4 in each of
    two processes side by side (what sharing the memory system costs)."""
    cores = sorted(os.sched_getaffinity(0))
    rows = []
    for workers in (1, len(cores)):
        with tempfile.TemporaryDirectory(prefix="jaxnet-xla-") as cache:  # as the apps run a job, from nothing
            job = result(start(f"run_job({workers}, {args.cycles or 4000})", FIRST_CORE if workers == 1 else None,
                               {"JAX_COMPILATION_CACHE_DIR": cache}))
        rows.append({"cores": 1 if workers == 1 else len(cores), **job})
        print(json.dumps(rows[-1]), flush=True)
    rows.append({"speedup_all_cores_vs_one": round(rows[1]["router_cycles_per_s_end_to_end"]
                                                   / rows[0]["router_cycles_per_s_end_to_end"], 2),
                 "identical_rows": rows[0]["accepted_by_seed"] == rows[1]["accepted_by_seed"]})
    print(json.dumps(rows[-1]), flush=True)
    steady = [side_by_side(RRG720, "minimal", 4, cores[:n], args, 8, chunk=200) for n in (1, len(cores))]
    rows += [{"steady_state": True, **row} for row in steady]
    rows.append({"steady_state_speedup_all_cores_vs_one": round(steady[1]["router_cycles_per_s"]
                                                                / steady[0]["router_cycles_per_s"], 2)})
    print(json.dumps(rows[-2:]), flush=True)
    return rows


# Whole small jobs as a user runs them (`jaxnet <overrides>`), end to end: `--suite small`
# times them against an older revision (`--against`).
LOADS_10 = "sim.loads=[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0]"
SMALL_JOBS = {
    "hamming 4x4 p=3, minimal 2 VCs, 10 loads x 10 seeds": [
        "topology=hamming", "topology.sides=[4,4]", "topology.servers_per_router=3", "routing=minimal",
        "router.vcs=2", LOADS_10, "sim.seeds=[1,2,3,4,5,6,7,8,9,10]", "sim.warmup=1000", "sim.measure=2000"],
    **{f"dragonfly a=8 h=4 p=4, dragonfly_minimal, load {load}": [
        "topology=dragonfly", "topology.a=8", "topology.h=4", "topology.servers_per_router=4",
        "routing=dragonfly_minimal", f"sim.loads=[{load}]", "sim.seeds=[1]", "sim.warmup=1000", "sim.measure=2000"]
       for load in (0.1, 0.4, 0.7)},
}
# The `jaxnet` console script of a checkout (its `script`; `main` in revisions before it had one).
RUN_APP = ("import sys; from jaxnet.cli import simulate; sys.argv[0] = 'jaxnet'; "
           "getattr(simulate, 'script', simulate.main)()")


def run_app(checkout: str, overrides: list[str], compilation_cache: bool = False) -> dict:
    """One `jaxnet` job of the jaxnet in `checkout`, end to end in a new process with empty
    compilation and network caches: wall seconds and CPU seconds (user + system). With
    `compilation_cache` the job keeps its compiled programs in an empty cache of its own, as
    the apps do, and the row also says how many it compiled and the accepted load per point."""
    with tempfile.TemporaryDirectory() as out:
        cache = os.path.join(out, "xla")
        env = {**os.environ, "PYTHONPATH": checkout, "JAXNET_XLA_CACHE": cache if compilation_cache else "off",
               "JAXNET_NETWORK_CACHE": "off"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", RUN_APP, *overrides, f"hydra.run.dir={out}/run"], cwd=checkout,
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        row = {"wall_s": round(wall, 3),
               "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3)}
        if compilation_cache:
            with open(os.path.join(out, "run", "results.csv")) as results:
                points = list(csv.DictReader(results))
            row.update(compilations=sum(name.startswith("jit_batch") for name in os.listdir(cache)),
                       accepted={f"{p['offered_load']}/{p['seed']}": float(p["accepted_load"]) for p in points})
    return row


def jobs_against(older: str, rounds: int, jobs: dict = SMALL_JOBS, compilation_cache: bool = False) -> list[dict]:
    """`jobs` end to end in this checkout and in a worktree of revision `older`, taking
    turns (the order alternating from round to round, so that the machine's drift hits both):
    per job the median wall and CPU time of each, and older / this (above 1: this is faster)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as parent:
        there = os.path.join(parent, "older")
        subprocess.run(["git", "-C", here, "worktree", "add", "--detach", there, older], check=True,
                       capture_output=True)
        try:
            rows = []
            for name, overrides in jobs.items():
                runs = {"this": [], "older": []}
                for r in range(rounds):
                    for which in (("this", "older") if r % 2 == 0 else ("older", "this")):
                        runs[which].append(run_app(here if which == "this" else there, overrides, compilation_cache))
                median = {w: {k: statistics.median([run[k] for run in done]) for k in ("wall_s", "cpu_s")}
                          for w, done in runs.items()}
                rows.append({"job": name, "older": older, "rounds": rounds, "runs": runs, "median": median,
                             "older_over_this_wall": round(median["older"]["wall_s"] / median["this"]["wall_s"], 3),
                             "older_over_this_cpu": round(median["older"]["cpu_s"] / median["this"]["cpu_s"], 3)})
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "runs"}), flush=True)
        finally:
            subprocess.run(["git", "-C", here, "worktree", "remove", "--force", there], check=False, capture_output=True)
    return rows


def suite_small(args):
    """With `--against REV`, first SMALL_JOBS end to end against revision REV
    (`jobs_against`, `--repeats` rounds). Then per network: a batch of 20 points at load 0.5
    on one core, every buffer or lists, one simulation at a time or all vmapped, and what
    `auto` picks; then the same 20 points split over one process per core, side by side:
    their aggregate speed on this machine (`--jobs-only` leaves these out)."""
    rows = jobs_against(args.against, args.repeats) if args.against else []
    if args.jobs_only:
        return rows
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[0]})
    for name, (topology, routing, vcs) in SMALL.items():
        for lists, width in ((None, 1), (None, 20), ("auto", 1), ("auto", 20), ("auto", "auto")):
            rows.append({"network": name, "cores": 1, **measure(
                topology, {"name": routing}, {"vcs": vcs}, 0.5, 20, chunk=1000, chunks=args.chunks,
                vmap_width=width, active_lists=lists, repeats=args.repeats)})
            print(json.dumps(rows[-1]), flush=True)
        rows.append(all_cores(name, cores, args))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def all_cores(name: str, cores: list[int], args, points: int = 20) -> dict:
    """The `points` of a small network split over one process per core (`side_by_side`)."""
    topology, routing, vcs = SMALL[name]
    return {"network": name, **side_by_side(topology, routing, vcs, cores, args, points, chunk=1000)}


def side_by_side(topology: dict, routing: str, vcs: int, cores: list[int], args, points: int,
                 chunk: int) -> dict:
    """`points` points at load 0.5 split over one process per core of `cores` (each pinned),
    measured as `measure` does with `auto` settings, side by side: aggregate router-cycles/s."""
    share = -(-points // len(cores))
    procs = [start(f"measure({topology!r}, {{'name': {routing!r}}}, {{'vcs': {vcs}}}, 0.5, {share}, chunk={chunk}, "
                   f"chunks={args.chunks}, repeats={args.repeats}, first_seed={1 + i * share})", str(core))
             for i, core in enumerate(cores)]
    each = [result(p) for p in procs]
    return {"cores": len(cores), "batch": share * len(cores),
            "router_cycles_per_s": sum(r["router_cycles_per_s"] for r in each),
            "per_process": [r["router_cycles_per_s"] for r in each], "vmap_width": each[0]["vmap_width"],
            "every_buffer": each[0]["every_buffer"]}


# A slice of a paper-scale figure as the CPU gallery runs it (`--suite gallery`): Restricted
# Valiant Fig. 4's Dragonfly a=12 h=6 p=6 with the FOGSim router (100-packet buffers, 850 MB
# a simulation), RVAL with one injection buffer under a random server permutation.
GALLERY_SLICE = ["+experiment=valiant/fig4", "scale=paper", "line=RVAL_ib1", "~experiment.claims",
                 "~experiment.bounds", *(f"~experiment.patterns.{p}" for p in ("UN", "ADV", "HOT")),
                 "sim.loads=[0.4,0.8]", "sim.seeds=[1,2]"]


def suite_gallery(args):
    """GALLERY_SLICE end to end on every core, with the extra overrides given as names
    (e.g. sim.sub_batch=1) and `--cycles` measured cycles a point (default the paper's 15,000
    after 5,000 of warm-up), each run with an empty compilation cache of its own: wall and CPU
    time, compilations, accepted load per point; with `--against REV` this checkout and
    revision REV taking turns over `--repeats` rounds."""
    overrides = GALLERY_SLICE + ([f"sim.measure={args.cycles}"] if args.cycles else []) + list(args.names)
    jobs = {" ".join(overrides): overrides}
    if args.against:
        return jobs_against(args.against, args.repeats, jobs, compilation_cache=True)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [{"job": name, **run_app(here, job, compilation_cache=True)} for name, job in jobs.items()]


def suite_points(args):
    """Each point in a fresh process pinned to one core, end to end through `simulate`."""
    rows = []
    for routing, vcs, load in (("minimal", 4, 0.1), ("minimal", 4, 0.5), ("minimal", 4, 1.0), ("polarized", 13, 0.5)):
        rows.append(result(start(f"one_point({routing!r}, {vcs}, {load}, {args.cycles or 4000})", FIRST_CORE)))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def one_point(routing: str, vcs: int, load: float, cycles: int) -> dict:
    """One point on RRG 720/17/7 (uniform, seed 1) through `simulate`: wall time and the
    compilations of the chunk (XLA backend compilations of more than half a second)."""
    from jaxnet import build
    from jaxnet.sim.run import simulate
    from jaxnet.sim.spec import SimSpec
    from jaxnet.traffic import build_traffic

    count_compilations()
    network = build.network_of({"topology": RRG720, "routing": {"name": routing}, "router": {"vcs": vcs}})
    spec = SimSpec(warmup=cycles // 4, measure=cycles - cycles // 4, chunk=500)
    start = time.perf_counter()
    rows, _ = simulate(network, [build_traffic({"name": "uniform"}, network.topo, 1)], [(load, 1)], spec)
    wall = time.perf_counter() - start
    chunk = [s for s in COMPILATIONS if s > 0.5]
    return {"routing": routing, "vcs": vcs, "load": load, "cycles": cycles, "wall_s": round(wall, 1),
            "chunk_compilations": len(chunk), "chunk_compile_s": round(sum(chunk), 1),
            "router_cycles_per_s_end_to_end": round(network.topo.n_routers * cycles / wall),
            "accepted_load": rows[0]["accepted_load"]}


STUDY_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # the Polarized paper's
SIZING_LINES = (("minimal", 4), ("polarized", 13))  # routing, VCs


def suite_sizing(args):
    """A study's batch on the default device: RRG 720/17/7 under uniform traffic, the
    Polarized paper's loads 0.1..1.0 x seeds 1, 2 (as an accelerator runs a job: vmapped as
    one batch), end to end for `--cycles` per point (default 5000), three ways: lists sized
    once for a saturated network, grown with the counts, and grown in two batches split by
    load (0.1-0.5 and 0.6-1.0; the lists of a vmapped batch hold its fullest point's):
    wall time, router-cycles/s, and whether the rows are those of the first way."""
    from jaxnet import build
    from jaxnet.sim.run import simulate
    from jaxnet.sim.spec import SimSpec
    from jaxnet.traffic import build_traffic

    cycles = args.cycles or 5000
    grid = [(load, seed) for load in STUDY_LOADS for seed in (1, 2)]
    ways = {"once": [grid], "grow": [grid], "grow, split by load": [grid[:10], grid[10:]]}
    report = []
    for routing, vcs in SIZING_LINES:
        network = build.network_of({"topology": RRG720, "routing": {"name": routing}, "router": {"vcs": vcs}})
        first = None
        for way, batches in ways.items():
            start, rows = time.perf_counter(), []
            for points in batches:
                spec = SimSpec(warmup=cycles // 5, measure=cycles - cycles // 5, chunk=500, vmap_width=None,
                               sub_batch=len(points), list_sizing=way.split(",")[0])
                traffic = [build_traffic({"name": "uniform"}, network.topo, seed) for _, seed in points]
                rows += simulate(network, traffic, points, spec)[0]
            wall = time.perf_counter() - start
            results = [{k: v for k, v in row.items() if not k.endswith("_s") and k not in HOW_ROWS} for row in rows]
            first = first or results
            report.append({"routing": routing, "vcs": vcs, "points": len(grid), "cycles": cycles, "way": way,
                           "wall_s": round(wall, 1), "router_cycles_per_s": round(network.topo.n_routers * cycles * len(grid) / wall),
                           "rows_identical": results == first})
            print(json.dumps(report[-1]), flush=True)
            write_report(args, report)
    return report


SATURATED_LINES = SIZING_LINES + (("valiant", 8),)


def suite_saturated(args):
    """What lists sized `once` cost past saturation against the capacities `grow` settles
    on: each line's point at load 1.0 after `--cycles` of warm-up, chunks of 500 cycles
    alternating between the two sets of capacities (each compiled before it is timed)."""
    import jax

    from jaxnet.sim import capacities
    from jaxnet.sim.run import advance_chunk

    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    chunk, report = 500, []
    for routing, vcs in SATURATED_LINES:
        warm = warmed_up(RRG720, {"name": routing}, {"vcs": vcs}, 1.0, 1, chunk=chunk,
                         warmup_chunks=(args.cycles or 13000) // chunk)
        network, state, sleep = warm.network, warm.state, warm.sleep
        tiers = {"grown": warm.tier, "once": capacities.once(network.model, warm.lists, 1.0, network.route_hops)}
        walls = {way: [] for way in tiers}
        for way, tier in tiers.items():  # compiles; a list that overflows grows as in a run
            state, sleep, peak, tiers[way] = advance_chunk(network, warm.params, state, sleep, chunk, warm.width,
                                                           warm.lists, tier)
        for _ in range(args.repeats):
            for way, tier in tiers.items():
                start = time.perf_counter()
                for _ in range(args.chunks):
                    state, sleep, peak, _ = advance_chunk(network, warm.params, state, sleep, chunk, warm.width,
                                                          warm.lists, tier)
                jax.block_until_ready(state)
                walls[way].append(time.perf_counter() - start)
        rate = {way: round(RRG720["routers"] * chunk * args.chunks / min(w)) for way, w in walls.items()}
        report.append({"routing": routing, "vcs": vcs, "load": 1.0, "warmup_cycles": chunk * (warm.warmup_chunks + 1),
                       "cycles": chunk * args.chunks, "rounds": args.repeats, "servers": network.layout.servers,
                       "in_use_peak": list(map(int, peak)),
                       **{f"lists_{way}": list(map(int, tier)) for way, tier in tiers.items()},
                       **{f"router_cycles_per_s_{way}": r for way, r in rate.items()},
                       "once_over_grown": round(rate["once"] / rate["grown"], 3)})
        print(json.dumps(report[-1]), flush=True)
        write_report(args, report)
    return report


def suite_builds(args):
    """What a lease spends building networks before simulating: each figure's jobs at paper
    scale in order, every distinct network through `build.network_of` (a sweep's routings
    share the topology through the cache) and its patterns' traffic for the first seed."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
    from gallery import distinct_networks, figure_records, paper_figures_left

    from jaxnet import build

    names = args.names or paper_figures_left(figure_records())
    report = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["JAXNET_NETWORK_CACHE"] = cache
        for name in names:
            for job, groups in distinct_networks(name, "paper"):
                row = {"figure": name, "topology": job["topology"], "routing": job["routing"]["name"]}
                start = time.perf_counter()
                try:
                    network = build.network_of(groups)
                except ValueError as err:  # e.g. path weights that the app computes first
                    report.append({**row, "not_built": str(err)})
                    continue
                row.update(network_s=round(time.perf_counter() - start, 1), vcs=network.layout.vcs, traffic_s={})
                for label, pattern in job["patterns"].items():
                    start = time.perf_counter()
                    build.traffic(pattern, network.topo, job["sim"]["seeds"][0])
                    row["traffic_s"][label] = round(time.perf_counter() - start, 1)
                report.append(row)
                print(json.dumps(report[-1]), flush=True)
                write_report(args, report)
    return report


# row columns that say how a point was batched, not what was simulated
HOW_ROWS = ("work_lists", "batch", "sub_batch", "vmap_width")


GPU_BATCHES = (1, 8, 32, 128, 512)


def gpu_cases() -> list[tuple]:
    """(topology, routing, VCs, batch, active_lists) in the order the suite measures them: the
    figures that matter most first (issue 13's target, RRG 720 minimal at batch >= 128; then
    every buffer every cycle, without the lists, for comparison), so that a lease that ends
    early still gives them."""
    first = [(RRG720, "minimal", 4, 1, "auto"), (RRG720, "minimal", 4, 128, "auto"),
             (RRG720, "polarized", 13, 128, "auto"), (RRG720, "minimal", 4, 512, "auto"),
             (DF876, "dragonfly_minimal", 3, 128, "auto"), (RRG720, "polarized", 13, 1, "auto"),
             (DF876, "dragonfly_minimal", 3, 1, "auto"), (RRG720, "minimal", 4, 128, None),
             (RRG720, "minimal", 4, 512, None)]
    rest = [(topology, routing, vcs, batch, "auto") for topology, routing, vcs in (
        (RRG720, "minimal", 4), (RRG720, "polarized", 13), (DF876, "dragonfly_minimal", 3)) for batch in GPU_BATCHES]
    return first + [case for case in rest if case not in first]


def backends_agree(points: int = 4) -> dict:
    """Hamming 4x4, minimal, `points` seeds at load 0.7 through `simulate` on the default
    device and on the CPU in this process: the rows must be identical (the engine is integer
    arithmetic and counter-based random numbers: a backend must not change a result)."""
    import jax

    from jaxnet import build
    from jaxnet.sim.run import simulate
    from jaxnet.sim.spec import SimSpec
    from jaxnet.traffic import build_traffic

    topology, routing, vcs = SMALL["hamming 4x4 p=3"]
    network = build.network_of({"topology": topology, "routing": {"name": routing}, "router": {"vcs": vcs}})
    spec = SimSpec(warmup=500, measure=1500, chunk=500)
    grid = [(0.7, seed) for seed in range(1, points + 1)]
    traffic = [build_traffic({"name": "uniform"}, network.topo, seed) for _, seed in grid]
    rows = {}
    for device in (jax.devices()[0], jax.devices("cpu")[0]):
        with jax.default_device(device):
            rows[device.platform] = [{k: v for k, v in row.items() if k != "device" and not k.endswith("_s")}
                                     for row in simulate(network, traffic, grid, spec)[0]]
    default, cpu = rows[jax.devices()[0].platform], rows["cpu"]
    return {"check": "backends_agree", "network": "hamming 4x4 p=3", "points": points,
            "devices": sorted(rows), "identical_rows": default == cpu,
            "accepted_load": [row.get("accepted_load") for row in default]}


def suite_gpu(args):
    """`gpu_cases` on the default device, as many as `--budget-s` allows (the rest are
    listed as skipped), each row written to the JSON as soon as it is measured; first the
    check that the device's results are the CPU's."""
    started, rows = time.perf_counter(), []
    try:
        rows.append(backends_agree())
    except Exception as err:
        rows.append({"check": "backends_agree", "error": f"{type(err).__name__}: {str(err)[:300]}"})
    print(json.dumps(rows[-1]), flush=True)
    write_report(args, rows)
    for topology, routing, vcs, batch, lists in gpu_cases():
        case = {"topology": topology["name"], "routing": routing, "vcs": vcs, "batch": batch,
                "every_buffer": lists is None}
        if args.budget_s and time.perf_counter() - started > args.budget_s:
            rows.append({**case, "skipped": f"past --budget-s {args.budget_s}"})
        else:
            try:
                rows.append(measure(topology, {"name": routing}, {"vcs": vcs}, 0.5, batch, chunk=200,
                                    chunks=args.chunks, repeats=args.repeats, active_lists=lists))
            except Exception as err:  # e.g. out of device memory at the largest batches
                rows.append({**case, "error": f"{type(err).__name__}: {str(err)[:300]}"})
        print(json.dumps(rows[-1]), flush=True)
        write_report(args, rows)
    return rows


def suite_memory(args):
    import jax

    from jaxnet import build
    from jaxnet.sim import capacities
    from jaxnet.sim.run import batch_params, compiled_advance, compiled_init
    from jaxnet.sim.spec import SimSpec

    cases = {
        "rrg 720/17/7, polarized 13 VCs": (RRG720, "polarized", {"vcs": 13}),
        "rrg 1224/14/5, polarized 13 VCs": (RRG1224, "polarized", {"vcs": 13}),
        "dragonfly 876, dragonfly_minimal 3 VCs": (DF876, "dragonfly_minimal", {"vcs": 3}),
        "valiant paper dragonfly, 100/200-packet buffers": (
            DF876, {"name": "rval", "base": "dragonfly_minimal"},
            {"vcs": 4, "vc_policy": "dragonfly", "input_buffer": 100, "injection_buffer": 200,
             "output_buffer": 2, "packet_size": 10, "crossbar_speedup": 2}),
    }
    rows = []
    for name, (topology, routing, router) in cases.items():
        topo = build.topology(topology)
        routing_cfg = routing if isinstance(routing, dict) else {"name": routing}
        network = build.network(topo, build.routing(routing_cfg), build.router(router))
        spec = SimSpec(warmup=0, measure=10**9)
        lists = capacities.steps(spec.active_lists, network.layout, 1, spec.total)
        state, sleep = compiled_init(network.layout, capacities.sleeps(network.model, lists))(
            jax.numpy.stack([jax.random.PRNGKey(1)]))
        state_bytes = sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves((state, sleep)))
        params = batch_params([build.traffic({"name": "uniform"}, topo, 1)], [(0.5, 1)], spec, network.layout)
        tier = tuple(options[-1] for options in lists) or None  # the largest lists (every ring)
        compiled = compiled_advance(network.layout, network.routing, 200, 1, capacities.work(lists, tier)).lower(
            network.net, network.tables, params, state, sleep).compile()
        analysis = compiled.memory_analysis()
        temp = int(getattr(analysis, "temp_size_in_bytes", 0)) if analysis else None
        tables = sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves((network.tables, network.net)))
        per_sim = 2 * state_bytes + (temp or 0)  # input and output state of a chunk, temporaries
        rows.append({
            "network": name, "topology": topo.name, "state_mb": round(state_bytes / 2**20, 1),
            "compiled_temporaries_mb": None if temp is None else round(temp / 2**20, 1),
            "tables_mb": round(tables / 2**20, 1), "per_simulation_mb": round(per_sim / 2**20, 1),
            "largest_batch_24_gib_host": int((24 * 2**30 * 0.85 - tables) // per_sim),
            "largest_batch_80_gib_gpu": int((80 * 2**30 * 0.9 - tables) // per_sim),
            "peak_host_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        })
        print(json.dumps(rows[-1]), flush=True)
    return rows


STUDY = ["+experiment=polarized/fig4,polarized/fig5,polarized/fig6", "scale=paper"]


def suite_study(args):
    """The Polarized paper's Figs 4-6 at paper scale as a user runs them (`jaxnet.run`, jobs
    of one network batched together; `--cycles` shortens every point, e.g. on a CPU): wall
    time, router-cycles/s end to end, and the steady-state rate of each line's batch (its
    points' loads in turn, the batch as wide as the study's) for comparison."""
    import jaxnet
    from jaxnet.cli.experiment import compose_jobs
    from jaxnet.cli.sweep import structure_key

    overrides = STUDY + ([f"sim.warmup={args.cycles // 5}", f"sim.measure={args.cycles - args.cycles // 5}"]
                         if args.cycles else [])
    jobs = compose_jobs(overrides)
    groups = {}
    for job in jobs:
        groups.setdefault(structure_key(job), []).append(job)
    with tempfile.TemporaryDirectory(prefix="jaxnet-study-") as out:
        start = time.perf_counter()
        rows = jaxnet.run(overrides, out_dir=out, progress=True)
        wall = time.perf_counter() - start
    from jaxnet import build

    routers = {}
    for members in groups.values():
        network = build.network_of(members[0])  # from the network cache the study filled
        routers[network.topo.name] = network.topo.n_routers
    simulated = {(row["config_id"], row["offered_load"], row["seed"]): row for row in rows}
    router_cycles = sum(int(row["cycles_simulated"]) * routers[row["topology_name"]] for row in simulated.values())
    report = [{"study": " ".join(overrides), "jobs": len(jobs), "batches": len(groups), "points": len(simulated),
               "wall_s": round(wall, 1), "router_cycles": router_cycles,
               "router_cycles_per_s_end_to_end": round(router_cycles / wall)}]
    print(json.dumps(report[-1]), flush=True)
    for members in groups.values():
        job = members[0]
        loads = sorted({float(x) for m in members for x in m["sim"]["loads"]})
        batch = len({(float(x), int(s), label) for m in members for x in m["sim"]["loads"] for s in m["sim"]["seeds"]
                     for label in m["patterns"]})
        # a shortened study's batches are measured in chunks of a quarter of its points' length
        chunk = 200 if not args.cycles else max(50, min(200, args.cycles // 4))
        row = measure(job["topology"], job["routing"], job["router"], loads, batch, chunk=chunk, chunks=args.chunks,
                      repeats=args.repeats)
        report.append({"steady_state": job["line"], **row})
        print(json.dumps(report[-1]), flush=True)
    steady = sum(r["router_cycles_per_s"] for r in report[1:]) / max(1, len(report) - 1)
    report[0]["router_cycles_per_s_steady_mean"] = round(steady)
    report[0]["end_to_end_over_steady"] = round(report[0]["router_cycles_per_s_end_to_end"] / steady, 3)
    return report


SUITES = {"cpu": suite_cpu, "scaling": suite_scaling, "small": suite_small, "points": suite_points,
          "gpu": suite_gpu, "memory": suite_memory, "study": suite_study, "sizing": suite_sizing,
          "saturated": suite_saturated, "builds": suite_builds, "gallery": suite_gallery}


def engine_commit() -> str | None:
    """The commit of the jaxnet measured: its checkout's HEAD, with "+" if tracked files were
    modified; None outside a git checkout."""
    import jaxnet

    where = os.path.dirname(os.path.dirname(os.path.abspath(jaxnet.__file__)))

    def git(*command: str) -> str:
        return subprocess.run(["git", "-C", where, *command], capture_output=True, text=True, check=True).stdout.strip()

    try:
        return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "-uno") else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def write_report(args, rows: list) -> None:
    """The suite's JSON (`args.out`), written atomically: rows so far, and where they ran."""
    import jax

    report = {"suite": args.suite, "engine": engine_commit(), "device": jax.devices()[0].device_kind,
              "jax": jax.__version__, "host": platform.node(), "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d"),
              "results": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(report, f, indent=1)
    os.replace(args.out + ".tmp", args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", choices=sorted(SUITES), default="cpu")
    parser.add_argument("--out", default=None, help="JSON file (default outputs/bench/<suite>.json)")
    parser.add_argument("--chunks", type=int, default=3, help="measured chunks per repeat")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cycles", type=int, default=None,
                        help="cycles per point (--suite scaling, points: default 4000; sizing: 5000; study: the paper's; "
                             "saturated: the warm-up, 13000; gallery: measured, 15000)")
    parser.add_argument("--selection", default="available_first",
                        help="router.selection of --suite cpu (available_first: comparable with earlier runs)")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="--suite gpu: start no new case after this many seconds (a lease's time)")
    parser.add_argument("--against", default=None,
                        help="--suite small, gallery: a git revision whose engine runs the jobs end to end beside this one")
    parser.add_argument("--jobs-only", action="store_true", help="--suite small: only the jobs of --against")
    parser.add_argument("names", nargs="*", help="--suite builds: experiments (default: the gallery's paper-scale list); "
                        "--suite gallery: overrides added to the job")
    args = parser.parse_args()
    for name in ("chunks", "repeats", "cycles"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} {getattr(args, name)}: must be at least 1")
    if args.budget_s is not None and args.budget_s <= 0:
        parser.error(f"--budget-s {args.budget_s}: must be a positive number of seconds")
    if args.against and args.suite not in ("small", "gallery"):
        parser.error("--against goes with --suite small or gallery")
    if args.jobs_only and args.suite != "small":
        parser.error("--jobs-only goes with --suite small")
    if args.names and args.suite not in ("builds", "gallery"):
        parser.error("names go with --suite builds (experiments) or gallery (overrides)")
    if args.jobs_only and not args.against:
        parser.error("--jobs-only needs --against REV (the jobs run beside revision REV)")
    if args.against and subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
                                       cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True).returncode:
        parser.error(f"--against {args.against}: not a commit of this repository")
    args.out = args.out or f"outputs/bench/{args.suite}.json"
    write_report(args, SUITES[args.suite](args))


if __name__ == "__main__":
    main()
