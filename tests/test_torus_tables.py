"""Angara routing graph, Theorem 1/2, and the BFS / SSSP / genetic routing tables."""
import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from jaxnet.paths.deadlock import channel_dependency_graph, find_deadlock_cycle
from jaxnet.paths.torus_graph import (
    RoutingGraph,
    TorusShape,
    deadlock_free_turns,
    obeys_routing_rules,
)
from jaxnet.paths.torus_routes import minimal_route_candidates
from jaxnet.paths.torus_tables import (
    RoutingTable,
    build_table,
    channel_loads,
    deadlock_cycle,
    load_table,
    save_table,
    simulator_tables,
    table_metrics,
)

TINY = [(3, 3), (4, 2, 2), (2, 2, 2, 2)]
FAST_GENETIC = dict(population=20, max_generations=40, seed=3)


def shape_and_graph(sides):
    shape = TorusShape.build(list(sides))
    turns = deadlock_free_turns(shape)
    return shape, turns, RoutingGraph.build(shape, turns)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_routing_graph_has_3n_plus_2n_plus_1_vertices_per_node(n):
    _, _, graph = shape_and_graph((3,) * n)
    assert graph.n_states == 3 ** n + 2 * n + 1


@pytest.mark.parametrize("sides", TINY)
def test_theorem1_graph_paths_are_exactly_the_rule_abiding_routes(sides):
    shape, turns, graph = shape_and_graph(sides)
    max_len = 4 if shape.n == 2 else 3
    admitted = 0
    for source in range(shape.n_nodes):
        for m in range(max_len + 1):
            for route in itertools.product(range(shape.n_dirs), repeat=m):
                in_graph = graph.admits(source, route)
                assert in_graph == obeys_routing_rules(shape, turns, source, route), (source, route)
                admitted += in_graph
    assert admitted > shape.n_nodes


def test_augmentation_admits_first_and_last_step_turns_only():
    shape, turns, graph = shape_and_graph((4, 2, 2))
    node = {tuple(c): i for i, c in enumerate(shape.coords.tolist())}
    plus_x, plus_y, minus_x, minus_y = 0, 1, shape.n, shape.n + 1
    assert graph.admits(node[1, 0, 0], [plus_y, plus_x])  # FS turn +Y -> +X
    assert graph.admits(node[1, 1, 0], [minus_y, minus_x])  # LS turn -Y -> -X
    assert not graph.admits(node[0, 0, 0], [plus_x, plus_y, plus_x])  # the turn mid-route
    assert not graph.admits(node[0, 1, 0], [minus_y, minus_x, minus_x])  # LS is one step


def test_theorem2_rejects_turns_that_a_ring_could_close():
    shape = TorusShape.build([5, 2, 3, 2])  # X and Z are rings, Y and K single links
    turns = deadlock_free_turns(shape)
    plus_x, plus_y, plus_z = 0, 1, 2
    assert not turns[:, plus_z, plus_x].any()  # +X can reach +Z again: a cycle
    at_y1 = shape.coords[:, 1] == 1
    assert turns[at_y1, plus_y, plus_x].all()  # +Y cannot recur after +Y: safe


def test_pure_tori_get_no_extra_turns():
    assert deadlock_free_turns(TorusShape.build([3, 4, 5])).sum() == 0


@pytest.mark.parametrize("sides", [(4, 4), (4, 2, 2), (2, 2, 2, 2), (3, 2)])
def test_candidates_are_all_minimal_routes_of_the_routing_graph(sides):
    shape, turns, graph = shape_and_graph(sides)
    candidates = minimal_route_candidates(shape, turns)
    R = shape.n_nodes
    for s, t in itertools.permutations(range(R), 2):
        hops = int(shape.distance[s, t])
        rows = candidates.channels[candidates.offsets[s * R + t]: candidates.offsets[s * R + t + 1]]
        listed = {tuple(int(c) % shape.n_dirs for c in row[:hops]) for row in rows}
        assert len(listed) == len(rows)
        found = set()
        stack = [(s, ())]
        while stack:  # every minimal direction sequence, kept when the graph admits it
            node, route = stack.pop()
            if len(route) == hops:
                if graph.admits(s, route):
                    found.add(route)
                continue
            for k in range(shape.n_dirs):
                v = shape.neighbor[node, k]
                if v >= 0 and shape.distance[v, t] == hops - len(route) - 1:
                    stack.append((v, route + (k,)))
        assert listed == found, (s, t)


@pytest.mark.parametrize("sides", [(4, 2, 2), (2, 2, 2, 2), (4, 2, 2, 2)])
def test_theorem2_augmented_dependency_graph_is_acyclic(sides):
    """Every direction-order dependency plus every added turn: no cycle except straight rings."""
    shape = TorusShape.build(list(sides))
    turns = deadlock_free_turns(shape)
    edges = []
    for u, a in zip(*np.nonzero(shape.neighbor >= 0)):
        v = shape.neighbor[u, a]
        for b in range(shape.n_dirs):
            if shape.neighbor[v, b] >= 0 and (b >= a or turns[v, a, b]):
                edges.append((u * shape.n_dirs + a, v * shape.n_dirs + b))
    straight = lambda x, y: x % shape.n_dirs == y % shape.n_dirs  # noqa: E731
    assert find_deadlock_cycle(channel_dependency_graph(edges), tolerated=straight) is None


@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "genetic"])
@pytest.mark.parametrize("sides", TINY + [(3, 2)])
def test_tables_are_minimal_deadlock_free_and_obey_the_rules(algorithm, sides):
    shape = TorusShape.build(list(sides))
    params = FAST_GENETIC if algorithm == "genetic" else {}
    table = build_table(shape, algorithm, **params)
    assert np.array_equal(table.length, shape.distance)
    assert deadlock_cycle(table) is None
    for s, t in itertools.product(range(shape.n_nodes), repeat=2):
        route = [int(k) for k in table.directions[s, t] if k >= 0]
        node = s
        for k in route:
            node = shape.neighbor[node, k]
        assert node == t
        assert obeys_routing_rules(shape, table.turns, s, route)


def test_deadlock_check_catches_a_cyclic_table():
    shape = TorusShape.build([4, 4])
    table = build_table(shape, "sssp")
    directions = table.directions.copy()
    # four 2-hop routes turning around the square 0 -> 1 -> 5 -> 4 -> 0:
    # +X+Y from 0, +Y-X from 1, -X-Y from 5, -Y+X from 4 (direction ids +X 0, +Y 1, -X 2, -Y 3)
    square = [0, 1, 5, 4]
    turns = [(0, 1), (1, 2), (2, 3), (3, 0)]
    for i, (a, b) in enumerate(turns):
        s, t = square[i], square[(i + 2) % 4]
        directions[s, t, :2] = (a, b)
    cyclic = RoutingTable(shape, table.turns, "hand", directions, {})
    assert deadlock_cycle(cyclic) is not None


def test_edge_forwarding_index_by_hand_on_a_ring_of_4():
    shape = TorusShape.build([4])
    directions = np.full((4, 4, 2), -1, np.int8)
    for s in range(4):
        directions[s, (s + 1) % 4, 0] = 0       # +X
        directions[s, (s + 2) % 4, :2] = 0     # half ring: always +X +X
        directions[s, (s + 3) % 4, 0] = 1      # -X
    table = RoutingTable(shape, np.zeros((4, 2, 2), bool), "hand", directions, {})
    # + channels: one 1-hop route + two 2-hop routes each = 3; - channels: one route each
    assert sorted(channel_loads(table).tolist()) == [1, 1, 1, 1, 3, 3, 3, 3]
    metrics = table_metrics(table)
    assert metrics["max_channel_load"] == 3 and metrics["min_channel_load"] == 1
    assert metrics["perfect_channel_load"] == 2.0
    assert metrics["sigma4"] == pytest.approx(1.0)  # |2 - 3| = |2 - 1| = 1 everywhere


def test_direction_order_loads_by_hand_on_a_2x2():
    """Side 2 is a single link (8 directed channels); DOR routes the diagonals
    (0,0)->(1,1) as +X+Y, (1,1)->(0,0) as -X-Y, (1,0)->(0,1) as +Y-X, (0,1)->(1,0) as +X-Y."""
    table = build_table(TorusShape.build([2, 2]), "sssp", augment=False)
    loads = dict(zip(["+X@0", "+Y@0", "+Y@1", "-X@1", "+X@2", "-Y@2", "-X@3", "-Y@3"],
                     channel_loads(table).tolist()))
    assert loads == {"+X@0": 2, "-X@1": 1, "+Y@0": 1, "+Y@1": 3,
                     "+X@2": 2, "-Y@2": 2, "-X@3": 3, "-Y@3": 2}
    assert table_metrics(table)["sigma4"] == pytest.approx((4 / 8) ** 0.25)  # loads 1, 1, 3, 3 deviate by 1


def test_table2_32_node_desmos_system():
    shape = TorusShape.build([4, 2, 2, 2])
    results = {alg: table_metrics(build_table(shape, alg)) for alg in ("bfs", "sssp", "genetic")}
    assert abs(results["sssp"]["max_channel_load"] - 28) <= 2.8
    assert abs(results["genetic"]["max_channel_load"] - 27) <= 2.7
    assert results["bfs"]["max_channel_load"] >= 1.2 * results["sssp"]["max_channel_load"]
    assert all(r["max_route_length"] == 5 for r in results.values())


def test_genetic_is_seeded():
    shape = TorusShape.build([4, 2, 2])
    a, b = (build_table(shape, "genetic", **FAST_GENETIC) for _ in range(2))
    assert np.array_equal(a.directions, b.directions)


def test_simulator_tables_walk_to_the_destination(tmp_path):
    shape = TorusShape.build([3, 2, 2])
    table = load_table(save_table(build_table(shape, "sssp"), tmp_path / "t.npz"))
    export = simulator_tables(table)
    assert np.array_equal(export["length"], shape.distance)
    coords = shape.coords
    for s, t in itertools.permutations(range(shape.n_nodes), 2):
        position = coords[s].copy()
        for h in range(export["length"][s, t]):
            assert export["router"][s, t, h] == np.flatnonzero((coords == position).all(1))[0]
            d, sign = export["dimension"][s, t, h], export["sign"][s, t, h]
            position[d] = (position[d] + sign) % shape.sides[d]
        assert (position == coords[t]).all()
        assert export["sign"][s, t, export["length"][s, t]:].tolist() == \
            [0] * (export["sign"].shape[2] - export["length"][s, t])


@pytest.mark.parametrize("call, parameter", [
    (lambda: TorusShape.build([1, 3]), "sides"),
    (lambda: TorusShape.build([2] * 5), "sides"),
    (lambda: TorusShape.build([3, 3], kind="ring"), "kind"),
    (lambda: build_table(TorusShape.build([3, 3]), "dfs"), "tables.algorithm"),
    (lambda: build_table(TorusShape.build([3, 3]), "sssp", population=5), "tables.population"),
    (lambda: build_table(TorusShape.build([3, 3]), "genetic", population=1), "tables.population"),
    (lambda: build_table(TorusShape.build([3, 3]), "genetic", mutation_rate=2.0),
     "tables.mutation_rate"),
    (lambda: build_table(TorusShape.build([3, 3]), "genetic", seed=-1), "tables.seed"),
    (lambda: build_table(TorusShape.build([3, 3]), "bfs", augment="yes"), "tables.augment"),
])
def test_bad_parameters_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def run_cli(tmp_path, *overrides):
    return subprocess.run(
        [sys.executable, "-m", "jaxnet.cli.tables", *overrides, f"hydra.run.dir={tmp_path}"],
        capture_output=True, text=True, timeout=120)


def test_cli_prints_one_json_object_and_saves_the_table(tmp_path):
    done = run_cli(tmp_path, "topology=torus", "topology.sides=[4,2,2]",
                   "tables.algorithm=sssp", "format=json")
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)
    for key in ("max_channel_load", "min_channel_load", "sigma4", "max_route_length",
                "deadlock_free", "seconds"):
        assert key in metrics
    assert metrics["deadlock_free"] and metrics["max_route_length"] == 4
    assert load_table(tmp_path / "table.npz").directions.shape[:2] == (16, 16)


def test_cli_bad_parameter_is_one_line(tmp_path):
    done = run_cli(tmp_path, "tables.algorithm=dfs")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "tables.algorithm" in done.stderr
