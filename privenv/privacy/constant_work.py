r"""Constant-work exact samplers: compiled kernels over a run's stream of 64-bit words.

The discrete Laplace and discrete Gaussian of Canonne, Kamath & Steinke 2020 ("The discrete
Gaussian for differential privacy", NeurIPS — CKS20 below; Algorithms 1–3) are rejection samplers:
implemented as written, the number of uniform words a draw reads, and the number of iterations of
its loops, depend on the value drawn. The release of a mechanism is x + Z, so for a given release
the work reveals Z, hence x: an observer of the words read (or of the time a draw takes) learns
the input (Jin, McMurtry, Rubinstein & Ohrimenko 2022, "Are we there yet? Timing and
floating-point attacks on differential privacy systems", IEEE S&P, §VI: the timing attack on the
discrete Laplace and Gaussian samplers; CKS20 §5.4 already suggests stopping after a fixed time).
:mod:`privenv.privacy.variable_work` keeps that form as the audits' mutant.

Here each draw does a fixed amount of work. CKS20's algorithms are run as one state machine
that reads exactly one word per loop iteration — every uniform integer, Bernoulli trial and sign
of the algorithms takes one word by Lemire's method (Lemire 2019, "Fast random integer generation
in an interval", ACM TOMACS), a rejected word being an iteration that changes nothing — and a draw
runs exactly ``budget`` iterations over ``budget`` words. Once the value is drawn, the state
machine starts the algorithm afresh on the next word, a draw whose value is discarded, until the
budget is read: whatever the value, every iteration is an iteration of the same algorithm on
fresh uniform words, with the same branches at the same rates (the value's own iterations are
the first ones, as in any draw), so neither the words read nor the time per iteration depends on
the value. The value is the function of the words that CKS20's reference implementation
computes (the same value from the same words: tests/privacy/test_constant_work.py checks it against
:mod:`~privenv.privacy.variable_work` on every draw), so the law is exactly CKS20's. The budget
is a function of the public parameters only (:mod:`privenv.privacy.work` computes the least
budget whose overrun probability — the algorithm needing more words — is at most 2⁻⁶⁴, with a
proved bound). In the overrun event, the draw goes on to its end, reading further words: its value
keeps the exact law (the released value stays exactly ε-DP), and the work then depends on the
noise. So the release together with the words read and the iterations run is (ε, (1 + e^ε)·η)-DP
for η the overrun probability, :data:`privenv.privacy.work.WORK_FAILURE` at most.

What is not constant to the cycle: an iteration's branches differ by phase (the discarded draws
make their mix the same whatever the value, measured flat within a few cycles per unit of the
noise's magnitude, ``benchmarks/samplers.py --timing``), Lemire's rare rejection test computes a
threshold (:func:`lemire_threshold`, the same instructions for every modulus, no division), and
the platform's division and logarithm may take operand-dependent time.
``privenv audit --targets side-channel-*`` checks the words between neighbouring inputs.

Mironov's snapping mechanism reads two words (U* and a sign): :func:`uniform_double` finds the
binade of U* by counting trailing zero bits with one instruction, not a loop; a word of 64 zeros
(probability 2⁻⁶⁴) reads further words.

Kernels are *transactional*: a draw needs ``budget`` words available (else it returns
:data:`EXHAUSTED` having read nothing), and an overrun that runs out of words also returns
:data:`EXHAUSTED`, so the caller appends words and redoes the draw from the same cursor — the
same value. A run's draws therefore depend only on its word stream.
"""

from __future__ import annotations

import decimal
import math
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from privenv._jit import Int, jit

__all__ = [
    "EXHAUSTED",
    "LIMIT",
    "OVERFLOW",
    "UNCERTAIN",
    "cks20_kernel",
    "correctly_rounded_log",
    "discrete_gaussian_kernel",
    "discrete_laplace_kernel",
    "lemire_threshold",
    "mul_hi",
    "muldivmod",
    "snap_from_log",
    "snapping_kernel",
    "snapping_value",
    "square_over",
    "uniform_double",
]

#: the cursor returned by a kernel whose buffer ran out (nothing consumed; top up and redo)
EXHAUSTED = -1
#: the cursor returned when an intermediate integer would leave [−2⁶², 2⁶²] (never for
#: validated parameters except with probability < e^{−1000}; the batch functions raise)
OVERFLOW = -2
#: the cursor returned by the snapping kernel for a release it cannot certify (nothing consumed:
#: decide the draw with :func:`privenv.privacy.exact.snap_uncertain`)
UNCERTAIN = -3
#: every integer of the kernels stays at most this in absolute value
LIMIT = 2**62
_SQRT_LIMIT = 2**31
_FLOAT_HINT_LIMIT = 2**52

#: moduli below this take 2⁶⁴ mod m from a table (:func:`lemire_threshold`)
_SMALL = 4096
_M = np.arange(_SMALL, dtype=np.uint64)
#: 2⁶⁴ mod m for 1 ≤ m < 4096 (entry 0 unused)
_SMALL_THRESHOLD = np.zeros(_SMALL, np.uint64)
_SMALL_THRESHOLD[1:] = (np.uint64(0) - _M[1:]) % _M[1:]
del _M


@intrinsic
def _mul_hi_128(typingctx: Any, a: Any, b: Any) -> Any:
    """The high word of the 128-bit product of two uint64 (one ``mul`` on x86-64)."""
    if not (a == types.uint64 and b == types.uint64):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


# (numba.config sets its options at import, out of the type checker's sight)
if numba.config.DISABLE_JIT:  # type: ignore[attr-defined]  # plain Python: exact integers
    def mul_hi(a: np.uint64, b: np.uint64) -> np.uint64:
        """The high 64 bits of the 128-bit product a·b."""
        return np.uint64((int(a) * int(b)) >> 64)
else:
    @jit(error_model="python", inline="always")
    def mul_hi(a: np.uint64, b: np.uint64) -> np.uint64:
        """The high 64 bits of the 128-bit product a·b."""
        # numba's stub types an intrinsic's call with its typing context as an argument
        return _mul_hi_128(np.uint64(a), np.uint64(b))  # type: ignore[call-arg]


@jit(error_model="python", inline="always")
def _mask(c: bool) -> np.uint64:
    """All ones if ``c``, else 0: a select by bit operations."""
    return np.uint64(0) - np.uint64(c)


@jit(error_model="python", inline="always")
def lemire_threshold(m: np.uint64) -> np.uint64:
    """2⁶⁴ mod m for 1 ≤ m ≤ 2⁶², by the same instructions whatever m (no branch, no integer
    division, whose latency depends on its operands): a table for m < 4096; for m ≥ 4096 the
    quotient q = ⌊(2⁶⁴ − m)/m⌋ < 2⁵² estimated in binary64 to within 2 (relative error
    ≤ 3·2⁻⁵³; within 1 for m ≥ 2⁶¹, where q ≤ 7), lowered by 2 (by 1) so that it is at most q,
    and the remainder (2⁶⁴ − m) − q̂·m, in [0, 5m) (in [0, 3m)), brought into [0, m) by four
    masked subtractions. Both are computed and one is kept. Exact for every m (tested)."""
    small = _SMALL_THRESHOLD[min(m, np.uint64(_SMALL - 1))]
    mm = max(m, np.uint64(_SMALL))
    n = np.uint64(0) - mm
    q = np.uint64(float(n) / float(mm))
    q -= np.uint64(1) + np.uint64(mm < np.uint64(2**61))
    r = n - q * mm
    for _ in range(4):
        r -= mm & _mask(r >= mm)
    use_small = _mask(m < np.uint64(_SMALL))
    return (small & use_small) | (r & ~use_small)


# =================================================================================================
# CKS20's exact arithmetic (the Gaussian's acceptance exponent)
# =================================================================================================


@jit
def muldivmod(x: int, y: int, m: int) -> tuple[Int, Int]:
    """(⌊x·y/m⌋, x·y mod m) exactly, for 0 ≤ x, y < m ≤ 2⁶².

    x, y < 2³¹: one int64 product. m ≤ 2⁵²: a floating-point estimate q̂ of the quotient (abs(q̂ − q)
    ≤ 2, since q < 2⁵² and the estimate's relative error is below 2⁻⁵¹) is corrected in exact
    integer arithmetic: x·y − q̂·m lies in (−2⁵⁵, 2⁵⁵), so its int64 value computed modulo 2⁶⁴ is
    exact, and the while loops bring it into [0, m). The result is the exact pair whatever the
    estimate; no decision depends on a float. Otherwise: shift-and-add over the bits of y.
    """
    if x < _SQRT_LIMIT and y < _SQRT_LIMIT:
        p = x * y
        return p // m, p % m
    if m <= _FLOAT_HINT_LIMIT:
        q: Int = np.int64((float(x) / float(m)) * float(y))
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
def square_over(a: int, den: int) -> tuple[int, int]:
    """(⌊a²/den⌋ saturated at :data:`LIMIT`, a² mod den) for 0 ≤ a ≤ 2⁶², 1 ≤ den ≤ 2⁶².

    With a = q·den + r: a²/den = q²·den + 2qr + r²/den.
    """
    q = a // den
    r = a % den
    qq, rem = muldivmod(r, r, den)
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


# =================================================================================================
# CKS20 Algorithms 1–3 as one state machine, one word per iteration
# =================================================================================================

# What the next word decides (the phase of the state machine):
_U = 0  # U, uniform in {0, …, n − 1} (CKS20 Alg. 2, line 3)
_BU = 1  # a trial Bernoulli(u/(n·k)) of Bernoulli(exp(−u/n)) (Alg. 1 for γ ≤ 1, n·k ≤ 2⁶²)
_BU2A = 2  # its first half Bernoulli(u/n) when n·k > 2⁶² …
_BU2B = 3  # … and its second half Bernoulli(1/k)
_V = 4  # a trial Bernoulli(1/k) of a Bernoulli(exp(−1)) of V (Alg. 2, lines 6–8)
_S = 5  # the sign (Alg. 2, line 10)
_GW = 6  # a trial Bernoulli(1/k) of one of the ⌊γ⌋ Bernoulli(exp(−1)) of Alg. 1 (γ > 1)
_GF = 7  # a trial Bernoulli(rem/(den·k)) of Bernoulli(exp(−rem/den)), den·k ≤ 2⁶² …
_GF2A = 8  # … or its halves Bernoulli(rem/den) …
_GF2B = 9  # … and Bernoulli(1/k)


@jit(error_model="python")
def cks20_kernel(words: np.ndarray, pos: int, budget: int, gaussian: bool, n: int, d: int,
                 var_num: int, var_den: int) -> tuple[int, int]:
    r"""One draw of Lap_ℤ(n/d) (``gaussian`` False) or N_ℤ(0, var_num/var_den) with CKS20's
    proposal Lap_ℤ(n) (``gaussian`` True, d = 1, n = t = ⌊σ⌋ + 1), over exactly ``budget`` words
    unless it overruns → (value, cursor′). See the module docstring.

    The phases follow CKS20's algorithms exactly as :mod:`privenv.privacy.variable_work` writes
    them (Alg. 2: U uniform in {0, …, n − 1}, kept with probability exp(−U/n) by Alg. 1's trials
    Bernoulli(γ/k), k = 1, 2, … until the first 0, odd k keeping; V the number of successes of
    Bernoulli(e⁻¹) before the first failure; Y = ⌊(U + nV)/d⌋; a sign, (−, 0) rejected. Alg. 3:
    Y ~ Lap_ℤ(t) kept with probability exp(−(\|Y\| − σ²/t)²/(2σ²)), γ = whole + rem/den exactly).
    A trial whose probability is 0 or 1 reads no word (as the reference does), so one iteration
    may go through several phases; each iteration reads one word and is an iteration of the
    algorithm. Once the value is drawn, the algorithm starts afresh on the next word — a draw
    whose value is discarded — until the budget is read: whatever the value, every iteration is
    one of the same algorithm on fresh uniform words, so the time an iteration takes has the same
    law (the value's own iterations are a prefix, as in any draw).
    """
    nw = words.shape[0]
    if nw - pos < budget:
        return 0, EXHAUSTED
    kmax = LIMIT // n  # trials Bernoulli(u/(n·k)) in one word while n·k ≤ 2⁶²
    den = 2 * var_num * var_den * n * n if gaussian else 1  # the Gaussian's γ = a²/den
    step = var_den * n
    kmax_g = LIMIT // den
    start_phase = _U if n > 1 else _V  # n = 1: U = 0 reads no word and is kept
    start_k = 1 if n > 1 else 2
    phase, k = start_phase, start_k
    u: Int = 0  # a uniform draw (a numpy integer in plain Python)
    v = y = z = whole = rem = left = 0
    value = 0
    drawn = False  # the value is drawn: the rest is discarded work
    i = 0
    while i < budget or not drawn:
        if pos + i >= nw:
            return 0, EXHAUSTED
        w = words[pos + i]
        i += 1
        if phase == _U or phase == _BU2A:
            m = n
        elif phase == _BU:
            m = n * k
        elif phase == _S:
            m = 2
        elif phase == _GF:
            m = den * k
        elif phase == _GF2A:
            m = den
        else:
            m = k
        mm = np.uint64(m)
        low = w * mm
        if low < mm and low < lemire_threshold(mm):  # Lemire: the word is rejected
            continue
        x = np.int64(mul_hi(w, mm))  # uniform in {0, …, m − 1}
        # the trial's outcome (a uniform U, or a Bernoulli: x < numerator)
        restart = False  # the attempt is rejected: draw again from U
        kept = False  # Alg. 1's loop over k ended: its result is k odd
        done = False  # the attempt's value is drawn
        if phase == _U:
            u = x
            if u == 0:  # Bernoulli(exp(0)) = 1 with no word: on to V
                phase, k, v = _V, 2, 0
            else:
                phase, k = (_BU if kmax >= 1 else _BU2A), 1
        elif phase == _BU or phase == _GF:
            num = u if phase == _BU else rem
            if x < num:
                k += 1
                if k > (kmax if phase == _BU else kmax_g):
                    phase = _BU2A if phase == _BU else _GF2A
            else:
                kept = True
        elif phase == _BU2A or phase == _GF2A:
            if x < (u if phase == _BU2A else rem):
                phase = _BU2B if phase == _BU2A else _GF2B
            else:
                kept = True
        elif phase == _BU2B or phase == _GF2B:
            if x < 1:
                k += 1
                phase = _BU2A if phase == _BU2B else _GF2A
            else:
                kept = True
        elif phase == _V or phase == _GW:
            if x == 0:  # Bernoulli(1/k) = 1: the next k
                k += 1
            elif k & 1:  # this Bernoulli(exp(−1)) is 1
                k = 2
                if phase == _V:
                    v += 1
                else:
                    left -= 1
                    if left == 0:
                        if whole >= LIMIT:
                            if not drawn:
                                return 0, OVERFLOW
                            restart = True
                        elif rem == 0:
                            done = True
                        else:
                            phase, k = (_GF if kmax_g >= 1 else _GF2A), 1
            elif phase == _V:  # V is drawn: Y, then the sign
                if v > (LIMIT - u) // n:
                    if not drawn:
                        return 0, OVERFLOW
                    restart = True
                else:
                    y = (u + n * v) // d
                    phase = _S
            else:  # one of the ⌊γ⌋ Bernoulli(exp(−1)) is 0: the Gaussian rejects
                restart = True
        else:  # _S: the sign, 1 = negative (Bernoulli(1/2) = 1 iff x = 0)
            if x == 0 and y == 0:
                restart = True
            else:
                z = -y if x == 0 else y
                if not gaussian:
                    done = True
                elif y > LIMIT // step:  # Alg. 3: keep z with probability exp(−a²/den)
                    if not drawn:
                        return 0, OVERFLOW
                    restart = True
                else:
                    whole, rem = square_over(abs(y * step - var_num), den)
                    if whole > 0:
                        phase, k, left = _GW, 2, min(whole, LIMIT)
                    elif rem == 0:
                        done = True
                    else:
                        phase, k = (_GF if kmax_g >= 1 else _GF2A), 1
        if kept:
            if k & 1 == 0:
                restart = True
            elif phase == _BU or phase == _BU2A or phase == _BU2B:
                phase, k, v = _V, 2, 0
            else:  # the Gaussian keeps z
                done = True
        if done:
            if not drawn:
                value, drawn = z, True
            restart = True  # the remaining words: a draw whose value is discarded
        if restart:
            phase, k, u = start_phase, start_k, 0
            v = 0
    return value, pos + i


@jit
def discrete_laplace_kernel(words: np.ndarray, pos: int, scale_num: int, scale_den: int,
                            budget: int) -> tuple[int, int]:
    """One draw of the discrete Laplace Lap_ℤ(t), t = scale_num/scale_den (CKS20 Algorithm 2),
    over ``budget`` words (:func:`cks20_kernel`; the budget: :mod:`privenv.privacy.work`).
    P[Z = z] = (e^{1/t} − 1)/(e^{1/t} + 1)·e^{−|z|/t}; 1 ≤ scale_num, scale_den ≤ 2⁵²."""
    return cks20_kernel(words, pos, budget, False, scale_num, scale_den, 0, 1)


@jit
def discrete_gaussian_kernel(words: np.ndarray, pos: int, var_num: int, var_den: int, t: int,
                             budget: int) -> tuple[int, int]:
    r"""One draw of the discrete Gaussian N_ℤ(0, σ²), σ² = var_num/var_den (CKS20 Algorithm 3),
    with the proposal Lap_ℤ(t) (t = ⌊σ⌋ + 1, CKS20's choice), over ``budget`` words
    (:func:`cks20_kernel`). Requires 2·var_num·var_den·t² ≤ 2⁶² and var_den·t ≤ 2³¹."""
    return cks20_kernel(words, pos, budget, True, t, 1, var_num, var_den)


# =================================================================================================
# Mironov's snapping mechanism (Mironov 2012, §5.2)
# =================================================================================================


@jit
def uniform_double(words: np.ndarray, pos: int) -> tuple[float, Int, int]:
    """(U*, sign bit, cursor′): U* uniform over the doubles of (0, 1) as in Mironov 2012 — the
    binade [2^−e, 2^{1−e}) with probability 2^−e (e = 1 + the number of trailing zero bits of
    the word stream, counted by one instruction), then a uniform 52-bit mantissa; below 2⁻¹⁰²²
    the subnormals k·2⁻¹⁰⁷⁴, k ∈ [1, 2⁵²), uniformly (k = 0 is redrawn). Also returns an
    independent uniform bit. Two words, unless the first is 0 (probability 2⁻⁶⁴)."""
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
            e += _trailing_zeros(w)
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


@jit(inline="always")
def _trailing_zeros(w: np.uint64) -> int:
    """The number of trailing zero bits of a nonzero word, by a fixed sequence of six masked
    halvings (no loop over the bits)."""
    c = 0
    for s in (32, 16, 8, 4, 2, 1):
        low = w & np.uint64((1 << s) - 1)
        if low == np.uint64(0):
            w >>= np.uint64(s)
            c += s
    return c


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
    r: float = math.floor(q)
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
    not certified and :func:`privenv.privacy.exact.snap` decides it with a correctly rounded
    logarithm in 60-digit decimal arithmetic.
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
    :func:`snapping_value` at U* and S drawn from the words (:func:`uniform_double`: two words,
    more with probability 2⁻⁶⁴). Returns cursor :data:`UNCERTAIN` (nothing consumed) when the
    release is not certified; the caller decides it with a correctly rounded logarithm."""
    u, sign, p = uniform_double(words, pos)
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
