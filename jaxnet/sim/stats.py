"""Statistics: what is counted (`Stats`), from which events (`Events`), and the results row
of one simulation (`summarize`, DESIGN section 5). All accumulation happens in `record`.

Window counters count events in [warmup, warmup + measure): generation by its cycle,
consumption by the cycle the tail reaches the server, link use by the cycle the packet
starts on the link. Counters that can exceed 2**31 over 10**6 saturated cycles are exact
60-bit pairs of int32 ("wide", see `wide_add`), since x64 stays off for speed.
"""
from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk

_LOW_BITS = 30

# The latency histogram's fixed bins: one per cycle below LATENCY_EXACT, then each octave
# [2^e, 2^(e+1)) split into LATENCY_PER_OCTAVE equal bins (width 2^(e-3)), up to the octave
# of 2^LATENCY_TOP_OCTAVE; longer latencies share the last bin. A bin is at most an eighth of
# the latencies it holds.
LATENCY_EXACT = 16
LATENCY_PER_OCTAVE = 8
LATENCY_TOP_OCTAVE = 27
LATENCY_BINS = LATENCY_EXACT + (LATENCY_TOP_OCTAVE - 3) * LATENCY_PER_OCTAVE
SATURATION_MARGIN = 0.05  # accepted below attempted load by more than this: saturated (`saturated`)
PERCENTILES = {"latency_p50": 0.5, "latency_p90": 0.9, "latency_p99": 0.99, "latency_p999": 0.999}


def wide_add(counter, x):
    """Add non-negative int32 values x (< 2**30) to wide counters [..., 2] = (high, low)."""
    low = counter[..., 1] + x
    high = counter[..., 0] + (low >> _LOW_BITS)
    return jnp.stack([high, low & ((1 << _LOW_BITS) - 1)], axis=-1)


def wide_value(counter):
    """Host side: wide counters to int64 numbers."""
    c = np.asarray(counter).astype(np.int64)
    return (c[..., 0] << _LOW_BITS) + c[..., 1]


def latency_bin(latency):
    """int32 bin of latencies (int32 >= 0, any shape): the latency itself below LATENCY_EXACT;
    above, its octave e = floor(log2 latency) and the next 3 bits below the leading one."""
    octave = 31 - jax.lax.clz(jnp.maximum(latency, 1))
    fine = (latency >> jnp.maximum(octave - 3, 0)) & (LATENCY_PER_OCTAVE - 1)
    binned = LATENCY_EXACT + (octave - 4) * LATENCY_PER_OCTAVE + fine
    return jnp.where(latency < LATENCY_EXACT, latency, jnp.minimum(binned, LATENCY_BINS - 1))


def latency_bin_edges() -> tuple[np.ndarray, np.ndarray]:
    """(first latency, width) int64 [LATENCY_BINS] of every bin (the last one also holds every
    longer latency)."""
    index = np.arange(LATENCY_BINS - LATENCY_EXACT)
    octave, fine = 4 + index // LATENCY_PER_OCTAVE, index % LATENCY_PER_OCTAVE
    first = np.concatenate([np.arange(LATENCY_EXACT), (LATENCY_PER_OCTAVE + fine) << (octave - 3)])
    width = np.concatenate([np.ones(LATENCY_EXACT, np.int64), np.int64(1) << (octave - 3)])
    return first.astype(np.int64), width


def percentile(histogram: np.ndarray, q: float) -> float:
    """The q-quantile (0 < q <= 1) of the latencies a histogram (int [LATENCY_BINS]) counts: the
    k-th smallest, k = ceil(q n), placed within its bin as if the bin's c latencies were spread
    evenly over its width w: first + (w - 1) (j - 1/2) / c for the j-th of them. Exact below
    LATENCY_EXACT cycles; above, off by less than the bin's width (at most an eighth of the
    value). NaN when nothing was counted."""
    counts = np.asarray(histogram, np.int64)
    total = int(counts.sum())
    if total == 0:
        return float("nan")
    rank = max(1, math.ceil(q * total - 1e-9))
    cumulative = np.cumsum(counts)
    b = int(np.searchsorted(cumulative, rank))
    first, width = latency_bin_edges()
    within = rank - (int(cumulative[b - 1]) if b else 0)
    return float(first[b] + (width[b] - 1) * (within - 0.5) / counts[b])


@dataclasses.dataclass(frozen=True)
class Measurement:
    """What a run counts beyond the statistics every run keeps, and how its measurement window
    is found: static (part of the jit cache key), since it sets the shapes of the state.

    auto_warmup: the window starts once the point is stable (`jaxnet.sim.window`), not after
      a fixed warm-up; tolerance, warmup_max: its criterion and its cap (cycles).
    window: cycles of a window of the automatic warm-up and of the time series.
    series: windows in the time series (0: none), from cycle 0.
    links: keep the occupancy of every buffer (per-port statistics).
    steps: steps of a finite workload's program (0: open-loop traffic; `jaxnet.sim.workload`).
    """

    auto_warmup: bool = False
    tolerance: float = 0.05
    warmup_max: int = 0
    window: int = 500
    series: int = 0
    links: bool = False
    steps: int = 0


class Series(NamedTuple):
    """Counts per window of `Measurement.window` cycles from cycle 0 (all [n] but latency).

    consumed: int32 packets whose tail reached their server in the window.
    latency: wide [n, 2] their message latencies, summed.
    generated: int32 packets that entered a source queue in the window.
    queued, in_network: int32 packets in the source queues / in router buffers at its end.
    """

    consumed: jnp.ndarray
    latency: jnp.ndarray
    generated: jnp.ndarray
    queued: jnp.ndarray
    in_network: jnp.ndarray


class Links(NamedTuple):
    """Per-buffer occupancy: inputs int32 [in_vcs], outputs int32 [out_vcs] the sum over the
    cycles of the measurement window of the packets waiting in each (port, VC) buffer after
    the cycle, as `Stats.input_occupancy` sums them per VC (kept by the moves in and out:
    each adds or takes off the window's cycles still to come)."""

    inputs: jnp.ndarray
    outputs: jnp.ndarray


class Stats(NamedTuple):
    """On-device statistics of one simulation (wide counters are int32 pairs [..., 2]).

    generated: int32 [S] packets that entered each source queue (window).
    missed: int32 [S] generations that found the source queue full (window).
    injected: int32 [S] packets each server put into its router (window).
    consumed: int32 [S] packets whose tail each destination server consumed (window).
    message_latency: wide [2] sum of creation -> tail consumed, cycles (window).
    network_latency: wide [2] sum of head enters first router -> tail consumed (window).
    latency: wide [LATENCY_BINS, 2] histogram of the message latencies summed in
      message_latency (`latency_bin`).
    hops: wide [max_hops + 2, 2] histogram of router-to-router hops of consumed packets; the
      last bin counts routes longer than the scheme's max_hops (a bound violation).
    link_packets: int32 [out_ports] packets sent per output port (window; L phits each).
    input_occupancy: wide [V, 2] sum over cycles of packets in input buffers, per VC.
    output_occupancy: wide [V, 2] the same for output buffers.
    no_route: wide [2] head-cycles with no candidate at all (e.g. Polarized corners).
    generated_all: wide [2] packets queued since cycle 0 (conservation checks).
    consumed_all: wide [2] packets sent to their server since cycle 0.
    series: Series per window, or None (`Measurement.series`).
    links: Links per buffer, or None (`Measurement.links`).
    """

    generated: jnp.ndarray
    missed: jnp.ndarray
    injected: jnp.ndarray
    consumed: jnp.ndarray
    message_latency: jnp.ndarray
    network_latency: jnp.ndarray
    latency: jnp.ndarray
    hops: jnp.ndarray
    link_packets: jnp.ndarray
    input_occupancy: jnp.ndarray
    output_occupancy: jnp.ndarray
    no_route: jnp.ndarray
    generated_all: jnp.ndarray
    consumed_all: jnp.ndarray
    series: Series | None = None
    links: Links | None = None


def empty_stats(servers: int, out_ports: int, vcs: int, max_hops: int,
                measurement: Measurement = Measurement()) -> Stats:
    zeros = lambda n: jnp.zeros(n, jnp.int32)  # noqa: E731
    wide = lambda *shape: jnp.zeros((*shape, 2), jnp.int32)  # noqa: E731
    n = measurement.series
    return Stats(
        series=Series(zeros(n), wide(n), zeros(n), zeros(n), zeros(n)) if n else None,
        links=Links(zeros(out_ports * vcs), zeros(out_ports * vcs)) if measurement.links else None,
        generated=zeros(servers), missed=zeros(servers), injected=zeros(servers),
        consumed=zeros(servers), message_latency=wide(), network_latency=wide(),
        latency=wide(LATENCY_BINS), hops=wide(max_hops + 2), link_packets=zeros(out_ports), input_occupancy=wide(vcs),
        output_occupancy=wide(vcs), no_route=wide(), generated_all=wide(), consumed_all=wide())


class Events(NamedTuple):
    """What the phases of one cycle report, for the statistics (shapes per simulation; K
    entries of what `send_on_links` sent, `phases.Sent`).

    no_route: bool [...] heads that had no candidate at all.
    sent: int32 [K, F] the packet each entry started (valid where to_router or
      to_server); port: int32 [K] its output port.
    to_router, to_server: bool [K] a packet started towards a router / towards a server (the
      tail reaches the server L cycles later).
    servers: int32 [N] the servers listed this cycle (`step.cycle_step`), None for every one.
    injected: bool [N] listed servers that moved a packet into their router (its head
      arrives at t + 1).
    enqueued, missed: bool [N] generations that entered the source queue / found it full.
    waiting: int32 [2, V] packets waiting in input / output buffers, per VC, after the cycle.
    The buffers packets entered and left (for `Links`; None where not reported):
    vc, down: int32 [K] the VC each entry sent from and the input ring its packet
      entered (where to_router).
    granted: bool [H] heads that crossed the crossbar, from input rings granted_ring int32 [H]
      into output rings granted_out int32 [H].
    injected_ring: int32 [N] the input ring each listed server injected into (where injected).
    output_grid: (routers, network ports per router) where every output ring was visited and
      the K entries are the output ports in order (port r x (ports + p) + j; `phases.Sent`):
      then the counts per link and per server are added where they stand, and deliveries are
      read from the ejection ports alone, instead of scattered. None for a list.
    """

    no_route: jnp.ndarray
    sent: jnp.ndarray
    port: jnp.ndarray
    to_router: jnp.ndarray
    to_server: jnp.ndarray
    servers: jnp.ndarray | None
    injected: jnp.ndarray
    enqueued: jnp.ndarray
    missed: jnp.ndarray
    waiting: jnp.ndarray
    vc: jnp.ndarray | None = None
    down: jnp.ndarray | None = None
    granted: jnp.ndarray | None = None
    granted_ring: jnp.ndarray | None = None
    granted_out: jnp.ndarray | None = None
    injected_ring: jnp.ndarray | None = None
    output_grid: tuple[int, int] | None = None


def queued_packets(stats: Stats, waiting):
    """int32 []: packets in the source queues (generated, neither in routers nor consumed);
    small, so the wide counters' difference is exact in int32."""
    generated, consumed = stats.generated_all, stats.consumed_all
    return ((generated[0] - consumed[0]) << _LOW_BITS) + generated[1] - consumed[1] - jnp.sum(waiting)


def record(stats: Stats, events: Events, t, size: int, max_hops: int, warmup, measure, window: int = 0) -> Stats:
    """The statistics after one cycle's events (t: the cycle; size: packet phits; the
    measurement window [warmup, warmup + measure); window: cycles per `Series` window)."""
    in_window = lambda c: (c >= warmup) & (c < warmup + measure)  # noqa: E731
    # entries that count nothing go out of bounds (dropped): a GPU serializes atomic adds to one
    # address, and most listed output rings send nothing in a cycle
    servers, out_ports = stats.consumed.shape[0], stats.link_packets.shape[0]
    sent, to_server, grid = events.sent, events.to_server, events.output_grid
    if grid is not None:  # an entry per output port: only the ejection ports deliver, in server order
        routers, ports = grid
        ejection = lambda a: a.reshape(routers, -1, *a.shape[1:])[:, ports:].reshape(servers, *a.shape[1:])  # noqa: E731
        sent, to_server = ejection(sent), ejection(to_server)
    done = t + size  # tail reaches the server: head after the 1-cycle server link, then L-1 phits
    counted = to_server & in_window(done)
    counted_i = counted.astype(jnp.int32)
    # hops and latency of the packets counted as one scatter into a joint histogram (hop bins x
    # latency bins), summed both ways: the hop histogram's last bin counts routes longer than
    # max_hops; packets not counted go out of bounds (dropped), not onto bin 0
    hop_bins = jnp.minimum(sent[:, pk.HOPS], max_hops + 1)
    latency = done - sent[:, pk.CREATED]
    joint_bins = (max_hops + 2) * LATENCY_BINS
    joint = jnp.zeros(joint_bins, jnp.int32).at[
        jnp.where(counted, hop_bins * LATENCY_BINS + latency_bin(latency), joint_bins)].add(1, mode="drop")
    joint = joint.reshape(max_hops + 2, LATENCY_BINS)
    window_now = in_window(t)
    window_i = window_now.astype(jnp.int32)

    def per_server(counts, happened):  # counts [S] + 1 where the listed server's event happened
        if events.servers is None:
            return counts + happened.astype(jnp.int32)
        return counts.at[jnp.where(happened, events.servers, servers)].add(1, mode="drop")

    if grid is None:
        consumed = stats.consumed.at[jnp.where(counted, sent[:, pk.DST], servers)].add(1, mode="drop")
        link_packets = stats.link_packets.at[jnp.where(events.to_router & window_now, events.port, out_ports)].add(
            1, mode="drop")
    else:
        consumed = stats.consumed + counted_i
        link_packets = stats.link_packets + (events.to_router & window_now).astype(jnp.int32)

    new = Stats(
        generated=per_server(stats.generated, events.enqueued & window_now),
        missed=per_server(stats.missed, events.missed & window_now),
        injected=per_server(stats.injected, events.injected & in_window(t + 1)),
        consumed=consumed,
        message_latency=wide_add(stats.message_latency, jnp.sum(counted_i * latency)),
        network_latency=wide_add(stats.network_latency, jnp.sum(counted_i * (done - sent[:, pk.INJECTED]))),
        latency=wide_add(stats.latency, jnp.sum(joint, axis=0)),
        hops=wide_add(stats.hops, jnp.sum(joint, axis=1)),
        link_packets=link_packets,
        input_occupancy=wide_add(stats.input_occupancy, events.waiting[0] * window_i),
        output_occupancy=wide_add(stats.output_occupancy, events.waiting[1] * window_i),
        no_route=wide_add(stats.no_route, jnp.sum(events.no_route, dtype=jnp.int32) * window_i),
        generated_all=wide_add(stats.generated_all, jnp.sum(events.enqueued, dtype=jnp.int32)),
        consumed_all=wide_add(stats.consumed_all, jnp.sum(to_server, dtype=jnp.int32)),
    )
    if stats.series is not None:
        new = new._replace(series=_record_series(stats.series, new, events, t, size, window, to_server, latency))
    if stats.links is not None:
        new = new._replace(links=_record_links(stats.links, events, t, warmup, measure))
    return new


def _record_series(series: Series, stats: Stats, events: Events, t, size: int, window: int, to_server,
                   latency) -> Series:
    """`Series` after one cycle: packets consumed by the window their tail arrives in,
    generated by the window of this cycle; queues and buffers as they are after the cycle
    (the last cycle of a window writes its value). `to_server` bool [K'] and `latency` int32
    [K']: the deliveries `record` read and their message latencies."""
    consumed = to_server.astype(jnp.int32)
    done_window, now = (t + size) // window, t // window
    n = series.consumed.shape[0]
    in_range = jnp.minimum(done_window, n - 1)
    in_network = jnp.sum(events.waiting)
    return Series(
        consumed=series.consumed.at[done_window].add(jnp.sum(consumed), mode="drop"),
        latency=series.latency.at[done_window].set(
            wide_add(series.latency[in_range], jnp.sum(consumed * latency)), mode="drop"),
        generated=series.generated.at[now].add(jnp.sum(events.enqueued, dtype=jnp.int32), mode="drop"),
        queued=series.queued.at[now].set(queued_packets(stats, events.waiting), mode="drop"),
        in_network=series.in_network.at[now].set(in_network, mode="drop"),
    )


def _record_links(links: Links, events: Events, t, start, measure) -> Links:
    """`Links` after one cycle. A packet waiting in a buffer from cycle a to cycle d (after
    cycles a .. d - 1) counts once for each of those cycles in the window: each move in adds
    the window's cycles from this one on, each move out takes them off again. Before the
    window starts that is all of it, whether or not its start is known yet."""
    ahead = jnp.where(t < start, measure, jnp.clip(start + measure - t, 0, measure))

    def moved(counts, ids, happened, sign):
        return counts.at[jnp.where(happened, ids, counts.shape[0])].add(sign * ahead, mode="drop")

    out_ring = events.port * events.waiting.shape[1] + events.vc  # waiting: [2, V]
    inputs = moved(links.inputs, events.down, events.to_router, 1)
    inputs = moved(inputs, events.injected_ring, events.injected, 1)
    inputs = moved(inputs, events.granted_ring, events.granted, -1)
    outputs = moved(links.outputs, events.granted_out, events.granted, 1)
    outputs = moved(outputs, out_ring, events.to_router | events.to_server, -1)
    return Links(inputs, outputs)


def jain(x: np.ndarray) -> float:
    """Jain fairness index (sum x)^2 / (n sum x^2); 1 when all equal."""
    x = np.asarray(x, np.float64)
    denom = len(x) * np.sum(x * x)
    return float(np.sum(x) ** 2 / denom) if denom > 0 else float("nan")


def summarize(topo, layout, measure: int, point: tuple[float, int], stats: Stats,
              deadlock_at: int, window=None, workload=None) -> dict:
    """One results row (DESIGN section 5) from one simulation's statistics, its measurement
    window (`jaxnet.sim.window.Window`) and its finite workload (`jaxnet.sim.workload.Workload`,
    None for open-loop traffic; host arrays)."""
    size, servers = layout.router.packet_size, layout.servers
    per_server = size / measure  # packets in the window -> phits/cycle
    consumed = stats.consumed.astype(np.int64)
    total_consumed = int(consumed.sum())
    hist = wide_value(stats.hops)
    latencies = wide_value(stats.latency)
    links = np.asarray(stats.link_packets).reshape(layout.routers, -1)[:, : layout.ports]
    util = links[topo.neighbor >= 0] * per_server
    mean_or_nan = lambda a, b: float(a / b) if b else float("nan")  # noqa: E731
    in_ports = layout.in_ports
    accepted = float(total_consumed * per_server / servers)
    missed = int(stats.missed.sum())
    attempted = float((stats.generated.sum() + missed) * per_server / servers)
    return {
        "topology_name": topo.name,
        "offered_load": float(point[0]),
        "seed": int(point[1]),
        "generated_load": float(stats.generated.sum() * per_server / servers),
        "injected_load": float(stats.injected.sum() * per_server / servers),
        "accepted_load": accepted,
        "accepted_load_min": float(consumed.min() * per_server),
        "message_latency": mean_or_nan(int(wide_value(stats.message_latency)), total_consumed),
        "network_latency": mean_or_nan(int(wide_value(stats.network_latency)), total_consumed),
        **{column: percentile(latencies, q) for column, q in PERCENTILES.items()},
        "average_hops": mean_or_nan(float((hist * np.arange(len(hist))).sum()), int(hist.sum())),
        "jain_generated": jain(stats.generated),
        "jain_consumed": jain(consumed),
        "link_util_mean": float(util.mean()),
        "link_util_max": float(util.max()),
        "missed_generations": int(stats.missed.sum()),
        "packets_consumed": total_consumed,
        "hop_histogram": hist[:-1].tolist(),
        "routes_over_max_hops": int(hist[-1]),
        "input_vc_occupancy": (wide_value(stats.input_occupancy) / (measure * in_ports)).round(4).tolist(),
        "output_vc_occupancy": (wide_value(stats.output_occupancy) / (measure * in_ports)).round(4).tolist(),
        "no_route_events": int(wide_value(stats.no_route)),
        "deadlock": bool(deadlock_at >= 0),
        "deadlock_at": int(deadlock_at),
        **({} if topo.failed_links is None else {
            "failed_links": len(topo.failed_links),
            "failed_link_fraction": len(topo.failed_links) / (len(topo.failed_links) + int((topo.neighbor >= 0).sum()) // 2)}),
        **({} if workload is None else _completion(layout, stats, workload)),
        **({} if window is None else {
            "warmup_cycles": int(window.start),
            "saturated": saturated(accepted, attempted, missed, int(window.queued_start), int(window.queued_end))}),
    }


def _completion(layout, stats: Stats, workload) -> dict:
    """A finite workload's columns: whether it completed, when (the cycle its last packet
    arrived, from cycle 0), its packets per server and the effective bandwidth: the phits each
    server sent per cycle until completion (1 = its link's rate), NaN if not complete."""
    done_at = int(workload.done_at)
    sent = int(wide_value(stats.generated_all)) / layout.servers
    return {"complete": done_at >= 0, "completion_cycles": done_at, "packets_per_server": sent,
            "effective_bandwidth": sent * layout.router.packet_size / done_at if done_at > 0 else float("nan")}


def saturated(accepted: float, attempted: float, missed: int, queued_start: int, queued_end: int) -> bool:
    """Whether a point is saturated: its servers' accepted load is below what they tried to
    generate (generated plus missed generations) by more than SATURATION_MARGIN, and its
    source queues grew over the measurement window or overflowed (missed generations)."""
    return accepted < (1 - SATURATION_MARGIN) * attempted and (queued_end > queued_start or missed > 0)


def recordings(topo, layout, measurement: Measurement, measure: int, stats: Stats,
               cycles: int) -> dict[str, np.ndarray]:
    """What `Measurement` asked to record of one simulation that ran `cycles` cycles, as host
    arrays (units in docs/experiments.md): per window of the series (those it ran in full) its first cycle, accepted
    and generated load (phits/cycle/server), mean message latency (cycles; NaN where nothing
    arrived), packets queued and in the network at its end; per port the utilisation of
    router-to-router links [R, P] (NaN: no link) and the mean packets waiting in each input
    and output (port, VC) buffer [R, P + p, V] over the measurement window."""
    out = {}
    size, servers, width = layout.router.packet_size, layout.servers, measurement.window
    if stats.series is not None:
        series = jax.tree_util.tree_map(lambda a: np.asarray(a)[: cycles // width], stats.series)
        consumed = np.asarray(series.consumed, np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            latency = np.where(consumed > 0, wide_value(series.latency) / consumed, np.nan)
        out.update(cycle=np.arange(len(consumed)) * width, accepted_load=consumed * size / (width * servers),
                   generated_load=np.asarray(series.generated) * size / (width * servers), latency=latency,
                   queued=np.asarray(series.queued), in_network=np.asarray(series.in_network))
    if stats.links is not None:
        per_port = np.asarray(stats.link_packets).reshape(layout.routers, -1)[:, : layout.ports] * size / measure
        shape = (layout.routers, layout.ports_per_router, layout.vcs)
        out.update(link_utilisation=np.where(topo.neighbor >= 0, per_port, np.nan),
                   input_occupancy=np.asarray(stats.links.inputs).reshape(shape) / measure,
                   output_occupancy=np.asarray(stats.links.outputs).reshape(shape) / measure)
    return out
