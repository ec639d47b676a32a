"""The `file` topology: a router graph read from disk with networkx.

Formats: `edgelist` (one "u v" pair per line; further columns, numbers or a {...} attribute
dict, are ignored), `adjlist`, `graphml`; by default inferred from the suffix (see
`jaxnet.topology.export`). A file that is not text, or an edge list with a line that is not
an edge, is refused as unreadable, naming the line. Node
labels are relabelled to 0..R-1 in sorted order: numerically when every label is an
integer, otherwise as strings. Ports follow increasing neighbour index. When every edge
carries a `link_class` attribute (GraphML written by `export_topology`), link classes are
restored with their names sorted; otherwise there is one class, "link".
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from jaxnet.core.validate import is_number_text, require
from jaxnet.topology.base import Topology, from_graph, require_servers_per_router, topology_name
from jaxnet.topology.export import graph_format

READERS = {
    "edgelist": lambda path: nx.read_edgelist(path, data=False),
    "adjlist": nx.read_adjlist,
    "graphml": nx.read_graphml,
}


def file(path: str, format: str | None = None, servers_per_router: int = 1) -> Topology:
    """Topology from a graph file; the graph must be connected and loop-free."""
    servers_per_router = require_servers_per_router(servers_per_router)
    require(path is not None and Path(path).is_file(), "topology.path", path,
            "must name an existing graph file")
    format = graph_format(path, format, "topology.path", "topology.format")
    unreadable = f"topology.path={str(path)!r} is invalid: not a readable {format} file"
    if format != "graphml":
        problem = _text_problem(Path(path), format)
        if problem:
            raise ValueError(f"{unreadable} ({problem})")
    try:
        graph = READERS[format](path)
    except Exception as err:  # networkx raises many types for malformed files
        raise ValueError(f"{unreadable} ({err})") from err
    require(graph.number_of_nodes() >= 2, "topology.path", str(path),
            "the graph must have at least 2 routers")
    require(nx.number_of_selfloops(graph) == 0, "topology.path", str(path),
            "the graph must have no self-loops")
    components = nx.number_connected_components(graph)
    require(components == 1, "topology.path", str(path),
            f"the graph must be connected (it has {components} components)")
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

def _text_problem(path: Path, format: str) -> str | None:
    """Why a text graph file is not one (binary data; an edge list line that is not
    "u v [numbers or {attributes}]"), or None."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\0" in text:
        return "binary data, not text"
    if format != "edgelist":
        return None
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#")[0].split()
        extra = " ".join(fields[2:])
        if fields and (len(fields) < 2 or extra and not (extra.startswith("{") or all(map(is_number_text, fields[2:])))):
            return f"line {number} is {line.strip()[:40]!r}, not an edge 'u v'"
    return None


def _sorted_labels(graph: nx.Graph) -> list:
    labels = list(graph.nodes)
    try:
        return sorted(labels, key=int)
    except (TypeError, ValueError):
        return sorted(labels, key=str)
