"""Statistical privacy audits (docs/design/threat-model.md, "How the guarantees are checked").

* Exact binomial confidence bounds: Clopper & Pearson 1934; Wilson 1927.
* ε lower bounds from neighbouring inputs: run a mechanism n times on D and on D′; for every event
  E of a family declared *before* looking at the samples, (ε, δ)-DP implies
  P_D(E) ≤ e^ε P_D′(E) + δ, so ε ≥ ln((p_lo(D) − δ)/p_hi(D′)) with one-sided Clopper–Pearson
  bounds (Jagielski, Ullman & Oprea 2020; Ding et al. 2018). Bonferroni over all the bounds makes
  the family-wise false-alarm probability ≤ α: ε_lb > ε proves a violation with confidence 1 − α.
* For outputs where no event family is obvious (agents): choose the event on one half of the
  samples, evaluate it on the other half (:func:`holdout_epsilon_lower_bound`).
* Goodness of fit of samplers: Kolmogorov–Smirnov plus a variance z-test (:func:`goodness_of_fit`);
  for integer-valued (exact) samplers a χ² test on equiprobable bins of the exact law plus the same
  variance test (:func:`discrete_goodness_of_fit`).

Every audit here must also be run on a deliberately broken mechanism and fail (mutation tests).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from privenv._validation import check_real

__all__ = [
    "AuditResult",
    "GofResult",
    "clopper_pearson",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "discrete_goodness_of_fit",
    "epsilon_lower_bound",
    "goodness_of_fit",
    "holdout_epsilon_lower_bound",
    "info_holds_values",
    "threshold_epsilon_lower_bound",
    "wilson_interval",
]


def _check_alpha(alpha: float) -> float:
    return check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)


def _check_counts(k: np.ndarray | int, n: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n) or np.any(k != np.floor(k)):
        raise ValueError(
            f"counts must be integers with 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}"
        )
    return k, n


def clopper_pearson_lower(k: np.ndarray | int, n: np.ndarray | int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) lower Clopper–Pearson bound on a binomial proportion: Beta(α; k, n−k+1)."""
    alpha = _check_alpha(alpha)
    k, n = _check_counts(k, n)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k == 0, 0.0, lo)


def clopper_pearson_upper(k: np.ndarray | int, n: np.ndarray | int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) upper Clopper–Pearson bound: Beta(1 − α; k+1, n−k)."""
    alpha = _check_alpha(alpha)
    k, n = _check_counts(k, n)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k == n, 1.0, hi)


def clopper_pearson(
    k: np.ndarray | int, n: np.ndarray | int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided (1 − α) Clopper–Pearson interval (α/2 in each tail)."""
    return clopper_pearson_lower(k, n, alpha / 2.0), clopper_pearson_upper(k, n, alpha / 2.0)


def wilson_interval(
    k: np.ndarray | int, n: np.ndarray | int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided (1 − α) Wilson score interval (Wilson 1927)."""
    alpha = _check_alpha(alpha)
    k, n = _check_counts(k, n)
    z = stats.norm.isf(alpha / 2.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an ε lower-bound audit.

    Attributes:
        epsilon_lb: the lower bound (−inf if no event gives one).
        event: index of the event achieving it (in the caller's event list).
        direction: ``"D>D'"`` if it bounds P_D(E)/P_D′(E), ``"D'>D"`` for the reverse.
        p_lower: lower confidence bound on the larger probability.
        q_upper: upper confidence bound on the smaller probability.
        n_bounds: number of one-sided bounds in the Bonferroni correction.
        alpha: family-wise false-alarm probability.
    """

    epsilon_lb: float
    event: int
    direction: str
    p_lower: float
    q_upper: float
    n_bounds: int
    alpha: float

    def violates(self, epsilon: float) -> bool:
        """True if the audit proves the mechanism is not (ε, δ)-DP (at confidence 1 − α)."""
        return self.epsilon_lb > epsilon


def epsilon_lower_bound(
    counts_d: np.ndarray,
    n_d: int,
    counts_dprime: np.ndarray,
    n_dprime: int,
    *,
    delta: float = 0.0,
    alpha: float = 1e-6,
) -> AuditResult:
    """ε lower bound from event counts on neighbouring inputs D and D′, both directions.

    Args:
        counts_d: for each event E_j of a pre-declared family, the number of the ``n_d`` runs on D
            whose output fell in E_j.
        counts_dprime: the same on D′.
        delta: the mechanism's δ (subtracted: P_D(E) − δ ≤ e^ε P_D′(E)).
        alpha: family-wise false-alarm probability, split (Bonferroni) over the
            4 × (number of events) one-sided bounds computed.
    """
    alpha = _check_alpha(alpha)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    kd = np.atleast_1d(np.asarray(counts_d))
    kp = np.atleast_1d(np.asarray(counts_dprime))
    if kd.shape != kp.shape or kd.ndim != 1:
        raise ValueError(
            f"counts_d and counts_dprime must be 1-D of equal length, got {kd.shape}, {kp.shape}"
        )
    n_bounds = 4 * kd.shape[0]
    a = alpha / n_bounds
    lo_d, hi_d = clopper_pearson_lower(kd, n_d, a), clopper_pearson_upper(kd, n_d, a)
    lo_p, hi_p = clopper_pearson_lower(kp, n_dprime, a), clopper_pearson_upper(kp, n_dprime, a)
    best = AuditResult(-math.inf, -1, "", 0.0, 1.0, n_bounds, alpha)
    for direction, p_lo, q_hi in (("D>D'", lo_d, hi_p), ("D'>D", lo_p, hi_d)):
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.where(
                p_lo - delta > 0, np.log(np.maximum(p_lo - delta, 1e-300) / q_hi), -np.inf
            )
        j = int(np.argmax(eps))
        if eps[j] > best.epsilon_lb:
            best = AuditResult(
                float(eps[j]), j, direction, float(p_lo[j]), float(q_hi[j]), n_bounds, alpha
            )
    return best


def threshold_epsilon_lower_bound(
    samples_d: np.ndarray,
    samples_dprime: np.ndarray,
    thresholds: Sequence[float] | np.ndarray,
    *,
    delta: float = 0.0,
    alpha: float = 1e-6,
) -> AuditResult:
    """ε lower bound for 1-D outputs over the events {y > t} for pre-declared thresholds t.

    Event j < T is {y > t_j}, event j ≥ T is {y ≤ t_{j−T}}. The
    Bonferroni split counts every event separately (conservative: a complement's bounds are
    those of its event).
    """
    y0 = np.asarray(samples_d, dtype=float).ravel()
    y1 = np.asarray(samples_dprime, dtype=float).ravel()
    t = check_thresholds(thresholds)
    return threshold_counts_lower_bound(count_above(y0, t), y0.size, count_above(y1, t), y1.size,
                                        delta=delta, alpha=alpha)


def check_thresholds(thresholds: Sequence[float] | np.ndarray) -> np.ndarray:
    """The thresholds as a float array (non-empty, finite)."""
    t = np.asarray(thresholds, dtype=float).ravel()
    if t.size == 0 or not np.all(np.isfinite(t)):
        raise ValueError(
            f"thresholds must be a non-empty sequence of finite numbers, got {thresholds!r}"
        )
    return t


def threshold_counts_lower_bound(above_d: np.ndarray, n_d: int, above_dprime: np.ndarray,
                                 n_dprime: int, *, delta: float = 0.0,
                                 alpha: float = 1e-6) -> AuditResult:
    """:func:`threshold_epsilon_lower_bound` from the counts of samples above each threshold
    (e.g. summed over chunks of samples drawn in turn)."""
    k0 = np.concatenate([above_d, n_d - above_d])
    k1 = np.concatenate([above_dprime, n_dprime - above_dprime])
    return epsilon_lower_bound(k0, n_d, k1, n_dprime, delta=delta, alpha=alpha)


def count_above(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Number of entries of y strictly greater than each threshold."""
    return y.size - np.searchsorted(np.sort(y), t, side="right")


def holdout_epsilon_lower_bound(
    scores_d: np.ndarray,
    scores_dprime: np.ndarray,
    *,
    n_candidates: int = 15,
    delta: float = 0.0,
    alpha: float = 1e-6,
) -> AuditResult:
    """ε lower bound for scalar scores of arbitrary outputs, choosing the event on held-out data.

    The first half of each sample chooses, among {score > t} and {score ≤ t} for ``n_candidates``
    pooled quantiles t, the event with the largest point estimate of ln((p − δ)/q); the second
    half evaluates that single event (so no selection bias, and only 2 directions are counted).
    Use it for multi-dimensional outputs by first mapping them to a score (e.g. the number of
    pulls of arm 1 after the differing user, or a logistic score fitted on the first half).
    """
    s0 = np.asarray(scores_d, dtype=float).ravel()
    s1 = np.asarray(scores_dprime, dtype=float).ravel()
    h0, h1 = s0.size // 2, s1.size // 2
    if h0 < 1 or h1 < 1:
        raise ValueError("scores_d and scores_dprime need at least 2 samples each")
    sel0, ev0, sel1, ev1 = s0[:h0], s0[h0:], s1[:h1], s1[h1:]
    qs = np.linspace(0.0, 1.0, n_candidates + 2)[1:-1]
    cand = np.unique(np.quantile(np.concatenate([sel0, sel1]), qs))
    a0 = (sel0[:, None] > cand).mean(axis=0)
    a1 = (sel1[:, None] > cand).mean(axis=0)
    p = np.concatenate([a0, 1 - a0, a1, 1 - a1])  # (event, direction) candidates
    q = np.concatenate([a1, 1 - a1, a0, 1 - a0])
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(
            p - delta > 0,
            np.log(np.maximum(p - delta, 1e-300) / np.maximum(q, 1.0 / max(h0, h1))),
            -np.inf,
        )
    j = int(np.argmax(est))
    m = cand.size
    t, above = cand[j % m], (j // m) % 2 == 0
    in0 = (ev0 > t) if above else (ev0 <= t)
    in1 = (ev1 > t) if above else (ev1 <= t)
    k0, k1 = np.array([in0.sum()]), np.array([in1.sum()])
    if j < 2 * m:  # chosen direction D > D'
        return epsilon_lower_bound(k0, ev0.size, k1, ev1.size, delta=delta, alpha=alpha)
    return epsilon_lower_bound(k1, ev1.size, k0, ev0.size, delta=delta, alpha=alpha)


@dataclass(frozen=True)
class GofResult:
    """Goodness of fit of a sample to a reference law (KS + variance z-test, Bonferroni)."""

    ks_pvalue: float
    variance_z: float
    variance_pvalue: float
    alpha: float

    @property
    def passed(self) -> bool:
        return min(self.ks_pvalue, self.variance_pvalue) > self.alpha / 2.0


def goodness_of_fit(
    samples: np.ndarray, dist: stats.rv_continuous, alpha: float = 1e-6
) -> GofResult:
    """KS test against the frozen SciPy law ``dist`` and a z-test of the sample variance.

    SE(s²) = σ²√((κ − 1)/n) with κ the kurtosis (Laplace κ = 6: SE(s²/2b²) = √(5/n); Gaussian
    κ = 3). KS at n = 10⁶ detects scale errors of about 1.5%; the variance test catches the
    smaller ones. Each test at α/2.
    """
    alpha = _check_alpha(alpha)
    x = np.asarray(samples, dtype=float).ravel()
    if x.size < 2:
        raise ValueError(f"samples must have at least 2 values, got {x.size}")
    # SciPy's "exact" KS p-value costs ~1 s at n = 10⁶ when D is large; the asymptotic
    # (Kolmogorov) distribution is accurate there.
    ks = stats.kstest(x, dist.cdf, method="asymp" if x.size > 10_000 else "auto")
    mean, var, _, excess_kurtosis = (float(v) for v in dist.stats(moments="mvsk"))
    s2 = float(np.mean((x - mean) ** 2))  # the mean is known: no Bessel correction needed
    z = (s2 - var) / (var * math.sqrt((excess_kurtosis + 2.0) / x.size))
    return GofResult(float(ks.pvalue), z, float(2.0 * stats.norm.sf(abs(z))), alpha)


def discrete_goodness_of_fit(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray,
                             alpha: float = 1e-6, n_bins: int = 100) -> GofResult:
    """χ² test of integer samples against an exact law on ``support`` (sorted integers with
    probabilities ``pmf``, the mass outside the support negligible), on about ``n_bins`` bins of
    consecutive integers cut at the law's quantiles j/n_bins (samples outside the support join
    the end bins), plus the variance z-test of :func:`goodness_of_fit` with the law's exact
    moments; each at α/2. The χ² p-value is reported in the ``ks_pvalue`` slot."""
    alpha = _check_alpha(alpha)
    x = np.asarray(samples).ravel()
    k = np.asarray(support).ravel()
    p = np.asarray(pmf, dtype=float).ravel()
    if x.size < 2 or k.shape != p.shape or k.size < 2:
        raise ValueError("samples need ≥ 2 values and support/pmf equal shapes of ≥ 2 entries")
    p = p / p.sum()
    cdf = np.cumsum(p)
    cuts = np.unique(np.searchsorted(cdf, np.arange(1, n_bins) / n_bins, side="right"))
    cuts = cuts[(cuts > 0) & (cuts < k.size)]
    prob = np.diff(np.concatenate([[0.0], cdf[cuts - 1], [1.0]]))
    counts = np.bincount(np.searchsorted(k[cuts], x, side="right"), minlength=cuts.size + 1)
    expected = prob * x.size
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    chi2_p = float(stats.chi2.sf(chi2, cuts.size))
    mean = float(np.sum(p * k))
    var = float(np.sum(p * (k - mean) ** 2))
    m4 = float(np.sum(p * (k - mean) ** 4))
    s2 = float(np.mean((x - mean) ** 2))
    z = (s2 - var) / math.sqrt((m4 - var * var) / x.size)
    return GofResult(chi2_p, z, float(2.0 * stats.norm.sf(abs(z))), alpha)


def info_holds_values(info: Mapping[str, Any], values: np.ndarray) -> bool:
    """Whether any float in ``info`` (scalars or arrays) equals one of ``values``: the leak check
    that no raw (continuous) reward reached an env's or agent's ``info``."""
    values = np.asarray(values)
    for v in info.values():
        arr = np.asarray(v)
        if arr.dtype.kind == "f" and np.isin(arr, values).any():
            return True
    return False
