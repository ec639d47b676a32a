"""Link faults, for every topology: `topology.faults` removes links from the built network
before anything else sees it, so routing tables, VC counts and deadlock checks are all made
on the faulty graph (`jaxnet.build.topology`).

    faults: {count: 4, seed: 1}          # 4 links drawn at random (a seed of their own)
    faults: {fraction: 0.1, seed: 1}     # round(10 % of the links) drawn at random
    faults: {links: [[0, 5], [3, 7]]}    # these router pairs

A failed link's ports stay numbered and lead nowhere (-1), as unused ports of irregular
topologies do. A fault set that disconnects the routers is refused, naming two routers it
separates.
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

import networkx as nx
import numpy as np

from jaxnet.core.validate import is_int, require, require_int, require_number
from jaxnet.topology.base import Topology

KEYS = ("count", "fraction", "links", "seed")


def links_of(topo: Topology) -> np.ndarray:
    """int32 [n, 2] the router pairs (u < v) joined by a link, in port order of u."""
    rows, ports = np.nonzero(topo.neighbor >= 0)
    other = topo.neighbor[rows, ports]
    keep = rows < other
    return np.stack([rows[keep], other[keep]], axis=1).astype(np.int32)


def chosen_links(topo: Topology, faults: Mapping) -> np.ndarray:
    """int32 [k, 2] the links (u < v) a `topology.faults` mapping removes, checked."""
    require(isinstance(faults, Mapping), "topology.faults", faults,
            "null or a mapping with count, fraction or links (and seed)")
    for key in faults:
        require(key in KEYS, f"topology.faults.{key}", faults[key], f"unknown key; faults take only {list(KEYS)}")
    given = [key for key in ("count", "fraction", "links") if faults.get(key) is not None]
    require(len(given) == 1, "topology.faults", dict(faults), "exactly one of count, fraction or links")
    links = links_of(topo)
    if given[0] == "links":
        pairs = faults["links"]
        require(isinstance(pairs, (list, tuple)) and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(is_int(r) for r in p) for p in pairs),
            "topology.faults.links", pairs, "a list of [router, router] pairs")
        existing = {(int(u), int(v)) for u, v in links}
        out = []
        for u, v in pairs:
            pair = (min(int(u), int(v)), max(int(u), int(v)))
            require(pair in existing, "topology.faults.links", [u, v], f"a link of {topo.name}")
            out.append(pair)
        require(len(set(out)) == len(out), "topology.faults.links", pairs, "each link at most once")
        return np.asarray(out, np.int32).reshape(-1, 2)
    if given[0] == "count":
        count = require_int(faults["count"], "topology.faults.count", 0, len(links))
    else:
        fraction = require_number(faults["fraction"], "topology.faults.fraction", 0.0, 1.0, high_open=True)
        count = int(round(fraction * len(links)))
    seed = require_int(faults.get("seed", 1), "topology.faults.seed", 0)
    rng = np.random.default_rng([seed, 0xFA17])
    return links[np.sort(rng.choice(len(links), size=count, replace=False))]


def with_faults(topo: Topology, faults: Mapping | None) -> Topology:
    """`topo` without the links `faults` names (`topo` itself when there are none)."""
    if faults is None:
        return topo
    failed = chosen_links(topo, faults)
    if not len(failed):
        return topo
    neighbor, peer_port, link_class = topo.neighbor.copy(), topo.peer_port.copy(), topo.link_class.copy()
    for u, v in failed:
        for a, b in ((u, v), (v, u)):
            ports = np.nonzero(neighbor[a] == b)[0]
            neighbor[a, ports], peer_port[a, ports], link_class[a, ports] = -1, -1, -1
    graph = nx.Graph()
    graph.add_nodes_from(range(topo.n_routers))
    rows, ports = np.nonzero(neighbor >= 0)
    graph.add_edges_from(zip(rows.tolist(), neighbor[rows, ports].tolist()))
    if not nx.is_connected(graph):
        parts = sorted(nx.connected_components(graph), key=min)
        raise ValueError(f"topology.faults={dict(faults)!r} is invalid: removing {len(failed)} of "
                         f"{len(links_of(topo))} links disconnects {topo.name} (router {min(parts[0])} cannot "
                         f"reach router {min(parts[1])}); remove fewer links or draw them with another seed")
    spec = ",".join(f"{k}={faults[k]}" for k in KEYS if faults.get(k) is not None and k != "links")
    name = f"{topo.name}+faults({spec or f'links={len(failed)}'})"
    return dataclasses.replace(topo, name=name, neighbor=neighbor, peer_port=peer_port, link_class=link_class,
                               params={**topo.params, "faults": dict(faults)}, failed_links=failed)
