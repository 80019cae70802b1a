"""The privacy audit harness: the machinery of every audit.

An audit *case* is the single implementation of one audit:

* the target's declared guarantee (ε, δ) — δ is the point of the privacy profile audited (a
  Gaussian mechanism declares its whole μ-GDP profile ε(δ), and is audited where a sample of our
  size resolves it, e.g. δ = 0.05);
* a batched sampler of the released output on two neighbouring inputs D, D′ (one user's value
  or reward changed), at a given number of samples per side and seed;
* the event family: threshold events {score > t}, {score ≤ t} on scores declared in advance
  (Clopper–Pearson, Bonferroni: :func:`privenv.privacy.audit.threshold_epsilon_lower_bound`), or,
  for multi-dimensional outputs, a linear score fitted and the event chosen on one half of the
  samples and evaluated on the other
  (:func:`privenv.privacy.audit_scores.fitted_holdout_lower_bound`);
* named mutations (an injected bug: noise × 0.5, sensitivity halved, a reward reused, node noise
  redrawn, one tree level missing, …), each of which the audit must catch.

This module holds the machinery: the case and its records (:class:`AuditCase`,
:class:`Measurement`, :class:`AuditRecord`, the verdicts), the registry function
:func:`register`, the runner (:func:`run_case`, :func:`run`) and the report
(:func:`format_table`). The statistics are in :mod:`privenv.privacy.audit` and
:mod:`privenv.privacy.audit_scores`; the cases of the privacy layer's own mechanisms in
:mod:`privenv.privacy.audit_noise` (Laplace, Gaussian, randomized response, the exact samplers,
the exact-preimage audits), :mod:`privenv.privacy.audit_composite` (the tree mechanism, both
Wisharts, P_Vec's node, the shuffler, the federated protocols) and
:mod:`privenv.privacy.side_channel`. None of them imports a layer above the privacy layer
(``tests/privacy/test_layers.py``). The audits of what those layers build — the local
randomizers of :mod:`privenv.wrappers` and LPLR's users, and every private agent end to end —
are in :mod:`privenv.audits`, whose combined registry :data:`privenv.audits.CASES` is what
``privenv audit`` runs.

A correct target fails its audit with probability ≤ ``alpha`` (1e-6, family-wise, per case and
variant) for the fixed seed: ε_lb > declared ε *proves* a violation at confidence 1 − α. Sizes:
``"quick"`` (the default test run: tests/privacy/test_audits.py, and for the ``preimage-*`` cases
and ``fed-linucb-silo`` tests/privacy/test_preimage.py and tests/privacy/test_federated_protocol.py;
about 1.5 minutes on 2 workers) and ``"full"`` (10× the samples per side: sharper bounds). Run
the full audit with ``nice privenv audit --size full`` (add ``--targets a,b`` for a subset,
``--format json`` for records): measured 2026-11-29 on the 2-core development machine under
load (load average ≈ 7), 25 min 50 s wall, 14.3 min CPU (710 s user + 150 s system), peak memory
9.6 GB — the end-to-end agent cases dominate (CTB-TT, central-DP LinUCB ≈ 1.5–2 min per variant,
per-run seeding of 4·10⁵ runs), so expect ≈ 15 min on an idle machine.

A paper's own mechanism known not to be DP is reported with the distinct verdict
:data:`PAPER_VIOLATION`, a floating-point sampler's expected, documented finding with
:data:`FLOAT_VIOLATION`; neither fails the run.

Use :func:`run` (records with the keys of the ``privenv audit --format json`` output, for the
targets of a registry; every target: :func:`privenv.audits.run`) and :func:`format_table`.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from privenv._validation import check_choice, check_int
from privenv.privacy import audit

__all__ = [
    "ALPHA",
    "AuditCase",
    "AuditRecord",
    "CAUGHT",
    "DEFAULT_SEED",
    "FLOAT_VIOLATION",
    "MISSED",
    "Measurement",
    "PAPER_VIOLATION",
    "PASS",
    "SIZES",
    "Sampler",
    "VIOLATION",
    "check_run",
    "format_table",
    "register",
    "run",
    "run_case",
]

#: family-wise false-alarm probability of every audit (per case and variant)
ALPHA = 1e-6
#: the two audit sizes, as the multiplier of each case's quick sample size
SIZES = {"quick": 1, "full": 10}
#: default master seed (each case and variant derives its own stream from it)
DEFAULT_SEED = 20261129

#: verdict of a correct target whose ε lower bound stays within its declaration
PASS = "pass"
#: verdict of a correct target whose ε lower bound exceeds its declaration (fails the run)
VIOLATION = "VIOLATION"
#: verdict of a paper's own mechanism known not to be DP, violated as documented
PAPER_VIOLATION = "violation (paper's mechanism, documented)"
#: verdict of a floating-point sampler shown not DP in binary64, as documented
FLOAT_VIOLATION = "violation (float sampler, documented)"
#: verdict of a mutant the audit caught
CAUGHT = "mutation caught"
#: verdict of a mutant the audit missed (fails the run)
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


def register(case: AuditCase, cases: dict[str, AuditCase]) -> AuditCase:
    """Add ``case`` to the registry ``cases`` (a module's ``CASES``): a target is registered
    once."""
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
        *, cases: Mapping[str, AuditCase]) -> list[AuditRecord]:
    """Audit ``targets`` of the registry ``cases`` (the privacy layer's mechanisms:
    :data:`privenv.privacy.audit_noise.CASES`, :data:`privenv.privacy.audit_composite.CASES`;
    every target of ``privenv audit``: :data:`privenv.audits.CASES`) at ``size``;
    ``targets=None``: all of them, in registry order."""
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
                                f"{r.declared_delta:.3g}", lb, r.verdict, str(r.n),
                                f"{r.seconds:.2f}")
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

