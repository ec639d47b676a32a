"""`jaxnet-tables`: deadlock-free routing tables for a torus or mesh (Angara BFS/SSSP/genetic).

    jaxnet-tables topology=torus topology.sides=[4,2,2,2] tables=sssp format=json
    jaxnet-tables topology=mesh topology.sides=[4,4] tables=genetic tables.population=50

Prints the table's metrics (format=json: exactly one JSON object) and writes `table.npz`
(see `jaxnet.paths.torus_tables.save_table`) and `metrics.json` to the Hydra run directory.
"""
from __future__ import annotations

import json

import numpy as np
from omegaconf import DictConfig, OmegaConf

from jaxnet.cli.common import (
    console_script,
    hydra_app,
    print_report,
    require_format,
    run_dir,
)
from jaxnet.core.files import write_atomic
from jaxnet.core.validate import require
from jaxnet.paths.torus_graph import KINDS, TorusShape
from jaxnet.paths.torus_tables import (
    build_table,
    deadlock_cycle,
    save_table,
    table_metrics,
)
from jaxnet.topology import build_topology


@hydra_app("jaxnet-tables", "tables")
def main(cfg: DictConfig) -> None:
    require_format(cfg)
    topology = OmegaConf.to_container(cfg.topology, resolve=True)
    kind = topology.get("name")
    require(kind in KINDS, "topology", kind, f"routing tables need one of {KINDS}")
    topo = build_topology(topology)
    shape = TorusShape.build(list(topo.sides), kind)
    require(_same_links(shape, topo.neighbor), "topology", topo.name,
            "router numbering differs from the routing tables' (coordinate 0 fastest)")
    params = OmegaConf.to_container(cfg.tables, resolve=True)
    table = build_table(shape, params.pop("algorithm", None), **params)
    cycle = deadlock_cycle(table)
    metrics = {
        "topology": topo.name,
        "algorithm": table.algorithm,
        **table_metrics(table),
        "deadlock_free": cycle is None,
        **{k: v for k, v in table.info.items() if k != "best_sigma4_history"},
    }
    if cycle is not None:
        metrics["dependency_cycle"] = cycle
    save_table(table, run_dir() / "table.npz")
    write_atomic(run_dir() / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True))
    print_report(metrics, cfg.format)


def _same_links(shape: TorusShape, neighbor: np.ndarray) -> bool:
    """Do both numberings give every router the same set of neighbours?"""
    ours = np.sort(np.where(shape.neighbor >= 0, shape.neighbor, -1), axis=1)
    theirs = np.sort(neighbor, axis=1)
    width = max(ours.shape[1], theirs.shape[1])
    pad = lambda a: np.pad(a, ((0, 0), (width - a.shape[1], 0)), constant_values=-1)  # noqa: E731
    return ours.shape[0] == theirs.shape[0] and np.array_equal(pad(ours), pad(theirs))


script = console_script(main)

if __name__ == "__main__":
    script()
