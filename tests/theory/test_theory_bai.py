"""Paper 3 characteristic times and lower bounds (privenv.theory.bai).

Closed forms checked against (derived here, σ the Gaussian standard deviation, Δ = μ_1 − μ_2):

* K = 2 Gaussian: inf_λ ω_1(μ_1−λ)²/(2σ²) + ω_2(μ_2−λ)²/(2σ²) = ω_1ω_2Δ²/(2σ²(ω_1+ω_2)), maximised
  at ω = (1/2, 1/2): T*_KL = 8σ²/Δ²; with ω_1 = β: T*_{KL,β} = 2σ²(1/β + 1/(1−β))/Δ² (eq. 5).
* K = 2 Bernoulli: by the minimax theorem T*_KL⁻¹ = inf_λ max{kl(μ_1, λ), kl(μ_2, λ)} = kl(μ_1, λ*)
  with kl(μ_1, λ*) = kl(μ_2, λ*) (Chernoff information); for μ = (0.9, 0.1), λ* = 1/2 and
  kl(0.9, 0.5) = 0.9 log 1.8 + 0.1 log 0.2.
* K = 2 Bernoulli: T*_TV = 2/Δ, T*_{TV²} = 4/Δ² (sup_ω ω_1ω_2Δ² = Δ²/4).
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from privenv.theory import bai

# Appendix I of paper 3 (Sajed & Sheffet 2019 instances); the paper tabulates no T* values.
PAPER_INSTANCES = [
    (0.95, 0.9, 0.9, 0.9, 0.5),
    (0.75, 0.7, 0.7, 0.7, 0.7),
    (0.0, 0.25, 0.5, 0.75, 1.0),
    (0.75, 0.625, 0.5, 0.375, 0.25),
    (0.75, 0.53125, 0.375, 0.28125, 0.25),
    (0.75, 0.71875, 0.625, 0.46875, 0.25),
]


def kl_ber(p, q):
    # independent of the module: plain formula, interior p, q only
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


def pair_cost_numeric(kl, mu_best, mu_a, w_best, w_a):
    """inf over λ ∈ [μ_a, μ_best] of w_best·kl(μ_best, λ) + w_a·kl(μ_a, λ), by a scalar optimiser
    (does not use the weighted-mean argmin the module relies on)."""
    res = minimize_scalar(
        lambda lam: w_best * kl(mu_best, lam) + w_a * kl(mu_a, lam),
        bounds=(mu_a, mu_best),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return res.fun


# -- divergences ---------------------------------------------------------------------------------


def test_kl_hand_values():
    assert bai.kl_bernoulli(0.9, 0.5) == pytest.approx(0.9 * math.log(1.8) + 0.1 * math.log(0.2))
    assert bai.kl_bernoulli(0.0, 0.0) == 0.0
    assert bai.kl_bernoulli(1.0, 0.5) == pytest.approx(math.log(2.0))
    assert bai.kl_bernoulli(1.0, 0.0) == math.inf
    assert bai.kl_gaussian(1.0, 0.5, sigma=2.0) == pytest.approx(0.25 / 8.0)
    np.testing.assert_allclose(bai.kl_gaussian([0.0, 1.0], [1.0, 1.0]), [0.5, 0.0])


# -- T*_KL and T*_{KL,β} ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mu", "sigma"), [((1.0, 0.5), 1.0), ((0.2, -0.3), 0.5), ((3.0, 5.0), 2.0)]
)
def test_two_arm_gaussian_closed_form(mu, sigma):
    delta = abs(mu[0] - mu[1])
    T, omega = bai.optimal_allocation_kl(mu, "gaussian", sigma)
    assert T == pytest.approx(8 * sigma**2 / delta**2, rel=1e-9)
    np.testing.assert_allclose(omega, [0.5, 0.5], atol=1e-6)
    for beta in (0.1, 0.3, 0.5, 0.8):
        Tb = bai.characteristic_time_kl_beta(mu, beta, "gaussian", sigma)
        assert Tb == pytest.approx(2 * sigma**2 * (1 / beta + 1 / (1 - beta)) / delta**2, rel=1e-9)


def test_two_arm_bernoulli_hand_value_and_chernoff():
    # symmetric: λ* = 1/2 by hand
    T, omega = bai.optimal_allocation_kl([0.9, 0.1])
    assert T == pytest.approx(1 / (0.9 * math.log(1.8) + 0.1 * math.log(0.2)), rel=1e-9)
    assert T == pytest.approx(2.716917, rel=1e-6)
    np.testing.assert_allclose(omega, [0.5, 0.5], atol=1e-6)
    # asymmetric: Chernoff information, solved independently
    for mu1, mu2 in [(0.7, 0.2), (0.95, 0.9), (0.3, 0.05)]:
        lam = brentq(lambda x, a=mu1, b=mu2: kl_ber(a, x) - kl_ber(b, x), mu2 + 1e-12, mu1 - 1e-12)
        expected = 1 / kl_ber(mu1, lam)
        assert bai.characteristic_time_kl([mu1, mu2]) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("mu", [(0.8, 0.6, 0.5, 0.2), (0.3, 0.45, 0.1)])
def test_bernoulli_allocation_is_optimal_against_an_independent_inner_solver(mu):
    T, omega = bai.optimal_allocation_kl(mu)
    assert omega.sum() == pytest.approx(1.0)
    best = int(np.argmax(mu))
    others = [a for a in range(len(mu)) if a != best]

    def value(w):
        return min(pair_cost_numeric(kl_ber, mu[best], mu[a], w[best], w[a]) for a in others)

    # the optimum equalises the pair costs (Garivier & Kaufmann 2016, Theorem 5) ...
    costs = [pair_cost_numeric(kl_ber, mu[best], mu[a], omega[best], omega[a]) for a in others]
    np.testing.assert_allclose(costs, 1 / T, rtol=1e-6)
    # ... and no allocation does better (deterministic Dirichlet draws, fixed seed)
    rng = np.random.default_rng(0)
    for w in rng.dirichlet(np.ones(len(mu)), size=200):
        assert value(w) <= 1 / T * (1 + 1e-7)


def test_gaussian_bounds_of_section_2_2_3():
    # H ≤ T*_KL ≤ 2H, H = 2σ² Σ_a Δ_a⁻² with Δ_{a*} = Δ_min; T*_{KL,1/2} ≤ 2 T*_KL (eq. 5)
    mu, sigma = np.array([1.0, 0.8, 0.5, 0.4, -1.0]), 0.7
    gaps = mu[0] - mu[1:]
    H = 2 * sigma**2 * (1 / gaps.min() ** 2 + np.sum(1 / gaps**2))
    T = bai.characteristic_time_kl(mu, "gaussian", sigma)
    assert H <= T <= 2 * H
    assert T <= bai.characteristic_time_kl_beta(mu, 0.5, "gaussian", sigma) <= 2 * T


@pytest.mark.parametrize("mu", [PAPER_INSTANCES[0], PAPER_INSTANCES[2]])
def test_t_star_is_min_over_beta(mu):
    T, omega = bai.optimal_allocation_kl(mu)
    best = int(np.argmax(mu))
    for beta in (0.2, 0.35, 0.5, 0.65):
        assert bai.characteristic_time_kl_beta(mu, beta) >= T * (1 - 1e-9)
    Tb, omega_b = bai.optimal_allocation_kl_beta(mu, omega[best])
    assert Tb == pytest.approx(T, rel=1e-6)
    np.testing.assert_allclose(omega_b, omega, atol=1e-5)
    assert omega_b.sum() == pytest.approx(1.0)
    assert bai.characteristic_time_kl_beta(mu, 0.5) <= 2 * T


def test_permutation_invariance():
    mu = np.array([0.75, 0.53125, 0.375, 0.28125, 0.25])
    perm = np.array([3, 0, 4, 1, 2])
    T, omega = bai.optimal_allocation_kl(mu)
    Tp, omega_p = bai.optimal_allocation_kl(mu[perm])
    assert Tp == pytest.approx(T, rel=1e-9)
    np.testing.assert_allclose(omega_p, omega[perm], atol=1e-7)
    assert bai.characteristic_time_tv(mu[perm]) == pytest.approx(bai.characteristic_time_tv(mu))
    assert bai.global_dp_lower_bound(mu[perm], 0.3) == pytest.approx(
        bai.global_dp_lower_bound(mu, 0.3), rel=1e-9
    )
    # a Gaussian instance is also invariant under a common shift of the means
    assert bai.characteristic_time_kl(mu + 7.0, "gaussian") == pytest.approx(
        bai.characteristic_time_kl(mu, "gaussian"), rel=1e-9
    )


def test_ctb_scaling_identity_of_section_3_2():
    # T*_{KL,β}(ν_ε) = (1 + 2/(e^ε − 1))² T*_{KL,β}(ν) for σ = 1/2,
    # μ_ε = (2μ − 1)(e^ε − 1)/(2(e^ε + 1)) + 1/2 (Lemma 12, CTB-TT paragraph)
    mu = np.array(PAPER_INSTANCES[3])
    for eps in (0.1, 1.0):
        mu_eps = (2 * mu - 1) * math.expm1(eps) / (2 * (math.exp(eps) + 1)) + 0.5
        lhs = bai.characteristic_time_kl_beta(mu_eps, 0.5, "gaussian", 0.5)
        base = bai.characteristic_time_kl_beta(mu, 0.5, "gaussian", 0.5)
        rhs = (1 + 2 / math.expm1(eps)) ** 2 * base
        assert lhs == pytest.approx(rhs, rel=1e-9)


def test_deterministic_arms_give_a_finite_time():
    # μ = (1, 0): kl(1, λ) = −log λ, kl(0, λ) = −log(1 − λ), Chernoff point λ* = 1/2
    assert bai.characteristic_time_kl([1.0, 0.0]) == pytest.approx(1 / math.log(2), rel=1e-8)
    assert math.isfinite(bai.characteristic_time_kl([1.0, 0.0, 0.0]))
    assert math.isfinite(bai.characteristic_time_kl(PAPER_INSTANCES[2]))


# -- TV and TV² characteristic times ---------------------------------------------------------------


def test_tv_closed_forms():
    assert bai.characteristic_time_tv([0.7, 0.2]) == pytest.approx(2 / 0.5)
    # Proposition 30: 1/Δ_min + Σ_{a≠1} 1/Δ_a, and 1/Δ_min ≤ T*_TV ≤ K/Δ_min
    mu = PAPER_INSTANCES[0]
    assert bai.characteristic_time_tv(mu) == pytest.approx(1 / 0.05 + 3 / 0.05 + 1 / 0.45)
    assert 1 / 0.05 <= bai.characteristic_time_tv(mu) <= 5 / 0.05
    assert bai.characteristic_time_tv2([0.7, 0.2]) == pytest.approx(4 / 0.25, rel=1e-9)


@pytest.mark.parametrize("mu", PAPER_INSTANCES)
def test_pinsker_relations(mu):
    T_kl = bai.characteristic_time_kl(mu)
    # Corollary 11: T*_{TV²} ≥ 2 T*_KL; Section 4.1: T*_TV ≥ √(2 T*_KL)
    assert bai.characteristic_time_tv2(mu) >= 2 * T_kl * (1 - 1e-9)
    assert bai.characteristic_time_tv(mu) >= math.sqrt(2 * T_kl)


@pytest.mark.parametrize(
    ("mu", "family"), [(PAPER_INSTANCES[4], "bernoulli"), ((1.0, 0.5, 0.2, -0.4), "gaussian")]
)
def test_generic_solver_recovers_tv_closed_form(mu, family):
    # if ε·TV_a ≤ ψ_a^KL(1) for every arm, the TV term is the min for every ω (ψ^KL concave,
    # ψ^KL(0) = 0), so Theorem 17's exact solver must return T*_TV/ε of Proposition 30
    eps = 1e-3
    assert bai.global_dp_lower_bound(mu, eps, family) == pytest.approx(
        bai.characteristic_time_tv(mu, family) / eps, rel=1e-8
    )


# -- DP lower bounds ---------------------------------------------------------------------------


def test_c_local_hand_values():
    assert bai.c_local(math.log(2)) == pytest.approx(4.0)
    assert bai.c_local(math.log(3)) == pytest.approx(16.0)
    assert bai.c_local(0.1) == pytest.approx(math.exp(0.2) * (math.exp(0.1) - 1) ** 2)
    # the paper's Pinsker-tight example: c(ε) = 2 at ε ≈ 0.582
    assert brentq(lambda e: bai.c_local(e) - 2.0, 0.1, 1.0) == pytest.approx(0.582, abs=1e-3)


EPS_GRID = [0.001, 0.05, 0.1, 0.2, 0.5, 2.0, 1000.0]


@pytest.mark.parametrize("mu", [PAPER_INSTANCES[0], PAPER_INSTANCES[5]])
def test_global_chain_of_corollary_18(mu):
    # max{T*_KL, T*_TV/ε} ≤ T*_g(ν; ε) ≤ T*_KL(ν_{G,ε}) ≤ 2H(ν_{G,ε})   (eq. 9, eq. 10)
    mu = np.array(mu)
    gaps = mu.max() - np.sort(mu)[:-1]
    previous = math.inf
    for eps in EPS_GRID:
        relaxed = bai.global_dp_lower_bound_relaxed(mu, eps)
        exact = bai.global_dp_lower_bound(mu, eps)
        clipped = np.sqrt(gaps * np.minimum(gaps, eps / 2))  # gaps of ν_{G,ε}
        upper = bai.characteristic_time_kl(np.concatenate([[0.0], -clipped]), "gaussian", 0.5)
        two_h = np.sum(1 / (gaps * np.minimum(gaps, eps / 2))) + 1 / (
            gaps.min() * min(gaps.min(), eps / 2)
        )
        assert relaxed <= exact * (1 + 1e-9)
        assert exact <= upper * (1 + 1e-9)
        assert upper <= two_h * (1 + 1e-9)
        assert exact <= previous * (1 + 1e-9)  # non-increasing in ε
        previous = exact
    # low-privacy limit: the non-private time
    assert exact == pytest.approx(bai.characteristic_time_kl(mu), rel=1e-8)


@pytest.mark.parametrize("eps", [0.05, 0.3])
def test_exact_global_allocation_against_an_independent_inner_solver(eps):
    # Theorem 17 with the pair reduction: min_a min{inf_λ Σ ω KL, ε min(ω_{a*}, ω_a) Δ_a}
    mu = PAPER_INSTANCES[5]
    T, omega = bai.global_dp_characteristic_time(mu, eps)
    assert omega.sum() == pytest.approx(1.0)

    def value(w):
        return min(
            min(
                pair_cost_numeric(kl_ber, mu[0], mu[a], w[0], w[a]),
                eps * min(w[0], w[a]) * (mu[0] - mu[a]),
            )
            for a in range(1, len(mu))
        )

    assert value(omega) == pytest.approx(1 / T, rel=1e-6)
    rng = np.random.default_rng(1)
    for w in rng.dirichlet(np.ones(len(mu)), size=200):
        assert value(w) <= 1 / T * (1 + 1e-7)


def test_exact_global_bound_can_exceed_the_relaxation():
    # μ6 at ε = 0.05: the KL and TV constraints bind at different arms
    mu = PAPER_INSTANCES[5]
    assert bai.global_dp_lower_bound(mu, 0.05) > 1.1 * bai.global_dp_lower_bound_relaxed(mu, 0.05)


@pytest.mark.parametrize("mu", PAPER_INSTANCES)
def test_regime_switches_make_the_two_terms_equal(mu):
    T_kl = bai.characteristic_time_kl(mu)
    e_loc = bai.local_regime_switch_epsilon(mu)
    assert bai.c_local(e_loc) * T_kl == pytest.approx(bai.characteristic_time_tv2(mu), rel=1e-9)
    assert e_loc >= 0.58  # T*_{TV²} ≥ 2T*_KL puts the switch at or above the Pinsker value
    e_glob = bai.global_regime_switch_epsilon(mu)
    assert bai.characteristic_time_tv(mu) / e_glob == pytest.approx(T_kl, rel=1e-12)
    # below the switch the privacy term is the bound, above it T*_KL
    assert bai.local_dp_lower_bound(mu, 2 * e_loc) == pytest.approx(T_kl)
    assert bai.local_dp_lower_bound(mu, e_loc / 2) > T_kl
    assert bai.global_dp_lower_bound_relaxed(mu, 2 * e_glob) == pytest.approx(T_kl)
    assert bai.global_dp_lower_bound_relaxed(mu, e_glob / 2) > T_kl


def test_local_bound_monotone_in_epsilon():
    mu = PAPER_INSTANCES[1]
    values = [bai.local_dp_lower_bound(mu, e) for e in EPS_GRID]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    assert values[0] == pytest.approx(bai.characteristic_time_tv2(mu) / bai.c_local(EPS_GRID[0]))


def test_sample_complexity_factor():
    assert bai.sample_complexity_lower_bound(10.0, 0.01) == pytest.approx(10 * math.log(1 / 0.024))
    np.testing.assert_allclose(
        bai.sample_complexity_lower_bound([1.0, 2.0], 0.1), np.array([1, 2]) * math.log(1 / 0.24)
    )


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: bai.characteristic_time_kl([0.5, 1.2]), "mu"),
        (lambda: bai.characteristic_time_kl([0.5, 0.5, 0.1]), "mu"),
        (lambda: bai.characteristic_time_kl([0.5]), "mu"),
        (lambda: bai.characteristic_time_kl([0.5, 0.1], family="poisson"), "family"),
        (lambda: bai.characteristic_time_kl([3.0, 1.0], "gaussian", sigma=0.0), "sigma"),
        (lambda: bai.characteristic_time_kl_beta([0.5, 0.1], beta=1.0), "beta"),
        (lambda: bai.local_dp_lower_bound([0.5, 0.1], 0.0), "epsilon"),
        (lambda: bai.global_dp_lower_bound([0.5, 0.1], -1.0), "epsilon"),
        (lambda: bai.global_dp_lower_bound_relaxed([0.5, 0.1], math.nan), "epsilon"),
        (lambda: bai.c_local(0.0), "epsilon"),
        (lambda: bai.sample_complexity_lower_bound(1.0, 1.0), "delta"),
        (lambda: bai.sample_complexity_lower_bound(-1.0, 0.1), "T_star"),
        (lambda: bai.characteristic_time_tv2([2.0, 1.0]), "mu"),
        (lambda: bai.kl_bernoulli(1.5, 0.5), "p"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# -- eq. 15: T*_{KL,β}(ν_{G,ε}) ----------------------------------------------------------------
def test_eq15_hand_value_two_arms():
    """K = 2, β = ½, σ = ½: ω_2 = ½ and T⁻¹ = g/(2σ²·4) = g/2 with g = Δ·min{ε/2, Δ}.
    μ = (0.6, 0.4), ε = 0.1: g = 0.2·0.05 = 0.01, T = 200; ε = 1: g = 0.04, T = 50."""
    assert bai.characteristic_time_private_gaussian_beta([0.6, 0.4], 0.1) == pytest.approx(200.0)
    assert bai.characteristic_time_private_gaussian_beta([0.6, 0.4], 1.0) == pytest.approx(50.0)


def test_eq15_equals_gaussian_eq5_in_the_low_privacy_regime_and_scales_as_1_over_eps():
    mu = [0.95, 0.9, 0.9, 0.9, 0.5]  # μ1
    low = bai.characteristic_time_private_gaussian_beta(mu, 100.0)
    assert low == pytest.approx(bai.characteristic_time_kl_beta(mu, 0.5, "gaussian", 0.5),
                                rel=1e-9)
    # ε/2 below every gap: g_a = Δ_a ε/2, so T is exactly ∝ 1/ε
    a = bai.characteristic_time_private_gaussian_beta(mu, 0.01)
    b = bai.characteristic_time_private_gaussian_beta(mu, 0.001)
    assert b / a == pytest.approx(10.0, rel=1e-9)


# -- Theorems 22 and 24, CTB-TT's factor -----------------------------------------------------
def test_theorem24_g1_and_g2():
    assert bai.theorem24_g1(0.0) == pytest.approx(1.0)
    assert bai.theorem24_g1(12.0) <= 10.0  # as the theorem states
    ys = [0.0, 0.5, 2.0, 12.0]
    g1 = [bai.theorem24_g1(y) for y in ys]
    assert g1 == sorted(g1)
    for y, x in zip(ys, g1, strict=True):  # the root of x² = x + y√(2x) + y²/4
        assert x * x == pytest.approx(x + y * math.sqrt(2 * x) + y * y / 4, rel=1e-12)
    assert bai.theorem24_g2(1e-12) == pytest.approx(1.0, abs=1e-5)
    assert bai.theorem24_g2(1.0) == pytest.approx(1 + 2 / (math.sqrt(2) - 1))
    assert bai.theorem24_g2(0.1) < bai.theorem24_g2(1.0) < bai.theorem24_g2(10.0)


def test_upper_bounds_of_theorems_22_and_24():
    mu = [0.95, 0.9, 0.9, 0.9, 0.5]  # μ1, Δ_max = 0.45
    T = bai.characteristic_time_kl_beta(mu, 0.5, "gaussian", 0.5)
    # Theorem 22: 4T(1 + √(1 + Δ_max²/(2σ⁴ε²))), σ = ½: 2σ⁴ = 1/8
    assert bai.adap_tt_upper_bound(mu, 1.0) == pytest.approx(
        4 * T * (1 + math.sqrt(1 + 8 * 0.45**2)))
    assert bai.adap_tt_upper_bound(mu, 1e9) == pytest.approx(8 * T)  # 16 T*_KL as ε → ∞
    # Theorem 24, Δ_max < ε/2: 4T·g₁(Δ_max/(σ²ε)) → 4T as ε → ∞
    assert bai.adap_tt_star_upper_bound(mu, 10.0) == pytest.approx(
        4 * T * bai.theorem24_g1(0.45 / (0.25 * 10.0)))
    assert bai.adap_tt_star_upper_bound(mu, 1e9) == pytest.approx(4 * T, rel=1e-6)
    # otherwise: 2T_ε·g₂(ε²T_ε·max{β, 1 − β}/4)/σ², T_ε of eq. 15
    Te = bai.characteristic_time_private_gaussian_beta(mu, 0.1)
    assert bai.adap_tt_star_upper_bound(mu, 0.1) == pytest.approx(
        8 * Te * bai.theorem24_g2(0.01 * Te * 0.5 / 4))


def test_ctb_factor_is_the_gap_shrinkage_of_randomized_response():
    for eps in (0.01, 0.5, 1.0, 10.0):
        assert bai.ctb_factor(eps) == pytest.approx((1 + 2 / math.expm1(eps)) ** 2, rel=1e-12)
    # μ_ε = ½ + (μ − ½)tanh(ε/2): T*_{KL,β} of the Gaussian instance scales by the factor
    mu, eps = np.array([0.8, 0.6, 0.3]), 0.7
    mu_eps = 0.5 + (mu - 0.5) * math.tanh(eps / 2)
    assert bai.characteristic_time_kl_beta(mu_eps, 0.5, "gaussian", 0.5) == pytest.approx(
        bai.ctb_factor(eps) * bai.characteristic_time_kl_beta(mu, 0.5, "gaussian", 0.5),
        rel=1e-9)
