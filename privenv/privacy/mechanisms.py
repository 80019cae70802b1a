"""Noise mechanisms: calibrations and vectorized samplers (numerics: docs/design/threat-model.md).

Every mechanism comes in two forms with **one** implementation of its formula:

* a *transform* of standard variates, e.g. :func:`laplace_from_uniform` (``u`` ~ U[0, 1)) or
  :func:`gaussian_from_standard` (``z`` ~ N(0, 1)). Batched agents and wrappers use these with the
  per-run buffered streams of :class:`privenv.seeding.RunNoise`, so run *i*'s noise comes only from
  run *i*'s stream and does not depend on the batch size;
* a *sampler* taking a seeded ``numpy.random.Generator``, e.g. :func:`laplace`, which draws the
  standard variates and calls the transform.

The transforms of the scalar-state algorithms' randomizers are compiled kernels
(:func:`laplace_noise`, :func:`gaussian_noise`, :func:`rr_release`, :mod:`privenv._jit`) that
compiled agents and wrappers call one value at a time; the array functions apply the same kernels
elementwise, so each formula is written once.

Numerics and threat model. The samplers use idealized floating-point arithmetic: numpy's
floating-point Laplace (and ours) is **not exactly** differentially private — the set of doubles
it can output depends on the input (Mironov 2012, "On significance of the least significant bits
for differential privacy", CCS). privenv only simulates private algorithms and released numbers
never leave the simulator, so this is acceptable; what must be exactly right (and is tested) is
sensitivity, calibration and composition.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize, special

from privenv._jit import jit
from privenv._validation import check_delta, check_epsilon, check_real

from .accounting import gaussian_delta, gaussian_rho

__all__ = [
    "check_positive",
    "check_unit_interval",
    "gaussian",
    "gaussian_from_standard",
    "gaussian_from_uniform",
    "gaussian_mu_analytic",
    "gaussian_noise",
    "gaussian_rho",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classical",
    "gaussian_sigma_zcdp",
    "laplace",
    "laplace_from_uniform",
    "laplace_noise",
    "laplace_scale",
    "randomized_response",
    "randomized_response_from_uniform",
    "rr_debias_mean",
    "rr_keep_probability",
    "rr_mean",
    "rr_one_probability",
    "rr_probability_of_one",
    "rr_release",
    "rr_zero_probability",
    "symmetric_from_upper",
    "symmetric_gaussian_from_standard",
    "symmetric_gaussian_matrix",
]

# numpy's Generator.random() returns k·2⁻⁵³, k ∈ {0, …, 2⁵³−1}. The transforms below evaluate the
# inverse CDF at the centre (k + ½)·2⁻⁵³ of each grid cell: never 0 or 1 (finite outputs) and
# exactly symmetric about ½ (an exactly symmetric noise law).
_HALF_ULP = 2.0**-54


# ---------------------------------------------------------------------------------------------
# validation helpers (the scalar checks live in privenv._validation)
# ---------------------------------------------------------------------------------------------


def check_positive(value: float, name: str) -> float:
    """A finite real > 0 (a sensitivity, scale or standard deviation)."""
    return check_real(name, value, low=0.0, low_open=True, high=math.inf, high_open=True)


def check_unit_interval(values: np.ndarray | float, name: str) -> np.ndarray:
    """A float array with every entry in [0, 1] (no NaN); raises ``ValueError`` otherwise."""
    arr = np.asarray(values, dtype=float)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN compares False, so NaN is "bad"
    if np.any(bad):
        first = arr[bad].flat[0]
        raise ValueError(
            f"{name} must lie in [0, 1] (randomized response does not clip), "
            f"got {int(bad.sum())} value(s) outside, e.g. {first!r}"
        )
    return arr


def _check_uniform(u: np.ndarray | float, name: str = "u") -> np.ndarray:
    arr = np.asarray(u, dtype=float)
    bad = ~((arr >= 0.0) & (arr < 1.0))
    if np.any(bad):
        raise ValueError(
            f"{name} must hold standard uniforms in [0, 1), got e.g. {arr[bad].flat[0]!r}"
        )
    return arr


def _cell_centre_tail(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For u on numpy's grid, return (sign, min(u', 1 − u')) with u' the centre of u's cell.

    Exact in binary64: for u < ½, u + 2⁻⁵⁴ = (2k+1)·2⁻⁵⁴; for u ≥ ½, (1 − u) − 2⁻⁵⁴ (Sterbenz:
    1 − u is exact). Grid points k and 2⁵³−1−k give the same tail and opposite signs. (Adding
    2⁻⁵⁴ to u ≥ ½ directly would round, and 1 − 2⁻⁵³ would become 1.)
    """
    lower = u < 0.5
    tail = np.where(lower, u + _HALF_ULP, (1.0 - u) - _HALF_ULP)
    return np.where(lower, -1.0, 1.0), tail


# ---------------------------------------------------------------------------------------------
# Laplace mechanism (Dwork, McSherry, Nissim, Smith 2006; Dwork & Roth 2014, Def. 3.3, Thm 3.6)
# ---------------------------------------------------------------------------------------------


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """Scale b = Δ₁/ε of the ε-DP Laplace mechanism (Dwork & Roth 2014, Theorem 3.6)."""
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity / epsilon


@jit
def laplace_noise(u: float, scale: float) -> float:
    """Laplace(0, b) noise from one standard uniform u ∈ [0, 1) (the kernel of
    :func:`laplace_from_uniform`): F⁻¹ at the centre of u's 2⁻⁵³ grid cell (see
    :func:`_cell_centre_tail`), b·ln(2u′) below ½ and −b·ln(2(1 − u′)) above."""
    if u < 0.5:
        return scale * math.log(2.0 * (u + _HALF_ULP))
    return -scale * math.log(2.0 * ((1.0 - u) - _HALF_ULP))


@jit
def _laplace_array(u: np.ndarray, scale: float, out: np.ndarray) -> None:
    for i in range(u.size):
        out[i] = laplace_noise(u[i], scale)


def laplace_from_uniform(u: np.ndarray | float, scale: float) -> np.ndarray:
    r"""Laplace(0, b) noise from standard uniforms by the inverse CDF.

    F⁻¹(u) = b·ln(2u) for u < ½ and −b·ln(2(1−u)) for u ≥ ½, evaluated at the centre of u's
    2⁻⁵³ grid cell, so \|noise\| ≤ 53·ln2·b ≈ 36.7·b (the tail mass lost is 2⁻⁵³). Elementwise
    :func:`laplace_noise`.

    Args:
        u: standard uniforms in [0, 1) (``Generator.random``), any shape.
        scale: b > 0.
    """
    scale = check_positive(scale, "scale")
    u = np.ascontiguousarray(_check_uniform(u))
    out = np.empty(u.shape)
    _laplace_array(u.reshape(-1), scale, out.reshape(-1))
    return out if out.ndim else out[()]


def laplace(
    scale: float, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
) -> np.ndarray:
    """Draw Laplace(0, b) noise from ``rng`` (see :func:`laplace_from_uniform`)."""
    return laplace_from_uniform(rng.random(size), scale)


# ---------------------------------------------------------------------------------------------
# Gaussian mechanism
# ---------------------------------------------------------------------------------------------


def gaussian_sigma_classical(
    epsilon: float, delta: float, sensitivity: float = 1.0, *, allow_large_epsilon: bool = False
) -> float:
    """Classical calibration σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Theorem A.1).

    The theorem is proved only for ε < 1, and for larger ε the formula can undershoot the σ that
    (ε, δ)-DP needs. So ε ≥ 1 raises ``ValueError`` unless ``allow_large_epsilon=True`` (for
    faithful reproduction of a paper that uses it outside its range, e.g. Zheng et al. 2020 as
    quoted in paper 3, Remark 13); then a ``RuntimeWarning`` is issued if the returned σ does not
    actually give (ε, δ)-DP by the exact Gaussian curve (:func:`gaussian_delta`).
    Prefer :func:`gaussian_sigma_analytic`, which is exact and valid for every ε.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    sigma = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    if epsilon >= 1.0:
        if not allow_large_epsilon:
            raise ValueError(
                "epsilon must be in (0, 1) for the classical Gaussian calibration, "
                f"got {epsilon!r};"
                " use gaussian_sigma_analytic, or pass allow_large_epsilon=True to reproduce a"
                " paper that uses the classical formula outside its range"
            )
        if gaussian_delta(epsilon, sensitivity / sigma) > delta:
            warnings.warn(
                f"the classical Gaussian sigma={sigma:.6g} does not give "
                f"({epsilon:g}, {delta:g})-DP"
                " (epsilon >= 1, outside the theorem's range)",
                RuntimeWarning,
                stacklevel=2,
            )
    return sigma


def gaussian_mu_analytic(epsilon: float, delta: float) -> float:
    """Largest μ = Δ/σ with δ_μ(ε) ≤ δ for the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    δ_μ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) increases in μ; we solve δ_μ(ε) = δ on log δ with
    ``scipy.optimize.brentq`` in log μ.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    log_target = math.log(delta)

    def f(log_mu: float) -> float:
        d = gaussian_delta(epsilon, math.exp(log_mu))
        return (math.log(d) if d > 0.0 else -math.inf) - log_target

    # Lower end: μ/2 − ε/μ = −40, so δ_μ(ε) ≤ Φ(−40) < 1e-340 (below any double δ > 0).
    mu_lo = 2.0 * epsilon / (40.0 + math.sqrt(1600.0 + 2.0 * epsilon)) / 2.0
    mu_hi = max(1.0, 4.0 * mu_lo)
    while f(math.log(mu_hi)) < 0.0:
        mu_hi *= 2.0
    return math.exp(optimize.brentq(f, math.log(mu_lo), math.log(mu_hi), xtol=1e-14, rtol=1e-14))


def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ making the Gaussian mechanism (ε, δ)-DP: the analytic Gaussian mechanism.

    Balle & Wang 2018, "Improving the Gaussian mechanism for differential privacy", Theorem 8
    (exact calibration, any ε > 0): σ = Δ₂/μ with μ from :func:`gaussian_mu_analytic`.
    Oracle: σ = 4.224678889 at (ε, δ) = (1, 1e-6), Δ = 1.
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity / gaussian_mu_analytic(epsilon, delta)


def gaussian_sigma_zcdp(rho: float, sensitivity: float = 1.0) -> float:
    """σ = Δ₂/√(2ρ): the Gaussian mechanism is ρ-zCDP (Bun & Steinke 2016, Proposition 1.6)."""
    rho = check_positive(rho, "rho")
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity / math.sqrt(2.0 * rho)


@jit
def gaussian_noise(z: float, sigma: float) -> float:
    """N(0, σ²) noise from one standard normal: σ·z (the kernel of
    :func:`gaussian_from_standard`)."""
    return sigma * z


@jit
def _gaussian_array(z: np.ndarray, sigma: float, out: np.ndarray) -> None:
    for i in range(z.size):
        out[i] = gaussian_noise(z[i], sigma)


def gaussian_from_standard(z: np.ndarray | float, sigma: float) -> np.ndarray:
    """N(0, σ²) noise from standard normals: σ·z (elementwise :func:`gaussian_noise`)."""
    sigma = check_positive(sigma, "sigma")
    z = np.ascontiguousarray(z, dtype=float)
    out = np.empty(z.shape)
    _gaussian_array(z.reshape(-1), sigma, out.reshape(-1))
    return out if out.ndim else out[()]


def gaussian_from_uniform(u: np.ndarray | float, sigma: float) -> np.ndarray:
    """N(0, σ²) noise from standard uniforms by the inverse CDF Φ⁻¹ (at the grid-cell centre)."""
    sigma = check_positive(sigma, "sigma")
    u = _check_uniform(u)
    sign, tail = _cell_centre_tail(u)
    return -sign * sigma * special.ndtri(tail)


def gaussian(
    sigma: float, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
) -> np.ndarray:
    """Draw N(0, σ²) noise from ``rng`` (see :func:`gaussian_from_standard`)."""
    return gaussian_from_standard(rng.standard_normal(size), sigma)


# ---------------------------------------------------------------------------------------------
# Symmetric Gaussian matrix noise (e.g. for Gram matrices; zCDP-calibrated by the caller)
# ---------------------------------------------------------------------------------------------


def symmetric_from_upper(upper: np.ndarray, dim: int) -> np.ndarray:
    """The symmetric d×d matrices whose upper triangles (diagonal included) are ``upper``, of
    shape ``(..., d(d+1)/2)`` in ``numpy.triu_indices(d)`` order: the lower triangle is a mirror
    (a copy, not a release). Returns shape ``(..., d, d)``."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    upper = np.asarray(upper, dtype=float)
    n_upper = dim * (dim + 1) // 2
    if upper.ndim == 0 or upper.shape[-1] != n_upper:
        raise ValueError(
            f"z must have last axis d(d+1)/2 = {n_upper} for dim={dim}, got shape {upper.shape}"
        )
    rows, cols = np.triu_indices(dim)
    out = np.empty((*upper.shape[:-1], dim, dim))
    out[..., rows, cols] = upper
    out[..., cols, rows] = upper
    return out if out.ndim else out[()]


def symmetric_gaussian_from_standard(z: np.ndarray, dim: int, sigma: float) -> np.ndarray:
    """Symmetric d×d noise: the upper triangle (diagonal included) i.i.d. N(0, σ²), mirrored.

    Args:
        z: standard normals of shape ``(..., d(d+1)/2)``, in ``numpy.triu_indices(d)`` order.
        dim: d.
        sigma: σ > 0.

    Returns:
        array of shape ``(..., d, d)``.
    """
    sigma = check_positive(sigma, "sigma")
    return symmetric_from_upper(sigma * np.asarray(z, dtype=float), dim)


def symmetric_gaussian_matrix(
    sigma: float, dim: int, rng: np.random.Generator, size: int | tuple[int, ...] = ()
) -> np.ndarray:
    """Draw symmetric Gaussian matrix noise of shape ``(*size, dim, dim)`` from ``rng``."""
    batch = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    z = rng.standard_normal((*batch, dim * (dim + 1) // 2))
    return symmetric_gaussian_from_standard(z, dim, sigma)


# ---------------------------------------------------------------------------------------------
# Randomized response for rewards in [0, 1] (paper 3, Algorithm 4 "CTB", after Ren et al. 2020)
# ---------------------------------------------------------------------------------------------


def rr_keep_probability(epsilon: float) -> float:
    """p = e^ε/(1 + e^ε): the probability that a binary input is reported unchanged."""
    return float(special.expit(check_epsilon(epsilon)))


def rr_probability_of_one(rewards: np.ndarray | float, epsilon: float) -> np.ndarray:
    """q(r) = (r(e^ε − 1) + 1)/(e^ε + 1), the probability of reporting 1 (paper 3, Alg. 4 l. 2).

    Computed as q(r) = p₀ + r(1 − 2p₀) with p₀ = 1/(e^ε + 1) = expit(−ε), which is the same
    number and stays finite for large ε. Rewards must lie in [0, 1] (no clipping).
    """
    p0 = rr_zero_probability(epsilon)
    r = np.ascontiguousarray(check_unit_interval(rewards, "rewards"))
    out = np.empty(r.shape)
    _rr_one_array(r.reshape(-1), p0, out.reshape(-1))
    return out if out.ndim else out[()]


def rr_zero_probability(epsilon: float) -> float:
    """p₀ = 1/(e^ε + 1) = expit(−ε): the probability that randomized response reports 1 for a
    reward 0 (and 0 for a reward 1)."""
    return float(special.expit(-check_epsilon(epsilon)))


@jit
def rr_one_probability(reward: float, p0: float) -> float:
    """q(r) = p₀ + r(1 − 2p₀) = (r(e^ε − 1) + 1)/(e^ε + 1) (p₀ from :func:`rr_zero_probability`):
    the probability that randomized response reports 1 (paper 3, Algorithm 4 line 2)."""
    return p0 + reward * (1.0 - 2.0 * p0)


@jit
def _rr_one_array(rewards: np.ndarray, p0: float, out: np.ndarray) -> None:
    for i in range(rewards.size):
        out[i] = rr_one_probability(rewards[i], p0)


@jit
def rr_release(reward: float, u: float, p0: float) -> float:
    """CTB randomized response of one reward r ∈ [0, 1] from one standard uniform: 1.0 if
    u < q(r) (:func:`rr_one_probability`), else 0.0. The kernel of
    :func:`randomized_response_from_uniform`."""
    return 1.0 if u < rr_one_probability(reward, p0) else 0.0


@jit
def _rr_array(rewards: np.ndarray, u: np.ndarray, p0: float, out: np.ndarray) -> None:
    for i in range(rewards.size):
        out[i] = rr_release(rewards[i], u[i], p0)


def randomized_response_from_uniform(
    rewards: np.ndarray | float, u: np.ndarray | float, epsilon: float
) -> np.ndarray:
    """CTB randomized response: report 1.0 if u < q(r), else 0.0 (ε-local DP on [0, 1]);
    elementwise :func:`rr_release`.

    Args:
        rewards: rewards in [0, 1], any shape.
        u: standard uniforms in [0, 1), broadcastable with ``rewards``.
        epsilon: ε > 0.

    Returns:
        float array of 0.0/1.0 (Bernoulli(q(r))).
    """
    p0 = rr_zero_probability(epsilon)
    r, u = np.broadcast_arrays(check_unit_interval(rewards, "rewards"), _check_uniform(u))
    r, u = np.ascontiguousarray(r), np.ascontiguousarray(u)
    out = np.empty(r.shape)
    _rr_array(r.reshape(-1), u.reshape(-1), p0, out.reshape(-1))
    return out if out.ndim else out[()]


def randomized_response(
    rewards: np.ndarray | float, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """Draw CTB randomized responses of ``rewards`` from ``rng``."""
    r = np.asarray(rewards, dtype=float)
    return randomized_response_from_uniform(r, rng.random(r.shape), epsilon)


def rr_mean(mu: np.ndarray | float, epsilon: float) -> np.ndarray:
    """Mean of the randomized response of a reward of mean μ ∈ [0, 1] (paper 3, Lemma 12).

    μ_ε = (2μ − 1)(e^ε − 1)/(2(e^ε + 1)) + ½ = q(μ).
    """
    return rr_probability_of_one(np.asarray(mu, dtype=float), epsilon)


def rr_debias_mean(m: np.ndarray | float, epsilon: float) -> np.ndarray:
    """Unbiased estimate of μ from the mean m of randomized responses (inverse of :func:`rr_mean`).

    μ = (m(e^ε + 1) − 1)/(e^ε − 1), computed as (m − p₀)/tanh(ε/2) with p₀ = 1/(e^ε + 1).
    Not clipped: for an empirical m the estimate can leave [0, 1]. ``m`` must lie in [0, 1].
    """
    epsilon = check_epsilon(epsilon)
    m = check_unit_interval(m, "m")
    return (m - special.expit(-epsilon)) / math.tanh(epsilon / 2.0)
