"""``FederatedLinearBandit-v0``: M silos playing a linear contextual bandit in lock-step
(paper 2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privenv.envs import ENV_IDS
from privenv.envs.base import FamilyVectorEnv, ProblemEnv
from privenv.envs.linear import _hard_n
from privenv.problems.federated import FederatedLinearProblem

DEFAULT_HORIZON = ENV_IDS["FederatedLinearBandit-v0"].horizon


class FederatedLinearBanditEnv(ProblemEnv[FederatedLinearProblem]):
    """M silos, each serving its own users, play a linear contextual bandit in lock-step.

    ## Description
    Paper 2 (Zhou, Chowdhury, *On Differentially Private Federated Linear Contextual Bandits*, ICLR
    2024; the instance: docs/guides/federated.md). At round t every silo m sees its own K×d feature
    matrix (fresh arm features for its current user), picks an action and gets its own reward with
    mean ⟨φ_{t,m}(a), θ*⟩. Default: paper 2's synthetic instance — M = 100, K = 100, d = 10,
    features (g/‖g‖, 1)/√2 with g ~ N(0, I_{d−1}), θ* = (0.5·u, 0.5) for a random unit vector u,
    Gaussian noise σ = 0.5, T = 10⁴ rounds. ``contexts="dataset"`` splits a bundled classification
    data set across the silos (paper 2's real-data experiment used MSLR-WEB10K, which is not
    bundled; see :mod:`privenv.problems.linear`). Features are generated on the fly; one episode is
    one federated run.

    ## Action Space
    ``MultiDiscrete([K] * M)``: one action per silo.

    ## Observation Space
    ``Box(-1, 1, (M, K, d), float32)``: every silo's feature matrix for this round.

    ## Rewards
    The sum over silos of the silos' rewards (a Python float). With ``reward="silo"`` the reward is
    the array of the M silos' rewards instead (what federated agents consume; they ask for it
    through ``Agent.env_requirements``; the vector view then returns shape ``(num_envs, M)``). That
    mode is not a standard single-agent reward: Gymnasium's and SB3's checkers expect ``"sum"``.
    ``info``: ``regret`` (group pseudo-regret of the round, summed over silos), ``expected_reward``
    (summed), ``silo_regret`` and ``silo_expected_reward`` (shape ``(M,)``), ``optimal_action``
    (``(M,)``) and ``expected_rewards`` (``(M, K)``) — never a realized reward.

    ## Episode End
    Truncated at ``horizon`` (T); never terminated.

    ## Arguments
    ``M``, ``K``, ``d``, ``theta``, ``theta_seed``, ``contexts`` (``"paper2"``, ``"sphere"``,
    ``"disjoint"``, ``"hard"``, ``"dataset"``), ``noise`` (``"gaussian"``, ``"bounded"``),
    ``sigma`` (0.5), ``n``, ``c``, ``dataset``, ``split_seed``, ``reward`` (``"sum"``,
    ``"silo"``) — see
    :class:`~privenv.problems.federated.FederatedLinearProblem` — and ``horizon``,
    ``render_mode``.

    ## Privacy
    Each silo's users' contexts and rewards are that silo's private data. The bare env gives the
    learner everything; privacy (silo-level local DP, shuffle DP) is the federated agent's
    protocol. ``info`` never carries realized rewards; ``public_info()`` never carries θ*.
    Rendering (``render_mode="ansi"`` or ``"rgb_array"``) pools all silos: pulls and mean
    observed (raw) reward per action index and the group cumulative regret — every silo's raw
    data shown to whoever watches (:mod:`privenv.envs.render`).

    ## Examples
    >>> import gymnasium as gym, privenv
    >>> env = gym.make("FederatedLinearBandit-v0", M=4, K=5, d=3)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (4, 5, 3)
    >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    >>> info["silo_regret"].shape
    (4,)
    """

    def __init__(
        self,
        M: int = 100,
        K: int | None = None,
        d: int | None = None,
        theta: Sequence[float] | None = None,
        theta_seed: int = 0,
        contexts: str = "paper2",
        noise: str = "gaussian",
        sigma: float | None = None,
        n: int | None = None,
        c: float | None = None,
        dataset: str | None = None,
        split_seed: int = 0,
        reward: str = "sum",
        horizon: int | None = DEFAULT_HORIZON,
        render_mode: str | None = None,
    ) -> None:
        problem = FederatedLinearProblem(
            M=M,
            K=K,
            d=d,
            theta=theta,
            theta_seed=theta_seed,
            contexts=contexts,
            noise=noise,
            sigma=sigma,
            n=_hard_n(contexts, n, horizon),
            c=c,
            dataset=dataset,
            split_seed=split_seed,
            reward=reward,
        )
        super().__init__(problem, horizon=horizon, render_mode=render_mode)


class FederatedLinearBanditVectorEnv(FamilyVectorEnv[FederatedLinearProblem]):
    """``num_envs`` independent runs of :class:`FederatedLinearBanditEnv` as a native vector env.

    Takes the keyword arguments of :class:`FederatedLinearBanditEnv`, plus ``num_envs``,
    ``autoreset_mode`` and ``max_episode_steps`` (what ``gym.make_vec`` passes; used as the horizon
    when ``horizon`` is not given). Rewards are summed over silos (shape ``(num_envs,)``), or per
    silo (``(num_envs, M)``) with ``reward="silo"``. Run *i*
    of ``reset(seed=s)`` equals ``FederatedLinearBanditEnv().reset(seed=s, options={"first_run":
    i})``.
    """

    default_horizon = DEFAULT_HORIZON

    def make_problem(
        self, num_envs: int, horizon: int | None, **kwargs: Any
    ) -> FederatedLinearProblem:
        kwargs["n"] = _hard_n(kwargs.get("contexts", "paper2"), kwargs.get("n"), horizon)
        return FederatedLinearProblem(n_runs=num_envs, **kwargs)
