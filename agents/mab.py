"""Multi-armed bandit baselines and building blocks.

* :class:`UCB1`, :class:`RobustUCB` (truncated-mean UCB for heavy tails), :class:`EpsilonGreedy`:
  index policies, non-private.
* :class:`Uniform`: uniformly random actions, the reference every regret is compared with.
* :class:`BatchedElimination`: the per-run schedule of *batched successive elimination*, shared by
  Algorithm 1 of paper 1 (PRAE-R, PRAE-C, DPRSE in :mod:`privenv.agents.huber`) and DP-SE
  (:mod:`privenv.agents.dp_se`). Subclasses add only their estimator and elimination rule.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from privenv._validation import check_choice, check_int, check_probability, check_real
from privenv.agents.base import Agent


class Uniform(Agent):
    """Uniformly random actions, from the agent's per-run uniforms (run *i*'s actions do not
    depend on the batch): ⌊u·n⌋ with u ~ U[0, 1) — the reference every regret is compared with.

    Args:
        n_actions: actions per round (K or A).
        silos: ``None`` (one action per run) or M (one action per silo, shape ``(n_runs, M)``,
            drawn silo by silo from the run's stream).
        n_runs: number of runs.
    """

    name = "uniform"

    def __init__(self, n_actions: int, silos: int | None = None, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        self.n_actions = check_int("n_actions", n_actions, low=1)
        self.silos = None if silos is None else check_int("silos", silos, low=1)

    def reset_state(self) -> None:
        pass

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.silos is None:
            u = self.noise.uniform()
        else:
            u = np.stack([self.noise.uniform() for _ in range(self.silos)], axis=1)
        return np.minimum((u * self.n_actions).astype(np.int64), self.n_actions - 1)

    def observe_batch(self, actions: np.ndarray, rewards: np.ndarray,
                      observations: np.ndarray) -> None:
        self.t += 1


#: segment end of a segment that never ends (the survivor of an elimination, played to the end)
NEVER = np.iinfo(np.int64).max // 4


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


def _scale_from_moment(central_moment_bound: float | None, moment_order: float) -> float | None:
    """σ ≤ (E|X − μ|^k)^{1/k} (Lyapunov, k ≥ 2): a standard-deviation bound from a central one."""
    if central_moment_bound is None:
        return None
    v = check_real("central_moment_bound", central_moment_bound, low=0.0, low_open=True)
    k = check_real("moment_order", moment_order, low=2.0)
    return v ** (1.0 / k)


class UCB1(_IndexAgent):
    """UCB1 (Auer, Cesa-Bianchi, Fischer 2002): pull each arm once, then
    argmax_a μ̂_a + σ·√(2 log t / N_a). Non-private and not robust.

    Args:
        K: number of arms.
        sigma: reward scale multiplying the bonus (1 for rewards in [0, 1]). If not given, it is
            taken from ``central_moment_bound`` (below), else 1.
        central_moment_bound: a bound v on E|X − μ|^k (k = ``moment_order``); then
            σ = v^{1/k} ≥ the standard deviation (Lyapunov). :func:`privenv.agents.make` fills it
            from the env's public description: on ``HuberBandit-v0`` v = Var = 5, so σ = √5, the
            *inliers'* standard deviation. UCB1 treats it as a sub-Gaussian scale, which heavy
            tails and contamination violate — that is the point of this baseline.
        moment_order: k of ``central_moment_bound`` (2: a variance).
        n_runs: number of runs.
    """

    name = "ucb1"

    def __init__(
        self,
        K: int,
        sigma: float | None = None,
        central_moment_bound: float | None = None,
        moment_order: float = 2.0,
        n_runs: int = 1,
    ) -> None:
        super().__init__(K, n_runs)
        if sigma is None:
            sigma = _scale_from_moment(central_moment_bound, moment_order) or 1.0
        self.sigma = check_real("sigma", sigma, low=0.0, low_open=True)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.t < self.K:  # initialisation: one pull per arm
            return np.full(self.n_runs, self.t)
        means = self.sums / self.counts
        bonus = self.sigma * np.sqrt(2.0 * np.log(self.t) / self.counts)
        return np.argmax(means + bonus, axis=1)


class RobustUCB(_IndexAgent):
    """Robust UCB with the truncated empirical mean (Bubeck, Cesa-Bianchi, Lugosi 2013, *Bandits
    with heavy tail*, IEEE Trans. Inf. Theory 59(11); §II Lemma 1 and Proposition 1 with
    ε = 1, the second-moment version). Non-private; robust to heavy tails, not to contamination.

    If E[X²] ≤ u, the truncated mean of n samples at confidence δ,
    μ̂ = (1/n) Σ_{s≤n} X_s·1{|X_s| ≤ √(u·s / log(1/δ))}, satisfies μ̂ ≤ μ + 4√(u·log(1/δ)/n) with
    probability ≥ 1 − δ (Lemma 1). Robust UCB plays, at round t (δ = t⁻²),

        argmax_a  μ̂_{a,N_a,t} + 4·√(u · 2 log t / N_a)        (Proposition 1, c = 4², ε = 1)

    after one pull of each arm. The threshold of the s-th sample shrinks as t grows, so sample s
    counts while 2 log t ≤ u·s/X_s² and is dropped for good afterwards; the agent keeps a heap of
    these drop times (only samples that can be dropped before the horizon go in), which makes the
    exact anytime estimator O(1) per round instead of re-truncating all samples.

    Args:
        K: number of arms.
        raw_moment_bound: a bound on E|X|^k, k = ``moment_order`` (the Huber env's public value).
            The second-moment bound is u = raw_moment_bound^{2/k} (Lyapunov).
        moment_order: k ≥ 2.
        horizon: only used to skip drop times beyond it (``None``: keep all finite ones).
        n_runs: number of runs.
    """

    name = "robust-ucb"

    def __init__(
        self,
        K: int,
        raw_moment_bound: float = 1.0,
        moment_order: float = 2.0,
        horizon: int | None = None,
        n_runs: int = 1,
    ) -> None:
        super().__init__(K, n_runs)
        self.raw_moment_bound = check_real(
            "raw_moment_bound", raw_moment_bound, low=0.0, low_open=True
        )
        self.moment_order = check_real("moment_order", moment_order, low=2.0)
        self.u = self.raw_moment_bound ** (2.0 / self.moment_order)
        self.horizon = None if horizon is None else check_int("horizon", horizon, low=1)
        # a sample whose drop time c = u·s/(2X²) (in units of log t) exceeds this is never dropped
        self._log_t_max = math.log(self.horizon + 1) if self.horizon else 700.0

    def reset_state(self) -> None:
        super().reset_state()  # self.sums holds the truncated sums Σ X_s·1{s still counts}
        self._drops: list[tuple[float, int, int, float]] = []  # heap of (c, run, arm, X)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.t < self.K:  # initialisation: one pull per arm
            return np.full(self.n_runs, self.t)
        t = self.t + 1  # this round, 1-based
        log_t = math.log(t)
        while self._drops and self._drops[0][0] < log_t:  # 2 log t > u·s/X²: drop sample s
            _, run, arm, x = heapq.heappop(self._drops)
            self.sums[run, arm] -= x
        bonus = 4.0 * np.sqrt(self.u * 2.0 * log_t / self.counts)
        return np.argmax(self.sums / self.counts + bonus, axis=1)

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        runs = self._runs
        self.counts[runs, actions] += 1
        s = self.counts[runs, actions]  # this sample's index s for its arm
        x2 = rewards * rewards
        with np.errstate(divide="ignore"):
            c = np.where(x2 > 0, self.u * s / (2.0 * x2), np.inf)  # dropped once log t > c
        # a sample already too large at the next round never counts (log t only grows)
        keep = c >= math.log(self.t + 2)
        self.sums[runs, actions] += np.where(keep, rewards, 0.0)
        for i in np.flatnonzero(keep & (c < self._log_t_max)):
            heapq.heappush(self._drops, (float(c[i]), int(i), int(actions[i]), float(rewards[i])))
        self.t += 1


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
        random_arm = np.minimum((u / max(self.explore, 1e-300) * self.K).astype(np.int64),
                                self.K - 1)
        return np.where(explore, random_arm, greedy)


class BatchedElimination(Agent):
    """Batched successive elimination: the per-run schedule, written once.

    Time is cut into *epochs* (the "batches" τ of paper 1, the epochs e of DP-SE). In an epoch a
    run pulls each arm of its *plan* — normally its active arms — ``n`` times in a row. One such
    block of pulls of one arm is a **segment**. The papers pull "each active arm" without an
    order; ``arm_order="index"`` (default) goes through the arms in index order, ``"random"`` in
    a fresh uniformly random order per epoch and run (drawn from the agent's noise; no data).
    This matters when the horizon cuts an epoch short: with index order the last, unfinished
    epoch favours whichever arm has the smallest index. When a segment ends, the subclass
    turns its rewards into one estimate of that arm (one private release, then the rewards are
    forgotten); when the plan is done, the subclass eliminates arms and the next epoch starts.

    Runs eliminate different arms at different times, so every run has its own schedule: the state
    is per run (leading axis ``n_runs``) and a round costs a few numpy operations whatever the
    number of runs; Python work happens only at segment ends.

    Per-run state, readable by subclasses and tests:

    * ``epoch`` — current epoch (1, 2, …); ``active`` (n_runs, K) — arms not eliminated;
    * ``todo`` (n_runs, K) — arms still to be pulled in this epoch; ``arm`` — the arm pulled now;
    * ``seg_start``, ``seg_end`` — rounds (0-based) of the current segment: users
      ``seg_start … seg_end − 1``; ``seg_len`` — pulls per arm in this epoch;
    * ``estimates`` (n_runs, K) — the latest estimate of each arm.

    Subclasses write:

    * ``_plan_epoch(runs) -> (plan, n)``: the arms (bool (m, K)) and pulls per arm ((m,) ints,
      ``NEVER`` for a segment that lasts to the end) of the next epoch of ``runs``;
    * ``_begin_segment(runs)`` / ``_accumulate(rewards)``: reset and update what the estimator
      needs (a sum, or the segment's rewards);
    * ``_end_segment(runs)``: estimate ``self.arm[runs]`` from the segments that just ended (and
      charge the ledger);
    * ``_end_epoch(runs)``: eliminate (see :meth:`eliminate`).
    """

    ARM_ORDERS = ("index", "random")

    def __init__(self, K: int, horizon: int, n_runs: int = 1, arm_order: str = "index") -> None:
        super().__init__(n_runs)
        self.K = check_int("K", K, low=2)
        self.horizon = check_int("horizon", horizon, low=1)
        self.arm_order = check_choice("arm_order", arm_order, self.ARM_ORDERS)
        self._runs = np.arange(self.n_runs)

    # -- the schedule ---------------------------------------------------------------------------
    def reset_state(self) -> None:
        n, K = self.n_runs, self.K
        self.epoch = np.zeros(n, dtype=np.int64)
        self.active = np.ones((n, K), dtype=bool)
        self.todo = np.zeros((n, K), dtype=bool)
        self.arm = np.zeros(n, dtype=np.int64)
        self.seg_len = np.zeros(n, dtype=np.int64)
        self.seg_start = np.zeros(n, dtype=np.int64)
        self.seg_end = np.zeros(n, dtype=np.int64)
        self.estimates = np.full((n, K), np.nan)
        self._priority = np.tile(-np.arange(K, dtype=float), (n, 1))  # next arm: highest first
        self._start_epoch(self._runs)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        return self.arm.copy()

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        self._accumulate(np.asarray(rewards, dtype=float))
        self.t += 1
        ended = self.seg_end == self.t
        if ended.any():
            self._next_segment(np.flatnonzero(ended))

    def _next_segment(self, runs: np.ndarray) -> None:
        self._end_segment(runs)
        self.todo[runs, self.arm[runs]] = False
        more = self.todo[runs].any(axis=1)
        if more.any():
            self._start_segment(runs[more])
        done = runs[~more]
        if done.size:
            self._end_epoch(done)
            self._start_epoch(done)

    def _start_epoch(self, runs: np.ndarray) -> None:
        self.epoch[runs] += 1
        plan, n = self._plan_epoch(runs)
        self.todo[runs] = plan
        self.seg_len[runs] = n
        if self.arm_order == "random":
            assert self.noise is not None
            self._priority[runs] = np.stack([self.noise.uniforms(int(i), self.K) for i in runs])
        self._start_segment(runs)

    def _start_segment(self, runs: np.ndarray) -> None:
        # the next arm of the plan
        self.arm[runs] = np.argmax(np.where(self.todo[runs], self._priority[runs], -np.inf), axis=1)
        self.seg_start[runs] = self.t
        self.seg_end[runs] = np.minimum(self.t + self.seg_len[runs], NEVER)
        self._begin_segment(runs)

    def eliminate(self, runs: np.ndarray, threshold: np.ndarray) -> None:
        """Remove every active arm a of each run with max_b μ̃_b − μ̃_a > ``threshold`` (per run)."""
        mu = np.where(self.active[runs], self.estimates[runs], -np.inf)
        gap = mu.max(axis=1, keepdims=True) - mu
        self.active[runs] &= ~(gap > np.asarray(threshold, dtype=float).reshape(-1, 1))

    def charge_rounds(self, runs: np.ndarray, start: np.ndarray, stop: np.ndarray,
                      epsilon: float, label: str) -> None:
        """Charge ``epsilon`` to the users (rounds) ``start[j] … stop[j] − 1`` of each run
        ``runs[j]``: the rewards that entered one release (checking mode only)."""
        if self.ledger is None:
            return
        lengths = np.asarray(stop) - np.asarray(start)
        users = np.concatenate([np.arange(a, b) for a, b in zip(start, stop, strict=True)])
        self.charge(np.repeat(runs, lengths), users, epsilon, label=label)

    # -- what subclasses write ------------------------------------------------------------------
    def _plan_epoch(self, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _begin_segment(self, runs: np.ndarray) -> None:
        raise NotImplementedError

    def _accumulate(self, rewards: np.ndarray) -> None:
        raise NotImplementedError

    def _end_segment(self, runs: np.ndarray) -> None:
        raise NotImplementedError

    def _end_epoch(self, runs: np.ndarray) -> None:
        raise NotImplementedError
