r"""Reinforcement-learning tooling: privenv's bandits for RL learners (docs/guides/rl.md).

A bandit env has no state (``HuberBandit-v0`` observes ``Discrete(1)``; ``BestArmIdentification-v0``
observes the last sample at most; the linear families observe only the current round's features),
so an RL learner needs the *history* summarised in its observation. The pieces, one statistics
implementation per family:

* :class:`RunStatistics` (K-armed families) and :class:`LinearRunStatistics` (linear and
  federated) — per-run statistics and the feature vector computed from them (batched over runs,
  pure numpy), described by a :class:`StatisticsSpec` / :class:`LinearStatisticsSpec`
  (:func:`statistics_spec` picks the one of an env). They are the only place the features are
  computed.
* :class:`SufficientStatistics` (a ``gymnasium.Wrapper``) and :class:`VectorSufficientStatistics`
  (a ``gymnasium.vector.VectorWrapper``) — replace the env's observation by those features;
  :class:`SB3VecEnv` — hands a native Gymnasium ``VectorEnv`` to SB3 as its ``VecEnv``.
* :class:`SB3Agent` — a trained SB3 model as a zoo agent: it keeps its own statistics of what the
  agent observes (the same features the view fed the model during training), so
  :func:`privenv.simulation.simulate` and :func:`~privenv.simulation.play` run it next to UCB1,
  PRAE or TTUCB.

The registered RL ids (``HuberBandit-RL-v0``, …; :mod:`privenv.envs.rl`) are these views built from
an id string, for code that only knows the id (``gym.make``, ``gym.make_vec``, SB3's
``make_vec_env``, single-file scripts).

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

## Episodes: whole-run or one-step

``episode="whole-run"`` (default): one Gymnasium episode is one bandit run of T pulls (or, for
best-arm identification, until the learner stops); the statistics restart with each episode. The
return is the run's cumulative reward, so PPO with γ ≈ 1 optimises the whole
exploration–exploitation trade-off, but credit assignment spans T steps; with γ = 0 the learner
sees a contextual bandit whose context is the statistics (the same learning signal as one-step
episodes, without their resets).

``episode="one-step"`` (regret families only): every pull is an episode that ends with
``terminated=True`` (never ``truncated``, as Gymnasium's checker requires), so SB3 sees a
*contextual bandit* whose context is the current statistics; γ is irrelevant and the advantage
is simply reward − V(statistics). The underlying run goes on across these episodes: ``reset()``
without a seed *continues* the run (statistics kept, no env reset), until the run reaches its
horizon, after which the next ``reset()`` starts the next run (the env's next-episode seed).
``reset(seed=s)`` (or any non-empty ``options``) always restarts: run 0 of seed ``s``, empty
statistics. SB3's ``VecEnv.seed(s)`` therefore seeds sub-env i's first run with ``s + i`` and
everything after is determined. Under Gymnasium's default next-step autoreset
(``SyncVectorEnv``, ``AsyncVectorEnv``) one-step episodes make every other transition a reset
step with reward 0 — use them with SB3 (which resets within the step) or ``SAME_STEP`` only
(``examples/README-rl.md``). Best-arm identification refuses ``"one-step"``: every pull would
then be worth −pull_cost on its own and only the stopping decision would be learned. Beware that
an instance is fixed at construction, so a learner trained on one BAI instance can memorise its
best arm and stop at once (observed with PPO); learning a BAI strategy needs a distribution of
instances: ``permute_arms=True`` shows the arms of every episode in a fresh random order.

## Seeding and determinism

The wrappers draw no randomness; the env's per-run streams (:mod:`privenv.seeding`) and a local-DP
wrapper's noise are untouched. :class:`SB3Agent` acts greedily (``model.predict(...,
deterministic=True)``), so :func:`~privenv.simulation.simulate` and
:func:`~privenv.simulation.play` give the same numbers for the same seed and run.

Stable-Baselines3 is an optional extra (``pip install 'privenv[sb3]'``): this module imports
without it (and without torch); :class:`SB3VecEnv` raises ``ImportError`` naming the extra.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from privenv._validation import check_choice, check_int, check_real
from privenv.agents.base import Agent
from privenv.agents.linear import weighted_norms
from privenv.agents.top_two import gaussian_transport

# SB3VecEnv is public too, but built lazily (module __getattr__), so not in __all__: a star-import
# must work without Stable-Baselines3.
__all__ = [
    "EPISODES",
    "LinearRunStatistics",
    "LinearStatisticsSpec",
    "RIDGE_LAMBDA",
    "RunStatistics",
    "SB3Agent",
    "StatisticsSpec",
    "SufficientStatistics",
    "VectorSufficientStatistics",
    "statistics_spec",
]

EPISODES = ("whole-run", "one-step")
#: empirical means (and linear estimates) are clipped to ±MEAN_CLIP in the observation
MEAN_CLIP = 10.0
#: log(1 + W) and log(1 + Λ) are clipped to LOG_W_CLIP (W = e⁵⁰ is far beyond any threshold)
LOG_W_CLIP = 50.0
#: ridge λ of the linear statistics (the zoo's LinUCB default)
RIDGE_LAMBDA = 1.0

_SB3_MISSING = (
    "{what} needs Stable-Baselines3, an optional extra of privenv: pip install 'privenv[sb3]' "
    "(install a CPU torch first to avoid the multi-GB CUDA build)"
)


def _require_sb3(what: str) -> Any:
    try:
        import stable_baselines3
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(_SB3_MISSING.format(what=what)) from err
    return stable_baselines3


def _env_name(env: Any) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(getattr(env, "unwrapped", env)).__name__


def _base_spaces(env: Any) -> tuple[spaces.Space, spaces.Space]:
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


# ---------------------------------------------------------------------------------------------
# The statistics (one implementation per family kind, batched over runs)
# ---------------------------------------------------------------------------------------------


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
        from privenv.agents import public_info_of

        info = public_info_of(env)
        action_space, obs_space = _base_spaces(env)
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
                f"{_env_name(env)} (action space {action_space}, observation space {obs_space})"
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

    def features(self) -> np.ndarray:
        """The observation of every run, shape ``(n_runs, spec.dim)``, float32."""
        s = self.spec
        n = self.counts
        t = n.sum(axis=1, keepdims=True)
        pulled = n > 0
        mu = np.divide(self.sums, n, out=np.zeros_like(self.sums), where=pulled)
        parts = [n / s.horizon, np.clip(mu / s.reward_scale, -MEAN_CLIP, MEAN_CLIP), t / s.horizon]
        if s.bai:
            a_hat = np.argmax(np.where(pulled, mu, -np.inf), axis=1)  # all −inf → arm 0
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
        from privenv.agents import public_info_of

        info = public_info_of(env)
        d = info.get("d")
        M, A = (int(info["M"]), int(info["K"])) if "M" in info else (1, info.get("A"))
        action_space, obs_space = _base_spaces(env)
        message = _message_space(env)
        if message is not None:
            raise ValueError(
                f"env must observe feature matrices, got {message} ({_env_name(env)} is behind a"
                " message randomizer such as GaussianStatistics or LaplaceInput): an RL learner "
                "stores its observations, the raw features, so a (context, reward) guarantee "
                "would not hold for it; use LaplaceLabel (it protects the label)"
            )
        shape = (A, d) if M == 1 else (M, A, d)
        if d is None or A is None or tuple(obs_space.shape) != shape:
            raise ValueError(
                f"env must be a linear contextual bandit observing features of shape {shape}, "
                f"got {_env_name(env)} with observation space {obs_space}"
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
    from privenv.agents import public_info_of

    if "d" in public_info_of(env):
        if reward_scale is not None:
            raise ValueError("reward_scale applies to K-armed bandits only (the linear features "
                             f"are not rescaled), got {reward_scale!r}")
        return LinearStatisticsSpec.from_env(env)
    return StatisticsSpec.from_env(env, reward_scale)


def _silo_sum(spec: Spec, rewards: Any) -> Any:
    """The learner's reward: one per run (the silos' rewards summed, as ``reward="sum"``)."""
    if getattr(spec, "M", 1) > 1:
        return np.asarray(rewards, dtype=float).sum(axis=-1)
    return rewards


# ---------------------------------------------------------------------------------------------
# Observation wrappers
# ---------------------------------------------------------------------------------------------


class SufficientStatistics(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Observe the run's sufficient statistics instead of the bandit's observation.

    See the module docstring for the features, the sample channel and the two episode semantics.

    Args:
        env: a privenv env (``gym.make``), possibly behind local-DP reward wrappers (then the
            statistics are of the released rewards). ``FederatedLinearBandit-v0`` must be built
            with ``reward="silo"`` (the view returns the sum).
        episode: ``"whole-run"`` (default) or ``"one-step"`` (regret families only).
        reward_scale: divisor of the empirical means of a K-armed bandit (default: the env's
            public ``mean_range``, else 1).

    Example:
        >>> import gymnasium as gym, privenv
        >>> from privenv.rl import SufficientStatistics
        >>> env = SufficientStatistics(gym.make("HuberBandit-v0", K=3, horizon=100))
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (7,)
    """

    def __init__(
        self, env: gym.Env, episode: str = "whole-run", reward_scale: float | None = None
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, episode=episode, reward_scale=reward_scale)
        gym.Wrapper.__init__(self, env)
        self.episode = check_choice("episode", episode, EPISODES)
        self.statistics_spec = statistics_spec(env, reward_scale)
        _check_episode(self.episode, self.statistics_spec)
        self.statistics = self.statistics_spec.statistics(1)
        self.observation_space = self.statistics_spec.observation_space
        self._run_over = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self.episode == "one-step" and seed is None and not options and not self._run_over:
            return self.statistics.features()[0], {}  # the run goes on (module docstring)
        obs, info = self.env.reset(seed=seed, options=options)
        self.statistics.reset()
        self.statistics.see(np.asarray(obs)[None])
        self._run_over = False
        return self.statistics.features()[0], info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.statistics.update(
            np.asarray(action)[None], np.asarray(reward, dtype=float)[None], np.asarray(obs)[None]
        )
        reward = float(_silo_sum(self.statistics_spec, reward))
        self._run_over = terminated or truncated
        features = self.statistics.features()[0]
        if self.episode == "one-step":
            return features, reward, True, False, info
        return features, reward, terminated, truncated, info


def _check_episode(episode: str, spec: Spec) -> None:
    if episode == "one-step" and getattr(spec, "bai", False):
        raise ValueError(
            "episode must be 'whole-run' for best-arm identification (a run ends when the "
            "learner stops; with one-step episodes only the stop decision would be learned)"
        )


class VectorSufficientStatistics(VectorWrapper):
    """:class:`SufficientStatistics` for a native privenv ``VectorEnv`` (one statistics row per
    run), to train on many runs at once (e.g. SB3 through :class:`SB3VecEnv`).

    Follows the env's ``autoreset_mode`` (Gymnasium's three): ``SAME_STEP`` — a run that ends has
    its statistics of the last step in ``info["final_obs"]`` and restarts with empty statistics
    in the same step; ``NEXT_STEP`` — the step after a run ends is its reset step (the env
    ignores its action and returns reward 0; the statistics restart then); ``DISABLED`` — an ended
    run keeps its final statistics until ``reset(options={"reset_mask": …})`` restarts it.
    :attr:`stepped` is the mask of the runs that pulled in the last step. With
    ``episode="one-step"`` (``SAME_STEP`` only) every step reports ``terminated=True`` for every
    run, with ``info["final_obs"]`` the statistics after the pull, and the runs go on.

    Args:
        env: the native vector env (possibly behind local-DP vector wrappers).
        episode: ``"whole-run"`` or ``"one-step"``.
        reward_scale: divisor of the empirical means (default from the env).
    """

    def __init__(
        self, env: VectorEnv, episode: str = "whole-run", reward_scale: float | None = None
    ) -> None:
        super().__init__(env)
        self.autoreset_mode = AutoresetMode(
            env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        )
        self.episode = check_choice("episode", episode, EPISODES)
        if self.episode == "one-step" and self.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                "env must be built with autoreset_mode=AutoresetMode.SAME_STEP for one-step "
                f"episodes (every step a real pull), got {self.autoreset_mode!r}"
            )
        self.statistics_spec = statistics_spec(env, reward_scale)
        _check_episode(self.episode, self.statistics_spec)
        self.statistics = self.statistics_spec.statistics(env.num_envs)
        self.single_observation_space = self.statistics_spec.observation_space
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self._sitting_out = np.zeros(env.num_envs, dtype=bool)  # runs that skip the next pull
        self.stepped = np.ones(env.num_envs, dtype=bool)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        mask = None if not options else options.get("reset_mask")
        if mask is None or seed is not None:
            self.statistics.reset()
            self.statistics.see(obs)
            self._sitting_out[:] = False
        else:
            mask = np.asarray(mask, dtype=bool)
            self.statistics.reset(mask)
            self.statistics.see(obs, mask)
            self._sitting_out[mask] = False
        return self.statistics.features(), info

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        mode = self.autoreset_mode
        live = ~self._sitting_out if self._sitting_out.any() else None
        if live is not None and mode == AutoresetMode.NEXT_STEP:  # this step reset them
            self.statistics.reset(self._sitting_out)
            self.statistics.see(obs, self._sitting_out)
        ended = terminated | truncated
        step_obs = obs
        if ended.any() and mode == AutoresetMode.SAME_STEP:  # the ending pulls' observations
            step_obs = np.array(obs, copy=True)
            for i in np.flatnonzero(ended):
                step_obs[i] = info["final_obs"][i]
        self.statistics.update(actions, rewards, step_obs, live)
        self.stepped = np.ones(self.num_envs, dtype=bool) if live is None else live
        features = self.statistics.features()
        n = self.num_envs
        if self.episode == "one-step":
            done = np.ones(n, dtype=bool)
            info = _with_final_obs(info, features, done)
            terminated, truncated = done, np.zeros(n, dtype=bool)
        elif ended.any() and mode == AutoresetMode.SAME_STEP:
            info = _with_final_obs(info, features, ended)
        if ended.any() and mode == AutoresetMode.SAME_STEP:
            self.statistics.reset(ended)
            self.statistics.see(obs, ended)  # the new runs' first observations
            features = self.statistics.features()
        if mode == AutoresetMode.DISABLED:
            self._sitting_out |= ended
        elif mode == AutoresetMode.NEXT_STEP:
            self._sitting_out = ended.copy()
        return features, _silo_sum(self.statistics_spec, rewards), terminated, truncated, info


def _with_final_obs(info: dict[str, Any], features: np.ndarray, done: np.ndarray) -> dict:
    final = np.full(len(done), None, dtype=object)
    for i in np.flatnonzero(done):
        final[i] = features[i]
    return {**info, "final_obs": final, "_final_obs": done}


# ---------------------------------------------------------------------------------------------
# Gymnasium VectorEnv → SB3 VecEnv
# ---------------------------------------------------------------------------------------------


def _unbatch_info(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Gymnasium's batched info (arrays with ``_key`` masks) → one dict per sub-env."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        mask = info.get(f"_{key}", np.ones(n, dtype=bool))
        for i in np.flatnonzero(mask):
            if isinstance(value, dict):
                out[i][key] = _unbatch_info(value, n)[i]
            else:
                v = value[i]
                out[i][key] = v.item() if isinstance(v, np.generic) else v
    return out


def _sb3_vec_env_class() -> type:
    VecEnv = _require_sb3("SB3VecEnv").common.vec_env.VecEnv

    class SB3VecEnv(VecEnv):
        """A native Gymnasium ``VectorEnv`` as Stable-Baselines3's ``VecEnv``.

        SB3's protocol: ``reset()`` returns only observations; ``step_wait()`` returns
        ``(obs, rewards, dones, infos)`` with one info dict per sub-env, and a sub-env that ends
        is reset at once, its last observation in ``info["terminal_observation"]`` and
        ``info["TimeLimit.truncated"]`` telling truncation from termination. The vector env must
        use ``autoreset_mode`` ``SAME_STEP`` (its ``final_obs`` is used) or ``DISABLED`` (the
        adapter resets ended runs with ``options={"reset_mask": …}``); ``NEXT_STEP`` would inject
        a dummy step per episode and is refused.

        Seeding follows SB3: ``seed(s)`` then ``reset()`` seeds sub-env i with ``s + i``, i.e.
        run i is what a single env reset with seed ``s + i`` gives — exactly what
        ``DummyVecEnv([make] * n)`` produces, so the two are interchangeable (tested).

        Attribute access (``get_attr``/``set_attr``/``env_method``) reaches the one vector env
        shared by all sub-envs; ``env_is_wrapped`` is False (single-env wrappers do not apply).

        Args:
            venv: the native vector env, e.g. ``gym.make_vec(id, num_envs=n,
                vectorization_mode="vector_entry_point", autoreset_mode=AutoresetMode.SAME_STEP)``.
        """

        def __init__(self, venv: VectorEnv) -> None:
            if not isinstance(venv, VectorEnv):
                raise TypeError(f"venv must be a gymnasium.vector.VectorEnv, got {venv!r}")
            mode = venv.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
            if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.DISABLED):
                raise ValueError(
                    "venv must use autoreset_mode SAME_STEP or DISABLED (NEXT_STEP spends a dummy "
                    f"step on every reset), got {mode!r}"
                )
            self.venv = venv
            self.autoreset_mode = AutoresetMode(mode)
            self._actions: np.ndarray | None = None
            super().__init__(venv.num_envs, venv.single_observation_space,
                             venv.single_action_space)

        def reset(self) -> np.ndarray:
            seed = None if all(s is None for s in self._seeds) else [int(s) for s in self._seeds]
            options = self._options[0] if self._options and self._options[0] else None
            if any(o != self._options[0] for o in self._options):
                raise ValueError("options must be the same for every sub-env of a vector env")
            obs, info = self.venv.reset(seed=seed, options=options)
            self._reset_seeds()
            self._reset_options()
            self.reset_infos = _unbatch_info(info, self.num_envs)
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            if self._actions is None:
                raise RuntimeError("call step_async() before step_wait()")
            obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
            self._actions = None
            dones = np.asarray(terminated | truncated, dtype=bool)
            infos = _unbatch_info(info, self.num_envs)
            if dones.any():
                ended = np.flatnonzero(dones)
                if self.autoreset_mode == AutoresetMode.SAME_STEP:
                    final = info["final_obs"]
                    if "final_info" in info:  # the ending step's info (Gymnasium convention)
                        finals = _unbatch_info(info["final_info"], self.num_envs)
                        for i in ended:
                            infos[i] = finals[i]
                else:
                    final = np.array(obs, copy=True)
                    obs, _ = self.venv.reset(options={"reset_mask": dones})
                for i in ended:
                    infos[i]["terminal_observation"] = final[i]
                    infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            return obs, np.asarray(rewards, dtype=np.float32), dones, infos

        def close(self) -> None:
            self.venv.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            env = self.venv  # walk the vector wrapper chain (no get_wrapper_attr there)
            while not hasattr(env, attr_name) and hasattr(env, "env"):
                env = env.env
            value = getattr(env, attr_name)
            return [value for _ in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *args: Any, indices: Any = None,
                       **kwargs: Any) -> list[Any]:
            result = getattr(self.venv, method_name)(*args, **kwargs)
            return [result for _ in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

    return SB3VecEnv


_LAZY: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """``SB3VecEnv`` subclasses SB3's ``VecEnv``: built on first access (SB3 is optional)."""
    if name == "SB3VecEnv":
        if name not in _LAZY:
            _LAZY[name] = _sb3_vec_env_class()
        return _LAZY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# A trained model as a zoo agent
# ---------------------------------------------------------------------------------------------


class SB3Agent(Agent):
    """A trained Stable-Baselines3 model (PPO, A2C, DQN, …) as a batched zoo agent.

    The agent keeps the statistics of every run (:class:`RunStatistics` or
    :class:`LinearRunStatistics`), updated from what it observes (the reward, or the observation's
    sample for best-arm identification in ``"cost"`` mode; the current features of a linear
    bandit), and plays ``model.predict(features, deterministic=True)`` — the greedy policy on
    exactly the features the views (:class:`SufficientStatistics`, the RL ids) fed the model. Run
    it on the problem it was trained on, with the same instance parameters and ``horizon`` (the
    features are scaled by T): on the research id (``HuberBandit-v0`` for a model trained on
    ``HuberBandit-RL-v0``) next to the zoo, or on the RL id itself, whose observations already are
    the features.

    **The statistics.** Known from ``statistics`` if given, else from the model's training env
    (``model.get_env()``), else — a model loaded without an env — from the env the runner gives
    the agent (:meth:`wrap_env`: :func:`~privenv.simulation.simulate` and
    :func:`~privenv.simulation.play` call it), which is what the RL ids compute from the same
    public description. Either way the model's observation and action spaces are checked against
    them and the env, and a mismatch (e.g. a model trained on K = 3 run on K = 5) raises
    ``ValueError`` saying what differs.

    In best-arm identification a run is over once the policy stops; the agent then repeats its stop
    action (the runner keeps stepping finished runs, which the env ignores). A federated model
    reads each silo's reward, so the agent asks the runner for ``reward="silo"``
    (:attr:`env_requirements`).

    ``privacy`` is none: a model is not a private algorithm. Behind local-DP wrappers (the runner's
    ``wrappers=``) the system is private by post-processing, and the runner records that.

    Args:
        model: a trained SB3 model (anything with ``predict(obs, deterministic=True)``).
        statistics: a :class:`StatisticsSpec` / :class:`LinearStatisticsSpec`, or an env (an RL
            id's env, a :class:`SufficientStatistics` stack, a vector one, or an SB3 ``VecEnv``
            over either) whose spec to use. Default: the spec of the model's training env, else
            of the env the agent is run on.
        n_runs: number of runs.
    """

    name = "sb3"

    def __init__(self, model: Any, statistics: Any = None, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        if not callable(getattr(model, "predict", None)):
            raise TypeError(f"model must have a predict() method (an SB3 model), got {model!r}")
        self.model = model
        self.statistics_spec: Spec | None = _spec_of(model if statistics is None else statistics)
        if statistics is not None and self.statistics_spec is None:
            raise ValueError(
                "statistics must be a StatisticsSpec or LinearStatisticsSpec, or an env wrapped "
                "in SufficientStatistics / VectorSufficientStatistics or built from an RL id (or "
                f"an SB3 model trained on one), got {statistics!r}"
            )
        self._obs_are_features = False
        if self.statistics_spec is not None:
            _check_model(model, self.statistics_spec, "the statistics")
        if isinstance(getattr(model, "action_space", None), spaces.MultiDiscrete):
            self.env_requirements = {"reward": "silo"}  # a federated model: per-silo statistics

    def wrap_env(self, env: Any) -> Any:
        """Learn or check the statistics against the env the agent is run on (the runner calls
        this once per env); returns ``env`` unchanged."""
        base = getattr(env, "unwrapped", env)
        rl_spec = getattr(base, "statistics_spec", None)
        if isinstance(rl_spec, (StatisticsSpec, LinearStatisticsSpec)):  # an RL id
            self._obs_are_features = True
            spec = rl_spec
        else:
            self._obs_are_features = False
            spec = statistics_spec(env)
        if self.statistics_spec is not None:  # the model's statistics, read where the env puts them
            spec = _trained_on(self.statistics_spec, spec, _env_name(env))
        self.statistics_spec = spec
        _check_model(self.model, spec, _env_name(env), _base_spaces(env)[0])
        return env

    def _spec(self) -> Spec:
        """The statistics spec, or ``ValueError`` saying how to give it."""
        if self.statistics_spec is None:
            raise ValueError(
                "statistics must be given: the model has no env (e.g. loaded without one); run "
                "the agent with privenv.simulation.simulate or play, which give it the env, or "
                "pass statistics=<the env it was trained on, or its statistics_spec>"
            )
        return self.statistics_spec

    def reset_state(self) -> None:
        self.statistics = self._spec().statistics(self.n_runs)
        self.stopped = np.zeros(self.n_runs, dtype=bool)
        self.stop_action = np.zeros(self.n_runs, dtype=np.int64)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self._obs_are_features:
            features = np.asarray(observations, dtype=np.float32)
        else:
            self.statistics.see(observations)
            features = self.statistics.features()
        actions, _ = self.model.predict(features, deterministic=True)
        actions = np.asarray(actions, dtype=np.int64).reshape(self.n_runs, -1)
        if actions.shape[1] > 1:  # one action per silo
            return actions
        return np.where(self.stopped, self.stop_action, actions[:, 0])

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        live = ~self.stopped
        if not self._obs_are_features:
            self.statistics.update(actions, rewards, observations, live)
        if getattr(self._spec(), "bai", False):
            stops = live & (np.asarray(actions) >= self._spec().K)
            self.stopped |= stops
            self.stop_action[stops] = np.asarray(actions)[stops]
        self.t += 1


def _describe(spec: Spec) -> str:
    return ", ".join(f"{f.name}={getattr(spec, f.name)!r}" for f in fields(spec)
                     if f.name != "channel")


#: the fields of a statistics spec that fix the shape of the problem (the others scale features)
_STRUCTURE = ("K", "bai", "A", "d", "M")


def _trained_on(trained: Spec, env: Spec, name: str) -> Spec:
    """The model's statistics on an env: its own scales (horizon, reward scale, σ, λ: the
    features the model was trained on), the env's sample channel; ``ValueError`` saying what
    differs if the problem's shape differs or the env runs longer than the model's horizon (its
    features t/T would leave [0, 1])."""
    if type(trained) is not type(env):
        differs = [f"the model summarises a {type(trained).__name__}, {name} a "
                   f"{type(env).__name__}"]
    else:
        differs = [f"{f} {getattr(trained, f)!r} ≠ {getattr(env, f)!r}" for f in _STRUCTURE
                   if hasattr(trained, f) and getattr(trained, f) != getattr(env, f)]
        if env.horizon > trained.horizon:
            differs.append(f"horizon {env.horizon} > the model's {trained.horizon}")
    if differs:
        raise ValueError(f"env must match the model's statistics: {'; '.join(differs)} (the "
                         f"model: {_describe(trained)}; {name}: {_describe(env)})")
    channel = getattr(env, "channel", None)
    return trained if channel is None else replace(trained, channel=channel)


def _check_model(model: Any, spec: Spec, where: str, action_space: Any = None) -> None:
    """``ValueError`` saying what differs if the model's spaces are not those of ``spec`` (and of
    the env's ``action_space``)."""
    problems = []
    obs_space = getattr(model, "observation_space", None)
    expected = spec.observation_space
    if obs_space is not None and (tuple(obs_space.shape) != expected.shape
                                  or getattr(obs_space, "dtype", None) != expected.dtype):
        problems.append(f"the model observes {_space(obs_space)}, {where} gives "
                        f"{_space(expected)} (the features of {_describe(spec)})")
    model_actions = getattr(model, "action_space", None)
    env_actions = spec.action_space if action_space is None else action_space
    if model_actions is not None and model_actions != env_actions:
        problems.append(f"the model acts in {_space(model_actions)}, {where} in "
                        f"{_space(env_actions)}")
    if problems:
        raise ValueError(f"model must match the env: {'; '.join(problems)}")


def _space(space: Any) -> str:
    """A space in a few words (a Box without its bound arrays)."""
    if isinstance(space, spaces.Box):
        return f"Box(shape={space.shape}, {space.dtype})"
    return str(space)


def _spec_of(source: Any) -> Spec | None:
    """The statistics spec of a spec, a statistics view (wrapper stack, RL id env, vector env),
    an SB3 VecEnv over one, or an SB3 model (its training env); None if there is none (a model
    without an env) and ``ValueError`` for an env without statistics."""
    if isinstance(source, (StatisticsSpec, LinearStatisticsSpec)):
        return source
    if callable(getattr(source, "get_env", None)):  # an SB3 model
        source = source.get_env()
        if source is None:
            return None
    if callable(getattr(source, "get_attr", None)) and not isinstance(source, (gym.Env, VectorEnv)):
        try:  # an SB3 VecEnv (SB3VecEnv, DummyVecEnv, … and their VecEnvWrappers)
            spec = source.get_attr("statistics_spec", [0])[0]
        except AttributeError:
            spec = None
    else:  # a Gymnasium env or vector env: walk the wrapper chain
        spec, env = None, source
        while env is not None and spec is None:
            spec = getattr(env, "statistics_spec", None)
            env = getattr(env, "env", None)
    if isinstance(spec, (StatisticsSpec, LinearStatisticsSpec)):
        return spec
    raise ValueError(
        "statistics must be a StatisticsSpec or LinearStatisticsSpec, or an env wrapped in "
        "SufficientStatistics / VectorSufficientStatistics or built from an RL id (or an SB3 model "
        f"trained on one), got {source!r}"
    )
