"""Audits of the privacy layer's noise samplers: the float Laplace, Gaussian and randomized
response mechanisms (:mod:`privenv.privacy.mechanisms`), the exact samplers
(:mod:`privenv.privacy.exact`), and the exact-preimage audits of both
(:mod:`privenv.privacy.preimage`). Registered in :data:`CASES`, run by the harness
(:mod:`privenv.privacy.harness`) and by ``privenv audit``.

Exact-preimage audits (the ``preimage-*`` cases): for each release of D, whether it is provably
unreachable from D′ (and the other way round). An unreachable release is an event of
probability 0 under D′, so any of them refutes pure DP and their Clopper–Pearson lower frequency
bounds δ. The float samplers are flagged — an expected, documented finding (Mironov 2012),
reported as :data:`~privenv.privacy.harness.FLOAT_VIOLATION` without failing the run — and the
exact samplers of :mod:`privenv.privacy.exact` must show none; each exact case has a mutant (a
float operation after the exact noise) the audit must catch. Their records carry the counts in
``details``. The exact-sampler and preimage cases take about 25 s together at quick size (one
process, measured at load average 15).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from privenv.privacy import audit
from privenv.privacy import mechanisms as mech
from privenv.privacy.harness import ALPHA, AuditCase, Measurement, Sampler, register

__all__ = ["CASES", "float_laplace_noise", "float_reachable", "preimage_measurement"]

#: the cases of this module, in report order
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = {}


# =================================================================================================
# Scalar mechanisms: Laplace, Gaussian, randomized response (threshold events)
# =================================================================================================


#: samples of a scalar release drawn at once (the counts are summed over chunks)
SAMPLE_CHUNK = 1_000_000


def _scalar_audit(release: Callable[[float, np.random.Generator, int], np.ndarray], n: int,
                  seed: int, thresholds: np.ndarray, delta: float,
                  chunk: int | None = SAMPLE_CHUNK) -> audit.AuditResult:
    """``release(value, rng, k)`` on D = 0 (n samples), then D′ = 1 (n samples), Δ = 1;
    threshold events. The samples are drawn and counted ``chunk`` at a time: a float release
    draws its noise value by value, so the counts are those of one draw of n. (An exact
    sampler reads a block of words sized by its n and skips the rest: ``chunk=None`` keeps its
    one draw of n, in bounded memory, see :mod:`privenv.privacy.exact`.)"""
    g = np.random.default_rng(seed)
    t = audit.check_thresholds(thresholds)
    step = n if chunk is None else chunk

    def above(value: float) -> np.ndarray:
        total = np.zeros(t.size, dtype=np.int64)
        for lo in range(0, n, step):
            total += audit.count_above(release(value, g, min(step, n - lo)), t)
        return total

    above_d = above(0.0)
    return audit.threshold_counts_lower_bound(above_d, n, above(1.0), n, delta=delta,
                                              alpha=ALPHA)


def _laplace(mutation: str | None, n: int, seed: int) -> Measurement:
    eps = 1.0
    b = mech.laplace_scale(eps, sensitivity=0.5 if mutation == "sensitivity halved" else 1.0)
    b *= 0.8 if mutation == "noise x 0.8" else 1.0
    res = _scalar_audit(lambda v, g, k: v + mech.laplace(b, g, k), n, seed,
                        np.linspace(-3.0, 4.0, 15), 0.0)
    return Measurement(res, eps, 0.0)


register(AuditCase(
    "laplace", "Laplace(Δ/ε), ε = 1, inputs 0 vs 1; events {y > t}, {y ≤ t}, 15 thresholds "
    "(true ε: correct 1, noise × 0.8 → 1.25, sensitivity halved → 2)",
    _laplace, 1_000_000, ("noise x 0.8", "sensitivity halved"), power_floor=0.95), CASES)


def _gaussian(mutation: str | None, n: int, seed: int) -> Measurement:
    eps, delta = 1.0, 1e-2
    sigma = mech.gaussian_sigma_analytic(eps, delta,
                                         0.5 if mutation == "sensitivity halved" else 1.0)
    sigma *= 0.8 if mutation == "noise x 0.8" else 1.0
    res = _scalar_audit(lambda v, g, k: v + mech.gaussian(sigma, g, k), n, seed,
                        np.linspace(-1.0, 6.0, 15), delta)
    return Measurement(res, eps, delta)


register(AuditCase(
    "gaussian", "analytic Gaussian at (ε, δ) = (1, 1e-2), inputs 0 vs 1, δ-adjusted threshold "
    "events (optimal for a Gaussian shift: Neyman–Pearson); noise × 0.8 has true ε ≈ 1.35",
    _gaussian, 1_000_000, ("noise x 0.8", "sensitivity halved"), power_floor=0.85), CASES)


def _rr(mutation: str | None, n: int, seed: int) -> Measurement:
    eps = math.log(3)
    used = eps + 0.1 if mutation == "epsilon + 0.1" else eps
    res = _scalar_audit(lambda v, g, k: mech.randomized_response(np.full(k, v), used, g), n,
                        seed, np.array([0.5]), 0.0)
    return Measurement(res, eps, 0.0)


register(AuditCase(
    "randomized-response", "randomized response, ε = ln 3, rewards 0 vs 1, event {y = 1}; "
    "the mutant flips with the probability of ε + 0.1", _rr, 1_000_000, ("epsilon + 0.1",),
    power_floor=1.07), CASES)


# =================================================================================================
# Exact samplers (privenv.privacy.exact): statistical audits like the float cases above, and
# exact-preimage audits of the float and the exact samplers (privenv.privacy.preimage)
# =================================================================================================

_SNAP_THRESHOLDS = np.arange(-5.0, 6.0, 2.0)  # between the multiples of Λ = 2


def _laplace_exact_mechanism(mutation: str | None, bounds: tuple[float, float] | None = None,
                             sampler: str = "exact") -> Any:
    """LaplaceMechanism(ε = 1, Δ = 1) with ``sampler`` and its mutants: the scale × 0.8 (× 0.5
    for snapping), the grid sensitivity halved."""
    from privenv.privacy import exact

    m = exact.LaplaceMechanism(epsilon=1.0, sensitivity=None if bounds else 1.0, bounds=bounds,
                               sampler=sampler)
    p = m.params
    if isinstance(p, exact.DiscreteLaplaceParameters):
        if mutation == "noise x 0.8":
            t = p.scale * Fraction(4, 5)
            m.params = replace(p, scale_num=t.numerator, scale_den=t.denominator)
        elif mutation == "sensitivity halved":
            m.params = exact.DiscreteLaplaceParameters.calibrate(1.0, p.grid,
                                                                 p.sensitivity_grid // 2)
    elif isinstance(p, exact.SnappingParameters) and mutation == "noise x 0.5":
        m.params = replace(p, lam=p.lam / 2)
    return m


def _laplace_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    m = _laplace_exact_mechanism(mutation)
    res = _scalar_audit(lambda v, g, k: m.release(np.full(k, v), g), n, seed,
                        np.linspace(-3.0, 4.0, 15), 0.0, chunk=None)
    return Measurement(res, _laplace_exact_mechanism(None).guarantee.epsilon, 0.0)


register(AuditCase(
    "laplace-exact", "the exact Laplace mechanism (input on the grid 2⁻¹⁰ℤ + discrete Laplace of "
    "1024 grid units, CKS20), ε = 1 exactly, inputs 0 vs 1; the events of 'laplace'; mutants: "
    "scale × 0.8, grid sensitivity halved", _laplace_exact, 1_000_000,
    ("noise x 0.8", "sensitivity halved"), power_floor=0.95), CASES)


def _gaussian_exact_mechanism(mutation: str | None) -> Any:
    from privenv.privacy import exact

    m = exact.GaussianMechanism(epsilon=1.0, delta=1e-2, sensitivity=1.0, sampler="exact")
    if mutation == "noise x 0.8":
        v = m.discrete_params.variance * Fraction(16, 25)
        m.params = exact.DiscreteGaussianParameters(v.numerator, v.denominator)
    elif mutation == "sensitivity halved":
        m.params = m._calibrate(m.sensitivity_grid // 2)
    return m


def _gaussian_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    m = _gaussian_exact_mechanism(mutation)
    g = _gaussian_exact_mechanism(None).guarantee
    res = _scalar_audit(lambda v, gen, k: m.release(np.full(k, v), gen), n, seed,
                        np.linspace(-1.0, 6.0, 15), g.delta, chunk=None)
    return Measurement(res, g.epsilon, g.delta)


register(AuditCase(
    "gaussian-exact", "the exact Gaussian mechanism (grid 2⁻¹⁰ℤ, discrete Gaussian with the "
    "smallest σ² whose exact δ(1) ≤ 1e-2, CKS20), inputs 0 vs 1, the events of 'gaussian'; "
    "mutants: σ × 0.8, grid sensitivity halved", _gaussian_exact, 1_000_000,
    ("noise x 0.8", "sensitivity halved"), power_floor=0.85), CASES)


def _snapping(mutation: str | None, n: int, seed: int) -> Measurement:
    m = _laplace_exact_mechanism(mutation, (0.0, 1.0), "snapping")
    res = _scalar_audit(lambda v, g, k: m.release(np.full(k, v), g), n, seed,
                        _SNAP_THRESHOLDS, 0.0, chunk=None)
    return Measurement(res, _laplace_exact_mechanism(None, (0.0, 1.0), "snapping")
                       .guarantee.epsilon, 0.0)


register(AuditCase(
    "laplace-snapping", "Mironov's snapping mechanism at ε = 1 (λ = 1 + 2⁻⁴⁹B, Λ = 2, "
    "B = 1 + 16λ), range (0, 1), inputs 0 vs 1; events {y > t} between multiples of Λ (the "
    "event {y ≥ 2} has log-ratio exactly 1); mutant: λ × 0.5", _snapping, 1_000_000,
    ("noise x 0.5",), power_floor=0.95), CASES)


# -- exact preimage audits ----------------------------------------------------------------------

_PRE_INPUTS = (0.0, 1.0)  # the float samplers: LaplaceRandomizer(ε = 1, range (0, 1))'s pair
_PRE_EXACT_INPUTS = (0.0, 1.0 / 3.0)  # the exact samplers: one input off the grid


def preimage_measurement(unreachable: tuple[np.ndarray, np.ndarray], epsilon: float,
                          delta: float, search: str, undecided: int = 0) -> Measurement:
    """unreachable[0]: releases of D provably impossible from D′ (unreachable[1] the reverse).
    Each is an event E with P_D′(E) = 0: with the one-sided Clopper–Pearson lower bound p_lo of
    P_D(E) at α/2, (ε, δ)-DP fails for every ε as soon as p_lo > δ (ε lower bound +inf)."""
    k = np.array([int(u.sum()) for u in unreachable])
    n = np.array([u.size for u in unreachable])
    p_lo = audit.clopper_pearson_lower(k, n, ALPHA / 2)
    j = int(np.argmax(p_lo))
    eps_lb = math.inf if p_lo[j] - delta > 0 else -math.inf
    res = audit.AuditResult(eps_lb, j, ("D>D'", "D'>D")[j], float(p_lo[j]), 0.0, 2, ALPHA)
    details = {"unreachable_d": int(k[0]), "unreachable_dprime": int(k[1]),
               "fraction_d": float(k[0] / n[0]), "fraction_dprime": float(k[1] / n[1]),
               "delta_lower_bound": float(p_lo.max()), "undecided": undecided,
               "search": search}
    return Measurement(res, epsilon, delta, details)


def float_reachable(y: np.ndarray, x: float, transform: Callable | None) -> np.ndarray:
    """Whether x ⊕ noise = y for some noise value of the float sampler ``transform`` (of numpy's
    uniforms; ``None``: any double at all — the addition stage alone, a lower bound on the
    unreachable set for samplers without a monotone transform)."""
    from privenv.privacy import preimage

    lo, hi, ok = preimage.addition_preimage(x, y)
    if transform is None:
        return ok
    hit = ok.copy()
    hit[ok] = preimage.uniform_grid_hits(transform, lo[ok], hi[ok])
    return hit


_PRE_SIGMA = mech.gaussian_sigma_analytic(1.0, 1e-2, 1.0)


def float_laplace_noise(u: np.ndarray) -> np.ndarray:
    """The float Laplace noise of scale 1 from numpy's uniforms ``u`` (the transform whose
    support the preimage search bisects)."""
    return mech.laplace_from_uniform(u, 1.0)


def _float_gaussian_noise(u: np.ndarray) -> np.ndarray:
    return mech.gaussian_from_uniform(u, _PRE_SIGMA)


def _preimage_float(kind: str) -> Sampler:
    """Float Laplace (b = 1, ε = 1) or Gaussian (analytic σ at (1, 1e-2)) noise on inputs 0 and
    1: by its uniform transform (full search) or, ``"ziggurat"``, by numpy's standard normals
    (the addition stage only)."""
    transform = float_laplace_noise if kind == "laplace" else _float_gaussian_noise
    eps, delta = (1.0, 0.0) if kind == "laplace" else (1.0, 1e-2)

    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        g = np.random.default_rng(seed)
        x0, x1 = _PRE_INPUTS
        if kind == "ziggurat":
            y0, y1 = x0 + mech.gaussian(_PRE_SIGMA, g, n), x1 + mech.gaussian(_PRE_SIGMA, g, n)
            support, search = None, "addition only (a lower bound)"
        else:
            y0, y1 = x0 + transform(g.random(n)), x1 + transform(g.random(n))
            support = transform
            search = "addition and the sampler's support (bisection on numpy's uniform grid)"
        return preimage_measurement((~float_reachable(y0, x1, support),
                                      ~float_reachable(y1, x0, support)), eps, delta, search)
    return sample


register(AuditCase(
    "preimage-laplace-float", "exact preimage search of the float Laplace release x + "
    "laplace_from_uniform(u, b = 1) (LaplaceRandomizer(ε = 1, range (0, 1))), inputs 0 vs 1: "
    "releases of one input that no uniform on numpy's 2⁻⁵³ grid maps to from the other — not DP "
    "in binary64 (Mironov 2012), expected", _preimage_float("laplace"), 20_000,
    float_sampler=True), CASES)
register(AuditCase(
    "preimage-gaussian-float", "exact preimage search of the float Gaussian x + "
    "gaussian_from_uniform(u, σ) (inverse CDF on numpy's grid), σ analytic at (1, 1e-2), inputs "
    "0 vs 1 — not DP in binary64, expected", _preimage_float("gaussian"), 20_000,
    float_sampler=True), CASES)
register(AuditCase(
    "preimage-gaussian-float-ziggurat", "the float Gaussian x + σ·standard_normal (numpy's "
    "ziggurat, as GaussianRandomizer), σ as above, inputs 0 vs 1: releases that x ⊕ n cannot "
    "produce for ANY double n (the addition stage alone: a lower bound) — expected",
    _preimage_float("ziggurat"), 20_000, float_sampler=True), CASES)


def _preimage_exact(kind: str) -> Sampler:
    """The exact mechanism's releases are multiples of its grid g, each reachable from every
    input (full support on ℤ); the mutant adds the raw input in binary64 after exact grid noise,
    fl(x + Z·g), reachable from x′ iff [n_lo, n_hi] of the addition contains a multiple of g."""

    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from privenv.privacy import exact, preimage

        m: exact.LaplaceMechanism | exact.GaussianMechanism
        if kind == "laplace":
            m = exact.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
            lap = m.discrete_params
            grid, draw = lap.grid, lambda k, g: exact.discrete_laplace(lap.scale, g, k)
        else:
            m = exact.GaussianMechanism(epsilon=1.0, delta=1e-2, bounds=(0.0, 1.0),
                                        sampler="exact")
            gauss = m.discrete_params
            grid, draw = m.exact_grid, lambda k, g: exact.discrete_gaussian(gauss.variance, g, k)
        step = grid.granularity
        rng = np.random.default_rng(seed)
        x0, x1 = _PRE_EXACT_INPUTS
        if mutation is None:
            ys = [m.release(np.full(n, x), rng) for x in (x0, x1)]
            unreachable = (~preimage.on_grid(ys[0], step), ~preimage.on_grid(ys[1], step))
        else:  # "float addition": x + Z·g in binary64, the input never rounded to the grid
            ys = [x + draw(n, rng).astype(float) * step for x in (x0, x1)]

            def reach(y: np.ndarray, x: float) -> np.ndarray:
                lo, hi, ok = preimage.addition_preimage(x, y)
                return ok & preimage.grid_hits(lo, hi, step)

            unreachable = (~reach(ys[0], x1), ~reach(ys[1], x0))
        g = m.guarantee
        return preimage_measurement(unreachable, g.epsilon, g.delta,
                                     "support: the grid g·ℤ (exact)" if mutation is None else
                                     "addition and the grid support (exact)")
    return sample


register(AuditCase(
    "preimage-laplace-exact", "exact preimage search of the exact Laplace mechanism (ε = 1, "
    "range (0, 1), grid 2⁻¹⁰ℤ), inputs 0 vs 1/3: every release is a grid point, reachable from "
    "both; mutant: exact noise added to the raw input in binary64", _preimage_exact("laplace"),
    20_000, ("float addition",)), CASES)
register(AuditCase(
    "preimage-gaussian-exact", "exact preimage search of the exact Gaussian mechanism at "
    "(1, 1e-2), range (0, 1), inputs 0 vs 1/3; mutant: exact noise added to the raw input in "
    "binary64", _preimage_exact("gaussian"), 20_000, ("float addition",)), CASES)


def _preimage_snapping(mutation: str | None, n: int, seed: int) -> Measurement:
    """Snapping's releases must be multiples of Λ in [−B, B] or ±B (else provably unreachable);
    each is then shown reachable from the other input by a witness (U*, S). The mutant skips the
    final rounding to Λ: its releases clamp_B(x ⊕ S⊗λ⊗LN(U*)) are checked by the addition stage
    alone."""
    from privenv.privacy import exact, preimage

    m = exact.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="snapping")
    p = m.snapping_params
    rng = np.random.default_rng(seed)
    x0, x1 = _PRE_EXACT_INPUTS
    undecided = 0
    unreachable = []
    if mutation is None:
        ys = [m.release(np.full(n, x), rng) for x in (x0, x1)]
        for y, other in ((ys[0], x1), (ys[1], x0)):
            support = (preimage.on_grid(y, p.lam_pow2) & (np.abs(y) <= p.bound)) | (
                np.abs(y) == p.bound)
            witness = support & preimage.snapping_witness(y, other, p)
            undecided += int(np.count_nonzero(support & ~witness))
            unreachable.append(~support)
    else:  # "no final rounding"
        for x, other in ((x0, x1), (x1, x0)):
            raw = _snap_unrounded(rng, n, x, p)
            clamped = np.abs(raw) == p.bound
            unreachable.append(~(float_reachable(raw, min(max(other, -p.bound), p.bound), None)
                                 | clamped))
    return preimage_measurement((unreachable[0], unreachable[1]), m.guarantee.epsilon, 0.0,
                                 "support: multiples of Λ, witnesses (U*, S)" if mutation is None
                                 else "addition only (a lower bound)", undecided)


def _snap_unrounded(rng: np.random.Generator, n: int, x: float, p: Any) -> np.ndarray:
    """The snapping mutant without the rounding to Λ: clamp_B(clamp_B(x) ⊕ S⊗λ⊗LN(U*)), with U*
    and S drawn as the sampler draws them."""
    from privenv.privacy import exact

    u, s = exact.uniform_doubles(rng, n)
    xc = min(max(x, -p.bound), p.bound)
    noise = p.lam * np.log(u)
    return np.clip(xc + np.where(s == 1, -noise, noise), -p.bound, p.bound)


register(AuditCase(
    "preimage-snapping", "exact preimage search of Mironov's snapping mechanism (ε = 1, range "
    "(0, 1), Λ = 2), inputs 0 vs 1/3: releases on the Λ-grid, each with a witness from the other "
    "input; mutant: no final rounding to Λ", _preimage_snapping, 20_000,
    ("no final rounding",)), CASES)

