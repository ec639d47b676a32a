"""What the apps set up before JAX starts (`jaxnet.cli` imports this first).

Host devices: XLA runs the host as one device; JAXNET_HOST_DEVICES=N asks for N, and a
batch is then padded and sharded over them (`jaxnet.sim.run.shard`). One device is the
default: a batch sharded over host devices ran slower than one pinned core
(docs/performance.md); every core is used by worker processes instead
(`jaxnet.sim.workers`). An explicit XLA_FLAGS wins.

Compilation cache: compiling a simulator takes seconds to a minute and a program depends
only on the structure (network, routing, router, list capacities), so the apps keep XLA's
compiled programs in a persistent cache, JAXNET_XLA_CACHE (default
~/.cache/jaxnet/xla; `off` for none): a resumed or repeated run, and every job of a sweep
that shares a structure, skips compilation. An explicit JAX_COMPILATION_CACHE_DIR wins.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

FLAG = "--xla_force_host_platform_device_count"


def use_host_devices() -> None:
    """Ask XLA for JAXNET_HOST_DEVICES host devices, unless it is unset, JAX is already
    running or XLA_FLAGS already sets the count."""
    flags = os.environ.get("XLA_FLAGS", "")
    count = os.environ.get("JAXNET_HOST_DEVICES")
    if not count or "jax" in sys.modules or FLAG in flags:
        return
    os.environ["XLA_FLAGS"] = f"{flags} {FLAG}={count}".strip()


def use_compilation_cache() -> None:
    """Point JAX's persistent compilation cache at JAXNET_XLA_CACHE (default
    ~/.cache/jaxnet/xla), unless it is `off`, JAX is already running or
    JAX_COMPILATION_CACHE_DIR is set."""
    choice = os.environ.get("JAXNET_XLA_CACHE", "")
    if choice == "off" or "jax" in sys.modules or "JAX_COMPILATION_CACHE_DIR" in os.environ:
        return
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = choice or str(cache_home / "jaxnet" / "xla")
