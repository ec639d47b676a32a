"""Exact properties of the engine: zero-load latency, conservation, credits, determinism,
batch invariance and no recompilation."""
import types

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from conftest import count_compilations, make_network, simulate_cfg

from jaxnet.core import packets as pk
from jaxnet.sim.spec import LISTED, SimSpec
from jaxnet.sim.stats import wide_value

TIMING_KEYS = {"wall_s", "first_chunk_s", "batch", "device", "devices", "cycles_simulated", "vmap_width", "work_lists"}


def _only(router_from, router_to, n_routers):
    routers = [-1] * n_routers
    routers[router_from] = router_to
    return {"name": "destination_table", "routers": routers}


@pytest.mark.parametrize(
    "packet_size, router_latency, link_latency, speedup",
    [(16, 0, 1, 1), pytest.param(4, 0, 1, 1, marks=pytest.mark.slow), pytest.param(16, 2, 1, 1, marks=pytest.mark.slow),
     (8, 0, 3, 1), (16, 1, 2, 2)],
)  # fast tier: the default router, link latency, and router latency with speedup
def test_zero_load_latency_formula(packet_size, router_latency, link_latency, speedup):
    """Network latency = L + H*link_latency + (H+1)*router_latency, message = network + 2."""
    hops = 3
    network = make_network(nx.path_graph(hops + 1), servers_per_router=1, vcs=hops,
                           packet_size=packet_size, router_latency=router_latency,
                           link_latency=link_latency, crossbar_speedup=speedup)
    load = 0.002 * packet_size  # about one packet per 500 cycles: never two at once
    rows, _ = simulate_cfg(network, _only(0, hops, hops + 1), [(load, 7)], SimSpec(warmup=0, measure=6000, chunk=1000))
    row = rows[0]
    assert row["packets_consumed"] >= 5
    expected = packet_size + hops * link_latency + (hops + 1) * router_latency
    assert row["network_latency"] == expected
    assert row["message_latency"] == expected + 2
    assert row["average_hops"] == hops


def _check_invariants(network, state, index):
    layout = network.layout
    pick = lambda a: np.asarray(a[index])  # noqa: E731
    # credits within [0, capacity]: transit and injection buffers each within their own size
    kind = np.arange(layout.in_vcs) // layout.vcs % layout.ports_per_router >= layout.ports
    input_depth = np.where(kind, layout.router.injection_depth, layout.router.input_buffer)
    for rings, depth in ((state.inputs, input_depth),
                         (state.outputs, layout.router.output_buffer),
                         (state.queue, layout.router.source_queue)):
        taken, gone = pick(rings.taken), pick(rings.gone)
        assert (taken >= 0).all() and (taken <= depth).all()
        assert (gone >= 0).all() and (gone <= taken).all()
    v = layout.vcs
    per_vc = lambda r: (pick(r.taken) - pick(r.gone)).reshape(-1, v).sum(axis=0)  # noqa: E731
    in_routers = int(per_vc(state.inputs).sum() + per_vc(state.outputs).sum())
    queued = int(pick(state.queue.taken).sum())
    generated = int(wide_value(pick(state.stats.generated_all)))
    consumed = int(wide_value(pick(state.stats.consumed_all)))
    assert generated == consumed + in_routers + queued
    # each waiting input head's READY, kept beside the records, is its record's
    inputs = state.inputs
    if inputs.head_ready is not None:
        first, taken, gone = pick(inputs.first), pick(inputs.taken), pick(inputs.gone)
        row = np.arange(layout.in_vcs) * layout.input_depth + (first + gone) % layout.input_depth
        waiting = taken > gone
        np.testing.assert_array_equal(pick(inputs.head_ready)[waiting], pick(inputs.slots)[row[waiting], pk.READY])
    # the running per-VC counters agree with the buffers' contents
    np.testing.assert_array_equal(pick(state.waiting), np.stack([per_vc(state.inputs), per_vc(state.outputs)]))
    assert generated > 0


@pytest.mark.parametrize("routing", ["minimal", "source_minimal"])
def test_conservation_and_credits(routing):
    network = make_network(nx.random_regular_graph(4, 12, seed=5), servers_per_router=3,
                           routing=routing, vcs=4)
    points = [(0.2, 1), (0.7, 2), (1.0, 3)]
    rows, state = simulate_cfg(network, {"name": "uniform"}, points, SimSpec(warmup=300, measure=1200, chunk=300))
    for i, row in enumerate(rows):
        _check_invariants(network, state, i)
        assert not row["deadlock"]
    assert rows[0]["accepted_load"] == pytest.approx(0.2, rel=0.15)


def test_heads_ready_kept_beside_the_records_change_no_row(heads_ready_from):
    """Input rings that keep their heads' READY (`Rings.head_ready`, on networks of many
    slots) give the rows of reading it from the records, with a scheme that redraws its heads
    stuck in two injection buffers, past saturation; the kept values equal the records' after
    every chunk (`sim.check_invariants`)."""
    from jaxnet import build

    topo = build.topology({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2})
    network = build.network(topo, build.routing({"name": "rval_recomp", "base": "dragonfly_minimal"}),
                            build.router({"vc_policy": "dragonfly", "injection_buffers": 2,
                                          "injection_policy": "random"}))
    points = [(1.0, 1), (0.5, 2)]
    spec = SimSpec(warmup=200, measure=600, chunk=200, check_invariants=True)
    rows, states = [], []
    for slots in (0, 1 << 40):  # every network keeps them; none does
        heads_ready_from(slots)
        row, state = simulate_cfg(network, {"name": "adv_group"}, points, spec)
        rows.append([{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in row])
        states.append(state)
    assert states[0].inputs.head_ready is not None and states[1].inputs.head_ready is None
    for i in range(len(points)):
        _check_invariants(network, states[0], i)
    assert rows[0] == rows[1]
    assert rows[0][0]["accepted_load"] < 0.9  # past saturation


def test_buffers_of_the_largest_depth_keep_exact_counts():
    """A ring's counters share one int32, 10 bits each (`state.pack_counters`): source
    queues and injection buffers of MAX_DEPTH packets, filled to the brim by a saturated
    bottleneck link, still count every packet (no counter spills into the next)."""
    from jaxnet.sim.spec import MAX_DEPTH

    network = make_network(nx.path_graph(2), servers_per_router=4, vcs=1, packet_size=1,
                           source_queue=MAX_DEPTH, injection_buffer=MAX_DEPTH)
    rows, state = simulate_cfg(network, _only(0, 1, 2), [(1.0, 1)], SimSpec(warmup=0, measure=3000, chunk=1000))
    _check_invariants(network, state, 0)
    queue, inputs = np.asarray(state.queue.taken[0]), np.asarray(state.inputs.taken[0])
    assert queue[:4].max() == MAX_DEPTH and inputs.max() == MAX_DEPTH
    assert rows[0]["accepted_load"] == pytest.approx(1 / 8, abs=0.005)  # one link's phit a cycle, per server of 8


def test_same_seed_same_result_and_batch_invariance(small_rrg):
    window = SimSpec(warmup=200, measure=800, chunk=250)
    alone, _ = simulate_cfg(small_rrg, {"name": "uniform"}, [(0.5, 11)], window)
    again, _ = simulate_cfg(small_rrg, {"name": "uniform"}, [(0.5, 11)], window)
    batch, _ = simulate_cfg(small_rrg, {"name": "uniform"}, [(0.9, 4), (0.5, 11), (0.1, 2)], window)
    strip = lambda row: {k: v for k, v in row.items() if k not in TIMING_KEYS}  # noqa: E731
    assert strip(alone[0]) == strip(again[0])
    assert strip(alone[0]) == strip(batch[1])
    other, _ = simulate_cfg(small_rrg, {"name": "uniform"}, [(0.5, 12)], window)
    assert strip(other[0]) != strip(alone[0])


# fast tier: the whole batch vmapped (the accelerator default) against one at a time (the CPU
# default); slow tier: vmapped 2 at a time with a remainder
@pytest.mark.parametrize("width", [None, pytest.param(2, marks=pytest.mark.slow)])
def test_vmap_width_never_changes_results(small_rrg, width):
    points = [(0.9, 4), (0.5, 11), (0.1, 2)]
    rows = [simulate_cfg(small_rrg, {"name": "uniform"}, points, SimSpec(warmup=200, measure=600, chunk=200, vmap_width=w))[0]
            for w in (1, width)]
    strip = lambda row: {k: v for k, v in row.items() if k not in TIMING_KEYS}  # noqa: E731
    assert [strip(r) for r in rows[0]] == [strip(r) for r in rows[1]]


def test_loads_and_seeds_do_not_recompile(small_rrg):
    window = SimSpec(warmup=100, measure=200, chunk=150)
    with count_compilations() as first:
        simulate_cfg(small_rrg, {"name": "uniform"}, [(0.3, 1), (0.6, 2)], window)
    with count_compilations() as again:
        simulate_cfg(small_rrg, {"name": "uniform"}, [(0.8, 5), (0.2, 9)], window)
        simulate_cfg(small_rrg, {"name": "server_permutation"}, [(1.0, 3), (0.4, 3)], window)
    assert len(again) == 0 < len(first)


def test_too_few_vcs_is_a_clear_error():
    with pytest.raises(ValueError, match="router.vcs"):
        make_network(nx.path_graph(5), vcs=2)


@pytest.mark.parametrize("field, value", [("input_buffer", 0), ("packet_size", -1)])
def test_bad_router_parameters(field, value):
    with pytest.raises(ValueError, match=f"router.{field}"):
        make_network(nx.path_graph(3), **{field: value})


def test_bad_loads(small_rrg):
    with pytest.raises(ValueError, match="sim.loads"):
        simulate_cfg(small_rrg, {"name": "uniform"}, [(1.5, 1)], SimSpec(warmup=10, measure=10))


def test_wide_counter_is_exact_past_int32():
    from jaxnet.sim.stats import wide_add

    counter = jnp.zeros(2, jnp.int32)
    step = jax.jit(lambda c: wide_add(c, jnp.int32((1 << 30) - 1)))
    for _ in range(5):
        counter = step(counter)
    assert int(wide_value(counter)) == 5 * ((1 << 30) - 1)


def test_histograms_count_what_numpy_counts():
    """vc_counts and record's hop histogram send the entries that add nothing out of bounds
    (a GPU serializes atomic adds to one address): they still count exactly what
    np.bincount counts, and drop VCs and bins out of range."""
    from jaxnet.core import packets as pk
    from jaxnet.sim.phases import vc_counts
    from jaxnet.sim.stats import Events, empty_stats, record

    rng = np.random.default_rng(7)
    vc, amount = rng.integers(0, 5, 500), rng.integers(0, 3, 500) * (rng.random(500) < 0.3)  # VC 4: out of range
    expected = np.bincount(vc, weights=amount, minlength=5)[:4]
    assert np.array_equal(np.asarray(vc_counts(jnp.asarray(vc), jnp.asarray(amount), 4)), expected)

    k, servers, max_hops, size, t = 400, 10, 3, 4, 100
    sent = np.zeros((k, pk.N_FIELDS), np.int32)
    sent[:, pk.HOPS], sent[:, pk.DST] = rng.integers(0, 7, k), rng.integers(0, servers, k)
    to_server = rng.random(k) < 0.2
    events = Events(no_route=jnp.zeros(1, bool), sent=jnp.asarray(sent), port=jnp.zeros(k, jnp.int32),
                    to_router=jnp.zeros(k, bool), to_server=jnp.asarray(to_server), servers=None,
                    injected=jnp.zeros(servers, bool),
                    enqueued=jnp.zeros(servers, bool), missed=jnp.zeros(servers, bool),
                    waiting=jnp.zeros((2, 4), jnp.int32))
    stats = record(empty_stats(servers, 1, 4, max_hops), events, jnp.int32(t), size, max_hops,
                   warmup=jnp.int32(0), measure=jnp.int32(10**6))
    hops = np.minimum(sent[to_server, pk.HOPS], max_hops + 1)
    assert np.array_equal(wide_value(stats.hops), np.bincount(hops, minlength=max_hops + 2))
    assert np.array_equal(np.asarray(stats.consumed), np.bincount(sent[to_server, pk.DST], minlength=servers))


def test_events_of_listed_servers_count_on_those_servers():
    """A cycle's server events come for the listed servers (`Events.servers`): each counts on
    its own server, padding entries (id 0, no event) nowhere; the same as every server's."""
    from jaxnet.core import packets as pk
    from jaxnet.sim.stats import Events, empty_stats, record

    servers, listed = 6, np.array([4, 1, 5, 0, 0])  # the last two entries pad the list
    injected = np.array([True, True, False, False, False])
    enqueued = np.array([True, False, True, False, False])
    missed = np.array([False, True, False, False, False])
    quiet = dict(no_route=jnp.zeros(1, bool), sent=jnp.zeros((1, pk.N_FIELDS), jnp.int32),
                 port=jnp.zeros(1, jnp.int32), to_router=jnp.zeros(1, bool), to_server=jnp.zeros(1, bool),
                 waiting=jnp.zeros((2, 4), jnp.int32))
    window = dict(warmup=jnp.int32(0), measure=jnp.int32(10**6))
    by_list = record(empty_stats(servers, 1, 4, 3), Events(
        servers=jnp.asarray(listed), injected=jnp.asarray(injected), enqueued=jnp.asarray(enqueued),
        missed=jnp.asarray(missed), **quiet), jnp.int32(5), 4, 3, **window)
    dense = lambda flags: jnp.asarray(np.bincount(listed[flags], minlength=servers) > 0)  # noqa: E731
    every = record(empty_stats(servers, 1, 4, 3), Events(
        servers=None, injected=dense(injected), enqueued=dense(enqueued), missed=dense(missed), **quiet),
        jnp.int32(5), 4, 3, **window)
    for field in ("injected", "generated", "missed"):
        np.testing.assert_array_equal(getattr(by_list, field), getattr(every, field), err_msg=field)
    assert np.asarray(by_list.injected).tolist() == [0, 1, 0, 0, 1, 0]
    assert np.asarray(by_list.generated).tolist() == [0, 0, 0, 0, 1, 1]


def test_injection_buffers_have_their_own_depth():
    """router.injection_buffer sizes the injection buffers apart from the transit ones:
    saturated, injection rings fill to their own depth and transit rings never pass theirs."""
    network = make_network(nx.cycle_graph(6), servers_per_router=2, vcs=3, input_buffer=2,
                           injection_buffer=5)
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(1.0, 1)],
                               SimSpec(warmup=0, measure=1500, chunk=500))
    layout = network.layout
    taken = np.asarray(state.inputs.taken[0]).reshape(layout.routers, layout.ports_per_router, layout.vcs)
    injection, transit = taken[:, layout.ports:], taken[:, : layout.ports]
    assert injection.max() == 5 and transit.max() <= 2
    _check_invariants(network, state, 0)


def test_list_capacities_grow_with_headroom_and_rarely_change():
    """Each distinct capacity tuple is one compilation: a list keeps its capacity while its
    count fits with a 1.25 margin and uses at least half of it."""
    from jaxnet.sim.capacities import fit as fit_lists

    steps = ((10, 20, 40, 80, 100),) * 2
    assert fit_lists((), [5, 5]) is None
    assert fit_lists(steps, [12, 3]) == (20, 10)  # 1.5 x the count
    assert fit_lists(steps, [15, 3], (20, 10)) == (20, 10)  # 15 x 1.25 <= 20: kept
    assert fit_lists(steps, [17, 3], (20, 10)) == (40, 10)  # outgrown: 1.5 x 17 -> 40
    assert fit_lists(steps, [20, 3], (40, 10)) == (40, 10)  # half or more used: kept
    assert fit_lists(steps, [19, 3], (40, 10)) == (40, 10)  # less than half, but 1.5 x 19 needs 40
    assert fit_lists(steps, [9, 3], (40, 10)) == (20, 10)  # less than half: shrinks
    assert fit_lists(steps, [90, 3], (80, 10)) == (100, 10)  # at most every ring
    assert fit_lists(steps, [9, 3], (40, 10), slack=31) == (40, 10)  # a few unused entries: kept
    assert fit_lists(steps, [10, 3], (40, 10), rising=[True, False]) == (40, 10)  # filling up: kept
    assert fit_lists(steps, [35, 3], (40, 10), rising=[True, False]) == (80, 10)  # rising past it: grows


def test_an_overflowed_chunk_grows_only_the_lists_that_overflowed():
    """A chunk redone because a list overflowed grows that list to 2x its count and keeps the
    others' capacities (growing every list cost a short RRG 720 run two more compilations)."""
    from jaxnet.sim.capacities import overflowed as overflow_lists

    steps = ((10, 20, 40, 80, 100),) * 3
    assert overflow_lists(steps, [30, 3, 12], (20, 10, 20)) == (80, 10, 20)
    assert overflow_lists(steps, [30, 11, 12], (20, 10, 20)) == (80, 40, 20)


def test_no_list_shrinks_while_the_network_fills_up():
    """The first chunks of a run fill an empty network: their counts rise, and a list they
    leave half empty is kept rather than shrunk and grown back (each capacity compiles),
    unless it holds more than OVERSIZED x its count (a chunk redone after an overflow sizes
    its lists from a run gone wrong): it then shrinks to hold SHRINK x the count."""
    from jaxnet.sim.capacities import next_capacities as next_lists

    steps = ((10, 20, 40, 80, 100),) * 2
    layout = types.SimpleNamespace(servers=0)
    tier = (80, 40)
    for previous, peak in (([0, 0], [20, 10]), ([20, 10], [30, 12]), ([30, 12], [35, 14])):
        tier = next_lists(layout, steps, peak, tier, previous)
        assert tier == (80, 40)
    assert next_lists(layout, steps, [30, 12], tier, [35, 14]) == (80, 20)  # steady, list 1 mostly empty
    # rising, list 0 oversized (80 > 4 x 12): to 2 x 12 -> 40; list 1 (40 <= 4 x 11) kept
    assert next_lists(layout, steps, [12, 11], (80, 40), [10, 5]) == (40, 40)
    # the same counts not rising: both to 1.5 x the count -> 20
    assert next_lists(layout, steps, [12, 11], (80, 40), [13, 12]) == (20, 20)


def test_first_list_capacities_hold_a_point_that_matches_the_model(small_rrg):
    """A point whose buffers in use are what `first_guess` expects keeps its first capacities,
    so its chunk compiles once."""
    from jaxnet.sim.capacities import first as first_lists
    from jaxnet.sim.capacities import first_guess, steps
    from jaxnet.sim.capacities import next_capacities as next_lists

    layout, hops = small_rrg.layout, small_rrg.route_hops
    lists = steps([[1, 2, 4, 8, 16, 32, 64, 128, 256]] * len(LISTED), layout, 1, 1)
    for load in (0.1, 0.5, 1.0):
        tier = first_lists(layout, lists, load, hops)
        guess = first_guess(layout, load, hops)
        assert next_lists(layout, lists, guess, tier, guess) == tier


def test_first_list_capacities_follow_the_router_and_routes():
    """Little's law scales the first estimate (`capacities.held`): with FOGSim's router
    (10-phit packets, 10 cycles of router latency) on Valiant routes, a point's first chunk
    fits the occupied and waiting input rings and the occupied output rings in their first
    capacities without leaving most of them empty (the reference's counts per server would
    hold less than half of them). The other lists hold a few entries on a network this
    small, too few for an estimate per server."""
    from jaxnet import build
    from jaxnet.sim import capacities
    from jaxnet.sim.run import advance_chunk, batch_params, compiled_init

    topo = build.topology({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2})
    router = {"vc_policy": "dragonfly", "packet_size": 10, "router_latency": 10, "input_buffer": 100,
              "injection_buffer": 200, "link_latency": {"local": 2, "global": 20}, "crossbar_speedup": 2}
    network = build.network(topo, build.routing({"name": "rval", "base": "dragonfly_minimal"}), build.router(router))
    spec, load = SimSpec(warmup=0, measure=10**9), 0.2
    lists = capacities.steps("auto", network.layout, 1, 10**9)
    tier = capacities.initial(network.model, lists, load, "grow", network.route_hops)
    params = batch_params([build.traffic({"name": "uniform"}, topo, 1)], [(load, 1)], spec, network.layout)
    state, sleep = compiled_init(network.layout, capacities.sleeps(network.model, lists))(
        jax.numpy.stack([jax.random.PRNGKey(1)]))
    peaks = []
    for _ in range(2):
        state, sleep, peak, _ = advance_chunk(network, params, state, sleep, 300, 1, lists, tier)
        peaks.append(peak)
    reference = capacities.IN_USE_PER_LOAD[0] * network.layout.servers * load
    for i in (0, 1, 3):  # occupied inputs, waiting inputs, occupied outputs
        assert max(p[i] for p in peaks) <= tier[i] <= 3 * max(p[i] for p in peaks)
    assert max(p[0] for p in peaks) > 2 * reference


def test_auto_lists_vmap_width_and_sub_batch_by_network_and_run_size(small_rrg):
    """Small networks are listed only in runs long enough to pay for the lists' compilations
    (longer when a CPU vmaps them), and list only the heads routed in shorter ones; large
    ones are always listed; on a CPU tiny networks vmap the batch, larger ones run one at a
    time."""
    from jaxnet.routing.vc_policy import VC_POLICIES
    from jaxnet.sim.capacities import AUTO_LISTS_FROM, LISTS_FROM, LISTS_FROM_VMAPPED, heads_only, steps
    from jaxnet.sim.layout import Layout
    from jaxnet.sim.spec import SUB_BATCH_MAX, VMAP_UP_TO, VMAPPED_WIDER

    layout = small_rrg.layout
    assert layout.in_vcs <= VMAP_UP_TO < AUTO_LISTS_FROM
    short = SimSpec(loads=[0.5], seeds=[1, 2], warmup=1000, measure=2000)
    long = SimSpec(loads=[0.5], seeds=[1, 2], warmup=1000, measure=LISTS_FROM // 2)
    longer = SimSpec(loads=[0.5], seeds=[1, 2], warmup=1000, measure=LISTS_FROM_VMAPPED // 2)
    def lists(spec, on, cpu_vmapped=False, cpu_single=False):
        return steps(spec.active_lists, on, len(spec.points), spec.total, cpu_vmapped, cpu_single)

    assert lists(short, layout) == () and lists(short, layout, cpu_vmapped=True) == ()
    assert heads_only(lists(short, layout, cpu_single=True))
    assert lists(short, layout, cpu_single=True)[0] == (layout.in_vcs,) and len(lists(short, layout, cpu_single=True)[2]) > 1
    assert not heads_only(lists(long, layout)) and lists(long, layout)[0][-1] == layout.in_vcs
    assert lists(long, layout, cpu_vmapped=True) == ()
    assert len(lists(longer, layout, cpu_vmapped=True)) == len(LISTED)
    large = Layout(routers=720, ports=17, servers_per_router=7, router=layout.router, max_hops=4,
                   vc_policy=VC_POLICIES["hops"])
    assert large.in_vcs >= AUTO_LISTS_FROM and not heads_only(lists(short, large))
    assert lists(SimSpec(active_lists=None), large) == () and not heads_only(())
    if jax.default_backend() == "cpu":
        assert short.resolved_vmap_width(layout) is None and short.resolved_vmap_width(large) == 1
        assert short.cpu_vmapped(layout, 2) and not short.cpu_vmapped(layout, 1) and not short.cpu_vmapped(large, 2)
        assert not short.cpu_single(layout, 2) and short.cpu_single(layout, 1) and short.cpu_single(large, 2)
        # sub-batches of cheap points hold many (shared by the workers), of costly ones 2 or 1
        assert [short.resolved_sub_batch(layout, 40, workers=w) for w in (1, 2)] == [40, 10]
        assert short.resolved_sub_batch(layout, 1000) == VMAPPED_WIDER * SUB_BATCH_MAX
        assert [short.resolved_sub_batch(large, 40, workers=w) for w in (1, 2)] == [2, 1]
    assert SimSpec(vmap_width=3).resolved_vmap_width(large) == 3
    assert SimSpec(sub_batch=5).resolved_sub_batch(layout, 40, workers=2) == 5


def test_flat_gathers_match_indexing(monkeypatch):
    """`take_pair` reads what 2-D indexing does, by one flat index and by the 2-D fallback
    for arrays too large for an int32 flat index."""
    from jaxnet.core import gather

    rng = np.random.default_rng(0)
    table = rng.integers(0, 100, (5, 7, 3)).astype(np.int32)
    i, j = rng.integers(0, 5, (4, 6)), rng.integers(0, 7, (1, 6))
    slots = rng.integers(0, 100, (9, 4)).astype(np.int32)
    row = np.array([3, 0, 7, 5, 1])
    for limit in (2**31, 8):  # flat index, then the 2-D fallback
        monkeypatch.setattr(gather, "FLAT_INDEX_LIMIT", limit)
        assert (np.asarray(gather.take_pair(jnp.asarray(table), i, j)) == table[i, j]).all()
        assert (np.asarray(gather.take_pair(jnp.asarray(slots), row, 2)) == slots[row, 2]).all()


@pytest.mark.parametrize("size", [1, 32, 33, 1024, 1025, 40_000])
def test_prefix_counts_and_compaction_match_numpy(monkeypatch, size):
    """`work.prefix_count` is numpy's cumsum of the mask over one block, several and several
    levels of blocks, in float32 and in int32 (arrays too long for exact float32 sums);
    `compact` lists the entries that hold in order, up to its capacity, and counts them all."""
    from jaxnet.sim import work

    rng = np.random.default_rng(size)
    mask = rng.random(size) < 0.6
    for exact in (2**24, 16):  # float32 sums, then the int32 fallback
        monkeypatch.setattr(work, "FLOAT32_EXACT", exact)
        assert (np.asarray(work.prefix_count(jnp.asarray(mask))) == np.cumsum(mask)).all()
        batched = jax.vmap(work.prefix_count)(jnp.asarray(np.stack([mask, ~mask])))
        assert (np.asarray(batched) == np.cumsum([mask, ~mask], axis=1)).all()
    capacity = max(1, size // 2)
    subset, count = work.compact(jnp.asarray(mask), capacity)
    held = np.flatnonzero(mask)[:capacity]
    assert int(count) == mask.sum() and (np.asarray(subset.valid) == (np.arange(capacity) < len(held))).all()
    assert (np.asarray(subset.ids)[:len(held)] == held).all()


def test_lists_sized_once_compile_once_with_the_rows_of_grown_lists(small_rrg, monkeypatch):
    """`sim.list_sizing: once` sizes the lists up front for a saturating batch and keeps
    them (one capacity tuple: one compilation), where `grow` follows the network as it
    fills; the rows are the same."""
    from jaxnet.sim import capacities

    used = []
    work = capacities.work
    monkeypatch.setattr(capacities, "work", lambda lists, tier: used.append(tier) or work(lists, tier))
    steps = [[1, 16, 512]] * len(LISTED)  # few tiers: each is a compilation
    points = [(0.3, 1), (1.0, 1)]
    rows = {}
    for sizing in ("grow", "once"):
        used.clear()
        spec = SimSpec(warmup=500, measure=1500, chunk=250, active_lists=steps, list_sizing=sizing)
        rows[sizing], _ = simulate_cfg(small_rrg, {"name": "uniform"}, points, spec)
        rows[sizing + " tiers"] = set(used)
    assert len(rows["grow tiers"]) > 1 and len(rows["once tiers"]) == 1
    for grown, once in zip(rows["grow"], rows["once"]):
        assert once["work_lists"] == "listed, sized once"
        assert {k: v for k, v in grown.items() if k not in TIMING_KEYS} == \
               {k: v for k, v in once.items() if k not in TIMING_KEYS}


def test_heads_listed_alone_give_the_rows_of_every_buffer_and_redo_a_chunk_they_overflow(small_rrg, monkeypatch):
    """On a small network a short run that a CPU steps one simulation at a time visits every
    buffer and routes only the heads that may move, compacted from every ring
    (`capacities.heads_only`), sized once; a chunk whose heads outgrew their capacity is
    redone with a larger one. The rows are those of every buffer, below and past saturation."""
    from jaxnet.sim import capacities
    from jaxnet.sim.capacities import heads_only
    from jaxnet.sim.work import EveryBuffer

    layout = small_rrg.layout
    used = []
    work = capacities.work
    monkeypatch.setattr(capacities, "work", lambda lists, tier: used.append(work(lists, tier)) or used[-1])
    points = [(0.3, 1), (1.0, 2)]
    spec = SimSpec(warmup=500, measure=1500, chunk=250)
    if jax.default_backend() == "cpu":
        assert heads_only(capacities.steps("auto", layout, 1, spec.total, cpu_single=spec.cpu_single(layout, 1)))
    alone = [[layout.in_vcs]] * 2 + [[2**k for k in range(9)]] + [[layout.out_vcs]] * 2 + [[layout.servers]]
    heads, _ = simulate_cfg(small_rrg, {"name": "uniform"}, points, SimSpec(warmup=500, measure=1500, chunk=250,
                                                                           active_lists=alone, list_sizing="grow"))
    assert {type(w) for w in used} == {EveryBuffer} and len(set(used)) == 1  # sized once, even under grow
    assert 1 <= used[0].head_capacity < layout.in_vcs and heads[0]["work_lists"] == "every buffer, heads listed"
    every, _ = simulate_cfg(small_rrg, {"name": "uniform"}, points, SimSpec(warmup=500, measure=1500, chunk=250,
                                                                           active_lists=None))
    assert every[1]["accepted_load"] < 0.9  # the second point saturates
    # heads of capacity 1 at first: the first chunk overflows and is redone with more
    tiny = [[layout.in_vcs]] * 2 + [[1, 128]] + [[layout.out_vcs]] * 2 + [[layout.servers]]
    used.clear()
    monkeypatch.setattr(capacities, "initial", lambda *args: tuple(options[0] for options in
                                                                   capacities.steps(tiny, layout, 2, spec.total)))
    overflowed, _ = simulate_cfg(small_rrg, {"name": "uniform"}, points, SimSpec(warmup=500, measure=1500, chunk=250,
                                                                                 active_lists=tiny))
    assert used[0].head_capacity == 1 and used[1].head_capacity in (128, None)  # None: every head
    for rows in (heads, overflowed):
        for row, reference in zip(rows, every):
            assert {k: v for k, v in row.items() if k not in TIMING_KEYS} == \
                   {k: v for k, v in reference.items() if k not in TIMING_KEYS}


def test_list_sizing_auto_is_once_on_accelerators_only():
    assert SimSpec().resolved_list_sizing() == ("once" if jax.default_backend() != "cpu" else "grow")
    with pytest.raises(ValueError, match="sim.list_sizing"):
        SimSpec(list_sizing="fixed")


def test_lists_sized_once_bound_the_heads_per_server_only_where_heads_sleep(small_rrg):
    """Past saturation `once` sizes each list for the smaller of a share of every ring and a
    count per server; the heads' count per server was measured on heads that sleep when
    blocked (more of them wake under best_first), so heads that never sleep keep the share."""
    from jaxnet.sim import capacities

    layout = small_rrg.layout
    lists = capacities.steps("auto", layout, 1, 10**7)
    share = capacities.SATURATED_SHARE[capacities.HEADS] * layout.in_vcs
    per_server = capacities.SATURATED_PER_SERVER[capacities.HEADS] * layout.servers
    assert per_server < share  # 12 input VCs per server: the count per server binds
    assert capacities.sleeps(small_rrg.model, lists)
    assert capacities.saturated(small_rrg.model, lists)[capacities.HEADS] == per_server
    graph = nx.random_regular_graph(4, 16, seed=3)
    awake = make_network(graph, servers_per_router=2, vcs=4, request_busy_port=False)
    assert not capacities.sleeps(awake.model, lists)
    assert capacities.saturated(awake.model, lists)[capacities.HEADS] == share
    best_first = make_network(graph, servers_per_router=2, vcs=4, selection="best_first")
    assert capacities.saturated(best_first.model, lists)[capacities.HEADS] == min(
        share, capacities.HEADS_PER_SERVER_BEST_FIRST * layout.servers)
    assert capacities.once(small_rrg.model, lists, 1.0, small_rrg.route_hops)[capacities.HEADS] >= per_server
