"""Privacy accounting: pure DP, zCDP/RDP, exact Gaussian composition, shuffle amplification.

Each formula cites its source; the tests check them against reference values computed
independently and against ``dp-accounting``, a test oracle only (docs/design/threat-model.md).

* Pure DP (Dwork & Roth 2014, Thm 3.16 and §2.4 "parallel composition", McSherry 2009):
  sequential ε = Σεᵢ, δ = Σδᵢ; parallel over disjoint data: max εᵢ.
* zCDP (Bun & Steinke 2016): Gaussian ρ = Δ²/(2σ²) (Prop. 1.6); ε-DP ⇒ ε²/2-zCDP (Prop. 1.4);
  composition adds ρ (Lemma 1.7); ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP (Prop. 1.3).
* RDP → (ε, δ): Canonne, Kamath & Steinke 2020 (Prop. 12):
  ε = inf_{α>1} ε(α) + [ln(1/δ) + (α−1) ln(1 − 1/α) − ln α]/(α−1).
* Exact composition of Gaussians (Balle & Wang 2018, Thm 8; Dong, Roth & Su 2022, μ-GDP):
  μ = √(Σ Δᵢ²/σᵢ²), δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
* Amplification by shuffling: Feldman, McMillan & Talwar 2021 ("Hiding among the clones").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from scipy import optimize, special, stats

from privenv._validation import check_delta, check_epsilon, check_int, check_real

__all__ = [
    "BudgetAccountant",
    "PrivacyBudgetExceeded",
    "compose_parallel",
    "compose_rho",
    "compose_sequential",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_rho",
    "laplace_rdp",
    "pure_dp_to_rho",
    "rdp_to_epsilon",
    "rho_for_epsilon",
    "rho_to_epsilon_bun_steinke",
    "rho_to_epsilon_cks",
    "shuffle_amplification_closed_form",
    "shuffle_amplification_numerical",
    "shuffle_delta_bound",
    "shuffled_rr_delta",
    "tree_levels",
    "tree_rho",
]

RELATIVE_TOLERANCE = 1e-9  # budget checks allow this relative excess (floating-point sums)


class PrivacyBudgetExceeded(AssertionError):
    """A privacy budget was exceeded (raised by :class:`BudgetAccountant` and the ledger)."""


def _check_nonneg(value: float, name: str) -> float:
    return check_real(name, value, low=0.0, high=math.inf, high_open=True)


# ---------------------------------------------------------------------------------------------
# pure DP
# ---------------------------------------------------------------------------------------------


def compose_sequential(
    epsilons: Iterable[float], deltas: Iterable[float] | None = None
) -> tuple[float, float]:
    """Basic sequential composition: (Σεᵢ, Σδᵢ), summed exactly-rounded with ``math.fsum``."""
    eps = [_check_nonneg(e, "epsilons") for e in epsilons]
    dls = [] if deltas is None else [check_real("deltas", d, low=0.0, high=1.0) for d in deltas]
    return math.fsum(eps), min(1.0, math.fsum(dls))


def compose_parallel(
    epsilons: Iterable[float], deltas: Iterable[float] | None = None
) -> tuple[float, float]:
    """Parallel composition over disjoint data: (max εᵢ, max δᵢ)."""
    eps = [_check_nonneg(e, "epsilons") for e in epsilons]
    dls = [] if deltas is None else [check_real("deltas", d, low=0.0, high=1.0) for d in deltas]
    return max(eps, default=0.0), max(dls, default=0.0)


class BudgetAccountant:
    """A running (ε, δ) budget under basic sequential composition; raises when exceeded.

    >>> acc = BudgetAccountant(1.0)
    >>> acc.spend(0.5); acc.spend(0.5); acc.remaining
    0.0
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
        self._eps: list[float] = []
        self._deltas: list[float] = []

    @property
    def spent(self) -> tuple[float, float]:
        return compose_sequential(self._eps, self._deltas)

    @property
    def remaining(self) -> float:
        return max(0.0, self.epsilon - self.spent[0])

    def spend(self, epsilon: float, delta: float = 0.0) -> None:
        """Record one release; raise :class:`PrivacyBudgetExceeded` (and record nothing) if the
        total would exceed the budget by more than a relative 1e-9."""
        epsilon = _check_nonneg(epsilon, "epsilon")
        delta = check_real("delta", delta, low=0.0, high=1.0)
        eps_total, delta_total = compose_sequential([*self._eps, epsilon], [*self._deltas, delta])
        if eps_total > self.epsilon * (1 + RELATIVE_TOLERANCE) or delta_total > self.delta * (
            1 + RELATIVE_TOLERANCE
        ):
            raise PrivacyBudgetExceeded(
                f"spending (epsilon={epsilon:g}, delta={delta:g}) brings the total to "
                f"({eps_total:.12g}, {delta_total:.3g}), "
                f"over the budget ({self.epsilon:g}, {self.delta:g})"
            )
        self._eps.append(epsilon)
        self._deltas.append(delta)


# ---------------------------------------------------------------------------------------------
# zCDP and RDP
# ---------------------------------------------------------------------------------------------


def gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """ρ = Δ₂²/(2σ²): the Gaussian mechanism is ρ-zCDP (Bun & Steinke 2016, Prop. 1.6)."""
    sigma = check_real("sigma", sigma, low=0.0, low_open=True, high=math.inf, high_open=True)
    sensitivity = check_real(
        "sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf, high_open=True
    )
    return sensitivity**2 / (2.0 * sigma**2)


def pure_dp_to_rho(epsilon: float) -> float:
    """ε-DP ⇒ ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    return check_epsilon(epsilon) ** 2 / 2.0


def compose_rho(rhos: Iterable[float]) -> float:
    """zCDP composition: ρ = Σρᵢ (Bun & Steinke 2016, Lemma 1.7)."""
    return math.fsum(_check_nonneg(r, "rhos") for r in rhos)


def tree_levels(horizon: int) -> int:
    """Dyadic nodes of the binary tree over T items containing one item: ⌊log₂T⌋ + 1."""
    return check_int("horizon", horizon, low=1).bit_length()


def tree_rho(horizon: int, sigma: float, sensitivity: float = 1.0) -> float:
    """zCDP of the tree-based (binary) mechanism over T items: ρ = (⌊log₂T⌋+1)·Δ²/(2σ²).

    Each item enters ``T.bit_length()`` nodes, each perturbed with N(0, σ²) (Chan, Shi & Song 2011;
    Dwork et al. 2010; zCDP view as in dp-accounting's ``SingleEpochTreeAggregationDpEvent``).
    """
    return tree_levels(horizon) * gaussian_rho(sigma, sensitivity)


def rho_to_epsilon_bun_steinke(rho: float, delta: float) -> float:
    """ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Proposition 1.3)."""
    rho = _check_nonneg(rho, "rho")
    delta = check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def rdp_to_epsilon(
    rdp: Callable[[float], float],
    delta: float,
    *,
    orders: Sequence[float] | None = None,
    alpha_max: float = 1e7,
) -> float:
    """Convert an RDP curve α ↦ ε(α) to (ε, δ)-DP (Canonne, Kamath & Steinke 2020, Prop. 12).

    ε = inf_{α>1} ε(α) + [ln(1/δ) + (α−1) ln(1−1/α) − ln α]/(α−1), minimized numerically over
    ln(α−1) with a grid then a bounded Brent search (the objective is unimodal for the curves
    used here: linear zCDP curves and Laplace). With ``orders`` the infimum is taken over those
    orders only (as RDP accountants such as dp-accounting do), which gives a slightly larger ε.
    """
    delta = check_delta(delta)
    log_inv_delta = -math.log(delta)

    def objective(log_am1: float) -> float:
        am1 = math.exp(log_am1)
        alpha = 1.0 + am1
        conv = (log_inv_delta + am1 * math.log1p(-1.0 / alpha) - math.log(alpha)) / am1
        return rdp(alpha) + conv

    if orders is not None:
        if any(not (a > 1.0) for a in orders):
            raise ValueError(f"orders must all be > 1, got {list(orders)!r}")
        return float(max(0.0, min(objective(math.log(a - 1.0)) for a in orders)))
    grid = np.linspace(-12.0, math.log(alpha_max), 200)
    values = np.array([objective(g) for g in grid])
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(
        objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10}
    )
    return float(max(0.0, min(res.fun, values[i])))


def rho_to_epsilon_cks(rho: float, delta: float, *, orders: Sequence[float] | None = None) -> float:
    """ρ-zCDP ⇒ (ε, δ)-DP, Canonne–Kamath–Steinke conversion (RDP curve ε(α) = αρ)."""
    rho = _check_nonneg(rho, "rho")
    return rdp_to_epsilon(lambda alpha: alpha * rho, delta, orders=orders)


def rho_for_epsilon(epsilon: float, delta: float) -> float:
    """Largest ρ whose CKS conversion gives (ε, δ)-DP (inverse of :func:`rho_to_epsilon_cks`)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    hi = epsilon**2 / 2.0 + epsilon  # conversion ≥ ρ + (ε-independent positive term) ≥ ρ
    f = lambda log_rho: rho_to_epsilon_cks(math.exp(log_rho), delta) - epsilon  # noqa: E731
    lo = math.log(hi) - 1.0
    while f(lo) > 0.0:
        lo -= 2.0
    return math.exp(optimize.brentq(f, lo, math.log(hi), xtol=1e-13, rtol=1e-13))


def laplace_rdp(alpha: float, scale: float, sensitivity: float = 1.0) -> float:
    """RDP of the Laplace mechanism of scale b at order α > 1 (Mironov 2017, Table II).

    ε(α) = 1/(α−1) · ln( α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} ), λ = b/Δ₁,
    evaluated in log space.
    """
    lam = scale / sensitivity
    a = math.log(alpha / (2 * alpha - 1)) + (alpha - 1) / lam
    b = math.log((alpha - 1) / (2 * alpha - 1)) - alpha / lam
    return float(np.logaddexp(a, b)) / (alpha - 1)


# ---------------------------------------------------------------------------------------------
# exact Gaussian (μ-GDP) composition
# ---------------------------------------------------------------------------------------------


def gaussian_mu(
    sigmas: float | Sequence[float], sensitivities: float | Sequence[float] = 1.0
) -> float:
    """μ = √(Σ Δᵢ²/σᵢ²) of a composition of Gaussian mechanisms (Dong, Roth & Su 2022, Cor. 3.3)."""
    s = np.atleast_1d(np.asarray(sigmas, dtype=float))
    d = np.broadcast_to(np.asarray(sensitivities, dtype=float), s.shape)
    if not (np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError(f"sigmas must be finite and > 0, got {sigmas!r}")
    if not (np.all(np.isfinite(d)) and np.all(d > 0)):
        raise ValueError(f"sensitivities must be finite and > 0, got {sensitivities!r}")
    return float(math.sqrt(math.fsum((d / s) ** 2)))


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact δ(ε) of a μ-GDP mechanism: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018).

    Evaluated in log space: log δ = log Φ(a) + log(1 − exp(ε + log Φ(a − μ) − log Φ(a))),
    a = μ/2 − ε/μ, so it stays accurate for tiny δ and large ε.
    """
    epsilon = _check_nonneg(epsilon, "epsilon")
    mu = check_real("mu", mu, low=0.0, low_open=True, high=math.inf, high_open=True)
    a = mu / 2.0 - epsilon / mu
    log_p = special.log_ndtr(a)
    log_q = epsilon + special.log_ndtr(a - mu)
    if log_q >= log_p:  # cannot happen mathematically; guards rounding at δ ≈ 0
        return 0.0
    return float(math.exp(log_p + math.log(-math.expm1(log_q - log_p))))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """Smallest ε with δ_μ(ε) ≤ δ (inverse of :func:`gaussian_delta`, by ``brentq``)."""
    delta = check_delta(delta)
    mu = check_real("mu", mu, low=0.0, low_open=True, high=math.inf, high_open=True)
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    f = lambda eps: math.log(max(gaussian_delta(eps, mu), 1e-320)) - math.log(delta)  # noqa: E731
    hi = max(1.0, mu * mu)
    while f(hi) > 0.0:
        hi *= 2.0
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-13, rtol=1e-13))


# ---------------------------------------------------------------------------------------------
# amplification by shuffling (Feldman, McMillan & Talwar 2021)
# ---------------------------------------------------------------------------------------------


def _clone_pair_divergence(c: np.ndarray, epsilon: float, epsilon0: float) -> np.ndarray:
    """max(D_{e^ε}(P_c‖Q_c), D_{e^ε}(Q_c‖P_c)) for each clone count c (FMT21, Thm 3.2).

    P_c = α·A + (1−α)·(A+1), Q_c = (1−α)·A + α·(A+1), A ~ Bin(c, ½), α = e^{ε₀}/(1+e^{ε₀}).
    P_c(k)/Q_c(k) decreases in k and exceeds e^ε exactly for k < β(c+1) with
    β = (e^{ε₀} − e^ε)/((e^{ε₀} − 1)(1 + e^ε)), so D(P‖Q) = P(K ≤ m) − e^ε Q(K ≤ m),
    m = ⌈β(c+1)⌉ − 1; symmetrically D(Q‖P) = Q(K ≥ m') − e^ε P(K ≥ m'), m' = c+1−m.
    (The two are equal by the symmetry k ↦ c+1−k; both are computed, and their max taken.)
    """
    if epsilon >= epsilon0:
        return np.zeros(np.shape(c))
    alpha = special.expit(epsilon0)
    e = math.exp(epsilon)
    beta = (math.exp(epsilon0) - e) / (math.expm1(epsilon0) * (1.0 + e))
    c = np.asarray(c, dtype=float)
    m = np.ceil(beta * (c + 1.0)) - 1.0
    cdf_m, cdf_m1 = stats.binom.cdf(m, c, 0.5), stats.binom.cdf(m - 1.0, c, 0.5)
    d_pq = alpha * cdf_m + (1 - alpha) * cdf_m1 - e * ((1 - alpha) * cdf_m + alpha * cdf_m1)
    mp = c + 1.0 - m  # P(K ≥ j) = α·P(A ≥ j) + (1−α)·P(A ≥ j−1); P(A ≥ j) = sf(j−1)
    sf_j, sf_j1 = stats.binom.sf(mp - 1.0, c, 0.5), stats.binom.sf(mp - 2.0, c, 0.5)
    d_qp = (1 - alpha) * sf_j + alpha * sf_j1 - e * (alpha * sf_j + (1 - alpha) * sf_j1)
    return np.clip(np.maximum(d_pq, d_qp), 0.0, 1.0)


def shuffle_delta_bound(
    epsilon: float, epsilon0: float, n: int, *, block: int = 100, upper: bool = True
) -> float:
    """Bound on δ(ε) of n shuffled ε₀-LDP reports (FMT21, Thm 3.2, numerical form).

    δ(ε) ≤ E_C[max(D(P_C‖Q_C), D(Q_C‖P_C))], C ~ Bin(n−1, e^{−ε₀}). The support of C is cut into
    blocks of ``block`` consecutive values starting at ⌈E[C]⌉; the divergence is monotone in c
    (FMT21), so over a block it lies between its values at the two ends: the upper bound uses
    block mass × the larger end value (for *both* divergences — the correction of the public
    implementation), the lower bound the smaller. Any mass not covered by blocks (rounding) is
    added to the upper bound. ``block=1`` gives the bound itself.
    """
    n = check_int("n", n, low=1)
    block = check_int("block", block, low=1)
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    epsilon = _check_nonneg(epsilon, "epsilon")
    if epsilon >= epsilon0:
        return 0.0
    p = math.exp(-epsilon0)
    start = int(math.ceil((n - 1) * p))
    # block edges: …, [start − 2·block, start − block − 1], [start − block, start − 1], [start, …]
    k_lo = -(-start // block)  # number of blocks needed below start
    lows = start + block * np.arange(-k_lo, (n - 1 - start) // block + 1)
    highs = np.minimum(lows + block - 1, n - 1)
    lows = np.maximum(lows, 0)
    keep = lows <= highs
    lows, highs = lows[keep], highs[keep]
    mass = stats.binom.cdf(highs, n - 1, p) - stats.binom.cdf(lows - 1, n - 1, p)
    f_lo = _clone_pair_divergence(lows, epsilon, epsilon0)
    f_hi = _clone_pair_divergence(highs, epsilon, epsilon0)
    if upper:
        uncovered = max(0.0, 1.0 - math.fsum(mass))
        return float(min(1.0, math.fsum(mass * np.maximum(f_lo, f_hi)) + uncovered))
    return float(math.fsum(mass * np.minimum(f_lo, f_hi)))


def _closed_form_valid(epsilon0: float, n: int, delta: float) -> bool:
    return epsilon0 <= math.log(n / (16.0 * math.log(2.0 / delta)))


def shuffle_amplification_closed_form(epsilon0: float, n: int, delta: float) -> float:
    """Closed-form shuffled ε (FMT21, Theorem 3.1, in the tighter form of their code).

    Valid for ε₀ ≤ ln(n/(16 ln(2/δ))): with a = 8√(e^{ε₀} ln(4/δ)/n), c = 8e^{ε₀}/n,
    ε ≤ ln(1 + (1 − e^{−ε₀})/(1 + e^{−ε₀ − ln(1+a+c)})·(a + c)).
    Raises ``ValueError`` naming ``epsilon0`` outside the valid range.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int("n", n, low=1)
    delta = check_delta(delta)
    if not _closed_form_valid(epsilon0, n, delta):
        limit = (
            math.log(n / (16.0 * math.log(2.0 / delta)))
            if n > 16 * math.log(2 / delta)
            else -math.inf
        )
        raise ValueError(
            f"epsilon0 must be <= ln(n/(16 ln(2/delta))) = {limit:.6g} for the closed-form "
            f"shuffle bound (n={n}, delta={delta:g}), got {epsilon0!r}"
        )
    a = 8.0 * math.sqrt(math.exp(epsilon0) * math.log(4.0 / delta) / n)
    c = 8.0 * math.exp(epsilon0) / n
    factor = -math.expm1(-epsilon0) / (1.0 + math.exp(-epsilon0 - math.log1p(a + c)))
    return math.log1p(factor * (a + c))


def shuffle_amplification_numerical(
    epsilon0: float,
    n: int,
    delta: float,
    *,
    block: int = 100,
    iterations: int = 10,
    upper: bool = True,
) -> float:
    """Shuffled ε for n users each applying an ε₀-LDP randomizer (FMT21, numerical bound).

    Bisection on ε over [0, ε_start] for ``iterations`` steps, where ε_start is the closed form
    when valid and ε₀ otherwise, with :func:`shuffle_delta_bound`. ``upper=True`` returns an ε
    at which the δ upper bound is < δ (a valid guarantee); ``upper=False`` returns an ε at which
    even the δ lower bound is ≥ δ (no smaller ε can be certified by this analysis).
    Reference (δ = 1e-6, n = 10⁵, ε₀ = 4, block 100, 10 steps): upper 0.17542, lower 0.16754.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int("n", n, low=1)
    delta = check_delta(delta)
    iterations = check_int("iterations", iterations, low=1)
    lo = 0.0
    hi = (
        shuffle_amplification_closed_form(epsilon0, n, delta)
        if _closed_form_valid(epsilon0, n, delta)
        else epsilon0
    )
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        if shuffle_delta_bound(mid, epsilon0, n, block=block, upper=upper) < delta:
            hi = mid
        else:
            lo = mid
    return hi if upper else lo


def shuffled_rr_delta(
    epsilon: float, epsilon0: float, n: int, ones: Iterable[int] | None = None
) -> float:
    """Exact δ(ε) of n shuffled binary randomized responses (test oracle; replace-one).

    The shuffled output is equivalent to the count of ones. With the other n−1 users holding m
    ones, S = Bin(m, p) ⊛ Bin(n−1−m, 1−p), p = e^{ε₀}/(1+e^{ε₀}), and the differing user holds
    0 or 1: P₀(k) = p S(k) + (1−p) S(k−1), P₁(k) = (1−p) S(k) + p S(k−1). Returns
    max over m ∈ ``ones`` (default: all 0…n−1) of max(D_{e^ε}(P₀‖P₁), D_{e^ε}(P₁‖P₀)).
    Direct convolutions (cost ~n² per m): meant for n up to a few thousand, or a few m.
    """
    epsilon = _check_nonneg(epsilon, "epsilon")
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int("n", n, low=1)
    p = float(special.expit(epsilon0))
    e = math.exp(epsilon)
    ms = range(n) if ones is None else [check_int("ones", m, low=0, high=n - 1) for m in ones]
    worst = 0.0
    for m in ms:
        s = np.convolve(
            stats.binom.pmf(np.arange(m + 1), m, p),
            stats.binom.pmf(np.arange(n - m), n - 1 - m, 1 - p),
        )
        s0 = np.concatenate([s, [0.0]])  # S(k), k = 0..n
        s1 = np.concatenate([[0.0], s])  # S(k−1)
        p0 = p * s0 + (1 - p) * s1
        p1 = (1 - p) * s0 + p * s1
        d = max(np.maximum(p0 - e * p1, 0.0).sum(), np.maximum(p1 - e * p0, 0.0).sum())
        worst = max(worst, float(d))
    return worst
