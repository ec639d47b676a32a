"""Checkpoints of a batch in flight: its state every `sim.checkpoint_every` cycles, so that
a killed run resumes where it was, with results identical to an uninterrupted run. A
checkpoint is used only by the same run (`signature`) with the same state layout."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import jax
import numpy as np


def signature(network, points, spec, tables=None) -> str:
    """What a checkpoint must match: the network, the points, the cycles and, where each
    simulation has its own routing tables (`tables`: a `jaxnet.sim.run.batch_tables` pair),
    their values."""
    blob = json.dumps([network.topo.name, network.routing.name, repr(network.routing), repr(network.layout),
                       list(points), spec.warmup, spec.measure, spec.chunk, spec.generate_until, spec.watchdog,
                       *((spec.window, spec.warmup_tolerance, spec.warmup_max) if spec.auto_warmup else ()),
                       *((spec.window, sorted(spec.record)) if spec.record else ())])
    digest = hashlib.sha256(blob.encode())
    if tables is not None and tables[1] is not None:
        for leaf in jax.tree_util.tree_leaves(jax.device_get(tables[0])):
            digest.update(np.ascontiguousarray(leaf).tobytes())
    return digest.hexdigest()[:16]


def save(path: Path, state, chunk: int, run: str) -> None:
    """Write `state` (any pytree) after `chunk` chunks of run `run`, atomically."""
    leaves = jax.tree_util.tree_leaves(jax.device_get(state))
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}.npz")
    np.savez(tmp, chunk=chunk, signature=run, **{f"leaf{i}": leaf for i, leaf in enumerate(leaves)})
    os.replace(tmp, path)


def load(path: Path, like, run: str):
    """(state shaped as `like`, chunks done) from a checkpoint of run `run`, or None."""
    if not path.exists():
        return None
    try:
        with np.load(path) as f:
            if str(f["signature"]) != run:
                return None
            leaves = [f[f"leaf{i}"] for i in range(len(jax.tree_util.tree_leaves(like)))]
            chunk = int(f["chunk"])
    except (OSError, ValueError, KeyError, EOFError):  # a damaged checkpoint is not trusted
        return None
    if [(a.shape, a.dtype) for a in leaves] != [(a.shape, a.dtype) for a in jax.tree_util.tree_leaves(like)]:
        return None  # another state layout (an older engine): start again
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(like), leaves), chunk
