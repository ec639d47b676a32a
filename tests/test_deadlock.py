"""Channel dependency graphs: known-cyclic and known-acyclic route sets."""
import numpy as np

from jaxnet.paths.deadlock import (
    channel_dependency_graph,
    dependencies,
    dependency_pairs,
    find_deadlock_cycle,
    is_deadlock_free,
)


def ring_routes_all_plus(n=4):
    """Shortest routes on a ring of n, ties and all taken in the + direction."""
    routes = []
    for s in range(n):
        for hops in range(1, n // 2 + 1):
            nodes = [(s + h) % n for h in range(hops + 1)]
            routes.append(list(zip(nodes, nodes[1:])))
    return routes


def test_plus_only_ring_routes_are_cyclic():
    cdg = channel_dependency_graph(dependencies(ring_routes_all_plus()))
    cycle = find_deadlock_cycle(cdg)
    assert cycle is not None and len(cycle) == 4
    for a, b in zip(cycle, cycle[1:] + cycle[:1]):  # the cycle really closes in the CDG
        assert cdg.has_edge(a, b)
    assert not is_deadlock_free(ring_routes_all_plus())


def test_straight_ring_cycle_is_tolerated_under_bubble_flow_control():
    same_ring = lambda a, b: True  # noqa: E731  (every dependency here goes straight on)
    assert is_deadlock_free(ring_routes_all_plus(), tolerated=same_ring)


def test_dateline_virtual_channels_break_the_ring_cycle():
    routes = []
    for s in range(4):
        for hops in (1, 2):
            nodes = [(s + h) % 4 for h in range(hops + 1)]
            vc, route = 0, []
            for u, v in zip(nodes, nodes[1:]):
                vc = 1 if u == 3 or vc else 0  # switch VC after crossing the 3 -> 0 dateline
                route.append((u, v, vc))
            routes.append(route)
    assert is_deadlock_free(routes)


def test_turn_cycle_is_found_even_when_straight_edges_are_tolerated():
    # four routes turning clockwise around a 2x2 square: a classic turn cycle
    square = [0, 1, 3, 2]
    routes = [[(square[i], square[(i + 1) % 4]), (square[(i + 1) % 4], square[(i + 2) % 4])]
              for i in range(4)]
    direction = {(0, 1): "+X", (1, 3): "+Y", (3, 2): "-X", (2, 0): "-Y"}
    straight = lambda a, b: direction[a] == direction[b]  # noqa: E731
    cdg = channel_dependency_graph(dependencies(routes))
    assert find_deadlock_cycle(cdg, tolerated=straight) is not None


def test_dependency_pairs_match_python_dependencies():
    routes = [[0, 1, 2], [2, 3], [5]]
    padded = np.array([[0, 1, 2], [2, 3, -1], [5, -1, -1]])
    assert {tuple(p) for p in dependency_pairs(padded).tolist()} == dependencies(routes)


def test_acyclic_line_routes():
    routes = [[(0, 1), (1, 2), (2, 3)], [(1, 2), (2, 3)], [(3, 2), (2, 1)]]
    assert is_deadlock_free(routes)
