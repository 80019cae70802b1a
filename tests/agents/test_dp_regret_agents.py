"""The ε-global-DP regret agents of the Bernoulli bandit (privenv.agents.dp_regret,
privenv.agents.dp_ucb): the privacy ledger (each reward charged what the declaration says, and
mutants caught), the compiled binary mechanism against the batched TreeMechanism, the shared DAF
code, and the behaviour each paper states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from recording import recording

from privenv.agents.dp_regret import (
    DAF,
    DPIMED,
    DPKLUCB,
    AdaPKLUCB,
    AdaPUCB,
    LazyDPTS,
    dp_klucb_index,
)
from privenv.agents.dp_ucb import DPUCB, DPUCBHybrid
from privenv.privacy.ledger import PrivacyBudgetExceeded
from privenv.simulation import simulate
from privenv.theory.regret import azize_2025, d_eps

ENV = "BernoulliBandit-v0"


def pull_index(agent) -> tuple[np.ndarray, np.ndarray]:
    """(arm, j): the arm of each (run, round) and which pull of that arm it was (1-based)."""
    arms = np.stack(agent.actions, axis=1)
    j = np.zeros(arms.shape, dtype=np.int64)
    for r in range(arms.shape[0]):
        seen = np.zeros(agent.K, dtype=np.int64)
        for t, a in enumerate(arms[r]):
            seen[a] += 1
            j[r, t] = seen[a]
    return arms, j


# -- phase agents: each released reward charged exactly ε, unreleased ones 0 ---------------------
PHASE = [(AdaPUCB, {}), (AdaPKLUCB, {}), (LazyDPTS, {}), (DPKLUCB, {}), (DPIMED, {"alpha": 1.5})]


@pytest.mark.parametrize("cls,kw", PHASE, ids=[c.name for c, _ in PHASE])
def test_ledger_each_released_reward_charged_exactly_once(cls, kw):
    eps, horizon = 0.5, 2000
    agent = recording(cls)(K=5, epsilon=eps, n_runs=4, **kw)
    simulate(agent, ENV, n_runs=4, seed=1, horizon=horizon, env_kwargs={"instance": "mu3"},
             ledger=True)
    arms, j = pull_index(agent)
    last = agent.phase_start if cls.ESTIMATOR == DAF else agent.n_tilde  # count at the last one
    released = j <= last[np.arange(4)[:, None], arms]  # before the arm's last release
    assert released[:, :5].all() and (~released).any()  # initial pulls; an open phase at T
    agent.ledger.assert_each_user_charged_exactly(eps, users_mask=released)


@pytest.mark.parametrize("cls", [AdaPUCB, DPKLUCB], ids=["daf", "geometric"])
@pytest.mark.parametrize("hook", [{"noise_multiplier": 0.5}, {"forget": False}],
                         ids=["noise x 0.5", "reward reused"])
def test_ledger_catches_mutations(cls, hook):
    eps, horizon = 0.5, 2000
    mutant = type("Mutant", (recording(cls),), hook)
    agent = mutant(K=5, epsilon=eps, n_runs=3)
    simulate(agent, ENV, n_runs=3, seed=1, horizon=horizon, env_kwargs={"instance": "mu3"},
             ledger=True)
    arms, j = pull_index(agent)
    last = agent.phase_start if cls.ESTIMATOR == DAF else agent.n_tilde
    with pytest.raises(PrivacyBudgetExceeded):
        agent.ledger.assert_each_user_charged_exactly(
            eps, users_mask=j <= last[np.arange(3)[:, None], arms])


# -- tree and hybrid: each reward's completed nodes, never more than ε ---------------------------
def tree_charge(i: int, n: int, levels: int) -> int:
    """Released nodes holding leaf i of a stream of n leaves. The binary mechanism releases, at
    leaf e, the one node of level lowbit(e) ending at e: the level-j block m (leaves
    (m − 1)2ʲ + 1 … m2ʲ) is released iff m is odd (an even block is merged into its parent) and
    m2ʲ ≤ n."""
    return sum(1 for j in range(levels)
               if math.ceil(i / 2**j) % 2 == 1 and math.ceil(i / 2**j) * 2**j <= n)


def hybrid_charge(i: int, n: int, eps: float) -> float:
    """ε charged to the arm's i-th reward when the arm has n rewards (the hybrid mechanism)."""
    k = max(0, math.ceil(math.log2(i)))  # its logarithmic release: at 2^k ≥ i > 2^{k−1}
    total = eps / 2 if n >= 2**k else 0.0
    if i & (i - 1):  # not a power of two: also in the tree of segment 2^s … 2^{s+1}
        s = int(math.floor(math.log2(i)))
        local, m = i - 2**s, min(n, 2 ** (s + 1) - 1) - 2**s
        total += eps / (2 * max(s, 1)) * tree_charge(local, m, max(s, 1))
    return total


@pytest.mark.parametrize("cls", [DPUCB, DPUCBHybrid])
def test_ledger_tree_nodes_charge_their_leaves(cls):
    eps, horizon = 0.5, 1500
    agent = recording(cls)(K=3, horizon=horizon, epsilon=eps, n_runs=3)
    simulate(agent, ENV, n_runs=3, seed=2, horizon=horizon, env_kwargs={"means": [0.6, 0.5, 0.4]},
             ledger=True)
    arms, j = pull_index(agent)
    counts = agent.counts
    expected = np.zeros(arms.shape)
    for r in range(3):
        for t in range(horizon):
            n = counts[r, arms[r, t]]
            expected[r, t] = (tree_charge(j[r, t], n, agent.levels) * eps / agent.levels
                              if cls is DPUCB else hybrid_charge(j[r, t], n, eps))
    np.testing.assert_allclose(agent.ledger.epsilon_spent(), expected, rtol=1e-9, atol=1e-12)
    agent.ledger.assert_within(eps)  # ≤ ε: a reward is in ≤ L released nodes, often fewer


@pytest.mark.parametrize("cls", [DPUCB, DPUCBHybrid])
def test_ledger_catches_halved_node_noise(cls):
    eps, horizon = 0.5, 1500
    agent = type("HalfNoise", (cls,), {"noise_multiplier": 0.5})(K=3, horizon=horizon,
                                                                  epsilon=eps, n_runs=2)
    simulate(agent, ENV, n_runs=2, seed=2, horizon=horizon, ledger=True)
    with pytest.raises(PrivacyBudgetExceeded):
        agent.ledger.assert_within(eps)


def test_the_compiled_binary_mechanism_is_the_tree_mechanisms():
    """The same node noises give the same private prefix sums as the batched TreeMechanism
    (Laplace nodes, one scalar stream)."""
    from privenv.privacy.continual import binary_add, binary_prefix
    from privenv.privacy.tree import TreeMechanism

    T, rng = 200, np.random.default_rng(4)
    x = rng.random(T)
    tree = TreeMechanism(n_runs=1, shape=(1,), sigma=3.0, horizon=T,
                         noise=np.random.default_rng(9), distribution="laplace")
    levels = T.bit_length()
    psum, noisy = np.zeros((1, levels)), np.zeros((1, levels))
    for i in range(1, T + 1):
        expected = tree.add(np.array([[x[i - 1]]]))[0, 0]
        j = int(math.log2(i & -i))
        node_noise = tree._node_noise[0, j, 0]  # the node that completed, drawn once
        binary_add(psum, noisy, 0, i, x[i - 1], node_noise)
        assert binary_prefix(noisy, 0, i) == pytest.approx(expected, abs=1e-12)


# -- the shared DAF code and the indices -----------------------------------------------------------
def test_adap_runs_the_daf_estimator_of_adap_tt():
    """AdaP-UCB's releases are DAF(ε)'s: phase ends at counts 1, 2, 4, 8, … and Ñ = half the
    count after the first phase (Algorithm 1 line 7: play until the count doubles)."""
    agent = AdaPUCB(K=3, epsilon=1.0, n_runs=2)
    simulate(agent, ENV, n_runs=2, seed=3, horizon=5000, env_kwargs={"means": [0.7, 0.5, 0.3]})
    phase_start, n_tilde = agent.phase_start, agent.n_tilde
    assert np.all(phase_start == 2 ** (agent.phases - 1))
    assert np.all(n_tilde == np.maximum(phase_start // 2, 1))


def test_dp_klucb_index_is_the_largest_mean_within_the_budget():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        x, v, eps = rng.random(), 10 ** rng.uniform(-5, 0.5), 10 ** rng.uniform(-2, 1)
        q = dp_klucb_index(x, v, eps)
        assert d_eps(x, min(q, 1.0), eps) >= v - 1e-9 or q == 1.0
        assert q - 1e-12 <= 1.0 and d_eps(x, max(q - 1e-9, x), eps) <= v + 1e-9


def test_dp_klucb_phases_are_geometric_and_cumulative():
    """Phase ends n_k = max{n_{k−1} + 1, ⌈αn_{k−1}⌉} from n₀ = 1; μ̃ holds all n rewards."""
    agent = DPKLUCB(K=3, epsilon=2.0, alpha=1.5, n_runs=1)
    simulate(agent, ENV, n_runs=1, seed=3, horizon=3000, env_kwargs={"means": [0.7, 0.5, 0.3]})
    ends = [1]
    while len(ends) < 40:
        ends.append(max(ends[-1] + 1, math.ceil(1.5 * ends[-1])))
    for a in range(3):
        k = agent.phases[0, a]
        assert agent.n_tilde[0, a] == ends[k - 1] and agent.next_end[0, a] == ends[k]


@pytest.mark.slow
def test_regret_at_low_privacy_dp_klucb_is_near_the_bound_and_below_adap_klucb():
    """ε = 10 on μ4, T = 10⁵, 20 runs (seed fixed, deterministic): DP-KLUCB's mean regret is
    within 1.6 times Azize et al. (2025)'s curve Σ Δ log T/d_ε (measured 1.2; their Theorem 2:
    → ≤ α = 1.1 as T → ∞), and below AdaP-KLUCB's (measured 7.5 times the curve: its index
    budget 2α log t/N with α = 3.1 and forgetting), the ordering their experiments report."""
    horizon, mu = 100_000, [0.75, 0.625, 0.5, 0.375, 0.25]
    regret = {name: simulate(name, ENV, n_runs=20, horizon=horizon, seed=1,
                             agent_kwargs={"epsilon": 10.0}).regret_curve[:, -1].mean()
              for name in ("dp-klucb", "adap-klucb")}
    assert regret["dp-klucb"] < 1.6 * azize_2025(mu, horizon, 10.0)
    assert regret["dp-klucb"] < regret["adap-klucb"]


# -- the privacy audits of these agents (privenv.audits.zoo) at the quick size: a wrong noise scale
# or a reused reward fails here (tests/conftest.py runs each case and each of its mutations) -----

AUDIT_TARGETS = ("dp-ucb", "dp-ucb-hybrid", "adap-ucb", "adap-klucb", "lazy-dp-ts", "dp-klucb",
                 "dp-imed")
#: their releases are adap-ucb's code (DAF) or dp-klucb's (geometric phases): their mutants run
#: with ``-m slow``, their correct cases by default
AUDIT_SHARED = ("adap-klucb", "lazy-dp-ts", "dp-imed")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
