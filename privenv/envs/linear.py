"""``LinearContextualBandit-v0``: finite-action linear contextual bandit (paper 4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privenv.envs import ENV_IDS
from privenv.envs.base import FamilyVectorEnv, ProblemEnv
from privenv.problems.linear import LinearContextualProblem

DEFAULT_HORIZON = ENV_IDS["LinearContextualBandit-v0"].horizon


def _hard_n(contexts: str, n: int | None, horizon: int | None) -> int | None:
    """The hard instance is built for n = the horizon unless n is given."""
    if contexts == "hard" and n is None and horizon is not None:
        return horizon
    return n


class LinearContextualBanditEnv(ProblemEnv[LinearContextualProblem]):
    """Finite-action linear contextual bandit with stochastic contexts.

    ## Description
    Paper 4 (Li, Simchi-Levi, Wang, *On the Optimal Regret of Locally Private Linear Contextual
    Bandit*), §1.1. At each round a context x_t is drawn; the learner sees the features
    φ(x_t, a) ∈ ℝ^d of every action a (‖φ‖₂ ≤ 1), picks a_t and receives y_t with
    E[y_t | x_t, a_t] = ⟨φ(x_t, a_t), θ*⟩, ‖θ*‖₂ ≤ 1. Default instance: d = 5, A = 10, features
    uniform on the unit sphere, independently per action; θ* a random unit vector
    (``theta_seed=0``); rewards ±1 with P(y = 1) = (1 + ⟨φ, θ*⟩)/2; horizon 10⁴. One episode is
    one bandit run. Context generators: ``"sphere"``, ``"disjoint"`` (d = A·p), ``"hard"`` (paper
    4's Theorem 2.1 instance, eq. 3, with actions ±φ), ``"paper2"`` (paper 2's synthetic
    features) and ``"dataset"`` (a scikit-learn bundled classification data set — not exactly
    linear); see :mod:`privenv.problems.linear`.

    ## Action Space
    ``Discrete(A)``: the action (row of the feature matrix) to play.

    ## Observation Space
    ``Box(-1, 1, (A, d), float32)``: the feature matrix φ(x_t, ·) of the current round.

    ## Rewards
    y_t ∈ {−1, +1} (bounded noise, default) or ⟨φ, θ*⟩ + N(0, σ²) (``noise="gaussian"``:
    **unbounded**). ``contexts="dataset"``: +1 for the true class, −1 otherwise. ``info`` carries
    evaluation quantities only: ``regret`` (max_a ⟨φ_a, θ*⟩ − ⟨φ_{a_t}, θ*⟩),
    ``expected_reward`` (⟨φ_{a_t}, θ*⟩), ``optimal_action`` and ``expected_rewards`` (all
    actions) — never the realized reward. With ``contexts="dataset"`` each of them determines the
    raw label (the reward is a function of the context), so ``info`` is empty and the runner reads
    them from ``env.unwrapped.evaluation()``, a channel agents and wrappers are never given.

    ## Episode End
    Truncated at ``horizon``; never terminated.

    ## Arguments
    ``d``, ``A``, ``theta``, ``theta_seed``, ``contexts``, ``noise`` (``"bounded"``,
    ``"gaussian"``), ``sigma`` (0.5), ``n`` and ``c`` (hard instance: P(φ = e₂) = c/√n; n defaults
    to the horizon, c to 1), ``dataset`` (``"wine"``, ``"digits"``, ``"breast_cancer"``) — see
    :class:`~privenv.problems.linear.LinearContextualProblem` — and ``horizon``, ``render_mode``.

    ## Privacy
    The bare env releases raw contexts and rewards to the learner. Paper 4's local DP protects each
    user's (context, reward) pair: privacy is then the agent's user-side randomizer or a local-DP
    wrapper's (:mod:`privenv.wrappers`). ``info`` never carries a realized reward.
    Rendering (``render_mode="ansi"`` or ``"rgb_array"``) shows pulls and mean observed (raw)
    reward per action index — contexts change every round, so these are per-row summaries, not
    arm means — and the cumulative regret, to whoever watches (:mod:`privenv.envs.render`).
    ``public_info()`` gives d, A and the model's bounds, never θ*.

    ## Examples
    >>> import gymnasium as gym, privenv
    >>> env = gym.make("LinearContextualBandit-v0", d=3, A=4)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (4, 3)
    >>> obs, reward, terminated, truncated, info = env.step(int(obs[:, 0].argmax()))
    """

    def __init__(
        self,
        d: int | None = None,
        A: int | None = None,
        theta: Sequence[float] | None = None,
        theta_seed: int = 0,
        contexts: str = "sphere",
        noise: str = "bounded",
        sigma: float | None = None,
        n: int | None = None,
        c: float | None = None,
        dataset: str | None = None,
        horizon: int | None = DEFAULT_HORIZON,
        render_mode: str | None = None,
    ) -> None:
        problem = LinearContextualProblem(
            d=d,
            A=A,
            theta=theta,
            theta_seed=theta_seed,
            contexts=contexts,
            noise=noise,
            sigma=sigma,
            n=_hard_n(contexts, n, horizon),
            c=c,
            dataset=dataset,
        )
        super().__init__(problem, horizon=horizon, render_mode=render_mode)


class LinearContextualBanditVectorEnv(FamilyVectorEnv[LinearContextualProblem]):
    """``num_envs`` independent runs of :class:`LinearContextualBanditEnv` as a native vector env.

    Takes the keyword arguments of :class:`LinearContextualBanditEnv`, plus ``num_envs``,
    ``autoreset_mode`` and ``max_episode_steps`` (what ``gym.make_vec`` passes; used as the horizon
    when ``horizon`` is not given). Run *i* of ``reset(seed=s)`` equals
    ``LinearContextualBanditEnv().reset(seed=s, options={"first_run": i})``.
    """

    default_horizon = DEFAULT_HORIZON

    def make_problem(
        self, num_envs: int, horizon: int | None, **kwargs: Any
    ) -> LinearContextualProblem:
        kwargs["n"] = _hard_n(kwargs.get("contexts", "sphere"), kwargs.get("n"), horizon)
        return LinearContextualProblem(n_runs=num_envs, **kwargs)
