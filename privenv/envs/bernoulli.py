"""``BernoulliBandit-v0``: the K-armed Bernoulli bandit of the private regret literature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privenv.envs import ENV_IDS
from privenv.envs.base import FamilyVectorEnv, ProblemEnv
from privenv.problems.bernoulli import BernoulliProblem

DEFAULT_HORIZON = ENV_IDS["BernoulliBandit-v0"].horizon

__all__ = ["BernoulliBanditEnv", "BernoulliBanditVectorEnv"]


class BernoulliBanditEnv(ProblemEnv[BernoulliProblem]):
    """K-armed Bernoulli bandit: pull an arm, receive a reward in {0, 1}.

    ## Description
    The testbed of the differentially private regret literature (Mishra & Thakurta 2015; Tossou
    & Dimitrakakis 2016; Sajed & Sheffet 2019; Ren, Zhou, Liu & Shroff 2020; Azize & Basu 2022;
    Hu & Hegde 2022; Azize, Wu, Honda, Orabona, Ito & Basu 2025). A pull of arm *a* returns 1 with
    probability μ_a, else 0. The default instance is ``"mu4"`` = (0.75, 0.625, 0.5, 0.375, 0.25)
    (Sajed & Sheffet 2019); the other named instances and where they come from are listed in
    :mod:`privenv.problems.bernoulli`. The default horizon is T = 10⁶. One episode is one bandit
    run.

    ## Action Space
    ``Discrete(K)``: the arm to pull.

    ## Observation Space
    ``Discrete(1)``: a bandit has no state; the observation is always 0.

    ## Rewards
    The pull's reward, 0.0 or 1.0 (a Python float). ``info`` carries evaluation quantities only:
    ``regret`` (the pseudo-regret μ* − μ_{a_t}), ``expected_reward`` (μ_{a_t}) and
    ``optimal_action``.

    ## Episode End
    Truncated at ``horizon``; never terminated.

    ## Arguments
    ``instance`` (a name of :data:`privenv.problems.bernoulli.INSTANCES`) or ``means`` (each in
    [0, 1]), ``horizon``, ``render_mode``.

    ## Privacy
    The bare env releases raw rewards to the learner: privacy is the agent's (global DP: DP-UCB,
    AdaP-UCB, DP-KLUCB, …) or a local-DP wrapper's (randomized response, Laplace;
    :mod:`privenv.wrappers`). ``info`` never carries a reward; ``public_info()`` gives K, the law
    and its range, never the means. Rendering shows raw rewards to whoever watches (a human view,
    outside any agent's guarantee).

    ## Seeding
    Rewards come from the run's per-arm streams (:mod:`privenv.seeding`): the k-th pull of arm
    *a* is the same whichever agent plays, and equals the k-th sample of arm *a* of
    ``BestArmIdentification-v0`` with the same means and seed.

    ## Examples
    >>> import gymnasium as gym, privenv
    >>> env = gym.make("BernoulliBandit-v0", instance="mu2")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> reward in (0.0, 1.0), info["regret"]
    (True, 0.0)
    """

    def __init__(
        self,
        instance: str | None = None,
        means: Sequence[float] | None = None,
        horizon: int | None = DEFAULT_HORIZON,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(BernoulliProblem(instance=instance, means=means), horizon=horizon,
                         render_mode=render_mode)


class BernoulliBanditVectorEnv(FamilyVectorEnv[BernoulliProblem]):
    """``num_envs`` independent runs of :class:`BernoulliBanditEnv` as a native vector env.

    Takes the keyword arguments of :class:`BernoulliBanditEnv`, plus ``num_envs``,
    ``autoreset_mode`` and ``max_episode_steps`` (what ``gym.make_vec`` passes; used as the horizon
    when ``horizon`` is not given). Run *i* of ``reset(seed=s)`` equals ``BernoulliBanditEnv()
    .reset(seed=s, options={"first_run": i})``.
    """

    default_horizon = DEFAULT_HORIZON

    def make_problem(self, num_envs: int, horizon: int | None,
                     **kwargs: Any) -> BernoulliProblem:
        return BernoulliProblem(n_runs=num_envs, **kwargs)
