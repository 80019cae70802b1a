r"""Exact releases on a run's word stream: the compiled agents' and randomizers' helpers, and
the vector mechanisms of the linear and federated algorithms.

Every run draws its exact noise from its own stream of 64-bit words (``child(seed, 2)`` of its
noise seed, :class:`privenv.seeding.RunNoise`), each draw over the budget of words of its
parameters (:mod:`privenv.privacy.work`, constant work: :mod:`privenv.privacy.constant_work`), so
run *i* is the same alone, in a batch, step by step or on the compiled fast path.

* Scalar releases inside compiled code: :func:`take_discrete_laplace`,
  :func:`take_discrete_gaussian`, and :func:`laplace_release` — a statistic of sensitivity Δ
  released exactly ε′-DP with ε′ = 2²⁰/q ≤ ε (:func:`epsilon_denominator`); the budget of a
  noisy count (:func:`count_budget`) and the agents' declaration :func:`sampler_guarantee` (their
  sampler records: :mod:`privenv.privacy.samplers`).
* Vector releases over a batch of runs: :func:`run_discrete`, :class:`VectorGaussian` (calibrated
  through zCDP by :func:`calibrate_gaussian`) and :class:`VectorLaplace`, on the grid
  :func:`vector_grid` with the rounding's cost in sensitivity (:func:`l1_grid_sensitivity`,
  :func:`l2_grid_sensitivity`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from privenv import seeding
from privenv._jit import Int, jit
from privenv._validation import check_delta, check_epsilon, check_int, check_real
from privenv.seeding import NoiseView

from .constant_work import EXHAUSTED, discrete_gaussian_kernel, discrete_laplace_kernel
from .draws import discrete_gaussian, discrete_laplace
from .grid import (
    MAX_SCALE,
    DiscreteGaussianParameters,
    DiscreteLaplaceParameters,
    Grid,
    float_up,
)
from .guarantee import PrivacyGuarantee
from .work import laplace_budget

__all__ = [
    "ENSURED_PER_BUDGET",
    "EPSILON_BITS",
    "RELEASE_BUDGET",
    "GaussianCalibration",
    "VECTOR_GRID_BITS",
    "VectorGaussian",
    "VectorLaplace",
    "calibrate_gaussian",
    "count_budget",
    "epsilon_denominator",
    "epsilon_of_denominator",
    "grid_round",
    "l1_grid_sensitivity",
    "l2_grid_sensitivity",
    "laplace_release",
    "release_grid",
    "run_discrete",
    "sampler_guarantee",
    "take_discrete_gaussian",
    "take_discrete_laplace",
    "vector_grid",
]

_LAPLACE, _GAUSSIAN = 0, 1

# =================================================================================================
# Scalar releases inside compiled code (agents, local randomizers)
# =================================================================================================

#: the words (and iterations) of one release by :func:`laplace_release`, the least budget whose
#: overrun probability is at most 2⁻⁶⁴ for every scale it can have — t = Δ_k·q/2²⁰ ≥ 1024 grid
#: units (Δ/g ≥ 1024·ε′ by the grid's choice), numerator Δ_k·q ≤ 2⁵²
#: (:func:`privenv.privacy.work.laplace_range_budget`; tests/privacy/test_work.py recomputes it)
RELEASE_BUDGET = 167
#: the words a compiled agent or randomizer ensures per budget word of a release it may make in a
#: step (``words_per_step``), so that a release never waits in the middle of an algorithm's
#: step: twice the budget, so a release that overruns its budget still finds its words unless it
#: needs more than twice (probability below 2⁻¹²⁸ by the same bounds). Should a release run out,
#: it raises ``RuntimeError``: it never returns a value drawn from anything but the run's own
#: words.
ENSURED_PER_BUDGET = 2
#: the denominator 2²⁰ of the exact samplers' ε′ = 2²⁰/q (:func:`epsilon_denominator`)
EPSILON_BITS = 20


def epsilon_denominator(epsilon: float) -> int:
    """q = ⌈2²⁰/ε⌉, exactly (rational arithmetic on the double ε): an exact release with this q
    is ε′-DP for ε′ = 2²⁰/q ≤ ε (:func:`laplace_release`). ε must be at least 2⁻²⁰."""
    epsilon = check_real("epsilon", epsilon, low=2.0**-EPSILON_BITS, high=math.inf,
                         high_open=True)
    return math.ceil(Fraction(2**EPSILON_BITS) / Fraction(epsilon))


def count_budget(q: int) -> int:
    """The budget of one draw of Lap_ℤ(2q/2²⁰), the noise of a count of L1 sensitivity 2 at
    ε′ = 2²⁰/q (PRAE-C's histogram): :func:`privenv.privacy.work.laplace_budget`."""
    return laplace_budget(2 * q, 2**EPSILON_BITS)


def sampler_guarantee(sampler: str, model: str, epsilon: float, unit: str) -> PrivacyGuarantee:
    """The pure-DP guarantee a private agent declares: ε with the float sampler; with the exact
    one ε′ = 2²⁰/⌈2²⁰/ε⌉ ≤ ε (rounded up to a double), the ε of every exact release it makes,
    drawn with constant work."""
    if sampler == "exact":
        epsilon = float_up(epsilon_of_denominator(epsilon_denominator(epsilon)))
    return PrivacyGuarantee(model, epsilon, 0.0, unit, sampler=sampler)


def epsilon_of_denominator(q: int) -> Fraction:
    """ε′ = 2²⁰/q, exactly: the guarantee of an exact release made with :func:`laplace_release`
    and ``q``."""
    return Fraction(2**EPSILON_BITS, q)


@jit(error_model="python")
def grid_round(x: float, granularity: float) -> Int:
    r"""k = ⌊x/g + ½⌋ exactly, g a power of two (x/g is exact; so is x/g − ⌊x/g⌋). Raises
    ``ValueError`` for NaN or \|x/g\| ≥ 2⁵² (the grid cannot hold x)."""
    y = x / granularity
    if not abs(y) < 2.0**52:
        raise ValueError("an exact release's input is NaN or too large for its grid")
    f = np.floor(y)
    return np.int64(f) + (1 if y - f >= 0.5 else 0)


@jit(error_model="python")
def take_discrete_laplace(noise: NoiseView, run: int, scale_num: int, scale_den: int,
                          budget: int) -> int:
    """The next Lap_ℤ(scale_num/scale_den) draw of ``run`` from its word stream, ``budget``
    words (:func:`~privenv.privacy.constant_work.discrete_laplace_kernel`); the caller has ensured
    :data:`ENSURED_PER_BUDGET` budgets."""
    z, pos = discrete_laplace_kernel(noise.w[run, :noise.w_end[run]], noise.w_pos[run],
                                     scale_num, scale_den, budget)
    if pos < 0:
        raise RuntimeError("an exact Laplace release ran out of words or overflowed")
    noise.w_pos[run] = pos
    return z


@jit(error_model="python")
def take_discrete_gaussian(noise: NoiseView, run: int, var_num: int, var_den: int,
                           t: int, budget: int) -> int:
    """The next N_ℤ(0, var_num/var_den) draw of ``run`` from its word stream, ``budget`` words
    (:func:`~privenv.privacy.constant_work.discrete_gaussian_kernel` with CKS20's t)."""
    z, pos = discrete_gaussian_kernel(noise.w[run, :noise.w_end[run]], noise.w_pos[run],
                                      var_num, var_den, t, budget)
    if pos < 0:
        raise RuntimeError("an exact Gaussian release ran out of words or overflowed")
    noise.w_pos[run] = pos
    return z


@jit
def release_grid(sensitivity: float, q: int) -> tuple[float, Int]:
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
    release is (k + Z)·g with Z ~ Lap_ℤ(t), t = Δ_k·q/2²⁰ grid units and Δ_k = ⌈Δ/g⌉ + 1, drawn
    over :data:`RELEASE_BUDGET` words (constant work). By the
    rounding argument of the module docstring, inputs at distance at most Δ + g give
    \|k − k′\| ≤ Δ_k, so the release is exactly (Δ_k/t = 2²⁰/q)-DP. The one grid unit of slack
    covers the floating-point error of the agent's statistic and of Δ itself (a sum of n values
    errs by about n·2⁻⁵³ of its magnitude, far below g ≈ Δ/(1000ε) for every algorithm here):
    the guarantee assumes that error is below g, nothing else. Δ and x are doubles the agent
    computes the same way in both drivers, so the release is the same step by step or fast.
    """
    g, dk = release_grid(sensitivity, q)
    if dk > MAX_SCALE // q:
        raise ValueError("an exact release's scale is outside the sampler's range")
    k = grid_round(x, g)
    z = take_discrete_laplace(noise, run, dk * q, np.int64(2**EPSILON_BITS), RELEASE_BUDGET)
    return float(k + z) * g


# =================================================================================================
# Vector releases on per-run streams (the linear and federated mechanisms)
# =================================================================================================

#: the bits a vector mechanism's grid lies below its noise scale s, g = 2^(⌊log₂ s⌋ − 14), so that
#: s/g ∈ [2¹⁴, 2¹⁵). Finer than a scalar release's, because rounding m coordinates costs up to
#: one grid unit *each* in sensitivity (√m in L2, m in L1), and 2¹⁴ keeps that below 1 % for the
#: messages here
VECTOR_GRID_BITS = 14


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
                v, p = discrete_laplace_kernel(words[r, :end[r]], pos[r], ints[0], ints[1],
                                               ints[3])
            else:
                v, p = discrete_gaussian_kernel(words[r, :end[r]], pos[r], ints[0], ints[1],
                                                ints[2], ints[3])
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
    own word stream, in order, each over the parameters' budget of words, so they do not depend
    on the batch or on how the words were buffered; with a ``Generator`` (audits over many
    runs), one block of draws from it."""
    runs = np.asarray(runs, dtype=np.int64)
    budget = params.budget
    if isinstance(params, DiscreteLaplaceParameters):
        kind, ints = _LAPLACE, np.array([params.scale_num, params.scale_den, 0, budget],
                                        np.int64)
    else:
        kind, ints = _GAUSSIAN, np.array([params.var_num, params.var_den, params.t, budget],
                                         np.int64)
    if isinstance(noise, np.random.Generator):
        if isinstance(params, DiscreteLaplaceParameters):
            return discrete_laplace(params.scale, noise, (runs.size, n))
        return discrete_gaussian(params.variance, noise, (runs.size, n))
    out = np.empty((runs.size, n), np.int64)
    if out.size == 0:
        return out
    noise.ensure(runs, words=budget * n)
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
        noise.ensure(np.array([r]), words=int(v.w_end[r] - v.w_pos[r]) + budget * (n - j))


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

    params: DiscreteLaplaceParameters | DiscreteGaussianParameters

    if TYPE_CHECKING:  # a field of VectorGaussian, a property of VectorLaplace (its params')
        @property
        def grid(self) -> Grid: ...

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
