"""Reinforcement-learning tooling: privenv's bandits for RL learners (docs/guides/rl.md).

A package above the agents (docs/design/architecture.md, "The layers"), one job per module:

* :mod:`privenv.rl.features` — the run's sufficient statistics and the feature vector an RL
  learner observes (:class:`~privenv.rl.features.StatisticsSpec` and
  :class:`~privenv.rl.features.RunStatistics` for the K-armed families,
  :class:`~privenv.rl.features.LinearStatisticsSpec` and
  :class:`~privenv.rl.features.LinearRunStatistics` for the linear and federated ones;
  :func:`~privenv.rl.features.statistics_spec` picks the one of an env);
* :mod:`privenv.rl.views` — :class:`~privenv.rl.views.SufficientStatistics` and
  :class:`~privenv.rl.views.VectorSufficientStatistics`, wrappers that replace a research env's
  observation by those features (whole-run or one-step episodes);
* :mod:`privenv.rl.envs` — the RL ids' envs (``HuberBandit-RL-v0``, …): a research env, an
  optional local-DP wrapper and the view, built from an id string;
* :mod:`privenv.rl.ids` — the RL ids' table and their registration by entry-point strings
  (``import privenv`` registers them without importing any of the above);
* :mod:`privenv.rl.sb3` — ``SB3VecEnv``, a native Gymnasium ``VectorEnv`` as Stable-Baselines3's
  ``VecEnv``, and :func:`~privenv.rl.sb3.make_sb3_vec_env`, SB3's ``make_vec_env`` on that
  native path;
* :mod:`privenv.rl.baselines` — :func:`~privenv.rl.baselines.evaluate`: a model, a policy or a
  zoo agent (UCB1, TTUCB, LinUCB, FedLinUCB, uniform) scored on an RL id, on the same runs;
* :mod:`privenv.rl.agent` — :class:`~privenv.rl.agent.SB3Agent`, a trained model as a zoo
  agent, so :func:`privenv.simulation.simulate` runs it next to UCB1, PRAE or TTUCB.

The names above import from ``privenv.rl`` directly; each submodule is imported on first use, so
``import privenv.rl`` costs nothing more than the registration table, and nothing here needs
Stable-Baselines3 or torch until ``SB3VecEnv`` is asked for (it raises ``ImportError`` naming the
extra, ``pip install 'privenv[sb3]'``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from privenv.rl.ids import RL_HORIZON, RL_IDS, register_rl_envs

if TYPE_CHECKING:
    from privenv.rl.agent import SB3Agent
    from privenv.rl.baselines import evaluate
    from privenv.rl.features import (
        RIDGE_LAMBDA,
        LinearRunStatistics,
        LinearStatisticsSpec,
        RunStatistics,
        StatisticsSpec,
        statistics_spec,
    )
    from privenv.rl.sb3 import make_sb3_vec_env
    from privenv.rl.views import EPISODES, SufficientStatistics, VectorSufficientStatistics

#: public name → the submodule that defines it (imported on first access)
_EXPORTS: dict[str, str] = {
    "EPISODES": "views",
    "LinearRunStatistics": "features",
    "LinearStatisticsSpec": "features",
    "RIDGE_LAMBDA": "features",
    "RunStatistics": "features",
    "SB3Agent": "agent",
    "SB3VecEnv": "sb3",
    "StatisticsSpec": "features",
    "SufficientStatistics": "views",
    "VectorSufficientStatistics": "views",
    "evaluate": "baselines",
    "make_sb3_vec_env": "sb3",
    "statistics_spec": "features",
}

# SB3VecEnv is public too, but not in __all__: a star-import must work without Stable-Baselines3.
__all__ = [
    "EPISODES",
    "RIDGE_LAMBDA",
    "RL_HORIZON",
    "RL_IDS",
    "LinearRunStatistics",
    "LinearStatisticsSpec",
    "RunStatistics",
    "SB3Agent",
    "StatisticsSpec",
    "SufficientStatistics",
    "VectorSufficientStatistics",
    "evaluate",
    "make_sb3_vec_env",
    "register_rl_envs",
    "statistics_spec",
]


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first access (:data:`_EXPORTS`)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
