"""`jaxnet-topo`: build a topology, print its summary, optionally export its graph.

    jaxnet-topo topology=dragonfly topology.a=12 topology.h=6 topology.servers_per_router=6
    jaxnet-topo topology=slimfly topology.q=13 format=json
    jaxnet-topo topology=rrg export=rrg.graphml

The summary is also written to `summary.json` in the Hydra run directory.
"""
from __future__ import annotations

import json

from omegaconf import DictConfig, OmegaConf

from jaxnet.cli.common import (
    console_script,
    hydra_app,
    print_report,
    require_format,
    run_dir,
)
from jaxnet.core.files import write_atomic
from jaxnet.topology import build_topology
from jaxnet.topology.export import export_topology


@hydra_app("jaxnet-topo", "topo")
def main(cfg: DictConfig) -> None:
    require_format(cfg)
    topo = build_topology(OmegaConf.to_container(cfg.topology, resolve=True))
    summary = topo.summary()
    if cfg.export is not None:
        summary["export"] = str(export_topology(topo, cfg.export, cfg.export_format))
    write_atomic(run_dir() / "summary.json", json.dumps(summary, indent=2, sort_keys=True))
    print_report(summary, cfg.format)


script = console_script(main)

if __name__ == "__main__":
    script()
