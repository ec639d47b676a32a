"""Topology builders, keyed by their config name (`conf/topology/<name>.yaml`)."""
from __future__ import annotations

from typing import Mapping

from jaxnet.core.registry import Registry
from jaxnet.topology import cartesian, dragonfly, file, projective, rrg, slimfly
from jaxnet.topology.base import Topology, from_graph, topology_name

TOPOLOGIES = Registry("topology", {
    "rrg": rrg.rrg,
    "dragonfly": dragonfly.dragonfly,
    "slimfly": slimfly.slimfly,
    "projective": projective.projective,
    "demiprojective": projective.demiprojective,
    "hamming": cartesian.hamming,
    "torus": cartesian.torus,
    "mesh": cartesian.mesh,
    "file": file.file,
})


def build_topology(cfg: Mapping) -> Topology:
    """Build the topology a config group describes: `name` plus the builder's keyword args."""
    return TOPOLOGIES.build(cfg)


__all__ = ["Topology", "TOPOLOGIES", "build_topology", "from_graph", "topology_name"]
