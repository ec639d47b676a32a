"""Routing schemes, keyed by config name (`conf/routing/<name>.yaml`)."""
from __future__ import annotations

from typing import Mapping

from jaxnet.routing.base import NOT_CANDIDATE, RoutingScheme
from jaxnet.routing.dor import DimensionOrder
from jaxnet.routing.dragonfly import DragonflyMinimal
from jaxnet.routing.minimal import Minimal, SourceMinimal
from jaxnet.routing.path_table import AllMinimalPaths, KShortestPaths, TablePaths
from jaxnet.routing.omni import OmniWar
from jaxnet.routing.polarized import Polarized
from jaxnet.routing.torus_table import TorusTableRouting
from jaxnet.routing.ugal import Ugal
from jaxnet.routing.valiant import (
    RestrictedValiant, RestrictedValiantRecomputation, Valiant, ValiantRecomputation)
from jaxnet.topology import require

ROUTINGS: dict[str, type[RoutingScheme]] = {
    cls.name: cls
    for cls in (Minimal, SourceMinimal, DragonflyMinimal, Valiant, RestrictedValiant,
                ValiantRecomputation, RestrictedValiantRecomputation, Polarized,
                DimensionOrder, Ugal, OmniWar, KShortestPaths, AllMinimalPaths, TablePaths,
                TorusTableRouting)
}


def build_routing(cfg: Mapping) -> RoutingScheme:
    """The scheme a `routing` config group names, with its static options."""
    params = dict(cfg)
    name = params.pop("name", None)
    require(name in ROUTINGS, "routing.name", name, f"one of {sorted(ROUTINGS)}")
    cls = ROUTINGS[name]
    try:
        return cls(**params)
    except TypeError as err:
        raise ValueError(f"routing={name}: {err}") from None


__all__ = ["NOT_CANDIDATE", "ROUTINGS", "RoutingScheme", "build_routing"]
