"""The privacy audit harness: the machinery of every audit, and the audits of the privacy
layer's own mechanisms.

An audit *case* is the single implementation of one audit:

* the target's declared guarantee (ε, δ) — δ is the point of the privacy profile audited (a
  Gaussian mechanism declares its whole μ-GDP profile ε(δ), and is audited where a sample of our
  size resolves it, e.g. δ = 0.05);
* a batched sampler of the released output on two neighbouring inputs D, D′ (one user's value
  or reward changed), at a given number of samples per side and seed;
* the event family: threshold events {score > t}, {score ≤ t} on scores declared in advance
  (Clopper–Pearson, Bonferroni: :func:`privenv.privacy.audit.threshold_epsilon_lower_bound`), or,
  for multi-dimensional outputs, a linear score fitted and the event chosen on one half of the
  samples and evaluated on the other (:func:`fitted_holdout_lower_bound`);
* named mutations (an injected bug: noise × 0.5, sensitivity halved, a reward reused, node noise
  redrawn, one tree level missing, …), each of which the audit must catch.

This module holds the machinery (:class:`AuditCase`, :func:`run_case`, :class:`AuditRecord`, the
score statistics) and the registry :data:`CASES` of the mechanisms of :mod:`privenv.privacy`:
Laplace, Gaussian, randomized response, the exact samplers, the exact-preimage audits, the tree
mechanism, both Wisharts, P_Vec's node, the shuffler and the federated protocols. It imports no
layer above the privacy layer (``tests/privacy/test_layers.py``). The audits of what those layers
build — the local randomizers of :mod:`privenv.wrappers` and LPLR's users, and every private
agent end to end — are in :mod:`privenv.audits`, whose combined registry
:data:`privenv.audits.CASES` is what ``privenv audit`` runs.

A correct target fails its audit with probability ≤ ``alpha`` (1e-6, family-wise, per case and
variant) for the fixed seed: ε_lb > declared ε *proves* a violation at confidence 1 − α. Sizes:
``"quick"`` (the default test run: tests/test_audits.py, and for the ``preimage-*`` cases and
``fed-linucb-silo`` tests/privacy/test_preimage.py and tests/privacy/test_federated_protocol.py;
about 1.5 minutes on 2 workers) and ``"full"`` (10× the samples per side: sharper bounds). Run
the full audit with ``nice privenv audit --size full`` (add ``--targets a,b`` for a subset,
``--format json`` for records): measured 2026-11-29 on the 2-core development machine under
load (load average ≈ 7), 25 min 50 s wall, 14.3 min CPU (710 s user + 150 s system), peak memory
9.6 GB — the end-to-end agent cases dominate (CTB-TT, central-DP LinUCB ≈ 1.5–2 min per variant,
per-run seeding of 4·10⁵ runs), so expect ≈ 15 min on an idle machine.

A paper's own mechanism that is known not to be DP (the Wishart mechanism of Jiang et al. 2016,
used by paper 4's LPLR-Update and declared not-DP by our agent) is audited too; its violation is
reported with the distinct verdict :data:`PAPER_VIOLATION` and does not fail the run.

Exact-preimage audits (the ``preimage-*`` cases, :mod:`privenv.privacy.preimage`): for each
release of D, whether it is provably unreachable from D′ (and the other way round). An unreachable
release is an event of probability 0 under D′, so any of them refutes pure DP and their
Clopper–Pearson lower frequency bounds δ. The float samplers are flagged — an expected,
documented finding (Mironov 2012), reported as :data:`FLOAT_VIOLATION` without failing the run —
and the exact samplers of :mod:`privenv.privacy.exact` must show none; each exact case has a
mutant (a float operation after the exact noise) the audit must catch. Their records carry the
counts in ``details``. The exact-sampler and preimage cases take about 25 s together at quick
size (one process, measured at load average 15).

Use :func:`run` (records with the keys of the ``privenv audit --format json`` output; every
target: :func:`privenv.audits.run`) and :func:`format_table`.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from privenv._validation import check_choice, check_int
from privenv.privacy import audit
from privenv.privacy import mechanisms as mech
from privenv.privacy.accounting import gaussian_rho, tree_levels

__all__ = [
    "ALPHA",
    "AuditCase",
    "AuditRecord",
    "CASES",
    "DEFAULT_SEED",
    "GAUSS_GRID",
    "GDP_AUDIT_DELTA",
    "LAPLACE_GRID",
    "Measurement",
    "FLOAT_VIOLATION",
    "PAPER_VIOLATION",
    "SIZES",
    "Sampler",
    "best_bound",
    "fed_redraw_randomizer_class",
    "fitted_holdout_lower_bound",
    "format_table",
    "gaussian_projection_bound",
    "laplace_llr_bound",
    "node_keys",
    "register",
    "run",
    "run_case",
    "tree_mutant_classes",
    "tree_s2_sd",
]

#: family-wise false-alarm probability of every audit (per case and variant)
ALPHA = 1e-6
#: the two audit sizes, as the multiplier of each case's quick sample size
SIZES = {"quick": 1, "full": 10}
#: default master seed (each case and variant derives its own stream from it)
DEFAULT_SEED = 20261129

PASS = "pass"
VIOLATION = "VIOLATION"
PAPER_VIOLATION = "violation (paper's mechanism, documented)"
FLOAT_VIOLATION = "violation (float sampler, documented)"
CAUGHT = "mutation caught"
MISSED = "MUTATION MISSED"


@dataclass(frozen=True)
class Measurement:
    """One audit of one variant: the bound, and the guarantee it is compared with."""

    result: audit.AuditResult
    declared_epsilon: float
    declared_delta: float
    details: dict[str, Any] | None = None


#: sampler(mutation or None, samples per side, seed) -> Measurement
Sampler = Callable[[str | None, int, int], Measurement]


@dataclass(frozen=True)
class AuditCase:
    """A registered audit.

    Attributes:
        target: name (``privenv audit --targets``).
        description: what is released, the neighbouring pair, the events.
        sample: ``sample(mutation, n, seed)`` → :class:`Measurement` (``mutation=None``: the
            correct target).
        n_quick: samples (runs) per side at size ``"quick"``.
        mutations: names of the injected bugs the audit must catch.
        power_floor: at quick size the correct target's ε_lb must exceed this (a check that the
            audit has power, not a privacy claim); ``None`` if not checked.
        paper_flawed: the target is a paper's own mechanism known not to be DP (documented).
        float_sampler: the target is a floating-point sampler, known not to be DP in binary64
            (Mironov 2012; documented).
    """

    target: str
    description: str
    sample: Sampler
    n_quick: int
    mutations: tuple[str, ...] = ()
    power_floor: float | None = None
    paper_flawed: bool = False
    float_sampler: bool = False


@dataclass
class AuditRecord:
    """One row of the report (the JSON keys of ``privenv audit --format json``)."""

    target: str
    declared_epsilon: float
    declared_delta: float
    epsilon_lower_bound: float
    verdict: str
    mutation: str | None
    mutation_caught: bool | None
    n: int
    alpha: float
    seconds: float
    power_floor: float | None = field(default=None)
    #: case-specific numbers (the preimage audits' counts of unreachable releases), or None
    details: dict[str, Any] | None = field(default=None)

    @property
    def ok(self) -> bool:
        """A correct target passed (or is a documented violation); a mutant was caught."""
        if self.mutation is None:
            return self.verdict in (PASS, PAPER_VIOLATION, FLOAT_VIOLATION)
        return bool(self.mutation_caught)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["epsilon_lower_bound"] == math.inf:
            d["epsilon_lower_bound"] = "inf"  # an event impossible under D′ (preimage audits)
        elif not math.isfinite(d["epsilon_lower_bound"]):
            d["epsilon_lower_bound"] = None  # −inf: no event gave a bound (JSON has no −inf)
        return d


#: the cases of this module, the mechanisms of the privacy layer, in report order (the cases of
#: the layers above, and the combined registry that ``privenv audit`` runs: :mod:`privenv.audits`)
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = {}


def register(case: AuditCase, cases: dict[str, AuditCase] | None = None) -> AuditCase:
    """Add ``case`` to the registry ``cases`` (default :data:`CASES`): a target is registered
    once."""
    cases = CASES if cases is None else cases
    if case.target in cases:
        raise ValueError(f"audit target {case.target!r} registered twice")
    cases[case.target] = case
    return case


def _seed(seed: int, target: str, variant: str | None) -> int:
    """The seed of one (target, variant): independent streams from one master seed."""
    ss = np.random.SeedSequence([seed, zlib.crc32(target.encode()),
                                 zlib.crc32((variant or "").encode())])
    return int(ss.generate_state(1, np.uint64)[0] >> 1)


def run_case(case: AuditCase, size: str = "quick", seed: int = DEFAULT_SEED,
             mutations: Sequence[str] | None = None, *,
             include_correct: bool = True) -> list[AuditRecord]:
    """Audit ``case`` (the correct target, then each mutation) → one record per variant."""
    size = check_choice("size", size, tuple(SIZES))
    n = case.n_quick * SIZES[size]
    variants: list[str | None] = [None] if include_correct else []
    for m in case.mutations if mutations is None else mutations:
        check_choice("mutation", m, case.mutations)
        variants.append(m)
    out = []
    for variant in variants:
        start = time.perf_counter()
        meas = case.sample(variant, n, _seed(seed, case.target, variant))
        violates = meas.result.violates(meas.declared_epsilon)
        if variant is None:
            documented = PAPER_VIOLATION if case.paper_flawed else (
                FLOAT_VIOLATION if case.float_sampler else VIOLATION)
            verdict = documented if violates else PASS
            caught = None
        else:
            verdict, caught = (CAUGHT if violates else MISSED), bool(violates)
        out.append(AuditRecord(case.target, meas.declared_epsilon, meas.declared_delta,
                               meas.result.epsilon_lb, verdict, variant, caught, n,
                               meas.result.alpha, time.perf_counter() - start,
                               case.power_floor if variant is None else None, meas.details))
    return out


def run(targets: Sequence[str] | None = None, size: str = "quick", seed: int = DEFAULT_SEED,
        cases: Mapping[str, AuditCase] | None = None) -> list[AuditRecord]:
    """Audit ``targets`` of the registry ``cases`` (default :data:`CASES`; every target of
    ``privenv audit``: :data:`privenv.audits.CASES`) at ``size``; ``targets=None``: all of
    them, in registry order."""
    cases = CASES if cases is None else cases
    names, size, seed = check_run(targets, size, seed, cases)
    return [r for name in names for r in run_case(cases[name], size, seed)]


def check_run(targets: Sequence[str] | None, size: str, seed: int,
              cases: Mapping[str, AuditCase]) -> tuple[list[str], str, int]:
    """The checked arguments of :func:`run`: the target names (all of ``cases`` for ``None``),
    the size and the seed."""
    seed = check_int("seed", seed, low=0)
    size = check_choice("size", size, tuple(SIZES))
    names = list(cases) if targets is None else list(targets)
    for name in names:
        check_choice("targets", name, tuple(cases))
    return names, size, seed


def format_table(records: Sequence[AuditRecord]) -> str:
    """A plain-text table of records."""
    head: tuple[str, ...] = ("target", "mutation", "declared ε", "δ", "ε lower bound", "verdict",
                             "n", "s")
    preimage = any(r.details and "unreachable_d" in r.details for r in records)
    head += ("unreachable D→D′, D′→D",) if preimage else ()
    rows = [head]
    for r in records:
        lb = f"{r.epsilon_lower_bound:.3f}" if math.isfinite(r.epsilon_lower_bound) else (
            "inf" if r.epsilon_lower_bound > 0 else "-inf")
        row: tuple[str, ...] = (r.target, r.mutation or "-", f"{r.declared_epsilon:.4g}",
               f"{r.declared_delta:.3g}", lb, r.verdict, str(r.n), f"{r.seconds:.2f}")
        if preimage:
            d = r.details or {}
            row += (f"{d['fraction_d']:.1%}, {d['fraction_dprime']:.1%}"
                    if "unreachable_d" in d else "",)
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# =================================================================================================
# Scores and event families
# =================================================================================================


def fitted_holdout_lower_bound(out_d: np.ndarray, out_dp: np.ndarray, *, delta: float = 0.0,
                               alpha: float = ALPHA) -> audit.AuditResult:
    """ε lower bound for multi-dimensional outputs (rows): a linear discriminant fitted on the
    first half of each sample, then :func:`privenv.privacy.audit.holdout_epsilon_lower_bound`
    on its scores — which chooses the threshold event on the same first half and evaluates it
    on the second half, never used for fitting or choosing."""
    x0 = np.asarray(out_d, dtype=float).reshape(len(out_d), -1)
    x1 = np.asarray(out_dp, dtype=float).reshape(len(out_dp), -1)
    x0, x1 = np.nan_to_num(x0), np.nan_to_num(x1)
    h0, h1 = x0.shape[0] // 2, x1.shape[0] // 2
    f0, f1 = x0[:h0], x1[:h1]
    m0, m1 = f0.mean(axis=0), f1.mean(axis=0)
    cov = (np.cov(f0, rowvar=False) + np.cov(f1, rowvar=False)) / 2.0
    cov = np.atleast_2d(cov)
    ridge = 1e-6 * (np.trace(cov) / cov.shape[0] + 1e-12)
    w = np.linalg.solve(cov + ridge * np.eye(cov.shape[0]), m0 - m1)
    return audit.holdout_epsilon_lower_bound(x0 @ w, x1 @ w, delta=delta, alpha=alpha)


def best_bound(*results: audit.AuditResult) -> audit.AuditResult:
    """The result with the largest ε lower bound (of statistics each audited at its own share
    of ``alpha``)."""
    return max(results, key=lambda r: r.epsilon_lb)


def _tree_scores_bound(scores: list[tuple[np.ndarray, np.ndarray]], grid: np.ndarray,
                       sds: tuple[float, float], delta: float) -> audit.AuditResult:
    """The better of two tree statistics (S₁: memoised-noise LR, S₂: redrawn-noise LR), each
    with thresholds ``grid`` × its standard deviation under D′ (α/2 each); ``scores`` = [(S₁, S₂)
    on D, (S₁, S₂) on D′]."""
    return best_bound(*(audit.threshold_epsilon_lower_bound(
        scores[0][j], scores[1][j], grid * sds[j], delta=delta, alpha=ALPHA / 2)
        for j in range(2)))


#: the point δ of a Gaussian mechanism's μ-GDP profile audited by a projection score, resolved
#: by 2·10⁵ samples per side
GDP_AUDIT_DELTA = 0.05
#: thresholds of Gaussian scores, in units of the declared σ around D′'s mean
GAUSS_GRID = np.linspace(-1.0, 5.0, 25)
#: thresholds of Laplace log-likelihood ratios, in units of their maximum; ±0.999 are the
#: "every coordinate beyond both means" events, whose ratio is e^{±ε}
LAPLACE_GRID = np.concatenate([[-0.999], np.linspace(-0.8, 0.8, 9), [0.999]])


def gaussian_projection_bound(out_d: np.ndarray, out_dp: np.ndarray, mean_d: np.ndarray,
                              mean_dp: np.ndarray, sigma: float, *,
                              delta: float = GDP_AUDIT_DELTA) -> audit.AuditResult:
    """Vector releases with isotropic Gaussian noise of the declared σ: the projection on the
    unit mean difference (their likelihood-ratio statistic), thresholds :data:`GAUSS_GRID`·σ
    around D′'s projected mean, at ``delta``."""
    u = (mean_d - mean_dp) / np.linalg.norm(mean_d - mean_dp)
    s_d, s_dp = (out_d - mean_dp) @ u, (out_dp - mean_dp) @ u
    return audit.threshold_epsilon_lower_bound(s_d, s_dp, GAUSS_GRID * sigma, delta=delta,
                                               alpha=ALPHA)


def laplace_llr_bound(out_d: np.ndarray, out_dp: np.ndarray, mean_d: np.ndarray,
                      mean_dp: np.ndarray, scale: float) -> audit.AuditResult:
    """Pure-DP threshold audit of vector releases with the declared Laplace noise: its
    log-likelihood ratio, thresholds :data:`LAPLACE_GRID` × its maximum
    Σ|mean_d − mean_dp|/scale."""
    top = np.abs(mean_d - mean_dp).sum() / scale
    scores = [(np.abs(x - mean_dp) - np.abs(x - mean_d)).sum(axis=1) / scale
              for x in (out_d, out_dp)]
    return audit.threshold_epsilon_lower_bound(scores[0], scores[1], LAPLACE_GRID * top, delta=0.0,
                                               alpha=ALPHA)


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
    _laplace, 1_000_000, ("noise x 0.8", "sensitivity halved"), power_floor=0.95))


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
    _gaussian, 1_000_000, ("noise x 0.8", "sensitivity halved"), power_floor=0.85))


def _rr(mutation: str | None, n: int, seed: int) -> Measurement:
    eps = math.log(3)
    used = eps + 0.1 if mutation == "epsilon + 0.1" else eps
    res = _scalar_audit(lambda v, g, k: mech.randomized_response(np.full(k, v), used, g), n,
                        seed, np.array([0.5]), 0.0)
    return Measurement(res, eps, 0.0)


register(AuditCase(
    "randomized-response", "randomized response, ε = ln 3, rewards 0 vs 1, event {y = 1}; "
    "the mutant flips with the probability of ε + 0.1", _rr, 1_000_000, ("epsilon + 0.1",),
    power_floor=1.07))


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
    ("noise x 0.8", "sensitivity halved"), power_floor=0.95))


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
    ("noise x 0.8", "sensitivity halved"), power_floor=0.85))


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
    ("noise x 0.5",), power_floor=0.95))


# -- exact preimage audits ----------------------------------------------------------------------

_PRE_INPUTS = (0.0, 1.0)  # the float samplers: LaplaceRandomizer(ε = 1, range (0, 1))'s pair
_PRE_EXACT_INPUTS = (0.0, 1.0 / 3.0)  # the exact samplers: one input off the grid


def _preimage_measurement(unreachable: tuple[np.ndarray, np.ndarray], epsilon: float,
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


def _float_reachable(y: np.ndarray, x: float, transform: Callable | None) -> np.ndarray:
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


def _float_laplace_noise(u: np.ndarray) -> np.ndarray:
    return mech.laplace_from_uniform(u, 1.0)


def _float_gaussian_noise(u: np.ndarray) -> np.ndarray:
    return mech.gaussian_from_uniform(u, _PRE_SIGMA)


def _preimage_float(kind: str) -> Sampler:
    """Float Laplace (b = 1, ε = 1) or Gaussian (analytic σ at (1, 1e-2)) noise on inputs 0 and
    1: by its uniform transform (full search) or, ``"ziggurat"``, by numpy's standard normals
    (the addition stage only)."""
    transform = _float_laplace_noise if kind == "laplace" else _float_gaussian_noise
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
        return _preimage_measurement((~_float_reachable(y0, x1, support),
                                      ~_float_reachable(y1, x0, support)), eps, delta, search)
    return sample


register(AuditCase(
    "preimage-laplace-float", "exact preimage search of the float Laplace release x + "
    "laplace_from_uniform(u, b = 1) (LaplaceRandomizer(ε = 1, range (0, 1))), inputs 0 vs 1: "
    "releases of one input that no uniform on numpy's 2⁻⁵³ grid maps to from the other — not DP "
    "in binary64 (Mironov 2012), expected", _preimage_float("laplace"), 20_000,
    float_sampler=True))
register(AuditCase(
    "preimage-gaussian-float", "exact preimage search of the float Gaussian x + "
    "gaussian_from_uniform(u, σ) (inverse CDF on numpy's grid), σ analytic at (1, 1e-2), inputs "
    "0 vs 1 — not DP in binary64, expected", _preimage_float("gaussian"), 20_000,
    float_sampler=True))
register(AuditCase(
    "preimage-gaussian-float-ziggurat", "the float Gaussian x + σ·standard_normal (numpy's "
    "ziggurat, as GaussianRandomizer), σ as above, inputs 0 vs 1: releases that x ⊕ n cannot "
    "produce for ANY double n (the addition stage alone: a lower bound) — expected",
    _preimage_float("ziggurat"), 20_000, float_sampler=True))


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
        return _preimage_measurement(unreachable, g.epsilon, g.delta,
                                     "support: the grid g·ℤ (exact)" if mutation is None else
                                     "addition and the grid support (exact)")
    return sample


register(AuditCase(
    "preimage-laplace-exact", "exact preimage search of the exact Laplace mechanism (ε = 1, "
    "range (0, 1), grid 2⁻¹⁰ℤ), inputs 0 vs 1/3: every release is a grid point, reachable from "
    "both; mutant: exact noise added to the raw input in binary64", _preimage_exact("laplace"),
    20_000, ("float addition",)))
register(AuditCase(
    "preimage-gaussian-exact", "exact preimage search of the exact Gaussian mechanism at "
    "(1, 1e-2), range (0, 1), inputs 0 vs 1/3; mutant: exact noise added to the raw input in "
    "binary64", _preimage_exact("gaussian"), 20_000, ("float addition",)))


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
            unreachable.append(~(_float_reachable(raw, min(max(other, -p.bound), p.bound), None)
                                 | clamped))
    return _preimage_measurement((unreachable[0], unreachable[1]), m.guarantee.epsilon, 0.0,
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
    "input; mutant: no final rounding to Λ", _preimage_snapping, 20_000, ("no final rounding",)))


# =================================================================================================
# The tree mechanism (threshold events on prefix sums, structure, mutations)
# =================================================================================================

_TREE_T, _TREE_SIGMA, _TREE_DELTA = 16, 1.0, 0.1
_TREE_TS = np.arange(1, _TREE_T + 1)
_TREE_POP = np.array([bin(t).count("1") for t in _TREE_TS], dtype=float)


def node_keys(t: int) -> list[tuple[int, int]]:
    """The dyadic nodes (level j, index t >> j) whose sum is the prefix at t."""
    return [(j, t >> j) for j in range(t.bit_length()) if t >> j & 1]


def tree_s2_sd(sigma: float, horizon: int = _TREE_T) -> float:
    """Standard deviation of S₂ = Σ_{t ≤ horizon} y_t/popcount(t) under the memoised
    mechanism."""
    coef: dict[tuple[int, int], float] = {}
    for t in range(1, horizon + 1):
        for key in node_keys(t):
            coef[key] = coef.get(key, 0.0) + 1.0 / bin(t).count("1")
    return sigma * math.sqrt(sum(c * c for c in coef.values()))


def redrawn_prefix(tree: Any) -> np.ndarray:
    """The prefix sums of a tree mechanism whose node noise is drawn afresh at every query (the
    mutation "node noise redrawn"): Σ over the set bits j of t of (α_j + fresh noise_j), level
    after level, each level's noise one draw for all runs."""
    extra = (slice(None),) + (None,) * len(tree.shape)
    used = (tree.t[:, None] & tree._bits) != 0
    out = np.zeros((tree.n_runs, *tree.shape))
    for j in range(tree.levels):
        out += (tree._psum[:, j] + tree._draw_node_noise(np.arange(tree.n_runs))) \
            * used[:, j][extra]
    return out


def tree_mutant_classes() -> tuple[type, type, type]:
    from privenv.privacy.tree import TreeMechanism

    class RedrawTree(TreeMechanism):
        """Mutant: node noise redrawn at every query instead of memoised."""

        def prefix(self) -> np.ndarray:
            return redrawn_prefix(self)

    class MissingLevelTree(TreeMechanism):
        """Mutant: the budget counts one level too few (⌈log₂T⌉ instead of ⌊log₂T⌋ + 1)."""

        def rho(self, sensitivity: float = 1.0) -> float:
            return (self.levels - 1) * gaussian_rho(self.sigma, sensitivity)

    return TreeMechanism, RedrawTree, MissingLevelTree


class TreeScores:
    """The two scores of the tree-shaped cases, summed as the releases arrive (the T released
    values of a run are never held at once): S₁ = Σ_{t ∈ nodes} y_t (the memoised mechanism's
    likelihood-ratio statistic) and S₂ = Σ_t y_t/pop_t (a redrawing one's), both in the order
    t = 1, 2, … ."""

    def __init__(self, n: int, nodes: Sequence[int], pop: np.ndarray) -> None:
        self.s1, self.s2 = np.zeros(n), np.zeros(n)
        self.nodes, self.pop = frozenset(nodes), pop

    def add(self, t: int, y: np.ndarray) -> None:
        """The values released at step t (0-based), one per run."""
        if t in self.nodes:
            self.s1 += y
        self.s2 += y / self.pop[t]

    @property
    def scores(self) -> tuple[np.ndarray, np.ndarray]:
        return self.s1, self.s2


def _tree(mutation: str | None, n: int, seed: int) -> Measurement:
    tree, redraw, missing = tree_mutant_classes()
    cls = {"node noise redrawn": redraw, "one tree level missing": missing}.get(mutation or "",
                                                                               tree)
    sigma = _TREE_SIGMA * (0.5 if mutation == "noise x 0.5" else 1.0)
    declared = cls(1, (1,), _TREE_SIGMA, _TREE_T, np.random.default_rng(0)).epsilon(_TREE_DELTA)
    scores = []
    for k, first in enumerate((1.0, 0.0)):
        m = cls(n, (1,), sigma, _TREE_T, np.random.default_rng([seed, k]))
        x = np.zeros((n, 1))
        acc = TreeScores(n, [0, 1, 3, 7, 15], _TREE_POP)
        for t in range(_TREE_T):
            x[:] = first if t == 0 else 0.0
            acc.add(t, m.add(x)[:, 0])
        del m
        scores.append(acc.scores)
    grid = np.linspace(-1.0, 5.0, 13)  # standardised units around D′'s mean 0
    sds = (math.sqrt(tree_levels(_TREE_T)) * _TREE_SIGMA, tree_s2_sd(_TREE_SIGMA))
    return Measurement(_tree_scores_bound(scores, grid, sds, _TREE_DELTA), declared, _TREE_DELTA)


register(AuditCase(
    "tree", "binary (tree) mechanism, scalar stream T = 16, σ = 1: D = (1, 0, …, 0) vs D′ = 0, "
    "all 16 private prefixes released; scores S₁ = Σ_j y_{2^j} (the LR statistic of the "
    "memoised mechanism) and S₂ = Σ_t y_t/popcount(t) (that of a redrawing one), 13 "
    "thresholds each (α/2 each); audited at δ = 0.1 of the μ = √5 GDP profile (declared "
    "ε(0.1) = 4.59; the missing-level mutant declares μ = 2: 3.81)", _tree, 200_000,
    ("node noise redrawn", "noise x 0.5", "one tree level missing"),
    power_floor=4.59 - 0.6))


# =================================================================================================
# Wishart: paper 4's mechanism (not DP) and the symmetric Gaussian alternative
# =================================================================================================

_W_D = 2


def _gram_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    e1, e2 = np.zeros((n, _W_D, _W_D)), np.zeros((n, _W_D, _W_D))
    e1[:, 0, 0] = 1.0
    e2[:, 1, 1] = 1.0
    return e1, e2


def _wishart_scores(out_d: np.ndarray, out_dp: np.ndarray, c0: float, sd: float,
                    delta: float) -> audit.AuditResult:
    """Max over the support score λ_min(M + c₀I − e₁e₁ᵀ) (event {≤ 0}: impossible under φ = e₁
    for Wishart noise with d + 1 degrees of freedom) and the projection score M₁₁ − M₂₂ (13
    thresholds around D′'s mean −1, in units of ``sd``), α/2 each."""
    shift = c0 * np.eye(_W_D) - np.diag([1.0, 0.0])
    support = [np.linalg.eigvalsh(m + shift)[:, 0] for m in (out_d, out_dp)]
    proj = [m[:, 0, 0] - m[:, 1, 1] for m in (out_d, out_dp)]
    grid = -1.0 + sd * np.linspace(-1.0, 5.0, 13)
    return best_bound(
        audit.threshold_epsilon_lower_bound(support[0], support[1], [0.0], delta=delta,
                                            alpha=ALPHA / 2),
        audit.threshold_epsilon_lower_bound(proj[0], proj[1], grid, delta=delta,
                                            alpha=ALPHA / 2))


def _wishart_jiang(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy import wishart as W

    alpha = 1.0
    rng = np.random.default_rng(seed)
    e1, e2 = _gram_pair(n)
    out_d, out_dp = W.wishart_jiang2016(e1, alpha, rng), W.wishart_jiang2016(e2, alpha, rng)
    c0 = 3 * 1.5 * (_W_D + 1) / alpha
    res = _wishart_scores(out_d, out_dp, c0, 3 * math.sqrt(3 * 2 * 1.5**2), 0.0)
    return Measurement(res, W.wishart_jiang2016_claimed_epsilon(alpha), 0.0)


register(AuditCase(
    "wishart-jiang2016", "paper 4's Wishart mechanism (Jiang et al. 2016, α = 1, claimed "
    "α/3-LDP), d = 2, φ = e₁ vs φ′ = e₂: the support event has probability 0 under e₁ and "
    "≈ 0.07 under e₂ — NOT DP (Sheffet 2019), reproduced; declared not-DP by LPLR's "
    "mechanism='paper'", _wishart_jiang, 200_000, paper_flawed=True))


def _wishart_gaussian(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy import wishart as W

    epsilon, delta = 2.0, 0.01
    sigma = W.gram_gaussian_sigma(epsilon, delta, _W_D)
    if mutation == "sensitivity add-remove":
        sigma_used = W.gram_gaussian_sigma(epsilon, delta, _W_D, neighbouring="add-remove")
    else:
        sigma_used = sigma * (0.5 if mutation == "noise x 0.5" else 1.0)
    rng = np.random.default_rng(seed)
    e1, e2 = _gram_pair(n)
    out_d = W.symmetric_gaussian_gram(e1, sigma_used, rng)
    out_dp = W.symmetric_gaussian_gram(e2, sigma_used, rng)
    res = _wishart_scores(out_d, out_dp, 0.0, math.sqrt(2) * sigma, delta)
    return Measurement(res, epsilon, delta)


register(AuditCase(
    "wishart-gaussian", "the valid alternative: symmetric Gaussian Gram noise at (ε, δ) = "
    "(2, 0.01), d = 2, replace-one, φ = e₁ vs e₂ (the same two scores); mutants: σ × 0.5, σ "
    "from the add/remove sensitivity B² instead of √2·B²", _wishart_gaussian, 200_000,
    ("noise x 0.5", "sensitivity add-remove"), power_floor=1.5))


# =================================================================================================
# Shuffle model: P_Vec's scalar node and a uniform shuffler of randomized responses
# =================================================================================================


#: runs of the pvec-node case whose rounding is computed at once (full size: 10⁷ runs)
_PVEC_CHUNK = 500_000


def _pvec_node(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy import vector_sum as vs

    L = 1.0
    declared = vs.vector_sum_parameters(3, 1, 1.0, 1e-3, s=8.0)
    vs.node_guarantee(declared, c=1)  # exact check of the declared (ε, δ)
    params = declared
    if mutation == "binomial trials / 16":
        params = vs.VectorSumParameters(n=3, d=1, epsilon=1.0, delta=1e-3, s=0.5, g=declared.g,
                                        b=declared.b // 16)
    rng = np.random.default_rng(seed)
    ys = []
    for x_first in (-L, L):
        runs = np.arange(n)
        # the rounding bits of blocks of runs: the generator's uniforms are read row after row,
        # so the blocks draw the numbers one call over all n runs would (in bounded memory);
        # the binomial noise is drawn after all of them, as before
        rounded = np.empty((n, 1), dtype=np.int64)
        for lo in range(0, n, _PVEC_CHUNK):
            hi = min(lo + _PVEC_CHUNK, n)
            x = np.zeros((hi - lo, params.n, 1))
            x[:, 0, 0] = x_first
            rounded[lo:hi] = vs.encode_sum(x, L, params, rng, runs[lo:hi])
        noise = vs.binomial_noise_sum(params, 1, rng, runs)
        if mutation == "no binomial noise":
            noise = np.full_like(noise, round(params.p * params.noise_trials))
        ys.append(vs.analyze(rounded + noise, L, params)[:, 0])
    sd = vs.max_error_std(L, declared)
    res = audit.threshold_epsilon_lower_bound(ys[0], ys[1], np.linspace(-3.0 * sd, 3.0 * sd, 15),
                                              delta=declared.delta, alpha=ALPHA)
    return Measurement(res, declared.epsilon, declared.delta)


register(AuditCase(
    "pvec-node", "P_Vec (Cheu et al. 2021) scalar node, n = 3 users, x₁ = −L vs L: the "
    "analyzer output (a sufficient statistic of the shuffled unary messages), 15 thresholds; "
    "declared (1, 1e-3) checked exactly by node_guarantee", _pvec_node, 1_000_000,
    ("binomial trials / 16", "no binomial noise")))


_SHUF_USERS, _SHUF_EPS0, _SHUF_DELTA = 50, 2.0, 0.05
#: runs of the shuffler case held at once (full size: 10⁶ runs × 50 messages)
_SHUF_CHUNK = 100_000


def _shuffler(mutation: str | None, n: int, seed: int) -> Measurement:
    """n_users binary randomized responses at ε₀, shuffled by the library's UniformShuffler;
    user 0 holds 1 (D) or 0 (D′), the others 0. Released: the shuffled message vector. Two
    scores (α/2 each): the count of ones (sufficient for a shuffled output; all thresholds) and
    the first message (what an unshuffled output gives away)."""
    from privenv.privacy.accounting import shuffle_amplification_numerical
    from privenv.privacy.federated import IdentityShuffler, UniformShuffler

    declared = shuffle_amplification_numerical(_SHUF_EPS0, _SHUF_USERS, _SHUF_DELTA, block=1,
                                                iterations=20)
    scores = []
    for k, bit in enumerate((1.0, 0.0)):
        rng = np.random.default_rng([seed, k])
        shuffler = IdentityShuffler() if mutation == "no shuffle" else UniformShuffler(
            np.random.default_rng([seed, k, 1]))
        count, first = np.empty(n), np.empty(n)
        for lo in range(0, n, _SHUF_CHUNK):  # both generators are read row after row: the
            hi = min(lo + _SHUF_CHUNK, n)  # chunks draw the numbers one block of n would
            x = np.zeros((hi - lo, _SHUF_USERS))
            x[:, 0] = bit
            msgs = mech.randomized_response(x, _SHUF_EPS0, rng)
            out = shuffler.shuffle(msgs, np.arange(hi - lo))
            count[lo:hi], first[lo:hi] = out.sum(axis=1), out[:, 0]
        scores.append((count, first))
    res = best_bound(
        audit.threshold_epsilon_lower_bound(scores[0][0], scores[1][0],
                                            np.arange(_SHUF_USERS) + 0.5, delta=_SHUF_DELTA,
                                            alpha=ALPHA / 2),
        audit.threshold_epsilon_lower_bound(scores[0][1], scores[1][1], [0.5],
                                            delta=_SHUF_DELTA, alpha=ALPHA / 2))
    return Measurement(res, declared, _SHUF_DELTA)


register(AuditCase(
    "shuffler", f"uniform shuffler of {_SHUF_USERS} binary randomized responses at ε₀ = "
    f"{_SHUF_EPS0:g}; user 0 holds 1 vs 0; declared ε = Feldman–McMillan–Talwar numerical "
    f"amplification bound (block 1) at δ = {_SHUF_DELTA:g} (0.745); scores: count of ones, "
    "first message; mutant: "
    "identity shuffler (messages in user order)", _shuffler, 100_000, ("no shuffle",)))


# =================================================================================================
# Federated protocols (paper 2): a silo's released p-sums, the central server's prefix sums
# =================================================================================================


# -- Private-FedLinUCB (paper 2), protocol "ldp": one silo's released p-sums ----------------------

_FED_SYNCS, _FED_EPS, _FED_DELTA, _FED_B = 16, 4.6, 0.1, 5.0
_FED_NODES = [0, 1, 3, 7, 15]  # syncs k = 2^j: the nodes containing batch 1


def fed_redraw_randomizer_class() -> type:
    """Mutant of :class:`~privenv.privacy.federated.TreeRandomizer`: at each sync the silo sends
    its noisy prefix with every node's noise redrawn (node noise not memoised: batch 1 is then
    in all 16 messages with fresh noise)."""
    from privenv.privacy.federated import TreeRandomizer

    class RedrawRandomizer(TreeRandomizer):
        def release(self, gram: np.ndarray, moment: np.ndarray, runs: np.ndarray,
                    live: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            super().release(gram, moment, runs, live)
            return tuple(redrawn_prefix(tree)[runs] for tree in (self.gram_tree,
                                                                 self.moment_tree))

    return RedrawRandomizer


def _fed_linucb_silo(mutation: str | None, n: int, seed: int,
                     sampler: str = "float") -> Measurement:
    """One silo (M = 1), d = 1, B = 1, 16 syncs (κ = 5 levels), reward bound b = 5, σ₀ from
    :func:`~privenv.privacy.federated.ldp_sigma0` at (ε, δ) = (4.6, 0.1). Neighbouring silo
    data: the user of round 1 is (φ = 1, y = b) in D and (φ = 1, y = −b) in D′, all other users
    (0, 0): Δ_u = 2b with Δ_G = 0, i.e. Δ_G² + Δ_u² = 100 against the calibrated 1 + 4b² = 101
    (nearly sharp). Released view: the silo's 16 moment messages m_k (its Gram messages are the
    same under D and D′). Scores declared before sampling: S₁ = Σ_{k ∈ {1,2,4,8,16}} m_k (the
    likelihood-ratio statistic of the correct protocol: user 1 is in the nodes completing at
    k = 2^j) and S₂ = Σ_k m_k/popcount(k) (that of a silo re-sending its prefix with redrawn
    node noise), 21 thresholds each (α/2 each), in sd units of the correct protocol."""
    from privenv.privacy.federated import (
        TreeRandomizer,
        federated_kappa,
        ldp_sigma0,
        replace_one_sensitivities,
    )
    from privenv.privacy.wishart import gram_sensitivity

    if sampler == "exact":
        return _fed_linucb_silo_exact(mutation, n, seed)
    kappa = federated_kappa(_FED_SYNCS)
    if mutation == "sensitivity add-remove":  # the halved (add/remove) values Δ_G, Δ_u = b
        sens = (gram_sensitivity(1, 1.0, "add-remove"), _FED_B)
    else:
        sens = replace_one_sensitivities(1, _FED_B)
    if mutation == "one tree level missing":  # budget for κ − 1 = 4 levels, the tree has 5
        kappa -= 1
    sigma0 = ldp_sigma0(_FED_EPS, _FED_DELTA, kappa, *sens)
    cls = fed_redraw_randomizer_class() if mutation == "node noise redrawn" else TreeRandomizer
    # thresholds from the parameters only: sd units of the correct protocol, around the
    # midpoint 0 of the two means
    sigma_ok = ldp_sigma0(_FED_EPS, _FED_DELTA, federated_kappa(_FED_SYNCS),
                          *replace_one_sensitivities(1, _FED_B))
    return Measurement(_fed_silo_bound(cls, sigma0, sigma_ok, "float", n, seed), _FED_EPS,
                       _FED_DELTA)


def _fed_silo_bound(cls: type, sigma0: float, sigma_ok: float, sampler: str, n: int,
                    seed: int) -> audit.AuditResult:
    """The silo audit's ε lower bound for the randomizer class ``cls`` at noise σ₀ (scores and
    thresholds of :func:`_fed_linucb_silo`, σ_ok the correct protocol's noise scale)."""
    ks = np.arange(1, _FED_SYNCS + 1)
    pop = np.array([bin(k).count("1") for k in ks], dtype=float)
    scores = []
    for side, y in enumerate((_FED_B, -_FED_B)):
        rand = cls(n, 1, 1, sigma0, _FED_SYNCS, np.random.default_rng([seed, side]), sampler)
        runs = np.arange(n)
        gram, moment = np.zeros((n, 1, 1, 1)), np.zeros((n, 1, 1))
        acc = TreeScores(n, _FED_NODES, pop)
        for k in range(_FED_SYNCS):
            first = k == 0
            gram[:], moment[:] = float(first), first * y
            _, m = rand.release(gram, moment, runs, None)
            acc.add(k, m[:, 0, 0])
        del rand, m
        scores.append(acc.scores)
    grid = np.linspace(-1.0, 4.0, 21)
    sds = (sigma_ok * math.sqrt(len(_FED_NODES)), sigma_ok * math.sqrt(np.sum(1 / pop**2)))
    return _tree_scores_bound(scores, grid, sds, _FED_DELTA)


def _fed_linucb_silo_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    """:func:`_fed_linucb_silo` with ``sampler="exact"``: σ₀ from
    :func:`~privenv.privacy.federated.calibrate` (zCDP, rounding included), declared ε′ ≤ 4.6
    its guarantee; mutants: node noise redrawn, a budget for one level instead of κ = 5 (the
    zCDP calibration's slack hides the float case's "one tree level missing", a factor √(5/4)
    in σ: at (4.6, 0.1) the correct protocol's bound is 3.2, that mutant's 3.9)."""
    from privenv.privacy.federated import TreeRandomizer, calibrate

    kw: dict[str, Any] = dict(epsilon=_FED_EPS, delta=_FED_DELTA, M=1, d=1, horizon=_FED_SYNCS,
                              n_syncs=_FED_SYNCS, alpha=0.01, reward_bound=_FED_B,
                              sampler="exact")
    cal = calibrate("ldp", **kw)
    sigma0 = cal.sigma0
    if mutation == "budget for one level":  # σ₀ for κ = 1, the tree has κ = 5 levels
        sigma0 = calibrate("ldp", **{**kw, "n_syncs": 1}).sigma0
    cls = fed_redraw_randomizer_class() if mutation == "node noise redrawn" else TreeRandomizer
    bound = _fed_silo_bound(cls, sigma0, cal.sigma0, "exact", n, seed)
    return Measurement(bound, cal.guarantee.epsilon, _FED_DELTA)


register(AuditCase(
    "fed-linucb-silo", "Private-FedLinUCB (paper 2), protocol 'ldp': one silo's 16 released "
    "moment p-sums (M = 1, d = 1, B = 1, κ = 5, b = 5, σ₀ by ldp_sigma0 at (ε, δ) = (4.6, 0.1)); "
    "user 1's (1, b) vs (1, −b) (Δ² = 100 of the calibrated 101); scores S₁ (memoised LR), S₂ "
    "(redrawn LR); mutants: node noise not memoised, one tree level missing from the budget, "
    "σ₀ from the add/remove sensitivities", _fed_linucb_silo, 200_000,
    ("node noise redrawn", "one tree level missing", "sensitivity add-remove"),
    power_floor=4.6 - 0.7))

register(AuditCase(
    "fed-linucb-silo-exact", "fed-linucb-silo with sampler='exact' (items on the grid, discrete "
    "Gaussian node noise; σ₀ through zCDP, declared ε′ ≤ 4.6 by CKS20's conversion); mutants: "
    "node noise not memoised, σ₀ budgeted for one level instead of κ = 5",
    lambda mutation, n, seed: _fed_linucb_silo(mutation, n, seed, "exact"), 200_000,
    ("budget for one level", "node noise redrawn"), power_floor=4.6 - 1.6))


# -- the super single agent (paper 2), protocol "central": the server's released prefix sums ------

_SUPER_M = 3  # silos; the central noise is added once to their sum


def _super_agent_central(mutation: str | None, n: int, seed: int,
                         sampler: str = "float") -> Measurement:
    """``super-agent``'s protocol ``"central"`` (:func:`~privenv.privacy.federated.calibrate`,
    :func:`~privenv.privacy.federated.make_protocol`) with M = 3 silos, d = 1, B = 1, 16 syncs
    (κ = 5 levels), reward bound b = 5, at (ε, δ) = (4.6, 0.1). Neighbouring data: the user of
    round 1 at silo 0 is (φ = 1, y = b) in D and (1, −b) in D′, every other user (0, 0) (Δ_u = 2b,
    Δ_G = 0: 100 of the calibrated 101). View: the server's 16 moment prefixes Ũ_k (its Gram
    prefixes are the same under D and D′). Scores declared before sampling, as in the "tree"
    case: S₁ = Σ_j Ũ_{2^j} (the 5 nodes containing user 1: the memoised mechanism's LR statistic)
    and S₂ = Σ_k Ũ_k/popcount(k) (a redrawing server's), 21 thresholds each (α/2 each)."""
    from dataclasses import replace

    from privenv.privacy.federated import calibrate, make_protocol

    _, redraw, _ = tree_mutant_classes()
    kw: dict[str, Any] = dict(epsilon=_FED_EPS, delta=_FED_DELTA, M=_SUPER_M, d=1,
                              horizon=_FED_SYNCS, n_syncs=_FED_SYNCS, alpha=0.01,
                              reward_bound=_FED_B, sampler=sampler)
    cal = calibrate("central", **kw)
    if mutation == "one tree level missing":  # the budget of κ − 1 levels, the tree has κ
        short = calibrate("central", **{**kw, "n_syncs": _FED_SYNCS // 2})
        cal = replace(cal, sigma0=short.sigma0)
    elif mutation == "budget for one level":  # σ for κ = 1, the tree has κ = 5 levels
        cal = replace(cal, sigma0=calibrate("central", **{**kw, "n_syncs": 1}).sigma0)
    elif mutation == "sigma / sqrt(M)":  # as if M silos' noise were summed at the server
        cal = replace(cal, sigma0=cal.sigma0 / math.sqrt(_SUPER_M))
    ks = np.arange(1, _FED_SYNCS + 1)
    pop = np.array([bin(k).count("1") for k in ks], dtype=float)
    scores = []
    for side, y in enumerate((_FED_B, -_FED_B)):
        proto = make_protocol(cal, n, _SUPER_M, 1, _FED_SYNCS, np.random.default_rng([seed, side]))
        if mutation == "node noise redrawn":
            for analyzer, shape in ((proto.gram_analyzer, (1, 1)), (proto.moment_analyzer, (1,))):
                noise, analyzer.tree = analyzer.tree.noise, None  # (one tree at a time)
                analyzer.tree = redraw(n, shape, cal.sigma0, _FED_SYNCS, noise,
                                       symmetric=len(shape) == 2, sampler=sampler)
        acc = TreeScores(n, _FED_NODES, pop)
        for k in range(_FED_SYNCS):
            if k == 0:  # user (round 1, silo 0); every later batch is zero (a read-only view)
                gram, moment = np.zeros((n, _SUPER_M, 1, 1)), np.zeros((n, _SUPER_M, 1))
                gram[:, 0], moment[:, 0] = 1.0, y
            else:
                gram = np.broadcast_to(0.0, (n, _SUPER_M, 1, 1))
                moment = np.broadcast_to(0.0, (n, _SUPER_M, 1))
            _, u = proto.synchronize(gram, moment)
            acc.add(k, u[:, 0])
        del proto, u
        scores.append(acc.scores)
    correct = calibrate("central", **kw)
    sigma = correct.sigma0
    grid = np.linspace(-1.0, 4.0, 21)
    sds = (sigma * math.sqrt(len(_FED_NODES)), tree_s2_sd(sigma, _FED_SYNCS))
    return Measurement(_tree_scores_bound(scores, grid, sds, _FED_DELTA),
                       correct.guarantee.epsilon, _FED_DELTA)


register(AuditCase(
    "super-agent-central", "paper 2's super single agent, protocol 'central' (a trusted server's "
    "binary mechanism on the sum of M = 3 silos; d = 1, B = 1, κ = 5, b = 5, σ by calibrate at "
    "(ε, δ) = (4.6, 0.1)): the 16 released moment prefixes; user (round 1, silo 0) (1, b) vs "
    "(1, −b); scores S₁ (memoised LR), S₂ (redrawn LR); mutants: node noise redrawn, one tree "
    "level missing from the budget, σ divided by √M", _super_agent_central, 200_000,
    ("node noise redrawn", "one tree level missing", "sigma / sqrt(M)"), power_floor=4.6 - 0.7))

register(AuditCase(
    "super-agent-central-exact", "super-agent-central with sampler='exact' (the server's tree on "
    "the grid with discrete Gaussian node noise; σ through zCDP, declared ε′ ≤ 4.6 by CKS20's "
    "conversion); mutants: node noise redrawn, σ budgeted for one level instead of κ = 5 (the "
    "zCDP calibration's slack hides a missing level: correct 3.3, that mutant 3.8), σ / √M",
    lambda mutation, n, seed: _super_agent_central(mutation, n, seed, "exact"), 200_000,
    ("budget for one level", "node noise redrawn", "sigma / sqrt(M)"), power_floor=4.6 - 1.6))
