"""Parameter validation: every bad value becomes one `ValueError` that names the
parameter, the value and what is allowed, so the apps can print it as one line."""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def require(condition: bool, parameter: str, value: Any, allowed: str) -> None:
    """Raise a `ValueError` naming the parameter, its value and what is allowed."""
    if not condition:
        raise ValueError(f"{parameter}={value!r} is invalid: {allowed}")


def is_int(value: Any) -> bool:
    """True for Python and numpy integers (not bools, not floats)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number_text(text: str) -> bool:
    """True when `text` reads as a number (`float(text)` succeeds)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def require_int(value: Any, parameter: str, minimum: int, maximum: int | None = None, why: str = "") -> int:
    """`value` as an int in [minimum, maximum], or a `ValueError` naming the parameter (and
    `why` the limit is there)."""
    allowed = (f"must be an integer >= {minimum}" if maximum is None
               else f"must be an integer in [{minimum}, {maximum}]") + (f" ({why})" if why else "")
    require(is_int(value), parameter, value, allowed)
    require(value >= minimum and (maximum is None or value <= maximum), parameter, value, allowed)
    return int(value)


def require_number(value: Any, parameter: str, low: float, high: float, *,
                   low_open: bool = False, high_open: bool = False) -> float:
    """`value` as a finite float in the interval, or a `ValueError` naming the parameter."""
    interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    allowed = f"must be a number in {interval}"
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    require(ok and math.isfinite(float(value)), parameter, value, allowed)
    x = float(value)
    inside = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
    require(inside, parameter, value, allowed)
    return x
