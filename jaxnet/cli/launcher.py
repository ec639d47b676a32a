"""One batch per compiled structure across a sweep's jobs (the `jaxnet` Hydra launcher,
`hydra_plugins/jaxnet_launcher`).

Jobs of a multirun that differ only in what the engine takes as traced input (traffic
pattern, load, seed, routing tables' values) share a network and a compiled step: they are
grouped by `sweep.structure_key`, and each group's missing points are simulated together
(`sweep.run_jobs`), written into each job's own results.csv. Then Hydra runs every job as
usual; each finds its points done and writes its figures and summary, so each job's
directory and rows are what running it alone gives (the rows' `batch` column says how many
simulations were stepped together).

With `hydra.launcher.submitit` set, each group is one cluster job through submitit (the
library behind hydra-submitit-launcher; `pip install -e ".[slurm]"`): `cluster: slurm`, or
`local` / `debug` to run the same code path on this machine. A group that is interrupted
resumes when the sweep is run again into the same directory (finished points are skipped,
checkpoints resume).
"""
from __future__ import annotations

import copy
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from jaxnet.cli.common import keys_of
from jaxnet.cli.experiment import NotApplicable, resolve
from jaxnet.cli.sweep import run_jobs, structure_key

log = logging.getLogger("jaxnet")


def sweep_jobs_of(hydra_context, config, job_overrides: Sequence[Sequence[str]],
                  initial_job_idx: int) -> list[tuple[dict, Path]]:
    """(resolved job, its run directory) of every job of the sweep that runs (a line an
    experiment keeps off a network is left out; a job whose config is invalid too: Hydra's
    run of it reports the error)."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf, open_dict

    jobs = []
    for index, overrides in enumerate(job_overrides):
        sweep_config = hydra_context.config_loader.load_sweep_config(config, list(overrides))
        with open_dict(sweep_config):
            sweep_config.hydra.job.id = sweep_config.hydra.job.num = initial_job_idx + index
        HydraConfig.instance().set_config(sweep_config)
        out_dir = Path(str(sweep_config.hydra.sweep.dir)) / str(sweep_config.hydra.sweep.subdir)
        plain = copy.deepcopy(sweep_config)
        with open_dict(plain):
            del plain["hydra"]
        try:
            jobs.append((resolve(OmegaConf.to_container(plain, resolve=True), keys_of(overrides)), out_dir))
        except (NotApplicable, ValueError):
            continue
    return jobs


def group_jobs(jobs: list[tuple[dict, Any]]) -> list[list[tuple[dict, Any]]]:
    """The jobs grouped by `structure_key`, in the order of each group's first job."""
    groups = defaultdict(list)
    for job, out in jobs:
        groups[structure_key(job)].append((job, out))
    return list(groups.values())


def run_groups(hydra_context, config, job_overrides: Sequence[Sequence[str]], initial_job_idx: int,
               submitit: dict | None = None) -> None:
    """Simulate every group of the sweep's jobs as one batch: here, or one submitit job per
    group. A group that fails is logged; its jobs report the error when Hydra runs them."""
    groups = group_jobs(sweep_jobs_of(hydra_context, config, job_overrides, initial_job_idx))
    log.info("%d job(s) in %d batch(es) of one network each", sum(map(len, groups)), len(groups))
    if submitit:
        _submit(groups, dict(submitit), Path(str(config.hydra.sweep.dir)))
        return
    for group in groups:
        try:
            run_jobs(group)
        except Exception as err:  # noqa: BLE001 (each job reports it when it runs)
            log.warning("a batch of %d job(s) failed (each job reports it): %s", len(group), err)


def require_submitit() -> None:
    """A one-line error unless submitit (the `slurm` extra) is installed."""
    from jaxnet.core.validate import require

    try:
        import submitit  # noqa: F401
    except ImportError:
        require(False, "hydra/launcher", "slurm", 'a cluster launcher needs submitit: pip install -e ".[slurm]"')


def _submit(groups, params: dict, sweep_dir: Path) -> None:
    """One submitit job per group (`params`: `cluster` and submitit's executor parameters,
    e.g. slurm_partition, gpus_per_node, timeout_min), waited for."""
    import submitit

    cluster = params.pop("cluster", "slurm")
    folder = params.pop("folder", None) or str(sweep_dir / ".submitit" / "%j")
    executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
    executor.update_parameters(**params)
    submitted = [executor.submit(run_jobs, group, False) for group in groups]
    log.info("submitted %d batch(es) to %s: %s", len(submitted), cluster, ", ".join(str(job.job_id) for job in submitted))
    for job, group in zip(submitted, groups):
        try:
            job.result()
        except Exception as err:  # noqa: BLE001 (each job reports it when it runs)
            log.warning("batch %s of %d job(s) failed (each job reports it): %s", job.job_id, len(group), err)
