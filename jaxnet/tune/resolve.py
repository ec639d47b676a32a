"""`resolve_weights`: a `table` routing config whose weights need the router model (latency)
or the simulator (closed_loop) turned into one that reads them from a file, and the traffic
the demand-aware strategies optimise for filled in with what the run simulates.

The latency and closed-loop strategies aim at one offered load, `tune.load` x the fluid
saturation load of the max-load weights (`optax_weights`: the highest load any weighting of
these paths carries in the fluid model, capped at 1); the latency fit starts from those
weights (from uniform ones it needs several times the steps to get as low).
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from jaxnet import build
from jaxnet.core.validate import require, require_int, require_number
from jaxnet.paths.surrogate import SurrogateModel, latency_weights, saturation_load
from jaxnet.paths.weights import optax_weights
from jaxnet.routing import build_routing
from jaxnet.routing.path_weights import RESOLVED, pattern_demand, strategy_weights
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import Topology
from jaxnet.traffic import build_traffic
from jaxnet.tune.closed_loop import closed_loop

# routing.tune: what latency and closed_loop do (conf/routing/table.yaml documents them)
TUNE_OPTIONS = {"load": 0.8, "steps": 1000, "learning_rate": 0.05, "rounds": 3, "start": "latency",
                "loads": [0.4, 0.6, 0.8, 0.95], "seeds": [101, 102], "warmup": 1000, "measure": 2000}


def tune_options(cfg: Mapping | None) -> dict:
    """routing.tune with defaults, checked."""
    cfg = dict(cfg or {})
    unknown = sorted(set(cfg) - set(TUNE_OPTIONS))
    require(not unknown, f"routing.tune.{unknown[0]}" if unknown else "routing.tune", cfg,
            f"unknown key; routing.tune takes only {sorted(TUNE_OPTIONS)}")
    opts = {**TUNE_OPTIONS, **cfg}
    require_number(opts["load"], "routing.tune.load", 0.0, 1.0, low_open=True)
    require(isinstance(opts["loads"], (list, tuple)) and len(opts["loads"]) > 0, "routing.tune.loads",
            opts["loads"], "a non-empty list of fractions of the saturation load")
    for x in opts["loads"]:
        require_number(x, "routing.tune.loads", 0.0, 1.5, low_open=True)
    require_int(opts["rounds"], "routing.tune.rounds", 1)
    require(opts["start"] in ("uniform", "shortest", "inverse_length", "lp", "optax_max_load", "latency"),
            "routing.tune.start", opts["start"], "a strategy other than closed_loop")
    return opts


def _demand(patterns: Mapping):
    values = [copy.deepcopy(dict(p)) for p in patterns.values()]
    return values[0] if len(values) == 1 else values


def _signature(cfg: Mapping, topo: Topology, router: RouterSpec) -> str:
    blob = json.dumps([cfg, topo.name, repr(router)], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def fill_demand(routing_cfg: Mapping, patterns: Mapping, seeds: Sequence[int]) -> dict:
    """The routing config with a `table` scheme's null `demand` / `demand_seeds` made the
    run's traffic `patterns` (label -> config) and `seeds` (a job's tables then follow from
    its config alone); any other config as it is."""
    cfg = copy.deepcopy(dict(routing_cfg))
    if cfg.get("name") != "table":
        return cfg
    if cfg.get("demand") is None:
        cfg["demand"] = _demand(patterns)
    if cfg.get("demand_seeds") is None:
        cfg["demand_seeds"] = [int(s) for s in seeds]
    return cfg


def needs_weights(routing_cfg: Mapping) -> bool:
    """Whether the config's weights must be computed before its network is built."""
    return (routing_cfg.get("name") == "table" and routing_cfg.get("weights", "uniform") in RESOLVED
            and not routing_cfg.get("weights_file"))


def resolve_weights(routing_cfg: Mapping, topo: Topology, router: RouterSpec, patterns: Mapping,
                    seeds: Sequence[int], out_dir: Path) -> dict:
    """The routing config to build: `fill_demand`, then weights `latency` or `closed_loop`
    computed, written to out_dir/<weights>_weights.npz (with the closed loop's rounds) and
    named as `weights_file`. A file written for the same config, topology and router is
    reused."""
    cfg = fill_demand(routing_cfg, patterns, seeds)
    if not needs_weights(cfg):
        return cfg
    strategy = cfg["weights"]
    opts = tune_options(cfg.get("tune"))
    path = Path(out_dir) / f"{strategy}_weights.npz"
    signature = _signature(cfg, topo, router)
    if not _written_for(path, strategy, signature):
        weights, record = _compute(strategy, cfg, topo, router, opts)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.npz")
        np.savez(tmp, **{strategy: weights}, signature=np.array(signature), record=np.array(json.dumps(record)))
        os.replace(tmp, path)
    cfg["weights_file"] = str(path)
    return cfg


def _written_for(path: Path, strategy: str, signature: str) -> bool:
    try:
        with np.load(path) as f:
            return str(f["signature"]) == signature and strategy in f
    except (OSError, ValueError, KeyError, EOFError):
        return False


def _compute(strategy: str, cfg: Mapping, topo: Topology, router: RouterSpec, opts: Mapping):
    """(weights [n_pairs, k], a JSON record of how they were found)."""
    scheme = build_routing({**cfg, "weights": "uniform", "weights_file": None})
    paths = scheme.path_set(topo)
    demand = pattern_demand(paths, topo, cfg["demand"], cfg["demand_seeds"])
    model = SurrogateModel.for_router(topo, router)
    max_load = optax_weights(paths, demand.pair).weights
    saturation = min(1.0, saturation_load(paths, max_load, demand))
    target = opts["load"] * saturation
    record = {"strategy": strategy, "saturation_load": saturation, "target_load": target}
    fitted = latency_weights(paths, demand, model, target, opts["steps"], opts["learning_rate"], init=max_load)
    if strategy == "latency":
        return fitted.weights, record
    start = fitted.weights if opts["start"] == "latency" else strategy_weights(opts["start"], paths, demand)
    network = build.network(topo, scheme, router)
    window = SimSpec(warmup=opts["warmup"], measure=opts["measure"], chunk=min(500, opts["warmup"] + opts["measure"]))
    loads = sorted({min(1.0, f * saturation) for f in opts["loads"]} | {target})
    # the traffic the weights are fitted for (the run's tables), simulated with the loop's own
    # seeds: the run's results never come from the seeds the loop chose its weights on
    traffic = cfg["demand"] if isinstance(cfg["demand"], Mapping) else {
        "name": "mixture", "patterns": list(cfg["demand"])}
    table_seeds = cfg["demand_seeds"]
    tables = [build_traffic(traffic, topo, int(table_seeds[i % len(table_seeds)])) for i in range(len(opts["seeds"]))]
    best, rounds = closed_loop(network, paths, demand, tables, model, start, target, loads, opts["seeds"],
                               window, opts["rounds"], opts["steps"], opts["learning_rate"])
    record["rounds"] = [r.summary() for r in rounds]
    return best, record
