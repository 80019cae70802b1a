"""LPLR + RegCB elimination: the locally private linear contextual bandit of paper 4.

Li, Simchi-Levi & Wang 2024, *On the Optimal Regret of Locally Private Linear Contextual Bandit*
(the problem and the choices: docs/guides/linear.md):

* **Algorithm 1** (RegCB.Elimination, simplified): epochs τ = 1, 2, … of n_τ = 2^τ·n₀ rounds
  (Theorem 4.7); in epoch τ, context x_t keeps the actions that survive the successive tests
  f̂_τ′ᵃ(x) + Δ_τ′ᵃ(x) ≥ max_{a′} f̂_τ′^{a′}(x) − Δ_τ′^{a′}(x), τ′ = 1 … τ (line 8), plays one of
  them uniformly (line 10), and feeds (x_t, a_t, y_t) to oracle a_t and (⊥, a, 0) to every other
  oracle a (line 11). At the end of the epoch each oracle returns f̂_{τ+1}ᵃ, Δ_{τ+1}ᵃ (line 13).
* **Algorithm 2** (LPLR with 2dn samples, n = n_τ/(2d)): for each layer h = 1 … d, n rounds of
  LPLR-Update (**Algorithm 3**), then LPLR-PCR (**Algorithm 4**), then n fresh rounds of LPLR-CI
  (**Algorithm 5**); finally LPLR-Aggregate (**Algorithm 6**).
* The layered partition (§4.1, Figure 2): γ = T^β, M = ⌈1/(2β)⌉, k_h = max{k ≤ M : ‖φ_h‖ ≤ γ^{−k}},
  φ_{h+1} = (I − û_B û_Bᵀ)φ_h, y_{h+1} = y_h − ⟨φ_h, θ̂_B⟩.

Theorem 4.7's choices are the defaults: δ = 1/T² (failure probability), β = 1/ln T (Remark 4.8,
so γ = e), n₀ = d²·ln(dT/β) rounded up to a multiple of 2d (so that every epoch splits into 2d
equal phases; the "≍" of Theorem 4.7 leaves the constant free, we take 1).

## The κ constants (chosen once, here)

Lemmas 4.3 and 4.4 state the smallest κ for which the proofs go through:
κ₁ ≥ 43 α⁻¹ ln(48d/βδ), κ₁′ ≥ 15 α⁻¹ ln(48d/βδ), κ₂ ≥ 118 α⁻¹ ln(24d/βδ),
κ₃ ≥ 300 α⁻¹ ln(48d/βδ). We use exactly these minimal values (:data:`KAPPA_PAPER`,
:func:`lplr_kappas`) times one documented factor ``kappa_scale`` (default 1: the paper's
constants, valid confidence intervals). ``kappa_scale`` is the one scale for the constants the
paper leaves open (Theorem 4.7's "appropriate algorithmic parameters"); ``privenv reproduce
lplr-constants`` sweeps it. It never touches privacy: the κ's only decide which bins the server
fits (Algorithm 4 line 2, Algorithm 5 line 10) and how wide its intervals are (line 13–14), all
post-processing of released values; :class:`LPLRUsers` is built without them, so the noise
scales, the declared guarantee and the ledger's charges are the same at every scale. A scale
below 1 gives up the proofs' coverage of the intervals (the best action may be eliminated), not
privacy. **Consequence, measured and reported, not tuned away:**
with these constants the χ̂ width κ₃γ²(d+1)⁴/(ψ̂√n) is ≈ 5·10⁶/√n at d = 2, ε = 1, so no
confidence interval drops below 1 before n ≈ 10¹³ samples per layer: at any feasible horizon the
agent never eliminates and plays uniformly. The constants scale like 1/ε, so a large ε (or a
small ``kappa_scale``, an explicit departure from the paper's proofs) makes the oracle bite.
The paper assumes α ≤ 1; for ε > 1 its κ ∝ 1/α no longer covers the non-private sampling error
of the ±1 labels, so the intervals may under-cover there.

## Trust boundary: a user-side component inside the agent (why not a wrapper)

LPLR is a *local* protocol whose user message depends on the server's broadcast: the user needs
the current layer's partition (û_B, θ̂_B of the layers above) to compute k_h, φ_h, y_h, and in
LPLR-CI the error functions η̂ of the layer above. A reward wrapper cannot see that state, so the
randomizer is the clearly separated class :class:`LPLRUsers`: it receives one user's
(φ(x_t, a_t), y_t, a_t) and the public broadcast (:meth:`LPLRServer.broadcast`), draws its noise
from its own per-run streams (child ``WRAPPER`` of each run's seed, never the agent's), and hands
the learner only released values. The learner (:class:`LPLRServer`) is built from released values
only; ``tests/agents/test_lplr.py`` replays the releases into a second agent fed sentinel labels
and checks that it acts identically. The features φ(x_t, ·) are shown to the learner at decision
time, as Definition 1.1 allows (non-anticipating LDP); the agent keeps them only until the user
component has consumed round t.

**Aggregated release (exact in law).** The server only ever uses, per bin, the *sum* of the n
messages of a phase (ĉ_B, λ̂_B, Λ̂_B, ε̂_B are running sums read at the end of the phase). The sum of
n i.i.d. Lap(b) is b·(G − G′) with G, G′ ~ Gamma(n, 1); of n N(0, σ²) is N(0, nσ²); of n
W_d(d+1, C) is W_d(n(d+1), C). So :class:`LPLRUsers` adds up the users' data terms during the
phase and releases, at its end, data sum + one draw of the summed noise: the learner's view has
exactly the law of the sum of the n per-user messages (a post-processing of them), at O(1) noise
draws per bin per phase instead of O(n). Noise is drawn for every bin of the layer that the
broadcast marks as open, whether or not a user falls into it (as Algorithm 2 line 6 requires).

## Privacy (per user = per round; each user enters exactly one phase of one epoch)

``wishart="gaussian"`` (default, a valid guarantee), replace-one neighbours (Definition 1.1:
any (x, a, y) against any (x′, a′, y′)); the message over *all A oracles' bins jointly* has the
sensitivity of one oracle's, since ⊥ contributes nothing:

* LPLR-Update: counts, one-hot over bins, Δ₁ = 2 → Lap(6/ε) (ε/3); normalized γ^{k}·y_hφ_h,
  ‖·‖₂ ≤ 1, Δ₁ = 2√d → Lap(6√d/ε) per coordinate (ε/3); normalized γ^{2k}φ_hφ_hᵀ, upper triangle,
  Δ₂ = √2 → symmetric Gaussian with σ = ``gram_gaussian_sigma(ε/3, delta, d)`` (analytic
  Gaussian, (ε/3, δ)). Basic composition: (ε, δ)-LDP.
* LPLR-CI: normalized γ^{k}√ŝ_B·ε_i ∈ [0, 1] one-hot, Δ₁ = 2 → Lap(2/ε): ε-LDP.

So the system is (ε, ``delta``)-LDP per (context, reward). The paper's scales (Lap(3/α),
Lap(3√d/α), Lap(1/α)) are calibrated to sensitivity 1 and √d, the add/remove values; under its own
replace-one Definition 1.1 they give 2α/3 per Laplace part — our valid mode doubles them.

## Exact sampler (``sampler="exact"``)

The float sampler's noise is binary64 arithmetic (DP in idealized arithmetic only: Mironov 2012;
docs/guides/threat-model.md). With ``sampler="exact"`` (``wishart="gaussian"`` only) each user's
message is what a real user would send: every part rounded to its own grid g·ℤ,
g = 2^(⌊log₂ s⌋ − 14) for its noise scale s, plus the user's own discrete noise drawn from uniform
64-bit words (:mod:`privenv.privacy.exact`; Canonne, Kamath & Steinke 2020, "CKS20"). The sum of n
discrete Laplace (or Gaussian) variables is not a discrete Laplace (or Gaussian), so there is no
one-draw shortcut: :class:`LPLRUsers` sums the users' rounded messages and draws the n users'
noises, n·(open bins)·(coordinates per bin) discrete draws per run and phase (about 8 words
each for the Laplace, 12 for the Gaussian) — O(n) per phase instead of the float path's O(1), i.e.
one draw per open coordinate per round; it draws only on the bins the broadcast opens (the
others release nothing). Each run's draws come from the word stream ``child(s, 2)`` of its
``WRAPPER`` seed s, so run *i* is the same alone or in a batch, and the float path's generator
(seeded by s itself) is untouched. The parts (:class:`LPLRExact`), replace-one, a user moving
between at most two bins (⊥ is exactly 0 on every grid):

* LPLR-Update at ε₃ = ε/3 (rounded down to a double): the count, Δ₁ = 2 over 2 coordinates, and
  the label moment, Δ₁ = 2√d over 2d coordinates, each by the discrete Laplace of
  :class:`~privenv.privacy.exact.VectorLaplace` (ε′ = Δ_k/t ≤ ε₃ exactly, Δ_k including one grid
  unit of rounding per coordinate); the Gram's upper triangle, Δ₂ = √2 over d(d+1) coordinates,
  by the multivariate discrete Gaussian, exactly ρ_k-zCDP with the rounding included (CKS20),
  calibrated through zCDP (:func:`~privenv.privacy.exact.calibrate_gaussian`: ρ_k ≤
  ρ(ε₃, δ), ε′_gram = CKS20's conversion of ρ_k at δ ≤ ε₃, σ never below the float σ);
* LPLR-CI at ε: Δ₁ = 2 over 2 coordinates, discrete Laplace.

The declared guarantee is (ε′, δ) with ε′ = max(ε′_count + ε′_lam + ε′_gram, ε′_CI) ≤ ε
(the update sum computed exactly in rationals, then rounded up); the ledger is charged ε′.

``wishart="paper"`` reproduces Algorithm 3 line 5 and Algorithm 5 line 6 exactly (Lap(3/α),
3√dγ^{−k}Lap(1/α), 3γ^{−2k}(W_d(d+1, 1.5α⁻¹I) − 1.5(d+1)α⁻¹I), s^{−1/2}γ^{−k}Lap(1/α)). The Wishart
mechanism is **not DP** (:mod:`privenv.privacy.wishart`), so this mode warns at construction and
its ``privacy`` carries the paper's α-LDP *claim* with the unit string saying it is not a valid
guarantee. The ledger is charged ε per user in both modes (the declared total).

## Deviations (each needed for validity, all documented)

1. The user clips y_h to [−1, 1] and scales φ into the unit ball (float32 round-off): Figure 2
   asserts y_h ∈ [−1, 1] but θ̂ estimates do not enforce it, and the sensitivity needs it.
2. LPLR-PCR line 6 (op-norm nearest PSD matrix with Λ Û = 0): we project, Λ̃ = P Λ̂ P with
   P = I − ÛÛᵀ, and take its top eigenpair (the PSD cut does not change it); ŝ ≤ 0 → inactive.
3. LPLR-CI line 11 sets η̂_B ≡ γ^{−k_h} for a bin it deactivates; the error of a point there is
   bounded by η̂_{B°}(φ) + ‖φ_h‖ (Lemma 4.4's own claim needs it), so we use
   min{1, η̂_{B°}(φ) + γ^{−k_h}}, and such a bin contributes no θ̂_B (it has no certified error
   bound). Algorithm 6 then stops at the first inactive bin, with Δ = its η̂.
4. The last epoch is cut at T; users of an unfinished phase are never released (nor charged).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privenv._validation import check_delta, check_epsilon, check_int, check_real
from privenv.agents.base import Agent
from privenv.parameters import DELTA, EPSILON, POSITIVE, SAMPLER, Integer, Options, Param, Real
from privenv.privacy.exact import (
    VectorGaussian,
    VectorLaplace,
    calibrate_gaussian,
    float_up,
    run_discrete,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import symmetric_from_upper
from privenv.privacy.wishart import gram_gaussian_sigma
from privenv.seeding import WRAPPER, RunNoise, child, generators, run_seed_sequences

__all__ = [
    "KAPPA_PAPER",
    "LPLR",
    "LPLRRegCB",
    "LPLRServer",
    "LPLRUsers",
    "LPLRExact",
    "epoch_lengths",
    "lplr_kappas",
    "lplr_n0",
    "partition_parameters",
]

#: the minimal κ of Lemmas 4.3/4.4, κ ≥ c·α⁻¹·ln(L·d/(βδ)), as name → (c, L). The one place the
#: κ's are set.
KAPPA_PAPER: dict[str, tuple[float, float]] = {
    "kappa1": (43.0, 48.0),  # Lemma 4.3 (LPLR-PCR activation)
    "kappa1_prime": (15.0, 48.0),  # Lemma 4.4 (LPLR-CI activation)
    "kappa2": (118.0, 24.0),  # Lemma 4.4 (ε̄ offset)
    "kappa3": (300.0, 48.0),  # Lemma 4.4 (χ̂ constant term)
}


def lplr_kappas(
    epsilon: float, d: int, beta: float, alpha: float, kappa_scale: float = 1.0
) -> dict[str, float]:
    """κ₁, κ₁′, κ₂, κ₃: ``kappa_scale`` × the minimal values of Lemmas 4.3/4.4
    (:data:`KAPPA_PAPER`)."""
    epsilon = check_epsilon(epsilon)
    d = check_int("d", d, low=1)
    beta = check_real("beta", beta, low=0.0, low_open=True, high=math.inf, high_open=True)
    alpha = check_delta(alpha, "alpha")
    kappa_scale = check_real("kappa_scale", kappa_scale, low=0.0, low_open=True, high=math.inf,
                             high_open=True)
    return {name: kappa_scale * c * math.log(L * d / (beta * alpha)) / epsilon
            for name, (c, L) in KAPPA_PAPER.items()}


def partition_parameters(horizon: int, beta: float) -> tuple[float, int]:
    """γ = T^β and M = ⌈1/(2β)⌉ (§4.1)."""
    return float(horizon) ** beta, math.ceil(1.0 / (2.0 * beta))


def lplr_n0(horizon: int, d: int, beta: float) -> int:
    """n₀ ≍ d² ln(dT/β) (Theorem 4.7) with constant 1, rounded up to a multiple of 2d."""
    raw = d * d * math.log(d * horizon / beta)
    return 2 * d * max(1, math.ceil(raw / (2 * d)))


def epoch_lengths(horizon: int, n0: int) -> list[int]:
    """n_τ = 2^τ·n₀, τ = 1, 2, … until the epochs cover the horizon (the last one is cut at T)."""
    out, total, tau = [], 0, 1
    while total < horizon:
        out.append(2**tau * n0)
        total += out[-1]
        tau += 1
    return out


# ---------------------------------------------------------------------------------------------
# Figure 2 / Algorithm 6: descending the layered partition
# ---------------------------------------------------------------------------------------------


def _level_k(phi: np.ndarray, log_gamma: float, M: int) -> np.ndarray:
    """k = max{k ≤ M : ‖φ‖ ≤ γ^{−k}} per row (norms ≥ 1 give 0, φ = 0 gives M)."""
    norm = np.sqrt(np.einsum("...i,...i->...", phi, phi))
    k = np.floor(-np.log(np.maximum(norm, 1e-300)) / log_gamma + 1e-12)
    return np.clip(k, 0, M).astype(np.int64)


#: layout of a packed layer, last axis: û_B (d numbers), then t (θ̂_B = t·û_B), active, c (the κ₃
#: term of χ̂_B), slope (ε̄_B/√ŝ_B)
def _pack(u: np.ndarray, t: np.ndarray, active: np.ndarray, c: np.ndarray, slope: np.ndarray
          ) -> np.ndarray:
    return np.concatenate([u, t[..., None], active[..., None].astype(float), c[..., None],
                           slope[..., None]], axis=-1)


def _descend(packs: list[np.ndarray], phi: np.ndarray, log_gamma: float, M: int, gamma: float
             ) -> dict[str, np.ndarray]:
    """Walk φ through the given finished layers: Figure 2 and Algorithm 6, with the η̂ recursion
    of Algorithm 5 line 14 (and deviation 3 for inactive bins).

    ``packs[l]`` is layer l+1 packed by :func:`_pack`, shape ``lead + (bins, d + 4)``; ``phi`` has
    shape ``lead + (d,)`` (or broadcasts to it).

    Returns ``f`` = Σ⟨φ_h, θ̂_{B_h}⟩, ``eta`` = η̂ of the last bin visited, ``phi`` = φ after the
    layers, ``idx`` = the bin index on the last layer, ``alive`` = every bin on the path active.
    """
    d = phi.shape[-1]
    lead = np.broadcast_shapes(phi.shape[:-1], *(p.shape[:-2] for p in packs))
    phi = np.broadcast_to(phi, lead + (d,)).astype(float)
    f = np.zeros(lead)
    eta = np.zeros(lead)
    alive = np.ones(lead, dtype=bool)
    idx = np.zeros(lead, dtype=np.int64)
    base = np.arange(math.prod(lead)).reshape(lead)
    for pack in packs:
        k = _level_k(phi, log_gamma, M)
        idx = idx * (M + 1) + k
        nb = pack.shape[-2]
        row = np.broadcast_to(pack, lead + pack.shape[-2:]).reshape(-1, d + 4)[base * nb + idx]
        u, t = row[..., :d], row[..., d]
        act = alive & (row[..., d + 1] > 0.5)
        proj = np.einsum("...i,...i->...", u, phi)
        f = f + np.where(act, t * proj, 0.0)  # Alg. 6 line 6: ŷ += ⟨φ_h, θ̂_B⟩
        eta_active = np.minimum(1.0, eta + row[..., d + 2] + row[..., d + 3] * np.abs(proj))
        eta_inactive = np.minimum(1.0, eta + np.exp(-log_gamma * k))  # deviation 3
        eta = np.where(alive, np.where(act, eta_active, eta_inactive), eta)  # Alg. 5 line 14
        phi = np.where(act[..., None], phi - u * proj[..., None], phi)  # φ_{h+1}
        alive = act
    return {"f": f, "eta": eta, "phi": phi, "idx": idx, "alive": alive}


# ---------------------------------------------------------------------------------------------
# the exact sampler's calibration (sampler="exact")
# ---------------------------------------------------------------------------------------------


def _float_down(q: Fraction) -> float:
    """The largest double ≤ q."""
    f = float(q)
    return math.nextafter(f, -math.inf) if Fraction(f) > q else f


@dataclass(frozen=True)
class LPLRExact:
    """The exact samplers of LPLR's four message parts and the guarantee they compose to
    (module docstring, "Exact sampler").

    Attributes:
        count, lam, gram, ci: the parts' vector mechanisms (:mod:`privenv.privacy.exact`).
        epsilon_update: ε′ of an LPLR-Update message, the exact sum of its three parts' ε′.
        epsilon_gram: ε′ of the Gram part at ``delta`` (CKS20's conversion of its exact ρ).
        epsilon: the declared ε′ = max(ε′ of an update message, ε′ of a CI message) ≤ ε.
    """

    count: VectorLaplace
    lam: VectorLaplace
    gram: VectorGaussian
    ci: VectorLaplace
    epsilon_gram: float
    epsilon_update: float
    epsilon: float

    @classmethod
    def calibrate(cls, epsilon: float, delta: float, d: int) -> LPLRExact:
        """Each LPLR-Update part at ε/3 (rounded down to a double, so the three sum to ≤ ε
        exactly), LPLR-CI at ε. A user's message differs from a neighbour's in at most two bins
        (its own and the neighbour's: ⊥ elsewhere, exactly 0 on every grid), so the grid
        sensitivities count the rounding of two bins' coordinates: m = 2 (count, CI), 2d (the
        label moment), d(d+1) (the Gram's upper triangles)."""
        third = _float_down(Fraction(epsilon) / 3)
        count = VectorLaplace.calibrate(third, 2.0, 2)
        lam = VectorLaplace.calibrate(third, 2.0 * math.sqrt(d), 2 * d)
        floor = gram_gaussian_sigma(epsilon / 3.0, delta, d, 1.0, "replace-one")
        cal = calibrate_gaussian(third, delta, [(math.sqrt(2.0), d * (d + 1))], floor=floor)
        gram, eps_gram = cal.noise, cal.epsilon
        ci = VectorLaplace.calibrate(epsilon, 2.0, 2)
        update = float_up(count.params.epsilon_exact + lam.params.epsilon_exact
                           + Fraction(eps_gram))
        return cls(count, lam, gram, ci, eps_gram, update, max(update, ci.epsilon))


# ---------------------------------------------------------------------------------------------
# the user side (local randomizer)
# ---------------------------------------------------------------------------------------------


class LPLRUsers:
    """The users' side of LPLR: each round's user turns (φ, y) into a message, from the broadcast.

    Holds the data sums of the current phase (a simulation of the n users' messages summed, see
    the module docstring, "Aggregated release") and its own per-run generators; the learner sees
    only :meth:`release`.

    Args:
        d, A: dimension and number of actions (= oracles).
        gens: one ``numpy.random.Generator`` per run (the runs' WRAPPER streams).
        epsilon: local ε (the paper's α).
        wishart: ``"gaussian"`` (valid) or ``"paper"`` (Algorithm 3 as written, not DP).
        delta: δ of the symmetric-Gaussian Gram release (``"gaussian"`` only).
        exact: the exact samplers (:class:`LPLRExact`; ``"gaussian"`` only), or ``None`` for
            the float sampler.
        noise: with ``exact``, the runs' word streams (a :class:`~privenv.seeding.RunNoise`, or
            one ``Generator`` for a single run in the audits).
    """

    #: audit hook — multiplies every noise scale of :meth:`release` (the Laplace scales, the Gram
    #: noise σ or the Wishart scale) and nothing else; 1 in every real run, a mutant subclass sets
    #: 0.5 (``privenv audit --targets lplr-update-count``, …). The exact sampler's mutants replace
    #: :attr:`exact` instead.
    noise_multiplier: float = 1.0

    def __init__(self, d: int, A: int, gens: list[np.random.Generator], epsilon: float,
                 wishart: str, delta: float, exact: LPLRExact | None = None,
                 noise: RunNoise | np.random.Generator | None = None) -> None:
        self.d, self.A, self.gens = d, A, gens
        self.epsilon, self.wishart = epsilon, wishart
        if exact is not None and (wishart != "gaussian" or noise is None):
            raise ValueError("the exact sampler needs wishart='gaussian' and a noise source")
        self.exact, self.noise = exact, noise
        self._iu = np.triu_indices(d)
        e = epsilon
        if wishart == "paper":  # Alg. 3 lines 3–5, Alg. 5 line 6
            self.b_count, self.b_lam, self.b_ci = 3.0 / e, 3.0 * math.sqrt(d) / e, 1.0 / e
            self.sigma_gram = None
        else:  # replace-one sensitivities 2, 2√d, √2 (Gram, Gaussian), 2 (CI)
            self.b_count, self.b_lam, self.b_ci = 6.0 / e, 6.0 * math.sqrt(d) / e, 2.0 / e
            self.sigma_gram = gram_gaussian_sigma(e / 3.0, delta, d, 1.0, "replace-one")
        self.kind: str | None = None

    def start_phase(self, kind: str, level: int, n_bins: int, n: int, open_bins: np.ndarray
                    ) -> None:
        """Begin a phase of ``n`` users on layer ``level`` (1-based); ``open_bins`` (R, A, nb) is
        the public mask of the bins released in this phase."""
        R, A, d = len(self.gens), self.A, self.d
        self.kind, self.level, self.n, self.open = kind, level, n, open_bins
        if self.exact is not None:  # the users' rounded messages, summed (grid units)
            if kind == "update":
                self.count: np.ndarray = np.zeros((R, A, n_bins), np.int64)
                self.lam: np.ndarray = np.zeros((R, A, n_bins, d), np.int64)
                self.gram: np.ndarray = np.zeros((R, A, n_bins, len(self._iu[0])), np.int64)
            else:
                self.eps: np.ndarray = np.zeros((R, A, n_bins), np.int64)
        elif kind == "update":
            self.count = np.zeros((R, A, n_bins))
            self.lam = np.zeros((R, A, n_bins, d))
            self.gram = np.zeros((R, A, n_bins, d, d))
        else:
            self.eps = np.zeros((R, A, n_bins))

    def contribute(self, phi: np.ndarray, y: np.ndarray, a: np.ndarray,
                   broadcast: dict[str, Any]) -> None:
        """Round t's users (one per run): features φ (R, d) of the played action, label y (R,),
        action a (R,), and the server's public broadcast."""
        R = phi.shape[0]
        rows = np.arange(R)
        norm = np.linalg.norm(phi, axis=1)
        phi = phi / np.maximum(1.0, norm)[:, None]  # deviation 1: inside the unit ball
        g = broadcast["gamma"]
        packs = [lv["pack"][rows, a] for lv in broadcast["levels"]]  # oracle a_t's layers
        walk = _descend(packs, phi, broadcast["log_gamma"], broadcast["M"], g)
        phi_h = walk["phi"]  # Figure 2: φ_h, y_h on this layer
        k = _level_k(phi_h, broadcast["log_gamma"], broadcast["M"])
        idx = walk["idx"] * (broadcast["M"] + 1) + k
        inside = walk["alive"] & self.open[rows, a, idx]
        r, aa, b = rows[inside], a[inside], idx[inside]
        scale = g ** k[inside].astype(float)  # γ^{k_h}: ‖γ^{k}φ_h‖ ≤ 1
        if self.exact is not None:
            self._contribute_exact(walk, phi_h, y, scale, inside, r, aa, b, broadcast)
        elif self.kind == "update":
            y_h = np.clip(y - walk["f"], -1.0, 1.0)[inside]  # deviation 1
            v = phi_h[inside] * scale[:, None]
            self.count[r, aa, b] += 1.0  # Alg. 3 line 3: 1{φ ≠ ⊥}
            self.lam[r, aa, b] += y_h[:, None] * v  # line 4: y_hφ_h (normalized by γ^{k})
            self.gram[r, aa, b] += v[:, :, None] * v[:, None, :]  # line 5: φ_hφ_hᵀ (γ^{2k})
        else:
            pcr = broadcast["pcr"]
            u = pcr["u"][r, aa, b]
            s = pcr["s"][r, aa, b]
            # Alg. 5 line 4: ε_i = η̂_{B°}(φ)|û_Bᵀφ|/√ŝ_B, normalized by γ^{k}√ŝ_B into [0, 1]
            e_norm = walk["eta"][inside] * np.abs(np.einsum("ij,ij->i", u, phi_h[inside]))
            self.eps[r, aa, b] += np.clip(e_norm * scale, 0.0, 1.0) * (s > 0)

    def _contribute_exact(self, walk: dict[str, np.ndarray], phi_h: np.ndarray, y: np.ndarray,
                          scale: np.ndarray, inside: np.ndarray, r: np.ndarray, aa: np.ndarray,
                          b: np.ndarray, broadcast: dict[str, Any]) -> None:
        """:meth:`contribute` with the exact sampler: each user's terms (the same as the float
        path's) rounded to their part's grid before they are summed."""
        ex = self.exact
        assert ex is not None
        if self.kind == "update":
            y_h = np.clip(y - walk["f"], -1.0, 1.0)[inside]
            v = phi_h[inside] * scale[:, None]
            i, j = self._iu
            self.count[r, aa, b] += ex.count.round(np.ones(len(r)))
            self.lam[r, aa, b] += ex.lam.round(y_h[:, None] * v)
            self.gram[r, aa, b] += ex.gram.round(v[:, i] * v[:, j])
        else:
            pcr = broadcast["pcr"]
            u, s = pcr["u"][r, aa, b], pcr["s"][r, aa, b]
            e_norm = walk["eta"][inside] * np.abs(np.einsum("ij,ij->i", u, phi_h[inside]))
            self.eps[r, aa, b] += ex.ci.round(np.clip(e_norm * scale, 0.0, 1.0) * (s > 0))

    # -- the release at the end of the phase ----------------------------------------------------
    #: most noise draws of one run held at once by the exact release (the n users are summed a
    #: block of users at a time)
    EXACT_BLOCK = 1 << 20

    def _exact_noise_sum(self, mech: VectorLaplace | VectorGaussian, run: int, cells: int
                         ) -> np.ndarray:
        """Σ over the phase's n users of each user's own discrete noise on ``cells`` coordinates
        (grid units): n·cells draws from ``run``'s word stream, users in order. The sum of n
        discrete Laplace or Gaussian draws has no closed form of the same family, so every
        user's noise is drawn (cost O(n) per coordinate, unlike the float path's one draw)."""
        total = np.zeros(cells, np.int64)
        if cells == 0:
            return total
        per = max(1, self.EXACT_BLOCK // cells)
        rows = np.array([run])
        assert self.noise is not None  # (the constructor refuses exact without it)
        for lo in range(0, self.n, per):
            k = min(per, self.n - lo)
            total += run_discrete(self.noise, rows, k * cells, mech.params).reshape(k, cells
                                                                                    ).sum(axis=0)
        return total

    def _release_exact(self) -> dict[str, np.ndarray]:
        """The phase's released sums with the exact sampler: on every open bin, (Σ of the users'
        rounded messages + Σ of their discrete noises)·g, per part; zero elsewhere."""
        ex = self.exact
        assert ex is not None
        o = self.open
        R = o.shape[0]
        parts: tuple[tuple[str, VectorLaplace | VectorGaussian, int], ...]
        if self.kind == "update":
            parts = (("count", ex.count, 1), ("lam", ex.lam, self.d),
                     ("gram", ex.gram, len(self._iu[0])))
        else:
            parts = (("eps", ex.ci, 1),)
        out = {}
        for name, mech, c in parts:
            acc = getattr(self, name).reshape(R, o.shape[1], o.shape[2], c).copy()
            for r in range(R):  # run by run, parts in order: each run's own words
                cells = int(o[r].sum()) * c
                acc[r][o[r]] += self._exact_noise_sum(mech, r, cells).reshape(-1, c)
            v = np.where(o[..., None], acc, 0).astype(np.float64) * mech.grid.granularity
            if name == "gram":  # the lower triangle mirrored: a copy, not a release
                v = symmetric_from_upper(v, self.d)
            elif name != "lam":  # count, eps: one number per bin
                v = v[..., 0]
            out[name] = v
            delattr(self, name)
        self.kind = None
        return out

    def _laplace_sum(self, gen: np.random.Generator, b: float, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """Sum of n i.i.d. Lap(b): b·(G − G′), G, G′ ~ Gamma(n, 1)."""
        return b * (gen.standard_gamma(self.n, shape) - gen.standard_gamma(self.n, shape))

    def _gram_noise_sum(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        d = self.d
        if self.wishart == "paper":
            # Σ of n W_d(d+1, cI) = W_d(n(d+1), cI), by Bartlett: c·LLᵀ, L lower triangular with
            # L_ii = √χ²_{m−i}, L_ij ~ N(0, 1) (i > j); then 3(W − n(d+1)cI)   (Alg. 3 line 5)
            c, m = self.noise_multiplier * 1.5 / self.epsilon, self.n * (d + 1)
            low = np.tril(gen.standard_normal(shape + (d, d)), -1)
            diag = np.sqrt(gen.chisquare(m - np.arange(d), shape + (d,)))
            low = low + np.einsum("...i,ij->...ij", diag, np.eye(d))
            w = c * low @ np.swapaxes(low, -1, -2)
            return 3.0 * (w - m * c * np.eye(d))
        assert self.sigma_gram is not None  # (wishart="gaussian")
        sigma = self.noise_multiplier * self.sigma_gram
        z = gen.standard_normal(shape + (d, d))
        z *= sigma * math.sqrt(self.n)
        for i, j in zip(*np.tril_indices(d, -1), strict=True):  # symmetric, upper triangle i.i.d.
            z[..., i, j] = z[..., j, i]
        return z

    def release(self) -> dict[str, np.ndarray]:
        """The phase's released sums (normalized scale), zero on the bins that are not open."""
        if self.exact is not None:
            return self._release_exact()
        R = len(self.gens)
        shape = self.open.shape[1:]
        f = self.noise_multiplier
        closed = ~self.open
        if self.kind == "update":  # the phase's sums become its releases, in place
            count, lam, gram = self.count, self.lam, self.gram
            for r, gen in enumerate(self.gens):  # one draw per run and phase
                count[r] += self._laplace_sum(gen, f * self.b_count, shape)
                lam[r] += self._laplace_sum(gen, f * self.b_lam, shape + (self.d,))
                gram[r] += self._gram_noise_sum(gen, shape)
            count[closed], lam[closed], gram[closed] = 0.0, 0.0, 0.0
            out = {"count": count, "lam": lam, "gram": gram}
            del self.count, self.lam, self.gram
        else:
            eps = self.eps
            for r, gen in enumerate(self.gens):
                eps[r] += self._laplace_sum(gen, f * self.b_ci, shape)
            eps[closed] = 0.0
            out = {"eps": eps}
            del self.eps
        assert out[next(iter(out))].shape[0] == R
        self.kind = None
        return out


# ---------------------------------------------------------------------------------------------
# the learner side (server)
# ---------------------------------------------------------------------------------------------


class LPLRServer:
    """The server of one epoch's A LPLR oracles (all runs): builds the layers from released sums.

    Args:
        n_runs, A, d: shapes.
        n: samples per phase (Algorithm 2's n).
        gamma, M: the partition (§4.1).
        kappas: :func:`lplr_kappas`.
    """

    def __init__(self, n_runs: int, A: int, d: int, n: int, gamma: float, M: int,
                 kappas: dict[str, float]) -> None:
        self.R, self.A, self.d, self.n = n_runs, A, d, n
        self.gamma, self.M, self.log_gamma = gamma, M, math.log(gamma)
        self.kappas = kappas
        self.levels: list[dict[str, np.ndarray]] = []  # finished layers (after LPLR-CI)
        self.pcr: dict[str, np.ndarray] | None = None  # the current layer after LPLR-PCR

    def n_bins(self, level: int) -> int:
        return (self.M + 1) ** level

    def bin_k(self, level: int) -> np.ndarray:
        """k_h of each bin index on ``level``."""
        return np.arange(self.n_bins(level)) % (self.M + 1)

    def open_bins(self, level: int) -> np.ndarray:
        """Bins LPLR-Update releases on ``level``: k_h < M, parent active (Alg. 4 line 2)."""
        nb = self.n_bins(level)
        mask = np.broadcast_to(self.bin_k(level) < self.M, (self.R, self.A, nb))
        if level > 1:
            parent = self.levels[-1]["active"][..., np.arange(nb) // (self.M + 1)]
            mask = mask & parent
        return np.ascontiguousarray(mask)

    def broadcast(self) -> dict[str, Any]:
        """What the users may see: the finished layers and the current layer's PCR output."""
        return {"levels": self.levels, "pcr": self.pcr, "gamma": self.gamma,
                "log_gamma": self.log_gamma, "M": self.M}

    def absorb_update(self, level: int, released: dict[str, np.ndarray], open_bins: np.ndarray
                      ) -> None:
        """LPLR-PCR (Algorithm 4) for every open bin of ``level`` from the released sums."""
        n, d, g, M = self.n, self.d, self.gamma, self.M
        kk = self.bin_k(level).astype(float)
        c_hat = released["count"]
        lam_hat = released["lam"] * g ** (-kk)[:, None]  # λ̂_B (Alg. 3 line 4 scale)
        gram_hat = released["gram"] * g ** (-2 * kk)[:, None, None]  # Λ̂_B
        psi = c_hat / n  # ψ̂_B = ĉ_B/n
        k1 = self.kappas["kappa1"]
        active = open_bins & (psi > k1 * g**2 * (d + 1) ** 3 / math.sqrt(n))  # line 2
        safe = np.where(active, psi * n, 1.0)
        lam_n = lam_hat / safe[..., None]
        big = gram_hat / safe[..., None, None]
        # line 5–6: project out the path's earlier directions Û_{B°}, keep symmetric
        proj = np.broadcast_to(np.eye(d), big.shape).copy()
        nb = self.n_bins(level)
        for j, lv in enumerate(self.levels):  # ancestor on layer j+1
            anc = np.arange(nb) // (M + 1) ** (level - 1 - j)
            u = lv["u"][..., anc, :]
            proj = proj - u[..., :, None] * u[..., None, :]
        big = proj @ big @ proj
        big = 0.5 * (big + np.swapaxes(big, -1, -2))
        vals, vecs = np.linalg.eigh(big)
        s, u = vals[..., -1], vecs[..., :, -1]  # line 7: top eigenpair
        active &= s > 0.0  # deviation 2
        s = np.where(active, s, 0.0)
        u = np.where(active[..., None], u, 0.0)
        t = np.where(active, np.einsum("...i,...i->...", u, lam_n) / np.where(active, s, 1.0),
                     0.0)  # line 8: θ̂_B = û ŝ⁻¹ ûᵀλ̂/(ψ̂n)
        self.pcr = {"u": u, "s": s, "t": t, "psi": psi, "active": active}

    def absorb_ci(self, level: int, released: dict[str, np.ndarray]) -> None:
        """LPLR-CI lines 9–16 (Algorithm 5) for ``level``; the layer is then finished."""
        assert self.pcr is not None
        n, d, g = self.n, self.d, self.gamma
        p = self.pcr
        kk = self.bin_k(level).astype(float)
        sq = np.sqrt(np.where(p["active"], p["s"], 1.0))
        eps_hat = released["eps"] * g ** (-kk) / sq  # ŝ^{−1/2}γ^{−k} scale of line 6
        k1p, k2, k3 = self.kappas["kappa1_prime"], self.kappas["kappa2"], self.kappas["kappa3"]
        psi = p["psi"]
        cert = p["active"] & (psi > k1p * g * d**1.5 / math.sqrt(n))  # line 10
        safe = np.where(cert, psi, 1.0)
        eps_bar = eps_hat / (safe * n) + k2 * g * d**1.5 / (safe * n)  # line 13
        c = np.where(cert, k3 * g**2 * (d + 1) ** 4 / (safe * math.sqrt(n)), 0.0)  # line 14
        slope = np.where(cert, eps_bar / sq, 0.0)
        u, t = np.where(cert[..., None], p["u"], 0.0), np.where(cert, p["t"], 0.0)
        self.levels.append({"u": u, "active": cert, "pack": _pack(u, t, cert, c, slope)})
        self.pcr = None


class LPLR:
    """One epoch of A batched LPLR oracles (Algorithm 2): the phase schedule, users and server.

    Feed rounds with :meth:`feed`; after 2dn rounds, :attr:`levels` is the finished partition
    (LPLR-Aggregate, Algorithm 6, is :func:`_descend` over it; :meth:`evaluate`).
    """

    def __init__(self, users: LPLRUsers, server: LPLRServer) -> None:
        self.users, self.server = users, server
        self.d, self.n = server.d, server.n
        self.phase = 0  # 0 … 2d−1: (layer h = phase//2 + 1; update if even, CI if odd)
        self.i = 0  # rounds fed in the current phase
        self._start_phase()

    @property
    def done(self) -> bool:
        return self.phase >= 2 * self.d

    @property
    def levels(self) -> list[dict[str, np.ndarray]]:
        return self.server.levels

    def _start_phase(self) -> None:
        if self.done:
            return
        h = self.phase // 2 + 1
        if self.phase % 2 == 0:
            self.open = self.server.open_bins(h)
            self.users.start_phase("update", h, self.server.n_bins(h), self.n, self.open)
        else:
            assert self.server.pcr is not None
            self.users.start_phase("ci", h, self.server.n_bins(h), self.n,
                                   self.server.pcr["active"])

    def feed(self, phi: np.ndarray, y: np.ndarray, a: np.ndarray) -> bool:
        """One round (Alg. 1 line 11): user (φ, y) to oracle a, ⊥ to the others. Returns True
        when this round ended a phase (its users' data were released)."""
        self.users.contribute(phi, y, a, self.server.broadcast())
        self.i += 1
        if self.i < self.n:
            return False
        h = self.phase // 2 + 1
        released = self.users.release()
        if self.phase % 2 == 0:
            self.server.absorb_update(h, released, self.open)
        else:
            self.server.absorb_ci(h, released)
        self.phase += 1
        self.i = 0
        self._start_phase()
        return True

    def evaluate(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f̂(φ), Δ̂(φ) (Algorithm 6) for features ``phi`` (R, A, d): oracle a at φ[:, a]."""
        s = self.server
        out = _descend([lv["pack"] for lv in self.levels], phi, s.log_gamma, s.M, s.gamma)
        return out["f"], out["eta"]


# ---------------------------------------------------------------------------------------------
# the agent
# ---------------------------------------------------------------------------------------------


class LPLRRegCB(Agent):
    """LPLR + RegCB elimination (paper 4, Algorithms 1–6, Theorem 4.7), batched over runs.

    Args:
        d: feature dimension (the partition has up to (M+1)^d bins per oracle: meant for d ≤ 3).
        A: number of actions.
        horizon: T.
        epsilon: local privacy ε (the paper's α).
        alpha: failure probability (the paper's δ; default 1/T², Theorem 4.7). Named ``alpha``
            like the confidence level of every linear and federated agent, so that ``delta`` is
            always the privacy δ.
        beta: β > 0 of γ = T^β, M = ⌈1/(2β)⌉ (default 1/ln T, Remark 4.8).
        wishart: ``"gaussian"`` (valid (ε, δ)-LDP) or ``"paper"`` (Algorithm 3 exactly;
            its Wishart mechanism is not DP — warns).
        delta: privacy δ of the Gaussian Gram release (default 10⁻⁶; ``"gaussian"`` only).
        kappa_scale: factor on the minimal κ's of Lemmas 4.3/4.4 (default 1 = the paper's).
        n0: first-epoch scale n₀ (default :func:`lplr_n0`; a multiple of 2d).
        sampler: ``"float"`` (default: binary64 noise, the sums of n users' noise drawn in one
            draw each) or ``"exact"`` (each user's message rounded to a grid with its own discrete
            Laplace/Gaussian noise: exactly (ε′, δ)-LDP with ε′ ≤ ε on the doubles released;
            ``wishart="gaussian"`` only; module docstring, "Exact sampler").
        n_runs: number of runs.
    """

    name = "lplr-regcb"
    families = ("linear",)
    parameters = {
        "d": Param(Integer(low=1, high=6), problem="d"),
        "A": Param(Integer(low=2), problem="A"),
        "horizon": Param(Integer(low=2), assumes="horizon"),
        "epsilon": Param(EPSILON),
        "alpha": Param(Real(0.0, 1.0, low_open=True, high_open=True, none=True)),
        "beta": Param(Real(0.0, low_open=True, none=True)),
        "wishart": Param(Options(("gaussian", "paper"))),
        "delta": Param(DELTA, only_with=("wishart", ("gaussian",))),  # "paper": ε-DP, no δ
        "kappa_scale": Param(POSITIVE),
        "n0": Param(Integer(low=2, none=True)),
        "sampler": Param(SAMPLER, assumes="sampler"),
    }
    #: the user-side randomizer class (tests swap in recording/replaying versions)
    users_class: type[LPLRUsers] = LPLRUsers

    # parameters stored by set_params (privenv.parameters; alpha, beta None resolved below)
    alpha: float
    beta: float
    A: int
    d: int
    delta: float
    epsilon: float
    horizon: int
    kappa_scale: float
    sampler: str
    wishart: str

    def __init__(
        self,
        d: int,
        A: int,
        horizon: int,
        epsilon: float = 1.0,
        alpha: float | None = None,
        beta: float | None = None,
        wishart: str = "gaussian",
        delta: float = 1e-6,
        kappa_scale: float = 1.0,
        n0: int | None = None,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        if self.sampler == "exact" and self.wishart != "gaussian":
            raise ValueError("sampler='exact' needs wishart='gaussian' (the paper's Wishart "
                             "mechanism is not DP, with any sampler; on a data set, where "
                             "'exact' is the default, pass sampler='float' to run it)")
        #: the exact samplers and their composed guarantee (``sampler="exact"``), else None
        self.exact = (LPLRExact.calibrate(self.epsilon, self.delta, self.d)
                      if self.sampler == "exact" else None)
        if self.alpha is None:
            self.alpha = 1.0 / self.horizon**2
        if self.beta is None:
            self.beta = 1.0 / math.log(self.horizon)
        self.kappas = lplr_kappas(self.epsilon, self.d, self.beta, self.alpha, self.kappa_scale)
        self.gamma, self.M = partition_parameters(self.horizon, self.beta)
        if self.gamma <= 1.0:
            raise ValueError(f"beta must make gamma = T**beta > 1, got beta={self.beta}")
        if n0 is None:
            n0 = lplr_n0(self.horizon, self.d, self.beta)
        self.n0 = check_int("n0", n0, low=2 * self.d)
        if self.n0 % (2 * self.d):
            raise ValueError(f"n0 must be a multiple of 2d = {2 * self.d}, got {n0}")
        self.epochs = epoch_lengths(self.horizon, self.n0)
        if self.wishart == "paper":
            warnings.warn("wishart='paper' uses the Wishart mechanism of Jiang et al. 2016 "
                          "(paper 4, Alg. 3 line 5), which is NOT differentially private; its "
                          "privacy is the paper's claim, not a guarantee", UserWarning,
                          stacklevel=2)

    @property
    def privacy(self) -> PrivacyGuarantee:
        if self.wishart == "paper":
            return PrivacyGuarantee("local", self.epsilon, 0.0,
                                    unit="(context, reward) [paper 4's claim only: its "
                                         "Wishart mechanism is not DP]")
        if self.exact is not None:
            return PrivacyGuarantee("local", self.exact.epsilon, self.delta,
                                    unit="(context, reward)", sampler="exact")
        return PrivacyGuarantee("local", self.epsilon, self.delta, unit="(context, reward)")

    def reset(self, seed: Any = None, *, first_run: int = 0) -> None:
        super().reset(seed, first_run=first_run)
        roots = run_seed_sequences(seed, self.n_runs, first_run)
        self._user_gens = generators([child(s, WRAPPER) for s in roots])
        # the exact sampler's words: child 2 of the same WRAPPER seeds (never the float stream)
        self._user_noise = (RunNoise([child(s, WRAPPER) for s in roots])
                            if self.exact is not None else None)
        self._start_epoch(1)

    def reset_state(self) -> None:
        self.finished: list[np.ndarray] = []  # packed layers stacked over epochs (R, E, A, …)
        self.n_finished = 0
        self._obs: np.ndarray | None = None
        self.rounds_in_phase: list[int] = []
        self.eliminating = np.zeros(self.n_runs, dtype=np.int64)  # rounds with |𝒜(x)| < A

    def _start_epoch(self, tau: int) -> None:
        self.tau = tau
        n = 2**tau * self.n0 // (2 * self.d)  # n_τ = 2^τ n₀; Algorithm 2's n = n_τ/(2d)
        users = self.users_class(self.d, self.A, self._user_gens, self.epsilon, self.wishart,
                                 self.delta, self.exact, self._user_noise)
        server = LPLRServer(self.n_runs, self.A, self.d, n, self.gamma, self.M, self.kappas)
        self.oracle = LPLR(users, server)
        self.phase_start = self.t

    def _finish_epoch(self) -> None:
        """Alg. 1 line 13: store f̂_{τ+1}, Δ_{τ+1} (the finished partition) for later epochs."""
        packs = [lv["pack"][:, None] for lv in self.oracle.levels]
        if self.finished:
            packs = [np.concatenate([old, new], axis=1)
                     for old, new in zip(self.finished, packs, strict=True)]
        self.finished = packs
        self.n_finished += 1

    def estimates(self, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f̂_τ′ᵃ(x), Δ_τ′ᵃ(x) of the finished epochs' oracles, shape (R, E, A) each."""
        if not self.n_finished:
            shape = (self.n_runs, 0, self.A)
            return np.zeros(shape), np.ones(shape)
        out = _descend(self.finished, observations[:, None], math.log(self.gamma), self.M,
                       self.gamma)
        return out["f"], out["eta"]

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=float)
        if obs.shape != (self.n_runs, self.A, self.d):
            raise ValueError(f"observations must have shape {(self.n_runs, self.A, self.d)}, "
                             f"got {obs.shape}")
        self._obs = obs
        keep = np.ones((self.n_runs, self.A), dtype=bool)  # 𝒜_0(x) = 𝒜; epoch 1: f̂ ≡ 0, Δ ≡ 1
        f, eta = self.estimates(obs)
        for e in range(f.shape[1]):  # Alg. 1 lines 7–9: τ′ = 2 … τ
            upper, lower = f[:, e] + eta[:, e], f[:, e] - eta[:, e]
            best_lower = np.max(np.where(keep, lower, -np.inf), axis=1, keepdims=True)
            keep &= upper >= best_lower
        # line 10: uniform over the surviving actions
        count = keep.sum(axis=1)
        self.eliminating += count < self.A
        pick = np.minimum((self.run_noise.uniform() * count).astype(np.int64), count - 1)
        return np.argmax(np.cumsum(keep, axis=1) > pick[:, None], axis=1)

    def observe_batch(self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
                      ) -> None:
        if self._obs is None:
            raise ValueError("observe() called before act()")
        actions = np.asarray(actions)
        rewards = np.asarray(rewards, dtype=float)
        if actions.shape != (self.n_runs,) or np.any((actions < 0) | (actions >= self.A)):
            raise ValueError(f"actions must be {self.n_runs} integers in [0, {self.A - 1}]")
        if rewards.shape != (self.n_runs,) or not np.all(np.abs(rewards) <= 1.0):
            raise ValueError("rewards must be finite numbers in [-1, 1] (paper 4, §1.1)")
        phi = self._obs[np.arange(self.n_runs), actions]
        self._obs = None  # the raw features of round t leave the learner's hands here
        self.t += 1
        if self.oracle.feed(phi, rewards, actions):  # a phase ended: its users were released
            users = np.arange(self.phase_start, self.t)
            runs = np.repeat(np.arange(self.n_runs), users.size)
            self.charge(runs, np.tile(users, self.n_runs), self.privacy.epsilon,
                        label=f"LPLR epoch {self.tau} phase {self.oracle.phase}")
            self.phase_start = self.t
            if self.oracle.done:
                self._finish_epoch()
                self._start_epoch(self.tau + 1)

    def episode_info(self) -> dict[str, np.ndarray]:
        """Finished epochs (all runs share the schedule) and ``eliminating_rounds``, the rounds
        whose context kept fewer than A actions (Algorithm 1 line 8 eliminated one)."""
        return {"epochs_finished": np.full(self.n_runs, self.n_finished),
                "eliminating_rounds": self.eliminating.copy()}
