"""Routing schemes, keyed by config name (`conf/routing/<name>.yaml`). The candidate
contract every scheme follows is stated once, in `jaxnet/routing/base.py`; VC policies are
in `jaxnet/routing/vc_policy.py`."""
from __future__ import annotations

from typing import Mapping

from jaxnet.core.registry import Registry
from jaxnet.routing.allpaths import AllMinimalPaths
from jaxnet.routing.base import NOT_CANDIDATE, RoutingScheme
from jaxnet.routing.dor import DimensionOrder
from jaxnet.routing.dragonfly import DragonflyMinimal
from jaxnet.routing.ksp import KShortestPaths
from jaxnet.routing.minimal import Minimal, SourceMinimal
from jaxnet.routing.omni import OmniWar
from jaxnet.routing.polarized import Polarized
from jaxnet.routing.table import TablePaths
from jaxnet.routing.torus_table import TorusTableRouting
from jaxnet.routing.ugal import Ugal
from jaxnet.routing.valiant import (
    RestrictedValiant,
    RestrictedValiantRecomputation,
    Valiant,
    ValiantRecomputation,
)

ROUTINGS = Registry("routing", {scheme.name: scheme for scheme in (
    Minimal, SourceMinimal, DragonflyMinimal, Valiant, RestrictedValiant, ValiantRecomputation,
    RestrictedValiantRecomputation, Polarized, DimensionOrder, Ugal, OmniWar, KShortestPaths,
    AllMinimalPaths, TablePaths, TorusTableRouting,
)})


def build_routing(cfg: Mapping) -> RoutingScheme:
    """The scheme a `routing` config group names, with its static options."""
    return ROUTINGS.build(cfg)


__all__ = ["NOT_CANDIDATE", "ROUTINGS", "RoutingScheme", "build_routing"]
