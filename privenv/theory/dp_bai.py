r"""The ε-global-DP characteristic time of Bernoulli best-arm identification with the divergence
d_ε in the transportation cost: our reading of the lower bound of Jourdan & Azize (2025),
*Optimal Best Arm Identification under Differential Privacy*, arXiv 2510.17348.

Their abstract (the full text was not available to us; docs/guides/zoo.md, "Optimal private
best-arm identification"): the lower
bound on E[τ_δ] of any δ-correct ε-global-DP algorithm on Bernoulli arms "replaces the KL
divergence in the transportation cost used by the non-private characteristic time with a new
information-theoretic quantity that optimally trades off between the KL divergence and the Total
Variation distance scaled by ε". We read that quantity as d_ε(x, y) = inf_z ε\|z − x\| + kl(z, y)
(:func:`privenv.theory.regret.d_eps`, the divergence of the same group's regret lower bound,
Azize et al. 2025, arXiv 2505.05613) and the characteristic time as the game of paper 3's eq. 1
with d = d_ε:

    T*_ε(ν)⁻¹ = sup_{ω∈Σ_K} inf_{λ∈Alt(ν)} Σ_a ω_a d_ε(μ_a, λ_a),

the bound then being E[τ_δ] ≥ T*_ε(ν) log(1/(2.4δ)) as for paper 3's bounds (the constant 2.4
is paper 3's; we do not know theirs). Since d_ε ≤ min{kl, ε·TV} pointwise, T*_ε is at least
paper 3's T*_g of Theorem 17 (:func:`privenv.theory.bai.global_dp_lower_bound`, the min of the
two games) — the abstract's "tighter lower bound". It tends to T*_KL as ε → ∞ and behaves as
T*_TV/ε as ε → 0.

**Method** (as :mod:`privenv.theory.bai`): with x_a = ω_a/ω_{a*}, the pair cost is
ψ_a(x) = inf_u d_ε(μ_{a*}, u) + x·d_ε(μ_a, u), increasing and concave, and
T*⁻¹ = sup_y y/(1 + Σ_a ψ_a⁻¹(y)). The inner infimum sits at the u where
(u − z*_{a*}(u)) + x(u − z*_a(u)) = 0 (z* the minimiser of d_ε, the envelope theorem; the agent's
:func:`privenv.agents.dp_top_two.dp_transport_point`), so along u ∈ (μ_a, μ_{a*})
x(u) = (z*_{a*}(u) − u)/(u − z*_a(u)) decreases from +∞ to 0 and ψ_a(x(u)) from
d_ε(μ_{a*}, μ_a) to 0: ψ_a⁻¹(y) by bisection on u.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privenv._validation import check_delta, check_epsilon
from privenv.theory.bai import _allocation, _instance, _maximise_level
from privenv.theory.regret import d_eps, d_eps_point

__all__ = ["EPS_CAP", "NoAllocation", "characteristic_time_dp", "dp_lower_bound",
           "optimal_allocation_dp"]

_BISECTION_STEPS = 64
#: the ε above which d_ε is computed at this ε, here and in the agent (a bound on the work, no
#: longer on overflow, d_eps_point being finite at every ε); at ε = 300 the minimiser sits at x
#: unless y is within e^{−250} of 0 or 1, so d_ε is kl to double precision for any mean a run sees
EPS_CAP = 300.0


class NoAllocation(ValueError):
    """The solver finds no allocation for this instance and ε (a best arm of mean exactly 1 at
    small ε, as on ``mu3``): T*_ε is not computed, rather than wrong."""


def _ratio_inverse(top: float, others: np.ndarray, epsilon: float, y: float) -> np.ndarray:
    """x_a(y) = min{x ≥ 0 : ψ_a(x) ≥ y} for each a ≠ a* (+inf when y ≥ sup ψ_a)."""
    out = np.empty(others.size)
    for i, low in enumerate(others):
        low = float(low)
        if y >= d_eps(top, low, epsilon):
            out[i] = math.inf
            continue
        lo, hi = low, top  # ψ(x(lo)) ≥ y > ψ(x(hi)) is kept invariant
        for _ in range(_BISECTION_STEPS):
            u = 0.5 * (lo + hi)
            if u in (lo, hi):
                break
            x = _weight_ratio(top, low, u, epsilon)
            if d_eps(top, u, epsilon) + x * d_eps(low, u, epsilon) >= y:
                lo = u
            else:
                hi = u
        out[i] = _weight_ratio(top, low, lo, epsilon)
    return out


def _weight_ratio(top: float, low: float, u: float, epsilon: float) -> float:
    """The weight ratio x = ω_a/ω_{a*} at which u minimises d_ε(μ*, ·) + x·d_ε(μ_a, ·):
    (z*_top − u)/(u − z*_a). u − z*_a is 0 at u = μ_a, where x = +inf, and rounds to 0 for u
    within a few ulps of 1 (z*_a = u shifted by −ε in log-odds, the same double there), where the
    bisection of :func:`_ratio_inverse` goes when μ* = 1 (``mu3``): +inf there too."""
    below = u - d_eps_point(low, u, epsilon)
    return (d_eps_point(top, u, epsilon) - u) / below if below > 0.0 else math.inf


def optimal_allocation_dp(mu: Any, epsilon: float) -> tuple[float, np.ndarray]:
    """(T*_ε(ν), ω*): the characteristic time of the module docstring and its optimal allocation,
    for a Bernoulli instance ``mu`` (K ≥ 2 means in [0, 1], a unique best)."""
    epsilon = min(check_epsilon(epsilon), EPS_CAP)  # d_ε = kl to double precision beyond
    inst = _instance(mu, "bernoulli")
    top, others = inst.mu_best, inst.mu_others
    y_sup = float(min(d_eps(top, float(m), epsilon) for m in others))
    inv_T, x = _maximise_level(lambda y: _ratio_inverse(top, others, epsilon, y), y_sup)
    if not inv_T > 0.0:
        raise NoAllocation(
            f"T*_eps: no allocation found for mu = {tuple(float(m) for m in mu)} at epsilon = "
            f"{epsilon:g} (a best arm of mean exactly 1 at small epsilon, as on mu3, is outside "
            "what this solver handles: the weight ratio never falls to 0 near u = 1)")
    return 1.0 / inv_T, _allocation(inst, x, 1.0 / (1.0 + float(np.sum(x))))


def characteristic_time_dp(mu: Any, epsilon: float) -> float:
    """T*_ε(ν) = (sup_ω inf_{λ∈Alt(ν)} Σ_a ω_a d_ε(μ_a, λ_a))⁻¹ (module docstring)."""
    return optimal_allocation_dp(mu, epsilon)[0]


def dp_lower_bound(mu: Any, epsilon: float, delta: float) -> float:
    """T*_ε(ν)·log(1/(2.4δ)), the lower bound on E[τ_δ] in paper 3's form (module docstring)."""
    delta = check_delta(delta)
    return characteristic_time_dp(mu, epsilon) * math.log(1.0 / (2.4 * delta))
