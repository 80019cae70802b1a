"""Wishart sampler, paper 4's Wishart mechanism (not DP) and the symmetric Gaussian alternative.

Fixed seeds; each statistical test states its false-alarm probability (≤ 1e-6, Bonferroni).

The privacy audits of both mechanisms are the "wishart-jiang2016" (a documented violation) and
"wishart-gaussian" cases of :mod:`privenv.privacy.audit_composite`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privenv.privacy import audit
from privenv.privacy import wishart as W
from privenv.seeding import AGENT, noise_for

ALPHA = 1e-6
C = np.array([[2.0, 0.6], [0.6, 1.0]])

# -- the sampler ------------------------------------------------------------------------------


def _wishart_gof(draws: np.ndarray, df: int, scale: np.ndarray) -> bool:
    """True if draws pass: uᵀWu/uᵀCu ~ χ²_k for 4 directions u (KS + variance, α/8 each), and
    E[W_ij] = k·C_ij z-tests (SE √(k(C_ij² + C_iiC_jj)/n), 3 entries, α/2 together)."""
    n = draws.shape[0]
    us = [np.array(u) / np.linalg.norm(u) for u in ([1, 0], [0, 1], [1, 1], [1, -1])]
    for u in us:
        q = np.einsum("i,nij,j->n", u, draws, u) / (u @ scale @ u)
        if not audit.goodness_of_fit(q, stats.chi2(df), alpha=ALPHA / 8).passed:
            return False
    crit = stats.norm.isf(ALPHA / 2 / 2 / 3)
    for i, j in ((0, 0), (0, 1), (1, 1)):
        se = math.sqrt(df * (scale[i, j] ** 2 + scale[i, i] * scale[j, j]) / n)
        if abs(draws[:, i, j].mean() - df * scale[i, j]) / se > crit:
            return False
    return True


def test_wishart_sampler_fits_law() -> None:
    """W_2(3, C), 2·10⁵ draws: quadratic forms are χ²₃-distributed and E[W] = 3C (α = 1e-6)."""
    draws = W.wishart(3, C, np.random.default_rng(20261129), 200_000)
    assert draws.shape == (200_000, 2, 2)
    np.testing.assert_array_equal(draws, np.swapaxes(draws, 1, 2))
    assert _wishart_gof(draws, 3, C)


@pytest.mark.parametrize(("df", "factor"), [(2, 1.0), (3, 0.95)])
def test_wishart_gof_catches_mutants(df: int, factor: float) -> None:
    """Mutations: d degrees of freedom instead of d+1; scale 5% too small."""
    draws = W.wishart(df, C * factor, np.random.default_rng(8), 200_000)
    assert not _wishart_gof(draws, 3, C)


def test_wishart_from_standard_matches_outer_products() -> None:
    rng = np.random.default_rng(2)
    z = rng.standard_normal((4, 3 * 2))
    chol = np.linalg.cholesky(C)
    expected = [sum(np.outer(chol @ zj, chol @ zj) for zj in row.reshape(3, 2)) for row in z]
    np.testing.assert_allclose(W.wishart_from_standard(z, C, df=3), expected, rtol=1e-12)
    # scalar scale = c·I
    np.testing.assert_allclose(
        W.wishart_from_standard(z, 2.0, df=3), W.wishart_from_standard(z, 2.0 * np.eye(2), df=3)
    )


# -- the paper's mechanism ----------------------------------------------------------------------


def test_jiang2016_noise_moments() -> None:
    """3s(W_d(d+1, cI) − (d+1)cI), c = 1.5/α: mean 0, Var(entry 11) = 9s²·2(d+1)c²,
    Var(entry 12) = 9s²(d+1)c² (d = 3, α = 2, s = 0.5, 10⁵ draws). Means: z-tests with the
    empirical SE, 9 entries, Bonferroni α = 1e-6; variances: a 10% band, over 10 times their
    sampling error (SE of a sample variance ≈ √((κ−1)/n) ≈ 1–2% here)."""
    d, alpha, s, n = 3, 2.0, 0.5, 100_000
    noise = W.wishart_jiang2016_noise(d, alpha, np.random.default_rng(4), np.arange(n), scale=s)
    c = 1.5 / alpha
    m = noise.reshape(n, -1)
    z = m.mean(axis=0) / (m.std(axis=0) / math.sqrt(n))
    assert np.max(np.abs(z)) < stats.norm.isf(ALPHA / 2 / 9)
    assert noise[:, 0, 0].var() == pytest.approx(9 * s * s * 2 * (d + 1) * c * c, rel=0.1)
    assert noise[:, 0, 1].var() == pytest.approx(9 * s * s * (d + 1) * c * c, rel=0.1)
    assert W.wishart_jiang2016_claimed_epsilon(1.5) == pytest.approx(0.5)


@pytest.mark.parametrize("mechanism", ["jiang", "gaussian"])
def test_mechanisms_run_independent_of_batch(mechanism: str) -> None:
    """Run 2 of seed 5 gets the same release alone (first_run = 2) or in a batch of 4."""
    phi = np.random.default_rng(0).normal(size=(4, 3))
    grams = np.einsum("ni,nj->nij", phi, phi)

    def release(g, noise, runs=None):
        if mechanism == "jiang":
            return W.wishart_jiang2016(g, 1.0, noise, runs)
        return W.symmetric_gaussian_gram(g, 0.5, noise, runs)

    batch = release(grams, noise_for(5, 4, AGENT))
    alone = release(grams[2:3], noise_for(5, 1, AGENT, first_run=2))
    np.testing.assert_array_equal(batch[2], alone[0])
    # a subset of runs reads those runs' streams
    sub = release(grams[[1, 3]], noise_for(5, 4, AGENT), runs=np.array([1, 3]))
    np.testing.assert_array_equal(sub, batch[[1, 3]])
    np.testing.assert_array_equal(batch, np.swapaxes(batch, 1, 2))


def test_gram_sensitivity() -> None:
    """Δ = √2·B² (replace-one, d ≥ 2), B² (add-remove or d = 1): attained, never exceeded."""
    iu = np.triu_indices(3)
    rng = np.random.default_rng(1)
    phi = rng.normal(size=(20_000, 2, 3))
    phi /= np.maximum(np.linalg.norm(phi, axis=2, keepdims=True), 1.0) * rng.uniform(
        1.0, 1.5, size=(20_000, 2, 1)
    )
    diff = np.einsum("ni,nj->nij", phi[:, 0], phi[:, 0]) - np.einsum(
        "ni,nj->nij", phi[:, 1], phi[:, 1]
    )
    assert np.max(np.linalg.norm(diff[:, iu[0], iu[1]], axis=1)) <= W.gram_sensitivity(3)
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    worst = (np.outer(e1, e1) - np.outer(e2, e2))[iu]
    assert np.linalg.norm(worst) == pytest.approx(W.gram_sensitivity(3)) == pytest.approx(
        math.sqrt(2)
    )
    assert W.gram_sensitivity(3, 2.0, "add-remove") == 4.0
    assert W.gram_sensitivity(1, 2.0) == 4.0
    sigma = W.gram_gaussian_sigma(1.0, 1e-6, 3)
    assert sigma == pytest.approx(math.sqrt(2) * 4.224678889, rel=1e-8)


# -- privacy audits: the "wishart-jiang2016" (paper 4's mechanism: a documented violation) and
# "wishart-gaussian" cases of privenv.privacy.audit_composite (run by tests/privacy/test_audits.py).


# -- bad input ----------------------------------------------------------------------------------

G = np.zeros((2, 2, 2))


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: W.wishart(0, C, np.random.default_rng(0)), "df"),
        (lambda: W.wishart(3, 1.0, np.random.default_rng(0)), "dim"),
        (lambda: W.wishart(3, np.array([[1.0, 2.0], [2.0, 1.0]]), np.random.default_rng(0)),
         "positive definite"),
        (lambda: W.wishart(3, np.array([[1.0, 0.5], [0.0, 1.0]]), np.random.default_rng(0)),
         "scale"),
        (lambda: W.wishart(3, -1.0, np.random.default_rng(0), dim=2), "scale"),
        (lambda: W.wishart_from_standard(np.zeros((2, 5)), 1.0, df=3), "z"),
        (lambda: W.wishart_from_standard(np.zeros((2, 6)), 1.0), "df"),
        (lambda: W.wishart_jiang2016(G, 0.0, np.random.default_rng(0)), "alpha"),
        (lambda: W.wishart_jiang2016(G, 1.0, np.random.default_rng(0), scale=0.0), "scale"),
        (lambda: W.wishart_jiang2016(np.zeros((2, 2)), 1.0, np.random.default_rng(0)),
         "matrices"),
        (lambda: W.wishart_jiang2016(G + [[0, 1], [0, 0]], 1.0, np.random.default_rng(0)),
         "symmetric"),
        (lambda: W.wishart_jiang2016(G + np.nan, 1.0, np.random.default_rng(0)), "finite"),
        (lambda: W.wishart_jiang2016(G, 1.0, np.random.default_rng(0), runs=np.array([0])),
         "runs"),
        (lambda: W.wishart_jiang2016(G, 1.0, object()), "noise"),
        (lambda: W.symmetric_gaussian_gram(G, 0.0, np.random.default_rng(0)), "sigma"),
        (lambda: W.gram_sensitivity(0), "dim"),
        (lambda: W.gram_sensitivity(2, -1.0), "bound"),
        (lambda: W.gram_sensitivity(2, 1.0, "swap"), "neighbouring"),
        (lambda: W.gram_gaussian_sigma(0.0, 1e-6, 2), "epsilon"),
        (lambda: W.gram_gaussian_sigma(1.0, 1.0, 2), "delta"),
    ],
)
def test_bad_input(build, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        build()
