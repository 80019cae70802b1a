"""Central-DP LinUCB with the tree-based mechanism (Shariff & Sheffet 2018;
agents/central_linucb.py).

Calibration by hand (the declared (ε, δ) is met exactly and σ × 0.9 breaks it); the private Gram
stays symmetric and the noise stays inside the derived bounds; a hand-computed step; the ledger
charges every user ρ once; regret on the default sphere instance (fixed seeds: deterministic
computations, no false-alarm probability); determinism (run i alone = run i in a batch),
``play`` = ``simulate``; memory independent of T; bad input.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.central_linucb import CentralDPLinUCB, tree_noise_bounds
from privenv.agents.mab import Uniform
from privenv.privacy.accounting import gaussian_epsilon
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.simulation import play, simulate

ENV = "LinearContextualBandit-v0"
NAME = "central-dp-linucb"


# -- calibration ------------------------------------------------------------------------------


@pytest.mark.parametrize("d, T, epsilon, delta", [
    (5, 2000, 1.0, 1e-6), (1, 100, 0.1, 1e-5), (3, 10**4, 10.0, 1e-8), (8, 1, 2.0, 0.01),
])
def test_calibration_meets_the_declared_epsilon_and_no_less_noise_would(d, T, epsilon, delta):
    agent = CentralDPLinUCB(d, T, epsilon, delta)
    m = int(math.floor(math.log2(T))) + 1
    gram_sq = 2.0 if d >= 2 else 1.0  # Δ_G² (replace-one, ‖φ‖ ≤ 1)
    assert agent.levels == m
    assert agent.rho == pytest.approx(m * (gram_sq + 4.0) / (2 * agent.noise_sigma**2), rel=1e-12)
    # the two trees' own accounting composes to the same ρ
    agent.reset(seed=0)
    assert agent.gram_tree.rho(math.sqrt(gram_sq)) + agent.moment_tree.rho(2.0) == pytest.approx(
        agent.rho, rel=1e-12)
    # exact (ε, δ) of the μ-GDP composition, μ = √(2ρ): met, and tight
    assert gaussian_epsilon(delta, math.sqrt(2 * agent.rho)) == pytest.approx(epsilon, rel=1e-7)
    assert gaussian_epsilon(delta, math.sqrt(2 * agent.rho)) <= epsilon * (1 + 1e-7)
    rho_less_noise = agent.rho / 0.9**2  # σ × 0.9
    assert gaussian_epsilon(delta, math.sqrt(2 * rho_less_noise)) > 1.05 * epsilon
    assert agent.privacy == PrivacyGuarantee("central", epsilon, delta, "(context, reward)")


def test_noise_bounds_by_hand():
    upsilon, h_max = tree_noise_bounds(2.0, 4, 3, 100, 0.04)  # √m σ = 4, ln(4T/α) = ln 10⁴
    log_term = math.log(1e4)
    assert upsilon == pytest.approx(4 * (math.sqrt(12) + 2 * math.sqrt(log_term)))
    assert h_max == pytest.approx(4 * (math.sqrt(3) + math.sqrt(2 * log_term)))
    agent = CentralDPLinUCB(3, 100, 1.0, 1e-6, lambda_=0.5, alpha=0.04)
    ups, h = tree_noise_bounds(agent.noise_sigma, 7, 3, 100, 0.04)
    assert (agent.upsilon, agent.shift) == (ups, 0.5 + 2 * ups)
    assert (agent.rho_min, agent.rho_max) == (0.5 + ups, 0.5 + 3 * ups)
    assert agent.gamma == pytest.approx(h / math.sqrt(0.5 + ups))


def test_tree_noise_stays_within_the_derived_bounds():
    """Zero items, so the private sums are pure noise: ‖N_t‖_op ≤ Υ and ‖h_t‖ ≤ ‖h‖_max at every
    t ≤ T in 50 runs (T = 512, α = 0.01). By the derivation each run violates with probability
    ≤ α/4 per bound, so a violation somewhere has probability ≤ 50·α/2 = 0.25 — but the bounds
    are loose (a missing √m would be caught); fixed seed, deterministic."""
    n, T, d = 50, 512, 5
    agent = CentralDPLinUCB(d, T, 1.0, 1e-6, alpha=0.01, n_runs=n)
    agent.reset(seed=3)
    worst_N = worst_h = 0.0
    for _ in range(T):
        N = agent.gram_tree.add(np.zeros((n, d, d)))
        h = agent.moment_tree.add(np.zeros((n, d)))
        worst_N = max(worst_N, float(np.abs(np.linalg.eigvalsh(N)).max()))
        worst_h = max(worst_h, float(np.linalg.norm(h, axis=1).max()))
    assert worst_N <= agent.upsilon
    assert worst_h <= agent.h_max
    assert worst_N > 0.25 * agent.upsilon  # the noise is really there, at the right scale


# -- the private sums and one step by hand ------------------------------------------------------


def test_private_gram_is_symmetric_noisy_and_memoised():
    agent = make(NAME, ENV, 3, epsilon=1.0)
    simulate(agent, ENV, n_runs=3, horizon=37, seed=1)
    G = agent.G
    np.testing.assert_array_equal(G, np.swapaxes(G, 1, 2))  # exactly symmetric
    np.testing.assert_array_equal(agent.gram_tree.prefix(), G)  # memoised: same on re-read
    # noise of the right size: 37 = 100101₂ → 3 nodes, upper-triangle entries N(0, 3σ²)
    assert agent.gram_tree.n_nodes().tolist() == [3, 3, 3]
    iu = np.triu_indices(agent.d)
    assert np.abs(G[:, iu[0], iu[1]]).max() > agent.noise_sigma  # 37 unit items alone give ≤ 37


def test_one_step_by_hand():
    agent = CentralDPLinUCB(d=2, horizon=8, epsilon=5.0, delta=1e-5, sigma=0.5, theta_bound=1.0,
                            lambda_=2.0, alpha=0.1)
    agent.reset(seed=0)
    obs = np.array([[0.6, 0.8], [0.0, 0.5]], dtype=np.float32)
    assert agent.act(obs) == 0  # G̃ = ũ = 0: Ṽ ∝ I, the larger ‖φ‖ wins
    agent.observe(0, -1.0, obs)
    x = obs[0].astype(float)
    # after one item the prefix is node 0: the item plus one node of noise
    node_G = agent.G[0] - np.outer(x, x)
    node_u = agent.u[0] + x
    assert np.abs(node_G).max() > 0 and np.abs(node_u).max() > 0
    np.testing.assert_allclose(node_G, node_G.T)
    V = agent.G[0] + agent.shift * np.eye(2)
    theta = np.linalg.solve(V, agent.u[0])
    root_beta = (0.5 * math.sqrt(2 * math.log(2 / 0.1) + math.log(np.linalg.det(V))
                                 - 2 * math.log(agent.rho_min))
                 + math.sqrt(agent.rho_max) + agent.gamma)
    phi = np.array([[0.6, 0.8], [-0.6, -0.8], [0.8, -0.6]])
    scores = phi @ theta + root_beta * np.sqrt(np.einsum("ad,ad->a", phi @ np.linalg.inv(V), phi))
    assert agent.act(phi.astype(np.float32)) == int(np.argmax(scores))
    assert agent.width(np.array([math.log(np.linalg.det(V))]))[0] == pytest.approx(root_beta)


# -- privacy ledger -----------------------------------------------------------------------------


def test_ledger_charges_every_user_rho_exactly_once():
    agent = make(NAME, ENV, 4, epsilon=0.5, delta=1e-7)
    T = 64
    simulate(agent, ENV, n_runs=4, horizon=T, seed=2, ledger=True)
    ledger = agent.ledger
    assert ledger.releases() == T
    np.testing.assert_array_equal(ledger.release_counts(), np.ones((4, T), dtype=np.int32))
    np.testing.assert_allclose(ledger.rho_spent(), agent.rho, rtol=1e-12)
    ledger.assert_within(0.0, rho=agent.rho)
    # the ledger's per-user ρ converts to the declared (ε, δ)
    worst = float(ledger.rho_spent().max())
    assert gaussian_epsilon(1e-7, math.sqrt(2 * worst)) <= 0.5 * (1 + 1e-7)


# -- regret ---------------------------------------------------------------------------------------


def test_regret_below_uniform_and_decreasing_with_epsilon():
    """Default sphere instance (d = 5, A = 10), T = 2000, 6 runs, seed 0 (the same users in every
    cell). Measured (10 runs): uniform 1332, ε = 1: 608, ε = 10: 139, ε = 100: 57, LinUCB 36.
    Checks: ε = 1 below 70 % of uniform; strictly decreasing in ε; ε = 100 within 3× LinUCB."""
    T, n = 2000, 6
    uni = simulate(Uniform(10, n_runs=n), ENV, n_runs=n, horizon=T, seed=0).regret.mean()
    lin = simulate("linucb", ENV, n_runs=n, horizon=T, seed=0).regret.mean()
    regrets = [simulate(NAME, ENV, n_runs=n, horizon=T, seed=0,
                        agent_kwargs={"epsilon": eps}).regret.mean() for eps in (1.0, 10.0, 100.0)]
    assert regrets[0] < 0.7 * uni
    assert regrets[0] > regrets[1] > regrets[2] > lin
    assert regrets[2] < 3 * lin


# -- determinism, play = simulate, memory ---------------------------------------------------------


def test_run_i_alone_equals_run_i_in_a_batch():
    batch = simulate(NAME, ENV, n_runs=4, horizon=60, seed=7, agent_kwargs={"epsilon": 1.0})
    for i in (0, 3):
        alone = simulate(NAME, ENV, n_runs=1, horizon=60, seed=7, first_run=i,
                         agent_kwargs={"epsilon": 1.0})
        np.testing.assert_array_equal(alone.regret_curve[0], batch.regret_curve[i])


def test_play_equals_simulate():
    T = 50
    fast = simulate(NAME, ENV, n_runs=3, horizon=T, seed=4, agent_kwargs={"epsilon": 2.0})
    env = gym.make(ENV, horizon=T, max_episode_steps=T)
    agent = make(NAME, env, 1, epsilon=2.0)
    for i in range(3):
        slow = play(agent, env, seed=4, run=i)
        assert slow["steps"] == T
        assert slow["regret"] == fast.regret[i]


def test_state_memory_does_not_grow_with_the_number_of_rounds():
    """Fixed declared horizon 4096 (13 tree levels): the state after 5 rounds and after 600
    rounds has the same size, O(n_runs·levels·d²)."""
    def state_bytes(T: int) -> int:
        agent = make(NAME, ENV, 3, horizon=4096)
        simulate(agent, ENV, n_runs=3, horizon=T, seed=0)
        arrays = [v for obj in (agent, agent.gram_tree, agent.moment_tree)
                  for v in vars(obj).values() if isinstance(v, np.ndarray)]
        return sum(a.nbytes for a in arrays)

    small = state_bytes(5)
    assert small == state_bytes(600)
    d, levels = 5, 13
    assert small < 3 * 8 * (2 * levels * (d * d + d) + 4 * d * d)


def test_make_fills_parameters_from_the_env():
    agent = make(NAME, gym.make(ENV, d=3, A=4, horizon=500, noise="gaussian", sigma=0.3),
                 clip=True)
    assert (agent.d, agent.horizon, agent.sigma, agent.theta_bound) == (3, 500, 0.3, 1.0)


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, match", [
    ({"d": 0}, "d must be"),
    ({"horizon": 0}, "horizon"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": math.inf}, "epsilon"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"sigma": -1.0}, "sigma"),
    ({"theta_bound": float("nan")}, "theta_bound"),
    ({"lambda_": 0.0}, "lambda_"),
    ({"alpha": 1.0}, "alpha"),
    ({"clip": "no"}, "clip"),
    ({"reward_bound": None}, "reward_bound"),
    ({"n_runs": 0}, "n_runs"),
])
def test_bad_parameters(kwargs, match):
    params = {"d": 2, "horizon": 10, **kwargs}
    with pytest.raises(ValueError, match=match):
        CentralDPLinUCB(**params)


def test_bad_observations_and_rewards():
    agent = CentralDPLinUCB(d=3, horizon=10, n_runs=2)
    agent.reset(seed=0)
    with pytest.raises(RuntimeError, match="act"):
        agent.observe_batch(np.zeros(2, dtype=np.int64), np.zeros(2), np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match="shape \\(2, A, 3\\)"):
        agent.act_batch(np.zeros((2, 4, 5)))
    obs = np.zeros((2, 4, 3))
    obs[:, :, 0] = 1.0
    agent.act_batch(obs)
    with pytest.raises(ValueError, match="reward must lie in \\[-1, 1\\]"):
        agent.observe_batch(np.zeros(2, dtype=np.int64), np.array([0.0, 1.5]), obs)
    big = obs * 2.0
    agent.act_batch(big)
    with pytest.raises(ValueError, match="norm"):
        agent.observe_batch(np.zeros(2, dtype=np.int64), np.zeros(2), big)
    # the horizon fixes the tree: an 11th round is refused
    agent = CentralDPLinUCB(d=3, horizon=10, n_runs=2)
    agent.reset(seed=0)
    for _ in range(10):
        agent.act_batch(obs)
        agent.observe_batch(np.zeros(2, dtype=np.int64), np.zeros(2), obs)
    agent.act_batch(obs)
    with pytest.raises(ValueError, match="horizon"):
        agent.observe_batch(np.zeros(2, dtype=np.int64), np.zeros(2), obs)
    # unbounded labels: refused unless clipped
    with pytest.raises(ValueError, match="reward_bound"):
        simulate(NAME, ENV, n_runs=2, horizon=5, env_kwargs={"noise": "gaussian"})
    res = simulate(NAME, ENV, n_runs=2, horizon=5, env_kwargs={"noise": "gaussian"},
                   agent_kwargs={"clip": True})
    assert res.steps.tolist() == [5, 5]


# -- the exact sampler ----------------------------------------------------------------------------


@pytest.mark.parametrize("d, T, epsilon, delta", [(5, 10**4, 1.0, 1e-6), (1, 100, 0.1, 1e-5)])
def test_exact_sampler_calibration_meets_the_target_through_zcdp(d, T, epsilon, delta):
    """ε′ = CKS20's conversion of the exact ρ (rounding included) is ≤ ε and within 10⁻⁶ of it;
    the trees' own accounting composes to that ρ; σ is above the float σ (by 7.6 % at
    d = 5, T = 10⁴, ε = 1, δ = 10⁻⁶: the zCDP conversion is looser than the exact GDP one)."""
    from privenv.privacy.accounting import rho_to_epsilon_cks

    flt = CentralDPLinUCB(d, T, epsilon, delta)
    ex = CentralDPLinUCB(d, T, epsilon, delta, sampler="exact")
    assert ex.noise_sigma > flt.noise_sigma
    g = ex.privacy
    assert g.sampler == "exact" and g.delta == delta
    assert epsilon * (1 - 1e-6) < g.epsilon <= epsilon
    assert g.epsilon == rho_to_epsilon_cks(ex.rho, delta)
    ex.reset(seed=0)
    gram_s = math.sqrt(2.0) if d >= 2 else 1.0
    assert ex.gram_tree.rho(gram_s) + ex.moment_tree.rho(2.0) == pytest.approx(ex.rho, rel=1e-12)
    if (d, T) == (5, 10**4):
        assert ex.noise_sigma / flt.noise_sigma == pytest.approx(1.076, abs=5e-4)


def test_exact_sampler_runs_are_batch_invariant_and_differ_from_float():
    kw = {"epsilon": 1.0, "sampler": "exact"}
    batch = simulate(NAME, ENV, n_runs=3, horizon=40, seed=7, agent_kwargs=kw)
    alone = simulate(NAME, ENV, n_runs=1, horizon=40, seed=7, first_run=2, agent_kwargs=kw)
    np.testing.assert_array_equal(alone.regret_curve[0], batch.regret_curve[2])
    agent = make(NAME, ENV, 2, **kw)
    simulate(agent, ENV, n_runs=2, horizon=40, seed=7)
    g = agent.gram_tree.grid.granularity
    assert np.all(agent.G / g == np.round(agent.G / g))  # every release on the grid


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("central-dp-linucb", "central-dp-linucb-exact")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
