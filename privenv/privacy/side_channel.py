r"""Side-channel audits of the exact samplers: what the work of a draw tells about the input.

An exact release y = k + Z is DP for an observer of y. An observer who also sees the work of the
draw — the 64-bit words it read (the generator's position), the iterations of its loops, the time
it took — sees (y, W). If W depends on Z, then given y it depends on k: CKS20's samplers as
written read 4 words for a given release with probability 0.49 under one input and 0.043 under
its neighbour (ε = 1: a likelihood ratio ≈ 11; Jin et al. 2022, "Are we there yet? Timing and
floating-point attacks on differential privacy systems", IEEE S&P, measure the same through
time). privenv's samplers do constant work (:mod:`privenv.privacy.constant_work`); these audits
test it, each against the variable-work sampler as its mutant
(:mod:`privenv.privacy.variable_work`).

Each case draws n releases of two neighbouring inputs with the mechanism's own parameters and
records, per draw, the release and its work: the words read for the discrete Laplace and
Gaussian (the cursor's advance, as the kernels return it), the iterations of the loop that finds
U*'s binade for snapping (which reads two words either way). Two statistics:

* the ε lower bound (the verdict; false alarm ≤ 10⁻⁶, Clopper–Pearson with Bonferroni) over the
  pre-declared joint events {y ∈ b, W ≤ w} (and {y ∈ b}): an output bin b crossed with a work
  threshold w. (ε, δ)-DP of the pair (y, W) — what the constant-work guarantee declares, up to
  the overrun's (1 + e^ε)·2⁻⁶⁴ — implies every such event's ratio is at most e^ε (after δ);
* the ratio of the work's likelihoods between the neighbours given the output,
  max over bins b and work values w of P̂_D(W = w | y ∈ b)/P̂_D′(W = w | y ∈ b) (both ways), over
  the cells with at least n·p/2 draws on each side (p the smallest bin's probability the case
  declares), and the joint ratio P̂_D(y ∈ b, W = w)/P̂_D′(y ∈ b, W = w) against e^ε (the pure-DP
  cases). Tolerance: 6 standard errors of a cell's log-ratio, 6·√(2/(n·p/2)) (normal
  approximation; per cell a false alarm below 10⁻⁹; 0.22 for the Laplace case at quick size).
  Constant work gives a conditional ratio of exactly 1 (one work value); the mutants, ratios of
  tens to thousands. Recorded in the details of each record.

Timing is not audited here (a timed test is no test: the machine is shared); its measurement
beside these, with the same neighbouring inputs, is in ``benchmarks/samplers.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privenv import seeding
from privenv._jit import jit
from privenv.privacy import audit

from . import constant_work, variable_work
from .draws import snap_uncertain
from .harness import ALPHA, AuditCase, Measurement, register

__all__ = ["CASES", "ITERATION_THRESHOLDS", "WORK_THRESHOLDS", "discrete_draw"]

#: work thresholds w of the events {y ∈ b, W ≤ w} of the discrete samplers (words read)
WORK_THRESHOLDS = (4, 6, 8, 12, 16, 24, 48)
#: for snapping (iterations of its binade search)
ITERATION_THRESHOLDS = (1, 2, 3, 4, 6)
#: draws per block of words
_BLOCK = 20_000
#: words per draw given to the variable-work mutant (more are appended if it runs out)
_MUTANT_WORDS = 40

#: the registry of these cases (merged into ``privenv audit``'s by :mod:`privenv.audits`)
CASES: dict[str, AuditCase] = {}


@jit(inline="always")
def discrete_draw(words: np.ndarray, pos: int, gaussian: bool, a: int, b: int, c: int,
                  budget: int) -> tuple[int, int]:
    """One draw → (value, cursor′) of the discrete Gaussian N_ℤ(0, a/b) (CKS20's t = c) or the
    discrete Laplace Lap_ℤ(a/b): with constant work over ``budget`` words, or, budget 0, by
    CKS20's variable-work loops (the mutant)."""
    if budget == 0:
        if gaussian:
            return variable_work.discrete_gaussian_kernel(words, pos, a, b, c)
        return variable_work.discrete_laplace_kernel(words, pos, a, b)
    if gaussian:
        return constant_work.discrete_gaussian_kernel(words, pos, a, b, c, budget)
    return constant_work.discrete_laplace_kernel(words, pos, a, b, budget)


@jit
def _discrete_block(words: np.ndarray, n: int, gaussian: bool, a: int, b: int, c: int,
                    budget: int, z: np.ndarray, work: np.ndarray, start: int
                    ) -> tuple[int, int]:
    """Draws start, start + 1, … into z and work from ``words`` (constant work with ``budget``;
    budget 0: CKS20's variable-work loops) → (draws made, words used); stops at a draw that
    finds its words short."""
    pos = 0
    i = start
    while i < n:
        v, p = discrete_draw(words, pos, gaussian, a, b, c, budget)
        if p < 0:
            if p != constant_work.EXHAUSTED:
                raise OverflowError("an exact sampler's intermediate integer exceeded 2**62")
            break
        z[i] = v
        work[i] = p - pos
        pos = p
        i += 1
    return i, pos


def _discrete(gaussian: bool, ints: tuple[int, int, int], budget: int, n: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n draws (values in grid units, words read) from ``rng``'s words, a block at a time."""
    z = np.empty(n, np.int64)
    work = np.empty(n, np.int64)
    per = budget or _MUTANT_WORDS
    i = 0
    words = seeding.random_words(rng, 0)
    while i < n:
        words = np.concatenate([words, seeding.random_words(rng, per * min(_BLOCK, n - i)
                                                            + 2 * per)])
        i, used = _discrete_block(words, n, gaussian, *ints, budget, z, work, i)
        words = words[used:]
    return z, work


@jit
def _snap_block(words: np.ndarray, x: float, lam: float, bound: float, lam_pow2: float,
                variable: bool, y: np.ndarray, work: np.ndarray, start: int
                ) -> tuple[int, int, int]:
    """Snapping releases of x into y, and the iterations of the binade search (the words the
    constant-work kernel's loop reads; the bit loop's iterations for the mutant) → (draws made,
    words used, status): status UNCERTAIN stops at a draw to decide in Python."""
    pos = 0
    i = start
    while i < y.size:
        if variable:
            v, p, it = variable_work.snapping_bitloop_kernel(words, pos, x, lam, bound,
                                                             lam_pow2)
        else:
            v, p = constant_work.snapping_kernel(words, pos, x, lam, bound, lam_pow2)
            it = p - pos - 1  # every word but the mantissa's is one iteration of the search
        if p < 0:
            return i, pos, p
        y[i] = v
        work[i] = it
        pos = p
        i += 1
    return i, pos, 0


def _snapping(x: float, params: Any, variable: bool, n: int, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    y = np.empty(n)
    work = np.empty(n, np.int64)
    i = 0
    words = seeding.random_words(rng, 0)
    while i < n:
        words = np.concatenate([words, seeding.random_words(rng, 2 * min(_BLOCK, n - i) + 4)])
        i, used, status = _snap_block(words, x, params.lam, params.bound, params.lam_pow2,
                                      variable, y, work, i)
        if status == constant_work.UNCERTAIN:  # decided with a correctly rounded log (rare)
            y[i], p = snap_uncertain(words, used, x, params)
            zeros = 0 if words[used] == 0 else (int(words[used]) & -int(words[used])).bit_length()
            work[i] = zeros if variable else p - used - 1
            used, i = p, i + 1
        words = words[used:]
    return y, work


def _measure(pair: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
             edges: np.ndarray, thresholds: tuple[int, ...], p_min: float, epsilon: float,
             delta: float, unit: str, budget: int) -> Measurement:
    """The ε lower bound over {y ∈ b, W ≤ w} and the likelihood-ratio statistics (see the module
    docstring) of (release, work) samples on D and D′."""
    n = pair[0][0].size
    counts, cells = [], []
    for y, work in pair:
        b = np.searchsorted(edges, y, side="right")  # bin 0: below edges[0], …
        events = [np.bincount(b, minlength=edges.size + 1)]
        events += [np.bincount(b[work <= w], minlength=edges.size + 1) for w in thresholds]
        counts.append(np.concatenate(events))
        cells.append(_cell_counts(b, work))
    res = audit.epsilon_lower_bound(counts[0], n, counts[1], n, delta=delta, alpha=ALPHA)
    floor = n * p_min / 2
    conditional, joint = 1.0, 0.0
    bins = [np.bincount(np.searchsorted(edges, y, side="right"), minlength=edges.size + 1)
            for y, _ in pair]
    for cell in set(cells[0]) | set(cells[1]):
        c0, c1 = cells[0].get(cell, 0), cells[1].get(cell, 0)
        b0, b1 = bins[0][cell[0]], bins[1][cell[0]]
        if min(c0, c1) < floor:  # a ratio estimated from n·p/2 draws at least on each side
            continue
        r = c0 / c1
        conditional = max(conditional, r * b1 / b0, b0 / (b1 * r))
        joint = max(joint, r, 1 / r)
    tol = 6.0 * math.sqrt(2.0 / floor)
    details = {"work": unit, "budget": budget, "work_values_d": int(np.unique(pair[0][1]).size),
               "conditional_ratio": conditional, "joint_ratio_over_e_eps":
               joint / math.exp(epsilon), "tolerance": tol, "false_alarm": ALPHA}
    return Measurement(res, epsilon, delta, details)


def _cell_counts(b: np.ndarray, work: np.ndarray) -> dict[tuple[int, int], int]:
    keys, c = np.unique(b.astype(np.int64) * 2**32 + work, return_counts=True)
    return {(int(k >> 32), int(k & (2**32 - 1))): int(v) for k, v in zip(keys, c, strict=True)}


def _laplace(mutation: str | None, n: int, seed: int) -> Measurement:
    from .exact import LaplaceMechanism

    m = LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
    p = m.discrete_params
    budget = 0 if mutation else p.budget
    rng = np.random.default_rng(seed)
    ints = (p.scale_num, p.scale_den, 0)
    z0, w0 = _discrete(False, ints, budget, n, rng)
    z1, w1 = _discrete(False, ints, budget, n, rng)
    pair = ((z0, w0), (p.sensitivity_grid + z1, w1))  # inputs 0 and 1: 1024 grid units apart
    edges = np.arange(-2048, 3072 + 1, 256)  # bins of a quarter of the noise scale
    return _measure(pair, edges, WORK_THRESHOLDS, 0.015, m.guarantee.epsilon, 0.0, "words",
                    p.budget)


def _gaussian(mutation: str | None, n: int, seed: int) -> Measurement:
    from .exact import GaussianMechanism

    m = GaussianMechanism(epsilon=1.0, delta=1e-2, sensitivity=1.0, sampler="exact")
    p = m.discrete_params
    budget = 0 if mutation else p.budget
    rng = np.random.default_rng(seed)
    ints = (p.var_num, p.var_den, p.t)
    z0, w0 = _discrete(True, ints, budget, n, rng)
    z1, w1 = _discrete(True, ints, budget, n, rng)
    pair = ((z0, w0), (m.sensitivity_grid + z1, w1))
    edges = np.arange(-4096, 5120 + 1, 512)
    g = m.guarantee
    return _measure(pair, edges, WORK_THRESHOLDS, 0.01, g.epsilon, g.delta, "words", p.budget)


def _snap(mutation: str | None, n: int, seed: int) -> Measurement:
    from .exact import LaplaceMechanism

    m = LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="snapping")
    p = m.snapping_params
    rng = np.random.default_rng(seed)
    variable = mutation is not None
    pair = (_snapping(0.0, p, variable, n, rng), _snapping(1.0, p, variable, n, rng))
    edges = np.arange(-7.0, 9.0, 2.0)  # one bin per multiple of Λ = 2 in [−6, 8], two tails
    return _measure(pair, edges, ITERATION_THRESHOLDS, 0.005, m.guarantee.epsilon, 0.0,
                    "iterations", 2)


_VARIABLE = "variable work (CKS20 as written)"


def _register(case: AuditCase) -> None:
    register(case, CASES)


_register(AuditCase(
    "side-channel-laplace-exact", "the exact Laplace mechanism (ε = 1, range (0, 1), grid 2⁻¹⁰, "
    "Lap_ℤ(1024) with 167 words per draw), inputs 0 vs 1: the release and the words the draw "
    "read; events {y ∈ b, words ≤ w}, 22 bins of 256 grid units × w ∈ {4, 6, 8, 12, 16, 24, 48, "
    "∞}; mutant: CKS20's variable-work loops", _laplace, 200_000, (_VARIABLE,),
    power_floor=0.5))
_register(AuditCase(
    "side-channel-gaussian-exact", "the exact Gaussian mechanism at (1, 1e-2), Δ = 1 (N_ℤ(0, σ²), "
    "σ ≈ 1923 grid units, 467 words per draw), inputs 0 vs 1: the release and its words; 20 "
    "bins of 512 grid units × the same w; mutant: CKS20's variable-work loops", _gaussian,
    200_000, (_VARIABLE,), power_floor=0.3))
_register(AuditCase(
    "side-channel-snapping", "Mironov's snapping at ε = 1 (range (0, 1), Λ = 2), inputs 0 vs 1: "
    "the release and the iterations of U*'s binade search (two words either way); one bin per "
    "release value × w ∈ {1, 2, 3, 4, 6, ∞}; mutant: the binade found by a loop over the bits",
    _snap, 200_000, ("bit loop",), power_floor=0.5))
