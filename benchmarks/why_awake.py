"""Why heads are routed past saturation (issue 34, item 3; benchmarks/README.md).

    python benchmarks/why_awake.py

RRG 720/17/7, Polarized 13 VCs, load 1.0, one simulation on one core, after 9,000 cycles of
warm-up: the means over 200 cycles, among the listed waiting rings whose head may move, of
those awake (not asleep since they last requested or arrived), woken by a rise on a
candidate, woken because their margin could have closed, and still asleep. The counts are
read by wrapping `Listed.heads` (a diagnostic: the cycle's results are unchanged)."""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the network and the warm-up are the benchmarks')

from jaxnet.sim import run  # noqa: E402
from jaxnet.sim import work as W  # noqa: E402
from jaxnet.sim.rings import take_rows  # noqa: E402
from jaxnet.sim.route import movable_heads  # noqa: E402

seen = []  # per cycle: the counts of `heads` below
original = W.Listed.heads


def heads(self, model, todo, state, inputs, outputs, kept):
    """`Listed.heads`, reporting (by a callback) why each head that may move is routed or not."""
    out = original(self, model, todo, state, inputs, outputs, kept)
    if todo.sleep is None:
        return out
    t = state.cycle
    waiting, _ = self._waiting(todo.inputs, kept.waiting_in)
    _, movable = movable_heads(model, inputs, state.in_busy, waiting, t)
    asleep, risen, due = W.wake_reasons(model.layout, todo.sleep, outputs, state.out_held, todo.outputs,
                                        kept.freed_out, waiting.ids, t)
    blocked = take_rows(todo.sleep.wake_at, waiting.ids) == W.NEVER  # asleep until a rise
    counts = [movable & ~asleep, movable & asleep & risen, movable & asleep & ~risen & due,
              movable & asleep & ~risen & ~due, movable & asleep & ~risen & ~due & blocked, movable]
    jax.debug.callback(lambda *a: seen.append([int(x) for x in a]), *[jnp.sum(c) for c in counts])
    return out


def main() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    warm = bench.warmed_up(bench.RRG720, {"name": "polarized"}, {"vcs": 13}, 1.0, 1, chunk=1000, warmup_chunks=8)
    W.Listed.heads = heads
    run.compiled_advance.cache_clear()
    state, *_ = run.advance_chunk(warm.network, warm.params, warm.state, warm.sleep, 200, warm.width, warm.lists,
                                  warm.tier)
    jax.block_until_ready(state)
    names = ["awake (requested or new)", "woken by a rise", "woken by margin time", "asleep",
             "  of them blocked (wait for a rise)", "may move (waiting, arrived)"]
    for name, mean in zip(names, np.asarray(seen[-200:]).mean(axis=0)):
        print(f"{name:36s} {mean:10.1f}")


if __name__ == "__main__":
    main()
