"""Parameter validation at the public boundary (scikit-learn style).

Every check raises a ``ValueError`` that names the parameter, the allowed range and the value
received. Nothing is silently clipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_real(
    name: str,
    value: Any,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float if it is a finite real in the interval, else raise ValueError.

    ``low``/``high`` bound the interval; ``*_open`` make the bound strict.
    """
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    interval = f"{left}{low:g}, {high:g}{right}"
    if not _is_real(value) or math.isnan(float(value)):
        raise ValueError(f"{name} must be a real number in {interval}, got {value!r}")
    v = float(value)
    if (
        math.isinf(v)
        and not (math.isinf(low) and v == low)
        and not (math.isinf(high) and v == high)
    ):
        raise ValueError(f"{name} must be finite and in {interval}, got {value!r}")
    too_low = v <= low if low_open else v < low
    too_high = v >= high if high_open else v > high
    if too_low or too_high:
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return v


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """Privacy budget ε: a finite real > 0."""
    return check_real(name, value, low=0.0, low_open=True, high=math.inf, high_open=True)


def check_delta(value: Any, name: str = "delta") -> float:
    """Failure probability / approximate-DP δ: a real in the open interval (0, 1)."""
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def check_probability(value: Any, name: str, *, high_open: bool = False) -> float:
    """A probability in [0, 1] (or [0, 1) with ``high_open``)."""
    return check_real(name, value, low=0.0, high=1.0, high_open=high_open)


#: the largest integer a parameter may take: numpy's and SQLite's (the results store's) int64
INT64_MAX = 2**63 - 1


def check_int(name: str, value: Any, *, low: int = 1, high: int | None = None) -> int:
    """An integer (Python or numpy, not bool) in [low, high]; ``high`` is at most
    :data:`INT64_MAX` (the default), the range numpy arrays and the results store hold exactly.
    Compared as exact integers, never through a float."""
    high = INT64_MAX if high is None else min(high, INT64_MAX)
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if ok and low <= int(value) <= high:
        return int(value)
    hi = "2**63 - 1" if high == INT64_MAX else str(high)
    raise ValueError(f"{name} must be an integer in [{low}, {hi}], got {value!r}")


def check_vector(
    name: str,
    value: Any,
    *,
    length: int | None = None,
    min_length: int = 1,
    finite: bool = True,
) -> np.ndarray:
    """A 1-D float array (optionally of a given length), all finite."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a 1-D sequence of numbers, got {value!r}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of numbers, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    if arr.shape[0] < min_length:
        raise ValueError(f"{name} must have at least {min_length} entries, got {arr.shape[0]}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers, got {value!r}")
    return arr


def check_points(name: str, value: Any, *, low: float = 1.0) -> np.ndarray:
    """A number or 1-D array of finite numbers ≥ ``low`` (e.g. horizons or sample sizes at which
    a rate is evaluated), as a float array."""
    x = np.asarray(value, dtype=float)
    if x.ndim > 1 or x.size == 0 or not np.all(np.isfinite(x)) or np.any(x < low):
        raise ValueError(f"{name} must be a number or 1-D array of numbers >= {low:g}, got "
                         f"{value!r}")
    return x


def check_bool(name: str, value: Any) -> bool:
    """A bool (Python or numpy), returned as a Python bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def check_range(name: str, value: Any) -> tuple[float, float]:
    """An interval: a pair (lo, hi) of finite reals with lo < hi."""
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of finite reals with lo < hi, "
                         f"got {value!r}") from None
    lo, hi = (check_real(f"{name}[{i}]", v, low_open=True, high_open=True)  # finite
              for i, v in enumerate((lo, hi)))
    if not lo < hi:
        raise ValueError(f"{name} must be a pair (lo, hi) with lo < hi, got {value!r}")
    return lo, hi


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """One of a fixed set of values."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value
