"""Static structure of a simulation: sizes (part of the jit cache key) and index arrays.

Ports are numbered per router: inputs 0..P-1 are network ports, P..P+p-1 injection
ports (one per server); outputs 0..P-1 network ports, P..P+p-1 ejection ports. Flat ids:
input port i = r * (P + p) + port, output port o likewise, and a (port, VC) pair is
port_id * V + vc.
"""
from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.routing.base import RoutingScheme
from jaxnet.sim.spec import RouterSpec
from jaxnet.topology.base import Topology


@dataclasses.dataclass(frozen=True)
class Layout:
    """Sizes of every state array; hashable, so it is part of the jit cache key."""

    routers: int
    ports: int  # network ports per router (P)
    servers_per_router: int  # p
    router: RouterSpec
    max_hops: int  # longest route of the routing scheme, in router-to-router hops
    # the router's VC policy resolved for the scheme (a `jaxnet.routing.vc_policy.VcPolicy`):
    # its `candidate_vcs` gives the VC of every candidate
    vc_policy: Any
    # every head is offered at most one candidate port (`RoutingScheme.most_candidates`):
    # routing looks up that one output alone and no occupancy, as selection compares nothing
    one_candidate: bool = False

    @property
    def vcs(self) -> int:
        return self.router.vcs

    @property
    def input_depth(self) -> int:
        """Slots of every input ring: the larger of the transit and injection buffer sizes."""
        return max(self.router.input_buffer, self.router.injection_depth)

    @property
    def in_ports(self) -> int:
        return self.routers * (self.ports + self.servers_per_router)

    @property
    def out_ports(self) -> int:
        return self.in_ports

    @property
    def ports_per_router(self) -> int:
        return self.ports + self.servers_per_router

    @property
    def servers(self) -> int:
        return self.routers * self.servers_per_router

    @property
    def in_vcs(self) -> int:
        return self.in_ports * self.vcs

    def router_of(self, vc_ids):
        """Router of input or output (port, VC) ids (int32, any shape): arithmetic, no gather."""
        return vc_ids // (self.ports_per_router * self.vcs)

    @property
    def out_vcs(self) -> int:
        return self.out_ports * self.vcs


class NetArrays(NamedTuple):
    """Index arrays of the wiring, shared by every simulation of a batch.

    in_latency: int32 [in_vcs] latency of the link feeding each input (port, VC) (credit delay).
    out_down: int32 [out_ports] downstream input port of each network output, -1 otherwise.
    out_latency: int32 [out_ports] latency of each output link (server links: 1).
    out_network: bool [out_ports] output is a router-to-router port that exists.
    out_class: int32 [out_ports] link class of each output (0 for server links).
    port_class: int32 [R, P] link class of each network port (for vc_policy=dragonfly).
    inject_vc: int32 [servers, V] input (port, VC) ids of each server's injection port.
    in_ring: int32 [in_vcs] ring of the link feeding each input (port, VC), -1 for injection
      ports (bubble flow control; zeros otherwise).
    port_ring: int32 [R, P] ring each network port travels (bubble; zeros otherwise). A hop
      enters a ring when its output's ring differs from its input's.
    """

    in_latency: jnp.ndarray
    out_down: jnp.ndarray
    out_latency: jnp.ndarray
    out_network: jnp.ndarray
    out_class: jnp.ndarray
    port_class: jnp.ndarray
    inject_vc: jnp.ndarray
    in_ring: jnp.ndarray
    port_ring: jnp.ndarray


def build_net_arrays(topo: Topology, layout: Layout, port_ring: np.ndarray | None = None) -> NetArrays:
    """Wiring of `topo` as flat index arrays (host side, once). `port_ring`: int32 [R, P] the
    ring each network port travels (`jaxnet.topology.cartesian.port_rings`), given under
    bubble flow control only."""
    r_count, ports, p = layout.routers, layout.ports, layout.servers_per_router
    width = ports + p
    spec = layout.router
    latency_of_class = np.array([spec.latency_of(n) for n in topo.link_class_names], np.int32)

    net_latency = np.where(topo.neighbor >= 0, latency_of_class[np.maximum(topo.link_class, 0)], 1)
    server_latency = np.ones((r_count, p), np.int32)
    out_latency = np.concatenate([net_latency, server_latency], axis=1).astype(np.int32)

    # Input port (r, q) is fed by the link from neighbor[r, q]: same link, same latency.
    in_latency = out_latency.copy()

    down = np.where(topo.neighbor >= 0, topo.neighbor * width + topo.peer_port, -1)
    out_down = np.concatenate([down, np.full((r_count, p), -1)], axis=1).astype(np.int32)
    out_network = np.concatenate([topo.neighbor >= 0, np.zeros((r_count, p), bool)], axis=1)
    port_class = np.maximum(topo.link_class, 0).astype(np.int32)
    out_class = np.concatenate([port_class, np.zeros((r_count, p), np.int32)], axis=1)

    servers = np.arange(layout.servers)
    inject_port = (servers // p) * width + ports + servers % p
    inject_vc = (inject_port[:, None] * layout.vcs + np.arange(layout.vcs)[None, :]).astype(np.int32)

    assert (port_ring is not None) == (spec.flow_control == "bubble"), "port rings go with bubble flow control"
    in_ring = np.zeros((r_count, width), np.int32)
    if port_ring is None:
        port_ring = np.zeros((r_count, ports), np.int32)
    else:
        # input (r, q) is fed by port peer_port[r, q] of neighbor[r, q]: that port's ring
        fed = port_ring[np.maximum(topo.neighbor, 0), np.maximum(topo.peer_port, 0)]
        in_ring = np.concatenate([np.where(topo.neighbor >= 0, fed, -1), np.full((r_count, p), -1)], axis=1)

    return NetArrays(
        in_latency=jnp.asarray(np.repeat(in_latency.ravel(), layout.vcs)),
        out_down=jnp.asarray(out_down.ravel()),
        out_latency=jnp.asarray(out_latency.ravel()),
        out_network=jnp.asarray(out_network.ravel()),
        out_class=jnp.asarray(out_class.ravel()),
        port_class=jnp.asarray(port_class),
        inject_vc=jnp.asarray(inject_vc),
        in_ring=jnp.asarray(np.repeat(in_ring.ravel(), layout.vcs).astype(np.int32)),
        port_ring=jnp.asarray(port_ring),
    )


@dataclasses.dataclass(frozen=True)
class Model:
    """What a cycle simulates: the static structure (`layout`, the routing scheme: part of
    the jit cache key) and the traced arrays of one network (`net` wiring, routing
    `tables`), shared by every simulation of a batch."""

    layout: Layout
    routing: RoutingScheme
    net: NetArrays
    tables: Any


jax.tree_util.register_dataclass(Model, data_fields=["net", "tables"], meta_fields=["layout", "routing"])
