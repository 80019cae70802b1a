"""What every local-DP wrapper shares (:mod:`privenv.wrappers.ldp`,
:mod:`privenv.wrappers.ldp_linear`): the marker that counts stacked wrappers, the per-run noise
seeds, the check of the feedback channel, the autoreset bookkeeping of a vector wrapper, the
``info`` keys a wrapper removes, and the default sampler of the data a wrapper protects
(:func:`data_sampler`).

**Per-run noise.** After ``reset`` a wrapper takes the base env's ``run_seeds`` (one
``SeedSequence`` per run, see :mod:`privenv.seeding`) and draws run *i*'s noise only from
``child(run_seeds[i], WRAPPER, k)``, where ``k`` is the number of local-DP wrappers beneath it
(stacked wrappers never share a stream). So run *i*'s released values are the same in a vector
env of 1000 runs and in a single env reset with ``options={"first_run": i}``, and they do not
depend on the agent's seed.

**Autoreset.** A vector wrapper follows the env's autoreset mode (:class:`AutoresetRuns`): a run
that sits a step out (finished, or being reset under ``NEXT_STEP``) consumes no noise and gets
reward 0, as from the env; a run the env restarts (autoreset, or
``reset(options={"reset_mask": …})``) restarts its noise from its new seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.problems.base import Problem
from privenv.seeding import WRAPPER, Seed, child

__all__ = ["RAW_INFO_KEYS", "AutoresetRuns", "LocalDP", "check_feedback_channel", "data_sampler",
           "ldp_stack_depth", "noise_seeds", "public_info", "public_step_info", "run_seeds"]


class LocalDP:
    """Marker of privenv's local-DP wrappers (counted to give stacked wrappers distinct streams)."""

    randomizer: Any  # its randomizer (privacy layer)

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The local-DP guarantee this wrapper provides (its randomizer's)."""
        return self.randomizer.privacy


def ldp_stack_depth(env: Any) -> int:
    """The number of privenv local-DP wrappers in ``env``'s wrapper chain (walking ``.env``)."""
    n = 0
    while env is not None:
        n += isinstance(env, LocalDP)
        env = getattr(env, "env", None)
    return n


def run_seeds(wrapper: gym.Wrapper | VectorWrapper) -> list[Seed]:
    base = wrapper.unwrapped
    if not hasattr(type(base), "run_seeds"):
        raise TypeError(
            f"{type(wrapper).__name__} draws each run's noise from the env's per-run seeds "
            f"(`run_seeds`, provided by privenv envs); {type(base).__name__} has none"
        )
    return cast(Any, base).run_seeds  # (checked on its type above: reading it may raise)


def public_info(env: Any) -> dict[str, Any]:
    base = getattr(env, "unwrapped", env)
    return base.public_info() if callable(getattr(base, "public_info", None)) else {}


def check_feedback_channel(env: Any, wrapper: str) -> None:
    """Refuse an env whose Gymnasium reward is not one user's raw feedback, where a reward
    randomizer would leave data in the clear or declare the wrong unit:

    * best-arm identification with ``reward_mode="cost"`` carries the sample in the observation
      (its reward is −pull_cost); ``reward_mode="sample"`` puts it in the reward;
    * a problem whose reward aggregates several users (it overrides ``Problem.gym_reward``, e.g.
      the federated env's sum over silos): privacy there is the silos' protocol (paper 2).
    """
    info = public_info(env)
    if info.get("reward_mode", "sample") != "sample":
        raise ValueError(
            f"{wrapper} randomizes the reward, but this env has reward_mode="
            f"{info['reward_mode']!r} and releases the raw sample in the observation; build it "
            "with reward_mode='sample'"
        )
    problem = getattr(getattr(env, "unwrapped", env), "problem", None)
    if isinstance(problem, Problem) and type(problem).gym_reward is not Problem.gym_reward:
        raise ValueError(
            f"{wrapper} randomizes one user's reward, but the reward of "
            f"{type(problem).__name__} aggregates several users' rewards (e.g. a sum over silos);"
            " its privacy is the agents' protocol, not a reward wrapper"
        )


_NO_RUNS = np.empty(0, dtype=np.int64)
_NO_RUNS.flags.writeable = False


class AutoresetRuns:
    """Which runs of a vector env a local-DP wrapper serves at each step, and which runs' noise it
    must restart, under the env's ``autoreset_mode`` — one bookkeeping for every vector wrapper.

    A run that ended sits the next step out (``DISABLED``: for good, until a reset;
    ``NEXT_STEP``: the step on which the env restarts it — its noise restarts then); under
    ``SAME_STEP`` the env restarts a run within the step it ends, so its noise restarts after it.
    """

    def __init__(self, env: VectorEnv) -> None:
        self.mode = AutoresetMode(env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self.ended = np.zeros(env.num_envs, dtype=bool)  # runs that sit the next step out
        self.n_ended = 0

    def reset(self, runs: np.ndarray | None = None) -> None:
        """All runs (or ``runs``) start afresh."""
        if runs is None:
            self.ended[:] = False
        else:
            self.ended[runs] = False
        self.n_ended = int(np.count_nonzero(self.ended))

    def before_step(self) -> tuple[np.ndarray | None, np.ndarray]:
        """(runs served this step — ``None`` for all —, runs whose noise restarts now)."""
        if not self.n_ended or self.mode == AutoresetMode.SAME_STEP:
            return None, _NO_RUNS
        restart = np.flatnonzero(self.ended) if self.mode == AutoresetMode.NEXT_STEP else _NO_RUNS
        return np.flatnonzero(~self.ended), restart

    def after_step(self, done: np.ndarray) -> np.ndarray:
        """Record the runs that ended; returns the runs whose noise restarts after the step."""
        if self.mode == AutoresetMode.DISABLED:
            self.ended |= done
        else:
            self.ended = done.copy()
        self.n_ended = int(np.count_nonzero(self.ended))
        if self.mode == AutoresetMode.SAME_STEP and self.n_ended:
            return np.flatnonzero(done)
        return _NO_RUNS


def noise_seeds(
    seeds: Sequence[Seed], stack_index: int
) -> list[Seed]:
    """The seeds of a wrapper's noise: ``child(seed, WRAPPER, stack_index)`` per run."""
    return [child(s, WRAPPER, stack_index) for s in seeds]




#: ``info`` keys that describe the raw data a local-DP wrapper protects (``HuberBandit``'s
#: ``contaminated``: whether this step's raw reward came from the contamination): a wrapper
#: removes them, so that nothing downstream of a local randomizer sees more than its release
RAW_INFO_KEYS: tuple[str, ...] = ("contaminated", "_contaminated")


def data_sampler(env: Any, sampler: str | None) -> str:
    """``sampler`` if given; else the sampler the env's data calls for — ``"exact"`` for real
    data: an env that is not a privenv simulation (the caller's own rewards or contexts) or a
    privenv data set (its public description says ``"sampler": "exact"``); ``"float"`` for
    privenv's simulated problems (the papers' noise). The rule: docs/design/threat-model.md."""
    if sampler is not None:
        return sampler
    describe = getattr(getattr(env, "unwrapped", env), "public_info", None)
    if not callable(describe):
        return "exact"
    return str(describe().get("sampler", "float"))


def public_step_info(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` without the keys of :data:`RAW_INFO_KEYS`."""
    if not any(k in info for k in RAW_INFO_KEYS):
        return info
    return {k: v for k, v in info.items() if k not in RAW_INFO_KEYS}

