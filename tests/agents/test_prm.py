"""Private robust mean estimators of paper 1 (Algorithms 2 and 3) and their confidence radii.

Hand-computed values with the noise switched off (uniforms of ½ give Laplace noise ≈ 0), then
statistical checks that the radius the agents use (Theorem 6.1 / Theorem 6.5 with the proofs'
constants, :mod:`privenv.agents.huber`) holds with probability ≥ 1 − δ on contaminated heavy-tailed
samples: many independent estimates, exceedances counted, and a binomial tail test at a stated
false-alarm probability. Each check also shows it has power: a radius 100× too small is rejected.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privenv.agents.huber import (
    PRAEC,
    PRAER,
    batch_delta,
    central_moment_parameters,
    central_moment_threshold,
    histogram_bins,
    prm_central_moment,
    prm_raw_moment,
    raw_moment_parameters,
    raw_moment_threshold,
)

HALF = 0.5  # a standard uniform of ½ gives Laplace noise of about 1e-16 × scale
LN2 = math.log(2.0)

# -- Algorithm 2 -------------------------------------------------------------------------------


def test_algorithm_2_hand_values_without_noise():
    x = np.array([[1.0, -2.0, 5.0, 0.5], [1.0, -2.0, 5.0, 0.5]])
    # M = 3: 5 is truncated to 0 -> (1 - 2 + 0 + 0.5)/4; M = 10: nothing truncated -> 4.5/4
    mu = prm_raw_moment(x, np.array([3.0, 10.0]), epsilon=1.0, u=np.full(2, HALF))
    np.testing.assert_allclose(mu, [-0.125, 1.125], atol=1e-12)
    # |x| = M is kept (line 3: 1{|x| ≤ M})
    assert prm_raw_moment(np.array([[2.0, -2.0, 2.0, 3.0]]), 2.0, 1.0, [HALF])[0] == pytest.approx(
        0.5
    )


def test_algorithm_2_laplace_scale_is_2M_over_n_epsilon():
    # u = 3/4 -> standard Laplace quantile ln 2; scale 2M/(nε) = 2·3/(4·0.5) = 3
    x = np.array([[1.0, -2.0, 5.0, 0.5]])
    mu = prm_raw_moment(x, 3.0, epsilon=0.5, u=np.array([0.75]))
    assert mu[0] == pytest.approx(-0.125 + 3.0 * LN2, abs=1e-12)


# -- Algorithm 3 -------------------------------------------------------------------------------


def test_histogram_bins_cover_minus_D_to_D():
    np.testing.assert_allclose(histogram_bins(4.0, 2.0), [-4.0, -2.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="2D/r"):
        histogram_bins(4.0, 3.0)


def test_algorithm_3_hand_values_without_noise():
    # D = 4, r = 2: bins [-4,-2), [-2,0), [0,2), [2,4). First fold: -3 (bin 0), 0.5, 1.5, 1 (bin 2),
    # and 4.0, -4.5 outside [-D, D) -> p = (1, 0, 3, 0)/6, J = 0. Second fold around J = 0 with
    # M = 2: (1 + 0 + 0.2 - 0.4 + 2 + 0)/6, 9 and -2.5 truncated.
    first = [0.5, 1.5, 1.0, -3.0, 4.0, -4.5]
    second = [1.0, 9.0, 0.2, -0.4, 2.0, -2.5]
    x = np.array([first + second])
    mu, J = prm_central_moment(x, 2.0, 1.0, D=4.0, r=2.0, u_hist=np.full((1, 4), HALF),
                               u_mean=np.array([HALF]), return_initial=True)
    assert J[0] == 0.0
    assert mu[0] == pytest.approx(2.8 / 6, abs=1e-12)


def test_algorithm_3_histogram_noise_moves_the_initial_estimate():
    # u → 1 puts a large positive Laplace draw on bin 0: J = -4, and every second-fold point is
    # farther than M = 2 from -4 except -2.5 -> μ̃ = -4 + (1.5)/6
    first = [0.5, 1.5, 1.0, -3.0, 4.0, -4.5]
    second = [1.0, 9.0, 0.2, -0.4, 2.0, -2.5]
    u_hist = np.array([[1.0 - 2**-40, HALF, HALF, HALF]])
    mu, J = prm_central_moment(np.array([first + second]), 2.0, 1.0, 4.0, 2.0, u_hist,
                               np.array([HALF]), return_initial=True)
    assert J[0] == -4.0
    assert mu[0] == pytest.approx(-4.0 + 1.5 / 6, abs=1e-12)


def test_algorithm_3_noise_scales():
    # mean noise Lap(2M/(nε)): u = 3/4, M = 2, n = 6, ε = 0.5 -> +(4/3)·ln 2
    first = [0.5, 1.5, 1.0, -3.0, 4.0, -4.5]
    second = [1.0, 9.0, 0.2, -0.4, 2.0, -2.5]
    mu = prm_central_moment(np.array([first + second]), 2.0, 0.5, 4.0, 2.0,
                            np.full((1, 4), HALF), np.array([0.75]))
    assert mu[0] == pytest.approx(2.8 / 6 + (4.0 / 3.0) * LN2, abs=1e-12)
    # histogram noise Lap(2/(nε)) = Lap(2/3): bin 1 (count 0) needs a draw > 0.5 = 3/6 - 0 to
    # beat bin 2; with u₁ = 1 - e^{-1.5}/2 its draw is (2/3)·1.5 = 1 > 0.5 -> J = -2
    u_hist = np.array([[HALF, 1.0 - math.exp(-1.5) / 2, HALF, HALF]])
    _, J = prm_central_moment(np.array([first + second]), 2.0, 0.5, 4.0, 2.0, u_hist,
                              np.array([HALF]), return_initial=True)
    assert J[0] == -2.0
    # ... and a draw of (2/3)·0.6 = 0.4 < 0.5 does not
    u_hist = np.array([[HALF, 1.0 - math.exp(-0.6) / 2, HALF, HALF]])
    _, J = prm_central_moment(np.array([first + second]), 2.0, 0.5, 4.0, 2.0, u_hist,
                              np.array([HALF]), return_initial=True)
    assert J[0] == 0.0


def test_algorithm_3_needs_two_folds():
    with pytest.raises(ValueError, match=r"\(m, 2n\)"):
        prm_central_moment(np.ones((1, 3)), 1.0, 1.0, 4.0, 2.0, np.full((1, 4), HALF), [HALF])


# -- parameters: the proofs' explicit constants ------------------------------------------------


def test_theorem_6_1_parameters_hand_values():
    # α = 0 (uncontaminated proof): L = log(4/δ); δ = 4/e² -> L = 2; n = 8, ε = 1, k = 2:
    # M = (8/(4·2))^½ = 1, β = √(2·2/8) + 2·(4·2/8)^½ = √½ + 2
    M, beta = raw_moment_parameters(8, 1.0, 4 / math.e**2, 0.0, 2.0)
    assert M == pytest.approx(1.0)
    assert beta == pytest.approx(math.sqrt(0.5) + 2.0)
    # α = 1/32 (contaminated): L = log(16/δ); δ = 16/e⁴ -> L = 4; n = 64, ε = 1:
    # M = min{(64/16)^½, (1/4)^-½} = min{2, 2}, β = √(8/64) + 2·(16/64)^½ + 2·(1/4)^½
    M, beta = raw_moment_parameters(64, 1.0, 16 / math.e**4, 1 / 32, 2.0)
    assert M == pytest.approx(2.0)
    assert beta == pytest.approx(math.sqrt(1 / 8) + 1.0 + 1.0)
    # ε > 1 uses ε̄ = 1 in the accuracy parameters
    np.testing.assert_allclose(raw_moment_parameters(64, 5.0, 0.01, 0.05, 2.0),
                               raw_moment_parameters(64, 1.0, 0.01, 0.05, 2.0))
    # 𝒯 = log(8/δ)/α
    assert raw_moment_threshold(8 / math.e**3, 0.1) == pytest.approx(30.0)
    assert raw_moment_threshold(0.01, 0.0) == 0.0


def test_theorem_6_5_parameters_hand_values():
    # α = 0: r = √10; M = 4(nε/log(1/δ))^½; δ = 1/e -> M = 4√n. n = 16: M = 16.
    # L = log(16e) = 1 + log 16; β = √(2L/16) + 4(16 + 2√10)L/48 + 2/16 + 2√10(1/64 + √(L/32))
    #       + 2·16·log(8e)/16
    r, M, beta = central_moment_parameters(16, 1.0, 1 / math.e, 0.0, 2.0)
    L = 1 + math.log(16)
    r10 = math.sqrt(10)
    expected = (math.sqrt(2 * L / 16) + 4 * (16 + 2 * r10) * L / 48 + 2 / 16
                + 2 * r10 * (1 / 64 + math.sqrt(L / 32)) + 2 * math.log(8 * math.e))
    assert r == pytest.approx(r10)
    assert M == pytest.approx(16.0)
    assert beta == pytest.approx(expected)
    # α = 0.1: r = ι^½, ι = 0.9/0.149; M = 4·min{(nε/log(1/δ))^½, α^-½}
    r, M, _ = central_moment_parameters(10_000, 1.0, 1 / math.e, 0.1, 2.0)
    assert r == pytest.approx(math.sqrt(0.9 / 0.149))
    assert M == pytest.approx(4 / math.sqrt(0.1))
    # 𝒯: α = 0 -> 200·log(16D/δ)/ε; α > 0 -> max{ι L/ε, c₁ log(16D/δ)/ε, L/α²}, L = log(16/δ)
    assert central_moment_threshold(16 / math.e**2, 0.0, 0.5, D=1.0) == pytest.approx(800.0)
    delta = 16 / math.e**2  # L = 2
    assert central_moment_threshold(delta, 0.1, 1.0, D=1.0) == pytest.approx(200.0)  # L/α²
    assert central_moment_threshold(delta, 0.1, 0.01, D=1.0) == pytest.approx(
        0.9 / 0.149 * 2 / 0.01)  # ι L/ε


def test_batch_delta_union_bound():
    # δ_τ = δ/(2|S|τ²): Σ_τ Σ_S δ_τ ≤ δ·π²/12 < δ
    assert batch_delta(0.1, 3, 5) == pytest.approx(0.1 / 90)


# -- statistical checks of the radii ----------------------------------------------------------

ALPHA = 0.05
EPS = 0.5
DELTA = 0.02  # per-estimate failure probability of the radius under test
N_EST = 4000  # independent estimates per case
CASES = [(law, mu) for law in ("student-t", "pareto") for mu in (0.0, 100.0)]
#: false-alarm probability of the whole file's radius checks (Bonferroni over the 8 cases)
FALSE_ALARM = 1e-6
PER_CASE = FALSE_ALARM / (2 * len(CASES))


def _contaminated(rng: np.random.Generator, law: str, mu: float, shape: tuple[int, int]):
    """Paper 1 §7 samples: μ + centred Student-t(2.5) or Pareto(2.5, 1.5) inliers (variance 5),
    replaced with probability α by N(0, 50²) outliers."""
    if law == "student-t":
        x = mu + rng.standard_t(2.5, size=shape)
    else:
        x = mu + 1.5 * (1.0 + rng.pareto(2.5, size=shape)) - 2.5
    outlier = rng.random(shape) < ALPHA
    x[outlier] = 50.0 * rng.standard_normal(int(outlier.sum()))
    return x


def _exceedance_p_value(exceed: int, n: int, delta: float) -> float:
    """P(Bin(n, δ) ≥ exceed): small means more exceedances than a 1 − δ radius allows."""
    return float(stats.binom.sf(exceed - 1, n, delta))


@pytest.mark.parametrize("law,mu", CASES)
def test_algorithm_2_radius_holds_with_probability_1_minus_delta(law, mu):
    """PRAE-R's radius (Theorem 6.1, contaminated, explicit constants): with n ≥ log(8/δ)/α."""
    rng = np.random.default_rng(20230 + int(mu) + (law == "pareto"))
    u = mu**2 + 5.0  # E X² = μ² + Var: the raw moment bound (k = 2)
    agent = PRAER(K=2, horizon=10, epsilon=EPS, alpha=ALPHA, raw_moment_bound=u, delta=DELTA)
    n = 1024
    assert n >= raw_moment_threshold(DELTA, ALPHA)
    M, _ = raw_moment_parameters(n, EPS, DELTA, ALPHA, 2.0)
    beta = float(agent.radius(np.array([n]), np.array([DELTA]))[0])
    errors = []
    for _ in range(4):
        x = _contaminated(rng, law, mu, (N_EST // 4, n))
        est = prm_raw_moment(x, agent.scale * M, EPS, rng.random(N_EST // 4))
        errors.append(np.abs(est - mu))
    err = np.concatenate(errors)
    assert _exceedance_p_value(int((err > beta).sum()), N_EST, DELTA) > PER_CASE
    # power: a radius 100× too small is rejected
    assert _exceedance_p_value(int((err > beta / 100).sum()), N_EST, DELTA) < PER_CASE


@pytest.mark.parametrize("law,mu", CASES)
def test_algorithm_3_radius_holds_with_probability_1_minus_delta(law, mu):
    """PRAE-C's radius (Theorem 6.5 / Corollary 6.8, explicit constants), fold size n ≥ 𝒯."""
    rng = np.random.default_rng(61200 + int(mu) + (law == "pareto"))
    agent = PRAEC(K=2, horizon=10, epsilon=EPS, alpha=ALPHA, central_moment_bound=5.0,
                  mean_range=100.0, delta=DELTA)
    n = int(math.ceil(central_moment_threshold(DELTA, ALPHA, EPS, agent.D / agent.scale)))
    _, M, _ = central_moment_parameters(n, EPS, DELTA, ALPHA, 2.0)
    beta = float(agent.radius(np.array([2 * n]), np.array([DELTA]))[0])
    errors = []
    chunk = 250
    for _ in range(N_EST // chunk):
        x = _contaminated(rng, law, mu, (chunk, 2 * n))
        est = prm_central_moment(x, agent.scale * M, EPS, agent.D, agent.r,
                                 rng.random((chunk, agent.n_bins)), rng.random(chunk))
        errors.append(np.abs(est - mu))
    err = np.concatenate(errors)
    assert _exceedance_p_value(int((err > beta).sum()), N_EST, DELTA) > PER_CASE
    assert _exceedance_p_value(int((err > beta / 100).sum()), N_EST, DELTA) < PER_CASE
