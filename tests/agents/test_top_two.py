"""Top Two best-arm identification (paper 3, Algorithm 1): the ingredients and TTUCB."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import zeta
from scipy.stats import binom

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.top_two import (
    C_G,
    TTUCB,
    count_term,
    empirical_threshold,
    g_G,
    gaussian_bonus,
    gaussian_transport,
    glr_threshold,
    glr_threshold_constant,
)
from privenv.simulation import play, simulate

DELTA = 0.01
N_RUNS = 200
MU1 = {"instance": "mu1", "reward_mode": "sample"}
BUDGET = 200_000  # every run on μ1 stops well before (measured maximum ≈ 46 000)


@pytest.fixture(scope="module")
def mu1_result():
    return simulate("ttucb", "BestArmIdentification-v0", n_runs=N_RUNS, seed=0, horizon=BUDGET,
                    env_kwargs=MU1, agent_kwargs={"delta": DELTA})


# -- eq. 20, 4 and 3: hand-checked values -------------------------------------------------------


def test_g_G_hand_value():
    # λ = 3/4: 3/2 − (3/2) log 3 + log ζ(3/2) − ½ log(1/4), ζ(3/2) = 2.612375348685488 (tables)
    hand = 1.5 - 1.5 * math.log(3) + math.log(2.612375348685488) + 0.5 * math.log(4)
    assert g_G(0.75) == pytest.approx(hand, rel=1e-12)


@pytest.mark.parametrize("x", [0.5, math.log(4 / DELTA) / 2, 5.0, 20.0])
def test_C_G_matches_brute_force_grid(x):
    # independent check: the objective on a fine grid of λ ∈ (1/2, 1), vectorised
    lam = np.linspace(0.5, 1.0, 400_001)[1:-1]
    g = 2 * lam - 2 * lam * np.log(4 * lam) + np.log(zeta(2 * lam)) - 0.5 * np.log(1 - lam)
    grid_min = np.min((g + x) / lam)
    assert C_G(x) <= grid_min + 1e-12  # the optimiser is at least as good as the grid …
    assert C_G(x) == pytest.approx(grid_min, abs=1e-7)  # … and the grid is fine enough
    assert C_G(x) > x
    if x >= 2:
        assert C_G(x) < x + math.log(x) + 1.0  # 𝒞_G(x) ≈ x + log x (paper, after eq. 4)


def test_glr_threshold_hand_value():
    # K = 5, δ = 0.01, ω_a = e, ω_b = e²: 2𝒞_G(log(400)/2) + 2 log 5 + 2 log 6
    c = glr_threshold(np.array([math.e]), np.array([math.e**2]), K=5, delta=DELTA)
    assert c[0] == pytest.approx(2 * C_G(math.log(400) / 2) + 2 * math.log(5) + 2 * math.log(6))
    assert glr_threshold_constant(5, DELTA) == pytest.approx(9.2876726, abs=1e-6)  # measured once
    assert empirical_threshold(np.array([math.e]), DELTA)[0] == pytest.approx(math.log(200))


def test_transport_and_bonus_hand_values():
    # (0.9 − 0.5)² / (2·¼·(½ + ½)) = 0.32; the sign matters
    assert gaussian_transport(0.9, 0.5, 2.0, 2.0, 0.5) == pytest.approx(0.32)
    assert gaussian_transport(0.5, 0.9, 2.0, 2.0, 0.5) == 0.0
    assert gaussian_transport(0.9, 0.5, 2.0, 2.0, 1.0) == pytest.approx(0.08)
    # √(2·¼·1.2·2.2·log(e²)/4) = √0.66
    assert gaussian_bonus(4.0, math.e**2, 0.5, 1.2, 1.2) == pytest.approx(math.sqrt(0.66))


def test_empirical_statistic_is_unit_variance():
    theory = TTUCB(K=3, threshold="theory", n_runs=1)
    empirical = TTUCB(K=3, threshold="empirical", n_runs=1)
    assert (theory.params.glr_sigma, empirical.params.glr_sigma) == (0.5, 1.0)
    mu, w = np.array([0.9, 0.5, 0.7]), np.array([2.0, 2.0, 4.0])
    unit = gaussian_transport(mu[0], mu, w[0], w, empirical.params.glr_sigma)
    assert unit == pytest.approx([0.0, 0.08, 0.5 * 0.04 / 0.75])  # ½(μ_0 − μ_b)²/(1/N_0 + 1/N_b)
    sigma_half = gaussian_transport(mu[0], mu, w[0], w, theory.params.glr_sigma)
    assert sigma_half == pytest.approx(4 * unit)  # σ = ½


# -- Algorithm 1, step by step ------------------------------------------------------------------


def test_one_step_by_hand():
    # K = 3 after initialisation with rewards (1, 0, 1): μ̂ = (1, 0, 1), N = (1, 1, 1)
    agent = TTUCB(K=3, n_runs=1)
    agent.reset(seed=0)
    for a, r in enumerate([1.0, 0.0, 1.0]):
        assert agent.act(0.0) == a
        agent.observe(a, r, 0.0)
    # leader: equal bonuses, ties → arm 0; challenger: W_{0,1} = ½, W_{0,2} = 0 → arm 2;
    # L_0 = 1, N^0_0 = 0 ≤ ½ → pull the leader
    assert agent.act(0.0) == 0
    assert agent.leader_counts[0].tolist() == [1, 0, 0]
    assert agent.leader_pulls[0].tolist() == [1, 0, 0]
    agent.observe(0, 1.0, 0.0)
    # μ̂ = (1, 0, 1), N = (2, 1, 1): bonus of arm 2 larger → leader 2; L_2 = 1, N^2_2 = 0 → pull 2
    assert agent.act(0.0) == 2
    agent.observe(2, 0.0, 0.0)
    # μ̂ = (1, 0, ½), N = (2, 1, 2): b = √(0.66·log 5/ω) → indices (1.73, 1.03, 1.23): leader 0;
    # L_0 = 2, N^0_0 = 1 ≤ 1 → leader again
    assert agent.act(0.0) == 0
    agent.observe(0, 1.0, 0.0)
    # μ̂ = (1, 0, ½), N = (3, 1, 2), log 6: indices (1.63, 1.09, 1.27): leader 0; L_0 = 3,
    # N^0_0 = 2 > 3/2 → challenger: W_{0,1} = 1/(½(⅓ + 1)) = 1.5, W_{0,2} = ¼/(½(⅓ + ½)) = 0.6
    assert agent.act(0.0) == 2
    assert agent.leader_counts[0].tolist() == [3, 0, 1]
    assert agent.leader_pulls[0].tolist() == [2, 0, 1]


def test_beta_tracking_invariant():
    # paper 3 after eq. 5: max_{a, n>K} |N^a_{n,a} − β L_{n,a}| ≤ 1 (Degenne et al. 2020); one
    # leader per step: Σ_a L_a = n − K; the pulled arms add up to the counts
    rng = np.random.default_rng(7)
    mu = np.array([0.95, 0.9, 0.9, 0.9, 0.5])
    agent = TTUCB(K=5, n_runs=50)
    agent.reset(seed=0)
    obs = np.zeros((50, 1))
    for t in range(2000):
        a = agent.act_batch(obs)
        assert not agent.stopped.any()  # far too early to stop at δ = 0.01 on μ1
        agent.observe_batch(a, (rng.random(50) < mu[a]).astype(float), obs)
        if t >= 5:
            assert np.abs(agent.leader_pulls - 0.5 * agent.leader_counts).max() <= 1.0
    assert (agent.leader_counts.sum(axis=1) == 2000 - 5).all()
    assert (agent.counts.sum(axis=1) == 2000).all()
    assert (agent.leader_pulls <= agent.counts).all()


def test_stops_when_glr_crosses_threshold_and_then_ignores_feedback():
    agent = TTUCB(K=2, n_runs=2)
    agent.reset(seed=0)
    for a in range(2):
        agent.act_batch(np.zeros((2, 1)))
        agent.observe_batch(np.full(2, a), np.array([1.0, 1.0 - a]), np.zeros((2, 1)))
    # force a decisive history in run 1 only: arm 0 always 1, arm 1 always 0, many pulls
    agent.counts[1] = [10_000, 10_000]
    agent.state.t[1] = 20_000  # steps observed: every one a pull
    agent.sums[1] = [10_000.0, 0.0]
    agent.mu_tilde[1], agent.n_tilde[1] = [1.0, 0.0], [10_000, 10_000]  # what the rules read
    agent.glr_thr[1] = count_term(np.array([10_000.0, 10_000.0]))  # and c^G's per-arm terms
    actions = agent.act_batch(np.zeros((2, 1)))
    assert actions[0] < 2 and actions[1] == 2 + 0  # run 1 stops and recommends arm 0
    assert agent.recommendation.tolist() == [-1, 0]
    assert agent.stopping_time[1] == 20_000
    before = (agent.counts.copy(), agent.sums.copy(), agent.leader_counts.copy())
    agent.observe_batch(actions, np.array([1.0, 1.0]), np.zeros((2, 1)))
    actions = agent.act_batch(np.zeros((2, 1)))
    assert actions[1] == 2  # a stopped run keeps its stop action …
    assert agent.counts[1].tolist() == before[0][1].tolist()  # … and its frozen state
    assert agent.sums[1].tolist() == before[1][1].tolist()
    assert agent.leader_counts[1].tolist() == before[2][1].tolist()


# -- TTUCB on μ1 (δ = 0.01) ---------------------------------------------------------------------


def test_ttucb_mu1_stops_correctly(mu1_result):
    st, correct = mu1_result.episode["stopping_time"], mu1_result.episode["correct"]
    assert (mu1_result.steps < BUDGET).all()  # every run stopped (none truncated)
    assert (mu1_result.episode["recommendation"] >= 0).all()
    # δ-correctness: if P(error) ≤ δ, P(Bin(200, δ) ≥ 7) ≈ 0.45% — the false-alarm probability
    assert binom.sf(6, N_RUNS, DELTA) < 0.005
    assert int((~correct).sum()) <= 6
    # sample complexity: σ = ½ Gaussian complexity H = 2σ²ΣΔ_a⁻² (Δ_{a*} = Δ_min) ≤ T* ≤ 2H;
    # τ ≈ T*_β · c(τ) with c ≈ 20 here. Measured mean ≈ 31 000 (seed 0).
    mu = np.array([0.95, 0.9, 0.9, 0.9, 0.5])
    gaps = np.where(mu == mu.max(), 0.05, mu.max() - mu)
    H = 2 * 0.25 * np.sum(gaps**-2.0)
    assert H * math.log(1 / DELTA) < st.mean() < 2 * H * 30
    # per-run stopping time is the number of pulls, and the runner's steps include the stop step
    assert (mu1_result.steps == st + 1).all()


def test_runs_alone_equal_runs_in_batch(mu1_result):
    # runs 117 and 118 in a batch of 2 (first_run=117) equal themselves in the batch of 200
    alone = simulate("ttucb", "BestArmIdentification-v0", n_runs=2, seed=0, first_run=117,
                     horizon=BUDGET, env_kwargs=MU1, agent_kwargs={"delta": DELTA})
    for key in ("stopping_time", "recommendation", "correct"):
        assert (alone.episode[key] == mu1_result.episode[key][117:119]).all()


def _play_matches_simulate(instance, runs, batch=None):
    env = gym.make("BestArmIdentification-v0", instance=instance, reward_mode="sample")
    agent = make("ttucb", env, 1, delta=DELTA)
    assert agent.sigma == 0.5 and agent.K == 5  # filled from the env's public description
    if batch is None:
        batch = simulate("ttucb", "BestArmIdentification-v0", n_runs=max(runs) + 1, seed=0,
                         horizon=BUDGET, env_kwargs={"instance": instance, "reward_mode": "sample"},
                         agent_kwargs={"delta": DELTA})
    for run in runs:
        out = play(agent, env, seed=0, run=run)
        assert out["info"]["stopping_time"] == batch.episode["stopping_time"][run]
        assert out["info"]["recommendation"] == batch.episode["recommendation"][run]
        assert out["steps"] == batch.steps[run]


def test_play_matches_simulate_mu3():
    _play_matches_simulate("mu3", [0, 1, 2])


@pytest.mark.slow
def test_play_matches_simulate_mu1(mu1_result):  # ≈ 4 s per run through gym.make's wrappers
    _play_matches_simulate("mu1", [0, 1], mu1_result)


def test_cost_mode_reads_samples_from_observations():
    # the env's default encoding: reward −1, sample in the observation (make fills reward_mode)
    runs = {mode: simulate("ttucb", "BestArmIdentification-v0", n_runs=5, seed=0, horizon=BUDGET,
                           env_kwargs={"instance": "mu4", "reward_mode": mode},
                           agent_kwargs={"delta": DELTA}) for mode in ("cost", "sample")}
    assert (runs["cost"].episode["stopping_time"] == runs["sample"].episode["stopping_time"]).all()


def test_empirical_threshold_runs_stop():
    # the unit-variance statistic is 4× smaller than σ = ½'s: slower than "theory" on Bernoulli
    kw = {"instance": "mu4", "reward_mode": "sample"}
    res = {thr: simulate("ttucb", "BestArmIdentification-v0", n_runs=20, seed=1, horizon=BUDGET,
                         env_kwargs=kw, agent_kwargs={"delta": DELTA, "threshold": thr})
           for thr in ("empirical", "theory")}
    assert (res["empirical"].steps < BUDGET).all() and res["empirical"].episode["correct"].all()
    assert (res["empirical"].episode["stopping_time"].mean()
            > res["theory"].episode["stopping_time"].mean())


@pytest.mark.parametrize("kwargs,param", [
    ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"), ({"delta": -0.5}, "delta"),
    ({"threshold": "tight"}, "threshold"), ({"beta": 1.0}, "beta"), ({"alpha": 1.0}, "alpha"),
    ({"s": 0.5}, "s"), ({"sigma": 0.0}, "sigma"), ({"K": 1}, "K"),
    ({"reward_mode": "x"}, "reward_mode"),
])
def test_bad_input(kwargs, param):
    with pytest.raises(ValueError, match=param):
        TTUCB(**{"K": 5, **kwargs})


# -- numerical robustness (docs/design/threat-model.md) -------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    delta=st.floats(1e-12, 0.5),
    n_a=st.integers(1, 10**9),
    n_b=st.integers(1, 10**9),
    K=st.integers(2, 1000),
)
def test_thresholds_bonus_and_transport_stay_finite(delta, n_a, n_b, K):
    """c^G (eq. 4), the empirical threshold, b^G and W^G (eq. 3) are finite and ≥ 0 for δ in
    [10⁻¹², ½] and counts from 1 to 10⁹."""
    w_a, w_b = np.array([float(n_a)]), np.array([float(n_b)])
    c = glr_threshold(w_a, w_b, K, delta)
    emp = empirical_threshold(w_a + w_b, delta)
    bonus = gaussian_bonus(w_a, w_a + w_b, 0.5, 1.2, 1.2)
    cost = gaussian_transport(np.array([1.0]), np.array([0.0]), w_a, w_b, 0.5)
    for v in (c, emp, bonus, cost):
        assert np.all(np.isfinite(v)) and np.all(v >= 0)
    assert c[0] >= 2 * math.log((K - 1) / delta) / 2  # 𝒞_G(x) ≥ x


def test_the_gaussian_ldp_ttucb_with_empirical_thresholds_is_delta_correct():
    """Its rewards have variance σ²_{ε,γ} + 1/4 ≈ 18 at ε = 1: against the empirical thresholds the
    GLR statistic uses that σ (a unit-variance one stopped after a few pulls, mostly wrong). 20
    runs on μ4 at δ = 0.01: every recommendation is right. If the agent were only just
    δ-correct, P(any of 20 wrong) ≤ 20δ = 0.2; the unit-variance statistic gets most runs wrong.
    Fixed seed."""
    res = simulate("gaussian-ldp-ttucb", "BestArmIdentification-v0", n_runs=20, seed=1,
                   horizon=10**8, env_kwargs={"instance": "mu4"},
                   agent_kwargs={"delta": 0.01, "epsilon": 1.0, "threshold": "empirical"})
    assert res.episode["correct"].all()  # a run that has not stopped is not correct
