"""The `Topology` record: plain host-side data every later stage reads.

A topology is a graph of routers with numbered network ports. Port `p` of router `r`
leads to router `neighbor[r, p]`, arriving there on port `peer_port[r, p]`; unused
ports (irregular degree) hold -1. Every router has `servers_per_router` servers.
Graph analysis (distances, shortest-path counts, radius, diameter) is computed once,
lazily, and cached on the record.
"""
from __future__ import annotations

import dataclasses
import functools

import networkx as nx
import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from jaxnet.core.validate import require, require_int

# The largest networks built, refused beyond in one line before any building: routing and
# analysis keep dense tables with an entry per router pair, which grow as routers**2, and the
# engine numbers a router's network ports in 7 bits (`jaxnet.sim.keys`). A router's servers
# are ports too: at most as many as its network ports.
MAX_ROUTERS = 8192
MAX_PORTS = 127
MAX_SERVERS_PER_ROUTER = 127


def require_servers_per_router(value) -> int:
    """`topology.servers_per_router` as an int in [1, MAX_SERVERS_PER_ROUTER]."""
    return require_int(value, "topology.servers_per_router", 1, MAX_SERVERS_PER_ROUTER,
                       "a router's servers are ports too")


def require_size(parameter: str, value, routers: int = 0, ports: int = 0) -> None:
    """Refuse, before building, a parameter that gives more than MAX_ROUTERS routers or
    more than MAX_PORTS network ports per router."""
    require(routers <= MAX_ROUTERS, parameter, value,
            f"gives {routers} routers; at most {MAX_ROUTERS} (tables with an entry per router pair grow as routers**2)")
    require(ports <= MAX_PORTS, parameter, value,
            f"gives {ports} ports per router; at most {MAX_PORTS} (the engine numbers ports in 7 bits)")


def topology_name(builder: str, params: dict) -> str:
    """Builder name plus parameters, e.g. "rrg(routers=64,degree=6,seed=1)"."""
    return f"{builder}({','.join(f'{k}={v}' for k, v in params.items())})"


@dataclasses.dataclass(frozen=True, eq=False)
class Topology:
    """Routers, ports and links of a network.

    Attributes:
      name: builder name plus parameters, e.g. "rrg(routers=64,degree=6,seed=1)".
      neighbor: int32 [R, P] router reached through each port, -1 for unused ports.
      peer_port: int32 [R, P] port index on the neighbour that leads back, -1 if unused.
      link_class: int8 [R, P] index into `link_class_names`, -1 for unused ports.
      link_class_names: names of the link classes, e.g. ("local", "global").
      servers_per_router: servers attached to every router (p).
      coords: int32 [R, n] Cartesian coordinates (tori, meshes, Hamming), or None.
      sides: side lengths for Cartesian topologies, or None.
      group: int32 [R] group id (Dragonfly), or None.
      params: the builder parameters, for reports.
      failed_links: int32 [k, 2] router pairs whose link failed (`jaxnet.topology.faults`),
        or None.
    """

    name: str
    neighbor: np.ndarray
    peer_port: np.ndarray
    link_class: np.ndarray
    link_class_names: tuple[str, ...]
    servers_per_router: int
    coords: np.ndarray | None = None
    sides: tuple[int, ...] | None = None
    group: np.ndarray | None = None
    params: dict = dataclasses.field(default_factory=dict)
    failed_links: np.ndarray | None = None

    # ----- sizes -------------------------------------------------------------
    @property
    def n_routers(self) -> int:
        return int(self.neighbor.shape[0])

    @property
    def n_ports(self) -> int:
        """Network ports per router (the maximum degree)."""
        return int(self.neighbor.shape[1])

    @property
    def n_servers(self) -> int:
        return self.n_routers * self.servers_per_router

    @functools.cached_property
    def degrees(self) -> np.ndarray:
        return (self.neighbor >= 0).sum(axis=1).astype(np.int32)

    # ----- graph views -------------------------------------------------------
    @functools.cached_property
    def graph(self) -> nx.Graph:
        """Undirected networkx graph; edges carry `link_class` (name)."""
        g = nx.Graph()
        g.add_nodes_from(range(self.n_routers))
        for r, p in zip(*np.nonzero(self.neighbor >= 0)):
            n = int(self.neighbor[r, p])
            if r < n:
                g.add_edge(int(r), n, link_class=self.link_class_names[self.link_class[r, p]])
        return g

    @functools.cached_property
    def distances(self) -> np.ndarray:
        """uint8 [R, R] hop distances (all pairs, BFS from every router)."""
        return all_pairs_distances(self.neighbor)

    @functools.cached_property
    def path_counts(self) -> np.ndarray:
        """float64 [R, R] number of distinct shortest paths between router pairs."""
        return shortest_path_counts(self.neighbor, self.distances)

    @property
    def diameter(self) -> int:
        return int(self.distances.max())

    @property
    def radius(self) -> int:
        return int(self.distances.max(axis=1).min())

    @property
    def average_distance(self) -> float:
        r = self.n_routers
        return float(self.distances.sum(dtype=np.int64) / max(r * (r - 1), 1))

    def summary(self) -> dict:
        """The numbers a researcher checks first, JSON-ready."""
        classes = {
            name: int((self.link_class == i).sum() // 2)
            for i, name in enumerate(self.link_class_names)
        }
        return {
            "name": self.name,
            "routers": self.n_routers,
            "servers": self.n_servers,
            "servers_per_router": self.servers_per_router,
            "links": int((self.neighbor >= 0).sum() // 2),
            **({"failed_links": self.failed_links.tolist()} if self.failed_links is not None else {}),
            "links_by_class": classes,
            "degree_min": int(self.degrees.min()),
            "degree_max": int(self.degrees.max()),
            "radix": int(self.degrees.max()) + self.servers_per_router,
            "radius": self.radius,
            "diameter": self.diameter,
            "average_distance": round(self.average_distance, 6),
        }


def from_graph(
    graph: nx.Graph,
    name: str,
    servers_per_router: int,
    *,
    port_order=None,
    link_class_of=None,
    link_class_names: tuple[str, ...] = ("link",),
    **extra,
) -> Topology:
    """Build a `Topology` from an undirected graph on nodes 0..R-1.

    port_order(r) -> list of neighbours in port order (default: sorted).
    link_class_of(u, v) -> index into link_class_names (default 0).
    """
    servers_per_router = require_servers_per_router(servers_per_router)
    n = graph.number_of_nodes()
    require(n >= 2, "routers", n, "a network needs at least 2 routers")
    require_size("topology", name, n, max(d for _, d in graph.degree))
    require(sorted(graph.nodes) == list(range(n)), "graph nodes", "...", "must be 0..R-1")
    require(nx.is_connected(graph), "graph", name, "must be connected")
    require(nx.number_of_selfloops(graph) == 0, "graph", name, "must have no self-loops")
    orders = [list(port_order(r)) if port_order else sorted(graph.neighbors(r)) for r in range(n)]
    width = max(len(o) for o in orders)
    neighbor = np.full((n, width), -1, np.int32)
    link_class = np.full((n, width), -1, np.int8)
    for r, order in enumerate(orders):
        neighbor[r, : len(order)] = order
        for p, v in enumerate(order):
            link_class[r, p] = link_class_of(r, v) if link_class_of else 0
    port_of = {(r, int(v)): p for r in range(n) for p, v in enumerate(orders[r])}
    peer_port = np.full((n, width), -1, np.int32)
    for (r, v), p in port_of.items():
        peer_port[r, p] = port_of[(v, r)]
    return Topology(
        name=name,
        neighbor=neighbor,
        peer_port=peer_port,
        link_class=link_class,
        link_class_names=tuple(link_class_names),
        servers_per_router=int(servers_per_router),
        **extra,
    )


def sparse_adjacency(neighbor: np.ndarray) -> scipy.sparse.csr_matrix:
    """Sparse float64 [R, R] adjacency: entry (r, v) = 1 when a port of r leads to v."""
    n = neighbor.shape[0]
    rows, cols = np.nonzero(neighbor >= 0)
    ones = np.ones(len(rows))
    return scipy.sparse.csr_matrix((ones, (rows, neighbor[rows, cols])), shape=(n, n))


def all_pairs_distances(neighbor: np.ndarray) -> np.ndarray:
    """Hop distances for all pairs, uint8 [R, R] (scipy's BFS from every router, in blocks)."""
    n = neighbor.shape[0]
    adjacency = sparse_adjacency(neighbor)
    dist = np.empty((n, n), np.uint8)
    block = max(1, 2**24 // n)  # sources per call: bounds the float64 scratch to 128 MiB
    for start in range(0, n, block):
        sources = np.arange(start, min(n, start + block))
        hops = scipy.sparse.csgraph.shortest_path(adjacency, unweighted=True, indices=sources)
        if np.isinf(hops).any():
            raise ValueError("graph is disconnected: some router pairs have no path")
        if hops.max() >= 255:
            raise ValueError("graph diameter >= 255 is not supported")
        dist[sources] = hops
    return dist


def shortest_path_counts(neighbor: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Number of shortest paths for all pairs, by dynamic programming over distance."""
    adjacency = sparse_adjacency(neighbor)
    counts = np.eye(neighbor.shape[0], dtype=np.float64)
    for d in range(1, int(dist.max()) + 1):
        # paths of length d to t through a neighbour at distance d-1 from t
        layer = np.asarray(np.where(dist == d - 1, counts, 0.0) @ adjacency)
        counts = np.where(dist == d, layer, counts)
    return counts
