"""Top Two on per-arm doubling estimators (paper 3, §4.2–4.4 and Appendix H): AdaP-TT,
AdaP-TT* and TTUCB-DPA.

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*. Choices the
paper leaves open: docs/guides/bai.md, "Design choices".

All three are instances of the Top Two meta-algorithm (:class:`~privenv.agents.top_two.TopTwo`,
paper Algorithm 1) whose estimator is refreshed only at the end of per-arm **phases**:

* arm a's phase ends when its count doubles, N_{n,a} ≥ 2·N_{T_k(a),a} (Algorithm 5 line 3,
  Algorithm 11); with one initial pull per arm the phase ends are at counts 1, 2, 4, 8, …;
* **DAF(ε)** (Algorithm 5; AdaP-TT, AdaP-TT*): at a phase end, μ̃_a = mean of the rewards of
  *that phase only* (forgetting, line 6) + Lap(1/(εÑ_a)) (line 7), Ñ_a = the phase's sample
  count; the initial pull is released with Lap(1/ε). Each reward enters exactly one release of
  sensitivity 1/Ñ_a, so the algorithm is ε-DP in the central model (Lemma 20, rewards in [0, 1]);
* **DPA** (Algorithm 11; TTUCB-DPA): at a phase end, μ̂_a = mean of *all* arm-a rewards so far,
  no noise.

:class:`DoublingTopTwo` holds this machinery once (DPA = DAF without forgetting and without
noise). Between phase ends μ̃ and Ñ are frozen, so the GLR statistic and threshold (which use only
(μ̃, Ñ), Algorithm 9 line 11) can change only at phase ends: they are recomputed for the runs whose
estimate changed and memoised otherwise. The UCB leader uses (μ̃, Ñ) (line 14), the TC challenger
the global counts N (line 15), as :meth:`TopTwo.act_batch` does.

Module functions give the paper's formulas: :func:`k_fn` (k(x) = log₂x + 2),
:func:`daf_bonus` (eq. 11), :func:`daf_glr_threshold` (eq. 12), :func:`private_transport`
(eq. 13), :func:`lambert_w_bar` and :func:`h_fn` (Lemma 23), :func:`star_glr_threshold` (eq. 14),
:func:`daf_empirical_threshold` (the authors' public-code AdaP-TT threshold) and
:func:`star_empirical_threshold` (the same recipe applied to eq. 14).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from scipy.special import lambertw

from privenv._jit import generic, jit
from privenv.agents.kernel import charge_recorded
from privenv.agents.top_two import (
    C_G,
    GAUSSIAN_PARAMETERS,
    TTUCB,
    TopTwo,
    TopTwoState,
    beta_tracking,
    bonus,
    bonus_total_term,
    empirical_threshold,
    gaussian_bonus_log,
    gaussian_transport,
    glr_excess,
    glr_threshold,
    memoised_excess,
    prepare_stop,
    pull_leader,
    sampling_rule,
    transport,
    ucb_leader,
    update_estimator,
)
from privenv.parameters import EPSILON, SAMPLER, Options, Param
from privenv.privacy.exact import EPSILON_BITS, laplace_release, sampler_guarantee
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_noise
from privenv.privacy.samplers import ExactSampler, FloatSampler, central_sampler
from privenv.seeding import NoiseView, take_uniform

BONUSES = ("total", "literal", "public-code")
#: how line 10 chooses between leader and challenger, by β-tracking (Algorithm 9) or, as the
#: authors' public code does, by a fresh coin of bias β at every step
BETA_RULES = ("tracking", "coin")
#: which arm the stopping rule tests, â = argmax μ̃ (Algorithm 9 line 10) or, as the public
#: code, the UCB leader at the latest phase end, with the gap squared whatever its sign
STOP_CANDIDATES = ("argmax", "leader")
#: the cost of the TC challenger, W^G (line 15) or the public code's (μ̃_B − μ̃_a + κ(n))/√(1/N_B +
#: 1/N_a) with κ(n) = 1/(1 + √n), the gap with its sign
CHALLENGER_BONUSES = ("none", "kappa")
PI2 = math.pi**2
_BRANCH = float(np.nextafter(-math.exp(-1.0), 0.0))  # just inside W₋₁'s domain [−1/e, 0)


# -- the paper's formulas ----------------------------------------------------------------------
@jit(allocates=True)  # also called on arrays, from Python
def k_fn(x: Any) -> Any:
    """k(x) = log₂ x + 2 (eq. 11). On a phase-end count Ñ = 2^j it is an integer ≥ the phase
    index, which is how the union bounds over phases of Lemmas 21 and 23 use it."""
    return np.log2(x) + 2.0


def C_G_array(x: np.ndarray) -> np.ndarray:
    """𝒞_G (eq. 20) elementwise: one cached scalar minimisation per distinct value."""
    x = np.asarray(x, dtype=float)
    values, inverse = np.unique(x, return_inverse=True)
    return np.array([C_G(float(v)) for v in values])[inverse].reshape(x.shape)


@jit(allocates=True)  # also called on arrays, from Python
def daf_bonus(w: Any, k: Any, epsilon: float) -> Any:
    """b^{G,ε}_a = √(k/ω_a) + k/(εω_a) (eq. 11) with a given k (k(ω_a) in the paper, k(‖N‖₁)
    by default in :class:`AdaPTT`; see its ``bonus`` argument)."""
    return np.sqrt(k / w) + k / (epsilon * w)


@jit(allocates=True)  # also called on arrays, from Python
def public_code_bonus(w: Any, log_total: Any, epsilon: float) -> Any:
    """The authors' public-code leader bonus √(log n/(2Ñ_a)) + log n/(εÑ_a), ``log_total`` =
    log n (``bonus="public-code"``; the code's n counts the pulls of finished phases, ours every
    pull: at most log 2 apart)."""
    return np.sqrt(log_total / (2.0 * w)) + log_total / (epsilon * w)


@jit
def kappa_challenger_cost(mu_a: float, mu_b: float, w_a: float, w_b: float, total: int) -> float:
    """The authors' public-code TC cost (μ_a − μ_b + κ(n))/√(1/ω_a + 1/ω_b), κ(n) = 1/(1 + √n),
    n = ``total``: the gap with its sign plus a bonus that vanishes as n grows
    (``challenger_bonus="kappa"``; W^G of eq. 3 squares the positive part and has no bonus)."""
    return (mu_a - mu_b + 1.0 / (1.0 + np.sqrt(total))) / np.sqrt(1.0 / w_a + 1.0 / w_b)


def daf_glr_threshold(
    w_a: np.ndarray, w_b: np.ndarray, K: int, delta: float, epsilon: float, sigma: float
) -> np.ndarray:
    """c^{G,ε}_{a,b}(ω, δ) of eq. 12 (Lemma 21), broadcast:

    2c^G_{a,b}(ω, δ(k(ω_a)²k(ω_b)²π⁴/18)⁻¹) + (1/(ε²σ²)) Σ_{c∈{a,b}} (1/ω_c)(log(π²Kk(ω_c)²/(3δ)))²,

    c^G of eq. 4, whose 𝒞_G term is evaluated at log((K−1)/δ′)/2 for the reduced δ′.
    """
    w_a, w_b = (np.array(v) for v in np.broadcast_arrays(np.asarray(w_a, dtype=float),
                                                          np.asarray(w_b, dtype=float)))
    k_a, k_b = k_fn(w_a), k_fn(w_b)
    # log((K−1)/δ′) with δ′ = 18δ/(k_a² k_b² π⁴)
    log_inv = math.log((K - 1) / delta) + 2.0 * np.log(k_a * k_b) + 2.0 * math.log(PI2) \
        - math.log(18.0)
    c_G = (2.0 * C_G_array(log_inv / 2.0)
           + 2.0 * np.log(4.0 + np.log(w_a)) + 2.0 * np.log(4.0 + np.log(w_b)))
    laplace = (np.log(PI2 * K * k_a**2 / (3.0 * delta)) ** 2 / w_a
               + np.log(PI2 * K * k_b**2 / (3.0 * delta)) ** 2 / w_b)
    return 2.0 * c_G + laplace / (epsilon**2 * sigma**2)


@jit(allocates=True)  # also called on arrays, from Python
def private_transport(mu_a: Any, mu_b: Any, w_a: Any, w_b: Any, epsilon: float,
                      sigma: float) -> Any:
    """W^{G,ε}_{a,b}(μ, ω) = (μ_a − μ_b)₊ min{ε/2, (μ_a − μ_b)₊} / (2σ²(1/ω_a + 1/ω_b)) (eq. 13)."""
    gap = np.maximum(mu_a - mu_b, 0.0)
    return gap * np.minimum(epsilon / 2.0, gap) / (2.0 * sigma * sigma * (1.0 / w_a + 1.0 / w_b))


def lambert_w_bar(x: np.ndarray | float) -> np.ndarray:
    """W̄₋₁(x) = −W₋₁(−e^{−x}) for x ≥ 1 (Lemma 23, Lemma 40): the root z ≥ 1 of z − log z = x.

    scipy's ``lambertw`` on branch −1 while e^{−x} is a normal double (x ≤ 700); beyond, where
    −e^{−x} would underflow, the same root is found by Newton's method on z − log z = x (started
    at x + log x, converged to machine precision) — exact, not an asymptotic approximation.
    """
    x = np.asarray(x, dtype=float)
    if np.any(x < 1.0) or np.any(np.isnan(x)):
        raise ValueError(f"lambert_w_bar needs x >= 1, got {x!r}")
    out = np.empty_like(x)
    small = x <= 700.0
    # −e^{−x} ≥ −1/e; at the branch point x = 1 (W̄₋₁(1) = 1) scipy returns nan for the double
    # nearest −1/e, so the argument is kept one ulp inside the domain
    out[small] = -lambertw(np.maximum(-np.exp(-x[small]), _BRANCH), k=-1).real
    if np.any(~small):
        y = x[~small]
        z = y + np.log(y)
        for _ in range(8):  # quadratic convergence from a point within log(y)/y of the root
            z = z - (z - np.log(z) - y) / (1.0 - 1.0 / z)
        out[~small] = z
    return out


def h_fn(x: np.ndarray, K: int, delta: float) -> np.ndarray:
    """h(x, δ) = W̄₋₁(2 log(π²Kk(x)²/(2δ)) + 4 log(4 + log x) + ½)/2 (Lemma 23)."""
    x = np.asarray(x, dtype=float)
    arg = 2.0 * np.log(PI2 * K * k_fn(x) ** 2 / (2.0 * delta)) + 4.0 * np.log(4.0 + np.log(x)) \
        + 0.5
    return lambert_w_bar(arg) / 2.0


def star_glr_threshold(
    gap: np.ndarray, w_a: np.ndarray, w_b: np.ndarray, K: int, delta: float, epsilon: float,
    sigma: float,
) -> np.ndarray:
    """c̃^{G,ε}_{a,b}(μ̃, ω, δ) of eq. 14 (Lemma 23), broadcast; ``gap`` = μ̃_a − μ̃_b.

    If (μ̃_a − μ̃_b)₊ < ε/2: ½c^{G,ε}_{a,b}(ω, 2δ/3) + (√2/(εσ)) Σ_c √(h(ω_c,δ)/ω_c)
    log(π²Kk(ω_c)²/(2δ)); otherwise (1/(2σ²)) log(π²K max_c k(ω_c)/(2δ))
    + (ε/(2√2σ)) Σ_c √(ω_c h(ω_c, δ)).
    """
    gap, w_a, w_b = (np.array(v) for v in np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (gap, w_a, w_b))))
    h_a, h_b = h_fn(w_a, K, delta), h_fn(w_b, K, delta)
    k_a, k_b = k_fn(w_a), k_fn(w_b)
    small = (daf_glr_threshold(w_a, w_b, K, 2.0 * delta / 3.0, epsilon, sigma) / 2.0
             + math.sqrt(2.0) / (epsilon * sigma)
             * (np.sqrt(h_a / w_a) * np.log(PI2 * K * k_a**2 / (2.0 * delta))
                + np.sqrt(h_b / w_b) * np.log(PI2 * K * k_b**2 / (2.0 * delta))))
    large = (np.log(PI2 * K * np.maximum(k_a, k_b) / (2.0 * delta)) / (2.0 * sigma**2)
             + epsilon / (2.0 * math.sqrt(2.0) * sigma)
             * (np.sqrt(w_a * h_a) + np.sqrt(w_b * h_b)))
    return np.where(np.maximum(gap, 0.0) < epsilon / 2.0, small, large)


def daf_empirical_threshold(
    w_a: np.ndarray, w_b: np.ndarray, delta: float, epsilon: float
) -> np.ndarray:
    """The authors' public-code AdaP-TT threshold (docs/guides/bai.md), for the **unit-variance**
    statistic ½(μ̃_a − μ̃_b)₊²/(1/Ñ_a + 1/Ñ_b):

    log(1/δ) + log(1 + log Ñ_a) + log(1 + log Ñ_b) + (1/Ñ_a + 1/Ñ_b) log²(1/δ)/ε².
    """
    L = math.log(1.0 / delta)
    return (L + np.log1p(np.log(w_a)) + np.log1p(np.log(w_b))
            + (1.0 / w_a + 1.0 / w_b) * L * L / epsilon**2)


def star_empirical_threshold(
    gap: np.ndarray, w_a: np.ndarray, w_b: np.ndarray, delta: float, epsilon: float
) -> np.ndarray:
    """Our ``"empirical"`` threshold for AdaP-TT* (the public code has no AdaP-TT*),
    for the **unit-variance** statistic ½(μ̃_a − μ̃_b)₊ min{ε/2, (μ̃_a − μ̃_b)₊}/(1/Ñ_a + 1/Ñ_b).

    The recipe of the public code's AdaP-TT rule applied to eq. 14: that rule is the paper's
    δ → 0 form of eq. 12 at σ = 1 (with the Gaussian part L, not 2L) plus log(1 + log Ñ_c) per arm.
    The paper's δ → 0 form of eq. 14 (the display after Lemma 23) at σ = 1, plus the same terms:

    L/2 + (ε/(2√2))(√ω_a + √ω_b)√L + ℓ                                if (μ̃_a − μ̃_b)₊ ≥ ε/2,
    L + (1/(2ε²))(1/ω_a + 1/ω_b)L² + (√2/ε)(√(1/ω_a) + √(1/ω_b))L^{3/2} + ℓ   otherwise,

    L = log(1/δ), ℓ = log(1 + log ω_a) + log(1 + log ω_b). In the low-privacy case (where
    W^{G,ε} = W^G) it differs from :func:`daf_empirical_threshold` only in its smaller
    ε-terms, so AdaP-TT and AdaP-TT* are compared under one calibration.
    """
    L = math.log(1.0 / delta)
    loglog = np.log1p(np.log(w_a)) + np.log1p(np.log(w_b))
    small = (L + (1.0 / w_a + 1.0 / w_b) * L * L / (2.0 * epsilon**2)
             + math.sqrt(2.0) / epsilon * (np.sqrt(1.0 / w_a) + np.sqrt(1.0 / w_b)) * L**1.5)
    large = L / 2.0 + epsilon / (2.0 * math.sqrt(2.0)) * (np.sqrt(w_a) + np.sqrt(w_b)) \
        * math.sqrt(L)
    return np.where(np.maximum(gap, 0.0) < epsilon / 2.0, small, large) + loglog


# -- the shared machinery: Algorithm 5 (DAF) and Algorithm 11 (DPA) -----------------------------
#: phase-end counts Ñ = 2^j, j < PHASE_TABLE, are the rows and columns of the threshold tables
#: (2⁴⁷ ≈ 1.4·10¹⁴ pulls of one arm: beyond any sample budget)
PHASE_TABLE = 48
#: :attr:`DoublingParams.threshold_kind`
TABLE, TABLE_BY_GAP, EMPIRICAL_TOTAL = 0, 1, 2
#: :attr:`DoublingParams.bonus_kind`
BONUS_GAUSSIAN, BONUS_DAF_TOTAL, BONUS_DAF_LITERAL, BONUS_PUBLIC = 0, 1, 2, 3
#: the codes of :attr:`DoublingParams.beta_rule`, ``stop_candidate`` and ``challenger_bonus``
#: (each the index of the option in :data:`BETA_RULES`, :data:`STOP_CANDIDATES`,
#: :data:`CHALLENGER_BONUSES`)
TRACKING, COIN = 0, 1
ARGMAX, LEADER = 0, 1
NO_KAPPA, KAPPA = 0, 1


class DoublingParams(NamedTuple):
    """The constants of a doubling Top Two algorithm (AdaP-TT, AdaP-TT*, TTUCB-DPA).

    The stopping thresholds use Ñ only at phase ends, where Ñ_a = 2^j: they are tabulated once by
    the formulas of this module, ``threshold_small[j_a, j_b]`` (and, for eq. 14 and its empirical
    form, ``threshold_large`` when (μ̃_a − μ̃_b)₊ ≥ ε/2). ``noise_multiplier`` is the audit hook
    (1 in every real agent; a mutant halves its noise with 0.5). ``sampling`` is read by
    :class:`DAFWrapper`'s kernels only (``WrapperParams``, the same fields).
    """

    K: int
    delta: float
    beta: float
    sigma: float
    glr_sigma: float
    epsilon: float
    private: bool
    forget: bool
    private_transport: bool
    bonus_kind: int
    alpha: float
    s: float
    threshold_kind: int
    threshold_small: np.ndarray
    threshold_large: np.ndarray
    noise_multiplier: float
    sampler: FloatSampler | ExactSampler
    words_per_step: int = 0
    beta_rule: int = TRACKING
    stop_candidate: int = ARGMAX
    challenger_bonus: int = NO_KAPPA
    sampling: int = 0  # an index of SAMPLING_RULES (below): TOP_TWO


@jit
def _phase_index(w: float) -> int:
    """j with Ñ = 2^j (exact: Ñ is a power of two at every phase end)."""
    return int(np.log2(w))


@update_estimator.register(DoublingParams)
@jit(inline="always")
def _doubling_update(p: DoublingParams, s: TopTwoState, noise: NoiseView, run: int, arm: int,
                     reward: float) -> None:
    """Store the reward in its arm's phase; release the arm if its count has doubled."""
    if p.private:  # DP needs rewards in [0, 1] (Lemma 20): clipped, part of the algorithm
        reward = np.minimum(np.maximum(reward, 0.0), 1.0)
    s.phase_sum[run, arm] += reward
    if s.contrib.shape[2] > 0:  # checking mode: pull s.t[run] enters the arm's next release
        s.contrib[run, arm, s.t[run]] = True
    if s.counts[run, arm] >= 2 * s.phase_start[run, arm]:  # Alg. 5 line 3: the count doubled
        _release(p, s, noise, run, arm)


@jit
def _release(p: DoublingParams, s: TopTwoState, noise: NoiseView, run: int, arm: int) -> None:
    """End the current phase of ``arm`` (Algorithm 5 lines 4–7; Algorithm 11)."""
    count = s.counts[run, arm]
    n_new = count - s.phase_start[run, arm] if p.forget else count  # line 5 (DPA: all so far)
    mean = s.phase_sum[run, arm] / n_new  # line 6
    if p.private:  # line 7: + Lap(1/(εÑ)), the sensitivity of a mean of Ñ rewards in [0, 1]
        mean, eps_release = _phase_release(p.sampler, p, mean, n_new, noise, run)
        rel = s.releases
        if rel.users.shape[2] > 0:  # checking mode: ε of the release = (1/Ñ)/b
            for i in range(rel.users.shape[2]):
                rel.users[run, 0, i] = s.contrib[run, arm, i]
            rel.epsilon[run, 0] = eps_release
            rel.count[run] = 1
    s.mu_tilde[run, arm] = mean
    s.n_tilde[run, arm] = n_new
    s.phases[run, arm] += 1  # line 4
    s.phase_start[run, arm] = count  # T_k(a) = n
    if p.forget:  # forgetting (line 6): the next phase starts from no reward
        s.phase_sum[run, arm] = 0.0
        if s.contrib.shape[2] > 0:
            for i in range(s.contrib.shape[2]):
                s.contrib[run, arm, i] = False
    s.dirty[run] = True


@generic
def _phase_release(sampler: FloatSampler | ExactSampler, p: DoublingParams, mean: float,
                   n_new: int, noise: NoiseView, run: int) -> tuple[float, float]:
    """(the phase mean + Lap(1/(εÑ)), the ε of that release) with the agent's sampler."""
    raise NotImplementedError


@_phase_release.register(FloatSampler)
@jit(inline="always")
def _phase_release_float(sampler: FloatSampler, p: DoublingParams, mean: float, n_new: int,
                         noise: NoiseView, run: int) -> tuple[float, float]:
    scale = p.noise_multiplier * (1.0 / (p.epsilon * n_new))
    return mean + laplace_noise(take_uniform(noise, run), scale), 1.0 / (n_new * scale)


@_phase_release.register(ExactSampler)
@jit(inline="always")
def _phase_release_exact(sampler: ExactSampler, p: DoublingParams, mean: float, n_new: int,
                         noise: NoiseView, run: int) -> tuple[float, float]:
    # the exact sampler: ε′ = 2²⁰/q
    return (laplace_release(noise, run, mean, 1.0 / n_new, sampler.q),
            2.0**EPSILON_BITS / sampler.q)


@bonus_total_term.register(DoublingParams)
@jit(inline="always")
def _doubling_bonus_total(p: DoublingParams, total: int) -> float:
    if p.bonus_kind == BONUS_DAF_TOTAL:
        return k_fn(total)  # k(‖N‖₁)
    if p.bonus_kind == BONUS_DAF_LITERAL:
        return 0.0  # unused
    return np.log(total)  # log ‖N‖₁ (b^G of TTUCB-DPA; the public code's bonus)


@bonus.register(DoublingParams)
@jit(inline="always")
def _doubling_bonus(p: DoublingParams, w: float, total_term: float) -> float:
    if p.bonus_kind == BONUS_DAF_TOTAL:  # b^{G,ε} (eq. 11) with k(‖N‖₁)
        return daf_bonus(w, total_term, p.epsilon)
    if p.bonus_kind == BONUS_DAF_LITERAL:  # eq. 11 as printed, k(ω_a)
        return daf_bonus(w, k_fn(w), p.epsilon)
    if p.bonus_kind == BONUS_PUBLIC:  # √(log n/(2Ñ_a)) + log n/(εÑ_a)
        return public_code_bonus(w, total_term, p.epsilon)
    return gaussian_bonus_log(w, total_term, p.sigma, p.alpha, p.s)  # b^G (eq. 3), TTUCB-DPA


@jit
def _cost(p: DoublingParams, mu_a: float, mu_b: float, w_a: float, w_b: float,
          sigma: float) -> float:
    if p.private_transport:
        return private_transport(mu_a, mu_b, w_a, w_b, p.epsilon, sigma)  # W^{G,ε}, eq. 13
    return gaussian_transport(mu_a, mu_b, w_a, w_b, sigma)  # W^G, eq. 3


@transport.register(DoublingParams)
@jit(inline="always")
def _doubling_transport(p: DoublingParams, mu_a: float, mu_b: float, w_a: float, w_b: float,
                        sigma: float, total: int) -> float:
    if p.challenger_bonus == KAPPA:  # the public code's challenger cost
        return kappa_challenger_cost(mu_a, mu_b, w_a, w_b, total)
    return _cost(p, mu_a, mu_b, w_a, w_b, sigma)  # line 15: W^G (W^{G,ε} for AdaP-TT*)


@pull_leader.register(DoublingParams)
@jit(inline="always")
def _doubling_pull_leader(p: DoublingParams, s: TopTwoState, noise: NoiseView, run: int,
                          leader: int) -> bool:
    if p.beta_rule == COIN:  # the public code: the leader with probability β, at every step
        return take_uniform(noise, run) <= p.beta
    return beta_tracking(p, s, run, leader)  # line 16: β-tracking


@prepare_stop.register(DoublingParams)
@jit(inline="always")
def _prepare_glr(p: DoublingParams, s: TopTwoState, run: int, a_hat: int, total: int) -> None:
    """The GLR statistic and threshold use only (μ̃, Ñ) (Algorithm 9 line 11): recomputed after a
    release (a call, at phase ends only), memoised in between."""
    if s.dirty[run]:
        _refresh_glr(p, s, run, a_hat, total)


@jit
def _refresh_glr(p: DoublingParams, s: TopTwoState, run: int, a_hat: int, total: int) -> None:
    """Recompute the GLR statistic and threshold of every pair after a release.

    The tested arm is â = argmax μ̃ (line 10), or with ``stop_candidate="leader"`` the UCB
    leader c of this phase end, tested against every other arm with the gap squared whatever its
    sign (the public code). Slot b holds the pair (c, b), and slot c the pair (c, â): the kernel
    reads every slot but â's (the same pairs when c = â)."""
    c = a_hat if p.stop_candidate == ARGMAX else ucb_leader(p, s, run, total)
    mu_a, w_a = s.mu_tilde[run, c], s.n_tilde[run, c]
    j_a = _phase_index(w_a)
    for b in range(p.K):
        other = a_hat if b == c else b
        mu_b, w_b = s.mu_tilde[run, other], s.n_tilde[run, other]
        # |gap|: for c = â every gap is ≥ 0, so this is the (μ̃_â − μ̃_b)₊ of eq. 3 and 13
        hi, lo = (mu_a, mu_b) if mu_a >= mu_b else (mu_b, mu_a)
        s.glr_stat[run, b] = _cost(p, hi, lo, w_a, w_b, p.glr_sigma)
        if p.threshold_kind == EMPIRICAL_TOTAL:
            s.glr_thr[run, b] = empirical_threshold(total, p.delta)
        elif p.threshold_kind == TABLE_BY_GAP and not hi - lo < p.epsilon / 2.0:
            s.glr_thr[run, b] = p.threshold_large[j_a, _phase_index(w_b)]
        else:
            s.glr_thr[run, b] = p.threshold_small[j_a, _phase_index(w_b)]
    s.dirty[run] = False


glr_excess.register(DoublingParams)(memoised_excess)


@sampling_rule.register(DoublingParams)
@jit
def _doubling_sampling(p: DoublingParams, s: TopTwoState, run: int, total: int) -> int:
    return -1  # the Top Two rule (Algorithm 1's lines 8–11)


# -- the generic wrapper (NeurIPS 2023 version, Appendix D.1): other sampling rules -------------
#: the sampling rules of :class:`DAFWrapper`, indexed by ``WrapperParams.sampling``
SAMPLING_RULES = ("top-two", "uniform", "lucb")
TOP_TWO, UNIFORM, LUCB = range(3)

#: the wrapper's constants: the fields of :class:`DoublingParams`, ``sampling`` the index of its
#: sampling rule. A type of its own, so that AdaP-TT's kernels (:class:`DoublingParams`) compile
#: without the other rules.
if TYPE_CHECKING:  # (the checker cannot follow a NamedTuple whose fields are computed)
    class WrapperParams(DoublingParams): ...
else:
    WrapperParams = NamedTuple("WrapperParams", list(DoublingParams.__annotations__.items()))
for _generic, _impl in ((update_estimator, _doubling_update),
                        (bonus_total_term, _doubling_bonus_total), (bonus, _doubling_bonus),
                        (transport, _doubling_transport), (pull_leader, _doubling_pull_leader),
                        (prepare_stop, _prepare_glr), (glr_excess, memoised_excess)):
    _generic.register(WrapperParams)(_impl)


@jit(inline="always")
def uniform_arm(p: DoublingParams, s: TopTwoState, run: int) -> int:
    """Uniform sampling (round robin): the arm with the fewest pulls N_{n,a}, the smallest index
    among ties. It reads no mean: the baseline sampling rule of Garivier & Kaufmann (2016)."""
    arm = 0
    for a in range(1, p.K):
        if s.counts[run, a] < s.counts[run, arm]:
            arm = a
    return arm


@jit(inline="always")
def lucb_arm(p: DoublingParams, s: TopTwoState, run: int, total: int) -> int:
    """LUCB (Kalyanakrishnan, Tewari, Auer, Stone 2012) on the estimator's means: the empirical
    best h = argmax_a μ̃_a and its strongest rival l = argmax_{a≠h} μ̃_a + b_a(Ñ), with the
    estimator's bonus b (b^{G,ε} of eq. 11 for DAF(ε)). LUCB pulls both each round; one pull per
    step, we pull the one with fewer pulls (h on ties), which alternates between them."""
    h = 0
    for a in range(1, p.K):
        if s.mu_tilde[run, a] > s.mu_tilde[run, h]:
            h = a
    total_term = _doubling_bonus_total(p, total)
    rival, best = -1, -np.inf
    for a in range(p.K):
        if a != h:
            index = s.mu_tilde[run, a] + _doubling_bonus(p, s.n_tilde[run, a], total_term)
            if index > best:
                rival, best = a, index
    return h if s.counts[run, h] <= s.counts[run, rival] else rival


@sampling_rule.register(WrapperParams)
@jit(inline="always")
def _wrapper_sampling(p: WrapperParams, s: TopTwoState, run: int, total: int) -> int:
    if p.sampling == UNIFORM:
        return uniform_arm(p, s, run)
    if p.sampling == LUCB:
        return lucb_arm(p, s, run, total)
    return -1  # TOP_TWO: Algorithm 1's lines 8–11


@functools.lru_cache(maxsize=64)
def _tables(kind: str, K: int, delta: float, epsilon: float,
            sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(small, large) threshold tables over phase-end counts Ñ_a = 2^i, Ñ_b = 2^j (read-only)."""
    w = 2.0 ** np.arange(PHASE_TABLE)
    w_a, w_b = w[:, None], w[None, :]
    zero, large = np.zeros((PHASE_TABLE, PHASE_TABLE)), np.full((1, 1), np.nan)
    if kind == "adap-tt theory":
        small = daf_glr_threshold(w_a, w_b, K, delta, epsilon, sigma)
    elif kind == "adap-tt empirical":
        small = daf_empirical_threshold(w_a, w_b, delta, epsilon)
    elif kind == "adap-tt-star theory":
        small = star_glr_threshold(zero, w_a, w_b, K, delta, epsilon, sigma)
        large = star_glr_threshold(zero + np.inf, w_a, w_b, K, delta, epsilon, sigma)
    elif kind == "adap-tt-star empirical":
        small = star_empirical_threshold(zero, w_a, w_b, delta, epsilon)
        large = star_empirical_threshold(zero + np.inf, w_a, w_b, delta, epsilon)
    elif kind == "ttucb-dpa theory":
        small = glr_threshold(w_a, w_b, K, delta)
    else:  # ttucb-dpa empirical: a function of the total count, not of Ñ
        small = np.full((1, 1), np.nan)
    for table in (small, large):
        table.flags.writeable = False
    return np.ascontiguousarray(small), np.ascontiguousarray(large)


class DoublingTopTwo(TopTwo):
    """Algorithm 1 with a per-arm doubling estimator: DAF(ε) (Algorithm 5) when ``forget`` is
    true, DPA (Algorithm 11) when it is false and ε = ∞ (no noise).

    Per-run state added to :class:`~privenv.agents.top_two.TopTwo`'s (read as ``agent.phases``
    etc.): ``phase_start`` N_{T_k(a),a} (the count at the start of arm a's current phase; 0
    before its first pull), ``phase_sum`` (sum of the rewards the next release will use),
    ``mu_tilde`` μ̃, ``n_tilde`` Ñ (the number of rewards behind μ̃), ``phases`` k_{n,a}
    (releases so far; the paper's episode index).

    Subclasses set :attr:`name`, the transport (:attr:`private_transport`) and the bonus and
    thresholds in :meth:`kernel_params`. In checking mode (a ledger attached before
    :meth:`reset`) every release charges its users, the pull indices t whose rewards it used,
    ε_release = sensitivity/scale = (1/Ñ)/b — so a reward reused across phases, or a smaller
    noise scale, shows up in the ledger.
    """

    forget: bool = True
    private_transport: bool = False
    #: audit hook — multiplies the Laplace scale of every release (1 in every real agent)
    noise_multiplier: float = 1.0
    #: the noise sampler (:class:`AdaPTT` takes it as a parameter; the non-private agents draw
    #: no noise)
    sampler: str = "float"

    def __init__(self, K: int, epsilon: float, delta: float, beta: float, reward_mode: str,
                 n_runs: int) -> None:
        super().__init__(K, delta=delta, beta=beta, reward_mode=reward_mode, n_runs=n_runs)
        self.epsilon = epsilon  # checked by the subclass (ε = ∞ for the non-private TTUCB-DPA)

    @property
    def private(self) -> bool:
        return math.isfinite(self.epsilon)

    def doubling_params(self, bonus_kind: int, thresholds: str, threshold_kind: int,
                        alpha: float = 0.0, s: float = 0.0, beta_rule: int = TRACKING,
                        stop_candidate: int = ARGMAX,
                        challenger_bonus: int = NO_KAPPA) -> DoublingParams:
        small, large = _tables(thresholds, self.K, self.delta, self.epsilon, self.sigma)
        sampler = central_sampler(self.sampler if self.private else "float", self.epsilon,
                                  float(self.noise_multiplier))
        return DoublingParams(
            K=self.K, delta=self.delta, beta=self.beta, sigma=self.sigma,
            glr_sigma=self.glr_sigma, epsilon=self.epsilon, private=self.private,
            forget=self.forget, private_transport=self.private_transport,
            bonus_kind=bonus_kind, alpha=alpha, s=s, threshold_kind=threshold_kind,
            threshold_small=small, threshold_large=large,
            noise_multiplier=float(self.noise_multiplier), sampler=sampler,
            words_per_step=sampler.words, beta_rule=beta_rule, stop_candidate=stop_candidate,
            challenger_bonus=challenger_bonus)

    def charge_releases(self) -> None:
        charge_recorded(self, self.state.releases, ("DAF phase mean",))

    def episode_info(self) -> dict[str, np.ndarray]:
        """``adaptivity_rounds`` C(τ) = Σ_a k_{τ,a} (Appendix H): the number of releases (episodes,
        the initial one included) at the stop, or at the budget for runs that did not stop;
        ``released_pulls`` Σ_a N_{T_k(a),a}: the pulls behind the releases so far, i.e. τ without
        the pulls of unfinished phases — the stopping time the authors' public code reports."""
        return {"adaptivity_rounds": self.phases.sum(axis=1),
                "released_pulls": self.phase_start.sum(axis=1)}


class AdaPTT(DoublingTopTwo):
    """AdaP-TT (paper 3, Algorithm 9): ε-global-DP Top Two with the DAF(ε) estimator, the
    Gaussian transportation cost W^G (eq. 3, leader/challenger and stopping), the bonus b^{G,ε}
    (eq. 11) and the threshold c^{G,ε} (eq. 12, Lemma 21).

    * lines 4–9: DAF(ε) (Algorithm 5), see :class:`DoublingTopTwo`;
    * line 10–13: â = argmax μ̃; stop when W^G_{â,a}(μ̃, Ñ) ≥ c_{â,a}(Ñ, δ) for all a ≠ â;
    * line 14: leader B = argmax μ̃_a + b^{G,ε}_a(Ñ); line 15: challenger with the global N;
    * line 16: β-tracking.

    The stopping time counts every pull, including those of unfinished phases (whose rewards are
    never released). Rewards are clipped to [0, 1] before entering a phase mean (the DP
    guarantee assumes [0, 1], Lemma 20; Bernoulli rewards are unchanged).

    **Bonus (eq. 11).** Taken literally, k(ω_a) makes the bonus of an arm shrink with its own count
    only: an arm with a very low first private mean (Laplace noise of scale 1/ε on one reward) is
    never leader or challenger again and the run never stops (docs/guides/bai.md). Default
    ``bonus="total"`` uses k(‖N‖₁), the total count, as the paper's analysis (§4.3) and the authors'
    public code do; ``bonus="literal"`` is eq. 11 as printed.

    **The authors' public code** (github.com/achraf-azize/DP-BAI, ``algorithms/adapTT.py``, what
    the paper's figures ran) differs from Algorithm 9 in four choices, each an option here so its
    effect can be measured (docs/results/bai.md); the defaults are the paper's:
    ``beta_rule="coin"`` (a coin of bias β at every step instead of β-tracking, line 16),
    ``stop_candidate="leader"`` (the stopping rule tests the UCB leader of the latest phase end
    with the squared gap whatever its sign, instead of â = argmax μ̃, lines 10–11),
    ``challenger_bonus="kappa"`` (:func:`kappa_challenger_cost` instead of W^G, line 15) and
    ``bonus="public-code"`` (:func:`public_code_bonus` instead of eq. 11, line 14). Its reported
    stopping time is also not ours: it omits the pulls of unfinished phases (reported here as the
    episode value ``released_pulls``, beside τ).

    Args:
        K: number of arms.
        epsilon: privacy budget ε > 0.
        delta: confidence δ ∈ (0, 1).
        threshold: ``"theory"``: W^G with σ against c^{G,ε} of eq. 12 (δ-correct, Lemma 21);
            ``"empirical"``: the authors' public-code rule, the unit-variance statistic
            ½(μ̃_â − μ̃_a)₊²/(1/Ñ_â + 1/Ñ_a) against log(1/δ) + log(1 + log Ñ_â) + log(1 + log Ñ_a)
            + (1/Ñ_â + 1/Ñ_a) log²(1/δ)/ε² (:func:`daf_empirical_threshold`), with the sign of
            the gap and â = argmax μ̃ (not the public code's UCB leader).
        bonus: ``"total"`` (default), ``"literal"`` or ``"public-code"``, see above.
        sigma: sub-Gaussian scale σ > 0 (1/2 for rewards in [0, 1]).
        beta: tracking proportion β ∈ (0, 1).
        reward_mode: ``"sample"`` (the sample is the reward) or ``"cost"`` (the observation).
        sampler: ``"float"`` (default: binary64 Laplace noise) or ``"exact"`` (the discrete
            Laplace on a grid, :mod:`privenv.privacy.exact`: each phase mean exactly ε′-DP,
            ε′ = 2²⁰/⌈2²⁰/ε⌉ ≤ ε, on the doubles the computer releases).
        beta_rule: ``"tracking"`` (default, line 16) or ``"coin"`` (the public code).
        stop_candidate: ``"argmax"`` (default, line 10) or ``"leader"`` (the public code).
        challenger_bonus: ``"none"`` (default: W^G, line 15) or ``"kappa"`` (the public code).
        n_runs: number of runs.
    """

    name = "adap-tt"
    parameters = {
        **TopTwo.parameters,
        **GAUSSIAN_PARAMETERS,
        "epsilon": Param(EPSILON),
        "bonus": Param(Options(BONUSES)),
        "sampler": Param(SAMPLER, assumes="sampler"),
        "beta_rule": Param(Options(BETA_RULES)),
        "stop_candidate": Param(Options(STOP_CANDIDATES)),
        "challenger_bonus": Param(Options(CHALLENGER_BONUSES)),
    }

    def __init__(
        self,
        K: int,
        epsilon: float = 1.0,
        delta: float = 0.01,
        threshold: str = "theory",
        bonus: str = "total",
        sigma: float = 0.5,
        beta: float = 0.5,
        reward_mode: str = "sample",
        sampler: str = "float",
        beta_rule: str = "tracking",
        stop_candidate: str = "argmax",
        challenger_bonus: str = "none",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(K, self.epsilon, delta, beta, reward_mode, n_runs)

    @property
    def privacy(self) -> PrivacyGuarantee:
        return sampler_guarantee(self.sampler, "central", self.epsilon, "reward")

    def kernel_params(self) -> DoublingParams:
        kind = {"total": BONUS_DAF_TOTAL, "literal": BONUS_DAF_LITERAL,  # eq. 11
                "public-code": BONUS_PUBLIC}[self.bonus]
        family = "adap-tt-star" if self.private_transport else "adap-tt"
        return self.doubling_params(
            kind, f"{family} {self.threshold}",  # eq. 12 / 14
            TABLE_BY_GAP if self.private_transport else TABLE,
            beta_rule=BETA_RULES.index(self.beta_rule),
            stop_candidate=STOP_CANDIDATES.index(self.stop_candidate),
            challenger_bonus=CHALLENGER_BONUSES.index(self.challenger_bonus))


class AdaPTTStar(AdaPTT):
    """AdaP-TT* (paper 3, Algorithm 10): AdaP-TT with the privacy-aware transportation cost
    W^{G,ε} (eq. 13) in the TC challenger (line 15) and the GLR stopping rule (line 11), and the
    mean-aware threshold c̃^{G,ε} of eq. 14 (Lemma 23, with h and W̄₋₁ computed exactly).

    Args: as :class:`AdaPTT`, except ``threshold``:
        ``"theory"``: W^{G,ε} with σ against c̃^{G,ε} (eq. 14), δ-correct (Lemma 23);
        ``"empirical"`` (our choice — the authors' public code has no AdaP-TT*): the
        unit-variance statistic W^{G,ε} (σ = 1) against :func:`star_empirical_threshold`, the
        paper's asymptotic form of eq. 14 (after Lemma 23) calibrated like the public code's
        AdaP-TT rule, in the spirit of Remark 53 ("empirical thresholds approximating the
        theoretical ones").
    """

    name = "adap-tt-star"
    private_transport = True  # W^{G,ε} (eq. 13) in the challenger and the GLR statistic


class DAFWrapper(AdaPTT):
    """The generic ε-global-DP wrapper of the NeurIPS 2023 version (Azize, Jourdan, Al Marjani,
    Basu, "On the Complexity of Differentially Private Best-Arm Identification with Fixed
    Confidence", Appendix D.1 and Remark 2): any BAI sampling rule that reads empirical means,
    run on the DAF(ε) estimator's private means (adaptive episodes with doubling and forgetting,
    D.1.1) and stopped by the private GLR stopping rule (D.1.2).

    The privacy and the δ-correctness do not depend on the sampling rule: every reward enters one
    Laplace release of one phase (Lemma 20 here), everything else is post-processing of the
    releases, and the threshold c^{G,ε} of eq. 12 makes the GLR rule δ-correct for any sampling
    rule (Lemma 21). ``sampling`` chooses the rule:

    * ``"lucb"`` (default): LUCB (Kalyanakrishnan et al. 2012) on the private means, with the DAF
      bonus b^{G,ε} of eq. 11 (:func:`lucb_arm`);
    * ``"uniform"``: round robin, which reads no mean (:func:`uniform_arm`);
    * ``"top-two"``: Algorithm 1's UCB leader and TC challenger, i.e. exactly :class:`AdaPTT`
      (the paper's instance of the wrapper, D.2).

    Args:
        sampling: the sampling rule, above.
        beta, beta_rule, challenger_bonus: as :class:`AdaPTT`, read by the Top Two rule only.
        K, epsilon, delta, threshold, bonus, sigma, reward_mode, sampler, n_runs: as
            :class:`AdaPTT`.
        stop_candidate: as :class:`AdaPTT`.
    """

    name = "daf-wrapper"
    parameters = {
        **AdaPTT.parameters,
        "sampling": Param(Options(SAMPLING_RULES)),
        # read by the Top Two rule only (top_two_act returns the other rules' arm before them)
        **{key: replace(AdaPTT.parameters[key], only_with=("sampling", ("top-two",)))
           for key in ("beta", "beta_rule", "challenger_bonus")},
    }

    def __init__(
        self,
        K: int,
        sampling: str = "lucb",
        epsilon: float = 1.0,
        delta: float = 0.01,
        threshold: str = "theory",
        bonus: str = "total",
        sigma: float = 0.5,
        beta: float = 0.5,
        reward_mode: str = "sample",
        sampler: str = "float",
        beta_rule: str = "tracking",
        stop_candidate: str = "argmax",
        challenger_bonus: str = "none",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(K, epsilon, delta, threshold, bonus, sigma, beta, reward_mode, sampler,
                         beta_rule, stop_candidate, challenger_bonus, n_runs)

    def kernel_params(self) -> WrapperParams:
        return WrapperParams(**{**super().kernel_params()._asdict(),
                                "sampling": SAMPLING_RULES.index(self.sampling)})


class TTUCBDPA(DoublingTopTwo):
    """TTUCB with doubling per arm (paper 3, Appendix H, Algorithm 11): a batched, non-private
    TTUCB. Means are refreshed only when an arm's count doubles, with **all** its rewards so far
    (no forgetting, no noise); W^G and b^G (eq. 3), threshold c^G (eq. 4).

    The number of adaptivity rounds C(τ) = Σ_a k_{τ,a} (Appendix H) is reported per run by
    :meth:`episode_info` as ``adaptivity_rounds``.

    Deviation (a reading of Algorithm 11): it returns (μ̂_{n,a}, N_{n,a}); we pair μ̂ with the
    number of rewards behind it, N_{T_k(a),a}, in the leader's bonus and the GLR statistic, so
    the statistic is the Gaussian GLR of the released means (c^G is time-uniform, Lemma 35, hence
    valid on this subsequence) and the stopping rule changes only at phase ends, the source of
    the factor 2 in the paper's bound (2T*_{KL,β}).

    Args:
        K, delta, sigma, beta, alpha, s, reward_mode, n_runs: as
            :class:`~privenv.agents.top_two.TTUCB`.
        threshold: ``"theory"`` (c^G, eq. 4) or ``"empirical"`` (the public-code TTUCB rule
            log((1 + log n)/δ) with the unit-variance statistic; n = total pulls at the last
            phase end — between phase ends the statistic is frozen and this threshold only
            grows, so the stopping decisions equal those of evaluating it with the current n).
    """

    name = "ttucb-dpa"
    parameters = TTUCB.parameters
    forget = False

    def __init__(
        self,
        K: int,
        delta: float = 0.01,
        threshold: str = "theory",
        sigma: float = 0.5,
        beta: float = 0.5,
        alpha: float = 1.2,
        s: float = 1.2,
        reward_mode: str = "sample",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(K, math.inf, delta, beta, reward_mode, n_runs)

    def kernel_params(self) -> DoublingParams:
        kind = EMPIRICAL_TOTAL if self.threshold == "empirical" else TABLE  # eq. 4
        return self.doubling_params(BONUS_GAUSSIAN, f"ttucb-dpa {self.threshold}", kind,
                                    self.alpha, self.s)


class NonPrivateAdaPTT(TTUCBDPA):
    """Non-private AdaP-TT (Azize, Jourdan, Al Marjani, Basu, NeurIPS 2023, "On the Complexity of
    Differentially Private Best-Arm Identification with Fixed Confidence", Theorem 6 and its
    Appendix E.8): AdaP-TT's doubling *and forgetting* per arm without the Laplace noise — each
    arm's mean is refreshed when its count doubles, from the rewards of its last phase only —
    with the non-private leader and challenger (their eq. 20, 21: W^G and b^G, eq. 3 here) and the
    non-private GLR stopping rule (their eq. 13: c^G, eq. 4 here, on the released means and the
    phase counts Ñ behind them, time-uniform as for :class:`TTUCBDPA`).

    It isolates the cost of the doubling-and-forgetting estimator from the cost of the noise: the
    NeurIPS version's "multiplicative four factor" against TTUCB (two from the doubling, two from
    forgetting half of the samples). :class:`TTUCBDPA` is the same without forgetting.

    Args:
        K, delta, threshold, sigma, beta, alpha, s, reward_mode, n_runs: as :class:`TTUCBDPA`.
    """

    name = "adap-tt-nonprivate"
    forget = True
