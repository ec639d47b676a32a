"""`table`: any path set with per-path weights, e.g. the balanced path sets and LP / Optax
weights of `jaxnet-paths` (docs/routing_paths.md, docs/balanced_paths.md), or a path set
found from the topology with weights of a named strategy (docs/tuning.md)."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, ClassVar, Mapping

import numpy as np

from jaxnet.core.files import load_arrays
from jaxnet.core.validate import require
from jaxnet.paths.enumerate import Routes, routes_from_routers
from jaxnet.paths.weights import STRATEGIES
from jaxnet.routing import path_weights
from jaxnet.routing.route_tables import PathTableRouting


def _option(**kwargs):
    """A field that reaches the engine only through the tables: not part of the scheme's
    identity, so schemes that differ only in it share compiled code."""
    return dataclasses.field(compare=False, **kwargs)


@dataclasses.dataclass(frozen=True)
class TablePaths(PathTableRouting):
    """Any path set with per-path weights.

    path_file: a `PathSet` .npz (`jaxnet-paths` writes paths.npz): router sequences
      paths [n_pairs, k, L + 1] (-1 padded), pair_src, pair_dst, valid [n_pairs, k].
    paths: instead of a file, path-finding options {k, algorithm, cycles, seed}
      (`jaxnet.routing.path_weights.PATH_OPTIONS`): the path set is found from the topology.
    weights: `uniform`; a strategy: shortest, inverse_length (ignore the traffic), lp,
      optax_max_load (optimise for `demand`; `jaxnet.paths.weights.STRATEGIES`); latency or
      closed_loop, which `jaxnet.tune.resolve_weights` computes (they need the router model
      and the simulator) and writes to `weights_file` under that name; or the name of a float
      array [n_pairs, k] in `weights_file`.
    weights_file: .npz holding the weights; default: path_file itself if it holds that
      array, else weights.npz next to it (where jaxnet-paths puts uniform/optimal/optax).
    demand: the traffic (a traffic config, or a list of them) the demand-aware strategies
      optimise for, averaged over the tables of `demand_seeds` (default [1]); the jaxnet app
      fills in the patterns and seeds the run simulates where they are null.
    tune: options of latency and closed_loop (`jaxnet.tune.resolve.TUNE_OPTIONS`).
    Every ordered router pair needs at least one valid path. Paths of a pair keep their
    order; invalid ones are dropped.

    `TablePaths.from_arrays(...)` builds one from arrays (tests, notebooks). No option is
    part of its identity (two such schemes compare equal and share compiled code, which is
    right: the path set only reaches the engine as traced tables).
    """

    name: ClassVar[str] = "table"
    table_values: ClassVar[tuple[str, ...]] = ("weights", "weights_file", "demand", "demand_seeds", "tune")
    path_file: str | None = _option(default=None)
    paths: Mapping | None = _option(default=None)
    weights: str = _option(default="uniform")
    weights_file: str | None = _option(default=None)
    demand: Mapping | None = _option(default=None)
    demand_seeds: Any = _option(default=None)
    tune: Mapping | None = _option(default=None)
    arrays: Any = _option(default=None, hash=False, repr=False)

    def __post_init__(self):
        if self.arrays is None and self.paths is None:
            require(self.path_file is not None and os.path.isfile(str(self.path_file)),
                    "routing.path_file", self.path_file,
                    "an existing .npz path set (jaxnet-paths), or routing.paths to find one")
        require(self.paths is None or isinstance(self.paths, Mapping), "routing.paths", self.paths,
                "null or path-finding options {k, algorithm, cycles, seed}")
        require(self.paths is None or self.path_file is None, "routing.paths", self.paths,
                "null when routing.path_file is given (one path set)")
        require(isinstance(self.weights, str), "routing.weights", self.weights,
                "'uniform', a strategy or the name of an array in the weights file")

    @classmethod
    def from_arrays(cls, paths, pair_src, pair_dst, valid=None, weights=None) -> "TablePaths":
        """paths int [n_pairs, k, L + 1] router sequences (-1 padded); weights [n_pairs, k]."""
        paths = np.asarray(paths, np.int32)
        valid = (paths[:, :, 0] >= 0) if valid is None else np.asarray(valid, bool)
        arrays = dict(paths=paths, pair_src=np.asarray(pair_src), pair_dst=np.asarray(pair_dst),
                      valid=valid, weights=None if weights is None else np.asarray(weights, np.float32))
        return cls(weights="arrays" if weights is not None else "uniform", arrays=arrays)

    @classmethod
    def from_pathset(cls, path_set, weights=None) -> "TablePaths":
        return cls.from_arrays(path_set.paths, path_set.pair_src, path_set.pair_dst,
                               path_set.valid, weights)

    def path_set(self, topo):
        """The `PathSet` this scheme routes on (`jaxnet.tune` fits weights to it)."""
        a = self._paths(topo)
        return path_weights.as_path_set(topo, a["paths"], a["pair_src"], a["pair_dst"], a["valid"])

    def _paths(self, topo):
        if self.arrays is not None:
            return self.arrays
        if self.paths is not None:
            found = path_weights.path_set(topo, self.paths)
            return dict(paths=found.paths, pair_src=found.pair_src, pair_dst=found.pair_dst, valid=found.valid)
        f = load_arrays(self.path_file, "routing.path_file", ("paths", "pair_src", "pair_dst"),
                        "a path set written by jaxnet-paths (paths.npz)")
        arrays = {key: f[key] for key in ("paths", "pair_src", "pair_dst")}
        arrays["valid"] = f["valid"] if "valid" in f else arrays["paths"][:, :, 0] >= 0
        return arrays

    def _load(self, topo):
        arrays = dict(self._paths(topo))
        if self.arrays is not None or self.weights == "uniform":
            return arrays
        if self.weights in STRATEGIES:
            paths = self.path_set(topo)
            demand = None if self.demand is None else path_weights.pattern_demand(
                paths, topo, self.demand, self.demand_seeds or [1])
            arrays["weights"] = path_weights.strategy_weights(self.weights, paths, demand)
        else:
            require(self.weights not in path_weights.RESOLVED or self.weights_file is not None,
                    "routing.weights", self.weights, "computed by jaxnet.tune.resolve_weights (the jaxnet "
                    "app calls it), which writes it to routing.weights_file")
            arrays["weights"] = self._load_weights()
        return arrays

    def _load_weights(self):
        candidates = [self.weights_file] if self.weights_file else [
            self.path_file, self.path_file and str(Path(self.path_file).with_name("weights.npz"))]
        for name in candidates:
            if name and os.path.isfile(name):
                f = load_arrays(name, "routing.weights_file", what="an .npz of path weights (jaxnet-paths)")
                if self.weights in f:
                    return f[self.weights].astype(np.float32)
        raise ValueError(f"routing.weights: no array '{self.weights}' in {candidates} "
                         "(allowed: 'uniform' or an array [n_pairs, k] of the weights file)")

    def build_routes(self, topo):
        a = self._load(topo)
        paths, valid = a["paths"], a["valid"]
        n = topo.n_routers
        require(paths.ndim == 3 and valid.shape == paths.shape[:2], "routing.path_file",
                self.path_file, "paths [n_pairs, k, L + 1] and valid [n_pairs, k]")
        require(int(max(a["pair_src"].max(), a["pair_dst"].max())) < n, "routing.path_file",
                self.path_file, f"router ids < {n} (the topology's routers)")
        weights = a.get("weights")
        if weights is not None:
            require(weights.shape == valid.shape, "routing.weights", self.weights,
                    f"an array of shape {valid.shape} (n_pairs, k)")
            require(bool(np.isfinite(weights).all() & (weights >= 0).all()), "routing.weights",
                    self.weights, "finite weights >= 0")
        which, lane = np.nonzero(valid)
        pair = a["pair_src"][which].astype(np.int64) * n + a["pair_dst"][which]
        covered = np.zeros(n * n, bool)
        covered[pair] = True
        missing = np.nonzero(~covered & ~np.eye(n, dtype=bool).reshape(-1))[0]
        require(missing.size == 0, "routing.path_file", self.path_file,
                f"a valid path for every ordered router pair (pair "
                f"{divmod(int(missing[0]), n) if missing.size else ''} has none)")
        routers = paths[which, lane].astype(np.int32)
        ports = routes_from_routers(topo, pair, routers, "routing.path_file")
        w = None if weights is None else weights[which, lane]
        order = np.argsort(pair, kind="stable")
        return Routes(pair=pair[order], ports=ports[order],
                      weight=None if w is None else w[order])
