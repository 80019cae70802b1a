"""Top Two algorithms for fixed-confidence best-arm identification (paper 3).

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*: the TTUCB
meta-algorithm (Algorithm 1) and its non-private instance TTUCB (Algorithm 6; Jourdan and
Degenne 2024).

:func:`top_two_act` and :func:`top_two_observe` are Algorithm 1 written once, as a compiled kernel
over one run (:mod:`privenv.agents.kernel`). Its ingredients are generic kernel functions that an
instance implements for its parameter class (:mod:`privenv._jit`):

* the estimator (line 13): :func:`estimate` → (μ̃_a, Ñ_a), :func:`update_estimator`;
* the transportation cost W_{a,b} of the TC challenger (line 9): :func:`transport`;
* the confidence bonus b_a (line 8): :func:`bonus`;
* the GLR stopping rule (eq. 2, lines 5–7): :func:`glr_excess` = W_{â,b}(μ̃, Ñ) − c_{â,b}(Ñ, δ),
  after :func:`prepare_stop`;
* the choice between leader and challenger (line 10): :func:`pull_leader` (β-tracking,
  :func:`beta_tracking`, in every instance of the paper).

:class:`TTUCB` (:class:`TTUCBParams`) uses the MLE (Algorithm 2), W^G and b^G (eq. 3) and c^G
(eq. 4). The local-DP systems :class:`CTBTT` (Algorithm 7) and :class:`GaussianLDPTTUCB`
(Algorithm 8) are TTUCB behind a local randomizer (the agent declares it,
:meth:`~privenv.agents.base.Agent.local_randomizer`; the runner puts it in front of the learner);
the global-DP instances (AdaP-TT, AdaP-TT*, :mod:`privenv.agents.adap_tt`) change the estimator and
the ingredients above.

Ties in every argmax/argmin (recommendation, leader, challenger) go to the smallest arm index
(numpy's rule; the paper does not specify one). The paper's instances use no randomness;
AdaP-TT's ``beta_rule="coin"`` (the authors' public code) draws one uniform per step.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import zeta

from privenv._jit import generic, jit
from privenv.agents.kernel import KernelAgent, Releases, agent_act, agent_observe, agent_ready
from privenv.parameters import DELTA, EPSILON, SAMPLER, Integer, Options, Param, Real
from privenv.privacy.local import (
    CALIBRATIONS,
    GaussianRandomizer,
    LocalRandomizer,
    RandomizedResponseRandomizer,
)
from privenv.seeding import NoiseView

THRESHOLDS = ("theory", "empirical")
REWARD_MODES = ("sample", "cost")


# -- eq. 20: the function 𝒞_G of the stopping threshold ---------------------------------------
def g_G(lam: float) -> float:
    """g_G(λ) = 2λ − 2λ log(4λ) + log ζ(2λ) − ½ log(1 − λ), λ ∈ (1/2, 1) (eq. 20)."""
    return 2 * lam - 2 * lam * math.log(4 * lam) + math.log(zeta(2 * lam)) - 0.5 * math.log(1 - lam)


@functools.lru_cache(maxsize=256)
def C_G(x: float) -> float:
    """𝒞_G(x) = min_{λ∈(1/2,1]} (g_G(λ) + x)/λ (eq. 20), by bounded scalar minimisation.

    The objective tends to +∞ at both ends (ζ(2λ) → ∞ as λ → ½, −½ log(1 − λ) → ∞ as λ → 1), so
    the minimum is interior. 𝒞_G(x) ≈ x + log x (paper, after eq. 4). Cached per x.
    """
    x = float(x)
    res = minimize_scalar(
        lambda lam: (g_G(lam) + x) / lam,
        bounds=(0.5 + 1e-9, 1.0 - 1e-12),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(res.fun)


# -- eq. 3 and 4: the Gaussian (σ-sub-Gaussian) ingredients ------------------------------------
# Written once for scalars (the kernels) and arrays (numpy callers): numba compiles both.
@jit(allocates=True)  # also called on arrays, from Python
def gaussian_transport(mu_a: Any, mu_b: Any, w_a: Any, w_b: Any, sigma: float) -> Any:
    """W^G_{a,b}(μ, ω) = (μ_a − μ_b)₊² / (2σ²(1/ω_a + 1/ω_b)) (eq. 3), broadcast."""
    gap = np.maximum(mu_a - mu_b, 0.0)
    return gap * gap / (2.0 * sigma * sigma * (1.0 / w_a + 1.0 / w_b))


@jit(allocates=True)  # also called on arrays, from Python
def gaussian_bonus(w: Any, total: Any, sigma: float, alpha: float, s: float) -> Any:
    """b^G_a(ω) = √(2σ²α(1+s) log‖ω‖₁ / ω_a) (eq. 3); ``total`` = ‖ω‖₁ (broadcast against ω)."""
    return gaussian_bonus_log(w, np.log(total), sigma, alpha, s)


@jit(allocates=True)  # also called on arrays, from Python
def gaussian_bonus_log(w: Any, log_total: Any, sigma: float, alpha: float, s: float) -> Any:
    """b^G_a(ω) of eq. 3 from ``log_total`` = log‖ω‖₁ (computed once per step for all arms)."""
    return np.sqrt(2.0 * sigma * sigma * alpha * (1.0 + s) * log_total / w)


def glr_threshold_constant(K: int, delta: float) -> float:
    """The (ω-free) part of c^G (eq. 4): 2𝒞_G(log((K − 1)/δ)/2)."""
    return 2.0 * C_G(math.log((K - 1) / delta) / 2.0)


@jit(allocates=True)  # also called on arrays, from Python
def count_term(w: Any) -> Any:
    """2 log(4 + log ω): the per-arm term of c^G (eq. 4)."""
    return 2.0 * np.log(4.0 + np.log(w))


def glr_threshold(w_a: np.ndarray, w_b: np.ndarray, K: int, delta: float) -> np.ndarray:
    """c^G_{a,b}(ω, δ) = 2𝒞_G(log((K−1)/δ)/2) + 2 log(4 + log ω_a) + 2 log(4 + log ω_b) (eq. 4)."""
    w_a, w_b = (np.array(v) for v in np.broadcast_arrays(np.asarray(w_a, dtype=float),
                                                          np.asarray(w_b, dtype=float)))
    return glr_threshold_constant(K, delta) + count_term(w_a) + count_term(w_b)


@jit(allocates=True)  # also called on arrays, from Python
def empirical_threshold(n: Any, delta: float) -> Any:
    """The authors' public-code TTUCB threshold c = log((1 + log n)/δ), n = total pulls.

    It goes with the **unit-variance** statistic ½(μ_a − μ_b)²/(1/N_a + 1/N_b), i.e.
    :func:`gaussian_transport` with σ = 1.
    """
    return np.log((1.0 + np.log(n)) / delta)


# -- Algorithm 1: the meta-algorithm over one run ---------------------------------------------


class TopTwoState(NamedTuple):
    """The state of ``n_runs`` runs of a Top Two algorithm (one row per run).

    ``counts`` N_{n,a}, ``sums`` (the MLE's), ``leader_counts`` L_{n,a}, ``leader_pulls``
    N^a_{n,a}, ``stopped``, ``recommendation`` (−1 while running), ``stopping_time`` (pulls when
    it stopped), ``t`` (steps observed). The doubling estimators (:mod:`privenv.agents.adap_tt`)
    use the rest: ``phase_start`` N_{T_k(a),a}, ``phase_sum``, ``mu_tilde`` μ̃, ``n_tilde`` Ñ,
    ``phases`` k_{n,a}, the GLR statistic and threshold memoised between phase ends
    (``glr_stat``, ``glr_thr``, ``dirty``; TTUCB keeps its threshold's per-arm term
    2 log(4 + log N_a) in ``glr_thr``), and in checking mode the users each phase has used
    (``contrib``, (runs, K, users)) and the step's releases.
    """

    t: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    leader_counts: np.ndarray
    leader_pulls: np.ndarray
    stopped: np.ndarray
    recommendation: np.ndarray
    stopping_time: np.ndarray
    phase_start: np.ndarray
    phase_sum: np.ndarray
    mu_tilde: np.ndarray
    n_tilde: np.ndarray
    phases: np.ndarray
    glr_stat: np.ndarray
    glr_thr: np.ndarray
    dirty: np.ndarray
    contrib: np.ndarray
    releases: Releases

    @classmethod
    def start(cls, n_runs: int, K: int, n_users: int = 0) -> TopTwoState:
        """Fresh runs (``n_users`` > 0: checking mode, for the ledger)."""
        i8, shape = np.int64, (n_runs, K)
        return cls(np.zeros(n_runs, i8), np.zeros(shape, i8), np.zeros(shape),
                   np.zeros(shape, i8), np.zeros(shape, i8), np.zeros(n_runs, bool),
                   np.full(n_runs, -1, i8), np.zeros(n_runs, i8), np.zeros(shape, i8),
                   np.zeros(shape), np.zeros(shape), np.ones(shape), np.zeros(shape, i8),
                   np.zeros(shape), np.zeros(shape), np.ones(n_runs, bool),
                   np.zeros((n_runs, K, n_users), bool), Releases.make(n_runs, n_users, 1))


@generic
def update_estimator(p: Any, s: TopTwoState, noise: NoiseView, run: int, arm: int,
                     reward: float) -> None:
    """Line 13: take in the reward of ``arm`` (its count N is already updated) and set the
    estimator's mean μ̃_a and the number of rewards behind it, Ñ_a (state ``mu_tilde`` and
    ``n_tilde``), which the rules of lines 4–9 read."""
    raise NotImplementedError


@generic
def bonus_total_term(p: Any, total: int) -> float:
    """The part of the bonus b_a(Ñ) that depends on ‖N_n‖₁ = ``total`` only (e.g. log ‖N_n‖₁),
    computed once per step for all arms."""
    raise NotImplementedError


@generic
def bonus(p: Any, w: float, total_term: float) -> float:
    """b_a(Ñ) of line 8 for an arm with Ñ_a = ``w``; ``total_term`` from
    :func:`bonus_total_term`."""
    raise NotImplementedError


@generic
def transport(p: Any, mu_a: float, mu_b: float, w_a: float, w_b: float, sigma: float,
              total: int) -> float:
    """W_{a,b}(μ, ω) at scale σ, the cost the TC challenger minimises (line 9); ``total`` =
    ‖N_n‖₁ (read only by a cost with a time-dependent bonus: AdaP-TT's
    ``challenger_bonus="kappa"``)."""
    raise NotImplementedError


@jit(inline="always")
def global_count(p: Any, s: TopTwoState, run: int, a: int) -> float:
    """N_a, the default :func:`challenger_weight`."""
    return float(s.counts[run, a])


@generic(default=global_count)
def challenger_weight(p: Any, s: TopTwoState, run: int, a: int) -> float:
    """The weight of arm ``a`` in the challenger's cost (line 9): the global count N_a (the
    default, Algorithm 1's choice), or another count an agent's estimator calls for."""
    raise NotImplementedError


@generic
def pull_leader(p: Any, s: TopTwoState, noise: NoiseView, run: int, leader: int) -> bool:
    """Line 10: whether this step pulls the leader B (else the challenger C); β-tracking
    (:func:`beta_tracking`) in every instance of the paper."""
    raise NotImplementedError


@generic
def prepare_stop(p: Any, s: TopTwoState, run: int, a_hat: int, total: int) -> None:
    """Whatever the stopping rule needs before :func:`glr_excess` (a memo refresh)."""
    raise NotImplementedError


@generic
def glr_excess(p: Any, s: TopTwoState, run: int, a_hat: int, b: int, total: int) -> float:
    """STOP_{â,b} = W_{â,b}(μ̃, Ñ) − c_{â,b}(Ñ, δ) of eq. 2 (line 5); the run stops when it is
    ≥ 0 for every b ≠ â."""
    raise NotImplementedError


@generic
def sampling_rule(p: Any, s: TopTwoState, run: int, total: int) -> int:
    """The arm another sampling rule pulls in place of lines 8–11 (the generic wrapper of the
    NeurIPS 2023 version, Appendix D.1: any sampling rule on the estimator's means, behind the
    same stopping rule), or −1 for Algorithm 1's own Top Two rule."""
    raise NotImplementedError


@agent_act.register(TopTwoState)
@jit(inline="always")
def top_two_act(s: TopTwoState, p: Any, noise: NoiseView, run: int) -> int:
    """Algorithm 1, one step of ``run``: stop and recommend, or the arm to pull."""
    K = p.K
    if s.stopped[run]:  # a stopped run's state is frozen: it repeats its stop
        return K + s.recommendation[run]
    t = s.t[run]
    if t < K:  # line 2: initialisation, one pull per arm
        return t
    # ‖N‖₁: every step observed so far was a pull (a stop ends the run), so it is t. (Summing
    # the counts instead re-reads the count observe has just written: ~20 ns a step, measured.)
    total = t
    # line 4: recommendation â = argmax_a μ̃_a
    a_hat, best = 0, -np.inf
    for a in range(K):
        if s.mu_tilde[run, a] > best:
            a_hat, best = a, s.mu_tilde[run, a]
    # lines 5–7: stop if STOP_{â,b} ≥ 0 for every b ≠ â (eq. 2)
    prepare_stop(p, s, run, a_hat, total)
    stops = True
    for b in range(K):
        if b != a_hat and not glr_excess(p, s, run, a_hat, b, total) >= 0.0:
            stops = False
            break
    if stops:
        s.stopped[run] = True
        s.recommendation[run] = a_hat
        s.stopping_time[run] = total
        return K + a_hat
    arm = sampling_rule(p, s, run, total)
    if arm >= 0:  # another sampling rule behind the same estimator and stopping rule
        return arm
    leader = ucb_leader(p, s, run, total)  # line 8
    # line 9: TC challenger C = argmin_{a ≠ B} W_{B,a}(μ̃, N), the counts N by challenger_weight
    mu_b, w_b = s.mu_tilde[run, leader], challenger_weight(p, s, run, leader)
    challenger, best = 0, np.inf  # the first smallest cost (W_{B,B} counts as +∞)
    for a in range(K):
        if a != leader:
            cost = transport(p, mu_b, s.mu_tilde[run, a], w_b, challenger_weight(p, s, run, a),
                             p.sigma, total)
            if cost < best:
                challenger, best = a, cost
    return leader if pull_leader(p, s, noise, run, leader) else challenger  # line 10


@jit(inline="always")
def ucb_leader(p: Any, s: TopTwoState, run: int, total: int) -> int:
    """Line 8: the UCB leader B = argmax_a μ̃_a + b_a(Ñ) (the first largest index)."""
    leader, best = 0, -np.inf
    total_term = bonus_total_term(p, total)
    for a in range(p.K):
        index = s.mu_tilde[run, a] + bonus(p, s.n_tilde[run, a], total_term)
        if index > best:
            leader, best = a, index
    return leader


@jit(inline="always")
def beta_tracking(p: Any, s: TopTwoState, run: int, leader: int) -> bool:
    """Line 10's β-tracking: L_B ← L_B + 1, and the leader B is pulled if N^B_B ≤ β·L_B (then
    N^B_B counts the pull, line 12); else the challenger."""
    s.leader_counts[run, leader] += 1
    if s.leader_pulls[run, leader] <= p.beta * s.leader_counts[run, leader]:
        s.leader_pulls[run, leader] += 1
        return True
    return False


@jit(inline="always")
def memoised_excess(p: Any, s: TopTwoState, run: int, a_hat: int, b: int, total: int) -> float:
    """:func:`glr_excess` of a stopping rule whose :func:`prepare_stop` memoises W_{â,b} in
    ``s.glr_stat`` and c_{â,b} in ``s.glr_thr`` (AdaP-TT, DP-TT): their difference."""
    return s.glr_stat[run, b] - s.glr_thr[run, b]


@agent_observe.register(TopTwoState)
@jit(inline="always")
def top_two_observe(s: TopTwoState, p: Any, noise: NoiseView, run: int, action: int,
                    value: float) -> None:
    """Lines 12–13: count the pull and update the estimator (a stop carries no sample)."""
    if action < p.K and not s.stopped[run]:
        s.counts[run, action] += 1  # line 12
        update_estimator(p, s, noise, run, action, value)  # line 13 (pull index s.t[run])
    s.t[run] += 1


@agent_ready.register(TopTwoState)
@jit
def _top_two_ready(s: TopTwoState, p: Any, run: int) -> int:
    return 0


# -- TTUCB: the MLE with W^G, b^G and c^G ------------------------------------------------------


class TTUCBParams(NamedTuple):
    """TTUCB's constants: ``glr_sigma`` is σ with the theoretical thresholds, max(σ, 1) with the
    empirical ones (the unit-variance statistic); ``c0`` = 2𝒞_G(log((K − 1)/δ)/2) (eq. 4)."""

    K: int
    delta: float
    beta: float
    sigma: float
    glr_sigma: float
    alpha: float
    s: float
    empirical: bool
    c0: float
    words_per_step: int = 0


@sampling_rule.register(TTUCBParams)
@jit
def _ttucb_sampling(p: TTUCBParams, s: TopTwoState, run: int, total: int) -> int:
    return -1  # the Top Two rule (lines 8–11)


@update_estimator.register(TTUCBParams)
@jit
def _mle_update(p: TTUCBParams, s: TopTwoState, noise: NoiseView, run: int, arm: int,
                reward: float) -> None:
    """The MLE (Algorithm 2): the empirical mean and the count (and the per-arm term of c^G,
    which changes only with the count: computed here once, not at every stop check)."""
    s.sums[run, arm] += reward
    n = s.counts[run, arm]
    s.mu_tilde[run, arm] = s.sums[run, arm] / n
    s.n_tilde[run, arm] = n
    if not p.empirical:
        s.glr_thr[run, arm] = count_term(s.n_tilde[run, arm])  # 2 log(4 + log N_a), eq. 4


@bonus_total_term.register(TTUCBParams)
@jit
def _ttucb_bonus_total(p: TTUCBParams, total: int) -> float:
    return np.log(total)


@bonus.register(TTUCBParams)
@jit
def _ttucb_bonus(p: TTUCBParams, w: float, log_total: float) -> float:
    return gaussian_bonus_log(w, log_total, p.sigma, p.alpha, p.s)  # b^G, eq. 3


@transport.register(TTUCBParams)
@jit
def _ttucb_transport(p: TTUCBParams, mu_a: float, mu_b: float, w_a: float, w_b: float,
                     sigma: float, total: int) -> float:
    return gaussian_transport(mu_a, mu_b, w_a, w_b, sigma)  # W^G, eq. 3


@pull_leader.register(TTUCBParams)
@jit(inline="always")
def _ttucb_pull_leader(p: TTUCBParams, s: TopTwoState, noise: NoiseView, run: int,
                       leader: int) -> bool:
    return beta_tracking(p, s, run, leader)  # line 10


@prepare_stop.register(TTUCBParams)
@jit
def _ttucb_prepare(p: TTUCBParams, s: TopTwoState, run: int, a_hat: int, total: int) -> None:
    pass


@glr_excess.register(TTUCBParams)
@jit
def _ttucb_excess(p: TTUCBParams, s: TopTwoState, run: int, a_hat: int, b: int,
                  total: int) -> float:
    mu_a, w_a = s.mu_tilde[run, a_hat], s.n_tilde[run, a_hat]
    mu_b, w_b = s.mu_tilde[run, b], s.n_tilde[run, b]
    stat = gaussian_transport(mu_a, mu_b, w_a, w_b, p.glr_sigma)
    if p.empirical:
        return stat - empirical_threshold(total, p.delta)
    return stat - (p.c0 + s.glr_thr[run, a_hat] + s.glr_thr[run, b])  # c^G, eq. 4


#: the Gaussian ingredients' parameters (eq. 3, 4), the threshold choice and σ > 0
GAUSSIAN_PARAMETERS = {
    "threshold": Param(Options(THRESHOLDS)),
    "sigma": Param(Real(0.0, low_open=True), assumes="sigma"),
}


class TopTwo(KernelAgent):
    """The shell of a Top Two algorithm (paper 3, Algorithm 1): the kernel
    :func:`top_two_act` / :func:`top_two_observe` over a :class:`TopTwoState`.

    Initialisation (line 2): arm t is pulled at step t = 0 … K−1 in every run. Once a run has
    stopped its state is frozen; a driver that keeps calling it gets its stop action again and its
    feedback is ignored.

    Per-run state (leading axis ``n_runs``, read as ``agent.counts`` etc.): see
    :class:`TopTwoState`.

    Args:
        K: number of arms.
        delta: confidence δ ∈ (0, 1).
        beta: tracking proportion β ∈ (0, 1).
        reward_mode: ``"sample"``: the sample is the reward; ``"cost"``: it is the observation
            (``BestArmIdentification-v0``'s two encodings).
        n_runs: number of runs.
    """

    State = TopTwoState
    families = ("bai",)
    parameters = {
        "K": Param(Integer(low=2), problem="K"),
        "delta": Param(DELTA),
        "beta": Param(Real(0.0, 1.0, low_open=True, high_open=True)),
        "reward_mode": Param(Options(REWARD_MODES), problem="reward_mode"),
    }

    def __init__(
        self,
        K: int,
        delta: float = 0.01,
        beta: float = 0.5,
        reward_mode: str = "sample",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    @property
    def glr_sigma(self) -> float:
        """σ of the GLR statistic, the agent's σ against the theoretical thresholds; against the
        empirical ones, 1 (the unit-variance statistic of the authors' code, conservative for
        rewards of variance ≤ 1) or σ if σ > 1. A unit-variance statistic on noisier rewards
        overstates the evidence σ²-fold: the Gaussian-LDP TTUCB (σ² = σ²_{ε,γ} + 1/4 ≈ 22 at
        ε = 1) then stopped after 5–96 pulls on μ1 and named the best arm in 1 run of 10
        (privenv 0.1.0 and the first kernels); δ-correctness needs the rewards' σ."""
        return self.sigma if self.threshold == "theory" else max(self.sigma, 1.0)

    def new_state(self) -> TopTwoState:
        users = 0 if self.ledger is None else self.ledger.n_users
        return TopTwoState.start(self.n_runs, self.K, users)


class TTUCB(TopTwo):
    """TTUCB (Jourdan and Degenne 2024; paper 3, Algorithm 6): Algorithm 1 with the MLE, the
    Gaussian transportation cost and UCB bonus of eq. 3 and the GLR threshold c^G of eq. 4.

    For Bernoulli (and any [0, 1]-bounded) rewards σ = 1/2, the sub-Gaussian scale the env's
    ``public_info()`` gives (filled by :func:`privenv.agents.make`). Non-private.

    Args:
        K: number of arms.
        delta: confidence δ ∈ (0, 1) (paper's experiments: 0.01).
        threshold: ``"theory"`` (default): W^G with σ against c^G (eq. 4), δ-correct
            (paper 3, Lemma 36 and the GLR analysis of Jourdan and Degenne 2024);
            ``"empirical"``: the authors' public-code rule, the unit-variance statistic
            ½(μ̂_â − μ̂_a)²/(1/N_â + 1/N_a) against log((1 + log n)/δ), n = pulls so far. The
            sampling rule (leader, challenger) is the same in both.
        sigma: sub-Gaussian scale σ > 0 (1/2 for Bernoulli).
        beta: tracking proportion β ∈ (0, 1) (1/2).
        alpha, s: bonus parameters α, s > 1 (1.2 each).
        reward_mode: where the sample is: ``"sample"`` (the reward) or ``"cost"`` (the
            observation, the env's default; filled from the env by :func:`privenv.agents.make`).
        n_runs: number of runs.
    """

    name = "ttucb"

    parameters = {
        **TopTwo.parameters,
        **GAUSSIAN_PARAMETERS,
        "alpha": Param(Real(1.0, low_open=True)),
        "s": Param(Real(1.0, low_open=True)),
    }

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
        super().__init__(K, delta=delta, beta=beta, reward_mode=reward_mode, n_runs=n_runs)

    def kernel_params(self) -> TTUCBParams:
        c0 = glr_threshold_constant(self.K, self.delta) if self.threshold == "theory" else 0.0
        return TTUCBParams(K=self.K, delta=self.delta, beta=self.beta, sigma=self.sigma,
                           glr_sigma=self.glr_sigma, alpha=self.alpha, s=self.s,
                           empirical=self.threshold == "empirical", c0=c0)


# -- local DP: a randomizer wrapper in front of TTUCB (paper 3, §3.1, Algorithms 7 and 8) -------
BOUNDED_LAWS = ("bernoulli", "beta")


class _LocalTTUCB(TTUCB):
    """TTUCB behind a local randomizer: the *system* "randomizer + TTUCB" (paper 3, §3.1).

    The learner is the unchanged :class:`TTUCB`; the guarantee is the randomizer's. The agent
    declares its randomizer (:meth:`local_randomizer`); the runner builds the env with the sample
    as the Gymnasium reward (``env_requirements``) and puts the randomizer in front of the
    learner (:func:`privenv.simulation.system_env`), so TTUCB only ever sees released values.
    Rewards must lie in [0, 1] (Bernoulli or Beta laws): a Gaussian-law env is refused
    (:meth:`wrap_env`).
    """

    env_requirements = {"reward_mode": "sample"}

    def local_randomizer(self) -> LocalRandomizer:
        raise NotImplementedError

    def wrap_env(self, env: Any) -> Any:
        from privenv.agents import public_info_of

        law = public_info_of(env).get("law")
        if law not in BOUNDED_LAWS:
            raise ValueError(f"{self.name} needs rewards in [0, 1] (law in {BOUNDED_LAWS}), "
                             f"got law={law!r}")
        return env


class CTBTT(_LocalTTUCB):
    """CTB-TT (paper 3, Algorithm 7): ε-local DP best-arm identification by randomized response
    (CTB, Algorithm 4) in front of TTUCB.

    Each reward r ∈ [0, 1] is released as a Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)) bit by
    randomized response (:class:`~privenv.privacy.local.RandomizedResponseRandomizer`, the
    randomizer of the :class:`~privenv.wrappers.RandomizedResponse` wrapper); TTUCB (σ = 1/2,
    the released bits are Bernoulli) runs on the bits. Randomized response maps arm means μ to
    the increasing μ_ε = (2μ − 1)(e^ε − 1)/(2(e^ε + 1)) + ½, so the best arm is unchanged and
    δ-correctness carries over (Lemma 12, Theorem 14); gaps shrink by (e^ε − 1)/(e^ε + 1), hence
    the ε⁻² cost in the high-privacy regime.

    Privacy: ε-DP in the local model, per reward — declared by the randomizer (``agent.privacy`` is
    the learner's own, none; the runner reports the system's).

    Args:
        K: number of arms.
        epsilon: local privacy budget ε > 0.
        delta, threshold, beta, alpha, s: as :class:`TTUCB`.
        reward_mode: must be ``"sample"`` (the runner builds the env so).
        n_runs: number of runs.
    """

    name = "ctb-tt"
    parameters = {
        **{k: v for k, v in TTUCB.parameters.items() if k != "sigma"},  # σ = 1/2: rewards in {0, 1}
        "epsilon": Param(EPSILON),
        "reward_mode": Param(Options(("sample",)), problem="reward_mode"),
    }

    def __init__(
        self,
        K: int,
        epsilon: float = 1.0,
        delta: float = 0.01,
        threshold: str = "theory",
        beta: float = 0.5,
        alpha: float = 1.2,
        s: float = 1.2,
        reward_mode: str = "sample",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(K, delta=delta, threshold=threshold, sigma=0.5, beta=beta, alpha=alpha,
                         s=s, reward_mode=reward_mode, n_runs=n_runs)

    def local_randomizer(self) -> RandomizedResponseRandomizer:
        return RandomizedResponseRandomizer(self.epsilon)


class GaussianLDPTTUCB(_LocalTTUCB):
    """(ε, γ)-local DP TTUCB (paper 3, Algorithm 8, after Zheng et al. 2020, Algorithm 1).

    Each reward r ∈ [0, 1] is released as r + N(0, σ²_{ε,γ}) by the Gaussian mechanism
    (:class:`~privenv.privacy.local.GaussianRandomizer`, that of the
    :class:`~privenv.wrappers.GaussianReward` wrapper; Δ₂ = 1); TTUCB runs on the noisy rewards
    as on a Gaussian instance of variance σ²_{ε,γ} + 1/4 (Remark 13), i.e. with
    σ = √(σ²_{ε,γ} + 1/4) in W^G, b^G (eq. 3).

    Deviations, both on principle: (1) Algorithm 8 line 1 writes σ = 1/2 for W^G and b^G, but the
    released rewards have variance σ²_{ε,γ} + 1/4 and Remark 13's argument (the non-private
    algorithm on the modified instance) needs that σ — with σ = 1/2 the GLR test is not δ-correct.
    (2) ``calibration="analytic"`` (default) uses the exact Gaussian-mechanism σ (Balle & Wang
    2018), valid for every ε and smaller; the paper's σ_{ε,γ} = √(2 log(1.25/γ))/ε is
    ``calibration="classical"``, a theorem only for ε < 1 (larger ε raises ``ValueError``).

    Privacy: (ε, γ)-DP in the local model, per reward, declared by the wrapper.

    Args:
        K: number of arms.
        epsilon: ε > 0.
        gamma: γ ∈ (0, 1), the local δ of each release (default 10⁻⁶, our choice; the paper
            leaves it open).
        calibration: ``"analytic"`` or ``"classical"``.
        delta, threshold, beta, alpha, s: as :class:`TTUCB`.
        reward_mode: must be ``"sample"``.
        sampler: ``"float"`` (default) or ``"exact"``: the wrapper's discrete Gaussian on a grid
            (:class:`~privenv.wrappers.GaussianReward`), with the smallest σ at least the
            calibration's whose exact δ(ε) ≤ γ; W^G and b^G then use that σ.
        n_runs: number of runs.
    """

    name = "gaussian-ldp-ttucb"
    parameters = {
        **CTBTT.parameters,
        "gamma": Param(DELTA),
        "calibration": Param(Options(CALIBRATIONS)),
        "sampler": Param(SAMPLER, assumes="sampler"),
    }

    def __init__(
        self,
        K: int,
        epsilon: float = 1.0,
        gamma: float = 1e-6,
        calibration: str = "analytic",
        delta: float = 0.01,
        threshold: str = "theory",
        beta: float = 0.5,
        alpha: float = 1.2,
        s: float = 1.2,
        reward_mode: str = "sample",
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        self._randomizer = GaussianRandomizer(self.epsilon, self.gamma, (0.0, 1.0),
                                              self.calibration, sampler=self.sampler)
        self.sigma_privacy = self._randomizer.sigma  # σ_{ε,γ}
        super().__init__(K, delta=delta, threshold=threshold,
                         sigma=math.sqrt(self.sigma_privacy**2 + 0.25), beta=beta, alpha=alpha,
                         s=s, reward_mode=reward_mode, n_runs=n_runs)

    def local_randomizer(self) -> GaussianRandomizer:
        return GaussianRandomizer(self.epsilon, self.gamma, (0.0, 1.0), self.calibration,
                                  sampler=self.sampler)
