"""Channel-load bounds of minimal and 8-KSP routing on the Ant Mill paper's RRGs.

    python scripts/antmill_bounds.py                              # small and paper-scale RRGs
    python scripts/antmill_bounds.py --scales small --out outputs/antmill_bounds.json

For each RRG of `conf/experiment/antmill/rrgs.yaml` (small and paper scale) and each of
uniform, a random server permutation, (H,delta)-Ant-mill and the switch permutations toward
distance 1 and the radius: the largest offered load per server that every channel can carry
(router-to-router links and each router's ejection), for two oblivious splits:

* minimal: every minimal path of a pair equally likely (the `allpaths` split; the only
  routing when a pair's minimal path is unique, as on the Ant Mill cycle). For uniform
  traffic the mean link load stands in for the maximum: it bounds every split of the traffic
  over minimal paths, so its inverse bounds every minimal routing;
* 8-KSP: the engine's own `ksp` routes (k = 8, seed 1, `method: layers`), one drawn uniformly
  per packet.

The ratio of uniform's bound to a pattern's is the slowdown the network can show at most
when both run at their bounds (Definition 1 of the paper calls a pattern adverse when the
slowdown exceeds 2). Paper-scale graphs are one sample (`--medoid-of`, default 1; the paper
takes the medoid of 100): the bounds depend on the sample only through its distances.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxnet.core.files import write_atomic  # noqa: E402
from jaxnet.routing.ksp import KShortestPaths  # noqa: E402
from jaxnet.topology import build_topology  # noqa: E402
from jaxnet.traffic import build_traffic  # noqa: E402

RRGS = ROOT / "conf" / "experiment" / "antmill" / "rrgs.yaml"


def router_demand(topo, pattern: dict, seed: int = 1) -> np.ndarray:
    """float64 [R, R]: packets per cycle from router r to router t when every server offers
    one packet per cycle (the pattern's router-level traffic matrix, diagonal kept)."""
    p, R = topo.servers_per_router, topo.n_routers
    table = build_traffic(pattern, topo, seed)
    by_server = table.router_matrix(p) * table.rate[:, None]
    demand = np.zeros((R, R))
    np.add.at(demand, np.arange(topo.n_servers) // p, by_server)
    return demand


def links(topo) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(router, port, neighbour) int64 arrays of every directed router-to-router link."""
    router, port = np.nonzero(topo.neighbor >= 0)
    return router, port, topo.neighbor[router, port].astype(np.int64)


def minimal_split_loads(topo, demand: np.ndarray, chunk: int = 256) -> np.ndarray:
    """float64 [R, P]: link loads when each pair's demand is split equally over all its
    minimal paths. Link u -> v lies on N(s,u) N(v,t) of the N(s,t) minimal paths s -> t
    when D(s,u) + 1 + D(v,t) = D(s,t) (N: shortest-path counts, D: distances)."""
    dist = topo.distances.astype(np.int64)
    count = topo.path_counts.astype(np.float64)
    u, port, v = links(topo)
    src, dst = np.nonzero(demand * (1 - np.eye(topo.n_routers)))
    load = np.zeros(topo.neighbor.shape)
    for lo in range(0, src.size, chunk):
        s, t = src[lo:lo + chunk, None], dst[lo:lo + chunk, None]
        on_path = dist[s, u] + 1 + dist[v, t] == dist[s, t]
        share = np.where(on_path, count[s, u] * count[v, t] / count[s, t], 0.0)
        np.add.at(load, (u, port), (share * demand[s, t]).sum(axis=0))
    return load


def mean_minimal_load(topo, demand: np.ndarray) -> float:
    """The mean link load of any split over minimal paths: demand x distance / links."""
    n_links = int((topo.neighbor >= 0).sum())
    off = 1 - np.eye(topo.n_routers)
    return float((demand * off * topo.distances).sum() / n_links)


def path_loads(topo, routes, demand: np.ndarray) -> tuple[np.ndarray, float]:
    """(float64 [R, P] link loads, mean route length in hops weighted by demand) when each
    pair's demand is split equally over its routes (`jaxnet.paths.enumerate.Routes`)."""
    R = topo.n_routers
    per_pair = np.bincount(routes.pair, minlength=R * R)
    share = demand.reshape(-1)[routes.pair] / per_pair[routes.pair]
    here = routes.pair // R
    load = np.zeros(topo.neighbor.shape)
    hops = np.zeros(routes.pair.size)
    for h in range(routes.ports.shape[1]):
        port = routes.ports[:, h].astype(np.int64)
        moving = port >= 0
        np.add.at(load, (here[moving], port[moving]), share[moving])
        hops += moving
        here = np.where(moving, topo.neighbor[here, np.maximum(port, 0)], here)
    off = demand.reshape(-1)[routes.pair] > 0
    mean_hops = float((share * hops)[off].sum() / share[off].sum())
    return load, mean_hops


def bound(max_link_load: float, demand: np.ndarray, p: int) -> float:
    """Largest offered load per server: no link above 1, no router ejecting above p."""
    ejection = float(demand.sum(axis=0).max()) / p
    return 1.0 / max(max_link_load, ejection)


def networks(scale: str, medoid_of: int | None) -> dict:
    """name -> (topology config, {pattern label: pattern config}) from antmill/rrgs.yaml:
    uniform, server perm., (H,delta) (the largest unique lam), switch perm. 1 and radius."""
    block = yaml.safe_load(RRGS.read_text())["experiment"]["networks"]
    out = {}
    for name, net in block.items():
        topo = dict(net[scale])
        if medoid_of is not None:
            topo["medoid_of"] = medoid_of
        patterns = net["patterns"]
        ant = max((k for k, v in patterns.items() if v["name"] == "antmill" and v["unique"]),
                  key=lambda k: patterns[k]["lam"])
        switch = [k for k, v in patterns.items() if v["name"] == "switch_permutation"]
        keep = ["uniform", "server perm.", ant, switch[0], switch[-1]]
        out[name] = (topo, {k: patterns[k] for k in keep})
    return out


def network_bounds(topo_cfg: dict, patterns: dict, k: int = 8) -> dict:
    """Per pattern: the minimal and k-KSP bounds (and what they rest on)."""
    topo = build_topology(topo_cfg)
    p = topo.servers_per_router
    routes = KShortestPaths(k=k, seed=1, method="layers").build_routes(topo)
    out = {"routers": topo.n_routers, "degree": int((topo.neighbor >= 0).sum(axis=1).max()),
           "servers_per_router": p, "average_distance": topo.average_distance,
           "radius": topo.radius, "patterns": {}}
    for label, pattern in patterns.items():
        demand = router_demand(topo, pattern)
        if pattern["name"] == "uniform":
            minimal, how = mean_minimal_load(topo, demand), "mean"
        else:
            minimal, how = float(minimal_split_loads(topo, demand).max()), "max"
        ksp_load, ksp_hops = path_loads(topo, routes, demand)
        out["patterns"][label] = {
            "minimal": bound(minimal, demand, p), "minimal_load": how,
            "ksp": bound(float(ksp_load.max()), demand, p), "ksp_mean_hops": ksp_hops}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", nargs="+", default=["small", "paper"], choices=["small", "paper"])
    parser.add_argument("--networks", nargs="+", default=None, help="rrgs.yaml names (default: all)")
    parser.add_argument("--medoid-of", type=int, default=1,
                        help="paper-scale RRG samples to take the medoid of (rrgs.yaml: 100)")
    parser.add_argument("--out", type=Path, default=Path("outputs/antmill_bounds.json"))
    args = parser.parse_args()
    result = {}
    for scale in args.scales:
        for name, (topo_cfg, patterns) in networks(scale, args.medoid_of if scale == "paper" else None).items():
            if args.networks and name not in args.networks:
                continue
            found = network_bounds(topo_cfg, patterns)
            result[f"{scale} {name}"] = found
            rows = found["patterns"]
            ant = next(k for k in rows if k.startswith("(H,"))
            print(f"{scale} {name}: RRG {found['routers']}/{found['degree']}, p={found['servers_per_router']}, "
                  f"mean distance {found['average_distance']:.3f}", flush=True)
            for routing in ("minimal", "ksp"):
                cells = ", ".join(f"{label} {row[routing]:.4f}" for label, row in rows.items())
                ratio = rows["uniform"][routing] / rows[ant][routing]
                ratio_sw = rows["uniform"][routing] / rows["switch perm. 1"][routing]
                print(f"  {routing:7s} {cells}; uniform / {ant} {ratio:.2f}, "
                      f"uniform / switch perm. 1 {ratio_sw:.2f}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
