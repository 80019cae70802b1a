r"""The exact mechanisms' grid and parameters (:mod:`privenv.privacy.exact`).

An exact mechanism releases multiples of a granularity g = 2^j (an exact power of two, so that
x/g and k·g are exact in binary64): :class:`Grid` rounds an input to k = ⌊x/g + ½⌋ exactly and
bounds the grid sensitivity Δ_k of inputs at distance Δ. The noise parameters are exact
rationals in grid units — :class:`DiscreteLaplaceParameters` (Lap_ℤ(t)),
:class:`DiscreteGaussianParameters` (N_ℤ(0, σ²)), :class:`SnappingParameters` (Mironov's λ, B)
— each with its exact guarantee and, for the discrete samplers, the work budget of one draw
(:mod:`privenv.privacy.work`). :func:`discrete_gaussian_delta` is CKS20's exact δ(ε).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privenv._validation import check_epsilon, check_int, check_real

from . import work
from .constant_work import LIMIT

__all__ = [
    "DiscreteGaussianParameters",
    "DiscreteLaplaceParameters",
    "Grid",
    "SnappingParameters",
    "discrete_gaussian_delta",
    "float_up",
    "rational",
]

#: parameter limits (see the overflow bounds in :func:`privenv.privacy.constant_work.cks20_kernel`)
MAX_SCALE = 2**52
_MAX_GAUSS_DEN = 2**62
_MAX_GAUSS_STEP = 2**31


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


def rational(name: str, value: Any, limit: int) -> Fraction:
    """A positive rational (int, Fraction or float, converted exactly) with numerator and
    denominator ≤ ``limit``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating,
                                                         Fraction)):
        raise ValueError(f"{name} must be a positive rational (int, Fraction or float), "
                         f"got {value!r}")
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite positive rational, got {value!r}")
    if isinstance(value, (int, np.integer)):
        q = Fraction(int(value))
    else:  # a float or a numpy float (converted exactly), or a Fraction
        q = Fraction(value if isinstance(value, Fraction) else float(value))
    if q <= 0 or q.numerator > limit or q.denominator > limit:
        raise ValueError(f"{name} must be a positive rational with numerator and denominator "
                         f"at most 2**{limit.bit_length() - 1}, got {value!r}")
    return q



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
            check_int(name, getattr(self, name), low=1, high=MAX_SCALE)
        check_int("sensitivity_grid", self.sensitivity_grid, low=1, high=MAX_SCALE)

    @classmethod
    def calibrate(cls, epsilon: float, grid: Grid, sensitivity_grid: int
                  ) -> DiscreteLaplaceParameters:
        """The smallest t = m/2²⁰ with t ≥ Δ_k/ε (so the exact ε = Δ_k/t ≤ ε)."""
        epsilon = check_epsilon(epsilon)
        t = Fraction(math.ceil(Fraction(sensitivity_grid) * 2**20 / Fraction(epsilon)), 2**20)
        if t.numerator > MAX_SCALE:
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

    @property
    def budget(self) -> int:
        """The words (and iterations) of one draw, the least budget whose overrun probability
        is at most 2⁻⁶⁴ (:func:`privenv.privacy.work.laplace_budget`)."""
        return work.laplace_budget(self.scale_num, self.scale_den)


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
        q = rational("sigma2", sigma2, LIMIT)
        return cls(q.numerator, q.denominator)

    @property
    def variance(self) -> Fraction:
        return Fraction(self.var_num, self.var_den)

    @property
    def t(self) -> int:
        """⌊σ⌋ + 1 = isqrt(⌊σ²⌋) + 1."""
        return math.isqrt(self.var_num // self.var_den) + 1

    @property
    def budget(self) -> int:
        """The words (and iterations) of one draw, the least budget whose overrun probability
        is at most 2⁻⁶⁴ (:func:`privenv.privacy.work.gaussian_budget`)."""
        return work.gaussian_budget(self.var_num, self.var_den)


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
