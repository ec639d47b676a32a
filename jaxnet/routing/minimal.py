"""Graph-minimal routing: adaptive among all next hops on a shortest path, or one
shortest path drawn uniformly at injection and followed (`source_minimal`)."""
from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.gather import take_pair
from jaxnet.core.rng import hash_words, uniform01
from jaxnet.core.validate import require
from jaxnet.routing.base import (
    NOT_CANDIDATE,
    Candidates,
    RoutingScheme,
    minimal_port_words,
    most_bits,
    port_bits,
)


class NextHopTables(NamedTuple):
    """next_hop: uint32 [R, R, W] bit words of the ports allowed towards each destination."""

    next_hop: jnp.ndarray


@dataclasses.dataclass(frozen=True)
class NextHopRouting(RoutingScheme):
    """Hop-by-hop adaptive among the ports a next-hop table allows; lowest occupancy wins.
    Subclasses give the table and the route lengths it implies (`routes`)."""

    exact_max_hops: ClassVar[bool] = True

    def routes(self, topo):
        """(route length [R, R], next-hop bit words uint32 [R, R, W])."""
        raise NotImplementedError

    def build_tables(self, topo):
        return NextHopTables(self.routes(topo)[1])

    def max_hops(self, topo, tables):
        return int(self.routes(topo)[0].max())

    def most_candidates(self, topo, tables):
        return most_bits(tables.next_hop)

    def candidates(self, tables, router, packets, ports):
        words = take_pair(tables.next_hop, router, packets[:, pk.DST_R])
        return Candidates(jnp.where(port_bits(words, ports), 0, NOT_CANDIDATE))


@dataclasses.dataclass(frozen=True)
class Minimal(NextHopRouting):
    """Graph-minimal: every port on a shortest path. `adaptive` (the default): the least
    occupied of them wins; otherwise one drawn at random among those that can take the packet
    (occupancy ignored)."""

    name: ClassVar[str] = "minimal"
    adaptive: bool = True

    def __post_init__(self):
        require(isinstance(self.adaptive, bool), "routing.adaptive", self.adaptive, "true or false")

    def routes(self, topo):
        return topo.distances, minimal_port_words(topo)

    def candidates(self, tables, router, packets, ports):
        found = super().candidates(tables, router, packets, ports)
        return found if self.adaptive else found._replace(scale=jnp.zeros_like(found.cost))


class SourceMinimalTables(NamedTuple):
    """closer: uint32 [R, R, W] minimal-port bits; neighbor: int32 [R, P];
    path_counts: float32 [R, R] number of shortest paths between router pairs."""

    closer: jnp.ndarray
    neighbor: jnp.ndarray
    path_counts: jnp.ndarray


@dataclasses.dataclass(frozen=True)
class SourceMinimal(RoutingScheme):
    """One shortest path per packet, uniform over all shortest paths.

    The path is fixed at injection by the packet's random word (field PATH): at each hop
    the next router n is chosen with probability paths(n, t) / paths(here, t) using a
    hash of (PATH, hops), which composes to a uniform draw over all shortest paths
    without storing the path.
    """

    name: ClassVar[str] = "source_minimal"
    exact_max_hops: ClassVar[bool] = True

    def build_tables(self, topo):
        return SourceMinimalTables(
            minimal_port_words(topo),
            np.maximum(topo.neighbor, 0).astype(np.int32),
            topo.path_counts.astype(np.float32),
        )

    def max_hops(self, topo, tables):
        return topo.diameter

    def most_candidates(self, topo, tables):
        """One port a hop: the packet's draw among the minimal ones."""
        return 1

    def candidates(self, tables, router, packets, ports):
        dst = packets[:, pk.DST_R]
        ok = port_bits(tables.closer[router, dst], ports)
        weight = jnp.where(ok, tables.path_counts[tables.neighbor[router], dst[:, None]], 0.0)
        cumulative = jnp.cumsum(weight, axis=1)
        u = uniform01(hash_words(packets[:, pk.PATH], packets[:, pk.HOPS]))
        target = u[:, None] * cumulative[:, -1:]
        chosen = jnp.sum(cumulative <= target, axis=1, keepdims=True)  # first port past u
        chosen = jnp.minimum(chosen, ports - 1)
        take = (jnp.arange(ports)[None, :] == chosen) & ok
        return Candidates(jnp.where(take, 0, NOT_CANDIDATE))
