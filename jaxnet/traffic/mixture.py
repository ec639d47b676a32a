"""Weighted mixture of patterns: the superposition of their traffic.

    name: mixture
    patterns: [{name: uniform}, {name: antmill, lam: 2}]
    weights: [0.8, 0.2]

With weights w_i normalised to sum 1 and sub-pattern rates r_i(s), source s generates at
rate sum_i w_i r_i(s), and a packet follows sub-pattern i with probability proportional to
w_i r_i(s). Sub-patterns are built in list order from the same seeded generator. The
mixture picks the source's own switch exactly when a sub-pattern does.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from jaxnet.core.validate import require
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import TrafficTable, from_entries


def mixture(topo: Topology, rng, patterns=(), weights=None, *, build: Callable[..., TrafficTable]) -> TrafficTable:
    """Superpose the `patterns` (list of pattern configs, each built by `build(cfg, topo,
    rng, where=...)`: the pattern registry's) with relative `weights`."""
    patterns = list(patterns)
    require(len(patterns) >= 1, "traffic.patterns", patterns, "must list at least one pattern")
    weights = np.ones(len(patterns)) if weights is None else np.asarray(list(weights), np.float64)
    require(weights.shape == (len(patterns),), "traffic.weights", weights.tolist(),
            f"must have one weight per pattern ({len(patterns)})")
    require(bool(np.all(weights >= 0) and weights.sum() > 0), "traffic.weights", weights.tolist(),
            "must be >= 0 with a positive sum")
    tables = [_sub_table(build, topo, rng, cfg, i) for i, cfg in enumerate(patterns)]
    weights = weights / weights.sum()
    share = [w * t.rate.astype(np.float64)[:, None] * t.probabilities() for w, t in zip(weights, tables)]
    rate = sum(w * t.rate.astype(np.float64) for w, t in zip(weights, tables))
    return from_entries(np.concatenate([t.entry_router for t in tables], axis=1),
                        np.concatenate([t.entry_server for t in tables], axis=1),
                        np.concatenate(share, axis=1), rate)


def _sub_table(build, topo: Topology, rng, cfg, index: int) -> TrafficTable:
    """Build the index-th sub-pattern from its config mapping."""
    require(isinstance(cfg, Mapping), f"traffic.patterns[{index}]", cfg,
            "must be a pattern config such as {name: uniform}")
    return build(cfg, topo, rng, where=f"traffic.patterns[{index}]")
