"""The `file` topology: a router graph read from disk with networkx.

Formats: `edgelist` (one "u v" pair per line; further columns are ignored), `adjlist`,
`graphml`; by default inferred from the suffix (see `jaxnet.topology.export`). Node
labels are relabelled to 0..R-1 in sorted order: numerically when every label is an
integer, otherwise as strings. Ports follow increasing neighbour index. When every edge
carries a `link_class` attribute (GraphML written by `export_topology`), link classes are
restored with their names sorted; otherwise there is one class, "link".
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology, from_graph, topology_name
from jaxnet.topology.export import graph_format

READERS = {
    "edgelist": lambda path: nx.read_edgelist(path, data=False),
    "adjlist": nx.read_adjlist,
    "graphml": nx.read_graphml,
}


def file(path: str, format: str | None = None, servers_per_router: int = 1) -> Topology:
    """Topology from a graph file; the graph must be connected and loop-free."""
    servers_per_router = require_int(servers_per_router, "topology.servers_per_router", 1)
    require(path is not None and Path(path).is_file(), "topology.path", path,
            "must name an existing graph file")
    format = graph_format(path, format, "topology.path", "topology.format")
    try:
        graph = READERS[format](path)
    except Exception as err:  # networkx raises many types for malformed files
        raise ValueError(f"topology.path={str(path)!r} is invalid: not a readable "
                         f"{format} file ({err})") from err
    require(graph.number_of_nodes() >= 2, "topology.path", str(path),
            "the graph must have at least 2 routers")
    require(nx.number_of_selfloops(graph) == 0, "topology.path", str(path),
            "the graph must have no self-loops")
    require(nx.is_connected(graph), "topology.path", str(path), "the graph must be connected")
    graph = nx.relabel_nodes(graph, {v: i for i, v in enumerate(_sorted_labels(graph))})
    classes = {frozenset(e): c for e, c in nx.get_edge_attributes(graph, "link_class").items()}
    if len(classes) < graph.number_of_edges():
        classes = {}
    names = tuple(sorted(set(classes.values()))) or ("link",)
    params = dict(path=str(path), format=format)
    return from_graph(
        graph,
        topology_name("file", params),
        servers_per_router,
        link_class_of=(lambda u, v: names.index(classes[frozenset((u, v))])) if classes else None,
        link_class_names=names,
        params=params,
    )

def _sorted_labels(graph: nx.Graph) -> list:
    labels = list(graph.nodes)
    try:
        return sorted(labels, key=int)
    except (TypeError, ValueError):
        return sorted(labels, key=str)
