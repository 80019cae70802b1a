"""Characteristic times and sample-complexity lower bounds of best-arm identification (paper 3).

Paper 3 (Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*) states
every fixed-confidence lower bound as E[τ_δ] ≥ T*·log(1/(2.4δ)) with a characteristic time T*
defined as the value of a sup-inf game (eq. 1):

    T*_d(ν)⁻¹ = sup_{ω∈Σ_K} inf_{λ∈Alt(ν)} Σ_a ω_a d(ν_a, λ_a).

This module computes, for Bernoulli instances (means in [0, 1]) and Gaussian instances with a known
common standard deviation σ:

* T*_KL (eq. 1 with d = KL, Lemma 5) and its optimal allocation ω*;
* T*_{KL,β} (eq. 5: ω_{a*} = β fixed) and the β-optimal allocation; T*_KL = min_β T*_{KL,β};
* T*_TV = Σ_a 1/TV(ν_{a*}, ν_a) with the best arm counted at the smallest TV (Proposition 30:
  Σ_a 1/Δ_a, Δ_{a*} = Δ_min, for Bernoulli);
* T*_{TV²} = T*_KL(ν_G)/2, ν_G the unit-variance Gaussian instance with the same means
  (Corollary 11; Bernoulli only);
* the ε-local-DP bound of Corollary 11, max{T*_KL, T*_{TV²}/c(ε)}, c(ε) = min{4, e^{2ε}}(e^ε − 1)²;
* the ε-global-DP characteristic time of Theorem 17 (exact) and its relaxation of Corollary 18,
  max{T*_KL, T*_TV/ε};
* the ε at which each relaxed bound switches from the privacy term to T*_KL.

**Method.** Alt(ν) is the union over a ≠ a* of {λ : λ_a ≥ λ_{a*}}, so each game reduces to pairs
(a*, a). Every pair cost φ_a(ω_{a*}, ω_a) used here is increasing, concave and 1-homogeneous, so
with x_a = ω_a/ω_{a*} and ψ_a(x) = φ_a(1, x) (Garivier & Kaufmann 2016, Theorem 5)

    T*⁻¹ = sup_{y>0} y / (1 + Σ_{a≠a*} ψ_a⁻¹(y)),

a maximisation over one scalar of a quasi-concave function (y is linear, 1 + Σψ⁻¹ is convex), done
with bounded Brent search. For d = KL in a one-parameter exponential family the inner infimum over
λ is attained at the weighted mean m = (ω_{a*}μ_{a*} + ω_a μ_a)/(ω_{a*} + ω_a), so
ψ_a(x) = KL(μ_{a*}, m) + x·KL(μ_a, m) and ψ_a⁻¹ is found by bisection on m ∈ (μ_a, μ_{a*}).
For d = TV the cost Σ ω TV is concave in λ on [μ_a, μ_{a*}] (linear for Bernoulli), so the
infimum sits at an end point: ψ_a(x) = min(1, x)·TV(ν_{a*}, ν_a). For Theorem 17 the inner
infimum of a min is the min of the infima, so ψ_a = min(ψ_a^KL, ε ψ_a^TV) and
ψ_a⁻¹ = max((ψ_a^KL)⁻¹, (εψ_a^TV)⁻¹).

Logarithms are natural. Every ``mu`` argument is a 1-D sequence of K ≥ 2 means with a unique
maximum; ``family`` is ``"bernoulli"`` (default) or ``"gaussian"`` (then ``sigma`` > 0 applies).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import erf, rel_entr

from privenv._validation import check_choice, check_delta, check_epsilon, check_real, check_vector

FAMILIES = ("bernoulli", "gaussian")

_BISECTION_STEPS = 64  # halvings of a bounded interval: below float resolution
_SEARCH_XATOL = 1e-12  # relative tolerance of the outer search on the level y


# -- divergences ---------------------------------------------------------------------------------


def kl_bernoulli(p: Any, q: Any) -> np.ndarray | float:
    """KL(Ber(p) ‖ Ber(q)) = p log(p/q) + (1−p) log((1−p)/(1−q)), with 0·log 0 = 0 (may be +inf)."""
    p_arr, q_arr = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    for name, arr in (("p", p_arr), ("q", q_arr)):
        if not np.all((arr >= 0.0) & (arr <= 1.0)):
            raise ValueError(f"{name} must be in [0, 1], got {arr!r}")
    out = rel_entr(p_arr, q_arr) + rel_entr(1.0 - p_arr, 1.0 - q_arr)
    return float(out) if out.ndim == 0 else out


def kl_gaussian(p: Any, q: Any, sigma: float = 1.0) -> np.ndarray | float:
    """KL(N(p, σ²) ‖ N(q, σ²)) = (p − q)²/(2σ²)."""
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    out = (np.asarray(p, dtype=float) - np.asarray(q, dtype=float)) ** 2 / (2.0 * sigma**2)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class _Instance:
    """A validated instance: best arm, its mean, and the means of the K − 1 other arms."""

    mu: np.ndarray
    best: int
    family: str
    sigma: float

    @property
    def mu_best(self) -> float:
        return float(self.mu[self.best])

    @property
    def mu_others(self) -> np.ndarray:
        return np.delete(self.mu, self.best)

    def kl(self, p: Any, q: Any) -> np.ndarray:
        if self.family == "bernoulli":
            return np.asarray(rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q))
        return np.asarray((np.asarray(p) - np.asarray(q)) ** 2 / (2.0 * self.sigma**2))

    def tv_gaps(self) -> np.ndarray:
        """TV(ν_{a*}, ν_a) for a ≠ a*: Δ_a (Bernoulli), 2Φ(Δ_a/(2σ)) − 1 (Gaussian)."""
        gaps = self.mu_best - self.mu_others
        if self.family == "bernoulli":
            return gaps
        return np.asarray(erf(gaps / (2.0 * math.sqrt(2.0) * self.sigma)))


def _instance(mu: Any, family: str = "bernoulli", sigma: float = 1.0) -> _Instance:
    family = check_choice("family", family, FAMILIES)
    mu = check_vector("mu", mu, min_length=2)
    if family == "bernoulli" and not np.all((mu >= 0.0) & (mu <= 1.0)):
        raise ValueError(f"mu must contain Bernoulli means in [0, 1], got {mu.tolist()}")
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    best = int(np.argmax(mu))
    if np.count_nonzero(mu == mu[best]) > 1:
        raise ValueError(f"mu must have a unique best arm (a unique maximum), got {mu.tolist()}")
    return _Instance(mu=mu, best=best, family=family, sigma=sigma)


# -- ψ_a⁻¹ for the pair costs ---------------------------------------------------------------------


def _kl_sup(inst: _Instance) -> np.ndarray:
    """sup_x ψ_a^KL(x) = KL(μ_{a*}, μ_a) for each a ≠ a* (not attained)."""
    return inst.kl(inst.mu_best, inst.mu_others)


def _kl_ratio_inverse(inst: _Instance, y: float) -> np.ndarray:
    """x_a(y) = min{x ≥ 0 : ψ_a(x) ≥ y}, ψ_a(x) = KL(μ_{a*}, m) + x KL(μ_a, m) at the weighted
    mean m = (μ_{a*} + x μ_a)/(1 + x) (Garivier & Kaufmann 2016, Lemma 3). Bisection on m: ψ
    decreases from KL(μ_{a*}, μ_a) at m = μ_a to 0 at m = μ_{a*}; +inf when y ≥ sup ψ_a."""
    top, low = inst.mu_best, inst.mu_others
    lo, hi = low.copy(), np.full_like(low, top)  # ψ(lo) ≥ y > ψ(hi) is kept invariant
    with np.errstate(divide="ignore", invalid="ignore"):  # m = μ_a only once m hits float limits
        for _ in range(_BISECTION_STEPS):
            m = 0.5 * (lo + hi)
            x = (top - m) / (m - low)
            feasible = inst.kl(top, m) + x * inst.kl(low, m) >= y
            lo = np.where(feasible, m, lo)
            hi = np.where(feasible, hi, m)
        x = (top - lo) / (lo - low)
    return np.where(y < _kl_sup(inst), x, np.inf)


def _tv_ratio_inverse(tv: np.ndarray, y: float, scale: float = 1.0) -> np.ndarray:
    """x_a(y) for ψ_a(x) = scale·min(1, x)·TV_a: y/(scale·TV_a) if attainable, else +inf."""
    cap = scale * tv
    return np.where(y <= cap, y / cap, np.inf)


def _maximise_level(
    inverse: Callable[[float], np.ndarray], y_sup: float
) -> tuple[float, np.ndarray]:
    """sup_{0<y≤y_sup} y/(1 + Σ_a x_a(y)) and the ratios x at the maximiser (y_sup may be inf)."""

    def value(y: float) -> float:
        total = float(np.sum(inverse(y)))
        return 0.0 if not math.isfinite(total) else y / (1.0 + total)

    if not math.isfinite(y_sup):  # e.g. Bernoulli μ_{a*} = 1 with every other mean 0
        y_sup = 1.0
        while value(2.0 * y_sup) >= value(y_sup):
            y_sup *= 2.0
        y_sup *= 2.0
    res = minimize_scalar(
        lambda y: -value(y),
        bounds=(0.0, y_sup),
        method="bounded",
        options={"xatol": _SEARCH_XATOL * y_sup, "maxiter": 500},
    )
    y = float(res.x)
    # the maximum can sit at y_sup when it is attained (TV terms): compare with the end point
    if value(y_sup) > value(y):
        y = y_sup
    return value(y), inverse(y)


def _allocation(inst: _Instance, x: np.ndarray, w_best: float) -> np.ndarray:
    omega = np.empty(inst.mu.shape[0])
    omega[inst.best] = w_best
    omega[np.arange(inst.mu.shape[0]) != inst.best] = w_best * x
    return omega


# -- non-private characteristic times (Lemma 5, eq. 1, eq. 5) --------------------------------------


def optimal_allocation_kl(
    mu: Any, family: str = "bernoulli", sigma: float = 1.0
) -> tuple[float, np.ndarray]:
    """(T*_KL(ν), ω*): the characteristic time of eq. 1 with d = KL and its optimal allocation."""
    inst = _instance(mu, family, sigma)
    inv_T, x = _maximise_level(lambda y: _kl_ratio_inverse(inst, y), float(np.min(_kl_sup(inst))))
    return 1.0 / inv_T, _allocation(inst, x, 1.0 / (1.0 + float(np.sum(x))))


def characteristic_time_kl(mu: Any, family: str = "bernoulli", sigma: float = 1.0) -> float:
    """T*_KL(ν) of Lemma 5 / eq. 1 (Garivier & Kaufmann 2016)."""
    return optimal_allocation_kl(mu, family, sigma)[0]


def optimal_allocation_kl_beta(
    mu: Any, beta: float = 0.5, family: str = "bernoulli", sigma: float = 1.0
) -> tuple[float, np.ndarray]:
    """(T*_{KL,β}(ν), ω*_β) of eq. 5: the sup of eq. 1 restricted to ω_{a*} = β.

    ω*_β equalises the pair costs: ω_a = β·x_a(y) with Σ_{a≠a*} ω_a = 1 − β, T*_{KL,β}⁻¹ = β·y.
    """
    beta = check_real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
    inst = _instance(mu, family, sigma)

    def excess(y: float) -> float:  # increasing in y, −(1 − β) at y = 0
        return beta * float(np.sum(_kl_ratio_inverse(inst, y))) - (1.0 - beta)

    lo, hi = 0.0, float(np.min(_kl_sup(inst)))
    if not math.isfinite(hi):
        hi = 1.0
        while excess(hi) < 0.0:
            hi *= 2.0
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if excess(mid) >= 0.0 else (mid, hi)
    x = _kl_ratio_inverse(inst, hi)  # Σ x ≥ (1 − β)/β: rescale onto the simplex
    omega = _allocation(inst, x * (1.0 - beta) / (beta * float(np.sum(x))), beta)
    return 1.0 / (beta * hi), omega


def characteristic_time_kl_beta(
    mu: Any, beta: float = 0.5, family: str = "bernoulli", sigma: float = 1.0
) -> float:
    """T*_{KL,β}(ν) of eq. 5 (ω_{a*} = β fixed; β = 1/2 in TTUCB). T*_{KL,1/2} ≤ 2 T*_KL.

    Cached on the means (a bisection of about 50 ms; the rates of Theorems 22 and 24 call it at
    every ε of a reproduction's plan)."""
    try:
        means = np.asarray(mu, dtype=float)
    except (TypeError, ValueError):
        means = None
    if means is None or means.ndim != 1:  # the uncached call says what is wrong
        return optimal_allocation_kl_beta(mu, beta, family, sigma)[0]
    return _characteristic_time_kl_beta(tuple(means.tolist()), beta, family, sigma)


@functools.lru_cache(maxsize=1024)
def _characteristic_time_kl_beta(means: tuple[float, ...], beta: float, family: str,
                                 sigma: float) -> float:
    return optimal_allocation_kl_beta(np.array(means), beta, family, sigma)[0]


def characteristic_time_private_gaussian_beta(
    mu: Any, epsilon: float, beta: float = 0.5, sigma: float = 0.5
) -> float:
    """T*_{KL,β}(ν_{G,ε}) of eq. 15, the β-characteristic time AdaP-TT* targets (Theorem 24):

    T*_{KL,β}(ν_{G,ε})⁻¹ = max_{ω∈Σ_K, ω_{a*}=β} min_{a≠a*} g_a / (2σ²(1/β + 1/ω_a)),
    g_a = Δ_a·min{ε/2, Δ_a}.

    Each pair cost increases in ω_a, so the optimum equalises them at a level y: ω_a(y) =
    1/(g_a/(2σ²y) − 1/β), with Σ_{a≠a*} ω_a(y) = 1 − β (bisection on y ∈ (0, β·min g/(2σ²))).
    For ε/2 ≥ Δ_max it is T*_{KL,β} of the Gaussian instance N(μ_a, σ²) (eq. 5).
    """
    epsilon = check_epsilon(epsilon)
    beta = check_real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
    sigma = check_real("sigma", sigma, low=0.0, low_open=True, high=math.inf, high_open=True)
    inst = _instance(mu, "gaussian", sigma)
    gaps = inst.mu_best - inst.mu_others
    g = gaps * np.minimum(epsilon / 2.0, gaps)

    def excess(y: float) -> float:  # increasing in y, −(1 − β) at y = 0
        return float(np.sum(1.0 / (g / (2.0 * sigma**2 * y) - 1.0 / beta))) - (1.0 - beta)

    lo, hi = 0.0, beta * float(np.min(g)) / (2.0 * sigma**2)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if excess(mid) >= 0.0 else (mid, hi)
    return 1.0 / lo if lo > 0 else 1.0 / hi


# -- privacy characteristic times ------------------------------------------------------------------


def characteristic_time_tv(mu: Any, family: str = "bernoulli", sigma: float = 1.0) -> float:
    """T*_TV(ν) = Σ_a 1/t_a, t_a = TV(ν_{a*}, ν_a), t_{a*} = min_{a≠a*} t_a (Proposition 30).

    For Bernoulli t_a = Δ_a, giving Σ_a 1/Δ_a with Δ_{a*} = Δ_min. The Gaussian case
    (t_a = 2Φ(Δ_a/(2σ)) − 1) follows from the same proof, TV being concave in the mean gap.
    """
    tv = _instance(mu, family, sigma).tv_gaps()
    return float(1.0 / np.min(tv) + np.sum(1.0 / tv))


def characteristic_time_tv2(mu: Any) -> float:
    """T*_{TV²}(ν) = T*_KL(ν_G)/2 for a Bernoulli instance (Corollary 11), ν_G = N(μ_a, 1)."""
    _instance(mu, "bernoulli")
    return characteristic_time_kl(mu, "gaussian", 1.0) / 2.0


def c_local(epsilon: float) -> float:
    """c(ε) = min{4, e^{2ε}}(e^ε − 1)² of Theorem 10 (increasing, 0 at 0, +∞ at +∞)."""
    epsilon = check_epsilon(epsilon)
    factor = 4.0 if epsilon >= math.log(2.0) else math.exp(2.0 * epsilon)
    gain = math.expm1(epsilon) if epsilon < 700.0 else math.inf  # +inf past float range
    return factor * gain * gain


def local_dp_lower_bound(mu: Any, epsilon: float) -> float:
    """Corollary 11: T*_ℓ(ν; ε) ≥ max{T*_KL(ν), T*_{TV²}(ν)/c(ε)} (Bernoulli instances)."""
    epsilon = check_epsilon(epsilon)
    return max(characteristic_time_kl(mu), characteristic_time_tv2(mu) / c_local(epsilon))


def global_dp_characteristic_time(
    mu: Any, epsilon: float, family: str = "bernoulli", sigma: float = 1.0
) -> tuple[float, np.ndarray]:
    """(T*_g(ν; ε), ω) of Theorem 17, computed exactly:

    T*_g⁻¹ = sup_ω min_{a≠a*} min{inf_λ Σ ω KL, ε inf_λ Σ ω TV}.
    """
    epsilon = check_epsilon(epsilon)
    inst = _instance(mu, family, sigma)
    tv = inst.tv_gaps()

    def inverse(y: float) -> np.ndarray:
        return np.maximum(_kl_ratio_inverse(inst, y), _tv_ratio_inverse(tv, y, epsilon))

    y_sup = float(np.min(np.minimum(_kl_sup(inst), epsilon * tv)))
    inv_T, x = _maximise_level(inverse, y_sup)
    return 1.0 / inv_T, _allocation(inst, x, 1.0 / (1.0 + float(np.sum(x))))


def global_dp_lower_bound(
    mu: Any, epsilon: float, family: str = "bernoulli", sigma: float = 1.0
) -> float:
    """T*_g(ν; ε) of Theorem 17 (exact; ≥ the relaxation of Corollary 18)."""
    return global_dp_characteristic_time(mu, epsilon, family, sigma)[0]


def global_dp_lower_bound_relaxed(
    mu: Any, epsilon: float, family: str = "bernoulli", sigma: float = 1.0
) -> float:
    """Corollary 18: max{T*_KL(ν), T*_TV(ν)/ε} ≤ T*_g(ν; ε)."""
    epsilon = check_epsilon(epsilon)
    T_kl = characteristic_time_kl(mu, family, sigma)
    return max(T_kl, characteristic_time_tv(mu, family, sigma) / epsilon)


# -- upper bounds of the private Top Two algorithms (Theorems 22 and 24) ------------------------


def _gaps(mu: Any) -> np.ndarray:
    inst = _instance(mu, "gaussian", 1.0)
    return inst.mu_best - inst.mu_others


def adap_tt_upper_bound(mu: Any, epsilon: float, beta: float = 0.5, sigma: float = 0.5) -> float:
    """Theorem 22 (AdaP-TT): lim sup_{δ→0} E[τ_δ]/log(1/δ) ≤
    4T*_{KL,β}(ν)(1 + √(1 + Δ_max²/(2σ⁴ε²))), T*_{KL,β} of eq. 5 for the Gaussian instance with
    the same means and σ = 1/2 (Bernoulli rewards)."""
    epsilon = check_epsilon(epsilon)
    T = characteristic_time_kl_beta(mu, beta, "gaussian", sigma)
    d_max = float(np.max(_gaps(mu)))
    return 4.0 * T * (1.0 + math.sqrt(1.0 + d_max**2 / (2.0 * sigma**4 * epsilon**2)))


def theorem24_g1(y: float) -> float:
    """g₁(y) = sup{x : x² < x + y√(2x) + y²/4} of Theorem 24 (g₁(0) = 1): the largest root of
    x² − x − y√(2x) − y²/4, found by bracketing and bisection."""
    y = check_real("y", y, low=0.0, high=math.inf, high_open=True)

    def f(x: float) -> float:
        return x * x - x - y * math.sqrt(2.0 * x) - y * y / 4.0

    lo, hi = 1.0, 2.0  # f(1) = −y√2 − y²/4 ≤ 0
    while f(hi) < 0.0:
        lo, hi = hi, 2.0 * hi
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < 0.0 else (lo, mid)
    return hi


def theorem24_g2(y: float) -> float:
    """g₂(y) = 1 + 2(√(1 + 1/y) − 1)⁻¹ of Theorem 24 (increasing, → 1 as y → 0)."""
    y = check_real("y", y, low=0.0, low_open=True, high=math.inf, high_open=True)
    return 1.0 + 2.0 / (math.sqrt(1.0 + 1.0 / y) - 1.0)


def adap_tt_star_upper_bound(mu: Any, epsilon: float, beta: float = 0.5,
                             sigma: float = 0.5) -> float:
    """Theorem 24 (AdaP-TT*): lim sup_{δ→0} E[τ_δ]/log(1/δ) ≤

    4T*_{KL,β}(ν)·g₁(Δ_max/(σ²ε))                                   if Δ_max < ε/2,
    2T*_{KL,β}(ν_{G,ε})·g₂(ε²T*_{KL,β}(ν_{G,ε})·max{β, 1 − β}/4)/σ²   otherwise,

    T*_{KL,β}(ν_{G,ε}) of eq. 15 (:func:`characteristic_time_private_gaussian_beta`)."""
    epsilon = check_epsilon(epsilon)
    d_max = float(np.max(_gaps(mu)))
    if d_max < epsilon / 2.0:
        T = characteristic_time_kl_beta(mu, beta, "gaussian", sigma)
        return 4.0 * T * theorem24_g1(d_max / (sigma**2 * epsilon))
    T = characteristic_time_private_gaussian_beta(mu, epsilon, beta, sigma)
    return 2.0 * T * theorem24_g2(epsilon**2 * T * max(beta, 1.0 - beta) / 4.0) / sigma**2


def ctb_factor(epsilon: float) -> float:
    """(1 + 2/(e^ε − 1))² = 1/tanh²(ε/2): randomized response maps the means to
    μ_ε = ½ + (μ − ½)tanh(ε/2), shrinking every gap by tanh(ε/2), so CTB-TT's Gaussian
    characteristic time is TTUCB's times this factor: CTB-TT's asymptotic upper bound
    T*_{KL,β}(ν_ε) = (1 + 2/(e^ε − 1))²T*_{KL,β}(ν) (paper 3, §3.2, after Lemma 12)."""
    epsilon = check_epsilon(epsilon)
    return 1.0 / math.tanh(epsilon / 2.0) ** 2


# -- regime switches and the δ factor ----------------------------------------------------------


def local_regime_switch_epsilon(mu: Any) -> float:
    """The ε solving c(ε) = T*_{TV²}/T*_KL (Corollary 11's two terms equal; Bernoulli).

    Closed form: with r = T*_{TV²}/T*_KL, e^ε = (1 + √(1 + 4√r))/2 if r ≤ 4 (then ε ≤ log 2 and
    c(ε) = (e^ε(e^ε − 1))²), else e^ε = 1 + √r/2.
    """
    r = characteristic_time_tv2(mu) / characteristic_time_kl(mu)
    root = math.sqrt(r)
    if r <= 4.0:
        return math.log((1.0 + math.sqrt(1.0 + 4.0 * root)) / 2.0)
    return math.log1p(root / 2.0)


def global_regime_switch_epsilon(mu: Any, family: str = "bernoulli", sigma: float = 1.0) -> float:
    """The ε = T*_TV/T*_KL at which Corollary 18's two terms are equal."""
    return characteristic_time_tv(mu, family, sigma) / characteristic_time_kl(mu, family, sigma)


def sample_complexity_lower_bound(T_star: Any, delta: float) -> np.ndarray | float:
    """T*·log(1/(2.4δ)), the bound on E[τ_δ] of Lemma 5 / Theorems 10 and 17.

    The factor is ≤ 0 (the bound is vacuous) for δ ≥ 1/2.4; it is returned as is, not clipped.
    """
    delta = check_delta(delta)
    t = np.asarray(T_star, dtype=float)
    if not np.all(t > 0.0):
        raise ValueError(f"T_star must be > 0, got {T_star!r}")
    out = t * math.log(1.0 / (2.4 * delta))
    return float(out) if out.ndim == 0 else out
