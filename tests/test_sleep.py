"""Sleeping heads (`jaxnet.sim.work.Listed`) are exact: with lists of buffers in use
that hold every ring (heads that cannot move are skipped, blocked heads sleep), kept as
lists or visited as masks of every ring, a saturated network goes through the same states,
cycle for cycle, as one that routes every head of every buffer. Small lists and every-buffer fallbacks are covered by tests/test_behaviour.py;
here the lists never overflow, so the sleeping path carries the whole run."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnet import build
from jaxnet.routing import build_routing
from jaxnet.sim.run import batch_params, compiled_advance, compiled_init
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.sim.work import NEVER, EveryBuffer, Listed, heads_sleep, port_mask, rose_ports
from jaxnet.topology import build_topology
from jaxnet.traffic import build_traffic

CASES = {
    "minimal_rrg": ({"name": "rrg", "routers": 16, "degree": 4, "seed": 1, "servers_per_router": 3},
                    {"name": "minimal"}, {}, "uniform"),
    "polarized_hamming": ({"name": "hamming", "sides": [4, 4], "servers_per_router": 3},
                          {"name": "polarized"}, {"selection": "available_first"}, "server_permutation"),
    "polarized_best_first_rrg": ({"name": "rrg", "routers": 16, "degree": 4, "seed": 1, "servers_per_router": 3},
                                 {"name": "polarized"}, {"selection": "best_first"}, "uniform"),
    "dor_bubble_torus": ({"name": "torus", "sides": [4, 4], "servers_per_router": 2},
                         {"name": "dor"}, {"flow_control": "bubble", "vcs": 1}, "tornado"),
    "valiant_dragonfly_injection": ({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2},
                                    {"name": "valiant", "base": "dragonfly_minimal"},
                                    {"vc_policy": "dragonfly", "vcs": 4, "injection_buffers": 2,
                                     "injection_policy": "dest"}, "adv_group"),
    # heads stuck at injection are redrawn every cycle and stay awake; the others sleep
    "rval_recomp_dragonfly": ({"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2},
                              {"name": "rval_recomp", "base": "dragonfly_minimal"},
                              {"vc_policy": "dragonfly", "injection_buffers": 2, "injection_policy": "random"},
                              "adv_group"),
}
CYCLES, CHUNK = 800, 200


# fast tier: Polarized under both selections (several candidates per head, the hardest case;
# under best_first heads also sleep on their margin); bubble DOR through lists is in
# tests/test_behaviour.py
SLOW = {"minimal_rrg", "dor_bubble_torus", "valiant_dragonfly_injection"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow if n in SLOW else ()) for n in sorted(CASES)])
def test_sleeping_heads_change_nothing(name):
    topology, routing, router, pattern = CASES[name]
    topo = build_topology(topology)
    network = build.network(topo, build_routing(routing), build.router({"vcs": "auto", **router}))
    layout = network.layout
    assert heads_sleep(network.model)
    points = [(1.0, 1), (0.6, 2)]
    spec = SimSpec(warmup=200, measure=CYCLES)
    params = batch_params([build_traffic({"name": pattern}, topo, seed) for _, seed in points], points,
                          spec, layout)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in points])
    dense, _ = compiled_init(layout, False)(keys)
    every_ring = (layout.in_vcs,) * 3 + (layout.out_vcs,) * 2 + (layout.servers,)
    # lists as long as every ring, visited as lists, and the occupied rings visited as masks
    works = (Listed(every_ring, dense=False), Listed(every_ring))
    listed = [compiled_init(layout, True)(keys) for _ in works]
    slept = on_margin = 0
    for _ in range(CYCLES // CHUNK):
        dense, _, _ = compiled_advance(layout, network.routing, CHUNK, None, EveryBuffer())(
            network.net, network.tables, params, dense, None)
        listed = [compiled_advance(layout, network.routing, CHUNK, None, work)(
            network.net, network.tables, params, *carry)[:2] for work, carry in zip(works, listed)]
        sleep = listed[0][1]
        asleep = np.asarray(sleep.wait_vc) >= 0
        slept = max(slept, int(asleep.sum()))
        on_margin = max(on_margin, int((asleep & (np.asarray(sleep.wake_at) < NEVER)).sum()))
        for work, (state, asleep_there) in zip(works, listed):
            for path, a, b in zip(jax.tree_util.tree_leaves_with_path(dense), jax.tree_util.tree_leaves(dense),
                                  jax.tree_util.tree_leaves(state)):
                np.testing.assert_array_equal(a, b, err_msg=f"{work}: {jax.tree_util.keystr(path[0])}")
            for a, b in zip(jax.tree_util.tree_leaves(sleep), jax.tree_util.tree_leaves(asleep_there)):
                np.testing.assert_array_equal(a, b, err_msg=str(work))
    assert slept > 0, "no head ever slept: the case does not exercise the sleeping path"
    if network.layout.router.selection == "best_first":
        assert on_margin > 0, "no head slept on its margin: the case does not exercise it"
    assert int(np.asarray(dense.stats.consumed).sum(axis=1).min()) > 0


@pytest.mark.parametrize("ports", [1, 17, 32, 33, 70])
def test_port_mask_sets_one_bit_per_port(ports):
    """A sleeping head's candidate ports as bit words (`work.port_mask`), across word ends."""
    chosen = np.random.default_rng(ports).random((40, ports)) < 0.5
    words = np.asarray(port_mask(jnp.asarray(chosen)))
    assert words.shape == (40, -(-ports // 32)) and words.dtype == np.uint32
    bits = (words[:, np.arange(ports) // 32] >> (np.arange(ports) % 32).astype(np.uint32)) & 1
    np.testing.assert_array_equal(bits.astype(bool), chosen)


@pytest.mark.parametrize("ports, vcs, policy", [(17, 4, "dragonfly"), (40, 3, "dragonfly"), (17, 4, "hops")])
def test_rose_ports_match_a_reference(ports, vcs, policy):
    """`work.rose_ports` builds the woken ports' words of a plain loop over the risen
    outputs (row V, where a head's candidates may lie on several VCs: every port where some
    VC rose), across word ends."""
    from jaxnet.routing.vc_policy import VC_POLICIES
    from jaxnet.sim.layout import Layout
    from jaxnet.sim.rings import Subset

    layout = Layout(routers=6, ports=ports, servers_per_router=3, router=RouterSpec(vcs=vcs), max_hops=4,
                    vc_policy=VC_POLICIES[policy])
    rows = vcs if policy == "hops" else vcs + 1
    rng = np.random.default_rng(ports)
    ids = np.sort(rng.choice(layout.out_vcs, 60, replace=False)).astype(np.int32)
    valid, rose = rng.random(60) < 0.8, rng.random(60) < 0.5
    expected = np.zeros((layout.routers, rows, -(-ports // 32)), np.uint32)
    for ring in ids[valid & rose]:
        router, rest = divmod(int(ring), layout.ports_per_router * vcs)
        port, vc = divmod(rest, vcs)
        if port < ports:
            for row in {vc, rows - 1} if rows > vcs else {vc}:
                expected[router, row, port // 32] |= np.uint32(1 << (port % 32))
    listed = Subset(jnp.asarray(ids), jnp.asarray(valid))
    np.testing.assert_array_equal(np.asarray(rose_ports(layout, listed, jnp.asarray(rose))), expected)


@pytest.mark.parametrize("router", [{}, pytest.param({"link_latency": 3, "router_latency": 1}, marks=pytest.mark.slow)])
def test_occupancy_moves_at_most_its_step_a_cycle(router):
    """What margin sleeping rests on (`route.occupancy_step`): from one cycle to the next the
    occupancy of every output (port, VC) of a saturated network changes by at most the step."""
    from jaxnet.sim.layout import Model
    from jaxnet.sim.route import occupancy_step, vc_occupancy

    topo = build_topology({"name": "rrg", "routers": 16, "degree": 4, "seed": 1, "servers_per_router": 3})
    network = build.network(topo, build_routing({"name": "polarized"}),
                            build.router({"vcs": "auto", "selection": "best_first", **router}))
    layout = network.layout
    step = occupancy_step(network.model)
    assert step == 1
    ports = jnp.arange(layout.out_ports)
    network_port = np.asarray(network.net.out_network)
    points = [(1.0, 1)]
    spec = SimSpec(warmup=0, measure=10**6)
    params = batch_params([build_traffic({"name": "uniform"}, topo, 1)], points, spec, layout)
    state, _ = compiled_init(layout, False)(jnp.stack([jax.random.PRNGKey(1)]))
    advance = compiled_advance(layout, network.routing, 1, None, EveryBuffer())

    @jax.jit
    def occupancy(state):
        model = Model(layout, network.routing, network.net, network.tables)
        one = jax.tree_util.tree_map(lambda a: a[0], state)
        return vc_occupancy(model, one.inputs, one.outputs, one.out_held, ports[:, None],
                            jnp.arange(layout.vcs)[None, :], one.cycle)[0]

    before, largest, changed = np.asarray(occupancy(state)), 0, 0
    for _ in range(600):
        state, _, _ = advance(network.net, network.tables, params, state, None)
        now = np.asarray(occupancy(state))
        moved = np.abs(now - before)[network_port]
        largest, changed = max(largest, int(moved.max())), changed + int((moved > 0).sum())
        before = now
    assert changed > 1000 and largest <= step, (changed, largest)


DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}
SMALL_RRG = {"name": "rrg", "routers": 16, "degree": 4, "seed": 1, "servers_per_router": 3}
TORUS = {"name": "torus", "sides": [4, 4], "servers_per_router": 2}
# (topology, routing, router) whose scheme offers one candidate port a head: on the
# Dragonfly a=4 h=2 p=2 one global link joins two groups, so dragonfly_minimal and the
# Valiant family on it do; schemes that follow a packet's path always do
ONE_CANDIDATE = {
    "rval_fogsim": (DRAGONFLY, {"name": "rval", "base": "dragonfly_minimal"},
                    {"vc_policy": "dragonfly", "packet_size": 10, "router_latency": 10,
                     "link_latency": {"local": 2, "global": 20}, "crossbar_speedup": 2, "input_buffer": 100,
                     "injection_buffer": 200, "injection_buffers": 2, "injection_policy": "dest"}),
    "dragonfly_minimal_best_first": (DRAGONFLY, {"name": "dragonfly_minimal"}, {"selection": "best_first"}),
    # room for two packets where a hop enters a ring: read from the one output looked up
    "dor_bubble_torus": (TORUS, {"name": "dor"}, {"flow_control": "bubble", "vcs": 1}),
    "ksp_rrg": (SMALL_RRG, {"name": "ksp", "k": 4}, {}),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow if n in {"dragonfly_minimal_best_first",
                                                                                    "ksp_rrg"} else ())
                                  for n in sorted(ONE_CANDIDATE)])
def test_one_candidate_lookups_change_nothing(name):
    """Where the scheme offers at most one candidate port a head (`Layout.one_candidate`),
    routing looks up that output alone, without occupancy: a saturated network goes through
    the same states, cycle for cycle and sleeping heads included, as with every candidate
    port's view computed."""
    import dataclasses

    from jaxnet.sim.network import Network

    topology, routing, router = ONE_CANDIDATE[name]
    topo = build_topology(topology)
    network = build.network(topo, build_routing(routing), build.router({"vcs": "auto", **router}))
    assert network.layout.one_candidate
    every_port = Network(network.topo, network.routing, dataclasses.replace(network.layout, one_candidate=False),
                         network.net, network.tables)
    layout = network.layout
    points = [(1.0, 1), (0.5, 2)]
    params = batch_params([build_traffic({"name": "uniform"}, topo, seed) for _, seed in points], points,
                          SimSpec(warmup=200, measure=CYCLES), layout)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in points])
    every_ring = Listed((layout.in_vcs,) * 3 + (layout.out_vcs,) * 2 + (layout.servers,))
    (one, one_sleep), (every, every_sleep) = (compiled_init(layout, True)(keys) for _ in range(2))
    for _ in range(CYCLES // CHUNK):
        one, one_sleep, _ = compiled_advance(layout, network.routing, CHUNK, None, every_ring)(
            network.net, network.tables, params, one, one_sleep)
        every, every_sleep, _ = compiled_advance(every_port.layout, network.routing, CHUNK, None, every_ring)(
            network.net, network.tables, params, every, every_sleep)
        for path, a, b in zip(jax.tree_util.tree_leaves_with_path((one, one_sleep)),
                              jax.tree_util.tree_leaves((one, one_sleep)),
                              jax.tree_util.tree_leaves((every, every_sleep))):
            np.testing.assert_array_equal(a, b, err_msg=jax.tree_util.keystr(path[0]))
    assert int(np.asarray(one_sleep.wait_vc >= 0).sum()) > 0
    assert int(np.asarray(one.stats.consumed).sum(axis=1).min()) > 0


def test_most_candidates_follow_the_tables():
    """`Layout.one_candidate` is set where the scheme offers one port a head: the Dragonfly's
    minimal routes and Valiant's phases on them, and schemes that follow a packet's path,
    not graph-minimal or adaptive routes on an RRG with several shortest paths."""
    dragonfly, rrg, torus = (build_topology(t) for t in (DRAGONFLY, SMALL_RRG, TORUS))
    for topo, routing, one in [(dragonfly, {"name": "dragonfly_minimal"}, True),
                               (dragonfly, {"name": "valiant", "base": "dragonfly_minimal"}, True),
                               (rrg, {"name": "ksp", "k": 4}, True), (rrg, {"name": "source_minimal"}, True),
                               (torus, {"name": "dor"}, True),
                               (rrg, {"name": "minimal"}, False), (rrg, {"name": "valiant"}, False),
                               (rrg, {"name": "polarized"}, False)]:
        scheme = build_routing(routing)
        most = scheme.most_candidates(topo, scheme.build_tables(topo))
        network = build.network(topo, scheme, build.router({"vcs": "auto"}))
        assert (most == 1) == one == network.layout.one_candidate, (routing, most)
