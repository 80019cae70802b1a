"""Top Two algorithms for fixed-confidence best-arm identification (paper 3).

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*: the TTUCB
meta-algorithm (Algorithm 1) and its non-private instance TTUCB (Algorithm 6; Jourdan and
Degenne 2024). SPEC §3.2.

:class:`TopTwo` is Algorithm 1 written once, batched over ``n_runs`` runs. Its ingredients are
methods that an instance overrides:

* the estimator (line 13): :meth:`TopTwo.estimates` → (μ̃, Ñ), :meth:`TopTwo.update_estimator`;
* the transportation cost W_{a,b} (lines 5 and 9): :meth:`TopTwo.transport`;
* the confidence bonus b_a (line 8): :meth:`TopTwo.bonus`;
* the GLR stopping statistic and threshold c_{a,b} (eq. 2, line 5): :meth:`TopTwo.stop_statistic`,
  :meth:`TopTwo.stop_threshold`.

:class:`TTUCB` uses the MLE (Algorithm 2), W^G and b^G (eq. 3) and c^G (eq. 4). The local-DP
systems :class:`CTBTT` (Algorithm 7) and :class:`GaussianLDPTTUCB` (Algorithm 8) are TTUCB behind a
randomizer wrapper (:meth:`~privenv.agents.base.Agent.wrap_env`); the global-DP instances
(AdaP-TT, AdaP-TT*, :mod:`privenv.agents.adap_tt`) change the estimator and the methods above.

Ties in every argmax/argmin (recommendation, leader, challenger) go to the smallest arm index
(numpy's rule; the paper does not specify one). No randomness is used.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import zeta

from privenv._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_real,
)
from privenv.agents.base import Agent

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
def gaussian_transport(
    mu_a: np.ndarray, mu_b: np.ndarray, w_a: np.ndarray, w_b: np.ndarray, sigma: float
) -> np.ndarray:
    """W^G_{a,b}(μ, ω) = (μ_a − μ_b)₊² / (2σ²(1/ω_a + 1/ω_b)) (eq. 3), broadcast."""
    gap = np.maximum(mu_a - mu_b, 0.0)
    return gap * gap / (2.0 * sigma * sigma * (1.0 / w_a + 1.0 / w_b))


def gaussian_bonus(
    w: np.ndarray, total: np.ndarray, sigma: float, alpha: float, s: float
) -> np.ndarray:
    """b^G_a(ω) = √(2σ²α(1+s) log‖ω‖₁ / ω_a) (eq. 3); ``total`` = ‖ω‖₁ (broadcast against ω)."""
    return np.sqrt(2.0 * sigma * sigma * alpha * (1.0 + s) * np.log(total) / w)


def glr_threshold_constant(K: int, delta: float) -> float:
    """The (ω-free) part of c^G (eq. 4): 2𝒞_G(log((K − 1)/δ)/2)."""
    return 2.0 * C_G(math.log((K - 1) / delta) / 2.0)


def glr_threshold(w_a: np.ndarray, w_b: np.ndarray, K: int, delta: float) -> np.ndarray:
    """c^G_{a,b}(ω, δ) = 2𝒞_G(log((K−1)/δ)/2) + 2 log(4 + log ω_a) + 2 log(4 + log ω_b) (eq. 4)."""
    return (
        glr_threshold_constant(K, delta)
        + 2.0 * np.log(4.0 + np.log(w_a))
        + 2.0 * np.log(4.0 + np.log(w_b))
    )


def at_arm(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """x[i, a_i] as a column (rows, 1), for all runs or any subset of rows."""
    return x[np.arange(x.shape[0]), a][:, None]


def empirical_threshold(n: np.ndarray, delta: float) -> np.ndarray:
    """The authors' public-code TTUCB threshold c = log((1 + log n)/δ), n = total pulls.

    It goes with the **unit-variance** statistic ½(μ_a − μ_b)²/(1/N_a + 1/N_b) (SPEC §3.2), i.e.
    :func:`gaussian_transport` with σ = 1.
    """
    return np.log((1.0 + np.log(n)) / delta)


class TopTwo(Agent):
    """The TTUCB meta-algorithm (paper 3, Algorithm 1), batched over ``n_runs`` runs.

    Per step n > K (one numpy pass over all runs):

    * line 4: recommendation â = argmax_a μ̃_a;
    * line 5: stop (action ``stop(â)``) if STOP_{â,a} = W_{â,a}(μ̃, Ñ) − c_{â,a}(Ñ, δ) ≥ 0 for all
      a ≠ â (eq. 2);
    * line 8: leader B = argmax_a μ̃_a + b_a(Ñ);
    * line 9: challenger C = argmin_{a≠B} W_{B,a}(μ̃, N);
    * line 10: L_B ← L_B + 1, pull B if N^B_B ≤ β·L_B (the incremented L_{n+1,B}), else C;
      N^B_B ← N^B_B + 1{pulled B} (line 12; L_a = N^a_a = 0 initially, Algorithm 6 line 2).

    Initialisation (line 2): arm t is pulled at step t = 0 … K−1 in every run. Once a run has
    stopped its state is frozen; the runner keeps calling :meth:`act_batch`/:meth:`observe_batch`
    for it, the agent keeps returning its stop action and ignores its feedback.

    Per-run state (leading axis ``n_runs``): ``counts`` N, ``sums``, ``leader_counts`` L,
    ``leader_pulls`` N^a_a, ``stopped``, ``recommendation`` (−1 while running),
    ``stopping_time`` (pulls when it stopped).

    Args:
        K: number of arms.
        delta: confidence δ ∈ (0, 1).
        beta: tracking proportion β ∈ (0, 1).
        reward_mode: ``"sample"``: the sample is the reward; ``"cost"``: it is the observation
            (``BestArmIdentification-v0``'s two encodings).
        n_runs: number of runs.
    """

    def __init__(
        self,
        K: int,
        delta: float = 0.01,
        beta: float = 0.5,
        reward_mode: str = "sample",
        n_runs: int = 1,
    ) -> None:
        super().__init__(n_runs)
        self.K = check_int("K", K, low=2)
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.delta = check_delta(delta)
        self.beta = check_real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        self._runs = np.arange(self.n_runs)
        self._arms = np.arange(self.K)

    def set_gaussian_parameters(
        self, threshold: str, sigma: float, alpha: float | None = None, s: float | None = None
    ) -> None:
        """Validate and store the parameters of the Gaussian ingredients (eq. 3, 4): the threshold
        choice, σ > 0 and, for a UCB bonus b^G, α > 1 and s > 1."""
        self.threshold = check_choice("threshold", threshold, THRESHOLDS)
        self.sigma = check_real("sigma", sigma, low=0.0, low_open=True, high=math.inf,
                                high_open=True)
        if alpha is not None:
            self.alpha = check_real("alpha", alpha, low=1.0, low_open=True, high=math.inf,
                                    high_open=True)
        if s is not None:
            self.s = check_real("s", s, low=1.0, low_open=True, high=math.inf, high_open=True)

    # -- ingredients (overridden by instances) ---------------------------------------------------
    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """(μ̃, Ñ), each (n_runs, K): the MLE (Algorithm 2) — empirical means and counts."""
        return self.sums / self.counts, self.counts

    def update_estimator(self, live: np.ndarray, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Line 13 for the MLE: add the reward of arm ``arms[i]`` to run i's sum (``live`` runs)."""
        self.sums[self._runs, arms] += np.where(live, rewards, 0.0)

    def pair_cost(self, mu_a: np.ndarray, mu: np.ndarray, w_a: np.ndarray, w: np.ndarray,
                  sigma: float) -> np.ndarray:
        """W_{a,b} at scale σ for the columns (μ_a, ω_a) against every arm b: W^G (eq. 3) by
        default (AdaP-TT* uses W^{G,ε}, eq. 13)."""
        return gaussian_transport(mu_a, mu, w_a, w, sigma)

    def transport(self, mu: np.ndarray, w: np.ndarray, a: np.ndarray) -> np.ndarray:
        """W_{a_i, b}(μ_i, ω_i) for every row i and arm b, at the agent's σ."""
        return self.pair_cost(at_arm(mu, a), mu, at_arm(w, a), w, self.sigma)

    def glr(self, mu: np.ndarray, w: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The GLR statistic of eq. 2 for every row: the transportation cost at σ against the
        theoretical thresholds, at σ = 1 (unit variance) against the empirical ones — the two are
        never mixed."""
        sigma = self.sigma if self.threshold == "theory" else 1.0
        return self.pair_cost(at_arm(mu, a), mu, at_arm(w, a), w, sigma)

    def bonus(self, w: np.ndarray, total: np.ndarray) -> np.ndarray:
        """b_a(ω) for every run and arm (default b^G, eq. 3); ``total`` (n_runs, 1) = pulls."""
        return gaussian_bonus(w, total, self.sigma, self.alpha, self.s)

    def stop_statistic(self, mu: np.ndarray, w: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The GLR statistic of eq. 2 (default: :meth:`glr`)."""
        return self.glr(mu, w, a)

    def stop_threshold(self, w: np.ndarray, a: np.ndarray, total: np.ndarray) -> np.ndarray:
        """c_{a_i, b}(ω_i, δ) for every run i and arm b, shape (n_runs, K)."""
        raise NotImplementedError

    # -- Algorithm 1 -----------------------------------------------------------------------------
    def reset_state(self) -> None:
        n, K = self.n_runs, self.K
        self.counts = np.zeros((n, K), dtype=np.int64)  # N_{n,a}
        self.sums = np.zeros((n, K))
        self.leader_counts = np.zeros((n, K), dtype=np.int64)  # L_{n,a}
        self.leader_pulls = np.zeros((n, K), dtype=np.int64)  # N^a_{n,a}
        self.stopped = np.zeros(n, dtype=bool)
        self.recommendation = np.full(n, -1, dtype=np.int64)
        self.stopping_time = np.zeros(n, dtype=np.int64)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.t < self.K:  # line 2: initialisation, one pull per arm
            return np.full(self.n_runs, self.t, dtype=np.int64)
        runs, live = self._runs, ~self.stopped
        mu, w = self.estimates()
        total = self.counts.sum(axis=1, keepdims=True)  # ‖N_n‖₁

        # lines 4–7: recommendation and GLR stopping rule (eq. 2)
        a_hat = np.argmax(mu, axis=1)
        glr = self.stop_statistic(mu, w, a_hat) - self.stop_threshold(w, a_hat, total)
        glr[runs, a_hat] = 0.0  # the condition is over a ≠ â
        stops = live & (glr >= 0.0).all(axis=1)
        if stops.any():
            self.stopped |= stops
            self.recommendation[stops] = a_hat[stops]
            self.stopping_time[stops] = total[stops, 0]
            live = ~self.stopped

        # line 8: UCB leader; line 9: TC challenger (with the global counts N)
        leader = np.argmax(mu + self.bonus(w, total), axis=1)
        cost = self.transport(mu, self.counts, leader)
        cost[runs, leader] = np.inf
        challenger = np.argmin(cost, axis=1)

        # lines 10 and 12: β-tracking of the leader's own pulls (only runs still going)
        self.leader_counts[runs, leader] += live
        L_B = self.leader_counts[runs, leader]
        take_leader = self.leader_pulls[runs, leader] <= self.beta * L_B
        self.leader_pulls[runs, leader] += live & take_leader
        arm = np.where(take_leader, leader, challenger)
        return np.where(self.stopped, self.recommendation + self.K, arm)

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        live = actions < self.K  # stop actions (and every action of a stopped run) carry no sample
        arms = np.where(live, actions, 0)
        if self.reward_mode == "cost":
            rewards = np.asarray(observations, dtype=float).reshape(self.n_runs, -1)[:, 0]
        self.counts[self._runs, arms] += live  # line 12
        self.update_estimator(live, arms, rewards)  # line 13
        self.t += 1


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
        super().__init__(K, delta=delta, beta=beta, reward_mode=reward_mode, n_runs=n_runs)
        self.set_gaussian_parameters(threshold, sigma, alpha, s)
        if self.threshold == "theory":
            self._c0 = glr_threshold_constant(self.K, self.delta)

    def stop_threshold(self, w: np.ndarray, a: np.ndarray, total: np.ndarray) -> np.ndarray:
        if self.threshold == "empirical":
            return empirical_threshold(total, self.delta)
        h = 2.0 * np.log(4.0 + np.log(w))  # eq. 4, one term per arm
        return self._c0 + h[self._runs, a][:, None] + h


# -- local DP: a randomizer wrapper in front of TTUCB (SPEC §3.2) -------------------------------
BOUNDED_LAWS = ("bernoulli", "beta")


class _LocalTTUCB(TTUCB):
    """TTUCB behind a local randomizer: the *system* "wrapper + TTUCB" (paper 3, §3.1).

    The learner is the unchanged :class:`TTUCB`; the guarantee is the wrapper's. The runner builds
    the env with the sample as the Gymnasium reward (``env_requirements``) and calls
    :meth:`wrap_env`, so TTUCB only ever sees released values. Rewards must lie in [0, 1]
    (Bernoulli or Beta laws): a Gaussian-law env is refused when wrapped.
    """

    env_requirements = {"reward_mode": "sample"}

    def randomizer_wrapper(self, env: Any, vector: bool) -> Any:
        """``env`` inside this system's local randomizer (vector or single-env twin)."""
        raise NotImplementedError

    def wrap_env(self, env: Any) -> Any:
        from gymnasium.vector import VectorEnv

        from privenv.agents import public_info_of

        law = public_info_of(env).get("law")
        if law not in BOUNDED_LAWS:
            raise ValueError(f"{self.name} needs rewards in [0, 1] (law in {BOUNDED_LAWS}), "
                             f"got law={law!r}")
        return self.randomizer_wrapper(env, isinstance(env, VectorEnv))


class CTBTT(_LocalTTUCB):
    """CTB-TT (paper 3, Algorithm 7): ε-local DP best-arm identification by randomized response
    (CTB, Algorithm 4) in front of TTUCB.

    Each reward r ∈ [0, 1] is released as a Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)) bit by the
    :class:`~privenv.wrappers.RandomizedResponse` wrapper; TTUCB (σ = 1/2, the released bits are
    Bernoulli) runs on the bits. Randomized response maps arm means μ to the increasing
    μ_ε = (2μ − 1)(e^ε − 1)/(2(e^ε + 1)) + ½, so the best arm is unchanged and δ-correctness
    carries over (Lemma 12, Theorem 14); gaps shrink by (e^ε − 1)/(e^ε + 1), hence the ε⁻² cost in
    the high-privacy regime.

    Privacy: ε-DP in the local model, per reward — declared by the wrapper (``agent.privacy`` is
    the learner's own, none; the runner reports the system's).

    Args:
        K: number of arms.
        epsilon: local privacy budget ε > 0.
        delta, threshold, beta, alpha, s: as :class:`TTUCB`.
        reward_mode: must be ``"sample"`` (the runner builds the env so).
        n_runs: number of runs.
    """

    name = "ctb-tt"

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
        self.epsilon = check_epsilon(epsilon)
        super().__init__(K, delta=delta, threshold=threshold, sigma=0.5, beta=beta, alpha=alpha,
                         s=s, reward_mode=check_choice("reward_mode", reward_mode, ("sample",)),
                         n_runs=n_runs)

    def randomizer_wrapper(self, env: Any, vector: bool) -> Any:
        from privenv.wrappers import RandomizedResponse, VectorRandomizedResponse

        return (VectorRandomizedResponse if vector else RandomizedResponse)(env, self.epsilon)


class GaussianLDPTTUCB(_LocalTTUCB):
    """(ε, γ)-local DP TTUCB (paper 3, Algorithm 8, after Zheng et al. 2020, Algorithm 1).

    Each reward r ∈ [0, 1] is released as r + N(0, σ²_{ε,γ}) by the
    :class:`~privenv.wrappers.GaussianReward` wrapper (Δ₂ = 1); TTUCB runs on the noisy rewards
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
        n_runs: number of runs.
    """

    name = "gaussian-ldp-ttucb"

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
        n_runs: int = 1,
    ) -> None:
        from privenv.wrappers.ldp import GaussianRandomizer

        self.epsilon = check_epsilon(epsilon)
        self.gamma = check_real("gamma", gamma, low=0.0, high=1.0, low_open=True, high_open=True)
        self.calibration = calibration
        self._randomizer = GaussianRandomizer(self.epsilon, self.gamma, (0.0, 1.0), calibration)
        self.sigma_privacy = self._randomizer.sigma  # σ_{ε,γ}
        super().__init__(K, delta=delta, threshold=threshold,
                         sigma=math.sqrt(self.sigma_privacy**2 + 0.25), beta=beta, alpha=alpha,
                         s=s, reward_mode=check_choice("reward_mode", reward_mode, ("sample",)),
                         n_runs=n_runs)

    def randomizer_wrapper(self, env: Any, vector: bool) -> Any:
        from privenv.wrappers import GaussianReward, VectorGaussianReward

        cls = VectorGaussianReward if vector else GaussianReward
        return cls(env, self.epsilon, self.gamma, (0.0, 1.0), self.calibration)
