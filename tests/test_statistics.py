"""Statistics beyond a mean (jaxnet.sim.stats): the latency histogram and its percentiles,
checked against a log of every packet consumed."""
import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from conftest import make_network, simulate_cfg

from jaxnet.core import packets as pk
from jaxnet.sim import run, step
from jaxnet.sim.spec import SimSpec
from jaxnet.sim.stats import (
    LATENCY_BINS,
    LATENCY_EXACT,
    PERCENTILES,
    latency_bin,
    latency_bin_edges,
    percentile,
)


def test_latency_bins_cover_every_latency_once():
    """Bins are contiguous, one cycle wide below LATENCY_EXACT, at most an eighth of their
    latencies above; `latency_bin` puts every latency in the bin whose range holds it."""
    first, width = latency_bin_edges()
    assert first[0] == 0 and np.array_equal(first[1:], first[:-1] + width[:-1])
    assert np.all(width[:LATENCY_EXACT] == 1) and np.all(width[LATENCY_EXACT:] * 8 <= first[LATENCY_EXACT:])
    x = np.concatenate([np.arange(4096), np.random.default_rng(1).integers(0, first[-1], 20000)]).astype(np.int32)
    b = np.asarray(latency_bin(jnp.asarray(x)))
    assert np.all((first[b] <= x) & (x < first[b] + width[b]))
    assert int(latency_bin(jnp.int32(2**30))) == LATENCY_BINS - 1  # longer ones share the last bin


@pytest.mark.parametrize("seed", [0, 1])
def test_percentiles_from_bins_are_within_a_bin_of_the_exact_ones(seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.integers(5, 15, 300), rng.lognormal(4, 1.2, 3000).astype(np.int64)])
    histogram = np.bincount(np.asarray(latency_bin(jnp.asarray(x, jnp.int32))), minlength=LATENCY_BINS)
    _, width = latency_bin_edges()
    for q in (0.01, 0.05, *PERCENTILES.values(), 1.0):
        exact = np.sort(x)[int(np.ceil(q * len(x))) - 1]
        assert abs(percentile(histogram, q) - exact) < width[int(latency_bin(jnp.int32(exact)))], q
    assert percentile(histogram, 0.05) == np.sort(x)[int(np.ceil(0.05 * len(x))) - 1]  # below 16: exact
    assert np.isnan(percentile(np.zeros(LATENCY_BINS), 0.5))


def _logging_record(log):
    """`stats.record` that also hands the latency of every packet it counts to `log`."""
    record = step.record

    def logged(stats, events, t, size, max_hops, warmup, measure, *args, **kwargs):
        done = t + size
        counted = events.to_server & (done >= warmup) & (done < warmup + measure)
        jax.debug.callback(lambda lat, ok: log.append(np.asarray(lat)[np.asarray(ok)]),
                           done - events.sent[:, pk.CREATED], counted)
        return record(stats, events, t, size, max_hops, warmup, measure, *args, **kwargs)

    return logged


def test_percentiles_match_a_log_of_every_packet(monkeypatch):
    """On a tiny saturated network the rows' percentiles are those of the latencies of every
    packet consumed in the window (logged one by one), to within the bin that holds them."""
    network = make_network(nx.cycle_graph(5), servers_per_router=2, vcs=4)
    log = []
    monkeypatch.setattr(step, "record", _logging_record(log))
    run.compiled_advance.cache_clear()
    try:
        rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.8, 3)],
                                   SimSpec(warmup=100, measure=600, chunk=350))
    finally:
        run.compiled_advance.cache_clear()
    latencies = np.sort(np.concatenate(log))
    row = rows[0]
    assert len(latencies) == row["packets_consumed"] > 100
    assert latencies.mean() == pytest.approx(row["message_latency"])
    _, width = latency_bin_edges()
    for column, q in PERCENTILES.items():
        exact = latencies[int(np.ceil(q * len(latencies))) - 1]
        assert abs(row[column] - exact) < width[int(latency_bin(jnp.int32(exact)))], column
    assert row["latency_p50"] <= row["latency_p90"] <= row["latency_p99"] <= row["latency_p999"]
