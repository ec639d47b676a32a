"""Run a batch of (load, seed) points of one network and summarise the results.

One call simulates any list of points as one batch in one compiled call, sharded across
all visible devices: vmapped whole on GPU/TPU, stepped one simulation at a time on CPU
(`SimSpec.vmap_width`). Loads, seeds, traffic tables and routing tables are traced inputs:
running other points of the same shape reuses the compiled step. The cycles run in chunks
of `sim.chunk`, between which the work lists are resized (`jaxnet.sim.capacities`).
"""
from __future__ import annotations

import functools
import math
import time
from pathlib import Path
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.validate import require
from jaxnet.routing.base import RoutingScheme
from jaxnet.sim import capacities
from jaxnet.sim import checkpoint as checkpoints
from jaxnet.sim.layout import Layout, Model
from jaxnet.sim.network import Network
from jaxnet.sim.rings import head_rows
from jaxnet.sim.spec import SimSpec, checked_seed
from jaxnet.sim.state import init_state, state_bytes
from jaxnet.sim.stats import Measurement, recordings, summarize
from jaxnet.sim.step import Params, run_cycles
from jaxnet.sim.work import Work, no_sleep
from jaxnet.traffic.base import TrafficTable
from jaxnet.traffic.device import stack_tables

_INT_MAX = 2**31 - 1


@functools.lru_cache(maxsize=32)
def compiled_advance(layout: Layout, routing: RoutingScheme, n_cycles: int, vmap_width: int | None, work: Work,
                     measurement: Measurement = Measurement(), tables_per_simulation: tuple[bool, ...] | None = None):
    """jit of n_cycles steps of a batch -> (state, heads asleep, int32 [batch, 6] the most
    entries each work list needed in a cycle): vmap over `vmap_width` simulations at a time
    (the whole batch when None), lax.map over the rest. The routing tables are shared by the
    batch, or (`tables_per_simulation`, per leaf: `batch_tables`) some of their leaves hold
    one entry per simulation. The input state is kept (a chunk whose lists overflowed is
    redone from it); cached per structure."""

    def one(net, tables, params, state, sleep):
        return run_cycles(Model(layout, routing, net, tables), work, params, state, sleep, n_cycles, measurement)

    def batch(net, tables, params, state, sleep):
        n = jax.tree_util.tree_leaves(state)[0].shape[0]
        leaves, tree = jax.tree_util.tree_flatten(tables)
        own = tables_per_simulation or (False,) * len(leaves)
        if vmap_width is None or vmap_width >= n:
            axes = jax.tree_util.tree_unflatten(tree, [0 if mapped else None for mapped in own])
            return jax.vmap(one, in_axes=(None, axes, 0, 0, 0))(net, tables, params, state, sleep)

        def one_of(per_simulation):
            mapped = iter(per_simulation[0])
            tables = jax.tree_util.tree_unflatten(tree, [next(mapped) if m else leaf for leaf, m in zip(leaves, own)])
            return one(net, tables, *per_simulation[1:])

        mapped_leaves = [leaf for leaf, mapped in zip(leaves, own) if mapped]
        return jax.lax.map(one_of, (mapped_leaves, params, state, sleep), batch_size=vmap_width)

    return jax.jit(batch)


def batch_tables(network: Network, tables: Sequence | None, n: int):
    """(the routing tables of a batch of n simulations, which of their leaves hold one entry
    per simulation, or None): the network's when `tables` is None; else the tables of each
    point (padded with the last to n), their leaves alike across the batch held once and the
    others stacked (path weights that differ per simulation)."""
    if tables is None:
        return network.tables, None
    tables = list(tables) + [tables[-1]] * (n - len(tables))
    tree = jax.tree_util.tree_structure(network.tables)
    columns = [[np.asarray(leaf) for leaf in column] for column in zip(*(jax.tree_util.tree_leaves(t) for t in tables))]
    require(all(jax.tree_util.tree_structure(t) == tree for t in tables)
            and all((leaf.shape, leaf.dtype) == (column[0].shape, column[0].dtype) for column in columns for leaf in column),
            "routing tables", len(tables), "tables of one structure and shapes per point (only their values differ)")
    leaves, own = [], []
    for column in columns:
        alike = all(np.array_equal(column[0], leaf) for leaf in column[1:])
        leaves.append(jnp.asarray(column[0]) if alike else shard(jnp.asarray(np.stack(column)), n))
        own.append(not alike)
    return jax.tree_util.tree_unflatten(tree, leaves), (tuple(own) if any(own) else None)


def advance_chunk(network: Network, params, state, sleep, n_cycles: int, vmap_width, lists: tuple, tier,
                  measurement: Measurement = Measurement(), tables=None):
    """(state, heads asleep after n_cycles, the most entries each work list needed in a
    cycle, the capacities used): runs with capacities `tier` and redoes the chunk with
    larger ones while a list overflowed. `tables`: a `batch_tables` pair (default: the
    network's tables for every simulation)."""
    tables, per_simulation = tables or (network.tables, None)
    while True:
        advance = compiled_advance(network.layout, network.routing, n_cycles, vmap_width,
                                   capacities.work(lists, tier), measurement, per_simulation)
        new_state, new_sleep, peak = advance(network.net, tables, params, state, sleep)
        peak = np.asarray(peak).max(axis=0)
        if tier is None or bool(np.all(peak <= np.asarray(tier))):
            return new_state, new_sleep, peak, tier
        tier = capacities.overflowed(lists, peak, tier)


# Device memory a simulation needs, in multiples of its state: its input and output state
# and the compiled chunk's temporaries (`python benchmarks/bench.py --suite memory`).
MEMORY_PER_STATE = 5


def simulations_that_fit(layout: Layout) -> int | None:
    """How many simulations of `layout` fit in 90 % of the default device's memory (an estimate,
    MEMORY_PER_STATE), or None where the device does not report its memory (CPUs)."""
    stats = jax.devices()[0].memory_stats()
    limit = (stats or {}).get("bytes_limit")
    if not limit:
        return None
    shapes = jax.eval_shape(lambda key: (init_state(layout, key), no_sleep(layout)), jax.random.PRNGKey(0))
    return max(1, int(0.9 * limit) // (MEMORY_PER_STATE * state_bytes(shapes)))


@functools.lru_cache(maxsize=32)
def compiled_init(layout: Layout, sleeps: bool, measurement: Measurement = Measurement()):
    """jit of the empty networks of a batch and, if heads may sleep, nobody asleep."""

    def one(key):
        return init_state(layout, key, measurement), no_sleep(layout) if sleeps else None

    return jax.jit(jax.vmap(one))


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
        warmup=jnp.full(n, 0 if spec.auto_warmup else spec.warmup, jnp.int32),
        measure=jnp.full(n, spec.measure, jnp.int32),
        watchdog=jnp.full(n, spec.watchdog + quiet_cycles(layout), jnp.int32),
        generate_until=jnp.full(n, _INT_MAX if spec.generate_until is None else spec.generate_until,
                                jnp.int32),
    )


class InvariantError(RuntimeError):
    """A run broke packet conservation or a credit bound (an engine bug, never bad input)."""


@functools.lru_cache(maxsize=32)
def compiled_check(layout: Layout):
    """jit of the invariants of a batch: (conservation holds [n], credits within bounds [n],
    each waiting input head's READY kept beside the records equals its record's [n])."""
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
        if state.inputs.lent is not None:  # lent slots are gone ones
            credits &= jnp.all((state.inputs.lent >= 0) & (state.inputs.lent <= state.inputs.gone))
        heads_ready = jnp.array(True)
        if state.inputs.head_ready is not None:
            row, waiting = head_rows(state.inputs, None, layout.input_depth)
            heads_ready = jnp.all(~waiting | (state.inputs.head_ready == state.inputs.slots[row, pk.READY]))
        return conserved, credits, heads_ready

    return jax.jit(jax.vmap(one))


def check_invariants(network: Network, state, points) -> None:
    """Raise InvariantError naming the point and the invariant a batch state breaks."""
    conserved, credits, heads_ready = (np.asarray(x) for x in compiled_check(network.layout)(state))
    for i, point in enumerate(points):
        broken = [what for what, holds in (("packet conservation", conserved[i]),
                                           ("credit bounds (0 <= taken <= depth)", credits[i]),
                                           ("the heads' READY kept beside the records", heads_ready[i])) if not holds]
        if broken:
            raise InvariantError(f"invariant broken at cycle {int(np.asarray(state.cycle)[i])}, load "
                                 f"{point[0]:g} seed {point[1]}: {', '.join(broken)}")


def stuck_buffers(network: Network, state, index: int, limit: int = 4) -> list[str]:
    """A few (router, port, VC) buffers of simulation `index` that hold waiting packets,
    input buffers first, with their heads' destination routers (for deadlock reports)."""
    layout = network.layout
    out = []
    for side, rings, depth in (("input", state.inputs, layout.input_depth),
                               ("output", state.outputs, layout.router.output_buffer)):
        taken, gone = np.asarray(rings.taken[index]), np.asarray(rings.gone[index])
        first, slots = np.asarray(rings.first[index]), np.asarray(rings.slots[index])
        for ring in np.nonzero(taken > gone)[0][:limit - len(out)]:
            row = ring * depth + (first[ring] + gone[ring]) % depth
            router, rest = divmod(int(ring), layout.ports_per_router * layout.vcs)
            port, vc = divmod(rest, layout.vcs)
            kind = ("injection port" if side == "input" else "ejection port") if port >= layout.ports else "port"
            out.append(f"router {router} {side} {kind} {port} VC {vc} ({int(taken[ring] - gone[ring])} waiting, "
                       f"head for router {int(slots[row, pk.DST_R])})")
    return out


def _work_lists(network: Network, spec: SimSpec, points: Sequence[tuple[float, int]]):
    """(the capacities each work list of a run of these points may take, how they are sized,
    the first chunk's capacities)."""
    layout, n = network.layout, len(points)
    lists = capacities.steps(spec.active_lists, layout, n, spec.total, spec.cpu_vmapped(layout, n),
                             spec.cpu_single(layout, n))
    sizing = capacities.sizing(lists, spec.resolved_list_sizing())
    return lists, sizing, capacities.initial(network.model, lists, max(load for load, _ in points), sizing,
                                              network.route_hops)


def measurement_of(network: Network, spec: SimSpec, params: Params | None = None) -> Measurement:
    """What a run of `spec` counts beyond the usual statistics (static; see `Measurement`),
    with the batch's traffic `params` (a finite workload's steps)."""
    layout = network.layout
    program = None if params is None else params.traffic.program
    require(program is None or not spec.auto_warmup, "sim.warmup", spec.warmup,
            "a number of cycles with a finite workload (traffic=collective): it runs from cycle 0 to completion")
    if spec.auto_warmup:
        require(spec.window > layout.router.packet_size, "sim.window", spec.window,
                f"more cycles than a packet's length ({layout.router.packet_size}) with sim.warmup=auto")
    if "links" in spec.record:
        depth = max(layout.input_depth, layout.router.output_buffer)
        require(depth * spec.measure < 2**31, "sim.measure", spec.measure,
                f"at most {(2**31 - 1) // depth} cycles with sim.record=[links] (buffers of {depth} packets)")
    cycles = math.ceil(spec.total / spec.chunk) * spec.chunk
    return Measurement(auto_warmup=spec.auto_warmup, tolerance=spec.warmup_tolerance,
                       warmup_max=spec.warmup_max, window=spec.window,
                       series=math.ceil(cycles / spec.window) if "series" in spec.record else 0,
                       links="links" in spec.record, steps=0 if program is None else int(program.packets.shape[-1]))


def _finished(state, spec: SimSpec, measurement: Measurement) -> bool:
    """Whether every simulation of the batch has finished what it measures before the run's
    last cycle: under an automatic warm-up, its measurement window; a finite workload, its
    last packet."""
    if measurement.steps:
        return bool(np.all(np.asarray(jax.device_get(state.workload.done_at)) >= 0))
    if not measurement.auto_warmup:
        return False
    start, cycle = (np.asarray(x) for x in jax.device_get((state.window.start, state.cycle)))
    return bool(np.all(start.astype(np.int64) + spec.measure <= cycle))


def simulate(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
             spec: SimSpec, on_cycles: Callable[[int], None] | None = None, checkpoint: Path | None = None,
             pad_to: int = 1, tables: Sequence | None = None):
    """Simulate the (offered load, seed) points as one batch, point i with traffic[i] (and
    with routing tables tables[i], where given: tables of the network's structure whose values
    differ, e.g. path weights; default the network's own).

    The batch is padded with copies of its last point to at least `pad_to` simulations and
    to a multiple of the device count (padding reuses a compiled batch shape; its rows are
    dropped). `on_cycles(n)` is told after every chunk the point-cycles it completed
    (cycles x points, padding excluded; a progress bar's unit).
    Returns (rows, final_state): one summary dict per point, and the batched final state
    (for invariant checks). With `checkpoint` and `spec.checkpoint_every`, the batch
    state is saved there every that many cycles and a later call with the same run resumes
    from it, with results identical to an uninterrupted run; the file is removed at the end.
    """
    n = len(points)
    batch_points, params, keys = _batch(network, traffic, points, spec, pad_to)
    routing_tables = batch_tables(network, tables, len(batch_points))
    measurement = measurement_of(network, spec, params)
    start = time.perf_counter()
    lists, sizing, tier = _work_lists(network, spec, points)
    width = spec.resolved_vmap_width(network.layout)
    state, sleep = compiled_init(network.layout, capacities.sleeps(network.model, lists), measurement)(keys)
    chunks = math.ceil(spec.total / spec.chunk)
    done = 0
    run = checkpoints.signature(network, batch_points, spec, routing_tables)
    saving = checkpoint is not None and spec.checkpoint_every
    if saving:
        restored = checkpoints.load(Path(checkpoint), (state, sleep), run)
        if restored is not None:
            (state, sleep), done = restored
            state, sleep = shard((state, sleep), len(batch_points))
    report = on_cycles or (lambda _: None)
    report(spec.chunk * done * n)
    compile_s = None
    previous = 0  # the peak of the chunk before: none, the network starts empty
    for i in range(done, chunks):
        if _finished(state, spec, measurement):
            report(spec.chunk * (chunks - i) * n)
            break
        state, sleep, peak, tier = advance_chunk(network, params, state, sleep, spec.chunk, width, lists, tier,
                                                 measurement, routing_tables)
        tier, previous = capacities.next_capacities(network.layout, lists, peak, tier, previous, sizing), peak
        if compile_s is None:
            compile_s = time.perf_counter() - start
        if spec.check_invariants:
            check_invariants(network, state, batch_points)
        if saving and (i + 1) * spec.chunk % spec.checkpoint_every == 0:
            checkpoints.save(Path(checkpoint), (state, sleep), i + 1, run)
        report(spec.chunk * n)
    jax.block_until_ready(state)
    wall = time.perf_counter() - start
    stats, window, workload, deadlock_at, cycle = jax.device_get(
        (state.stats, state.window, state.workload, state.watchdog.deadlock_at, state.cycle))
    rows = []
    for i in range(n):
        point = jax.tree_util.tree_map(lambda a: a[i], (stats, window, workload))
        # the window's cycles that ran; a finite workload's window ends when it completed
        end = int(cycle[i]) if point[2] is None or point[2].done_at < 0 else int(point[2].done_at) + 1
        measured = max(1, min(spec.measure, end - int(point[1].start)))
        rows.append(summarize(network.topo, network.layout, measured, points[i], point[0],
                              int(deadlock_at[i]), point[1], point[2]))
        if spec.record:
            rows[-1]["record"] = recordings(network.topo, network.layout, measurement, spec.measure, point[0],
                                            int(cycle[i]))
    device = jax.devices()[0].device_kind
    layout = network.layout
    for row in rows:  # how it was run, `auto` settings as resolved
        row.update(wall_s=round(wall, 3), first_chunk_s=round(compile_s or 0.0, 3), batch=n,
                   device=device, devices=jax.device_count(), cycles_simulated=int(cycle[0]),
                   vcs=layout.vcs, vc_policy=str(layout.vc_policy), selection=layout.router.selection,
                   vmap_width=width or len(batch_points), work_lists=capacities.described(lists, sizing))
    if checkpoint is not None and Path(checkpoint).exists():
        Path(checkpoint).unlink()
    return rows, jax.tree_util.tree_map(lambda a: a[:n], state)


def _batch(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
           spec: SimSpec, pad_to: int):
    """(points padded as `simulate` pads them, their Params, their PRNG keys), checked."""
    require(len(points) > 0, "sim.loads x sim.seeds", points, "at least one point")
    require(len(traffic) == len(points), "traffic", len(traffic), f"one table per point ({len(points)})")
    for load, seed in points:
        require(0.0 < load <= 1.0, "sim.loads", load, "offered loads in (0, 1] phits/cycle/server")
        checked_seed(seed)
    n = len(points)
    extra = max(pad_to, n) - n
    extra += -(n + extra) % jax.device_count()
    batch_points, batch_traffic = list(points) + [points[-1]] * extra, list(traffic) + [traffic[-1]] * extra
    params = batch_params(batch_traffic, batch_points, spec, network.layout)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in batch_points])
    params, keys = shard((params, keys), len(batch_points))
    return batch_points, params, keys


def compile_first_chunk(network: Network, traffic: Sequence[TrafficTable], points: Sequence[tuple[float, int]],
                        spec: SimSpec, pad_to: int = 1, tables: Sequence | None = None) -> None:
    """Compile, without running it, the chunk `simulate` runs first for these points. With
    JAX's persistent cache on, the program is stored there: other processes that simulate
    a batch of the same structure then load it instead of compiling it (`jaxnet.sim.workers`)."""
    batch_points, params, keys = _batch(network, traffic, points, spec, pad_to)
    routing_tables, per_simulation = batch_tables(network, tables, len(batch_points))
    measurement = measurement_of(network, spec, params)
    lists, _, tier = _work_lists(network, spec, points)
    state, sleep = compiled_init(network.layout, capacities.sleeps(network.model, lists), measurement)(keys)
    advance = compiled_advance(network.layout, network.routing, spec.chunk, spec.resolved_vmap_width(network.layout),
                               capacities.work(lists, tier), measurement, per_simulation)
    advance.lower(network.net, routing_tables, params, state, sleep).compile()
