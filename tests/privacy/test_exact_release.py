"""The exact samplers inside compiled agents and local randomizers (privenv.privacy.releases): the
word streams, the calibration of a release, its law, the words one release takes, and the
sampler recorded with the results."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privenv import seeding
from privenv._jit import jit
from privenv.privacy import exact as ex
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.local import GaussianRandomizer, LaplaceRandomizer
from privenv.privacy.samplers import ExactSampler, central_sampler
from privenv.seeding import RunNoise, child
from privenv.store import Store
from privenv.sweep import Cell, run_cell

SEEDS = [np.random.SeedSequence(11, spawn_key=(i,)) for i in range(4)]


def _words(noise: RunNoise, run: int, n: int) -> np.ndarray:
    noise.ensure(np.array([run]), words=n)
    v = noise.view()
    return v.w[run, v.w_pos[run]: v.w_pos[run] + n].copy()


def test_a_runs_words_are_its_own_stream_alone_or_in_a_batch():
    batch = RunNoise(SEEDS)
    alone = RunNoise([SEEDS[2]])
    gen = seeding.generators([child(SEEDS[2], 2)])[0]
    expected = seeding.random_words(gen, 5000)
    np.testing.assert_array_equal(_words(batch, 2, 5000), expected)
    np.testing.assert_array_equal(_words(alone, 0, 5000), expected)
    piecewise = RunNoise([SEEDS[2]])  # topped up 37 words at a time: the same words
    got = []
    for _ in range(20):
        w = _words(piecewise, 0, 37)
        got.append(w)
        piecewise.view().w_pos[0] += 37
    np.testing.assert_array_equal(np.concatenate(got), expected[:740])


def test_asking_for_words_changes_no_uniform_or_normal():
    a, b = RunNoise(SEEDS), RunNoise(SEEDS)
    b.ensure(words=4096)
    for run in range(4):
        np.testing.assert_array_equal(a.uniforms(run, 700), b.uniforms(run, 700))
        np.testing.assert_array_equal(a.normals(run, 700), b.normals(run, 700))


def test_a_float_consumer_draws_no_word():
    noise = RunNoise(SEEDS)
    noise.uniform()
    noise.normal()
    view = noise.view()
    assert (view.w_end == 0).all() and (view.w_pos == 0).all()  # not a word drawn


@pytest.mark.parametrize("epsilon", [2.0**-20, 1e-3, 0.1, 1 / 3, 0.5, 1.0, math.e, 10.0, 250.0])
def test_epsilon_denominator_is_the_smallest_q_with_an_exact_epsilon_at_most_epsilon(epsilon):
    q = ex.epsilon_denominator(epsilon)
    assert ex.epsilon_of_denominator(q) <= Fraction(epsilon)
    assert ex.epsilon_of_denominator(q - 1) > Fraction(epsilon)


def test_epsilon_denominator_refuses_epsilon_below_its_resolution():
    with pytest.raises(ValueError, match="epsilon"):
        ex.epsilon_denominator(2.0**-21)


@pytest.mark.parametrize("sensitivity", [1.0, 2.0 / 3.0, 1e-7, 2.0 * 37.5 / 4096, 5.0])
@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 10.0])
def test_a_releases_grid_and_sensitivity_are_computed_exactly(sensitivity, epsilon):
    """The grid g is a power of two about a thousandth of Δ/ε, and Δ_k ≥ ⌈Δ/g⌉ + 1 holds in exact
    rational arithmetic, so the release is (Δ_k/t = 2²⁰/q)-DP for inputs within Δ + g."""
    q = ex.epsilon_denominator(epsilon)
    g, dk = ex.release_grid(sensitivity, q)
    assert math.frexp(g)[0] == 0.5  # a power of two
    assert 1000 <= Fraction(sensitivity) / Fraction(g) * Fraction(q, 2**20) < 2100
    assert dk >= math.ceil(Fraction(sensitivity) / Fraction(g)) + 1
    t = Fraction(dk * q, 2**20)
    assert Fraction(dk) / t == ex.epsilon_of_denominator(q) <= Fraction(epsilon)


def test_a_release_is_the_grid_point_plus_discrete_laplace_noise():
    """200 000 releases of x = 0.3 (Δ = 1, ε = 1): every one is a grid point, and the noise in grid
    units has the law Lap_ℤ(t) (χ² over |Z| in 40 classes; false-alarm probability 10⁻⁶, seed
    fixed). Mutation check: the same statistic on Lap_ℤ(1.1·t) draws is rejected."""
    q = ex.epsilon_denominator(1.0)
    g, dk = ex.release_grid(1.0, q)
    t = dk * q / 2**20
    n = 200_000
    noise = RunNoise([SEEDS[0]])
    noise.ensure(words=n * ex.RELEASE_BUDGET)
    out = _release_many(noise.view(), n, 0.3, 1.0, q)
    assert noise.view().w_pos[0] == n * ex.RELEASE_BUDGET  # every release: its budget of words
    k = ex.grid_round(0.3, g)
    z = out / g - k
    np.testing.assert_array_equal(z, np.round(z))  # on the grid
    assert _chi2_p(np.abs(z), t) > 1e-6
    other = ex.discrete_laplace(Fraction(11, 10) * Fraction(dk * q, 2**20),
                                np.random.default_rng(3), n)
    assert _chi2_p(np.abs(other.astype(float)), t) < 1e-6


@jit(allocates=True)
def _release_many(noise, n, x, sensitivity, q):
    out = np.empty(n)
    for i in range(n):
        out[i] = ex.laplace_release(noise, 0, x, sensitivity, q)
    return out


def _chi2_p(abs_z: np.ndarray, t: float) -> float:
    """χ² p-value of |Z| against |Lap_ℤ(t)|: P[|Z| = 0] = tanh(1/(2t)), P[|Z| = m] ∝ e^{−m/t}."""
    r = math.exp(-1.0 / t)
    edges = np.quantile(abs_z, np.linspace(0, 1, 41)[1:-1])
    edges = np.unique(np.concatenate([[0.5], np.floor(edges) + 0.5]))

    def cdf(m: float) -> float:  # P[|Z| ≤ m], m a half-integer
        return 1.0 - 2.0 * r ** (math.floor(m) + 1) / (1.0 + r)

    probs = np.diff([0.0, *[cdf(e) for e in edges], 1.0])
    counts = np.histogram(abs_z, bins=[-1.0, *edges, np.inf])[0]
    return float(stats.chisquare(counts, probs * abs_z.size).pvalue)


def test_the_agents_ensure_twice_the_budgets_of_a_steps_releases():
    """A compiled agent ensures :data:`ENSURED_PER_BUDGET` times the words of the releases (and
    histogram counts) a step may make, so an overrun of its budget still finds its words; PRAE-C's
    counts have their own budget (Lap_ℤ(2q/2²⁰))."""
    assert central_sampler("float", 1.0).words == central_sampler("float", 1.0).count_words == 0
    q = ex.epsilon_denominator(0.5)
    assert central_sampler("exact", 0.5) == ExactSampler(q=q, words=2 * ex.RELEASE_BUDGET)
    with_counts = central_sampler("exact", 0.5, counts=True)
    assert with_counts.count_budget == ex.count_budget(q)
    assert 10 * with_counts.count_words + with_counts.words == \
        2 * (ex.RELEASE_BUDGET + 10 * ex.count_budget(q))
    assert ex.count_budget(q) == ex.DiscreteLaplaceParameters(
        ex.Grid(0), 2 * q, 2**20, 1).budget
    assert central_sampler("exact", 1.0, noise_multiplier=0.5).q == ex.epsilon_denominator(2.0)


def test_a_release_that_runs_out_of_words_raises_and_a_nan_input_is_refused():
    noise = RunNoise([SEEDS[0]])
    noise.ensure(words=1)
    view = noise.view()
    view.w_pos[0] = view.w_end[0]  # no word left
    with pytest.raises(RuntimeError, match="ran out of words"):
        ex.laplace_release(view, 0, 0.5, 1.0, ex.epsilon_denominator(1.0))
    noise.ensure(words=ex.RELEASE_BUDGET)
    view = noise.view()
    end = int(view.w_end[0])
    view.w_end[0] = view.w_pos[0] + ex.RELEASE_BUDGET - 1  # one word short of its budget
    with pytest.raises(RuntimeError, match="ran out of words"):
        ex.laplace_release(view, 0, 0.5, 1.0, ex.epsilon_denominator(1.0))
    view.w_end[0] = end
    with pytest.raises(ValueError, match="NaN or too large"):
        ex.laplace_release(noise.view(), 0, float("nan"), 1.0, ex.epsilon_denominator(1.0))


def test_the_randomizers_exact_guarantee_accounts_for_grid_and_range():
    lap = LaplaceRandomizer(1.0, (0.0, 1.0), sampler="exact")
    g = lap.exact.guarantee
    assert lap.privacy == PrivacyGuarantee("local", g.epsilon, 0.0, "reward", sampler="exact")
    assert g.epsilon_exact <= 1 and g.holds_in_floating_point
    gauss = GaussianRandomizer(0.5, 1e-3, (0.0, 1.0), "classical", sampler="exact")
    classical = GaussianRandomizer(0.5, 1e-3, (0.0, 1.0), "classical")
    assert gauss.sigma >= classical.sigma  # at least the paper's σ
    assert gauss.privacy.delta <= 1e-3 and gauss.privacy.sampler == "exact"
    with pytest.raises(ValueError, match="sampler must be one of"):
        LaplaceRandomizer(1.0, (0.0, 1.0), sampler="snapping")


def test_the_store_keeps_the_sampler(tmp_path):
    cell = Cell("HuberBandit-v0", {"alpha": 0.05}, "dp-se", {"epsilon": 2.0, "sampler": "exact"},
                400, 0, 0, 2)
    result = run_cell(cell)
    assert result.privacy.sampler == "exact"
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.record_result(result, "hash")
    with Store(path, create=False) as store:
        assert store.results()[0].privacy == result.privacy
        assert store.table("runs")[0].index("privacy_sampler") >= 0
    # (a store of schema 1, before the sampler column, is refused: tests/sweeps/
    # test_store_integrity.py)
