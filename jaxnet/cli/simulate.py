"""`jaxnet`: simulate topology x routing x traffic over the grid sim.loads x sim.seeds.

Writes results.csv (one row per point; re-running into the same directory skips points
already there), throughput.png, latency.png and jain.png into the Hydra run directory.
"""
from __future__ import annotations

import logging

import hydra
from omegaconf import DictConfig, OmegaConf

from jaxnet.cli.common import CONF_DIR, friendly_errors, run_dir
from jaxnet.results import (
    config_id,
    decorate,
    done_points,
    plot_curves,
    read_rows,
    write_rows,
)
from jaxnet.sim.run import Network, simulate
from jaxnet.sim.spec import SimSpec
from jaxnet.traffic import tables_for_points

log = logging.getLogger("jaxnet")


def run_sweep(config: dict, out_dir, progress: bool = True) -> list[dict]:
    """Simulate the points of `config` missing from out_dir/results.csv; return all rows."""
    spec = SimSpec.from_config(config["sim"])
    results = out_dir / "results.csv"
    rows = read_rows(results)
    cid = config_id(config)
    done = done_points(rows, cid)
    points = [point for point in spec.points if point not in done]
    if points:
        network = Network.from_config(config)
        traffic = tables_for_points(config["traffic"], network.topo, points)
        new_rows, _ = simulate(network, traffic, points, spec, progress=progress)
        rows += [decorate(row, config, cid) for row in new_rows]
        write_rows(results, rows)
        for row in new_rows:
            if row["deadlock"]:
                log.warning("deadlock watchdog fired at cycle %d (load %.3f, seed %d)",
                            row["deadlock_at"], row["offered_load"], row["seed"])
    log.info("%d new point(s), %d already in %s", len(points), len(done), results)
    return rows


@hydra.main(config_path=CONF_DIR, config_name="config", version_base=None)
@friendly_errors
def main(cfg: DictConfig) -> None:
    config = OmegaConf.to_container(cfg, resolve=True)
    out_dir = run_dir()
    rows = run_sweep(config, out_dir)
    plot_curves(rows, out_dir)
    for row in rows:
        print(f"load {float(row['offered_load']):.3f} seed {row['seed']}: accepted "
              f"{float(row['accepted_load']):.4f} (min {float(row['accepted_load_min']):.4f}), "
              f"latency {float(row['message_latency']):.1f} cycles")
    print(f"results: {out_dir / 'results.csv'}")


if __name__ == "__main__":
    main()
