"""The `jaxnet` Hydra launcher (`hydra/launcher=jaxnet`, the default of the `jaxnet` app):
jobs of a multirun that share a network and run length are simulated together as one batch
before each job runs as usual. Hydra finds launchers only in the `hydra_plugins` package;
the logic lives in `jaxnet.cli.launcher`."""
from __future__ import annotations

from typing import Any, Sequence

from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra.core.utils import JobReturn


class JaxnetLauncher(BasicLauncher):
    """Phase one: the sweep's jobs (each experiment's own lines and networks among them)
    grouped by structure, each group's missing points simulated as one batch (in this process, or one cluster job per group through
    submitit); phase two: every job through Hydra as the basic launcher runs it, finding its
    points done (figures, claims, the printed summary, failures reported per job)."""

    def __init__(self, submitit: dict[str, Any] | None = None) -> None:
        super().__init__()
        if submitit:
            from jaxnet.cli.launcher import require_submitit

            require_submitit()
        self.submitit = submitit

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from jaxnet.cli.common import interruptible
        from jaxnet.cli.experiment import job_overrides as expanded
        from jaxnet.cli.launcher import run_groups

        # a job of an experiment swept by name (+experiment=a,b) runs every line of it
        hydra_overrides = list(self.config.hydra.overrides.hydra)
        jobs = [job for overrides in job_overrides for job in expanded(list(overrides), hydra_overrides)]
        sweep = self.config.hydra.sweep.dir
        interruptible(lambda: run_groups(self.hydra_context, self.config, jobs, initial_job_idx, self.submitit),
                      f"{sweep}; run the same command with hydra.sweep.dir={sweep} to resume")
        return super().launch(jobs, initial_job_idx)
