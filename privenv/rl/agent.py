"""A trained RL model as a zoo agent: :class:`SB3Agent`.

The agent keeps its own statistics of what it observes (the same features the views of
:mod:`privenv.rl.views` fed the model during training), so :func:`privenv.simulation.simulate`
and :func:`~privenv.simulation.play` run a trained Stable-Baselines3 model next to UCB1, PRAE or
TTUCB. It acts greedily (``model.predict(..., deterministic=True)``), so ``simulate`` and ``play``
give the same numbers for the same seed and run.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv

from privenv.agents.base import Agent
from privenv.rl.features import (
    LinearStatisticsSpec,
    RunStatistics,
    Spec,
    StatisticsSpec,
    base_spaces,
    env_name,
    statistics_spec,
)

__all__ = ["SB3Agent"]


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
        if isinstance(getattr(model, "action_space", None), spaces.MultiDiscrete) or getattr(
                self.statistics_spec, "M", 1) > 1:
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
            spec = _trained_on(self.statistics_spec, spec, env_name(env))
        self.statistics_spec = spec
        _check_model(self.model, spec, env_name(env), base_spaces(env)[0])
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
        spec = self._spec()
        if isinstance(spec, StatisticsSpec) and spec.bai and not self._obs_are_features:
            # a model of the RL id's stop-best encoding: its stop K is K + â on the research env
            stop_best = actions[:, 0] == spec.K
            if isinstance(getattr(self.model, "action_space", None), spaces.Discrete) and (
                    self.model.action_space.n == spec.K + 1):
                statistics = self.statistics
                assert isinstance(statistics, RunStatistics)  # (a K-armed spec's)
                actions[stop_best, 0] += statistics.empirical_best()[stop_best]
        if isinstance(spec, LinearStatisticsSpec) and spec.M > 1:
            # a joint action: the RL id decodes it, the research env takes one per silo
            return actions[:, 0] if self._obs_are_features else (
                actions // spec.A ** np.arange(spec.M)) % spec.A
        return np.where(self.stopped, self.stop_action, actions[:, 0])

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        live = ~self.stopped
        if not self._obs_are_features:
            self.statistics.update(actions, rewards, observations, live)
        spec = self._spec()
        if isinstance(spec, StatisticsSpec) and spec.bai:
            stops = live & (np.asarray(actions) >= spec.K)
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
    joint = (isinstance(model_actions, spaces.Discrete) and isinstance(spec, LinearStatisticsSpec)
             and spec.M > 1 and model_actions.n == spec.A ** spec.M)  # the federated joint actions
    stop_best = (isinstance(model_actions, spaces.Discrete) and isinstance(spec, StatisticsSpec)
                 and spec.bai and model_actions.n == spec.K + 1)  # best-arm identification's
    if model_actions is not None and model_actions != env_actions and not (
            (joint or stop_best) and env_actions in (spec.action_space, model_actions)):
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

