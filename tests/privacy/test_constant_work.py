"""The constant-work samplers (privenv.privacy.constant_work) against CKS20's reference loops
(privenv.privacy.variable_work): the same value from the same words, exactly the budget of words
per draw (more only when the reference needs more), transactional streams; the reference's own
integer arithmetic against Python integers; Mironov's U*.

Statistical tests use fixed seeds and state their false-alarm probability.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np
import pytest

from privenv import seeding
from privenv.privacy import audit
from privenv.privacy import constant_work as S
from privenv.privacy import variable_work as V
from privenv.privacy.grid import DiscreteGaussianParameters

ALPHA = 1e-6
TWO64 = 2**64


def _words(seed: int, n: int) -> np.ndarray:
    return seeding.random_words(np.random.default_rng(seed), n)


# ---------------------------------------------------------------------------------------------
# Lemire's threshold without a division; the reference's integer kernels
# ---------------------------------------------------------------------------------------------


@numba.njit
def _thresholds(m: np.ndarray) -> np.ndarray:
    out = np.empty(m.size, np.uint64)
    for i in range(m.size):
        out[i] = S.lemire_threshold(m[i])
    return out


def test_lemire_threshold_is_two_to_the_64_mod_m() -> None:
    g = np.random.default_rng(0)
    m = [2, 3, 4095, 4096, 4097, 2**52 - 1, 2**52, 2**52 + 1, 2**61 - 1, 2**61, 2**61 + 1,
         2**62 - 1, 2**62, 3 * 2**60, 12289 * 2**48]
    m += list(range(2, 5000))
    for bits in range(12, 63):
        m += [int(v) for v in g.integers(2 ** (bits - 1), 2**bits, size=400, endpoint=True)]
    got = _thresholds(np.array(m, dtype=np.uint64))
    assert [int(v) for v in got] == [TWO64 % k for k in m]


def _lemire_reference(words: np.ndarray, pos: int, n: int) -> tuple[int, int]:
    """Lemire's method in Python integers."""
    if n == 1:
        return 0, pos
    threshold = (TWO64 - n) % n
    while True:
        if pos >= len(words):
            return 0, S.EXHAUSTED
        w = int(words[pos])
        pos += 1
        if (w * n) % TWO64 >= threshold:
            return (w * n) >> 64, pos


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000003, 2**31 + 11, 3 * 2**60, 2**62])
def test_reference_uniform_below_is_lemire_exactly(n: int) -> None:
    words = _words(1, 400)
    # words that land in the rejection zone of 3·2⁶⁰ (2⁶⁴ mod n = 2⁶⁰): w·n mod 2⁶⁴ < 2⁶⁰
    words[:4] = np.array([0, 1, 5, 2**62], dtype=np.uint64)
    pos = 0
    while pos < 390:
        got = V.uniform_below_kernel(words, pos, n)
        assert got == _lemire_reference(words, pos, n)
        assert 0 <= got[0] < n
        pos = got[1] if got[1] > pos else pos + 1
    n = 3 * 2**60  # w = 0 gives w·n mod 2⁶⁴ = 0 < 2⁶⁰ → rejected
    assert V.uniform_below_kernel(np.array([0, 7], np.uint64), 0, n) == ((7 * n) >> 64, 2)
    assert V.uniform_below_kernel(np.array([0], np.uint64), 0, n) == (0, S.EXHAUSTED)


@numba.njit
def _bern_exp_batch(words, whole, num, den, n):
    out = np.empty(n, np.int64)
    pos = 0
    for i in range(n):
        out[i], pos = V.bernoulli_exp_kernel(words, pos, whole, num, den)
    return out, pos


@pytest.mark.parametrize(("whole", "num", "den"), [
    (0, 0, 1), (0, 1, 3), (0, 1, 1), (1, 3, 4), (2, 0, 5), (0, 2**61 - 1, 2**61), (3, 7, 11)])
def test_reference_bernoulli_exp_frequencies(whole: int, num: int, den: int) -> None:
    """Frequency of Bernoulli(exp(−γ)) over 2·10⁵ draws in its two-sided Clopper–Pearson interval
    (α = 1e-6 per parameter)."""
    n = 200_000
    out, pos = _bern_exp_batch(_words(2, 20 * n), whole, num, den, n)
    assert pos > 0 or num == 0 and whole == 0
    p = math.exp(-(whole + num / den))
    lo, hi = audit.clopper_pearson(int(out.sum()), n, ALPHA)
    assert lo <= p <= hi


@numba.njit
def _muldiv_batch(x, y, m):
    q = np.empty(x.size, np.int64)
    r = np.empty(x.size, np.int64)
    for i in range(x.size):
        q[i], r[i] = S.muldivmod(x[i], y[i], m[i])
    return q, r


@numba.njit
def _square_batch(a, den):
    q = np.empty(a.size, np.int64)
    r = np.empty(a.size, np.int64)
    for i in range(a.size):
        q[i], r[i] = S.square_over(a[i], den[i])
    return q, r


@pytest.mark.parametrize("m_bits", [20, 31, 45, 52, 53, 62])
def test_muldivmod_exact_on_every_path(m_bits: int) -> None:
    """The three paths (int64 product, float estimate corrected in integers, shift-and-add)."""
    g = np.random.default_rng(m_bits)
    m = g.integers(2 ** (m_bits - 1), 2**m_bits, size=2000, endpoint=True).astype(np.int64)
    x = (g.random(2000) * m).astype(np.int64)
    y = (g.random(2000) * m).astype(np.int64)
    x[:3], y[:3] = m[:3] - 1, m[:3] - 1  # the largest operands
    q, r = _muldiv_batch(x, y, m)
    for xi, yi, mi, qi, ri in zip(x.tolist(), y.tolist(), m.tolist(), q.tolist(), r.tolist(),
                                  strict=True):
        assert (qi, ri) == divmod(xi * yi, mi)


def test_square_over_exact_and_saturated() -> None:
    g = np.random.default_rng(3)
    den = g.integers(1, 2**52, size=3000).astype(np.int64)
    a = g.integers(0, 2**62, size=3000).astype(np.int64)
    a[:1000] = (g.random(1000) * den[:1000] * 3).astype(np.int64)  # small quotients
    q, r = _square_batch(a, den)
    for ai, di, qi, ri in zip(a.tolist(), den.tolist(), q.tolist(), r.tolist(), strict=True):
        wq, wr = divmod(ai * ai, di)
        assert ri == wr
        assert qi == (wq if wq < S.LIMIT else S.LIMIT)


def test_gaussian_acceptance_exponent_is_the_papers() -> None:
    """The kernel's a²/den with a = |y|·var_den·t − var_num, den = 2·var_num·var_den·t² is CKS20's
    (|y| − σ²/t)²/(2σ²), exactly."""
    for sigma2 in (Fraction(1, 3), Fraction(15, 2), Fraction(3697716), Fraction(7, 4**10)):
        p = DiscreteGaussianParameters.from_variance(sigma2)
        t = p.t
        assert t == math.floor(math.sqrt(sigma2)) + 1
        den = 2 * p.var_num * p.var_den * t * t
        for y in (0, 1, 5, 17, 10**6):
            a = abs(y * p.var_den * t - p.var_num)
            assert Fraction(a * a, den) == (y - sigma2 / t) ** 2 / (2 * sigma2)


# ---------------------------------------------------------------------------------------------
# constant work: the reference's value from the same words, the budget's words
# ---------------------------------------------------------------------------------------------


@numba.njit
def _against_reference(words, n_draws, gaussian, a, b, c, budget):
    """Successive draws of the reference from one stream; at each draw's start, the constant-work
    kernel from the same words → (draws whose value differs, draws whose cursor is not
    max(reference's, start + budget), overruns, overflows, draws made). A draw the reference
    reports OVERFLOW for must be reported OVERFLOW (then the stream moves on by one word)."""
    pos = 0
    bad_value = bad_cursor = overruns = overflows = made = 0
    for _ in range(n_draws):
        if gaussian:
            vr, pr = V.discrete_gaussian_kernel(words, pos, a, b, c)
            vn, pn = S.discrete_gaussian_kernel(words, pos, a, b, c, budget)
        else:
            vr, pr = V.discrete_laplace_kernel(words, pos, a, b)
            vn, pn = S.discrete_laplace_kernel(words, pos, a, b, budget)
        if pr == S.EXHAUSTED or pn == S.EXHAUSTED:
            break
        made += 1
        if pr == S.OVERFLOW:
            overflows += 1
            bad_cursor += pn != S.OVERFLOW
            pos += 1
            continue
        bad_value += vr != vn
        bad_cursor += pn != max(pr, pos + budget)
        overruns += pr > pos + budget
        pos = pr
    return bad_value, bad_cursor, overruns, overflows, made


#: (gaussian, a, b, c): every phase of the state machine — n = 1 (no U word), t < 1 (several V
#: give Y = 0), t ≥ 1, the releases' scale, a numerator with n·k > 2⁶² for k ≥ 4 (Algorithm 1's
#: trials in two halves; beyond the samplers' validated range, X = U + nV overflows for V ≥ 4),
#: the Gaussian with small and large σ and with den·k > 2⁶² for k ≥ 3
CASES = [
    (False, 1, 1, 0), (False, 1, 5, 0), (False, 3, 2**20, 0), (False, 7, 3, 0),
    (False, 1024, 1, 0), (False, 1025 * 2**20, 2**20, 0), (False, 2**60 + 3, 1, 0),
    (True, 1, 4, 1), (True, 15, 2, 3), (True, 3697716, 1, 1923), (True, 2**30, 1, 2**15 + 1),
]


@pytest.mark.parametrize(("gaussian", "a", "b", "c"), CASES)
@pytest.mark.parametrize("budget", [0, 9, 40])
def test_the_constant_work_kernel_computes_the_references_value(gaussian, a, b, c,
                                                                budget) -> None:
    """Over 20 000 successive draws: the same value as CKS20's reference loops from the same
    words, and the cursor exactly the budget past the start — or the reference's, when it needs
    more (an overrun, frequent with these small budgets; budget 0 is the reference's work)."""
    words = _words(5, 2_000_000)
    bad_value, bad_cursor, overruns, overflows, made = _against_reference(
        words, 20_000, gaussian, a, b, c, budget)
    assert made == 20_000 and bad_value == 0 and bad_cursor == 0
    if budget == 9:  # overruns happen and are handled (at budget 0 every draw is one)
        assert overruns > 0
    assert (overflows > 0) == (a == 2**60 + 3)


@numba.njit
def _work_of(words, n_draws, gaussian, a, b, c, budget):
    out = np.empty(n_draws, np.int64)
    pos = 0
    for i in range(n_draws):
        if gaussian:
            _, p = S.discrete_gaussian_kernel(words, pos, a, b, c, budget)
        else:
            _, p = S.discrete_laplace_kernel(words, pos, a, b, budget)
        out[i] = p - pos
        pos = p
    return out


def test_every_draw_reads_its_budget_at_the_budgets_in_use() -> None:
    """At the budgets privenv uses (overrun ≤ 2⁻⁶⁴), 10⁵ draws each read exactly the budget."""
    from privenv.privacy.releases import RELEASE_BUDGET

    gauss = DiscreteGaussianParameters(3697716, 1)
    for gaussian, a, b, c, budget in ((False, 1025 * 2**20, 2**20, 0, RELEASE_BUDGET),
                                      (True, 3697716, 1, gauss.t, gauss.budget)):
        work = _work_of(_words(6, 10**5 * budget + 10), 10**5, gaussian, a, b, c, budget)
        assert np.all(work == budget)


_KERNELS = {
    "laplace": lambda w, p: S.discrete_laplace_kernel(w, p, 7, 3, 30),
    "laplace-large": lambda w, p: S.discrete_laplace_kernel(w, p, 1024, 1, 12),
    "gaussian": lambda w, p: S.discrete_gaussian_kernel(w, p, 15, 2, 3, 20),
    "snapping": lambda w, p: S.snapping_kernel(w, p, 0.25, 1.0000000000000284, 17.0, 2.0),
}


@pytest.mark.parametrize("name", list(_KERNELS))
def test_kernels_are_transactional(name: str) -> None:
    """For 150 successive draws of one stream (some overrunning their budget): a buffer cut
    anywhere before the end of the draw's words gives EXHAUSTED, at or after it the same value
    and cursor as the whole stream."""
    kernel = _KERNELS[name]
    words = _words(4, 12000)
    pos = 0
    for _ in range(150):
        value, end = kernel(words, pos)
        assert end > pos
        for cut in range(pos, end):
            assert kernel(words[:cut], pos)[1] == S.EXHAUSTED
        assert kernel(words[:end], pos) == (value, end)
        pos = end


# ---------------------------------------------------------------------------------------------
# Mironov's U*
# ---------------------------------------------------------------------------------------------


def test_uniform_double_from_crafted_words() -> None:
    m = 0x0123456789ABC  # a 52-bit mantissa
    cases = [([1, m << 12], 1), ([8, m << 12 | 1], 4), ([0, 1, m << 12], 65),
             ([2**63, m << 12], 64), ([3 << 40, m << 12], 41)]
    for words, e in cases:
        w = np.array(words, dtype=np.uint64)
        u, sign, pos = S.uniform_double(w, 0)
        assert u == math.ldexp(2**52 + m, -52 - e) and pos == len(words)
        assert sign == words[-1] & 1
    sub = np.array([0] * 16 + [m << 12], dtype=np.uint64)  # 1024 zero bits: a subnormal
    assert S.uniform_double(sub, 0)[0] == math.ldexp(m, -1074)
    assert S.uniform_double(sub[:10], 0)[2] == S.EXHAUSTED


# ---------------------------------------------------------------------------------------------
# Constant work on the release path: the words read do not depend on the input
# ---------------------------------------------------------------------------------------------


def _one_work_value(*works: np.ndarray) -> bool:
    """Whether every draw, under every input, read the same number of words: then the work is
    a function of the public parameters only, independent of the input and of the output."""
    return np.unique(np.concatenate(works)).size == 1


def _exact_release_work(x: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(releases, words read) of the exact local Laplace randomizer on the value ``x`` of each
    of ``n`` runs (the product's compiled release path, on each run's own word stream)."""
    from privenv.privacy.local import LaplaceRandomizer
    from privenv.seeding import RunNoise

    randomizer = LaplaceRandomizer(1.0, (0.0, 1.0), sampler="exact")
    noise = RunNoise([np.random.SeedSequence([7, i]) for i in range(n)])
    noise.ensure(None, randomizer.kernel_view().words)
    before = noise.view().w_pos.copy()
    out = randomizer(np.full(n, x), noise)
    return out, noise.view().w_pos - before


@numba.njit
def _variable_work_release(words: np.ndarray, k: int, a: int, b: int, n: int):
    """The mutant: k + Z with CKS20's loops as written (variable work) → (releases, words)."""
    out = np.empty(n, np.int64)
    work = np.empty(n, np.int64)
    pos = 0
    for i in range(n):
        z, p = V.discrete_laplace_kernel(words, pos, a, b)
        out[i], work[i] = k + z, p - pos
        pos = p
    return out, work


def test_the_words_an_exact_release_reads_do_not_depend_on_the_input() -> None:
    """Neighbouring inputs 0 and 1 of the exact Laplace randomizer (ε = 1, range (0, 1)): over
    2000 runs each, every release read exactly its budget of words, whatever the input and the
    value released — the check :func:`_one_work_value`. The mutant (the same law drawn by CKS20's
    loops as written, on the same parameters) fails the same check: its work follows the noise,
    so for a given release it follows the input (measured: ``privenv audit --targets
    side-channel-laplace-exact``)."""
    from privenv.privacy.local import LaplaceRandomizer

    view = LaplaceRandomizer(1.0, (0.0, 1.0), sampler="exact").kernel_view()
    out0, work0 = _exact_release_work(0.0, 2000)
    out1, work1 = _exact_release_work(1.0, 2000)
    assert _one_work_value(work0, work1) and work0[0] == view.budget
    assert not np.array_equal(out0, out1)  # (the releases themselves do differ)
    k1 = int(round(1.0 / view.g))  # input 1 on the grid
    mutant = [_variable_work_release(_words(s, 200_000), k, view.a, view.b, 2000)
              for s, k in ((8, 0), (9, k1))]
    assert not _one_work_value(mutant[0][1], mutant[1][1])
