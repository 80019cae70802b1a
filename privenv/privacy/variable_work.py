r"""CKS20's samplers as written, with variable work: the audits' mutant and the reference.

Canonne, Kamath & Steinke 2020 (CKS20), Algorithms 1–3, implemented as nested loops that stop as
soon as the value is known: the number of 64-bit words a draw reads, and of iterations of its
loops, depends on the value drawn, hence, for a given release x + Z, on the input x (Jin et al.
2022, "Are we there yet? Timing and floating-point attacks on differential privacy systems",
IEEE S&P). privenv's samplers (:mod:`privenv.privacy.constant_work`) compute the same value from the
same words with a constant number of words and iterations per draw; this module is kept only as

* the mutants of the side-channel audits (``privenv audit --targets side-channel-*``), which
  must catch them — with snapping's U* as it was drawn before, its binade found by a loop over
  the bits of the first word (as many iterations as trailing zero bits, plus one: the
  magnitude of the noise), and
* the reference the constant-work kernels are tested against (the same value from the same
  words: tests/privacy/test_constant_work.py).

Kernels: ``kernel(words, cursor, …) -> (value, cursor′)``, cursor′ = :data:`EXHAUSTED` if the
buffer ran out (nothing consumed), :data:`OVERFLOW` if an intermediate integer would leave
[−2⁶², 2⁶²] (probability below e^{−1000} for validated parameters).
"""

from __future__ import annotations

import math

import numpy as np

from privenv._jit import Int, jit

from .constant_work import (
    EXHAUSTED,
    LIMIT,
    OVERFLOW,
    UNCERTAIN,
    mul_hi,
    snapping_value,
    square_over,
)

__all__ = [
    "bernoulli_exp_kernel",
    "discrete_gaussian_kernel",
    "discrete_laplace_kernel",
    "snapping_bitloop_kernel",
    "uniform_below_kernel",
]


@jit
def uniform_below_kernel(words: np.ndarray, pos: int, n: int) -> tuple[Int, int]:
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
    return np.int64(mul_hi(w, nn)), pos


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
def discrete_gaussian_kernel(words: np.ndarray, pos: int, var_num: int, var_den: int,
                             t: int) -> tuple[int, int]:
    r"""One draw of the discrete Gaussian N_ℤ(0, σ²), σ² = var_num/var_den (CKS20 Algorithm 3).

    Repeat: Y ~ Lap_ℤ(t); accept with probability exp(−(\|Y\| − σ²/t)²/(2σ²)). The output law is
    exactly ∝ exp(−y²/(2σ²)) for every integer t ≥ 1; t = ⌊σ⌋ + 1 (CKS20's choice) makes the
    loop short. The exponent is the rational a²/den, a = \|Y\|·var_den·t − var_num,
    den = 2·var_num·var_den·t², split exactly into its integer part and remainder.
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
        whole, rem = square_over(abs(ay * step - var_num), den)
        c, pos = bernoulli_exp_kernel(words, pos, whole, rem, den)
        if pos < 0:
            return 0, pos
        if c == 1:
            return y, pos


@jit
def snapping_bitloop_kernel(words: np.ndarray, pos: int, x: float, lam: float, bound: float,
                            lam_pow2: float) -> tuple[float, int, int]:
    """Mironov's snapping release (as :func:`privenv.privacy.constant_work.snapping_kernel`),
    with U*'s binade found by a loop over the bits of the word stream, one iteration per bit up
    to the first 1 → (release, cursor′, the loop's iterations). The iterations are e, the binade
    [2^−e, 2^{1−e}) of U*, so about abs(noise)/(λ·ln 2): they reveal the noise. Returns cursor
    :data:`~privenv.privacy.constant_work.UNCERTAIN` for a release it cannot certify."""
    nw = words.shape[0]
    iterations = 0
    while True:
        e = 1
        while True:
            if pos >= nw:
                return 0.0, EXHAUSTED, iterations
            w = words[pos]
            pos += 1
            if w == 0:
                e += 64
                iterations += 64
                if e > 1022:
                    break
                continue
            iterations += 1
            while (w & np.uint64(1)) == 0:
                w >>= np.uint64(1)
                e += 1
                iterations += 1
            break
        if pos >= nw:
            return 0.0, EXHAUSTED, iterations
        w = words[pos]
        pos += 1
        mantissa = np.int64(w >> np.uint64(12))
        sign = np.int64(w & np.uint64(1))
        u = 0.0
        if e <= 1022:
            u = math.ldexp(float(mantissa + (1 << 52)), -52 - e)
        elif mantissa > 0:
            u = math.ldexp(float(mantissa), -1074)
        else:
            continue
        v, certified = snapping_value(x, u, sign, lam, bound, lam_pow2)
        if not certified:
            return 0.0, UNCERTAIN, iterations
        return v, pos, iterations
