"""The DP Top Two of Jourdan & Azize 2025 as reconstructed in privenv.agents.dp_top_two: its
transportation cost and threshold, its lower bound (privenv.theory.dp_bai), the privacy ledger,
δ-correctness at small scale and the privacy audit."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from recording import recording
from scipy import stats

from privenv.agents import make
from privenv.agents.dp_top_two import DPTopTwo, dp_glr_threshold, dp_transport
from privenv.privacy.ledger import PrivacyBudgetExceeded
from privenv.simulation import simulate
from privenv.theory.bai import (
    characteristic_time_kl,
    characteristic_time_tv,
    global_dp_lower_bound,
)
from privenv.theory.dp_bai import _weight_ratio, characteristic_time_dp, optimal_allocation_dp
from privenv.theory.regret import d_eps, kl_bern

ENV = "BestArmIdentification-v0"


# -- the transportation cost -------------------------------------------------------------------
def test_transport_is_the_minimum_over_the_segment():
    """The closed forms of the four regimes against a dense grid of u on [x_b, x_a] (a grid
    point's cost is ≥ the infimum; the infimum is within the grid's second-order error of the
    best grid point), for random means, weights and ε from 10⁻³ to 10²."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        x_a, x_b = sorted(rng.uniform(0.0, 1.0, 2))[::-1]
        w_a, w_b = rng.uniform(1.0, 1000.0, 2)
        eps = 10 ** rng.uniform(-3.0, 2.0)
        grid = np.linspace(x_b, x_a, 4001)
        best = min(w_a * d_eps(x_a, u, eps) + w_b * d_eps(x_b, u, eps) for u in grid)
        value = dp_transport(x_a, x_b, w_a, w_b, eps)
        assert value <= best * (1 + 1e-12) + 1e-12
        assert value >= best * (1 - 1e-3) - 1e-9


def test_transport_limits():
    # ε large: the KL transportation cost of a Bernoulli pair, at the weighted mean
    u = (100 * 0.8 + 50 * 0.3) / 150
    expected = 100 * kl_bern(0.8, u) + 50 * kl_bern(0.3, u)
    assert dp_transport(0.8, 0.3, 100.0, 50.0, 1e3) == pytest.approx(expected, rel=1e-12)
    # ε small: ε·TV at the cheaper end, ε·min(w_a, w_b)·Δ to first order
    assert dp_transport(0.8, 0.3, 100.0, 50.0, 1e-6) == pytest.approx(1e-6 * 50 * 0.5, rel=1e-3)
    # no cost when the order is already the alternative's; means outside [0, 1] are clipped
    assert dp_transport(0.3, 0.8, 10.0, 10.0, 1.0) == 0.0
    assert dp_transport(1.7, -0.4, 10.0, 20.0, 1.0) == dp_transport(1.0, 0.0, 10.0, 20.0, 1.0)


# -- the threshold -----------------------------------------------------------------------------
def test_threshold_grows_with_the_releases_and_the_confidence():
    c = np.array([[dp_glr_threshold(i, j, 5, 0.01) for j in range(1, 30)] for i in range(1, 30)])
    assert np.all(np.diff(c, axis=0) > 0) and np.all(np.diff(c, axis=1) > 0)
    assert np.allclose(c, c.T)
    assert dp_glr_threshold(3, 4, 5, 1e-3) > dp_glr_threshold(3, 4, 5, 1e-2)
    assert dp_glr_threshold(3, 4, 10, 1e-2) > dp_glr_threshold(3, 4, 5, 1e-2)


def test_threshold_is_log_one_over_delta_asymptotically():
    """c(k_a, k_b)/log(1/δ) → 1 as δ → 0 (the Laplace terms are lower order), and c ≥ log(1/δ)."""
    for k in (1, 5, 20):
        ratios = [dp_glr_threshold(k, k, 5, math.exp(-log_inv)) / log_inv
                  for log_inv in (10.0, 100.0, 690.0)]
        assert min(ratios) >= 1.0 and ratios[0] > ratios[1] > ratios[2]
    assert dp_glr_threshold(1, 1, 5, 1e-300) / math.log(1e300) < 1.05


def test_threshold_solves_its_two_equations():
    """(1 + t)e^{−t} = δ′ and the optimal γ: c is the minimum of (t + m log(1/(1 − γ²)))/γ."""
    k_a, k_b, K, delta = 3, 7, 4, 0.05
    log_inv = math.log((K - 1) / delta) + math.log(math.pi**4 / 36) + 2 * math.log(k_a * k_b)
    t = log_inv
    for _ in range(200):  # fixed point of t = log_inv + log(1 + t)
        t = log_inv + math.log1p(t)
    m = k_a + k_b
    gammas = np.linspace(1e-4, 1 - 1e-9, 200_001)
    brute = np.min((t + m * np.log(1 / (1 - gammas**2))) / gammas)
    assert dp_glr_threshold(k_a, k_b, K, delta) == pytest.approx(brute, rel=1e-6)


# -- the lower bound T*_ε (privenv.theory.dp_bai) ------------------------------------------------
def test_characteristic_time_hand_computed():
    """μ = (0.6, 0.4), ε = 0.1: by symmetry (μ → 1 − μ swaps the arms, d_ε is invariant) ω = (½, ½)
    and u = ½, so T*_ε = 1/d_ε(0.6, 0.5). By hand: z* = σ(logit ½ + ε) = 1/(1 + e^{−0.1}) =
    0.524979…, d_ε = 0.1(0.6 − z*) + kl(z*, ½) = 0.0075021 + 0.0012484 = 0.0087505."""
    z = 1.0 / (1.0 + math.exp(-0.1))
    d = 0.1 * (0.6 - z) + z * math.log(2 * z) + (1 - z) * math.log(2 * (1 - z))
    assert d == pytest.approx(0.0087505, abs=1e-7)
    T, omega = optimal_allocation_dp([0.6, 0.4], 0.1)
    assert T == pytest.approx(1.0 / d, rel=1e-6)
    np.testing.assert_allclose(omega, [0.5, 0.5], atol=1e-5)


@pytest.mark.parametrize("mu", [(0.95, 0.9, 0.9, 0.9, 0.5), (0.75, 0.625, 0.5, 0.375, 0.25)],
                         ids=["mu1", "mu4"])
def test_characteristic_time_between_its_limits(mu):
    T_kl, T_tv = characteristic_time_kl(mu), characteristic_time_tv(mu)
    assert characteristic_time_dp(mu, 1e3) == pytest.approx(T_kl, rel=1e-6)  # ε → ∞: KL
    assert 1e-4 * characteristic_time_dp(mu, 1e-4) == pytest.approx(T_tv, rel=1e-3)  # ε → 0: TV/ε
    for eps in (0.01, 0.1, 1.0, 10.0):  # d_ε ≤ min(kl, ε TV): above paper 3's Theorem 17 bound
        assert characteristic_time_dp(mu, eps) >= global_dp_lower_bound(mu, eps) * (1 - 1e-9)


def test_a_best_arm_of_mean_one_at_small_epsilon_is_refused_in_one_line_and_judged_on_T_g():
    """μ3 = (0, 0.25, 0.5, 0.75, 1) at ε ≤ 0.3: the solver finds no allocation (near u = 1 the
    weight ratio never falls to 0). It divided by zero, and dp-bai-optimal's run over ε 0.1–10
    crashed after its last cell; now a ValueError names μ and ε, and the reproduction judges those
    points against paper 3's T*_g alone."""
    mu3 = (0.0, 0.25, 0.5, 0.75, 1.0)
    with pytest.raises(ValueError, match=r"T\*_eps: no allocation found .* epsilon = 0.1 "):
        characteristic_time_dp(mu3, 0.1)
    assert characteristic_time_dp(mu3, 1.0) >= global_dp_lower_bound(mu3, 1.0) * (1 - 1e-9)
    from privenv.reproduce.dp_bai_optimal import characteristic_times

    assert set(characteristic_times("mu3", 0.1)) == {"T*_g"}
    assert set(characteristic_times("mu3", 1.0)) == {"T*_g", "T*_eps"}
    below_one = float(np.nextafter(1.0, 0.0))  # u − z*_a rounds to 0 there: x = +inf
    assert _weight_ratio(1.0, 0.0, below_one, 0.01) == math.inf


# -- privacy: the ledger -----------------------------------------------------------------------
def _released_mask(agent) -> np.ndarray:
    """Which (run, pull) rewards are in a release: pull j of arm a is, iff j ≤ Ñ_a."""
    arms = np.stack(agent.actions, axis=1)
    mask = np.zeros(arms.shape, dtype=bool)
    for r in range(arms.shape[0]):
        seen = np.zeros(agent.K, dtype=np.int64)
        for t, a in enumerate(arms[r]):
            if a < agent.K:
                seen[a] += 1
                mask[r, t] = seen[a] <= agent.n_tilde[r, a]
    return mask


def test_ledger_each_released_reward_charged_exactly_once():
    eps, runs = 0.5, 3
    agent = recording(DPTopTwo)(K=5, epsilon=eps, n_runs=runs)
    simulate(agent, ENV, n_runs=runs, seed=1, horizon=3000, env_kwargs={"instance": "mu4"},
             ledger=True)
    released = _released_mask(agent)
    assert released[:, :5].all() and (~released).any()  # initial pulls; an open batch at T
    agent.ledger.assert_each_user_charged_exactly(eps, users_mask=released)


@pytest.mark.parametrize("hook", [{"noise_multiplier": 0.5}, {"forget": False}],
                         ids=["noise x 0.5", "reward reused"])
def test_ledger_catches_mutations(hook):
    eps, runs = 0.5, 3
    agent = type("Mutant", (recording(DPTopTwo),), hook)(K=5, epsilon=eps, n_runs=runs)
    simulate(agent, ENV, n_runs=runs, seed=1, horizon=3000, env_kwargs={"instance": "mu4"},
             ledger=True)
    with pytest.raises(PrivacyBudgetExceeded):
        agent.ledger.assert_each_user_charged_exactly(eps, users_mask=_released_mask(agent))


# -- the estimator ------------------------------------------------------------------------------
def test_batches_are_geometric_and_arm_dependent():
    agent = DPTopTwo(K=3, epsilon=1.0, ratio=1.5, n_runs=2)
    simulate(agent, ENV, n_runs=2, seed=3, horizon=400, env_kwargs={"means": [0.7, 0.5, 0.3]})
    ends = [1]
    while len(ends) < 40:
        ends.append(max(ends[-1] + 1, math.ceil(1.5 * ends[-1])))
    for run in range(2):
        for arm in range(3):
            k = agent.phases[run, arm]
            assert agent.n_tilde[run, arm] == ends[k - 1]  # Ñ = n_k after k releases


# -- the sampling rule ----------------------------------------------------------------------------
@pytest.mark.parametrize("weights", ["pulls", "released"])
def test_challenger_weighs_the_arms_by_the_chosen_counts(weights):
    """From the state before each step of one run (μ2, ε = 0.1, through the Gym loop): the pulled
    arm is the leader B = argmax μ̃ or the challenger argmin_{a≠B} W^ε_{B,a}(μ̃, w) + log w_a, with
    w = N (``challenger_weights="pulls"``) or w = Ñ (``"released"``); and at some steps the
    challenger of the other weights is neither, so the check tells the two apart."""
    env = gym.make(ENV, instance="mu2", horizon=30_000)
    agent = make("dp-top-two", env, n_runs=1, epsilon=0.1, challenger_weights=weights)
    obs, _ = env.reset(seed=4)
    agent.reset(seed=4)
    eps, told_apart, steps = agent.epsilon, 0, 0

    def challenger(mu: np.ndarray, w: np.ndarray, leader: int) -> int:
        cost = [dp_transport(mu[leader], mu[a], w[leader], w[a], eps) + math.log(w[a])
                if a != leader else np.inf for a in range(agent.K)]
        return int(np.argmin(cost))

    for _ in range(30_000):
        n, mu, n_tilde = agent.counts[0].copy(), agent.mu_tilde[0].copy(), agent.n_tilde[0].copy()
        a = int(agent.act(obs))
        if a >= agent.K:
            break
        if n.min() > 0:
            leader = int(np.argmax(mu))
            own, other = (n, n_tilde) if weights == "pulls" else (n_tilde, n)
            assert a in (leader, challenger(mu, own, leader))
            told_apart += a not in (leader, challenger(mu, other, leader))
            steps += 1
        obs, reward, *_ = env.step(a)
        agent.observe(a, reward, obs)
    assert steps > 10_000 and told_apart > 0


# -- the guarantee: δ-correct, stops ---------------------------------------------------------------
def test_delta_correct_and_stops_at_small_scale():
    """δ = 0.1 on μ = (0.6, 0.5, 0.4) at ε = 1 and ε = 0.1, 200 runs each (seed fixed): every run
    stops within the budget, and the number of wrong recommendations is at most the 1 − 10⁻³
    quantile of Binomial(200, δ) — the test's false-alarm probability for a δ-correct agent is
    ≤ 10⁻³ per ε. The threshold is conservative, so in practice no run errs."""
    delta, runs = 0.1, 200
    limit = stats.binom.ppf(1 - 1e-3, runs, delta)
    for eps in (1.0, 0.1):
        res = simulate("dp-top-two", ENV, n_runs=runs, seed=7, horizon=10**7,
                       env_kwargs={"means": [0.6, 0.5, 0.4]},
                       agent_kwargs={"epsilon": eps, "delta": delta})
        stopped = np.asarray(res.episode["recommendation"]) >= 0
        assert stopped.all()
        assert (~np.asarray(res.episode["correct"], dtype=bool)).sum() <= limit


# -- the privacy audit (privenv.audits.zoo) at the quick size, with its mutants -----------------
AUDIT_TARGETS = ("dp-top-two",)


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
