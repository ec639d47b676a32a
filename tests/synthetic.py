"""Results rows without simulating: every point of an experiment's jobs (or of any job
configs) with made-up, deterministic metrics, decorated as the `jaxnet` app decorates them,
for tests of merging, figures and claims (which never need a simulation)."""
from __future__ import annotations

import hashlib

from jaxnet.cli.experiment import sweep_jobs
from jaxnet.results.table import config_id, decorate


def _unit(*parts) -> float:
    """A stable pseudo-random number in [0, 1) from the parts."""
    return int(hashlib.sha256(repr(parts).encode()).hexdigest()[:8], 16) / 16**8


def point(load: float, seed: int, capacity: float, **metrics) -> dict:
    """One simulated point as the engine reports it: accepted load follows the offered load
    up to `capacity`; latency grows as the load nears it."""
    accepted = min(load, capacity) * (1 - 0.01 * seed)
    row = {"offered_load": load, "seed": seed, "accepted_load": accepted, "accepted_load_min": 0.9 * accepted,
           "injected_load": accepted, "generated_load": load, "message_latency": 20 + 30 * load / capacity,
           "network_latency": 18 + 20 * load / capacity, "average_hops": 2.5, "jain_generated": 0.98,
           "jain_consumed": 0.97, "link_util_mean": 0.5 * accepted, "link_util_max": accepted,
           "missed_generations": 0, "wall_s": 1.0, "device": "cpu", "deadlock": False}
    row.update(metrics)
    return row


def rows_of_jobs(jobs, capacity=None) -> list[dict]:
    """Rows for every (pattern, load, seed) of each resolved job; `capacity(job, label)` gives
    a curve's saturation (default: a stable pseudo-random value per line and pattern)."""
    capacity = capacity or (lambda job, label: 0.2 + 0.7 * _unit(job.get("line"), job.get("network"), label))
    rows = []
    for job in jobs:
        for label, pattern in job["patterns"].items():
            cid = config_id(job, pattern)
            for load in job["sim"]["loads"]:
                for seed in job["sim"]["seeds"]:
                    rows.append(decorate(point(load, seed, capacity(job, label)), job, cid, label, pattern))
    return rows


def experiment_rows(name: str, scale: str = "small", capacity=None) -> list[dict]:
    """Rows for every job of `jaxnet -m +experiment=<name> scale=<scale>`."""
    return rows_of_jobs(sweep_jobs(name, scale), capacity)


def plain_job(*overrides: str) -> dict:
    """The resolved job of a plain `jaxnet <overrides>` run (composed from conf/, as the app)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from jaxnet.cli.common import CONF_DIR
    from jaxnet.cli.experiment import resolve

    with initialize_config_dir(config_dir=CONF_DIR, version_base=None):
        config = OmegaConf.to_container(compose(config_name="config", overrides=list(overrides)), resolve=True)
    return resolve(config)
