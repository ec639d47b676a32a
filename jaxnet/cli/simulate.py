"""`jaxnet`: simulate topology x routing x traffic over the grid sim.loads x sim.seeds, or a
paper figure (`jaxnet -m +experiment=<paper>/<figure> [scale=paper]`, docs/experiments.md).

Writes results.csv (one row per point; re-running into the same directory skips points
already there), the figures throughput, latency, jain and hops (in each of `plot.formats`:
png, pdf, svg) and, for an experiment, claims.md into the Hydra run directory; a multirun
sweep also merges its jobs at the sweep directory's root (`jaxnet.cli.sweep.CollectSweep`).
"""
from __future__ import annotations

import logging

from omegaconf import DictConfig, OmegaConf

from jaxnet.cli.common import command_line_keys, console_script, hydra_app, run_dir
from jaxnet.cli.experiment import NotApplicable
from jaxnet.cli.sweep import run_sweep
from jaxnet.results import collect, plots

log = logging.getLogger("jaxnet")


@hydra_app("jaxnet", "config", experiments=True)
def main(cfg: DictConfig) -> None:
    config = OmegaConf.to_container(cfg, resolve=True)
    formats = plots.check_formats((config.get("plot") or {}).get("formats", plots.DEFAULT_FORMATS))
    out_dir = run_dir()
    try:
        rows = run_sweep(config, out_dir, explicit=command_line_keys())
    except NotApplicable as skip:
        log.info("skipped: %s", skip)
        return
    collect.write_outputs([dict(r) for r in rows], out_dir, merged_csv=False, formats=formats)
    for row in rows:
        completion = (f", completed at cycle {row['completion_cycles']}" if str(row.get("complete")) == "True" else
                      ", not complete" if str(row.get("complete")) == "False" else "")
        print(f"{row['traffic']}: load {float(row['offered_load']):.3f} seed {row['seed']}: accepted "
              f"{float(row['accepted_load']):.4f} (min {float(row['accepted_load_min']):.4f}), "
              f"latency {float(row['message_latency']):.1f} cycles{completion}")
    print(f"results: {out_dir / 'results.csv'}")


script = console_script(main)

if __name__ == "__main__":
    script()
