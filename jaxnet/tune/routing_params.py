"""Numeric routing parameters tuned against simulated throughput and latency (docs/tuning.md).

A tunable parameter lives in its scheme's routing tables (traced), so every candidate value
runs on the same compiled step: Polarized's candidate weights (`cost`, with w[0] pinned to
0: adding one constant to all three changes no decision) and UGAL's threshold. The score
of a value is measured, on the same seeds for every value:

  score = mean accepted load at `high` offered loads (throughput at and past saturation)
          - latency_weight x mean message latency at the `mid` load / the default's

and SPSA (`jaxnet.tune.spsa`) maximises it; `evaluate` then measures the default, SPSA's
final iterate and the best value it evaluated on fresh seeds (the best on the tuning seeds
is partly the luck of those seeds).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Sequence

import numpy as np

from jaxnet.core.validate import require
from jaxnet.routing.polarized import WEIGHTS, cost_table
from jaxnet.sim.network import Network
from jaxnet.sim.spec import SimSpec
from jaxnet.tune.simulation import measure, with_tables
from jaxnet.tune.spsa import spsa


@dataclasses.dataclass(frozen=True)
class Tunable:
    """names: the parameters SPSA moves; default, low, high: their paper value and box;
    tables: the routing-table fields of a value (rounded to integers)."""

    names: tuple
    default: tuple
    low: tuple
    high: tuple
    tables: Callable[[np.ndarray], dict]


TUNABLE = {
    "polarized": Tunable(("w1", "w2"), WEIGHTS[1:], (0, 0), (256, 256),
                         lambda x: {"cost": cost_table((0, *np.rint(x).astype(int)))}),
    "ugal": Tunable(("threshold",), (0,), (0,), (512,),
                    lambda x: {"threshold": np.int32(np.rint(x[0]))}),
}


def tunable(network: Network) -> Tunable:
    name = network.routing.name
    require(name in TUNABLE, "routing", name, f"a scheme with tunable parameters: {sorted(TUNABLE)}")
    return TUNABLE[name]


@dataclasses.dataclass(frozen=True)
class Scores:
    """A parameter value measured: accepted load at the high loads and latency at the mid
    load, per seed."""

    value: tuple
    accepted: np.ndarray
    latency: np.ndarray

    def score(self, latency_reference: float, latency_weight: float) -> float:
        return float(self.accepted.mean() - latency_weight * self.latency.mean() / latency_reference)


def measure_value(network: Network, value, traffic: Mapping, mid: float, high: Sequence[float],
                  seeds: Sequence[int], window: SimSpec) -> Scores:
    """Simulate the parameter `value` at the mid load and the high loads, every seed."""
    loads = [mid, *high]
    points = [(float(load), int(seed)) for load in loads for seed in seeds]
    tables = tunable(network).tables(np.asarray(value, np.float64))
    result = measure(with_tables(network, **tables), traffic, points, window)
    latency = result.column("message_latency").reshape(len(loads), len(seeds))
    accepted = result.column("accepted_load").reshape(len(loads), len(seeds))
    return Scores(tuple(np.rint(np.asarray(value, np.float64)).astype(int).tolist()), accepted[1:].mean(axis=0),
                  latency[0])


def tune(network: Network, traffic: Mapping, mid: float, high: Sequence[float], seeds: Sequence[int],
         window: SimSpec, steps: int = 8, latency_weight: float = 0.05, seed: int = 0) -> dict:
    """SPSA from the default value; returns its final iterate, the best value it evaluated,
    the default's scores and every step's two values and scores (on `seeds`)."""
    spec = tunable(network)
    default = measure_value(network, spec.default, traffic, mid, high, seeds, window)
    reference = float(default.latency.mean())
    history: list[Scores] = []

    def objective(x):
        history.append(measure_value(network, x, traffic, mid, high, seeds, window))
        return history[-1].score(reference, latency_weight)

    final, steps_taken = spsa(objective, spec.default, spec.low, spec.high, steps=steps, a=0.05, seed=seed,
                              score_scale=0.02)
    best = max(history, key=lambda s: s.score(reference, latency_weight))
    return {"names": spec.names, "default": default, "final": tuple(np.rint(final).astype(int).tolist()),
            "best": best.value, "steps": steps_taken, "evaluations": history, "latency_reference": reference}


def evaluate(network: Network, values: Mapping[str, Sequence[float]], traffic: Mapping, mid: float,
             high: Sequence[float], seeds: Sequence[int], window: SimSpec) -> dict:
    """name -> Scores of each parameter value, on `seeds` (fresh ones: not those tuned on)."""
    return {name: measure_value(network, value, traffic, mid, high, seeds, window) for name, value in values.items()}
