"""Why heads are routed past saturation (issue 34, item 3; benchmarks/README.md).

    python benchmarks/why_awake.py [--load 1.0] [--out outputs/bench/why_awake.json]

RRG 720/17/7, Polarized 13 VCs, one simulation on one core, after 9,000 cycles of warm-up:
the means over 200 cycles, among the listed waiting rings whose head may move, of those awake
(not asleep since they last requested or arrived), woken by a rise on a candidate, woken
because their margin could have closed, and still asleep; and of the heads routed for each
reason, how many requested an output; and how widely the cycle's rises spread: the routers
and the (router, network port) pairs where an output VC's availability may have risen, and
the sleeping heads at a router with a rise (what a scheme that visits only the routers with
a rise would still read). The counts are read by wrapping `Listed.heads` and `route` (a
diagnostic: the cycle's results are unchanged)."""
from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the network and the warm-up are the benchmarks')

from jaxnet.core.files import write_atomic  # noqa: E402
from jaxnet.sim import run  # noqa: E402
from jaxnet.sim import step as S  # noqa: E402
from jaxnet.sim import work as W  # noqa: E402
from jaxnet.sim.rings import ring_ids, take_rows  # noqa: E402
from jaxnet.sim.route import movable_heads  # noqa: E402

REASONS = ["awake (requested or new)", "woken by a rise", "woken by margin time"]
seen = []  # per cycle: the counts of `heads` below
requested = []  # per cycle: of the heads routed for each of REASONS, how many requested
reason_of_ring = {}  # the cycle's REASONS index per input ring, from `heads` to `route` (same trace)
original_heads, original_route = W.Listed.heads, S.route


def heads(self, model, todo, state, inputs, outputs, kept):
    """`Listed.heads`, reporting (by a callback) why each head that may move is routed or not."""
    out = original_heads(self, model, todo, state, inputs, outputs, kept)
    if todo.sleep is None:
        return out
    t = state.cycle
    waiting, _ = self._waiting(todo.inputs, kept.waiting_in)
    _, movable = movable_heads(model, inputs, state.in_busy, waiting, t)
    asleep, risen, due = W.wake_reasons(model.layout, todo.sleep, outputs, state.out_held, todo.outputs,
                                        kept.freed_out, waiting.ids, t)
    blocked = take_rows(todo.sleep.wake_at, waiting.ids) == W.NEVER  # asleep until a rise
    rose = W.rose_ports(model.layout, todo.outputs, W.may_have_risen(model.layout, outputs, state.out_held,
                                                                     todo.outputs, kept.freed_out, t))
    ports_rose = jax.lax.reduce(rose, jnp.uint32(0), jax.lax.bitwise_or, (1,))  # [R, W]
    router_rose = jnp.any(ports_rose != 0, axis=1)
    at_a_rise = take_rows(router_rose, model.layout.router_of(ring_ids(inputs, waiting.ids)))
    counts = [movable & ~asleep, movable & asleep & risen, movable & asleep & ~risen & due,
              movable & asleep & ~risen & ~due, movable & asleep & ~risen & ~due & blocked, movable,
              router_rose, jax.lax.population_count(ports_rose), movable & asleep & at_a_rise]
    jax.debug.callback(lambda *a: seen.append([int(x) for x in a]), *[jnp.sum(c) for c in counts])
    rings = model.layout.in_vcs
    reason = jnp.where(asleep & risen, 1, jnp.where(asleep & due, 2, 0))
    reason_of_ring["now"] = jnp.zeros(rings + 1, jnp.int32).at[jnp.where(waiting.valid, waiting.ids, rings)].set(reason)
    return out


def route(model, inputs, outputs, out_held, in_busy, listed, seed, t):
    """`route`, reporting how many of the heads routed for each reason requested."""
    requests = original_route(model, inputs, outputs, out_held, in_busy, listed, seed, t)
    if "now" in reason_of_ring:
        reason = take_rows(reason_of_ring.pop("now"), jnp.where(listed.valid, listed.ids, model.layout.in_vcs))
        routed = listed.valid & requests.active
        counts = [jnp.sum(routed & (reason == k) & m) for k in range(len(REASONS)) for m in (True, requests.request)]
        jax.debug.callback(lambda *a: requested.append([int(x) for x in a]), *counts)
    return requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", type=float, default=1.0, help="offered load, in (0, 1]")
    parser.add_argument("--out", default="outputs/bench/why_awake.json")
    args = parser.parse_args()
    if not 0 < args.load <= 1:
        parser.error(f"--load {args.load}: must be in (0, 1]")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    warm = bench.warmed_up(bench.RRG720, {"name": "polarized"}, {"vcs": 13}, args.load, 1, chunk=1000,
                           warmup_chunks=8)
    W.Listed.heads, S.route = heads, route
    run.compiled_advance.cache_clear()
    state, *_ = run.advance_chunk(warm.network, warm.params, warm.state, warm.sleep, 200, warm.width, warm.lists,
                                  warm.tier)
    jax.block_until_ready(state)
    names = [*REASONS, "asleep", "  of them blocked (wait for a rise)", "may move (waiting, arrived)",
             "routers with a rise", "(router, port) pairs with a rise", "asleep at a router with a rise"]
    means = np.asarray(seen[-200:]).mean(axis=0)
    routed = np.asarray(requested[-200:]).mean(axis=0).reshape(len(REASONS), 2)
    for name, mean in zip(names, means):
        print(f"{name:36s} {mean:10.1f}")
    for name, (count, asked) in zip(REASONS, routed):
        print(f"routed, {name:28s} {count:10.1f}, of them requested {asked:10.1f}")
    report = {"engine": bench.engine_commit(), "network": "rrg720", "routing": "polarized", "vcs": 13,
              "load": args.load, "routers": warm.network.topo.n_routers,
              "warmup_cycles": 1000 * (warm.warmup_chunks + 1), "mean_over_cycles": 200,
              "heads": {name.strip(): round(float(m), 1) for name, m in zip(names, means)},
              "routed": {name: round(float(c), 1) for name, (c, _) in zip(REASONS, routed)},
              "requested": {name: round(float(a), 1) for name, (_, a) in zip(REASONS, routed)}}
    write_atomic(args.out, json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
