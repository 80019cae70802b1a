r"""Private and robust arm elimination (paper 1): PRAE-R, PRAE-C and the DPRSE baseline.

Paper 1: Wu, Zhou, Tao, Wang, *On Private and Robust Bandits*, NeurIPS 2023. Heavy-tailed rewards
with Huber α-contamination (Definition 3.3), ε-DP in the central model (Definition 3.4).

* :class:`PrivateRobustArmElimination` — **Algorithm 1**, the batched arm-elimination
  meta-algorithm, with a pluggable private robust mean estimator (PRM);
* :func:`prm_raw_moment` — **Algorithm 2** (truncate at M around 0, Laplace) → :class:`PRAER`;
* :func:`prm_central_moment` — **Algorithm 3** (private histogram, then truncate around its mode)
  → :class:`PRAEC`;
* :class:`DPRSE` — the baseline of Tao, Wu, Zhao, Wang (2022), **reconstructed** (see its
  docstring).

Units. The theorems assume a unit moment bound (E|X|^k ≤ 1, or E|X − μ|^k ≤ 1). An instance with
bound u is the unit instance scaled by s = u^{1/k}, so M, r, D and β are computed in units of s and
multiplied by s (u = ``raw_moment_bound`` for Algorithm 2, ``central_moment_bound`` for
Algorithm 3; both come from the env's public description).

**Constants — chosen once, on principle, and used in every experiment.** The theorems state M, β
and 𝒯 up to Θ/Ω constants. We take every constant from the proofs in the paper's appendix where
they are explicit, and 1 where they are not:

* Theorem 6.1 (App. C, proof): M = min{(nε/(4L))^{1/k}, (8α)^{−1/k}}, L = log(16/δ), and
  β = √(2L/n) + 2(4L/(nε))^{1−1/k} + 2(8α)^{1−1/k}; for α = 0, L = log(4/δ) and no α-terms.
  The first phase needs n ≥ log(8/δ)/α (the proof's condition for its bound T₁ ≤ 4αM).
* Theorem 6.5 (App. D, proof): M = 4·min{(nε/log(1/δ))^{1/k}, α^{−1/k}} and β = the sum of the
  proof's explicit bounds on its terms T₁, T₂, T₃ and the Laplace noise (:func:`central_moment_
  parameters`), valid once the histogram picks a bin within 2r of μ, i.e. for n ≥ 𝒯 with
  𝒯 = max{ι log(16/δ)/ε, c₁ log(16D/δ)/ε, log(16/δ)/α²} (proof of Theorem 6.12), and
  𝒯 = 200 log(16D/δ)/ε for α = 0 (proof of Theorem 6.10, which gives the constant).
* c₁ (α > 0) is not given: ``C1_HISTOGRAM = 1``. (The proof's own condition 6C₁ + 4C₂ < 1 with
  its choice ι = (1 − α)/(0.249 − α) leaves C₂ = 0.249, so C₁ < 1/1500 and n ≳ 4.5·10⁶·log(16D/δ)
  — vacuous at any practical horizon. We do not use that.)
* Union bound over arms and batches (proof of Theorem 6.2): each estimate of batch τ uses
  δ_τ = δ/(2|S|τ²), \|S\| the number of arms in the batch; δ = 1/T.
* Where a proof merges terms assuming ε ≤ 1 (Theorem 6.1's last step, Corollaries 6.6/6.8), the
  accuracy parameters use ε̄ = min(ε, 1) so that the radius stays valid for ε > 1; the Laplace
  noise always uses ε itself. Nothing changes for ε ≤ 1.
* ``constant_scale`` (default 1, the constants above) multiplies the two constants that decide
  the schedule, the elimination radius β_τ and the first-phase threshold 𝒯, so that a reader can
  see at which constants the paper's figure appears (``privenv reproduce huber-constants``). It is
  one scale for every unspecified constant, not a tuning knob per term, and it changes no noise:
  privacy is the same at every scale.

What to expect at T = 10⁵ on the paper's instance (measured: docs/results/huber-fig1.md): the
regret of PRAE is dominated by two structural terms — the first elimination batch (each active arm
is pulled B_τ ≥ 𝒯 times before anything is eliminated; for PRAE-C 𝒯 ≥ log(16/δ)/α² ≈ 8.7·10³ at
α = 5 %) and the α-term of β, a constant bias bound (PRAE-R: 2(8α)^{1/2}·u^{1/2} ≈ 126 > every gap
when the means reach 100, so PRAE-R never eliminates there). These are properties of the theorems'
parameters, not bugs. A third effect follows: when nothing is eliminated, regret is decided by the
schedule itself — which arm the horizon's unfinished batch happens to pull. Algorithm 1 does not
order the active arms of a batch; ``arm_order="index"`` (default, the literal loop) favours the
lowest-index arm (the best one on the paper's instance), ``arm_order="random"`` makes the regret
independent of the labels.

Privacy. Every reward of the elimination phase enters exactly one Laplace release of one batch
(batching and forgetting); Algorithm 3's histogram and mean use disjoint folds (parallel
composition); the random first phase uses no reward. So each agent is ε-DP in the central model
(per reward, replace-one neighbours). With ``first_phase="greedy"`` (Remark 5.1) the first phase's
batches are released the same way, once each.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv.agents.kernel import record_release
from privenv.agents.mab import (
    MOMENT_ORDER,
    NEVER,
    BatchedElimination,
    ElimState,
    accumulate,
    begin_segment,
    eliminate,
    elimination_action,
    elimination_ready,
    end_epoch,
    end_segment,
    plan_epoch,
)
from privenv.parameters import EPSILON, POSITIVE, SAMPLER, Options, Param, Real
from privenv.privacy.exact import (
    EPSILON_BITS,
    laplace_release,
    sampler_guarantee,
    take_discrete_laplace,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_noise
from privenv.privacy.samplers import ExactSampler, FloatSampler, central_sampler
from privenv.seeding import NoiseView, take_uniform
from privenv.theory.huber import ALPHA_MAX_CENTRAL, iota

#: c₁ of Corollary 6.8 / Theorem 6.12 (α > 0), "an absolute constant" the paper does not give → 1.
C1_HISTOGRAM = 1.0
#: the histogram step's constant for α = 0, given by the proof of Theorem 6.10:
#: n ≥ 200·log(16D/δ)/ε makes C₁ < 0.1 (Corollary 6.6).
C_HISTOGRAM_ALPHA0 = 200.0
#: accuracy parameters use ε̄ = min(ε, EPSILON_CAP), as the proofs merge terms assuming ε ≤ 1.
EPSILON_CAP = 1.0
#: largest α of the proof of Theorem 6.1 (its case 2, α ∈ (0, 1/2]).
ALPHA_MAX_RAW = 0.5

FIRST_PHASES = ("batch-random", "round-random", "greedy")


# =================================================================================================
# The private robust mean estimators (PRM)
# =================================================================================================


@jit(allocates=True)
def _block_sum(x: np.ndarray, lo: int, n: int, centre: float, M: float) -> float:
    """numpy's pairwise sum of a block of n ≤ 128 values of f (see
    :func:`pairwise_truncated_sum`): plain below 8, else 8 partial sums."""
    if n < 8:
        total = 0.0
        for i in range(n):
            d = x[lo + i] - centre
            total += d if abs(d) <= M else 0.0
        return total
    r = np.zeros(8)
    for j in range(8):
        d = x[lo + j] - centre
        r[j] = d if abs(d) <= M else 0.0
    i = 8
    while i < n - n % 8:
        for j in range(8):
            d = x[lo + i + j] - centre
            r[j] += d if abs(d) <= M else 0.0
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        d = x[lo + i] - centre
        total += d if abs(d) <= M else 0.0
        i += 1
    return total


@jit(allocates=True)
def pairwise_truncated_sum(x: np.ndarray, lo: int, n: int, centre: float, M: float) -> float:
    r"""Σ_{i<n} f(x[lo + i]), f(v) = (v − c)·1{\|v − c\| ≤ M}, summed in numpy's pairwise order
    (``np.sum``: blocks of at most 128 values, halved above, the halves a multiple of 8), so that
    a compiled PRM gives exactly the numbers of ``np.where(|x − c| ≤ M, x − c, 0).mean()``.

    The halving is numpy's recursion written as a loop over an explicit stack (numba cannot load
    a cached recursive function)."""
    if n <= 128:
        return _block_sum(x, lo, n, centre, M)
    starts = np.empty(64, np.int64)  # a frame: the segment [start, start + size) …
    sizes = np.empty(64, np.int64)
    stage = np.zeros(64, np.int64)  # … 0: nothing done, 1: left half running, 2: right half
    left = np.zeros(64)  # … and the sum of its left half
    starts[0], sizes[0], depth, result = lo, n, 1, 0.0
    while depth > 0:
        d = depth - 1
        if sizes[d] <= 128:
            result = _block_sum(x, starts[d], sizes[d], centre, M)
            depth -= 1
            continue
        half = sizes[d] // 2
        half -= half % 8
        if stage[d] == 0:  # the left half first
            stage[d] = 1
            starts[depth], sizes[depth], stage[depth] = starts[d], half, 0
            depth += 1
        elif stage[d] == 1:  # then the right half
            left[d] = result
            stage[d] = 2
            starts[depth], sizes[depth], stage[depth] = starts[d] + half, sizes[d] - half, 0
            depth += 1
        else:  # left + right
            result = left[d] + result
            depth -= 1
    return result


@jit
def truncated_mean(x: np.ndarray, n: int, M: float) -> float:
    r"""Algorithm 2, lines 3–4: the mean of x̄_j = x_j·1{\|x_j\| ≤ M} over x[0 … n − 1]."""
    # (np.int64: a constant argument would be a numba literal, compiling the callee again)
    return pairwise_truncated_sum(x, np.int64(0), n, 0.0, M) / n


@jit
def algorithm_2_release(mean: float, M: float, n: int, epsilon: float, u: float,
                        noise_multiplier: float = 1.0) -> float:
    """Algorithm 2, line 5: the truncated mean of n points + Lap(2M/(nε)) (replacing one point
    moves a mean of values in [−M, M] by at most 2M/n), from the standard uniform u.
    ``noise_multiplier`` is the audit hook (1 in every real agent)."""
    return mean + laplace_noise(u, noise_multiplier * (2.0 * M / (n * epsilon)))  # Lap(2M/(nε))


@jit
def algorithm_2(x: np.ndarray, n: int, M: float, epsilon: float, u: float,
                noise_multiplier: float = 1.0) -> float:
    """**Algorithm 2** (PRM for the finite raw moment case) on the batch x[0 … n − 1]:
    :func:`truncated_mean` (lines 3–4), then :func:`algorithm_2_release` (line 5)."""
    return algorithm_2_release(truncated_mean(x, n, M), M, n, epsilon, u, noise_multiplier)


@jit(allocates=True)
def _bin_counts(x: np.ndarray, n: int, D: float, r: float, n_bins: int) -> np.ndarray:
    """Line 3: the counts of x[0 … n − 1] in the bins [j, j + r), j ∈ {−D, −D + r, …, D − r}."""
    counts = np.zeros(n_bins, dtype=np.int64)
    for i in range(n):
        j = np.floor((x[i] + D) / r)
        if j >= 0 and j < n_bins:  # points outside [−D, D) fall in no bin
            counts[int(j)] += 1
    return counts


@jit(allocates=True)
def algorithm_3(x: np.ndarray, n: int, M: float, epsilon: float, D: float, r: float,
                n_bins: int, u_hist: np.ndarray, u_mean: float,
                noise_multiplier: float = 1.0) -> tuple[float, float]:
    """**Algorithm 3** (PRM for the finite central moment case) on x[0 … 2n − 1]; returns
    (μ̃, J).

    First step (lines 3–5): the private histogram of the first fold x[0 … n − 1] over the bins
    B_j = [j, j + r), j ∈ {−D, −D + r, …, D − r} — counts/n + Lap(2/(nε)) per bin (replacing one
    point moves two counts by 1/n each: L1 sensitivity 2/n), u_hist one uniform per bin — and
    J = the left end of the largest. Second step (line 7): the mean of the second fold truncated
    at M around J + Lap(2M/(nε)). The folds are disjoint (parallel composition).
    """
    counts = _bin_counts(x, n, D, r, n_bins)
    best, top = 0, -np.inf
    for b in range(n_bins):  # line 4, then line 5: J = argmax_j p̃_j
        p_tilde = counts[b] / n + laplace_noise(u_hist[b], noise_multiplier * (2.0 / (n * epsilon)))
        if p_tilde > top:
            best, top = b, p_tilde
    J = -D + r * best
    mean = pairwise_truncated_sum(x, n, n, J, M) / n
    return J + mean + laplace_noise(u_mean, noise_multiplier * (2.0 * M / (n * epsilon))), J


@jit(allocates=True)
def algorithm_3_exact(x: np.ndarray, n: int, M: float, D: float, r: float, n_bins: int,
                      noise: NoiseView, run: int, q: int, count_budget: int
                      ) -> tuple[float, float]:
    """:func:`algorithm_3` with the exact sampler (ε′ = 2²⁰/q ≤ ε,
    :mod:`privenv.privacy.exact`): the histogram releases the integer counts plus
    Lap_ℤ(2·q/2²⁰) (replacing one point moves two counts by 1: L1 sensitivity 2 in count units,
    so exactly ε′-DP; ``count_budget`` words each,
    :func:`~privenv.privacy.releases.count_budget`), and the mean of the second fold goes through
    :func:`~privenv.privacy.exact.laplace_release` with sensitivity 2M/n."""
    counts = _bin_counts(x, n, D, r, n_bins)
    best, top = 0, -np.inf
    for b in range(n_bins):  # lines 4–5 on the released counts (÷ n: post-processing)
        p_tilde = (counts[b] + take_discrete_laplace(noise, run, 2 * q, 2**EPSILON_BITS,
                                                     count_budget)) / n
        if p_tilde > top:
            best, top = b, p_tilde
    J = -D + r * best
    mean = pairwise_truncated_sum(x, n, n, J, M) / n
    return J + laplace_release(noise, run, mean, 2.0 * M / n, q), J


def prm_raw_moment(x: np.ndarray, M: np.ndarray | float, epsilon: float,
                   u: np.ndarray | float) -> np.ndarray:
    """**Algorithm 2** (:func:`algorithm_2`) for m batches at once.

    Args:
        x: rewards, shape (m, n): row i is one batch {x_j}, j = 1…n.
        M: truncation threshold(s), scalar or shape (m,).
        epsilon: privacy budget ε.
        u: standard uniforms, shape (m,), for the Laplace noise (u = 0.5 gives noise ≈ 0).

    Returns:
        μ̃, shape (m,).
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    m, n = x.shape
    M = np.broadcast_to(np.asarray(M, dtype=float), (m,))
    u = np.broadcast_to(np.asarray(u, dtype=float), (m,))
    return np.array([algorithm_2(np.ascontiguousarray(x[i]), n, float(M[i]), float(epsilon),
                                 float(u[i])) for i in range(m)])


def histogram_bins(D: float, r: float) -> np.ndarray:
    """Left endpoints j ∈ 𝒥 = {−D, −D + r, …, D − r} of the bins B_j = [j, j + r) (Algorithm 3,
    line 3)."""
    n_bins = int(round(2.0 * D / r))
    if n_bins < 1 or not math.isclose(n_bins * r, 2.0 * D, rel_tol=1e-9):
        raise ValueError(f"2D/r must be a positive integer, got D={D!r}, r={r!r}")
    return -D + r * np.arange(n_bins)


def prm_central_moment(x: np.ndarray, M: np.ndarray | float, epsilon: float, D: float, r: float,
                       u_hist: np.ndarray, u_mean: np.ndarray | float,
                       return_initial: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """**Algorithm 3** (:func:`algorithm_3`) for m batches at once.

    Args:
        x: rewards, shape (m, 2n): the first n of each row are the first fold, the rest the second.
        M: truncation threshold(s) around J, scalar or shape (m,).
        epsilon: privacy budget ε (each fold's release is ε-DP; the folds are disjoint).
        D, r: bins B_j = [j, j + r), j ∈ {−D, …, D − r} (2D/r an integer).
        u_hist: standard uniforms, shape (m, 2D/r), for the histogram's Laplace noise.
        u_mean: standard uniforms, shape (m,), for the mean's Laplace noise.
        return_initial: also return the initial estimates J.

    Returns:
        μ̃, shape (m,) (and J if ``return_initial``).
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] % 2 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (m, 2n) with n >= 1, got {x.shape}")
    m, n = x.shape[0], x.shape[1] // 2
    n_bins = histogram_bins(D, r).size  # line 3 (validates 2D/r)
    M = np.broadcast_to(np.asarray(M, dtype=float), (m,))
    u_hist = np.asarray(u_hist, dtype=float).reshape(m, n_bins)
    u_mean = np.broadcast_to(np.asarray(u_mean, dtype=float), (m,))
    out = [algorithm_3(np.ascontiguousarray(x[i]), n, float(M[i]), float(epsilon), float(D),
                       float(r), n_bins, np.ascontiguousarray(u_hist[i]), float(u_mean[i]))
           for i in range(m)]
    mu, J = np.array([o[0] for o in out]), np.array([o[1] for o in out])
    return (mu, J) if return_initial else mu


# =================================================================================================
# Parameters of Theorems 6.1 and 6.5 (unit moment bound), with the proofs' constants
# =================================================================================================


def batch_delta(delta: float, tau: np.ndarray | int, n_active: np.ndarray | int) -> np.ndarray:
    """δ_τ = δ/(2|S|τ²): each estimate's failure probability (union bound, proof of Thm 6.2)."""
    return delta / (2.0 * np.asarray(n_active, dtype=float) * np.asarray(tau, dtype=float) ** 2)


def raw_moment_parameters(n: np.ndarray | int, epsilon: float, delta: np.ndarray | float,
                          alpha: float, k: float) -> tuple[np.ndarray, np.ndarray]:
    """Truncation M and radius β of Theorem 6.1 for E|X|^k ≤ 1 (constants of App. C).

    With probability ≥ 1 − δ, Algorithm 2 on n points with this M is within β of μ (for α > 0
    once n ≥ :func:`raw_moment_threshold`).
    """
    n = np.asarray(n, dtype=float)
    delta = np.asarray(delta, dtype=float)
    eps = min(epsilon, EPSILON_CAP)
    if alpha == 0.0:  # uncontaminated case
        L = np.log(4.0 / delta)
        M = (n * eps / (4.0 * L)) ** (1.0 / k)
        beta = np.sqrt(2.0 * L / n) + 2.0 * (4.0 * L / (n * eps)) ** (1.0 - 1.0 / k)
        return M, beta
    L = np.log(16.0 / delta)  # contaminated case
    M = np.minimum((n * eps / (4.0 * L)) ** (1.0 / k), (8.0 * alpha) ** (-1.0 / k))
    beta = (np.sqrt(2.0 * L / n) + 2.0 * (4.0 * L / (n * eps)) ** (1.0 - 1.0 / k)
            + 2.0 * (8.0 * alpha) ** (1.0 - 1.0 / k))
    return M, beta


def raw_moment_threshold(delta: np.ndarray | float, alpha: float) -> np.ndarray:
    r"""𝒯 of Theorem 6.2: n ≥ log(8/δ)/α (proof of Thm 6.1: \|N_G\|/n ≤ 4α); 0 when α = 0."""
    delta = np.asarray(delta, dtype=float)
    return np.log(8.0 / delta) / alpha if alpha > 0 else np.zeros_like(delta)


def central_bin_width(alpha: float, k: float) -> float:
    """r of Corollaries 6.6/6.8: 10^{1/k} (α = 0) or ι^{1/k}, ι = (1 − α)/(0.249 − α)."""
    return (10.0 if alpha == 0.0 else iota(alpha)) ** (1.0 / k)


def central_moment_parameters(n: np.ndarray | int, epsilon: float, delta: np.ndarray | float,
                              alpha: float, k: float) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Bin width r, truncation M and radius β of Theorem 6.5 for E|X − μ|^k ≤ 1 (App. D).

    n is the fold size (Algorithm 3 uses 2n points). β is the sum of the proof's bounds, each at
    its stated probability (histogram δ/2; \|N_G\|, Bernstein, Hoeffding and Laplace δ/8 each),
    valid for n ≥ :func:`central_moment_threshold`:

        g  = α + √(2αL/n) + 2L/(3n)                          (\|N_G\|/n, Bernstein; 0 if α = 0)
        T₁ = g·(M + 2r)
        T₂ = √(2L/n) + 4(M + 2r)L/(3n) + (2/M)^{k−1} + T₁
        T₃ = 2r·(α + (2/M)^k + √(L/(2n)))
        β  = T₁ + T₂ + T₃ + 2M·log(8/δ)/(nε),               L = log(16/δ).
    """
    n = np.asarray(n, dtype=float)
    delta = np.asarray(delta, dtype=float)
    r = central_bin_width(alpha, k)
    M = 4.0 * (n * epsilon / np.log(1.0 / delta)) ** (1.0 / k)
    if alpha > 0:
        M = np.minimum(M, 4.0 * alpha ** (-1.0 / k))
    L = np.log(16.0 / delta)
    g = alpha + np.sqrt(2.0 * alpha * L / n) + 2.0 * L / (3.0 * n) if alpha > 0 else 0.0
    T1 = g * (M + 2.0 * r)
    T2 = np.sqrt(2.0 * L / n) + 4.0 * (M + 2.0 * r) * L / (3.0 * n) + (2.0 / M) ** (k - 1.0) + T1
    T3 = 2.0 * r * (alpha + (2.0 / M) ** k + np.sqrt(L / (2.0 * n)))
    laplace = 2.0 * M * np.log(8.0 / delta) / (n * epsilon)
    return r, M, T1 + T2 + T3 + laplace


def central_moment_threshold(delta: np.ndarray | float, alpha: float, epsilon: float,
                             D: float) -> np.ndarray:
    """𝒯 of Corollaries 6.6/6.8 on the fold size n (constants: proofs of Theorems 6.10, 6.12).

    D is the (unit-scaled) range of the means.
    """
    delta = np.asarray(delta, dtype=float)
    eps = min(epsilon, EPSILON_CAP)
    if alpha == 0.0:
        return C_HISTOGRAM_ALPHA0 * np.log(16.0 * D / delta) / eps
    return np.maximum.reduce([
        iota(alpha) * np.log(16.0 / delta) / eps,  # M ≥ 4r
        C1_HISTOGRAM * np.log(16.0 * D / delta) / eps,  # the histogram finds μ's bin
        np.log(16.0 / delta) / alpha**2,  # |N_G|/n and the Hoeffding term of T₃ are O(α)
    ])


# =================================================================================================
# Algorithm 1: private and robust arm elimination
# =================================================================================================


class PrivateRobustArmElimination(BatchedElimination):
    """**Algorithm 1** of paper 1 (Private and Robust Arm Elimination), with a pluggable PRM.

    Batches τ = 1, 2, … of size B_τ = 2^τ (line 4). While B_τ is below the PRM's sample
    threshold 𝒯 (line 5) the batch is a *first-phase* batch: one uniformly random arm for the
    whole batch (lines 6–7; ``first_phase`` offers Remark 5.1's alternatives). Afterwards each
    active arm is pulled B_τ times in a row (lines 9–13), its mean estimated by the PRM from
    **this batch's rewards only** (line 16, forgetting), and every arm with
    μ̃_max − μ̃_a > 2β_τ is removed (lines 18–20). The run exits at the horizon (line 12).

    The kernel is the shared schedule (:class:`~privenv.agents.mab.BatchedElimination`) with
    this algorithm's ingredients (:class:`PRAEParams`): the first phase in the epoch plan, the
    segment's rewards kept in a buffer, the PRM at a segment's end (:func:`algorithm_2` or
    :func:`algorithm_3`) and the elimination at an epoch's end. Subclasses give the PRM's
    parameters (:meth:`prm_parameters`: truncation M and radius β) and the batch size from
    which the radius holds (:meth:`samples_needed`).

    Args:
        K: number of arms (≥ 2).
        horizon: T.
        epsilon: privacy budget ε > 0.
        delta: failure probability δ ∈ (0, 1); default 1/T (Theorems 6.2, 6.12).
        first_phase: Remark 5.1 — ``"batch-random"`` (the paper's: one random arm per batch),
            ``"round-random"`` (a random arm every round) or ``"greedy"`` (play the arm with the
            best PRM estimate from its last batch, untried arms first; those batches are
            released through the PRM once each).
        arm_order: order of the active arms within a batch (lines 9–13 do not fix one):
            ``"index"`` (default) or ``"random"`` (see :class:`~privenv.agents.mab.
            BatchedElimination`).
        constant_scale: one factor c > 0 on the constants the paper leaves open (module
            docstring, "Constants"): the elimination radius is c·β_τ and the first phase lasts
            while B_τ < c·𝒯. Default 1: the proofs' constants, under which the radius holds with
            probability ≥ 1 − δ_τ. A smaller c eliminates sooner and may eliminate the best arm;
            the privacy guarantee is the same at every c (β and 𝒯 only decide which arms are
            pulled; the truncation M and the Laplace scale 2M/(Bε) do not change).
        sampler: ``"float"`` (default: binary64 Laplace noise, ε-DP in idealized arithmetic) or
            ``"exact"`` (the discrete Laplace on a grid, :mod:`privenv.privacy.exact`: every
            release exactly ε′-DP, ε′ = 2²⁰/⌈2²⁰/ε⌉ ≤ ε, on the doubles the computer releases).
        n_runs: number of runs.
    """

    RELEASE_LABELS = ("Algorithm 2 mean", "Algorithm 3 histogram (fold 1)",
                      "Algorithm 3 mean (fold 2)")
    families = ("huber",)
    delta: float  # (the constructor resolves None, set_params' value, to 1/horizon)
    parameters = {
        **BatchedElimination.parameters,
        "epsilon": Param(EPSILON),
        "delta": Param(Real(0.0, 1.0, low_open=True, high_open=True, none=True)),
        "first_phase": Param(Options(FIRST_PHASES)),
        "constant_scale": Param(POSITIVE),
        "sampler": Param(SAMPLER, assumes="sampler"),
    }

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, delta: float | None = None,
                 first_phase: str = "batch-random", arm_order: str = "index",
                 constant_scale: float = 1.0, sampler: str = "float", n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        if self.delta is None:
            self.delta = 1.0 / self.horizon if self.horizon > 1 else 0.5

    def _init_schedule(self) -> None:
        """The first phase: batches τ < τ₁, τ₁ the first with B_τ ≥ 𝒯 (|S| = K; line 5).

        Sets ``first_elimination_batch`` and ``first_phase_rounds`` (at construction and reset).
        """
        tau = 1
        while 2**tau < self.constant_scale * self.samples_needed(
                batch_delta(self.delta, tau, self.K)):
            tau += 1
            if 2 ** (tau - 1) > self.horizon:
                break
        #: first batch that eliminates (τ₁); earlier batches form the first phase
        self.first_elimination_batch = tau
        #: rounds of the first phase: B_1 + … + B_{τ₁−1} = 2^τ₁ − 2
        self.first_phase_rounds = 2**tau - 2

    @property
    def privacy(self) -> PrivacyGuarantee:
        return sampler_guarantee(self.sampler, "central", self.epsilon, "reward")

    # -- the PRM (subclasses) -------------------------------------------------------------------
    def samples_needed(self, delta: np.ndarray | float) -> np.ndarray:
        """The batch size B from which the PRM's radius holds at confidence δ (𝒯)."""
        raise NotImplementedError

    def prm_parameters(self, B: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M, β): the truncation and confidence radius of an estimate from a batch of B pulls at
        confidence δ, in reward units (broadcast)."""
        raise NotImplementedError

    def radius(self, B: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Confidence radius β_τ of an estimate from a batch of B pulls at confidence δ, times
        ``constant_scale`` (the radius line 19 eliminates with)."""
        return self.constant_scale * self.prm_parameters(np.asarray(B), np.asarray(delta))[1]

    # -- Algorithm 1 on the shared schedule -----------------------------------------------------
    def kernel_params(self) -> PRAEParams:
        r"""The constants, with M_τ, β_τ and δ_τ tabulated over batches τ and active-set sizes \|S\|
        by the theorems' functions (they depend on nothing else)."""
        tau_max = max(2, math.ceil(math.log2(self.horizon + 2)) + 1)
        tau = np.arange(tau_max + 1, dtype=float)[:, None]
        size = np.arange(self.K + 1, dtype=float)[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):  # τ = 0, |S| = 0: never used
            delta_tau = batch_delta(self.delta, tau, size)  # δ_τ = δ/(2|S|τ²)
            M, beta = self.prm_parameters(2.0**tau, delta_tau)
            beta = self.constant_scale * beta  # the elimination radius (line 19)
        D, r, bins = self.histogram()
        sampler = central_sampler(self.sampler, self.epsilon, float(self.noise_multiplier),
                                  counts=bins > 0)
        return PRAEParams(
            K=self.K, horizon=self.horizon, epsilon=self.epsilon, central=bins > 0,
            first_phase=FIRST_PHASES.index(self.first_phase),
            first_elimination_batch=self.first_elimination_batch,
            first_phase_rounds=self.first_phase_rounds,
            random_order=self.arm_order == "random", forget=self.forget,
            noise_multiplier=float(self.noise_multiplier),
            delta_table=np.ascontiguousarray(delta_tau), M_table=np.ascontiguousarray(M),
            beta_table=np.ascontiguousarray(beta), D=D, r=r, n_bins=bins, sampler=sampler,
            # a release: the histogram's bins (noisy counts) and the mean
            words_per_step=bins * sampler.count_words + sampler.words)

    def histogram(self) -> tuple[float, float, int]:
        """(D, r, bins) of Algorithm 3's histogram (bins of width r over [−D, D)); no bins: the
        PRM is Algorithm 2."""
        return 0.0, 1.0, 0

    def buffer_size(self) -> int:
        return 2

    def serve(self, run: int, code: int) -> None:
        """Grow every run's reward buffer to hold ``run``'s current segment (code 1)."""
        s = self.state
        need = int(s.seg_end[run] - s.acc_start[run])
        if need > s.buf.shape[1]:  # (another run may have grown it already)
            buf = np.zeros((self.n_runs, max(need, 2 * s.buf.shape[1])))
            buf[:, : s.buf.shape[1]] = s.buf
            self.state = s._replace(buf=buf)


#: values of :attr:`PRAEParams.first_phase`, the indices in :data:`FIRST_PHASES`
BATCH_RANDOM, ROUND_RANDOM, GREEDY = range(3)


class PRAEParams(NamedTuple):
    r"""The constants of Algorithm 1 with its PRM: ``delta_table``, ``M_table`` and
    ``beta_table`` [τ, \|S\|] are δ_τ, M_τ and β_τ (reward units); ``central`` selects
    Algorithm 3 (PRAE-C) over Algorithm 2 (PRAE-R, DPRSE)."""

    K: int
    horizon: int
    epsilon: float
    central: bool
    first_phase: int
    first_elimination_batch: int
    first_phase_rounds: int
    random_order: bool
    forget: bool
    noise_multiplier: float
    delta_table: np.ndarray
    M_table: np.ndarray
    beta_table: np.ndarray
    D: float
    r: float
    n_bins: int
    sampler: FloatSampler | ExactSampler
    words_per_step: int = 0


@jit
def _stores_rewards(p: PRAEParams, s: ElimState, run: int) -> bool:
    """Whether the pull s.t[run] can enter a release: from the end of the first phase (which
    uses no reward), or always with Remark 5.1's greedy first phase."""
    return p.first_phase == GREEDY or s.t[run] >= p.first_phase_rounds


@plan_epoch.register(PRAEParams)
@jit
def _prae_plan(p: PRAEParams, s: ElimState, noise: NoiseView, run: int) -> int:
    tau = s.epoch[run]
    size = 0
    for a in range(p.K):  # line 9: every active arm, B_τ pulls each
        s.todo[run, a] = s.active[run, a]
        size += s.active[run, a]
    s.n_active[run] = size
    s.delta_tau[run] = p.delta_table[tau, size]  # δ_τ = δ/(2|S|τ²)
    if tau < p.first_elimination_batch:  # lines 5–7: one arm for the whole batch
        if p.first_phase == BATCH_RANDOM:  # line 6
            arm = min(int(take_uniform(noise, run) * p.K), p.K - 1)
        elif p.first_phase == GREEDY:  # Remark 5.1: best last estimate, untried arms first
            arm, best = 0, -np.inf
            for a in range(p.K):
                e = s.estimates[run, a]
                e = np.inf if e != e else e
                if e > best:
                    arm, best = a, e
        else:  # round-random: a random arm every round, drawn in the act
            arm = 0
        for a in range(p.K):
            s.todo[run, a] = a == arm
    return min(2**tau, NEVER)  # line 4: B_τ = 2^τ


@elimination_action.register(PRAEParams)
@jit
def _prae_action(p: PRAEParams, s: ElimState, noise: NoiseView, run: int) -> int:
    if p.first_phase == ROUND_RANDOM and s.t[run] < p.first_phase_rounds:
        return min(int(take_uniform(noise, run) * p.K), p.K - 1)  # Remark 5.1
    return s.arm[run]


@begin_segment.register(PRAEParams)
@jit
def _prae_begin(p: PRAEParams, s: ElimState, run: int) -> None:
    pass


@accumulate.register(PRAEParams)
@jit
def _prae_accumulate(p: PRAEParams, s: ElimState, run: int, reward: float) -> None:
    """Line 11: observe x_i^a (kept only while it can still be released)."""
    if _stores_rewards(p, s, run) and s.buf.shape[1] > 0:
        s.buf[run, min(s.t[run] - s.acc_start[run], s.buf.shape[1] - 1)] = reward


@elimination_ready.register(PRAEParams)
@jit
def _prae_ready(p: PRAEParams, s: ElimState, run: int) -> int:
    """Code 1: the buffer cannot hold the current segment, which will be released."""
    fits = s.seg_end[run] <= p.horizon
    room = s.t[run] - s.acc_start[run] < s.buf.shape[1]
    return 1 if fits and not room and _stores_rewards(p, s, run) else 0


@end_segment.register(PRAEParams)
@jit(allocates=True)
def _prae_end_segment(p: PRAEParams, s: ElimState, noise: NoiseView, run: int) -> None:
    """Line 16: μ̃_a = PRM(this batch's rewards) (and the ledger's record of it)."""
    tau = s.epoch[run]
    if tau < p.first_elimination_batch and p.first_phase != GREEDY:
        return  # a first-phase batch: no reward is used
    M = p.M_table[tau, s.n_active[run]]
    start, stop = s.acc_start[run], s.seg_end[run]
    B = s.seg_len[run]
    if p.central:
        n = B // 2
        mu = algorithm_3_of(p.sampler, p, s.buf[run], n, M, noise, run)
        # (np.int64 kinds: a constant argument is a numba literal, one compile per value)
        record_release(s.releases, run, start, start + n, p.epsilon, np.int64(1))
        record_release(s.releases, run, start + n, stop, p.epsilon, np.int64(2))
    else:
        n_used = stop - start  # B: this batch only (forgetting)
        mean = truncated_mean(s.buf[run], n_used, M)  # Algorithm 2, lines 3–4
        mu = algorithm_2_of(p.sampler, p, mean, M, B, noise, run)  # line 5, sensitivity 2M/B
        record_release(s.releases, run, start, stop, p.epsilon, np.int64(0))
    s.estimates[run, s.arm[run]] = mu


@generic
def algorithm_2_of(sampler: FloatSampler | ExactSampler, p: PRAEParams, mean: float, M: float,
                   B: int, noise: NoiseView, run: int) -> float:
    """Algorithm 2's release (line 5) of a batch of B rewards with the agent's sampler."""
    raise NotImplementedError


@algorithm_2_of.register(FloatSampler)
@jit(inline="always")
def _algorithm_2_float(sampler: FloatSampler, p: PRAEParams, mean: float, M: float, B: int,
                       noise: NoiseView, run: int) -> float:
    return algorithm_2_release(mean, M, B, p.epsilon, take_uniform(noise, run), p.noise_multiplier)


@algorithm_2_of.register(ExactSampler)
@jit(inline="always")
def _algorithm_2_exact(sampler: ExactSampler, p: PRAEParams, mean: float, M: float, B: int,
                       noise: NoiseView, run: int) -> float:
    return laplace_release(noise, run, mean, 2.0 * M / B, sampler.q)


@generic
def algorithm_3_of(sampler: FloatSampler | ExactSampler, p: PRAEParams, x: np.ndarray, n: int,
                   M: float, noise: NoiseView, run: int) -> float:
    """μ̃ of Algorithm 3 on the folds x[0 … 2n − 1] with the agent's sampler."""
    raise NotImplementedError


@algorithm_3_of.register(FloatSampler)
@jit(allocates=True)
def _algorithm_3_float(sampler: FloatSampler, p: PRAEParams, x: np.ndarray, n: int, M: float,
                       noise: NoiseView, run: int) -> float:
    u_hist = np.empty(p.n_bins)  # the histogram's uniforms first, then the mean's
    for b in range(p.n_bins):
        u_hist[b] = take_uniform(noise, run)
    return algorithm_3(x, n, M, p.epsilon, p.D, p.r, p.n_bins, u_hist, take_uniform(noise, run),
                       p.noise_multiplier)[0]


@algorithm_3_of.register(ExactSampler)
@jit(allocates=True)
def _algorithm_3_exact(sampler: ExactSampler, p: PRAEParams, x: np.ndarray, n: int, M: float,
                       noise: NoiseView, run: int) -> float:
    return algorithm_3_exact(x, n, M, p.D, p.r, p.n_bins, noise, run, sampler.q,
                             sampler.count_budget)[0]


@end_epoch.register(PRAEParams)
@jit
def _prae_end_epoch(p: PRAEParams, s: ElimState, run: int) -> None:
    """Lines 18–20: remove every arm with μ̃_max − μ̃_a > 2β_τ."""
    tau = s.epoch[run]
    if tau >= p.first_elimination_batch:
        eliminate(p, s, run, 2.0 * p.beta_table[tau, s.n_active[run]])


class PRAER(PrivateRobustArmElimination):
    """**PRAE-R**: Algorithm 1 with Algorithm 2 (finite k-th raw moment), Theorems 6.1/6.2.

    M_τ and β_τ are those of Theorem 6.1 (contaminated form; uncontaminated for α = 0, Remark
    6.3) with n = B_τ and δ_τ = δ/(2|S|τ²); 𝒯 = log(8/δ_τ)/α (Theorem 6.2, proof). For a moment
    bound E|X|^k ≤ u, M and β are scaled by u^{1/k}. Constants: see the module docstring.

    Args:
        K, horizon, epsilon, delta, first_phase, arm_order, constant_scale, sampler, n_runs: see
            :class:`PrivateRobustArmElimination`.
        alpha: contamination level α ∈ [0, 0.5] (the proof of Theorem 6.1 covers α ≤ 1/2).
        raw_moment_bound: u with E|X|^k ≤ u for every inlier law (the env's public value;
            u = max μ_a² + Var on ``HuberBandit-v0``).
        moment_order: k ≥ 2.
    """

    name = "prae-r"
    parameters = {
        **PrivateRobustArmElimination.parameters,
        "alpha": Param(Real(0.0, ALPHA_MAX_RAW), assumes="alpha"),
        "raw_moment_bound": Param(Real(0.0, low_open=True), assumes="raw_moment_bound"),
        "moment_order": MOMENT_ORDER,
    }

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, alpha: float = 0.0,
                 raw_moment_bound: float = 1.0, moment_order: float = 2.0,
                 delta: float | None = None, first_phase: str = "batch-random",
                 arm_order: str = "index", constant_scale: float = 1.0, sampler: str = "float",
                 n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(K, horizon, epsilon, delta, first_phase, arm_order, constant_scale,
                         sampler=sampler, n_runs=n_runs)
        self.scale = self.raw_moment_bound ** (1.0 / self.moment_order)  # u^{1/k}
        self._init_schedule()

    def samples_needed(self, delta: np.ndarray | float) -> np.ndarray:
        return raw_moment_threshold(delta, self.alpha)

    def prm_parameters(self, B: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        M, beta = raw_moment_parameters(B, self.epsilon, delta, self.alpha, self.moment_order)
        return self.scale * M, self.scale * beta


class DPRSE(PRAER):
    """**DPRSE** (Tao, Wu, Zhao, Wang 2022, "Optimal rates of (locally) differentially private
    heavy-tailed multi-armed bandits"), the baseline of paper 1 §7 — a **reconstruction**.

    Its pseudocode is in neither of our papers and no public code exists. Following paper 1's
    description ("more aggressive truncation thresholds which incorporate more
    outliers"), it is the same batched successive elimination with the raw-moment truncated
    Laplace mean (Algorithm 2) but thresholds that ignore contamination: Theorem 6.1's
    uncontaminated parameters M_τ = u^{1/k}(B_τ ε/(4 log(4/δ_τ)))^{1/k} and
    β_τ = u^{1/k}[√(2 log(4/δ_τ)/B_τ) + 2(4 log(4/δ_τ)/(B_τ ε))^{1−1/k}] (no α-term), and no
    random first phase. That is exactly :class:`PRAER` with α = 0.

    Args:
        K, horizon, epsilon, delta, raw_moment_bound, moment_order: as :class:`PRAER`.
        arm_order, constant_scale, sampler, n_runs: as :class:`PRAER`.
    """

    name = "dprse"
    parameters = {k: v for k, v in PRAER.parameters.items() if k not in ("alpha", "first_phase")}

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, raw_moment_bound: float = 1.0,
                 moment_order: float = 2.0, delta: float | None = None, arm_order: str = "index",
                 constant_scale: float = 1.0, sampler: str = "float", n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(K, horizon, epsilon, 0.0, raw_moment_bound, moment_order, delta,
                         "batch-random", arm_order, constant_scale, sampler=sampler,
                         n_runs=n_runs)


class PRAEC(PrivateRobustArmElimination):
    r"""**PRAE-C**: Algorithm 1 with Algorithm 3 (finite k-th central moment), Theorems 6.10/6.12.

    r, M_τ, β_τ and 𝒯 follow Corollary 6.6 (α = 0) / 6.8 (α > 0) with the proofs' constants
    (module docstring). Algorithm 3 splits the B_τ pulls of a batch into two folds of
    n = B_τ/2 — the corollaries' conditions are on this fold size, so the first phase lasts while
    B_τ/2 < 𝒯 (Theorem 6.12 writes "n replaced by B_τ"; the radius must hold for the data actually
    used). Bins have width r and cover [−D, D) with D ≥ max(2r, ``mean_range``), rounded up so that
    2D/r is an integer. For a central moment bound E|X − μ|^k ≤ v, r, M and β are scaled by
    v^{1/k}.

    Args:
        K, horizon, epsilon, delta, first_phase, arm_order, constant_scale, sampler, n_runs: see
            :class:`PrivateRobustArmElimination`.
        alpha: contamination level α ∈ [0, 0.133) (the breakdown point of Corollary 6.8).
        central_moment_bound: v with E|X − μ|^k ≤ v (the env's public value: Var = 5).
        mean_range: a bound on \|μ_a\| (the env's public value); required.
        moment_order: k ≥ 2.
    """

    name = "prae-c"
    parameters = {
        **PrivateRobustArmElimination.parameters,
        "alpha": Param(Real(0.0, ALPHA_MAX_CENTRAL, high_open=True), assumes="alpha"),
        "central_moment_bound": Param(Real(0.0, low_open=True), assumes="central_moment_bound"),
        "mean_range": Param(Real(0.0, none=True), assumes="mean_range"),
        "moment_order": MOMENT_ORDER,
    }

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, alpha: float = 0.0,
                 central_moment_bound: float = 1.0, mean_range: float | None = None,
                 moment_order: float = 2.0, delta: float | None = None,
                 first_phase: str = "batch-random", arm_order: str = "index",
                 constant_scale: float = 1.0, sampler: str = "float", n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(K, horizon, epsilon, delta, first_phase, arm_order, constant_scale,
                         sampler=sampler, n_runs=n_runs)
        if self.mean_range is None:
            raise ValueError("mean_range (a bound D on |μ_a|) must be given for PRAE-C")
        self.scale = self.central_moment_bound ** (1.0 / self.moment_order)  # v^{1/k}
        self.r = self.scale * central_bin_width(self.alpha, self.moment_order)  # bin width
        self.n_bins = max(4, math.ceil(2.0 * self.mean_range / self.r))  # D ≥ 2r, D ≥ |μ_a|
        self.D = self.n_bins * self.r / 2.0
        self._init_schedule()

    def histogram(self) -> tuple[float, float, int]:
        """(D, r, bins): Algorithm 3's bins of width r over [−D, D)."""
        return self.D, self.r, self.n_bins

    def samples_needed(self, delta: np.ndarray | float) -> np.ndarray:
        return 2.0 * central_moment_threshold(delta, self.alpha, self.epsilon,
                                              self.D / self.scale)

    def prm_parameters(self, B: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.asarray(B) // 2  # the fold size
        _, M, beta = central_moment_parameters(n, self.epsilon, delta, self.alpha,
                                               self.moment_order)
        return self.scale * M, self.scale * beta
