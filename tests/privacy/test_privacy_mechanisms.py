"""Mechanisms: calibration oracles, exact transforms, goodness of fit and neighbouring-input audits.

Statistical tests use fixed seeds and a family-wise false-alarm probability ALPHA = 1e-6 per test
(Bonferroni over the events/bounds inside each test, see privenv.privacy.audit). Each audit is
also applied, by the same helper, to a deliberately broken mechanism and must fail there
(mutation tests, docs/design/threat-model.md).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from privenv.privacy import audit
from privenv.privacy import mechanisms as mech

ALPHA = 1e-6
N = 10**6  # samples per side (KS at 10⁶ detects ≈1.5% scale errors)


# ---------------------------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------------------------


def test_analytic_gaussian_oracle() -> None:
    """Balle & Wang 2018 calibration: σ = 4.224678889 at (ε, δ) = (1, 1e-6), Δ = 1."""
    assert mech.gaussian_sigma_analytic(1.0, 1e-6) == pytest.approx(4.224678889, abs=5e-10)
    assert mech.gaussian_sigma_analytic(1.0, 1e-6, sensitivity=3.0) == pytest.approx(
        3 * 4.224678889, abs=2e-9
    )


def test_analytic_gaussian_is_tight() -> None:
    """At the analytic σ the exact δ(ε) equals δ; 1% less noise breaks (ε, δ)."""
    from privenv.privacy.accounting import gaussian_delta

    for eps, delta in [(0.1, 1e-5), (1.0, 1e-6), (5.0, 1e-9), (20.0, 1e-3)]:
        sigma = mech.gaussian_sigma_analytic(eps, delta)
        assert gaussian_delta(eps, 1.0 / sigma) == pytest.approx(delta, rel=1e-8)
        assert gaussian_delta(eps, 1.0 / (0.99 * sigma)) > delta


def test_classical_gaussian() -> None:
    """σ = Δ√(2 ln(1.25/δ))/ε for ε < 1; it is never below the exact (analytic) σ there."""
    sigma = mech.gaussian_sigma_classical(0.5, 1e-5, sensitivity=2.0)
    assert sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14)
    for eps in (0.01, 0.3, 0.99):
        assert mech.gaussian_sigma_classical(eps, 1e-6) >= mech.gaussian_sigma_analytic(eps, 1e-6)


def test_classical_gaussian_outside_its_range() -> None:
    """ε ≥ 1 raises unless allowed; then it warns exactly when the σ is not (ε, δ)-DP."""
    with pytest.raises(ValueError, match="epsilon"):
        mech.gaussian_sigma_classical(1.0, 1e-6)
    with pytest.warns(RuntimeWarning, match="does not give"):
        sigma = mech.gaussian_sigma_classical(8.0, 1e-3, allow_large_epsilon=True)
    assert sigma < mech.gaussian_sigma_analytic(8.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigma = mech.gaussian_sigma_classical(1.0, 1e-6, allow_large_epsilon=True)
    assert sigma >= mech.gaussian_sigma_analytic(1.0, 1e-6)


def test_laplace_scale_and_zcdp_views() -> None:
    assert mech.laplace_scale(0.5, sensitivity=2.0) == 4.0
    assert mech.gaussian_sigma_zcdp(0.5) == 1.0
    assert mech.gaussian_rho(mech.gaussian_sigma_zcdp(0.02, 3.0), 3.0) == pytest.approx(0.02)


# ---------------------------------------------------------------------------------------------
# exact properties of the transforms
# ---------------------------------------------------------------------------------------------


def test_laplace_from_uniform_is_exactly_symmetric_and_finite() -> None:
    """Grid points k and 2⁵³−1−k of Generator.random map to exactly opposite noise."""
    k = np.array([0, 1, 2, 12345, 2**52 - 1], dtype=np.float64)
    u = k * 2.0**-53
    u_mirror = (2.0**53 - 1 - k) * 2.0**-53
    x, y = mech.laplace_from_uniform(u, 2.5), mech.laplace_from_uniform(u_mirror, 2.5)
    np.testing.assert_array_equal(x, -y)
    z, w = mech.gaussian_from_uniform(u, 2.5), mech.gaussian_from_uniform(u_mirror, 2.5)
    np.testing.assert_array_equal(z, -w)
    assert np.all(np.isfinite(z)) and np.all(np.isfinite(w))
    assert np.all(np.isfinite(x)) and x[0] == 2.5 * math.log(2.0**-53)


def test_transforms_match_scipy_inverse_cdf() -> None:
    u = np.linspace(0.001, 0.999, 101)
    np.testing.assert_allclose(
        mech.laplace_from_uniform(u, 1.7), stats.laplace.ppf(u + 2.0**-54, scale=1.7), rtol=1e-12
    )
    np.testing.assert_allclose(
        mech.gaussian_from_uniform(u, 1.7), stats.norm.ppf(u + 2.0**-54, scale=1.7), rtol=1e-10
    )


def test_samplers_are_the_transforms_of_their_generator() -> None:
    """One implementation: sampler(rng) == transform(standard draws of an identical rng)."""
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(
        mech.laplace(2.0, a, 50), mech.laplace_from_uniform(b.random(50), 2.0)
    )
    np.testing.assert_array_equal(
        mech.gaussian(2.0, a, (3, 4)), mech.gaussian_from_standard(b.standard_normal((3, 4)), 2.0)
    )
    r = np.linspace(0, 1, 40)
    np.testing.assert_array_equal(
        mech.randomized_response(r, 0.7, a),
        mech.randomized_response_from_uniform(r, b.random(40), 0.7),
    )


def test_randomized_response_formulas() -> None:
    """q(r) = (r(e^ε−1)+1)/(e^ε+1) (paper 3 Alg. 4); Lemma 12; the de-biasing map inverts it."""
    eps = 0.8
    r = np.linspace(0, 1, 11)
    e = math.exp(eps)
    np.testing.assert_allclose(mech.rr_probability_of_one(r, eps), (r * (e - 1) + 1) / (e + 1))
    np.testing.assert_allclose(
        mech.rr_mean(r, eps), (2 * r - 1) * (e - 1) / (2 * (e + 1)) + 0.5, rtol=1e-14
    )
    m = np.linspace(0, 1, 11)
    np.testing.assert_allclose(mech.rr_debias_mean(m, eps), (m * (e + 1) - 1) / (e - 1), rtol=1e-12)
    np.testing.assert_allclose(mech.rr_debias_mean(mech.rr_mean(r, eps), eps), r, atol=1e-12)
    assert mech.rr_keep_probability(math.log(3)) == pytest.approx(0.75)
    # extreme ε stay finite and exact in the limits
    assert mech.rr_probability_of_one(1.0, 1e3) == 1.0
    assert mech.rr_debias_mean(0.75, 1e3) == pytest.approx(0.75)
    assert np.isfinite(mech.rr_debias_mean(0.5 + 1e-6, 1e-4))


def test_randomized_response_uniform_threshold() -> None:
    """Output 1 iff u < q(r): the decision is a pure function of (r, u)."""
    eps = math.log(3)  # q(0) = 1/4, q(1) = 3/4
    u = np.array([0.0, 0.2499, 0.25, 0.7499, 0.75, 0.9999])
    np.testing.assert_array_equal(
        mech.randomized_response_from_uniform(0.0, u, eps), [1, 1, 0, 0, 0, 0]
    )
    np.testing.assert_array_equal(
        mech.randomized_response_from_uniform(1.0, u, eps), [1, 1, 1, 1, 0, 0]
    )


def test_symmetric_gaussian_matrix() -> None:
    rng = np.random.default_rng(3)
    w = mech.symmetric_gaussian_matrix(2.0, 4, rng, size=(20000,))
    assert w.shape == (20000, 4, 4)
    np.testing.assert_array_equal(w, np.swapaxes(w, -1, -2))
    rows, cols = np.triu_indices(4)
    upper = w[:, rows, cols]  # 10 i.i.d. N(0, 4) entries per matrix
    corr = np.corrcoef(upper.T)
    assert np.max(np.abs(corr - np.eye(10))) < 0.05  # SE 0.007: 7σ
    assert audit.goodness_of_fit(upper.ravel(), stats.norm(scale=2.0), ALPHA).passed
    z = np.random.default_rng(3).standard_normal((20000, 10))
    np.testing.assert_array_equal(w, mech.symmetric_gaussian_from_standard(z, 4, 2.0))


# ---------------------------------------------------------------------------------------------
# goodness of fit (KS + variance), each with its mutation
# ---------------------------------------------------------------------------------------------

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def _gof_passes(sampler: Sampler, law: stats.rv_continuous, seed: int) -> bool:
    """The one helper used for the real and for the mutated sampler."""
    return audit.goodness_of_fit(sampler(np.random.default_rng(seed), N), law, ALPHA).passed


@pytest.mark.parametrize("factor", [0.97, 0.8])
def test_laplace_goodness_of_fit_and_mutation(factor: float) -> None:
    """Laplace(b = 2) fits at n = 10⁶ (α = 1e-6); a scale bug × factor is rejected."""
    law = stats.laplace(scale=2.0)
    assert _gof_passes(lambda g, n: mech.laplace(2.0, g, n), law, seed=11)
    assert not _gof_passes(lambda g, n: mech.laplace(2.0 * factor, g, n), law, seed=11)


@pytest.mark.parametrize("factor", [0.97, 0.8])
def test_gaussian_goodness_of_fit_and_mutation(factor: float) -> None:
    """N(0, σ²) by both transforms fits at n = 10⁶ (α = 1e-6); σ × factor is rejected."""
    law = stats.norm(scale=1.5)
    assert _gof_passes(lambda g, n: mech.gaussian(1.5, g, n), law, seed=12)
    assert _gof_passes(lambda g, n: mech.gaussian_from_uniform(g.random(n), 1.5), law, seed=13)
    assert not _gof_passes(lambda g, n: mech.gaussian(1.5 * factor, g, n), law, seed=12)


def _rr_proportions_ok(sampler: Callable, eps: float, seed: int) -> bool:
    """Clopper–Pearson (two-sided, Bonferroni over 5 rewards, α = 1e-6) contains q(r) for all r."""
    rng = np.random.default_rng(seed)
    rewards = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    ones = np.array([sampler(np.full(N, r), eps, rng).sum() for r in rewards])
    lo, hi = audit.clopper_pearson(ones, N, ALPHA / rewards.size)
    q = mech.rr_probability_of_one(rewards, eps)
    return bool(np.all((lo <= q) & (q <= hi)))


def test_randomized_response_proportions_and_mutation() -> None:
    """Output frequencies match q(r); a wrong keep probability (ε × 1.05) is rejected."""
    assert _rr_proportions_ok(mech.randomized_response, 1.0, seed=21)

    def wrong_keep(r, eps, rng):
        return mech.randomized_response(r, eps * 1.05, rng)

    assert not _rr_proportions_ok(wrong_keep, 1.0, seed=21)


def test_randomized_response_debiasing_unbiased() -> None:
    """De-biased mean of 10⁶ responses of Bernoulli(0.3) rewards is 0.3 (6σ: false alarm 2e-9)."""
    rng = np.random.default_rng(22)
    eps, mu = 0.5, 0.3
    rewards = (rng.random(N) < mu).astype(float)
    est = float(mech.rr_debias_mean(mech.randomized_response(rewards, eps, rng).mean(), eps))
    se = 0.5 / math.sqrt(N) / math.tanh(eps / 2)
    assert abs(est - mu) < 6 * se


# The neighbouring-input ε lower bounds of Laplace, Gaussian and randomized response, with their
# mutations, are audit cases of privenv.privacy.audit_noise (run by tests/privacy/test_audits.py).
