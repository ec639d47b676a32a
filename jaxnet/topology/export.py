"""Graph files: write any topology as an edge list, adjacency list or GraphML.

Node labels are the router indices 0..R-1. Edge lists and adjacency lists carry the graph
only; GraphML also carries each link's `link_class` name. The `file` topology reads all
three back.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from jaxnet.core.validate import require
from jaxnet.topology.base import Topology

FORMATS = ("edgelist", "adjlist", "graphml")
FORMAT_OF_SUFFIX = {".edgelist": "edgelist", ".edges": "edgelist", ".txt": "edgelist",
                    ".adjlist": "adjlist", ".graphml": "graphml"}


def graph_format(path, format: str | None, path_parameter: str, format_parameter: str) -> str:
    """`format`, or the one `path`'s suffix implies; a ValueError naming the parameter."""
    if format is None:
        suffix = Path(path).suffix.lower()
        require(suffix in FORMAT_OF_SUFFIX, path_parameter, str(path),
                f"suffix must be one of {sorted(FORMAT_OF_SUFFIX)}, or set {format_parameter}")
        return FORMAT_OF_SUFFIX[suffix]
    require(format in FORMATS, format_parameter, format, f"one of {FORMATS}")
    return format


def export_topology(topo: Topology, path, format: str | None = None) -> Path:
    """Write the router graph of `topo` to `path`; format from the suffix if not given."""
    path = Path(path)
    format = graph_format(path, format, "export", "export_format")
    require(path.parent.is_dir(), "export", str(path), f"a file in an existing directory ({path.parent} is not one)")
    graph = topo.graph
    if format == "edgelist":
        nx.write_edgelist(graph, path, data=False)
    elif format == "adjlist":
        nx.write_adjlist(graph, path)
    else:
        nx.write_graphml(graph, path)
    return path
