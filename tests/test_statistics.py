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


# ----- the measurement window and what sim.record keeps ------------------------------------
WINDOW = 250


@pytest.fixture(scope="module")
def ring_network():
    return make_network(nx.cycle_graph(6), servers_per_router=2, vcs=4)


def _window_totals(rows, spec, network):
    """Each row's window totals from its series: the windows inside its measurement window."""
    out = []
    size, servers = network.layout.router.packet_size, network.layout.servers
    for row in rows:
        record = row["record"]
        inside = (record["cycle"] >= row["warmup_cycles"]) & (record["cycle"] < row["warmup_cycles"] + spec.measure)
        packets = record["accepted_load"][inside] * WINDOW * servers / size
        latency = np.nansum(record["latency"][inside] * packets) / packets.sum()
        generated = record["generated_load"][inside] * WINDOW * servers / size
        out.append((int(inside.sum()), round(packets.sum()), latency, round(generated.sum())))
    return out


@pytest.mark.parametrize("warmup", [500, "auto"])
def test_series_windows_sum_to_the_points_totals(ring_network, warmup):
    """Windows of the time series that make up the measurement window hold exactly the
    packets, latency and generations of the row (fixed warm-up, and each point's own start
    under the automatic warm-up, which falls on a window's edge)."""
    spec = SimSpec(warmup=warmup, measure=1000, chunk=500, window=WINDOW, warmup_max=4000, record=("series",))
    rows, _ = simulate_cfg(ring_network, {"name": "uniform"}, [(0.3, 1), (1.0, 2)], spec)
    for row, (windows, packets, latency, generated) in zip(rows, _window_totals(rows, spec, ring_network)):
        assert row["warmup_cycles"] % WINDOW == 0 and windows == spec.measure // WINDOW
        assert packets == row["packets_consumed"] > 0
        assert latency == pytest.approx(row["message_latency"], rel=1e-9)
        assert generated == round(row["generated_load"] * spec.measure * ring_network.layout.servers
                                  / ring_network.layout.router.packet_size)
        assert np.all(row["record"]["queued"] >= 0) and np.all(row["record"]["in_network"] >= 0)


def test_buffer_occupancy_sums_to_the_per_vc_occupancy(ring_network):
    """The occupancy of every (port, VC) buffer (`sim.record: [links]`), summed over the ports,
    is the rows' occupancy per VC; link utilisation per port averages to the row's."""
    spec = SimSpec(warmup=300, measure=700, chunk=500, record=("links",))
    rows, _ = simulate_cfg(ring_network, {"name": "uniform"}, [(0.5, 1), (1.0, 1)], spec)
    in_ports = ring_network.layout.in_ports
    for row in rows:
        record = row["record"]
        for kind in ("input", "output"):
            per_vc = record[f"{kind}_occupancy"].sum(axis=(0, 1)) / in_ports
            np.testing.assert_allclose(per_vc.round(4), row[f"{kind}_vc_occupancy"], atol=1e-4)
        util = record["link_utilisation"]
        assert np.isnan(util).sum() == (ring_network.topo.neighbor < 0).sum()
        assert np.nanmean(util) == pytest.approx(row["link_util_mean"])
    assert rows[1]["record"]["input_occupancy"].sum() > rows[0]["record"]["input_occupancy"].sum() > 0


def test_automatic_warmup_finds_each_points_window_and_saturation(ring_network):
    """Under sim.warmup=auto each point of a batch starts its window on its own, at a window's
    edge, after at least four windows and at the latest at warmup_max; the saturated point
    (accepted well below generated, queues full) is reported so, the light one not."""
    spec = SimSpec(warmup="auto", measure=1000, chunk=500, window=WINDOW, warmup_max=5000)
    rows, _ = simulate_cfg(ring_network, {"name": "uniform"}, [(0.2, 1), (1.0, 1)], spec)
    light, heavy = rows
    for row in rows:
        assert 4 * WINDOW <= row["warmup_cycles"] <= spec.warmup_max and row["warmup_cycles"] % WINDOW == 0
        assert row["cycles_simulated"] >= row["warmup_cycles"] + spec.measure
    assert light["warmup_cycles"] < heavy["warmup_cycles"]
    assert not light["saturated"] and heavy["saturated"]
    assert heavy["accepted_load"] < 0.9 * heavy["generated_load"] + 1e-9 or heavy["missed_generations"] > 0


def test_rows_and_records_do_not_depend_on_the_work_lists(ring_network):
    """Every buffer or lists of buffers in use (heads asleep): the same rows and records (links,
    series, automatic warm-up); lists that overflow are in tests/test_behaviour.py."""
    lists = [[10**6]] * 6  # every ring: one compilation
    base = dict(warmup="auto", measure=500, chunk=250, window=WINDOW, warmup_max=2000, record=("links", "series"))
    every, _ = simulate_cfg(ring_network, {"name": "uniform"}, [(0.6, 4)], SimSpec(**base, active_lists=None))
    listed, _ = simulate_cfg(ring_network, {"name": "uniform"}, [(0.6, 4)], SimSpec(**base, active_lists=lists))
    a, b = every[0], listed[0]
    for key in a["record"]:
        np.testing.assert_array_equal(a["record"][key], b["record"][key], err_msg=key)
    skip = {"record", "wall_s", "first_chunk_s", "work_lists"}  # the record and how it ran
    assert {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}
