"""ε-global-DP UCB on continual-release private sums: DP-UCB with the tree (binary) mechanism
(Mishra & Thakurta 2015) and with the hybrid mechanism (Tossou & Dimitrakakis 2016).

Both are reconstructions from secondary descriptions (docs/guides/zoo.md says what we could read
and every choice). Every arm keeps a private running sum S̃_a of its rewards, refreshed at every
pull of the arm by a continual-counting mechanism over **that arm's** reward sequence
(:mod:`privenv.privacy.continual`); after one pull per arm the agent plays

    argmax_a  S̃_a/N_a + √(2 log t/N_a) + w_t(a)/N_a,

where w_t(a) bounds the mechanism's noise in S̃_a with probability ≥ 1 − t⁻⁴
(:func:`~privenv.privacy.continual.laplace_sum_width` on the Laplace noises that S̃_a sums).

* ``dp-ucb`` (:class:`DPUCB`): the binary mechanism over the arm's at most T rewards,
  L = ⌊log₂T⌋ + 1 levels, node noise Lap(L/ε): each reward is in ≤ L nodes.
* ``dp-ucb-hybrid`` (:class:`DPUCBHybrid`): the hybrid mechanism of Chan, Shi & Song (2011): when
  the arm's count reaches 2^k, a *logarithmic* release adds the exact sum of the rewards since
  the last power of two plus Lap(2/ε) to a running total; between 2^k and 2^{k+1} a fresh binary
  mechanism of max{k, 1} levels with node noise Lap(2·max{k, 1}/ε) counts the rewards of the
  segment. S̃_a = total + the segment's private prefix. Each reward enters one logarithmic release
  (ε/2) and ≤ max{k, 1} nodes of its segment (ε/2). Anytime: no horizon.

Privacy: every reward (clipped into [0, 1], part of the algorithm) enters releases of sensitivity 1
whose ε add up to ε, and only its own arm's; the indices and actions are post-processing:
ε-DP in the central model, per reward.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from privenv._jit import jit
from privenv.agents.kernel import (
    KernelAgent,
    Releases,
    agent_act,
    agent_observe,
    charge_recorded,
)
from privenv.parameters import EPSILON, Integer, Param
from privenv.privacy.continual import (
    binary_add,
    binary_prefix,
    laplace_sum_width,
    popcount,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_noise
from privenv.seeding import NoiseView, take_uniform

__all__ = ["DPUCB", "DPUCBHybrid", "TreeUCBState"]

#: levels of a hybrid segment's tree at most (segments up to 2⁶³ rewards)
HYBRID_LEVELS = 64


class TreeUCBState(NamedTuple):
    """Per-run state (one row per run; the trees' rows are r = run·K + arm): ``counts`` N_a,
    the trees' exact and noisy p-sums (``psum``, ``noisy``), the hybrid's exact segment sum
    (``seg_sum``) and logarithmic total (``log_total``), the private sum S̃_a
    (``private_sum``) with the Σb² and max b of the Laplace noises it holds (``noise_var``,
    ``noise_bmax``), ``t`` (rounds observed); in checking mode the round of each of an arm's
    rewards (``leaf_user``) and the step's release."""

    t: np.ndarray
    counts: np.ndarray
    psum: np.ndarray
    noisy: np.ndarray
    seg_sum: np.ndarray
    log_total: np.ndarray
    private_sum: np.ndarray
    noise_var: np.ndarray
    noise_bmax: np.ndarray
    leaf_user: np.ndarray
    releases: Releases

    @classmethod
    def start(cls, n_runs: int, K: int, levels: int, n_users: int = 0) -> TreeUCBState:
        shape = (n_runs, K)
        return cls(np.zeros(n_runs, np.int64), np.zeros(shape, np.int64),
                   np.zeros((n_runs * K, levels)), np.zeros((n_runs * K, levels)),
                   np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape),
                   np.zeros(shape), np.zeros((n_runs, K, n_users), np.int64),
                   Releases.make(n_runs, n_users, 1))


class TreeUCBParams(NamedTuple):
    """``levels`` L and ``node_scale`` L/ε of the tree (DP-UCB); ``hybrid``; the audit hook
    ``noise_multiplier``."""

    K: int
    epsilon: float
    hybrid: bool
    levels: int
    node_scale: float
    noise_multiplier: float
    words_per_step: int = 0


@agent_act.register(TreeUCBState)
@jit(inline="always")
def tree_ucb_act(s: TreeUCBState, p: TreeUCBParams, noise: NoiseView, run: int) -> int:
    t = s.t[run]
    if t < p.K:  # one pull per arm
        return t
    log_t = math.log(t)
    log_2_over_gamma = math.log(2.0) + 4.0 * log_t  # γ = t⁻⁴, the Hoeffding term's level
    best, index = 0, -np.inf
    for a in range(p.K):
        n = s.counts[run, a]
        width = laplace_sum_width(s.noise_var[run, a], s.noise_bmax[run, a], log_2_over_gamma)
        value = (s.private_sum[run, a] + width) / n + math.sqrt(2.0 * log_t / n)
        if value > index:
            best, index = a, value
    return best


@jit
def _charge_leaves(s: TreeUCBState, run: int, arm: int, first: int, last: int,
                   epsilon: float) -> None:
    """Checking mode: one release over the arm's rewards ``first … last`` (1-based)."""
    rel = s.releases
    if rel.users.shape[2] == 0:
        return
    for leaf in range(first, last + 1):
        rel.users[run, 0, s.leaf_user[run, arm, leaf - 1]] = True
    rel.epsilon[run, 0] = epsilon
    rel.count[run] = 1


@jit
def _tree_update(p: TreeUCBParams, s: TreeUCBState, noise: NoiseView, run: int, arm: int,
                 x: float) -> None:
    """DP-UCB: add the arm's n-th reward to its tree; S̃ = the tree's prefix of n leaves."""
    n = s.counts[run, arm]
    b = p.noise_multiplier * p.node_scale
    j = binary_add(s.psum, s.noisy, run * p.K + arm, n, x,
                   laplace_noise(take_uniform(noise, run), b))
    s.private_sum[run, arm] = binary_prefix(s.noisy, run * p.K + arm, n)
    s.noise_var[run, arm] = popcount(n) * p.node_scale * p.node_scale
    s.noise_bmax[run, arm] = p.node_scale
    _charge_leaves(s, run, arm, n - (1 << j) + 1, n, 1.0 / b)


@jit
def _hybrid_update(p: TreeUCBParams, s: TreeUCBState, noise: NoiseView, run: int, arm: int,
                   x: float) -> None:
    """The hybrid mechanism at the arm's n-th reward (module docstring)."""
    n = s.counts[run, arm]
    r = run * p.K + arm
    k = 0
    while (n >> (k + 1)) > 0:  # 2^k ≤ n < 2^{k+1}
        k += 1
    log_scale = 2.0 / p.epsilon  # the logarithmic mechanism's Lap(2/ε)
    s.seg_sum[run, arm] += x
    if n == 1 << k:  # a logarithmic release: the rewards since the last power of two
        b = p.noise_multiplier * log_scale
        s.log_total[run, arm] += s.seg_sum[run, arm] + laplace_noise(take_uniform(noise, run), b)
        s.seg_sum[run, arm] = 0.0
        for level in range(s.psum.shape[1]):  # a fresh tree for the segment 2^k + 1 … 2^{k+1}
            s.psum[r, level] = 0.0
            s.noisy[r, level] = 0.0
        s.private_sum[run, arm] = s.log_total[run, arm]
        s.noise_var[run, arm] = (k + 1) * log_scale * log_scale
        s.noise_bmax[run, arm] = log_scale
        _charge_leaves(s, run, arm, 1 if k == 0 else (1 << (k - 1)) + 1, n, 1.0 / b)
        return
    i = n - (1 << k)  # the reward's index in its segment (1 … 2^k − 1)
    node_scale = 2.0 * max(k, 1) / p.epsilon  # ≤ max{k, 1} nodes hold a reward: ε/2 in all
    b = p.noise_multiplier * node_scale
    j = binary_add(s.psum, s.noisy, r, i, x, laplace_noise(take_uniform(noise, run), b))
    s.private_sum[run, arm] = s.log_total[run, arm] + binary_prefix(s.noisy, r, i)
    s.noise_var[run, arm] = ((k + 1) * log_scale * log_scale
                             + popcount(i) * node_scale * node_scale)
    s.noise_bmax[run, arm] = max(log_scale, node_scale)
    _charge_leaves(s, run, arm, (1 << k) + i - (1 << j) + 1, n, 1.0 / b)


@agent_observe.register(TreeUCBState)
@jit(inline="always")
def tree_ucb_observe(s: TreeUCBState, p: TreeUCBParams, noise: NoiseView, run: int,
                     action: int, value: float) -> None:
    s.counts[run, action] += 1
    if s.leaf_user.shape[2] > 0:  # checking mode: this reward is user (round) t
        s.leaf_user[run, action, s.counts[run, action] - 1] = s.t[run]
    x = min(max(value, 0.0), 1.0)  # DP needs rewards in [0, 1]: part of the algorithm
    if p.hybrid:
        _hybrid_update(p, s, noise, run, action, x)
    else:
        _tree_update(p, s, noise, run, action, x)
    s.t[run] += 1


class DPUCB(KernelAgent):
    """DP-UCB (Mishra & Thakurta 2015, *(Nearly) optimal differentially private stochastic
    multi-arm bandits*, UAI; private UCB with the tree-based mechanism), a reconstruction
    (docs/guides/zoo.md).

    Each arm's rewards feed a binary mechanism over at most T leaves (L = ⌊log₂T⌋ + 1 levels,
    node noise Lap(L/ε), drawn once per node); after one pull per arm, play
    argmax_a S̃_a/N_a + √(2 log t/N_a) + w_t(a)/N_a with w_t(a) the t⁻⁴-probability width of the
    popcount(N_a) node noises of S̃_a. ε-DP in the central model, per reward (each reward is in
    ≤ L nodes of its own arm's tree; the paper splits ε over the K trees, we do not: the trees
    hold disjoint rewards).

    Audit hook: ``noise_multiplier`` scales every node's Laplace scale (1 in every real agent).

    Args:
        K: number of arms.
        horizon: T (fixes the trees' depth).
        epsilon: privacy budget ε > 0.
        n_runs: number of runs.
    """

    name = "dp-ucb"
    State = TreeUCBState
    families = ("bernoulli",)
    HYBRID = False
    noise_multiplier: float = 1.0
    parameters = {
        "K": Param(Integer(low=2), problem="K"),
        "horizon": Param(Integer(low=1), assumes="horizon"),
        "epsilon": Param(EPSILON),
    }

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        #: L = ⌊log₂T⌋ + 1, the levels of a tree over at most T rewards
        self.levels = int(self.horizon).bit_length()

    @property
    def privacy(self) -> PrivacyGuarantee:
        return PrivacyGuarantee("central", self.epsilon, 0.0, "reward")

    def kernel_params(self) -> TreeUCBParams:
        levels = HYBRID_LEVELS if self.HYBRID else self.levels
        return TreeUCBParams(K=self.K, epsilon=self.epsilon, hybrid=self.HYBRID, levels=levels,
                             node_scale=self.levels / self.epsilon,
                             noise_multiplier=float(self.noise_multiplier))

    def new_state(self) -> TreeUCBState:
        users = 0 if self.ledger is None else self.ledger.n_users
        return TreeUCBState.start(self.n_runs, self.K, self.params.levels, users)

    def charge_releases(self) -> None:
        charge_recorded(self, self.state.releases, ("tree node",))


class DPUCBHybrid(DPUCB):
    """DP-UCB with the hybrid mechanism (Tossou & Dimitrakakis 2016, *Algorithms for
    differentially private multi-armed bandits*, AAAI: the continual-release variant; Chan, Shi
    & Song 2011's hybrid mechanism), a reconstruction (docs/guides/zoo.md).

    DP-UCB's index on private sums kept by the hybrid mechanism (module docstring): a
    logarithmic release at every power of two of the arm's count, a fresh binary mechanism
    within each segment; ε/2 each. Anytime (the horizon is not used). ε-DP in the central model,
    per reward.

    Args:
        K, epsilon, n_runs: as :class:`DPUCB`.
        horizon: unused (the hybrid mechanism is anytime); accepted so that the two variants are
            built alike.
    """

    name = "dp-ucb-hybrid"
    HYBRID = True
    parameters = {**DPUCB.parameters,
                  "horizon": Param(Integer(low=1, none=True), assumes="horizon")}

    def __init__(self, K: int, horizon: int | None = None, epsilon: float = 1.0,
                 n_runs: int = 1) -> None:
        self.set_params(locals())
        KernelAgent.__init__(self, n_runs)
        self.levels = HYBRID_LEVELS

    def charge_releases(self) -> None:
        charge_recorded(self, self.state.releases, ("hybrid release",))
