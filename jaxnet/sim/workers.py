"""Every CPU core: a job's sub-batches simulated side by side in worker processes.

XLA:CPU steps one simulation on about one core, and sharding a batch over host devices
paid less than separate processes (docs/performance.md), so on a CPU a job with several
sub-batches starts one process per core (`sim.workers`), each pinned to its core. Each
worker receives the network once and then takes sub-batches one at a time as it frees up (a
saturated point costs many times a light one); their rows come back as they finish, in any
order.
Starting a worker (spawn, JAX import, the network) and compiling its first chunk cost
seconds each, so while the workers start, this process, which has JAX started and every
core to itself, compiles that chunk into JAX's persistent cache: the workers load it from
there instead of each compiling it on its own core (with the cache off they compile it).
Results equal those of one process: random numbers depend only on (seed, cycle, purpose,
index), never on where a point runs.

A worker exits as soon as its parent process ends, however it ends (SIGKILL included), so
that no orphan finishes a sub-batch nobody will read and deletes its checkpoint: a thread
of each worker waits on the pipe that the spawn start method gives every child (its parent
holds the only other end, which closes when it dies), then ends the process without a word.
This is immediate, has no race with a parent dying during the worker's start, and needs no
Linux-only PR_SET_PDEATHSIG, whose signal follows the parent *thread* that started the
worker (the apps run their task in a thread of its own).
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import pickle
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import jax

from jaxnet.sim.run import compile_first_chunk, simulate, stuck_buffers


@dataclass(frozen=True)
class SubBatch:
    """Points simulated together (point i with traffic[i], and routing tables tables[i] where
    the points' jobs differ in their tables' values: `jaxnet.sim.run.simulate`), padded to
    `pad_to` simulations (equal sub-batches share one compilation), resumable from
    `checkpoint`."""

    traffic: list
    points: list
    pad_to: int
    checkpoint: Path | None
    tables: list | None = None


def checkpoint_name(labelled_points: Sequence[tuple[str, tuple[float, int]]]) -> str:
    """The checkpoint file of a sub-batch, named by its (label, point) list (the label names
    the configuration and pattern), so that a resumed job finds it whatever order the
    sub-batches finish in."""
    key = hashlib.sha256(json.dumps([[label, list(point)] for label, point in labelled_points]).encode())
    return f"checkpoint-{key.hexdigest()[:16]}.npz"


def simulate_sub_batches(network, sub_batches: Sequence[SubBatch], spec, workers: int,
                         on_cycles: Callable[[int], None]) -> Iterator[tuple[int, list[dict], list[list[str]]]]:
    """(index, rows, the stuck buffers of each row that deadlocked, else []) of every
    sub-batch as it finishes; in this process when `workers` is 1, else in a pool of
    `workers` processes. `on_cycles(n)`: point-cycles completed (`jaxnet.sim.run.simulate`)."""
    if workers <= 1:
        for index, sub in enumerate(sub_batches):
            yield index, *_simulate(network, sub, spec, on_cycles)
        return
    context = multiprocessing.get_context("spawn")
    progress = context.Queue()
    cores = sorted(os.sched_getaffinity(0))
    # the workers inherit this process's XLA_FLAGS: a program's cache key includes them
    pool = context.Pool(workers, _start_worker, (pickle.dumps(network), cores if len(cores) >= workers else [],
                                                 context.Value("i", 0), progress))
    relay = threading.Thread(target=_relay, args=(progress, on_cycles), daemon=True)
    relay.start()
    try:
        if jax.config.jax_compilation_cache_dir:  # while the workers start
            first = sub_batches[0]
            compile_first_chunk(network, first.traffic, first.points, spec, first.pad_to, first.tables)
        yield from pool.imap_unordered(_run_in_worker, [(i, sub, spec) for i, sub in enumerate(sub_batches)])
        pool.close()
        pool.join()
    finally:
        pool.terminate()  # Ctrl-C, SIGTERM or an error: no worker outlives the job
        progress.put(None)
        relay.join()


def _simulate(network, sub: SubBatch, spec, on_cycles):
    rows, state = simulate(network, sub.traffic, sub.points, spec, on_cycles=on_cycles,
                           checkpoint=sub.checkpoint, pad_to=sub.pad_to, tables=sub.tables)
    return rows, [stuck_buffers(network, state, i) if row["deadlock"] else [] for i, row in enumerate(rows)]


def _relay(progress, on_cycles):
    """Forward the workers' progress to `on_cycles` until told to stop (None)."""
    for cycles in iter(progress.get, None):
        on_cycles(cycles)


# A worker process's own network and progress queue, set once by `_start_worker`.
_WORKER: dict[str, Any] = {}


def _start_worker(network_blob: bytes, cores: list[int], started, progress) -> None:
    """Pin this worker to its own core, watch the parent and load the network. Ctrl-C is
    the parent's to handle: it terminates the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, name="jaxnet-parent-watch", daemon=True).start()
    with started.get_lock():
        index, started.value = started.value, started.value + 1
    if cores:
        os.sched_setaffinity(0, {cores[index % len(cores)]})
    _WORKER.update(network=pickle.loads(network_blob), progress=progress)


def _exit_with_parent() -> None:
    """Wait until the parent process has ended, then end this worker at once (no traceback,
    no cleanup: its checkpoint stays for the rerun)."""
    multiprocessing.parent_process().join()
    os._exit(1)


def _run_in_worker(task):
    index, sub, spec = task
    return index, *_simulate(_WORKER["network"], sub, spec, _WORKER["progress"].put)
