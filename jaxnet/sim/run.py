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


@functools.lru_cache(maxsize=32)
def compiled_advance(layout: Layout, routing: RoutingScheme, n_cycles: int,
                     vmap_width: int | None = None):
    """jit of n_cycles steps of a batch: vmap over `vmap_width` simulations at a time (the
    whole batch when None), lax.map over the rest; cached per static structure."""

    def one(net, tables, params, state):
        return run_cycles(layout, routing, net, tables, params, state, n_cycles)

    def batch(net, tables, params, state):
        if vmap_width is None:
            return jax.vmap(one, in_axes=(None, None, 0, 0))(net, tables, params, state)
        return jax.lax.map(lambda ps: one(net, tables, *ps), (params, state), batch_size=vmap_width)

    return jax.jit(batch, donate_argnums=(3,))


@functools.lru_cache(maxsize=32)
def compiled_init(layout: Layout):
    return jax.jit(jax.vmap(lambda key: init_state(layout, key)))


def _shard(tree, n_points: int):
    """Place the batch axis across all visible devices (no-op on one device)."""
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
    params = batch_params(traffic, points, spec)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in points])
    params, keys = _shard((params, keys), n)

    start = time.perf_counter()
    state = compiled_init(network.layout)(keys)
    advance = compiled_advance(network.layout, network.routing, spec.chunk, spec.resolved_vmap_width())
    chunks = math.ceil(spec.total / spec.chunk)
    bar = _progress(spec.chunk * chunks, n, progress)
    compile_s = None
    for i in range(chunks):
        state = advance(network.net, network.tables, params, state)
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
                   device=device, cycles_simulated=spec.chunk * chunks)
    return rows, state


def _progress(total: int, n: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="cycle", desc=f"simulating {n} point(s)", disable=not enabled)
