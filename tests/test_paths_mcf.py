"""GBAMCF path sets: validity, minimality against networkx min-cost flow, the format."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from jaxnet.paths.mcf import ALGORITHMS, find_paths
from jaxnet.paths.pathset import PathSet
from jaxnet.topology import build_topology, from_graph

K = 3


@pytest.fixture(scope="module")
def rrg():
    return from_graph(nx.random_regular_graph(4, 14, seed=5), "rrg14", 1)


@pytest.fixture(scope="module")
def ladder():
    """Min cut 2 or 3 < k = 4 for many pairs: exercises the `valid` mask."""
    return from_graph(nx.circular_ladder_graph(6), "ladder", 1)


@pytest.fixture(scope="module")
def small_dragonfly():
    return build_topology(dict(name="dragonfly", a=4, h=2))


@pytest.fixture(scope="module")
def path_sets(rrg):
    return {alg: find_paths(rrg, K, alg, cycles=3, seed=2) for alg in ALGORITHMS}


def min_cost_flow(topology, s, t, k, cost=None):
    """(flow value, total cost) of networkx max-flow min-cost with value capped at k."""
    g = nx.DiGraph()
    for r, p in zip(*np.nonzero(topology.neighbor >= 0)):
        link = len(g.edges)
        g.add_edge(int(r), int(topology.neighbor[r, p]), capacity=1,
                   weight=1 if cost is None else int(cost[link]))
    g.add_edge("source", s, capacity=k, weight=0)
    flow = nx.max_flow_min_cost(g, "source", t)
    return sum(flow["source"].values()), nx.cost_of_flow(g, flow)


def check_paths(topology, ps: PathSet, k):
    links = {(int(r), int(topology.neighbor[r, p])) for r, p in zip(*np.nonzero(topology.neighbor >= 0))}
    assert ps.paths.dtype == np.int32 and ps.paths.shape[:2] == (ps.n_pairs, k)
    assert ps.n_pairs == topology.n_routers * (topology.n_routers - 1)
    for i in range(ps.n_pairs):
        s, t = int(ps.pair_src[i]), int(ps.pair_dst[i])
        used = []
        for x in range(k):
            seq = ps.paths[i, x]
            if not ps.valid[i, x]:
                assert (seq == -1).all() and ps.length[i, x] == 0
                continue
            hops = seq[seq >= 0]
            assert hops[0] == s and hops[-1] == t
            assert len(hops) == ps.length[i, x] + 1
            assert (seq[len(hops):] == -1).all()
            steps = list(zip(hops[:-1].tolist(), hops[1:].tolist()))
            assert all(step in links for step in steps)
            used += steps
        assert len(used) == len(set(used)), "paths of one pair must be edge-disjoint"
        # valid paths come first
        assert (np.diff(ps.valid[i].astype(int)) <= 0).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_paths_valid_and_minimal(rrg, path_sets, algorithm):
    ps = path_sets[algorithm]
    check_paths(rrg, ps, K)
    for i in range(0, ps.n_pairs, 7):
        value, cost = min_cost_flow(rrg, int(ps.pair_src[i]), int(ps.pair_dst[i]), K)
        assert ps.valid[i].sum() == value
        assert ps.length[i].sum() == cost


def test_fewer_paths_when_min_cut_is_small(ladder):
    ps = find_paths(ladder, 4, "multi_mcf_random", seed=1)
    check_paths(ladder, ps, 4)
    assert not ps.valid.all()
    for i in range(0, ps.n_pairs, 5):
        value, cost = min_cost_flow(ladder, int(ps.pair_src[i]), int(ps.pair_dst[i]), 4)
        assert ps.valid[i].sum() == value and ps.length[i].sum() == cost


def test_all_algorithms_have_the_same_total_lengths(path_sets):
    totals = {alg: ps.length.sum(axis=1) for alg, ps in path_sets.items()}
    for alg in list(ALGORITHMS)[1:]:
        np.testing.assert_array_equal(totals[alg], totals["multi_mcf"])


@pytest.mark.parametrize("algorithm", ["multi_mcf_penal", "multi_mcf_cyclic"])
def test_penalised_pair_minimises_penalty(rrg, path_sets, algorithm):
    """The last pair solved saw the counts of all other pairs: its links must minimise
    (hops, sum P_e) lexicographically, i.e. cost R^3 per hop + P_e in a min-cost flow."""
    ps = path_sets[algorithm]
    last = ps.n_pairs - 1
    own = np.bincount(ps.path_links[last][ps.path_links[last] >= 0], minlength=ps.n_links)
    others = ps.link_path_counts() - own
    big = rrg.n_routers**3
    value, cost = min_cost_flow(rrg, int(ps.pair_src[last]), int(ps.pair_dst[last]), K,
                                cost=big + others)
    assert cost == big * ps.length[last].sum() + (others * own).sum()


def test_one_cycle_is_penal(rrg):
    penal = find_paths(rrg, K, "multi_mcf_penal", seed=4)
    cyclic = find_paths(rrg, K, "multi_mcf_cyclic", cycles=1, seed=4)
    np.testing.assert_array_equal(penal.paths, cyclic.paths)


def test_cyclic_history_and_improvement(small_dragonfly):
    ps = find_paths(small_dragonfly, 4, "multi_mcf_cyclic", cycles=5, seed=1)
    history = ps.link_counts_by_cycle
    assert history.shape == (5, ps.n_links)
    np.testing.assert_array_equal(history[-1], ps.link_path_counts())
    # the paper promises convergence, not monotonicity: the last cycle beats the first
    assert history[-1].max() <= history[0].max()
    assert history.sum(axis=1).min() == history.sum(axis=1).max()  # same total length


def test_seeds(small_dragonfly):
    """The lowest-index baseline ignores the seed; random tie-breaking follows it."""
    a = find_paths(small_dragonfly, 4, "multi_mcf", seed=1)
    b = find_paths(small_dragonfly, 4, "multi_mcf", seed=9)
    np.testing.assert_array_equal(a.paths, b.paths)
    c = find_paths(small_dragonfly, 4, "multi_mcf_random", seed=1)
    d = find_paths(small_dragonfly, 4, "multi_mcf_random", seed=9)
    np.testing.assert_array_equal(c.length.sum(axis=1), d.length.sum(axis=1))
    assert (c.paths != d.paths).any()


def test_counts_incidence_and_roundtrip(path_sets, tmp_path):
    ps = path_sets["multi_mcf_cyclic"]
    rows, links = ps.incidence()
    np.testing.assert_array_equal(np.bincount(links, minlength=ps.n_links), ps.link_path_counts())
    assert rows.max() < ps.n_pairs * ps.k
    matrix = ps.incidence_matrix()
    assert matrix.shape == (ps.n_links, ps.n_pairs * ps.k)
    np.testing.assert_array_equal(np.asarray(matrix.sum(axis=1)).ravel(), ps.link_path_counts())
    ps.save(tmp_path / "p.npz")
    back = PathSet.load(tmp_path / "p.npz")
    np.testing.assert_array_equal(back.paths, ps.paths)
    np.testing.assert_array_equal(back.link_counts_by_cycle, ps.link_counts_by_cycle)
    assert back.params == ps.params and back.algorithm == ps.algorithm


@pytest.mark.parametrize(
    "kwargs, parameter",
    [(dict(k=0), "paths.k"), (dict(algorithm="ksp"), "paths.algorithm"), (dict(cycles=0), "paths.cycles")],
)
def test_bad_parameters(rrg, kwargs, parameter):
    with pytest.raises(ValueError, match=parameter):
        find_paths(rrg, **kwargs)


@pytest.mark.slow
def test_dragonfly114_pmax_ordering():
    topology = build_topology(dict(name="dragonfly", a=6, h=3))
    pmax = {alg: find_paths(topology, 4, alg, cycles=20, seed=1).pmax for alg in ALGORITHMS}
    assert pmax["multi_mcf"] > max(pmax["multi_mcf_random"], pmax["multi_mcf_penal"])
    assert pmax["multi_mcf_cyclic"] < min(pmax["multi_mcf_random"], pmax["multi_mcf_penal"])


def test_resume_equals_uninterrupted_run(rrg):
    whole = find_paths(rrg, K, "multi_mcf_cyclic", cycles=3, seed=6)
    part = find_paths(rrg, K, "multi_mcf_cyclic", cycles=1, seed=6)
    resumed = find_paths(rrg, K, "multi_mcf_cyclic", cycles=3, seed=6, resume=part)
    np.testing.assert_array_equal(resumed.paths, whole.paths)
    np.testing.assert_array_equal(resumed.link_counts_by_cycle, whole.link_counts_by_cycle)
    finished = find_paths(rrg, K, "multi_mcf_cyclic", cycles=3, seed=6, resume=whole)
    np.testing.assert_array_equal(finished.paths, whole.paths)
    np.testing.assert_array_equal(finished.link_counts_by_cycle, whole.link_counts_by_cycle)
    with pytest.raises(ValueError, match="resume"):
        find_paths(rrg, K, "multi_mcf_cyclic", cycles=3, seed=7, resume=part)


def test_checkpoints_resume_to_the_uninterrupted_run(rrg, tmp_path):
    """Each checkpoint is the run after that cycle; saved and loaded, it resumes exactly."""
    saved = []

    def checkpoint(paths):
        paths.save(tmp_path / f"cycle{paths.params['cycles']}.npz")
        saved.append(paths.params["cycles"])

    whole = find_paths(rrg, K, "multi_mcf_cyclic", cycles=3, seed=6, checkpoint=checkpoint)
    assert saved == [1, 2]
    for cycles in saved:
        part = PathSet.load(tmp_path / f"cycle{cycles}.npz")
        np.testing.assert_array_equal(part.link_counts_by_cycle, whole.link_counts_by_cycle[:cycles])
        resumed = find_paths(rrg, K, "multi_mcf_cyclic", cycles=3, seed=6, resume=part)
        np.testing.assert_array_equal(resumed.paths, whole.paths)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cycle1.npz", "cycle2.npz"]  # no temporaries left
