"""Source routing from path tables (ksp, allpaths, table): the paths, the draw by weight,
and whole tiny simulations."""
import itertools

import jax
import networkx as nx
import numpy as np
import pytest
from conftest import count_compilations, simulate_cfg
from test_engine import _check_invariants

from jaxnet import build
from jaxnet.paths.pathset import PathSet, all_pairs, directed_links
from jaxnet.routing import build_routing
from jaxnet.routing.allpaths import AllMinimalPaths
from jaxnet.routing.ksp import KShortestPaths
from jaxnet.routing.route_tables import route_routers, with_weights
from jaxnet.routing.table import TablePaths
from jaxnet.sim import checkpoint as checkpoints
from jaxnet.sim.run import batch_tables
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import build_topology, from_graph

RRG = {"name": "rrg", "routers": 16, "degree": 4, "seed": 1, "medoid_of": 1, "servers_per_router": 2}


@pytest.fixture(scope="module")
def rrg():
    return build_topology(RRG)


@pytest.fixture(scope="module")
def torus():  # sides of 2: parallel links between the same routers
    return build_topology({"name": "torus", "sides": [4, 2, 2], "servers_per_router": 1})


def _graph_topo(graph):
    return from_graph(nx.convert_node_labels_to_integers(graph), "test", 1)


def _blocks(topo, tables):
    """{(s, t): list of router sequences} of every table path."""
    pair, routers = route_routers(topo, tables)
    out = {}
    for p, seq in zip(pair.tolist(), routers):
        out.setdefault(divmod(p, topo.n_routers), []).append(seq[seq >= 0].tolist())
    return out


def _check_walks(topo, tables):
    n = topo.n_routers
    count = np.asarray(tables.count)
    assert (np.diag(count) == 0).all() and (count[~np.eye(n, dtype=bool)] >= 1).all()
    assert (np.asarray(tables.first).reshape(-1) == np.cumsum(count) - count.reshape(-1)).all()
    route = np.asarray(tables.route)
    # padding only at the end of a row
    assert not ((route[:, 1:] >= 0) & (route[:, :-1] < 0)).any()
    for (s, t), paths in _blocks(topo, tables).items():
        for seq in paths:
            assert seq[0] == s and seq[-1] == t
            assert len(set(seq)) == len(seq)  # simple
            for a, b in zip(seq, seq[1:]):
                assert b in topo.neighbor[a]


@pytest.mark.parametrize("scheme", [KShortestPaths(k=8), KShortestPaths(k=3, method="yen"),
                                    AllMinimalPaths()])
def test_every_path_is_a_simple_walk_from_source_to_destination(rrg, torus, scheme):
    for topo in (rrg, torus):
        _check_walks(topo, scheme.build_tables(topo))


def test_allpaths_count_equals_path_counts(rrg, torus):
    for topo in (rrg, torus):
        tables = AllMinimalPaths().build_tables(topo)
        assert (np.asarray(tables.count) == topo.path_counts * ~np.eye(topo.n_routers, dtype=bool)).all()
        lengths = (np.asarray(tables.route) >= 0).sum(axis=1)
        pair, _ = route_routers(topo, tables)
        assert (lengths == topo.distances.reshape(-1)[pair]).all()
        # distinct port sequences within each pair (parallel links count apart)
        keys = {(p, tuple(r)) for p, r in zip(pair.tolist(), np.asarray(tables.route).tolist())}
        assert len(keys) == tables.n_paths


def test_allpaths_max_paths_is_a_clear_error(torus):
    with pytest.raises(ValueError, match="routing.max_paths"):
        AllMinimalPaths(max_paths=2).build_tables(torus)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_ksp_lengths_match_yen(k):
    topo = _graph_topo(nx.random_regular_graph(3, 12, seed=4))
    blocks = _blocks(topo, KShortestPaths(k=k).build_tables(topo))
    for (s, t), paths in blocks.items():
        yen = [len(p) - 1 for p in itertools.islice(nx.shortest_simple_paths(topo.graph, s, t), k)]
        lengths = [len(p) - 1 for p in paths]
        assert lengths == sorted(lengths) == yen  # minimal first, then by length, exactly k
        assert len({tuple(p) for p in paths}) == len(paths)


def test_ksp_minimal_first_and_k_exactly(rrg):
    tables = KShortestPaths(k=8).build_tables(rrg)
    for (s, t), paths in _blocks(rrg, tables).items():
        assert len(paths) == 8
        minimal = int(min(rrg.path_counts[s, t], 8))
        assert all(len(p) - 1 == rrg.distances[s, t] for p in paths[:minimal])
        assert all(len(p) - 1 > rrg.distances[s, t] for p in paths[minimal:])


def test_ksp_fewer_simple_paths_than_k():
    for graph, expected in ((nx.cycle_graph(6), 2), (nx.path_graph(5), 1)):
        topo = _graph_topo(graph)
        tables = KShortestPaths(k=8).build_tables(topo)
        assert (np.asarray(tables.count)[~np.eye(topo.n_routers, dtype=bool)] == expected).all()
        _check_walks(topo, tables)


def test_ksp_seed_picks_among_many_minimal_paths(torus):
    # pairs at distance 3 in the [4, 2, 2] torus have 3! * 2 * 2 * 2 = 48 minimal port paths
    a, b = KShortestPaths(k=4, seed=1), KShortestPaths(k=4, seed=2)
    ta, ta2, tb = a.build_tables(torus), a.build_tables(torus), b.build_tables(torus)
    assert (np.asarray(ta.route) == np.asarray(ta2.route)).all()
    assert (np.asarray(ta.route) != np.asarray(tb.route)).any()
    assert (np.asarray(ta.count)[~np.eye(torus.n_routers, dtype=bool)] == 4).all()
    lengths = (np.asarray(ta.route) >= 0).sum(axis=1)
    pair, _ = route_routers(torus, ta)
    many = torus.path_counts.reshape(-1)[pair] >= 4
    assert (lengths[many] == torus.distances.reshape(-1)[pair][many]).all()


@pytest.mark.parametrize("cfg, parameter", [
    ({"name": "ksp", "k": 0}, "routing.k"),
    ({"name": "ksp", "k": 2.5}, "routing.k"),
    ({"name": "ksp", "method": "bfs"}, "routing.method"),
    ({"name": "allpaths", "max_paths": 0}, "routing.max_paths"),
    ({"name": "table", "path_file": "/nonexistent/paths.npz"}, "routing.path_file"),
    ({"name": "table"}, "routing.path_file"),
])
def test_bad_parameters(cfg, parameter):
    with pytest.raises(ValueError, match=parameter):
        build_routing(cfg)


def _network(topo, routing, **router):
    return build.network(topo, routing, RouterSpec(**router))


def _mean_block_length(topo, tables):
    lengths = (np.asarray(tables.route) >= 0).sum(axis=1)
    pair, _ = route_routers(topo, tables)
    per_pair = np.bincount(pair, weights=lengths, minlength=topo.n_routers ** 2)
    count = np.asarray(tables.count).reshape(-1)
    return float((per_pair[count > 0] / count[count > 0]).mean())


@pytest.mark.slow  # KSP also drains in the fast tier: tests/test_behaviour.py
def test_ksp_simulation_delivers_everything(rrg):
    network = _network(rrg, KShortestPaths(k=8), vcs=5)
    assert network.layout.max_hops == 5
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.3, 1), (0.9, 2)],
                           SimSpec(warmup=300, measure=1500, chunk=600))
    for i, row in enumerate(rows):
        _check_invariants(network, state, i)
        assert not row["deadlock"] and row["no_route_events"] == 0
    assert rows[0]["accepted_load"] == pytest.approx(0.3, rel=0.15)
    # uniform traffic, uniform weights: mean hops = mean over pairs of the block mean
    assert rows[0]["average_hops"] == pytest.approx(_mean_block_length(rrg, network.tables), rel=0.06)


def test_too_few_vcs_for_the_longest_path(rrg):
    with pytest.raises(ValueError, match="router.vcs"):
        _network(rrg, KShortestPaths(k=8), vcs=4)


def _one_pair(topo, s, t):
    routers = [-1] * topo.n_routers
    routers[s] = t
    return {"name": "destination_table", "routers": routers}


def _pathset_arrays(topo, tables):
    """PathSet-format arrays (row-major pairs, k lanes, router sequences) of a table."""
    n = topo.n_routers
    pair, routers = route_routers(topo, tables)
    src, dst = all_pairs(n)
    k = int(np.asarray(tables.count).max())
    paths = np.full((src.size, k, routers.shape[1]), -1, np.int32)
    index = {p: i for i, p in enumerate((src.astype(np.int64) * n + dst).tolist())}
    lane = np.arange(pair.size) - np.asarray(tables.first).reshape(-1)[pair]
    paths[[index[p] for p in pair.tolist()], lane] = routers
    return paths, src, dst, paths[:, :, 0] >= 0


def test_weights_pick_the_path_and_never_recompile(rrg):
    ksp = KShortestPaths(k=8).build_tables(rrg)
    paths, src, dst, valid = _pathset_arrays(rrg, ksp)
    s, t = 0, 5
    row = int(np.nonzero((src == s) & (dst == t))[0][0])
    lengths = (paths[row] >= 0).sum(axis=1) - 1
    weights = np.zeros(valid.shape, np.float32)
    weights[:, 0] = 1.0
    longest = int(np.argmax(lengths))
    weights[row] = 0.0
    weights[row, longest] = 1.0
    network = _network(rrg, TablePaths.from_arrays(paths, src, dst, valid, weights), vcs=5)
    window = SimSpec(warmup=200, measure=1500, chunk=500)
    traffic = _one_pair(rrg, s, t)
    rows, _ = simulate_cfg(network, traffic, [(0.2, 1)], window)
    assert rows[0]["packets_consumed"] > 10
    assert rows[0]["average_hops"] == lengths[longest]
    weights[row] = 0.0
    weights[row, 0] = 1.0
    shorter = with_weights(network, weights, valid)
    with count_compilations() as compiled:
        rows2, state = simulate_cfg(shorter, traffic, [(0.2, 1)], window)
        assert rows2[0]["average_hops"] == lengths[0] == rrg.distances[s, t]
        # uniform weights over the block: every path length shows up
        uniform = with_weights(network, np.ones(network.tables.n_paths))
        rows3, state = simulate_cfg(uniform, traffic, [(0.2, 1)], window)
    assert compiled == []
    assert rows3[0]["average_hops"] == pytest.approx(lengths.mean(), rel=0.15)
    used = {i for i, c in enumerate(rows3[0]["hop_histogram"]) if c}
    assert used == set(lengths.tolist())
    _check_invariants(uniform, state, 0)


def test_table_from_a_path_set_file(rrg, tmp_path):
    tables = KShortestPaths(k=4).build_tables(rrg)
    paths, src, dst, valid = _pathset_arrays(rrg, tables)
    link_src, link_dst, _ = directed_links(rrg.neighbor)
    lengths = np.where(valid, (paths >= 0).sum(axis=2) - 1, 0)
    PathSet(paths, src, dst, lengths, valid, link_src, link_dst, "ksp").save(tmp_path / "paths.npz")
    first_only = np.zeros(valid.shape, np.float32)
    first_only[:, 0] = 1.0
    np.savez(tmp_path / "weights.npz", optimal=first_only)
    cfg = {"name": "table", "path_file": str(tmp_path / "paths.npz")}
    uniform = build_routing(cfg).build_tables(rrg)
    for key in ("route", "first", "count"):
        assert (np.asarray(getattr(uniform, key)) == np.asarray(getattr(tables, key))).all()
    network = _network(rrg, build_routing({**cfg, "weights": "optimal"}), vcs=5)
    rows, _ = simulate_cfg(network, {"name": "uniform"}, [(0.2, 3)], SimSpec(warmup=100, measure=800, chunk=450))
    assert rows[0]["average_hops"] == pytest.approx(rrg.average_distance, rel=0.05)
    assert len(rows[0]["hop_histogram"]) == 6 and sum(rows[0]["hop_histogram"][rrg.diameter + 1:]) == 0
    with pytest.raises(ValueError, match="routing.weights"):
        build_routing({**cfg, "weights": "missing"}).build_tables(rrg)
    broken = paths.copy()
    broken[0, 0, 1] = broken[0, 0, 0]  # a self-step is no link
    with pytest.raises(ValueError, match="routing.path_file"):
        TablePaths.from_arrays(broken, src, dst, valid).build_tables(rrg)
    with pytest.raises(ValueError, match="routing.path_file"):  # a pair without paths
        TablePaths.from_arrays(paths, src, dst, valid & (np.arange(src.size) > 0)[:, None]
                               ).build_tables(rrg)


def test_memory_bytes_and_summary(rrg):
    scheme = KShortestPaths(k=8)
    tables = scheme.build_tables(rrg)
    n = rrg.n_routers
    expected = tables.n_paths * 5 + 2 * n * n * 4 + tables.n_paths * 4 + 8 * 4
    assert tables.memory_bytes() == expected
    summary = scheme.summary(rrg, tables)
    assert summary["memory_bytes"] == expected and summary["max_paths_per_pair"] == 8


def test_schemes_are_hashable_static_options():
    assert KShortestPaths(k=8) == build_routing({"name": "ksp"})
    assert hash(KShortestPaths(k=8)) == hash(build_routing({"name": "ksp"}))
    assert KShortestPaths(k=8, seed=2) != KShortestPaths(k=8, seed=1)
    assert AllMinimalPaths(max_paths=5) != AllMinimalPaths()


def test_table_schemes_from_different_arrays_share_compiled_code():
    """The arrays of `TablePaths.from_arrays` are no part of its identity: schemes from
    different path sets compare equal and share one compiled step, and each still routes
    by its own tables (they reach the engine traced)."""
    topo = _graph_topo(nx.cycle_graph(5))
    src, dst = all_pairs(topo.n_routers)

    def one_long_way_round(pair):  # shortest paths, but `pair` the other way: 3 hops
        paths = np.full((src.size, 1, 4), -1, np.int32)
        for i, (s, t) in enumerate(zip(src.tolist(), dst.tolist())):
            route = nx.shortest_path(topo.graph, s, t)
            if (s, t) == pair:
                route = max(nx.all_simple_paths(topo.graph, s, t), key=len)
            paths[i, 0, :len(route)] = route
        return TablePaths.from_arrays(paths, src, dst)

    long_02, long_03 = one_long_way_round((0, 2)), one_long_way_round((0, 3))
    assert long_02 == long_03 and hash(long_02) == hash(long_03)
    a, b = _network(topo, long_02, vcs=3), _network(topo, long_03, vcs=3)
    assert a.layout == b.layout and a.layout.max_hops == 3
    traffic, window = _one_pair(topo, 0, 2), SimSpec(warmup=100, measure=1000, chunk=550)
    rows_a, _ = simulate_cfg(a, traffic, [(0.2, 1)], window)
    with count_compilations() as compiled:
        rows_b, _ = simulate_cfg(b, traffic, [(0.2, 1)], window)
    assert compiled == []
    assert rows_a[0]["packets_consumed"] > 10 and rows_b[0]["packets_consumed"] > 10
    assert rows_a[0]["average_hops"] == 3 and rows_b[0]["average_hops"] == 2


@pytest.mark.parametrize("graph", [nx.random_regular_graph(3, 12, seed=4), nx.petersen_graph(),
                                   nx.grid_2d_graph(3, 4), nx.cycle_graph(7)])
def test_simple_paths_up_to_two_extra_hops_are_the_non_backtracking_walks(graph):
    """The counting behind ksp's fast layers: walks of minimal + 1 or + 2 hops are simple
    iff they never step straight back."""
    from jaxnet.paths.enumerate import _nonbacktracking_counts

    topo = _graph_topo(graph)
    n, ports = topo.n_routers, topo.n_ports
    targets = np.arange(n)
    g = _nonbacktracking_counts(topo, targets, topo.diameter + 2)
    for s in range(n):
        for t in range(n):
            if s == t:
                continue
            d = int(topo.distances[s, t])
            simple = [0, 0, 0]
            for path in nx.all_simple_paths(topo.graph, s, t, cutoff=d + 2):
                simple[len(path) - 1 - d] += 1
            walks = [g[d + extra, s * ports:(s + 1) * ports, t].sum() for extra in range(3)]
            assert walks == simple, (s, t)


@pytest.mark.slow
def test_ksp8_on_the_ant_mill_rrg_builds_in_minutes():
    """8-KSP of RRG(720, 17) (518k ordered pairs): the Ant Mill setting."""
    import time

    topo = build_topology({"name": "rrg", "routers": 720, "degree": 17, "seed": 1,
                           "medoid_of": 1, "servers_per_router": 1})
    start = time.process_time()
    scheme = KShortestPaths(k=8)
    tables = scheme.build_tables(topo)
    assert time.process_time() - start < 120
    count = np.asarray(tables.count)
    assert (count[~np.eye(720, dtype=bool)] == 8).all()
    summary = scheme.summary(topo, tables)
    assert summary["paths"] == 720 * 719 * 8 and summary["memory_bytes"] < 64 << 20


@pytest.mark.parametrize("vmap_width", [None, 1], ids=["vmapped", "one at a time"])
def test_points_with_their_own_path_weights_run_as_one_batch(rrg, vmap_width):
    """Points whose routing tables differ only in their values (path weights) run as one
    batch, each with its own tables (`simulate(..., tables=...)`), with rows identical to
    each run with its weights alone; only the leaves that differ are held per simulation."""
    network = _network(rrg, KShortestPaths(k=4), vcs=6)
    n_paths = network.tables.n_paths
    first_only = np.zeros(n_paths, np.float32)
    first_only[np.asarray(network.tables.first).reshape(-1)[np.asarray(network.tables.count).reshape(-1) > 0]] = 1.0
    weighted = [network, with_weights(network, first_only), with_weights(network, np.arange(1, n_paths + 1))]
    spec = SimSpec(warmup=100, measure=300, chunk=100, vmap_width=vmap_width)
    points = [(0.3, 1), (0.6, 2), (0.6, 1)]
    traffic = {"name": "uniform"}
    together, _ = simulate_cfg(network, traffic, points, spec, tables=[n.tables for n in weighted])
    alone = [simulate_cfg(n, traffic, [point], spec)[0][0] for n, point in zip(weighted, points)]
    how = ("wall_s", "first_chunk_s", "batch", "vmap_width", "work_lists")  # how it ran, not what
    assert [{k: v for k, v in row.items() if k not in how} for row in together] == [
        {k: v for k, v in row.items() if k not in how} for row in alone]
    assert together[1]["average_hops"] < together[0]["average_hops"]  # the first (shortest) path only
    tables, per_simulation = batch_tables(network, [n.tables for n in weighted], 4)
    leaves = jax.tree_util.tree_leaves(network.tables)
    assert sum(per_simulation) == 1 and jax.tree_util.tree_leaves(tables)[per_simulation.index(True)].shape == (4, n_paths)
    assert batch_tables(network, [network.tables] * 2, 2)[1] is None and len(leaves) == len(per_simulation)
    # a checkpoint resumes only the same weights
    signed = [checkpoints.signature(network, points[:2], spec, batch_tables(network, [network.tables, n.tables], 2))
              for n in weighted[1:]]
    assert signed[0] != signed[1]
    assert checkpoints.signature(network, points, spec, batch_tables(network, None, 3)) == checkpoints.signature(
        network, points, spec)
