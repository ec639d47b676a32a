"""The device side of traffic: `TrafficTable`s stacked for a batch and sampled per packet.

A batch of simulations may use different patterns or seeds as long as the tables have the
same shape; `stack_tables` pads them to the widest. Destinations are drawn with the alias
method (two table reads per draw whatever the number of entries) from counter-based random
numbers, so a simulation draws the same destinations alone or in a batch.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core import rng
from jaxnet.core.validate import require
from jaxnet.traffic.base import UNIFORM, UNIFORM_OTHER_ROUTER, TrafficTable


class Program(NamedTuple):
    """A finite workload's `traffic.base.Program` on device: dst, span, packets, expect int32
    [S, J] (J: the most steps in the batch; a program's steps past its own send nothing),
    steps int32 [] its own steps."""

    dst: jnp.ndarray
    span: jnp.ndarray
    packets: jnp.ndarray
    expect: jnp.ndarray
    steps: jnp.ndarray


class Traffic(NamedTuple):
    """A `TrafficTable` on device (fields as there: [S, K] entries, [S] rates; program: a
    `Program`, or None for open-loop traffic)."""

    entry_router: jnp.ndarray
    entry_server: jnp.ndarray
    alias_prob: jnp.ndarray
    alias_index: jnp.ndarray
    rate: jnp.ndarray
    program: Program | None = None


def stack_tables(tables: Sequence[TrafficTable]) -> Traffic:
    """One `Traffic` with a leading batch axis, tables padded to the same number of entries
    (and programs to the same number of steps)."""
    width = max(t.n_entries for t in tables)
    finite = {t.program is not None for t in tables}
    require(len(finite) == 1, "traffic", "a batch of finite workloads and open-loop patterns",
            "one kind per batch: finite workloads (traffic=collective) and open-loop patterns run in separate jobs")
    steps = max(t.program.steps for t in tables) if finite == {True} else 0

    def padded(t: TrafficTable) -> Traffic:
        extra = width - t.n_entries
        pad = lambda a, value, n=extra: np.pad(a, ((0, 0), (0, n)), constant_values=value)  # noqa: E731
        program = None
        if t.program is not None:  # steps past a program's own send and expect nothing
            more, own = steps - t.program.steps, t.program
            program = Program(pad(own.dst, 0, more), pad(own.span, 1, more), pad(own.packets, 0, more),
                              pad(own.expect, 0, more), np.int32(own.steps))
        # padded entries are never drawn: their keep probability is 0 and alias -> entry 0
        return Traffic(pad(t.entry_router, 0), pad(t.entry_server, -1), pad(t.alias_prob, 0.0),
                       pad(t.alias_index, 0), t.rate, program)

    return jax.tree_util.tree_map(lambda *xs: jnp.asarray(np.stack(xs)), *map(padded, tables))


def sample_destinations(traffic: Traffic, servers_per_router: int, seed, cycle, rows):
    """(server, router) int32 [N] destinations drawn from the pattern for the sources `rows`
    (int32 [N] server ids): a source draws the same destination whatever else is drawn."""
    s, k = traffic.alias_prob.shape
    p = servers_per_router
    column = rng.below(rng.random_bits_at(seed, cycle, rng.RNG_ALIAS_COLUMN, rows), k)
    keep = rng.uniform01(rng.random_bits_at(seed, cycle, rng.RNG_ALIAS_COIN, rows)) < traffic.alias_prob[rows, column]
    entry = jnp.where(keep, column, traffic.alias_index[rows, column])
    router = traffic.entry_router[rows, entry]
    server = traffic.entry_server[rows, entry]
    pick = rng.random_bits_at(seed, cycle, rng.RNG_SERVER, rows)
    anywhere = rng.below(pick, s - 1)  # any server but the source itself
    anywhere = jnp.where(anywhere >= rows, anywhere + 1, anywhere)
    own_first = (rows // p) * p
    remote = rng.below(pick, s - p)  # any server on another router
    remote = jnp.where(remote >= own_first, remote + p, remote)
    at_router = router * p + jnp.where(server >= 0, server, rng.below(pick, p))
    dst = jnp.where(router == UNIFORM, anywhere, jnp.where(router == UNIFORM_OTHER_ROUTER, remote, at_router))
    return dst, dst // p
