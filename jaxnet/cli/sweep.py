"""One job of the `jaxnet` app (a run, or one job of a multirun sweep), and the Hydra
callback that merges a sweep when it ends.

A job simulates the points of its configuration that its results.csv does not already
hold (damaged rows are dropped and recomputed), in sub-batches written as they finish, each
resumable from its checkpoint, on every CPU core (`jaxnet.sim.workers`); the traffic
patterns of an experiment job run together with the loads and seeds. Nothing computed is
lost: the run directory is checked for writing before anything is simulated, rows that
still cannot be written there go to a fallback file the error names, and a killed job's
sub-batches are composed again as their checkpoints were (`CHECKPOINTS`), so that each
resumes from its last checkpoint."""
from __future__ import annotations

import json
import logging
import math
import os
import tempfile
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import OmegaConf
from tqdm.auto import tqdm

from jaxnet import build
from jaxnet.cli.common import FAILED, RunFailed
from jaxnet.cli.experiment import resolve
from jaxnet.core.files import require_writable, write_atomic
from jaxnet.core.validate import require
from jaxnet.results import collect, plots
from jaxnet.results.table import config_id, decorate, done_points, read_rows, write_rows
from jaxnet.sim.run import MEMORY_PER_STATE, simulations_that_fit
from jaxnet.sim.spec import check_measurable
from jaxnet.sim.workers import SubBatch, checkpoint_name, simulate_sub_batches
from jaxnet.traffic import build_traffic

log = logging.getLogger("jaxnet")
# The sub-batches of a job that checkpoints, by checkpoint file: their points and padding.
CHECKPOINTS = "checkpoints.json"


class DeadlockError(RunFailed):
    """The watchdog fired (sim.allow_deadlock: false)."""


def run_sweep(config: dict, out_dir: Path, progress: bool = True, explicit: tuple[str, ...] = ()) -> list[dict]:
    """Simulate the points of `config` missing from out_dir/results.csv; return all rows.
    `explicit`: the keys given on the command line (they win over an experiment's)."""
    import jax

    job = resolve(config, explicit)
    spec = build.sim(job["sim"])
    out_dir = Path(out_dir)
    results = out_dir / "results.csv"
    rows, damaged = read_rows(results)
    if damaged:
        log.warning("%d damaged row(s) of %s dropped: they are recomputed", damaged, results)
    todo = []
    for label, pattern in job["patterns"].items():
        cid = config_id(job, pattern)
        done = done_points(rows, cid)
        todo += [(label, pattern, cid, point) for point in spec.points if point not in done]
    if not todo:
        log.info("nothing to simulate: all %d point(s) are in %s", len(rows), results)
        return rows
    require_writable(out_dir, "hydra.run.dir")
    network = build.network_of(job)
    check_measurable(network.layout.router, spec)
    require_fits(network)
    cycles = math.ceil(spec.total / spec.chunk) * spec.chunk
    workers = spec.resolved_workers(network.topo.n_routers * cycles * len(todo), len(todo))
    log.info("%d new point(s), %d already in %s; %d worker process(es)", len(todo), len(rows), results, workers)
    size = spec.resolved_sub_batch(network.layout, len(todo), jax.device_count(), workers,
                                   simulations_that_fit(network.layout))
    batches = plan_sub_batches([(cid, label, point) for label, _, cid, point in todo], size, out_dir,
                               spec.checkpoint_every is not None)
    tables = {(label, seed): build_traffic(pattern, network.topo, seed)
              for label, pattern, _, (_, seed) in todo}
    sub_batches = [SubBatch([tables[(todo[i][0], todo[i][3][1])] for i in places], [todo[i][3] for i in places],
                            pad_to, out_dir / name) for places, pad_to, name in batches]
    deadlocks, finished = [], {}  # finished: the new rows by their place in `todo`
    with tqdm(total=cycles * len(todo), unit="cycle", unit_scale=True, disable=not progress,
              desc=f"simulating {len(todo)} point(s)") as bar:
        for index, new_rows, stuck in simulate_sub_batches(network, sub_batches, spec, workers, bar.update):
            for place, row, buffers in zip(batches[index][0], new_rows, stuck):
                label, pattern, cid, _ = todo[place]
                finished[place] = decorate(row, job, cid, label, pattern)
                if row["deadlock"]:
                    deadlocks.append(f"{label} load {row['offered_load']:g} seed {row['seed']} at cycle "
                                     f"{row['deadlock_at']}: stuck " + "; ".join(buffers))
            # in the job's order (patterns, loads, seeds), whatever order the sub-batches finish in
            write_results(results, rows + [finished[place] for place in sorted(finished)])
            log.info("%d of %d new point(s) written to %s", len(finished), len(todo), results)
    rows += [finished[place] for place in sorted(finished)]
    for stale in [*out_dir.glob("checkpoint-*.npz"), out_dir / CHECKPOINTS]:  # every point is done
        stale.unlink(missing_ok=True)
    if deadlocks:
        message = "deadlock watchdog fired: " + " | ".join(deadlocks)
        if not spec.allow_deadlock:
            raise DeadlockError(message + " (rows kept; sim.allow_deadlock=true accepts this)")
        log.warning(message)
    return rows


def plan_sub_batches(todo: list[tuple[str, str, tuple[float, int]]], size: int, out_dir: Path,
                     checkpoints: bool) -> list[tuple[list[int], int, str]]:
    """The sub-batches of the (config id, pattern label, point) list `todo` as (places in
    todo, padded size, checkpoint file name). With `checkpoints`, first those of an earlier
    run of this job whose checkpoint is still there (killed), composed and padded as then so
    that they resume from it; then the other points in equal sub-batches of at most `size`
    (the last padded: one compilation). All are recorded in out_dir/CHECKPOINTS."""
    place = {key: i for i, key in enumerate(todo)}
    batches, taken = [], set()
    try:
        earlier = json.loads((out_dir / CHECKPOINTS).read_text()) if checkpoints else {}
    except (OSError, ValueError):
        earlier = {}
    for name, entry in earlier.items():
        try:
            keys = [(str(cid), str(label), (float(load), int(seed))) for cid, label, load, seed in entry["points"]]
            pad_to = int(entry["pad_to"])
        except (TypeError, ValueError, KeyError):
            continue
        places = [place.get(key) for key in keys]
        if (out_dir / name).exists() and None not in places and not taken & set(places):
            batches.append((places, pad_to, name))
            taken.update(places)
    if batches:
        log.info("%d sub-batch(es) resume from their checkpoints in %s", len(batches), out_dir)
    rest = [i for i in range(len(todo)) if i not in taken]
    if rest:
        size = -(-len(rest) // -(-len(rest) // size))  # equal sub-batches
        batches += [(rest[start:start + size], size,
                     checkpoint_name([(f"{todo[i][0]} {todo[i][1]}", todo[i][2]) for i in rest[start:start + size]]))
                    for start in range(0, len(rest), size)]
    if checkpoints:
        write_atomic(out_dir / CHECKPOINTS, json.dumps(
            {name: {"points": [[*todo[i][:2], *todo[i][2]] for i in places], "pad_to": pad_to}
             for places, pad_to, name in batches}, indent=1))
    return batches


def write_results(results: Path, rows: list[dict]) -> None:
    """Write the rows to `results`; when that fails, to a fallback file (in the temporary
    directory, else the current one) that the error names, so that no finished row is lost."""
    try:
        write_rows(results, rows)
        return
    except OSError as err:
        failure = err
    for directory in (tempfile.gettempdir(), os.getcwd()):
        try:
            handle, fallback = tempfile.mkstemp(prefix="jaxnet-results-", suffix=".csv", dir=directory)
            os.close(handle)
            write_rows(Path(fallback), rows)
        except OSError:
            continue
        raise ValueError(f"{results} could not be written ({type(failure).__name__}: {failure}); the "
                         f"{len(rows)} finished row(s) are in {fallback}: copy it to {results} to resume")
    raise ValueError(f"{results} could not be written ({type(failure).__name__}: {failure}), nor a fallback "
                     f"file in {tempfile.gettempdir()} or {os.getcwd()}")


def require_fits(network) -> None:
    """Refuse a network whose simulation state cannot exist: an array of 2**31 entries or
    more (the engine indexes with int32), or a state that, with the chunk's temporaries
    (MEMORY_PER_STATE), needs more than the device's memory (an accelerator's, or the host's
    RAM on a CPU)."""
    import jax

    from jaxnet.sim.state import init_state

    shapes = jax.tree_util.tree_leaves(jax.eval_shape(lambda key: init_state(network.layout, key),
                                                      jax.random.PRNGKey(0)))
    largest = max(leaf.size for leaf in shapes)
    state = sum(leaf.size * leaf.dtype.itemsize for leaf in shapes)
    name = network.topo.name
    require(largest < 2**31, "topology", name, f"a simulation state array of {largest} entries with these "
            f"router settings; at most {2**31 - 1} (the engine indexes with int32)")
    limit = (jax.devices()[0].memory_stats() or {}).get("bytes_limit") or (
        os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    require(MEMORY_PER_STATE * state <= limit, "topology", name,
            f"one simulation needs about {MEMORY_PER_STATE * state / 2**30:.1f} GiB with these router settings, "
            f"more than the {limit / 2**30:.1f} GiB of memory of {jax.devices()[0].device_kind}")


class CollectSweep(Callback):
    """When a multirun ends: one merged results.csv, comparison figures and (experiments)
    the claims table at the sweep directory's root; a failed job makes the sweep exit 1."""

    def on_multirun_end(self, config, **kwargs) -> None:
        import sys

        root = Path(config.hydra.sweep.dir)
        unreadable = []
        jobs = [d for d in root.iterdir() if d.is_dir()] if root.exists() else []
        rows, damaged = collect.load(jobs, unreadable)
        for message in unreadable:
            log.warning("left out of the merge: %s", message)
        try:
            formats = plots.check_formats(OmegaConf.select(config, "plot.formats", default=plots.DEFAULT_FORMATS))
        except ValueError as err:  # the jobs have failed with it too
            log.error("error: %s", err)
            rows = []
        if rows:
            written = collect.write_outputs(rows, root, formats=formats)
            log.info("merged %d row(s) into %s (%s)", len(rows), root, ", ".join(p.name for p in written))
        if damaged:
            log.warning("%d damaged row(s) left out of the merge", damaged)
        failed = sorted(root.rglob(FAILED)) if root.exists() else []
        for marker in failed:
            print(f"job {marker.parent.name} failed: {marker.read_text().strip()}", file=sys.stderr)
        if failed:
            sys.exit(1)
