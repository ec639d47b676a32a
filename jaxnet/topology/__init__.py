"""Topology builders, keyed by their config name (`conf/topology/<name>.yaml`)."""
from __future__ import annotations

import inspect
from typing import Callable, Mapping

from jaxnet.topology.base import Topology, from_graph, require, require_int, topology_name

TOPOLOGIES: dict[str, Callable[..., Topology]] = {}


def register(name: str):
    """Decorator: make a builder available as `topology=<name>`."""

    def wrap(builder):
        TOPOLOGIES[name] = builder
        return builder

    return wrap


def build_topology(cfg: Mapping) -> Topology:
    """Build the topology a config group describes: `name` plus the builder's keyword args."""
    params = dict(cfg)
    name = params.pop("name", None)
    require(name in TOPOLOGIES, "topology.name", name, f"one of {sorted(TOPOLOGIES)}")
    accepted = inspect.signature(TOPOLOGIES[name]).parameters
    for key in params:
        require(key in accepted, f"topology.{key}", params[key],
                f"{name} takes only {sorted(accepted)}")
    return TOPOLOGIES[name](**params)


__all__ = ["Topology", "TOPOLOGIES", "build_topology", "from_graph", "register", "require",
           "require_int", "topology_name"]

# Importing the builder modules registers them.
from jaxnet.topology import cartesian, dragonfly, file, projective, rrg, slimfly  # noqa: E402,F401
