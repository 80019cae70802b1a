r"""The features an RL learner observes: the run's sufficient statistics, one implementation per
family kind, batched over runs (pure numpy).

A bandit env has no state (``HuberBandit-v0`` observes ``Discrete(1)``; ``BestArmIdentification-v0``
observes the last sample at most; the linear families observe only the current round's features),
so an RL learner needs the *history* summarised in its observation.
:class:`RunStatistics` (K-armed families) and :class:`LinearRunStatistics` (linear and federated)
keep per-run statistics and compute the feature vector from them; a :class:`StatisticsSpec` /
:class:`LinearStatisticsSpec` describes them from public information only
(:func:`statistics_spec` picks the one of an env). They are the only place the features are
computed: the views (:mod:`privenv.rl.views`), the RL ids (:mod:`privenv.rl.envs`) and
:class:`~privenv.rl.agent.SB3Agent` all call them.

## The features of a K-armed bandit (``Box`` 1-D, float32; T = the env's ``horizon``, t = pulls)

K features each unless said otherwise:

* ``N_a / T`` — pull counts;
* ``clip(μ̂_a / scale, −10, 10)`` — empirical means of the *sample channel* (0 for an unpulled arm),
  ``scale`` = the env's public ``mean_range`` (``HuberBandit-v0``: max \|μ_a\|) or 1;
* ``t / T`` (1 feature).

Best-arm identification (``task == "bai"``) adds what a GLR stopping rule (paper 3, eq. 2) needs:

* the one-hot of the empirical best arm â (among pulled arms; ties to the smallest index);
* ``log(1 + W_{â,a})`` (clipped at 50) with W the Gaussian transportation cost of eq. 3 at the env's
  sub-Gaussian scale σ (0 at â and at unpulled arms) — the same function TTUCB uses;
* ``log(1 + Λ)``, Λ = min_{a≠â} W_{â,a}, the GLR statistic (1 feature);
* ``log(1 + t) / log(1 + T)``, the budget used on the scale of the stopping threshold
  c ≈ log(1/δ) + O(log log t) (1 feature).

So the observation has 2K + 1 features, 4K + 3 for best-arm identification.

## The features of a linear contextual bandit (M silos, A actions, dimension d; M = 1 unless
federated)

Ridge regression on every pulled (φ, y) of the run, V = Σ φφᵀ, b = Σ y φ, V_λ = λI + V with
λ = :data:`RIDGE_LAMBDA` (LinUCB's default), θ̂ = V_λ⁻¹ b (the federated silos share θ*, so their
pulls are pooled):

* the current round's features φ(x_t, a) of every silo and action, flattened (M·A·d);
* ``clip(⟨φ_a, θ̂⟩, −10, 10)`` — the estimated reward of every silo's actions (M·A);
* ``‖φ_a‖_{V_λ⁻¹}`` — their confidence widths, in [0, 1/√λ] (M·A): the two ingredients of LinUCB;
* ``clip(θ̂, −10, 10)`` (d), the upper triangle of V/(M·T) (d(d + 1)/2) — with θ̂, sufficient
  for (V, b);
* ``t / T`` (1 feature).

So M·A·(d + 2) + d(d + 3)/2 + 1 features. The federated statistics need each silo's own reward:
the view requires ``reward="silo"`` and returns their sum (the ``reward="sum"`` reward) to the
learner.

**Sample channel.** The statistics average the value the learner sees for a pull: the Gymnasium
reward, except ``BestArmIdentification-v0`` with ``reward_mode="cost"`` (the default), whose sample
is the observation (its reward is −pull_cost). Behind a local-DP wrapper they average the
*released* (randomized) rewards — post-processing, so the privacy of the stack is the wrapper's.
A stop action (best-arm identification) carries no sample and is not a pull. The linear message
randomizers (``GaussianStatistics``, ``LaplaceInput``) are refused: their guarantee covers the
chosen features, which an RL learner keeps anyway (every rollout or replay buffer stores its
observations, the raw feature matrices) — behind ``LaplaceLabel`` the label is protected and the
guarantee says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from privenv._validation import check_choice, check_int, check_real
from privenv.agents import public_info_of
from privenv.agents.linear import weighted_norms
from privenv.agents.top_two import gaussian_transport

__all__ = [
    "LOG_W_CLIP",
    "MEAN_CLIP",
    "RIDGE_LAMBDA",
    "LinearRunStatistics",
    "LinearStatisticsSpec",
    "RunStatistics",
    "Spec",
    "StatisticsSpec",
    "base_spaces",
    "env_name",
    "learner_reward",
    "statistics_spec",
]

#: empirical means (and linear estimates) are clipped to ±MEAN_CLIP in the observation
MEAN_CLIP = 10.0
#: log(1 + W) and log(1 + Λ) are clipped to LOG_W_CLIP (W = e⁵⁰ is far beyond any threshold)
LOG_W_CLIP = 50.0
#: ridge λ of the linear statistics (the zoo's LinUCB default)
RIDGE_LAMBDA = 1.0


def env_name(env: Any) -> str:
    """An env's id (its class name if it has no spec), for messages."""
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(getattr(env, "unwrapped", env)).__name__


def base_spaces(env: Any) -> tuple[spaces.Space, spaces.Space]:
    """The bandit's own (single) action and observation spaces, under any wrappers."""
    base = getattr(env, "unwrapped", env)
    action_space = getattr(base, "single_action_space", base.action_space)
    obs_space = getattr(base, "single_observation_space", base.observation_space)
    return action_space, obs_space


def _message_space(env: Any) -> spaces.Dict | None:
    """The ``Dict`` observation space of a message randomizer in ``env``'s wrapper chain."""
    while env is not None:
        space = getattr(env, "single_observation_space", getattr(env, "observation_space", None))
        if isinstance(space, spaces.Dict):
            return space
        env = getattr(env, "env", None)
    return None


@dataclass(frozen=True)
class StatisticsSpec:
    """What the features of a K-armed bandit depend on (public information only).

    Attributes:
        K: number of arms.
        horizon: T, the run length (regret) or sample budget (best-arm identification).
        bai: whether the task is best-arm identification (actions ``Discrete(2K)``).
        channel: ``"reward"`` or ``"observation"`` — where a pull's sample is.
        reward_scale: the empirical means are divided by it.
        sigma: sub-Gaussian scale of the transportation cost W (best-arm identification).
    """

    K: int
    horizon: int
    bai: bool = False
    channel: str = "reward"
    reward_scale: float = 1.0
    sigma: float = 0.5

    def __post_init__(self) -> None:
        check_int("K", self.K, low=2)
        check_int("horizon", self.horizon, low=1)
        check_choice("channel", self.channel, ("reward", "observation"))
        check_real("reward_scale", self.reward_scale, low=0.0, low_open=True)
        check_real("sigma", self.sigma, low=0.0, low_open=True)

    @classmethod
    def from_env(cls, env: Any, reward_scale: float | None = None) -> StatisticsSpec:
        """The spec of a privenv K-armed env (single or vector, possibly wrapped) from its public
        description. ``ValueError`` for envs these statistics do not summarise (contexts: see
        :class:`LinearStatisticsSpec`)."""
        info = public_info_of(env)
        action_space, obs_space = base_spaces(env)
        bai = info.get("task") == "bai"
        K = info.get("K")
        arms = None if K is None else (2 * K if bai else K)
        stateless = bai or (isinstance(obs_space, spaces.Discrete) and obs_space.n == 1)
        if (
            K is None
            or not isinstance(action_space, spaces.Discrete)
            or action_space.n != arms
            or not stateless
        ):
            raise ValueError(
                "env must be a K-armed bandit without contexts (HuberBandit-v0, "
                f"BestArmIdentification-v0): counts and means are not sufficient for "
                f"{env_name(env)} (action space {action_space}, observation space {obs_space})"
            )
        horizon = info.get("horizon")
        if horizon is None:
            raise ValueError("env must have a horizon (the features are scaled by T), got None")
        if reward_scale is None:
            reward_scale = float(info.get("mean_range") or 1.0)
        channel = "observation" if bai and info.get("reward_mode") == "cost" else "reward"
        return cls(
            K=int(K),
            horizon=int(horizon),
            bai=bai,
            channel=channel,
            reward_scale=check_real("reward_scale", reward_scale, low=0.0, low_open=True),
            sigma=float(info.get("sigma", 0.5)) if bai else 0.5,
        )

    @property
    def dim(self) -> int:
        """Number of features, 2K + 1 (4K + 3 for best-arm identification)."""
        return 4 * self.K + 3 if self.bai else 2 * self.K + 1

    @property
    def observation_space(self) -> spaces.Box:
        K = self.K
        low = np.zeros(self.dim, dtype=np.float32)
        high = np.ones(self.dim, dtype=np.float32)
        low[K : 2 * K], high[K : 2 * K] = -MEAN_CLIP, MEAN_CLIP
        if self.bai:  # log(1 + W_{â,a}) and log(1 + Λ)
            high[3 * K + 1 : 4 * K + 2] = LOG_W_CLIP
        return spaces.Box(low, high, dtype=np.float32)

    @property
    def action_space(self) -> spaces.Discrete:
        """The env's action space, ``Discrete(K)`` (``Discrete(2K)`` for best-arm
        identification)."""
        return spaces.Discrete(2 * self.K if self.bai else self.K)

    def statistics(self, n_runs: int = 1) -> RunStatistics:
        """Empty statistics of ``n_runs`` runs."""
        return RunStatistics(self, n_runs)


class RunStatistics:
    """Counts N_a, sums S_a and the features of :class:`StatisticsSpec` for ``n_runs`` runs.

    The protocol every statistics class follows (the views and :class:`SB3Agent` call nothing
    else): :meth:`reset` forgets runs, :meth:`see` shows the current observation (a K-armed
    bandit's carries nothing: a no-op here), :meth:`update` adds a step, :meth:`features` gives
    the observation of every run.
    """

    def __init__(self, spec: StatisticsSpec, n_runs: int = 1) -> None:
        self.spec = spec
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self._runs = np.arange(self.n_runs)
        self.reset()

    def reset(self, runs: np.ndarray | None = None) -> None:
        """Forget the history of all runs (or of ``runs``, indices or a boolean mask)."""
        if runs is None:
            self.counts = np.zeros((self.n_runs, self.spec.K), dtype=np.int64)
            self.sums = np.zeros((self.n_runs, self.spec.K))
        else:
            self.counts[runs] = 0
            self.sums[runs] = 0.0

    def see(self, observations: Any, runs: np.ndarray | None = None) -> None:
        """The current observation of every run (a K-armed bandit's carries no context)."""

    def update(
        self,
        actions: np.ndarray,
        rewards: np.ndarray,
        observations: np.ndarray,
        live: np.ndarray | None = None,
    ) -> None:
        """Add one step of every run (``live``: a boolean mask of the runs that stepped).

        A pull's sample is ``rewards[i]`` or ``observations[i, 0]``
        (:attr:`StatisticsSpec.channel`); a stop action (``a ≥ K``, best-arm identification)
        adds nothing.
        """
        K = self.spec.K
        actions = np.asarray(actions).reshape(self.n_runs)
        if self.spec.channel == "observation":
            sample = np.asarray(observations, dtype=float).reshape(self.n_runs, -1)[:, 0]
        else:
            sample = np.asarray(rewards, dtype=float).reshape(self.n_runs)
        pulled = actions < K
        if live is not None:
            pulled &= live
        arms = np.where(pulled, actions, 0)
        self.counts[self._runs, arms] += pulled
        self.sums[self._runs, arms] += np.where(pulled, sample, 0.0)

    def steps(self) -> np.ndarray:
        """t, the pulls of every run so far (a stop is not a pull)."""
        return self.counts.sum(axis=1)

    def means(self) -> np.ndarray:
        """The empirical means μ̂_a of every run (0 for an unpulled arm), shape (n_runs, K)."""
        return np.divide(self.sums, self.counts, out=np.zeros_like(self.sums),
                         where=self.counts > 0)

    def empirical_best(self) -> np.ndarray:
        """â of every run: the pulled arm of largest empirical mean (ties and a run without a
        pull: the smallest index)."""
        return np.argmax(np.where(self.counts > 0, self.means(), -np.inf), axis=1)

    def features(self) -> np.ndarray:
        """The observation of every run, shape ``(n_runs, spec.dim)``, float32."""
        s = self.spec
        n = self.counts
        t = n.sum(axis=1, keepdims=True)
        pulled = n > 0
        mu = self.means()
        parts = [n / s.horizon, np.clip(mu / s.reward_scale, -MEAN_CLIP, MEAN_CLIP), t / s.horizon]
        if s.bai:
            a_hat = self.empirical_best()
            w = np.where(pulled, n, 0.0)
            with np.errstate(divide="ignore"):  # 1/0 = inf: an unpulled arm has W = 0
                W = gaussian_transport(
                    mu[self._runs, a_hat][:, None], mu, w[self._runs, a_hat][:, None], w, s.sigma
                )
            W[~pulled | ~pulled[self._runs, a_hat][:, None]] = 0.0
            W[self._runs, a_hat] = np.inf
            glr = W.min(axis=1, keepdims=True)  # Λ = min_{a≠â} W_{â,a} (eq. 2)
            W[self._runs, a_hat] = 0.0
            parts += [
                np.eye(s.K)[a_hat],
                np.minimum(np.log1p(W), LOG_W_CLIP),
                np.minimum(np.log1p(glr), LOG_W_CLIP),
                np.log1p(t) / np.log1p(s.horizon),
            ]
        return np.concatenate(parts, axis=1).astype(np.float32)


@dataclass(frozen=True)
class LinearStatisticsSpec:
    """What the features of a linear contextual bandit depend on (public information only).

    Attributes:
        A: actions per round (per silo): ``A`` of ``LinearContextualBandit-v0``, ``K`` of
            ``FederatedLinearBandit-v0``.
        d: feature dimension.
        horizon: T, the number of rounds.
        M: silos acting in lock-step (1: a single learner).
        lambda_: the ridge λ (:data:`RIDGE_LAMBDA`).
    """

    A: int
    d: int
    horizon: int
    M: int = 1
    lambda_: float = RIDGE_LAMBDA

    def __post_init__(self) -> None:
        check_int("A", self.A, low=1)
        check_int("d", self.d, low=1)
        check_int("horizon", self.horizon, low=1)
        check_int("M", self.M, low=1)
        check_real("lambda_", self.lambda_, low=0.0, low_open=True)

    @classmethod
    def from_env(cls, env: Any) -> LinearStatisticsSpec:
        """The spec of a privenv linear or federated env (single or vector, possibly wrapped)
        from its public description; ``ValueError`` if the statistics cannot be kept."""
        info = public_info_of(env)
        d = info.get("d")
        M, A = (int(info["M"]), int(info["K"])) if "M" in info else (1, info.get("A"))
        action_space, obs_space = base_spaces(env)
        message = _message_space(env)
        if message is not None:
            raise ValueError(
                f"env must observe feature matrices, got {message} ({env_name(env)} is behind a"
                " message randomizer such as GaussianStatistics or LaplaceInput): an RL learner "
                "stores its observations, the raw features, so a (context, reward) guarantee "
                "would not hold for it; use LaplaceLabel (it protects the label)"
            )
        shape = (A, d) if M == 1 else (M, A, d)
        if d is None or A is None or tuple(obs_space.shape or ()) != shape:
            raise ValueError(
                f"env must be a linear contextual bandit observing features of shape {shape}, "
                f"got {env_name(env)} with observation space {obs_space}"
            )
        problem = getattr(getattr(env, "unwrapped", env), "problem", None)
        if M > 1 and getattr(problem, "reward", "silo") != "silo":
            raise ValueError(
                "env must be built with reward='silo': the statistics regress each silo's own "
                f"reward on its features (the view returns their sum), got reward="
                f"{getattr(problem, 'reward', None)!r}"
            )
        horizon = info.get("horizon")
        if horizon is None:
            raise ValueError("env must have a horizon (the features are scaled by T), got None")
        return cls(A=int(A), d=int(d), horizon=int(horizon), M=M)

    @property
    def dim(self) -> int:
        """Number of features, M·A·(d + 2) + d(d + 3)/2 + 1."""
        return self.M * self.A * (self.d + 2) + self.d * (self.d + 3) // 2 + 1

    @property
    def observation_space(self) -> spaces.Box:
        n_phi, n_arms, d = self.M * self.A * self.d, self.M * self.A, self.d
        low = np.concatenate([
            np.full(n_phi, -1.0), np.full(n_arms, -MEAN_CLIP), np.zeros(n_arms),
            np.full(d, -MEAN_CLIP), np.full(d * (d + 1) // 2, -1.0), [0.0],
        ]).astype(np.float32)
        high = np.concatenate([
            np.ones(n_phi), np.full(n_arms, MEAN_CLIP),
            np.full(n_arms, 1 / math.sqrt(self.lambda_)), np.full(d, MEAN_CLIP),
            np.ones(d * (d + 1) // 2), [1.0],
        ]).astype(np.float32)
        return spaces.Box(low, high, dtype=np.float32)

    @property
    def action_space(self) -> spaces.Space:
        """The env's action space, ``Discrete(A)`` (``MultiDiscrete([A] * M)`` for silos)."""
        return spaces.Discrete(self.A) if self.M == 1 else spaces.MultiDiscrete([self.A] * self.M)

    def statistics(self, n_runs: int = 1) -> LinearRunStatistics:
        """Empty statistics of ``n_runs`` runs."""
        return LinearRunStatistics(self, n_runs)


class LinearRunStatistics:
    """Ridge statistics V = Σφφᵀ, b = Σyφ and the features of :class:`LinearStatisticsSpec` for
    ``n_runs`` runs (the protocol of :class:`RunStatistics`; :meth:`see` keeps the current
    features, which the next :meth:`update` reads the chosen actions' rows from)."""

    def __init__(self, spec: LinearStatisticsSpec, n_runs: int = 1) -> None:
        self.spec = spec
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self._shape = (self.n_runs, spec.M, spec.A, spec.d)
        self.context = np.zeros(self._shape)
        self._triu = np.triu_indices(spec.d)
        self.reset()

    def reset(self, runs: np.ndarray | None = None) -> None:
        """Forget the history of all runs (or of ``runs``, indices or a boolean mask)."""
        n, d = self.n_runs, self.spec.d
        if runs is None:
            self.gram = np.zeros((n, d, d))
            self.moment = np.zeros((n, d))
            self.rounds = np.zeros(n, dtype=np.int64)
        else:
            self.gram[runs] = 0.0
            self.moment[runs] = 0.0
            self.rounds[runs] = 0

    def see(self, observations: Any, runs: np.ndarray | None = None) -> None:
        """The current feature matrices of every run (or of ``runs``): a batch of shape
        ``(n_runs, A, d)`` or ``(n_runs, M, A, d)``."""
        phi = np.asarray(observations, dtype=np.float64).reshape(self._shape)
        if runs is None:
            self.context[...] = phi
        else:
            self.context[runs] = phi[runs]

    def update(
        self,
        actions: np.ndarray,
        rewards: np.ndarray,
        observations: np.ndarray,
        live: np.ndarray | None = None,
    ) -> None:
        """Add one round of every run (``live``: a boolean mask of the runs that stepped): the
        chosen rows of the current features and their rewards (one per silo), then see
        ``observations``, the next round's features."""
        s = self.spec
        a = np.asarray(actions).reshape(self.n_runs, s.M)
        y = np.asarray(rewards, dtype=np.float64)
        if y.size != self.n_runs * s.M:
            raise ValueError(f"rewards must hold one reward per run and silo ({self.n_runs}×"
                             f"{s.M}), got shape {y.shape}")
        y = y.reshape(self.n_runs, s.M)
        rows = np.arange(self.n_runs)[:, None]
        phi = self.context[rows, np.arange(s.M)[None, :], a]  # (n, M, d)
        if live is not None:
            phi = phi * live[:, None, None]
            y = y * live[:, None]
        self.gram += np.einsum("nmi,nmj->nij", phi, phi)
        self.moment += np.einsum("nm,nmi->ni", y, phi)
        self.rounds += 1 if live is None else live
        self.see(observations, live)

    def steps(self) -> np.ndarray:
        """t, the rounds of every run so far."""
        return self.rounds.copy()

    def features(self) -> np.ndarray:
        """The observation of every run, shape ``(n_runs, spec.dim)``, float32."""
        s = self.spec
        V_inv = np.linalg.inv(self.gram + s.lambda_ * np.eye(s.d))
        theta = np.einsum("nij,nj->ni", V_inv, self.moment)
        phi = self.context.reshape(self.n_runs, s.M * s.A, s.d)
        estimate = (phi @ theta[:, :, None])[..., 0]
        width = np.minimum(weighted_norms(phi, V_inv), 1 / math.sqrt(s.lambda_))
        parts = [
            phi.reshape(self.n_runs, -1),
            np.clip(estimate, -MEAN_CLIP, MEAN_CLIP),
            width,
            np.clip(theta, -MEAN_CLIP, MEAN_CLIP),
            self.gram[:, self._triu[0], self._triu[1]] / (s.M * s.horizon),
            self.rounds[:, None] / s.horizon,
        ]
        return np.concatenate(parts, axis=1).astype(np.float32)


Spec = StatisticsSpec | LinearStatisticsSpec


def statistics_spec(env: Any, reward_scale: float | None = None) -> Spec:
    """The statistics spec of a privenv env (single or vector, possibly wrapped): a
    :class:`LinearStatisticsSpec` for the linear families, else a :class:`StatisticsSpec`."""
    if "d" in public_info_of(env):
        if reward_scale is not None:
            raise ValueError("reward_scale applies to K-armed bandits only (the linear features "
                             f"are not rescaled), got {reward_scale!r}")
        return LinearStatisticsSpec.from_env(env)
    return StatisticsSpec.from_env(env, reward_scale)


def learner_reward(spec: Spec, rewards: Any) -> Any:
    """The learner's reward: one per run (the silos' rewards summed, as ``reward="sum"``)."""
    if getattr(spec, "M", 1) > 1:
        return np.asarray(rewards, dtype=float).sum(axis=-1)
    return rewards

