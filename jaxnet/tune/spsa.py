"""SPSA (simultaneous perturbation stochastic approximation, Spall 1992): a derivative-free
maximiser of a noisy objective that needs two evaluations per step whatever the dimension,
which suits objectives measured by simulation.

Each step perturbs every coordinate at once by +-c_k (random signs), evaluates both points
with the same simulation seeds (common random numbers: the difference measures the
parameters, not the seeds), and moves along the estimated gradient by a_k. Gains follow
Spall's schedules a_k = a / (k + 1 + A)^0.602, c_k = c / (k + 1)^0.101. Coordinates are
scaled to [0, 1] inside the box [low, high] and clipped to it.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

from jaxnet.core.validate import require, require_int


@dataclasses.dataclass(frozen=True)
class Step:
    """One SPSA step: the iterate before it (box coordinates) and its two evaluations."""

    theta: np.ndarray
    plus: np.ndarray
    minus: np.ndarray
    score_plus: float
    score_minus: float


def spsa(objective: Callable[[np.ndarray], float], start: Sequence[float], low: Sequence[float],
         high: Sequence[float], steps: int = 8, a: float = 0.1, c: float = 0.1, stability: float = 2.0,
         seed: int = 0, score_scale: float = 1.0) -> tuple[np.ndarray, list[Step]]:
    """(final iterate, every step) maximising `objective` (box coordinates -> score) from
    `start`. `score_scale` is the size of a typical score difference worth a step of `a`
    (the gradient estimate is divided by it)."""
    require_int(steps, "tune.steps", 1)
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    require(bool(np.all(high > low)), "tune.bounds", (low.tolist(), high.tolist()), "high > low in every coordinate")
    rng = np.random.default_rng(seed)
    u = np.clip((np.asarray(start, np.float64) - low) / (high - low), 0.0, 1.0)
    history = []
    for k in range(steps):
        ak, ck = a / (k + 1 + stability) ** 0.602, c / (k + 1) ** 0.101
        delta = rng.choice([-1.0, 1.0], size=u.size)
        up, down = np.clip(u + ck * delta, 0, 1), np.clip(u - ck * delta, 0, 1)
        plus, minus = low + up * (high - low), low + down * (high - low)
        score_plus, score_minus = float(objective(plus)), float(objective(minus))
        history.append(Step(low + u * (high - low), plus, minus, score_plus, score_minus))
        gradient = (score_plus - score_minus) / np.where(up - down == 0, np.inf, up - down) / score_scale
        u = np.clip(u + ak * gradient, 0.0, 1.0)
    return low + u * (high - low), history
