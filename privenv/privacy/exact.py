r"""Exact DP samplers: discrete Laplace, discrete Gaussian, snapping (no floating-point noise).

privenv's default noise (:mod:`privenv.privacy.mechanisms`) is floating-point: ``x + b·ln(2u)`` in
binary64. Such a release is ε-DP only for idealized real arithmetic. On a real computer the set of
doubles it can output depends on the input (Mironov 2012, "On significance of the least
significant bits for differential privacy", CCS): ``privenv audit --targets preimage-laplace-float``
finds 80 % of the releases of input 1 impossible from input 0. This module gives the choice of
noise whose guarantee holds for the numbers the computer actually produces.

Samplers (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
NeurIPS — "CKS20" below), compiled kernels over a run's stream of uniform 64-bit words
(:mod:`privenv.privacy.constant_work`):

* :func:`discrete_laplace_kernel` — P[Z = z] ∝ exp(−\|z\|/t), t rational (CKS20 Algorithm 2);
* :func:`discrete_gaussian_kernel` — P[Z = z] ∝ exp(−z²/(2σ²)), σ² rational (CKS20 Algorithm 3);
* :func:`snapping_kernel` — Mironov's snapping mechanism for float outputs (Mironov 2012, §5.2).

Every decision of the first two is made by comparing exact uniform integers, obtained by
rejection from uniform 64-bit words (Lemire's method), with integers: rational arithmetic in
int64, and no floating-point value ever decides an outcome. Intermediate integers stay below 2⁶²;
if one would not (for validated parameters this needs an event of probability below e^{−1000}),
the kernel reports :data:`OVERFLOW` instead of returning a wrong value.

Constant work. CKS20's algorithms, written as loops that stop when the value is known, read a
number of words that depends on the value; for a release x + Z that reveals x to whoever sees
the work (Jin et al. 2022, IEEE S&P; the mutant of ``privenv audit --targets side-channel-*``,
:mod:`privenv.privacy.variable_work`). privenv's kernels read exactly a *budget* of words per
draw and run exactly that many iterations, whatever the value (the same value from the same
words as the reference; the budget a function of the public parameters only, chosen by
:mod:`privenv.privacy.work` so that the algorithm needs more — the overrun — with probability at
most :data:`WORK_FAILURE` = 2⁻⁶⁴). An overrun completes the draw with further words, so the
released value keeps its exact law and guarantee; an observer of the work (words read,
iterations, coarse time) gets (ε, δ + (1 + e^ε)·2⁻⁶⁴)-DP per draw. The budgets are about 20 times
the mean work (167 words for the releases' discrete Laplace against 8 on average; about 470 for
the discrete Gaussian against 12.4): the cost of constant work (``benchmarks/samplers.py``).

Streams. A kernel ``kernel(words, cursor, …, budget) -> (value, cursor′)`` is *transactional*:
given fewer than ``budget`` words (or running out in an overrun) it returns ``cursor′ =
EXHAUSTED`` having changed nothing, so a compiled loop can stop, let Python append words to the
buffer, and redo the draw from the same cursor — the same value. Hence a run's draws depend only
on its word stream, never on how it was cut into buffers. :func:`discrete_laplace`,
:func:`discrete_gaussian` and :func:`snap` are the numpy-facing batch forms on a seeded
``numpy.random.Generator`` (:mod:`privenv.privacy.draws`; same seed, same numbers); the releases
of compiled agents, local randomizers and the vector mechanisms are in
:mod:`privenv.privacy.releases`; the grid and the parameters in :mod:`privenv.privacy.grid`. This
module holds the mechanisms with a sampler choice (:class:`LaplaceMechanism`,
:class:`GaussianMechanism`) and re-exports the names of those modules.

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
With the float samplers the guarantee is that of idealized arithmetic only: the low bits of the
released doubles identify inputs (Mironov's attack), so a float release must not be shown to an
adversary. The exact samplers remove that attack: their guarantee holds for the actual output
values, given uniform random words, and their work (words read, iterations) is constant but for
an overrun of probability ≤ 2⁻⁶⁴ per draw. They do not make one iteration constant-time to the
cycle (a branch of the state machine, the platform's logarithm for snapping), nor protect against
a predictable generator (numpy's PCG64 is not a cryptographic generator; a seeded run is
reproducible by anyone who knows the seed) or anything that reads the process memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privenv._validation import check_choice, check_delta, check_epsilon, check_real

from . import mechanisms as mech
from .constant_work import (
    EXHAUSTED,
    LIMIT,
    OVERFLOW,
    UNCERTAIN,
    correctly_rounded_log,
    discrete_gaussian_kernel,
    discrete_laplace_kernel,
    snap_from_log,
    snapping_kernel,
    snapping_value,
)
from .draws import (
    WORD_BLOCK,
    discrete_gaussian,
    discrete_laplace,
    snap,
    snap_uncertain,
    uniform_doubles,
)
from .grid import (
    DiscreteGaussianParameters,
    DiscreteLaplaceParameters,
    Grid,
    SnappingParameters,
    discrete_gaussian_delta,
    float_up,
)
from .releases import (
    ENSURED_PER_BUDGET,
    EPSILON_BITS,
    RELEASE_BUDGET,
    VECTOR_GRID_BITS,
    GaussianCalibration,
    VectorGaussian,
    VectorLaplace,
    calibrate_gaussian,
    count_budget,
    epsilon_denominator,
    epsilon_of_denominator,
    grid_round,
    l1_grid_sensitivity,
    l2_grid_sensitivity,
    laplace_release,
    release_grid,
    run_discrete,
    sampler_guarantee,
    take_discrete_gaussian,
    take_discrete_laplace,
    vector_grid,
)
from .work import WORK_FAILURE

# the public names of the modules this one is split into stay importable from it
__all__ = [
    "ENSURED_PER_BUDGET",
    "EPSILON_BITS",
    "EXHAUSTED",
    "LIMIT",
    "OVERFLOW",
    "RELEASE_BUDGET",
    "SAMPLERS",
    "UNCERTAIN",
    "VECTOR_GRID_BITS",
    "WORD_BLOCK",
    "WORK_FAILURE",
    "calibrate_gaussian",
    "correctly_rounded_log",
    "count_budget",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_kernel",
    "discrete_laplace",
    "discrete_laplace_kernel",
    "DiscreteGaussianParameters",
    "DiscreteLaplaceParameters",
    "epsilon_denominator",
    "epsilon_of_denominator",
    "float_up",
    "GaussianCalibration",
    "GaussianMechanism",
    "Grid",
    "grid_round",
    "l1_grid_sensitivity",
    "l2_grid_sensitivity",
    "laplace_release",
    "LaplaceMechanism",
    "NoiseGuarantee",
    "release_grid",
    "run_discrete",
    "sampler_guarantee",
    "snap",
    "snap_from_log",
    "snap_uncertain",
    "snapping_kernel",
    "snapping_value",
    "SnappingParameters",
    "take_discrete_gaussian",
    "take_discrete_laplace",
    "uniform_doubles",
    "vector_grid",
    "VectorGaussian",
    "VectorLaplace",
]

#: the sampler choices of :class:`LaplaceMechanism` (of GaussianMechanism, "float" and "exact")
SAMPLERS = ("float", "exact", "snapping")


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
        work_budget: the words (and iterations) one draw reads whatever its value (the exact
            samplers; ``None`` for the float ones).
    """

    sampler: str
    epsilon: float
    delta: float
    rho: float | None
    holds_in_floating_point: bool
    statement: str
    epsilon_exact: Fraction | None = None
    work_budget: int | None = None

    @property
    def work_delta(self) -> float:
        """What one release adds to δ for an observer of the sampler's work (words read,
        iterations, time): (1 + e^ε)·2⁻⁶⁴ for a constant-work sampler (its overrun), 0 for the
        float samplers (whose guarantee is that of idealized arithmetic anyway)."""
        if self.work_budget is None:
            return 0.0
        return float_up(Fraction(1 + math.exp(self.epsilon)) * Fraction(WORK_FAILURE)
                        * (1 + Fraction(1, 10**9)))

    def as_dict(self) -> dict[str, Any]:
        """Plain values for results metadata."""
        return {"sampler": self.sampler, "epsilon": self.epsilon, "delta": self.delta,
                "rho": self.rho, "holds_in_floating_point": self.holds_in_floating_point,
                "statement": self.statement, "work_budget": self.work_budget,
                "work_delta": self.work_delta}



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


def _work_text(budget: int) -> str:
    return (f"constant work: {budget} words and iterations per draw, more with probability "
            "≤ 2⁻⁶⁴ (then δ + (1 + e^ε)·2⁻⁶⁴ for an observer of the work)")


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
        sampler: ``"exact"`` (default: these mechanisms release values a caller gives, which
            may be real data) — the input rounded to the grid plus the discrete Laplace (exactly
            ε′-DP, ε′ ≤ ε, see the module docstring); ``"float"`` — binary64 Laplace(Δ/ε)
            (:func:`privenv.privacy.mechanisms.laplace`; ε-DP for idealized arithmetic only);
            ``"snapping"`` — Mironov's snapping mechanism (float output on a grid of Λ).
        granularity: the exact sampler's grid g (a power of two); default 2^(⌊log₂(Δ/ε)⌋ − 10).
        bound: snapping's clamp bound B (default max(\|lo\|, \|hi\|) + 16λ; needs ``bounds``).

    Example:
        >>> m = LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
        >>> m.guarantee.epsilon <= 1.0
        True
    """

    def __init__(self, *, epsilon: float, sensitivity: float | None = None,
                 bounds: tuple[float, float] | None = None, sampler: str = "exact",
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
    def discrete_params(self) -> DiscreteLaplaceParameters:
        """The exact sampler's parameters (``sampler="exact"`` only)."""
        if not isinstance(self.params, DiscreteLaplaceParameters):
            raise ValueError(f"sampler={self.sampler!r} has no discrete Laplace parameters "
                             "(sampler='exact' has)")
        return self.params

    @property
    def snapping_params(self) -> SnappingParameters:
        """The snapping sampler's parameters (``sampler="snapping"`` only)."""
        if not isinstance(self.params, SnappingParameters):
            raise ValueError(f"sampler={self.sampler!r} has no snapping parameters "
                             "(sampler='snapping' has)")
        return self.params

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
                f"{self.epsilon:g}; {_work_text(p.budget)}", p.epsilon_exact, p.budget)
        assert isinstance(p, SnappingParameters)
        return NoiseGuarantee(
            "snapping", float_up(p.epsilon_exact), 0.0, None, True,
            f"{float_up(p.epsilon_exact):.10g}-DP by Mironov 2012 §5.2 (λ = {p.lam:.17g}, "
            f"B = {p.bound:g}, Λ = {p.lam_pow2:g}, sensitivity ≤ {p.sensitivity:g}), LN correctly "
            "rounded by certification; assumes the platform log errs by < 1 ulp; "
            f"{_work_text(2)}",
            p.epsilon_exact, 2)

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
        sampler: ``"exact"`` (default) — the input rounded to the grid plus the discrete
            Gaussian, σ² the smallest calibrated value whose exact δ(ε) ≤ δ (CKS20); ``"float"``
            — binary64 N(0, σ²) with the analytic σ (Balle & Wang 2018; idealized arithmetic
            only).
        granularity: the exact sampler's grid g (a power of two); default 2^(⌊log₂σ⌋ − 10).
        sigma: a fixed σ ≥ the analytic one (e.g. a paper's classical calibration); the exact
            sampler's σ is then the smallest calibrated value ≥ it.
    """

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float | None = None,
                 bounds: tuple[float, float] | None = None, sampler: str = "exact",
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

    @property
    def discrete_params(self) -> DiscreteGaussianParameters:
        """The exact sampler's parameters (``sampler="exact"`` only; its grid is :attr:`grid`)."""
        if self.params is None:
            raise ValueError(f"sampler={self.sampler!r} has no discrete Gaussian parameters "
                             "(sampler='exact' has)")
        return self.params

    @property
    def exact_grid(self) -> Grid:
        """The exact sampler's grid (``sampler="exact"`` only)."""
        if self.grid is None:
            raise ValueError(f"sampler={self.sampler!r} has no grid (sampler='exact' has)")
        return self.grid

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
            f"({self.epsilon:g}, {delta * (1 + 1e-9):.6g})-DP; {_work_text(p.budget)}",
            None, p.budget)

    def release(self, values: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
        """One release per entry of ``values`` (float64, same shape), noise from ``rng``."""
        x = _inputs(values, self.bounds)
        if self.sampler == "float":
            return x + mech.gaussian(self.sigma, rng, x.shape)
        assert self.params is not None and self.grid is not None
        k = self.grid.round(x)
        z = discrete_gaussian(self.params.variance, rng, x.shape)
        return (k + z).astype(float) * self.grid.granularity
