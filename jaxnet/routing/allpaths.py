"""`allpaths`: every minimal path of every router pair, one drawn per packet
(docs/routing_paths.md); a pair with more than `max_paths` minimal paths is an error."""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.paths.enumerate import merge_routes, minimal_routes
from jaxnet.routing.route_tables import PathTableRouting


@dataclasses.dataclass(frozen=True)
class AllMinimalPaths(PathTableRouting):
    """Every minimal path of every pair (parallel links count apart, as topology.path_counts).

    max_paths: the largest number of minimal paths a pair may have; more is a ValueError.
    """

    name: ClassVar[str] = "allpaths"
    max_paths: int = 64

    def __post_init__(self):
        require_int(self.max_paths, "routing.max_paths", 1)

    def build_routes(self, topo):
        counts = topo.path_counts
        worst = int(np.argmax(counts * ~np.eye(topo.n_routers, dtype=bool)))
        most = counts.reshape(-1)[worst]
        require(most <= self.max_paths, "routing.max_paths", self.max_paths,
                f">= {most:.0f}: router pair {divmod(worst, topo.n_routers)} of {topo.name} has "
                f"{most:.0f} minimal paths (raise max_paths, or use routing=ksp to keep k)")
        pair, ports, _ = minimal_routes(topo, None, 0)
        return merge_routes([(pair, ports)])
