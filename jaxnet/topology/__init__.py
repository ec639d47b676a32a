"""Topology builders, keyed by their config name (`conf/topology/<name>.yaml`)."""
from __future__ import annotations

from typing import Mapping

from jaxnet.core.registry import Registry
from jaxnet.topology.base import Topology, from_graph, topology_name

TOPOLOGIES = Registry("topology")
register = TOPOLOGIES.register


def build_topology(cfg: Mapping) -> Topology:
    """Build the topology a config group describes: `name` plus the builder's keyword args."""
    return TOPOLOGIES.build(cfg)


__all__ = ["Topology", "TOPOLOGIES", "build_topology", "from_graph", "register", "topology_name"]

# Importing the builder modules registers them.
from jaxnet.topology import cartesian, dragonfly, file, projective, rrg, slimfly  # noqa: E402,F401
