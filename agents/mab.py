"""Multi-armed bandit baselines: UCB1, a robust truncated-mean UCB, ε-greedy."""

from __future__ import annotations

import numpy as np

from privenv._validation import check_int, check_probability
from privenv.agents.base import Agent


class _IndexAgent(Agent):
    """Shared state of index policies: pull counts N_a and reward sums S_a per run."""

    def __init__(self, K: int, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        self.K = check_int("K", K, low=2)
        self._runs = np.arange(self.n_runs)

    def reset_state(self) -> None:
        self.counts = np.zeros((self.n_runs, self.K), dtype=np.int64)
        self.sums = np.zeros((self.n_runs, self.K))

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        self.counts[self._runs, actions] += 1
        self.sums[self._runs, actions] += rewards
        self.t += 1


class UCB1(_IndexAgent):
    """UCB1 (Auer, Cesa-Bianchi, Fischer 2002): pull each arm once, then
    argmax_a μ̂_a + σ·√(2 log t / N_a). Non-private and not robust.

    Args:
        K: number of arms.
        sigma: reward scale multiplying the bonus (1 for rewards in [0, 1]; the Huber env's
            rewards have standard deviation √5 ≈ 2.24 around means up to 100).
        n_runs: number of runs.
    """

    name = "ucb1"

    def __init__(self, K: int, sigma: float = 1.0, n_runs: int = 1) -> None:
        super().__init__(K, n_runs)
        self.sigma = float(sigma)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.t < self.K:  # initialisation: one pull per arm
            return np.full(self.n_runs, self.t)
        means = self.sums / self.counts
        bonus = self.sigma * np.sqrt(2.0 * np.log(self.t) / self.counts)
        return np.argmax(means + bonus, axis=1)


class EpsilonGreedy(_IndexAgent):
    """ε-greedy (teaching baseline): with probability ε a uniform arm, else the best empirical
    mean (untried arms first). The exploration ε here is not a privacy budget.

    Args:
        K: number of arms.
        explore: exploration probability ε ∈ [0, 1].
        n_runs: number of runs.
    """

    name = "eps-greedy"

    def __init__(self, K: int, explore: float = 0.1, n_runs: int = 1) -> None:
        super().__init__(K, n_runs)
        self.explore = check_probability(explore, "explore")

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        assert self.noise is not None
        means = np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.inf)
        greedy = np.argmax(means, axis=1)
        u = self.noise.uniform()
        explore = u < self.explore
        # reuse the same uniform to pick the arm: given u < ε, u/ε is U(0,1)
        random_arm = np.minimum((u / max(self.explore, 1e-300) * self.K).astype(np.int64), self.K - 1)
        return np.where(explore, random_arm, greedy)
