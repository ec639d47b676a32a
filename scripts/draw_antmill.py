"""Draw a small random regular network with its Ant Mill Hamiltonian cycle (as Fig. 3 of
the Ant Mill paper: radix 6 = degree 4 + 2 servers, 16 routers, 32 servers).

Routers are squares numbered by their position on the cycle, servers small circles; the
cycle's links are arrows in the Ant Mill direction, the other links thin and grey.

    python scripts/draw_antmill.py [out.png] [--routers 16] [--degree 4] [--servers 2] [--seed 1]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402

from jaxnet.topology import build_topology  # noqa: E402
from jaxnet.traffic.hamiltonian import search_max_delta  # noqa: E402


def draw(routers: int, degree: int, servers: int, seed: int, out: Path) -> None:
    topo = build_topology(dict(name="rrg", routers=routers, degree=degree, seed=seed,
                               servers_per_router=servers))
    found = search_max_delta(topo, seed=seed)
    cycle = [int(r) for r in found.cycle]
    graph = topo.graph
    pos = nx.kamada_kawai_layout(graph)
    cycle_edges = list(zip(cycle, cycle[1:] + cycle[:1]))

    fig, ax = plt.subplots(figsize=(7, 7))
    centre = np.mean(list(pos.values()), axis=0)
    for r, (x, y) in pos.items():  # servers, spread on a short arc away from the centre
        outward = np.arctan2(y - centre[1], x - centre[0])
        for k in range(servers):
            angle = outward + (k - (servers - 1) / 2) * 0.5
            sx, sy = x + 0.13 * np.cos(angle), y + 0.13 * np.sin(angle)
            ax.plot([x, sx], [y, sy], color="0.6", lw=0.8, zorder=1)
            ax.scatter([sx], [sy], s=40, facecolor="white", edgecolor="0.3", zorder=2)
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="0.8", width=1.0)
    nx.draw_networkx_edges(nx.DiGraph(cycle_edges), pos, ax=ax, edge_color="tab:red", width=2.5,
                           arrows=True, arrowstyle="-|>", arrowsize=18, node_shape="s",
                           node_size=500)
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_shape="s", node_size=500,
                           node_color="tab:blue", edgecolors="black")
    nx.draw_networkx_labels(graph, pos, {r: str(i) for i, r in enumerate(cycle)}, ax=ax,
                            font_color="white", font_size=9)
    ax.set_title(f"Ant Mill cycle on a degree-{degree} RRG: {routers} routers, "
                 f"{topo.n_servers} servers, delta = {found.delta}\n"
                 f"(routers numbered along the cycle; router i sends to router i + lambda)")
    ax.set_axis_off()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=150, bbox_inches="tight")
    print(f"wrote {out} (delta {found.delta})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="outputs/antmill_cycle.png")
    parser.add_argument("--routers", type=int, default=16)
    parser.add_argument("--degree", type=int, default=4)
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    draw(args.routers, args.degree, args.servers, args.seed, Path(args.out))


if __name__ == "__main__":
    main()
