"""Channel dependency graphs (Dally and Seitz) and their acyclicity, for any routing.

A route is a sequence of channels; a channel is any hashable label, e.g. a directed link
(u, v) or (u, v, vc). Consecutive channels of a route make a dependency (a, b): a packet
holding a may wait for b. Routing is deadlock-free when the channel dependency graph (CDG)
has no cycle, except cycles a flow-control scheme tolerates: with bubble flow control in
torus rings, a cycle that only goes straight around one ring cannot deadlock, so callers
pass `tolerated(a, b)` marking such edges and only cycles through another edge count.

For large route tables, `dependency_pairs` takes integer channel ids in a padded array and
returns the distinct dependencies with numpy before any graph is built.
"""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, Sequence

import networkx as nx
import numpy as np

Channel = Hashable


def dependencies(routes: Iterable[Sequence[Channel]]) -> set[tuple[Channel, Channel]]:
    """The distinct (a, b) pairs of consecutive channels over all routes."""
    pairs = set()
    for route in routes:
        route = list(route)
        pairs.update(zip(route, route[1:]))
    return pairs


def dependency_pairs(channels: np.ndarray, pad: int = -1) -> np.ndarray:
    """Distinct consecutive (a, b) pairs of int routes [n_routes, max_len] padded with `pad`.

    Padding must come after a route's channels. Returns int64 [n_pairs, 2].
    """
    channels = np.asarray(channels, np.int64).reshape(-1, np.shape(channels)[-1])
    a, b = channels[:, :-1].ravel(), channels[:, 1:].ravel()
    keep = (a != pad) & (b != pad)
    return np.unique(np.stack([a[keep], b[keep]], axis=1), axis=0)


def channel_dependency_graph(pairs: Iterable[tuple[Channel, Channel]]) -> nx.DiGraph:
    """The CDG with the given dependency edges (numpy rows become int nodes)."""
    graph = nx.DiGraph()
    graph.add_edges_from((a.item(), b.item()) if isinstance(a, np.generic) else (a, b)
                         for a, b in (tuple(p) for p in pairs))
    return graph


def find_deadlock_cycle(cdg: nx.DiGraph,
                        tolerated: Callable[[Channel, Channel], bool] | None = None
                        ) -> list[Channel] | None:
    """A dependency cycle through at least one non-tolerated edge, or None if there is none.

    The returned list of channels closes on itself (its last channel depends on its first).
    Without `tolerated`, every cycle counts. A non-tolerated edge (a, b) lies on a cycle
    exactly when a and b are in the same strongly connected component.
    """
    if tolerated is None:
        try:
            return [a for a, _ in nx.find_cycle(cdg)]
        except nx.NetworkXNoCycle:
            return None
    for component in nx.strongly_connected_components(cdg):
        if len(component) < 2 and not any(cdg.has_edge(c, c) for c in component):
            continue
        inside = cdg.subgraph(component)
        for a, b in inside.edges:
            if not tolerated(a, b):
                return [a] + nx.shortest_path(inside, b, a)[:-1]
    return None


def is_deadlock_free(routes: Iterable[Sequence[Channel]],
                     tolerated: Callable[[Channel, Channel], bool] | None = None) -> bool:
    """True when the CDG of these routes has no cycle through a non-tolerated edge."""
    return find_deadlock_cycle(channel_dependency_graph(dependencies(routes)), tolerated) is None
