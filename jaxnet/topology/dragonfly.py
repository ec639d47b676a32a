"""Canonical Dragonfly: complete groups of `a` routers, `h` global links per router.

Router `r = g * a + i` is router `i` of group `g`. Its ports are the `a - 1` local ports
(to the other routers of its group, in increasing index) followed by its `h` global
ports. Global port `j` of router `i` is the group's global port `k = i * h + j`.

With G groups, every pair of groups is joined by `m = a * h / (G - 1)` global links
(so G - 1 must divide a * h; the default G = a * h + 1 gives m = 1).

Palm-tree arrangement (Camarero, Vallejo, Beivide): writing `k = u * (G - 1) + o` with
`0 <= o < G - 1`, global port k of group g leads to group `(g + o + 1) mod G`, arriving on
its global port `u * (G - 1) + (G - 2 - o)`. The map is an involution (`palmtree_wiring`).
Consecutive arrangement (FOGSim's `PalmTreeConfiguration=0`): the offset o counts the other
groups in increasing index, so global port k of group g leads to group `o` if `o < g`, else
`o + 1`, arriving on the port of the same trunk u whose offset counts g there
(`consecutive_wiring`).
Random arrangement: each group's global ports are shuffled over the list of other groups
(each repeated m times), and the m ports of each group pair are matched at random.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.topology.base import Topology, from_graph, require_servers_per_router, require_size, topology_name

LOCAL, GLOBAL = 0, 1
ARRANGEMENTS = ("palmtree", "consecutive", "random")
_RANDOM_ATTEMPTS = 100


def dragonfly(a: int, h: int, groups: int | None = None, arrangement: str = "palmtree",
              seed: int = 1, servers_per_router: int = 1) -> Topology:
    """Dragonfly with link classes ("local", "global") and `group` set on the record."""
    a = require_int(a, "topology.a", 1)
    h = require_int(h, "topology.h", 1)
    groups = a * h + 1 if groups is None else require_int(groups, "topology.groups", 2)
    seed = require_int(seed, "topology.seed", 0)
    servers_per_router = require_servers_per_router(servers_per_router)
    require_size("topology.a", a, a * groups, a - 1 + h)
    require(groups <= a * h + 1, "topology.groups", groups,
            f"must be at most a * h + 1 = {a * h + 1}")
    require(a * h % (groups - 1) == 0, "topology.groups", groups,
            f"groups - 1 must divide a * h = {a * h} (equal global links per group pair)")
    require(arrangement in ARRANGEMENTS, "topology.arrangement", arrangement,
            f"one of {ARRANGEMENTS}")
    if arrangement in ("palmtree", "consecutive"):
        wiring = (palmtree_wiring if arrangement == "palmtree" else consecutive_wiring)(a, h, groups)
        require(not _has_parallel_links(wiring, h), "topology.groups", groups,
                f"{arrangement} wiring joins some router pair twice; use groups - 1 >= h ({h})")
    else:
        wiring = _random_wiring(a, h, groups, np.random.default_rng(seed))
    graph, global_neighbors = _graph(a, h, groups, wiring)
    params = dict(a=a, h=h, groups=groups, arrangement=arrangement)
    if arrangement == "random":
        params["seed"] = seed
    group_of = np.arange(groups * a, dtype=np.int32) // a
    return from_graph(
        graph,
        topology_name("dragonfly", params),
        servers_per_router,
        port_order=lambda r: [group_of[r] * a + i for i in range(a) if i != r % a]
        + global_neighbors[r],
        link_class_of=lambda u, v: LOCAL if group_of[u] == group_of[v] else GLOBAL,
        link_class_names=("local", "global"),
        group=group_of,
        params=params,
    )


def palmtree_wiring(a: int, h: int, groups: int) -> np.ndarray:
    """int32 [G, a*h, 2]: (group, global port) reached from each group's global port."""
    k = np.arange(a * h)
    trunk, offset = np.divmod(k, groups - 1)
    wiring = np.empty((groups, a * h, 2), np.int32)
    wiring[:, :, 0] = (np.arange(groups)[:, None] + offset + 1) % groups
    wiring[:, :, 1] = trunk * (groups - 1) + (groups - 2 - offset)
    return wiring


def consecutive_wiring(a: int, h: int, groups: int) -> np.ndarray:
    """int32 [G, a*h, 2]: (group, global port) reached from each group's global port, the
    other groups taken in increasing index (FOGSim without its palm-tree configuration)."""
    k = np.arange(a * h)
    trunk, offset = np.divmod(k, groups - 1)
    group = np.arange(groups)[:, None]
    target = np.where(offset < group, offset, offset + 1)
    wiring = np.empty((groups, a * h, 2), np.int32)
    wiring[:, :, 0] = target
    wiring[:, :, 1] = trunk * (groups - 1) + np.where(group < target, group, group - 1)
    return wiring


def _random_wiring(a: int, h: int, groups: int, rng: np.random.Generator) -> np.ndarray:
    per_pair = a * h // (groups - 1)
    for _ in range(_RANDOM_ATTEMPTS):
        wiring = np.empty((groups, a * h, 2), np.int32)
        targets = [rng.permutation(np.repeat(np.delete(np.arange(groups), g), per_pair))
                   for g in range(groups)]
        for g in range(groups):
            for t in range(g + 1, groups):
                mine = np.nonzero(targets[g] == t)[0]
                theirs = rng.permutation(np.nonzero(targets[t] == g)[0])
                wiring[g, mine] = np.stack([np.full(per_pair, t), theirs], axis=1)
                wiring[t, theirs] = np.stack([np.full(per_pair, g), mine], axis=1)
        if not _has_parallel_links(wiring, h):
            return wiring
    raise ValueError(f"topology.groups={groups!r} is invalid: no random wiring without "
                     f"parallel links found in {_RANDOM_ATTEMPTS} attempts")


def _has_parallel_links(wiring: np.ndarray, h: int) -> bool:
    groups, ports, _ = wiring.shape
    g, k = np.meshgrid(np.arange(groups), np.arange(ports), indexing="ij")
    pairs = np.stack([g, k // h, wiring[..., 0], wiring[..., 1] // h], axis=-1).reshape(-1, 4)
    return len(np.unique(pairs, axis=0)) < len(pairs)


def _graph(a: int, h: int, groups: int, wiring: np.ndarray) -> tuple[nx.Graph, list[list[int]]]:
    """The graph and, per router, the neighbours of its global ports in port order."""
    graph = nx.Graph()
    graph.add_nodes_from(range(groups * a))
    for g in range(groups):
        graph.add_edges_from(nx.complete_graph(range(g * a, (g + 1) * a)).edges)
    global_neighbors = [[] for _ in range(groups * a)]
    for g in range(groups):
        for k, (target_group, target_port) in enumerate(wiring[g]):
            router = g * a + k // h
            peer = int(target_group) * a + int(target_port) // h
            global_neighbors[router].append(peer)
            graph.add_edge(router, peer)
    return graph, global_neighbors
