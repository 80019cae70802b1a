r"""Observation wrappers: a privenv env seen through its run's sufficient statistics.

:class:`SufficientStatistics` (a ``gymnasium.Wrapper``) and :class:`VectorSufficientStatistics` (a
``gymnasium.vector.VectorWrapper``) replace the env's observation by the features of
:mod:`privenv.rl.features` (which describes them and the *sample channel*). The RL ids
(:mod:`privenv.rl.envs`) are these views built from an id string.

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

## Seeding

The wrappers draw no randomness; the env's per-run streams (:mod:`privenv.seeding`) and a local-DP
wrapper's noise are untouched.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from privenv._validation import check_choice
from privenv.rl.features import Spec, learner_reward, statistics_spec

__all__ = ["EPISODES", "SufficientStatistics", "VectorSufficientStatistics", "episode_end"]

EPISODES = ("whole-run", "one-step")


class SufficientStatistics(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Observe the run's sufficient statistics instead of the bandit's observation.

    See :mod:`privenv.rl.features` for the features and the sample channel, this module's
    docstring for the two episode semantics.

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
        reward = float(learner_reward(self.statistics_spec, reward))
        self._run_over = terminated or truncated
        features = self.statistics.features()[0]
        if self.episode == "one-step":
            return features, reward, True, False, info
        ends = episode_end(np.array([terminated]), np.array([truncated]), self.statistics.steps(),
                           self.statistics_spec.horizon)
        return features, reward, bool(ends[0][0]), bool(ends[1][0]), info


def episode_end(terminated: np.ndarray, truncated: np.ndarray, steps: np.ndarray,
                horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The (terminated, truncated) flags of whole-run episodes: a run that has reached its horizon
    T (``steps`` ≥ T) is *terminated* — t/T is in the observation, so it is a terminal state of
    the MDP the learner sees, whose value is 0, not to be bootstrapped — even where the env
    underneath reports it as truncated; ``truncated`` is left to limits from outside (a
    ``TimeLimit`` shorter than T)."""
    at_horizon = truncated & (steps >= horizon)
    return terminated | at_horizon, truncated & ~at_horizon


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
    :attr:`stepped` is the mask of the runs that pulled in the last step;
    :attr:`research_action`, :attr:`research_reward` and :attr:`research_observation` what the
    env underneath took and gave in it (after any local-DP wrapper: what a zoo agent would see;
    :mod:`privenv.rl.baselines` runs the zoo on the RL ids with them). With
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
        # (Gymnasium annotates VectorEnv.reset's seed as an int; privenv's envs take one per run)
        obs, info = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        self.research_observation = obs
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
        self.research_action, self.research_reward, self.research_observation = (
            actions, rewards, obs)
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
        if self.episode == "whole-run" and truncated.any():
            terminated, truncated = episode_end(terminated, truncated, self.statistics.steps(),
                                                self.statistics_spec.horizon)
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
        return features, learner_reward(self.statistics_spec, rewards), terminated, truncated, info


def _with_final_obs(info: dict[str, Any], features: np.ndarray, done: np.ndarray) -> dict:
    final = np.full(len(done), None, dtype=object)
    for i in np.flatnonzero(done):
        final[i] = features[i]
    return {**info, "final_obs": final, "_final_obs": done}

