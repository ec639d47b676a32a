"""The Valiant family: route minimally to a random intermediate router, then to the target.

`valiant` draws the intermediate uniformly among all routers. `rval` (Restricted Valiant)
draws it inside the partition that source and destination share: on a Dragonfly, the
group when both are in the same group; on a Hamming graph (or torus/mesh), the routers that
keep every coordinate in which source and destination agree (the shared row or column in
2D); otherwise it is plain Valiant. With `intermediates: other_groups` (Dragonfly only) an
intermediate drawn over the whole network is drawn outside the source's group, as FOGSim (the
Restricted Valiant paper's simulator) draws its Valiant node for a pair in different groups
(FOGSim's Valiant is `rval` with `other_groups`: RVAL's node for a pair inside one group); the
default `all` draws it among all routers, as the paper's text says. The `_recomp` variants redraw the intermediate, among
the allowed ones, every cycle the packet is blocked at the head of its injection buffer;
once in transit it is fixed. Each phase routes with `base` (graph `minimal`, or
`dragonfly_minimal` local-global-local); with `first_leg: shortcut` (the default) a
packet whose first phase passes its destination is done there, with `first_leg: full` it
goes on to the intermediate and back, as FOGSim's Valiant does. VCs: hops so far (2x the
base's longest route) or, with router.vc_policy=dragonfly and base dragonfly_minimal, 4
local / 2 global as in the Valiant paper.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.core.rng import below, hash_words
from jaxnet.core.validate import require
from jaxnet.routing.base import NOT_CANDIDATE, Candidates, RoutingScheme, most_bits, port_bits
from jaxnet.routing.dragonfly import DragonflyMinimal
from jaxnet.routing.minimal import Minimal
from jaxnet.topology.base import Topology

BASES = {"minimal": Minimal, "dragonfly_minimal": DragonflyMinimal}


class ValiantTables(NamedTuple):
    """next_hop: uint32 [R, R, W] base next-hop bit words; neighbor: int32 [R, P];
    coords: int32 [R, n] partition coordinates; sides: int32 [n]; stride: int32 [n];
    major: bool [n] coordinates whose difference makes the whole network the partition;
    group: int32 [R] each router's Dragonfly group (zeros elsewhere); groups: int32 [] their
    count (0 unless intermediates are drawn outside the source's group)."""

    next_hop: jnp.ndarray
    neighbor: jnp.ndarray
    coords: jnp.ndarray
    sides: jnp.ndarray
    stride: jnp.ndarray
    major: jnp.ndarray
    group: jnp.ndarray
    groups: jnp.ndarray


INTERMEDIATES = ("all", "other_groups")
FIRST_LEGS = ("shortcut", "full")


def base_routes(topo: Topology, base: str) -> tuple[np.ndarray, np.ndarray]:
    """(route lengths [R, R], next-hop words [R, R, W]) of the base minimal scheme."""
    require(base in BASES, "routing.base", base, f"one of {list(BASES)}")
    return BASES[base]().routes(topo)


def partition_coordinates(topo: Topology, restricted: bool):
    """Coordinates for drawing intermediates: (coords [R, n], sides [n], major [n])."""
    n = topo.n_routers
    if not restricted:
        return np.arange(n, dtype=np.int32)[:, None], np.array([n]), np.array([True])
    if topo.group is not None:  # Dragonfly: (index in group, group); groups are contiguous
        size = n // (int(topo.group.max()) + 1)
        coords = np.stack([np.arange(n) - topo.group * size, topo.group], axis=1)
        return coords, np.array([size, int(topo.group.max()) + 1]), np.array([False, True])
    require(topo.coords is not None, "routing.name", "rval",
            "a topology with partitions: a Dragonfly (groups) or a Hamming graph/torus/mesh")
    sides = np.asarray(topo.sides)
    return topo.coords, sides, np.zeros(len(sides), bool)


@dataclasses.dataclass(frozen=True)
class Valiant(RoutingScheme):
    """Valiant routing through a random intermediate router."""

    name: ClassVar[str] = "valiant"
    restricted: ClassVar[bool] = False
    explore_draws: ClassVar[int] = 16
    phases: ClassVar[int] = 2
    base: str = "minimal"
    intermediates: str = "all"
    first_leg: str = "shortcut"

    def build_tables(self, topo):
        require(self.first_leg in FIRST_LEGS, "routing.first_leg", self.first_leg, f"one of {list(FIRST_LEGS)}")
        _, words = base_routes(topo, self.base)
        coords, sides, major = partition_coordinates(topo, self.restricted)
        stride = np.concatenate([[1], np.cumprod(sides)[:-1]])
        require(self.intermediates in INTERMEDIATES, "routing.intermediates", self.intermediates,
                f"one of {list(INTERMEDIATES)}")
        other_groups = self.intermediates == "other_groups"
        require(not other_groups or topo.group is not None, "routing.intermediates", self.intermediates,
                "'all' on a topology without groups (other_groups needs a Dragonfly)")
        group = np.zeros(topo.n_routers, np.int32) if topo.group is None else topo.group.astype(np.int32)
        groups = int(group.max()) + 1 if other_groups else 0
        return ValiantTables(words, np.maximum(topo.neighbor, 0).astype(np.int32),
                             coords.astype(np.int32), sides.astype(np.int32),
                             stride.astype(np.int32), major, group, np.int32(groups))

    def max_hops(self, topo, tables):
        return 2 * int(base_routes(topo, self.base)[0].max())

    def most_candidates(self, topo, tables):
        """Each phase offers its base's candidates."""
        return most_bits(tables.next_hop)

    @property
    def vc_policies(self):
        """vc_policy=dragonfly needs local-global-local phases (base dragonfly_minimal)."""
        return ("hops", "dragonfly") if self.base == "dragonfly_minimal" else ("hops",)

    def draw_intermediate(self, tables, source, destination, bits):
        """Random intermediate router per packet, inside the allowed partition."""
        src, dst = tables.coords[source], tables.coords[destination]
        differs = src != dst
        anywhere = jnp.any(differs & tables.major, axis=1, keepdims=True)
        dims = jnp.arange(src.shape[1], dtype=jnp.uint32)
        draw = below(hash_words(bits[:, None], dims[None, :]), tables.sides[None, :])
        mid = jnp.where(differs | anywhere, draw, src)
        mid = jnp.sum(mid * tables.stride, axis=1)
        if self.intermediates == "all":
            return mid
        # a whole-network draw, redone outside the source's group (groups are contiguous)
        size = tables.group.shape[0] // jnp.maximum(tables.groups, 1)
        own = tables.group[source]
        other = (own + 1 + below(hash_words(bits, jnp.full_like(bits, 0x5A17)), tables.groups - 1)) % tables.groups
        outside = other * size + below(hash_words(bits, jnp.full_like(bits, 0x5A18)), size)
        network_wide = anywhere[:, 0] if self.restricted else True
        return jnp.where(network_wide, outside, mid)

    def _set_intermediate(self, tables, router, packets, bits):
        mid = self.draw_intermediate(tables, packets[:, pk.SRC], packets[:, pk.DST_R], bits)
        return packets.at[:, pk.MID].set(mid).at[:, pk.PHASE].set((mid == router).astype(jnp.int32))

    def at_injection(self, tables, router, packets, bits):
        return self._set_intermediate(tables, router, packets, bits)

    def delivers(self, tables, router, packets):
        """At the destination's router; with `first_leg: full` only after the intermediate."""
        at_destination = packets[:, pk.DST_R] == router
        return at_destination if self.first_leg == "shortcut" else at_destination & (packets[:, pk.PHASE] == 1)

    def candidates(self, tables, router, packets, ports):
        target = jnp.where(packets[:, pk.PHASE] == 0, packets[:, pk.MID], packets[:, pk.DST_R])
        ok = port_bits(tables.next_hop[router, target], ports)
        return Candidates(jnp.where(ok, 0, NOT_CANDIDATE))

    def on_hop(self, tables, router, packets, port):
        arrives = tables.neighbor[router, jnp.maximum(port, 0)]
        reached = (port >= 0) & (arrives == packets[:, pk.MID]) & (packets[:, pk.PHASE] == 0)
        packets = packets.at[:, pk.CLASS_HOPS].set(jnp.where(reached, 0, packets[:, pk.CLASS_HOPS]))
        return packets.at[:, pk.PHASE].set(packets[:, pk.PHASE] | reached.astype(jnp.int32))


@dataclasses.dataclass(frozen=True)
class RestrictedValiant(Valiant):
    name: ClassVar[str] = "rval"
    restricted: ClassVar[bool] = True


@dataclasses.dataclass(frozen=True)
class ValiantRecomputation(Valiant):
    name: ClassVar[str] = "valiant_recomp"
    recomputes: ClassVar[bool] = True

    def on_blocked(self, tables, router, packets, bits):
        return self._set_intermediate(tables, router, packets, bits)


@dataclasses.dataclass(frozen=True)
class RestrictedValiantRecomputation(ValiantRecomputation):
    name: ClassVar[str] = "rval_recomp"
    restricted: ClassVar[bool] = True
