r"""Regret lower bounds of the K-armed Bernoulli bandit, non-private and under ε-DP, as curves in
the horizon T (docs/guides/zoo.md).

Every bound here is asymptotic, of the form lim inf_T Reg_T / log T ≥ C(ν, ε), so the curve is
C(ν, ε)·log T; arms with Δ_a = 0 contribute nothing. ``mu`` is a 1-D sequence of K ≥ 2 means in
[0, 1] (the best mean need not be unique).

* :func:`lai_robbins` — non-private (Lai & Robbins 1985; Burnetas & Katehakis 1996):
  C = Σ_a Δ_a / kl(μ_a, μ*).
* :func:`shariff_sheffet` — ε-global DP, the *order* Ω(Σ_a log T/Δ_a + K log T/ε) of Shariff &
  Sheffet (2018) for Bernoulli arms, drawn with constants 1 as max{Σ_a 1/Δ_a, K/ε} (the form in
  which Azize & Basu 2022 quote it); an order, not a bound with constants.
* :func:`azize_basu_2022` — ε-global DP, Azize & Basu (2022), Theorem 3 (eq. 4), for Bernoulli
  arms (their remark 2: t_inf = Δ_a, d_inf = kl(μ_a, μ*)): C = Σ_a Δ_a / min{kl(μ_a, μ*), 6εΔ_a}.
* :func:`azize_2025` — ε-global DP, Azize, Wu, Honda, Orabona, Ito & Basu (2025), Theorem 1 as
  stated in the available summaries (docs/guides/zoo.md): C = Σ_a Δ_a / d_ε(μ_a, μ*) with the
  divergence :func:`d_eps`, which interpolates between kl (large ε) and ε·TV (small ε) and is at
  most min{kl, ε·Δ}: this bound is above :func:`azize_basu_2022`'s at every ε.
* :func:`ldp_lower_bound` — ε-local DP: the Lai–Robbins argument on the randomized rewards, whose
  KL is at most c(ε)·TV² (the contraction of Duchi, Jordan & Wainwright 2013, with the constant
  c(ε) = min{4, e^{2ε}}(e^ε − 1)² of paper 3's Theorem 10), TV = Δ_a for Bernoulli arms:
  C = Σ_a Δ_a / min{kl(μ_a, μ*), c(ε)Δ_a²}. Ren, Zhou, Liu & Shroff (2020) state the order
  Ω(Σ_a log T/(ε²Δ_a)) for small ε; this is that order with the constants of our derivation.

**The divergence d_ε.** For x, y ∈ [0, 1],

    d_ε(x, y) = inf_{z ∈ [x∧y, x∨y]} ε\|z − x\| + kl(z, y),

the cost of moving the reward law from Ber(x) to Ber(y) through an intermediate Ber(z): the
first leg paid in total variation at rate ε (group privacy), the second in KL. The objective is
convex in z; setting its derivative ε·sign + log[z(1 − y)/((1 − z)y)] to zero gives the closed form
of :func:`d_eps_point` (the log-odds of z* are those of y shifted by ∓ε), clipped to the segment.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privenv._jit import jit
from privenv._validation import check_epsilon, check_points, check_vector
from privenv.theory.bai import c_local

__all__ = [
    "azize_2025",
    "azize_basu_2022",
    "d_eps",
    "d_eps_point",
    "kl_bern",
    "lai_robbins",
    "ldp_lower_bound",
    "lower_bounds",
    "shariff_sheffet",
]


# -- divergences (compiled scalars: the agents' indices use them) -------------------------------
@jit
def kl_bern(p: float, q: float) -> float:
    """kl(p, q) = KL(Ber(p) ‖ Ber(q)), with 0·log 0 = 0 (+inf when p ∈ (0, 1) and q ∈ {0, 1})."""
    out = 0.0
    if p > 0.0:
        out += p * math.log(p / q) if q > 0.0 else math.inf
    if p < 1.0:
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q)) if q < 1.0 else math.inf
    return out


# the ε from which d_eps_point shifts y's log-odds up in log form, as y/(1 − y)·e^ε overflows
# past ε ≈ 709.78 − log(2^53) ≈ 673 (y/(1 − y) < 2^53 for a double y < 1); below it the direct
# form, whose numbers the agents' indices (golden tests) are held to
_EPS_LOG_FORM = 600.0


@jit
def d_eps_point(x: float, y: float, epsilon: float) -> float:
    """The minimiser z* ∈ [x∧y, x∨y] of ε\\|z − x\\| + kl(z, y) (see the module docstring);
    finite for every ε > 0."""
    if x == y:
        return x
    if y <= 0.0 or y >= 1.0:  # kl(z, y) is finite only at z = y
        return y
    if x < y:  # log-odds(z*) = log-odds(y) − ε: the odds only shrink
        odds = y / (1.0 - y) * math.exp(-epsilon)
        return max(odds / (1.0 + odds), x)
    if epsilon < _EPS_LOG_FORM:  # log-odds(z*) = log-odds(y) + ε
        odds = y / (1.0 - y) * math.exp(epsilon)
        return min(odds / (1.0 + odds), x)
    t = math.log(y) - math.log1p(-y) + epsilon  # the same log-odds, finite: y > 0 is a double
    z = 1.0 / (1.0 + math.exp(-t)) if t >= 0.0 else math.exp(t) / (1.0 + math.exp(t))
    return min(z, x)


@jit
def d_eps(x: float, y: float, epsilon: float) -> float:
    """d_ε(x, y) = inf_{z ∈ [x∧y, x∨y]} ε\\|z − x\\| + kl(z, y) (module docstring)."""
    z = d_eps_point(x, y, epsilon)
    return epsilon * abs(z - x) + kl_bern(z, y)


# -- the bounds ----------------------------------------------------------------------------------
def _means(mu: Any) -> tuple[np.ndarray, float]:
    mu = check_vector("mu", mu, min_length=2)
    if mu.min() < 0.0 or mu.max() > 1.0:
        raise ValueError(f"mu must be Bernoulli means in [0, 1], got {mu!r}")
    return mu, float(mu.max())


def _curve(constant: float, T: Any) -> np.ndarray | float:
    T = check_points("T", T)
    out = constant * np.log(T)
    return float(out) if out.ndim == 0 else out


def _sum_over_arms(mu: Any, term: Any) -> float:
    """Σ over arms with Δ_a > 0 of ``term(μ_a, μ*, Δ_a)`` (a term with an infinite divergence is
    0: such an arm is told apart after O(1) pulls)."""
    mu, best = _means(mu)
    total = 0.0
    for m in mu:
        gap = best - float(m)
        if gap > 0.0:
            total += term(float(m), best, gap)
    return total


def lai_robbins(mu: Any, T: Any) -> np.ndarray | float:
    """Σ_a Δ_a log T / kl(μ_a, μ*) (Lai & Robbins 1985)."""
    return _curve(_sum_over_arms(mu, lambda m, b, g: g / kl_bern(m, b)), T)


def shariff_sheffet(mu: Any, T: Any, epsilon: float) -> np.ndarray | float:
    """max{Σ_a log T/Δ_a, K log T/ε}: the order of Shariff & Sheffet (2018), constants 1."""
    epsilon = check_epsilon(epsilon)
    mu, _ = _means(mu)
    return _curve(max(_sum_over_arms(mu, lambda m, b, g: 1.0 / g), mu.size / epsilon), T)


def azize_basu_2022(mu: Any, T: Any, epsilon: float) -> np.ndarray | float:
    """Σ_a Δ_a log T / min{kl(μ_a, μ*), 6εΔ_a} (Azize & Basu 2022, Theorem 3, Bernoulli)."""
    epsilon = check_epsilon(epsilon)
    return _curve(_sum_over_arms(
        mu, lambda m, b, g: g / min(kl_bern(m, b), 6.0 * epsilon * g)), T)


def azize_2025(mu: Any, T: Any, epsilon: float) -> np.ndarray | float:
    """Σ_a Δ_a log T / d_ε(μ_a, μ*) (Azize, Wu, Honda, Orabona, Ito & Basu 2025)."""
    epsilon = check_epsilon(epsilon)
    return _curve(_sum_over_arms(mu, lambda m, b, g: g / d_eps(m, b, epsilon)), T)


def ldp_lower_bound(mu: Any, T: Any, epsilon: float) -> np.ndarray | float:
    """Σ_a Δ_a log T / min{kl(μ_a, μ*), c(ε)Δ_a²}, ε-local DP (module docstring)."""
    c = c_local(epsilon)
    return _curve(_sum_over_arms(mu, lambda m, b, g: g / min(kl_bern(m, b), c * g * g)), T)


def lower_bounds(mu: Any, T: Any, epsilon: float) -> dict[str, np.ndarray | float]:
    """Every curve of this module at (μ, T, ε), by name."""
    return {
        "lai-robbins": lai_robbins(mu, T),
        "shariff-sheffet": shariff_sheffet(mu, T, epsilon),
        "azize-basu-2022": azize_basu_2022(mu, T, epsilon),
        "azize-2025": azize_2025(mu, T, epsilon),
        "ldp": ldp_lower_bound(mu, T, epsilon),
    }
