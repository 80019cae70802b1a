r"""Continual counting in compiled code: the binary (tree) mechanism on one scalar stream, and the
confidence width of a sum of independent Laplace noises.

The batched :class:`~privenv.privacy.tree.TreeMechanism` releases private prefix sums of vector
and matrix streams for many runs at once (numpy); the private multi-armed agents need the same
mechanism on a **scalar** stream per (run, arm), inside their compiled kernels: these functions.
Both are the binary mechanism of Chan, Shi & Song (2011) (Dwork, Naor, Pitassi & Rothblum 2010):
the items x₁, x₂, … are the leaves of a binary tree; when item i arrives, the node of level
j = (lowest set bit of i) completes, its exact p-sum is x_i plus the p-sums of the levels below
(then discarded), its noise is drawn **once**, and the private prefix sum after item i is the sum
of the noisy p-sums of the set bits of i (``tests/privacy/test_continual.py`` checks that the two
implementations give the same prefixes from the same node noises).

A stream's state is a row ``psum[r, :]``, ``noisy[r, :]`` of two 2-D arrays (one row per stream,
one column per level), so an agent keeps K streams per run as rows r = run·K + arm.

Privacy: an item lies in at most L = ⌊log₂ n⌋ + 1 completed nodes of a stream of n items; with
node noise Lap(b) and L1 sensitivity Δ of an item, the stream is (L·Δ/b)-DP (basic composition;
Chan et al. 2011, Theorem 3.5).

**Width of the noise** (:func:`laplace_sum_width`). For independent Lap(b_i), ν ≥ √(Σb_i²) and
0 < λ < 2√2ν²/max b_i, P(\|Σ\| ≥ λ) ≤ 2 exp(−λ²/(8ν²)) (Chan, Shi & Song 2011, Lemma 2.8). With
ν = max{√(Σb_i²), max b_i·√ln(2/γ)} and λ = ν√(8 ln(2/γ)) the condition holds, so
\|Σ\| ≤ ν√(8 ln(2/γ)) with probability ≥ 1 − γ (their Corollary 2.9).
"""

from __future__ import annotations

import math

import numpy as np

from privenv._jit import jit

__all__ = ["binary_add", "binary_prefix", "laplace_sum_width", "lowest_bit", "popcount"]


@jit
def lowest_bit(i: int) -> int:
    """The index j of the lowest set bit of i ≥ 1 (i = 2ʲ·odd)."""
    j = 0
    while (i >> j) & 1 == 0:
        j += 1
    return j


@jit
def binary_add(psum: np.ndarray, noisy: np.ndarray, r: int, i: int, x: float,
               node_noise: float) -> int:
    """Add item number ``i`` (1-based) with value ``x`` to stream ``r``; ``node_noise`` is the
    noise of the node that completes (drawn by the caller, once). Returns its level j."""
    j = lowest_bit(i)
    total = x
    for level in range(j):
        total += psum[r, level]
        psum[r, level] = 0.0
        noisy[r, level] = 0.0
    psum[r, j] = total
    noisy[r, j] = total + node_noise
    return j


@jit
def binary_prefix(noisy: np.ndarray, r: int, i: int) -> float:
    """The private prefix sum of stream ``r`` after item ``i``: Σ of the noisy p-sums of the set
    bits of i (0 for i = 0)."""
    out = 0.0
    level = 0
    while i > 0:
        if i & 1:
            out += noisy[r, level]
        i >>= 1
        level += 1
    return out


@jit
def popcount(i: int) -> int:
    """The number of set bits of i ≥ 0 (the nodes a prefix of i items sums)."""
    n = 0
    while i > 0:
        n += i & 1
        i >>= 1
    return n


@jit
def laplace_sum_width(sum_b2: float, b_max: float, log_2_over_gamma: float) -> float:
    r"""A bound on \|Σ Lap(b_i)\| holding with probability ≥ 1 − γ: ν√(8 ln(2/γ)),
    ν = max{√(Σb_i²), max b_i·√ln(2/γ)} (Chan, Shi & Song 2011, Corollary 2.9; module
    docstring). ``sum_b2`` = Σb_i², ``b_max`` = max b_i, ``log_2_over_gamma`` = ln(2/γ)."""
    nu = max(math.sqrt(sum_b2), b_max * math.sqrt(log_2_over_gamma))
    return nu * math.sqrt(8.0 * log_2_over_gamma)
