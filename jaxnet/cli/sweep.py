"""One job of the `jaxnet` app (a run, or one job of a multirun sweep), and the Hydra
callback that merges a sweep when it ends.

A job simulates the points of its configuration that its results.csv does not already
hold (damaged rows are dropped and recomputed), in sub-batches written as they finish, each
resumable from its checkpoint, on every CPU core (`jaxnet.sim.workers`); the traffic
patterns of an experiment job run together with the loads and seeds. Nothing computed is
lost: the run directory is checked for writing before anything is simulated, rows that
still cannot be written there go to a fallback file the error names, and a killed job's
sub-batches are composed again as their checkpoints were (`CHECKPOINTS`), so that each
resumes from its last checkpoint. Points that earlier runs named in `reuse` already
simulated (the same configuration id, load and seed) are copied from them, not simulated."""
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
from jaxnet.results import collect, plots, records
from jaxnet.results.table import (CHECKSUM, config_id, decorate, done_points, equivalent_config_ids, read_rows,
                                  write_rows)
from jaxnet.routing import ROUTINGS
from jaxnet.sim.run import MEMORY_PER_STATE, simulations_that_fit
from jaxnet.sim.spec import check_measurable
from jaxnet.sim.workers import SubBatch, checkpoint_name, simulate_sub_batches
from jaxnet.traffic import build_traffic
from jaxnet.tune import needs_weights, resolve_weights

log = logging.getLogger("jaxnet")
# The sub-batches of a job that checkpoints, by checkpoint file: their points and padding.
CHECKPOINTS = "checkpoints.json"
# A reused row's column naming the results.csv its point was simulated for.
REUSED_FROM = "reused_from"
# Columns a reused row takes from the job that reuses it; the rest (results, how and where
# the point ran) stay as they were simulated.
RELABELLED = ("traffic", "experiment", "line", "network", "scale", "pattern", "config_id", "config")
# The tables `reuse` has read in this process, by path: (size and modification time, rows);
# a sweep's batches each consult them, and only the tables written since are read again.
_REUSE_TABLES: dict[Path, tuple[tuple[int, int], list[dict]]] = {}


class DeadlockError(RunFailed):
    """The watchdog fired (sim.allow_deadlock: false)."""


def structure_key(job: dict) -> str:
    """What jobs must share to run their points as one batch: the network (topology,
    routing, router) and the run's cycles; the patterns, loads and seeds may differ, and so
    may the routing keys that change only its tables' values (`RoutingScheme.table_values`:
    path weights)."""
    sim = {k: v for k, v in job["sim"].items() if k not in ("loads", "seeds", "sub_batch", "workers")}
    name = job["routing"].get("name")
    values = ROUTINGS[name].table_values if name in ROUTINGS else ()
    routing = {k: v for k, v in job["routing"].items() if k not in values}
    return json.dumps({"topology": job["topology"], "routing": routing, "router": job["router"], "sim": sim},
                      sort_keys=True, default=str)


def run_sweep(config: dict, out_dir: Path, progress: bool = True, explicit: tuple[str, ...] = ()) -> list[dict]:
    """Simulate the points of `config` missing from out_dir/results.csv; return all rows.
    `explicit`: the keys given on the command line (they win over an experiment's)."""
    return run_jobs([(resolve(config, explicit), out_dir)], progress)[0]


def run_jobs(jobs: list[tuple[dict, Path | None]], progress: bool = True) -> list[list[dict]]:
    """Simulate the points missing from each job's results as one batch, and return each
    job's rows. The jobs (resolved configs, `cli.experiment.resolve`) share one
    `structure_key`: one network, one compiled step; their patterns, loads and seeds make
    up the batch, and a point two jobs share (the same configuration, pattern, load and
    seed) is simulated once. A job with an out_dir has its rows in out_dir/results.csv
    (points already there are skipped, new rows written as their sub-batch finishes); one
    without (None) only returns them. Checkpoints go to the first out_dir."""
    import jax

    require(len({structure_key(job) for job, _ in jobs}) == 1, "jobs", len(jobs),
            "jobs of one network and run length (`structure_key`)")
    first, _ = jobs[0]
    spec = build.sim(first["sim"])
    outs = [None if out is None else Path(out) for _, out in jobs]
    rows = [_read_rows(out, spec.record) for out in outs]
    for j, (job, out) in enumerate(jobs):
        _reuse(job, out, rows[j], spec)
    # the points to simulate: (config id, point) -> (pattern, [(job, its label, the row's place in the job)])
    todo: dict[tuple, tuple[dict, list[tuple[int, str, int]]]] = {}
    for j, (job, _) in enumerate(jobs):
        places = iter(range(10**9))  # the job's own order: patterns, loads, seeds
        for label, pattern in job["patterns"].items():
            cid = config_id(job, pattern)
            done = done_points(rows[j], cid)
            for point in build.sim(job["sim"]).points:
                if point not in done:
                    todo.setdefault((cid, point), (pattern, []))[1].append((j, label, next(places)))
    if not todo:
        for j, out in enumerate(outs):
            log.info("nothing to simulate: all %d point(s) are in %s", len(rows[j]), out / "results.csv" if out else "memory")
    else:
        _simulate_todo(jobs, outs, rows, spec, todo, progress, jax.device_count())
    for (job, _), out, job_rows in zip(jobs, outs, rows):
        _raise_on_deadlock(job, job_rows)
        if out is not None:  # every point is done
            for stale in [*out.glob("checkpoint-*.npz"), out / CHECKPOINTS]:
                stale.unlink(missing_ok=True)
            if spec.record:
                formats = plots.check_formats((job.get("plot") or {}).get("formats", plots.DEFAULT_FORMATS))
                records.figures(out, job_rows, f"{job['topology']['name']}, routing={job['routing']['name']}", formats)
    return rows


def _read_rows(out: Path | None, record: tuple[str, ...]) -> list[dict]:
    """The rows of out/results.csv, less damaged ones and, when `sim.record` asks for
    record files, those whose record file is missing (they are simulated again)."""
    if out is None:
        return []
    rows, damaged = read_rows(out / "results.csv")
    if damaged:
        log.warning("%d damaged row(s) of %s dropped: they are recomputed", damaged, out / "results.csv")
    if record:
        kept = [row for row in rows if records.load(out, [row])]
        if len(kept) < len(rows):
            log.info("%d point(s) of %s have no record file: they are simulated again", len(rows) - len(kept),
                     out / "results.csv")
        rows = kept
    return rows


def _reuse(job: dict, out: Path | None, rows: list[dict], spec) -> None:
    """Append to the job's rows (and write) a copy of each of its missing points that a
    results table under `job["reuse"]` holds (the same load and seed, and the same config id
    or that of a configuration with the same results: `equivalent_config_ids`), relabelled
    as this job's; with `sim.record`, nothing (its record files are not copied)."""
    sources = [Path(p) for p in job.get("reuse") or ()]
    for source in sources:
        require(source.exists(), "reuse", str(source), "existing directories or results.csv files "
                "(earlier runs whose points with the same configuration are copied, not simulated)")
    if not sources or spec.record:
        return
    pool: dict[tuple, tuple[dict, Path]] = {}
    for path in collect.result_files(sources):
        for row in _reusable_rows(path):
            pool.setdefault((row["config_id"], float(row["offered_load"]), int(row["seed"])), (row, path))
    copies = []
    for label, pattern in job["patterns"].items():
        cid = config_id(job, pattern)
        equivalent = [cid, *sorted(equivalent_config_ids(job, pattern) - {cid})]
        done = done_points(rows, cid)
        fresh = None
        for load, seed in build.sim(job["sim"]).points:
            source = next((pool[(c, load, seed)] for c in equivalent if (c, load, seed) in pool), None)
            if (load, seed) in done or source is None:
                continue
            fresh = fresh or decorate({}, job, cid, label, pattern)
            row, path = source
            copies.append({**{k: v for k, v in row.items() if k != CHECKSUM}, **{k: fresh[k] for k in RELABELLED},
                           REUSED_FROM: row.get(REUSED_FROM) or str(path)})
    if copies:
        rows += copies
        log.info("%d point(s) reused from %s", len(copies), ", ".join(map(str, sources)))
        if out is not None:
            write_results(out / "results.csv", rows)


def _reusable_rows(path: Path) -> list[dict]:
    stat = path.stat()
    version = (stat.st_size, stat.st_mtime_ns)
    if _REUSE_TABLES.get(path, (None,))[0] != version:
        _REUSE_TABLES[path] = (version, read_rows(path)[0])
    return _REUSE_TABLES[path][1]


def _simulate_todo(jobs, outs, rows, spec, todo: dict, progress: bool, devices: int) -> None:
    """Simulate the `todo` points of `run_jobs` in sub-batches over every worker; write each
    job's rows (in its own order: patterns, loads, seeds) as sub-batches finish."""
    for out in outs:
        if out is not None:
            require_writable(out, "hydra.run.dir")
    networks = _job_networks(jobs, outs, spec)
    network = networks[0]
    check_measurable(network.layout.router, spec)
    require_fits(network)
    keys = list(todo)
    cycles = math.ceil(spec.total / spec.chunk) * spec.chunk
    workers = spec.resolved_workers(network.topo.n_routers * cycles * len(keys), len(keys))
    log.info("%d new point(s), %d already done in %d job(s); %d worker process(es)", len(keys),
             sum(map(len, rows)), len(jobs), workers)
    size = spec.resolved_sub_batch(network.layout, len(keys), devices, workers, simulations_that_fit(network.layout))
    home = next((out for out in outs if out is not None), None)
    batches = plan_sub_batches([(cid, "", point) for cid, point in keys], size, home,
                               spec.checkpoint_every is not None and home is not None)
    tables = {(cid, seed): build_traffic(todo[(cid, (load, seed))][0], network.topo, seed) for cid, (load, seed) in keys}
    own_tables = len({id(n) for n in networks}) > 1  # jobs whose tables' values differ (path weights)
    sub_batches = [SubBatch([tables[(keys[i][0], keys[i][1][1])] for i in places], [keys[i][1] for i in places],
                            pad_to, None if home is None else home / name,
                            [networks[todo[keys[i]][1][0][0]].tables for i in places] if own_tables else None)
                   for places, pad_to, name in batches]
    finished: list[dict] = [{} for _ in jobs]  # per job: its new rows by their place in the job
    with tqdm(total=cycles * len(keys), unit="cycle", unit_scale=True, disable=not progress,
              desc=f"simulating {len(keys)} point(s)") as bar:
        for index, new_rows, stuck in simulate_sub_batches(network, sub_batches, spec, workers, bar.update):
            changed = set()
            for place, row, buffers in zip(batches[index][0], new_rows, stuck):
                cid, point = keys[place]
                pattern, wanted = todo[keys[place]]
                record = row.pop("record", None)
                for j, label, order in wanted:
                    if record is not None and outs[j] is not None:
                        row["record_file"] = records.save(outs[j], label, point, record, window=spec.window,
                                                          warmup_cycles=row["warmup_cycles"], measure=spec.measure)
                    finished[j][order] = decorate({**row, "stuck_buffers": "; ".join(buffers), "workers": workers,
                                                   "sub_batch": size}, jobs[j][0], cid, label, pattern)
                    changed.add(j)
            for j in sorted(changed):
                if outs[j] is not None:
                    write_results(outs[j] / "results.csv", rows[j] + [finished[j][p] for p in sorted(finished[j])])
            log.info("%d of %d new row(s) written", sum(map(len, finished)), sum(len(w) for _, w in todo.values()))
    for j, new in enumerate(finished):
        rows[j] += [new[p] for p in sorted(new)]


def _job_networks(jobs, outs, spec) -> list:
    """Each job's network: one per distinct routing config, so that jobs whose routing
    differs only in its tables' values (`RoutingScheme.table_values`: path weights) share
    the structure of the first and bring their own tables."""
    built: dict[str, object] = {}
    networks = []
    for (job, _), out in zip(jobs, outs):
        key = json.dumps(job["routing"], sort_keys=True, default=str)
        if key not in built:
            built[key] = build.network_of({**job, "routing": _routing_to_build(job, spec, out)})
        networks.append(built[key])
    for network in networks[1:]:
        require(network.layout == networks[0].layout, "routing", networks[0].routing.name,
                "jobs batched together whose routing differs only in its tables' values (the same layout)")
    return networks


def _routing_to_build(job: dict, spec, out: Path | None) -> dict:
    """The job's routing config with path weights that need the router model or the
    simulator computed (`jaxnet.tune.resolve_weights`: a `table` scheme's latency or
    closed-loop weights, written beside the job's results or to a temporary directory);
    any other routing as it is."""
    if not needs_weights(job["routing"]):
        return job["routing"]
    home = out or Path(tempfile.mkdtemp(prefix="jaxnet-weights-"))
    return resolve_weights(job["routing"], build.topology(job["topology"]), build.router(job["router"]),
                           job["patterns"], spec.seeds, home)


def _raise_on_deadlock(job: dict, rows: list[dict]) -> None:
    """DeadlockError (or a warning, with sim.allow_deadlock) naming every point whose
    watchdog fired and the buffers it was stuck in."""
    deadlocks = [f"{row['traffic']} load {float(row['offered_load']):g} seed {row['seed']} at cycle "
                 f"{row['deadlock_at']}: stuck {row.get('stuck_buffers', '')}"
                 for row in rows if str(row["deadlock"]) == "True"]
    if not deadlocks:
        return
    message = "deadlock watchdog fired: " + " | ".join(deadlocks)
    if not job["sim"].get("allow_deadlock", False):
        raise DeadlockError(message + " (rows kept; sim.allow_deadlock=true accepts this)")
    log.warning(message)


def plan_sub_batches(todo: list[tuple[str, str, tuple[float, int]]], size: int, out_dir: Path | None,
                     checkpoints: bool) -> list[tuple[list[int], int, str]]:
    """The sub-batches of the (config id, pattern label, point) list `todo` as (places in
    todo, padded size, checkpoint file name). With `checkpoints`, first those of an earlier
    run of this job whose checkpoint is still there (killed), composed and padded as then so
    that they resume from it; then the other points in equal sub-batches of at most `size`
    (the last padded: one compilation), in todo's order or, one point each, seed by seed: in
    todo's order a load's seeds would run side by side on two workers and compile the same
    list capacities at once, while seed by seed each finds those of its load's earlier seed
    in the persistent compilation cache. All are recorded in out_dir/CHECKPOINTS."""
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
    if size == 1:
        rest.sort(key=lambda i: todo[i][2][1])
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

    from jaxnet.sim.state import init_state, state_bytes

    shapes = jax.tree_util.tree_leaves(jax.eval_shape(lambda key: init_state(network.layout, key),
                                                      jax.random.PRNGKey(0)))
    largest = max(leaf.size for leaf in shapes)
    state = state_bytes(shapes)
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
