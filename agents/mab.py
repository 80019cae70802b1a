"""Multi-armed bandit baselines and building blocks.

* :class:`UCB1`, :class:`RobustUCB` (truncated-mean UCB for heavy tails), :class:`EpsilonGreedy`:
  index policies, non-private, written as compiled kernels over one run
  (:mod:`privenv.agents.kernel`): :func:`index_act` / :func:`index_observe` with each policy's
  :func:`index_choice` and :func:`index_update`.
* :class:`Uniform`: uniformly random actions, the reference every regret is compared with.
* :class:`BatchedElimination`: the per-run schedule of *batched successive elimination*, shared by
  Algorithm 1 of paper 1 (PRAE-R, PRAE-C, DPRSE in :mod:`privenv.agents.huber`) and DP-SE
  (:mod:`privenv.agents.dp_se`), as a kernel (:func:`elimination_act`,
  :func:`elimination_observe`). Each estimator adds only its ingredients (the plan of an epoch,
  what a segment accumulates, its release, the elimination rule).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv.agents.base import Agent
from privenv.agents.kernel import (
    KernelAgent,
    Releases,
    agent_act,
    agent_init,
    agent_observe,
    agent_ready,
    charge_recorded,
)
from privenv.parameters import Integer, Options, Param, Real
from privenv.seeding import NoiseView, take_uniform


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
    families = ("huber", "linear", "federated", "bernoulli")
    family_notes = {"bai": "uniform play has no stopping rule, so it would pull until the sample "
                           "budget; use a BAI agent (ttucb, dp-se, adap-tt, …)"}
    parameters = {
        "n_actions": Param(Integer(low=1)),
        "silos": Param(Integer(low=1, none=True)),
    }

    n_actions: int
    silos: int | None

    def __init__(self, n_actions: int, silos: int | None = None, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    @classmethod
    def problem_values(cls, info: dict[str, Any]) -> dict[str, Any]:
        """K arms, A actions, or K actions for each of M silos."""
        if "M" in info:
            return {"n_actions": info["K"], "silos": info["M"]}
        return {"n_actions": info["A"] if "A" in info else info["K"]}

    def reset_state(self) -> None:
        pass

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.silos is None:
            u = self.run_noise.uniform()
        else:
            u = np.stack([self.run_noise.uniform() for _ in range(self.silos)], axis=1)
        return np.minimum((u * self.n_actions).astype(np.int64), self.n_actions - 1)

    def observe_batch(self, actions: np.ndarray, rewards: np.ndarray,
                      observations: np.ndarray) -> None:
        self.t += 1


# =================================================================================================
# Index policies: UCB1, ε-greedy, Robust UCB
# =================================================================================================


class IndexState(NamedTuple):
    """Per-run state of an index policy: ``t`` (rounds observed), pull counts N_a and reward sums
    S_a (Robust UCB: the truncated sums), and Robust UCB's heap of drop times (``heap_c``,
    ``heap_arm``, ``heap_x``, ``heap_size``; capacity 0 for the other policies)."""

    t: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    heap_c: np.ndarray
    heap_arm: np.ndarray
    heap_x: np.ndarray
    heap_size: np.ndarray

    @classmethod
    def start(cls, n_runs: int, K: int, heap: int = 0) -> IndexState:
        return cls(np.zeros(n_runs, np.int64), np.zeros((n_runs, K), np.int64),
                   np.zeros((n_runs, K)), np.zeros((n_runs, heap)),
                   np.zeros((n_runs, heap), np.int64), np.zeros((n_runs, heap)),
                   np.zeros(n_runs, np.int64))


@generic
def index_choice(p: Any, s: IndexState, noise: NoiseView, run: int) -> int:
    """The arm a policy pulls in ``run`` now."""
    raise NotImplementedError


@generic
def index_update(p: Any, s: IndexState, run: int, arm: int, reward: float) -> None:
    """Take in the reward of ``arm`` (its count is already updated)."""
    raise NotImplementedError


@agent_act.register(IndexState)
@jit(inline="always")
def index_act(s: IndexState, p: Any, noise: NoiseView, run: int) -> int:
    return index_choice(p, s, noise, run)


@agent_observe.register(IndexState)
@jit(inline="always")
def index_observe(s: IndexState, p: Any, noise: NoiseView, run: int, action: int,
                  value: float) -> None:
    s.counts[run, action] += 1
    index_update(p, s, run, action, value)
    s.t[run] += 1


@agent_ready.register(IndexState)
@jit
def index_ready(s: IndexState, p: Any, run: int) -> int:
    """Robust UCB needs room for one more drop time in its heap (code 1: grow it)."""
    return 1 if s.heap_c.shape[1] > 0 and s.heap_size[run] == s.heap_c.shape[1] else 0


class _IndexAgent(KernelAgent):
    """Shared shell of index policies: pull counts N_a and reward sums S_a per run."""

    State = IndexState
    families: ClassVar[tuple[str, ...]] = ("huber", "bernoulli")
    parameters = {"K": Param(Integer(low=2), problem="K")}

    def new_state(self) -> IndexState:
        return IndexState.start(self.n_runs, self.K)


#: k ≥ 2 of a moment bound E|X|^k or E|X − μ|^k
MOMENT_ORDER = Param(Real(2.0), assumes="moment_order")


class UCB1Params(NamedTuple):
    K: int
    sigma: float
    words_per_step: int = 0


@index_choice.register(UCB1Params)
@jit
def _ucb1_choice(p: UCB1Params, s: IndexState, noise: NoiseView, run: int) -> int:
    """One pull per arm, then argmax_a μ̂_a + σ·√(2 log t / N_a), t = rounds played so far."""
    if s.t[run] < p.K:
        return s.t[run]
    log_t = np.log(s.t[run])
    best, index = 0, -np.inf
    for a in range(p.K):
        n = s.counts[run, a]
        value = s.sums[run, a] / n + p.sigma * np.sqrt(2.0 * log_t / n)
        if value > index:
            best, index = a, value
    return best


@index_update.register(UCB1Params)
@jit
def _sum_update(p: Any, s: IndexState, run: int, arm: int, reward: float) -> None:
    s.sums[run, arm] += reward


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
    sigma: float  # (the constructor resolves None, set_params' value, from the moment bound)
    parameters = {
        **_IndexAgent.parameters,
        "sigma": Param(Real(0.0, low_open=True, none=True)),
        "central_moment_bound": Param(Real(0.0, low_open=True, none=True),
                                      assumes="central_moment_bound"),
        "moment_order": MOMENT_ORDER,
    }

    def __init__(
        self,
        K: int,
        sigma: float | None = None,
        central_moment_bound: float | None = None,
        moment_order: float = 2.0,
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        if self.sigma is None:  # σ ≤ (E|X − μ|^k)^{1/k} (Lyapunov, k ≥ 2)
            v = self.central_moment_bound
            self.sigma = 1.0 if v is None else v ** (1.0 / self.moment_order)

    def kernel_params(self) -> UCB1Params:
        return UCB1Params(K=self.K, sigma=self.sigma)


class RobustUCBParams(NamedTuple):
    K: int
    u: float
    log_t_max: float
    words_per_step: int = 0


@jit
def _heap_less(s: IndexState, run: int, i: int, j: int) -> bool:
    """Entry i before entry j: the order of the tuples (c, arm, x)."""
    ci, cj = s.heap_c[run, i], s.heap_c[run, j]
    if ci != cj:
        return ci < cj
    ai, aj = s.heap_arm[run, i], s.heap_arm[run, j]
    if ai != aj:
        return ai < aj
    return s.heap_x[run, i] < s.heap_x[run, j]


@jit
def _heap_swap(s: IndexState, run: int, i: int, j: int) -> None:
    s.heap_c[run, i], s.heap_c[run, j] = s.heap_c[run, j], s.heap_c[run, i]
    s.heap_arm[run, i], s.heap_arm[run, j] = s.heap_arm[run, j], s.heap_arm[run, i]
    s.heap_x[run, i], s.heap_x[run, j] = s.heap_x[run, j], s.heap_x[run, i]


@jit
def _heap_push(s: IndexState, run: int, c: float, arm: int, x: float) -> None:
    i = s.heap_size[run]
    s.heap_size[run] = i + 1
    s.heap_c[run, i], s.heap_arm[run, i], s.heap_x[run, i] = c, arm, x
    while i > 0 and _heap_less(s, run, i, (i - 1) // 2):
        _heap_swap(s, run, i, (i - 1) // 2)
        i = (i - 1) // 2


@jit
def _heap_pop(s: IndexState, run: int) -> None:
    """Remove the first entry (the caller has read it)."""
    n = s.heap_size[run] - 1
    s.heap_size[run] = n
    _heap_swap(s, run, 0, n)
    i = 0
    while True:
        first, left, right = i, 2 * i + 1, 2 * i + 2
        if left < n and _heap_less(s, run, left, first):
            first = left
        if right < n and _heap_less(s, run, right, first):
            first = right
        if first == i:
            return
        _heap_swap(s, run, i, first)
        i = first


@index_choice.register(RobustUCBParams)
@jit(inline="always")
def _robust_choice(p: RobustUCBParams, s: IndexState, noise: NoiseView, run: int) -> int:
    """One pull per arm; then drop the samples whose threshold has fallen below them
    (2 log t > u·s/X_s²) and play argmax_a μ̂_a + 4·√(u · 2 log t / N_a) (Proposition 1,
    c = 4², ε = 1)."""
    if s.t[run] < p.K:
        return s.t[run]
    log_t = math.log(s.t[run] + 1)  # this round, 1-based
    while s.heap_size[run] > 0 and s.heap_c[run, 0] < log_t:
        s.sums[run, s.heap_arm[run, 0]] -= s.heap_x[run, 0]
        _heap_pop(s, run)
    best, index = 0, -np.inf
    for a in range(p.K):
        n = s.counts[run, a]
        value = s.sums[run, a] / n + 4.0 * np.sqrt(p.u * 2.0 * log_t / n)
        if value > index:
            best, index = a, value
    return best


@index_update.register(RobustUCBParams)
@jit
def _robust_update(p: RobustUCBParams, s: IndexState, run: int, arm: int,
                   reward: float) -> None:
    """Sample s of ``arm`` counts while 2 log t ≤ u·s/X², i.e. until log t exceeds
    c = u·s/(2X²); a sample already too large at the next round never counts."""
    n = s.counts[run, arm]  # this sample's index s
    x2 = reward * reward
    c = p.u * n / (2.0 * x2) if x2 > 0 else np.inf
    if c >= math.log(s.t[run] + 2):
        s.sums[run, arm] += reward
        if c < p.log_t_max:  # it will be dropped before the horizon
            _heap_push(s, run, c, arm, reward)


class RobustUCB(_IndexAgent):
    r"""Robust UCB with the truncated empirical mean (Bubeck, Cesa-Bianchi, Lugosi 2013, *Bandits
    with heavy tail*, IEEE Trans. Inf. Theory 59(11); §II Lemma 1 and Proposition 1 with
    ε = 1, the second-moment version). Non-private; robust to heavy tails, not to contamination.

    If E[X²] ≤ u, the truncated mean of n samples at confidence δ,
    μ̂ = (1/n) Σ_{s≤n} X_s·1{\|X_s\| ≤ √(u·s / log(1/δ))}, satisfies μ̂ ≤ μ + 4√(u·log(1/δ)/n) with
    probability ≥ 1 − δ (Lemma 1). Robust UCB plays, at round t (δ = t⁻²),

        argmax_a  μ̂_{a,N_a,t} + 4·√(u · 2 log t / N_a)        (Proposition 1, c = 4², ε = 1)

    after one pull of each arm. The threshold of the s-th sample shrinks as t grows, so sample s
    counts while 2 log t ≤ u·s/X_s² and is dropped for good afterwards; the agent keeps a heap of
    these drop times per run (only samples that can be dropped before the horizon go in), which
    makes the exact anytime estimator O(log n) per round instead of re-truncating all samples.

    Args:
        K: number of arms.
        raw_moment_bound: a bound on E|X|^k, k = ``moment_order`` (the Huber env's public value).
            The second-moment bound is u = raw_moment_bound^{2/k} (Lyapunov).
        moment_order: k ≥ 2.
        horizon: only used to skip drop times beyond it (``None``: keep all finite ones).
        n_runs: number of runs.
    """

    name = "robust-ucb"
    parameters = {
        **_IndexAgent.parameters,
        "raw_moment_bound": Param(Real(0.0, low_open=True), assumes="raw_moment_bound"),
        "moment_order": MOMENT_ORDER,
        "horizon": Param(Integer(low=1, none=True), assumes="horizon"),
    }

    def __init__(
        self,
        K: int,
        raw_moment_bound: float = 1.0,
        moment_order: float = 2.0,
        horizon: int | None = None,
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        self.u = self.raw_moment_bound ** (2.0 / self.moment_order)
        # a sample whose drop time c = u·s/(2X²) (in units of log t) exceeds this is never dropped
        self._log_t_max = math.log(self.horizon + 1) if self.horizon else 700.0

    def kernel_params(self) -> RobustUCBParams:
        return RobustUCBParams(K=self.K, u=self.u, log_t_max=self._log_t_max)

    def new_state(self) -> IndexState:
        return IndexState.start(self.n_runs, self.K, heap=16)

    def serve(self, run: int, code: int) -> None:
        """Double the heaps' capacity (one run's heap is full)."""
        s = self.state
        if s.heap_size[run] < s.heap_c.shape[1]:  # (grown already for another run)
            return
        cap = 2 * s.heap_c.shape[1]
        grown = [np.zeros((self.n_runs, cap), a.dtype) for a in (s.heap_c, s.heap_arm, s.heap_x)]
        for new, old in zip(grown, (s.heap_c, s.heap_arm, s.heap_x), strict=True):
            new[:, : old.shape[1]] = old
        self.state = s._replace(heap_c=grown[0], heap_arm=grown[1], heap_x=grown[2])


class EpsilonGreedyParams(NamedTuple):
    K: int
    explore: float
    words_per_step: int = 0


@index_choice.register(EpsilonGreedyParams)
@jit
def _greedy_choice(p: EpsilonGreedyParams, s: IndexState, noise: NoiseView, run: int) -> int:
    """One uniform u every round: a uniform arm if u < ε, else the best empirical mean."""
    u = take_uniform(noise, run)
    if u < p.explore:  # given u < ε, u/ε is U(0, 1): the same uniform picks the arm
        return min(int(u / max(p.explore, 1e-300) * p.K), p.K - 1)
    best, index = 0, -np.inf  # the best empirical mean (untried arms first)
    for a in range(p.K):
        n = s.counts[run, a]
        value = s.sums[run, a] / max(n, 1) if n > 0 else np.inf
        if value > index:
            best, index = a, value
    return best


index_update.register(EpsilonGreedyParams)(_sum_update)


class EpsilonGreedy(_IndexAgent):
    """ε-greedy (teaching baseline): with probability ε a uniform arm, else the best empirical
    mean (untried arms first). The exploration ε here is not a privacy budget.

    Args:
        K: number of arms.
        explore: exploration probability ε ∈ [0, 1].
        n_runs: number of runs.
    """

    name = "eps-greedy"
    parameters = {**_IndexAgent.parameters, "explore": Param(Real(0.0, 1.0))}

    def __init__(self, K: int, explore: float = 0.1, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> EpsilonGreedyParams:
        return EpsilonGreedyParams(K=self.K, explore=self.explore)


# =================================================================================================
# Batched successive elimination: the per-run schedule, written once
# =================================================================================================

#: segment end of a segment that never ends (the survivor of an elimination, played to the end)
NEVER = np.iinfo(np.int64).max // 4


class ElimState(NamedTuple):
    """Per-run state of batched successive elimination (one row per run; see
    :class:`BatchedElimination`). The estimators use: ``seg_sum`` (DP-SE's sum of the
    segment's mapped rewards), ``buf`` (paper 1's PRM: the segment's rewards), ``delta_tau``
    (δ_τ of the batch), ``cum_count`` (an audit hook's cumulative counts), and DP-SE's
    best-arm-identification version ``stopped``, ``recommendation``, ``stopping_time``;
    ``releases`` records the step's releases in checking mode."""

    t: np.ndarray
    epoch: np.ndarray
    active: np.ndarray
    todo: np.ndarray
    arm: np.ndarray
    seg_len: np.ndarray
    seg_start: np.ndarray
    seg_end: np.ndarray
    acc_start: np.ndarray
    estimates: np.ndarray
    priority: np.ndarray
    n_active: np.ndarray
    delta_tau: np.ndarray
    seg_sum: np.ndarray
    buf: np.ndarray
    stopped: np.ndarray
    recommendation: np.ndarray
    stopping_time: np.ndarray
    cum_count: np.ndarray
    releases: Releases

    @classmethod
    def start(cls, n_runs: int, K: int, buffer: int = 0, n_users: int = 0) -> ElimState:
        i8, shape = np.int64, (n_runs, K)
        return cls(np.zeros(n_runs, i8), np.zeros(n_runs, i8), np.ones(shape, bool),
                   np.zeros(shape, bool), np.zeros(n_runs, i8), np.zeros(n_runs, i8),
                   np.zeros(n_runs, i8), np.zeros(n_runs, i8), np.zeros(n_runs, i8),
                   np.full(shape, np.nan), np.tile(-np.arange(K, dtype=float), (n_runs, 1)),
                   np.full(n_runs, K, i8), np.zeros(n_runs), np.zeros(n_runs),
                   np.zeros((n_runs, buffer)), np.zeros(n_runs, bool), np.full(n_runs, -1, i8),
                   np.zeros(n_runs, i8), np.zeros(shape, i8), Releases.make(n_runs, n_users))


@generic
def plan_epoch(p: Any, s: ElimState, noise: NoiseView, run: int) -> int:
    """The next epoch of ``run``: set ``s.todo[run]`` (the arms to pull) and return the pulls per
    arm (``NEVER`` for a segment that lasts to the end)."""
    raise NotImplementedError


@generic
def begin_segment(p: Any, s: ElimState, run: int) -> None:
    """Reset what the estimator accumulates over a segment."""
    raise NotImplementedError


@generic
def accumulate(p: Any, s: ElimState, run: int, reward: float) -> None:
    """Take in the reward of the pull ``s.t[run]`` (of the segment's arm)."""
    raise NotImplementedError


@generic
def end_segment(p: Any, s: ElimState, noise: NoiseView, run: int) -> None:
    """Estimate ``s.arm[run]`` from the segment that just ended (one private release)."""
    raise NotImplementedError


@generic
def end_epoch(p: Any, s: ElimState, run: int) -> None:
    """Eliminate arms at the end of an epoch (see :func:`eliminate`)."""
    raise NotImplementedError


@generic
def elimination_action(p: Any, s: ElimState, noise: NoiseView, run: int) -> int:
    """The action of ``run`` (normally the segment's arm)."""
    raise NotImplementedError


@generic
def elimination_ready(p: Any, s: ElimState, run: int) -> int:
    """0, or a code for the agent's ``serve`` (e.g. a buffer to grow) before the next step."""
    raise NotImplementedError


@jit
def _start_epoch(p: Any, s: ElimState, noise: NoiseView, run: int) -> None:
    s.epoch[run] += 1
    s.seg_len[run] = plan_epoch(p, s, noise, run)
    if p.random_order:  # a fresh uniformly random order of the plan's arms
        for a in range(p.K):
            s.priority[run, a] = take_uniform(noise, run)
    _start_segment(p, s, run)


@jit
def _start_segment(p: Any, s: ElimState, run: int) -> None:
    arm, best = 0, -np.inf  # the next arm of the plan: the highest priority still to do
    for a in range(p.K):
        if s.todo[run, a] and s.priority[run, a] > best:
            arm, best = a, s.priority[run, a]
    s.arm[run] = arm
    s.seg_start[run] = s.t[run]
    s.seg_end[run] = min(s.t[run] + s.seg_len[run], NEVER)
    if p.forget:  # the next release uses this segment's rewards only
        s.acc_start[run] = s.t[run]
    begin_segment(p, s, run)


@jit
def _next_segment(p: Any, s: ElimState, noise: NoiseView, run: int) -> None:
    end_segment(p, s, noise, run)
    s.todo[run, s.arm[run]] = False
    for a in range(p.K):
        if s.todo[run, a]:
            _start_segment(p, s, run)
            return
    end_epoch(p, s, run)
    _start_epoch(p, s, noise, run)


@jit
def eliminate(p: Any, s: ElimState, run: int, threshold: float) -> None:
    """Remove every active arm a with max_b μ̃_b − μ̃_a > ``threshold``."""
    top = -np.inf
    for a in range(p.K):
        if s.active[run, a]:
            e = s.estimates[run, a]
            if e != e:  # a NaN estimate: numpy's max is NaN, so nothing is removed
                return
            top = max(top, e)
    for a in range(p.K):
        if s.active[run, a] and top - s.estimates[run, a] > threshold:
            s.active[run, a] = False


@jit
def first_active(s: ElimState, run: int) -> int:
    for a in range(s.active.shape[1]):
        if s.active[run, a]:
            return a
    return 0


@agent_init.register(ElimState)
@jit
def elimination_init(s: ElimState, p: Any, noise: NoiseView, run: int) -> None:
    _start_epoch(p, s, noise, run)


@agent_act.register(ElimState)
@jit(inline="always")
def elimination_act(s: ElimState, p: Any, noise: NoiseView, run: int) -> int:
    return elimination_action(p, s, noise, run)


@agent_observe.register(ElimState)
@jit(inline="always")
def elimination_observe(s: ElimState, p: Any, noise: NoiseView, run: int, action: int,
                        value: float) -> None:
    accumulate(p, s, run, value if action < p.K else 0.0)  # a stop carries no sample
    s.t[run] += 1
    if s.seg_end[run] == s.t[run]:
        _next_segment(p, s, noise, run)


@agent_ready.register(ElimState)
@jit
def _elimination_ready(s: ElimState, p: Any, run: int) -> int:
    return elimination_ready(p, s, run)


class BatchedElimination(KernelAgent):
    """Batched successive elimination: the per-run schedule, written once.

    Time is cut into *epochs* (the "batches" τ of paper 1, the epochs e of DP-SE). In an epoch a
    run pulls each arm of its *plan* — normally its active arms — ``n`` times in a row. One such
    block of pulls of one arm is a **segment**. The papers pull "each active arm" without an
    order; ``arm_order="index"`` (default) goes through the arms in index order, ``"random"`` in
    a fresh uniformly random order per epoch and run (drawn from the agent's noise; no data).
    This matters when the horizon cuts an epoch short: with index order the last, unfinished
    epoch favours whichever arm has the smallest index. When a segment ends, the estimator turns
    its rewards into one estimate of that arm (one private release, then the rewards are
    forgotten); when the plan is done, it eliminates arms and the next epoch starts.

    Runs eliminate different arms at different times, so every run has its own schedule: the state
    is per run (:class:`ElimState`, read as ``agent.epoch``, ``agent.active`` etc.):

    * ``epoch`` — current epoch (1, 2, …); ``active`` (n_runs, K) — arms not eliminated;
    * ``todo`` (n_runs, K) — arms still to be pulled in this epoch; ``arm`` — the arm pulled now;
    * ``seg_start``, ``seg_end`` — rounds (0-based) of the current segment: users
      ``seg_start … seg_end − 1``; ``seg_len`` — pulls per arm in this epoch;
    * ``estimates`` (n_runs, K) — the latest estimate of each arm.

    An estimator gives a parameter class with the fields ``K``, ``random_order``, ``forget``,
    ``words_per_step`` and registers its ingredients for it:
    :func:`plan_epoch`, :func:`begin_segment`, :func:`accumulate`, :func:`end_segment`,
    :func:`end_epoch`, :func:`elimination_action`, :func:`elimination_ready`.

    Audit hooks (class attributes; tests and ``privenv audit`` use them to show that the checks
    can fail): ``forget = False`` makes every release reuse all the run's earlier rewards, and
    ``noise_multiplier`` scales every noise scale (1 in every real agent).
    """

    ARM_ORDERS = ("index", "random")
    State = ElimState
    #: audit hook — ``False`` makes each release use every reward since the run started
    forget: bool = True
    #: audit hook — multiplies every Laplace scale (1 in every real agent)
    noise_multiplier: float = 1.0
    #: labels of the releases recorded in checking mode (index = :attr:`Releases.label`)
    RELEASE_LABELS: tuple[str, ...] = ()

    parameters = {
        "K": Param(Integer(low=2), problem="K"),
        "horizon": Param(Integer(low=1), assumes="horizon"),
        "arm_order": Param(Options(ARM_ORDERS)),
    }

    def buffer_size(self) -> int:
        """Rewards a segment keeps (0 unless the estimator needs them)."""
        return 0

    def new_state(self) -> ElimState:
        users = 0 if self.ledger is None else self.ledger.n_users
        return ElimState.start(self.n_runs, self.K, self.buffer_size(), users)

    def charge_releases(self) -> None:
        charge_recorded(self, self.state.releases, self.RELEASE_LABELS)

    def eliminate(self, runs: np.ndarray, threshold: np.ndarray | float) -> None:
        """Apply the kernel's elimination rule (:func:`eliminate`) to ``runs``, with one
        threshold per run."""
        threshold = np.broadcast_to(np.asarray(threshold, dtype=float), np.shape(runs))
        for run, thr in zip(np.asarray(runs), threshold, strict=True):
            eliminate(self.params, self.state, int(run), float(thr))
