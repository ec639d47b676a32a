"""Channel-load bounds of MIN, VAL and RVAL on a Dragonfly (Restricted Valiant paper, Sec. V).

    python scripts/valiant_bounds.py                       # small (a4 h2 p2) and paper (a12 h6 p6)
    python scripts/valiant_bounds.py --scales small --out outputs/valiant_bounds.json

For a traffic pattern and a routing, the expected load of every channel (router-to-router
links, and each server's ejection link) per unit of offered load; no routing can accept more
than 1 / (the largest of them) phits/cycle/server. Routes are the engine's: local-global-local
minimal routes (`dragonfly_minimal`, unique on a palm-tree Dragonfly with one global link per
group pair) and, for VAL and RVAL, minimal to an intermediate router drawn uniformly (RVAL:
inside the group when source and destination share it), then minimal to the destination, a
first leg that passes the destination ending there.

The Restricted Valiant paper's HOT bounds are arithmetic on shares of traffic (MIN
12.5 / (25 + 0.125 * 75), VAL 12.5 / (12.5 + 25 + 0.125 * 75)); this script measures which
channel binds and at what load, and each class's own bound (docs/fidelity.md, "Restricted
Valiant"). HOT-spread is HOT with its hot servers spread over the routers (`placement: spread`).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxnet.core.files import write_atomic
from jaxnet.routing.valiant import base_routes
from jaxnet.topology import build_topology
from jaxnet.traffic import build_traffic
from jaxnet.traffic.base import ANY_SERVER, UNIFORM, UNIFORM_OTHER_ROUTER

SCALES = {
    "small": {"name": "dragonfly", "a": 4, "h": 2, "arrangement": "palmtree", "servers_per_router": 2},
    "paper": {"name": "dragonfly", "a": 12, "h": 6, "arrangement": "palmtree", "servers_per_router": 6},
}
PATTERNS = {
    "UN": {"name": "uniform"},
    "ADV": {"name": "adv_group", "offset": 1},
    "ADV-Local": {"name": "adv_local"},
    "HOT": {"name": "hot_region", "fraction": 0.25, "region": 0.125},
    "HOT-spread": {"name": "hot_region", "fraction": 0.25, "region": 0.125, "placement": "spread"},
}
ROUTINGS = ("MIN", "VAL", "RVAL")
PAPER_HOT = {"MIN": 12.5 / (25 + 0.125 * 75), "VAL": 12.5 / (12.5 + 25 + 0.125 * 75)}


def unique_paths(topo) -> np.ndarray:
    """int32 [R, R, L + 1]: the router sequence of the minimal route of every pair, -1 padded."""
    lengths, words = base_routes(topo, "dragonfly_minimal")
    ports = topo.neighbor.shape[1]
    bits = np.stack([(words[:, :, p // 32] >> np.uint32(p % 32)) & 1 for p in range(ports)], axis=-1)
    off_diagonal = ~np.eye(topo.n_routers, dtype=bool)
    if not (bits.sum(axis=-1)[off_diagonal] == 1).all():
        raise ValueError(f"topology={topo.name}: some pair has several minimal next hops; "
                         "these bounds need unique routes (a palm-tree Dragonfly)")
    port = bits.argmax(axis=-1)
    R, L = topo.n_routers, int(lengths.max())
    paths = np.full((R, R, L + 1), -1, np.int32)
    here = np.repeat(np.arange(R)[:, None], R, axis=1)
    target = np.repeat(np.arange(R)[None, :], R, axis=0)
    paths[:, :, 0] = here
    for step in range(1, L + 1):
        moving = (here != target) & (here >= 0)
        here = np.where(moving, topo.neighbor[np.maximum(here, 0), port[np.maximum(here, 0), target]], -1)
        paths[:, :, step] = here
    return paths


def _link_index(topo) -> np.ndarray:
    """int64 [R, R]: the port of the link from router a to router b, -1 without one."""
    out = np.full((topo.n_routers, topo.n_routers), -1, np.int64)
    rows, ports = np.nonzero(topo.neighbor >= 0)
    out[rows, topo.neighbor[rows, ports]] = ports
    return out


def _add_legs(load, topo, paths, carried) -> None:
    """load[r, port] += carried[a, b, j] for the j-th link of the route a -> b."""
    port_of = _link_index(topo)
    for j in range(paths.shape[2] - 1):
        u, v = paths[:, :, j], paths[:, :, j + 1]
        real = (v >= 0) & (carried[:, :, j] > 0)
        np.add.at(load, (u[real], port_of[u[real], v[real]]), carried[:, :, j][real])


def minimal_loads(topo, paths, demand) -> np.ndarray:
    """float64 [R, P]: link loads of router demand [R, R] on the minimal routes."""
    load = np.zeros(topo.neighbor.shape)
    carried = np.repeat(demand[:, :, None], paths.shape[2] - 1, axis=2)
    _add_legs(load, topo, paths, carried)
    return load


def valiant_loads(topo, paths, demand, choose) -> np.ndarray:
    """float64 [R, P]: link loads of router demand [R, R] routed through an intermediate drawn
    with probability choose[s, i] (rows sum to 1); the first leg ends at the destination if it
    passes it. Summed over intermediates without enumerating (s, t, i) triples:

    * the j-th link of leg s -> i carries choose[s, i] x (demand of s not to the first j
      routers after s on that leg);
    * leg i -> t carries sum_s choose[s, i] demand[s, t], less what ended on the first leg."""
    R, hops = topo.n_routers, paths.shape[2] - 1
    after = paths[:, :, 1:]  # [s, i, j]: router reached by link j of leg s -> i
    reached = np.where(after >= 0, demand[np.arange(R)[:, None, None], np.maximum(after, 0)], 0.0)
    remaining = demand.sum(axis=1)[:, None, None] - np.cumsum(reached, axis=2)
    first = choose[:, :, None] * (remaining + reached)  # link j carries what was left before it
    load = np.zeros(topo.neighbor.shape)
    _add_legs(load, topo, paths, first)
    second = choose.T @ demand  # [i, t]
    ended = np.zeros((R, R))
    for j in range(hops):
        t = after[:, :, j]
        ok = t >= 0
        s_idx = np.repeat(np.arange(R)[:, None], R, axis=1)
        i_idx = np.repeat(np.arange(R)[None, :], R, axis=0)
        np.add.at(ended, (i_idx[ok], t[ok]), (choose * demand[s_idx, np.maximum(t, 0)])[ok])
    second = np.clip(second - ended, 0.0, None)
    np.fill_diagonal(second, 0.0)
    load += minimal_loads(topo, paths, second)
    return load


def intermediate_choice(topo, restricted: bool):
    """(choose_all [R, R], choose_group [R, R]): uniform over every router; over the source's
    group (RVAL's choice for pairs inside a group)."""
    R, group = topo.n_routers, topo.group
    everywhere = np.full((R, R), 1.0 / R)
    if not restricted:
        return everywhere, everywhere
    same = (group[:, None] == group[None, :]).astype(float)
    return everywhere, same / same.sum(axis=1, keepdims=True)


def arrivals(table, p: int) -> np.ndarray:
    """float64 [S]: packets each server receives per unit of offered load per source."""
    prob = table.probabilities() * table.rate[:, None]
    S = prob.shape[0]
    into = np.zeros(S)
    for k in range(table.n_entries):
        router, server, w = table.entry_router[:, k], table.entry_server[:, k], prob[:, k]
        uniform = router == UNIFORM
        into += w[uniform].sum() / (S - 1)
        np.subtract.at(into, np.flatnonzero(uniform), w[uniform] / (S - 1))
        remote = router == UNIFORM_OTHER_ROUTER
        into += w[remote].sum() / (S - p)
        for source in np.flatnonzero(remote):
            own = source // p
            into[own * p:(own + 1) * p] -= w[source] / (S - p)
        whole = (router >= 0) & (server == ANY_SERVER)
        np.add.at(into, (router[whole, None] * p + np.arange(p)[None, :]).ravel(),
                  np.repeat(w[whole] / p, p))
        one = (router >= 0) & (server >= 0)
        np.add.at(into, router[one] * p + server[one], w[one])
    return into


def bounds(topo_cfg: dict, pattern: dict, seed: int = 1) -> dict:
    """Per routing: the largest offered load every channel carries, and the binding class."""
    topo = build_topology(topo_cfg)
    p, R = topo.servers_per_router, topo.n_routers
    table = build_traffic(pattern, topo, seed)
    by_server = table.router_matrix(p) * table.rate[:, None]
    demand = np.zeros((R, R))
    np.add.at(demand, np.arange(topo.n_servers) // p, by_server)
    np.fill_diagonal(demand, 0.0)
    ejection = arrivals(table, p).max()
    paths = unique_paths(topo)
    same = topo.group[:, None] == topo.group[None, :]
    out = {}
    for routing in ROUTINGS:
        if routing == "MIN":
            load = minimal_loads(topo, paths, demand)
        else:
            everywhere, local = intermediate_choice(topo, routing == "RVAL")
            load = valiant_loads(topo, paths, np.where(same, 0.0, demand), everywhere)
            load += valiant_loads(topo, paths, np.where(same, demand, 0.0), local)
        classes = {name: float(load[topo.link_class == i].max(initial=0.0))
                   for i, name in enumerate(topo.link_class_names)}
        classes["ejection"] = float(ejection)
        worst = max(classes, key=classes.get)
        out[routing] = {"bound": 1.0 / classes[worst], "binding": worst,
                        "max_load": classes}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", nargs="+", default=list(SCALES), choices=list(SCALES))
    parser.add_argument("--patterns", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    parser.add_argument("--out", type=Path, default=Path("outputs/valiant_bounds.json"))
    args = parser.parse_args()
    result = {}
    for scale in args.scales:
        for name in args.patterns:
            found = bounds(SCALES[scale], PATTERNS[name])
            result[f"{scale} {name}"] = found
            for routing, row in found.items():
                paper = f" (paper's arithmetic {PAPER_HOT[routing]:.4f})" if name == "HOT" and routing in PAPER_HOT else ""
                each = ", ".join(f"{c} {1.0 / load:.4f}" for c, load in row["max_load"].items() if load > 0)
                print(f"{scale:5s} {name:10s} {routing:4s} bound {row['bound']:.4f}, binding {row['binding']}"
                      f"{paper}; per class: {each}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
