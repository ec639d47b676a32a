"""Traffic patterns: distributions, destinations, own-switch policy and parameter errors."""
from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from omegaconf import OmegaConf

from jaxnet.topology import from_graph
from jaxnet.traffic import PATTERNS, build_traffic

CONF = Path(__file__).resolve().parents[1] / "conf" / "traffic"
P = 2  # servers per router in the test topologies


# ----- small topologies --------------------------------------------------------------
@pytest.fixture(scope="module")
def rrg():
    return from_graph(nx.random_regular_graph(4, 64, seed=2), "rrg64", P)


def dragonfly_topology(a: int = 4, h: int = 2):
    """Canonical Dragonfly with palm-tree global wiring; group g = routers g*a .. g*a+a-1."""
    groups = a * h + 1
    graph = nx.Graph()
    graph.add_nodes_from(range(groups * a))
    for g in range(groups):
        graph.add_edges_from((g * a + i, g * a + j) for i in range(a) for j in range(i))
        for i in range(a):
            for j in range(h):
                k = i * h + j + 1  # the group offset this global port reaches
                back = groups - k - 1  # the peer's port index towards g
                graph.add_edge(g * a + i, (g + k) % groups * a + back // h)
    group = np.arange(groups * a, dtype=np.int32) // a
    return from_graph(graph, f"dragonfly(a={a},h={h})", P, group=group)


@pytest.fixture(scope="module")
def dragonfly():
    return dragonfly_topology()


def grid_topology(sides, periodic, servers=P):
    """Torus or mesh on `sides` with coordinates (c0, c1) set on the record."""
    graph = nx.grid_graph(dim=list(sides), periodic=periodic)  # nodes are (c1, c0) tuples
    nodes = sorted(graph.nodes)
    graph = nx.relabel_nodes(graph, {node: r for r, node in enumerate(nodes)})
    coords = np.array([node[::-1] for node in nodes], np.int32)
    return from_graph(graph, f"grid{sides}", servers, coords=coords, sides=tuple(sides))


@pytest.fixture(scope="module")
def torus():
    return grid_topology((4, 4), periodic=True)


def own_router(topo):
    return np.arange(topo.n_servers) // topo.servers_per_router


def router_map(table, topo) -> np.ndarray:
    """Destination router per source server for deterministic tables (-1 when silent)."""
    matrix = table.router_matrix(topo.servers_per_router)
    assert np.all(np.isclose(matrix.max(axis=1), 1.0) | (table.rate == 0))
    return np.where(table.rate > 0, matrix.argmax(axis=1), -1)


def check_distribution(table, topo, own_allowed=False):
    """Rows are distributions; active rows never pick the own router unless allowed."""
    matrix = table.router_matrix(topo.servers_per_router)
    assert np.allclose(matrix.sum(axis=1), 1.0) and matrix.min() >= -1e-12
    active = table.rate > 0
    if not own_allowed:
        assert np.allclose(matrix[active, own_router(topo)[active]], 0.0)
    return matrix


# ----- every registered pattern from its conf file --------------------------------------
# patterns built on the papers' uniform (any other server) may pick the own router
OWN_ROUTER_ALLOWED = ("uniform", "all_to_all", "hot_region", "mixture", "server_permutation", "collective")
TOPOLOGY_FOR = {"adv_group": "dragonfly", "adv_local": "dragonfly", "tornado": "torus",
                "neighbour": "torus", "bit_complement": "torus", "transpose": "torus"}


@pytest.mark.parametrize("name", sorted(set(PATTERNS) - {"destination_table"}))
def test_conf_files_build(name, rrg, dragonfly, torus):
    cfg = OmegaConf.load(CONF / f"{name}.yaml")
    if name == "antmill":
        cfg.delta = 2  # skip the climb to the largest delta (seconds) in the fast tier
    topo = {"dragonfly": dragonfly, "torus": torus}.get(TOPOLOGY_FOR.get(name), rrg)
    table = build_traffic(cfg, topo, seed=0)
    assert table.entry_router.shape[0] == topo.n_servers
    check_distribution(table, topo, own_allowed=name in OWN_ROUTER_ALLOWED)


def test_patterns_are_fixed_per_seed(rrg):
    cfg = {"name": "switch_permutation", "distance": 2}
    first, again = build_traffic(cfg, rrg, seed=4), build_traffic(cfg, rrg, seed=4)
    other = build_traffic(cfg, rrg, seed=5)
    assert np.array_equal(first.entry_router, again.entry_router)
    assert not np.array_equal(first.entry_router, other.entry_router)


# ----- switch permutations ------------------------------------------------------------
@pytest.mark.parametrize("distance", [1, 2, 3])
def test_switch_permutation_at_distance(rrg, distance):
    table = build_traffic({"name": "switch_permutation", "distance": distance}, rrg, seed=1)
    dest = router_map(table, rrg)[:: P]
    assert sorted(dest) == list(range(rrg.n_routers))
    assert np.all(rrg.distances[np.arange(rrg.n_routers), dest] == distance)
    # server_map "same": server k of a router sends to server k of its destination
    assert np.array_equal(table.entry_server[:, 0], np.arange(rrg.n_servers) % P)


def test_neighbour_permutation(rrg):
    table = build_traffic({"name": "neighbour_permutation", "server_map": "random"}, rrg, seed=2)
    dest = router_map(table, rrg)[:: P]
    assert sorted(dest) == list(range(rrg.n_routers))
    assert np.all(rrg.distances[np.arange(rrg.n_routers), dest] == 1)
    assert np.all(table.entry_server == -1)


def test_switch_permutation_errors(rrg):
    with pytest.raises(ValueError, match="traffic.distance"):
        build_traffic({"name": "switch_permutation", "distance": 0}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.distance"):
        build_traffic({"name": "switch_permutation", "distance": rrg.diameter + 1}, rrg, seed=0)
    star = from_graph(nx.star_graph(4), "star", 1)  # leaves have no partner at distance 1 but the hub
    with pytest.raises(ValueError, match="traffic.distance=1 is invalid: .* no permutation"):
        build_traffic({"name": "neighbour_permutation"}, star, seed=0)
    with pytest.raises(ValueError, match="traffic.server_map"):
        build_traffic({"name": "switch_permutation", "server_map": "first"}, rrg, seed=0)


# ----- Ant Mill -----------------------------------------------------------------------
def cycle_behind(topo, dest, lam):
    """The cycle x_0 = 0, x_1, ... of a router map x_i -> x_{i+lam}, read off the map (and
    the graph) alone. lam prime to n: the orbit of x_0 is x_0, x_lam, x_2lam, ...; lam 2:
    x_1 is the one common neighbour of x_0 and x_2 (a unique 2-hop shortest path)."""
    n = topo.n_routers
    if math.gcd(lam, n) == 1:
        orbit = [0]
        while len(orbit) < n:
            orbit.append(int(dest[orbit[-1]]))
        return np.array(orbit)[np.arange(n) * pow(lam, -1, n) % n]
    assert lam == 2
    (middle,) = set(topo.graph[0]) & set(topo.graph[int(dest[0])])
    cycle = [0, middle]
    while len(cycle) < n:
        cycle.append(int(dest[cycle[-2]]))
    return np.array(cycle)


def check_hamiltonian(topo, cycle):
    """Every router once, consecutive routers adjacent (the last one to the first)."""
    assert sorted(cycle.tolist()) == list(range(topo.n_routers))
    assert np.all(topo.distances[cycle, np.roll(cycle, -1)] == 1)


@pytest.mark.parametrize("lam", [1, 2])
def test_antmill_follows_the_unique_cycle(rrg, lam):
    """(H, lam) with delta 2: a Hamiltonian cycle whose routers two steps apart are joined by
    exactly one shortest path (of 2 hops); every server goes lam steps along it."""
    table = build_traffic({"name": "antmill", "lam": lam, "delta": 2, "search_seed": 7}, rrg, seed=0)
    dest = router_map(table, rrg)[:: P]
    cycle = cycle_behind(rrg, dest, lam)
    check_hamiltonian(rrg, cycle)
    assert np.array_equal(dest[cycle], np.roll(cycle, -lam))
    two_ahead = np.roll(cycle, -2)
    assert np.all(rrg.distances[cycle, two_ahead] == 2) and np.all(rrg.path_counts[cycle, two_ahead] == 1)
    assert np.array_equal(table.entry_server[:, 0], np.arange(rrg.n_servers) % P)


def test_antmill_hat_variant_allows_long_lambda(rrg):
    """(H-hat, lam): any Hamiltonian cycle, so lam may exceed the unique-path depth."""
    table = build_traffic({"name": "antmill", "lam": 5, "unique": False, "search_seed": 1}, rrg, seed=0)
    dest = router_map(table, rrg)[:: P]
    cycle = cycle_behind(rrg, dest, 5)
    check_hamiltonian(rrg, cycle)
    assert np.array_equal(dest[cycle], np.roll(cycle, -5))
    assert (rrg.distances[cycle, np.roll(cycle, -5)] < 5).any()  # shortcuts: beyond any delta


def test_antmill_cycle_changes_with_the_simulation_seed(rrg):
    cfg = {"name": "antmill", "unique": False}
    assert not np.array_equal(build_traffic(cfg, rrg, seed=0).entry_router,
                              build_traffic(cfg, rrg, seed=1).entry_router)


def test_antmill_errors(rrg):
    with pytest.raises(ValueError, match="traffic.lam=3 is invalid: must be <= delta=2"):
        build_traffic({"name": "antmill", "lam": 3, "delta": 2, "search_seed": 7}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.lam"):
        build_traffic({"name": "antmill", "lam": 0}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.lam"):
        build_traffic({"name": "antmill", "lam": rrg.n_routers, "unique": False}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.delta"):
        build_traffic({"name": "antmill", "delta": 0}, rrg, seed=0)
    hamming = from_graph(nx.convert_node_labels_to_integers(
        nx.cartesian_product(nx.complete_graph(4), nx.complete_graph(4))), "hamming", 1)
    with pytest.raises(ValueError, match="traffic.delta=2 is invalid: no Hamiltonian cycle"):
        build_traffic({"name": "antmill", "delta": 2}, hamming, seed=0)


# ----- Dragonfly ----------------------------------------------------------------------
@pytest.mark.parametrize("offset", [1, 2, 8])
def test_adv_group_targets_group_plus_offset(dragonfly, offset):
    table = build_traffic({"name": "adv_group", "offset": offset}, dragonfly, seed=0)
    matrix = check_distribution(table, dragonfly)
    group = dragonfly.group
    n_groups, a = group.max() + 1, np.bincount(group)[0]
    source_group = group[own_router(dragonfly)]
    target = (group[None, :] == ((source_group + offset) % n_groups)[:, None])
    assert np.allclose(matrix, target / a)


def test_adv_local_targets_next_router_in_group(dragonfly):
    table = build_traffic({"name": "adv_local"}, dragonfly, seed=0)
    check_distribution(table, dragonfly)
    a = 4
    routers = np.arange(dragonfly.n_routers)
    expected = routers // a * a + (routers % a + 1) % a
    assert np.array_equal(router_map(table, dragonfly)[:: P], expected)
    assert np.all(table.entry_server == -1)  # a random server of that router


def test_dragonfly_patterns_need_groups(rrg, dragonfly):
    for name in ("adv_group", "adv_local"):
        with pytest.raises(ValueError, match=f"traffic.name='{name}'.*group"):
            build_traffic({"name": name}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.offset"):
        build_traffic({"name": "adv_group", "offset": 9}, dragonfly, seed=0)


# ----- Cartesian patterns ---------------------------------------------------------------
def coords_map(table, topo):
    dest = router_map(table, topo)[:: P]
    return {tuple(topo.coords[r]): (tuple(topo.coords[d]) if d >= 0 else None)
            for r, d in enumerate(dest)}


def test_tornado_neighbour_complement_on_torus(torus):
    tornado = coords_map(build_traffic({"name": "tornado"}, torus, seed=0), torus)
    assert tornado[(0, 0)] == (1, 1) and tornado[(3, 2)] == (0, 3)  # ceil(4/2) - 1 = 1
    neighbour = coords_map(build_traffic({"name": "neighbour"}, torus, seed=0), torus)
    assert neighbour[(3, 1)] == (0, 2)
    complement = coords_map(build_traffic({"name": "bit_complement"}, torus, seed=0), torus)
    assert complement[(0, 1)] == (3, 2) and complement[(2, 2)] == (1, 1)


def test_tornado_on_odd_ring_and_mesh():
    mesh = grid_topology((5, 3), periodic=False)
    tornado = coords_map(build_traffic({"name": "tornado"}, mesh, seed=0), mesh)
    assert tornado[(0, 0)] == (2, 1) and tornado[(4, 2)] == (1, 0)  # shifts 2 and 1
    complement = build_traffic({"name": "bit_complement"}, mesh, seed=0)
    centre = int(np.flatnonzero((mesh.coords == (2, 1)).all(axis=1))[0])
    assert np.all(complement.rate[centre * P:(centre + 1) * P] == 0)  # fixed point: silent
    assert (complement.rate > 0).sum() == (mesh.n_routers - 1) * P


def test_transpose_swaps_and_silences_the_diagonal(torus):
    table = build_traffic({"name": "transpose"}, torus, seed=0)
    mapping = coords_map(table, torus)
    assert mapping[(1, 3)] == (3, 1) and mapping[(2, 2)] is None
    assert (table.rate > 0).sum() == (torus.n_routers - 4) * P
    check_distribution(table, torus)


def test_cartesian_errors(rrg):
    for name in ("tornado", "transpose", "neighbour", "bit_complement"):
        with pytest.raises(ValueError, match=f"traffic.name='{name}'.*coords"):
            build_traffic({"name": name}, rrg, seed=0)
    with pytest.raises(ValueError, match="topology.sides"):
        build_traffic({"name": "transpose"}, grid_topology((4, 3), periodic=True), seed=0)
    with pytest.raises(ValueError, match="topology.sides"):
        build_traffic({"name": "tornado"}, grid_topology((2, 2), periodic=False), seed=0)


# ----- uniform variants ---------------------------------------------------------------
def uniform_router_matrix(topo, own_share):
    """Expected router matrix of a uniform pattern: `own_share` of the traffic to the own
    router's other servers, the rest spread evenly over the other routers."""
    s, n = topo.n_servers, topo.n_routers
    expected = np.full((s, n), (1 - own_share) / (n - 1))
    expected[np.arange(s), own_router(topo)] = own_share
    return expected


@pytest.mark.parametrize("name", ["uniform", "all_to_all"])
def test_uniform_is_any_other_server(rrg, name):
    """The papers' uniform: any other server, the own router's p - 1 included."""
    table = build_traffic({"name": name}, rrg, seed=0)
    matrix = check_distribution(table, rrg, own_allowed=True)
    s = rrg.n_servers
    assert np.allclose(matrix, uniform_router_matrix(rrg, (P - 1) / (s - 1)))


def test_uniform_other_router_never_picks_the_own_router(rrg):
    table = build_traffic({"name": "uniform_other_router"}, rrg, seed=0)
    matrix = check_distribution(table, rrg)
    assert np.allclose(matrix, uniform_router_matrix(rrg, 0.0))


@pytest.mark.parametrize("name", ["uniform", "uniform_other_router"])
def test_uniform_draws_on_device(name):
    """Destinations drawn on device: never the source itself; the own router's other servers
    with probability (p - 1) / (S - 1) for `uniform`, never for `uniform_other_router`."""
    import jax
    import jax.numpy as jnp

    from jaxnet.traffic.device import sample_destinations, stack_tables

    topo = grid_topology((3, 3), periodic=True, servers=4)
    s, p = topo.n_servers, topo.servers_per_router
    traffic = jax.tree_util.tree_map(lambda a: a[0], stack_tables([build_traffic({"name": name}, topo, 1)]))
    draw = jax.jit(jax.vmap(lambda c: sample_destinations(traffic, p, jnp.uint32(7), c, jnp.arange(s))[0]))
    dst = np.asarray(draw(jnp.arange(4000, dtype=jnp.int32)))  # [cycles, S]
    src = np.arange(s)[None, :]
    assert not np.any(dst == src)
    own = dst // p == src // p
    expected = (p - 1) / (s - 1) if name == "uniform" else 0.0
    n = dst.size
    assert abs(own.mean() - expected) < 4 * np.sqrt(expected * (1 - expected) / n) + 1e-12
    # every server receives evenly (each is a destination of the same number of sources)
    counts = np.bincount(dst.ravel(), minlength=s)
    assert counts.min() > 0.9 * counts.mean() and counts.max() < 1.1 * counts.mean()


@pytest.mark.parametrize("region", [0.125, 0.1])
def test_hot_region(rrg, region):
    fraction = 0.25
    table = build_traffic({"name": "hot_region", "fraction": fraction, "region": region}, rrg, seed=0)
    matrix = check_distribution(table, rrg, own_allowed=True)
    n_hot = round(region * rrg.n_servers)
    hot_servers = np.bincount(np.arange(n_hot) // P, minlength=rrg.n_routers)
    own = own_router(rrg)
    cold = hot_servers[own] == 0  # sources outside the region
    uniform = uniform_router_matrix(rrg, (P - 1) / (rrg.n_servers - 1))  # the papers' uniform
    expected = fraction * hot_servers / n_hot + (1 - fraction) * uniform
    assert np.allclose(matrix[cold], expected[cold])
    # a hot source spreads its hot share over the rest of the region, never its own router
    hot_source = int(np.flatnonzero(~cold)[0])
    hot_share = matrix[hot_source, :] - (1 - fraction) * uniform[hot_source]
    assert np.isclose(hot_share[own[hot_source]], 0.0)
    assert np.isclose(hot_share[hot_servers > 0].sum(), fraction)


@pytest.mark.parametrize("region", [0.125, 0.1])
def test_hot_region_spread(rrg, region):
    """`placement: spread` moves the region onto evenly spaced routers; every hot server
    receives what it receives in the first routers (a partial router last in both)."""
    tables = {placement: build_traffic({"name": "hot_region", "region": region, "placement": placement}, rrg, seed=0)
              for placement in ("first", "spread")}
    received = {placement: check_distribution(table, rrg, own_allowed=True).sum(axis=0)  # per router
                for placement, table in tables.items()}
    hot_routers = -(-round(region * rrg.n_servers) // P)
    spread = np.arange(hot_routers) * rrg.n_routers // hot_routers
    cold = received["first"][hot_routers:].max()
    assert (np.flatnonzero(received["first"] > cold + 1e-9) == np.arange(hot_routers)).all()
    assert (np.flatnonzero(received["spread"] > cold + 1e-9) == spread).all()
    assert np.allclose(np.sort(received["spread"]), np.sort(received["first"]))


def test_hot_region_errors(rrg):
    with pytest.raises(ValueError, match="traffic.fraction"):
        build_traffic({"name": "hot_region", "fraction": 1.5}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.region"):
        build_traffic({"name": "hot_region", "region": 0.0}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.placement=.*first, spread"):
        build_traffic({"name": "hot_region", "placement": "random"}, rrg, seed=0)


# ----- demand -------------------------------------------------------------------------
def test_random_demand(rrg):
    """Random integers 0..max_value (7) per ordered router pair, fixed by `seed`: row shares
    times row totals (the busiest row's total scales the rates) give back an integer matrix
    whose off-diagonal values are spread evenly over 0..7."""
    table = build_traffic({"name": "demand", "seed": 3}, rrg, seed=0)
    matrix = check_distribution(table, rrg)
    again = build_traffic({"name": "demand", "seed": 3}, rrg, seed=9)
    assert np.array_equal(again.alias_prob, table.alias_prob)  # fixed by `seed`, not the sim seed
    other = build_traffic({"name": "demand", "seed": 4}, rrg, seed=0)
    assert not np.allclose(other.router_matrix(P), matrix)
    n, max_value = rrg.n_routers, 7
    share, rate = matrix[::P], table.rate[::P].astype(np.float64)
    assert np.allclose(matrix, np.repeat(share, P, axis=0))  # all servers of a router alike

    def scaled(busiest_total):
        return share * (rate * busiest_total)[:, None]

    totals = [k for k in range(1, max_value * n) if np.allclose(scaled(k), np.round(scaled(k)), atol=1e-3)]
    demand = np.round(scaled(totals[0]))
    assert demand.sum(axis=1).max() == totals[0] and np.all(np.diag(demand) == 0)
    values = demand[~np.eye(n, dtype=bool)].astype(int)
    assert values.min() == 0 and values.max() == max_value
    # n (n - 1) = 4032 draws: each value's share is 1/8 with standard deviation 0.005
    assert np.allclose(np.bincount(values) / values.size, 1 / (max_value + 1), atol=0.025)


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_demand_from_file(rrg, tmp_path, suffix):
    n = rrg.n_routers
    rows = np.zeros((n, n))
    rows[np.arange(n), (np.arange(n) + 1) % n] = 3.0
    rows[np.arange(n), (np.arange(n) + 2) % n] = 1.0
    rows[0] = 0.0  # router 0 is silent
    path = tmp_path / f"demand{suffix}"
    np.save(path, rows) if suffix == ".npy" else np.savetxt(path, rows, delimiter=",")
    table = build_traffic({"name": "demand", "file": str(path)}, rrg, seed=0)
    matrix = check_distribution(table, rrg)
    assert np.allclose(matrix[P, 2], 0.75) and np.allclose(matrix[P, 3], 0.25)
    assert np.all(table.rate[:P] == 0) and np.all(table.rate[P:] == 1)


def test_demand_errors(rrg, tmp_path):
    n = rrg.n_routers
    np.save(tmp_path / "small.npy", np.ones((3, 3)) - np.eye(3))
    with pytest.raises(ValueError, match="traffic.file.*must be 64 x 64"):
        build_traffic({"name": "demand", "file": str(tmp_path / "small.npy")}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.file.*no such file"):
        build_traffic({"name": "demand", "file": str(tmp_path / "missing.csv")}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.file.*npy or .csv"):
        build_traffic({"name": "demand", "file": "demand.txt"}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.matrix.*diagonal"):
        build_traffic({"name": "demand", "matrix": np.ones((n, n)).tolist()}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.matrix.*>= 0"):
        build_traffic({"name": "demand", "matrix": (-np.ones((n, n)) + np.eye(n)).tolist()}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.matrix"):
        build_traffic({"name": "demand", "matrix": [[0, 1], [1]]}, rrg, seed=0)


# ----- mixture ------------------------------------------------------------------------
def test_mixture_superposes(rrg):
    """1 : 3 of uniform and a neighbour permutation: the matrix less a quarter of uniform's
    is 3/4 of a 0/1 matrix sending every router's servers to one neighbour, a permutation
    of the routers (which one the seed decides)."""
    parts = [{"name": "uniform"}, {"name": "neighbour_permutation"}]
    cfg = {"name": "mixture", "patterns": parts, "weights": [1, 3]}
    mixed = build_traffic(cfg, rrg, seed=5)
    matrix = check_distribution(mixed, rrg, own_allowed=True)
    assert np.allclose(mixed.rate, 1.0)
    permutation = (matrix - 0.25 * uniform_router_matrix(rrg, (P - 1) / (rrg.n_servers - 1))) / 0.75
    dest = permutation.argmax(axis=1)
    assert np.allclose(permutation, np.eye(rrg.n_routers)[dest])
    assert np.array_equal(dest, np.repeat(dest[::P], P))  # all servers of a router alike
    assert sorted(dest[::P]) == list(range(rrg.n_routers))
    assert np.all(rrg.distances[np.arange(rrg.n_routers), dest[::P]] == 1)
    assert not np.allclose(build_traffic(cfg, rrg, seed=6).router_matrix(P), matrix)


def test_mixture_weights_rates(rrg):
    n = rrg.n_routers
    rows = np.zeros((n, n))
    rows[np.arange(n), (np.arange(n) + 1) % n] = 1.0
    rows[: n // 2] = 0.0  # half the routers silent in the demand part
    cfg = OmegaConf.create({"name": "mixture", "weights": [1, 1],
                            "patterns": [{"name": "uniform"}, {"name": "demand", "matrix": rows.tolist()}]})
    table = build_traffic(cfg, rrg, seed=0)
    half = n // 2 * P
    assert np.allclose(table.rate[:half], 0.5) and np.allclose(table.rate[half:], 1.0)
    check_distribution(table, rrg, own_allowed=True)


def test_mixture_errors(rrg):
    with pytest.raises(ValueError, match="traffic.weights"):
        build_traffic({"name": "mixture", "patterns": [{"name": "uniform"}], "weights": [1, 2]}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.weights"):
        build_traffic({"name": "mixture", "patterns": [{"name": "uniform"}], "weights": [-1]}, rrg, seed=0)
    with pytest.raises(ValueError, match="traffic.patterns"):
        build_traffic({"name": "mixture", "patterns": []}, rrg, seed=0)
    with pytest.raises(ValueError, match=r"traffic.patterns\[1\].name"):
        build_traffic({"name": "mixture", "patterns": [{"name": "uniform"}, {"name": "nope"}]}, rrg, seed=0)
