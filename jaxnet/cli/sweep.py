"""One job of the `jaxnet` app (a run, or one job of a multirun sweep), and the Hydra
callback that merges a sweep when it ends.

A job simulates the points of its configuration that its results.csv does not already
hold (damaged rows are dropped and recomputed), in sub-batches written as they finish, each
resumable from its checkpoint, on every CPU core (`jaxnet.sim.workers`); the traffic
patterns of an experiment job run together with the loads and seeds."""
from __future__ import annotations

import logging
import math
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import OmegaConf
from tqdm.auto import tqdm

from jaxnet import build
from jaxnet.cli.common import RunFailed
from jaxnet.cli.experiment import resolve
from jaxnet.results import collect, plots, records
from jaxnet.results.table import config_id, decorate, done_points, read_rows, write_rows
from jaxnet.sim.run import simulations_that_fit
from jaxnet.sim.spec import SimSpec
from jaxnet.sim.workers import SubBatch, checkpoint_name, simulate_sub_batches
from jaxnet.traffic import build_traffic

log = logging.getLogger("jaxnet")
FAILED = "FAILED"  # marker file a failed job of a sweep leaves in its directory


class DeadlockError(RunFailed):
    """The watchdog fired (sim.allow_deadlock: false)."""


def run_sweep(config: dict, out_dir: Path, progress: bool = True, explicit: tuple[str, ...] = ()) -> list[dict]:
    """Simulate the points of `config` missing from out_dir/results.csv; return all rows.
    `explicit`: the keys given on the command line (they win over an experiment's)."""
    import jax

    job = resolve(config, explicit)
    spec = build.sim(job["sim"])
    results = Path(out_dir) / "results.csv"
    rows, damaged = read_rows(results)
    if damaged:
        log.warning("%d damaged row(s) of %s dropped: they are recomputed", damaged, results)
    if spec.record:  # sim.record asks for each point's record file: points without one run again
        kept = [r for r in rows if records.load(out_dir, [r])]
        if len(kept) < len(rows):
            log.info("%d point(s) of %s have no record file: they are simulated again", len(rows) - len(kept), results)
        rows = kept
    todo = []
    for label, pattern in job["patterns"].items():
        cid = config_id(job, pattern)
        done = done_points(rows, cid)
        todo += [(label, pattern, cid, point) for point in spec.points if point not in done]
    if not todo:
        log.info("nothing to simulate: all %d point(s) are in %s", len(rows), results)
        return rows
    network = build.network_of(job)
    cycles = math.ceil(spec.total / spec.chunk) * spec.chunk
    workers = spec.resolved_workers(network.topo.n_routers * cycles * len(todo), len(todo))
    log.info("%d new point(s), %d already in %s; %d worker process(es)", len(todo), len(rows), results, workers)
    size = spec.resolved_sub_batch(network.layout, len(todo), jax.device_count(), workers,
                                   simulations_that_fit(network.layout))
    size = -(-len(todo) // -(-len(todo) // size))  # equal sub-batches (the last padded): one compilation
    batches = [todo[start:start + size] for start in range(0, len(todo), size)]
    tables = {(label, seed): build_traffic(pattern, network.topo, seed)
              for label, pattern, _, (_, seed) in todo}
    sub_batches = [SubBatch([tables[(label, point[1])] for label, _, _, point in batch],
                            [point for *_, point in batch], size,
                            Path(out_dir) / checkpoint_name([(label, point) for label, _, _, point in batch]))
                   for batch in batches]
    deadlocks, finished = [], {}  # finished: the new rows by their place in `todo`
    with tqdm(total=cycles * len(todo), unit="cycle", unit_scale=True, disable=not progress,
              desc=f"simulating {len(todo)} point(s)") as bar:
        for index, new_rows, stuck in simulate_sub_batches(network, sub_batches, spec, workers, bar.update):
            for place, (label, pattern, cid, point), row, buffers in zip(
                    range(index * size, index * size + len(new_rows)), batches[index], new_rows, stuck):
                if "record" in row:
                    row["record_file"] = records.save(out_dir, label, point, row.pop("record"), window=spec.window,
                                                      warmup_cycles=row["warmup_cycles"], measure=spec.measure)
                finished[place] = decorate(row, job, cid, label, pattern)
                if row["deadlock"]:
                    deadlocks.append(f"{label} load {row['offered_load']:g} seed {row['seed']} at cycle "
                                     f"{row['deadlock_at']}: stuck " + "; ".join(buffers))
            # in the job's order (patterns, loads, seeds), whatever order the sub-batches finish in
            write_rows(results, rows + [finished[place] for place in sorted(finished)])
            log.info("%d of %d new point(s) written to %s", len(finished), len(todo), results)
    rows += [finished[place] for place in sorted(finished)]
    for stale in Path(out_dir).glob("checkpoint-*.npz"):  # of sub-batches composed otherwise before a resume
        stale.unlink()
    if spec.record:
        formats = plots.check_formats((job.get("plot") or {}).get("formats", plots.DEFAULT_FORMATS))
        records.figures(out_dir, rows, f"{network.topo.name}, routing={job['routing']['name']}", formats)
    if deadlocks:
        message = "deadlock watchdog fired: " + " | ".join(deadlocks)
        if not spec.allow_deadlock:
            raise DeadlockError(message + " (rows kept; sim.allow_deadlock=true accepts this)")
        log.warning(message)
    return rows


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
