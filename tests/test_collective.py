"""Finite workloads (traffic=collective, jaxnet.sim.workload): each server sends a fixed
amount in dependent steps, and the rows carry the completion time."""
import networkx as nx
import numpy as np
import pytest
from conftest import make_network, simulate_cfg

from jaxnet.sim.run import simulate
from jaxnet.sim.spec import SimSpec
from jaxnet.traffic import build_traffic

L = 16
RUN = SimSpec(warmup=0, measure=4000, chunk=100)


@pytest.fixture(scope="module")
def complete4():
    """4 routers, each linked to every other, one server each: no link is shared by two pairs."""
    return make_network(nx.complete_graph(4), servers_per_router=1, vcs=2)


def test_all_to_all_completes_at_the_injection_bound_within_one_latency(complete4):
    """All-to-all, m packets per pair: each server sends and receives N = 3 m packets, each
    round of its schedule a permutation, so its link is the bottleneck: completion is N L (a
    packet every L cycles) plus at most one packet's zero-load latency. That latency is
    L + H + 2 (docs/engine.md: L + H from the head entering the first router to the tail
    reaching the server, after a cycle in the source queue and one on the server link), so
    the last packet, generated at (N - 1) L, arrives at (N - 1) L + L + 3."""
    zero_load = L + 1 + 2
    for m in (1, 4):
        rows, state = simulate_cfg(complete4, {"name": "collective", "kind": "all_to_all", "packets": m},
                                   [(1.0, 1)], RUN)
        row, n = rows[0], 3 * m
        assert row["message_latency"] == zero_load  # the least there is: no packet ever waited
        assert row["complete"] and row["packets_per_server"] == n
        assert n * L <= row["completion_cycles"] <= n * L + zero_load
        assert row["completion_cycles"] == (n - 1) * L + zero_load
        assert row["effective_bandwidth"] == pytest.approx(n * L / row["completion_cycles"])
        received = np.asarray(state.workload.received)[0]
        assert received.tolist() == [[n]] * 4 and np.asarray(state.workload.step)[0].tolist() == [1] * 4


def test_steps_wait_for_their_inputs(complete4):
    """Recursive doubling on 4 servers: 2 steps, each sending the whole vector v to the partner
    and waiting for the partner's: the steps run one after the other, so completion is at least
    2 ((v - 1) L + latency), twice an all-to-all's share of the same packets; a ring allreduce
    takes 2 (S - 1) = 6 dependent steps of one chunk."""
    v = 3
    rows, _ = simulate_cfg(complete4, {"name": "collective", "kind": "recursive_doubling_allreduce", "packets": v},
                           [(1.0, 1)], RUN)
    row = rows[0]
    assert row["complete"] and row["packets_per_server"] == 2 * v
    assert row["completion_cycles"] >= 2 * ((v - 1) * L + row["message_latency"])
    ring, _ = simulate_cfg(complete4, {"name": "collective", "kind": "ring_allreduce", "packets": 1}, [(1.0, 1)], RUN)
    assert ring[0]["packets_per_server"] == 6 and ring[0]["completion_cycles"] >= 6 * ring[0]["message_latency"]


def test_batch_mode_and_pacing(complete4):
    """Batch mode: N packets per server to destinations of any pattern; at load 0.5 a server
    generates one every 2 L cycles, so it takes twice as long as at load 1."""
    cfg = {"name": "collective", "kind": "batch", "packets": 8, "pattern": {"name": "uniform"}}
    rows, state = simulate_cfg(complete4, cfg, [(1.0, 1), (0.5, 1)], RUN)
    fast, slow = rows
    for row in rows:
        assert row["complete"] and row["packets_per_server"] == 8
    assert fast["completion_cycles"] >= 8 * L and slow["completion_cycles"] >= 2 * 7 * L
    assert slow["effective_bandwidth"] == pytest.approx(0.5, abs=0.05)
    assert int(np.asarray(state.waiting).sum()) == 0


def test_sizes_and_kinds_batch_together_and_work_lists_change_nothing():
    """Programs of different kinds and sizes run in one batch (padded to the most steps) with
    the rows each gives alone; listed buffers (every ring, heads asleep) give the same rows."""
    network = make_network(nx.cycle_graph(4), servers_per_router=2, vcs=4)
    cfgs = [{"name": "collective", "kind": "all_to_all", "packets": 2},
            {"name": "collective", "kind": "recursive_doubling_allreduce", "packets": 2}]
    tables = [build_traffic(cfg, network.topo, 1) for cfg in cfgs]
    points = [(1.0, 1), (1.0, 1)]
    together, _ = simulate(network, tables, points, RUN)
    listed, _ = simulate(network, tables, points, SimSpec(warmup=0, measure=4000, chunk=100, active_lists=[[10**6]] * 6))
    timing = {"wall_s", "first_chunk_s", "batch", "cycles_simulated", "vmap_width", "work_lists"}  # how it ran
    for i, table in enumerate(tables):
        alone, _ = simulate(network, [table], [points[i]], RUN)
        assert {k: v for k, v in alone[0].items() if k not in timing} == \
            {k: v for k, v in together[i].items() if k not in timing} == \
            {k: v for k, v in listed[i].items() if k not in timing}
        assert alone[0]["complete"]


@pytest.mark.parametrize("cfg, spec, message", [
    ({"kind": "recursive_doubling_allreduce"}, RUN, "a power of 2 servers"),
    ({"kind": "all_to_all", "pattern": {"name": "uniform"}}, RUN, "only with traffic.kind=batch"),
    ({"kind": "gather"}, RUN, "one of"),
    ({"kind": "all_to_all"}, SimSpec(warmup="auto", measure=500), "a number of cycles with a finite workload"),
])
def test_collective_errors_are_one_line(cfg, spec, message):
    network = make_network(nx.cycle_graph(3), servers_per_router=1, vcs=2)
    with pytest.raises(ValueError, match=message):
        simulate_cfg(network, {"name": "collective", **cfg}, [(1.0, 1)], spec)


def test_finite_and_open_loop_do_not_share_a_batch(complete4):
    tables = [build_traffic({"name": "collective"}, complete4.topo, 1), build_traffic({"name": "uniform"}, complete4.topo, 1)]
    with pytest.raises(ValueError, match="one kind per batch"):
        simulate(complete4, tables, [(1.0, 1), (1.0, 1)], RUN)
