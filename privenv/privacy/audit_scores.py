"""The score statistics of the audits: ε lower bounds of vector and multi-release outputs, built
on the threshold events of :mod:`privenv.privacy.audit`.

Each takes the two samples (releases of D and of D′, one row per sample) and returns an
:class:`~privenv.privacy.audit.AuditResult` at the harness's family-wise false-alarm probability
:data:`~privenv.privacy.harness.ALPHA`: a linear score fitted on one half and evaluated on the
other (:func:`fitted_holdout_lower_bound`), the likelihood-ratio statistics of Gaussian and
Laplace vector releases (:func:`gaussian_projection_bound`, :func:`laplace_llr_bound`), the two
statistics of tree-shaped releases (:func:`tree_scores_bound`), and the best of several
(:func:`best_bound`). The cases of :mod:`privenv.privacy.audit_noise`,
:mod:`privenv.privacy.audit_composite` and :mod:`privenv.audits` use them.
"""

from __future__ import annotations

import numpy as np

from privenv.privacy import audit
from privenv.privacy.harness import ALPHA

__all__ = [
    "GAUSS_GRID",
    "GDP_AUDIT_DELTA",
    "LAPLACE_GRID",
    "best_bound",
    "fitted_holdout_lower_bound",
    "gaussian_projection_bound",
    "laplace_llr_bound",
    "tree_scores_bound",
]


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


def tree_scores_bound(scores: list[tuple[np.ndarray, np.ndarray]], grid: np.ndarray,
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
    return audit.threshold_epsilon_lower_bound(scores[0], scores[1], LAPLACE_GRID * top,
                                               delta=0.0, alpha=ALPHA)

