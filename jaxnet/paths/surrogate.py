"""A differentiable latency model of a network whose pairs split their traffic over k paths,
and the path weights that minimise it.

Every packet is a fluid: at offered load lam (phits/cycle/server) the traffic on directed
link e is rho_e = lam x sum over pairs and paths through e of demand x weight (phits per
cycle; a link carries one phit a cycle), exactly the link loads of `weights.link_loads`.
A packet's mean message latency (creation to tail delivered, in cycles) is

  2 + L + r + sum over its hops e of (link_latency_e + r + W(rho_e))
    + W(injection load of its server) + W(ejection load of its destination)

with L the packet size (phits), r the router latency: the zero-load part is the router
model's own timing (the head crosses every link and router once, the tail L - 1 phits
behind it; 2 cycles from generation into the first router). W is the M/D/1 waiting time of
a link serving packets of L phits, W(rho) = alpha x rho L / (2 (kappa - rho)): service
time L, Poisson arrivals. Near saturation it is smoothed: from rho = knee x kappa on it
continues along its tangent, so a fit through overloaded links keeps finite gradients
and still pays for the overload. kappa (effective capacity, phits/cycle) and alpha (queue
scale) are 1 for an ideal M/D/1 link; `calibrate` fits them to simulated latencies (the
closed loop of `jaxnet.tune`), which absorbs what the model leaves out: head-of-line
blocking, finite buffers, virtual channels, crossbar conflicts. Server links keep kappa =
alpha = 1. Buffer sizes are not in W: under cut-through with credits a full buffer holds
the queue upstream (nothing is dropped), so they shape the network only near saturation,
which kappa stands for.

  TrafficDemand        what a traffic pattern asks per unit of offered load
  SurrogateModel       the router's timing and the link delay W
  latency_objective    the model's mean message latency at one load as a JAX function of
                       softmax logits, capacity and queue scale (differentiable)
  mean_latency, predict_latency  the same at one or several loads (host floats)
  saturation_load      the load at which the busiest link reaches kappa
  latency_weights      weights minimising mean_latency at one load (Optax Adam)
  calibrate            kappa and alpha fitted to simulated latencies (Optax Adam)
"""
from __future__ import annotations

import dataclasses
import functools
import time
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxnet.core.validate import require, require_int, require_number
from jaxnet.paths.pathset import PathSet
from jaxnet.paths.weights import PathWeights, traffic_demand


@dataclasses.dataclass(frozen=True, eq=False)
class TrafficDemand:
    """Rates per unit of offered load (phits/cycle at load 1).

    pair: float64 [n_pairs] router-to-router rate of each pair of the path set;
    local: rate that stays inside its source router (no network link);
    source: float64 [S] generation rate of each server;
    sink: float64 [R] rate each server of each router receives (the router's inflow
      spread evenly over its servers).
    """

    pair: np.ndarray
    local: float
    source: np.ndarray
    sink: np.ndarray

    @classmethod
    def from_table(cls, paths: PathSet, table, servers_per_router: int) -> "TrafficDemand":
        """The demand of a traffic pattern's `TrafficTable`."""
        p = servers_per_router
        by_server = table.router_matrix(p) * table.rate[:, None].astype(np.float64)
        n = by_server.shape[1]
        by_router = by_server.reshape(n, p, n).sum(axis=1)
        return cls(pair=traffic_demand(paths, table, p), local=float(np.trace(by_router)),
                   source=table.rate.astype(np.float64), sink=by_router.sum(axis=0) / p)

    @classmethod
    def mean(cls, demands: Sequence["TrafficDemand"]) -> "TrafficDemand":
        """The average of several demands (e.g. one per simulation seed of a pattern)."""
        require(len(demands) > 0, "demand", demands, "at least one traffic table")
        return cls(*(np.mean([getattr(d, f.name) for d in demands], axis=0)
                     for f in dataclasses.fields(cls)))

    @property
    def total(self) -> float:
        return float(self.pair.sum() + self.local)


@dataclasses.dataclass(frozen=True)
class SurrogateModel:
    """packet_size L (phits), router_latency r (cycles), hop_latency float [n_links]: link
    latency + r of every directed link (path-set link order); capacity kappa (at most 1
    phit/cycle, the link's own) and queue_scale alpha of network links; knee: the fraction
    of kappa where W turns linear."""

    packet_size: int
    router_latency: int
    hop_latency: tuple
    capacity: float = 1.0
    queue_scale: float = 1.0
    knee: float = 0.95

    def __post_init__(self):
        require_int(self.packet_size, "surrogate.packet_size", 1)
        require_number(self.capacity, "surrogate.capacity", 0.0, 1.0, low_open=True)
        require_number(self.queue_scale, "surrogate.queue_scale", 0.0, 1000.0, low_open=True)
        require_number(self.knee, "surrogate.knee", 0.0, 1.0, low_open=True, high_open=True)

    @classmethod
    def for_router(cls, topo, router, **fit) -> "SurrogateModel":
        """The model of `router` (a RouterSpec: packet_size, router_latency, latency_of) on
        `topo`'s directed links."""
        routers, ports = np.nonzero(topo.neighbor >= 0)
        names = topo.link_class_names
        latency = [router.latency_of(names[c]) for c in topo.link_class[routers, ports]]
        hop = np.asarray(latency, np.float64) + router.router_latency
        return cls(router.packet_size, router.router_latency, tuple(hop.tolist()), **fit)

    @property
    def base(self) -> float:
        """Zero-load latency of a packet that stays in its router (cycles)."""
        return 2.0 + self.packet_size + self.router_latency


def queue_wait(rho, packet_size, capacity=1.0, queue_scale=1.0, knee=0.95):
    """M/D/1 waiting time (cycles) at utilisation rho, linear past knee x capacity."""
    corner = knee * capacity
    r = jnp.minimum(rho, corner)
    wait = queue_scale * packet_size * r / (2.0 * (capacity - r))
    slope = queue_scale * packet_size * capacity / (2.0 * (capacity - corner) ** 2)
    return wait + slope * jnp.maximum(rho - corner, 0.0)


class _Fluid(NamedTuple):
    """The path set, demand and model as JAX arrays (a pytree: jitted functions take it as
    an argument, so they compile once per shape, not once per network)."""

    rows: jnp.ndarray      # int32 [entries] pair * k + path of each path-link entry
    links: jnp.ndarray     # int32 [entries] its link
    valid: jnp.ndarray     # bool [n_pairs, k]
    pair: jnp.ndarray      # float [n_pairs] demand
    total: jnp.ndarray     # float [] all demand, local included
    hop: jnp.ndarray       # float [n_links] link + router latency
    source: jnp.ndarray    # float [S]
    sink: jnp.ndarray      # float [R]
    packet_size: jnp.ndarray
    knee: jnp.ndarray
    base: jnp.ndarray


def _fluid(paths: PathSet, demand: TrafficDemand, model: SurrogateModel) -> _Fluid:
    require(demand.pair.shape == (paths.n_pairs,), "demand", demand.pair.shape,
            f"one rate per pair of the path set ({paths.n_pairs})")
    require(len(model.hop_latency) == paths.n_links, "surrogate.hop_latency", len(model.hop_latency),
            f"one latency per directed link ({paths.n_links})")
    rows, links = paths.incidence()
    real = lambda x: jnp.asarray(np.asarray(x, np.float64))  # noqa: E731  (float32 unless x64 is on)
    return _Fluid(jnp.asarray(rows), jnp.asarray(links), jnp.asarray(paths.valid), real(demand.pair),
                  real(demand.total), real(model.hop_latency), real(demand.source), real(demand.sink),
                  real(model.packet_size), real(model.knee), real(model.base))


def _weights_of(f: _Fluid, theta):
    return jax.nn.softmax(jnp.where(f.valid, theta, -jnp.inf), axis=1)


def _link_loads(f: _Fluid, weights):
    """Traffic on every link per unit offered load."""
    flow = (f.pair[:, None] * weights).ravel()
    return jax.ops.segment_sum(flow[f.rows], f.links, f.hop.shape[0])


def _mean_latency(f: _Fluid, weights, load, capacity, queue_scale):
    """Mean message latency (cycles) at offered load `load`."""
    loads = _link_loads(f, weights)
    per_link = f.hop + queue_wait(load * loads, f.packet_size, capacity, queue_scale, f.knee)
    in_network = jnp.dot(loads, per_link)  # sum over flows of rate x the delay of their links

    def server_wait(rate):  # mean over packets of their server link's wait
        return jnp.sum(rate * queue_wait(load * rate, f.packet_size)) / jnp.maximum(rate.sum(), 1e-30)

    return f.base + in_network / f.total + server_wait(f.source) + server_wait(f.sink)


def latency_objective(paths: PathSet, demand: TrafficDemand, model: SurrogateModel, load: float):
    """The function latency_weights minimises: softmax logits [n_pairs, k] (invalid paths
    masked), capacity, queue scale -> mean message latency at offered load `load` (JAX,
    differentiable in all three)."""
    f = _fluid(paths, demand, model)
    return lambda theta, capacity=model.capacity, queue_scale=model.queue_scale: _mean_latency(
        f, _weights_of(f, theta), load, capacity, queue_scale)


def mean_latency(paths: PathSet, weights: np.ndarray, demand: TrafficDemand, model: SurrogateModel,
                 load: float) -> float:
    """The model's mean message latency (cycles) at offered load `load`."""
    return float(predict_latency(paths, weights, demand, model, [load])[0])


@jax.jit
def _predict(f: _Fluid, weights, loads, capacity, queue_scale):
    return jax.vmap(lambda lam: _mean_latency(f, weights, lam, capacity, queue_scale))(loads)


def predict_latency(paths: PathSet, weights: np.ndarray, demand: TrafficDemand, model: SurrogateModel,
                    loads: Sequence[float]) -> np.ndarray:
    """float64 [len(loads)]: the model's mean message latency at each offered load."""
    out = _predict(_fluid(paths, demand, model), jnp.asarray(weights, jnp.float32), jnp.asarray(loads, jnp.float32),
                   model.capacity, model.queue_scale)
    return np.asarray(out, np.float64)


def saturation_load(paths: PathSet, weights: np.ndarray, demand: TrafficDemand, capacity: float = 1.0) -> float:
    """Offered load at which the busiest link carries `capacity` phits/cycle (the fluid
    model's saturation; the largest load whose latency stays bounded)."""
    rows, links = paths.incidence()
    flow = (demand.pair[:, None] * np.asarray(weights, np.float64)).ravel()
    busiest = np.bincount(links, weights=flow[rows], minlength=paths.n_links).max()
    return float(capacity / busiest) if busiest > 0 else float("inf")


@functools.partial(jax.jit, static_argnames="steps")
def _fit_latency(f: _Fluid, theta, load, capacity, queue_scale, learning_rate, steps):
    """Adam over softmax logits: (the logits of lowest latency, latency at every step)."""
    optimiser = optax.adam(learning_rate)

    def loss(t):
        return _mean_latency(f, _weights_of(f, t), load, capacity, queue_scale)

    def step(carry, _):
        t, state, best_t, best = carry
        value, grad = jax.value_and_grad(loss)(t)
        best_t = jnp.where(value < best, t, best_t)
        best = jnp.minimum(value, best)
        updates, state = optimiser.update(grad, state, t)
        return (optax.apply_updates(t, updates), state, best_t, best), value

    carry = (theta, optimiser.init(theta), theta, jnp.inf)
    (t, _, best_t, best), trace = jax.lax.scan(step, carry, None, length=steps)
    return jnp.where(loss(t) < best, t, best_t), trace


def latency_weights(paths: PathSet, demand: TrafficDemand, model: SurrogateModel, load: float,
                    steps: int = 1000, learning_rate: float = 0.05, init: np.ndarray | None = None) -> PathWeights:
    """Weights minimising the model's mean message latency at offered load `load`, by Adam
    over softmax logits per pair (from `init` weights, default uniform). Returns the iterate
    with the lowest latency."""
    require_int(steps, "surrogate.steps", 1)
    require(learning_rate > 0, "surrogate.learning_rate", learning_rate, "must be > 0")
    require_number(load, "surrogate.load", 0.0, 1.0, low_open=True)
    start = time.perf_counter()
    f = _fluid(paths, demand, model)
    if init is None:
        theta = jnp.zeros(paths.valid.shape, jnp.float32)
    else:
        theta = jnp.asarray(np.log(np.maximum(np.asarray(init, np.float64), 1e-6)), jnp.float32)
    theta, trace = _fit_latency(f, theta, load, model.capacity, model.queue_scale, learning_rate, steps)
    weights = np.asarray(_weights_of(f, theta), np.float32)
    info = dict(steps=steps, load=load, first_latency=float(trace[0]), last_latency=float(trace[-1]))
    return PathWeights(weights, time.perf_counter() - start, info)


@functools.partial(jax.jit, static_argnames="steps")
def _fit_model(f: _Fluid, weights, loads, target, fit_mask, capacity_seen, saturated, x, learning_rate, steps):
    """Adam over (log alpha, log kappa); kappa stays at most 1 (a link's capacity)."""
    def loss(x):
        alpha, kappa = jnp.exp(x[0]), jnp.exp(x[1])
        one = lambda w, lam: _mean_latency(f, w, lam, kappa, alpha)  # noqa: E731
        predicted = jax.vmap(lambda w, lams: jax.vmap(lambda lam: one(w, lam))(lams))(weights, loads)
        latency_term = jnp.sum(fit_mask * (jnp.log(predicted) - target) ** 2)
        capacity_term = jnp.sum(saturated * (x[1] - capacity_seen) ** 2)
        return latency_term + capacity_term

    optimiser = optax.adam(learning_rate)

    def step(carry, _):
        x, state = carry
        updates, state = optimiser.update(jax.grad(loss)(x), state, x)
        x = optax.apply_updates(x, updates)
        return (x.at[1].set(jnp.minimum(x[1], 0.0)), state), None

    (x, _), _ = jax.lax.scan(step, (x, optimiser.init(x)), None, length=steps)
    return x


def calibrate(paths: PathSet, demand: TrafficDemand, model: SurrogateModel, weights: Sequence[np.ndarray],
              loads: np.ndarray, latency: np.ndarray, accepted: np.ndarray,
              steps: int = 300, learning_rate: float = 0.05) -> SurrogateModel:
    """The model with kappa and alpha fitted to simulated points of one or more weightings.

    weights: m arrays [n_pairs, k]; loads, latency, accepted: [m, n] offered load, simulated
    mean message latency and accepted load of n points of each. Points that the simulation
    carried (accepted >= 0.95 x offered) fit log latency; a saturated point says the busiest
    link's effective capacity is what it carried there (kappa -> accepted x the busiest
    link's load per unit load). Adam over (log alpha, log kappa) from the current model.
    """
    w = jnp.asarray(np.stack([np.asarray(x, np.float32) for x in weights]))
    loads, latency, accepted = (np.asarray(x, np.float64).reshape(w.shape[0], -1) for x in (loads, latency, accepted))
    require(loads.shape == latency.shape == accepted.shape and loads.size > 0, "calibrate", loads.shape,
            "loads, latencies and accepted loads of the same points, for each weighting")
    f = _fluid(paths, demand, model)
    busiest = np.asarray(jax.vmap(lambda x: _link_loads(f, x))(w).max(axis=1), np.float64)
    carried = (accepted >= 0.95 * loads) & np.isfinite(latency)
    f32 = lambda x: jnp.asarray(x, jnp.float32)  # noqa: E731
    x0 = jnp.log(f32([model.queue_scale, model.capacity]))
    x = _fit_model(f, w, f32(loads), f32(np.log(np.where(carried, latency, 1.0))), f32(carried),
                   f32(np.log(np.maximum(accepted * busiest[:, None], 1e-6))), f32(~carried & np.isfinite(accepted)),
                   x0, learning_rate, steps)
    x = np.asarray(x, np.float64)
    return dataclasses.replace(model, queue_scale=float(np.exp(x[0])), capacity=float(np.exp(x[1])))
