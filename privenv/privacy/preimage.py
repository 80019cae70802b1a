"""Exact preimage search: which released doubles a mechanism can produce from a given input.

A statistical audit bins the outputs and cannot see a floating-point leak. This one looks at each
released double y and decides, exactly, whether the mechanism could have produced y from the
*other* input: a release of D that is impossible from D′ belongs to an event E with P_D′(E) = 0,
so pure DP is violated outright and (ε, δ)-DP needs δ ≥ P_D(E) (Mironov 2012, "On significance
of the least significant bits for differential privacy", CCS, §4). The search has two stages.

1. The addition (:func:`addition_preimage`). A release y = x ⊕ n (binary64 addition) of input x
   and noise n: fl(x + n) is non-decreasing in n (IEEE addition is correctly rounded), so the
   doubles n with fl(x + n) = y form an interval [n_lo, n_hi] of doubles, found by bisection over
   the ordered bit patterns of the doubles (64 steps, exact). If it is empty, *no* noise sampler
   whatsoever can produce y from x: a proof that needs no assumption at all (e.g. from x = 1 every
   release in (−½, ½) is a multiple of 2⁻⁵³).
2. The sampler's support. Float samplers that transform a uniform u = k·2⁻⁵³ on numpy's grid
   (:func:`privenv.privacy.mechanisms.laplace_from_uniform`, ``gaussian_from_uniform``) are
   non-decreasing in k: the inverse CDF is increasing, the cell-centre map of u is increasing on
   each half, and the sign flip at u = ½ keeps the order. So the first k with noise(k) ≥ n_lo is
   found by bisection (53 steps), and y is reachable iff some k near it gives noise(k) ≤ n_hi.
   The one assumption: the library's log / ndtri evaluated on the grid may deviate from exact
   monotonicity only within a few grid points. Consecutive grid points are ≥ 2 ulps apart in
   log/ndtri space (the step of ln(2t) is 2⁻⁵³/t at the cell tail t, of Φ⁻¹ it is 2⁻⁵³/φ), so an
   evaluation error of at most A ulps can only displace a hit by ≤ A/2 + 1 grid points; the
   search checks every grid point within ``window`` = 8 of the bisection point, which covers
   A ≤ 14 ulps (glibc's log and SciPy's ndtri are within a few ulps). Noise on a grid g·ℤ
   (:func:`grid_hits`) needs no assumption: [n_lo, n_hi] contains a multiple of g or not.

The exact samplers (:mod:`privenv.privacy.exact`) release (k + Z)·g with Z of full support on ℤ:
every grid point is reachable from every input (:func:`on_grid`); snapping's reachability is shown
by an explicit witness (U*, S), evaluated by the sampler's own code (:func:`snapping_witness`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from privenv._jit import jit

from . import exact

__all__ = [
    "addition_preimage",
    "from_key",
    "grid_hits",
    "monotone_hits",
    "on_grid",
    "ordered_key",
    "snapping_witness",
    "uniform_grid_hits",
]

_SIGN = np.int64(-(2**63))
_MAX_KEY = int(np.float64(np.finfo(float).max).view(np.int64))


def ordered_key(x: np.ndarray) -> np.ndarray:
    """int64 keys ordered like the doubles (−0.0 just below +0.0); NaN is not allowed."""
    b = np.asarray(x, dtype=float).view(np.int64)
    return np.where(b >= 0, b, -(b & ~_SIGN) - 1)


def from_key(k: np.ndarray) -> np.ndarray:
    """The doubles of :func:`ordered_key`."""
    k = np.asarray(k, dtype=np.int64)
    return np.where(k >= 0, k, (-(k + 1)) | _SIGN).view(np.float64)


def _first_key(pred: Callable[[np.ndarray], np.ndarray], n: int) -> np.ndarray:
    """For each of n problems, the smallest key K of a finite double with pred(K) true, where
    pred is monotone in K (false … false true … true); ``_MAX_KEY + 1`` if never true."""
    lo = np.full(n, -_MAX_KEY - 2, dtype=np.int64)  # pred(lo) false (virtual)
    hi = np.full(n, _MAX_KEY + 1, dtype=np.int64)  # pred(hi) true (virtual)
    while True:
        open_ = hi > lo + 1
        if not open_.any():
            return hi
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # ⌊(lo + hi)/2⌋ without overflow
        ok = pred(mid)
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid, lo)


def addition_preimage(x: np.ndarray | float, y: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The doubles n with fl(x + n) = y, as an interval [n_lo, n_hi], and whether it is non-empty.

    Args:
        x: the input(s) (broadcast with ``y``).
        y: released doubles (finite).

    Returns:
        (n_lo, n_hi, nonempty); n_lo, n_hi are meaningful where ``nonempty``.
    """
    y = np.asarray(y, dtype=float).ravel()
    x = np.broadcast_to(np.asarray(x, dtype=float), y.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        k_lo = _first_key(lambda k: x + from_key(k) >= y, y.size)
        k_above = _first_key(lambda k: x + from_key(k) > y, y.size)
    k_hi = k_above - 1
    inside = (k_lo <= _MAX_KEY) & (k_lo <= k_hi)
    n_lo = from_key(np.clip(k_lo, -_MAX_KEY - 1, _MAX_KEY))
    n_hi = from_key(np.clip(k_hi, -_MAX_KEY - 1, _MAX_KEY))
    with np.errstate(over="ignore"):
        nonempty = inside & (x + n_lo == y)
    return n_lo, n_hi, nonempty


def monotone_hits(h: Callable[[np.ndarray], np.ndarray], m_max: int, n_lo: np.ndarray,
                  n_hi: np.ndarray, *, window: int = 8) -> np.ndarray:
    """Whether some index m ∈ [0, m_max) has n_lo ≤ h(m) ≤ n_hi, for h non-decreasing in m (up
    to the local deviations discussed in the module docstring): bisection for the first m with
    h(m) ≥ n_lo, then every m within ``window`` of it is checked exactly."""
    n_lo, n_hi = np.asarray(n_lo, dtype=float), np.asarray(n_hi, dtype=float)
    lo = np.full(n_lo.size, -1, dtype=np.int64)
    hi = np.full(n_lo.size, m_max, dtype=np.int64)
    while True:
        open_ = hi - lo > 1
        if not open_.any():
            break
        mid = np.clip(lo + (hi - lo) // 2, 0, m_max - 1)
        ok = h(mid) >= n_lo
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid, lo)
    hit = np.zeros(n_lo.size, dtype=bool)
    for d in range(-window, window + 1):
        m = np.clip(hi + d, 0, m_max - 1)
        v = h(m)
        hit |= (v >= n_lo) & (v <= n_hi)
    return hit


def uniform_grid_hits(transform: Callable[[np.ndarray], np.ndarray], n_lo: np.ndarray,
                      n_hi: np.ndarray) -> np.ndarray:
    """:func:`monotone_hits` for a noise transform of numpy's uniforms u = k·2⁻⁵³, k < 2⁵³."""
    return monotone_hits(lambda k: transform(k.astype(float) * 2.0**-53), 2**53, n_lo, n_hi)


def grid_hits(n_lo: np.ndarray, n_hi: np.ndarray, granularity: float) -> np.ndarray:
    """Whether [n_lo, n_hi] contains a multiple of ``granularity`` (a power of two: exact)."""
    return np.ceil(np.asarray(n_lo) / granularity) <= np.floor(np.asarray(n_hi) / granularity)


def on_grid(y: np.ndarray, granularity: float) -> np.ndarray:
    """Whether each y is a multiple k·g of the grid (every such value is reachable from every
    input under an exact sampler: the discrete Laplace and Gaussian have full support on ℤ)."""
    v = np.asarray(y, dtype=float) / granularity
    return np.isfinite(v) & (np.floor(v) == v)


@jit(error_model="python", allocates=True)
def _snapping_witness(y: np.ndarray, x: float, lam: float, bound: float, lam_pow2: float,
                      tries: int) -> np.ndarray:
    out = np.zeros(y.shape[0], dtype=np.bool_)
    xc = min(max(x, -bound), bound)
    for i in range(y.shape[0]):
        c = y[i] - xc
        if y[i] >= bound:
            c += lam_pow2
        elif y[i] <= -bound:
            c -= lam_pow2
        u0 = np.exp(-abs(c) / lam)
        if u0 >= 1.0:
            u0 = np.nextafter(1.0, 0.0)
        if u0 <= 0.0:
            continue
        for sign in (1 if c > 0 else 0, 0 if c > 0 else 1):
            u = u0
            for _ in range(tries):
                if 0.0 < u < 1.0:
                    v, certified = exact.snapping_value(x, u, sign, lam, bound, lam_pow2)
                    if certified and v == y[i]:
                        out[i] = True
                        break
                u = np.nextafter(u, 1.0)
            u = u0
            for _ in range(tries):
                u = np.nextafter(u, 0.0)
                if 0.0 < u < 1.0:
                    v, certified = exact.snapping_value(x, u, sign, lam, bound, lam_pow2)
                    if certified and v == y[i]:
                        out[i] = True
                        break
            if out[i]:
                break
    return out


def snapping_witness(y: np.ndarray, x: float, params: exact.SnappingParameters,
                     tries: int = 16) -> np.ndarray:
    """Whether a witness (U*, S) is found mapping input x to each release y under Mironov's
    snapping mechanism: U* near exp(−|y − x|/λ) (and ``tries`` neighbouring doubles each way),
    evaluated by the sampler's own certified :func:`privenv.privacy.exact.snapping_value`. Every
    double of (0, 1) has positive probability under U*, so a witness proves y reachable from x; no
    witness found is *not* a proof of the opposite."""
    return _snapping_witness(np.ascontiguousarray(y, dtype=float).ravel(), float(x),
                             params.lam, params.bound, params.lam_pow2, tries)
