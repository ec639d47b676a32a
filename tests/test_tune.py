"""Path-weight strategies, the latency surrogate, the closed loop with the simulator and
tuned routing parameters (jaxnet.paths.surrogate, jaxnet.routing.path_weights, jaxnet.tune)."""
import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import count_compilations, simulate_cfg

from jaxnet import build
from jaxnet.cli.experiment import sweep_jobs
from jaxnet.paths.surrogate import (
    SurrogateModel,
    calibrate,
    latency_objective,
    latency_weights,
    predict_latency,
    queue_wait,
    saturation_load,
)
from jaxnet.results.summary import latency_at, saturation_table
from jaxnet.routing import ROUTINGS, build_routing
from jaxnet.routing.path_weights import path_set, pattern_demand, strategy_weights
from jaxnet.routing.polarized import WEIGHTS
from jaxnet.routing.route_tables import with_weights
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import TOPOLOGIES, build_topology
from jaxnet.traffic import PATTERNS, build_traffic
from jaxnet.tune import resolve_weights
from jaxnet.tune.closed_loop import closed_loop
from jaxnet.tune.routing_params import TUNABLE, measure_value
from jaxnet.tune.simulation import measure, with_tables
from jaxnet.tune.spsa import spsa

DRAGONFLY = {"name": "dragonfly", "a": 4, "h": 2, "servers_per_router": 2}
RRG = {"name": "rrg", "routers": 12, "degree": 4, "seed": 1, "medoid_of": 1, "servers_per_router": 2}
PATHS = {"k": 3, "cycles": 1}
ROUTER = RouterSpec(vcs="auto")
WINDOW = SimSpec(warmup=200, measure=600, chunk=400)


@pytest.fixture(scope="module")
def rrg():
    topo = build_topology(RRG)
    paths = path_set(topo, PATHS)
    return topo, paths, pattern_demand(paths, topo, {"name": "uniform"}, [1])


def _check_distribution(paths, weights):
    assert weights.shape == paths.valid.shape and weights.dtype == np.float32
    assert (weights >= 0).all() and (weights[~paths.valid] == 0).all()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)


def test_queue_wait_is_md1_then_its_tangent():
    rho = jnp.asarray([0.0, 0.3, 0.6, 0.9])
    np.testing.assert_allclose(queue_wait(rho, 16.0), 16 * rho / (2 * (1 - rho)), rtol=1e-6)
    corner = 0.95 * 0.8
    below, above = queue_wait(corner - 1e-4, 16.0, 0.8), queue_wait(corner + 1e-4, 16.0, 0.8)
    assert abs(float(above - below)) < 1.0  # continuous at the knee
    slope = jax.grad(lambda r: queue_wait(r, 16.0, 0.8))
    assert float(slope(corner - 1e-5)) == pytest.approx(float(slope(corner + 1.0)), rel=0.01)  # C1
    assert float(queue_wait(2.0, 16.0, 0.8)) < np.inf  # overloaded links stay finite


@pytest.mark.parametrize("load", [0.3, 0.9])  # below and past the busiest link's knee
def test_surrogate_gradients_match_finite_differences(rrg, load):
    """jax.grad of the latency objective against central differences (in float64), along
    random directions of the logits and in capacity and queue scale (what calibrate fits)."""
    topo, paths, demand = rrg
    model = SurrogateModel.for_router(topo, ROUTER)
    rng = np.random.default_rng(3)
    with jax.enable_x64(True):
        theta = jnp.asarray(rng.normal(size=paths.valid.shape)).at[:, 0].add(2.0)  # mostly the first path
        f = latency_objective(paths, demand, model, load)
        grad = jax.grad(f, argnums=(0, 1, 2))(theta, 0.9, 1.2)
        h = 1e-5
        for _ in range(6):
            d = jnp.asarray(rng.normal(size=theta.shape)) * paths.valid
            numeric = (float(f(theta + h * d, 0.9, 1.2)) - float(f(theta - h * d, 0.9, 1.2))) / (2 * h)
            assert float(jnp.sum(grad[0] * d)) == pytest.approx(numeric, rel=1e-4)
        for i, step in ((1, (h, 0.0)), (2, (0.0, h))):
            up, down = f(theta, 0.9 + step[0], 1.2 + step[1]), f(theta, 0.9 - step[0], 1.2 - step[1])
            assert float(grad[i]) == pytest.approx((float(up) - float(down)) / (2 * h), rel=1e-4)
        assert float(f(theta, 0.9, 1.2)) > 0


def test_latency_weights_lower_the_surrogate_and_are_distributions(rrg):
    topo, paths, demand = rrg
    model = SurrogateModel.for_router(topo, ROUTER)
    lp = strategy_weights("lp", paths, demand)
    target = 0.8 * saturation_load(paths, lp, demand)
    fitted = latency_weights(paths, demand, model, min(target, 1.0), steps=300, init=lp).weights
    _check_distribution(paths, fitted)
    for name in ("uniform", "shortest", "inverse_length", "lp", "optax_max_load"):
        other = strategy_weights(name, paths, demand)
        _check_distribution(paths, other)
        assert (predict_latency(paths, fitted, demand, model, [min(target, 1.0)])[0]
                <= predict_latency(paths, other, demand, model, [min(target, 1.0)])[0] * 1.001)


def test_shortest_and_inverse_length_weights(rrg):
    _, paths, _ = rrg
    shortest = strategy_weights("shortest", paths, None)
    length = np.where(paths.valid, paths.length, 99)
    assert ((shortest > 0) == (length == length.min(axis=1, keepdims=True))).all()
    inverse = strategy_weights("inverse_length", paths, None)
    row = int(np.argmax(np.ptp(np.where(paths.valid, paths.length, 0), axis=1)))
    ratio = inverse[row] / inverse[row].max()
    np.testing.assert_allclose(ratio[paths.valid[row]], length[row].min() / length[row][paths.valid[row]], rtol=1e-5)


def test_surrogate_matches_the_simulator_at_light_load(rrg):
    """At light load the model is the router's own timing (within 5 % of the simulation), and
    the fluid link loads are what the links carried (up to the counting noise of a short run)."""
    topo, paths, demand = rrg
    network = build.network(topo, build_routing({"name": "table", "paths": PATHS}), ROUTER)
    weights = strategy_weights("shortest", paths, demand)
    result = measure(with_weights(network, weights, paths.valid), {"name": "uniform"}, [(0.1, 1), (0.3, 1)],
                     SimSpec(warmup=300, measure=3000, chunk=1100))
    predicted = predict_latency(paths, weights, demand, SurrogateModel.for_router(topo, ROUTER), [0.1])[0]
    assert predicted == pytest.approx(result.rows[0]["message_latency"], rel=0.05)
    flow = (demand.pair[:, None] * weights).ravel()
    rows, links = paths.incidence()
    expected = 0.3 * np.bincount(links, weights=flow[rows], minlength=paths.n_links)
    carried = result.link_util[1]
    assert carried.sum() == pytest.approx(expected.sum(), rel=0.05)
    assert np.abs(carried - expected).mean() < 0.25 * expected.mean()


def test_calibration_recovers_a_known_model(rrg):
    topo, paths, demand = rrg
    truth = dataclasses.replace(SurrogateModel.for_router(topo, ROUTER), capacity=0.8, queue_scale=1.5)
    weights = [strategy_weights(name, paths, demand) for name in ("uniform", "shortest")]
    loads = np.asarray([[0.1, 0.2, 0.3, 0.4]] * 2)
    latency = np.stack([predict_latency(paths, w, demand, truth, row) for w, row in zip(weights, loads)])
    fitted = calibrate(paths, demand, SurrogateModel.for_router(topo, ROUTER), weights, loads, latency, loads,
                       steps=600)
    assert fitted.capacity == pytest.approx(0.8, rel=0.05) and fitted.queue_scale == pytest.approx(1.5, rel=0.1)


def test_closed_loop_does_not_worsen_its_objective(rrg):
    """Two rounds from uniform weights on a 12-router network: the refitted weights'
    simulated latency at the target load is no higher than round 0's."""
    topo, paths, demand = rrg
    network = build.network(topo, build_routing({"name": "table", "paths": PATHS}), ROUTER)
    model = SurrogateModel.for_router(topo, ROUTER)
    target = round(0.8 * min(1.0, saturation_load(paths, strategy_weights("lp", paths, demand), demand)), 3)
    traffic = [build_traffic({"name": "uniform"}, topo, 1)] * 2
    best, rounds = closed_loop(network, paths, demand, traffic, model, strategy_weights("uniform", paths, demand),
                               target, [0.5, target], [11, 12], WINDOW, rounds=2, steps=300)
    assert len(rounds) == 2
    assert rounds[1].objective.mean() <= rounds[0].objective.mean()
    assert rounds[1].model.capacity != 1.0  # the simulation corrected the model
    _check_distribution(paths, rounds[1].weights)
    assert best is min(rounds, key=lambda r: r.objective.mean()).weights


def test_resolve_weights_writes_once_and_fills_in_the_demand(rrg, tmp_path):
    topo, paths, _ = rrg
    patterns = {"uniform": {"name": "uniform"}}
    assert resolve_weights({"name": "minimal"}, topo, ROUTER, patterns, [1], tmp_path) == {"name": "minimal"}
    lp = resolve_weights({"name": "table", "paths": PATHS, "weights": "lp"}, topo, ROUTER, patterns, [1, 2], tmp_path)
    assert lp["demand"] == {"name": "uniform"} and lp["demand_seeds"] == [1, 2] and "weights_file" not in lp
    cfg = {"name": "table", "paths": PATHS, "weights": "latency", "tune": {"steps": 200}}
    resolved = resolve_weights(cfg, topo, ROUTER, patterns, [1], tmp_path)
    file = tmp_path / "latency_weights.npz"
    assert resolved["weights_file"] == str(file)
    stamp = file.stat().st_mtime_ns
    assert resolve_weights(cfg, topo, ROUTER, patterns, [1], tmp_path) == resolved and file.stat().st_mtime_ns == stamp
    with np.load(file) as f:
        _check_distribution(paths, f["latency"])
        assert json.loads(str(f["record"]))["strategy"] == "latency"
    network = build.network(topo, build_routing(resolved), ROUTER)
    assert network.tables.n_paths == int(paths.valid.sum())
    with pytest.raises(ValueError, match="routing.weights=.*jaxnet.tune.resolve_weights"):
        build_routing({"name": "table", "paths": PATHS, "weights": "closed_loop"}).build_tables(topo)
    with pytest.raises(ValueError, match="routing.tune.rounds"):
        resolve_weights({**cfg, "weights": "closed_loop", "tune": {"rounds": 0}}, topo, ROUTER, patterns, [1], tmp_path)


def test_table_strategies_share_compiled_code(rrg):
    topo, _, _ = rrg
    cfgs = [{"name": "table", "paths": PATHS, "weights": w, "demand": {"name": "uniform"}} for w in ("uniform", "lp")]
    assert build_routing(cfgs[0]) == build_routing(cfgs[1])  # weights reach the engine as tables only
    lp = build.network(topo, build_routing(cfgs[1]), ROUTER)
    uniform = build.network(topo, build_routing(cfgs[0]), ROUTER)
    assert not np.array_equal(np.asarray(lp.tables.weight), np.asarray(uniform.tables.weight))


def test_routing_parameters_are_traced_and_never_recompile():
    topo = build_topology({"name": "dragonfly", "a": 3, "h": 1, "servers_per_router": 2})
    window = SimSpec(warmup=100, measure=300, chunk=400)
    points = [(0.8, 1), (0.9, 1)]
    polarized = build.network(topo, build_routing({"name": "polarized"}), RouterSpec(vcs=4 * topo.diameter - 3))
    default = measure(polarized, {"name": "uniform"}, points, window)
    with count_compilations() as compiled:
        other = measure_value(polarized, (0, 200), {"name": "uniform"}, 0.8, [0.9], [1], window)
        # w = (0, 64, 80) shifted by 10 is (10, 74, 90): no decision changes
        shifted = measure(with_tables(polarized, cost=np.asarray([10, 74, 90, 1 << 30], np.int32)),
                          {"name": "uniform"}, points, window)
    assert compiled == []
    assert other.value == (0, 200) and other.latency[0] != default.rows[0]["message_latency"]
    timing = {"wall_s", "first_chunk_s"}
    assert [{k: v for k, v in r.items() if k not in timing} for r in shifted.rows] == [
        {k: v for k, v in r.items() if k not in timing} for r in default.rows]
    ugal = build.network(topo, build_routing({"name": "ugal"}), RouterSpec(vcs=2 * topo.diameter))
    as_config = build.network(topo, build_routing({"name": "ugal", "threshold": 32}), RouterSpec(vcs=2 * topo.diameter))
    traffic = {"name": "adv_group", "offset": 1}
    expected, _ = simulate_cfg(as_config, traffic, [(0.3, 1)], window)
    traced, _ = simulate_cfg(with_tables(ugal, threshold=jnp.int32(32)), traffic, [(0.3, 1)], window)
    assert traced[0]["message_latency"] == expected[0]["message_latency"]
    assert traced[0]["average_hops"] == expected[0]["average_hops"]
    unbiased, _ = simulate_cfg(ugal, traffic, [(0.3, 1)], window)
    assert unbiased[0]["average_hops"] > traced[0]["average_hops"]  # the bias keeps packets minimal


def test_polarized_weights_option():
    assert build_routing({"name": "polarized"}).weights == WEIGHTS
    assert build_routing({"name": "polarized", "weights": [0, 32, 96]}).weights == (0, 32, 96)
    for bad in ([0, 64], [0, -1, 80], [0, 1.5, 80], "x"):
        with pytest.raises(ValueError, match="routing.weights"):
            build_routing({"name": "polarized", "weights": bad})
    assert set(TUNABLE) <= set(ROUTINGS)


def test_spsa_climbs_a_noisy_quadratic():
    rng = np.random.default_rng(0)
    best = np.asarray([60.0, 150.0])

    def objective(x):
        return -float(np.sum(((x - best) / 256) ** 2)) + rng.normal(0, 1e-4)

    final, steps = spsa(objective, [0.0, 0.0], [0, 0], [256, 256], steps=40, a=0.3, c=0.1)
    assert len(steps) == 40
    assert np.abs(final - best).max() < np.abs(np.zeros(2) - best).max() / 3


def test_saturation_summary_interpolates_and_marks_saturation():
    rows = []
    for seed in (1, 2):
        for load, accepted, latency in ((0.2, 0.2, 30.0), (0.4, 0.4, 50.0 + seed), (0.6, 0.45, 400.0)):
            rows.append({"offered_load": load, "accepted_load": accepted, "message_latency": latency,
                         "seed": seed, "curve": "a", "line": "a", "network": "n"})
    assert latency_at(rows, 0.3) == pytest.approx((30 + 51.5) / 2)
    assert latency_at(rows, 0.43) == float("inf")  # past 0.95 x the peak accepted load 0.45
    assert np.isnan(latency_at(rows[:1], 0.1))  # below the loads simulated
    table = saturation_table(rows, "network", {"a": "a"}, "a", [0.5, 1.0])
    assert "| n | a | 0.450 (0.450-0.450) | 32.7 (32.6-32.8) | sat. |" in table


def test_the_weights_experiment_resolves():
    jobs = sweep_jobs("gbamcf/weights", "small")
    assert {job["line"] for job in jobs} == {"minimal", "uniform", "shortest", "inverse_length", "lp",
                                           "optax_max_load", "latency", "closed_loop"}
    assert len({job["network"] for job in jobs}) == 6
    for job in jobs:
        TOPOLOGIES.split(job["topology"], "topology")
        ROUTINGS.split(job["routing"], "routing")
        assert len(job["patterns"]) == 1
        for pattern in job["patterns"].values():
            PATTERNS.split(pattern, "traffic")
    assert all(job["routing"]["name"] == "dragonfly_minimal" for job in jobs
               if job["line"] == "minimal" and job["network"].startswith("df"))
