"""The reusable auditing functions of privenv.privacy.audit.

Confidence bounds are compared with SciPy's independent implementations; the ε lower bound is
checked on exact counts and on a held-out event choice with its mutation. Fixed seeds; per-test
false-alarm probability ≤ 1e-6 where sampling is involved.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privenv.privacy import audit
from privenv.privacy import mechanisms as mech

ALPHA = 1e-6


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (512, 1000), (7, 10**5)])
def test_clopper_pearson_matches_scipy(k: int, n: int) -> None:
    lo, hi = audit.clopper_pearson(k, n, 0.01)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.99, method="exact")
    assert float(lo) == pytest.approx(ci.low, rel=1e-7, abs=1e-15)  # SciPy root-finds to ~1e-9
    assert float(hi) == pytest.approx(ci.high, rel=1e-7, abs=1e-15)
    # defining identities: P_lo(X ≥ k) = α/2 and P_hi(X ≤ k) = α/2
    if k > 0:
        assert stats.binom.sf(k - 1, n, float(lo)) == pytest.approx(0.005, rel=1e-9)
    if k < n:
        assert stats.binom.cdf(k, n, float(hi)) == pytest.approx(0.005, rel=1e-9)


def test_one_sided_bounds_closed_forms() -> None:
    """k = 0: upper = 1 − α^{1/n}; k = n: lower = α^{1/n}."""
    n, a = 50, 1e-3
    assert float(audit.clopper_pearson_upper(0, n, a)) == pytest.approx(1 - a ** (1 / n))
    assert float(audit.clopper_pearson_lower(n, n, a)) == pytest.approx(a ** (1 / n))
    assert float(audit.clopper_pearson_lower(0, n, a)) == 0.0
    assert float(audit.clopper_pearson_upper(n, n, a)) == 1.0
    # k = 1: lower = 1 − (1 − a)^{1/n}, accurate where SciPy's root-finding CI is not (n = 10⁶)
    n = 10**6
    assert float(audit.clopper_pearson_lower(1, n, a)) == pytest.approx(
        -math.expm1(math.log1p(-a) / n), rel=1e-9
    )


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (512, 1000)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    lo, hi = audit.wilson_interval(k, n, 0.05)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (float(lo), float(hi)) == pytest.approx((ci.low, ci.high), rel=1e-9, abs=1e-15)


def test_clopper_pearson_coverage() -> None:
    """Empirical coverage of the 90% interval over 20000 binomial draws is ≥ 90% (minus 6 SE)."""
    rng = np.random.default_rng(41)
    n, p = 40, 0.3
    k = rng.binomial(n, p, size=20000)
    lo, hi = audit.clopper_pearson(k, n, 0.1)
    coverage = np.mean((lo <= p) & (p <= hi))
    assert coverage >= 0.9 - 6 * math.sqrt(0.09 / 20000)


def test_epsilon_lower_bound_on_exact_counts() -> None:
    """With counts equal to exact expectations, the bound approaches (from below) the true
    log-ratio ln 3 of randomized response as n grows, and never exceeds it."""
    prev = -math.inf
    for n in (10**4, 10**6, 10**8):
        res = audit.epsilon_lower_bound(
            np.array([3 * n // 4]), n, np.array([n // 4]), n, alpha=ALPHA
        )
        assert prev < res.epsilon_lb < math.log(3)
        prev = res.epsilon_lb
    assert prev > math.log(3) - 0.005
    assert res.n_bounds == 4 and res.direction == "D>D'"


def test_epsilon_lower_bound_delta_and_direction() -> None:
    n = 10**6
    base = audit.epsilon_lower_bound(np.array([1000]), n, np.array([5000]), n)
    assert base.direction == "D'>D" and base.event == 0
    shifted = audit.epsilon_lower_bound(np.array([1000]), n, np.array([5000]), n, delta=0.004)
    assert shifted.epsilon_lb < base.epsilon_lb  # subtracting δ can only weaken the bound
    none = audit.epsilon_lower_bound(np.array([10]), n, np.array([10]), n, delta=0.5)
    assert none.epsilon_lb == -math.inf and not none.violates(0.0)


def test_holdout_audit_and_mutation() -> None:
    """Held-out event choice on a multi-valued output: the sum of 4 randomized responses of a
    dataset differing in one entry (ε = 1 per entry, so the release is 1-DP for that entry).
    Passes on the mechanism; a mutation answering with ε = 1.3 for that entry is caught."""
    n, eps = 10**6, 1.0

    def release(first_bit: float, eps_first: float, rng: np.random.Generator) -> np.ndarray:
        y = mech.randomized_response(np.full(n, first_bit), eps_first, rng)
        for bit in (1.0, 0.0, 1.0):
            y = y + mech.randomized_response(np.full(n, bit), eps, rng)
        return y

    g = np.random.default_rng(42)
    ok = audit.holdout_epsilon_lower_bound(release(0.0, eps, g), release(1.0, eps, g), alpha=ALPHA)
    assert not ok.violates(eps) and ok.epsilon_lb > 0.9
    g = np.random.default_rng(42)
    bad = audit.holdout_epsilon_lower_bound(release(0.0, 1.3, g), release(1.0, 1.3, g), alpha=ALPHA)
    assert bad.violates(eps)


def test_goodness_of_fit_detects_shift() -> None:
    """The variance/KS helper also rejects a location bug (noise mean 0.01·b at n = 10⁶)."""
    rng = np.random.default_rng(43)
    law = stats.laplace(scale=1.0)
    assert audit.goodness_of_fit(mech.laplace(1.0, rng, 10**6), law).passed
    assert not audit.goodness_of_fit(mech.laplace(1.0, rng, 10**6) + 0.01, law).passed
