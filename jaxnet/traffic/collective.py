"""Finite workloads: each server sends a fixed amount, in steps that may wait for data from
other servers, and the metric is the time until the last packet has arrived (the rows'
`completion_cycles`). `traffic=collective` with `kind`:

  all_to_all                     one step: every server sends `packets` packets to every other
                                 server, in rounds (its k-th packet to server s + 1 + k mod
                                 (S - 1)), and waits for the (S - 1) x packets sent to it.
  ring_allreduce                 2 (S - 1) steps (reduce-scatter, then all-gather) round the
                                 ring of servers in id order: in each, every server sends one
                                 chunk of `packets` packets to the next server; a step starts
                                 once the chunk of the step before has arrived from the
                                 previous server.
  recursive_doubling_allreduce   log2 S steps: in step j every server exchanges its whole
                                 vector of `packets` packets with server s XOR 2^j (S a power
                                 of 2); a step starts once the partner's vector of the step
                                 before has arrived.
  batch                          one step: every server sends `packets` packets to
                                 destinations drawn from `pattern` (any pattern, default
                                 uniform), BookSim's batch mode.

Servers are numbered router-major (the servers of router r are r p .. r p + p - 1). A server
generates its packets one every L / load cycles while its source queue has room (at load 1,
as fast as its link injects them); `jaxnet.sim.workload` runs the steps on the device. The
table that comes with the program is its destination mix (what an open-loop run of it would
draw); batch mode draws its destinations from the pattern's.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import Program, TrafficTable, from_entries, uniform_table

KINDS = ("all_to_all", "ring_allreduce", "recursive_doubling_allreduce", "batch")


def collective(topo: Topology, rng, kind: str = "all_to_all", packets: int = 1, pattern: Mapping | None = None, *,
               build: Callable[..., TrafficTable]) -> TrafficTable:
    """The finite workload `kind` (see the module docstring) with its destination table;
    `build(cfg, topo, rng, where=...)` builds batch mode's pattern (the pattern registry's)."""
    require(kind in KINDS, "traffic.kind", kind, f"one of {list(KINDS)}")
    packets = require_int(packets, "traffic.packets", 1, 2**20)
    require(pattern is None or kind == "batch", "traffic.pattern", pattern, "only with traffic.kind=batch")
    s = topo.n_servers
    servers = np.arange(s)
    if kind == "batch":
        table = build(dict(pattern or {"name": "uniform"}), topo, rng, where="traffic.pattern")
        require(table.program is None, "traffic.pattern", pattern, "an open-loop pattern")
        program = _program(np.full(s, -1), np.ones(s), packets, 0)
        return TrafficTable(table.entry_router, table.entry_server, table.alias_prob, table.alias_index,
                            np.ones(s, np.float32), program)
    if kind == "all_to_all":
        program = _program((servers + 1) % s, np.full(s, s - 1), packets * (s - 1), packets * (s - 1))
        return _with_table(uniform_table(s), program)
    if kind == "ring_allreduce":
        steps = 2 * (s - 1)
        nxt = np.repeat(((servers + 1) % s)[:, None], steps, axis=1)
        return _with_table(_destination_mix(topo, nxt), _program(nxt, np.ones_like(nxt), packets, packets))
    require(s & (s - 1) == 0, "traffic.kind", kind,
            f"recursive doubling needs a power of 2 servers ({topo.n_servers} on {topo.name})")
    partners = servers[:, None] ^ (1 << np.arange(s.bit_length() - 1))[None, :]
    return _with_table(_destination_mix(topo, partners), _program(partners, np.ones_like(partners), packets, packets))


def _program(dst, span, packets, expect) -> Program:
    """A Program from per-step destinations [S, J] (or [S]: one step) and packet counts."""
    dst = np.asarray(dst, np.int64)
    dst = dst[:, None] if dst.ndim == 1 else dst
    full = lambda x: np.broadcast_to(np.asarray(x, np.int64).reshape(-1, 1) if np.ndim(x) == 1 else x,  # noqa: E731
                                     dst.shape).astype(np.int32)
    return Program(dst.astype(np.int32), full(span), full(packets), full(expect))


def _destination_mix(topo: Topology, dst: np.ndarray) -> TrafficTable:
    """The table drawing each server's program destinations [S, J] in proportion."""
    p = topo.servers_per_router
    return from_entries(dst // p, dst % p, np.ones(dst.shape))


def _with_table(table: TrafficTable, program: Program) -> TrafficTable:
    return TrafficTable(table.entry_router, table.entry_server, table.alias_prob, table.alias_index, table.rate,
                        program)
