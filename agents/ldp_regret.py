"""ε-local-DP regret algorithms for the K-armed bandit (Ren, Zhou, Liu & Shroff 2020, *Multi-armed
bandits with local differential privacy*, IEEE TSP): LDP-UCB-L, LDP-UCB-B and LDP-SE.

Each is a *local-DP system* "local randomizer + non-private learner", as paper 3's CTB-TT
(:mod:`privenv.agents.top_two`): the agent declares an existing randomizer of
:mod:`privenv.privacy.local` (:meth:`~privenv.agents.base.Agent.local_randomizer`, that of the
:class:`~privenv.wrappers.LaplaceReward` or :class:`~privenv.wrappers.RandomizedResponse`
wrapper) and the runner puts it between the env and the learner
(:func:`privenv.simulation.system_env`), so the learner only ever sees released values and the
guarantee recorded with the results is the randomizer's (ε-DP, local, per reward). No noise is
drawn here. Rewards must lie in [0, 1] (``BernoulliBandit-v0``).

* :class:`LDPUCBL`: ``LaplaceReward(ε, (0, 1))`` (r + Lap(1/ε)) in front of the learner of the
  authors' public code: an arm with N_a ≤ 4 log(t + 2) is pulled first; otherwise
  argmax_a μ̂_a + √(2 log(t + 1)/N_a) + √(32 log(t + 1)/(ε²N_a)) (t = rounds played).
* :class:`LDPUCBB`: ``RandomizedResponse(ε)`` (one bit, 1 with probability
  (r(e^ε − 1) + 1)/(e^ε + 1)) in front of UCB1 on the bits (the authors' code: no de-biasing,
  which is increasing and affine and changes no comparison).
* :class:`LDPSE`: ``RandomizedResponse(ε)`` in front of successive elimination on the bits (our
  reconstruction; LDP-SE is not in the public code): each round pulls every active arm once; after
  the round (n pulls each) arm a is eliminated if max_b q̂_b − q̂_a > 2√(log(4Kn²/β)/(2n)),
  β = 1/T.

docs/guides/zoo.md lists what we could read and the choices.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from privenv._jit import jit
from privenv.agents.kernel import KernelAgent, agent_act, agent_observe
from privenv.agents.mab import (
    UCB1,
    IndexState,
    _IndexAgent,
    _sum_update,
    index_choice,
    index_update,
)
from privenv.agents.top_two import _LocalTTUCB
from privenv.parameters import EPSILON, Integer, Param
from privenv.privacy.local import LaplaceRandomizer, RandomizedResponseRandomizer
from privenv.seeding import NoiseView

__all__ = ["LDPSE", "LDPUCBB", "LDPUCBL"]


class _LocalSystem:
    """A randomizer of :mod:`privenv.privacy.local` in front of this (non-private) learner
    (:meth:`local_randomizer`; the runner wraps). ``wrap_env`` is paper 3's local systems' (the
    same check of a [0, 1] law)."""

    #: ``"laplace"`` or ``"randomized-response"``
    MECHANISM: str = "randomized-response"
    epsilon: float

    wrap_env = _LocalTTUCB.wrap_env

    def local_randomizer(self) -> LaplaceRandomizer | RandomizedResponseRandomizer:
        """r + Lap(1/ε) on [0, 1] (``"laplace"``) or randomized response (one bit)."""
        if self.MECHANISM == "laplace":
            return LaplaceRandomizer(self.epsilon, (0.0, 1.0))
        return RandomizedResponseRandomizer(self.epsilon)


# -- LDP-UCB-L -----------------------------------------------------------------------------------
class LDPUCBLParams(NamedTuple):
    K: int
    epsilon: float
    words_per_step: int = 0


@index_choice.register(LDPUCBLParams)
@jit
def _ldp_ucb_l_choice(p: LDPUCBLParams, s: IndexState, noise: NoiseView, run: int) -> int:
    """The first arm with N_a ≤ 4 log(t + 2); else argmax_a μ̂_a + √(2 log(t + 1)/N_a)
    + √(32 log(t + 1)/(ε²N_a)) (the authors' ``pull_CTL``; t = rounds played)."""
    t = s.t[run]
    threshold = 4.0 * math.log(t + 2.0)
    for a in range(p.K):
        if s.counts[run, a] <= threshold:
            return a
    log_t = math.log(t + 1.0)
    best, index = 0, -np.inf
    for a in range(p.K):
        n = s.counts[run, a]
        value = (s.sums[run, a] / n + math.sqrt(2.0 * log_t / n)
                 + math.sqrt(32.0 * log_t / (p.epsilon * p.epsilon * n)))
        if value > index:
            best, index = a, value
    return best


index_update.register(LDPUCBLParams)(_sum_update)


class LDPUCBL(_LocalSystem, _IndexAgent):
    """LDP-UCB-L (Ren, Zhou, Liu & Shroff 2020): the Laplace mechanism r + Lap(1/ε) on every
    reward (the :class:`~privenv.wrappers.LaplaceReward` wrapper on [0, 1]) in front of a UCB
    learner whose bonus is widened for the Laplace variance (module docstring). ε-DP in the local
    model, per reward (declared by the randomizer; ``agent.privacy`` is the learner's, none).

    Args:
        K: number of arms.
        epsilon: local privacy budget ε > 0.
        n_runs: number of runs.
    """

    name = "ldp-ucb-l"
    families = ("bernoulli",)
    MECHANISM = "laplace"
    parameters = {**_IndexAgent.parameters, "epsilon": Param(EPSILON)}

    def __init__(self, K: int, epsilon: float = 1.0, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> LDPUCBLParams:
        return LDPUCBLParams(K=self.K, epsilon=self.epsilon)


# -- LDP-UCB-B -----------------------------------------------------------------------------------
class LDPUCBB(_LocalSystem, UCB1):
    """LDP-UCB-B (Ren, Zhou, Liu & Shroff 2020): randomized response on every reward (one bit, 1
    with probability (r(e^ε − 1) + 1)/(e^ε + 1); the :class:`~privenv.wrappers.RandomizedResponse`
    wrapper) in front of UCB1 on the bits (:class:`~privenv.agents.mab.UCB1`, σ = 1). ε-DP in the
    local model, per reward (declared by the randomizer).

    Args:
        K: number of arms.
        epsilon: local privacy budget ε > 0.
        n_runs: number of runs.
    """

    name = "ldp-ucb-b"
    families = ("bernoulli",)
    MECHANISM = "randomized-response"
    parameters = {**_IndexAgent.parameters, "epsilon": Param(EPSILON)}

    def __init__(self, K: int, epsilon: float = 1.0, n_runs: int = 1) -> None:
        self.set_params(locals())
        _IndexAgent.__init__(self, n_runs)
        self.sigma = 1.0


# -- LDP-SE --------------------------------------------------------------------------------------
class SEState(NamedTuple):
    """Per-run state of successive elimination: counts N_a, sums, ``active`` arms, ``n_round`` r
    (the pulls every active arm has after the current round), ``t``."""

    t: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    active: np.ndarray
    n_round: np.ndarray

    @classmethod
    def start(cls, n_runs: int, K: int) -> SEState:
        return cls(np.zeros(n_runs, np.int64), np.zeros((n_runs, K), np.int64),
                   np.zeros((n_runs, K)), np.ones((n_runs, K), bool), np.ones(n_runs, np.int64))


class SEParams(NamedTuple):
    K: int
    log_4k_over_beta: float
    words_per_step: int = 0


@agent_act.register(SEState)
@jit(inline="always")
def se_act(s: SEState, p: SEParams, noise: NoiseView, run: int) -> int:
    """The first active arm not yet pulled in this round."""
    for a in range(p.K):
        if s.active[run, a] and s.counts[run, a] < s.n_round[run]:
            return a
    return 0  # (never: observe starts the next round as soon as this one is complete)


@agent_observe.register(SEState)
@jit(inline="always")
def se_observe(s: SEState, p: SEParams, noise: NoiseView, run: int, action: int,
               value: float) -> None:
    s.counts[run, action] += 1
    s.sums[run, action] += value
    s.t[run] += 1
    n = s.n_round[run]
    for a in range(p.K):
        if s.active[run, a] and s.counts[run, a] < n:
            return  # the round goes on
    # the round is complete: eliminate a if max_b q̂_b − q̂_a > 2√(log(4Kn²/β)/(2n))
    width = math.sqrt((p.log_4k_over_beta + 2.0 * math.log(n)) / (2.0 * n))
    top = -np.inf
    for a in range(p.K):
        if s.active[run, a]:
            top = max(top, s.sums[run, a] / n)
    for a in range(p.K):
        if s.active[run, a] and top - s.sums[run, a] / n > 2.0 * width:
            s.active[run, a] = False
    s.n_round[run] = n + 1


class LDPSE(_LocalSystem, KernelAgent):
    """LDP-SE (Ren, Zhou, Liu & Shroff 2020), a reconstruction (the public code has no LDP-SE):
    randomized response on every reward (the :class:`~privenv.wrappers.RandomizedResponse`
    wrapper) in front of successive elimination on the bits (Even-Dar, Mannor & Mansour 2006):
    each round pulls every active arm once; after round n, arm a is eliminated if
    max_b q̂_b − q̂_a > 2√(log(4Kn²/β)/(2n)) (Hoeffding with a union bound over arms and rounds;
    the bits' means are an increasing affine map of the rewards' means, so eliminating on the
    bits eliminates on the rewards), β = 1/T. ε-DP in the local model, per reward (declared by
    the randomizer).

    Args:
        K: number of arms.
        horizon: T (β = 1/T).
        epsilon: local privacy budget ε > 0.
        n_runs: number of runs.
    """

    name = "ldp-se"
    State = SEState
    families = ("bernoulli",)
    MECHANISM = "randomized-response"
    parameters = {
        "K": Param(Integer(low=2), problem="K"),
        "horizon": Param(Integer(low=1), assumes="horizon"),
        "epsilon": Param(EPSILON),
    }

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> SEParams:
        # log(4K/β), β = 1/T
        return SEParams(K=self.K, log_4k_over_beta=math.log(4.0 * self.K * self.horizon))

    def new_state(self) -> SEState:
        return SEState.start(self.n_runs, self.K)
