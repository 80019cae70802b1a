"""Linear contextual bandits: paper 4's baselines (its references; docs/guides/linear.md).

* :class:`LinUCB` — LinUCB / OFUL (Abbasi-Yadkori, Pál, Szepesvári 2011, "Improved algorithms for
  linear stochastic bandits"), non-private: ridge regression and the self-normalized confidence
  ellipsoid of their Theorem 2.
* :class:`LDPLinUCB` — LDP-LinUCB (Zheng, Cai, Huang, Li, Wang 2020, "Locally differentially
  private (contextual) bandits learning"; the Õ(T^{3/4}) baseline discussed in paper 4, §1 and
  §2.1): every user sends Gaussian-perturbed sufficient statistics
  (:class:`~privenv.wrappers.GaussianStatistics`), the server runs a shifted ridge regression.
* :class:`InputPerturbationOLS` — paper 4, Theorem 2.2's negative example as a teaching baseline:
  users send (φ + Lap_d(b), y + Lap(b)) (:class:`~privenv.wrappers.LaplaceInput`); the learner
  runs ridge least squares on the noisy data and acts greedily.

The fourth baseline, central-DP LinUCB (Shariff & Sheffet 2018), is
:class:`~privenv.agents.central_linucb.CentralDPLinUCB`; it shares this module's ridge machinery
(:func:`oful_radius`, :func:`optimistic_actions`, the parameter declarations).

All three hold the state of ``n_runs`` runs with a leading run axis: per run a d×d matrix and two
d-vectors, so memory is O(n_runs·d²), independent of the horizon. A step costs a few batched numpy
calls (``matmul``/``einsum`` over the run axis; no Python loop over runs).

**The local-DP systems** (``ldp-linucb``, ``input-perturbation-ols``) are "user-side randomizer
+ learner": the agent declares its randomizer (:meth:`~privenv.agents.base.Agent.local_randomizer`)
and the runner puts the env behind its wrapper (:func:`privenv.simulation.system_env`), whose
observation is a dict: ``"features"`` (the feature
matrix of the round, used only to choose that round's action and never stored — paper 4's
non-anticipating Definition 1.1) and the message of the user just served (see
:mod:`privenv.wrappers.ldp_linear`). The learner updates only from messages, so its guarantee is
the wrapper's; ``agent.privacy`` is the learner's own (none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from privenv.agents.base import Agent
from privenv.parameters import (
    DELTA,
    EPSILON,
    NONNEGATIVE,
    POSITIVE,
    SAMPLER,
    Flag,
    Integer,
    Options,
    Param,
    Real,
)
from privenv.privacy.local import CALIBRATIONS
from privenv.wrappers.ldp_linear import (
    GaussianStatisticsRandomizer,
    LaplaceInputRandomizer,
    LinearMessageRandomizer,
)

__all__ = [
    "InputPerturbationOLS",
    "LDPLinUCB",
    "LinUCB",
    "chosen_features",
    "feature_matrices",
    "ldp_linucb_beta",
    "ldp_linucb_upsilon",
    "oful_radius",
    "optimistic_actions",
    "weighted_norms",
]


# ---------------------------------------------------------------------------------------------
# Confidence widths
# ---------------------------------------------------------------------------------------------


def oful_radius(
    logdet_V: np.ndarray | float, d: int, lambda_: float, sigma: float, S: float, alpha: float
) -> np.ndarray:
    """√β_t of OFUL (Abbasi-Yadkori et al. 2011, Theorem 2, whose δ is our α): with probability
    ≥ 1 − α, for all t, ‖θ̂_t − θ*‖_{V_t} ≤ R√(2 log(det(V_t)^{1/2} det(λI)^{−1/2}/α)) + λ^{1/2} S
    = R√(2 log(1/α) + log det V_t − d log λ) + √λ S,
    for R-sub-Gaussian noise (R = ``sigma``) and ‖θ*‖₂ ≤ S."""
    inner = 2.0 * math.log(1.0 / alpha) + np.asarray(logdet_V) - d * math.log(lambda_)
    return sigma * np.sqrt(np.maximum(inner, 0.0)) + math.sqrt(lambda_) * S


def ldp_linucb_upsilon(sigma: float, t: int, d: int, T: int, alpha: float) -> float:
    """Υ_t = σ√t (4√d + 2 log(2T/α)) (Zheng et al. 2020): a high-probability bound on
    the spectral norm of the sum of t symmetric Gaussian noise matrices; V + 2Υ_t I is then
    positive definite and ⪰ (Σφφᵀ + Υ_t I) with probability ≥ 1 − α/2."""
    return sigma * math.sqrt(t) * (4.0 * math.sqrt(d) + 2.0 * math.log(2.0 * T / alpha))


def ldp_linucb_beta(sigma: float, t: int, d: int, T: int, upsilon: float) -> float:
    """β_t = 2σ√(d log T) + (√(3Υ_t) + σ√(dt/Υ_t)) d log T (Zheng et al. 2020):
    the width multiplying ‖φ‖_{(V + 2Υ_t I)⁻¹}."""
    log_T = math.log(T)
    return (2.0 * sigma * math.sqrt(d * log_T)
            + (math.sqrt(3.0 * upsilon) + sigma * math.sqrt(d * t / upsilon)) * d * log_T)


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


def feature_matrices(observations: Any, d: int, n_runs: int) -> np.ndarray:
    """The feature matrices (n_runs, A, d) as float64; ValueError on a wrong shape."""
    phi = np.asarray(observations, dtype=np.float64)
    if phi.ndim != 3 or phi.shape[0] != n_runs or phi.shape[2] != d:
        raise ValueError(f"observations must be feature matrices of shape ({n_runs}, A, {d}), "
                         f"got shape {phi.shape}")
    return phi


def weighted_norms(phi: np.ndarray, M_inv: np.ndarray) -> np.ndarray:
    """‖φ_a‖_{M⁻¹} = √(φ_aᵀ M⁻¹ φ_a) of every run and action: (n, A).

    The confidence width of LinUCB-type agents up to their radius, for features ``phi`` of shape
    (n, A, d) and inverse Gram matrices ``M_inv`` of shape (n, d, d); also a feature of the RL
    views of the linear families."""
    quad = np.einsum("nad,nad->na", phi @ M_inv, phi)
    return np.sqrt(np.maximum(quad, 0.0))  # ≥ 0 up to rounding (M⁻¹ is PSD)


def chosen_features(phi: np.ndarray | None, actions: Any) -> np.ndarray:
    """The features (n, d) of the actions each run took from the feature matrices ``phi`` (n, A,
    d) its last act saw; ``RuntimeError`` before any act."""
    if phi is None:
        raise RuntimeError("call act() before observe()")
    return phi[np.arange(phi.shape[0]), actions]


def optimistic_actions(phi: np.ndarray, theta: np.ndarray, width: np.ndarray | float,
                       M_inv: np.ndarray) -> np.ndarray:
    """The optimistic (OFUL) choice of every run: argmax_a ⟨φ_a, θ̂⟩ + √β ‖φ_a‖_{M⁻¹}, ties to
    the lowest index, for features ``phi`` (n, A, d), estimates ``theta`` (n, d), widths √β
    ``width`` (n,) or one for all runs, and inverse Gram matrices ``M_inv`` (n, d, d)."""
    score = (phi @ theta[:, :, None])[..., 0]
    score += np.reshape(width, (-1, 1)) * weighted_norms(phi, M_inv)
    return score.argmax(axis=1)


#: the feature dimension (the env's)
D_PARAM = Param(Integer(low=1), problem="d")
#: the failure probability α ∈ (0, 1) of a confidence set (every linear and federated agent calls
#: it ``alpha`` and keeps ``delta`` for the privacy δ)
ALPHA_PARAM = Param(Real(0.0, 1.0, low_open=True, high_open=True))
#: the assumed bound S ≥ ‖θ*‖₂ and sub-Gaussian scale R of the reward noise (the env's public
#: values unless set)
THETA_BOUND_PARAM = Param(NONNEGATIVE, assumes="theta_bound")
SIGMA_PARAM = Param(NONNEGATIVE, assumes="sigma")
#: the horizon T the agent is built for (the env's unless set; e.g. a tree mechanism's size)
HORIZON_PARAM = Param(Integer(low=1), assumes="horizon")
#: the label bound b (``None``: unbounded labels); the env's unless set. Labels outside it are
#: clipped (``clip=True``, or a federated protocol's clipping) or refused, never used raw
REWARD_BOUND_PARAM = Param(Real(0.0, low_open=True, none=True), assumes="reward_bound")


class _RidgeAgent(Agent):
    """Ridge regression per run, V = λI + Σxxᵀ, b = Σ y x, θ̂ = V⁻¹b, with V⁻¹ kept by rank-one
    Sherman–Morrison updates (V + xxᵀ)⁻¹ = V⁻¹ − V⁻¹xxᵀV⁻¹/(1 + xᵀV⁻¹x) and log det V by the
    matrix determinant lemma log det(V + xxᵀ) = log det V + log(1 + xᵀV⁻¹x)."""

    families = ("linear",)
    parameters = {"d": D_PARAM, "lambda_": Param(POSITIVE)}

    # parameters stored by set_params (privenv.parameters)
    d: int
    lambda_: float

    def __init__(self, d: int, lambda_: float, n_runs: int) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def reset_state(self) -> None:
        n, d = self.n_runs, self.d
        self.V_inv = np.broadcast_to(np.eye(d) / self.lambda_, (n, d, d)).copy()
        self.b = np.zeros((n, d))
        self.theta = np.zeros((n, d))
        self.logdet_V = np.full(n, d * math.log(self.lambda_))

    def ridge_update(self, x: np.ndarray, y: np.ndarray) -> None:
        """Add the pairs (x_i, y_i) of every run i: x (n, d), y (n,)."""
        Vx = np.einsum("nij,nj->ni", self.V_inv, x)  # V⁻¹x (V⁻¹ symmetric)
        denom = 1.0 + np.einsum("ni,ni->n", x, Vx)
        self.V_inv -= (Vx[:, :, None] * Vx[:, None, :]) / denom[:, None, None]
        self.logdet_V += np.log(denom)
        self.b += y[:, None] * x
        self.theta = np.einsum("nij,nj->ni", self.V_inv, self.b)


class _MessageLearner(Agent):
    """A learner behind a user-side randomizer wrapper: observations are dicts of batched arrays
    (``"features"`` + the message keys), so the one-run forms add the run axis to each entry."""

    message_keys: tuple[str, ...] = ()

    def act(self, observation: Any) -> Any:
        if self.n_runs == 1:
            return self.act_batch(self._batched(observation, one=True))[0].item()
        return self.act_batch(self._batched(observation))

    def observe(self, action: Any, reward: Any, observation: Any) -> None:
        one = self.n_runs == 1
        self.observe_batch(np.asarray(action).reshape(self.n_runs),
                           np.asarray(reward, dtype=float).reshape(self.n_runs),
                           self._batched(observation, one=one))

    def _batched(self, observation: Any, one: bool = False) -> dict[str, np.ndarray]:
        keys = ("features", *self.message_keys)
        if not isinstance(observation, Mapping) or any(k not in observation for k in keys):
            raise ValueError(
                f"{type(self).__name__} learns from its randomizer wrapper's messages: "
                f"observations must be dicts with keys {list(keys)}, got "
                f"{type(observation).__name__} (run it with privenv.simulation.simulate/play, "
                "which put the env behind agent.local_randomizer(), or do so yourself with "
                "privenv.simulation.system_env(agent, env))"
            )
        return {k: np.asarray(observation[k])[None] if one else np.asarray(observation[k])
                for k in keys}

    def local_randomizer(self) -> LinearMessageRandomizer:
        """This system's user-side randomizer (the runner puts it in front of the learner)."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# LinUCB / OFUL
# ---------------------------------------------------------------------------------------------


class LinUCB(_RidgeAgent):
    """LinUCB / OFUL (Abbasi-Yadkori, Pál, Szepesvári 2011, Algorithm 1 "OFUL" with the
    confidence set of Theorem 2), non-private.

    Round t (per run):

    1. V_{t−1} = λI + Σ_{s<t} φ_sφ_sᵀ, θ̂_{t−1} = V_{t−1}⁻¹ Σ_{s<t} y_s φ_s (ridge regression);
    2. √β_{t−1} = R√(2 log(1/δ) + log det V_{t−1} − d log λ) + √λ S (Theorem 2);
    3. play a_t = argmax_a ⟨φ(x_t, a), θ̂_{t−1}⟩ + √β_{t−1} ‖φ(x_t, a)‖_{V_{t−1}⁻¹} — for a finite
       action set this equals OFUL's optimistic argmax over the ellipsoid
       {θ : ‖θ − θ̂‖_V ≤ √β} (max_θ ⟨φ, θ⟩ = ⟨φ, θ̂⟩ + √β‖φ‖_{V⁻¹});
    4. observe y_t, update V⁻¹ by Sherman–Morrison (rank one, batched) and log det V by the
       determinant lemma.

    Ties go to the lowest action index. Privacy: none.

    Args:
        d: feature dimension.
        sigma: R, the sub-Gaussian scale of the reward noise (from the env's ``public_info``: 1
            for ±1 rewards — a centred variable in an interval of length 2 is 1-sub-Gaussian).
        theta_bound: S ≥ ‖θ*‖₂ (``public_info``: 1).
        lambda_: ridge parameter λ > 0 (default 1).
        alpha: failure probability α ∈ (0, 1) of the confidence set (Theorem 2's δ; default
            0.01). Every linear and federated agent names its failure probability ``alpha`` and
            keeps ``delta`` for the privacy δ.
        n_runs: number of runs.
    """

    name = "linucb"
    parameters = {**_RidgeAgent.parameters, "sigma": SIGMA_PARAM,
                  "theta_bound": THETA_BOUND_PARAM, "alpha": ALPHA_PARAM}

    # parameters stored by set_params (privenv.parameters)
    alpha: float
    sigma: float
    theta_bound: float

    def __init__(
        self,
        d: int,
        sigma: float = 1.0,
        theta_bound: float = 1.0,
        lambda_: float = 1.0,
        alpha: float = 0.01,
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(d, lambda_, n_runs)

    def reset_state(self) -> None:
        super().reset_state()
        self._phi: np.ndarray | None = None

    def width(self) -> np.ndarray:
        """√β_{t−1} of every run (step 2)."""
        return oful_radius(self.logdet_V, self.d, self.lambda_, self.sigma, self.theta_bound,
                           self.alpha)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        phi = feature_matrices(observations, self.d, self.n_runs)
        self._phi = phi
        return optimistic_actions(phi, self.theta, self.width(), self.V_inv)  # step 3

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        x = chosen_features(self._phi, actions)
        self.ridge_update(x, np.asarray(rewards, dtype=np.float64))  # step 4
        self.t += 1


# ---------------------------------------------------------------------------------------------
# LDP-LinUCB (Zheng et al. 2020)
# ---------------------------------------------------------------------------------------------


class LDPLinUCB(_MessageLearner):
    """LDP-LinUCB (Zheng, Cai, Huang, Li, Wang 2020, the linear case of their LDP GLM bandit
    algorithm): (ε, δ)-local DP, regret Õ(T^{3/4}/ε).

    User side (:meth:`local_randomizer`, the randomizer of the
    :class:`~privenv.wrappers.GaussianStatistics` wrapper, which the runner puts in front): after
    round t the user releases φ_tφ_tᵀ + B_t and φ_t y_t + ξ_t.

    Server (this learner), round t, with s = max(t − 1, 1) messages received:

    1. V = Σ_{τ<t} (φ_τφ_τᵀ + B_τ), u = Σ_{τ<t} (φ_τ y_τ + ξ_τ);
    2. Υ = σ√s (4√d + 2 log(2T/α)) (:func:`ldp_linucb_upsilon`);
    3. θ = (V + 2ΥI)⁻¹u;
    4. β = 2σ√(d log T) + (√(3Υ) + σ√(ds/Υ)) d log T (:func:`ldp_linucb_beta`);
    5. play argmax_a ⟨φ(x_t, a), θ⟩ + β‖φ(x_t, a)‖_{(V + 2ΥI)⁻¹}.

    V + 2ΥI changes with Υ every round, so its inverse is recomputed per round (a batched d×d
    ``numpy.linalg.inv``, O(n_runs·d³)); it is positive definite with probability ≥ 1 − α/2 —
    should the noise make it indefinite, a negative ‖φ‖² is taken as 0. The features of round t
    are used only in step 5, never stored (paper 4, Definition 1.1). Zheng et al.'s public code
    multiplies β by ‖φ‖² (no square root) and starts from a shift 0.1; we follow the formulas
    of the paper. σ: see :mod:`privenv.wrappers.ldp_linear` ("Calibration").

    Privacy: (ε, δ)-DP in the local model, per (context, reward) — declared by the wrapper.

    Args:
        d: feature dimension.
        horizon: T (from the env).
        epsilon: ε > 0.
        delta: the local δ ∈ (0, 1) of each user's release (default 10⁻⁶, our choice).
        alpha: failure probability α ∈ (0, 1) in Υ_t (default 0.01).
        calibration: ``"analytic"`` (default) or ``"classical"`` (ε < 1; Zheng et al.'s code).
        clip: clip labels into [−1, 1] (e.g. Gaussian reward noise) instead of raising.
        sampler: the users' sampler, ``"float"`` (default) or ``"exact"`` (the statistics on a
            grid plus discrete Gaussian noise, σ calibrated through zCDP;
            :class:`~privenv.wrappers.GaussianStatistics`); σ in steps 2 and 4 is the drawn σ.
        n_runs: number of runs.
    """

    name = "ldp-linucb"
    message_keys = ("gram", "moment")
    families = ("linear",)
    parameters = {
        "d": D_PARAM,
        "horizon": HORIZON_PARAM,
        "epsilon": Param(EPSILON),
        "delta": Param(DELTA),
        "alpha": ALPHA_PARAM,
        "calibration": Param(Options(CALIBRATIONS)),
        "clip": Param(Flag()),
        "sampler": Param(SAMPLER, assumes="sampler"),
    }

    # parameters stored by set_params (privenv.parameters)
    alpha: float
    calibration: str
    clip: bool
    d: int
    delta: float
    epsilon: float
    horizon: int
    sampler: str

    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        alpha: float = 0.01,
        calibration: str = "analytic",
        clip: bool = False,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        # the users' noise σ, public (this class's randomizer: an audit's mutant changes only
        # the users' side, through local_randomizer)
        self.sigma = LDPLinUCB.local_randomizer(self).sigma

    def local_randomizer(self) -> GaussianStatisticsRandomizer:
        """The users' Gaussian statistics (:class:`~privenv.wrappers.GaussianStatistics`)."""
        return GaussianStatisticsRandomizer(self.epsilon, self.delta, self.d, self.calibration,
                                            self.clip, self.sampler)

    def reset_state(self) -> None:
        self.V = np.zeros((self.n_runs, self.d, self.d))
        self.u = np.zeros((self.n_runs, self.d))

    def act_batch(self, observations: Mapping[str, np.ndarray]) -> np.ndarray:
        phi = feature_matrices(observations["features"], self.d, self.n_runs)
        s = max(self.t, 1)
        upsilon = ldp_linucb_upsilon(self.sigma, s, self.d, self.horizon, self.alpha)  # step 2
        beta = ldp_linucb_beta(self.sigma, s, self.d, self.horizon, upsilon)  # step 4
        M_inv = np.linalg.inv(self.V + 2.0 * upsilon * np.eye(self.d))
        theta = np.einsum("nij,nj->ni", M_inv, self.u)  # step 3
        return optimistic_actions(phi, theta, beta, M_inv)  # step 5

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: Mapping[str, np.ndarray]
    ) -> None:
        self.V += observations["gram"]  # step 1: sums of the released messages only
        self.u += observations["moment"]
        self.t += 1


# ---------------------------------------------------------------------------------------------
# Input perturbation + least squares (paper 4, Theorem 2.2)
# ---------------------------------------------------------------------------------------------


class InputPerturbationOLS(_MessageLearner, _RidgeAgent):
    """Input perturbation + least squares, greedy (paper 4, Theorem 2.2's negative example).

    User side (:meth:`local_randomizer`, the randomizer of the
    :class:`~privenv.wrappers.LaplaceInput` wrapper, which the runner puts in front):
    after round t the user releases φ̃_t = φ_t + Lap_d(b) and ỹ_t = y_t + Lap(b),
    b = (2√d + 2)/ε (ε-LDP).

    Learner, round t: θ̂ = (λI + Σ_{τ<t} φ̃_τφ̃_τᵀ)⁻¹ Σ_{τ<t} ỹ_τφ̃_τ (ridge least squares on the
    released data, Sherman–Morrison updates; λ = 1 by default, OLS being λ → 0) and play
    argmax_a ⟨φ(x_t, a), θ̂⟩ (greedy; ties to the lowest index).

    Why greedy, not UCB: paper 4 states Theorem 2.2 for *any* estimator on input-perturbed data,
    and a least-squares confidence ellipsoid is not valid here — the noise is in the regressors
    (errors-in-variables), so θ̂ is biased: E[φ̃φ̃ᵀ] = E[φφᵀ] + 2b²I attenuates it towards 0, and
    no width computed from Σφ̃φ̃ᵀ covers that bias. The fresh contexts of every round provide the
    exploration a greedy linear learner needs on the default sphere instance; on ill-conditioned
    designs (Theorem 2.2's, or ``contexts="hard"``) the attenuation is anisotropic and greedy
    play can lock onto the wrong action — the lesson this baseline teaches.

    Privacy: ε-DP in the local model, per (context, reward) — declared by the wrapper.

    Args:
        d: feature dimension.
        epsilon: ε > 0.
        lambda_: ridge parameter λ > 0 (default 1).
        clip: clip labels into [−1, 1] (e.g. Gaussian reward noise) instead of raising.
        sampler: the users' sampler, ``"float"`` (default) or ``"exact"`` (the pair on a grid
            plus discrete Laplace noise; :class:`~privenv.wrappers.LaplaceInput`).
        n_runs: number of runs.
    """

    name = "input-perturbation-ols"
    message_keys = ("phi_tilde", "y_tilde")
    parameters = {**_RidgeAgent.parameters, "epsilon": Param(EPSILON), "clip": Param(Flag()),
                  "sampler": Param(SAMPLER, assumes="sampler")}

    # parameters stored by set_params (privenv.parameters)
    clip: bool
    epsilon: float
    sampler: str

    def __init__(
        self,
        d: int,
        epsilon: float = 1.0,
        lambda_: float = 1.0,
        clip: bool = False,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        _RidgeAgent.__init__(self, d, lambda_, n_runs)
        self.scale = InputPerturbationOLS.local_randomizer(self).scale  # b, public

    def local_randomizer(self) -> LaplaceInputRandomizer:
        """The users' input perturbation (:class:`~privenv.wrappers.LaplaceInput`)."""
        return LaplaceInputRandomizer(self.epsilon, self.d, self.clip, self.sampler)

    def act_batch(self, observations: Mapping[str, np.ndarray]) -> np.ndarray:
        phi = feature_matrices(observations["features"], self.d, self.n_runs)
        return (phi @ self.theta[:, :, None])[..., 0].argmax(axis=1)

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: Mapping[str, np.ndarray]
    ) -> None:
        self.ridge_update(np.asarray(observations["phi_tilde"], dtype=np.float64),
                          np.asarray(observations["y_tilde"], dtype=np.float64)[:, 0])
        self.t += 1
