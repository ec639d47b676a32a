"""Path sets and path weights of the `table` routing that are computed, not read from files:
k balanced paths per router pair found from the topology (`routing.paths`), the demand a
traffic pattern puts on the pairs (`routing.demand`), and the weights a named strategy
gives them (`routing.weights`; docs/tuning.md).

  path_set        the path set of a topology for path-finding options (cached per process:
                  every strategy of an experiment shares one)
  as_path_set     a `PathSet` from path arrays (a .npz path set) and the topology
  pattern_demand  a traffic pattern's demand, averaged over seeds (random patterns differ
                  per seed; one routing table serves every seed of a run)
  strategy_weights  weights of the strategies that need neither the router model nor the
                  simulator (`jaxnet.paths.weights.STRATEGIES`)
"""
from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

import numpy as np

from jaxnet.core.validate import require
from jaxnet.paths.mcf import find_paths
from jaxnet.paths.pathset import PathSet, directed_links
from jaxnet.paths.surrogate import TrafficDemand
from jaxnet.paths.weights import DEMAND_AWARE, STRATEGIES
from jaxnet.topology import Topology
from jaxnet.traffic import build_traffic

PATH_OPTIONS = {"k": 4, "algorithm": "multi_mcf_cyclic", "cycles": 5, "seed": 1}
# strategies computed by jaxnet.tune.resolve_weights: they need the router model (latency) or
# the simulator (closed_loop), which a routing scheme does not see
RESOLVED = ("latency", "closed_loop")
_CACHE: dict = {}
_CACHE_SIZE = 4


def path_set(topo: Topology, options: Mapping) -> PathSet:
    """`find_paths` with `options` (keys of PATH_OPTIONS, the rest defaulted), once per
    topology and options in this process."""
    unknown = sorted(set(options) - set(PATH_OPTIONS))
    require(not unknown, f"routing.paths.{unknown[0]}" if unknown else "routing.paths", options,
            f"unknown key; routing.paths takes only {sorted(PATH_OPTIONS)}")
    opts = {**PATH_OPTIONS, **options}
    key = (topo.name, hashlib.sha256(np.ascontiguousarray(topo.neighbor).tobytes()).hexdigest(),
           tuple(sorted(opts.items())))
    if key not in _CACHE:
        while len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = find_paths(topo, int(opts["k"]), opts["algorithm"], int(opts["cycles"]), int(opts["seed"]))
    return _CACHE[key]


def as_path_set(topo: Topology, paths, pair_src, pair_dst, valid) -> PathSet:
    """A `PathSet` of router sequences paths [n_pairs, k, L + 1] (-1 padded) on `topo`."""
    paths = np.where(np.asarray(valid, bool)[:, :, None], np.asarray(paths, np.int32), -1)
    link_src, link_dst, _ = directed_links(topo.neighbor)
    length = np.maximum((paths >= 0).sum(axis=2) - 1, 0).astype(np.int32)
    return PathSet(paths, np.asarray(pair_src, np.int32), np.asarray(pair_dst, np.int32), length,
                   np.asarray(valid, bool), link_src, link_dst, "file")


def pattern_demand(paths: PathSet, topo: Topology, traffic, seeds: Sequence[int]) -> TrafficDemand:
    """The mean demand of a traffic pattern config (or of a list of them) over the tables
    of `seeds`."""
    patterns = list(traffic) if isinstance(traffic, (list, tuple)) else [traffic]
    require(len(patterns) > 0 and all(isinstance(t, Mapping) and "name" in t for t in patterns),
            "routing.demand", traffic, "a traffic pattern config, e.g. {name: uniform}, or a list of them")
    require(len(seeds) > 0, "routing.demand_seeds", seeds, "at least one seed")
    p = topo.servers_per_router
    return TrafficDemand.mean([TrafficDemand.from_table(paths, build_traffic(t, topo, int(s)), p)
                               for t in patterns for s in seeds])


def strategy_weights(name: str, paths: PathSet, demand: TrafficDemand | None) -> np.ndarray:
    """float32 [n_pairs, k] weights of strategy `name` (a key of STRATEGIES)."""
    require(name in STRATEGIES, "routing.weights", name, f"one of {sorted(STRATEGIES)}")
    require(name not in DEMAND_AWARE or demand is not None, "routing.demand", None,
            f"a traffic pattern for routing.weights={name} to optimise for")
    return STRATEGIES[name](paths, None if demand is None else demand.pair).weights
