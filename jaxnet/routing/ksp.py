"""`ksp`: k shortest simple paths per router pair, one drawn per packet (docs/routing_paths.md).

All minimal paths if a pair has at most k, otherwise k of them chosen uniformly at random
(fixed by `seed`); pairs with fewer than k minimal paths get the next-shortest simple paths,
layer by layer in length (`method: layers`, vectorised; the last layer needed is sampled
uniformly with `seed`) or from networkx's Yen implementation (`method: yen`).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.paths.enumerate import (
    longer_routes_layers,
    longer_routes_yen,
    merge_routes,
    minimal_routes,
)
from jaxnet.routing.route_tables import PathTableRouting


@dataclasses.dataclass(frozen=True)
class KShortestPaths(PathTableRouting):
    """k shortest simple paths per pair, one drawn uniformly (or by weight) per packet.

    k: paths per pair (fewer only where fewer simple paths exist).
    seed: which k minimal paths a pair with more than k keeps, and which paths of the last
      needed length a pair with fewer keeps (method=layers); fixed per seed.
    method: layers (vectorised search by length) | yen (networkx shortest_simple_paths,
      slow: for checks on small networks) for the pairs with fewer than k minimal paths.
    """

    name: ClassVar[str] = "ksp"
    k: int = 8
    seed: int = 1
    method: str = "layers"

    def __post_init__(self):
        require_int(self.k, "routing.k", 1)
        require_int(self.seed, "routing.seed", 0)
        require(self.method in ("layers", "yen"), "routing.method", self.method, "layers | yen")

    def build_routes(self, topo):
        pair, ports, kept = minimal_routes(topo, self.k, self.seed)
        n = topo.n_routers
        short = np.nonzero((kept < self.k) & ((np.arange(n * n) // n) != (np.arange(n * n) % n)))[0]
        if self.method == "yen":
            mask = np.isin(pair, short, invert=True)
            return merge_routes([(pair[mask], ports[mask]), longer_routes_yen(topo, short, self.k)])
        extra = longer_routes_layers(topo, short, self.k - kept[short], self.seed)
        return merge_routes([(pair, ports), extra])
