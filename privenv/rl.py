"""Reinforcement-learning tooling: Stable-Baselines3 on privenv's bandits (SPEC §7).

A bandit env has no state (``HuberBandit-v0`` observes ``Discrete(1)``; ``BestArmIdentification-v0``
observes the last sample at most), so an RL learner needs the *history* summarised in its
observation. Three pieces, one statistics implementation:

* :class:`RunStatistics` — per-run pull counts, reward sums and the feature vector computed from
  them (batched over runs, pure numpy). It is the only place the features are computed.
* :class:`SufficientStatistics` (a ``gymnasium.Wrapper``) and :class:`VectorSufficientStatistics`
  (a ``gymnasium.vector.VectorWrapper``) — replace the env's observation by those features, for
  training; :class:`SB3VecEnv` — hands a native Gymnasium ``VectorEnv`` to SB3 as its ``VecEnv``.
* :class:`SB3Agent` — a trained SB3 model as a zoo agent: it keeps its own :class:`RunStatistics`
  of what the agent observes (the same features the wrapper fed the model during training), so
  :func:`privenv.simulation.simulate` and :func:`~privenv.simulation.play` run it next to UCB1,
  PRAE or TTUCB.

## The features (``Box`` 1-D, float32; T = the env's ``horizon``, t = pulls so far)

Every K-armed family (K features each unless said otherwise):

* ``N_a / T`` — pull counts;
* ``clip(μ̂_a / scale, −10, 10)`` — empirical means of the *sample channel* (0 for an unpulled arm),
  ``scale`` = the env's public ``mean_range`` (``HuberBandit-v0``: max |μ_a|) or 1;
* ``t / T`` (1 feature).

Best-arm identification (``task == "bai"``) adds what a GLR stopping rule (paper 3, eq. 2) needs:

* the one-hot of the empirical best arm â (among pulled arms; ties to the smallest index);
* ``log(1 + W_{â,a})`` (clipped at 50) with W the Gaussian transportation cost of eq. 3 at the env's
  sub-Gaussian scale σ (0 at â and at unpulled arms) — the same function TTUCB uses;
* ``log(1 + Λ)``, Λ = min_{a≠â} W_{â,a}, the GLR statistic (1 feature);
* ``log(1 + t) / log(1 + T)``, the budget used on the scale of the stopping threshold
  c ≈ log(1/δ) + O(log log t) (1 feature).

So the observation has 2K + 1 features, 4K + 3 for best-arm identification.

**Sample channel.** The statistics average the value the learner sees for a pull: the Gymnasium
reward, except ``BestArmIdentification-v0`` with ``reward_mode="cost"`` (the default), whose sample
is the observation (its reward is −pull_cost). Behind a local-DP wrapper they average the
*released* (randomized) rewards — post-processing, so the privacy of the stack is the wrapper's.
A stop action (best-arm identification) carries no sample and is not a pull.

## Episodes: whole-run or one-step

``episode="whole-run"`` (default): one Gymnasium episode is one bandit run of T pulls (or, for
best-arm identification, until the learner stops); the statistics restart with each episode. The
return is the run's cumulative reward, so PPO with γ ≈ 1 optimises the whole
exploration–exploitation trade-off, but credit assignment spans T steps.

``episode="one-step"`` (regret families only): every pull is an episode that ends with
``terminated=True`` (never ``truncated``, as Gymnasium's checker requires), so SB3 sees a
*contextual bandit* whose context is the current statistics; γ is irrelevant and the advantage
is simply reward − V(statistics). The underlying run goes on across these episodes: ``reset()``
without a seed *continues* the run (statistics kept, no env reset), until the run reaches its
horizon, after which the next ``reset()`` starts the next run (the env's next-episode seed).
``reset(seed=s)`` (or any non-empty ``options``) always restarts: run 0 of seed ``s``, empty
statistics. SB3's ``VecEnv.seed(s)`` therefore seeds sub-env i's first run with ``s + i`` and
everything after is determined. Best-arm identification refuses ``"one-step"``: every pull would
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

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from privenv._validation import check_choice, check_int, check_real
from privenv.agents.base import Agent
from privenv.agents.top_two import gaussian_transport

# SB3VecEnv is public too, but built lazily (module __getattr__), so not in __all__: a star-import
# must work without Stable-Baselines3.
__all__ = [
    "EPISODES",
    "RunStatistics",
    "SB3Agent",
    "StatisticsSpec",
    "SufficientStatistics",
    "VectorSufficientStatistics",
]

EPISODES = ("whole-run", "one-step")
#: empirical means are clipped to ±MEAN_CLIP (in units of ``reward_scale``) in the observation
MEAN_CLIP = 10.0
#: log(1 + W) and log(1 + Λ) are clipped to LOG_W_CLIP (W = e⁵⁰ is far beyond any threshold)
LOG_W_CLIP = 50.0

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


# ---------------------------------------------------------------------------------------------
# The statistics (one implementation, batched over runs)
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
        """The spec of a privenv env (single or vector, possibly wrapped) from its public
        description. ``ValueError`` for envs the statistics do not summarise (contexts)."""
        from privenv.agents import public_info_of

        info = public_info_of(env)
        base = getattr(env, "unwrapped", env)  # the bandit's own spaces, under any wrappers
        action_space = getattr(base, "single_action_space", base.action_space)
        obs_space = getattr(base, "single_observation_space", base.observation_space)
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
            name = env.spec.id if getattr(env, "spec", None) else type(env.unwrapped).__name__
            raise ValueError(
                "env must be a K-armed bandit without contexts (HuberBandit-v0, "
                f"BestArmIdentification-v0): counts and means are not sufficient for {name} "
                f"(action space {action_space}, observation space {obs_space})"
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
        """Number of features: 2K + 1, or 4K + 3 for best-arm identification."""
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


class RunStatistics:
    """Counts N_a, sums S_a and the features of :class:`StatisticsSpec` for ``n_runs`` runs."""

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


# ---------------------------------------------------------------------------------------------
# Observation wrappers
# ---------------------------------------------------------------------------------------------


class SufficientStatistics(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Observe the run's sufficient statistics instead of the bandit's (stateless) observation.

    See the module docstring for the features, the sample channel and the two episode semantics.

    Args:
        env: a ``HuberBandit-v0`` or ``BestArmIdentification-v0`` env (``gym.make``), possibly
            behind local-DP wrappers (then the statistics are of the released rewards).
        episode: ``"whole-run"`` (default) or ``"one-step"`` (regret families only).
        reward_scale: divisor of the empirical means (default: the env's public ``mean_range``,
            else 1).

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
        self.statistics_spec = StatisticsSpec.from_env(env, reward_scale)
        if self.episode == "one-step" and self.statistics_spec.bai:
            raise ValueError(
                "episode must be 'whole-run' for best-arm identification (a run ends when the "
                "learner stops; with one-step episodes only the stop decision would be learned)"
            )
        self.statistics = RunStatistics(self.statistics_spec, 1)
        self.observation_space = self.statistics_spec.observation_space
        self._run_over = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self.episode == "one-step" and seed is None and not options and not self._run_over:
            return self.statistics.features()[0], {}  # the run goes on (module docstring)
        _, info = self.env.reset(seed=seed, options=options)
        self.statistics.reset()
        self._run_over = False
        return self.statistics.features()[0], info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.statistics.update(np.asarray([action]), np.asarray([reward]), np.asarray(obs)[None])
        self._run_over = terminated or truncated
        features = self.statistics.features()[0]
        if self.episode == "one-step":
            return features, reward, True, False, info
        return features, reward, terminated, truncated, info


class VectorSufficientStatistics(VectorWrapper):
    """:class:`SufficientStatistics` for a native privenv ``VectorEnv`` (one statistics row per
    run), to train SB3 on many runs at once through :class:`SB3VecEnv`.

    The env must use ``autoreset_mode=SAME_STEP`` (``gym.make_vec(..., autoreset_mode=
    AutoresetMode.SAME_STEP)``), so that every step is a real pull; this wrapper keeps that mode.
    A run that ends has its statistics of the last step in ``info["final_obs"]`` and restarts with
    empty statistics. With ``episode="one-step"`` every step reports ``terminated=True`` for every
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
        mode = env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                "env must be built with autoreset_mode=AutoresetMode.SAME_STEP (every step a real"
                f" pull), got {mode!r}"
            )
        self.episode = check_choice("episode", episode, EPISODES)
        self.statistics_spec = StatisticsSpec.from_env(env, reward_scale)
        if self.episode == "one-step" and self.statistics_spec.bai:
            raise ValueError("episode must be 'whole-run' for best-arm identification")
        self.statistics = RunStatistics(self.statistics_spec, env.num_envs)
        self.single_observation_space = self.statistics_spec.observation_space
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        _, info = self.env.reset(seed=seed, options=options)
        self.statistics.reset()
        return self.statistics.features(), info

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        ended = terminated | truncated
        if ended.any() and self.statistics_spec.channel == "observation":
            obs = np.array(obs, copy=True)  # the sample of an ending run is in final_obs
            for i in np.flatnonzero(ended):
                obs[i] = info["final_obs"][i]
        self.statistics.update(actions, rewards, obs)
        features = self.statistics.features()
        n = self.num_envs
        if self.episode == "one-step":
            done = np.ones(n, dtype=bool)
            info = _with_final_obs(info, features, done)
            terminated, truncated = done, np.zeros(n, dtype=bool)
        elif ended.any():
            info = _with_final_obs(info, features, ended)
        if ended.any():
            self.statistics.reset(ended)
            features = self.statistics.features()
        return features, rewards, terminated, truncated, info


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

    The agent keeps a :class:`RunStatistics` per run, updated from what it observes (the reward,
    or the observation's sample for best-arm identification in ``"cost"`` mode), and plays
    ``model.predict(features, deterministic=True)`` — the greedy policy on exactly the features
    the :class:`SufficientStatistics` wrapper fed the model. Run it on the env (and local-DP
    wrappers) it was trained on, with the same ``horizon``: the features are scaled by T.

    In best-arm identification a run is over once the policy stops; the agent then repeats its stop
    action (the runner keeps stepping finished runs, which the env ignores).

    ``privacy`` is none: a model is not a private algorithm. Behind local-DP wrappers (the runner's
    ``wrappers=``) the system is private by post-processing, and the runner records that.

    Args:
        model: a trained SB3 model (anything with ``predict(obs, deterministic=True)``).
        statistics: a :class:`StatisticsSpec`, or an env (a :class:`SufficientStatistics` stack,
            a vector one, or an SB3 ``VecEnv`` over either) whose spec to use. Default: the spec
            of the model's training env (``model.get_env()``).
        n_runs: number of runs.
    """

    name = "sb3"

    def __init__(self, model: Any, statistics: Any = None, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        if not callable(getattr(model, "predict", None)):
            raise TypeError(f"model must have a predict() method (an SB3 model), got {model!r}")
        self.model = model
        self.statistics_spec = _spec_of(model if statistics is None else statistics)
        spec = self.statistics_spec
        obs_space = getattr(model, "observation_space", None)
        if obs_space is not None and tuple(obs_space.shape) != (spec.dim,):
            raise ValueError(
                f"statistics must match the model: the model observes shape {obs_space.shape}, "
                f"the statistics have {spec.dim} features"
            )
        if spec.bai:  # the env must put the sample where the statistics read it
            mode = "cost" if spec.channel == "observation" else "sample"
            self.env_requirements = {"reward_mode": mode}

    def reset_state(self) -> None:
        self.statistics = RunStatistics(self.statistics_spec, self.n_runs)
        self.stopped = np.zeros(self.n_runs, dtype=bool)
        self.stop_action = np.zeros(self.n_runs, dtype=np.int64)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(self.statistics.features(), deterministic=True)
        actions = np.asarray(actions, dtype=np.int64).reshape(self.n_runs)
        return np.where(self.stopped, self.stop_action, actions)

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        live = ~self.stopped
        self.statistics.update(actions, rewards, observations, live)
        if self.statistics_spec.bai:
            stops = live & (np.asarray(actions) >= self.statistics_spec.K)
            self.stopped |= stops
            self.stop_action[stops] = np.asarray(actions)[stops]
        self.t += 1


def _spec_of(source: Any) -> StatisticsSpec:
    """The :class:`StatisticsSpec` of a spec, a statistics wrapper stack, an SB3 VecEnv over one,
    or an SB3 model (its training env)."""
    if isinstance(source, StatisticsSpec):
        return source
    if callable(getattr(source, "get_env", None)):  # an SB3 model
        env = source.get_env()
        if env is None:
            raise ValueError(
                "statistics must be given: the model has no env (e.g. loaded without one); pass "
                "the SufficientStatistics env or its statistics_spec"
            )
        source = env
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
    if isinstance(spec, StatisticsSpec):
        return spec
    raise ValueError(
        "statistics must be a StatisticsSpec or an env wrapped in SufficientStatistics / "
        f"VectorSufficientStatistics (or an SB3 model trained on one), got {source!r}"
    )
