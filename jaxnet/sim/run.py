"""Build a simulation on the host, run a batch of (load, seed) points, summarise results.

One call simulates any list of points as one batch in one compiled call, sharded across
all visible devices: vmapped whole on GPU/TPU, stepped one simulation at a time on CPU
(`SimSpec.vmap_width`). Loads, seeds, traffic tables and routing tables are traced inputs:
running other points of the same shape reuses the compiled step.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import math
import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
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
        """The network; `router.vcs: auto` sizes the VCs as the scheme's VC policy needs on
        this topology, with hop VCs from the exact longest route (`longest_route`)."""
        require(topo.n_ports <= 127, "topology degree", topo.n_ports, "at most 127 ports per router")
        tables = routing.build_tables(topo)
        max_hops = int(routing.max_hops(topo, tables))
        policy = vc_policy.resolve(router.vc_policy, routing, router.flow_control)
        needed = int(vc_policy.vcs_needed(policy, routing, topo, tables))
        routing.check_deadlock_free(topo, tables, policy)
        if router.vcs == "auto":
            require(needed <= 64, "router.vcs", "auto", f"at most 64 VCs ({routing.name} needs {needed})")
            network = cls._assemble(topo, routing, dataclasses.replace(router, vcs=needed), max_hops, policy, tables)
            if policy != "hops":
                return network
            longest = longest_route(network)
            return cls._assemble(topo, routing, dataclasses.replace(router, vcs=max(longest, 1)), longest,
                                 policy, tables)
        require(router.vcs >= needed, "router.vcs", router.vcs,
                f">= {needed}: routing={routing.name} with vc_policy={policy} needs {needed} VCs "
                f"on {topo.name} (longest route {max_hops} hops)")
        return cls._assemble(topo, routing, router, max_hops, policy, tables)

    @classmethod
    def _assemble(cls, topo, routing, router, max_hops, policy, tables) -> "Network":
        layout = Layout(topo.n_routers, topo.n_ports, topo.servers_per_router, router, max_hops, policy)
        return cls(topo, routing, layout, build_net_arrays(topo, layout),
                   jax.tree_util.tree_map(jnp.asarray, tables))

    @classmethod
    def from_config(cls, cfg: Mapping) -> "Network":
        return cls.build(build_topology(cfg["topology"]), build_routing(cfg["routing"]),
                         RouterSpec.from_config(cfg["router"]))


_INT_MAX = 2**31 - 1
# `router.vcs: auto` follows every route of a scheme whose routes the static bound only
# bounds up to this many routers (the route explorer); above it the bound is used.
EXPLORE_UP_TO = 128


def longest_route(network: "Network") -> int:
    """The longest route of the network's scheme in router-to-router hops: its own
    `max_hops` where that is exact, else every route followed by the route explorer
    (networks up to EXPLORE_UP_TO routers; larger ones use the bound and say so)."""
    routing, topo = network.routing, network.topo
    if routing.exact_max_hops:
        return network.layout.max_hops
    if topo.n_routers > EXPLORE_UP_TO:
        logging.getLogger("jaxnet").warning(
            "router.vcs=auto: %s routes on %d routers are not all followed (more than %d): using the "
            "bound of %d hops", routing.name, topo.n_routers, EXPLORE_UP_TO, network.layout.max_hops)
        return network.layout.max_hops
    from jaxnet.sim.explore import explore_routes

    return int(explore_routes(network, draws=routing.explore_draws).longest)


# Buffers in use per server and unit of offered load (occupied input rings, input rings with
# a packet waiting, heads routed, occupied output rings, servers with a packet to inject or
# to generate), and per squared load (output rings with a packet to send on an idle link;
# `spec.LISTED`), below saturation under uniform traffic: measured on RRG 720 (minimal,
# Polarized), Dragonfly 876 and Hamming 4x4 (docs/benchmarks.md). Past saturation the counts
# keep growing; the lists then grow with them.
IN_USE_PER_LOAD = (5.0, 0.5, 0.4, 5.5, 0.4, 0.15)


@functools.lru_cache(maxsize=32)
def compiled_advance(layout: Layout, routing: RoutingScheme, n_cycles: int,
                     vmap_width: int | None = None, tier: tuple | None = None):
    """jit of n_cycles steps of a batch -> (state, int32 [batch, 6] most rings listed in a
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


# A list whose count outgrew its capacity (with a 1.25 margin) grows to hold GROW x the count;
# it shrinks only once the count uses less than 1/SHRINK of it and the unused entries are
# more than SLACK x the server count (a few idle entries cost less than a compilation).
# Capacities that rarely change mean few compilations (each distinct capacity tuple is one;
# on RRG 720 about 5 s each): a saturated RRG 720 point compiled 22 times in 4000 cycles when
# every chunk refitted its lists.
GROW, SHRINK, SLACK = 1.5, 2, 0.25


def fit_lists(lists: tuple, peak, current: tuple | None = None, grow: float = GROW,
              slack: float = 0, rising=None) -> tuple | None:
    """The list capacities for the next chunk given the counts `peak` of the last one: per
    list `current` while it holds 1.25 x the count and is used by more than 1/SHRINK of it
    (or leaves at most `slack` entries unused, or its count is `rising`: a network filling
    up would grow it back), else (and with no current) the smallest step that holds `grow` x
    the count. None (every buffer every cycle) when there are no lists; lists always beat
    visiting every buffer (RRG 720 at saturation: 7.5-12 ms a cycle against 29 ms,
    docs/benchmarks.md)."""
    if not lists:
        return None
    tier = []
    for i, (steps, count) in enumerate(zip(lists, np.asarray(peak))):
        fitted = next(k for k in steps if k >= min(grow * count, steps[-1]))
        holds = current is not None and 1.25 * count <= current[i]
        used = current is not None and current[i] <= max(SHRINK * count, count + slack)
        keep = holds and (used or (rising is not None and bool(rising[i])))
        tier.append(int(current[i]) if keep else int(fitted))
    return tuple(tier)


def first_lists(layout: Layout, lists: tuple, load: float) -> tuple | None:
    """The first chunk's list capacities for points of offered load up to `load`."""
    return fit_lists(lists, first_guess(layout, load), grow=1.25)


def next_lists(layout: Layout, lists: tuple, peak, tier, previous) -> tuple | None:
    """The next chunk's list capacities after a chunk run with `tier` peaked at `peak`;
    `previous` the chunk before's peak (zeros after the first chunk: the network starts
    empty). No list shrinks while its count rises: a short run's first chunks, which fill the
    network, had shrunk lists that the next chunks grew back, each capacity a compilation."""
    return fit_lists(lists, peak, tier, slack=SLACK * layout.servers,
                     rising=np.asarray(peak) > np.asarray(previous))


def overflow_lists(lists: tuple, peak, tier: tuple) -> tuple:
    """Capacities to redo a chunk whose lists overflowed `tier`: a list that overflowed grows
    to hold 2x its count; the others keep theirs (each capacity tuple is a compilation)."""
    grown = fit_lists(lists, peak, grow=2.0)
    return tuple(g if p > t else t for g, p, t in zip(grown, np.asarray(peak), tier))


def advance_chunk(network: "Network", params, state, n_cycles: int, vmap_width, lists: tuple, tier):
    """(state after n_cycles, the counts of buffers listed at most in a cycle, the list
    capacities used): runs with capacities `tier` and redoes the chunk with larger ones
    while a list overflowed."""
    while True:
        advance = compiled_advance(network.layout, network.routing, n_cycles, vmap_width, tier)
        new_state, peak = advance(network.net, network.tables, params, state)
        peak = np.asarray(peak).max(axis=0)
        if tier is None or bool(np.all(peak <= np.asarray(tier))):
            return new_state, peak, tier
        tier = overflow_lists(lists, peak, tier)


# Device memory a simulation needs, in multiples of its state: its input and output state
# and the compiled chunk's temporaries, which were at most 3x the state on the paper networks
# (bench --suite memory: RRG 720 Polarized 13 VCs, 224 MB of temporaries for a 75 MB state).
MEMORY_PER_STATE = 5


def simulations_that_fit(layout: Layout) -> int | None:
    """How many simulations of `layout` fit in 90 % of the default device's memory (an estimate,
    MEMORY_PER_STATE), or None where the device does not report its memory (CPUs)."""
    stats = jax.devices()[0].memory_stats()
    limit = (stats or {}).get("bytes_limit")
    if not limit:
        return None
    shapes = jax.eval_shape(lambda key: init_state(layout, key), jax.random.PRNGKey(0))
    state = sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(shapes))
    return max(1, int(0.9 * limit) // (MEMORY_PER_STATE * state))


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


def quiet_cycles(layout: Layout) -> int:
    """The longest a network that is still moving can go without a grant or a link start: a
    packet's tail crossing, its link and its credits' way back, and router latency."""
    spec = layout.router
    longest_link = max(spec.latency_by_class().values())
    return spec.packet_size + spec.transfer_cycles + 2 * longest_link + spec.router_latency + 2


def batch_params(traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
                 spec: SimSpec, layout: Layout) -> Params:
    """Traced inputs of a batch: one traffic table and one (load, seed) point per simulation."""
    n = len(points)
    return Params(
        load=jnp.asarray([load for load, _ in points], jnp.float32),
        traffic=stack_tables(traffic),
        warmup=jnp.full(n, spec.warmup, jnp.int32),
        measure=jnp.full(n, spec.measure, jnp.int32),
        watchdog=jnp.full(n, spec.watchdog + quiet_cycles(layout), jnp.int32),
        generate_until=jnp.full(n, _INT_MAX if spec.generate_until is None else spec.generate_until,
                                jnp.int32),
    )


class InvariantError(RuntimeError):
    """A run broke packet conservation or a credit bound (an engine bug, never bad input)."""


@functools.lru_cache(maxsize=32)
def compiled_check(layout: Layout):
    """jit of the invariants of a batch: (conservation holds [n], credits within bounds [n])."""
    kind = (jnp.arange(layout.in_vcs) // layout.vcs) % layout.ports_per_router >= layout.ports
    input_depth = jnp.where(kind, layout.router.injection_depth, layout.router.input_buffer)

    def one(state):
        def within(rings, depth):
            return jnp.all((rings.taken >= 0) & (rings.taken <= depth) & (rings.gone >= 0) & (rings.gone <= rings.taken))

        generated = state.stats.generated_all[0] * (1 << 30) + state.stats.generated_all[1]
        consumed = state.stats.consumed_all[0] * (1 << 30) + state.stats.consumed_all[1]
        conserved = generated == consumed + jnp.sum(state.waiting) + jnp.sum(state.queue.taken)
        credits = (within(state.inputs, input_depth) & within(state.outputs, layout.router.output_buffer)
                   & within(state.queue, layout.router.source_queue))
        return conserved, credits

    return jax.jit(jax.vmap(one))


def check_invariants(network: "Network", state, points) -> None:
    """Raise InvariantError naming the point and the invariant a batch state breaks."""
    conserved, credits = (np.asarray(x) for x in compiled_check(network.layout)(state))
    for i, point in enumerate(points):
        if not conserved[i] or not credits[i]:
            what = "packet conservation" if not conserved[i] else "credit bounds (0 <= taken <= depth)"
            raise InvariantError(f"invariant broken at cycle {int(np.asarray(state.cycle)[i])}, load "
                                 f"{point[0]:g} seed {point[1]}: {what}")


def stuck_buffers(network: "Network", state, index: int, limit: int = 4) -> list[str]:
    """A few (router, port, VC) input buffers of simulation `index` that hold waiting
    packets, with their heads' destination routers (for deadlock reports)."""
    layout = network.layout
    taken, gone = np.asarray(state.inputs.taken[index]), np.asarray(state.inputs.gone[index])
    first = np.asarray(state.inputs.first[index])
    rings = np.nonzero(taken > gone)[0][:limit]
    slots = np.asarray(state.inputs.slots[index])
    out = []
    for ring in rings:
        row = ring * layout.input_depth + (first[ring] + gone[ring]) % layout.input_depth
        router, rest = divmod(int(ring), layout.ports_per_router * layout.vcs)
        port, vc = divmod(rest, layout.vcs)
        kind = "injection port" if port >= layout.ports else "port"
        out.append(f"router {router} {kind} {port} VC {vc} ({int(taken[ring] - gone[ring])} waiting, "
                   f"head for router {int(slots[row, pk.DST_R])})")
    return out


def _signature(network: "Network", points, spec: SimSpec) -> str:
    blob = json.dumps([network.topo.name, network.routing.name, repr(network.routing), repr(network.layout),
                       list(points), spec.warmup, spec.measure, spec.chunk, spec.generate_until, spec.watchdog])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _save_checkpoint(path: Path, state, chunk: int, signature: str) -> None:
    leaves = jax.tree_util.tree_leaves(jax.device_get(state))
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}.npz")
    np.savez(tmp, chunk=chunk, signature=signature, **{f"leaf{i}": leaf for i, leaf in enumerate(leaves)})
    os.replace(tmp, path)


def _load_checkpoint(path: Path, like, signature: str):
    """(state, chunks done) from a checkpoint of the same run, or None."""
    if not path.exists():
        return None
    try:
        with np.load(path) as f:
            if str(f["signature"]) != signature:
                return None
            leaves = [f[f"leaf{i}"] for i in range(len(jax.tree_util.tree_leaves(like)))]
            chunk = int(f["chunk"])
    except (OSError, ValueError, KeyError, EOFError):  # a damaged checkpoint is not trusted
        return None
    if [(a.shape, a.dtype) for a in leaves] != [(a.shape, a.dtype) for a in jax.tree_util.tree_leaves(like)]:
        return None  # another state layout (an older engine): start again
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(like), leaves), chunk


def simulate(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
             spec: SimSpec, on_cycles: Callable[[int], None] | None = None, checkpoint: Path | None = None,
             pad_to: int = 1):
    """Simulate the (offered load, seed) points as one batch, point i with traffic[i].

    The batch is padded with copies of its last point to at least `pad_to` simulations and
    to a multiple of the device count (padding reuses a compiled batch shape; its rows are
    dropped). `on_cycles(n)` is told after every chunk the point-cycles it completed
    (cycles x points, padding excluded; a progress bar's unit).
    Returns (rows, final_state): one summary dict per point, and the batched final state
    (for invariant checks). With `checkpoint` and `spec.checkpoint_every`, the batch state
    is saved there every that many cycles and a later call with the same run resumes from
    it, with results identical to an uninterrupted run; the file is removed at the end.
    """
    n = len(points)
    batch_points, params, keys = _batch(network, traffic, points, spec, pad_to)
    start = time.perf_counter()
    state = compiled_init(network.layout)(keys)
    lists, width = spec.resolved_lists(network.layout), spec.resolved_vmap_width(network.layout)
    chunks = math.ceil(spec.total / spec.chunk)
    done = 0
    signature = _signature(network, batch_points, spec)
    if checkpoint is not None and spec.checkpoint_every:
        restored = _load_checkpoint(Path(checkpoint), state, signature)
        if restored is not None:
            state, done = restored
            state = shard(state, len(batch_points))
    report = on_cycles or (lambda _: None)
    report(spec.chunk * done * n)
    compile_s = None
    tier = first_lists(network.layout, lists, max(load for load, _ in points))
    previous = 0  # the peak of the chunk before: none, the network starts empty
    for i in range(done, chunks):
        state, peak, tier = advance_chunk(network, params, state, spec.chunk, width, lists, tier)
        tier, previous = next_lists(network.layout, lists, peak, tier, previous), peak
        if compile_s is None:
            compile_s = time.perf_counter() - start
        if spec.check_invariants:
            check_invariants(network, state, batch_points)
        if checkpoint is not None and spec.checkpoint_every and (i + 1) * spec.chunk % spec.checkpoint_every == 0:
            _save_checkpoint(Path(checkpoint), state, i + 1, signature)
        report(spec.chunk * n)
    jax.block_until_ready(state)
    wall = time.perf_counter() - start
    stats, deadlock_at = jax.device_get((state.stats, state.watchdog.deadlock_at))
    rows = [summarize(network.topo, network.layout, spec.measure, points[i],
                      jax.tree_util.tree_map(lambda a: a[i], stats), int(deadlock_at[i]))
            for i in range(n)]
    device = jax.devices()[0].device_kind
    for row in rows:
        row.update(wall_s=round(wall, 3), first_chunk_s=round(compile_s or 0.0, 3), batch=n,
                   device=device, devices=jax.device_count(), cycles_simulated=spec.chunk * chunks)
    if checkpoint is not None and Path(checkpoint).exists():
        Path(checkpoint).unlink()
    return rows, jax.tree_util.tree_map(lambda a: a[:n], state)


def _batch(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
           spec: SimSpec, pad_to: int):
    """(points padded as `simulate` pads them, their Params, their PRNG keys), checked."""
    require(len(points) > 0, "sim.loads x sim.seeds", points, "at least one point")
    require(len(traffic) == len(points), "traffic", len(traffic), f"one table per point ({len(points)})")
    for load, _ in points:
        require(0.0 < load <= 1.0, "sim.loads", load, "offered loads in (0, 1] phits/cycle/server")
    n = len(points)
    extra = max(pad_to, n) - n
    extra += -(n + extra) % jax.device_count()
    batch_points, batch_traffic = list(points) + [points[-1]] * extra, list(traffic) + [traffic[-1]] * extra
    params = batch_params(batch_traffic, batch_points, spec, network.layout)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in batch_points])
    params, keys = shard((params, keys), len(batch_points))
    return batch_points, params, keys


def compile_first_chunk(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
                        spec: SimSpec, pad_to: int = 1) -> None:
    """Compile, without running it, the chunk `simulate` runs first for these points. With
    JAX's persistent cache on, the program is stored there: other processes that simulate
    a batch of the same structure then load it instead of compiling it (`jaxnet.sim.workers`)."""
    _, params, keys = _batch(network, traffic, points, spec, pad_to)
    state = compiled_init(network.layout)(keys)
    tier = first_lists(network.layout, spec.resolved_lists(network.layout), max(load for load, _ in points))
    advance = compiled_advance(network.layout, network.routing, spec.chunk, spec.resolved_vmap_width(network.layout),
                               tier)
    advance.lower(network.net, network.tables, params, state).compile()


def first_guess(layout: Layout, load: float):
    """Buffers in use per cycle to size the first chunk's lists (IN_USE_PER_LOAD): right, the
    first chunk's capacities are kept and a light point compiles its chunk once."""
    load = min(1.0, load)
    return np.asarray(IN_USE_PER_LOAD) * layout.servers * np.asarray([load, load, load, load, load * load, load])
