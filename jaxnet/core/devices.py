"""Every CPU core by default: XLA runs the host as one device unless told otherwise, so the
apps ask for one host device per core before JAX starts; a batch is then sharded over them
(`jaxnet.sim.run.shard`). Explicit XLA_FLAGS and JAXNET_HOST_DEVICES win."""
from __future__ import annotations

import os
import sys

FLAG = "--xla_force_host_platform_device_count"


def use_every_core() -> None:
    """Ask XLA for one host device per usable core (JAXNET_HOST_DEVICES=N: N), unless JAX is
    already running or XLA_FLAGS already sets the count."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "jax" in sys.modules or FLAG in flags:
        return
    count = os.environ.get("JAXNET_HOST_DEVICES") or str(len(os.sched_getaffinity(0)))
    os.environ["XLA_FLAGS"] = f"{flags} {FLAG}={count}".strip()
