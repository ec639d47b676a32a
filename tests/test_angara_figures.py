"""The Angara paper's Figure 4 (BUILD_SSSP calls with and without the unique-routes stage) and
the tornado of its Figure 6 on the Desmos torus, and the share of pairs with a single minimal
route under each candidate definition (scripts/reproduce_angara.py)."""
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script

from jaxnet.paths.torus_graph import (RoutingGraph, TorusShape, _initial_used_directions, _turn_candidates,
                                      deadlock_free_turns)
from jaxnet.paths.torus_routes import minimal_route_candidates
from jaxnet.paths.torus_tables import build_table, deadlock_cycle, table_metrics

ROOT = Path(__file__).resolve().parents[1]
DESMOS = [4, 2, 2, 2]


@pytest.fixture(scope="module")
def angara(request):
    return load_script(ROOT / "scripts" / "reproduce_angara.py")


@pytest.mark.parametrize("sides", [DESMOS, [4, 4], [3, 3, 2]])
def test_sssp_without_the_unique_stage_is_a_valid_table_with_more_calls(sides):
    shape = TorusShape.build(sides)
    both = build_table(shape, "sssp")
    alone = build_table(shape, "sssp", unique_first=False)
    assert table_metrics(alone)["minimal"] and deadlock_cycle(alone) is None
    R = shape.n_nodes
    assert R <= alone.info["build_sssp_calls"] <= R * R  # the paper's bounds for this variant
    assert alone.info["build_sssp_calls"] > both.info["build_sssp_calls"]


def test_unique_first_must_be_a_boolean():
    with pytest.raises(ValueError, match="tables.unique_first"):
        build_table(TorusShape.build(DESMOS), "sssp", unique_first="no")


def test_coordinate_tornado_on_the_desmos_torus_leaves_no_route_to_choose(angara):
    """jaxnet's tornado (each coordinate + ceil(k/2) - 1) moves one hop in x on 4x2x2x2, a pair
    with one minimal route: every table routes it identically. Tornado on node ranks
    (i -> i + 15) leaves 20 of 32 pairs a choice."""
    shape = TorusShape.build(DESMOS)
    choices = minimal_route_candidates(shape, deadlock_free_turns(shape)).counts.reshape(32, 32)
    coordinates = angara.tornado_destinations(shape, "coordinates")
    assert (shape.coords[coordinates][:, 0] == (shape.coords[:, 0] + 1) % 4).all()
    assert (shape.coords[coordinates][:, 1:] == shape.coords[:, 1:]).all()
    assert (choices[np.arange(32), coordinates] == 1).all()
    loads = {angara.pattern_loads(build_table(shape, name), coordinates) for name in ("bfs", "sssp")}
    assert loads == {(1, 1.0)}
    ranks = angara.tornado_destinations(shape, "ranks")
    assert (ranks == (np.arange(32) + 15) % 32).all()
    assert int((choices[np.arange(32), ranks] > 1).sum()) == 20
    for name in ("bfs", "sssp"):
        most, share = angara.pattern_loads(build_table(shape, name), ranks)
        assert 1 / most <= share <= 1  # every flow gets between the worst share and its whole link


# ------------------------------------------- Figure 4's share of pairs with a single route
def _walked_graph_paths(graph: RoutingGraph, source: int, directions) -> int:
    """Routing-graph paths that take these directions from BEGIN(source), counted by walking
    the graph's own transitions with multiplicity (every state has an END edge)."""
    node, states = int(source), {graph.BEGIN: 1}
    for k in directions:
        reached: dict[int, int] = {}
        for state, ways in states.items():
            for t in graph.out[state]:
                if t >= 0 and graph.direction[t] == k and graph.allowed[t, node]:
                    reached[int(graph.next_state[t])] = reached.get(int(graph.next_state[t]), 0) + ways
        node, states = int(graph.shape.neighbor[node, k]), reached
    return sum(states.values())


@pytest.mark.parametrize("sides", [[3, 3], [4, 2], [4, 4, 2]])
def test_graph_path_counts_agree_with_walking_the_routing_graph(angara, sides):
    shape = TorusShape.build(sides)
    turns = deadlock_free_turns(shape)
    candidates = minimal_route_candidates(shape, turns)
    counted = angara.graph_path_counts(shape, turns, candidates)
    graph = RoutingGraph.build(shape, turns)
    R = shape.n_nodes
    pair = np.repeat(np.arange(R * R), candidates.counts)
    directions = np.where(candidates.channels < candidates.pad, candidates.channels % shape.n_dirs, -1)
    walked = [_walked_graph_paths(graph, p // R, d[d >= 0]) for p, d in zip(pair, directions)]
    assert counted.tolist() == walked
    assert (counted >= 1).all()  # every admitted route is a path of the graph (Theorem 1)


def test_route_counts_by_hand_on_the_3x3_torus(angara):
    """3x3: no half-ring ties, no Theorem 2 turns, so one admitted route per pair. Graph paths
    of node 0 = (0, 0): +X is FS+X or DIRBIT{+X} (2); -X is DIRBIT{-X} only (1); +X+Y is
    FS+X DIRBIT{+Y} or DIRBIT{+X} DIRBIT{+X+Y} (2); +Y-X (to (2, 1)) adds DIRBIT{+Y} LS-X (3).
    Every FS/LS turn: +Y+X beside +X+Y and -Y-X beside -X-Y, 2 of the 8 pairs."""
    shape = TorusShape.build([3, 3])
    assert deadlock_free_turns(shape).sum() == 0
    admitted = angara.route_counts(shape, deadlock_free_turns(shape))
    assert (admitted[~np.eye(9, dtype=bool)] == 1).all()
    paths = angara.route_counts(shape, deadlock_free_turns(shape), graph_paths=True)
    node = {(x, y): x + 3 * y for x in range(3) for y in range(3)}
    assert [paths[0, node[c]] for c in [(1, 0), (2, 0), (1, 1), (2, 1), (0, 2), (2, 2)]] == [2, 1, 2, 3, 1, 2]
    anyturn = angara.route_counts(shape, angara.any_turn(shape))
    assert anyturn[0, node[1, 1]] == 2 and anyturn[0, node[2, 2]] == 2
    assert angara.single_route_share(anyturn) == 6 / 8
    assert angara.single_route_share(admitted, with_self=True) == 1.0


def test_single_route_shares_by_hand(angara):
    """4x4: a pair has one route unless an offset is 2 in a dimension (a tie of + and -): 8 of
    the 15 non-zero offsets (9 of 16 with the pair to itself). 2x3 with the side of 2 a
    two-node ring: every offset of 1 in x is a tie, leaving the 2 offsets (0, 1), (0, 2)."""
    shares = {name: share((4, 4)) for name, (_, share) in angara.SHARE_DEFINITIONS.items()}
    assert shares["admitted"] == shares["direction_order"] == shares["bound"] == 8 / 15
    assert shares["with_self"] == 9 / 16
    ring = angara.two_node_rings(TorusShape.build([2, 3]))
    assert ring.wrap == (True, True)
    assert angara.single_route_share(angara.route_counts(ring, deadlock_free_turns(ring))) == 2 / 5
    assert angara.SHARE_DEFINITIONS["admitted"][1]((2, 3)) == 1.0  # a mesh link
    assert angara.SHARE_DEFINITIONS["side_2_ring"][1]((2, 3)) == 2 / 5


@pytest.mark.parametrize("sides", [[3, 4], [5, 3, 4], [3, 3, 4, 3]])
def test_theorem_2_admits_no_turn_on_tori_of_rings(sides):
    """Every FS/LS turn b < a at v needs a not in B(v, b), but the direction-order turn from
    (v, b) to (v + b, a) is in every torus of rings: the pre-filter leaves nothing to add, in any
    order, so the "bound" definition is the lowest share any Theorem 2 turn set gives."""
    shape = TorusShape.build(sides)
    assert _turn_candidates(shape, _initial_used_directions(shape)) == []
    assert deadlock_free_turns(shape).sum() == 0
    assert deadlock_free_turns(TorusShape.build([4, 2])).sum() > 0  # a side of 2 leaves some


@pytest.mark.parametrize("sides", [[4, 2], [3, 3, 2], [4, 2, 2], [3, 2, 2, 2]])
def test_theorem_2_turns_do_not_depend_on_the_order_they_are_tried(monkeypatch, sides):
    """The augmentation adds a turn when its direction is outside B, then grows B; tried in
    reverse or shuffled order it ends with the same turns, so Theorem 2 gives one turn set."""
    import random

    import jaxnet.paths.torus_graph as torus_graph

    shape = TorusShape.build(sides)
    in_order = deadlock_free_turns(shape)
    assert in_order.any()
    for reorder in (lambda c: c[::-1], lambda c: random.Random(0).sample(c, len(c))):
        monkeypatch.setattr(torus_graph, "_turn_candidates",
                            lambda shape, used, reorder=reorder: reorder(_turn_candidates(shape, used)))
        assert (torus_graph.deadlock_free_turns(shape) == in_order).all()


def test_every_4d_system_bounds_the_mean_of_any_set_between_two_node_caps(angara):
    """On the 4D systems up to 24 nodes (2x2x2x2 and the four orders of 2x2x2x3), the range of
    the mean over every set of 2 that holds the one up to 16 nodes is the least and the most
    over the four choices of the other, each share counted as `single_route_share` does."""
    out = angara.every_4d_system(24, core_nodes=16, count=2)
    shares = {tuple(map(int, key.split("x"))): share for key, share in out["shares"].items()}
    assert len(shares) == 5 and out["systems"] == 5
    for sides, share in shares.items():
        shape = TorusShape.build(list(sides))
        counts = minimal_route_candidates(shape, deadlock_free_turns(shape)).counts.reshape(shape.n_nodes, -1)
        assert share == angara.single_route_share(counts)
    means = [(shares[(2, 2, 2, 2)] + share) / 2 for sides, share in shares.items() if sides != (2, 2, 2, 2)]
    assert out["lowest_mean_of_count"] == pytest.approx(min(means))
    assert out["highest_mean_of_count"] == pytest.approx(max(means))
    assert out["mean_up_to_core_nodes"] == shares[(2, 2, 2, 2)]
    with pytest.raises(SystemExit, match="a set of 7"):
        angara.every_4d_system(24, core_nodes=16, count=7)
