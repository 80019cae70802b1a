"""The exact samplers (privenv.privacy.exact): batch draws and their determinism, goodness of fit
with mutations, the grid and its guarantee, snapping. (The kernels against CKS20's reference
loops: tests/privacy/test_constant_work.py; the work budgets: tests/privacy/test_work.py.)

Statistical tests use fixed seeds; each states its false-alarm probability (α = 1e-6 per test
unless said otherwise, Bonferroni inside). The neighbouring-input ε audits of the exact samplers
and their mutations are harness cases ("laplace-exact", "gaussian-exact", "laplace-snapping",
run by tests/privacy/test_audits.py); the exact-preimage audits are in
tests/privacy/test_preimage.py.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from privenv import seeding
from privenv.privacy import audit, draws, work
from privenv.privacy import constant_work as S
from privenv.privacy import exact as ex
from privenv.privacy import mechanisms as mech

ALPHA = 1e-6
N = 10**6
#: draws of each mutant in the goodness-of-fit tests below (the law itself is tested on :data:`N`).
#: Their variance z-test alone catches a scale × 0.97 (the smaller factor of :data:`FACTORS`)
#: with z ≈ (0.97² − 1)·√(n / (κ − 1)) against the threshold 5.03 (α/2 two-sided; κ the law's
#: kurtosis, 3 for the Gaussian, about 6 for the Laplace): −22.9 and −14.5 at this n, a miss
#: probability below 10⁻²⁰ for both (at N: −41.8 and −26.4, for 3.3 times the draws' CPU).
N_MUTANT = 3 * 10**5


# ---------------------------------------------------------------------------------------------
# batch draws: determinism, blocks (the kernels: tests/privacy/test_constant_work.py)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [5, 170, 1000])
def test_batches_do_not_depend_on_the_word_blocks(block: int, monkeypatch) -> None:
    """Tiny word blocks (cut inside draws, hundreds of times) give the same draws as one big
    block, and leave the generator in the same state: n draws read n budgets of words."""
    want = ex.discrete_laplace(Fraction(7, 3), np.random.default_rng(5), 3000)
    want_g = ex.discrete_gaussian(Fraction(15, 2), np.random.default_rng(6), 300)
    monkeypatch.setattr(draws, "WORD_BLOCK", block)
    rng = np.random.default_rng(5)
    np.testing.assert_array_equal(ex.discrete_laplace(Fraction(7, 3), rng, 3000), want)
    budget = work.laplace_budget(7, 3)
    after = np.random.default_rng(5)
    after.bit_generator.advance(3000 * budget)
    assert rng.integers(0, 2**64, dtype=np.uint64) == after.integers(0, 2**64, dtype=np.uint64)
    np.testing.assert_array_equal(ex.discrete_gaussian(Fraction(15, 2),
                                                       np.random.default_rng(6), 300), want_g)


def test_same_seed_same_numbers_and_prefixes() -> None:
    a = ex.discrete_laplace(3, np.random.default_rng(7), 5000)
    np.testing.assert_array_equal(a, ex.discrete_laplace(3, np.random.default_rng(7), 5000))
    np.testing.assert_array_equal(a[:1234], ex.discrete_laplace(3, np.random.default_rng(7),
                                                                1234))
    assert ex.discrete_laplace(3, np.random.default_rng(7), (2, 3)).shape == (2, 3)
    assert ex.discrete_gaussian(2, np.random.default_rng(7)).shape == ()
    b = ex.discrete_gaussian(Fraction(9, 2), np.random.default_rng(8), 4000)
    np.testing.assert_array_equal(b[:100], ex.discrete_gaussian(Fraction(9, 2),
                                                                np.random.default_rng(8), 100))
    assert not np.array_equal(a, ex.discrete_laplace(3, np.random.default_rng(9), 5000))


# ---------------------------------------------------------------------------------------------
# goodness of fit against the exact laws, each with its mutation
# ---------------------------------------------------------------------------------------------


def _laplace_law(t: float) -> tuple[np.ndarray, np.ndarray]:
    reach = int(60 * t) + 10
    k = np.arange(-reach, reach + 1)
    a = math.exp(-1.0 / t)
    return k, (1 - a) / (1 + a) * a ** np.abs(k)


def _gaussian_law(sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    reach = int(14 * math.sqrt(sigma2)) + 10
    k = np.arange(-reach, reach + 1)
    w = np.exp(-(k.astype(float) ** 2) / (2 * sigma2))
    return k, w / w.sum()


#: the mutations of the goodness-of-fit tests below: the scale (σ) times each factor
FACTORS = (0.97, 0.8)


@pytest.mark.parametrize("scale", [Fraction(3, 2), Fraction(1024)])
def test_discrete_laplace_goodness_of_fit_and_mutation(scale: Fraction) -> None:
    """Lap_ℤ(t) fits its exact law at n = 10⁶ (χ² + variance, α = 1e-6); t × factor is
    rejected by the same test (on :data:`N_MUTANT` draws), for each factor of :data:`FACTORS`."""
    law = _laplace_law(float(scale))
    assert audit.discrete_goodness_of_fit(ex.discrete_laplace(scale, np.random.default_rng(11),
                                                              N), *law, ALPHA).passed
    for factor in FACTORS:
        bad = ex.discrete_laplace(scale * Fraction(str(factor)), np.random.default_rng(11),
                                  N_MUTANT)
        assert not audit.discrete_goodness_of_fit(bad, *law, ALPHA).passed, factor


@pytest.mark.parametrize("sigma2", [Fraction(7, 3), Fraction(3697716)])
def test_discrete_gaussian_goodness_of_fit_and_mutation(sigma2: Fraction) -> None:
    """N_ℤ(0, σ²) fits its exact law at n = 10⁶ (α = 1e-6); σ × factor is rejected (on
    :data:`N_MUTANT` draws), for each factor of :data:`FACTORS`."""
    law = _gaussian_law(float(sigma2))
    good = ex.discrete_gaussian(sigma2, np.random.default_rng(12), N)
    assert audit.discrete_goodness_of_fit(good, *law, ALPHA).passed
    for factor in FACTORS:
        bad_var = (sigma2 * Fraction(str(factor)) ** 2).limit_denominator(64)
        bad = ex.discrete_gaussian(bad_var, np.random.default_rng(12), N_MUTANT)
        assert not audit.discrete_goodness_of_fit(bad, *law, ALPHA).passed, factor


def test_discrete_goodness_of_fit_sees_a_shift() -> None:
    law = _laplace_law(5.0)
    z = ex.discrete_laplace(5, np.random.default_rng(13), N)
    assert audit.discrete_goodness_of_fit(z, *law, ALPHA).passed
    assert not audit.discrete_goodness_of_fit(z + (z == 0), *law, ALPHA).passed  # 0 → 1


# ---------------------------------------------------------------------------------------------
# the grid, the sensitivity in grid units and the guarantees
# ---------------------------------------------------------------------------------------------


def test_grid_rounding_is_exact() -> None:
    grid = ex.Grid(-10)
    g = np.random.default_rng(14)
    x = np.concatenate([g.normal(0, 3, 5000), (np.arange(-20, 21) + 0.5) * 2.0**-10,
                        [0.0, -0.0, 2.0**-1074, 1 / 3]])
    want = [math.floor(Fraction(v) * 1024 + Fraction(1, 2)) for v in x]
    np.testing.assert_array_equal(grid.round(x), want)
    assert ex.Grid.from_granularity(0.25) == ex.Grid(-2)
    for s in (0.001, 1.0, 3.7, 1e6):
        r = s / ex.Grid.for_scale(s).granularity
        assert 1024 <= r < 2048


@settings(max_examples=300, deadline=None)
@given(exponent=st.integers(-12, 4), sens=st.floats(1e-3, 10.0),
       lo=st.floats(-5.0, 5.0), width=st.floats(1e-3, 10.0), a=st.floats(0.0, 1.0),
       b=st.floats(0.0, 1.0), clamp=st.booleans())
def test_grid_sensitivity_bounds_every_neighbouring_pair(exponent, sens, lo, width, a, b,
                                                          clamp) -> None:
    """|k − k′| ≤ Δ_k for any x, x′ with |x − x′| ≤ Δ (clamped into the bounds if declared)."""
    grid = ex.Grid(exponent)
    bounds = (lo, lo + width) if clamp else None
    dk = grid.sensitivity(sens, bounds)
    x = lo - 1.0 + a * (width + 2.0)
    x2 = x + (2 * b - 1) * sens
    assume(abs(Fraction(x2) - Fraction(x)) <= Fraction(sens))  # exact, not the rounded step
    xs = np.clip([x, x2], *bounds) if bounds else np.array([x, x2])
    k = grid.round(xs)
    assert abs(int(k[0]) - int(k[1])) <= dk


def test_laplace_mechanism_guarantees() -> None:
    f = ex.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="float")
    assert f.guarantee.sampler == "float" and not f.guarantee.holds_in_floating_point
    e = ex.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
    p = e.params
    assert (p.grid, p.scale, p.sensitivity_grid) == (ex.Grid(-10), 1024, 1024)
    assert e.guarantee.epsilon_exact == 1 and e.guarantee.holds_in_floating_point
    # a value of ε that is not a dyadic rational: t rounded up to a multiple of 2⁻²⁰
    e = ex.LaplaceMechanism(epsilon=0.3, sensitivity=1.0, sampler="exact")
    g = e.guarantee
    assert g.epsilon_exact <= Fraction(0.3) and g.epsilon <= 0.3
    assert float(g.epsilon_exact) > 0.3 * (1 - 1e-6)
    assert g.epsilon == ex.float_up(g.epsilon_exact)
    # a grid coarser than the sensitivity: Δ_k = ⌈Δ/g⌉
    e = ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.5, sampler="exact", granularity=1.0)
    assert e.params.sensitivity_grid == 2 and e.guarantee.epsilon_exact <= 1
    s = ex.LaplaceMechanism(epsilon=0.5, bounds=(0.0, 1.0), sampler="snapping")
    q = s.params
    assert q.epsilon_exact == (1 + Fraction(q.bound) / 2**49) / Fraction(q.lam) <= Fraction(0.5)
    assert q.lam_pow2 == 4.0 and q.lam < q.bound < 2**46 * q.lam
    assert "Mironov" in s.guarantee.statement
    assert set(s.guarantee.as_dict()) >= {"sampler", "epsilon", "delta", "statement",
                                          "work_budget", "work_delta"}
    # constant work, declared: the words per draw and δ's share for an observer of the work
    e = ex.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact").guarantee
    assert e.work_budget == work.laplace_budget(2**30, 2**20) and "167 words" in e.statement
    assert e.work_delta == pytest.approx((1 + math.e) * 2.0**-64, rel=1e-8)
    assert e.work_delta >= (1 + math.e) * 2.0**-64
    assert s.guarantee.work_budget == 2 and "2 words" in s.guarantee.statement
    assert f.guarantee.work_budget is None and f.guarantee.work_delta == 0.0


def test_gaussian_mechanism_guarantees() -> None:
    e = ex.GaussianMechanism(epsilon=1.0, delta=1e-6, bounds=(0.0, 1.0), sampler="exact")
    g = e.guarantee
    sigma2 = e.params.variance
    assert g.rho == ex.float_up(Fraction(e.sensitivity_grid**2) / (2 * sigma2))
    assert g.delta <= 1e-6 and g.epsilon == 1.0 and g.holds_in_floating_point
    # the exact discrete σ is within 0.01 % of the continuous analytic σ (CKS20: nearly the same)
    assert abs(e.sigma / mech.gaussian_sigma_analytic(1.0, 1e-6, 1.0) - 1) < 1e-4
    # and σ² is minimal among its grid: one step less violates δ
    smaller = float(sigma2) - 1.0 / e.params.var_den
    assert ex.discrete_gaussian_delta(1.0, smaller, e.sensitivity_grid) * (1 + 1e-9) > 1e-6
    assert not ex.GaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=1.0,
                                    sampler="float").guarantee \
        .holds_in_floating_point
    assert g.work_budget == e.params.budget and f"{g.work_budget} words" in g.statement


def test_discrete_gaussian_delta_formulas_agree() -> None:
    """Σ P(y)(1 − e^{ε − L(y)})₊ equals CKS20's two-tail form, computed independently with
    math.fsum; for large σ it is within 10⁻³ of the continuous Gaussian's δ; smaller shifts give
    smaller δ (the sensitivity is the worst case)."""
    for sigma2, eps, dk in ((2.5, 0.5, 1), (40.0, 1.0, 3), (3697716.0, 1.0, 1024)):
        reach = int(14 * math.sqrt(sigma2)) + dk + int(eps * sigma2 / dk) + 5
        w = {y: math.exp(-y * y / (2 * sigma2)) for y in range(-reach, reach + 1)}
        z = math.fsum(w.values())
        a, b = eps * sigma2 / dk - dk / 2, eps * sigma2 / dk + dk / 2
        tails = (math.fsum(v for y, v in w.items() if y > a)
                 - math.exp(eps) * math.fsum(v for y, v in w.items() if y > b)) / z
        got = ex.discrete_gaussian_delta(eps, sigma2, dk)
        assert got == pytest.approx(tails, rel=1e-8)
        for m in range(1, dk, max(1, dk // 7)):
            assert ex.discrete_gaussian_delta(eps, sigma2, m) <= got
    from privenv.privacy.accounting import gaussian_delta
    big = ex.discrete_gaussian_delta(1.0, 3697716.0, 1024)
    assert big == pytest.approx(gaussian_delta(1.0, 1024 / math.sqrt(3697716.0)), rel=1e-3)


def test_releases_are_on_the_grid_and_reproducible() -> None:
    m = ex.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
    y = m.release(np.array([0.3, 2.0, -1.0]), np.random.default_rng(15))
    g = m.params.grid.granularity
    np.testing.assert_array_equal(y / g, np.floor(y / g))
    # clamping is part of the mechanism: 2.0 → 1.0, −1.0 → 0.0 (noise from the same words)
    z = ex.discrete_laplace(m.params.scale, np.random.default_rng(15), 3)
    np.testing.assert_array_equal(y, (np.array([307, 1024, 0]) + z) * g)
    n = ex.GaussianMechanism(epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0), sampler="exact")
    y = n.release(np.full((4, 5), 0.5), np.random.default_rng(16))
    assert y.shape == (4, 5)
    np.testing.assert_array_equal(y, n.release(np.full((4, 5), 0.5), np.random.default_rng(16)))
    f = ex.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="float")
    np.testing.assert_array_equal(f.release(np.zeros(4), np.random.default_rng(1)),
                                  mech.laplace(1.0, np.random.default_rng(1), 4))


# ---------------------------------------------------------------------------------------------
# snapping
# ---------------------------------------------------------------------------------------------


def test_uniform_double_law() -> None:
    """Binade frequencies 2^−e (e = 1 … 6 and beyond) and the mantissa's top bit: two-sided
    Clopper–Pearson at α = 1e-6 over the 8 proportions."""
    u, s = ex.uniform_doubles(np.random.default_rng(17), 400_000)
    assert np.all((u > 0) & (u < 1))
    e = -np.frexp(u)[1] + 1
    checks = [(int(np.sum(e == j)), 2.0**-j) for j in range(1, 7)]
    checks += [(int(np.sum(np.frexp(u)[0] >= 0.75)), 0.5), (int(s.sum()), 0.5)]
    for k, p in checks:
        lo, hi = audit.clopper_pearson(k, u.size, ALPHA / len(checks))
        assert lo <= p <= hi


def test_platform_log_is_faithful_but_not_correctly_rounded() -> None:
    """The snapping certification rests on the platform log erring by < 1 ulp: on 20 000 draws of
    U* it is always within one double of the 60-digit reference, and not always equal to it —
    which is why :func:`snapping_value` certifies instead of trusting it."""
    u, _ = ex.uniform_doubles(np.random.default_rng(18), 20_000)
    ref = np.array([ex.correctly_rounded_log(float(v)) for v in u])
    got = np.log(u)
    assert np.all((got == ref) | (np.nextafter(ref, -np.inf) == got)
                  | (np.nextafter(ref, np.inf) == got))
    assert np.any(got != ref)


def test_snapping_releases_and_uncertain_draws() -> None:
    p = ex.SnappingParameters.calibrate(1.0, 1.0, 17.0)
    y = ex.snap(np.full(20_000, 0.3), p, np.random.default_rng(19))
    assert np.all((y / p.lam_pow2 == np.floor(y / p.lam_pow2)) | (np.abs(y) == p.bound))
    assert np.all(np.abs(y) <= p.bound)
    # an input on a rounding boundary of Λ for a given U*: the kernel cannot certify it, snap
    # decides it with the correctly rounded log
    g = np.random.default_rng(20)
    for _ in range(200):
        words = seeding.random_words(g, 4)
        u, sign, _ = S.uniform_double(words, 0)
        noise = p.lam * math.log(u) * (-1 if sign else 1)
        x = 1.5 * p.lam_pow2 - noise
        if ex.snapping_kernel(words, 0, x, p.lam, p.bound, p.lam_pow2)[1] == ex.UNCERTAIN:
            break
    else:
        pytest.fail("no uncertain draw constructed")
    value, pos = ex.snap_uncertain(words, 0, x, p)
    assert pos == 2
    assert value == ex.snap_from_log(x, ex.correctly_rounded_log(u), sign, p.lam, p.bound,
                                     p.lam_pow2)


# ---------------------------------------------------------------------------------------------
# bad input: one clear line naming the parameter, never a raw data value
# ---------------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
BAD = [
    (lambda: ex.discrete_laplace(0, RNG, 3), "scale"),
    (lambda: ex.discrete_laplace(-1.5, RNG, 3), "scale"),
    (lambda: ex.discrete_laplace(float("nan"), RNG, 3), "scale"),
    (lambda: ex.discrete_laplace(2**53, RNG, 3), "scale"),
    (lambda: ex.discrete_laplace(True, RNG, 3), "scale"),
    (lambda: ex.discrete_laplace(0.1, RNG, 3), "scale"),  # 0.1's exact denominator is 2⁵⁵
    (lambda: ex.discrete_laplace(1, RNG, -1), "size"),
    (lambda: ex.discrete_gaussian(0, RNG, 3), "sigma2"),
    (lambda: ex.discrete_gaussian(2**40, RNG, 3), "sigma2"),
    (lambda: ex.Grid.from_granularity(0.1), "granularity"),
    (lambda: ex.Grid.from_granularity(0.0), "granularity"),
    (lambda: ex.Grid(2000), "granularity exponent"),
    (lambda: ex.LaplaceMechanism(epsilon=0.0, sensitivity=1.0), "epsilon"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0), "sensitivity or bounds"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, bounds=(1.0, 0.0)), "bounds"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="fast"), "sampler"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="float",
                                 granularity=0.5), "granularity"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="exact", bound=3.0),
     "bound"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="snapping"), "bound"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="snapping", bound=0.5),
     "bound"),
    (lambda: ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="exact",
                                 granularity=2.0**-60), "epsilon"),
    (lambda: ex.GaussianMechanism(epsilon=1.0, delta=0.0, sensitivity=1.0), "delta"),
    (lambda: ex.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0, sampler="snapping"),
     "sampler"),
    (lambda: ex.SnappingParameters(1.0, 2.0**47, 1.0), "bound"),
    (lambda: ex.SnappingParameters(1.0, 8.0, 3.0), "sensitivity"),
]


@pytest.mark.parametrize(("call", "name"), BAD, ids=[f"{i}-{n}" for i, (_, n) in enumerate(BAD)])
def test_bad_input_one_line_naming_the_parameter(call, name: str) -> None:
    with pytest.raises(ValueError, match=name) as info:
        call()
    assert "\n" not in str(info.value)


def test_data_errors_never_echo_a_raw_value() -> None:
    m = ex.LaplaceMechanism(epsilon=1.0, sensitivity=1.0, sampler="exact")
    for bad in (np.array([0.5, 97.551234, np.nan]), np.array([97.551234 * 2.0**60])):
        with pytest.raises(ValueError) as info:
            m.release(bad, RNG)
        assert "97.55" not in str(info.value) and "nan" not in str(info.value).lower()


def test_correctly_rounded_log_reference() -> None:
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        for u in (0.5, 0.1, 2.0**-1074, 1 - 2.0**-53):
            assert ex.correctly_rounded_log(u) == float(decimal.Decimal(u).ln())
