"""The closed loop: path weights fitted to the latency surrogate, simulated, the surrogate
corrected by what the simulator measured, the weights fitted again (docs/tuning.md).

Round 0 simulates the starting weights; every later round first calibrates the surrogate's
effective link capacity and queue scale (`surrogate.calibrate`) to the latencies and
accepted loads every earlier round measured (seeds averaged), then refits the weights to the corrected model
(`surrogate.latency_weights`, warm-started from the previous weights) and simulates them.
The objective is the simulated mean message latency at the target offered load, one value
per seed; the loop returns the weights of the round with the lowest mean.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from jaxnet.core.validate import require, require_int
from jaxnet.paths.pathset import PathSet
from jaxnet.paths.surrogate import SurrogateModel, TrafficDemand, calibrate, latency_weights, predict_latency
from jaxnet.routing.route_tables import with_weights
from jaxnet.sim.network import Network
from jaxnet.sim.spec import SimSpec
from jaxnet.tune.simulation import measure


@dataclasses.dataclass(frozen=True)
class Round:
    """One round: the weights simulated, the model they were fitted to, and what the
    simulator measured at each load (rows) and seed (columns)."""

    weights: np.ndarray
    model: SurrogateModel
    loads: np.ndarray
    predicted: np.ndarray
    latency: np.ndarray
    accepted: np.ndarray
    objective: np.ndarray  # simulated latency at the target load, per seed

    def summary(self) -> dict:
        return {"objective": self.objective.tolist(), "objective_mean": float(self.objective.mean()),
                "objective_std": float(self.objective.std()),
                "capacity": self.model.capacity, "queue_scale": self.model.queue_scale,
                "loads": self.loads.tolist(), "predicted": self.predicted.tolist(),
                "latency": self.latency.mean(axis=1).tolist(), "accepted": self.accepted.mean(axis=1).tolist()}


def closed_loop(network: Network, paths: PathSet, demand: TrafficDemand, traffic: Sequence,
                model: SurrogateModel, start: np.ndarray, target: float, loads: Sequence[float],
                seeds: Sequence[int], window: SimSpec, rounds: int = 3, steps: int = 1000,
                learning_rate: float = 0.05) -> tuple[np.ndarray, list[Round]]:
    """(best weights, every round). `network` routes on `paths` (a `table` scheme); each round
    simulates `loads` (offered, which must include `target`) x `seeds`, seed i under the
    traffic table traffic[i]."""
    require_int(rounds, "routing.tune.rounds", 1)
    loads = np.asarray(sorted(set(float(x) for x in loads)))
    require(bool(np.isclose(loads, target).any()), "routing.tune.loads", loads.tolist(),
            f"must include the target load {target:g}")
    require(len(seeds) > 0 and len(traffic) == len(seeds), "routing.tune.seeds", seeds,
            "at least one seed, each with its traffic table")
    at_target = int(np.argmin(np.abs(loads - target)))
    points = [(float(load), int(seed)) for load in loads for seed in seeds]
    tables = [table for _ in loads for table in traffic]
    weights, history = np.asarray(start, np.float32), []
    for index in range(rounds):
        if index:
            last = history[-1]
            model = calibrate(paths, demand, model, [r.weights for r in history],
                              np.stack([r.loads for r in history]),
                              np.stack([r.latency.mean(axis=1) for r in history]),
                              np.stack([r.accepted.mean(axis=1) for r in history]))
            weights = latency_weights(paths, demand, model, target, steps, learning_rate, init=last.weights).weights
        result = measure(with_weights(network, weights, paths.valid), tables, points, window)
        shape = (loads.size, len(seeds))
        latency = result.column("message_latency").reshape(shape)
        accepted = result.column("accepted_load").reshape(shape)
        history.append(Round(weights, model, loads, predict_latency(paths, weights, demand, model, loads),
                             latency, accepted, latency[at_target]))
    best = min(history, key=lambda r: r.objective.mean())
    return best.weights, history
