"""A 10^6-cycle saturated run: counters neither overflow nor drift (slow tier)."""
import networkx as nx
import pytest
from conftest import make_network, simulate_cfg
from test_engine import _check_invariants

from jaxnet.sim.spec import SimSpec


@pytest.mark.slow
def test_million_cycles_at_saturation_matches_a_short_run():
    network = make_network(nx.cycle_graph(8), servers_per_router=4, vcs=4)
    long_rows, state = simulate_cfg(network, {"name": "uniform"}, [(1.0, 1)],
                                SimSpec(warmup=10_000, measure=1_000_000, chunk=50_000))
    short_rows, _ = simulate_cfg(network, {"name": "uniform"}, [(1.0, 1)], SimSpec(warmup=10_000, measure=20_000, chunk=10_000))
    long_row, short_row = long_rows[0], short_rows[0]
    _check_invariants(network, state, 0)
    assert long_row["packets_consumed"] > 100_000
    assert long_row["accepted_load"] == pytest.approx(short_row["accepted_load"], rel=0.03)
    assert long_row["message_latency"] == pytest.approx(short_row["message_latency"], rel=0.15)
    assert not long_row["deadlock"]
