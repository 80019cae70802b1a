"""ε-global-DP regret algorithms on per-arm phases: AdaP-UCB, AdaP-KLUCB (Azize & Basu 2022),
DP-KLUCB, DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025) and Lazy-DP-TS (Hu & Hegde 2022).

Choices, what we could read of each paper and the privacy arguments: docs/guides/zoo.md.

All five run on one kernel, :func:`phase_act` / :func:`phase_observe`, over a
:class:`PhaseState`. Each arm's rewards are cut into **phases**; at a phase's end one Laplace
release summarises it, and nothing else about the rewards ever leaves the agent. Two estimators:

* **DAF(ε)** (``estimator=DAF``; AdaP-UCB, AdaP-KLUCB, Lazy-DP-TS): a phase ends when the arm's
  count doubles; the phase's mean gets Lap(1/(εÑ)), Ñ its length, and its rewards are then
  forgotten — paper 3's doubling-and-forgetting estimator, run by AdaP-TT's own code
  (:func:`privenv.agents.adap_tt._doubling_update`), which Azize & Basu (2022, Lemma 1 and
  Algorithm 1 line 7) define for regret;
* **geometric, cumulative** (``estimator=GEOMETRIC``; DP-KLUCB, DP-IMED): phase k of an arm
  ends when its count reaches n_k = max{n_{k−1} + 1, ⌈α·n_{k−1}⌉} (n₀ = 1); the phase's **sum**
  gets one Lap(1/ε) and is added to the arm's private cumulative sum, so μ̃_a = S̃_a/n holds every
  reward so far and one Laplace noise per phase — no forgetting (:func:`geometric_update`).

The policies (``policy``): AdaP-UCB, AdaP-KLUCB, DP-KLUCB and DP-IMED choose an arm by their
index when a phase ends and play it until its phase ends (Algorithm 1 of Azize & Basu 2022);
Lazy-DP-TS draws a Thompson sample per arm every round. Every run starts with one pull per arm
(arm t at round t), whose release is that arm's first private mean.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv.agents.adap_tt import _doubling_update
from privenv.agents.bernoulli import beta_sample, klucb_index
from privenv.agents.kernel import (
    KernelAgent,
    Releases,
    agent_act,
    agent_observe,
    charge_recorded,
)
from privenv.parameters import EPSILON, SAMPLER, Integer, Param, Real
from privenv.privacy.exact import EPSILON_BITS, laplace_release, sampler_guarantee
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_noise
from privenv.privacy.samplers import ExactSampler, FloatSampler, central_sampler
from privenv.seeding import NoiseView, take_uniform
from privenv.theory.regret import d_eps

__all__ = ["DPIMED", "DPKLUCB", "AdaPKLUCB", "AdaPUCB", "LazyDPTS", "PhaseState",
           "dp_klucb_index", "geometric_update"]

#: the values of ``PhaseParams.estimator``
DAF, GEOMETRIC = 0, 1
#: the values of ``PhaseParams.policy``
ADAP_UCB, ADAP_KLUCB, DP_KLUCB, DP_IMED, LAZY_TS = range(5)
#: bisection steps of :func:`dp_klucb_index` (the bracket [x, 1] shrinks below 2⁻⁶⁰)
DP_KLUCB_STEPS = 60


class PhaseState(NamedTuple):
    """Per-run state of a phase-based private regret agent (one row per run).

    ``counts`` N_a; ``phase_sum`` (the current phase's rewards), ``phase_start`` (DAF: the count
    when the phase began), ``next_end`` (geometric: the count that ends the phase),
    ``private_sum`` (geometric: S̃_a), ``mu_tilde`` μ̃_a and ``n_tilde`` (the number of rewards
    behind μ̃_a) after the arm's last release, ``phases`` (releases so far), ``current`` (the arm
    being played to the end of its phase, −1 between phases), ``dirty`` (a release just
    happened), ``t`` (rounds observed); in checking mode the users each open phase holds
    (``contrib``) and the step's release (``releases``)."""

    t: np.ndarray
    counts: np.ndarray
    phase_sum: np.ndarray
    phase_start: np.ndarray
    next_end: np.ndarray
    private_sum: np.ndarray
    mu_tilde: np.ndarray
    n_tilde: np.ndarray
    phases: np.ndarray
    current: np.ndarray
    dirty: np.ndarray
    contrib: np.ndarray
    releases: Releases

    @classmethod
    def start(cls, n_runs: int, K: int, n_users: int = 0) -> PhaseState:
        i8, shape = np.int64, (n_runs, K)
        return cls(np.zeros(n_runs, i8), np.zeros(shape, i8), np.zeros(shape),
                   np.zeros(shape, i8), np.ones(shape, i8), np.zeros(shape), np.zeros(shape),
                   np.ones(shape), np.zeros(shape, i8), np.full(n_runs, -1, i8),
                   np.zeros(n_runs, bool), np.zeros((n_runs, K, n_users), bool),
                   Releases.make(n_runs, n_users, 1))


class PhaseParams(NamedTuple):
    """The constants of a phase-based agent: ``alpha`` (AdaP's α > 3), ``ratio`` (the geometric
    phases' α > 1), ``offset`` (Lazy-DP-TS's optimism coefficient, 3), and the DAF code's fields
    (``private``, ``forget``, ``noise_multiplier`` — the audit hook —, ``sampler``)."""

    K: int
    epsilon: float
    estimator: int
    policy: int
    alpha: float
    ratio: float
    offset: float
    private: bool
    forget: bool
    noise_multiplier: float
    sampler: FloatSampler | ExactSampler
    words_per_step: int = 0


# -- the geometric, cumulative estimator ---------------------------------------------------------
@jit(inline="always")
def geometric_update(p: Any, s: Any, noise: NoiseView, run: int, arm: int, reward: float,
                     private_sum: np.ndarray, next_end: np.ndarray) -> None:
    """Take in the reward of ``arm`` (its count ``s.counts`` already updated); at the end of its
    phase release the phase's sum with one Laplace noise (:func:`_geometric_release`).
    ``private_sum`` and ``next_end`` are the state's arrays of S̃ and of the phase ends (passed,
    so that another state can keep them in fields of its own)."""
    reward = min(max(reward, 0.0), 1.0)  # DP needs rewards in [0, 1]: part of the algorithm
    s.phase_sum[run, arm] += reward
    if s.contrib.shape[2] > 0:  # checking mode: pull s.t[run] enters the arm's next release
        s.contrib[run, arm, s.t[run]] = True
    if s.counts[run, arm] >= next_end[run, arm]:
        _geometric_release(p, s, noise, run, arm, private_sum, next_end)


@jit
def _geometric_release(p: Any, s: Any, noise: NoiseView, run: int, arm: int,
                       private_sum: np.ndarray, next_end: np.ndarray) -> None:
    """End the phase of ``arm``: S̃ += (phase sum) + Lap(1/ε) (sensitivity 1: one reward in
    [0, 1]), μ̃ = S̃/N, next phase end max{N + 1, ⌈αN⌉}."""
    count = s.counts[run, arm]
    noisy, eps_release = _sum_release(p.sampler, p, s.phase_sum[run, arm], noise, run)
    rel = s.releases
    if rel.users.shape[2] > 0:  # checking mode: ε of the release = sensitivity/scale
        for i in range(rel.users.shape[2]):
            rel.users[run, 0, i] = s.contrib[run, arm, i]
            if p.forget:
                s.contrib[run, arm, i] = False
        rel.epsilon[run, 0] = eps_release
        rel.count[run] = 1
    if p.forget:  # (the audit hook's mutant keeps the phase's rewards for the next release)
        private_sum[run, arm] += noisy
        s.phase_sum[run, arm] = 0.0
    else:
        private_sum[run, arm] = noisy
    s.mu_tilde[run, arm] = private_sum[run, arm] / count
    s.n_tilde[run, arm] = count
    s.phases[run, arm] += 1
    next_end[run, arm] = max(count + 1, int(math.ceil(p.ratio * count)))
    s.dirty[run] = True


@generic
def _sum_release(sampler: FloatSampler | ExactSampler, p: Any, total: float, noise: NoiseView,
                 run: int) -> tuple[float, float]:
    """(the phase's sum + Lap(1/ε), the ε of that release) with the agent's sampler
    (sensitivity 1: one reward in [0, 1])."""
    raise NotImplementedError


@_sum_release.register(FloatSampler)
@jit(inline="always")
def _sum_release_float(sampler: FloatSampler, p: Any, total: float, noise: NoiseView,
                       run: int) -> tuple[float, float]:
    scale = p.noise_multiplier * (1.0 / p.epsilon)
    return total + laplace_noise(take_uniform(noise, run), scale), 1.0 / scale


@_sum_release.register(ExactSampler)
@jit(inline="always")
def _sum_release_exact(sampler: ExactSampler, p: Any, total: float, noise: NoiseView,
                       run: int) -> tuple[float, float]:
    # the exact sampler: ε′ = 2²⁰/q
    return laplace_release(noise, run, total, 1.0, sampler.q), 2.0**EPSILON_BITS / sampler.q


# -- the indices ---------------------------------------------------------------------------------
@jit
def dp_klucb_index(x: float, v: float, epsilon: float) -> float:
    """max{μ ∈ [x, 1] : d_ε(x, μ) ≤ v} (DP-KLUCB's index; d_ε(x, ·) is increasing on [x, 1]),
    by bisection (:data:`DP_KLUCB_STEPS` halvings), returning the bracket's upper end."""
    if v <= 0.0 or x >= 1.0:
        return min(max(x, 0.0), 1.0)
    lo, hi = x, 1.0
    if d_eps(x, hi, epsilon) <= v:
        return hi
    for _ in range(DP_KLUCB_STEPS):
        mid = 0.5 * (lo + hi)
        if d_eps(x, mid, epsilon) > v:
            hi = mid
        else:
            lo = mid
    return hi


@jit
def _clip01(x: float) -> float:
    return min(max(x, 0.0), 1.0)


@jit
def _index_choice(p: PhaseParams, s: PhaseState, run: int) -> int:
    """The arm a phase-committed policy plays next, at round t_ℓ = t + 1 (1-based)."""
    t_l = s.t[run] + 1.0
    log_t = math.log(t_l)
    if p.policy == DP_IMED:  # argmin_a n·d_ε([μ̃_a]₀¹, [μ̃*]₀¹) + log n
        top = 0.0
        for a in range(p.K):
            top = max(top, _clip01(s.mu_tilde[run, a]))
        best, index = 0, np.inf
        for a in range(p.K):
            n = s.n_tilde[run, a]
            value = n * d_eps(_clip01(s.mu_tilde[run, a]), top, p.epsilon) + math.log(n)
            if value < index:
                best, index = a, value
        return best
    best, index = 0, -np.inf
    for a in range(p.K):
        n, mu = s.n_tilde[run, a], s.mu_tilde[run, a]
        if p.policy == ADAP_UCB:  # eq. 7
            value = (mu + math.sqrt(p.alpha * math.log(2.0 * t_l) / (2.0 * n))
                     + p.alpha * log_t / (p.epsilon * n))
        elif p.policy == ADAP_KLUCB:  # eq. 7, on the clipped, shifted private mean
            value = klucb_index(_clip01(mu + p.alpha * log_t / (p.epsilon * n)),
                                p.alpha * log_t / n)
        else:  # DP-KLUCB
            value = dp_klucb_index(_clip01(mu), log_t / n, p.epsilon)
        if value > index:
            best, index = a, value
    return best


@jit
def _lazy_ts_choice(p: PhaseParams, s: PhaseState, noise: NoiseView, run: int) -> int:
    """argmax_a θ_a, θ_a ~ Beta(μ_a Ñ_a + 1, (1 − μ_a)Ñ_a + 1), μ_a = [μ̃_a + c log t/(εÑ_a)]₀¹."""
    log_t = math.log(s.t[run] + 1.0)
    best, index = 0, -np.inf
    for a in range(p.K):
        n = s.n_tilde[run, a]
        mu = _clip01(s.mu_tilde[run, a] + p.offset * log_t / (p.epsilon * n))
        theta = beta_sample(noise, run, mu * n + 1.0, (1.0 - mu) * n + 1.0)
        if theta > index:
            best, index = a, theta
    return best


# -- the kernel ----------------------------------------------------------------------------------
@agent_act.register(PhaseState)
@jit(inline="always")
def phase_act(s: PhaseState, p: PhaseParams, noise: NoiseView, run: int) -> int:
    t = s.t[run]
    if t < p.K:  # one pull per arm (Azize & Basu 2022, Algorithm 1 line 3)
        return t
    if p.policy == LAZY_TS:
        return _lazy_ts_choice(p, s, noise, run)
    if s.current[run] < 0:  # a phase has ended: choose by the index (line 6)
        s.current[run] = _index_choice(p, s, run)
    return s.current[run]  # line 7: play it until its phase ends


@agent_observe.register(PhaseState)
@jit(inline="always")
def phase_observe(s: PhaseState, p: PhaseParams, noise: NoiseView, run: int, action: int,
                  value: float) -> None:
    s.counts[run, action] += 1
    if p.estimator == DAF:
        _doubling_update(p, s, noise, run, action, value)
    else:
        geometric_update(p, s, noise, run, action, value, s.private_sum, s.next_end)
    if s.dirty[run]:  # the arm's phase has ended: the next round chooses again
        s.dirty[run] = False
        s.current[run] = -1
    s.t[run] += 1


# -- the agents ----------------------------------------------------------------------------------
class _PhaseAgent(KernelAgent):
    """Shell of the phase-based private regret agents (see the module docstring).

    Audit hooks (class attributes): ``noise_multiplier`` scales every Laplace scale (1 in every
    real agent); ``forget = False`` makes a release reuse the rewards of the arm's earlier phases
    (DAF: the whole history enters each mean; geometric: each phase sum is released again).
    """

    State = PhaseState
    families = ("bernoulli",)
    ESTIMATOR: int = DAF
    POLICY: int = ADAP_UCB
    forget: bool = True
    noise_multiplier: float = 1.0
    sampler: str = "float"
    alpha: float = 3.1
    ratio: float = 2.0
    offset: float = 0.0
    parameters = {
        "K": Param(Integer(low=2), problem="K"),
        "epsilon": Param(EPSILON),
        "sampler": Param(SAMPLER),
    }

    @property
    def privacy(self) -> PrivacyGuarantee:
        return sampler_guarantee(self.sampler, "central", self.epsilon, "reward")

    def kernel_params(self) -> PhaseParams:
        sampler = central_sampler(self.sampler, self.epsilon, float(self.noise_multiplier))
        return PhaseParams(K=self.K, epsilon=self.epsilon, estimator=self.ESTIMATOR,
                           policy=self.POLICY, alpha=self.alpha, ratio=self.ratio,
                           offset=self.offset, private=True, forget=self.forget,
                           noise_multiplier=float(self.noise_multiplier), sampler=sampler,
                           words_per_step=sampler.words)

    def new_state(self) -> PhaseState:
        users = 0 if self.ledger is None else self.ledger.n_users
        return PhaseState.start(self.n_runs, self.K, users)

    def charge_releases(self) -> None:
        charge_recorded(self, self.state.releases, ("phase release",))

    def episode_info(self) -> dict[str, np.ndarray]:
        """``releases``: the number of private releases per run (phases ended, initial pulls
        included)."""
        return {"releases": self.phases.sum(axis=1)}


#: α > 3 of AdaP-UCB and AdaP-KLUCB (Theorems 7 and 8)
ADAP_ALPHA = Param(Real(3.0, low_open=True))


class AdaPUCB(_PhaseAgent):
    """AdaP-UCB (Azize & Basu 2022, *When privacy meets partial information: a refined analysis
    of differentially private bandits*, NeurIPS; Algorithm 1 with the index of eq. 7).

    Pull each arm once; then episodes: at the episode's first round t_ℓ play
    argmax_a μ̃_a + √(α log(2t_ℓ)/(2Ñ_a)) + α log(t_ℓ)/(εÑ_a) until its count doubles. μ̃_a is
    the mean of arm a's last episode (Ñ_a rewards) plus Lap(1/(εÑ_a)) — the DAF(ε) estimator,
    forgetting everything before (Lemma 1). ε-DP in the central model, per reward (Theorem 6).
    Regret ≤ Σ_a (16α/min{Δ_a, ε}) log T + α/(α − 3) (Theorem 7).

    Args:
        K: number of arms.
        epsilon: privacy budget ε > 0.
        alpha: α > 3 (3.1, the paper's experiments).
        sampler: ``"float"`` (default) or ``"exact"`` (the discrete Laplace,
            :mod:`privenv.privacy.exact`: each release exactly ε′-DP, ε′ = 2²⁰/⌈2²⁰/ε⌉ ≤ ε).
        n_runs: number of runs.
    """

    name = "adap-ucb"
    POLICY = ADAP_UCB
    parameters = {**_PhaseAgent.parameters, "alpha": ADAP_ALPHA}

    def __init__(self, K: int, epsilon: float = 1.0, alpha: float = 3.1, sampler: str = "float",
                 n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)


class AdaPKLUCB(AdaPUCB):
    """AdaP-KLUCB (Azize & Basu 2022, Algorithm 1 with the second index of eq. 7).

    AdaP-UCB's episodes and DAF(ε) estimator with the KL-UCB index
    max{q ∈ [0, 1] : kl(μ̆_a, q) ≤ α log(t_ℓ)/Ñ_a} of the clipped, shifted private mean
    μ̆_a = Clip_{[0,1]}(μ̃_a + α log(t_ℓ)/(εÑ_a)). ε-DP in the central model, per reward.
    Regret ≤ Σ_a C₁(α)Δ_a log T/min{kl(μ_a, μ*), C₂εΔ_a} + α/(α − 3) for Bernoulli rewards
    (Theorem 8).

    Args:
        K, epsilon, alpha, sampler, n_runs: as :class:`AdaPUCB`.
    """

    name = "adap-klucb"
    POLICY = ADAP_KLUCB


class LazyDPTS(_PhaseAgent):
    """Lazy-DP-TS (Hu & Hegde 2022, *Near-optimal Thompson sampling-based algorithms for
    differentially private stochastic bandits*, UAI; Algorithm 2), a reconstruction from a
    summary (docs/guides/zoo.md).

    Thompson sampling on the DAF(ε) private means: each round draw, for every arm,
    θ_a ~ Beta(μ_a Ñ_a + 1, (1 − μ_a)Ñ_a + 1) with the optimistic μ_a =
    Clip_{[0,1]}(μ̃_a + c·log t/(εÑ_a)), and pull argmax θ_a. μ̃_a is the mean of arm a's last
    batch (Ñ_a rewards) plus Lap(1/(εÑ_a)); batches end when the arm's count doubles (DAF; the
    paper's batches of 1, 2, 4, … fresh rewards differ by one batch). ε-DP in the central model,
    per reward. Regret O(Σ_a log T/min{Δ_a, ε}) (their Theorem 4).

    Args:
        K: number of arms.
        epsilon: privacy budget ε > 0.
        c: the optimism coefficient (3, as summarised).
        sampler: ``"float"`` or ``"exact"`` (as :class:`AdaPUCB`).
        n_runs: number of runs.
    """

    name = "lazy-dp-ts"
    POLICY = LAZY_TS
    parameters = {**_PhaseAgent.parameters, "c": Param(Real(0.0))}

    def __init__(self, K: int, epsilon: float = 1.0, c: float = 3.0, sampler: str = "float",
                 n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        self.offset = self.c


class DPKLUCB(_PhaseAgent):
    """DP-KLUCB (Azize, Wu, Honda, Orabona, Ito & Basu 2025, *Optimal regret of bandits under
    differential privacy*, arXiv 2505.05613), a reconstruction from the abstract and a summary
    (docs/guides/zoo.md).

    Per-arm geometric phases of ratio α without forgetting: phase k of an arm ends at count
    n_k = max{n_{k−1} + 1, ⌈αn_{k−1}⌉}, its sum is released with one Lap(1/ε) and added to the
    private cumulative sum S̃_a, μ̃_a = S̃_a/n. When a phase ends, play
    argmax_a max{μ : d_ε([μ̃_a]₀¹, μ) ≤ log t/n_a} until that arm's phase ends, with the
    divergence d_ε of :func:`privenv.theory.regret.d_eps`. ε-DP in the central model, per
    reward. Regret ≤ Σ_a αΔ_a log T/d_ε(μ_a, μ*) + o(log T) for Bernoulli rewards (their
    Theorem 2).

    Args:
        K: number of arms.
        epsilon: privacy budget ε > 0.
        alpha: the phases' geometric ratio α > 1 (1.1, our choice).
        sampler: ``"float"`` or ``"exact"`` (as :class:`AdaPUCB`).
        n_runs: number of runs.
    """

    name = "dp-klucb"
    ESTIMATOR = GEOMETRIC
    POLICY = DP_KLUCB
    parameters = {**_PhaseAgent.parameters,
                  "alpha": Param(Real(1.0, low_open=True), attribute="ratio")}

    def __init__(self, K: int, epsilon: float = 1.0, alpha: float = 1.1, sampler: str = "float",
                 n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)


class DPIMED(DPKLUCB):
    """DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025), a reconstruction as
    :class:`DPKLUCB`: the same phases and private cumulative sums; when a phase ends, play
    argmin_a n_a·d_ε([μ̃_a]₀¹, [μ̃*]₀¹) + log n_a (μ̃* = max_b μ̃_b) until that arm's phase ends.
    ε-DP in the central model, per reward; the regret bound of :class:`DPKLUCB`.

    Args:
        K, epsilon, alpha, sampler, n_runs: as :class:`DPKLUCB`.
    """

    name = "dp-imed"
    POLICY = DP_IMED
