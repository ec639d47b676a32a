"""Build a simulation on the host, run a batch of (load, seed) points, summarise results.

One call simulates any list of points as one batch in one compiled call, sharded across
all visible devices: vmapped whole on GPU/TPU, stepped one simulation at a time on CPU
(`Window.vmap_width`). Loads, seeds, traffic tables and routing tables are traced inputs:
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

from jaxnet.routing import RoutingScheme, build_routing
from jaxnet.sim.layout import Layout, NetArrays, RouterSpec, build_net_arrays
from jaxnet.sim.packets import wide_value
from jaxnet.sim.state import init_state
from jaxnet.sim.step import Params, Traffic, run_cycles
from jaxnet.topology import Topology, build_topology, require
from jaxnet.traffic import TrafficTable, build_traffic


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
        needed = int(routing.vcs_needed(topo, tables, router.vc_policy))
        require(router.vcs >= needed, "router.vcs", router.vcs,
                f">= {needed}: routing={routing.name} with vc_policy={router.vc_policy} needs "
                f"one VC per hop of its longest route ({max_hops} hops) on {topo.name}")
        layout = Layout(topo.n_routers, topo.n_ports, topo.servers_per_router, router, max_hops)
        return cls(topo, routing, layout, build_net_arrays(topo, layout),
                   jax.tree_util.tree_map(jnp.asarray, tables))

    @classmethod
    def from_config(cls, cfg: Mapping) -> "Network":
        return cls.build(build_topology(cfg["topology"]), build_routing(cfg["routing"]),
                         RouterSpec.from_config(cfg["router"]))


_INT_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Window:
    """Warm-up and measurement lengths, in cycles; `chunk` cycles per compiled scan."""

    warmup: int
    measure: int
    chunk: int = 500
    watchdog: int = 5000
    generate_until: int | None = None  # cycle at which generation stops (None: never)
    # Simulations stepped together by vmap; the rest of the batch runs through lax.map in
    # the same compiled call. "auto": the whole batch on GPU/TPU, 1 on CPU (XLA:CPU's
    # batched gathers cost more than vectorising across simulations saves).
    vmap_width: int | str | None = "auto"

    def __post_init__(self):
        require(self.warmup >= 0, "sim.warmup", self.warmup, "an integer >= 0 (cycles)")
        require(self.measure >= 1, "sim.measure", self.measure, "an integer >= 1 (cycles)")
        require(self.chunk >= 1, "sim.chunk", self.chunk, "an integer >= 1 (cycles)")
        require(self.watchdog >= 1, "sim.watchdog", self.watchdog, "an integer >= 1 (cycles)")
        require(self.vmap_width in ("auto", None) or (isinstance(self.vmap_width, int) and self.vmap_width >= 1),
                "sim.vmap_width", self.vmap_width, "'auto', null (whole batch) or an integer >= 1")

    def resolved_vmap_width(self) -> int | None:
        if self.vmap_width == "auto":
            return None if jax.default_backend() in ("gpu", "cuda", "rocm", "tpu") else 1
        return self.vmap_width

    @property
    def total(self) -> int:
        return self.warmup + self.measure


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


def _device_traffic(tables: Sequence[TrafficTable]) -> Traffic:
    width = max(t.n_entries for t in tables)

    def padded(t: TrafficTable) -> Traffic:
        extra = width - t.n_entries
        pad = lambda a, value: np.pad(a, ((0, 0), (0, extra)), constant_values=value)  # noqa: E731
        # padded entries are never drawn: their keep probability is 0 and alias -> entry 0
        return Traffic(pad(t.entry_router, 0), pad(t.entry_server, -1), pad(t.alias_prob, 0.0),
                       pad(t.alias_index, 0), t.rate)

    return jax.tree_util.tree_map(lambda *xs: jnp.asarray(np.stack(xs)), *map(padded, tables))


def _shard(tree, n_points: int):
    """Place the batch axis across all visible devices (no-op on one device)."""
    devices = jax.devices()
    if len(devices) == 1 or n_points % len(devices):
        return tree
    mesh = jax.sharding.Mesh(np.array(devices), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    return jax.device_put(tree, sharding)


def simulate(network: Network, traffic_cfg: Mapping, points: Sequence[tuple[float, int]],
             window: Window, progress: bool = False):
    """Simulate the (offered load, seed) points as one batch.

    Returns (rows, final_state): one summary dict per point, and the batched final state
    (for invariant checks). Traffic tables are compiled per seed, so random patterns are
    fixed per seed.
    """
    require(len(points) > 0, "sim.loads x sim.seeds", points, "at least one point")
    for load, _ in points:
        require(0.0 < load <= 1.0, "sim.loads", load, "offered loads in (0, 1] phits/cycle/server")
    by_seed = {seed: build_traffic(traffic_cfg, network.topo, seed) for _, seed in points}
    n = len(points)
    params = Params(
        load=jnp.asarray([load for load, _ in points], jnp.float32),
        traffic=_device_traffic([by_seed[seed] for _, seed in points]),
        warmup=jnp.full(n, window.warmup, jnp.int32),
        measure=jnp.full(n, window.measure, jnp.int32),
        watchdog=jnp.full(n, window.watchdog, jnp.int32),
        generate_until=jnp.full(n, _INT_MAX if window.generate_until is None else window.generate_until,
                                jnp.int32),
    )
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in points])
    params, keys = _shard((params, keys), n)

    start = time.perf_counter()
    state = compiled_init(network.layout)(keys)
    advance = compiled_advance(network.layout, network.routing, window.chunk,
                               window.resolved_vmap_width())
    chunks = math.ceil(window.total / window.chunk)
    bar = _progress(window.chunk * chunks, n, progress)
    compile_s = None
    for i in range(chunks):
        state = advance(network.net, network.tables, params, state)
        if i == 0:
            jax.block_until_ready(state)
            compile_s = time.perf_counter() - start
        bar.update(window.chunk)
    jax.block_until_ready(state)
    bar.close()
    wall = time.perf_counter() - start
    stats = jax.device_get(state.stats)
    rows = [summarize(network, window, points[i], jax.tree_util.tree_map(lambda a: a[i], stats))
            for i in range(n)]
    device = jax.devices()[0].device_kind
    for row in rows:
        row.update(wall_s=round(wall, 3), first_chunk_s=round(compile_s, 3), batch=n,
                   device=device, cycles_simulated=window.chunk * chunks)
    return rows, state


def _progress(total: int, n: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="cycle", desc=f"simulating {n} point(s)", disable=not enabled)


def jain(x: np.ndarray) -> float:
    """Jain fairness index (sum x)^2 / (n sum x^2); 1 when all equal."""
    x = np.asarray(x, np.float64)
    denom = len(x) * np.sum(x * x)
    return float(np.sum(x) ** 2 / denom) if denom > 0 else float("nan")


def summarize(network: Network, window: Window, point: tuple[float, int], stats) -> dict:
    """One results row (DESIGN section 5) from one simulation's statistics."""
    layout, topo = network.layout, network.topo
    size, measure, servers = layout.router.packet_size, window.measure, layout.servers
    per_server = size / measure  # packets in the window -> phits/cycle
    consumed = stats.consumed.astype(np.int64)
    total_consumed = int(consumed.sum())
    hist = wide_value(stats.hops)
    links = np.asarray(stats.link_packets).reshape(layout.routers, -1)[:, : layout.ports]
    util = links[topo.neighbor >= 0] * per_server
    mean_or_nan = lambda a, b: float(a / b) if b else float("nan")  # noqa: E731
    in_ports = layout.in_ports
    return {
        "offered_load": float(point[0]),
        "seed": int(point[1]),
        "generated_load": float(stats.generated.sum() * per_server / servers),
        "injected_load": float(stats.injected.sum() * per_server / servers),
        "accepted_load": float(total_consumed * per_server / servers),
        "accepted_load_min": float(consumed.min() * per_server),
        "message_latency": mean_or_nan(int(wide_value(stats.message_latency)), total_consumed),
        "network_latency": mean_or_nan(int(wide_value(stats.network_latency)), total_consumed),
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
        "deadlock": bool(stats.deadlock_at >= 0),
        "deadlock_at": int(stats.deadlock_at),
    }
