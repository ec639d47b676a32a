"""Host devices for the apps. XLA runs the host as one device; JAXNET_HOST_DEVICES=N asks
for N before JAX starts, and a batch is then padded and sharded over them
(`jaxnet.sim.run.shard`). One device is the default: on the 2-core CI machine a batch of 8
sharded over 2 host devices ran at 0.59x the speed of one pinned core
(docs/benchmarks.md, `scripts/bench.py --suite scaling`). An explicit XLA_FLAGS wins."""
from __future__ import annotations

import os
import sys

FLAG = "--xla_force_host_platform_device_count"


def use_host_devices() -> None:
    """Ask XLA for JAXNET_HOST_DEVICES host devices, unless it is unset, JAX is already
    running or XLA_FLAGS already sets the count."""
    flags = os.environ.get("XLA_FLAGS", "")
    count = os.environ.get("JAXNET_HOST_DEVICES")
    if not count or "jax" in sys.modules or FLAG in flags:
        return
    os.environ["XLA_FLAGS"] = f"{flags} {FLAG}={count}".strip()
