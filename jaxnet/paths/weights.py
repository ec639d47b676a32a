"""Path weights: how a pair's traffic splits over its k paths, and the link loads that follow.

Weights are float32 [n_pairs, k]: 0 on invalid paths, every row summing to 1, in the pair
order of the `PathSet`, so the simulator can take them as one traced array. The load of a
directed link is sum over pairs and paths through it of demand[pair] * weight[pair, path].

  uniform_weights  1 / (number of valid paths) each (the paper's "uniform" scenario);
  shortest_weights uniform over the pair's shortest valid paths only (ECMP over the k);
  inverse_length_weights  proportional to 1 / hops;
  lp_weights       minimise the maximum link load exactly: a linear program (HiGHS via
                   scipy.optimize.linprog, sparse constraints);
  optax_weights    the same objective made smooth and solved by gradient descent in JAX:
                   weights = softmax(theta) per pair, loss = t * logsumexp(load / t) with
                   the temperature t annealed geometrically, loads by segment_sum over the
                   sparse pair-path-link incidence; returns the iterate with the lowest hard
                   maximum.
  dual_bound       a lower bound on the LP optimum from any link prices (LP duality);
  optax_dual_bound the prices that make it tight, found the same way as optax_weights
                   (softmax-parameterised prices, a soft minimum over each pair's paths,
                   annealed): the LP optimum then lies in [bound, Optax result] without
                   solving the LP, which is too big on the largest networks.
"""
from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
import scipy.sparse as sp

from jaxnet.core.validate import require, require_int
from jaxnet.paths.pathset import PathSet


@dataclasses.dataclass(frozen=True)
class PathWeights:
    """weights float32 [n_pairs, k]; seconds spent computing them; solver notes."""

    weights: np.ndarray
    seconds: float = 0.0
    info: dict = dataclasses.field(default_factory=dict)

    def link_loads(self, paths: PathSet, demand: np.ndarray) -> np.ndarray:
        return link_loads(paths, self.weights, demand)

    def max_load(self, paths: PathSet, demand: np.ndarray) -> float:
        return float(self.link_loads(paths, demand).max())


def random_demand(paths: PathSet, seed: int, max_value: int = 7) -> np.ndarray:
    """The paper's traffic: a uniform random integer 0..max_value per ordered pair."""
    require_int(seed, "paths.demand_seed", 0)
    return np.random.default_rng(seed).integers(0, max_value + 1, paths.n_pairs).astype(np.float64)


def traffic_demand(paths: PathSet, table, servers_per_router: int) -> np.ndarray:
    """Demand per ordered pair from a traffic pattern's `TrafficTable`: the expected
    router-to-router rate (sum over a router's servers of rate x probability of each
    destination router)."""
    p = servers_per_router
    n = table.rate.shape[0] // p
    by_server = table.router_matrix(p) * table.rate[:, None].astype(np.float64)
    by_router = by_server.reshape(n, p, n).sum(axis=1)
    return by_router[paths.pair_src, paths.pair_dst]


def link_loads(paths: PathSet, weights: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """float64 [n_links] traffic on every directed link."""
    rows, links = paths.incidence()
    flow = (demand[:, None] * weights).ravel()
    return np.bincount(links, weights=flow[rows], minlength=paths.n_links)


def _normalised(score: np.ndarray) -> PathWeights:
    return PathWeights((score / score.sum(axis=1, keepdims=True)).astype(np.float32))


def uniform_weights(paths: PathSet) -> PathWeights:
    return _normalised(paths.valid.astype(np.float64))


def shortest_weights(paths: PathSet) -> PathWeights:
    """Uniform over each pair's shortest valid paths, 0 on its longer ones."""
    length = np.where(paths.valid, paths.length, np.iinfo(np.int32).max)
    return _normalised((length == length.min(axis=1, keepdims=True)).astype(np.float64))


def inverse_length_weights(paths: PathSet) -> PathWeights:
    """Proportional to 1 / hops of each valid path."""
    return _normalised(np.where(paths.valid, 1.0 / np.maximum(paths.length, 1), 0.0))


LP_METHODS = ("highs-ipm", "highs-ds", "highs")


def lp_weights(paths: PathSet, demand: np.ndarray, method: str = "highs-ipm") -> PathWeights:
    """Weights minimising the maximum link load, by linear programming.

    Variables: one weight per valid path of a pair with demand, plus the maximum load z.
    Minimise z subject to load_e - z <= 0 for every link and sum of a pair's weights = 1.
    Pairs without demand keep uniform weights (they load nothing).
    """
    from scipy.optimize import linprog  # imported here: a simulation that solves no LP skips its import

    require(method in LP_METHODS, "paths.lp_method", method, f"must be one of {', '.join(LP_METHODS)}")
    start = time.perf_counter()
    rows, links = paths.incidence()
    path_demand = np.repeat(demand, paths.k)
    usable = (paths.valid.ravel()) & (path_demand > 0)
    column = np.full(usable.size, -1, np.int64)
    column[usable] = np.arange(usable.sum())
    n_vars = int(usable.sum())
    keep = usable[rows]
    load = sp.csr_matrix(
        (path_demand[rows[keep]], (links[keep], column[rows[keep]])),
        shape=(paths.n_links, n_vars),
    )
    load = sp.hstack([load, sp.csr_matrix(-np.ones((paths.n_links, 1)))], format="csr")
    pair_of_var = np.nonzero(usable)[0] // paths.k
    active_pairs, pair_row = np.unique(pair_of_var, return_inverse=True)
    one_per_pair = sp.csr_matrix(
        (np.ones(n_vars), (pair_row, np.arange(n_vars))), shape=(active_pairs.size, n_vars + 1)
    )
    cost = np.zeros(n_vars + 1)
    cost[-1] = 1.0
    result = linprog(
        cost, A_ub=load, b_ub=np.zeros(paths.n_links), A_eq=one_per_pair,
        b_eq=np.ones(active_pairs.size), bounds=(0, None), method=method,
    )
    if result.status != 0:
        raise RuntimeError(f"path-weight LP failed: {result.message}")
    weights = uniform_weights(paths).weights.ravel().copy()
    weights[usable] = np.clip(result.x[:-1], 0.0, None)
    weights = weights.reshape(paths.n_pairs, paths.k)
    weights /= weights.sum(axis=1, keepdims=True)
    info = dict(objective=float(result.fun), variables=n_vars + 1,
                constraints=paths.n_links + active_pairs.size, method=method,
                link_prices=-result.ineqlin.marginals)  # the dual: optimal prices for dual_bound
    return PathWeights(weights.astype(np.float32), time.perf_counter() - start, info)


def dual_bound(paths: PathSet, demand: np.ndarray, prices: np.ndarray) -> float:
    """Lower bound on the minimum over weights of the maximum link load.

    For prices y >= 0 summing to 1, max_e load_e >= sum_e y_e load_e = sum over pairs of
    demand x (weighted mean price of its paths) >= sum over pairs of demand x (cheapest
    valid path's price); the right side no longer depends on the weights. This is the LP
    dual, so the best prices give the LP optimum itself. float64 throughout.
    """
    prices = np.asarray(prices, np.float64)
    require(prices.shape == (paths.n_links,) and (prices >= 0).all() and prices.sum() > 0,
            "prices", prices.shape, f"must be {paths.n_links} non-negative link prices, not all 0")
    prices = prices / prices.sum()
    rows, links = paths.incidence()
    path_price = np.bincount(rows, weights=prices[links], minlength=paths.n_pairs * paths.k)
    path_price = np.where(paths.valid.ravel(), path_price, np.inf).reshape(paths.n_pairs, paths.k)
    return float(np.dot(demand, path_price.min(axis=1)))


def _annealed_adam(loss, x0, steps, learning_rate, temperature_start, temperature_end, name):
    """Minimise loss(x, temperature) -> (smooth, hard) by Adam while the temperature falls
    geometrically from temperature_start to temperature_end, in one jitted `lax.scan`.

    Returns the iterate with the lowest hard value (the final one included) and the hard
    value at every step. `name` ("paths.optax", "paths.dual") names bad parameters.
    """
    require_int(steps, f"{name}.steps", 1)
    require(learning_rate > 0, f"{name}.learning_rate", learning_rate, "must be > 0")
    require(0 < temperature_end <= temperature_start, f"{name}.temperature_end",
            temperature_end, "must be in (0, temperature_start]")
    decay = (temperature_end / temperature_start) ** (1.0 / max(steps - 1, 1))
    optimiser = optax.adam(learning_rate)

    @jax.jit
    def fit(x):
        def step(carry, i):
            x, state, best_x, best = carry
            (_, hard), grad = jax.value_and_grad(loss, has_aux=True)(x, temperature_start * decay**i)
            best_x = jnp.where(hard < best, x, best_x)
            best = jnp.minimum(hard, best)
            updates, state = optimiser.update(grad, state, x)
            return (optax.apply_updates(x, updates), state, best_x, best), hard

        carry = (x, optimiser.init(x), x, jnp.inf)
        (x, _, best_x, best), trace = jax.lax.scan(step, carry, jnp.arange(steps, dtype=jnp.float32))
        _, final = loss(x, temperature_end)
        return jnp.where(final < best, x, best_x), trace

    return fit(x0)


def optax_weights(
    paths: PathSet,
    demand: np.ndarray,
    steps: int = 2000,
    learning_rate: float = 0.05,
    temperature_start: float = 0.05,
    temperature_end: float = 0.001,
) -> PathWeights:
    """Weights minimising a smooth maximum of link loads by Adam (see module docstring).

    Loads are divided by the mean link load, so the temperatures are relative to it.
    """
    start = time.perf_counter()
    rows, links = paths.incidence()
    path_demand = np.repeat(demand, paths.k)
    scale = float((path_demand[rows] / np.maximum(paths.valid.sum(axis=1).repeat(paths.k)[rows], 1)).sum())
    scale = max(scale / paths.n_links, 1e-12)
    flow_demand = jnp.asarray(path_demand / scale, jnp.float32)
    rows_j, links_j = jnp.asarray(rows), jnp.asarray(links)
    valid = jnp.asarray(paths.valid)

    def weights_of(theta):
        return jax.nn.softmax(jnp.where(valid, theta, -jnp.inf), axis=1)

    def smooth_max(theta, temperature):
        flow = flow_demand * weights_of(theta).ravel()
        loads = jax.ops.segment_sum(flow[rows_j], links_j, paths.n_links)
        return temperature * jax.nn.logsumexp(loads / temperature), loads.max()

    theta, trace = _annealed_adam(smooth_max, jnp.zeros(paths.valid.shape, jnp.float32), steps, learning_rate,
                                  temperature_start, temperature_end, "paths.optax")
    weights = np.asarray(weights_of(theta), np.float32)
    info = dict(steps=steps, first_max=float(trace[0]) * scale, last_max=float(trace[-1]) * scale)
    return PathWeights(weights, time.perf_counter() - start, info)


def optax_dual_bound(
    paths: PathSet,
    demand: np.ndarray,
    steps: int = 2000,
    learning_rate: float = 0.05,
    temperature_start: float = 0.3,
    temperature_end: float = 0.01,
) -> tuple[float, float]:
    """(lower bound on the LP optimum, seconds): `dual_bound` maximised by Adam.

    Prices y = softmax(phi) x n_links (mean price 1 per link, so a path costs about its
    hop count); each pair's cheapest path is smoothed to -t logsumexp(-cost / t) with t
    (in hops) annealed geometrically; the best prices by the hard bound are re-evaluated
    in float64, so the result is a valid bound however well the fit went.
    """
    start = time.perf_counter()
    rows, links = paths.incidence()
    scaled_demand = jnp.asarray(demand / max(float(demand.mean()), 1e-12), jnp.float32)
    rows_j, links_j = jnp.asarray(rows), jnp.asarray(links)
    valid = jnp.asarray(paths.valid)
    n_links, n_paths = paths.n_links, paths.n_pairs * paths.k

    def negative_bound(phi, temperature):
        prices = jax.nn.softmax(phi) * n_links
        cost = jax.ops.segment_sum(prices[links_j], rows_j, n_paths).reshape(valid.shape)
        cost = jnp.where(valid, cost, jnp.inf)
        soft_min = -temperature * jax.nn.logsumexp(-cost / temperature, axis=1)
        return -(scaled_demand * soft_min).sum(), -(scaled_demand * cost.min(axis=1)).sum()

    phi, _ = _annealed_adam(negative_bound, jnp.zeros(n_links, jnp.float32), steps, learning_rate,
                            temperature_start, temperature_end, "paths.dual")
    prices = np.asarray(jax.nn.softmax(phi), np.float64)
    return dual_bound(paths, demand, prices), time.perf_counter() - start


# Strategies by name (the `table` routing's `weights`): (paths, demand per pair) -> PathWeights.
# The last two optimise for the demand; the first three ignore it.
STRATEGIES = {
    "uniform": lambda paths, demand: uniform_weights(paths),
    "shortest": lambda paths, demand: shortest_weights(paths),
    "inverse_length": lambda paths, demand: inverse_length_weights(paths),
    "lp": lambda paths, demand: lp_weights(paths, demand),
    "optax_max_load": lambda paths, demand: optax_weights(paths, demand),
}
DEMAND_AWARE = ("lp", "optax_max_load")
