"""Where a cycle's time goes: profile one compiled chunk of one simulation and charge each
XLA operation's time to the engine source that produced it (benchmarks/README.md).

    python benchmarks/profile.py [--network rrg720] [--routing minimal] [--vcs 4] [--load 0.5]
                              [--base dragonfly_minimal] [--router '{"input_buffer": 100}']
                              [--cycles 200] [--batch 1] [--every-buffer] [--warmup-chunks 3] [--top 30]
                              [--out outputs/bench/profile.json] [--hlo outputs/bench/chunk.hlo.txt]

Warm-up chunks run until the capacities of the lists of buffers in use settle
(`bench.warmed_up`, as `benchmarks/bench.py` measures), then one chunk of `--cycles` cycles runs under
`jax.profiler`: again, up to PROFILE_ATTEMPTS times, while its lists overflow (an overflowed
chunk is redone with larger lists, compiled inside the profiled wall time; the report's
`profiled_chunks` and `profiled_chunk_redone`). Each XLA operation of the trace (a fusion, a scatter, a copy) is mapped
through the compiled HLO's stack frames to the Python call chain that emitted it, and its
time per cycle is summed per phase (the function `step.cycle_step` called: route,
release_slots, the work lists' heads, links, ...) and per call chain (three frames from cycle_step down). A fusion is
charged to its root operation's chain: it may also contain work from elsewhere (XLA fuses
producers into their consumers, sometimes into several). Operations XLA made up without a
source line are listed by their kind; on an accelerator, the device's memory copies and
memsets (trace events that are no operation of the module) are listed by their event name.
The costliest operations are also kept by their HLO name (`by_operation_us_per_cycle`); with
`--hlo` the compiled module's text is written too, to see what one of them does. Networks (`bench.NETWORKS`): `rrg720` (RRG 720/17/7, the
papers'), `rrg1224`, `df876` (Dragonfly a=12 h=6, with --routing dragonfly_minimal) and the
small ones of `benchmarks/bench.py` (`hamming`, `dragonfly`, `slimfly`, `rrg64`).
"""
from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the networks and the warm-up rule are the benchmarks')


# The costliest XLA operations kept by name in the report (`by_operation_us_per_cycle`).
OPERATIONS_KEPT = 40
# Chunks profiled at most until one runs without its lists overflowing (`profiled_chunks`).
PROFILE_ATTEMPTS = 4


def hlo_call_chains(hlo: str) -> dict[str, list[str]]:
    """Per HLO instruction name of a compiled module's text, its Python call chain
    ("function:line", outermost first; empty where XLA made the instruction up), from the
    module's stack-frame tables."""
    def table(name: str, following: str) -> str:
        return hlo.split(f"\n{following}\n")[0].split(f"\n{name}\n")[1]

    functions = dict(re.findall(r'^(\d+) "(.*)"$', table("FunctionNames", "FileLocations"), re.M))
    locations = {i: (functions[f], int(line)) for i, f, line in re.findall(
        r"^(\d+) \{file_name_id=\d+ function_name_id=(\d+) line=(\d+)", table("FileLocations", "StackFrames"), re.M)}
    # a frame's parent_frame_id in the text is its parent's number + 1 (a root's is 1)
    frames = {i: (loc, int(parent) - 1) for i, loc, parent in re.findall(
        r"^(\d+) \{file_location_id=(\d+) parent_frame_id=(\d+)", hlo.split("\nStackFrames\n")[1], re.M)}

    def chain(frame: int) -> list[str]:
        out = []
        while str(frame) in frames:
            location, frame = frames[str(frame)]
            function, line = locations[location]
            out.append(f"{function}:{line}")
        return out[::-1]

    chains = {name: [] for name in re.findall(r"^\s+%([\w.\-]+) = ", hlo, re.M)}
    for name, frame in re.findall(r"^\s+%([\w.\-]+) = .*?stack_frame_id=(\d+)", hlo, re.M):
        chains[name] = chains[name] or chain(int(frame))
    return chains


def profile(network_name: str, routing: str, vcs: int, load: float, cycles: int, batch: int = 1,
            every_buffer: bool = False, warmup_chunks: int = 3, base: str | None = None,
            router: dict | None = None, hlo_out: str | None = None) -> dict:
    """Per-cycle microseconds of one chunk of `batch` simulations (vmapped) after warm-up:
    by phase, by call chain, in all (every_buffer: without the work lists, as
    `sim.active_lists: null` runs); at least `warmup_chunks` chunks of warm-up (a saturating
    network fills for thousands of cycles). `base`: the routing's base scheme; `router`:
    router settings over `vcs`; `hlo_out`: a file for the compiled chunk's HLO text, in which
    the operations of `by_operation_us_per_cycle` can be looked up."""
    import jax

    from jaxnet.sim import capacities
    from jaxnet.sim.run import advance_chunk, compiled_advance
    from jaxnet.sim.state import state_bytes

    routing_config = {"name": routing, **({"base": base} if base else {})}
    warm = bench.warmed_up(bench.NETWORKS[network_name], routing_config, {"vcs": vcs, **(router or {})}, load, batch,
                           chunk=cycles,
                           warmup_chunks=warmup_chunks, vmap_width=1 if batch == 1 else None,
                           active_lists=None if every_buffer else "auto")
    topo, network, params, lists, width = warm.topo, warm.network, warm.params, warm.lists, warm.width
    # compiled: the chunk profiled
    state, sleep, _, tier = advance_chunk(network, params, warm.state, warm.sleep, cycles, width, lists, warm.tier)
    jax.block_until_ready(state)
    for attempt in range(1, PROFILE_ATTEMPTS + 1):
        # a chunk whose lists overflow is redone with larger ones, compiled in the chunk's
        # wall and traced twice: profiled again (that tier now compiled) until one runs once
        with tempfile.TemporaryDirectory() as trace_dir:
            jax.profiler.start_trace(trace_dir)
            start, compiled = time.perf_counter(), len(bench.COMPILATIONS)
            before, asleep = state, sleep
            state, sleep, _, used = advance_chunk(network, params, state, sleep, cycles, width, lists, tier)
            jax.block_until_ready(state)
            wall = time.perf_counter() - start  # the chunk under the profiler, not the trace's start and write
            jax.profiler.stop_trace()
            trace = glob.glob(os.path.join(trace_dir, "**", "*.trace.json.gz"), recursive=True)
            if not trace:
                raise RuntimeError(f"jax.profiler wrote no trace under {trace_dir}")
            with gzip.open(trace[0]) as f:
                events = json.load(f)["traceEvents"]
        redone = used != tier or len(bench.COMPILATIONS) > compiled
        if not redone:
            break
        tier = used
    advance = compiled_advance(network.layout, network.routing, cycles, width, capacities.work(lists, used))
    hlo = advance.lower(network.net, network.tables, params, before, asleep).compile().as_text()
    if hlo_out:
        with open(hlo_out, "w") as f:
            f.write(hlo)
    chains = hlo_call_chains(hlo)

    accelerator = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                   and "/device:" in str(e.get("args", {}).get("name", "")) and "CPU" not in e["args"]["name"]}
    if accelerator:  # a GPU's kernels may be named after their HLO instruction with "_" for "."
        for name, chain in list(chains.items()):
            chains.setdefault(name.replace(".", "_"), chain)
    by_phase, by_chain, by_operation, total = collections.Counter(), collections.Counter(), collections.Counter(), 0.0
    named_operations, operations = set(), set()  # distinct operations run: a count that timing noise cannot move
    kernel_runs = sum(e.get("ph") == "X" and e.get("pid") in accelerator for e in events)
    for event in events:  # the compiled module's operations, each event one run of one
        if event.get("ph") != "X" or (accelerator and event.get("pid") not in accelerator):
            continue
        us = event.get("dur", 0) / cycles
        if event["name"] not in chains:
            if accelerator and re.search("memcpy|memset", event["name"], re.I):  # no operation of the module
                by_phase[f"(device copies: {event['name'][:60]})"] += us
                total += us
            continue
        total += us
        by_operation[event["name"]] += us
        chain = chains[event["name"]]
        operations.add(event["name"])
        step = next((i for i, frame in enumerate(chain) if frame.startswith("cycle_step:")), None)
        if not chain:
            by_phase[f"(no source line: {event['name'].split('.')[0]})"] += us
        elif step is None:
            by_phase["(outside the cycle: the chunk's set-up)"] += us
        else:
            named_operations.add(event["name"])
            below = chain[step:step + 4]
            by_phase[below[1].split(":")[0] if len(below) > 1 else below[0]] += us
            by_chain[" > ".join(below)] += us
    return {"network": topo.name, "routing": routing_config, "router": {"vcs": vcs, **(router or {})}, "load": load,
            "cycles": cycles, "batch": batch, "state_bytes_per_simulation": state_bytes(before) // batch,
            "lists": list(map(int, used or ())), "wall_s_profiled_chunk": round(wall, 3),
            "profiled_chunks": attempt, "profiled_chunk_redone": redone,
            "us_per_cycle_in_operations": round(total, 1),
            "us_per_cycle_wall_profiled": round(wall * 1e6 / cycles, 1),  # > operations: the device waited
            "operations_run": len(operations), "operations_in_a_phase": len(named_operations),
            "device": jax.devices()[0].device_kind,
            "accelerator_kernels_per_cycle": round(kernel_runs / cycles, 1) if accelerator else None,
            "by_phase_us_per_cycle": {k: round(v, 1) for k, v in by_phase.most_common()},
            "by_call_chain_us_per_cycle": {k: round(v, 1) for k, v in by_chain.most_common()},
            "by_operation_us_per_cycle": {k: round(v, 1) for k, v in by_operation.most_common(OPERATIONS_KEPT)}}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", choices=sorted(bench.NETWORKS), default="rrg720")
    parser.add_argument("--routing", default="minimal")
    parser.add_argument("--vcs", type=int, default=4)
    parser.add_argument("--base", help="routing.base (schemes built on another: rval on a Dragonfly)")
    parser.add_argument("--router", type=bench.json_object, default={},
                        help="router settings, a JSON object (over --vcs)")
    parser.add_argument("--load", type=float, default=0.5)
    parser.add_argument("--cycles", type=int, default=200, help="cycles per chunk (warm-up and profiled)")
    parser.add_argument("--batch", type=int, default=1, help="simulations vmapped together (seeds 1..)")
    parser.add_argument("--every-buffer", action="store_true", help="without the work lists (sim.active_lists: null)")
    parser.add_argument("--warmup-chunks", type=int, default=3, help="chunks of warm-up at least (before the lists settle)")
    parser.add_argument("--top", type=int, default=30, help="call chains printed")
    parser.add_argument("--out", default="outputs/bench/profile.json")
    parser.add_argument("--hlo", help="also write the compiled chunk's HLO text here (to look up an operation)")
    args = parser.parse_args()
    for name in ("cycles", "batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} {getattr(args, name)}: must be at least 1")
    if not 0 < args.load <= 1:
        parser.error(f"--load {args.load}: must be in (0, 1] (phits/cycle/server, as sim.loads)")
    try:
        report = profile(args.network, args.routing, args.vcs, args.load, args.cycles, args.batch, args.every_buffer,
                         args.warmup_chunks, args.base, args.router, args.hlo)
    except ValueError as error:  # a routing, VC count or load the network does not take
        parser.error(str(error))
    print(f"{report['network']} {args.routing} {report['router']['vcs']} VCs, load {args.load}: "
          f"{report['us_per_cycle_in_operations']:.0f} us a cycle in XLA operations "
          f"(wall {report['us_per_cycle_wall_profiled']:.0f} us), lists {report['lists']}")
    if report["profiled_chunk_redone"]:
        print(f"warning: the lists overflowed in each of {PROFILE_ATTEMPTS} profiled chunks: the profile includes "
              "a chunk redone and its compilation (try more --warmup-chunks)")
    for title, key, count in (("phase", "by_phase_us_per_cycle", None), ("call chain", "by_call_chain_us_per_cycle", args.top)):
        print(f"\nus/cycle  {title}")
        for name, us in list(report[key].items())[:count]:
            print(f"{us:8.1f}  {name}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(report, f, indent=1)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
