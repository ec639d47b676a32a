"""How much the balanced-paths paper's baseline (multi-MCF, ties to the lowest-indexed link)
depends on what the paper does not give: the link numbering and the shortest-path routine.

    python scripts/gbamcf_baseline.py                         # DF114, every numbering
    python scripts/gbamcf_baseline.py --networks DF114 DF510 --out outputs/gbamcf/baseline.json

`multi_mcf` breaks shortest-path ties towards the lowest link id, and link ids follow the
routers' numbering and each router's port order. The same network and the same traffic are
numbered several ways here, and for each numbering the baseline's P_max and its Table 1 column
(max link load under uniform path weights, the paper's random demand) are measured. Each
renumbering carries the demand with it (pair (s, d) keeps its demand under its new labels), so
only the labels change, never the network or the traffic. The paper does not give its
Dragonfly's global-link arrangement either: two random arrangements stand beside the
palm-tree one. The demand draw's own effect is shown on the jaxnet numbering (demand seeds
1-5).

The shortest-path routine decides which of several equally short predecessors a router keeps.
jaxnet's (`jaxnet.paths.mcf`, a synchronous Bellman-Ford) keeps the lowest-id incoming link
among all of them. Two sequential routines are measured beside it (`--rules`), each the
successive-shortest-path method on the same residual graph (unit costs, edge-disjoint):
`spfa`, a FIFO Bellman-Ford scanning each router's links in id order that keeps the first
predecessor reaching the final distance (a later equal one never replaces it), and
`dijkstra`, Dijkstra on reduced costs (Johnson potentials) popping the lowest router id
among equal distances and keeping the first predecessor. Both are plain Python (DF114:
minutes; DF510: hours).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import heapq
import json
from pathlib import Path

import numpy as np

from jaxnet.core.files import write_atomic
from jaxnet.paths.mcf import find_paths
from jaxnet.paths.pathset import directed_links
from jaxnet.paths.weights import random_demand, uniform_weights
from jaxnet.topology import build_topology

NETWORKS = {"DF114": dict(name="dragonfly", a=6, h=3), "DF510": dict(name="dragonfly", a=10, h=5)}
PAPER = {"DF114": {"uniform": 535.0}, "DF510": {"uniform": 2721.75, "pmax": "more than 3000"}}
DEMAND_SEEDS = (1, 2, 3, 4, 5)
ARRANGEMENT_SEEDS = (1, 2)


def renumbered(topology, routers: np.ndarray, port_order: np.ndarray, label: str):
    """The same network with router r called routers[r] and router r's ports listed in
    `port_order[r]` order (a permutation of its port columns)."""
    R = topology.n_routers
    inverse = np.empty(R, np.int64)
    inverse[routers] = np.arange(R)
    rows = np.arange(R)[:, None]

    def relabel(table, is_router):
        out = table[inverse][rows, port_order[inverse]]
        return np.where(out >= 0, routers[np.maximum(out, 0)], -1) if is_router else out

    neighbor = relabel(topology.neighbor, True)
    # peer_port[r, p]: the neighbour's port back to r, in the neighbour's new port order
    new_port_of = np.argsort(port_order, axis=1)
    old_peer = topology.peer_port[inverse][rows, port_order[inverse]]
    old_neighbor = topology.neighbor[inverse][rows, port_order[inverse]]
    peer = np.where(old_peer >= 0, new_port_of[np.maximum(old_neighbor, 0), np.maximum(old_peer, 0)], -1)
    group = None if topology.group is None else topology.group[inverse]
    return dataclasses.replace(topology, name=f"{topology.name}[{label}]", neighbor=neighbor.astype(np.int32),
                               peer_port=peer.astype(np.int32),
                               link_class=relabel(topology.link_class, False).astype(np.int8), group=group)


def numberings(topology, seeds=(1, 2, 3)) -> dict:
    """label -> (router labels, port order): the builder's, global ports first, each router's
    ports by neighbour id, and random router labels (with ports by neighbour id)."""
    R, P = topology.neighbor.shape
    identity = np.arange(R)
    builder = np.tile(np.arange(P), (R, 1))
    global_first = np.argsort(-topology.link_class, axis=1, kind="stable")
    def by_neighbour(routers):
        named = np.where(topology.neighbor >= 0, routers[np.maximum(topology.neighbor, 0)], np.iinfo(np.int32).max)
        return np.argsort(named, axis=1, kind="stable")
    out = {"builder (local ports first)": (identity, builder),
           "global ports first": (identity, global_first),
           "ports by neighbour id": (identity, by_neighbour(identity))}
    for seed in seeds:
        routers = np.random.default_rng(seed).permutation(R)
        out[f"random router labels (seed {seed})"] = (routers, by_neighbour(routers))
    return out


def sequential_link_sets(topology, k: int, rule: str) -> list[list[int]]:
    """Per ordered pair (row-major), the links of its k edge-disjoint minimum-total-length
    paths, by successive shortest paths with `rule` ("spfa" or "dijkstra", module docstring)."""
    R = topology.n_routers
    src, dst, link_id = directed_links(topology.neighbor)
    out_links = [[int(e) for e in link_id[u] if e >= 0] for u in range(R)]
    in_links = [[] for _ in range(R)]
    for e in range(src.size):
        in_links[int(dst[e])].append(e)
    src, dst = src.tolist(), dst.tolist()
    search = _spfa if rule == "spfa" else _dijkstra
    sets = []
    for s in range(R):
        for t in range(R):
            if s == t:
                continue
            used = set()
            potential = [0] * R
            for _ in range(k):
                pred = search(s, t, R, out_links, in_links, src, dst, used, potential)
                if pred is None:
                    break
                v = t
                while v != s:
                    e, forward = pred[v]
                    if forward:
                        used.add(e)
                        v = src[e]
                    else:
                        used.discard(e)
                        v = dst[e]
            sets.append(sorted(used))
    return sets


def _arcs(u, out_links, in_links, src, dst, used):
    """Residual arcs of router u in link-id order: (link, forward, head, cost)."""
    arcs = [(e, True, dst[e], 1) for e in out_links[u] if e not in used]
    arcs += [(e, False, src[e], -1) for e in in_links[u] if e in used]
    arcs.sort()
    return arcs


def _spfa(s, t, R, out_links, in_links, src, dst, used, potential):
    dist, pred = [None] * R, [None] * R
    dist[s] = 0
    queue, queued = collections.deque([s]), [False] * R
    queued[s] = True
    while queue:
        u = queue.popleft()
        queued[u] = False
        for e, forward, v, cost in _arcs(u, out_links, in_links, src, dst, used):
            if dist[v] is None or dist[u] + cost < dist[v]:
                dist[v], pred[v] = dist[u] + cost, (e, forward)
                if not queued[v]:
                    queued[v] = True
                    queue.append(v)
    return pred if dist[t] is not None else None


def _dijkstra(s, t, R, out_links, in_links, src, dst, used, potential):
    dist, pred, done = [None] * R, [None] * R, [False] * R
    dist[s] = 0
    heap = [(0, s)]
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue
        done[u] = True
        for e, forward, v, cost in _arcs(u, out_links, in_links, src, dst, used):
            reduced = d + cost + potential[u] - potential[v]
            if not done[v] and (dist[v] is None or reduced < dist[v]):
                dist[v], pred[v] = reduced, (e, forward)
                heapq.heappush(heap, (reduced, v))
    if dist[t] is None:
        return None
    for v in range(R):  # Johnson: reduced costs stay non-negative in the next residual graph
        if dist[v] is not None:
            potential[v] += dist[v]
    return pred


def sequential_loads(topology, k: int, rule: str, demand: np.ndarray) -> tuple[int, float]:
    """(P_max, max link load under uniform weights) of the sequential baseline."""
    src = directed_links(topology.neighbor)[0]
    counts, load = np.zeros(src.size, np.int64), np.zeros(src.size)
    for pair, links in enumerate(sequential_link_sets(topology, k, rule)):
        if links:
            counts[links] += 1
            # each flow link lies on exactly one path; the paths are the flow links leaving s
            n_paths = int((src[links] == pair // (topology.n_routers - 1)).sum())
            load[links] += demand[pair] / n_paths
    return int(counts.max()), float(load.max())


def carried_demand(demand: np.ndarray, routers: np.ndarray, n: int) -> np.ndarray:
    """The demand of pair (s, d) moved to pair (routers[s], routers[d]) (row-major pairs)."""
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    new_s, new_d = routers[src], routers[dst]
    index = new_s * (n - 1) + new_d - (new_d > new_s)
    out = np.empty_like(demand)
    out[index] = demand
    return out


RULES = ("jaxnet", "spfa", "dijkstra")


def measure(network: str, rules, seed: int = 1) -> list[dict]:
    """One row per (numbering, shortest-path rule): P_max and the max link load under uniform
    weights with the paper's demand (seed 1, carried to the new labels)."""
    topology = build_topology(NETWORKS[network])
    R = topology.n_routers
    base = find_paths(topology, 4, "multi_mcf", seed=seed)
    base_demand = random_demand(base, 1)
    rows = []
    cases = [(label, renumbered(topology, routers, port_order, label), routers)
             for label, (routers, port_order) in numberings(topology).items()]
    for wiring in ARRANGEMENT_SEEDS:  # another Dragonfly: the paper does not give its global wiring
        cases.append((f"random global arrangement (seed {wiring})",
                      build_topology({**NETWORKS[network], "arrangement": "random", "seed": wiring}), np.arange(R)))
    # jaxnet's rule ignores port order (tests/test_gbamcf_baseline.py): one run per labelling
    same_labels = {np.arange(R).tobytes(): (base.pmax, uniform_weights(base).max_load(base, base_demand))}
    for label, numbered, routers in cases:
        demand = carried_demand(base_demand, routers, R)
        for rule in rules:
            if rule == "jaxnet":
                key = label if label.startswith("random global") else routers.tobytes()
                if key not in same_labels:
                    paths = find_paths(numbered, 4, "multi_mcf", seed=seed)
                    same_labels[key] = paths.pmax, uniform_weights(paths).max_load(paths, demand)
                pmax, load = same_labels[key]
            else:
                pmax, load = sequential_loads(numbered, 4, rule, demand)
            row = {"network": network, "numbering": label, "rule": rule, "pmax": pmax,
                   "uniform_max_load": load, "paper_uniform": PAPER[network]["uniform"]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    by_seed = {s: uniform_weights(base).max_load(base, random_demand(base, s)) for s in DEMAND_SEEDS}
    rows.append({"network": network, "numbering": "builder, demand seeds 1-5", "rule": "jaxnet",
                 "pmax": base.pmax, "uniform_max_load": by_seed, "paper_uniform": PAPER[network]["uniform"]})
    print(json.dumps(rows[-1]), flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| network | numbering | shortest-path rule | P_max | max load, uniform weights | paper |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        load = r["uniform_max_load"]
        load = ", ".join(f"{v:.2f}" for v in load.values()) if isinstance(load, dict) else f"{load:.2f}"
        lines.append(f"| {r['network']} | {r['numbering']} | {r['rule']} | {r['pmax']} | {load} "
                     f"| {r['paper_uniform']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", default=["DF114"], choices=list(NETWORKS))
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    parser.add_argument("--out", type=Path, default=Path("outputs/gbamcf/baseline.json"))
    args = parser.parse_args()
    rows = [row for network in args.networks for row in measure(network, args.rules)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(rows, indent=1))
    write_atomic(args.out.with_suffix(".md"), markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
