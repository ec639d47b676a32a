"""Build a simulation on the host, run a batch of (load, seed) points, summarise results.

One call simulates any list of points as one batch in one compiled call, sharded across
all visible devices: vmapped whole on GPU/TPU, stepped one simulation at a time on CPU
(`SimSpec.vmap_width`). Loads, seeds, traffic tables and routing tables are traced inputs:
running other points of the same shape reuses the compiled step.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time
from typing import Any, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core.validate import require
from jaxnet.routing import RoutingScheme, build_routing, vc_policy
from jaxnet.sim.layout import Layout, NetArrays, build_net_arrays
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.sim.state import init_state
from jaxnet.sim.stats import summarize
from jaxnet.sim.step import Params, run_cycles
from jaxnet.topology import Topology, build_topology
from jaxnet.traffic import TrafficTable
from jaxnet.traffic.device import stack_tables


@dataclasses.dataclass(frozen=True, eq=False)
class Network:
    """A topology with a routing scheme and router model, ready to simulate."""

    topo: Topology
    routing: RoutingScheme
    layout: Layout
    net: NetArrays
    tables: Any  # routing tables on device

    @classmethod
    def build(cls, topo: Topology, routing: RoutingScheme, router: RouterSpec) -> "Network":
        require(topo.n_ports <= 127, "topology degree", topo.n_ports, "at most 127 ports per router")
        tables = routing.build_tables(topo)
        max_hops = int(routing.max_hops(topo, tables))
        policy = vc_policy.resolve(router.vc_policy, routing, router.flow_control)
        needed = int(vc_policy.vcs_needed(policy, routing, topo, tables))
        require(router.vcs >= needed, "router.vcs", router.vcs,
                f">= {needed}: routing={routing.name} with vc_policy={policy} needs {needed} VCs "
                f"on {topo.name} (longest route {max_hops} hops)")
        layout = Layout(topo.n_routers, topo.n_ports, topo.servers_per_router, router, max_hops, policy)
        return cls(topo, routing, layout, build_net_arrays(topo, layout),
                   jax.tree_util.tree_map(jnp.asarray, tables))

    @classmethod
    def from_config(cls, cfg: Mapping) -> "Network":
        return cls.build(build_topology(cfg["topology"]), build_routing(cfg["routing"]),
                         RouterSpec.from_config(cfg["router"]))


_INT_MAX = 2**31 - 1
# Buffers in use per server at saturation (occupied input rings, waiting heads, occupied
# output rings, output rings with a packet to send), measured on RRGs (docs/benchmarks.md).
FULL_LOAD_IN_USE = (5.0, 1.0, 8.0, 4.0)


@functools.lru_cache(maxsize=32)
def compiled_advance(layout: Layout, routing: RoutingScheme, n_cycles: int,
                     vmap_width: int | None = None, tier: tuple | None = None):
    """jit of n_cycles steps of a batch -> (state, int32 [batch, 3] most rings listed in a
    cycle): vmap over `vmap_width` simulations at a time (the whole batch when None),
    lax.map over the rest; `tier` the ring-list capacities (`step.cycle_step`). The input
    state is kept (a chunk whose lists overflowed is redone from it); cached per structure."""

    def one(net, tables, params, state):
        return run_cycles(layout, routing, net, tables, params, state, n_cycles, tier)

    def batch(net, tables, params, state):
        n = jax.tree_util.tree_leaves(state)[0].shape[0]
        if vmap_width is None or vmap_width >= n:
            return jax.vmap(one, in_axes=(None, None, 0, 0))(net, tables, params, state)
        return jax.lax.map(lambda ps: one(net, tables, *ps), (params, state), batch_size=vmap_width)

    return jax.jit(batch)


def fit_lists(lists: tuple, peak, margin: float = 1.25) -> tuple | None:
    """The list capacities (one per list) that hold `margin` x the counts `peak`: per list
    the smallest step that does, its last (every ring) if none; None when there are no
    lists (every buffer every cycle)."""
    if not lists:
        return None
    return tuple(next((k for k in steps if k >= margin * count), steps[-1])
                 for steps, count in zip(lists, np.asarray(peak)))


def advance_chunk(network: "Network", params, state, n_cycles: int, vmap_width, lists: tuple, tier):
    """(state after n_cycles, the counts of buffers listed at most in a cycle): runs with
    list capacities `tier` and redoes the chunk with larger ones while a list overflowed."""
    while True:
        advance = compiled_advance(network.layout, network.routing, n_cycles, vmap_width, tier)
        new_state, peak = advance(network.net, network.tables, params, state)
        peak = np.asarray(peak).max(axis=0)
        if tier is None or bool(np.all(peak <= np.asarray(tier))):
            return new_state, peak
        tier = fit_lists(lists, np.maximum(peak, tier), margin=2.0)


@functools.lru_cache(maxsize=32)
def compiled_init(layout: Layout):
    return jax.jit(jax.vmap(lambda key: init_state(layout, key)))


def shard(tree, n_points: int):
    """Place the batch axis across all visible devices (no-op on one device or when the
    batch does not divide evenly; `simulate` pads it so that it does)."""
    devices = jax.devices()
    if len(devices) == 1 or n_points % len(devices):
        return tree
    mesh = jax.sharding.Mesh(np.array(devices), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    return jax.device_put(tree, sharding)


def batch_params(traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
                 spec: SimSpec) -> Params:
    """Traced inputs of a batch: one traffic table and one (load, seed) point per simulation."""
    n = len(points)
    return Params(
        load=jnp.asarray([load for load, _ in points], jnp.float32),
        traffic=stack_tables(traffic),
        warmup=jnp.full(n, spec.warmup, jnp.int32),
        measure=jnp.full(n, spec.measure, jnp.int32),
        watchdog=jnp.full(n, spec.watchdog, jnp.int32),
        generate_until=jnp.full(n, _INT_MAX if spec.generate_until is None else spec.generate_until,
                                jnp.int32),
    )


def simulate(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
             spec: SimSpec, progress: bool = False):
    """Simulate the (offered load, seed) points as one batch, point i with traffic[i].

    Returns (rows, final_state): one summary dict per point, and the batched final state
    (for invariant checks).
    """
    require(len(points) > 0, "sim.loads x sim.seeds", points, "at least one point")
    require(len(traffic) == len(points), "traffic", len(traffic), f"one table per point ({len(points)})")
    for load, _ in points:
        require(0.0 < load <= 1.0, "sim.loads", load, "offered loads in (0, 1] phits/cycle/server")
    n = len(points)
    # one simulation per device at least: pad the batch with copies of its last point
    extra = -n % jax.device_count()
    batch_points, batch_traffic = list(points) + [points[-1]] * extra, list(traffic) + [traffic[-1]] * extra
    params = batch_params(batch_traffic, batch_points, spec)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in batch_points])
    params, keys = shard((params, keys), len(batch_points))

    start = time.perf_counter()
    state = compiled_init(network.layout)(keys)
    lists, width = spec.resolved_lists(network.layout), spec.resolved_vmap_width()
    chunks = math.ceil(spec.total / spec.chunk)
    bar = _progress(spec.chunk * chunks, n, progress)
    compile_s = None
    peak = first_guess(network.layout, max(load for load, _ in points))
    for i in range(chunks):
        state, peak = advance_chunk(network, params, state, spec.chunk, width, lists, fit_lists(lists, peak))
        if i == 0:
            jax.block_until_ready(state)
            compile_s = time.perf_counter() - start
        bar.update(spec.chunk)
    jax.block_until_ready(state)
    bar.close()
    wall = time.perf_counter() - start
    stats, deadlock_at = jax.device_get((state.stats, state.watchdog.deadlock_at))
    rows = [summarize(network.topo, network.layout, spec.measure, points[i],
                      jax.tree_util.tree_map(lambda a: a[i], stats), int(deadlock_at[i]))
            for i in range(n)]
    device = jax.devices()[0].device_kind
    for row in rows:
        row.update(wall_s=round(wall, 3), first_chunk_s=round(compile_s, 3), batch=n,
                   device=device, devices=jax.device_count(), cycles_simulated=spec.chunk * chunks)
    return rows, jax.tree_util.tree_map(lambda a: a[:n], state)


def first_guess(layout: Layout, load: float):
    """Buffers in use per cycle to size the first chunk's lists: measured multiples of the
    server count on RRG 720 / 1224 at saturation, scaled by the offered load (docs/benchmarks.md)."""
    return np.asarray(FULL_LOAD_IN_USE) * layout.servers * min(1.0, load + 0.25)


def _progress(total: int, n: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="cycle", desc=f"simulating {n} point(s)", disable=not enabled)
