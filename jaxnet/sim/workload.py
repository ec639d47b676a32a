"""Finite workloads on the device: the steps of a `traffic.device.Program` (each server sends a
fixed amount; collectives as dependent steps, `jaxnet.traffic.collective`), run by the
generate phase and by the packets reaching their servers.

A server in step j generates the step's packets one every round(L / load) cycles (at load 1
as fast as its link injects them) while its source queue has room; each packet carries its
step (the record's `STEP` column, which only finite workloads' records have). Its step j + 1
starts the cycle after it has generated the step's packets and the last of the packets of
step j it expects has arrived (its tail reached the server). The workload is complete once
every server is past its last step and every packet has arrived: `Workload.done_at`, the
cycle the last tail arrived, cycles counted from 0, when generation starts.
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core.gather import take_rows
from jaxnet.traffic.device import Program


class Workload(NamedTuple):
    """Where every server is in its program (S servers, J steps; cycles; packets).

    step: int32 [S] the step it is in (its program's steps once done).
    sent: int32 [S] packets of that step it has generated.
    next_at: int32 [S] the earliest cycle it may generate its next packet (pacing).
    received: int32 [S, J] packets of each step that have started towards it on its link.
    arrived: int32 [S, J] the cycle the last of them arrives (tail at the server).
    last_arrival: int32 [] the cycle the last packet consumed so far arrives.
    done_at: int32 [] the cycle the workload completed (the last arrival), -1 until then.
    """

    step: jnp.ndarray
    sent: jnp.ndarray
    next_at: jnp.ndarray
    received: jnp.ndarray
    arrived: jnp.ndarray
    last_arrival: jnp.ndarray
    done_at: jnp.ndarray


def empty_workload(servers: int, steps: int) -> Workload:
    zeros = jnp.zeros(servers, jnp.int32)
    per_step = jnp.zeros((servers, steps), jnp.int32)
    return Workload(zeros, zeros, zeros, per_step, per_step, jnp.int32(0), jnp.int32(-1))


def _now(program: Program, workload: Workload, table):
    """int32 [S]: `table` [S, J] at each server's current step (0 past the last)."""
    steps = table.shape[1]
    value = jnp.take_along_axis(table, jnp.minimum(workload.step, steps - 1)[:, None], axis=1)[:, 0]
    return jnp.where(workload.step < program.steps, value, 0)


def generating(program: Program, workload: Workload, queued, queue_depth: int, generate_until, t):
    """bool [S]: the servers that generate a packet this cycle: packets left in a step that
    has started, their pacing allowing it and room in their source queue (`queued` int32 [S]
    packets in it)."""
    taken = queued
    left = workload.sent < _now(program, workload, program.packets)
    return left & (workload.next_at <= t) & (taken < queue_depth) & (t < generate_until)


def destinations(program: Program, workload: Workload, server, drawn):
    """(destination server, step) int32 [N] of the next packet of the servers `server` (their
    program's destination, or `drawn` from the table where it gives none)."""
    servers = workload.step.shape[0]
    now = take_rows(workload.step, server)
    step = jnp.minimum(now, program.dst.shape[1] - 1)
    first = program.dst[server, step]
    spread = (first + take_rows(workload.sent, server) % program.span[server, step]) % servers
    return jnp.where(first >= 0, spread, drawn), now


def advance(program: Program, workload: Workload, ids, enqueued, sent, to_server, t, size: int, load, drained):
    """The workload after cycle t: the listed servers `ids` (None: every one) that `enqueued`
    a packet, the packets `sent` [K, F] that started towards their server (`to_server`, their
    tail arrives at t + size), then every server whose step is complete moves on. `drained`:
    every packet generated has started towards its server."""
    servers, steps = workload.received.shape
    gap = jnp.maximum(1, jnp.round(size / load)).astype(jnp.int32)
    server = jnp.arange(servers, dtype=jnp.int32) if ids is None else ids
    add = enqueued.astype(jnp.int32)
    sent_now = workload.sent.at[jnp.where(enqueued, server, servers)].add(add, mode="drop")
    next_at = workload.next_at.at[jnp.where(enqueued, server, servers)].set(t + gap, mode="drop")
    arrives = t + size
    slot = jnp.where(to_server, sent[:, pk.DST] * steps + jnp.minimum(sent[:, pk.STEP], steps - 1), servers * steps)
    received = workload.received.reshape(-1).at[slot].add(1, mode="drop").reshape(servers, steps)
    arrived = workload.arrived.reshape(-1).at[slot].max(arrives, mode="drop").reshape(servers, steps)
    last_arrival = jnp.where(jnp.any(to_server), arrives, workload.last_arrival)
    moved = workload._replace(sent=sent_now, received=received, arrived=arrived)
    complete = ((workload.step < program.steps) & (sent_now == _now(program, moved, program.packets))
                & (_now(program, moved, received) >= _now(program, moved, program.expect))
                & (_now(program, moved, arrived) <= t))
    step = workload.step + complete.astype(jnp.int32)
    done = jnp.all(step >= program.steps) & drained & (last_arrival <= t) & (workload.done_at < 0)
    return Workload(step=step, sent=jnp.where(complete, 0, sent_now), next_at=next_at, received=received,
                    arrived=arrived, last_arrival=last_arrival, done_at=jnp.where(done, last_arrival, workload.done_at))
