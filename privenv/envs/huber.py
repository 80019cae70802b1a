"""``HuberBandit-v0``: heavy-tailed K-armed bandit with Huber contamination (paper 1)."""

from __future__ import annotations

from typing import Any

from privenv.envs import ENV_IDS
from privenv.envs.base import FamilyVectorEnv, ProblemEnv
from privenv.problems.huber import HuberProblem

DEFAULT_HORIZON = ENV_IDS["HuberBandit-v0"].horizon


class HuberBanditEnv(ProblemEnv[HuberProblem]):
    """Heavy-tailed K-armed bandit with Huber α-contamination.

    ## Description
    Paper 1 (Wu, Zhou, Tao, Wang, *On Private and Robust Bandits*, NeurIPS 2023), Definition 3.3.
    Each pull of arm *a* returns, with probability 1 − α, a draw from a heavy-tailed inlier law with
    mean μ_a and otherwise a draw from a contamination law. The default instance is the paper's
    §7.1: K = 5, μ_a = 100 − 100(a − 1)/(K − 1), Student-t (ν = 2.5) noise, α = 0.05,
    contamination N(0, 50²), horizon T = 10⁵. One episode is one bandit run.

    ## Action Space
    ``Discrete(K)``: the arm to pull.

    ## Observation Space
    ``Discrete(1)``: a bandit has no state; the observation is always 0. (An RL learner needs the
    sufficient-statistics observation wrapper.)

    ## Rewards
    The observed, possibly contaminated reward (a Python float). ``info`` carries evaluation
    quantities only: ``regret`` (clean pseudo-regret μ* − μ_{a_t} of Definition 3.6),
    ``expected_reward`` (μ_{a_t}), ``optimal_action`` and ``contaminated`` (whether the reward
    was an outlier).

    ## Episode End
    Truncated at ``horizon``; never terminated.

    ## Arguments
    ``K``, ``means``, ``alpha``, ``inlier`` (``"student-t"``, ``"pareto"``, ``"gaussian"`` or a
    frozen ``scipy.stats`` law), ``inlier_params``, ``contamination`` (``"gaussian"``,
    ``"adversarial"``, a frozen law or a list of K), ``contamination_scale`` — see
    :class:`~privenv.problems.huber.HuberProblem` — and ``horizon``, ``render_mode``.

    ## Privacy
    The bare env releases raw rewards to the learner, so privacy is the agent's (central DP, e.g.
    PRAE-R) or a local-DP wrapper's (:mod:`privenv.wrappers`). ``info`` never carries raw rewards.
    Rendering (``render_mode="ansi"``: a table; ``"rgb_array"``: a bar-chart frame) shows pulls,
    mean observed (raw, possibly contaminated) reward per arm and the cumulative regret to whoever
    watches — a human view, outside any agent's guarantee (:mod:`privenv.envs.render`).

    ## Examples
    >>> import gymnasium as gym, privenv
    >>> env = gym.make("HuberBandit-v0", alpha=0.1, inlier="pareto")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    """

    def __init__(
        self,
        K: int | None = None,
        means: Any = None,
        alpha: float = 0.05,
        inlier: Any = "student-t",
        inlier_params: dict[str, float] | None = None,
        contamination: Any = "gaussian",
        contamination_scale: float = 50.0,
        horizon: int | None = DEFAULT_HORIZON,
        render_mode: str | None = None,
    ) -> None:
        problem = HuberProblem(
            K=K,
            means=means,
            alpha=alpha,
            inlier=inlier,
            inlier_params=inlier_params,
            contamination=contamination,
            contamination_scale=contamination_scale,
        )
        super().__init__(problem, horizon=horizon, render_mode=render_mode)


class HuberBanditVectorEnv(FamilyVectorEnv[HuberProblem]):
    """``num_envs`` independent runs of :class:`HuberBanditEnv` as a native vector env.

    Takes the keyword arguments of :class:`HuberBanditEnv`, plus ``num_envs``, ``autoreset_mode``
    and ``max_episode_steps`` (what ``gym.make_vec`` passes; used as the horizon when ``horizon`` is
    not given). Run *i* of ``reset(seed=s)`` equals ``HuberBanditEnv().reset(seed=s,
    options={"first_run": i})``.
    """

    default_horizon = DEFAULT_HORIZON

    def make_problem(self, num_envs: int, horizon: int | None, **kwargs: Any) -> HuberProblem:
        return HuberProblem(n_runs=num_envs, **kwargs)
