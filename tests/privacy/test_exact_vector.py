"""Vector releases with the exact samplers (privenv/privacy/exact.py, "Vector releases on per-run
streams"): per-run draws, the grids' sensitivity bounds, and the laws of the noise."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privenv.privacy import exact as ex
from privenv.seeding import RunNoise

SEEDS = [np.random.SeedSequence(5, spawn_key=(i,)) for i in range(5)]
GAUSS = ex.VectorGaussian.for_sigma(3.7)
LAP = ex.VectorLaplace.calibrate(1.0, 2.0 * math.sqrt(10.0) + 2.0, 11)


@pytest.mark.parametrize("params", [GAUSS.params, LAP.params], ids=["gaussian", "laplace"])
def test_a_runs_draws_do_not_depend_on_the_batch_or_the_buffering(params):
    whole = ex.run_discrete(RunNoise(SEEDS), np.arange(5), 300, params)
    noise = RunNoise(SEEDS)
    alone = {r: ex.run_discrete(noise, np.array([r]), 300, params)[0] for r in (3, 1, 0, 4, 2)}
    np.testing.assert_array_equal(whole, np.array([alone[r] for r in range(5)]))
    noise = RunNoise(SEEDS)  # 1, then 99, then 200 at a time: the words run out mid-batch
    pieces = np.hstack([ex.run_discrete(noise, np.arange(5), k, params) for k in (1, 99, 200)])
    np.testing.assert_array_equal(whole, pieces)
    assert len({tuple(row) for row in whole}) == 5  # five different streams


def test_the_draws_follow_their_laws():
    """A χ² test of 10⁵ draws of each law against its exact pmf, on cells
    of ≈ 1 % mass; seed fixed; false-alarm probability 10⁻⁴ per law."""
    for params, pmf in [
        (GAUSS.params, lambda z, s2=float(GAUSS.params.variance): np.exp(-z * z / (2 * s2))),
        (LAP.params, lambda z, t=float(LAP.params.scale): np.exp(-np.abs(z) / t)),
    ]:
        noise = RunNoise([np.random.SeedSequence(2026)])
        z = ex.run_discrete(noise, np.array([0]), 100_000, params)[0]
        reach = int(z.max() - z.min()) * 2 + 10
        support = np.arange(-reach, reach + 1)
        p = pmf(support.astype(float))
        p /= p.sum()
        edges = np.searchsorted(np.cumsum(p), np.linspace(0, 1, 101)[1:-1])
        cuts = support[edges]  # cell i: cuts[i-1] < z ≤ cuts[i]
        counts = np.diff(np.concatenate([[0], np.searchsorted(np.sort(z), cuts, side="right"),
                                         [z.size]]))
        expected = np.diff(np.concatenate([[0.0], np.cumsum(p)[edges], [1.0]])) * z.size
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < stats.chi2.ppf(1 - 1e-4, len(expected) - 1), chi2


def test_the_generator_path_draws_the_same_law_in_one_block():
    z = ex.run_discrete(np.random.default_rng(1), np.arange(3), 4, GAUSS.params)
    assert z.shape == (3, 4) and z.dtype == np.int64


def test_rounding_stays_within_the_grid_sensitivity_bounds():
    """Worst cases of ‖k − k′‖ over 2·10⁴ random pairs at the sensitivity (and pairs aimed at
    the rounding boundaries) never exceed the bounds the guarantees use."""
    rng = np.random.default_rng(7)
    grid = ex.Grid(-6)
    m, delta = 9, 0.37
    x = rng.uniform(-1, 1, (20_000, m))
    x[:5000] = np.round(x[:5000] * 64) / 64 + 0.5 / 64  # exactly on half-way points
    for norm, bound in [(2, ex.l2_grid_sensitivity(grid, delta, m)),
                        (1, ex.l1_grid_sensitivity(grid, delta, m))]:
        step = rng.normal(size=x.shape)
        step *= delta / np.linalg.norm(step, ord=norm, axis=1, keepdims=True)
        dk = grid.round(x + step) - grid.round(x)
        assert np.linalg.norm(dk, ord=norm, axis=1).max() <= bound
    # the bounds are what they say: Δ/g + √m and ⌈Δ/g⌉ + m
    assert ex.l2_grid_sensitivity(grid, delta, m) == pytest.approx(delta * 64 + 3.0, rel=1e-12)
    assert ex.l1_grid_sensitivity(grid, delta, m) == math.ceil(delta * 64) + m


def test_the_vector_calibrations():
    assert 2**14 <= GAUSS.params.variance ** 0.5 < 2**15 + 1
    assert GAUSS.sigma >= 3.7
    rho = GAUSS.rho(2 * math.sqrt(2), 65)
    assert rho >= 8 / (2 * 3.7**2)  # the rounding only adds
    assert rho < 1.01 * 8 / (2 * 3.7**2)
    b = Fraction(ex.l2_grid_sensitivity(GAUSS.grid, 2 * math.sqrt(2), 65))
    assert Fraction(rho) >= b * b / (2 * GAUSS.params.variance)
    assert LAP.params.epsilon_exact <= 1
    assert LAP.epsilon > 0.99  # 11 grid units of slack out of ≈ 2¹⁴
    with pytest.raises(ValueError, match="sigma"):
        ex.VectorGaussian.for_sigma(1.0, granularity=2.0**-20)
