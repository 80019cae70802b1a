"""Wishart noise for Gram matrices: the paper's (non-private) mechanism and a valid alternative.

Paper 4 (Li, Simchi-Levi & Wang 2024), Algorithm 3
(LPLR-Update), line 5 privatizes a user's φ_hφ_hᵀ (‖γ^{−k_h}φ_h‖₂ ≤ 1) as

    Λ̂_B ← Λ̂_B + 1{φ ≠ ⊥}·φ_hφ_hᵀ + 3γ^{−2k_h}·(W_d(d+1, 1.5α⁻¹I) − 1.5(d+1)α⁻¹I),

and Proposition 4.1 (proof in §8.1) claims α/3-local DP for this part "as a consequence of the
Wishart mechanism (Jiang, Xie & Zhang 2016)". **That mechanism is not differentially private**
(Sheffet 2019, "Old techniques in differentially private linear regression", ALT; IBM
diffprivlib removed its implementation, issues #23/#42): with d+1 degrees of freedom the Wishart
matrix is positive definite a.s., so the output lies in {M : M − φφᵀ + c·I ≻ 0}, a set that
depends on φ. For neighbouring users φ = e₁ and φ′ = e₂ the event {M + c·I − e₁e₁ᵀ ⊁ 0} has
probability 0 under φ and a positive probability under φ′: no finite ε, and δ = 0 is claimed.
:func:`wishart_jiang2016` reproduces it exactly, for faithful reproduction only, and
``tests/privacy/test_wishart.py`` audits it (the audit finds ε lower bounds far above α/3).

The valid alternative here is **symmetric Gaussian noise**: release
φφᵀ + E, E symmetric with upper triangle (diagonal included) i.i.d. N(0, σ²)
(:func:`symmetric_gaussian_gram`). Releasing the upper triangle is the Gaussian mechanism on a
d(d+1)/2-vector with L2 sensitivity Δ = :func:`gram_sensitivity`, so it is (ε, δ)-DP for
σ = Δ/μ with μ from the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8;
:func:`gram_gaussian_sigma`) and ρ = Δ²/(2σ²)-zCDP (Bun & Steinke 2016, Prop. 1.6). The
Sheffet-style Wishart alternative (degrees of freedom growing like ln(1/δ)/ε²) is not
implemented: its constants could not be checked against Shariff & Sheffet 2018 §4 here.

Samplers: :func:`wishart_from_standard` turns standard normals into W_d(k, C) draws (a sum of k
outer products of N(0, C) vectors: W = Σⱼ (Lzⱼ)(Lzⱼ)ᵀ with C = LLᵀ), vectorised over runs; the
mechanisms take a :class:`~privenv.seeding.RunNoise` or a ``Generator``
(:func:`~privenv.privacy.tree.run_normals`).
"""

from __future__ import annotations

import math

import numpy as np

from privenv._validation import check_choice, check_delta, check_epsilon, check_int

from .mechanisms import check_positive, gaussian_sigma_analytic, symmetric_gaussian_from_standard
from .tree import NoiseSource, run_normals

__all__ = [
    "check_gram_inputs",
    "gram_gaussian_sigma",
    "gram_sensitivity",
    "symmetric_gaussian_gram",
    "wishart",
    "wishart_from_standard",
    "wishart_jiang2016",
    "wishart_jiang2016_claimed_epsilon",
    "wishart_jiang2016_noise",
]


# ---------------------------------------------------------------------------------------------
# Wishart sampler
# ---------------------------------------------------------------------------------------------


def _check_scale(scale: np.ndarray | float, dim: int) -> np.ndarray:
    """C as a d×d symmetric positive-definite matrix (a scalar c means c·I); returns chol(C)."""
    c = np.asarray(scale, dtype=float)
    if c.ndim == 0:
        c = check_positive(float(c), "scale") * np.eye(dim)
    if c.shape != (dim, dim) or not np.all(np.isfinite(c)) or not np.allclose(c, c.T):
        raise ValueError(
            f"scale must be a positive scalar or a symmetric positive-definite {dim}x{dim} "
            f"matrix, got shape {c.shape}"
        )
    try:
        return np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        raise ValueError("scale must be positive definite") from None


def wishart_from_standard(
    z: np.ndarray, scale: np.ndarray | float = 1.0, *, df: int | None = None
) -> np.ndarray:
    """W_d(k, C) draws from standard normals: W = Σⱼ₌₁ᵏ (Lzⱼ)(Lzⱼ)ᵀ, C = LLᵀ.

    Args:
        z: standard normals of shape ``(..., k·d)`` (row j of the k×d block is zⱼ).
        scale: C, a symmetric positive-definite d×d matrix, or a scalar c for c·I.
        df: k (the number of degrees of freedom); required, and z's last axis must be k·d.

    Returns:
        shape ``(..., d, d)``. E[W] = k·C, Var(W_ij) = k(C_ij² + C_ii·C_jj).
    """
    if df is None:
        raise ValueError("df must be given (an integer >= 1)")
    k = check_int("df", df, low=1)
    z = np.asarray(z, dtype=float)
    if z.ndim == 0 or z.shape[-1] % k:
        raise ValueError(f"z must have last axis df·d (df={k}), got shape {z.shape}")
    d = z.shape[-1] // k
    if d < 1:
        raise ValueError(f"z must have last axis df·d >= df={k}, got shape {z.shape}")
    chol = _check_scale(scale, d)
    x = z.reshape(*z.shape[:-1], k, d) @ chol.T  # rows Lzⱼ ~ N(0, C)
    return np.einsum("...ki,...kj->...ij", x, x)


def wishart(
    df: int,
    scale: np.ndarray | float,
    rng: np.random.Generator,
    size: int | tuple[int, ...] = (),
    *,
    dim: int | None = None,
) -> np.ndarray:
    """Draw W_d(k, C) matrices of shape ``(*size, d, d)`` from ``rng``.

    ``scale`` a d×d matrix fixes d; a scalar c (meaning c·I) needs ``dim``.
    """
    k = check_int("df", df, low=1)
    if np.ndim(scale) == 0:
        if dim is None:
            raise ValueError("dim must be given when scale is a scalar")
        d = check_int("dim", dim, low=1)
    else:
        d = np.shape(scale)[0]
    batch = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    return wishart_from_standard(rng.standard_normal((*batch, k * d)), scale, df=k)


# ---------------------------------------------------------------------------------------------
# inputs: a batch of symmetric matrices (one user's φφᵀ per run)
# ---------------------------------------------------------------------------------------------


def check_gram_inputs(matrices: np.ndarray) -> np.ndarray:
    """A float array ``(n, d, d)`` of finite symmetric matrices, else ``ValueError``."""
    m = np.asarray(matrices, dtype=float)
    if m.ndim != 3 or m.shape[1] != m.shape[2] or m.shape[1] < 1:
        raise ValueError(f"matrices must have shape (n_runs, d, d), got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("matrices must contain only finite numbers")
    if not np.allclose(m, np.swapaxes(m, 1, 2)):
        raise ValueError("matrices must be symmetric")
    return m


def _runs_for(matrices: np.ndarray, runs: np.ndarray | None) -> np.ndarray:
    if runs is None:
        return np.arange(matrices.shape[0])
    runs = np.asarray(runs)
    if runs.shape != (matrices.shape[0],) or not np.issubdtype(runs.dtype, np.integer):
        raise ValueError(
            f"runs must hold one run index per matrix ({matrices.shape[0]}), got {runs!r}"
        )
    return runs


# ---------------------------------------------------------------------------------------------
# the paper's mechanism (NOT differentially private)
# ---------------------------------------------------------------------------------------------


def wishart_jiang2016_claimed_epsilon(alpha: float) -> float:
    """The privacy paper 4 claims for the Λ̂ update: α/3-LDP, δ = 0 (Prop. 4.1, §8.1).

    A claim, not a guarantee: the mechanism is not DP for any finite ε (module docstring).
    """
    return check_epsilon(alpha, "alpha") / 3.0


def wishart_jiang2016_noise(
    dim: int,
    alpha: float,
    noise: NoiseSource,
    runs: np.ndarray,
    *,
    scale: float = 1.0,
) -> np.ndarray:
    """Centred Wishart noise of paper 4, Alg. 3 line 5: 3s·(W_d(d+1, 1.5α⁻¹I) − 1.5(d+1)α⁻¹I).

    ``scale`` s is the paper's γ^{−2k_h} (1 on the first level). Shape ``(len(runs), d, d)``.
    Labelled as the paper's: see :func:`wishart_jiang2016`.
    """
    d = check_int("dim", dim, low=1)
    alpha = check_epsilon(alpha, "alpha")
    s = check_positive(scale, "scale")
    runs = np.asarray(runs)
    c = 1.5 / alpha  # W_d(d+1, 1.5α⁻¹·I)                                  (Alg. 3, line 5)
    w = wishart_from_standard(run_normals(noise, runs, (d + 1) * d), c, df=d + 1)
    return 3.0 * s * (w - (d + 1) * c * np.eye(d))  # minus its mean 1.5(d+1)α⁻¹·I


def wishart_jiang2016(
    matrices: np.ndarray,
    alpha: float,
    noise: NoiseSource,
    runs: np.ndarray | None = None,
    *,
    scale: float = 1.0,
) -> np.ndarray:
    """The paper's "Wishart mechanism" for one user's φ_hφ_hᵀ — **not differentially private**.

    Paper 4, Algorithm 3 (LPLR-Update), line 5, after Jiang, Xie & Zhang 2016: returns
    φφᵀ + 3s·(W_d(d+1, 1.5α⁻¹I) − 1.5(d+1)α⁻¹I) for each run. Paper 4 claims α/3-LDP
    (:func:`wishart_jiang2016_claimed_epsilon`); Sheffet 2019 shows the Wishart mechanism is not
    DP (the output's support depends on the input), and our audit confirms it
    (tests/privacy/test_wishart.py). Use only to reproduce paper 4 as written; use
    :func:`symmetric_gaussian_gram` for a real guarantee.

    Args:
        matrices: ``(n, d, d)`` symmetric inputs (φ_hφ_hᵀ, or 0 for ⊥).
        alpha: the paper's α > 0 (its LDP level for the whole LPLR-Update).
        noise: :class:`~privenv.seeding.RunNoise` or ``Generator``.
        runs: the run of each row (default 0 … n−1), to read run i's noise stream.
        scale: γ^{−2k_h}.
    """
    m = check_gram_inputs(matrices)
    runs = _runs_for(m, runs)
    return m + wishart_jiang2016_noise(m.shape[1], alpha, noise, runs, scale=scale)


# ---------------------------------------------------------------------------------------------
# the valid alternative: symmetric Gaussian noise
# ---------------------------------------------------------------------------------------------


def gram_sensitivity(
    dim: int, bound: float = 1.0, neighbouring: str = "replace-one"
) -> float:
    """L2 sensitivity of the upper triangle (diagonal included) of φφᵀ, ‖φ‖₂ ≤ B.

    For symmetric A, ‖triu(A)‖₂² = Σᵢ Aᵢᵢ² + Σ_{i<j} Aᵢⱼ² ≤ ‖A‖_F². Add/remove: ‖φφᵀ‖_F = ‖φ‖²
    ≤ B², attained by any φ with one non-zero coordinate. Replace-one: ‖φφᵀ − φ′φ′ᵀ‖_F² =
    ‖φ‖⁴ + ‖φ′‖⁴ − 2(φ·φ′)² ≤ 2B⁴, attained for d ≥ 2 by φ = Be₁, φ′ = Be₂ (the triangle then
    holds B², −B² on the diagonal): Δ = √2·B²; for d = 1, Δ = B².
    """
    d = check_int("dim", dim, low=1)
    b = check_positive(bound, "bound")
    check_choice("neighbouring", neighbouring, ("replace-one", "add-remove"))
    if neighbouring == "add-remove" or d == 1:
        return b * b
    return math.sqrt(2.0) * b * b


def gram_gaussian_sigma(
    epsilon: float,
    delta: float,
    dim: int,
    bound: float = 1.0,
    neighbouring: str = "replace-one",
) -> float:
    """σ making :func:`symmetric_gaussian_gram` (ε, δ)-DP: analytic Gaussian (Balle & Wang 2018,
    Theorem 8) with Δ = :func:`gram_sensitivity`."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return gaussian_sigma_analytic(epsilon, delta, gram_sensitivity(dim, bound, neighbouring))


def symmetric_gaussian_gram(
    matrices: np.ndarray,
    sigma: float,
    noise: NoiseSource,
    runs: np.ndarray | None = None,
) -> np.ndarray:
    """φφᵀ + E with E symmetric, upper triangle i.i.d. N(0, σ²), mirrored (valid alternative).

    (ε, δ)-DP per user with σ = :func:`gram_gaussian_sigma` (ε, δ, d, B); ρ-zCDP with
    ρ = Δ²/(2σ²), Δ = :func:`gram_sensitivity` (Gaussian mechanism on the upper triangle).

    Args:
        matrices: ``(n, d, d)`` symmetric inputs.
        sigma: σ > 0.
        noise: :class:`~privenv.seeding.RunNoise` or ``Generator``.
        runs: the run of each row (default 0 … n−1).
    """
    m = check_gram_inputs(matrices)
    sigma = check_positive(sigma, "sigma")
    runs = _runs_for(m, runs)
    d = m.shape[1]
    z = run_normals(noise, runs, d * (d + 1) // 2)
    return m + symmetric_gaussian_from_standard(z, d, sigma)
