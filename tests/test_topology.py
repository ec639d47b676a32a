"""Topology builders: port wiring, degrees, parameter errors, Galois fields, graph files."""
from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import yaml

from jaxnet.topology import TOPOLOGIES, build_topology
from jaxnet.topology.base import from_graph
from jaxnet.topology.cartesian import MINUS, PLUS, cartesian_ports, hamming_ports
from jaxnet.topology.dragonfly import consecutive_wiring, palmtree_wiring
from jaxnet.topology.export import FORMATS, export_topology
from jaxnet.topology.galois import galois_field, prime_power
from jaxnet.topology.rrg import (
    connected_samples,
    medoid_index,
    minimal_link_load,
    sample_point,
)
from jaxnet.topology.slimfly import generator_sets

CONF = Path(__file__).resolve().parents[1] / "conf" / "topology"
# (config, expected router count, expected set of degrees)
SMALL = [
    (dict(name="rrg", routers=16, degree=3, seed=2), 16, {3}),
    (dict(name="rrg", routers=12, degree=5, seed=1, medoid_of=4), 12, {5}),
    (dict(name="rrg", routers=5, degree=4), 5, {4}),
    (dict(name="dragonfly", a=4, h=2), 36, {5}),
    (dict(name="dragonfly", a=4, h=2, groups=5), 20, {5}),
    (dict(name="dragonfly", a=3, h=2, groups=4, arrangement="random", seed=3), 12, {4}),
    (dict(name="dragonfly", a=2, h=1, arrangement="random"), 6, {2}),
    (dict(name="slimfly", q=3), 18, {5}),
    (dict(name="slimfly", q=4), 32, {6}),
    (dict(name="slimfly", q=5), 50, {7}),
    (dict(name="slimfly", q=8), 128, {12}),
    (dict(name="slimfly", q=9), 162, {13}),
    (dict(name="projective", q=2), 14, {3}),
    (dict(name="projective", q=4), 42, {5}),
    (dict(name="demiprojective", q=3), 13, {3, 4}),
    (dict(name="demiprojective", q=9), 91, {9, 10}),
    (dict(name="hamming", sides=[3, 4]), 12, {5}),
    (dict(name="hamming", sides=[2, 2, 2]), 8, {3}),
    (dict(name="torus", sides=[4, 3]), 12, {4}),
    (dict(name="torus", sides=[2, 3, 5]), 30, {5}),
    (dict(name="torus", sides=[6]), 6, {2}),
    (dict(name="mesh", sides=[3, 4]), 12, {2, 3, 4}),
    (dict(name="mesh", sides=[2]), 2, {1}),
]


def _id(case):
    cfg = case[0]
    return ",".join(f"{k}={v}" for k, v in cfg.items())


def _check_wiring(topo):
    """Ports reciprocal, packed, classed; the graph connected, simple."""
    used = topo.neighbor >= 0
    r, p = np.nonzero(used)
    n, q = topo.neighbor[r, p], topo.peer_port[r, p]
    assert (topo.neighbor[n, q] == r).all()
    assert (topo.peer_port[n, q] == p).all()
    assert (topo.link_class[n, q] == topo.link_class[r, p]).all()
    assert (topo.link_class[used] >= 0).all()
    assert (topo.peer_port[~used] == -1).all() and (topo.link_class[~used] == -1).all()
    # ports are packed: used ports first, then -1 padding
    assert (np.sort(~used, axis=1) == ~used).all()
    assert nx.is_connected(topo.graph) and nx.number_of_selfloops(topo.graph) == 0
    assert topo.graph.number_of_edges() == used.sum() // 2  # no parallel links


@pytest.mark.parametrize("cfg,routers,degrees", SMALL, ids=[_id(c) for c in SMALL])
def test_ports_are_reciprocal_and_degrees_as_expected(cfg, routers, degrees):
    topo = build_topology(dict(cfg, servers_per_router=2))
    _check_wiring(topo)
    assert topo.n_routers == routers and set(topo.degrees.tolist()) == degrees
    assert topo.n_servers == 2 * routers


@pytest.mark.parametrize("name", sorted(set(TOPOLOGIES) - {"file"}))
def test_every_registered_topology_builds_from_its_config(name):
    """A new topology is covered from its registry line and its yaml (`file` needs a file:
    tests/test_topology.py's graph-file tests)."""
    _check_wiring(build_topology(yaml.safe_load((CONF / f"{name}.yaml").read_text())))


def test_distances_and_path_counts_match_networkx():
    topo = build_topology(dict(name="rrg", routers=30, degree=4, seed=5))
    lengths = dict(nx.all_pairs_shortest_path_length(topo.graph))
    expected = np.array([[lengths[u][v] for v in range(30)] for u in range(30)])
    assert (topo.distances == expected).all()
    for u, v in [(0, 17), (3, 29), (11, 12)]:
        assert topo.path_counts[u, v] == len(list(nx.all_shortest_paths(topo.graph, u, v)))


# ----- parameter errors ---------------------------------------------------------------
BAD = [
    (dict(name="rrg", routers=9, degree=3), "topology.degree"),  # routers * degree odd
    (dict(name="rrg", routers=8, degree=8), "topology.degree"),  # degree >= routers
    (dict(name="rrg", routers=0, degree=3), "topology.routers"),
    (dict(name="rrg", routers=8, degree=-2), "topology.degree"),
    (dict(name="rrg", routers=8, degree=3, medoid_of=0), "topology.medoid_of"),
    (dict(name="rrg", routers=8, degree=3, servers_per_router=0), "topology.servers_per_router"),
    (dict(name="rrg", routers=12.5, degree=3), "topology.routers"),
    (dict(name="rrg", routers=8, degree=3, colour="red"), "topology.colour"),
    (dict(name="dragonfly", a=0, h=2), "topology.a"),
    (dict(name="dragonfly", a=4, h=2, groups=4), "topology.groups"),  # 3 does not divide 8
    (dict(name="dragonfly", a=4, h=2, groups=10), "topology.groups"),  # > a*h+1
    (dict(name="dragonfly", a=4, h=2, groups=2), "topology.groups"),  # parallel links
    (dict(name="dragonfly", a=4, h=2, arrangement="star"), "topology.arrangement"),
    (dict(name="slimfly", q=6), "topology.q"),  # not a prime power
    (dict(name="slimfly", q=2), "topology.q"),  # q = 2 mod 4
    (dict(name="slimfly", q=0), "topology.q"),
    (dict(name="projective", q=10), "topology.q"),
    (dict(name="demiprojective", q=1), "topology.q"),
    (dict(name="torus", sides=[4, 1]), "topology.sides"),
    (dict(name="mesh", sides=[]), "topology.sides"),
    (dict(name="hamming", sides=4), "topology.sides"),
    (dict(name="file", path="/no/such/file.edgelist"), "topology.path"),
    (dict(name="nope"), "topology.name"),
]


@pytest.mark.parametrize("cfg,parameter", BAD, ids=[_id(c) for c in BAD])
def test_bad_parameters_raise_value_error_naming_the_parameter(cfg, parameter):
    with pytest.raises(ValueError, match=f"^{parameter}="):
        build_topology(cfg)


# ----- finite fields and Slim Fly -----------------------------------------------------
def test_prime_power():
    powers = [q for q in range(1, 33) if prime_power(q)]
    assert powers == [2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27, 29, 31, 32]
    assert prime_power(81) == (3, 4) and prime_power(97) == (97, 1) and prime_power(12) is None


@pytest.mark.parametrize("q", [2, 3, 4, 5, 8, 9, 16, 25, 27])
def test_galois_field_axioms(q):
    field = galois_field(q)
    x, y, z = np.meshgrid(*(np.arange(q),) * 3, indexing="ij")
    add, mul = field.add, field.mul
    assert (add[x, add[y, z]] == add[add[x, y], z]).all()
    assert (mul[x, mul[y, z]] == mul[mul[x, y], z]).all()
    assert (mul[x, add[y, z]] == add[mul[x, y], mul[x, z]]).all()
    assert (add == add.T).all() and (mul == mul.T).all()
    assert (add[np.arange(q), field.neg] == 0).all()
    assert all(sorted(mul[a, 1:]) == list(range(1, q)) for a in range(1, q))  # inverses exist


@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 11, 13, 16, 19, 25, 27])
def test_slimfly_primitive_element_has_order_q_minus_1(q):
    field = galois_field(q)
    xi = field.primitive_element
    assert field.multiplicative_order(xi) == q - 1
    assert sorted(field.powers(xi).tolist()) == list(range(1, q))


@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9])
def test_slimfly_generator_sets_and_diameter(q):
    delta = (q + 1) % 4 - 1
    x_set, x_prime_set = generator_sets(galois_field(q))
    assert len(set(x_set.tolist())) == len(set(x_prime_set.tolist())) == (q - delta) // 2
    topo = build_topology(dict(name="slimfly", q=q))
    assert topo.diameter == 2 and topo.n_routers == 2 * q * q


def test_slimfly_q5_is_the_hoffman_singleton_graph():
    topo = build_topology(dict(name="slimfly", q=5))
    assert topo.n_routers == 50 and set(topo.degrees.tolist()) == {7}
    assert topo.diameter == 2 and nx.girth(topo.graph) == 5


# ----- projective ---------------------------------------------------------------------
@pytest.mark.parametrize("q", [2, 3, 4, 5])
def test_projective_planes(q):
    levi = build_topology(dict(name="projective", q=q))
    assert levi.n_routers == 2 * (q * q + q + 1) and levi.diameter == 3
    assert nx.is_bipartite(levi.graph) and nx.girth(levi.graph) == 6
    polar = build_topology(dict(name="demiprojective", q=q))
    assert polar.n_routers == q * q + q + 1 and polar.diameter == 2
    assert (polar.degrees == q).sum() == q + 1  # absolute points lose their self-loop


# ----- Dragonfly ----------------------------------------------------------------------
@pytest.mark.parametrize("wiring_of", [palmtree_wiring, consecutive_wiring])
@pytest.mark.parametrize("a,h,groups", [(4, 2, 9), (4, 2, 5), (4, 2, 3), (6, 3, 19), (12, 6, 73)])
def test_dragonfly_wiring_is_an_involution(wiring_of, a, h, groups):
    wiring = wiring_of(a, h, groups)
    back = wiring[wiring[..., 0], wiring[..., 1]]
    g, k = np.meshgrid(np.arange(groups), np.arange(a * h), indexing="ij")
    assert (back[..., 0] == g).all() and (back[..., 1] == k).all()
    assert (wiring[..., 0] != g).all()


@pytest.mark.parametrize("arrangement", ["palmtree", "consecutive", "random"])
def test_dragonfly_groups_ports_and_link_classes(arrangement):
    a, h, groups = 4, 2, 9
    topo = build_topology(dict(name="dragonfly", a=a, h=h, arrangement=arrangement, seed=7))
    assert topo.link_class_names == ("local", "global")
    assert (topo.group == np.arange(a * groups) // a).all()
    same_group = topo.group[topo.neighbor] == topo.group[:, None]
    assert same_group[:, : a - 1].all() and not same_group[:, a - 1 :].any()
    assert (topo.link_class[:, : a - 1] == 0).all() and (topo.link_class[:, a - 1 :] == 1).all()
    # exactly one global link between every pair of groups
    pairs = {frozenset((int(topo.group[r]), int(topo.group[v])))
             for r in range(topo.n_routers) for v in topo.neighbor[r, a - 1 :]}
    assert len(pairs) == groups * (groups - 1) // 2
    assert topo.summary()["links_by_class"] == {"local": groups * 6, "global": groups * a * h // 2}


def test_dragonfly_palmtree_port_order_follows_the_wiring():
    a, h = 3, 2
    topo = build_topology(dict(name="dragonfly", a=a, h=h))
    wiring = palmtree_wiring(a, h, a * h + 1)
    for r in range(topo.n_routers):
        g, i = divmod(r, a)
        for j in range(h):
            target_group, target_port = wiring[g, i * h + j]
            assert topo.neighbor[r, a - 1 + j] == target_group * a + target_port // h
            assert topo.peer_port[r, a - 1 + j] == a - 1 + target_port % h


def test_dragonfly_consecutive_arrangement_is_fogsims():
    """FOGSim without its palm-tree configuration: the link from group g to group t leaves
    from router offset // h of g, where offset counts the groups other than g below t."""
    a, h = 4, 2
    topo = build_topology(dict(name="dragonfly", a=a, h=h, arrangement="consecutive"))
    for g in range(a * h + 1):
        for t in range(a * h + 1):
            if t != g:
                offset = t - 1 if t > g else t
                router, port = g * a + offset // h, a - 1 + offset % h
                assert topo.group[topo.neighbor[router, port]] == t


def test_dragonfly_random_arrangement_depends_on_seed():
    cfg = dict(name="dragonfly", a=4, h=2, arrangement="random")
    first = build_topology(dict(cfg, seed=1)).neighbor
    assert (build_topology(dict(cfg, seed=1)).neighbor == first).all()
    assert (build_topology(dict(cfg, seed=2)).neighbor != first).any()


# ----- Cartesian ----------------------------------------------------------------------
def test_cartesian_coordinates_are_mixed_radix_coordinate_0_fastest():
    topo = build_topology(dict(name="mesh", sides=[3, 4, 2]))
    strides = np.array([1, 3, 12])
    assert (topo.coords @ strides == np.arange(24)).all()
    assert topo.sides == (3, 4, 2) and (topo.coords < np.array([3, 4, 2])).all()


@pytest.mark.parametrize("name,sides", [("torus", [4, 3, 2]), ("mesh", [3, 4]), ("torus", [5])])
def test_cartesian_ports_point_one_step_along_a_dimension(name, sides):
    topo = build_topology(dict(name=name, sides=sides))
    ports = cartesian_ports(topo)
    for r in range(topo.n_routers):
        expected_order = [ports[r, d, s] for d in range(len(sides)) for s in (PLUS, MINUS)
                          if ports[r, d, s] >= 0]
        assert expected_order == list(range(topo.degrees[r]))  # +d then -d, dimension order
        for d, side in enumerate(sides):
            for sign, step in ((PLUS, 1), (MINUS, -1)):
                target = topo.coords[r].copy()
                target[d] += step
                if name == "torus" and side >= 3:
                    target[d] %= side
                exists = 0 <= target[d] < side
                port = ports[r, d, sign]
                assert (port >= 0) == exists
                if exists:
                    assert (topo.coords[topo.neighbor[r, port]] == target).all()


def test_torus_side_2_is_a_single_link():
    topo = build_topology(dict(name="torus", sides=[2, 4]))
    assert set(topo.degrees.tolist()) == {3}
    ports = cartesian_ports(topo)
    assert (ports[topo.coords[:, 0] == 0, 0, MINUS] == -1).all()
    assert (ports[topo.coords[:, 0] == 1, 0, PLUS] == -1).all()


def test_hamming_ports_reach_every_other_coordinate_value():
    topo = build_topology(dict(name="hamming", sides=[3, 4]))
    ports = hamming_ports(topo)
    for r in range(topo.n_routers):
        order = [ports[r, d, v] for d, side in enumerate((3, 4)) for v in range(side)
                 if v != topo.coords[r, d]]
        assert order == list(range(5))
        for d, v in [(0, 2), (1, 3)]:
            if topo.coords[r, d] != v:
                reached = topo.coords[topo.neighbor[r, ports[r, d, v]]]
                assert reached[d] == v
                assert (np.delete(reached, d) == np.delete(topo.coords[r], d)).all()


def test_cartesian_ports_rejects_non_cartesian_topologies():
    with pytest.raises(ValueError, match="topology="):
        cartesian_ports(build_topology(dict(name="slimfly", q=3)))


# ----- RRG sampling and medoid --------------------------------------------------------
def test_rrg_is_reproducible_and_seed_dependent():
    cfg = dict(name="rrg", routers=20, degree=3)
    first = build_topology(dict(cfg, seed=4)).neighbor
    assert (build_topology(dict(cfg, seed=4)).neighbor == first).all()
    assert (build_topology(dict(cfg, seed=5)).neighbor != first).any()


def test_rrg_keeps_the_medoid_of_its_connected_samples():
    samples = [from_graph(g, "sample", 1) for g in connected_samples(14, 3, 9, 5)]
    cfg = dict(name="rrg", routers=14, degree=3, seed=9)
    alone = build_topology(dict(cfg, medoid_of=1))
    pooled = build_topology(dict(cfg, medoid_of=5))
    medoid = medoid_index(np.array([sample_point(t) for t in samples]))
    assert (alone.neighbor == samples[0].neighbor).all()
    assert (pooled.neighbor == samples[medoid].neighbor).all()
    assert pooled.params["medoid_of"] == 5


def test_minimal_link_load_is_networkx_edge_betweenness():
    topo = build_topology(dict(name="rrg", routers=24, degree=4, seed=3))
    load = minimal_link_load(topo)
    for (u, v), value in nx.edge_betweenness_centrality(topo.graph, normalized=False).items():
        pu, pv = list(topo.neighbor[u]).index(v), list(topo.neighbor[v]).index(u)
        assert load[u, pu] + load[v, pv] == pytest.approx(2 * value)
    assert load.sum() == pytest.approx(topo.distances.sum())


def test_medoid_index_scales_coordinates_and_breaks_ties_low():
    # x varies ~100 times more than y: unscaled, x alone would decide and pick (200, 3)
    points = np.array([[400.0, 0.0], [200.0, 3.0], [400.0, 2.0], [100.0, 1.0]])
    assert medoid_index(points) == 2
    assert medoid_index(np.array([[2.0, 1.0], [2.0, 1.0]])) == 0
    assert medoid_index(np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])) == 1


# ----- graph files --------------------------------------------------------------------
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("cfg", [dict(name="dragonfly", a=3, h=1),
                                 dict(name="torus", sides=[3, 4])])
def test_export_import_round_trip(tmp_path, cfg, format):
    topo = build_topology(cfg)
    path = export_topology(topo, tmp_path / f"graph.{format}")
    again = build_topology(dict(name="file", path=str(path), servers_per_router=3))
    assert again.n_servers == 3 * topo.n_routers
    assert set(map(frozenset, again.graph.edges)) == set(map(frozenset, topo.graph.edges))
    assert (again.distances == topo.distances).all()
    if format == "graphml":
        assert set(again.link_class_names) == set(topo.link_class_names)
        assert nx.get_edge_attributes(again.graph, "link_class") == \
            nx.get_edge_attributes(topo.graph, "link_class")


def test_export_format_can_be_given_explicitly(tmp_path):
    topo = build_topology(dict(name="mesh", sides=[2, 2]))
    path = export_topology(topo, tmp_path / "graph.dat", "adjlist")
    again = build_topology(dict(name="file", path=str(path), format="adjlist"))
    assert again.graph.number_of_edges() == 4
    with pytest.raises(ValueError, match="^export="):
        export_topology(topo, tmp_path / "graph.dat")


def test_file_labels_are_relabelled_in_numeric_order(tmp_path):
    path = tmp_path / "star.edges"
    path.write_text("10 2\n10 9\n2 9 1.5\n10 30\n")  # extra columns are ignored
    topo = build_topology(dict(name="file", path=str(path)))
    # labels 2, 9, 10, 30 -> 0, 1, 2, 3
    assert sorted(map(sorted, topo.graph.edges)) == [[0, 1], [0, 2], [1, 2], [2, 3]]


@pytest.mark.parametrize("name,text", [
    ("bad.edgelist", "0 1\n2 3\n"),  # disconnected
    ("bad.edgelist", "0 0\n0 1\n"),  # self-loop
    ("bad.graphml", "<graphml><no"),  # malformed
])
def test_file_rejects_disconnected_looped_or_malformed_graphs(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match="^topology.path="):
        build_topology(dict(name="file", path=str(path)))


def test_file_rejects_unknown_suffix_and_format(tmp_path):
    path = tmp_path / "graph.xyz"
    path.write_text("0 1\n")
    with pytest.raises(ValueError, match="^topology.path="):
        build_topology(dict(name="file", path=str(path)))
    with pytest.raises(ValueError, match="^topology.format="):
        build_topology(dict(name="file", path=str(path), format="gml"))
