"""Topology builders, keyed by their config name (`conf/topology/<name>.yaml`)."""
from __future__ import annotations

from typing import Mapping

from jaxnet.core.registry import Registry
from jaxnet.topology import cartesian, dragonfly, file, projective, rrg, slimfly
from jaxnet.topology.base import Topology, from_graph, topology_name
from jaxnet.topology.faults import with_faults

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
}, common=("faults",))


def build_topology(cfg: Mapping) -> Topology:
    """Build the topology a config group describes: `name` plus the builder's keyword args,
    and `faults` (any topology: `jaxnet.topology.faults`)."""
    return with_faults(TOPOLOGIES.build(cfg), cfg.get("faults"))


__all__ = ["Topology", "TOPOLOGIES", "build_topology", "from_graph", "topology_name"]
