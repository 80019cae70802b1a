r"""The work budgets of the constant-work samplers, with proved overrun bounds.

A constant-work draw (:mod:`privenv.privacy.constant_work`) reads exactly B words and runs exactly B
iterations unless CKS20's algorithm needs more than B words — the *overrun*. This module gives,
for the public parameters of a sampler, an upper bound on P[words > B] and the least budget B
whose bound is at most :data:`WORK_FAILURE` = 2⁻⁶⁴.

The bound (Chernoff): P[N > B] ≤ E[z^N]·z^{−(B+1)} for every z > 1, where N is the number of words
a draw of the reference algorithm reads. E[z^N] is bounded from the structure of CKS20's
algorithms, each piece in closed form:

* a trial of modulus m (a uniform integer below m, by Lemire's method) reads a geometric number
  of words, each rejected with probability below m/2⁶⁴: E[z^words] ≤ ℓ_m(z) = (1 − p)z/(1 − pz),
  p = m/2⁶⁴ (:func:`lemire_pgf`);
* Algorithm 1 for γ = a/b ∈ (0, 1] runs trials k = 1, 2, … of Bernoulli(γ/k) until the first 0
  (one trial of modulus b·k, or two of moduli b and k when b·k > 2⁶², as the kernel does): the
  loop ending at k has probability Π_{j<k}(γ/j)·(1 − γ/k), odd k keeping. Its words' generating
  function, split by the outcome, is a sum over k of products of ℓ's (:func:`_k_loop`), cut at
  k = 48 with the rest bounded by a geometric series;
* Algorithm 2: attempts are independent, each (U, the keep test, V, the sign) ending in a
  rejection or in the value, so E[z^N] = D(z)/(1 − R(z)) with R the attempt's generating
  function on rejection and D on success (a renewal equation). U is uniform: the average over U of
  each term γ^{k−1}(1 − γ/k) (increasing in γ for k ≥ 2) is at most its integral 1/(k + 1); V's
  trials are Algorithm 1 with γ = 1; the sign rejects (−, 0);
* Algorithm 3: the proposal Y ~ Lap_ℤ(t) and the test Bernoulli(exp(−γ(Y))) — ⌊γ⌋ trials of
  Bernoulli(e⁻¹) stopping at the first 0, then Algorithm 1 for the fractional part. The proposal's
  words are computed jointly with abs(Y) = u + t·v (exact for each u; Ts^v for V), and the
  test's bound over blocks of consecutive abs(Y) (γ is monotone on each side of its minimum:
  within a block, ⌊γ⌋ and the range of the fractional part bound each term, whose pieces are
  monotone or linear in it), up to a V beyond which the remaining mass is bounded in closed form.

Every upper bound of a piece only increases the result (all terms are nonnegative and the renewal
is increasing in R and D), so the result is an upper bound of P[N > B]; it is evaluated in
binary64 at a grid of z and the best grid point taken (any z gives a valid bound), then
multiplied by 1 + 10⁻⁶ for the rounding of the evaluation. tests/privacy/test_work.py checks it
against the measured tails of the reference algorithm.

The budgets used (words per draw, with ε = 1 on [0, 1]): the discrete Laplace of the releases
(t ≥ 1024 grid units) 213, the discrete Gaussian at σ ≈ 1 923 grid units 591 (measured mean
words: 8 and 12.4).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "WORK_FAILURE",
    "gaussian_budget",
    "gaussian_tail",
    "laplace_budget",
    "laplace_range_budget",
    "laplace_tail",
    "lemire_pgf",
]

#: the overrun probability every budget is chosen for, at most 2⁻⁶⁴ per draw
WORK_FAILURE = 2.0**-64
_LIMIT = 2**62
_KT = 48  # Algorithm 1's trials summed exactly; the rest bounded
_SAFETY = 1.0 + 1e-6
_ENUMERATE = 2**16  # a Laplace numerator up to this: every U summed exactly


def lemire_pgf(m: float | np.ndarray, z: float) -> float | np.ndarray:
    """ℓ_m(z): an upper bound of E[z^words] of one uniform draw below m by Lemire's method (the
    number of words is geometric, each rejected with probability below m/2⁶⁴)."""
    p = np.minimum(np.asarray(m, dtype=float) * 2.0**-64, 0.25)
    return (1.0 - p) * z / (1.0 - p * z)


def _k_loop(z: float, gamma_hi: float | np.ndarray, gamma_lo: float | np.ndarray, den: int,
            unit: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(acc, rej): upper bounds of E[z^words; k odd] and E[z^words; k even] of Algorithm 1's loop
    for any γ ∈ [γ_lo, γ_hi] ⊂ [0, 1] (vectorized over the γ's) with the kernel's moduli (den·k,
    or den and k when den·k > 2⁶²). ``unit``: γ = 1, den = 1 (its trial k = 1 reads no word).

    The loop ending at k contributes Π_{j<k} c_j·s_k, c_j = E[z^w; trial j is 1], s_k =
    E[z^w; trial k is 0]: c_j is increasing in γ (taken at γ_hi), s_k is linear in γ (taken at
    the larger end)."""
    ghi = np.atleast_1d(np.asarray(gamma_hi, dtype=float))
    glo = np.atleast_1d(np.asarray(gamma_lo, dtype=float))
    acc = np.zeros_like(ghi)
    rej = np.zeros_like(ghi)
    prod = np.ones_like(ghi)
    for k in range(1, _KT + 1):
        if unit and k == 1:  # Bernoulli(1) reads no word
            continue
        if den * k <= _LIMIT:
            lk = float(lemire_pgf(den * k, z))
            c = lk * ghi / k
            s = lk * np.maximum(1.0 - glo / k, 1.0 - ghi / k)
        else:
            ld, lj = float(lemire_pgf(den, z)), float(lemire_pgf(k, z))
            c = ld * ghi * lj / k
            s = ld * np.maximum((1.0 - glo) + glo * lj * (1.0 - 1.0 / k),
                                (1.0 - ghi) + ghi * lj * (1.0 - 1.0 / k))
        term = prod * s
        if k & 1:
            acc += term
        else:
            rej += term
        prod = prod * c
    # k > _KT: a trial reads at most two words of modulus ≤ 2⁶² (E[z^w] ≤ ℓ_{2⁶²}² = w2), and
    # continues with probability ≤ 1/_KT: the rest is at most prod·w2/(1 − w2/_KT)
    w2 = float(lemire_pgf(_LIMIT, z)) ** 2
    rest = prod * w2 / (1.0 - w2 / _KT)
    return acc + rest, rej + rest


def _unit(z: float) -> tuple[float, float]:
    """(Ts, Tf): E[z^words; 1] and E[z^words; 0] of one Bernoulli(exp(−1)) (bounds)."""
    acc, rej = _k_loop(z, 1.0, 1.0, 1, unit=True)
    return float(acc[0]), float(rej[0])


def _laplace_pgf(z: float, n: int, d: int, n_hi: int | None = None) -> float:
    """An upper bound of E[z^N], N the words of one draw of Lap_ℤ(n/d) (inf if none below).

    ``n_hi`` (> n > 2¹⁶): a bound for every numerator in [n, n_hi] with the same d — each piece
    is monotone in the numerator (Lemire's rejections grow with it: taken at n_hi; the average
    of the first trial, (n + 1)/(2n), and the share of U below d fall with it: taken at n; the
    subtracted (−, 0) mass falls with it: taken at n_hi)."""
    ts, tf = _unit(z)
    if ts >= 1.0:
        return math.inf
    v_pgf = tf / (1.0 - ts)  # V's trials up to the first 0
    n_lemire = n if n_hi is None else n_hi
    if n_hi is None and n <= _ENUMERATE:
        # every U: acc(u), rej(u) of its keep test, and the (−, 0) rejection
        u = np.arange(n, dtype=float)
        lu = float(lemire_pgf(n, z)) if n > 1 else 1.0
        acc, rej = _k_loop(z, u / n, u / n, n)
        acc[0], rej[0] = 1.0, 0.0  # U = 0: kept, no word
        # Y = ⌊(U + nV)/d⌋ = 0 iff V < ⌈(d − U)/n⌉: E[z^w; V below that] = tf(1 − ts^c)/(1 − ts)
        c_u = np.maximum(0.0, np.ceil((d - u) / n))
        small = tf * (1.0 - ts**c_u) / (1.0 - ts)
        r = lu * float(rej.mean()) + 0.5 * z * lu * float((acc * small).mean())
        d_pgf = z * lu * float((acc * (v_pgf - 0.5 * small)).mean())
    else:  # U's average bounded by integrals (Riemann sums of monotone terms)
        ln = float(lemire_pgf(n_lemire, z))
        k = np.arange(1, _KT + 1)
        lam = np.cumprod(lemire_pgf(n_lemire * k.astype(float), z))  # Λ_k = Π_{j≤k} ℓ_{n·j}
        fact = np.array([math.factorial(int(j) - 1) for j in k], dtype=float)
        avg = 1.0 / (k + 1.0)  # the average over U of γ^{k−1}(1 − γ/k), k ≥ 2
        avg[0] = (n + 1) / (2.0 * n)
        terms = lam * avg / fact
        rest = float(lam[-1] * lemire_pgf(n_lemire * (_KT + 1.0), z) ** 2 * 2.0
                     / math.factorial(_KT))
        a_acc = ln * (float(terms[0::2].sum()) + rest)
        a_rej = ln * (float(terms[1::2].sum()) + rest)
        # Y = 0 iff V < c_U = ⌈(d − U)/n⌉, which is c = ⌈d/n⌉ for U < u* = d − (c − 1)·n and
        # c − 1 above: E_U[acc(U)·S(c_U)] ≤ a(u*)·(S(c) − S(c − 1)) + a_acc·S(c − 1), a(u*) the
        # kept attempts with U < u* (the integrals over [0, u*/n]), S(c) = tf(1 − ts^c)/(1 − ts)
        c = -(-d // n)
        g = (d - (c - 1) * n) / n
        m = d - (c - 1) * n
        part = g**k / k - g ** (k + 1.0) / (k * (k + 1.0))
        part[0] = g - m * (m - 1.0) / (2.0 * n * n)
        a_part = ln * (float((lam * part / fact)[0::2].sum()) + rest)

        def s_of(c: int, ts: float, tf: float) -> float:
            return tf * (1.0 - ts**c) / (1.0 - ts)

        r_sign = 0.5 * z * (a_part * (s_of(c, ts, tf) - s_of(c - 1, ts, tf))
                            + a_acc * s_of(c - 1, ts, tf))
        r = a_rej + r_sign
        # success: the kept attempts less the (−, 0) ones, those at least their probability
        # (z^w ≥ 1): U kept with probability e^{−U/n} (mean ≥ 1 − e⁻¹; over U < u*, ≥ 1 − e^{−g})
        # and P[V < c] = 1 − e^{−c}
        g_hi = g if n_hi is None else (d - (c - 1) * n_hi) / n_hi
        lower = 0.0 if g_hi <= 0 else (1.0 - math.exp(-1.0)) * -math.expm1(-(c - 1.0)) + (
            -math.expm1(-g_hi) * (math.exp(-(c - 1.0)) - math.exp(-c)))
        d_pgf = z * (a_acc * v_pgf - 0.5 * lower)
    if r >= 1.0:
        return math.inf
    return d_pgf / (1.0 - r)


_Z_COARSE = 1.0 + np.geomspace(2e-3, 0.6, 14)


def _tail_and_budget(pgf: object, eta: float) -> tuple[int, list[tuple[float, float]]]:
    """The least B with pgf(z)·z^{−(B+1)}·safety ≤ η at one of the z tried, and the tried
    (ln z, ln bound) pairs. Every z gives a valid bound; the best one minimizes
    (ln pgf(z) − ln η)/ln z, a unimodal function of ln z (ln pgf is convex in ln z): a coarse
    grid, then golden-section steps around its best point."""
    points: dict[float, float] = {}

    def ratio(s: float) -> float:
        if s not in points:
            g = pgf(math.exp(s))  # type: ignore[operator]
            points[s] = math.log(g * _SAFETY) if math.isfinite(g) else math.inf
        return (points[s] - math.log(eta)) / s

    coarse = [math.log(float(z)) for z in _Z_COARSE]
    values = [ratio(s) for s in coarse]
    j = int(np.argmin(values))
    if not math.isfinite(values[j]):
        raise ValueError("no bound on the sampler's work: parameters outside its range")
    lo, hi = coarse[max(j - 1, 0)], coarse[min(j + 1, len(coarse) - 1)]
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
    for _ in range(12):
        if ratio(a) <= ratio(b):
            hi, b = b, a
            a = hi - phi * (hi - lo)
        else:
            lo, a = a, b
            b = lo + phi * (hi - lo)
    grid = [(s, lg) for s, lg in points.items() if math.isfinite(lg)]
    need = min((lg - math.log(eta)) / s for s, lg in grid)
    return max(1, math.ceil(need) - 1), grid


def _tail(grid: list[tuple[float, float]], budget: int) -> float:
    return math.exp(min(lg - (budget + 1) * s for s, lg in grid))


@functools.lru_cache(maxsize=256)
def _laplace(n: int, d: int, eta: float) -> tuple[int, tuple[tuple[float, float], ...]]:
    b, grid = _tail_and_budget(lambda z: _laplace_pgf(z, n, d), eta)
    return b, tuple(grid)


def laplace_budget(scale_num: int, scale_den: int, eta: float = WORK_FAILURE) -> int:
    """The least budget B (words per draw of Lap_ℤ(scale_num/scale_den)) with
    :func:`laplace_tail` ≤ η."""
    return _laplace(int(scale_num), int(scale_den), eta)[0]


@functools.lru_cache(maxsize=16)
def laplace_range_budget(num_lo: int, num_hi: int, scale_den: int,
                         eta: float = WORK_FAILURE) -> int:
    """A budget valid for every Lap_ℤ(n/scale_den) with n ∈ [num_lo, num_hi], num_lo > 2¹⁶ and
    num_lo ≥ scale_den (the compiled releases' constant,
    :data:`privenv.privacy.releases.RELEASE_BUDGET`)."""
    if not (_ENUMERATE < num_lo <= num_hi and num_lo >= scale_den):
        raise ValueError("laplace_range_budget needs 2**16 < num_lo <= num_hi, num_lo >= den")
    return _tail_and_budget(lambda z: _laplace_pgf(z, num_lo, scale_den, num_hi), eta)[0]


def laplace_tail(scale_num: int, scale_den: int, budget: int) -> float:
    """An upper bound of P[a draw of Lap_ℤ(scale_num/scale_den) needs more than ``budget``
    words]."""
    return _tail(list(_laplace(int(scale_num), int(scale_den), WORK_FAILURE)[1]), budget)


def _gaussian_pgf(z: float, var_num: int, var_den: int) -> float:
    """An upper bound of E[z^N], N the words of one draw of N_ℤ(0, var_num/var_den) by CKS20's
    Algorithm 3 with t = ⌊σ⌋ + 1 (inf if none below)."""
    t = math.isqrt(var_num // var_den) + 1
    den = 2 * var_num * var_den * t * t
    step = var_den * t
    ts, tf = _unit(z)
    if ts >= 1.0:
        return math.inf
    # the proposal Lap_ℤ(t): acc(u) = E[z^words of U and its test; kept | U = u], exactly per u
    u = np.arange(t, dtype=float)
    if t == 1:
        acc_u, rej_sum, lt = np.ones(1), 0.0, 1.0
    else:
        lt = float(lemire_pgf(t, z))
        acc_u, rej_u = _k_loop(z, u / t, u / t, t)
        acc_u[0] = 1.0  # U = 0: kept, no word
        rej_sum = float(rej_u[1:].sum())
    r_l = lt * rej_sum / t + 0.5 * z * lt * acc_u[0] * tf / t  # U rejected, or (−, 0)
    if r_l >= 1.0:
        return math.inf
    scale = lt * tf * z / (t * (1.0 - r_l))  # × acc(u)·ts^v: E[z^words; |Y| = u + t·v]
    # the test over blocks of consecutive u, for v = 0, 1, … (all at once)
    nb = min(t, 64)
    edges = np.linspace(0, t, nb + 1).astype(np.int64)
    block_acc = np.add.reduceat(acc_u, edges[:-1])
    acc_max = _k_loop(z, 1.0, 0.0, den)
    f_acc_max, f_rej_max = float(acc_max[0][0]), float(acc_max[1][0])
    n_v = min(4000, max(1, math.ceil(math.log(1e-40) / math.log(ts))))
    v = np.repeat(np.arange(n_v, dtype=float), nb)
    lo_y = np.tile(edges[:-1].astype(float), n_v) + t * v
    hi_y = np.tile(edges[1:].astype(float) - 1.0, n_v) + t * v
    g_a = (lo_y * step - var_num) ** 2 / den
    g_b = (hi_y * step - var_num) ** 2 / den
    sigma2 = var_num / var_den
    inside = (lo_y * t <= sigma2) & (sigma2 <= hi_y * t)  # the block holds γ's minimum
    ga = np.maximum(np.where(inside, 0.0, np.minimum(g_a, g_b)) * (1 - 1e-9) - 1e-9, 0.0)
    gb = np.maximum(g_a, g_b) * (1 + 1e-9) + 1e-9
    wa, wb = np.floor(ga), np.floor(gb)
    same = wa == wb
    f_acc, f_rej = _k_loop(z, np.where(same, gb - wa, 1.0), np.where(same, ga - wa, 0.0), den)
    f_acc = np.where(same, f_acc, f_acc_max)
    f_rej = np.where(same, f_rej, f_rej_max)
    b_acc = ts**wa * f_acc
    b_rej = tf * (1.0 - ts**wb) / (1.0 - ts) + ts**wa * f_rej  # ⌊γ⌋ ≤ wb units
    mass = scale * ts**v * np.tile(block_acc, n_v)
    mass[0] -= scale * acc_u[0] * 0.5  # |Y| = 0 has one sign
    total_d = float((mass * b_acc).sum())
    total_r = float((mass * b_rej).sum())
    # v beyond: mass ≤ scale·Σacc·ts^v/(1 − ts), each with acc + rej ≤ the all-γ bound
    rest = scale * float(block_acc.sum()) * ts**n_v / (1.0 - ts) * (
        tf / (1.0 - ts) + f_acc_max + f_rej_max)
    total_d += rest
    total_r += rest
    if total_r >= 1.0:
        return math.inf
    return total_d / (1.0 - total_r)


@functools.lru_cache(maxsize=256)
def _gaussian(var_num: int, var_den: int, eta: float
              ) -> tuple[int, tuple[tuple[float, float], ...]]:
    b, grid = _tail_and_budget(lambda z: _gaussian_pgf(z, var_num, var_den), eta)
    return b, tuple(grid)


def gaussian_budget(var_num: int, var_den: int, eta: float = WORK_FAILURE) -> int:
    """The least budget B (words per draw of N_ℤ(0, var_num/var_den)) with
    :func:`gaussian_tail` ≤ η."""
    return _gaussian(int(var_num), int(var_den), eta)[0]


def gaussian_tail(var_num: int, var_den: int, budget: int) -> float:
    """An upper bound of P[a draw of N_ℤ(0, var_num/var_den) needs more than ``budget``
    words]."""
    return _tail(list(_gaussian(int(var_num), int(var_den), WORK_FAILURE)[1]), budget)
