"""Federated linear contextual bandits: M silos in lock-step (paper 2: Zhou, Chowdhury, *On
Differentially Private Federated Linear Contextual Bandits*; docs/guides/federated.md).

Each silo serves its own stream of users. At round t every silo m sees its own K×d feature matrix,
picks an action and gets its own reward y_{t,m} with E[y_{t,m}] = ⟨φ_{t,m}(a), θ*⟩ (θ* shared by
all silos). The default instance is paper 2's synthetic one (from the authors' public experiment
code): M = 100 silos, K = 100 fresh arm features per round and silo, d = 10,
φ = (g/‖g‖, 1)/√2 with g ~ N(0, I_{d−1}), θ* = (0.5·u, 0.5) with u a uniform unit vector,
Gaussian noise σ = 0.5; T = 10⁴ rounds. Features are generated on the fly, a few rounds at a time
per run (never an M×T×K×d array). ``contexts="dataset"`` splits a bundled classification data set
across the silos (each silo draws its users from its own disjoint part of the rows), reusing
:class:`~privenv.problems.linear.DatasetContexts`.

The batched :meth:`step` returns the **per-silo rewards**, shape ``(n_runs, M)`` — what federated
agents consume — and :meth:`gym_reward` sums them for the Gymnasium views. The group regret
Σ_m (max_a ⟨φ_{t,m}(a), θ*⟩ − ⟨φ_{t,m}(a_{t,m}), θ*⟩) is ``info["regret"]``; per-silo regrets and
expected rewards are in ``info`` too, per-silo rewards never (they are raw data).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from privenv._validation import check_choice, check_int
from privenv.problems.linear import (
    DatasetContexts,
    LinearFamilyProblem,
    check_theta,
    make_contexts,
)


class FederatedLinearProblem(LinearFamilyProblem):
    """M silos playing a linear contextual bandit in lock-step, for ``n_runs`` runs at once.

    Args:
        M: number of silos (agents), ≥ 1.
        K: actions (arm features) per round and silo (default 100; ``"hard"``: 2,
            ``"dataset"``: the number of classes).
        d: feature dimension (default 10; ``"disjoint"``: 10·K, ``"hard"``: 2, ``"dataset"``: from
            the data).
        theta: θ* ∈ ℝ^d with ‖θ*‖₂ ≤ 1 (default: paper 2's (0.5·u, 0.5), u drawn from
            ``theta_seed``).
        theta_seed: seed of the default θ* (instance-level).
        contexts: ``"paper2"`` (default) or any generator of
            :mod:`privenv.problems.linear` (``"sphere"``, ``"disjoint"``, ``"hard"``,
            ``"dataset"``).
        noise: ``"gaussian"`` (default, paper 2) or ``"bounded"`` (y = ±1).
        sigma: Gaussian noise standard deviation (0.5).
        n, c: parameters of the ``"hard"`` generator.
        dataset: bundled data set of ``contexts="dataset"`` (``"wine"`` by default).
        split_seed: seed of the random split of the data set's rows across silos.
        reward: what the Gymnasium views return as the reward: ``"sum"`` (default, a scalar per
            run: the sum over silos) or ``"silo"`` (the M per-silo rewards, shape ``(M,)`` per
            run — what federated agents consume; they request it through
            ``Agent.env_requirements``).
        n_runs: number of runs.
    """

    family = "federated"
    #: actions per silo and feature dimension when not given
    DEFAULT_K, DEFAULT_D = 100, 10

    @classmethod
    def sizes(cls, M: int = 100, K: int | None = None, d: int | None = None,
              contexts: str = "paper2", n: int | None = None, c: float | None = None,
              dataset: str | None = None, **_: Any) -> dict[str, int]:
        """M, and K and d as the constructor resolves them (:func:`make_contexts`)."""
        gen = make_contexts(contexts, K, d, default_A=cls.DEFAULT_K, default_d=cls.DEFAULT_D,
                            n=n, c=c, dataset=dataset, actions_name="K")
        return {"M": M, "K": gen.A, "d": gen.d}

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
        n_runs: int = 1,
    ) -> None:
        M = check_int("M", M, low=1)
        self.reward = check_choice("reward", reward, ("sum", "silo"))
        gen = make_contexts(
            contexts, K, d, default_A=self.DEFAULT_K, default_d=self.DEFAULT_D, n=n, c=c,
            dataset=dataset, actions_name="K",
        )
        split_seed = check_int("split_seed", split_seed, low=0)
        if isinstance(gen, DatasetContexts):
            gen = gen.split(M, split_seed)
        super().__init__(gen, check_theta(theta, gen, theta_seed), noise, sigma, M, n_runs)
        self.M, self.K = M, gen.A
        self.single_observation_space = spaces.Box(-1.0, 1.0, (M, self.K, self.d), np.float32)
        self.single_action_space = spaces.MultiDiscrete(np.full(M, self.K, dtype=np.int64))

    def check_actions(self, actions: Any) -> np.ndarray:
        """An integer array of shape ``(n_runs, M)`` with entries in [0, K − 1]."""
        a = np.asarray(actions)
        if a.shape != (self.n_runs, self.M) or a.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be an integer array of shape ({self.n_runs}, {self.M}), got "
                f"{a.dtype} array of shape {a.shape}"
            )
        if a.min() < 0 or a.max() >= self.K:
            bad = a[(a < 0) | (a >= self.K)][0]
            raise ValueError(f"action must be in [0, {self.K - 1}] for every silo, got {bad}")
        return a.astype(np.int64, copy=False)

    def gym_reward(self, rewards: np.ndarray) -> np.ndarray:
        """The Gymnasium reward: the sum of the M silos' rewards, or (``reward="silo"``) the
        per-silo rewards themselves, shape ``(n_runs, M)``."""
        return rewards.sum(axis=-1) if self.reward == "sum" else rewards

    def _info(self, means: np.ndarray, chosen: np.ndarray, regret: np.ndarray) -> dict[str, Any]:
        return {
            "regret": regret.sum(axis=-1),
            "expected_reward": chosen.sum(axis=-1),
            "silo_regret": regret,
            "silo_expected_reward": chosen,
            "optimal_action": means.argmax(axis=-1),
            "expected_rewards": means,
        }

    def public_info(self) -> dict[str, Any]:
        """Shapes and public bounds (never θ*): M, K, d, ‖φ‖ ≤ 1, ‖θ*‖ ≤ 1, the noise and its
        sub-Gaussian scale σ; for a data set, the sampler real data calls for."""
        return {
            **self.data_info(),
            "M": self.M,
            "K": self.K,
            "d": self.d,
            "contexts": self.contexts.name,
            "noise": self.noise,
            "sigma": self.sigma if self.noise == "gaussian" else 1.0,
            "reward_bound": 1.0 if self.noise == "bounded" else None,
            "feature_bound": 1.0,
            "theta_bound": 1.0,
        }
