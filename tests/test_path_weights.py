"""Path weights: LP optimum against brute force, Optax against the LP, weight format."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from jaxnet.paths.mcf import find_paths
from jaxnet.paths.weights import (
    dual_bound,
    link_loads,
    lp_weights,
    optax_dual_bound,
    optax_weights,
    random_demand,
    uniform_weights,
)
from jaxnet.topology import build_topology, from_graph


@pytest.fixture(scope="module")
def dragonfly_paths():
    topology = build_topology(dict(name="dragonfly", a=4, h=2))
    return find_paths(topology, 4, "multi_mcf_cyclic", cycles=3, seed=1)


def check_format(paths, weights):
    assert weights.dtype == np.float32 and weights.shape == (paths.n_pairs, paths.k)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    assert (weights[~paths.valid] == 0).all() and (weights >= 0).all()


def test_loads_match_a_direct_sum(dragonfly_paths):
    paths = dragonfly_paths
    demand = random_demand(paths, 3)
    weights = uniform_weights(paths).weights
    expected = np.zeros(paths.n_links)
    for pair, x, hop in zip(*np.nonzero(paths.path_links >= 0)):
        expected[paths.path_links[pair, x, hop]] += demand[pair] * weights[pair, x]
    np.testing.assert_allclose(link_loads(paths, weights, demand), expected, rtol=1e-6)


def test_lp_against_brute_force():
    """Triangle, k = 2 (direct and two-hop path), demand on two pairs: grid search."""
    paths = find_paths(from_graph(nx.complete_graph(3), "triangle", 1), 2, "multi_mcf")
    demand = np.zeros(paths.n_pairs)
    demand[[0, 2]] = [5.0, 3.0]  # pairs (0, 1) and (1, 0) in row-major order
    lp = lp_weights(paths, demand)
    check_format(paths, lp.weights)
    grid = np.linspace(0, 1, 201)
    best = np.inf
    base = uniform_weights(paths).weights.copy()
    for a, b in itertools.product(grid, grid):
        w = base.copy()
        w[0] = [a, 1 - a]
        w[2] = [b, 1 - b]
        best = min(best, link_loads(paths, w, demand).max())
    assert lp.max_load(paths, demand) <= best + 1e-9
    assert lp.max_load(paths, demand) >= best - 0.05
    assert lp.max_load(paths, demand) == pytest.approx(lp.info["objective"], rel=1e-6)


def test_lp_methods_agree_and_beat_uniform(dragonfly_paths):
    paths = dragonfly_paths
    demand = random_demand(paths, 1)
    ipm = lp_weights(paths, demand)
    simplex = lp_weights(paths, demand, method="highs-ds")
    check_format(paths, ipm.weights)
    assert ipm.max_load(paths, demand) == pytest.approx(simplex.max_load(paths, demand), rel=1e-6)
    assert ipm.max_load(paths, demand) <= uniform_weights(paths).max_load(paths, demand)


def test_optax_close_to_lp(dragonfly_paths):
    paths = dragonfly_paths
    demand = random_demand(paths, 1)
    learned = optax_weights(paths, demand)
    check_format(paths, learned.weights)
    ratio = learned.max_load(paths, demand) / lp_weights(paths, demand).max_load(paths, demand)
    assert 1.0 - 1e-6 <= ratio <= 1.02


def test_dual_bound_is_weak_and_strong_duality(dragonfly_paths):
    """Any prices bound the LP optimum from below; the LP's own dual prices reach it."""
    paths = dragonfly_paths
    demand = random_demand(paths, 1)
    lp = lp_weights(paths, demand)
    optimum = lp.max_load(paths, demand)
    rng = np.random.default_rng(0)
    for prices in [np.ones(paths.n_links), *rng.exponential(size=(5, paths.n_links))]:
        assert dual_bound(paths, demand, prices) <= optimum * (1 + 1e-9)
    assert dual_bound(paths, demand, lp.info["link_prices"]) == pytest.approx(optimum, rel=1e-6)


def test_optax_dual_bound_certifies_optax(dragonfly_paths):
    paths = dragonfly_paths
    demand = random_demand(paths, 1)
    bound, _ = optax_dual_bound(paths, demand)
    optimum = lp_weights(paths, demand).max_load(paths, demand)
    assert optimum * 0.995 <= bound <= optimum * (1 + 1e-9)
    assert optax_weights(paths, demand).max_load(paths, demand) / bound <= 1.02


def test_dual_bound_rejects_bad_prices(dragonfly_paths):
    demand = random_demand(dragonfly_paths, 1)
    for prices in (np.ones(3), -np.ones(dragonfly_paths.n_links), np.zeros(dragonfly_paths.n_links)):
        with pytest.raises(ValueError, match="prices"):
            dual_bound(dragonfly_paths, demand, prices)


def test_uniform_weights_with_missing_paths():
    paths = find_paths(from_graph(nx.circular_ladder_graph(5), "ladder", 1), 4, "multi_mcf")
    assert not paths.valid.all()
    check_format(paths, uniform_weights(paths).weights)


@pytest.mark.parametrize(
    "kwargs, parameter",
    [(dict(steps=0), "paths.optax.steps"), (dict(learning_rate=0.0), "paths.optax.learning_rate"),
     (dict(temperature_end=1.0), "paths.optax.temperature_end")],
)
def test_bad_optax_parameters(dragonfly_paths, kwargs, parameter):
    with pytest.raises(ValueError, match=parameter):
        optax_weights(dragonfly_paths, random_demand(dragonfly_paths, 1), **kwargs)
    with pytest.raises(ValueError, match=parameter.replace("optax", "dual")):
        optax_dual_bound(dragonfly_paths, random_demand(dragonfly_paths, 1), **kwargs)


def test_demand_from_any_traffic_pattern():
    from jaxnet.paths.weights import traffic_demand
    from jaxnet.traffic import build_traffic

    topo = build_topology({"name": "dragonfly", "a": 3, "h": 1, "servers_per_router": 2})
    paths = find_paths(topo, k=2)
    uniform = traffic_demand(paths, build_traffic({"name": "uniform"}, topo, 1), topo.servers_per_router)
    # 2 servers per router, each sending to any of the S - 1 other servers: 2 x 2 / (S - 1)
    assert np.allclose(uniform, 2 * 2 / (topo.n_servers - 1))
    remote = traffic_demand(paths, build_traffic({"name": "uniform_other_router"}, topo, 1),
                            topo.servers_per_router)
    assert np.allclose(remote, 2 / (topo.n_routers - 1))  # 2 servers, spread over the others
    groups = traffic_demand(paths, build_traffic({"name": "adv_group", "offset": 1}, topo, 1),
                            topo.servers_per_router)
    target = (topo.group[paths.pair_src] + 1) % (topo.group.max() + 1) == topo.group[paths.pair_dst]
    assert np.allclose(groups[~target], 0) and np.allclose(groups[target], 2 / 3)
