"""Hamiltonian-cycle search for Ant Mill: found cycles verify, broken ones are rejected."""
from __future__ import annotations

import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from conftest import load_script

from jaxnet.topology import TOPOLOGIES, build_topology, from_graph
from jaxnet.traffic.hamiltonian import (
    CycleNotFound,
    check_cycle,
    cycle_delta,
    find_cycle,
    search_max_delta,
)


@pytest.fixture(scope="module")
def rrg():
    return from_graph(nx.random_regular_graph(4, 64, seed=2), "rrg64", 2)


@pytest.fixture(scope="module")
def torus():
    """4 x 4 torus; router = 4 * row + column."""
    graph = nx.convert_node_labels_to_integers(nx.grid_2d_graph(4, 4, periodic=True), ordering="sorted")
    return from_graph(graph, "torus4x4", 1)


def snake_cycle(side: int) -> list[int]:
    """Boustrophedon Hamiltonian cycle of a side x side torus (side even)."""
    rows = [list(range(r * side, (r + 1) * side)) for r in range(side)]
    return [v for r, row in enumerate(rows) for v in (row if r % 2 == 0 else row[::-1])]


@pytest.mark.parametrize("delta", [1, 2])
def test_found_cycles_verify(rrg, delta):
    cycle = find_cycle(rrg, delta, seed=3)
    assert cycle.dtype == np.int32 and sorted(cycle) == list(range(rrg.n_routers))
    check_cycle(rrg, cycle, delta)
    assert cycle_delta(rrg, cycle) >= delta


def test_unique_paths_along_the_cycle(rrg):
    cycle = find_cycle(rrg, 2, seed=0)
    for j in (1, 2):
        ahead = np.roll(cycle, -j)
        assert np.all(rrg.distances[cycle, ahead] == j)
        assert np.all(rrg.path_counts[cycle, ahead] == 1)


def test_search_is_deterministic_per_seed(rrg):
    assert np.array_equal(find_cycle(rrg, 2, seed=5), find_cycle(rrg, 2, seed=5))
    assert not np.array_equal(find_cycle(rrg, 2, seed=5), find_cycle(rrg, 2, seed=6))


def test_search_max_delta_reports_largest_reached():
    heawood = from_graph(nx.heawood_graph(), "heawood", 1)  # girth 6: every 2-path unique
    found = search_max_delta(heawood, seed=0)
    assert found.delta == 2 and set(found.seconds) == {1, 2, 3}
    check_cycle(heawood, found.cycle, 2)
    assert cycle_delta(heawood, found.cycle) == 2


def test_delta_is_capped_by_radius():
    odd = from_graph(nx.cycle_graph(13), "ring13", 1)  # D(x, x + 6) = 6 = radius, one path
    found = search_max_delta(odd, seed=0)
    assert found.delta == odd.radius == 6 and max(found.seconds) == 6
    check_cycle(odd, found.cycle, 6)
    even = from_graph(nx.cycle_graph(12), "ring12", 1)  # D(x, x + 6) = 6 both ways round
    assert search_max_delta(even, seed=0).delta == 5


def test_verifier_accepts_snake_for_delta_1_only(torus):
    cycle = snake_cycle(4)
    check_cycle(torus, cycle, 1)
    assert cycle_delta(torus, cycle) == 1
    with pytest.raises(ValueError, match="fails delta=2"):
        check_cycle(torus, cycle, 2)  # the zigzag corners have two shortest paths


def test_verifier_rejects_non_cycles(torus):
    cycle = snake_cycle(4)
    with pytest.raises(ValueError, match="exactly once"):
        check_cycle(torus, cycle[:-1], 1)
    with pytest.raises(ValueError, match="exactly once"):
        check_cycle(torus, cycle[:-1] + [cycle[0]], 1)
    broken = cycle.copy()
    broken[1], broken[5] = broken[5], broken[1]
    with pytest.raises(ValueError, match="not adjacent"):
        check_cycle(torus, broken, 1)


def test_no_cycle_is_a_clear_error():
    petersen = from_graph(nx.petersen_graph(), "petersen", 1)  # not Hamiltonian
    with pytest.raises(CycleNotFound, match="no Hamiltonian cycle with delta=1"):
        find_cycle(petersen, 1, seed=0, max_steps=3000)
    with pytest.raises(CycleNotFound):
        search_max_delta(petersen, seed=0, max_steps=3000)


def test_impossible_delta_fails_fast():
    hamming = from_graph(nx.convert_node_labels_to_integers(
        nx.cartesian_product(nx.complete_graph(4), nx.complete_graph(4))), "hamming4x4", 1)
    with pytest.raises(CycleNotFound, match="fewer than 2 routers"):
        find_cycle(hamming, 2)  # every distance-2 pair has two shortest paths


def test_bad_parameters(rrg):
    with pytest.raises(ValueError, match="delta"):
        find_cycle(rrg, 0)
    with pytest.raises(ValueError, match="max_steps"):
        find_cycle(rrg, 1, max_steps=0)



def table_1():
    """The Table 1 networks, as listed in benchmarks/bench_antmill.py."""
    return load_script(Path(__file__).resolve().parents[1] / "benchmarks" / "bench_antmill.py").TABLE_1


@pytest.mark.slow
@pytest.mark.parametrize("label, cfg, paper_delta", table_1(), ids=[row[0] for row in table_1()])
def test_table_1_delta(label, cfg, paper_delta):
    """Ant Mill Table 1: the largest delta reached matches the paper, in under 60 s."""
    if cfg["name"] not in TOPOLOGIES:
        pytest.skip(f"topology builder {cfg['name']!r} not available")
    topo = build_topology(cfg)
    topo.path_counts  # noqa: B018  (analysis is not part of the search time)
    start = time.perf_counter()
    found = search_max_delta(topo, seed=1, time_budget=60.0)
    assert time.perf_counter() - start < 60.0
    assert found.delta == paper_delta
    check_cycle(topo, found.cycle, found.delta)
