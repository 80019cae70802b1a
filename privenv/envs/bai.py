"""``BestArmIdentification-v0``: fixed-confidence best-arm identification (paper 3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privenv.envs import ENV_IDS
from privenv.envs.base import FamilyVectorEnv, ProblemEnv
from privenv.problems.bai import BAIProblem, decode, pull, stop

DEFAULT_HORIZON = ENV_IDS["BestArmIdentification-v0"].horizon  # the sample budget

__all__ = ["BestArmIdentificationEnv", "BestArmIdentificationVectorEnv", "decode", "pull", "stop"]


def render_pulls(
    problem: BAIProblem, actions: np.ndarray, obs: np.ndarray, reward: np.ndarray, info: dict
) -> tuple[np.ndarray, np.ndarray]:
    """Render board reading of a step: ``a < K`` pulls arm a (−1 for a stop); the sample is in
    the observation (``reward_mode="cost"``) or the reward (``"sample"``)."""
    arms = np.where(actions < problem.K, actions, -1).reshape(-1, 1)
    sample = obs[:, 0] if problem.reward_mode == "cost" else reward
    return arms, np.asarray(sample, dtype=float).reshape(-1, 1)


class BestArmIdentificationEnv(ProblemEnv[BAIProblem]):
    """Fixed-confidence best-arm identification: pull arms, then stop and recommend one.

    ## Description
    Paper 3 (Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*),
    Protocol 3: K arms with reward laws of means μ_a and a unique best arm. The learner pulls arms
    until it chooses to stop and recommend an arm; its cost is the stopping time τ (the number of
    pulls) and its error is a wrong recommendation. The default instance is Bernoulli
    μ1 = (0.95, 0.9, 0.9, 0.9, 0.5); ``instance="mu1"`` … ``"mu6"`` selects the instances of the
    paper's Appendix I. One episode is one run of a BAI strategy.

    ## Action Space
    ``Discrete(2K)``: ``a < K`` pulls arm ``a``; ``a ≥ K`` stops and recommends arm ``a − K``.
    The helpers ``pull(a)``, ``stop(a, K)`` and ``decode(action, K) -> (stops, arm)`` of this
    module keep agent code readable.

    ## Observation Space
    ``Box(low, high, (1,), float64)`` (``[0, 1]`` for Bernoulli and Beta laws, the real line for
    Gaussian): with ``reward_mode="cost"`` (default) the sample drawn by the last pull (0 after
    ``reset`` and on the stop step); with ``reward_mode="sample"`` always 0.

    ## Rewards
    ``reward_mode="cost"``: −``pull_cost`` (1) per pull, so that an RL learner has a signal;
    ``reward_mode="sample"``: the pull's sample. On the stop step: 0 if the recommendation is the
    best arm, −``wrong_penalty`` (1000) otherwise. ``info`` (every step): ``regret`` (always 0.0:
    best-arm identification has no pseudo-regret), ``stopping_time`` (pulls so far; τ at the end),
    ``recommendation`` (the recommended arm on the stop step, −1 otherwise and when truncated),
    ``correct`` (True only on a correct stop).

    ## Episode End
    Terminated when the learner stops; truncated at the sample budget ``horizon`` (10⁸ steps).

    ## Arguments
    ``instance`` (``"mu1"`` … ``"mu6"``) or ``means``; ``law`` (``"bernoulli"``, ``"gaussian"``,
    ``"beta"``); ``sigma`` (Gaussian standard deviation, 1); ``concentration`` (c of the law
    Beta(cμ, c(1 − μ)), 2); ``pull_cost``; ``wrong_penalty``; ``reward_mode``; ``permute_arms``
    (False; True shows the arms of every episode in a fresh random order, a distribution of
    instances for RL learners, see :mod:`privenv.problems.bai`); ``horizon``;
    ``render_mode`` (``"ansi"`` or ``"rgb_array"``: pulls and mean observed sample per arm, the
    stopping time and the recommendation once stopped). See
    :class:`~privenv.problems.bai.BAIProblem`.

    ## Privacy
    The bare env releases raw samples to the learner — in the observation with
    ``reward_mode="cost"``, in the reward with ``reward_mode="sample"`` (use the latter with
    reward-perturbing local-DP wrappers such as randomized response, paper 3's CTB-TT). Privacy is
    then the agent's (global DP: AdaP-TT, DP-SE) or a local-DP wrapper's. ``info`` never carries a
    sample. ``public_info()`` gives K, the law and its sub-Gaussian scale σ, never the means.
    Rendering shows the empirical means of the raw samples to whoever watches (a human view,
    outside any agent's guarantee).

    ## Examples
    >>> import gymnasium as gym, privenv
    >>> from privenv.envs.bai import pull, stop
    >>> env = gym.make("BestArmIdentification-v0", instance="mu2")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(pull(3))
    >>> obs, reward, terminated, truncated, info = env.step(stop(0, K=5))
    >>> terminated, info["correct"], info["stopping_time"]
    (True, True, 1)
    """

    render_pulls = staticmethod(render_pulls)

    def __init__(
        self,
        instance: str | None = None,
        means: Sequence[float] | None = None,
        law: str = "bernoulli",
        sigma: float | None = None,
        concentration: float | None = None,
        pull_cost: float = 1.0,
        wrong_penalty: float = 1000.0,
        reward_mode: str = "cost",
        permute_arms: bool = False,
        horizon: int | None = DEFAULT_HORIZON,
        render_mode: str | None = None,
    ) -> None:
        problem = BAIProblem(
            instance=instance,
            means=means,
            law=law,
            sigma=sigma,
            concentration=concentration,
            pull_cost=pull_cost,
            wrong_penalty=wrong_penalty,
            reward_mode=reward_mode,
            permute_arms=permute_arms,
        )
        super().__init__(problem, horizon=horizon, render_mode=render_mode)


class BestArmIdentificationVectorEnv(FamilyVectorEnv[BAIProblem]):
    """``num_envs`` independent runs of :class:`BestArmIdentificationEnv` as a native vector env.

    Takes the keyword arguments of :class:`BestArmIdentificationEnv`, plus ``num_envs``,
    ``autoreset_mode`` and ``max_episode_steps`` (what ``gym.make_vec`` passes; used as the sample
    budget when ``horizon`` is not given). Run *i* of ``reset(seed=s)`` equals
    ``BestArmIdentificationEnv().reset(seed=s, options={"first_run": i})``.
    """

    default_horizon = DEFAULT_HORIZON
    render_pulls = staticmethod(render_pulls)

    def make_problem(self, num_envs: int, horizon: int | None, **kwargs: Any) -> BAIProblem:
        return BAIProblem(n_runs=num_envs, **kwargs)
