"""The measurement window of each simulation: after a fixed warm-up (`sim.warmup` cycles),
or from the cycle the point has become stable (`sim.warmup: auto`), and the source queues at
its ends (for `jaxnet.sim.stats.saturated`).

Automatic warm-up. The cycles are cut into windows of `sim.window` cycles; a window counts
the packets whose tail reaches their server in it and their mean message latency. When a
window closes and it agrees with each of the two before, both in packets and in mean
latency (two windows back as well, so that a slow drift is not taken for a steady state),
the measurement window starts with the next window. Two values agree when they differ by at
most `sim.warmup_tolerance` of the larger one, or by at most NOISE standard errors of
their difference, which small networks need: there a window's counts vary by more than the
tolerance at a steady state. A count's variance is taken as the count (Poisson), a mean
latency's as its square over the packets (latencies with a coefficient of variation of one);
both come from exact per-cycle integer sums, so they do not depend on which buffers a cycle
visits. The first window, which starts with an empty network, is never compared, so the
earliest start is after four windows. A point
that is not stable by `sim.warmup_max` starts there. Each point of a batch finds its own
start (the rows' `warmup_cycles`). A window closes `L` cycles (a packet's length) before its
last cycle, when the last of its packets has started on its server link, so the start is
known before any event of the measurement window is counted.
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.sim.stats import Events, Measurement, Stats, queued_packets

NEVER = 1 << 30  # the start of a window not found yet (cycles stay below it)
NOISE = 2.0  # standard errors of a difference that two windows may differ by


class Window(NamedTuple):
    """Where the measurement window of one simulation is (all int32 [] unless said).

    start: first cycle of the measurement window (NEVER until an automatic warm-up ends).
    sums: float32 [2] packets whose tail reached their server in the current window of the
      automatic warm-up, and the sum of their message latencies.
    previous: float32 [2, 2, 2] the two windows before (the last one first): their packets
      and mean latency (row 0) and the variances of those (row 1).
    closed: windows closed so far.
    queued_start, queued_end: packets in the source queues when the measurement window
      started and when it ended.
    """

    start: jnp.ndarray
    sums: jnp.ndarray
    previous: jnp.ndarray
    closed: jnp.ndarray
    queued_start: jnp.ndarray
    queued_end: jnp.ndarray


def empty_window() -> Window:
    zero = jnp.int32(0)
    return Window(jnp.int32(NEVER), jnp.zeros(2, jnp.float32), jnp.zeros((2, 2, 2), jnp.float32), zero, zero, zero)


def start_of(window: Window, measurement: Measurement, warmup):
    """The measurement window's first cycle: `warmup` (a fixed warm-up), or what the automatic
    warm-up found so far (NEVER before)."""
    return window.start if measurement.auto_warmup else warmup


def advance(window: Window, measurement: Measurement, stats: Stats, events: Events, t, size: int, warmup,
            measure) -> Window:
    """The window after cycle t (`stats` already counts its events)."""
    if measurement.auto_warmup:
        window = _watch(window, measurement, events, t, size)
    start = start_of(window, measurement, warmup)
    queued = queued_packets(stats, events.waiting)
    return window._replace(
        start=start,
        queued_start=jnp.where(t + 1 == start, queued, window.queued_start),
        queued_end=jnp.where(t + 1 == start + measure, queued, window.queued_end))


def _watch(window: Window, measurement: Measurement, events: Events, t, size: int) -> Window:
    """The automatic warm-up after cycle t: the packets that started on their server link
    count in the window their tail arrives in (t + size); a window closes when its last
    one has started."""
    consumed = events.to_server
    latency = jnp.sum(jnp.where(consumed, t + size - events.sent[:, pk.CREATED], 0))
    sums = window.sums + jnp.stack([jnp.sum(consumed, dtype=jnp.int32), latency]).astype(jnp.float32)
    packets = sums[0]
    mean = sums[1] / jnp.maximum(packets, 1)
    now = jnp.stack([jnp.stack([packets, mean]), jnp.stack([packets, mean * mean / jnp.maximum(packets, 1)])])
    before = window.previous  # [2 windows, value | variance, packets | mean]
    allowed = jnp.maximum(measurement.tolerance * jnp.maximum(now[0], before[:, 0]),
                          NOISE * jnp.sqrt(now[1] + before[:, 1]))
    stable = jnp.all(jnp.abs(now[0] - before[:, 0]) <= allowed) & (window.closed >= 3)
    boundary = t + size + 1
    closes = boundary % measurement.window == 0
    found = (window.start == NEVER) & closes & (stable | (boundary >= measurement.warmup_max))
    return window._replace(
        start=jnp.where(found, boundary, window.start),
        sums=jnp.where(closes, 0.0, sums),
        previous=jnp.where(closes, jnp.stack([now, before[0]]), before),
        closed=window.closed + closes.astype(jnp.int32))

