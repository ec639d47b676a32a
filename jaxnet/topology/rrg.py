"""Random regular graphs (RRG, "Jellyfish"), optionally the medoid of several samples.

Sampling: a numpy `default_rng(seed)` draws one 32-bit networkx seed per attempt;
`networkx.random_regular_graph(degree, routers, seed=...)` builds the graph and
disconnected samples are discarded, until `medoid_of` connected graphs are collected.

Medoid (the Ant Mill paper keeps "a medoid with respect to the space (link use, average
distance)" of 100 samples): every sample becomes the point

    (link-use spread, average distance)

where link-use spread is the coefficient of variation (std / mean) of the load on the
directed router-to-router links when every ordered router pair sends one unit split
evenly over all its shortest paths (`minimal_link_load`). Each coordinate is divided by
its standard deviation over the samples (left as is when that is 0), and the sample
with the smallest sum of Euclidean distances to all samples is kept (lowest index on
ties). `medoid_of: 1` keeps the first connected sample.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import (
    Topology,
    from_graph,
    require_servers_per_router,
    require_size,
    sparse_adjacency,
    topology_name,
)


def rrg(routers: int, degree: int, seed: int = 1, medoid_of: int = 1,
        servers_per_router: int = 1) -> Topology:
    """Connected random `degree`-regular graph on `routers` routers; one link class."""
    routers = require_int(routers, "topology.routers", 2)
    degree = require_int(degree, "topology.degree", 1)
    seed = require_int(seed, "topology.seed", 0)
    medoid_of = require_int(medoid_of, "topology.medoid_of", 1)
    servers_per_router = require_servers_per_router(servers_per_router)
    require_size("topology.routers", routers, routers=routers)
    require_size("topology.degree", degree, ports=degree)
    require(degree < routers, "topology.degree", degree, f"must be < routers ({routers})")
    require(degree >= 3 or degree == routers - 1, "topology.degree", degree,
            "must be >= 3 (random 1- and 2-regular graphs are almost never connected), "
            "or routers - 1 (complete graph)")
    require(routers * degree % 2 == 0, "topology.degree", degree,
            f"routers * degree must be even (routers={routers})")
    params = dict(routers=routers, degree=degree, seed=seed, medoid_of=medoid_of)
    name = topology_name("rrg", params)
    graphs = connected_samples(routers, degree, seed, medoid_of)
    if len(graphs) > 1:
        points = [sample_point(from_graph(g, name, servers_per_router)) for g in graphs]
        graphs = [graphs[medoid_index(np.array(points))]]
    return from_graph(graphs[0], name, servers_per_router, params=params)


def connected_samples(routers: int, degree: int, seed: int, count: int) -> list[nx.Graph]:
    """The first `count` connected random regular graphs drawn from `seed` (module doc)."""
    rng = np.random.default_rng(seed)
    graphs = []
    while len(graphs) < count:
        graph = nx.random_regular_graph(degree, routers, seed=int(rng.integers(2**32)))
        if nx.is_connected(graph):
            graphs.append(graph)
    return graphs


def sample_point(topo: Topology) -> tuple[float, float]:
    """The sample's coordinates for the medoid: (link-use spread, average distance)."""
    return link_use_spread(topo), topo.average_distance


def medoid_index(points: np.ndarray) -> int:
    """Medoid of points [K, 2] after scaling each coordinate by its std over the K points."""
    scale = points.std(axis=0)
    points = points / np.where(scale > 0, scale, 1.0)
    pairwise = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    return int(pairwise.sum(axis=1).argmin())


def link_use_spread(topo: Topology) -> float:
    """Coefficient of variation of `minimal_link_load` over the links."""
    load = minimal_link_load(topo)[topo.neighbor >= 0]
    return float(load.std() / load.mean())


def minimal_link_load(topo: Topology) -> np.ndarray:
    """float64 [R, P]: load on the link leaving each port under all-pairs minimal routing.

    Every ordered pair of distinct routers sends one unit, split evenly over all its
    shortest paths (Brandes' edge betweenness of the directed link, vectorised over all
    sources). Unused ports hold 0.
    """
    dist = topo.distances.astype(np.int32)
    sigma = topo.path_counts
    neighbor = topo.neighbor
    valid = neighbor >= 0
    adjacency = sparse_adjacency(neighbor)
    # dependency[s, v]: expected number of s-rooted shortest paths through v, per Brandes.
    dependency = np.zeros_like(sigma)
    for d in range(int(dist.max()), 0, -1):
        per_path = np.where(dist == d, (1.0 + dependency) / sigma, 0.0)  # [s, w]
        through = (adjacency @ per_path.T).T  # [s, v]: sum of per_path over v's neighbours
        dependency += np.where(dist == d - 1, sigma * through, 0.0)
    per_path = (1.0 + dependency) / sigma
    load = np.zeros(neighbor.shape)
    for port in range(topo.n_ports):
        v = np.nonzero(valid[:, port])[0]
        w = neighbor[v, port]
        downhill = dist[:, w] == dist[:, v] + 1  # [s, link]: s reaches w through v
        load[v, port] = (sigma[:, v] * per_path[:, w] * downhill).sum(axis=0)
    return load
