"""VC policies: which virtual channel a packet requests on each candidate port, and how
many VCs that takes. Every scheme lists the policies it honours (`vc_policies`, its
default first); any other is refused when the network is built, never ignored.

  hops       VC = router-to-router hops taken so far (DESIGN's default). Deadlock-free for
             any scheme: a channel on VC i only waits for channels on VC i + 1. Needs one VC
             per hop of the scheme's longest route.
  dragonfly  two local-global-local phases numbered l0 g0 l1 | l2 g1 l3 (Kim et al., the
             Valiant paper): local VC = 2 x phase + global hops in this phase, global VC =
             phase. For schemes built on local-global-local phases; 2 VCs per phase of the
             scheme (`RoutingScheme.phases`).
  dateline   the scheme's own VC per hop (`Candidates.vc`): tori and rings cross a dateline
             on the wrap-around link (dor, torus_table). Needs the scheme's `own_vcs`.
  ring       every hop on VC 0: one VC, deadlock-free on tori and rings only with bubble
             flow control (`router.flow_control: bubble`, the Angara router's scheme), and
             refused without it.

`router.vc_policy: auto` takes the scheme's default, or `ring` under bubble flow control
when the scheme honours it. A resolved policy is an object of the engine's static
structure (`jaxnet.sim.layout.Layout.vc_policy`).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp

from jaxnet.core import packets as pk
from jaxnet.core.registry import Registry
from jaxnet.core.validate import require

AUTO = "auto"


@dataclasses.dataclass(frozen=True)
class VcPolicy:
    """A VC policy (see the module docstring); hashable, so part of the jit cache key."""

    name: ClassVar[str] = "base"
    # every candidate of a head on one VC (`candidate_vcs` returns [N])
    one_vc_per_head: ClassVar[bool] = False

    def vcs_needed(self, scheme, topo, tables) -> int:
        """VCs `scheme` needs on `topo` under this policy."""
        raise NotImplementedError

    def candidate_vcs(self, port_class, router, packets, scheme_vc):
        """VC per head, int32 [N], or per head and candidate port, int32 [N, P].

        port_class: int32 [R, P] link class of each network port; router: int32 [N];
        packets: int32 [N, F]; scheme_vc: the scheme's `Candidates.vc` (dateline only)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class Hops(VcPolicy):
    name: ClassVar[str] = "hops"
    one_vc_per_head: ClassVar[bool] = True

    def vcs_needed(self, scheme, topo, tables):
        return scheme.max_hops(topo, tables)

    def candidate_vcs(self, port_class, router, packets, scheme_vc):
        return packets[:, pk.HOPS]


@dataclasses.dataclass(frozen=True)
class DragonflyPhases(VcPolicy):
    name: ClassVar[str] = "dragonfly"

    def vcs_needed(self, scheme, topo, tables):
        return 2 * scheme.phases

    def candidate_vcs(self, port_class, router, packets, scheme_vc):
        phase = packets[:, pk.PHASE, None]
        return jnp.where(port_class[router] > 0, phase, 2 * phase + packets[:, pk.CLASS_HOPS, None])


@dataclasses.dataclass(frozen=True)
class Dateline(VcPolicy):
    name: ClassVar[str] = "dateline"

    def vcs_needed(self, scheme, topo, tables):
        return scheme.own_vcs(topo, tables)

    def candidate_vcs(self, port_class, router, packets, scheme_vc):
        return scheme_vc


@dataclasses.dataclass(frozen=True)
class Ring(VcPolicy):
    name: ClassVar[str] = "ring"
    one_vc_per_head: ClassVar[bool] = True

    def vcs_needed(self, scheme, topo, tables):
        return 1

    def candidate_vcs(self, port_class, router, packets, scheme_vc):
        return jnp.zeros_like(router)


VC_POLICIES = Registry("router.vc_policy", {p.name: p for p in (Hops(), DragonflyPhases(), Dateline(), Ring())})


def resolve(policy: str, scheme, flow_control: str = "cut_through") -> VcPolicy:
    """The policy `router.vc_policy` names for `scheme` under `router.flow_control` (auto:
    `ring` under bubble flow control if the scheme honours it, else the scheme's default)."""
    require(policy == AUTO or policy in VC_POLICIES, "router.vc_policy", policy,
            f"one of {[AUTO, *VC_POLICIES]}")
    if policy == AUTO:
        bubble_ring = flow_control == "bubble" and "ring" in scheme.vc_policies
        return VC_POLICIES["ring" if bubble_ring else scheme.vc_policies[0]]
    require(policy in scheme.vc_policies, "router.vc_policy", policy,
            f"routing={scheme.name} honours only {list(scheme.vc_policies)} (or {AUTO})")
    require(policy != "ring" or flow_control == "bubble", "router.vc_policy", policy,
            "one VC on a torus deadlocks without router.flow_control=bubble")
    return VC_POLICIES[policy]
