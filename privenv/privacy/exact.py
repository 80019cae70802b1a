r"""Exact DP samplers: discrete Laplace, discrete Gaussian, snapping (no floating-point noise).

privenv's default noise (:mod:`privenv.privacy.mechanisms`) is floating-point: ``x + b·ln(2u)`` in
binary64. Such a release is ε-DP only for idealized real arithmetic. On a real computer the set of
doubles it can output depends on the input (Mironov 2012, "On significance of the least
significant bits for differential privacy", CCS): ``privenv audit --targets preimage-laplace-float``
finds 80 % of the releases of input 1 impossible from input 0. This module gives the choice of
noise whose guarantee holds for the numbers the computer actually produces.

Samplers (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
NeurIPS — "CKS20" below):

* :func:`bernoulli_exp_kernel` — Bernoulli(exp(−γ)) for rational γ ≥ 0 (CKS20 Algorithm 1);
* :func:`discrete_laplace_kernel` — P[Z = z] ∝ exp(−\|z\|/t), t rational (CKS20 Algorithm 2);
* :func:`discrete_gaussian_kernel` — P[Z = z] ∝ exp(−z²/(2σ²)), σ² rational (CKS20 Algorithm 3);
* :func:`snapping_kernel` — Mironov's snapping mechanism for float outputs (Mironov 2012, §5.2).

Every decision of the first three is made by comparing exact uniform integers, obtained by
rejection from uniform 64-bit words, with integers: rational arithmetic in int64, and no
floating-point value ever decides an outcome (one integer division starts from a floating-point
estimate of its quotient, which is then corrected and checked in integer arithmetic, so the
result is exact whatever the estimate: ``_muldivmod``). Intermediate integers stay below 2⁶²; if
one would not (for validated parameters this needs an event of probability below e^{−1000}), the
kernel reports :data:`OVERFLOW` instead of returning a wrong value.

Kernels and streams. The kernels are compiled scalar functions (:func:`privenv._jit.jit`)
``kernel(words, cursor, …) -> (value, cursor′)`` over a per-run buffer ``words`` of uniform
``uint64`` words (``gen.integers(0, 2**64, size=n, dtype=np.uint64)``, which is the bit generator's
raw output) and a cursor into it. They are *transactional*: a draw either completes, returning the
value and the cursor past the words it used, or returns ``cursor′ = EXHAUSTED`` having changed
nothing, so a compiled loop can stop, let Python append words to the buffer, and redo the draw from
the same cursor with the same words — the same value. Hence a run's draws depend only on its word
stream, never on how the stream was cut into buffers. :func:`discrete_laplace`,
:func:`discrete_gaussian` and :func:`snap` are the numpy-facing batch forms on a seeded
``numpy.random.Generator`` (same seed, same numbers; the first ``n`` of ``size = m > n`` draws are
the ``size = n`` draws).

The grid. An exact mechanism releases multiples of a granularity g = 2^j (an exact power of two,
so that x/g and k·g are exact in binary64). :class:`LaplaceMechanism` and
:class:`GaussianMechanism` with ``sampler="exact"`` default to g = 2^(⌊log₂ s⌋ − 10) for the noise
scale s (s/g ∈ [1024, 2048): the grid is 1000 times finer than the noise).

Guarantees (the neighbouring relation is the caller's: ``sensitivity`` bounds \|q(D) − q(D′)\|).

* Discrete Laplace on the grid: for integer-valued inputs k, k′ with \|k − k′\| ≤ Δ_k, the release
  k + Z, Z ~ Lap_ℤ(t), satisfies P[k + Z = j] / P[k′ + Z = j] = exp((\|j − k′\| − \|j − k\|)/t)
  ≤ exp(Δ_k/t): exactly (Δ_k/t)-DP, with ε = Δ_k/t a rational number. Real-valued inputs
  x ∈ ℝ are first clamped to the declared range [lo, hi] (if one is declared: clamping is part of
  the mechanism, 1-Lipschitz, so it never increases \|x − x′\|) and then rounded to the grid by
  k = ⌊x/g + ½⌋, computed exactly. This rounding is monotone and ⌊a + ½⌋ − ⌊b + ½⌋ < a − b + 1,
  so \|k − k′\| ≤ ⌈Δ/g⌉ whenever \|x − x′\| ≤ Δ; with a declared range also \|k − k′\| ≤
  ⌊hi/g + ½⌋ − ⌊lo/g + ½⌋. Hence Δ_k = min(⌈Δ/g⌉, ⌊hi/g + ½⌋ − ⌊lo/g + ½⌋) (an integer, computed
  exactly from the doubles Δ, lo, hi) and the release (k + Z)·g is exactly (Δ_k/t)-DP: a true
  bound, no approximation. The scale t (a rational) is chosen ≥ Δ_k/ε, so Δ_k/t ≤ ε; the
  mechanism reports the exact value. (Converting k + Z to a double is post-processing and cannot
  weaken the guarantee; it is exact while \|k + Z\| < 2⁵³.)
* Discrete Gaussian on the grid: with σ² (rational, grid units²) and the same Δ_k, the release is
  ρ-zCDP with ρ = Δ_k²/(2σ²) exactly (the discrete Gaussian's concentrated-DP theorem in
  CKS20), and (ε, δ)-DP with CKS20's exact formula δ = P[Y > εσ²/Δ_k − Δ_k/2] −
  e^ε·P[Y > εσ²/Δ_k + Δ_k/2], Y ~ N_ℤ(0, σ²) (evaluated in double precision as a sum of positive
  terms, then increased by a relative 10⁻⁹ to cover the evaluation error).
* Snapping (Mironov 2012, §5.2): f̃(x) = clamp_B(⌊clamp_B(x) ⊕ S ⊗ λ ⊗ LN(U*)⌉_Λ), with U* uniform
  over the doubles of (0, 1) (each with the probability of the reals it stands for), S a uniform
  sign, Λ the smallest power of two ≥ λ, ⊕ ⊗ binary64 arithmetic and LN correctly rounded.
  Mironov's theorem: for inputs of sensitivity 1, if λ < B < 2⁴⁶·λ, the release is
  (1/λ + 2⁻⁴⁹·B/λ)-DP. Scaling by a power of two is exact in binary64, so for sensitivity Δ the
  mechanism is (Δ′/λ + 2⁻⁴⁹·B/λ)-DP with Δ′ = 2^⌈log₂Δ⌉. The platform ``log`` is not correctly
  rounded (glibc's differs from the nearest double on about 1 draw of U* in 1000), only faithful:
  :func:`snapping_value` therefore certifies each release by evaluating it at log(u) and at both
  neighbouring doubles — the correctly rounded value is one of the three — and a release they do
  not agree on (rare: the sum must fall within a few ulps of a rounding boundary of Λ) is decided
  with a correctly rounded logarithm in decimal arithmetic (:func:`correctly_rounded_log`). The
  one assumption left is that the platform log errs by less than 1 ulp (glibc's implementation
  states 0.52 ulp; tests/privacy/test_exact.py checks it on 20 000 draws); the discrete Laplace
  needs none.

Threat model — what these guarantees mean in privenv. privenv *simulates* private algorithms: the
process holds every raw reward, context and table in memory. A guarantee is about the released
values alone (an LDP wrapper's outputs, an agent's actions and declared estimates), seen by an
observer who knows the mechanism and its parameters, not its random words. Rendering, ``info``
dictionaries, the env and agent objects, logs and the results store are outside every guarantee.
With the float samplers (the default) the guarantee is that of idealized arithmetic only: the low
bits of the released doubles identify inputs (Mironov's attack), so a float release must not be
shown to an adversary. The exact samplers remove that attack: their guarantee holds for the actual
output values, given uniform random words. They do not protect against timing side channels (the
number of loop iterations and words used depends on the noise, and the rejection loops of the
discrete Gaussian depend on the value), against a predictable generator (numpy's PCG64 is not a
cryptographic generator; a seeded run is reproducible by anyone who knows the seed), or against
anything that reads the process memory.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privenv import seeding
from privenv._jit import jit
from privenv._validation import check_choice, check_delta, check_epsilon, check_int, check_real
from privenv.seeding import NoiseView

from . import mechanisms as mech
from .guarantee import PrivacyGuarantee

__all__ = [
    "EPSILON_BITS",
    "EXHAUSTED",
    "LIMIT",
    "OVERFLOW",
    "RELEASE_WORDS",
    "release_grid",
    "SAMPLERS",
    "DiscreteGaussianParameters",
    "DiscreteLaplaceParameters",
    "GaussianMechanism",
    "Grid",
    "LaplaceMechanism",
    "NoiseGuarantee",
    "SnappingParameters",
    "UNCERTAIN",
    "bernoulli_exp_kernel",
    "correctly_rounded_log",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_kernel",
    "discrete_laplace",
    "discrete_laplace_kernel",
    "epsilon_denominator",
    "epsilon_of_denominator",
    "float_up",
    "GaussianCalibration",
    "calibrate_gaussian",
    "sampler_guarantee",
    "grid_round",
    "laplace_release",
    "random_words",
    "snap",
    "snap_from_log",
    "snap_uncertain",
    "snapping_kernel",
    "snapping_value",
    "take_discrete_gaussian",
    "take_discrete_laplace",
    "uniform_below_kernel",
    "uniform_doubles",
    "VECTOR_GRID_BITS",
    "VectorGaussian",
    "VectorLaplace",
    "l1_grid_sensitivity",
    "l2_grid_sensitivity",
    "run_discrete",
    "vector_grid",
]

#: the cursor returned by a kernel whose buffer ran out (nothing consumed; top up and redo)
EXHAUSTED = -1
#: the cursor returned when an intermediate integer would leave [−2⁶², 2⁶²] (never for
#: validated parameters except with probability < e^{−1000}; the batch functions raise)
OVERFLOW = -2
#: the cursor returned by the snapping kernel for a release it cannot certify (nothing consumed:
#: decide the draw with :func:`snap_uncertain`; it needs a sum within ulps of a rounding boundary)
UNCERTAIN = -3
#: every integer of the kernels stays at most this in absolute value
LIMIT = 2**62
_TOP = 2**63 - 1
_SQRT_LIMIT = 2**31
_FLOAT_HINT_LIMIT = 2**52
#: parameter limits (see the overflow bounds in each kernel's docstring)
_MAX_SCALE = 2**52
_MAX_GAUSS_DEN = 2**62
_MAX_GAUSS_STEP = 2**31

#: the sampler choices of :class:`LaplaceMechanism` (of GaussianMechanism, "float" and "exact")
SAMPLERS = ("float", "exact", "snapping")


# =================================================================================================
# Kernels (numba, scalar, transactional)
# =================================================================================================


@jit(error_model="python", inline="always")
def _mul_hi(a: np.uint64, b: np.uint64) -> np.uint64:
    """The high 64 bits of the 128-bit product a·b (32-bit limbs)."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a0, a1, b0, b1 = a & m32, a >> s32, b & m32, b >> s32
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    return a1 * b1 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)


@jit
def uniform_below_kernel(words: np.ndarray, pos: int, n: int) -> tuple[int, int]:
    """An exact uniform integer in {0, …, n − 1}, 1 ≤ n ≤ 2⁶².

    Lemire's multiply-and-reject method (Lemire 2019, "Fast random integer generation in an
    interval", ACM TOMACS): for a uniform word w, ⌊w·n/2⁶⁴⌋ is returned unless the low half of
    w·n falls below 2⁶⁴ mod n, in which case the next word is tried — exactly uniform, and
    almost always one word. n = 1 uses no word.
    """
    if n == 1:
        return 0, pos
    nn = np.uint64(n)
    nw = words.shape[0]
    if pos >= nw:
        return 0, EXHAUSTED
    w = words[pos]
    pos += 1
    low = w * nn
    if low < nn:
        threshold = (np.uint64(0) - nn) % nn  # 2⁶⁴ mod n
        while low < threshold:
            if pos >= nw:
                return 0, EXHAUSTED
            w = words[pos]
            pos += 1
            low = w * nn
    return np.int64(_mul_hi(w, nn)), pos


@jit
def _bernoulli(words: np.ndarray, pos: int, num: int, den: int) -> tuple[int, int]:
    """Bernoulli(num/den), 0 ≤ num ≤ den ≤ 2⁶² (certain outcomes use no word)."""
    if num <= 0:
        return 0, pos
    if num >= den:
        return 1, pos
    v, pos = uniform_below_kernel(words, pos, den)
    if pos < 0:
        return 0, pos
    return (1 if v < num else 0), pos


@jit
def _bernoulli_exp_unit(words: np.ndarray, pos: int, num: int, den: int) -> tuple[int, int]:
    """Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den ≤ 2⁶² (CKS20 Algorithm 1, case γ ≤ 1).

    K ← 1; while Bernoulli(γ/K) = 1: K ← K + 1; return 1 iff K is odd. Bernoulli(γ/K) is drawn as
    one Bernoulli(num/(den·K)) while den·K ≤ 2⁶², else as Bernoulli(num/den) ∧ Bernoulli(1/K)
    (the same law, no overflow).
    """
    k = 1
    k_max = LIMIT // den  # den·k ≤ 2⁶² for k ≤ k_max
    while True:
        if k <= k_max:
            a, pos = _bernoulli(words, pos, num, den * k)
        else:
            a, pos = _bernoulli(words, pos, num, den)
            if pos >= 0 and a == 1:
                a, pos = _bernoulli(words, pos, 1, k)
        if pos < 0:
            return 0, pos
        if a == 0:
            return k & 1, pos
        k += 1


@jit
def bernoulli_exp_kernel(words: np.ndarray, pos: int, whole: int, num: int,
                         den: int) -> tuple[int, int]:
    """Bernoulli(exp(−γ)) for γ = whole + num/den, whole ≥ 0, 0 ≤ num ≤ den ≤ 2⁶².

    CKS20 Algorithm 1: ``whole`` independent Bernoulli(e⁻¹), stopping at the first 0, then
    Bernoulli(exp(−num/den)). ``whole`` = :data:`LIMIT` means "at least 2⁶²" (a saturated integer
    part): should 2⁶² Bernoulli(e⁻¹) all succeed, the kernel reports :data:`OVERFLOW`.
    """
    for _ in range(min(whole, LIMIT)):
        b, pos = _bernoulli_exp_unit(words, pos, 1, 1)
        if pos < 0:
            return 0, pos
        if b == 0:
            return 0, pos
    if whole >= LIMIT:
        return 0, OVERFLOW
    return _bernoulli_exp_unit(words, pos, num, den)


@jit
def discrete_laplace_kernel(words: np.ndarray, pos: int, scale_num: int,
                            scale_den: int) -> tuple[int, int]:
    """One draw of the discrete Laplace Lap_ℤ(t), t = scale_num/scale_den (CKS20 Algorithm 2).

    P[Z = z] = (e^{1/t} − 1)/(e^{1/t} + 1)·e^{−|z|/t}. With t = n/d (CKS20's t/s): draw U uniform in
    {0, …, n − 1} and keep it with probability exp(−U/n); draw V, the number of successes before
    the first failure of Bernoulli(e⁻¹); X = U + n·V is geometric; Y = ⌊X/d⌋; a uniform sign, with
    the pair (−, 0) rejected. Parameters 1 ≤ n, d ≤ 2⁵²; X ≥ 2⁶² (:data:`OVERFLOW`) needs
    V ≥ 2¹⁰, probability e^{−1024}.
    """
    t = scale_num
    while True:
        u, pos = uniform_below_kernel(words, pos, t)
        if pos < 0:
            return 0, pos
        d, pos = _bernoulli_exp_unit(words, pos, u, t)
        if pos < 0:
            return 0, pos
        if d == 0:
            continue
        v = 0
        while True:
            a, pos = _bernoulli_exp_unit(words, pos, 1, 1)
            if pos < 0:
                return 0, pos
            if a == 0:
                break
            v += 1
        if v > (LIMIT - u) // t:
            return 0, OVERFLOW
        y = (u + t * v) // scale_den
        b, pos = _bernoulli(words, pos, 1, 2)
        if pos < 0:
            return 0, pos
        if b == 1 and y == 0:
            continue
        return (-y if b == 1 else y), pos


@jit
def _muldivmod(x: int, y: int, m: int) -> tuple[int, int]:
    """(⌊x·y/m⌋, x·y mod m) exactly, for 0 ≤ x, y < m ≤ 2⁶².

    x, y < 2³¹: one int64 product. m ≤ 2⁵²: a floating-point estimate q̂ of the quotient (|q̂ − q|
    ≤ 2, since q < 2⁵² and the estimate's relative error is below 2⁻⁵¹) is corrected in exact
    integer arithmetic: x·y − q̂·m lies in (−2⁵⁵, 2⁵⁵), so its int64 value computed modulo 2⁶⁴ is
    exact, and the while loops bring it into [0, m). The result is the exact pair whatever the
    estimate; no decision depends on a float. Otherwise: shift-and-add over the bits of y.
    """
    if x < _SQRT_LIMIT and y < _SQRT_LIMIT:
        p = x * y
        return p // m, p % m
    if m <= _FLOAT_HINT_LIMIT:
        q = np.int64((float(x) / float(m)) * float(y))
        r = x * y - q * m  # exact: the true value is within (−2⁵⁵, 2⁵⁵); int64 wraps mod 2⁶⁴
        while r < 0:
            r += m
            q -= 1
        while r >= m:
            r -= m
            q += 1
        return q, r
    q = 0
    r = 0
    for bit in range(62, -1, -1):
        q <<= 1
        r <<= 1
        if r >= m:
            r -= m
            q += 1
        if (y >> bit) & 1:
            r += x
            if r >= m:
                r -= m
                q += 1
    return q, r


@jit
def _square_over(a: int, den: int) -> tuple[int, int]:
    """(⌊a²/den⌋ saturated at :data:`LIMIT`, a² mod den) for 0 ≤ a ≤ 2⁶², 1 ≤ den ≤ 2⁶².

    With a = q·den + r: a²/den = q²·den + 2qr + r²/den.
    """
    q = a // den
    r = a % den
    qq, rem = _muldivmod(r, r, den)
    if q == 0:
        return qq, rem
    if q > _SQRT_LIMIT or q * q > LIMIT // den:
        return LIMIT, rem
    whole = q * q * den
    if r > 0 and r > (LIMIT - whole) // (2 * q):
        return LIMIT, rem
    whole += 2 * q * r
    if qq > LIMIT - whole:
        return LIMIT, rem
    return whole + qq, rem


@jit
def discrete_gaussian_kernel(words: np.ndarray, pos: int, var_num: int, var_den: int,
                             t: int) -> tuple[int, int]:
    r"""One draw of the discrete Gaussian N_ℤ(0, σ²), σ² = var_num/var_den (CKS20 Algorithm 3).

    Repeat: Y ~ Lap_ℤ(t); accept with probability exp(−(\|Y\| − σ²/t)²/(2σ²)). The output law is
    exactly ∝ exp(−y²/(2σ²)) for every integer t ≥ 1; t = ⌊σ⌋ + 1 (CKS20's choice, see
    :class:`DiscreteGaussianParameters`) makes the loop short. The exponent is the rational
    a²/den, a = \|Y\|·var_den·t − var_num, den = 2·var_num·var_den·t², split exactly into its
    integer part and remainder. Requires den ≤ 2⁶² and var_den·t ≤ 2³¹; :data:`OVERFLOW` needs
    \|Y\| > 2³¹ from Lap_ℤ(t ≤ 2¹⁶), probability < e^{−2¹⁵}.
    """
    den = 2 * var_num * var_den * t * t
    step = var_den * t
    while True:
        y, pos = discrete_laplace_kernel(words, pos, t, 1)
        if pos < 0:
            return 0, pos
        ay = abs(y)
        if ay > LIMIT // step:
            return 0, OVERFLOW
        whole, rem = _square_over(abs(ay * step - var_num), den)
        c, pos = bernoulli_exp_kernel(words, pos, whole, rem, den)
        if pos < 0:
            return 0, pos
        if c == 1:
            return y, pos


@jit
def _uniform_double(words: np.ndarray, pos: int) -> tuple[float, int, int]:
    """(U*, sign bit, cursor′): U* uniform over the doubles of (0, 1) as in Mironov 2012 — the
    binade [2^−e, 2^{1−e}) with probability 2^−e (e = 1 + the number of leading zero bits of the
    word stream), then a uniform 52-bit mantissa; below 2⁻¹⁰²² the subnormals k·2⁻¹⁰⁷⁴,
    k ∈ [1, 2⁵²), uniformly (k = 0 is redrawn). Also returns an independent uniform bit."""
    nw = words.shape[0]
    while True:
        e = 1
        while True:
            if pos >= nw:
                return 0.0, 0, EXHAUSTED
            w = words[pos]
            pos += 1
            if w == 0:
                e += 64
                if e > 1022:
                    break
                continue
            while (w & np.uint64(1)) == 0:
                w >>= np.uint64(1)
                e += 1
            break
        if pos >= nw:
            return 0.0, 0, EXHAUSTED
        w = words[pos]
        pos += 1
        mantissa = np.int64(w >> np.uint64(12))
        sign = np.int64(w & np.uint64(1))
        if e <= 1022:
            return math.ldexp(float(mantissa + (1 << 52)), -52 - e), sign, pos
        if mantissa > 0:
            return math.ldexp(float(mantissa), -1074), sign, pos


@jit(error_model="python")
def snap_from_log(x: float, log_u: float, sign: int, lam: float, bound: float,
                  lam_pow2: float) -> float:
    """clamp_B(⌊clamp_B(x) ⊕ S ⊗ λ ⊗ L⌉_Λ) for a given L = LN(U*) and sign bit S.

    ``lam_pow2`` is Λ, the smallest power of two ≥ λ; ⌊·⌉_Λ rounds to the nearest multiple of Λ
    (halves up), exactly: z/Λ and r·Λ are exact scalings. Monotone in L.
    """
    xc = min(max(x, -bound), bound)
    noise = lam * log_u
    if sign == 1:
        noise = -noise
    q = (xc + noise) / lam_pow2
    r = math.floor(q)
    if q - r >= 0.5:
        r += 1.0
    return min(max(r * lam_pow2, -bound), bound)


@jit(error_model="python")
def snapping_value(x: float, u: float, sign: int, lam: float, bound: float,
                   lam_pow2: float) -> tuple[float, bool]:
    """The snapping release for (U*, S) = (u, sign) with LN correctly rounded, and whether it is
    certified.

    Mironov's theorem needs LN(u) = the double nearest ln(u). The platform ``log`` is faithful
    (error below 1 ulp; glibc's implementation states 0.52 ulp) but not correctly rounded (it
    differs on about 1 draw of U* in 1000, tests/privacy/test_exact.py), so the correctly rounded
    value is L = log(u) or one of its two neighbours. The release is monotone in L: if the three
    candidates give the same release, that release is the one of the correctly rounded LN
    (certified). Otherwise (the sum within a few ulps of a rounding boundary of Λ) the result is
    not certified and :func:`snap` decides it with a correctly rounded logarithm in 60-digit
    decimal arithmetic.
    """
    log_u = math.log(u)
    v = snap_from_log(x, log_u, sign, lam, bound, lam_pow2)
    below = snap_from_log(x, np.nextafter(log_u, -np.inf), sign, lam, bound, lam_pow2)
    above = snap_from_log(x, np.nextafter(log_u, np.inf), sign, lam, bound, lam_pow2)
    return v, below == v and above == v


@jit(error_model="python")
def snapping_kernel(words: np.ndarray, pos: int, x: float, lam: float, bound: float,
                    lam_pow2: float) -> tuple[float, int]:
    """One release of Mironov's snapping mechanism (Mironov 2012, §5.2) for input x:
    :func:`snapping_value` at U* and S drawn from the words (two words; more with probability
    2⁻⁶⁴). Returns cursor :data:`UNCERTAIN` (nothing consumed) when the release is not certified;
    the caller decides it with :func:`snap_uncertain`."""
    u, sign, p = _uniform_double(words, pos)
    if p < 0:
        return 0.0, p
    v, certified = snapping_value(x, u, sign, lam, bound, lam_pow2)
    if not certified:
        return 0.0, UNCERTAIN
    return v, p


def correctly_rounded_log(u: float) -> float:
    """The double nearest ln(u), 0 < u < 1: ln in 60-digit decimal arithmetic (correctly rounded
    by :mod:`decimal`), then rounded to binary64. The double rounding can only err if ln(u) lies
    within 10⁻⁶⁰ (relative) of a midpoint between doubles; the hardest-to-round cases of the
    logarithm in double precision (found exhaustively by Lefèvre & Muller 2001) need roughly 120
    bits, and 60 digits carry 199."""
    return float(decimal.Context(prec=60).ln(decimal.Decimal(u)))


def snap_uncertain(words: np.ndarray, pos: int, x: float, params: SnappingParameters
                   ) -> tuple[float, int]:
    """The draw :func:`snapping_kernel` reported :data:`UNCERTAIN` at cursor ``pos``, decided
    with :func:`correctly_rounded_log` → (release, cursor′)."""
    u, sign, p = _uniform_double(words, pos)
    if p < 0:
        return 0.0, p
    return snap_from_log(x, correctly_rounded_log(u), sign, params.lam, params.bound,
                         params.lam_pow2), p


_LAPLACE, _GAUSSIAN, _SNAPPING, _UNIFORM_DOUBLE = 0, 1, 2, 3


@jit
def _fill(words: np.ndarray, pos: int, i: int, kind: int, ints: np.ndarray, floats: np.ndarray,
          x: np.ndarray, out_int: np.ndarray, out_float: np.ndarray) -> tuple[int, int, int]:
    """Draws i, i + 1, … of one sampler into ``out_int`` / ``out_float`` → (next index, cursor,
    status 0 | EXHAUSTED | OVERFLOW | UNCERTAIN). ``kind``: discrete Laplace (ints = scale num,
    den), discrete Gaussian (ints = var_num, var_den, t), snapping of x[i] (floats = λ, B, Λ), or
    (U*, sign bit)."""
    n = max(out_int.shape[0], out_float.shape[0])
    while i < n:
        v, f = 0, 0.0
        if kind == _LAPLACE:
            v, p = discrete_laplace_kernel(words, pos, ints[0], ints[1])
        elif kind == _GAUSSIAN:
            v, p = discrete_gaussian_kernel(words, pos, ints[0], ints[1], ints[2])
        elif kind == _SNAPPING:
            f, p = snapping_kernel(words, pos, x[i], floats[0], floats[1], floats[2])
        else:
            f, v, p = _uniform_double(words, pos)
        if p < 0:
            return i, pos, p
        if kind != _SNAPPING:
            out_int[i] = v
        if kind >= _SNAPPING:
            out_float[i] = f
        pos = p
        i += 1
    return i, pos, 0


# =================================================================================================
# Releases from a run's word stream (compiled agents and local randomizers)
# =================================================================================================

#: the words an exact release is given. A compiled agent or randomizer ensures this many words
#: per release it may make in a step (``words_per_step``), so a release never waits in the middle
#: of an algorithm's step. Measured over 2·10⁶ draws (tests/privacy/test_exact_release.py checks
#: it on fewer): a discrete Laplace draw takes 8 words on average and its count has an
#: exponential tail of rate ≥ 0.2 per word beyond 20 words; a discrete Gaussian draw (σ = 1500
#: grid units) 12.4, rate ≥ 0.1 per word beyond 40. So more than 512 words has probability below
#: 2⁻¹⁴⁰ and 2⁻⁷⁰. Should a release still run out, it raises ``RuntimeError``: it never returns a
#: value drawn from anything but the run's own words.
RELEASE_WORDS = 512
#: the denominator 2²⁰ of the exact samplers' ε′ = 2²⁰/q (:func:`epsilon_denominator`)
EPSILON_BITS = 20


def epsilon_denominator(epsilon: float) -> int:
    """q = ⌈2²⁰/ε⌉, exactly (rational arithmetic on the double ε): an exact release with this q
    is ε′-DP for ε′ = 2²⁰/q ≤ ε (:func:`laplace_release`). ε must be at least 2⁻²⁰."""
    epsilon = check_real("epsilon", epsilon, low=2.0**-EPSILON_BITS, high=math.inf,
                         high_open=True)
    return math.ceil(Fraction(2**EPSILON_BITS) / Fraction(epsilon))


def sampler_guarantee(sampler: str, model: str, epsilon: float, unit: str) -> PrivacyGuarantee:
    """The pure-DP guarantee a private agent declares: ε with the float sampler; with the exact
    one ε′ = 2²⁰/⌈2²⁰/ε⌉ ≤ ε (rounded up to a double), the ε of every exact release it makes."""
    if sampler == "exact":
        epsilon = float_up(epsilon_of_denominator(epsilon_denominator(epsilon)))
    return PrivacyGuarantee(model, epsilon, 0.0, unit, sampler=sampler)


def epsilon_of_denominator(q: int) -> Fraction:
    """ε′ = 2²⁰/q, exactly: the guarantee of an exact release made with :func:`laplace_release`
    and ``q``."""
    return Fraction(2**EPSILON_BITS, q)


@jit(error_model="python")
def grid_round(x: float, granularity: float) -> int:
    r"""k = ⌊x/g + ½⌋ exactly, g a power of two (x/g is exact; so is x/g − ⌊x/g⌋). Raises
    ``ValueError`` for NaN or \|x/g\| ≥ 2⁵² (the grid cannot hold x)."""
    y = x / granularity
    if not abs(y) < 2.0**52:
        raise ValueError("an exact release's input is NaN or too large for its grid")
    f = np.floor(y)
    return np.int64(f) + (1 if y - f >= 0.5 else 0)


@jit(error_model="python")
def take_discrete_laplace(noise: NoiseView, run: int, scale_num: int, scale_den: int) -> int:
    """The next Lap_ℤ(scale_num/scale_den) draw of ``run`` from its word stream
    (:func:`discrete_laplace_kernel`); the caller has ensured :data:`RELEASE_WORDS` words."""
    z, pos = discrete_laplace_kernel(noise.w[run, :noise.w_end[run]], noise.w_pos[run],
                                     scale_num, scale_den)
    if pos < 0:
        raise RuntimeError("an exact Laplace release ran out of words or overflowed")
    noise.w_pos[run] = pos
    return z


@jit(error_model="python")
def take_discrete_gaussian(noise: NoiseView, run: int, var_num: int, var_den: int,
                           t: int) -> int:
    """The next N_ℤ(0, var_num/var_den) draw of ``run`` from its word stream
    (:func:`discrete_gaussian_kernel` with CKS20's t)."""
    z, pos = discrete_gaussian_kernel(noise.w[run, :noise.w_end[run]], noise.w_pos[run],
                                      var_num, var_den, t)
    if pos < 0:
        raise RuntimeError("an exact Gaussian release ran out of words or overflowed")
    noise.w_pos[run] = pos
    return z


@jit
def release_grid(sensitivity: float, q: int) -> tuple[float, int]:
    """(g, Δ_k) of :func:`laplace_release`: g = 2^(⌊log₂(Δ·q/2²⁰)⌋ − 10) and Δ_k = ⌈Δ/g⌉ + 1
    (Δ/g is exact: g is a power of two)."""
    s = sensitivity * q / 2.0**EPSILON_BITS  # ≈ Δ/ε′: sets the grid only
    g = math.ldexp(1.0, math.frexp(s)[1] - 1 - 10)
    return g, np.int64(math.ceil(sensitivity / g)) + 1


@jit(error_model="python")
def laplace_release(noise: NoiseView, run: int, x: float, sensitivity: float, q: int) -> float:
    r"""x + Laplace(Δ/ε) with the exact sampler, for a statistic x of sensitivity Δ computed by a
    compiled agent; ε′ = 2²⁰/q ≤ ε (q from :func:`epsilon_denominator`).

    The grid is g = 2^(⌊log₂(Δ/ε′)⌋ − 10) (about a thousandth of the noise scale; any power of
    two is valid, the choice only sets the resolution). x is rounded to k = ⌊x/g + ½⌋ and the
    release is (k + Z)·g with Z ~ Lap_ℤ(t), t = Δ_k·q/2²⁰ grid units and Δ_k = ⌈Δ/g⌉ + 1. By the
    rounding argument of the module docstring, inputs at distance at most Δ + g give
    \|k − k′\| ≤ Δ_k, so the release is exactly (Δ_k/t = 2²⁰/q)-DP. The one grid unit of slack
    covers the floating-point error of the agent's statistic and of Δ itself (a sum of n values
    errs by about n·2⁻⁵³ of its magnitude, far below g ≈ Δ/(1000ε) for every algorithm here):
    the guarantee assumes that error is below g, nothing else. Δ and x are doubles the agent
    computes the same way in both drivers, so the release is the same step by step or fast.
    """
    g, dk = release_grid(sensitivity, q)
    if dk > _MAX_SCALE // q:
        raise ValueError("an exact release's scale is outside the sampler's range")
    k = grid_round(x, g)
    z = take_discrete_laplace(noise, run, dk * q, np.int64(2**EPSILON_BITS))
    return float(k + z) * g


# =================================================================================================
# Streams of words, batch draws on a Generator
# =================================================================================================


def random_words(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform 64-bit words from ``rng`` (its bit generator's raw output, in order)."""
    return seeding.random_words(rng, n)


def _run_fill(rng: np.random.Generator, n: int, words_per_draw: float, kind: int,
              ints: tuple[int, ...] = (), floats: tuple[float, ...] = (),
              x: np.ndarray | None = None,
              resolve: Callable[[np.ndarray, int, int], tuple[Any, int]] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """n draws of sampler ``kind`` on ``rng``'s word stream → (int64 values, float64 values).
    On EXHAUSTED the unused words are kept and fresh ones appended, so the values do not depend
    on the buffer size; on UNCERTAIN, ``resolve(words, cursor, index)`` decides that draw."""
    out_int = np.empty(n if kind != _SNAPPING else 0, np.int64)
    out_float = np.empty(n if kind >= _SNAPPING else 0)
    ip = np.zeros(3, np.int64)
    ip[:len(ints)] = ints
    fp = np.zeros(3)
    fp[:len(floats)] = floats
    xs = np.zeros(0) if x is None else x
    # the stream asks for ``chunk`` words, then ``refill`` more whenever they run out; the words
    # are drawn :data:`WORD_BLOCK` at a time (bounded memory) and the ones never read are
    # skipped at the end, so the values and the generator's final state do not depend on it
    chunk = int(words_per_draw * n * 1.05) + 64
    refill = max(chunk // 4, 64)
    stream = _WordStream(rng, chunk)
    words = stream.take(WORD_BLOCK)
    pos, i = 0, 0
    while True:
        i, pos, status = _fill(words, pos, i, kind, ip, fp, xs, out_int, out_float)
        if status == 0:
            stream.skip_rest()
            return out_int, out_float
        if status == UNCERTAIN and resolve is not None:
            value, p = resolve(words, pos, i)
            if p >= 0:
                out_float[i], pos, i = value, p, i + 1
                continue
            status = p
        if status == OVERFLOW:
            raise OverflowError("an exact sampler's intermediate integer exceeded 2**62 "
                                "(an event of probability below e**-1000 for valid parameters)")
        if stream.pending == 0:
            stream.pending = refill
        words = np.concatenate([words[pos:], stream.take(WORD_BLOCK)])
        pos = 0


#: raw words an exact sampler holds at once (8 MB)
WORD_BLOCK = 1 << 20


class _WordStream:
    """The next ``pending`` words of ``rng``'s stream, drawn on demand."""

    def __init__(self, rng: np.random.Generator, pending: int) -> None:
        self.rng, self.pending = rng, pending

    def take(self, most: int) -> np.ndarray:
        m = min(most, self.pending)
        self.pending -= m
        return random_words(self.rng, m)

    def skip_rest(self) -> None:
        """Consume the pending words unread (as if drawn)."""
        advance = getattr(self.rng.bit_generator, "advance", None)
        if advance is not None:
            advance(self.pending)
            self.pending = 0
        while self.pending:
            self.take(WORD_BLOCK)


def _size(size: int | tuple[int, ...] | None) -> tuple[tuple[int, ...], int]:
    shape = () if size is None else ((size,) if isinstance(size, (int, np.integer))
                                     else tuple(size))
    for s in shape:
        check_int("size", s, low=0)
    return shape, math.prod(shape)


def _rational(name: str, value: Any, limit: int) -> Fraction:
    """A positive rational (int, Fraction or float, converted exactly) with numerator and
    denominator ≤ ``limit``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating,
                                                         Fraction)):
        raise ValueError(f"{name} must be a positive rational (int, Fraction or float), "
                         f"got {value!r}")
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite positive rational, got {value!r}")
    q = Fraction(value)
    if q <= 0 or q.numerator > limit or q.denominator > limit:
        raise ValueError(f"{name} must be a positive rational with numerator and denominator "
                         f"at most 2**{limit.bit_length() - 1}, got {value!r}")
    return q


def discrete_laplace(scale: int | Fraction | float, rng: np.random.Generator,
                     size: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Exact draws of the discrete Laplace Lap_ℤ(t) (int64), t = ``scale`` (CKS20 Algorithm 2).

    Args:
        scale: t > 0, a rational with numerator and denominator ≤ 2⁵² (an int, a
            ``fractions.Fraction``, or a float, taken exactly).
        rng: the seeded generator whose raw 64-bit words are consumed.
        size: output shape (``None``: a 0-d array).
    """
    t = _rational("scale", scale, _MAX_SCALE)
    shape, n = _size(size)
    return _run_fill(rng, n, 9.0, _LAPLACE, (t.numerator, t.denominator))[0].reshape(shape)


def discrete_gaussian(sigma2: int | Fraction | float, rng: np.random.Generator,
                      size: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Exact draws of the discrete Gaussian N_ℤ(0, σ²) (int64), σ² = ``sigma2`` (CKS20 Alg. 3).

    Args:
        sigma2: σ² > 0, a rational (see :class:`DiscreteGaussianParameters` for its limits).
        rng: the seeded generator whose raw 64-bit words are consumed.
        size: output shape.
    """
    p = DiscreteGaussianParameters.from_variance(sigma2)
    shape, n = _size(size)
    return _run_fill(rng, n, 16.0, _GAUSSIAN, (p.var_num, p.var_den, p.t))[0].reshape(shape)


def uniform_doubles(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n draws of Mironov's U* (uniform over the doubles of (0, 1)) and of an independent sign
    bit, from ``rng``'s words as :func:`snapping_kernel` draws them."""
    n = check_int("n", n, low=0)
    sign, u = _run_fill(rng, n, 2.0, _UNIFORM_DOUBLE)
    return u, sign


def snap(values: np.ndarray | float, params: SnappingParameters,
         rng: np.random.Generator) -> np.ndarray:
    """Snapping releases (float64) of ``values`` (one per entry, in C order) with ``params``."""
    x = np.ascontiguousarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError(f"values must not be NaN ({int(np.isnan(x).sum())} entries are)")
    flat = x.ravel()
    _, out = _run_fill(rng, x.size, 2.0, _SNAPPING, (), (params.lam, params.bound,
                                                          params.lam_pow2), flat,
                       resolve=lambda w, p, i: snap_uncertain(w, p, float(flat[i]), params))
    return out.reshape(x.shape)


# =================================================================================================
# Exact rational helpers
# =================================================================================================


def float_up(q: Fraction) -> float:
    """The smallest double ≥ q."""
    f = float(q)
    return math.nextafter(f, math.inf) if Fraction(f) < q else f


def _floor_half(q: Fraction) -> int:
    """⌊q + ½⌋ (the grid rounding), exactly."""
    return math.floor(q + Fraction(1, 2))


@dataclass(frozen=True)
class Grid:
    """The output grid g·ℤ of an exact mechanism, g = 2^exponent (exact in binary64).

    Args:
        exponent: j with g = 2^j, −900 ≤ j ≤ 900.
    """

    exponent: int

    def __post_init__(self) -> None:
        check_int("granularity exponent", self.exponent, low=-900, high=900)

    @classmethod
    def from_granularity(cls, granularity: float) -> Grid:
        """The grid of a granularity that must be an exact power of two."""
        g = check_real("granularity", granularity, low=0.0, low_open=True, high=math.inf,
                       high_open=True)
        m, e = math.frexp(g)
        if m != 0.5:
            raise ValueError("granularity must be an exact power of two (2**j), "
                             f"got {granularity!r}")
        return cls(e - 1)

    @classmethod
    def for_scale(cls, scale: float) -> Grid:
        """The default grid for a noise scale s: g = 2^(⌊log₂ s⌋ − 10), so s/g ∈ [1024, 2048)."""
        return cls(math.frexp(scale)[1] - 1 - 10)

    @property
    def granularity(self) -> float:
        return math.ldexp(1.0, self.exponent)

    def units(self, x: float) -> Fraction:
        """x/g as an exact rational."""
        return Fraction(x) / Fraction(2) ** self.exponent

    def round(self, values: np.ndarray) -> np.ndarray:
        r"""k = ⌊x/g + ½⌋ for every entry, exactly (int64); \|x/g\| must be < 2⁵²."""
        v = np.asarray(values, dtype=float) / self.granularity  # exact (power-of-two scaling)
        if not np.all(np.abs(v) < 2.0**52):  # also rejects NaN
            bad = int(np.count_nonzero(~(np.abs(v) < 2.0**52)))
            raise ValueError(f"values must be finite with |value| < 2**52 · granularity "
                             f"= {2.0**52 * self.granularity:g} ({bad} entries are not)")
        fl = np.floor(v)
        return (fl + (v - fl >= 0.5)).astype(np.int64)  # v − ⌊v⌋ is exact

    def sensitivity(self, sensitivity: float | None,
                    bounds: tuple[float, float] | None) -> int:
        r"""Δ_k: the largest \|k − k′\| for inputs at distance ≤ ``sensitivity`` (if given) and, if
        ``bounds`` are given, clamped into them: min(⌈Δ/g⌉, ⌊hi/g + ½⌋ − ⌊lo/g + ½⌋) (≥ 1)."""
        cands = []
        if sensitivity is not None:
            cands.append(math.ceil(self.units(sensitivity)))
        if bounds is not None:
            cands.append(_floor_half(self.units(bounds[1])) - _floor_half(self.units(bounds[0])))
        return max(1, min(cands))


@dataclass(frozen=True)
class NoiseGuarantee:
    """The guarantee of a mechanism with a given sampler, and what it assumes.

    Attributes:
        sampler: ``"float"``, ``"exact"`` or ``"snapping"``.
        epsilon: ε (an upper bound, rounded up to a double).
        delta: δ (0 for pure DP).
        rho: the zCDP parameter ρ (Gaussian mechanisms), else ``None``.
        holds_in_floating_point: whether the guarantee holds for the values the computer
            actually outputs (False for the float samplers: Mironov 2012).
        statement: one paragraph: the exact statement and its conditions.
        epsilon_exact: ε as an exact rational where it is one (discrete Laplace), else ``None``.
    """

    sampler: str
    epsilon: float
    delta: float
    rho: float | None
    holds_in_floating_point: bool
    statement: str
    epsilon_exact: Fraction | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain values for results metadata."""
        return {"sampler": self.sampler, "epsilon": self.epsilon, "delta": self.delta,
                "rho": self.rho, "holds_in_floating_point": self.holds_in_floating_point,
                "statement": self.statement}


@dataclass(frozen=True)
class DiscreteLaplaceParameters:
    """An exact Laplace mechanism on a grid: Lap_ℤ(t), t = scale_num/scale_den grid units.

    Attributes:
        grid: the output grid.
        scale_num, scale_den: t in lowest terms, each ≤ 2⁵².
        sensitivity_grid: Δ_k (see :meth:`Grid.sensitivity`).
    """

    grid: Grid
    scale_num: int
    scale_den: int
    sensitivity_grid: int

    def __post_init__(self) -> None:
        for name in ("scale_num", "scale_den"):
            check_int(name, getattr(self, name), low=1, high=_MAX_SCALE)
        check_int("sensitivity_grid", self.sensitivity_grid, low=1, high=_MAX_SCALE)

    @classmethod
    def calibrate(cls, epsilon: float, grid: Grid, sensitivity_grid: int
                  ) -> DiscreteLaplaceParameters:
        """The smallest t = m/2²⁰ with t ≥ Δ_k/ε (so the exact ε = Δ_k/t ≤ ε)."""
        epsilon = check_epsilon(epsilon)
        t = Fraction(math.ceil(Fraction(sensitivity_grid) * 2**20 / Fraction(epsilon)), 2**20)
        if t.numerator > _MAX_SCALE:
            raise ValueError(f"sensitivity/epsilon = {sensitivity_grid}/{epsilon!r} grid units is "
                             "too large for the exact sampler (2**52): use a coarser granularity")
        return cls(grid, t.numerator, t.denominator, sensitivity_grid)

    @property
    def scale(self) -> Fraction:
        """t in grid units."""
        return Fraction(self.scale_num, self.scale_den)

    @property
    def epsilon_exact(self) -> Fraction:
        """ε = Δ_k/t, exactly."""
        return self.sensitivity_grid / self.scale


@dataclass(frozen=True)
class DiscreteGaussianParameters:
    """A discrete Gaussian N_ℤ(0, σ²), σ² = var_num/var_den grid units², with CKS20's Laplace
    scale t = ⌊σ⌋ + 1 (computed exactly). Limits: 2·var_num·var_den·t² ≤ 2⁶² and var_den·t ≤ 2³¹
    (with var_den = 1, σ up to about 2¹⁵ grid units)."""

    var_num: int
    var_den: int

    def __post_init__(self) -> None:
        check_int("var_num", self.var_num, low=1)
        check_int("var_den", self.var_den, low=1)
        if math.gcd(self.var_num, self.var_den) != 1:
            raise ValueError("var_num/var_den must be in lowest terms, got "
                             f"{self.var_num}/{self.var_den}")
        t = self.t
        if 2 * self.var_num * self.var_den * t * t > _MAX_GAUSS_DEN or \
                self.var_den * t > _MAX_GAUSS_STEP:
            raise ValueError(f"sigma2 = {self.var_num}/{self.var_den} is outside the exact "
                             "sampler's range (2·num·den·t² ≤ 2**62, den·t ≤ 2**31, "
                             "t = floor(sigma) + 1): use another granularity")

    @classmethod
    def from_variance(cls, sigma2: int | Fraction | float) -> DiscreteGaussianParameters:
        q = _rational("sigma2", sigma2, LIMIT)
        return cls(q.numerator, q.denominator)

    @property
    def variance(self) -> Fraction:
        return Fraction(self.var_num, self.var_den)

    @property
    def t(self) -> int:
        """⌊σ⌋ + 1 = isqrt(⌊σ²⌋) + 1."""
        return math.isqrt(self.var_num // self.var_den) + 1


def discrete_gaussian_delta(epsilon: float, sigma2: float, sensitivity: int) -> float:
    """δ(ε) of the discrete Gaussian mechanism N_ℤ(0, σ²) with integer sensitivity Δ (CKS20):
    Σ_y P[Y = y]·max(0, 1 − e^{ε − L(y)}), L(y) = ((y + Δ)² − y²)/(2σ²) — the same number as
    P[Y > εσ²/Δ − Δ/2] − e^ε·P[Y > εσ²/Δ + Δ/2] — summed in double precision over positive terms
    (relative error well below 10⁻¹⁰)."""
    epsilon = check_real("epsilon", epsilon, low=0.0)
    sigma2 = check_real("sigma2", sigma2, low=0.0, low_open=True)
    delta_k = check_int("sensitivity", sensitivity, low=1)
    sigma = math.sqrt(sigma2)
    reach = int(math.ceil(40.0 * sigma + delta_k + epsilon * sigma2 / delta_k)) + 2
    y = np.arange(-reach, reach + 1, dtype=float)
    logw = -(y * y) / (2.0 * sigma2)
    w = np.exp(logw - logw.max())
    loss = (2.0 * y * delta_k + delta_k * delta_k) / (2.0 * sigma2)
    keep = loss > epsilon
    return float(np.sum(w[keep] * -np.expm1(epsilon - loss[keep])) / np.sum(w))


@dataclass(frozen=True)
class SnappingParameters:
    """Mironov's snapping mechanism: noise scale λ, clamp bound B, Λ = 2^⌈log₂λ⌉, and the
    sensitivity Δ′ (a power of two) the guarantee is stated for. Requires λ < B < 2⁴⁶·λ."""

    lam: float
    bound: float
    sensitivity: float

    def __post_init__(self) -> None:
        lam = check_real("lambda", self.lam, low=0.0, low_open=True, high=math.inf,
                         high_open=True)
        bound = check_real("bound", self.bound, low=0.0, low_open=True, high=math.inf,
                           high_open=True)
        if not (lam < bound < 2.0**46 * lam):
            raise ValueError(f"snapping needs lambda < bound < 2**46 · lambda (Mironov 2012), "
                             f"got lambda={lam!r}, bound={bound!r}")
        if math.frexp(self.sensitivity)[0] != 0.5:
            raise ValueError(f"sensitivity must be a power of two, got {self.sensitivity!r}")

    @classmethod
    def calibrate(cls, epsilon: float, sensitivity: float, bound: float) -> SnappingParameters:
        """λ, as a double, with Δ′/λ + 2⁻⁴⁹·B/λ ≤ ε, Δ′ = 2^⌈log₂Δ⌉."""
        epsilon = check_epsilon(epsilon)
        sens = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                          high_open=True)
        m, e = math.frexp(sens)
        pow2 = math.ldexp(1.0, e - 1 if m == 0.5 else e)
        need = (Fraction(pow2) + Fraction(bound) / 2**49) / Fraction(epsilon)
        return cls(float_up(need), bound, pow2)

    @property
    def lam_pow2(self) -> float:
        """Λ, the smallest power of two ≥ λ."""
        m, e = math.frexp(self.lam)
        return math.ldexp(1.0, e - 1 if m == 0.5 else e)

    @property
    def epsilon_exact(self) -> Fraction:
        """Mironov's bound Δ′/λ + 2⁻⁴⁹·B/λ, exactly."""
        return (Fraction(self.sensitivity) + Fraction(self.bound) / 2**49) / Fraction(self.lam)


# =================================================================================================
# Mechanisms with a sampler choice
# =================================================================================================


def _check_bounds(bounds: Any) -> tuple[float, float] | None:
    if bounds is None:
        return None
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (lo, hi) of finite reals, got {bounds!r}") \
            from None
    lo, hi = check_real("bounds[0]", lo), check_real("bounds[1]", hi)
    if not lo < hi:
        raise ValueError(f"bounds must satisfy lo < hi, got {bounds!r}")
    return lo, hi


def _sensitivity(sensitivity: Any, bounds: tuple[float, float] | None) -> float:
    if sensitivity is None:
        if bounds is None:
            raise ValueError("give sensitivity or bounds (then sensitivity = hi − lo)")
        return float_up(Fraction(bounds[1]) - Fraction(bounds[0]))
    return check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                      high_open=True)


def _clamp_text(bounds: tuple[float, float] | None) -> str:
    return "not clamped" if bounds is None else f"clamped to [{bounds[0]:g}, {bounds[1]:g}]"


def _inputs(values: Any, bounds: tuple[float, float] | None) -> np.ndarray:
    """The mechanism's inputs as floats, clamped into ``bounds`` (part of the mechanism). Raw
    values are never echoed in an error."""
    x = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"values must be finite real numbers "
                         f"({int(np.count_nonzero(~np.isfinite(x)))} entries are not)")
    return x if bounds is None else np.clip(x, bounds[0], bounds[1])


class LaplaceMechanism:
    r"""The Laplace mechanism x ↦ clamp(x) + noise with a choice of sampler.

    Args:
        epsilon: the target ε > 0.
        sensitivity: Δ ≥ \|q(D) − q(D′)\| (default: hi − lo of ``bounds``).
        bounds: (lo, hi): inputs are clamped into it (part of the mechanism; with ``sensitivity``
            omitted it is a local randomizer of values in [lo, hi]).
        sampler: ``"float"`` — binary64 Laplace(Δ/ε) (:func:`privenv.privacy.mechanisms.laplace`;
            ε-DP for idealized arithmetic only); ``"exact"`` — the input rounded to the grid plus
            the discrete Laplace (exactly ε′-DP, ε′ ≤ ε, see the module docstring); ``"snapping"``
            — Mironov's snapping mechanism (float output on a grid of Λ).
        granularity: the exact sampler's grid g (a power of two); default 2^(⌊log₂(Δ/ε)⌋ − 10).
        bound: snapping's clamp bound B (default max(\|lo\|, \|hi\|) + 16λ; needs ``bounds``).

    Example:
        >>> m = LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
        >>> m.guarantee.epsilon <= 1.0
        True
    """

    def __init__(self, *, epsilon: float, sensitivity: float | None = None,
                 bounds: tuple[float, float] | None = None, sampler: str = "float",
                 granularity: float | None = None, bound: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.bounds = _check_bounds(bounds)
        self.sensitivity = _sensitivity(sensitivity, self.bounds)
        self.sampler = check_choice("sampler", sampler, SAMPLERS)
        self.scale = self.sensitivity / self.epsilon
        self.params: DiscreteLaplaceParameters | SnappingParameters | None = None
        if granularity is not None and sampler != "exact":
            raise ValueError("granularity applies only to sampler='exact'")
        if bound is not None and sampler != "snapping":
            raise ValueError("bound applies only to sampler='snapping'")
        if sampler == "exact":
            grid = Grid.for_scale(self.scale) if granularity is None else \
                Grid.from_granularity(granularity)
            self.params = DiscreteLaplaceParameters.calibrate(
                self.epsilon, grid, grid.sensitivity(self.sensitivity, self.bounds))
            self.scale = float(self.params.scale * Fraction(grid.granularity))
        elif sampler == "snapping":
            if bound is None:
                if self.bounds is None:
                    raise ValueError("the snapping sampler needs bounds or bound")
                b0 = (self.sensitivity + 2**-49) / self.epsilon
                bound = max(abs(self.bounds[0]), abs(self.bounds[1])) + 16.0 * b0
            self.params = SnappingParameters.calibrate(self.epsilon, self.sensitivity,
                                                       check_real("bound", bound))
            self.scale = self.params.lam

    @property
    def guarantee(self) -> NoiseGuarantee:
        """The privacy guarantee of this sampler choice."""
        if self.sampler == "float":
            return NoiseGuarantee(
                "float", self.epsilon, 0.0, None, False,
                f"{self.epsilon:g}-DP for Laplace(b = {self.scale:g}) in exact real arithmetic; "
                "the binary64 release is not DP (its low bits depend on the input, Mironov "
                "2012): simulation only")
        p = self.params
        if isinstance(p, DiscreteLaplaceParameters):
            g = p.grid.granularity
            return NoiseGuarantee(
                "exact", float_up(p.epsilon_exact), 0.0, None, True,
                f"exactly ({p.epsilon_exact})-DP: inputs {_clamp_text(self.bounds)}, rounded to "
                f"the grid {g:g}·ℤ (sensitivity {p.sensitivity_grid} grid units), discrete "
                f"Laplace of scale {p.scale} grid units (CKS20); ε′ = Δ_k/t ≤ ε = "
                f"{self.epsilon:g}", p.epsilon_exact)
        assert isinstance(p, SnappingParameters)
        return NoiseGuarantee(
            "snapping", float_up(p.epsilon_exact), 0.0, None, True,
            f"{float_up(p.epsilon_exact):.10g}-DP by Mironov 2012 §5.2 (λ = {p.lam:.17g}, "
            f"B = {p.bound:g}, Λ = {p.lam_pow2:g}, sensitivity ≤ {p.sensitivity:g}), LN correctly "
            "rounded by certification; assumes the platform log errs by < 1 ulp",
            p.epsilon_exact)

    def release(self, values: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
        """One release per entry of ``values`` (float64, same shape), noise from ``rng``."""
        x = _inputs(values, self.bounds)
        if self.sampler == "float":
            return x + mech.laplace(self.scale, rng, x.shape)
        p = self.params
        if isinstance(p, DiscreteLaplaceParameters):
            k = p.grid.round(x)
            z = discrete_laplace(p.scale, rng, x.shape)
            return (k + z).astype(float) * p.grid.granularity
        assert isinstance(p, SnappingParameters)
        return snap(x, p, rng)


class GaussianMechanism:
    r"""The Gaussian mechanism x ↦ clamp(x) + noise at (ε, δ) with a choice of sampler.

    Args:
        epsilon, delta: the target (ε, δ).
        sensitivity: Δ₂ ≥ \|q(D) − q(D′)\| (default: hi − lo of ``bounds``).
        bounds: (lo, hi): inputs are clamped into it (part of the mechanism).
        sampler: ``"float"`` — binary64 N(0, σ²) with the analytic σ (Balle & Wang 2018;
            idealized arithmetic only); ``"exact"`` — the input rounded to the grid plus the
            discrete Gaussian, σ² the smallest calibrated value whose exact δ(ε) ≤ δ (CKS20).
        granularity: the exact sampler's grid g (a power of two); default 2^(⌊log₂σ⌋ − 10).
        sigma: a fixed σ ≥ the analytic one (e.g. a paper's classical calibration); the exact
            sampler's σ is then the smallest calibrated value ≥ it.
    """

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float | None = None,
                 bounds: tuple[float, float] | None = None, sampler: str = "float",
                 granularity: float | None = None, sigma: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.bounds = _check_bounds(bounds)
        self.sensitivity = _sensitivity(sensitivity, self.bounds)
        self.sampler = check_choice("sampler", sampler, ("float", "exact"))
        analytic = mech.gaussian_sigma_analytic(self.epsilon, self.delta, self.sensitivity)
        if sigma is not None:
            sigma = check_real("sigma", sigma, low=analytic, high=math.inf, high_open=True)
        #: a σ the caller fixed (e.g. a paper's classical calibration), at least the analytic one
        self.sigma_floor = sigma
        self.sigma = analytic if sigma is None else sigma
        self.grid: Grid | None = None
        self.params: DiscreteGaussianParameters | None = None
        if sampler == "exact":
            self.grid = Grid.for_scale(self.sigma) if granularity is None else \
                Grid.from_granularity(granularity)
            self.sensitivity_grid = self.grid.sensitivity(self.sensitivity, self.bounds)
            self.params = self._calibrate(self.sensitivity_grid)
            self.sigma = math.sqrt(self.params.variance) * self.grid.granularity
        elif granularity is not None:
            raise ValueError("granularity applies only to sampler='exact'")

    def _calibrate(self, delta_k: int) -> DiscreteGaussianParameters:
        """σ² = m/4^s with s = max(0, 10 − ⌊log₂σ⌋) (so m ≥ 2²⁰: σ² to a relative 10⁻⁶): the
        smallest m, searched upwards from 0.98× the continuous analytic σ² (Balle & Wang 2018)
        by factors 1.001, then down by halving steps, whose exact δ(ε) (× (1 + 10⁻⁹)) is ≤ δ;
        with a fixed σ (``sigma``), no smaller than σ² in grid units."""
        assert self.grid is not None
        sigma_c = mech.gaussian_sigma_analytic(self.epsilon, self.delta, float(delta_k))
        den = 4 ** max(0, 10 - (math.frexp(sigma_c)[1] - 1))
        floor = 1
        if self.sigma_floor is not None:
            floor = math.ceil((Fraction(self.sigma_floor) / Fraction(self.grid.granularity)) ** 2
                              * den)

        def ok(m: int) -> bool:
            return discrete_gaussian_delta(self.epsilon, m / den, delta_k) * (1 + 1e-9) \
                <= self.delta

        m = max(floor, math.floor(0.98 * sigma_c * sigma_c * den))
        while not ok(m):
            m = max(m + 1, math.ceil(m * 1.001))
        step = max(1, m // 10**4)
        while step >= 1:
            while m - step >= floor and ok(m - step):
                m -= step
            step //= 2
        q = Fraction(m, den)
        return DiscreteGaussianParameters(q.numerator, q.denominator)

    @property
    def guarantee(self) -> NoiseGuarantee:
        if self.sampler == "float":
            return NoiseGuarantee(
                "float", self.epsilon, self.delta, mech.gaussian_rho(self.sigma, self.sensitivity),
                False, f"({self.epsilon:g}, {self.delta:g})-DP for N(0, σ² = {self.sigma:g}²) in "
                "exact real arithmetic (Balle & Wang 2018); the binary64 release is not DP "
                "(Mironov 2012): simulation only")
        p = self.params
        assert p is not None and self.grid is not None
        rho = Fraction(self.sensitivity_grid**2) / (2 * p.variance)
        delta = discrete_gaussian_delta(self.epsilon, float(p.variance), self.sensitivity_grid)
        return NoiseGuarantee(
            "exact", self.epsilon, min(self.delta, float_up(Fraction(delta * (1 + 1e-9)))),
            float_up(rho), True,
            f"inputs {_clamp_text(self.bounds)}, rounded to the grid {self.grid.granularity:g}·ℤ "
            f"(sensitivity {self.sensitivity_grid} grid units), discrete Gaussian σ² = "
            f"{p.variance} grid units² (CKS20): exactly ρ = {rho}-zCDP and "
            f"({self.epsilon:g}, {delta * (1 + 1e-9):.6g})-DP")

    def release(self, values: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
        """One release per entry of ``values`` (float64, same shape), noise from ``rng``."""
        x = _inputs(values, self.bounds)
        if self.sampler == "float":
            return x + mech.gaussian(self.sigma, rng, x.shape)
        assert self.params is not None and self.grid is not None
        k = self.grid.round(x)
        z = discrete_gaussian(self.params.variance, rng, x.shape)
        return (k + z).astype(float) * self.grid.granularity


# =================================================================================================
# Vector releases on per-run streams (the linear and federated mechanisms)
# =================================================================================================

#: the bits a vector mechanism's grid lies below its noise scale s, g = 2^(⌊log₂ s⌋ − 14), so that
#: s/g ∈ [2¹⁴, 2¹⁵). Finer than a scalar release's, because rounding m coordinates costs up to
#: one grid unit *each* in sensitivity (√m in L2, m in L1), and 2¹⁴ keeps that below 1 % for the
#: messages here
VECTOR_GRID_BITS = 14
#: words a run is given per vector coordinate before a batch of draws (the mean is 8 for the
#: discrete Laplace, 12.4 for the discrete Gaussian); a run that runs out is topped up and the
#: interrupted draw redone from the same words, so this only sets how often that happens
_WORDS_PER_DRAW = 16


@jit
def _draw_runs(words: np.ndarray, pos: np.ndarray, end: np.ndarray, runs: np.ndarray,
               kind: int, ints: np.ndarray, out: np.ndarray, i: int, j: int
               ) -> tuple[int, int, int]:
    """Draws ``out[i, j]``, ``out[i, j + 1]``, … (row i from run ``runs[i]``'s words, in order) →
    (i, j, status): where it stopped and 0, or the draw that found its run EXHAUSTED/OVERFLOW."""
    n = out.shape[1]
    while i < out.shape[0]:
        r = runs[i]
        while j < n:
            if kind == _LAPLACE:
                v, p = discrete_laplace_kernel(words[r, :end[r]], pos[r], ints[0], ints[1])
            else:
                v, p = discrete_gaussian_kernel(words[r, :end[r]], pos[r], ints[0], ints[1],
                                                ints[2])
            if p < 0:
                return i, j, p
            out[i, j] = v
            pos[r] = p
            j += 1
        i += 1
        j = 0
    return i, j, 0


def run_discrete(noise: seeding.RunNoise | np.random.Generator, runs: np.ndarray, n: int,
                 params: DiscreteLaplaceParameters | DiscreteGaussianParameters) -> np.ndarray:
    """``n`` discrete Laplace or Gaussian draws (grid units, int64) for each run in ``runs``:
    shape ``(len(runs), n)``.

    With a :class:`~privenv.seeding.RunNoise`, row i is the next ``n`` draws of run ``runs[i]``'s
    own word stream, in order, so they do not depend on the batch or on how the words were
    buffered; with a ``Generator`` (audits over many runs), one block of draws from it."""
    runs = np.asarray(runs, dtype=np.int64)
    if isinstance(params, DiscreteLaplaceParameters):
        kind, ints = _LAPLACE, np.array([params.scale_num, params.scale_den, 0], np.int64)
    else:
        kind, ints = _GAUSSIAN, np.array([params.var_num, params.var_den, params.t], np.int64)
    if isinstance(noise, np.random.Generator):
        if kind == _LAPLACE:
            return discrete_laplace(params.scale, noise, (runs.size, n))
        return discrete_gaussian(params.variance, noise, (runs.size, n))
    out = np.empty((runs.size, n), np.int64)
    if out.size == 0:
        return out
    noise.ensure(runs, words=_WORDS_PER_DRAW * n)
    i = j = 0
    while True:
        v = noise.view()
        i, j, status = _draw_runs(v.w, v.w_pos, v.w_end, runs, kind, ints, out, i, j)
        if status == 0:
            return out
        if status != EXHAUSTED:
            raise OverflowError("an exact sampler's intermediate integer exceeded 2**62 "
                                "(an event of probability below e**-1000 for valid parameters)")
        r = runs[i]  # top up the run that ran out and redo its draw from the same words
        noise.ensure(np.array([r]), words=int(v.w_end[r] - v.w_pos[r])
                     + _WORDS_PER_DRAW * (n - j))


def vector_grid(scale: float) -> Grid:
    """A vector mechanism's grid for the noise scale s: g = 2^(⌊log₂ s⌋ − 14)."""
    return Grid(math.frexp(scale)[1] - 1 - VECTOR_GRID_BITS)


def l2_grid_sensitivity(grid: Grid, sensitivity: float, m: int) -> float:
    r"""An upper bound, in grid units, on ‖k − k′‖₂ for m-vectors x, x′ with ‖x − x′‖₂ ≤ Δ
    rounded by k = ⌊x/g + ½⌋: each coordinate's rounding moves k − k′ by less than 1 from
    (x − x′)/g, so ‖k − k′‖₂ < Δ/g + √m (rounded up to a double). The √m also covers the
    floating-point error of the inputs' own computation (far below a grid unit)."""
    return float_up(grid.units(sensitivity) + Fraction(float_up(Fraction(math.sqrt(m)))
                                                         * (1 + 2**-50)))


def l1_grid_sensitivity(grid: Grid, sensitivity: float, m: int) -> int:
    r"""The largest ‖k − k′‖₁ for m-vectors with ‖x − x′‖₁ ≤ Δ rounded to the grid:
    Σ\|k_i − k′_i\| ≤ Σ⌈\|x_i − x′_i\|/g⌉ < Δ/g + m, so ⌈Δ/g⌉ + m (exact)."""
    return math.ceil(grid.units(sensitivity)) + int(m)


class _GridRelease:
    """What the vector releases share: x on the grid g·ℤ, per-run noise in grid units from
    :func:`run_discrete`, and the release (k + Z)·g."""

    grid: Grid
    params: DiscreteLaplaceParameters | DiscreteGaussianParameters

    def round(self, values: np.ndarray) -> np.ndarray:
        """x on the grid (int64 grid units)."""
        return self.grid.round(values)

    def noise(self, source: seeding.RunNoise | np.random.Generator, runs: np.ndarray,
              n: int) -> np.ndarray:
        """``n`` coordinates of noise for each run (grid units; :func:`run_discrete`)."""
        return run_discrete(source, runs, n, self.params)

    def release(self, values: np.ndarray, source: seeding.RunNoise | np.random.Generator,
                runs: np.ndarray) -> np.ndarray:
        """(k + Z)·g for the vectors ``values`` (one row per run of ``runs``), as doubles."""
        k = self.round(values) + self.noise(source, runs, values.shape[-1])
        return k.astype(np.float64) * self.grid.granularity


@dataclass(frozen=True)
class VectorGaussian(_GridRelease):
    r"""A vector release (k + Z)·g, k = x rounded to the grid g·ℤ, Z with i.i.d. N_ℤ(0, σ_k²)
    coordinates (CKS20): the exact sampler of a Gaussian mechanism over m-vectors.

    For integer vectors at L2 distance ≤ B the release is exactly B²/(2σ_k²)-zCDP (CKS20,
    Theorem 14, the multivariate discrete Gaussian); B = :func:`l2_grid_sensitivity` covers the
    rounding. Unlike the continuous Gaussian it is not exactly μ-GDP, so its (ε, δ) comes from the
    zCDP conversion (:func:`privenv.privacy.accounting.rho_to_epsilon_cks`).

    Attributes:
        grid: the output grid.
        params: σ_k² in grid units² (an integer; σ_k ∈ [2¹⁴, 2¹⁵) by default).
    """

    grid: Grid
    params: DiscreteGaussianParameters

    @classmethod
    def for_sigma(cls, sigma: float, granularity: float | None = None) -> VectorGaussian:
        """The discrete Gaussian with σ_k ≥ σ/g, σ_k² the least integer ≥ (σ/g)², on the default
        grid :func:`vector_grid` (σ) or on ``granularity``."""
        sigma = check_real("sigma", sigma, low=0.0, low_open=True, high=math.inf,
                           high_open=True)
        grid = vector_grid(sigma) if granularity is None else Grid.from_granularity(granularity)
        var = math.ceil(grid.units(sigma) ** 2)
        if var > 2**30:
            raise ValueError(f"sigma/granularity = {float(grid.units(sigma)):g} is above the "
                             "vector sampler's range (2**15 grid units): use a coarser grid")
        return cls(grid, DiscreteGaussianParameters(var, 1))

    @property
    def sigma(self) -> float:
        """σ_k·g, the noise's standard deviation scale in the values' units."""
        return math.sqrt(self.params.variance) * self.grid.granularity

    def rho(self, sensitivity: float, m: int, compositions: int = 1) -> float:
        """ρ (rounded up) of ``compositions`` releases of an m-vector of L2 sensitivity Δ
        (in the values' units): compositions·B²/(2σ_k²), B = :func:`l2_grid_sensitivity`."""
        b = Fraction(l2_grid_sensitivity(self.grid, sensitivity, m))
        return float_up(compositions * b * b / (2 * self.params.variance))


@dataclass(frozen=True)
class GaussianCalibration:
    """A vector Gaussian mechanism calibrated with the exact sampler (:func:`calibrate_gaussian`).

    Attributes:
        sigma: the σ to build the sampler from (``VectorGaussian.for_sigma(sigma)``, as
            :class:`~privenv.privacy.tree.TreeMechanism` does).
        noise: that sampler.
        rho: the exact ρ of all the releases, rounding included (rounded up).
        epsilon: ε′ ≤ ε at δ, CKS20's conversion of ``rho``.
    """

    sigma: float
    noise: VectorGaussian
    rho: float
    epsilon: float


def calibrate_gaussian(epsilon: float, delta: float, blocks: Sequence[tuple[float, int]],
                       compositions: int = 1, floor: float = 0.0) -> GaussianCalibration:
    r"""The exact sampler of a Gaussian mechanism over vectors, calibrated to (ε, δ) through zCDP.

    ``compositions`` releases of every block (Δ, m) — L2 sensitivity Δ over m coordinates, one
    noise scale for all — are together ρ_k = Σ compositions·(Δ/g + √m)²/(2σ_k²)-zCDP
    (:meth:`VectorGaussian.rho`, the rounding included; CKS20). The multivariate discrete Gaussian
    is not exactly μ-GDP, so its (ε, δ) is CKS20's conversion of ρ_k
    (:func:`~privenv.privacy.accounting.rho_to_epsilon_cks`), looser than the continuous
    Gaussian's exact GDP conversion. σ is the least value at least ``floor`` (the float sampler's
    σ, so that the exact noise is never below it) with ρ_k ≤ ρ(ε, δ)·(1 − 10⁻⁹)
    (:func:`~privenv.privacy.accounting.rho_for_epsilon`; the factor covers that numerical
    inversion): it starts from the continuous σ = √(compositions·ΣΔ²/(2ρ)) and rises by the ratio
    still missing (one or two steps: the rounding adds about √m/(Δ/g) ≈ 2⁻¹⁴·√m·σ/Δ)."""
    from .accounting import rho_for_epsilon, rho_to_epsilon_cks

    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    target = rho_for_epsilon(epsilon, delta) * (1 - 1e-9)
    sigma = max(floor, math.sqrt(compositions * sum(d * d for d, _ in blocks) / (2.0 * target)))
    while True:
        noise = VectorGaussian.for_sigma(sigma)
        rho = sum(noise.rho(d, m, compositions) for d, m in blocks)
        if rho <= target:
            return GaussianCalibration(sigma, noise, rho, rho_to_epsilon_cks(rho, delta))
        sigma *= math.sqrt(rho / target) * (1.0 + 1e-12)


@dataclass(frozen=True)
class VectorLaplace(_GridRelease):
    r"""A vector release (k + Z)·g, Z with i.i.d. Lap_ℤ(t) coordinates (CKS20): the exact
    sampler of the Laplace mechanism over m-vectors of L1 sensitivity Δ₁. For inputs at
    ‖x − x′‖₁ ≤ Δ₁, ‖k − k′‖₁ ≤ Δ_k = :func:`l1_grid_sensitivity`, so the release is exactly
    (Δ_k/t)-DP.

    Attributes:
        params: the grid, t and Δ_k (t ≥ Δ_k/ε: ε′ = Δ_k/t ≤ ε).
        m: the number of coordinates.
    """

    params: DiscreteLaplaceParameters
    m: int

    @classmethod
    def calibrate(cls, epsilon: float, sensitivity: float, m: int,
                  granularity: float | None = None) -> VectorLaplace:
        """ε′ ≤ ε for m coordinates of L1 sensitivity Δ₁, grid :func:`vector_grid` (Δ₁/ε)."""
        epsilon = check_epsilon(epsilon)
        sensitivity = check_real("sensitivity", sensitivity, low=0.0, low_open=True,
                                 high=math.inf, high_open=True)
        m = check_int("m", m, low=1)
        grid = vector_grid(sensitivity / epsilon) if granularity is None else \
            Grid.from_granularity(granularity)
        return cls(DiscreteLaplaceParameters.calibrate(
            epsilon, grid, l1_grid_sensitivity(grid, sensitivity, m)), m)

    @property
    def grid(self) -> Grid:
        return self.params.grid

    @property
    def epsilon(self) -> float:
        """ε′ = Δ_k/t, rounded up to a double."""
        return float_up(self.params.epsilon_exact)

    @property
    def scale(self) -> float:
        """t·g, the noise scale in the values' units."""
        return float(self.params.scale * Fraction(self.grid.granularity))
