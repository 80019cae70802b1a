r"""Shuffle-private vector summation P_Vec (Cheu, Joseph, Mao & Peng 2021) for paper 2's tree.

Cheu, Joseph, Mao & Peng, "Shuffle private stochastic convex optimization" (ICLR 2022,
arXiv:2106.09805), the protocol P_Vec for summing n vectors of bounded ℓ2 norm; used by Zhou &
Chowdhury (paper 2, "shuffle DP via vector sum") inside the tree-based protocol.

Protocol (Cheu et al.'s P_Vec). Every coordinate x_j ∈ [−L, L] of every data point is randomized
separately:

    w = x_j + L ∈ [0, 2L],   t = w·g/L ∈ [0, 2g],
    message count  m = ⌊t⌋ + Bernoulli(t − ⌊t⌋) + Binomial(b, p),
    g = ⌈max(2√n, d, 4)⌉,  p = ¼,  b = ⌈s·g²·(ln(d²/δ))²/(ε²·n)⌉,

and the analyzer outputs (L/g)(Σ_i m_i − p·b·n) − n·L per coordinate, an unbiased estimate of
Σ_i x_ij. Here n is the number of data points summed (in paper 2's tree, a node of level j sums
n = M·B·2^j points: M silos × B rounds × 2^j batches, known in advance) and d is paper 2's
feature dimension (the Gram matrix summed has d² entries: ln(d²/δ) is ln(D/δ) for the D = d²
dimensional vector, and g ≥ d = √D).

**Messages are unary.** The integer m stands for m one-bit messages "1 for coordinate j" padded
with 2g + b − m messages "0 for coordinate j" (2g + b is the largest possible m), so every user
sends exactly c·(2g + b) messages (:func:`messages_per_user`) and the shuffled multiset of all
users' messages is equivalent to the per-coordinate counts Σ_i m_ij — a sufficient statistic.
Sending m itself as one integer message would **not** be private: the shuffled multiset of n
integers would expose an outlier. So a simulation needs only the per-coordinate sums, which is
what :func:`encode_sum` + :func:`binomial_noise_sum` produce (exactly in distribution):
Σ_i Binomial(b, p) = Binomial(n·b, p), and Σ_i (⌊t_i⌋ + Bernoulli(frac t_i)) is drawn with one
uniform per point-coordinate. :func:`randomize` is the per-user randomizer itself (audits, small
cases).

Privacy (one node). Neighbouring data sets replace one point x by x′ with ‖x‖₂, ‖x′‖₂ ≤ L (the
ℓ2 bound is what Cheu et al.'s theorem assumes; it implies \|x_j\| ≤ L, which the randomizer needs
to be defined: both are validated, nothing is clipped). Cheu et al. prove P_Vec (ε, δ)-shuffle
private with b = Θ(g² log²(D/δ)/(ε²n)); **their constant could not be checked here** (only the
abstract was reachable), so the scale s is ours: :data:`VECTOR_SUM_S`, and :func:`node_guarantee`
verifies the calibration before declaring (ε, δ):

* the view is the vector of counts S = U + Z with Z ~ Binomial(n·b, ¼) i.i.d. per coordinate
  (3nb/16 variance) independent of the data, U = Σ_i u_i the rounded data. Changing one point
  changes U by a vector of ℓ2 norm ≤ (g/L)·‖x − x′‖₂ + √c ≤ 2g + √c (each coordinate's rounding
  moves it by < 1). The other users' rounding noise is independent of the changed point and only
  post-processes the view, so it cannot hurt;
* check 1 (Gaussian limit): the Gaussian mechanism with σ² = 3nb/16 and Δ₂ = 2g + √c is
  (ε, δ)-DP (exact Balle–Wang curve). This is the central-limit form of the binomial mechanism —
  accurate when n·b is large (≥ 10⁵ at paper scale), not a proof;
* check 2 (exact, one coordinate): δ(ε) of Binomial(nb, ¼) against its shift by 2g — the
  worst pair of a scalar input (x = −L vs x = L give deterministic counts 0 and 2g; any other pair
  is a mixture of shifts ≤ 2g, dominated by joint convexity of the hockey-stick divergence with a
  coupling of the two roundings) — computed exactly (:func:`scalar_node_delta`) when
  n·b·p(1 − p) ≤ 10⁶; it exposes the small-n·b regime where the binomial is worse than the
  Gaussian.

Composition over the tree. A point enters κ = ⌊log₂(T/B)⌋ + 1 nodes (fewer near T) and is
randomized afresh in each, so its privacy is the (adaptive) composition of κ (ε₀, δ₀)-DP
mechanisms: advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20):
for any δ′ > 0 it is (ε₀√(2κ ln(1/δ′)) + κε₀(e^{ε₀} − 1), κδ₀ + δ′)-DP, and basic composition
gives (κε₀, κδ₀). Paper 2 (excerpt: "noise level Õ(κ/ε²) … advanced composition") does the same.
:func:`node_budget` inverts it: δ′ = δ/2, δ₀ = δ/(2κ), ε₀ = the larger of ε/κ and the root of the
advanced bound = ε; valid for every ε > 0, 0 < δ < 1. The authors' public code instead feeds the
overall (ε, δ) to every node (no composition) — not copied here.

Numerics: idealized floating point (see :mod:`privenv.privacy.mechanisms`). :func:`randomize`
draws Binomial(b, p) from explicit uniforms by the inverse CDF (``scipy.stats.binom.ppf``);
:func:`binomial_noise_sum` uses numpy's binomial sampler (see there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from privenv._validation import check_delta, check_epsilon, check_int, check_real
from privenv.seeding import RunNoise

from .accounting import gaussian_epsilon
from .guarantee import PrivacyGuarantee
from .tree import NoiseSource, run_uniforms

__all__ = [
    "P_ONE",
    "VECTOR_SUM_S",
    "VectorSumParameters",
    "analyze",
    "binomial_noise_sum",
    "compose_nodes",
    "encode_sum",
    "estimator_variance",
    "gaussian_limit_epsilon",
    "max_error_std",
    "messages_per_user",
    "node_budget",
    "node_guarantee",
    "randomize",
    "scalar_node_delta",
    "vector_sum_parameters",
]

VECTOR_SUM_S = 1.0
"""Default scale s of b, 1, i.e. b = ⌈g²·ln²(d²/δ)/(ε²n)⌉ literally (Cheu et al.'s constant is
unverified here). :func:`node_guarantee` checks it: at paper 2's scale (d = 10, n = M·B·2^j, the
per-node budgets of :func:`node_budget` over κ = 9 nodes) the checks need s ≥ 0.12 for
(ε, δ) = (0.2, 0.1) and s ≥ 0.87 for (1, 1e-4). Small d with a large node ε needs more (d = 1,
ε = 1, δ = 1e-3: s ≈ 4); :func:`node_guarantee` raises then, naming the ε actually reached."""

P_ONE = 0.25
"""p = ¼, the success probability of the binomial noise messages."""

_EXACT_LIMIT = 1e6  # exact scalar check when the noise variance n·b·p(1−p) is at most this


@dataclass(frozen=True)
class VectorSumParameters:
    """Parameters of one P_Vec instance (one tree node): n points, g, b, p.

    Attributes:
        n: number of data points summed.
        d: paper 2's feature dimension (enters g and ln(d²/δ)).
        epsilon, delta: the node's (ε, δ).
        s: the scale of b.
        g: rounding resolution, ⌈max(2√n, d, 4)⌉ (an integer, so counts are whole messages).
        b: binomial trials per user and coordinate, ⌈s·g²·ln²(d²/δ)/(ε²n)⌉.
        p: binomial success probability, ¼.
    """

    n: int
    d: int
    epsilon: float
    delta: float
    s: float
    g: int
    b: int
    p: float = P_ONE

    def __str__(self) -> str:
        return (
            f"P_Vec(n={self.n}, d={self.d}, epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"s={self.s:g}: g={self.g}, b={self.b}, p={self.p:g})"
        )

    @property
    def noise_trials(self) -> int:
        """n·b (the node's total binomial noise is Binomial(n·b, p) per coordinate)."""
        return self.n * self.b


def vector_sum_parameters(
    n: int, d: int, epsilon: float, delta: float, s: float = VECTOR_SUM_S
) -> VectorSumParameters:
    """g = ⌈max(2√n, d, 4)⌉, p = ¼, b = ⌈s·g²·(ln(d²/δ))²/(ε²·n)⌉ (Cheu et al.'s P_Vec).

    Args:
        n: number of data points the node sums (≥ 1).
        d: feature dimension (≥ 1).
        epsilon: the node's ε > 0.
        delta: the node's δ ∈ (0, 1).
        s: scale constant > 0 (default :data:`VECTOR_SUM_S`).
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    s = check_real("s", s, low=0.0, low_open=True, high=math.inf, high_open=True)
    g = math.ceil(max(2.0 * math.sqrt(n), d, 4))
    b = math.ceil(s * g * g * math.log(d * d / delta) ** 2 / (epsilon**2 * n))
    return VectorSumParameters(n=n, d=d, epsilon=epsilon, delta=delta, s=s, g=g, b=max(b, 1))


# ---------------------------------------------------------------------------------------------
# the randomizer, its block sums, the noise sum and the analyzer
# ---------------------------------------------------------------------------------------------


def _check_params(params: VectorSumParameters) -> VectorSumParameters:
    if not isinstance(params, VectorSumParameters):
        raise ValueError(
            f"params must be a VectorSumParameters (see vector_sum_parameters), got {params!r}"
        )
    return params


def _scaled(x: np.ndarray, L: float, g: int, name: str = "x") -> np.ndarray:
    """t = (x/L + 1)·g ∈ [0, 2g] after validating ‖x_i‖₂ ≤ L over the last axis."""
    L = check_real("L", L, low=0.0, low_open=True, high=math.inf, high_open=True)
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] < 1:
        raise ValueError(f"{name} must have a last axis of coordinates, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must contain only finite numbers")
    if np.any(np.abs(x) > L):
        raise ValueError(
            f"every coordinate of {name} must lie in [-L, L] = [{-L:g}, {L:g}] (P_Vec does not "
            f"clip), got max |x| = {float(np.abs(x).max()):.6g}"
        )
    norms = np.sqrt(np.einsum("...c,...c->...", x, x))
    if np.any(norms > L * (1.0 + 1e-12)):
        raise ValueError(
            f"every data point of {name} must have l2 norm <= L = {L:g} (the bound of Cheu et "
            f"al.'s theorem; nothing is clipped), got max norm {float(norms.max()):.6g}"
        )
    return (x / L + 1.0) * g  # x = ±L map exactly to 0 and 2g


def _uniforms_like(u: np.ndarray | np.random.Generator, shape: tuple[int, ...], name: str):
    if isinstance(u, np.random.Generator):
        return u.random(shape)
    arr = np.asarray(u, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (one uniform each), got {arr.shape}")
    if np.any(~((arr >= 0.0) & (arr < 1.0))):
        raise ValueError(f"{name} must hold standard uniforms in [0, 1)")
    return arr


def _run_generators(noise: RunNoise, runs: np.ndarray) -> list[np.random.Generator]:
    """One generator per run, seeded by two uniforms (53 random bits each) of that run's own
    stream: batch-size invariant, and it lets a run draw 10⁵ numbers in one numpy call
    (RunNoise's buffered ``uniforms`` refill 256 at a time: 33 vs 23 ns per number here)."""
    bits = (run_uniforms(noise, runs, 2) * 2.0**53).astype(np.uint64)
    return [
        np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(hi), int(lo)])))
        for hi, lo in bits
    ]


def _binomial_from_uniform(u: np.ndarray, trials: int, p: float) -> np.ndarray:
    """Binomial(trials, p) by the inverse CDF (smallest k with F(k) ≥ u)."""
    k = stats.binom.ppf(u, trials, p)
    return np.maximum(k, 0).astype(np.int64)  # ppf(0) = −1 in SciPy


def randomize(
    x: np.ndarray,
    L: float,
    params: VectorSumParameters,
    u_round: np.ndarray | np.random.Generator,
    u_binom: np.ndarray | np.random.Generator,
) -> np.ndarray:
    """The local randomizer R_Vec: each user's message counts, one per coordinate.

    m = ⌊t⌋ + 1{u_round < t − ⌊t⌋} + F⁻¹_{Bin(b,p)}(u_binom), t = (x/L + 1)·g. The count m
    stands for m one-bit messages (see the module docstring).

    Args:
        x: data points, shape ``(..., n, c)`` with ``n = params.n``; ‖x_i‖₂ ≤ L.
        L: the ℓ2 bound.
        params: from :func:`vector_sum_parameters`.
        u_round, u_binom: standard uniforms of ``x``'s shape, or a ``Generator`` to draw them.

    Returns:
        int64 counts of shape ``x.shape``, each in [0, 2g + b].
    """
    params = _check_params(params)
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-2] != params.n:
        raise ValueError(f"x must have shape (..., n={params.n}, c), got {x.shape}")
    t = _scaled(x, L, params.g)
    u1 = _uniforms_like(u_round, x.shape, "u_round")
    u2 = _uniforms_like(u_binom, x.shape, "u_binom")
    floor = np.floor(t)
    rounded = floor.astype(np.int64) + (u1 < t - floor)  # Alg. R_1D: randomized rounding
    return rounded + _binomial_from_uniform(u2, params.b, params.p)  # + Binomial(b, p)


def encode_sum(
    x: np.ndarray, L: float, params: VectorSumParameters, noise: NoiseSource, runs: np.ndarray
) -> np.ndarray:
    """Σ_i (⌊t_i⌋ + Bernoulli(t_i − ⌊t_i⌋)) over a block of points: the rounding part of the
    node's count, exactly in distribution (one uniform per point-coordinate).

    Args:
        x: shape ``(len(runs), n_block, c)``; any block size (the node's n points may arrive in
            several blocks; sum the results). ‖x_i‖₂ ≤ L.
        L: the ℓ2 bound.
        params: the node's parameters (g matters here).
        noise: a :class:`~privenv.seeding.RunNoise` (row i's uniforms come from a generator
            seeded by two uniforms of run ``runs[i]``'s own stream: batch-size invariant) or a
            ``numpy.random.Generator``.
        runs: run indices, 1-D.

    Returns:
        int64 array ``(len(runs), c)``.
    """
    params = _check_params(params)
    runs = np.asarray(runs)
    x = np.asarray(x, dtype=float)
    if x.ndim != 3 or x.shape[0] != runs.size:
        raise ValueError(
            f"x must have shape (len(runs)={runs.size}, n_block, c), got {x.shape}"
        )
    t = _scaled(x, L, params.g)
    floor = np.floor(t)
    if isinstance(noise, RunNoise):
        u = np.stack([gen.random(x.shape[1:]) for gen in _run_generators(noise, runs)])
    else:
        u = run_uniforms(noise, runs, x.shape[1] * x.shape[2]).reshape(x.shape)
    bits = (u < t - floor).sum(axis=1)
    return floor.sum(axis=1).astype(np.int64) + bits


def binomial_noise_sum(
    params: VectorSumParameters, shape: tuple[int, ...] | int, noise: NoiseSource, runs: np.ndarray
) -> np.ndarray:
    """The n users' Binomial(b, p) messages of one node, summed: Binomial(n·b, p) per coordinate.

    Returns int64 of shape ``(len(runs), *shape)``. With a ``Generator``: numpy's exact binomial
    sampler; with a :class:`~privenv.seeding.RunNoise`: the same sampler on a generator seeded
    by two uniforms of each run's own stream.
    """
    params = _check_params(params)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(k, (int, np.integer)) or k < 1 for k in shape):
        raise ValueError(f"shape must be a tuple of integers >= 1, got {shape!r}")
    runs = np.asarray(runs)
    N, p = params.noise_trials, params.p
    if isinstance(noise, np.random.Generator):
        _ = run_uniforms(noise, runs, 0)  # validates runs
        return noise.binomial(N, p, size=(runs.size, *shape)).astype(np.int64)
    out = np.empty((runs.size, math.prod(shape)), dtype=np.int64)
    for i, gen in enumerate(_run_generators(noise, runs)):
        out[i] = gen.binomial(N, p, size=out.shape[1])
    return out.reshape(runs.size, *shape)


def analyze(message_sum: np.ndarray, L: float, params: VectorSumParameters) -> np.ndarray:
    """The analyzer A_Vec: (L/g)(Σ − p·b·n) − n·L per coordinate (unbiased for Σ_i x_i)."""
    params = _check_params(params)
    L = check_real("L", L, low=0.0, low_open=True, high=math.inf, high_open=True)
    total = np.asarray(message_sum, dtype=float)
    return (L / params.g) * (total - params.p * params.b * params.n) - params.n * L


# ---------------------------------------------------------------------------------------------
# utility and communication
# ---------------------------------------------------------------------------------------------


def estimator_variance(x: np.ndarray, L: float, params: VectorSumParameters) -> np.ndarray:
    """Exact variance of :func:`analyze` per coordinate for the data ``x`` ``(..., n, c)``:
    (L/g)²·(Σ_i f_i(1 − f_i) + n·b·p(1 − p)), f_i = frac((x_i/L + 1)·g)."""
    params = _check_params(params)
    t = _scaled(x, L, params.g)
    f = t - np.floor(t)
    binom_var = params.n * params.b * params.p * (1.0 - params.p)
    return (L / params.g) ** 2 * ((f * (1.0 - f)).sum(axis=-2) + binom_var)


def max_error_std(L: float, params: VectorSumParameters) -> float:
    """Worst-case standard deviation of the node's estimate per coordinate:
    (L/g)·√(n/4 + n·b·p(1 − p)) (rounding variance ≤ ¼ per point)."""
    params = _check_params(params)
    L = check_real("L", L, low=0.0, low_open=True, high=math.inf, high_open=True)
    n = params.n
    return (L / params.g) * math.sqrt(n / 4.0 + n * params.b * params.p * (1.0 - params.p))


def messages_per_user(params: VectorSumParameters, c: int) -> int:
    """One-bit messages a user sends to one node: c·(2g + b) (unary counts, padded)."""
    params = _check_params(params)
    c = check_int("c", c, low=1)
    return c * (2 * params.g + params.b)


# ---------------------------------------------------------------------------------------------
# privacy
# ---------------------------------------------------------------------------------------------


def gaussian_limit_epsilon(params: VectorSumParameters, c: int) -> float:
    """ε at the node's δ of the Gaussian limit: σ² = 3nb/16, Δ₂ = 2g + √c (2g if c = 1)."""
    params = _check_params(params)
    c = check_int("c", c, low=1)
    sigma = math.sqrt(params.noise_trials * params.p * (1.0 - params.p))
    sens = 2.0 * params.g + (math.sqrt(c) if c > 1 else 0.0)
    return gaussian_epsilon(params.delta, sens / sigma)


def scalar_node_delta(
    params: VectorSumParameters, epsilon: float | None = None, shift: int | None = None
) -> float:
    """Exact δ(ε) of one coordinate's count: max of the two hockey-stick divergences between
    Z and Z + shift, Z ~ Binomial(n·b, p) (default shift 2g, the worst scalar pair).

    Summed over the whole support (the part beyond 40 standard deviations of the mean has
    probability < 1e-300 and is dropped).
    """
    params = _check_params(params)
    eps = params.epsilon if epsilon is None else check_real("epsilon", epsilon, low=0.0)
    k = 2 * params.g if shift is None else check_int("shift", shift, low=0)
    N, p = params.noise_trials, params.p
    mean, sd = N * p, math.sqrt(N * p * (1.0 - p))
    lo = max(0, math.floor(mean - 40.0 * sd))
    hi = min(N + k, math.ceil(mean + 40.0 * sd) + k)
    s = np.arange(lo, hi + 1)
    la = stats.binom.logpmf(s, N, p)  # Z
    lb = stats.binom.logpmf(s - k, N, p)  # Z + k
    out = 0.0
    for lp, lq in ((la, lb), (lb, la)):
        with np.errstate(invalid="ignore", over="ignore"):
            # Σ max(0, P − e^ε Q) = Σ P·max(0, 1 − e^{ε + ln Q − ln P})
            term = np.exp(lp) * -np.expm1(np.minimum(0.0, eps + lq - lp))
        out = max(out, float(np.nansum(np.where(np.isfinite(lp), term, 0.0))))
    return out


def node_guarantee(
    params: VectorSumParameters, c: int | None = None, *, unit: str = "(context, reward)"
) -> PrivacyGuarantee:
    """The (ε, δ)-shuffle-DP guarantee of one node (replace-one point), after checking the
    calibration (module docstring): the Gaussian limit with Δ₂ = 2g + √c, and the exact scalar
    δ when n·b·p(1 − p) ≤ 10⁶. Raises ``ValueError`` if s is too small for them.

    Args:
        params: the node's parameters.
        c: coordinates per point (default d(d+3)/2: Gram upper triangle + bias vector).
        unit: the protected unit.
    """
    params = _check_params(params)
    c = params.d * (params.d + 3) // 2 if c is None else check_int("c", c, low=1)
    eps_limit = gaussian_limit_epsilon(params, c)
    if eps_limit > params.epsilon:
        raise ValueError(
            f"s={params.s:g} is too small for {params}: its Gaussian limit is only "
            f"({eps_limit:.4g}, {params.delta:g})-DP for c={c} coordinates; increase s"
        )
    if params.noise_trials * params.p * (1.0 - params.p) <= _EXACT_LIMIT:
        exact = scalar_node_delta(params)
        if exact > params.delta:
            raise ValueError(
                f"s={params.s:g} is too small for {params}: the exact scalar count has "
                f"delta({params.epsilon:g}) = {exact:.4g} > {params.delta:g}; increase s"
            )
    return PrivacyGuarantee("shuffle", params.epsilon, params.delta, unit, "replace-one")


def _advanced(eps0: float, kappa: int, delta_slack: float) -> float:
    """Advanced composition's ε; ``inf`` once e^{ε₀} overflows (basic composition wins there)."""
    if eps0 > 700.0:
        return math.inf
    return eps0 * math.sqrt(2.0 * kappa * math.log(1.0 / delta_slack)) + kappa * eps0 * math.expm1(
        eps0
    )


def compose_nodes(
    node: PrivacyGuarantee, kappa: int, delta_slack: float | None = None
) -> PrivacyGuarantee:
    """Guarantee of a point entering ``kappa`` nodes, each ``node``-DP (adaptive composition).

    The better of basic (κε₀, κδ₀) and advanced composition (ε₀√(2κ ln(1/δ′)) +
    κε₀(e^{ε₀} − 1), κδ₀ + δ′) (Dwork & Roth 2014, Thm 3.20); ``delta_slack`` δ′ defaults to
    κδ₀ (so the total δ is 2κδ₀, as :func:`node_budget` splits it).
    """
    if not isinstance(node, PrivacyGuarantee) or not node.is_private:
        raise ValueError(f"node must be a private PrivacyGuarantee, got {node!r}")
    kappa = check_int("kappa", kappa, low=1)
    eps0, d0 = node.epsilon, node.delta
    slack = kappa * d0 if delta_slack is None else check_delta(delta_slack, "delta_slack")
    basic = (kappa * eps0, kappa * d0)
    adv = (_advanced(eps0, kappa, slack), kappa * d0 + slack) if slack > 0 else basic
    eps, delta = min(basic, adv)
    if delta >= 1.0:
        raise ValueError(f"the composed delta {delta:g} is not < 1; lower the node delta")
    return PrivacyGuarantee(node.model, eps, delta, node.unit, node.neighbouring)


def node_budget(epsilon: float, delta: float, kappa: int) -> tuple[float, float]:
    """Per-node (ε₀, δ₀) so that κ nodes compose to (ε, δ): δ₀ = δ/(2κ), δ′ = δ/2, ε₀ the
    larger of ε/κ (basic) and the root of ε₀√(2κ ln(2/δ)) + κε₀(e^{ε₀} − 1) = ε (advanced)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    kappa = check_int("kappa", kappa, low=1)
    slack = delta / 2.0
    hi = epsilon
    while _advanced(hi, kappa, slack) < epsilon:  # pragma: no cover - ε₀ ≤ ε always suffices
        hi *= 2.0
    eps_adv = optimize.brentq(
        lambda e: _advanced(e, kappa, slack) - epsilon, 0.0, hi, xtol=1e-15, rtol=1e-13
    )
    eps0 = max(epsilon / kappa, eps_adv * (1.0 - 1e-12))  # round down: never exceed ε
    return eps0, delta / (2.0 * kappa)
