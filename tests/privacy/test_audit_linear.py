"""Privacy audits (SPEC §8) of the linear-bandit local randomizers, each with mutation tests.

Audited: :class:`~privenv.wrappers.ldp_linear.GaussianStatisticsRandomizer` (LDP-LinUCB's user
message (φφᵀ + B, φy + ξ)), :class:`~privenv.wrappers.ldp_linear.LaplaceInputRandomizer` (input
perturbation (φ + Lap_d(b), y + Lap(b))), and the Laplace and Gaussian parts of
:class:`~privenv.agents.lplr.LPLRUsers` (LPLR-RegCB's user messages).

Method (PRIVACY-TESTING.md items 1 and 8): one user's neighbouring inputs (φ, y) vs (φ′, y′),
‖φ‖₂ ≤ 1, |y| ≤ 1, chosen as a worst case of the mechanism; N = 2·10⁵ releases per side, drawn
vectorised from fixed seeds; one scalar score per mechanism, fixed in advance from the mechanism's
form (the log-likelihood ratio of the declared mechanism for that pair: a projection on the mean
difference for Gaussian noise, a sum of clipped coordinate differences for Laplace noise);
threshold events {score > t} and {score ≤ t} on a grid also fixed in advance, in units of the
declared noise scale. Clopper–Pearson bounds, Bonferroni over all of them, give ε_lb with
family-wise false-alarm probability α = 1e-6: a correct mechanism fails with probability ≤ 1e-6.
Each audit is also run on mutants (noise × 0.5; sensitivity underestimated) and must fail.

Gaussian mechanisms are audited at δ_audit = 0.05, not at their calibration δ: the analytic
calibration makes the release μ-GDP with μ = Δ₂/σ, so it declares the whole privacy profile
ε(δ′) = ``gaussian_epsilon(δ′, μ)`` and any point of it may be tested. At δ′ = 1e-5 an event must
have probability ≫ 1e-5 under D and a ratio resolved to ~1e-5 under D′ — out of reach of 2·10⁵
samples — while at δ′ = 0.05 the optimal events have probabilities 0.1–0.5, where N = 2·10⁵
resolves the ratio to a few percent (as tests/privacy/test_tree.py does at δ = 0.1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privenv.agents.lplr import LPLRUsers
from privenv.privacy import audit
from privenv.privacy.accounting import gaussian_epsilon
from privenv.privacy.mechanisms import gaussian_sigma_analytic
from privenv.privacy.wishart import gram_gaussian_sigma
from privenv.wrappers.ldp_linear import GaussianStatisticsRandomizer, LaplaceInputRandomizer

ALPHA = 1e-6
N_AUDIT = 200_000
AUDIT_DELTA = 0.05
D = 2
#: thresholds of Gaussian scores, in units of the declared σ around D′'s mean (25 × 2 events)
GAUSS_GRID = np.linspace(-1.0, 5.0, 25)
#: thresholds of Laplace log-likelihood ratios, in units of their maximum (11 × 2 events); the
#: extremes ±0.999 are the "every coordinate beyond both means" events, whose ratio is e^{±ε}
LAPLACE_GRID = np.concatenate([[-0.999], np.linspace(-0.8, 0.8, 9), [0.999]])


def _gaussian_audit(out_d: np.ndarray, out_dp: np.ndarray, mean_d: np.ndarray,
                    mean_dp: np.ndarray, sigma: float) -> audit.AuditResult:
    """Threshold audit of the projection of releases (rows) on the unit mean difference: the
    likelihood-ratio statistic of isotropic Gaussian noise; thresholds ``GAUSS_GRID``·σ (σ the
    declared noise) around D′'s projected mean."""
    u = (mean_d - mean_dp) / np.linalg.norm(mean_d - mean_dp)
    s_d, s_dp = (out_d - mean_dp) @ u, (out_dp - mean_dp) @ u
    return audit.threshold_epsilon_lower_bound(s_d, s_dp, GAUSS_GRID * sigma,
                                               delta=AUDIT_DELTA, alpha=ALPHA)


def _laplace_llr(x: np.ndarray, mean_d: np.ndarray, mean_dp: np.ndarray,
                 scale: float) -> np.ndarray:
    """ln p_D(x)/p_D′(x) of i.i.d. Laplace(scale) coordinates around the two means (rows of x)."""
    return (np.abs(x - mean_dp) - np.abs(x - mean_d)).sum(axis=1) / scale


def _laplace_audit(out_d: np.ndarray, out_dp: np.ndarray, mean_d: np.ndarray,
                   mean_dp: np.ndarray, scale: float) -> audit.AuditResult:
    """Pure-DP threshold audit of the log-likelihood ratio of the declared Laplace mechanism;
    thresholds ``LAPLACE_GRID`` × its maximum Σ|mean_d − mean_dp|/scale."""
    top = np.abs(mean_d - mean_dp).sum() / scale
    scores = [_laplace_llr(x, mean_d, mean_dp, scale) for x in (out_d, out_dp)]
    return audit.threshold_epsilon_lower_bound(*scores, LAPLACE_GRID * top, delta=0.0,
                                               alpha=ALPHA)


# -- LDP-LinUCB's Gaussian statistics -----------------------------------------------------------

EPS_G, DELTA_G = 4.0, 1e-5
_C, _S = math.cos(math.pi / 12), math.sin(math.pi / 12)
#: the worst case of (triu(φφᵀ), φy) for d = 2 (numerical maximisation over ‖φ‖ ≤ 1, |y| ≤ 1):
#: φ·φ′ = −½, y = y′ = 1, ‖Δ‖₂ = 3/√2 ≈ 2.121 — below the declared Δ₂ = 2√2, which bounds the
#: two blocks separately (‖triu(φφᵀ − φ′φ′ᵀ)‖² ≤ 2 and ‖φy − φ′y′‖² ≤ 4 are not attained together)
PHI_G, PHI_G_PRIME = np.array([_C, _S]), np.array([-_S, -_C])


def _stats_vector(phi: np.ndarray, y: float) -> np.ndarray:
    iu = np.triu_indices(D)
    return np.concatenate([np.outer(phi, phi)[iu], phi * y])


class HalfSigmaStatistics(GaussianStatisticsRandomizer):
    """Mutant: noise × 0.5."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sigma *= 0.5


class AddRemoveStatistics(GaussianStatisticsRandomizer):
    """Mutant: σ calibrated for add/remove (Δ₂ = ‖(triu φφᵀ, φy)‖ ≤ √2) instead of replace-one."""

    sensitivity = math.sqrt(2.0)


def _release_statistics(rand: GaussianStatisticsRandomizer, phi: np.ndarray, y: float,
                        seed: list[int]) -> np.ndarray:
    draws = np.random.default_rng(seed).standard_normal((N_AUDIT, rand.n_draws()))
    msg = rand(np.tile(phi, (N_AUDIT, 1)), np.full(N_AUDIT, y), draws)
    iu = np.triu_indices(D)
    return np.concatenate([msg["gram"][:, iu[0], iu[1]], msg["moment"]], axis=1)


@pytest.mark.parametrize(("cls", "caught"), [(GaussianStatisticsRandomizer, False),
                                             (HalfSigmaStatistics, True),
                                             (AddRemoveStatistics, True)])
def test_gaussian_statistics_audit(cls: type[GaussianStatisticsRandomizer], caught: bool) -> None:
    """(ε, δ) = (4, 1e-5), d = 2: declared μ = 2√2/σ = 0.925, so ε(δ_audit = 0.05) = 1.39.
    The correct randomizer's ε_lb stays below it (measured 0.79; its best possible value is
    ε(0.05) at the pair's μ = 0.75 × 0.925, i.e. 0.88, since the pair attains 3/√2 of the
    declared 2√2); both mutants (σ × 0.5; σ from the add/remove sensitivity √2, also σ/2) are
    caught (measured 2.38 and 2.38 > 1.39; their true ε(0.05) is 2.60). False alarm ≤ 1e-6
    (Bonferroni over 50 events × 2 directions)."""
    declared_rand = GaussianStatisticsRandomizer(EPS_G, DELTA_G, D)
    sigma = declared_rand.sigma
    declared = gaussian_epsilon(AUDIT_DELTA, declared_rand.sensitivity / sigma)
    assert sigma == pytest.approx(gaussian_sigma_analytic(EPS_G, DELTA_G, 2 * math.sqrt(2)))
    rand = cls(EPS_G, DELTA_G, D)
    assert rand.sigma == pytest.approx(sigma * (0.5 if caught else 1.0))
    mean_d, mean_dp = _stats_vector(PHI_G, 1.0), _stats_vector(PHI_G_PRIME, 1.0)
    assert np.linalg.norm(mean_d - mean_dp) == pytest.approx(3 / math.sqrt(2))
    seed = {GaussianStatisticsRandomizer: 11, HalfSigmaStatistics: 12}.get(cls, 13)
    out_d = _release_statistics(rand, PHI_G, 1.0, [seed, 0])
    out_dp = _release_statistics(rand, PHI_G_PRIME, 1.0, [seed, 1])
    res = _gaussian_audit(out_d, out_dp, mean_d, mean_dp, sigma)
    assert res.violates(declared) == caught, (res, declared)
    if not caught:  # power check (not privacy): close to the pair's exact ε(0.05)
        best = gaussian_epsilon(AUDIT_DELTA, 3 / math.sqrt(2) / sigma)
        assert res.epsilon_lb > best - 0.25


# -- input perturbation ---------------------------------------------------------------------------

EPS_L = 1.0
#: the worst case of (φ, y) in L1: φ = (1, 1)/√2, y = 1 vs −φ, −1: ‖Δ‖₁ = 2√2 + 2 = the declared
PHI_L = np.full(D, 1 / math.sqrt(D))


class HalfScaleInput(LaplaceInputRandomizer):
    """Mutant: noise × 0.5."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.scale *= 0.5


class NoSqrtDInput(LaplaceInputRandomizer):
    """Mutant: b = (2 + 2)/ε — the features' L1 sensitivity taken as 2 (their L2 bound) instead
    of 2√d."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.scale = 4.0 / self.epsilon


def _release_input(rand: LaplaceInputRandomizer, phi: np.ndarray, y: float,
                   seed: list[int]) -> np.ndarray:
    draws = np.random.default_rng(seed).random((N_AUDIT, rand.n_draws()))
    msg = rand(np.tile(phi, (N_AUDIT, 1)), np.full(N_AUDIT, y), draws)
    return np.concatenate([msg["phi_tilde"], msg["y_tilde"]], axis=1)


@pytest.mark.parametrize(("cls", "caught"), [(LaplaceInputRandomizer, False),
                                             (HalfScaleInput, True), (NoSqrtDInput, True)])
def test_laplace_input_audit(cls: type[LaplaceInputRandomizer], caught: bool) -> None:
    """ε = 1, d = 2, b = (2√2 + 2)/ε: the pair attains the sensitivity, so the event "every
    coordinate beyond both means" has ratio exactly e^ε and the audit is sharp: correct ε_lb
    (measured 0.91) ≤ 1; noise × 0.5 (true ε = 2) and the scale without √d (true ε = 1.21) are
    caught (measured 1.88 and 1.10). False alarm ≤ 1e-6 (22 events × 2 directions)."""
    declared_rand = LaplaceInputRandomizer(EPS_L, D)
    assert declared_rand.scale == pytest.approx((2 * math.sqrt(D) + 2) / EPS_L)
    rand = cls(EPS_L, D)
    mean_d, mean_dp = np.append(PHI_L, 1.0), np.append(-PHI_L, -1.0)
    assert np.abs(mean_d - mean_dp).sum() == pytest.approx(declared_rand.sensitivity)
    seed = {LaplaceInputRandomizer: 21, HalfScaleInput: 22}.get(cls, 23)
    out_d = _release_input(rand, PHI_L, 1.0, [seed, 0])
    out_dp = _release_input(rand, -PHI_L, -1.0, [seed, 1])
    res = _laplace_audit(out_d, out_dp, mean_d, mean_dp, declared_rand.scale)
    assert res.violates(EPS_L) == caught, (res, EPS_L)
    if not caught:
        assert res.epsilon_lb > EPS_L - 0.15  # the audit is sharp (power, not privacy)


# -- LPLR-RegCB's user messages ------------------------------------------------------------


def _lplr_release(mode: str, epsilon: float, delta: float, part: str, contribution,
                  seed: list[int], factor: float = 1.0) -> np.ndarray:
    """The release of a phase of n = 1 user (the per-user message: b·(G − G′) with G ~ Gamma(1)
    is one Lap(b)), replicated over the bins of one run (their noise is i.i.d.), with the
    user's data terms written into the phase sums by ``contribution(users)`` — bypassing
    ``contribute`` (the layer walk; its clipping to ‖γ^{k}φ_h‖ ≤ 1, |y_h| ≤ 1, ε_i ∈ [0, 1] is what
    bounds the terms written here). ``factor`` multiplies the noise scales (mutants)."""
    n_bins = 2 * N_AUDIT if part in ("count", "eps") else N_AUDIT
    users = LPLRUsers(D, 1, [np.random.default_rng(seed)], epsilon, mode, delta)
    users.b_count *= factor
    users.b_lam *= factor
    users.b_ci *= factor
    if users.sigma_gram is not None:
        users.sigma_gram *= factor
    kind = "ci" if part == "eps" else "update"
    users.start_phase(kind, 1, n_bins, 1, np.ones((1, 1, n_bins), dtype=bool))
    contribution(users)
    return users.release()[part][0, 0]


EPS_LPLR = 3.0  # ε/3 = 1 per Update part


def _one_hot(part: str, offset: int, value: float = 1.0):
    """A user in bin 2j + offset of every replica pair j (one-hot over bins)."""
    def contribution(users: LPLRUsers) -> None:
        getattr(users, part)[0, 0, offset::2] = value
    return contribution


@pytest.mark.parametrize(
    ("part", "mode", "factor", "caught"),
    [("count", "gaussian", 1.0, False), ("count", "gaussian", 0.5, True),
     ("count", "paper", 1.0, True),
     ("eps", "gaussian", 1.0, False), ("eps", "gaussian", 0.5, True), ("eps", "paper", 1.0, True)],
)
def test_lplr_one_hot_laplace_audit(part: str, mode: str, factor: float, caught: bool) -> None:
    """LPLR-Update's count (declared ε/3) and LPLR-CI's normalized ε_i ∈ [0, 1] (declared ε),
    one-hot over bins: the worst case is the user moving from bin b to bin b′ (value 1), Δ₁ = 2.
    Score: the declared Laplace log-likelihood ratio of (x_b, x_b′). ε = 3: count declared 1,
    CI declared 3. Correct: ε_lb ≤ declared (measured 0.95 and 2.87); noise × 0.5 and the paper's
    scales (Lap(3/α), Lap(1/α): add/remove sensitivity 1, true ε twice the declared) are caught
    (measured 1.92, 1.92 for the count; 5.58, 5.50 for CI).
    False alarm ≤ 1e-6 (22 events × 2 directions)."""
    declared = EPS_LPLR / 3 if part == "count" else EPS_LPLR
    scale = 2.0 / declared  # the valid mode's b for Δ₁ = 2
    seed = [31, ("count", "eps").index(part), int(factor * 2), int(mode == "paper")]
    outs = [_lplr_release(mode, EPS_LPLR, 1e-5, part, _one_hot(part, k), seed + [k], factor)
            .reshape(N_AUDIT, 2) for k in (0, 1)]
    res = _laplace_audit(*outs, np.array([1.0, 0.0]), np.array([0.0, 1.0]), scale)
    assert res.violates(declared) == caught, (res, declared)
    if not caught:
        assert res.epsilon_lb > declared - 0.35  # power (not privacy)


@pytest.mark.parametrize(("mode", "factor", "caught"),
                         [("gaussian", 1.0, False), ("gaussian", 0.5, True), ("paper", 1.0, True)])
def test_lplr_label_moment_laplace_audit(mode: str, factor: float, caught: bool) -> None:
    """LPLR-Update's normalized y_hφ_h (declared ε/3 = 1 at ε = 3): the same user with
    φ_h = (1, 1)/√2 and label +1 vs −1, Δ₁ = 2√2 = 2√d (the sensitivity, attained). Correct:
    ε_lb ≤ 1 (measured 0.94); noise × 0.5 and the paper's Lap(3√d/α) (calibrated to √d) are
    caught (measured 1.92 and 1.90; true ε 2). False alarm ≤ 1e-6 (22 events × 2 directions)."""
    v = np.full(D, 1 / math.sqrt(D))
    declared = EPS_LPLR / 3
    scale = 2 * math.sqrt(D) / declared

    def user(y: float):
        def contribution(users: LPLRUsers) -> None:
            users.count[0, 0, :] = 1.0
            users.lam[0, 0, :] = y * v
            users.gram[0, 0, :] = np.outer(v, v)
        return contribution

    seed = [41, int(factor * 2), int(mode == "paper")]
    outs = [_lplr_release(mode, EPS_LPLR, 1e-5, "lam", user(y), seed + [k], factor)
            for k, y in enumerate((1.0, -1.0))]
    res = _laplace_audit(*outs, v, -v, scale)
    assert res.violates(declared) == caught, (res, declared)
    if not caught:
        assert res.epsilon_lb > declared - 0.15


@pytest.mark.parametrize(("factor", "caught"), [(1.0, False), (0.5, True)])
def test_lplr_gram_gaussian_audit(factor: float, caught: bool) -> None:
    """LPLR-Update's normalized Gram γ^{2k}φ_hφ_hᵀ with symmetric Gaussian noise of
    σ = ``gram_gaussian_sigma(ε/3, δ, d)``, ε = 3, δ = 0.01: declared μ = √2/σ = 0.533 and
    ε(δ_audit = 0.05) = 0.572. Pair φ_h = e₁ vs e₂ (Δ₂ of the upper triangle = √2, attained);
    score: projection of the upper triangle on (1, 0, −1)/√2. Correct: ε_lb ≤ 0.572 (measured
    0.50); σ × 0.5 caught (measured 1.61; true ε(0.05) = 1.73). The paper's Wishart mode is
    audited in test_wishart.py. False alarm ≤ 1e-6 (50 events × 2 directions)."""
    epsilon, delta = EPS_LPLR, 0.01
    sigma = gram_gaussian_sigma(epsilon / 3, delta, D)
    declared = gaussian_epsilon(AUDIT_DELTA, math.sqrt(2) / sigma)
    iu = np.triu_indices(D)

    def user(phi: np.ndarray):
        def contribution(users: LPLRUsers) -> None:
            users.count[0, 0, :] = 1.0
            users.gram[0, 0, :] = np.outer(phi, phi)
        return contribution

    e1, e2 = np.eye(D)
    outs = [_lplr_release("gaussian", epsilon, delta, "gram", user(phi), [51, int(factor * 2), k],
                          factor)[:, iu[0], iu[1]] for k, phi in enumerate((e1, e2))]
    res = _gaussian_audit(*outs, np.outer(e1, e1)[iu], np.outer(e2, e2)[iu], sigma)
    assert res.violates(declared) == caught, (res, declared)
    if not caught:
        assert res.epsilon_lb > declared - 0.2
