"""Scores on the RL ids: a trained model, a policy, or one of the zoo's agents, on the same runs.

:func:`evaluate` plays ``n_episodes`` whole episodes of an RL id (episode i on seed ``seed + i``,
Gymnasium's vector convention, so every policy meets the same runs) and reports the learner's
score on the RL id's own reward (normalized, best-arm identification's design): the per-step
reward, the return, and for best-arm identification how often the recommendation was right and
after how many pulls. The policy may be

* a zoo agent by name (``"uniform"``, ``"ucb1"``, ``"ttucb"``, ``"linucb"``, ``"fed-linucb"``, …,
  built by :func:`privenv.agents.make` for the RL id's research env with its keyword arguments
  ``agent_params``): it sees what it sees on the research id — the research observation and the
  (released) reward of its pulls, never the RL features — and its actions are played on the RL
  id, so its score is on the learner's scale;
* a trained model (anything with ``predict(obs, deterministic=True)``: SB3) — greedy;
* a function of the batch of observations (features) returning a batch of actions.

So a learner's score sits beside the classic algorithm's on one table (docs/results/rl.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

__all__ = ["Evaluation", "evaluate"]


@dataclass(frozen=True)
class Evaluation:
    """The scores of ``n`` episodes of an RL id.

    Attributes:
        returns: each episode's return (sum of the RL id's rewards).
        lengths: each episode's number of steps.
        correct: whether each episode stopped with the best arm (best-arm identification; False
            for a wrong answer or an exhausted budget); None for the other ids.
        stopped: whether each episode stopped before its budget ran out (best-arm
            identification); None for the other ids.
    """

    returns: np.ndarray
    lengths: np.ndarray
    correct: np.ndarray | None = None
    stopped: np.ndarray | None = None

    @property
    def per_step(self) -> float:
        """The mean reward per step over all episodes (total reward / total steps)."""
        return float(self.returns.sum() / self.lengths.sum())

    @property
    def mean_return(self) -> float:
        return float(self.returns.mean())

    @property
    def accuracy(self) -> float | None:
        """The fraction of episodes that stopped with the best arm (best-arm identification)."""
        return None if self.correct is None else float(self.correct.mean())


def _joint(actions: np.ndarray, K: int) -> np.ndarray:
    """Per-silo actions (n, M) → joint actions Σ_m a_m K^m (the federated RL id's encoding)."""
    return (np.asarray(actions, dtype=np.int64) * K ** np.arange(actions.shape[1])).sum(axis=1)


def evaluate(policy: Any, env_id: str, n_episodes: int = 100, seed: int = 10_000,
             agent_params: dict[str, Any] | None = None, stop_at_budget: bool = False,
             **env_kwargs: Any) -> Evaluation:
    """Play ``n_episodes`` whole episodes of ``env_id`` (an RL id) with ``policy``.

    Args:
        policy: a zoo agent's name, a trained model with ``predict``, or a function of the batch
            of observations (see the module docstring).
        env_id: an RL id (``"HuberBandit-RL-v0"``, …), with or without the ``"privenv:"``
            prefix.
        n_episodes: episodes, each a sub-env of one vector env (episode i: seed ``seed + i``).
        seed: the first episode's seed.
        agent_params: a zoo agent's constructor arguments (e.g. ``{"delta": 0.1}``).
        stop_at_budget: best-arm identification, a zoo agent only: a run that has not stopped
            by the last pull its budget allows (``horizon`` − 1 pulls made) stops there and
            recommends the run's empirical best arm (the stop of ``actions="stop-best"``) — a
            budgeted recommendation, so that a δ-correct agent whose stopping rule needs more
            pulls than the budget still answers instead of exhausting it.
        **env_kwargs: the RL id's keyword arguments (``level``, ``K``, ``horizon``, …).
    """
    import privenv  # noqa: F401  (registers the ids)

    if isinstance(policy, str) and "BestArmIdentification" in env_id:
        env_kwargs.setdefault("actions", "any-arm")  # a zoo agent names the arm it recommends
    env = gym.make_vec(env_id, num_envs=n_episodes, vectorization_mode="vector_entry_point",
                       autoreset_mode=AutoresetMode.DISABLED, **env_kwargs)
    from privenv.rl.envs import RLBanditVectorEnv
    from privenv.rl.features import StatisticsSpec

    base = env.unwrapped
    if not isinstance(base, RLBanditVectorEnv):
        raise ValueError(f"env_id must be an RL id (e.g. HuberBandit-RL-v0), got {env_id!r}")
    features, _ = env.reset(seed=seed)
    agent = None
    if isinstance(policy, str):
        from privenv.agents import make

        agent = make(policy, base._inner, n_runs=n_episodes, **(agent_params or {}))
        agent.reset(seed=seed)
    elif agent_params:
        raise ValueError(f"agent_params applies to a zoo agent's name only, got policy {policy!r}")
    if stop_at_budget and (agent is None or base.actions != "any-arm"):
        raise ValueError(f"stop_at_budget applies to a zoo agent on best-arm identification only, "
                         f"got policy {policy!r} on {env_id!r}")
    view = base.view
    K = 0
    if base.actions == "joint":
        space = base.single_action_space
        assert isinstance(space, gym.spaces.Discrete)  # (K^M joint actions)
        K = int(space.n ** (1 / base._silos))
    spec = base.statistics_spec
    bai = isinstance(spec, StatisticsSpec) and spec.bai
    first_stop = spec.K if isinstance(spec, StatisticsSpec) else 0  # (BAI's stop actions: K + â)
    returns = np.zeros(n_episodes)
    lengths = np.zeros(n_episodes, dtype=np.int64)
    correct = np.zeros(n_episodes, dtype=bool)
    stopped = np.zeros(n_episodes, dtype=bool)
    done = np.zeros(n_episodes, dtype=bool)
    while not done.all():
        if agent is not None:
            actions = agent.act(view.research_observation)
            if K:
                actions = _joint(actions, K)
            if stop_at_budget:  # the last pull the budget allows: stop with the empirical best
                last = view.statistics.steps() >= base.horizon - 1
                actions = np.where(last & (actions < first_stop),
                                   first_stop + view.statistics.empirical_best(), actions)
        elif callable(getattr(policy, "predict", None)):
            actions, _ = policy.predict(features, deterministic=True)
        else:
            actions = policy(features)
        actions = np.asarray(actions)
        features, rewards, terminated, truncated, info = env.step(actions)
        live = ~done
        returns[live] += rewards[live]
        lengths[live] += 1
        if agent is not None:
            agent.observe(view.research_action, view.research_reward, view.research_observation)
        ended = live & (terminated | truncated)
        if bai:
            correct[ended] = np.asarray(info["correct"], dtype=bool)[ended]
            stopped[ended] = (view.research_action >= first_stop)[ended]
        done |= ended
    env.close()
    return Evaluation(returns, lengths, correct if bai else None, stopped if bai else None)
