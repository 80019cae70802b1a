"""privenv.theory.regret: the divergence d_ε and the regret lower-bound curves."""

import math

import numpy as np
import pytest

from privenv.theory import regret
from privenv.theory.bai import kl_bernoulli

MU4 = [0.75, 0.625, 0.5, 0.375, 0.25]


def test_kl_bern_is_theory_bai_kl_bernoulli():
    rng = np.random.default_rng(0)
    for p, q in rng.random((200, 2)):
        assert regret.kl_bern(p, q) == pytest.approx(float(kl_bernoulli(p, q)), rel=1e-12)
    assert regret.kl_bern(0.0, 0.3) == pytest.approx(-math.log(0.7))
    assert regret.kl_bern(0.5, 1.0) == math.inf and regret.kl_bern(1.0, 1.0) == 0.0


def test_d_eps_is_the_infimum_over_the_segment():
    """The closed form equals a brute-force minimisation over 2·10⁵ grid points of
    [x∧y, x∨y] (grid error ≤ (ε + max slope of kl)·step, far below the tolerance)."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        x, y = rng.uniform(0.01, 0.99, 2)
        eps = 10 ** rng.uniform(-3, 1.5)
        z = np.linspace(min(x, y), max(x, y), 200_001)
        brute = np.min(eps * np.abs(z - x) + kl_bernoulli(z, y))
        assert regret.d_eps(x, y, eps) == pytest.approx(brute, abs=1e-7)
        assert regret.d_eps(x, y, eps) <= min(kl_bernoulli(x, y), eps * abs(x - y)) + 1e-15


def test_d_eps_interpolates_between_kl_and_eps_tv():
    x, y = 0.5, 0.75
    assert regret.d_eps(x, y, 50.0) == pytest.approx(kl_bernoulli(x, y), rel=1e-12)
    assert regret.d_eps(x, y, 1e-6) == pytest.approx(1e-6 * 0.25, rel=1e-5)
    assert regret.d_eps(x, 1.0, 0.3) == pytest.approx(0.3 * 0.5)  # kl(z, 1) finite only at z = 1
    assert regret.d_eps(x, x, 0.3) == 0.0


@pytest.mark.parametrize("eps", [650.0, 700.0, 709.0, 710.0, 800.0, 1e6, 1e300])
def test_d_eps_is_finite_at_every_eps(eps):
    """y/(1 − y)·e^ε overflows past ε ≈ 673 (y near 1) or 709.78: the minimiser is still found.
    For x > y and a y within e^{−600} of neither end z* sits at x, so d_ε = kl exactly; for a y
    of 1e-300 at ε = 650, z* = sigmoid(log-odds(y) + ε) ≈ e^{−40.8} < x."""
    assert regret.d_eps_point(0.6, 0.4, eps) == 0.6
    assert regret.d_eps(0.6, 0.4, eps) == regret.kl_bern(0.6, 0.4)
    assert regret.d_eps_point(1.0 - 2.0**-53, 1.0 - 2.0**-52, eps) == 1.0 - 2.0**-53
    assert regret.d_eps_point(0.4, 0.6, eps) == 0.4
    if eps == 650.0:
        z = regret.d_eps_point(0.5, 1e-300, eps)
        assert z == pytest.approx(math.exp(math.log(1e-300) + eps), rel=1e-12)


def test_d_eps_point_is_continuous_where_its_log_form_starts():
    """Both sides of ε = 600 (the direct form below, the log form from it) agree with the
    closed form sigmoid(log-odds(y) + ε) ≈ y·e^ε for a y of 1e-270 (z* ≈ 3.7e-10 < x)."""
    for eps in (599.9, 600.0, 600.1):
        assert regret.d_eps_point(0.5, 1e-270, eps) == pytest.approx(
            math.exp(math.log(1e-270) + eps), rel=1e-12)


@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0, 10.0])
def test_the_global_dp_bounds_are_ordered(eps):
    """d_ε ≤ min(kl, εΔ) ≤ min(kl, 6εΔ) ≤ kl, so Azize et al. 2025 ≥ Azize & Basu 2022
    ≥ Lai–Robbins."""
    T = np.array([10.0, 1e3, 1e6])
    lr = regret.lai_robbins(MU4, T)
    ab = regret.azize_basu_2022(MU4, T, eps)
    az = regret.azize_2025(MU4, T, eps)
    assert np.all(az >= ab - 1e-9) and np.all(ab >= lr - 1e-9)
    np.testing.assert_allclose(lr / np.log(T), lr[-1] / math.log(1e6))  # C·log T


def test_the_limits_in_epsilon():
    K_sub = 4
    high = regret.azize_2025(MU4, 1e6, 1e-5) / math.log(1e6)
    assert high == pytest.approx(K_sub / 1e-5, rel=1e-3)  # Σ Δ/(εΔ): the TV regime
    assert regret.azize_2025(MU4, 1e6, 1e3) == pytest.approx(regret.lai_robbins(MU4, 1e6))
    assert regret.azize_basu_2022(MU4, 1e6, 1e-5) / math.log(1e6) == pytest.approx(
        K_sub / 6e-5)
    assert regret.shariff_sheffet(MU4, 1e6, 1e-3) == pytest.approx(5 / 1e-3 * math.log(1e6))


def test_the_local_dp_bound_has_ren_et_al_s_order():
    """For small ε, c(ε) ≈ ε², so the bound is ≈ Σ_a log T/(ε²Δ_a) (Ren et al. 2020's order)."""
    eps = 1e-3
    gaps = 0.75 - np.array(MU4[1:])
    assert regret.ldp_lower_bound(MU4, 1e6, eps) == pytest.approx(
        np.sum(1 / (eps**2 * gaps)) * math.log(1e6), rel=1e-2)
    assert regret.ldp_lower_bound(MU4, 1e6, 50.0) == pytest.approx(regret.lai_robbins(MU4, 1e6))


def test_ties_and_certain_arms_contribute_nothing():
    assert regret.lai_robbins([0.5, 0.5], 100.0) == 0.0
    assert regret.lai_robbins([1.0, 0.2], 100.0) == 0.0  # kl(0.2, 1) = ∞: told apart at once
    assert set(regret.lower_bounds(MU4, 1e4, 1.0)) == {
        "lai-robbins", "shariff-sheffet", "azize-basu-2022", "azize-2025", "ldp"}


@pytest.mark.parametrize("call,param", [
    (lambda: regret.lai_robbins([0.5, 1.2], 10.0), "mu"),
    (lambda: regret.lai_robbins([0.5], 10.0), "mu"),
    (lambda: regret.lai_robbins(MU4, 0.5), "T"),
    (lambda: regret.azize_2025(MU4, 10.0, 0.0), "epsilon"),
    (lambda: regret.ldp_lower_bound(MU4, 10.0, float("nan")), "epsilon"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(ValueError, match=param):
        call()
