"""Regret rates of the heavy-tailed MAB with Huber contamination (paper 1), as reference curves.

Paper 1 (Wu, Zhou, Tao, Wang, *On Private and Robust Bandits*, NeurIPS 2023) states its bounds as
orders: Ω(·) for the minimax lower bound (Theorem 4.1) and O(·) for the regret of Algorithm 1 with
each private robust mean estimator (Theorems 6.2, 6.10, 6.12). The constants are not given.

**Every function here returns the expression inside the Ω(·)/O(·) with all constants set to 1.**
These are *rates*, i.e. shapes in T and their dependence on (K, ε, α, k, D), not numbers a regret
must lie above or below. They are also stated for normalized rewards (moment bound 1, Definitions
3.1/3.2); an instance whose rewards are on another scale multiplies every term by the same scale
factor. Logarithms are natural. Each ``*_terms`` function returns the named terms of the sum,
so that a plot or a test can show which one dominates; the matching ``*_rate`` function returns
their sum.

Notation (paper 1): T horizon, K arms, ε privacy budget, α contamination level, k the order of the
finite moment (k ≥ 2 in the theorems; Remark 4.2 extends the lower bound to k = 1 + v, v ∈ (0, 1];
``k = inf`` gives the bounded / sub-Gaussian limit), D the range of the means (finite central
moment case).
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

from privenv._validation import check_epsilon, check_int, check_points, check_real

#: breakdown point of Algorithm 3 (PRM for the finite central moment case), Corollary 6.8
ALPHA_MAX_CENTRAL = 0.133


def _common(T: Any, K: Any, epsilon: Any, k: Any) -> tuple[np.ndarray, int, float, float]:
    t = check_points("T", T)
    K = check_int("K", K, low=2)
    epsilon = check_epsilon(epsilon)
    k = check_real("k", k, low=1.0, low_open=True, high=math.inf)
    return t, K, epsilon, k


def iota(alpha: float) -> float:
    """ι = (1 − α)/(0.249 − α) of Corollary 6.8 (bin width r = ι^{1/k}); α ∈ [0, 0.133)."""
    alpha = check_real("alpha", alpha, low=0.0, high=ALPHA_MAX_CENTRAL, high_open=True)
    return (1.0 - alpha) / (0.249 - alpha)


# -- Theorem 4.1: minimax lower bound -------------------------------------------------------------


def lower_bound_terms(
    T: Any, K: int, epsilon: float, alpha: float, k: float = 2.0
) -> dict[str, np.ndarray]:
    """Terms of the minimax lower-bound rate of Theorem 4.1 (constants 1):

    √(KT) (non-private), (K/ε)^{1−1/k}·T^{1/k} (privacy × heavy tails) and T·α^{1−1/k}
    (contamination × heavy tails).

    Args:
        T: horizon(s), a number or a 1-D array, each ≥ 1.
        K: number of arms (≥ 2).
        epsilon: privacy budget ε > 0.
        alpha: contamination level α ∈ [0, 1).
        k: moment order k > 1 (``inf`` allowed).

    Returns:
        ``{"sqrt(KT)": …, "privacy": …, "contamination": …}``, arrays shaped like ``T``.
    """
    t, K, epsilon, k = _common(T, K, epsilon, k)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, high_open=True)
    e = 1.0 - 1.0 / k
    return {
        "sqrt(KT)": np.sqrt(K * t),
        "privacy": (K / epsilon) ** e * t ** (1.0 / k),
        "contamination": t * alpha**e,
    }


def _total(terms: dict[str, Any]) -> np.ndarray:
    """The sum of a rate's terms (arrays, or numbers for a scalar T)."""
    return functools.reduce(operator.add, terms.values())


def lower_bound_rate(T: Any, K: int, epsilon: float, alpha: float, k: float = 2.0) -> np.ndarray:
    """Minimax lower-bound *rate* of Theorem 4.1, up to constants:
    √(KT) + (K/ε)^{1−1/k}·T^{1/k} + T·α^{1−1/k}. See :func:`lower_bound_terms`."""
    return _total(lower_bound_terms(T, K, epsilon, alpha, k))


# -- Theorem 6.2 (and Remark 6.3): Algorithm 1 + Algorithm 2, finite raw moment (PRAE-R) ----------


def _private_terms(t: np.ndarray, K: int, epsilon: float, k: float) -> dict[str, np.ndarray]:
    """√(KT log T) + (K log T/ε)^{(k−1)/k}·T^{1/k}: first two terms of Thms 6.2/6.10/6.12."""
    log_t = np.log(t)
    return {
        "sqrt(KT log T)": np.sqrt(K * t * log_t),
        "privacy": (K * log_t / epsilon) ** (1.0 - 1.0 / k) * t ** (1.0 / k),
    }


def upper_bound_raw_terms(
    T: Any, K: int, epsilon: float, alpha: float, k: float = 2.0
) -> dict[str, np.ndarray]:
    """Terms of the regret upper-bound rate of Algorithm 1 with the raw-moment PRM (PRAE-R),
    constants 1.

    α > 0 (Theorem 6.2): √(KT log T) + (K log T/ε)^{(k−1)/k}·T^{1/k} + T·α^{1−1/k} + K log T/α,
    the last term being the first-phase cost (every arm is pulled 𝒯 = Ω(log(1/δ)/α) times, δ = 1/T).
    α = 0 (Remark 6.3): the first two terms only.

    Args:
        T: horizon(s) ≥ 1. K: arms ≥ 2. epsilon: ε > 0. alpha: α ∈ [0, 1). k: moment order > 1.
    """
    t, K, epsilon, k = _common(T, K, epsilon, k)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, high_open=True)
    terms = _private_terms(t, K, epsilon, k)
    if alpha > 0:
        terms["contamination"] = t * alpha ** (1.0 - 1.0 / k)
        terms["first phase"] = K * np.log(t) / alpha
    return terms


def upper_bound_raw_rate(
    T: Any, K: int, epsilon: float, alpha: float, k: float = 2.0
) -> np.ndarray:
    """Regret upper-bound *rate* of PRAE-R (Theorem 6.2; Remark 6.3 for α = 0), up to constants.
    See :func:`upper_bound_raw_terms`."""
    return _total(upper_bound_raw_terms(T, K, epsilon, alpha, k))


# -- Theorems 6.10 and 6.12: Algorithm 1 + Algorithm 3, finite central moment (PRAE-C) ------------


def upper_bound_central_terms(
    T: Any, K: int, epsilon: float, alpha: float, k: float = 2.0, D: float = 1.0
) -> dict[str, np.ndarray]:
    """Terms of the regret upper-bound rate of Algorithm 1 with the central-moment PRM (PRAE-C),
    constants 1.

    α = 0 (Theorem 6.10): √(KT log T) + (K log T/ε)^{(k−1)/k}·T^{1/k} + γ, γ = K·D·log(DT)/ε.

    α ∈ (0, 0.133) (Theorem 6.12): the same two terms + T·α^{1−1/k} + γ̂,
    γ̂ = D·K·log T/α² + ι·D·K·log T/ε + D·K·log(DT)/ε, ι = (1 − α)/(0.249 − α).

    Args:
        T: horizon(s) ≥ 1. K: arms ≥ 2. epsilon: ε > 0. alpha: α ∈ [0, 0.133) (the breakdown
        point). k: moment order > 1. D: range of the means, D > 0 with D·T > 1 (log(DT) > 0 is
        what the theorem's γ assumes).
    """
    t, K, epsilon, k = _common(T, K, epsilon, k)
    alpha = check_real("alpha", alpha, low=0.0, high=ALPHA_MAX_CENTRAL, high_open=True)
    D = check_real("D", D, low=0.0, low_open=True, high=math.inf, high_open=True)
    terms = _private_terms(t, K, epsilon, k)
    log_t, log_dt = np.log(t), np.log(D * t)
    histogram = K * D * log_dt / epsilon  # first-fold histogram needs n ≳ log(D/δ)/ε
    if alpha == 0:
        terms["first phase"] = histogram  # γ of Theorem 6.10
    else:
        terms["contamination"] = t * alpha ** (1.0 - 1.0 / k)
        # γ̂ of Theorem 6.12
        terms["first phase"] = (
            D * K * log_t / alpha**2 + iota(alpha) * D * K * log_t / epsilon + histogram
        )
    return terms


def upper_bound_central_rate(
    T: Any, K: int, epsilon: float, alpha: float, k: float = 2.0, D: float = 1.0
) -> np.ndarray:
    """Regret upper-bound *rate* of PRAE-C (Theorem 6.10 for α = 0, Theorem 6.12 for α > 0), up to
    constants. See :func:`upper_bound_central_terms`."""
    return _total(upper_bound_central_terms(T, K, epsilon, alpha, k, D))


__all__ = [
    "ALPHA_MAX_CENTRAL",
    "iota",
    "lower_bound_rate",
    "lower_bound_terms",
    "upper_bound_central_rate",
    "upper_bound_central_terms",
    "upper_bound_raw_rate",
    "upper_bound_raw_terms",
]
