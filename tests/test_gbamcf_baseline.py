"""scripts/gbamcf_baseline.py: the balanced-paths baseline under other link numberings and
shortest-path routines (docs/fidelity.md, "Balanced paths")."""
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script

from jaxnet.paths.mcf import find_paths
from jaxnet.paths.pathset import directed_links
from jaxnet.topology import build_topology

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"name": "dragonfly", "a": 4, "h": 2}


@pytest.fixture(scope="module")
def gb():
    return load_script(ROOT / "scripts" / "gbamcf_baseline.py")


@pytest.mark.parametrize("rule", ["spfa", "dijkstra"])
def test_sequential_baseline_finds_k_edge_disjoint_paths_of_minimum_total_length(gb, rule):
    topo = build_topology(SMALL)
    reference = find_paths(topo, 4, "multi_mcf")
    src, dst, _ = directed_links(topo.neighbor)
    sets = gb.sequential_link_sets(topo, 4, rule)
    assert [len(s) for s in sets] == reference.length.sum(axis=1).tolist()  # same min-cost flow value
    for pair, links in enumerate(sets):
        s, t = int(reference.pair_src[pair]), int(reference.pair_dst[pair])
        net = np.zeros(topo.n_routers, int)  # flow out minus flow in, per router
        np.add.at(net, src[links], 1)
        np.add.at(net, dst[links], -1)
        k = int(reference.valid[pair].sum())
        assert net[s] == k and net[t] == -k and np.count_nonzero(net) == 2


def test_renumbering_keeps_the_network(gb):
    topo = build_topology(SMALL)
    for label, (routers, ports) in gb.numberings(topo).items():
        other = gb.renumbered(topo, routers, ports, label)
        rows, cols = np.nonzero(other.neighbor >= 0)
        back = other.neighbor[other.neighbor[rows, cols], other.peer_port[rows, cols]]
        assert (back == rows).all(), label
        old = {(int(routers[u]), int(routers[v])) for u, v in zip(*directed_links(topo.neighbor)[:2])}
        assert set(zip(*(a.tolist() for a in directed_links(other.neighbor)[:2]))) == old, label
        assert other.distances.max() == topo.distances.max()


def test_demand_travels_with_the_renumbered_pairs(gb):
    n = 5
    routers = np.array([3, 0, 4, 1, 2])
    demand = np.arange(n * (n - 1), dtype=float)
    moved = gb.carried_demand(demand, routers, n)
    pair = lambda s, d: s * (n - 1) + d - (d > s)  # noqa: E731
    for s in range(n):
        for d in range(n):
            if s != d:
                assert moved[pair(routers[s], routers[d])] == demand[pair(s, d)]


def test_jaxnet_baseline_depends_on_router_labels_not_on_port_order(gb):
    """mcf's tie rule compares link ids of the arcs entering a router, which differ by their
    source router first: reordering a router's ports never changes the baseline."""
    topo = build_topology(SMALL)
    numberings = gb.numberings(topo, seeds=(1,))
    counts = {label: np.sort(find_paths(gb.renumbered(topo, r, p, label), 4, "multi_mcf").link_path_counts())
              for label, (r, p) in numberings.items()}
    builder = counts.pop("builder (local ports first)")
    random = counts.pop("random router labels (seed 1)")
    assert all(np.array_equal(c, builder) for c in counts.values())
    assert not np.array_equal(random, builder)
