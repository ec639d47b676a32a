"""One job of the `jaxnet` app (a run, or one job of a multirun sweep), and the Hydra
callback that merges a sweep when it ends.

A job simulates the points of its configuration that its results.csv does not already
hold (damaged rows are dropped and recomputed), in sub-batches written as they finish, each
resumable from its checkpoint; the traffic patterns of an experiment job run together with
the loads and seeds."""
from __future__ import annotations

import logging
from pathlib import Path

from hydra.experimental.callback import Callback

from jaxnet.cli.common import RunFailed
from jaxnet.cli.experiment import resolve
from jaxnet.results import collect
from jaxnet.results.table import config_id, decorate, done_points, read_rows, write_rows
from jaxnet.sim.run import Network, simulate, stuck_buffers
from jaxnet.sim.spec import SimSpec
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
    spec = SimSpec.from_config(job["sim"])
    results = Path(out_dir) / "results.csv"
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
    log.info("%d new point(s), %d already in %s", len(todo), len(rows), results)
    network = Network.from_config(job)
    tables = {}
    size = spec.resolved_sub_batch(jax.device_count())
    size = -(-len(todo) // -(-len(todo) // size))  # equal sub-batches (the last padded): one compilation
    deadlocks = []
    for start in range(0, len(todo), size):
        batch = todo[start:start + size]
        for label, pattern, _, (_, seed) in batch:
            if (label, seed) not in tables:
                tables[(label, seed)] = build_traffic(pattern, network.topo, seed)
        points = [point for *_, point in batch]
        new_rows, state = simulate(network, [tables[(label, p[1])] for label, _, _, p in batch], points,
                                   spec, progress=progress, checkpoint=Path(out_dir) / "checkpoint.npz",
                                   pad_to=size)
        for i, ((label, pattern, cid, _), row) in enumerate(zip(batch, new_rows)):
            rows.append(decorate(row, job, cid, label, pattern))
            if row["deadlock"]:
                deadlocks.append(f"{label} load {row['offered_load']:g} seed {row['seed']} at cycle "
                                 f"{row['deadlock_at']}: stuck " + "; ".join(stuck_buffers(network, state, i)))
        write_rows(results, rows)
        log.info("%d of %d new point(s) written to %s", min(start + size, len(todo)), len(todo), results)
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
        rows, damaged = collect.load([d for d in root.iterdir() if d.is_dir()] if root.exists() else [])
        if rows:
            written = collect.write_outputs(rows, root)
            log.info("merged %d row(s) into %s (%s)", len(rows), root, ", ".join(p.name for p in written))
        if damaged:
            log.warning("%d damaged row(s) left out of the merge", damaged)
        failed = sorted(root.rglob(FAILED)) if root.exists() else []
        for marker in failed:
            print(f"job {marker.parent.name} failed: {marker.read_text().strip()}", file=sys.stderr)
        if failed:
            sys.exit(1)
