"""Non-private references of the Bernoulli bandit: KL-UCB, Thompson sampling (Beta–Bernoulli) and
IMED, as compiled index policies (:mod:`privenv.agents.mab`'s :class:`~privenv.agents.mab.
IndexState`: pull counts N_a and reward sums S_a per run), and the building blocks the private
agents reuse: :func:`klucb_index` and :func:`beta_sample`.

Rewards are taken in [0, 1] (``BernoulliBandit-v0``'s are 0 or 1). Ties in every argmax/argmin go
to the smallest arm index. See docs/guides/zoo.md for the choices each paper leaves open.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from privenv._jit import jit
from privenv.agents.mab import IndexState, _IndexAgent, _sum_update, index_choice, index_update
from privenv.parameters import Param, Real
from privenv.seeding import NoiseView, take_uniform
from privenv.theory.regret import kl_bern

__all__ = ["IMED", "KLUCB", "ThompsonSampling", "beta_sample", "klucb_index"]

#: iterations of :func:`klucb_index` at most (it takes 6 kl evaluations on average, 21 at most
#: over 2·10⁴ random (p, v) with N ≤ 10⁶: docs/guides/zoo.md)
KLUCB_STEPS = 100
_ONE = 1.0 - 1e-15  # the largest index (kl(p, 1) = +inf for p < 1)


@jit
def klucb_index(p: float, v: float) -> float:
    """max{q ∈ [p, 1] : kl(p, q) ≤ v} (Garivier & Cappé 2011), for p ∈ [0, 1] and v ≥ 0.

    f(q) = kl(p, q) − v is convex and increasing on [p, 1), so the root q* is bracketed from both
    sides at every step: a Newton step from a point above q* stays above it (f lies above its
    tangents), and the chord between a point below and a point above crosses zero below it (f
    lies below its chords). Pinsker's inequality kl(p, q) ≥ 2(q − p)² starts the bracket at
    [p, min(p + √(v/2), 1⁻)]. Each step evaluates kl at the new upper bound when Newton and the
    chord halved the bracket, at its midpoint otherwise (f so steep near 1 that Newton crawls),
    and returns the upper bound once the bracket is below 1e-12 wide: the index stays an upper
    confidence bound.
    """
    if v <= 0.0 or p >= 1.0:
        return min(max(p, 0.0), 1.0)
    p = max(p, 0.0)
    lo, hi = p, min(p + math.sqrt(v / 2.0), _ONE)  # q* ∈ [lo, hi]
    x_lo, f_lo = p, -v  # an evaluated point below q*
    x_hi, f_hi = hi, kl_bern(p, hi) - v  # an evaluated point above q*
    if f_hi <= 0.0:  # the set reaches 1⁻ (only when the Pinsker bound was capped)
        return hi
    for _ in range(KLUCB_STEPS):
        width = hi - lo
        hi = min(hi, x_hi - f_hi * x_hi * (1.0 - x_hi) / (x_hi - p))  # f′ = (q − p)/(q(1 − q))
        lo = max(lo, x_lo - f_lo * (x_hi - x_lo) / (f_hi - f_lo))
        if hi - lo < 1e-12:
            break
        x = hi if hi - lo < 0.5 * width else 0.5 * (lo + hi)
        f = kl_bern(p, x) - v
        if f > 0.0:
            x_hi, f_hi, hi = x, f, x
        else:
            x_lo, f_lo, lo = x, f, x
    return hi


@jit
def beta_sample(noise: NoiseView, run: int, a: float, b: float) -> float:
    """One Beta(a, b) variate (a, b > 0) from ``run``'s uniforms: Cheng (1978), *Generating beta
    variates with nonintegral shape parameters*, CACM 21(4), algorithms BB (min(a, b) > 1) and BC
    (min(a, b) ≤ 1), rejection methods that use uniforms only (two per trial; acceptance
    ≥ 0.75 for BB, the rates Cheng tabulates for BC)."""
    lo, hi = min(a, b), max(a, b)
    alpha = lo + hi
    if lo > 1.0:  # algorithm BB
        beta = math.sqrt((alpha - 2.0) / (2.0 * lo * hi - alpha))
        gamma = lo + 1.0 / beta
        while True:
            u1, u2 = take_uniform(noise, run), take_uniform(noise, run)
            if u1 <= 0.0:  # log(0): a null-probability draw, redrawn
                continue
            v = beta * math.log(u1 / (1.0 - u1))
            w = lo * math.exp(v) if v < 700.0 else np.inf
            z = u1 * u1 * u2
            r = gamma * v - 1.3862944  # log 4
            s = lo + r - w
            if s + 2.609438 >= 5.0 * z:  # 1 + log 5
                break
            t = math.log(z)
            if s > t or r + alpha * math.log(alpha / (hi + w)) >= t:
                break
        if not math.isfinite(w):
            return 1.0 if a == lo else 0.0
        return w / (hi + w) if a == lo else hi / (hi + w)  # each side without cancellation
    # algorithm BC (roles of the two shapes as in Cheng: w scales the larger)
    beta = 1.0 / lo
    delta = 1.0 + hi - lo
    k1 = delta * (0.0138889 + 0.0416667 * lo) / (hi * beta - 0.777778)
    k2 = 0.25 + (0.5 + 0.25 / delta) * lo
    while True:
        u1, u2 = take_uniform(noise, run), take_uniform(noise, run)
        if u1 <= 0.0:
            continue
        if u1 < 0.5:
            y = u1 * u2
            z = u1 * y
            if 0.25 * u2 + z - y >= k1:
                continue
        else:
            z = u1 * u1 * u2
            if z <= 0.25:
                v = beta * math.log(u1 / (1.0 - u1))
                w = hi * math.exp(v) if v < 700.0 else np.inf
                break
            if z >= k2:
                continue
        v = beta * math.log(u1 / (1.0 - u1))
        w = hi * math.exp(v) if v < 700.0 else np.inf
        if alpha * (math.log(alpha / (lo + w)) + v) - 1.3862944 >= math.log(z):
            break
    if not math.isfinite(w):
        return 0.0 if a == lo else 1.0
    return lo / (lo + w) if a == lo else w / (lo + w)  # w/(lo + w) is a Beta(hi, lo) variate


@jit
def _mean_in_unit(s: IndexState, run: int, arm: int) -> float:
    """μ̂_a clamped into [0, 1] (it is there already for rewards in [0, 1])."""
    return min(max(s.sums[run, arm] / s.counts[run, arm], 0.0), 1.0)


# -- KL-UCB ---------------------------------------------------------------------------------------
class KLUCBParams(NamedTuple):
    K: int
    c: float
    words_per_step: int = 0


@index_choice.register(KLUCBParams)
@jit
def _klucb_choice(p: KLUCBParams, s: IndexState, noise: NoiseView, run: int) -> int:
    """One pull per arm, then argmax_a max{q : N_a kl(μ̂_a, q) ≤ log t + c log log t}
    (Garivier & Cappé 2011, eq. 2; t = rounds played so far)."""
    t = s.t[run]
    if t < p.K:
        return t
    log_t = math.log(t)
    budget = log_t + (p.c * math.log(log_t) if p.c > 0.0 and log_t > 1.0 else 0.0)
    best, index = 0, -np.inf
    for a in range(p.K):
        value = klucb_index(_mean_in_unit(s, run, a), budget / s.counts[run, a])
        if value > index:
            best, index = a, value
    return best


index_update.register(KLUCBParams)(_sum_update)


class KLUCB(_IndexAgent):
    """KL-UCB (Garivier & Cappé 2011, *The KL-UCB algorithm for bounded stochastic bandits and
    beyond*, COLT): pull each arm once, then the arm with the largest
    max{q ∈ [μ̂_a, 1] : N_a·kl(μ̂_a, q) ≤ log t + c·log log t}. Non-private; asymptotically
    optimal for Bernoulli rewards (its regret / log T → Σ_a Δ_a/kl(μ_a, μ*), the Lai–Robbins
    constant, :func:`privenv.theory.regret.lai_robbins`).

    Args:
        K: number of arms.
        c: the log log t coefficient (≥ 0). The paper's theorem uses c = 3; its experiments, and
            our default, c = 0.
        n_runs: number of runs.
    """

    name = "kl-ucb"
    families = ("bernoulli",)
    parameters = {**_IndexAgent.parameters, "c": Param(Real(0.0))}

    def __init__(self, K: int, c: float = 0.0, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> KLUCBParams:
        return KLUCBParams(K=self.K, c=self.c)


# -- Thompson sampling ----------------------------------------------------------------------------
class TSParams(NamedTuple):
    K: int
    words_per_step: int = 0


@index_choice.register(TSParams)
@jit
def _ts_choice(p: TSParams, s: IndexState, noise: NoiseView, run: int) -> int:
    """argmax_a θ_a, θ_a ~ Beta(S_a + 1, N_a − S_a + 1), independently (Thompson 1933; Agrawal &
    Goyal 2012, Algorithm 1), one Beta draw per arm, in arm order."""
    best, index = 0, -np.inf
    for a in range(p.K):
        n = s.counts[run, a]
        successes = min(max(s.sums[run, a], 0.0), float(n))
        theta = beta_sample(noise, run, successes + 1.0, n - successes + 1.0)
        if theta > index:
            best, index = a, theta
    return best


index_update.register(TSParams)(_sum_update)


class ThompsonSampling(_IndexAgent):
    """Thompson sampling with Beta(1, 1) priors (Thompson 1933; Agrawal & Goyal 2012, *Analysis
    of Thompson sampling for the multi-armed bandit problem*, COLT, Algorithm 1): each round,
    draw θ_a ~ Beta(S_a + 1, N_a − S_a + 1) for every arm and pull argmax θ_a. Non-private;
    asymptotically optimal for Bernoulli rewards (Kaufmann, Korda & Munos 2012).

    The Beta draws come from the agent's per-run uniforms (:func:`beta_sample`, Cheng 1978).
    Rewards are taken in [0, 1]: S_a is the sum of the rewards (an integer on
    ``BernoulliBandit-v0``), clamped into [0, N_a].

    Args:
        K: number of arms.
        n_runs: number of runs.
    """

    name = "thompson"
    families = ("bernoulli",)

    def __init__(self, K: int, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> TSParams:
        return TSParams(K=self.K)


# -- IMED -----------------------------------------------------------------------------------------
class IMEDParams(NamedTuple):
    K: int
    words_per_step: int = 0


@index_choice.register(IMEDParams)
@jit
def _imed_choice(p: IMEDParams, s: IndexState, noise: NoiseView, run: int) -> int:
    """One pull per arm, then argmin_a I_a = N_a·kl(μ̂_a, μ̂*) + log N_a (Honda & Takemura 2015,
    eq. 4; μ̂* = max_a μ̂_a, so the empirical best arms have I_a = log N_a)."""
    t = s.t[run]
    if t < p.K:
        return t
    top = 0.0
    for a in range(p.K):
        top = max(top, _mean_in_unit(s, run, a))
    best, index = 0, np.inf
    for a in range(p.K):
        n = s.counts[run, a]
        value = n * kl_bern(_mean_in_unit(s, run, a), top) + math.log(n)
        if value < index:
            best, index = a, value
    return best


index_update.register(IMEDParams)(_sum_update)


class IMED(_IndexAgent):
    """IMED, Indexed Minimum Empirical Divergence (Honda & Takemura 2015, *Non-asymptotic analysis
    of a new bandit algorithm for semi-bounded rewards*, JMLR 16), for Bernoulli rewards: pull
    each arm once, then argmin_a N_a·kl(μ̂_a, μ̂*) + log N_a. Non-private; asymptotically optimal.

    Args:
        K: number of arms.
        n_runs: number of runs.
    """

    name = "imed"
    families = ("bernoulli",)

    def __init__(self, K: int, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> IMEDParams:
        return IMEDParams(K=self.K)
