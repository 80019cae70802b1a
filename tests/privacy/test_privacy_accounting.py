"""Accounting: independently computed reference values, dp-accounting as an oracle, shuffling.

All numbers with δ = 1e-6 unless stated. Deterministic (no sampling), so no false alarms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privenv.privacy import accounting as acc
from privenv.privacy.mechanisms import gaussian_mu_analytic, gaussian_sigma_analytic

DELTA = 1e-6
# dp-accounting's default RDP orders (v0.4–0.6), to reproduce its grid-minimised numbers exactly.
DP_ACCOUNTING_ORDERS = (
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
)


# ---------------------------------------------------------------------------------------------
# the oracle table
# ---------------------------------------------------------------------------------------------


def test_one_gaussian_row() -> None:
    """One Gaussian, Δ/σ = 1 (ρ = ½): Bun–Steinke 5.75652, CKS 5.22153, exact 4.886554."""
    rho = acc.gaussian_rho(1.0)
    assert rho == 0.5
    assert acc.rho_to_epsilon_bun_steinke(rho, DELTA) == pytest.approx(5.75652, abs=5e-6)
    assert acc.rho_to_epsilon_cks(rho, DELTA) == pytest.approx(5.22153, abs=5e-6)
    assert acc.gaussian_epsilon(DELTA, acc.gaussian_mu(1.0)) == pytest.approx(4.886554, abs=5e-7)


def test_ten_thousand_gaussians_row() -> None:
    """10⁴ Gaussians of σ = 100 have the same ρ and μ as one of σ = 1: same three numbers."""
    rho = acc.compose_rho([acc.gaussian_rho(100.0)] * 10_000)
    assert rho == pytest.approx(0.5, rel=1e-12)
    assert acc.rho_to_epsilon_bun_steinke(rho, DELTA) == pytest.approx(5.75652, abs=5e-6)
    assert acc.rho_to_epsilon_cks(rho, DELTA) == pytest.approx(5.22154, abs=2e-5)
    mu = acc.gaussian_mu([100.0] * 10_000)
    assert acc.gaussian_epsilon(DELTA, mu) == pytest.approx(4.886554, abs=5e-7)


def test_sigma_for_1000_gaussians_row() -> None:
    """σ for 1000 Gaussians at (1, 1e-6): CKS 143.28, exact 133.60."""
    rho = acc.rho_for_epsilon(1.0, DELTA)
    assert math.sqrt(1000 / (2 * rho)) == pytest.approx(143.28, abs=5e-3)
    sigma_exact = math.sqrt(1000) / gaussian_mu_analytic(1.0, DELTA)
    assert sigma_exact == pytest.approx(133.60, abs=5e-3)
    assert acc.gaussian_epsilon(DELTA, acc.gaussian_mu([sigma_exact] * 1000)) == pytest.approx(1.0)


def test_hundred_laplace_row() -> None:
    """100 × Laplace(b = 1), Δ = 1: basic composition 100; RDP (Mironov 2017) + CKS 73.82."""
    eps, delta = acc.compose_sequential([1.0] * 100)
    assert (eps, delta) == (100.0, 0.0)
    rdp_eps = acc.rdp_to_epsilon(lambda a: 100 * acc.laplace_rdp(a, 1.0), DELTA)
    assert rdp_eps == pytest.approx(73.82, abs=5e-3)
    assert 71.546 < rdp_eps < 100.0  # between the exact PLD value and basic composition


def test_analytic_gaussian_row() -> None:
    assert gaussian_sigma_analytic(1.0, DELTA) == pytest.approx(4.224678889, abs=5e-10)


def test_laplace_rdp_limits() -> None:
    """ε(α) increases in α towards the pure-DP value Δ/b (Mironov 2017, Prop. 6)."""
    vals = [acc.laplace_rdp(a, 2.0) for a in (1.01, 2.0, 10.0, 1e3)]
    assert all(x < y for x, y in zip(vals, vals[1:], strict=False))
    assert vals[-1] == pytest.approx(0.5, rel=1e-2) and vals[-1] < 0.5


# ---------------------------------------------------------------------------------------------
# tree aggregation
# ---------------------------------------------------------------------------------------------


def test_tree_levels_off_by_one() -> None:
    """T items lie in ⌊log₂T⌋+1 dyadic nodes: 1 → 1, 2 → 2, 1023 → 10, 1024 → 11."""
    assert [acc.tree_levels(t) for t in (1, 2, 3, 4, 1023, 1024)] == [1, 2, 2, 3, 10, 11]
    assert acc.tree_rho(1024, 10.0) == pytest.approx(11 / 200)


@pytest.mark.parametrize(("horizon", "expected"), [(1023, 1.4716563), (1024, 1.5493972)])
def test_tree_aggregation_hard_coded_oracle(horizon: int, expected: float) -> None:
    """dp-accounting SingleEpochTreeAggregationDpEvent, noise multiplier 10, δ = 1e-6."""
    rho = acc.tree_rho(horizon, sigma=10.0)
    assert acc.rho_to_epsilon_cks(rho, DELTA, orders=DP_ACCOUNTING_ORDERS) == pytest.approx(
        expected, abs=5e-8
    )
    # the continuous minimisation over α can only be tighter, and only slightly
    cont = acc.rho_to_epsilon_cks(rho, DELTA)
    assert expected - 1e-3 < cont <= expected


@pytest.mark.parametrize("horizon", [1, 7, 1023, 1024, 10**5])
def test_tree_aggregation_against_dp_accounting(horizon: int) -> None:
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import privacy_accountant, rdp

    accountant = rdp.RdpAccountant(
        neighboring_relation=privacy_accountant.NeighboringRelation.REPLACE_SPECIAL
    )
    accountant.compose(
        dpa.SingleEpochTreeAggregationDpEvent(noise_multiplier=10.0, step_counts=horizon)
    )
    ours = acc.rho_to_epsilon_cks(
        acc.tree_rho(horizon, 10.0), DELTA, orders=rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
    )
    assert ours == pytest.approx(accountant.get_epsilon(DELTA), rel=1e-10)


def test_gaussian_and_laplace_against_dp_accounting() -> None:
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import pld, rdp

    orders = rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
    a = rdp.RdpAccountant()
    a.compose(dpa.LaplaceDpEvent(1.0), 100)
    ours = acc.rdp_to_epsilon(lambda x: 100 * acc.laplace_rdp(x, 1.0), DELTA, orders=orders)
    assert ours == pytest.approx(a.get_epsilon(DELTA), rel=1e-9)
    p = pld.PLDAccountant()
    p.compose(dpa.GaussianDpEvent(1.0))
    assert acc.gaussian_epsilon(DELTA, 1.0) == pytest.approx(p.get_epsilon(DELTA), abs=2e-3)


# ---------------------------------------------------------------------------------------------
# exact Gaussian curve and conversions
# ---------------------------------------------------------------------------------------------


def test_gaussian_delta_matches_direct_formula() -> None:
    for eps, mu in [(0.0, 0.5), (0.5, 1.0), (2.0, 3.0), (1.0, 0.2)]:
        direct = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(
            -eps / mu - mu / 2
        )
        assert acc.gaussian_delta(eps, mu) == pytest.approx(direct, rel=1e-10, abs=1e-300)


@settings(max_examples=60, deadline=None)
@given(
    eps=st.floats(1e-4, 1e3),
    log_delta=st.floats(math.log(1e-12), math.log(0.5)),
)
def test_gaussian_calibration_is_finite_and_inverts(eps: float, log_delta: float) -> None:
    """Numerical robustness (docs/design/threat-model.md): ε ∈ [1e-4, 1e3], δ ∈ [1e-12, 0.5]."""
    delta = math.exp(log_delta)
    mu = gaussian_mu_analytic(eps, delta)
    assert math.isfinite(mu) and mu > 0
    assert acc.gaussian_delta(eps, mu) == pytest.approx(delta, rel=1e-6)
    assert acc.gaussian_epsilon(delta, mu) == pytest.approx(eps, rel=1e-6, abs=1e-9)
    rho = acc.gaussian_rho(1.0 / mu)
    conversions = (acc.rho_to_epsilon_cks(rho, delta), acc.rho_to_epsilon_bun_steinke(rho, delta))
    # exact ≤ CKS ≤ Bun–Steinke (the two bounds are valid, the exact curve is the truth)
    assert eps * (1 - 1e-6) <= conversions[0] <= conversions[1] * (1 + 1e-9)


def test_pure_dp_and_zcdp_composition() -> None:
    assert acc.compose_sequential([0.1] * 10) == (pytest.approx(1.0, abs=1e-15), 0.0)
    assert acc.compose_sequential([0.5, 0.25], [1e-6, 1e-6]) == (0.75, 2e-6)
    assert acc.compose_parallel([0.5, 0.25, 0.5], [0.0, 1e-6, 0.0]) == (0.5, 1e-6)
    assert acc.pure_dp_to_rho(0.2) == pytest.approx(0.02)
    assert acc.compose_rho([0.1, 0.2]) == pytest.approx(0.3)


def test_budget_accountant_raises_when_exceeded() -> None:
    budget = acc.BudgetAccountant(1.0, delta=1e-6)
    for _ in range(10):
        budget.spend(0.1)  # exactly 1.0 in total: allowed
    assert budget.remaining == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(acc.PrivacyBudgetExceeded, match="over the budget"):
        budget.spend(1e-6)
    with pytest.raises(AssertionError):  # PrivacyBudgetExceeded is an AssertionError
        acc.BudgetAccountant(1.0).spend(0.5, delta=1e-9)
    assert budget.spent[0] == pytest.approx(1.0)  # the refused spend was not recorded


# ---------------------------------------------------------------------------------------------
# amplification by shuffling
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "eps0", "closed"), [(10**5, 4.0, 0.53780), (10**4, 2.0, 0.5236), (10**3, 1.0, 0.6495)]
)
def test_shuffle_closed_form_reference(n: int, eps0: float, closed: float) -> None:
    assert acc.shuffle_amplification_closed_form(eps0, n, DELTA) == pytest.approx(closed, abs=6e-5)


def test_shuffle_closed_form_outside_its_range() -> None:
    with pytest.raises(ValueError, match="epsilon0"):
        acc.shuffle_amplification_closed_form(3.0, 1000, DELTA)


def test_shuffle_numerical_reference_values() -> None:
    """Reference values with 10 bisection steps from the closed form (computed independently).

    n = 10⁴, ε₀ = 2, block 100: 0.1590 exactly as referenced. n = 10⁵, ε₀ = 4: the reference
    0.17542 / 0.16754 come from a sweep that stops early and adds the uncovered C-mass to δ; we
    cover every block, which gives a bound at most as large (0.172791, one grid step of the
    bisection = 0.5378/1024 below). The lower bound is the left end of the final bracket
    (certified), the reference quoted the right end.
    """
    assert acc.shuffle_amplification_numerical(2.0, 10**4, DELTA) == pytest.approx(0.1590, abs=5e-5)
    upper = acc.shuffle_amplification_numerical(4.0, 10**5, DELTA)
    lower = acc.shuffle_amplification_numerical(4.0, 10**5, DELTA, upper=False)
    step = acc.shuffle_amplification_closed_form(4.0, 10**5, DELTA) / 1024
    assert lower < upper <= 0.17542
    assert upper == pytest.approx(0.172791, abs=1e-6)
    assert lower <= 0.16754 <= lower + step + 5e-6  # reference rounded to 5 digits
    fine = acc.shuffle_amplification_numerical(4.0, 10**5, DELTA, block=10, iterations=20)
    assert lower - step <= fine <= upper  # blocks only loosen the bound
    # n = 10³, ε₀ = 1 (reference 0.1859 with blocks of 10)
    assert acc.shuffle_amplification_numerical(1.0, 1000, DELTA, block=10) <= 0.1859


def test_clone_divergence_matches_brute_force_and_is_monotone() -> None:
    """Hockey-stick divergences of the clone mixtures, from explicit pmfs; both directions are
    equal (k ↦ c+1−k symmetry) and the value does not increase with c (used for block bounds)."""
    eps0, eps = 1.0, 0.2
    alpha, e = 1 / (1 + math.exp(-eps0)), math.exp(eps)
    cs = np.array([0, 1, 2, 5, 17, 50, 333])
    for c, got in zip(cs, acc._clone_pair_divergence(cs, eps, eps0), strict=True):
        k = np.arange(c + 2)
        b, b1 = stats.binom.pmf(k, c, 0.5), stats.binom.pmf(k - 1, c, 0.5)
        p, q = alpha * b + (1 - alpha) * b1, (1 - alpha) * b + alpha * b1
        d_pq, d_qp = np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum()
        assert d_pq == pytest.approx(d_qp, rel=1e-9, abs=1e-15)
        assert got == pytest.approx(max(d_pq, d_qp), rel=1e-9, abs=1e-15)
    f = acc._clone_pair_divergence(np.arange(10**4), 0.155, 2.0)
    assert np.all(np.diff(f) <= 1e-15)
    assert acc._clone_pair_divergence(np.arange(10), 1.0, 1.0).max() == 0.0  # ε ≥ ε₀


def test_shuffled_rr_oracle_matches_enumeration() -> None:
    """The exact shuffled-RR curve equals brute force over all 2ⁿ report vectors (n = 4)."""
    n, eps0, eps = 4, 1.3, 0.4
    p = math.exp(eps0) / (1 + math.exp(eps0))
    worst = 0.0
    for m in range(n):
        others = [1] * m + [0] * (n - 1 - m)
        laws = []
        for x1 in (0, 1):
            law = np.zeros(n + 1)
            for reports in np.ndindex(*(2,) * n):
                prob = 1.0
                for bit, y in zip([x1, *others], reports, strict=True):
                    prob *= p if y == bit else 1 - p
                law[sum(reports)] += prob
            laws.append(law)
        p0, p1 = laws
        e = math.exp(eps)
        worst = max(worst, np.maximum(p0 - e * p1, 0).sum(), np.maximum(p1 - e * p0, 0).sum())
    assert acc.shuffled_rr_delta(eps, eps0, n) == pytest.approx(worst, rel=1e-12)


def test_shuffle_bound_is_sound_for_randomized_response() -> None:
    """Exact δ of shuffled binary RR at the computed upper ε is ≤ δ (n = 1000 over all m;
    n = 10⁴ on a grid of m). The oracle can fail: at ε well below the bound, δ_exact > δ."""
    eps_1k = acc.shuffle_amplification_numerical(1.0, 1000, DELTA, block=10)
    assert acc.shuffled_rr_delta(eps_1k, 1.0, 1000) <= DELTA  # ≈ 4.8e-10
    eps_10k = acc.shuffle_amplification_numerical(2.0, 10**4, DELTA)
    grid = [0, 1, 2500, 5000, 7500, 9998, 9999]
    assert acc.shuffled_rr_delta(eps_10k, 2.0, 10**4, ones=grid) <= DELTA  # ≈ 2.7e-13
    assert acc.shuffled_rr_delta(0.5 * eps_1k, 1.0, 1000, ones=[0, 500, 999]) > DELTA
