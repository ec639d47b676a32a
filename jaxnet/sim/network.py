"""A network ready to simulate: a topology, its routing scheme with its tables, and the
router model resolved for both (`jaxnet.build.network` builds one from config groups or
built objects)."""
from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.routing.base import RoutingScheme
from jaxnet.sim.layout import Layout, Model, NetArrays, build_net_arrays
from jaxnet.sim.spec import RouterSpec
from jaxnet.topology.base import Topology


@dataclasses.dataclass(frozen=True, eq=False)
class Network:
    """A topology with a routing scheme and router model, ready to simulate."""

    topo: Topology
    routing: RoutingScheme
    layout: Layout
    net: NetArrays
    tables: Any  # routing tables on device

    @classmethod
    def assemble(cls, topo: Topology, routing: RoutingScheme, router: RouterSpec, max_hops: int, vc_policy,
                 tables, port_ring: np.ndarray | None = None) -> "Network":
        """The network of resolved parts: `router.vcs` a number, `vc_policy` resolved for the
        scheme (`jaxnet.routing.vc_policy.resolve`), host `tables` of the scheme on `topo`,
        and the ring of every port under bubble flow control."""
        assert router.vcs != "auto" and router.selection != "auto", "the router is resolved for the scheme"
        layout = Layout(topo.n_routers, topo.n_ports, topo.servers_per_router, router, max_hops, vc_policy,
                        one_candidate=routing.most_candidates(topo, tables) <= 1)
        return cls(topo, routing, layout, build_net_arrays(topo, layout, port_ring),
                   jax.tree_util.tree_map(jnp.asarray, tables))

    @property
    def model(self) -> Model:
        return Model(self.layout, self.routing, self.net, self.tables)

    @property
    def route_hops(self) -> float:
        """Router-to-router hops of a route on average as the work lists' first estimate
        takes it (`jaxnet.sim.capacities.first_guess`): the topology's average distance per
        minimal phase of the routing scheme (Valiant: two)."""
        return self.routing.phases * self.topo.average_distance
