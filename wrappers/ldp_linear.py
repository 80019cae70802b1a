r"""Local differential privacy for linear contextual bandits: user-side randomizers that release a
*message* about the chosen action's (features, label) pair (paper 4; docs/guides/linear.md).

In a linear contextual bandit the learner needs two things from round t: the features
φ(x_t, ·) ∈ ℝ^{A×d} of every action, to choose a_t, and afterwards information about the pair
(φ_t, y_t) = (φ(x_t, a_t), y_t) of the action it chose, to learn. A scalar reward randomizer
(:class:`~privenv.wrappers.LaplaceLabel`) can only protect y_t; the locally private linear
bandit algorithms have each user send a randomized *message* computed from the pair:

* :class:`GaussianStatistics` / :class:`VectorGaussianStatistics` — LDP-LinUCB's randomizer
  (Zheng et al. 2020, the T^{3/4} baseline of paper 4): the user releases the
  sufficient statistics of ridge regression with Gaussian noise,
  ``gram`` = φ_tφ_tᵀ + B_t (B_t symmetric, upper triangle i.i.d. N(0, σ²), mirrored) and
  ``moment`` = φ_t y_t + ξ_t (ξ_t ~ N(0, σ²I_d)). (ε, δ)-LDP, see "Calibration" below;
* :class:`LaplaceInput` / :class:`VectorLaplaceInput` — input perturbation (paper 4,
  Theorem 2.2): the user releases ``phi_tilde`` = φ_t + Lap_d(b) and ``y_tilde`` = y_t + Lap(b)
  (i.i.d. Laplace coordinates), ε-LDP with b = (2√d + 2)/ε, see below.

## Where the message goes (the design)

The wrapped env's **observation is a** ``Dict`` **space**: ``"features"`` is the feature matrix
φ(x_{t+1}, ·) of the next round (the bare env's observation, unchanged), and the other keys hold
the message released by the user of the round that just ended. The wrapper's **reward is 0.0**:
the feedback of the step is the message in the observation (the same convention as
``BestArmIdentification-v0``'s default ``reward_mode="cost"``, whose sample is in the
observation). So ``step(a_t)`` returns ``({"features": φ(x_{t+1}, ·), message_t}, 0.0, …)``, and a
learner written against the privenv protocol gets exactly what it needs in
``observe(action, reward, observation)``: the message about the action it just played, and the
features of the next round. ``reset`` returns an all-zero message (no user has been served yet).
Why not the alternatives: a non-scalar reward breaks Gymnasium's and SB3's reward contract, and
``info`` is for evaluation only (agents never see it).

## What is protected (and what is not)

The released message is an (ε, δ)-LDP function of one user's pair (φ(x_t, a_t), y_t), for every
pair with ‖φ‖₂ ≤ 1 and \|y\| ≤ 1 (replace-one: any pair may be replaced by any other): it protects
the user's **label and the features of the action served to them**, hence their context as far
as it enters φ(x_t, a_t). The features φ(x_t, ·) of *all* actions are shown to the learner in the
clear when it acts: the learner needs them to choose a_t. Paper 4's Definition 1.1 (after Duchi et
al. 2018, "non-anticipating") allows exactly this — the action a_t may depend on the raw context
x_t, and only what the policy keeps for later rounds (its "anonymized data entry" z_t) must be
ε-LDP in (x_t, a_t, y_t) — so a **learner that uses each observation only to choose that round's
action** and learns only from the released messages (as the zoo's ``ldp-linucb`` and
``input-perturbation-ols`` do) is a locally private system in paper 4's sense. The wrapper cannot
enforce that non-anticipation: a learner that stores the raw features it acted on keeps public
context information outside the guarantee (the papers treat the contexts φ(x_t, ·) shown at decision
time as public inputs: paper 4, Definition 1.1). ``privacy.unit`` is ``"(context, reward)"`` in that
sense.

The trust boundary is that of :mod:`privenv.wrappers.ldp`: raw labels exist inside the process
(the base env, its seeds); the runner gives an agent only ``act``/``observe`` inputs. The wrapper
keeps the current round's feature matrix (the public observation, needed to compute φ_t when the
action arrives) and never stores a raw label; ``info`` is passed through unchanged and carries no
raw label.

## Calibration

*Gaussian statistics.* The message is the vector (upper triangle of φφᵀ, φy) ∈ ℝ^{d(d+1)/2 + d}
plus i.i.d. N(0, σ²) noise (B's mirrored lower triangle is a copy, not a release). Its L2
sensitivity is at most Δ₂ = 2√2: ‖triu(φφᵀ) − triu(ψψᵀ)‖₂ ≤ ‖φφᵀ‖_F + ‖ψψᵀ‖_F ≤ 2 and
‖φy − ψy′‖₂ ≤ 2. ``calibration="analytic"`` (default) gives the smallest σ making the Gaussian
mechanism with Δ₂ = 2√2 (ε, δ)-DP (Balle & Wang 2018), valid for every ε;
``calibration="classical"`` gives σ = Δ₂√(2 ln(1.25/δ))/ε = 4√(ln(1.25/δ))/ε — exactly Zheng et
al.'s public code — a theorem only for ε < 1 (larger ε raises ``ValueError``). The value
σ = 4√(2 ln(1.25/δ))/ε is the classical formula with Δ₂ = 4 (adding the two blocks' bounds 2 + 2
instead of combining them in L2): valid but √2 larger than needed; we do not use it.

*Input perturbation.* Paper 4's Theorem 2.2 writes φ + Lap_d(1/α), y + Lap(1/α): a lower-bound
device, not a calibrated mechanism. The L1 sensitivity of (φ, y) over ‖φ‖₂ ≤ 1, \|y\| ≤ 1 is
‖φ − ψ‖₁ + \|y − y′\| ≤ 2√d + 2, so the Laplace mechanism with b = (2√d + 2)/ε is ε-LDP per
(context, reward) — that is what this wrapper uses (more noise than the theorem's 1/α, so the
theorem's Ω(n^{−1/3}) lower bound applies a fortiori).

## Numerics: the ``sampler`` choice

On simulated instances the default (``sampler="float"``) is binary64 arithmetic on uniform or normal
draws: DP for idealized real arithmetic only (Mironov 2012; :mod:`privenv.wrappers.ldp`,
"Numerics"). On a data set the default is ``sampler="exact"``: the message vector x — (φ, y) for
input perturbation, (triu(φφᵀ), φy) for the Gaussian statistics — is rounded coordinate by
coordinate to a grid g·ℤ, g = 2^(⌊log₂ s⌋ − 14) for the noise scale s, and each coordinate gets its
own discrete noise drawn from uniform 64-bit words (:mod:`privenv.privacy.exact`, "Vector releases
on per-run streams"; Canonne, Kamath & Steinke 2020, "CKS20"); the message is (k + Z)·g. The
declared guarantee accounts for the grid exactly and holds for the doubles released:

* *input perturbation*: m = d + 1 coordinates of L1 sensitivity 2√d + 2, so
  ‖k − k′‖₁ ≤ Δ_k = ⌈(2√d + 2)/g⌉ + m (one grid unit of rounding per coordinate); the discrete
  Laplace of scale t ≥ Δ_k/ε grid units makes the message exactly ε′-LDP, ε′ = Δ_k/t ≤ ε
  (``privacy.epsilon`` is ε′);
* *Gaussian statistics*: m = d(d+1)/2 + d coordinates of L2 sensitivity 2√2, so
  ‖k − k′‖₂ ≤ B = 2√2/g + √m; the multivariate discrete Gaussian N_ℤ(0, σ_k²)^m is exactly
  ρ_k-zCDP with ρ_k = B²/(2σ_k²) (CKS20) — but not exactly μ-GDP, so it is calibrated through
  zCDP (:func:`~privenv.privacy.exact.calibrate_gaussian`): the least σ, never below the float
  calibration's σ, with ρ_k ≤ ρ(ε, δ), the largest ρ whose CKS20 conversion is (ε, δ)-DP; ε′ is
  that conversion of ρ_k. The declared guarantee is (ε′, δ). σ_exact is a few per cent above the
  analytic σ because the zCDP conversion is looser than the analytic Gaussian's exact one
  (measured σ_exact/σ_analytic: 1.073 at (ε, δ, d) = (1, 10⁻⁶, 3), 1.091 at (0.5, 10⁻⁵, 2), 1.071
  at (4, 10⁻⁵, 2), 1.092 at (0.1, 10⁻⁶, 3), 1.056 at (8, 10⁻⁶, 3)).

The exact noise of run *i* comes from the word stream ``child(s, 2)`` of the same per-run wrapper
seed s whose ``child(s, 0)`` feeds the float sampler: run *i*'s messages are the same alone or in
a batch, runs restarted by an autoreset restart their words, and the float numbers do not depend
on the choice being offered. Cost: one discrete draw per coordinate (about 8 words for the
Laplace, 12 for the Gaussian).

## Inputs

Labels outside [−1, 1] raise ``ValueError`` unless ``clip=True``; an env declaring unbounded
labels (``public_info()["reward_bound"] is None``, e.g. ``noise="gaussian"``) is refused at
construction unless ``clip=True``. Features must have ‖φ‖₂ ≤ 1: a norm within 10⁻⁵ of 1
(float32 rounding of normalized features) is rescaled to 1, a larger one raises ``ValueError``
unless ``clip=True`` (then φ is projected onto the unit ball).

## Per-run noise

As in :mod:`privenv.wrappers.ldp`: run *i*'s noise comes only from
``child(run_seeds[i], WRAPPER, k)`` (k = the number of local-DP wrappers beneath this one), so
run *i*'s messages are the same alone or in a batch, and do not depend on the agent's seed. The
vector wrapper follows the env's autoreset mode like
:class:`~privenv.wrappers.ldp.LocalDPVectorRewardWrapper`: a run that sits a step out consumes no
noise and gets an all-zero message.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from privenv._validation import check_bool, check_choice, check_delta, check_epsilon
from privenv.privacy.exact import VectorGaussian, VectorLaplace, calibrate_gaussian
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.local import CALIBRATIONS
from privenv.privacy.mechanisms import (
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    laplace_from_uniform,
    symmetric_from_upper,
    symmetric_gaussian_from_standard,
)
from privenv.seeding import RunNoise, RunStreams, Seed, child
from privenv.wrappers.bookkeeping import (
    AutoresetRuns,
    LocalDP,
    check_feedback_channel,
    data_sampler,
    ldp_stack_depth,
    noise_seeds,
    public_info,
    run_seeds,
)

__all__ = [
    "SAMPLERS",
    "GaussianStatistics",
    "GaussianStatisticsRandomizer",
    "LaplaceInput",
    "LaplaceInputRandomizer",
    "LinearMessageRandomizer",
    "LinearMessageVectorWrapper",
    "LinearMessageWrapper",
    "VectorGaussianStatistics",
    "VectorLaplaceInput",
]

#: the noise samplers of every message randomizer (module docstring, "Numerics")
SAMPLERS = ("float", "exact")
#: ‖φ‖₂ up to 1 + this is float32 rounding of a normalized vector (rescaled to 1, not refused)
NORM_TOLERANCE = 1e-5
#: the protected unit of every message randomizer (see the module docstring)
UNIT = "(context, reward)"


# ---------------------------------------------------------------------------------------------
# Randomizers: one implementation of each mechanism, applied to a batch of runs
# ---------------------------------------------------------------------------------------------


def validate_linear_input(
    phi: np.ndarray,
    y: np.ndarray,
    d: int,
    clip: bool,
    description: str,
    runs: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One user's (φ, y) per row as float64 with ‖φ‖₂ ≤ 1 and |y| ≤ 1 (φ projected onto the unit
    ball and y clipped if ``clip``), else ``ValueError`` naming the bound, the mechanism
    (``description``) and the run (``runs[j]`` for row j if given)."""
    phi = np.asarray(phi, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[1] != d or y.shape != phi.shape[:1]:
        raise ValueError(f"phi must have shape (n, {d}) and y shape (n,), got "
                         f"{phi.shape} and {y.shape}")
    which = (lambda j: j) if runs is None else (lambda j: int(runs[j]))
    hint = "" if clip else " (pass clip=True to clip it)"
    # the raw values are private: a message names the run and the count, never the value
    bad_y = np.isnan(y) if clip else ~(np.abs(y) <= 1.0)
    if bad_y.any():
        j = int(np.flatnonzero(bad_y)[0])
        what = "nan" if np.isnan(y[j]) else "a value outside"
        raise ValueError(f"reward must lie in [-1, 1] for {description}{hint}, got {what} "
                         f"(run {which(j)}); {int(bad_y.sum())} value(s) outside")
    norm = np.sqrt(np.einsum("ni,ni->n", phi, phi))
    limit = np.inf if clip else 1.0 + NORM_TOLERANCE
    bad_phi = ~(norm <= limit)  # NaN is bad
    if bad_phi.any():
        j = int(np.flatnonzero(bad_phi)[0])
        what = "nan" if np.isnan(norm[j]) else "a norm above 1"
        raise ValueError(f"the chosen features must have Euclidean norm in [0, 1] for "
                         f"{description}{hint}, got {what} (run {which(j)}); "
                         f"{int(bad_phi.sum())} row(s) outside")
    over = norm > 1.0
    if over.any():  # rounding (or clip=True): project onto the unit ball
        phi = phi / np.where(over, norm, 1.0)[:, None]
    return phi, np.clip(y, -1.0, 1.0)


class LinearMessageRandomizer(ABC):
    r"""A local randomizer of one user's pair (φ, y), ‖φ‖₂ ≤ 1, \|y\| ≤ 1, into a message.

    ``randomizer(phi, y, draws)`` validates a batch of pairs (``phi`` of shape (n, d), ``y`` of
    shape (n,)) and returns the message (a dict of arrays with leading axis n), computed from the
    standard draws ``draws`` of shape (n, :meth:`n_draws`) — uniforms if :attr:`draw_kind` is
    ``"uniform"``, normals if ``"normal"`` — one row per user, from that user's run's stream.

    With ``sampler="exact"`` ``draws`` is instead the noise source: a
    :class:`~privenv.seeding.RunNoise` (row j gets the next draws of run ``runs[j]``'s word
    stream) or a ``numpy.random.Generator`` (one block of draws, for audits); the message is the
    message vector rounded to the grid of :attr:`exact` plus discrete noise
    (:mod:`privenv.privacy.exact`, "Vector releases on per-run streams").

    Args:
        epsilon: ε > 0.
        delta: δ (0 for pure ε-LDP).
        d: feature dimension.
        clip: clip labels into [−1, 1] and project features onto the unit ball instead of raising.
        sampler: ``"float"`` (default: binary64 noise, DP in idealized arithmetic only) or
            ``"exact"`` (grid and discrete noise: the guarantee holds for the doubles released).
    """

    draw_kind: str = "normal"
    description: str = "linear message randomizer"
    #: the samplers this mechanism offers
    samplers: tuple[str, ...] = SAMPLERS

    def __init__(self, epsilon: float, delta: float, d: int, clip: bool,
                 sampler: str = "float") -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = delta
        self.d = int(d)
        self.clip: bool = check_bool("clip", clip)
        self.sampler = check_choice("sampler", sampler, self.samplers)
        #: the exact sampler's vector mechanism (grid and integers), else ``None``
        self.exact: VectorGaussian | VectorLaplace | None = None
        #: the exact sampler's declared ε′ ≤ ε (grid rounding included), else ``None``
        self.exact_epsilon: float | None = None

    @property
    def privacy(self) -> PrivacyGuarantee:
        """(ε, δ)-local DP per user's (context, reward), replace-one; with the exact sampler the
        exact ε′ ≤ ε of the grid mechanism (rounding included)."""
        if self.exact_epsilon is not None:
            return PrivacyGuarantee("local", self.exact_epsilon, self.delta, UNIT,
                                    sampler="exact")
        return PrivacyGuarantee("local", self.epsilon, self.delta, UNIT)

    @property
    def m(self) -> int:
        """Coordinates of the message vector (the exact sampler's noise draws per message)."""
        return self.n_draws()

    @abstractmethod
    def n_draws(self) -> int:
        """Standard draws consumed per message."""

    @abstractmethod
    def message_spaces(self) -> dict[str, spaces.Box]:
        """The message's keys and (single-run) spaces."""

    @abstractmethod
    def perturb(self, phi: np.ndarray, y: np.ndarray, draws: np.ndarray) -> dict[str, np.ndarray]:
        """The message of validated pairs."""

    @abstractmethod
    def message_vector(self, phi: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The released coordinates of validated pairs, noise-free: shape (n, :attr:`m`)."""

    @abstractmethod
    def split(self, v: np.ndarray) -> dict[str, np.ndarray]:
        """The message of released coordinates ``v`` (n, :attr:`m`)."""

    def empty(self, n: int) -> dict[str, np.ndarray]:
        """The all-zero message of ``n`` runs (nothing released)."""
        return {k: np.zeros((n, *s.shape), dtype=s.dtype) for k, s in self.message_spaces().items()}

    def validate(
        self, phi: np.ndarray, y: np.ndarray, runs: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""(φ, y) as float64 with ‖φ‖₂ ≤ 1 and \|y\| ≤ 1 (clipped if ``clip``), else ValueError."""
        return validate_linear_input(phi, y, self.d, self.clip, self.description, runs)

    def __call__(self, phi: np.ndarray, y: np.ndarray,
                 draws: np.ndarray | RunNoise | np.random.Generator,
                 runs: np.ndarray | None = None) -> dict[str, np.ndarray]:
        phi, y = self.validate(phi, y, runs)
        if self.exact is not None:
            if not isinstance(draws, (RunNoise, np.random.Generator)):
                raise TypeError("the exact sampler draws its own noise: pass a RunNoise or a "
                                "numpy Generator, not an array of draws")
            rows = np.arange(len(y)) if runs is None else np.asarray(runs, dtype=np.int64)
            return self.split(self.exact.release(self.message_vector(phi, y), draws, rows))
        draws = np.asarray(draws, dtype=np.float64)
        if draws.shape != (len(y), self.n_draws()):
            raise ValueError(f"draws must have shape ({len(y)}, {self.n_draws()}), got "
                             f"{draws.shape}")
        return self.perturb(phi, y, draws)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.privacy})"


class GaussianStatisticsRandomizer(LinearMessageRandomizer):
    """LDP-LinUCB's user-side randomizer (Zheng et al. 2020): releases
    ``gram`` = φφᵀ + B and ``moment`` = φy + ξ, B symmetric with upper triangle i.i.d. N(0, σ²)
    (mirrored), ξ ~ N(0, σ²I_d). σ calibrated for Δ₂ = 2√2 (module docstring, "Calibration").

    ``sampler="exact"``: the m = d(d+1)/2 + d coordinates (triu(φφᵀ), φy) rounded to the grid
    g = 2^(⌊log₂ σ⌋ − 14) plus i.i.d. discrete Gaussian noise, the lower triangle mirrored;
    σ from :func:`~privenv.privacy.exact.calibrate_gaussian` (zCDP-calibrated, never below the
    float σ), declared
    (ε′, δ) with ε′ ≤ ε (module docstring, "Numerics").

    Args:
        epsilon: ε > 0 (``calibration="classical"``: ε < 1).
        delta: δ ∈ (0, 1).
        d: feature dimension.
        calibration: ``"analytic"`` (default) or ``"classical"``.
        clip: see :class:`LinearMessageRandomizer`.
        sampler: ``"float"`` (default) or ``"exact"``.
    """

    draw_kind = "normal"
    description = "the Gaussian statistics randomizer (LDP-LinUCB)"
    #: L2 sensitivity of (triu(φφᵀ), φy) over ‖φ‖₂ ≤ 1, \|y\| ≤ 1
    sensitivity = 2.0 * math.sqrt(2.0)

    def __init__(self, epsilon: float, delta: float, d: int, calibration: str = "analytic",
                 clip: bool = False, sampler: str = "float") -> None:
        super().__init__(epsilon, check_delta(delta), d, clip, sampler)
        self.calibration = check_choice("calibration", calibration, CALIBRATIONS)
        if self.calibration == "analytic":
            self.sigma = gaussian_sigma_analytic(self.epsilon, self.delta, self.sensitivity)
        else:
            self.sigma = gaussian_sigma_classical(self.epsilon, self.delta, self.sensitivity)
        self._n_upper = self.d * (self.d + 1) // 2
        self._iu = np.triu_indices(self.d)
        if self.sampler == "exact":
            cal = calibrate_gaussian(self.epsilon, self.delta, [(self.sensitivity, self.m)],
                                     floor=self.sigma)
            self.exact, self.exact_epsilon = cal.noise, cal.epsilon
            self.sigma = self.exact.sigma

    def n_draws(self) -> int:
        return self._n_upper + self.d

    def message_spaces(self) -> dict[str, spaces.Box]:
        d = self.d
        return {"gram": spaces.Box(-np.inf, np.inf, (d, d), np.float64),
                "moment": spaces.Box(-np.inf, np.inf, (d,), np.float64)}

    def perturb(self, phi: np.ndarray, y: np.ndarray, draws: np.ndarray) -> dict[str, np.ndarray]:
        B = symmetric_gaussian_from_standard(draws[:, : self._n_upper], self.d, self.sigma)
        xi = self.sigma * draws[:, self._n_upper :]
        return {"gram": phi[:, :, None] * phi[:, None, :] + B, "moment": phi * y[:, None] + xi}

    def message_vector(self, phi: np.ndarray, y: np.ndarray) -> np.ndarray:
        i, j = self._iu
        return np.concatenate([phi[:, i] * phi[:, j], phi * y[:, None]], axis=1)

    def split(self, v: np.ndarray) -> dict[str, np.ndarray]:
        return {"gram": symmetric_from_upper(v[:, : self._n_upper], self.d),
                "moment": v[:, self._n_upper :].copy()}


class LaplaceInputRandomizer(LinearMessageRandomizer):
    """Input perturbation (paper 4, Theorem 2.2): releases ``phi_tilde`` = φ + Lap_d(b) and
    ``y_tilde`` = y + Lap(b), i.i.d. Laplace coordinates, b = (2√d + 2)/ε (L1 sensitivity of
    (φ, y); module docstring, "Calibration"). ε-LDP.

    ``sampler="exact"``: (φ, y) rounded to the grid g = 2^(⌊log₂ b⌋ − 14) plus i.i.d. discrete
    Laplace noise of t ≥ Δ_k/ε grid units (:class:`~privenv.privacy.exact.VectorLaplace`,
    Δ_k = ⌈(2√d + 2)/g⌉ + d + 1 covering the rounding): exactly ε′-LDP, ε′ = Δ_k/t ≤ ε.

    Args:
        epsilon: ε > 0.
        d: feature dimension.
        clip: see :class:`LinearMessageRandomizer`.
        sampler: ``"float"`` (default) or ``"exact"``.
    """

    draw_kind = "uniform"
    description = "input perturbation"

    def __init__(self, epsilon: float, d: int, clip: bool = False,
                 sampler: str = "float") -> None:
        super().__init__(epsilon, 0.0, d, clip, sampler)
        self.sensitivity = 2.0 * math.sqrt(self.d) + 2.0
        self.scale = self.sensitivity / self.epsilon  # b
        if self.sampler == "exact":
            self.exact = VectorLaplace.calibrate(self.epsilon, self.sensitivity, self.m)
            self.exact_epsilon = self.exact.epsilon
            self.scale = self.exact.scale  # t·g ≥ b

    def n_draws(self) -> int:
        return self.d + 1

    def message_spaces(self) -> dict[str, spaces.Box]:
        return {"phi_tilde": spaces.Box(-np.inf, np.inf, (self.d,), np.float64),
                "y_tilde": spaces.Box(-np.inf, np.inf, (1,), np.float64)}

    def perturb(self, phi: np.ndarray, y: np.ndarray, draws: np.ndarray) -> dict[str, np.ndarray]:
        noise = laplace_from_uniform(draws, self.scale)
        return {"phi_tilde": phi + noise[:, : self.d], "y_tilde": y[:, None] + noise[:, self.d :]}

    def message_vector(self, phi: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.concatenate([phi, y[:, None]], axis=1)

    def split(self, v: np.ndarray) -> dict[str, np.ndarray]:
        return {"phi_tilde": v[:, : self.d].copy(), "y_tilde": v[:, self.d :].copy()}


# ---------------------------------------------------------------------------------------------
# The shared user side of both wrappers: per-run draws, the current features, the release
# ---------------------------------------------------------------------------------------------


def _linear_shape(env: Any, wrapper: str) -> tuple[int, int]:
    space = getattr(env, "single_observation_space", None) or env.observation_space
    info = public_info(env)
    if not (isinstance(space, spaces.Box) and len(space.shape) == 2 and "d" in info):
        raise ValueError(f"{wrapper} needs a linear contextual bandit env (observation Box(A, d) "
                         f"of features), got observation space {space}")
    return space.shape  # (A, d)


def _check_label_bound(env: Any, wrapper: str, clip: bool) -> None:
    bound = public_info(env).get("reward_bound", 1.0)
    if not clip and (bound is None or bound > 1.0):
        raise ValueError(f"reward must lie in [-1, 1] for {wrapper}, but the env declares "
                         f"reward_bound={bound!r} (e.g. noise='gaussian'); pass clip=True to clip "
                         "labels into [-1, 1]")


class _UserSide:
    """What the users of a batch of runs hold: their feature matrices of the current round and
    their per-run noise streams; releases the messages of the chosen actions.

    The float sampler reads uniforms or normals from ``child(s, 0)`` of each run's wrapper seed
    s; the exact sampler reads 64-bit words from a :class:`~privenv.seeding.RunNoise` on the same
    seeds (its word stream is ``child(s, 2)``: never the float path's stream)."""

    def __init__(self, randomizer: LinearMessageRandomizer, n_runs: int, stack_index: int):
        self.randomizer = randomizer
        self.n_runs = n_runs
        self.stack_index = stack_index
        self.m = randomizer.n_draws()
        self.block = max(8, 4096 // self.m)
        self._streams: RunStreams | RunNoise | None = None
        self.features: np.ndarray | None = None  # (n, A, d): public, the learner sees it too

    def _fill(self, gen: np.random.Generator, n: int, _row: int) -> np.ndarray:
        if self.randomizer.draw_kind == "uniform":
            return gen.random((n, self.m))
        return gen.standard_normal((n, self.m))

    def _seeds(self, run_seeds: Sequence[Seed]) -> list:
        return [child(s, 0) for s in noise_seeds(run_seeds, self.stack_index)]

    def reset(self, run_seeds: Sequence[Seed], features: np.ndarray) -> None:
        if self.randomizer.exact is not None:
            # words only: its uniform and normal streams are never drawn
            self._streams = RunNoise(noise_seeds(run_seeds, self.stack_index))
        else:
            self._streams = RunStreams(self._seeds(run_seeds), self._fill, self.block)
        self.features = np.asarray(features)

    def reseed(self, runs: np.ndarray, run_seeds: Sequence[Seed]) -> None:
        if isinstance(self._streams, RunNoise):
            self._streams.reseed(runs, noise_seeds(run_seeds, self.stack_index))
        else:
            assert self._streams is not None
            self._streams.reseed(runs, self._seeds(run_seeds))

    def release(self, actions: np.ndarray, labels: np.ndarray,
                runs: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Messages of all runs: the chosen (φ, y) of ``runs`` (all if ``None``) randomized, the
        other runs' messages zero (no noise consumed)."""
        if self._streams is None or self.features is None:
            raise ResetNeeded("call reset() before step()")
        actions = np.asarray(actions).reshape(self.n_runs)
        labels = np.asarray(labels, dtype=np.float64).reshape(self.n_runs)
        rows = np.arange(self.n_runs) if runs is None else runs
        phi = self.features[rows, actions[rows]]
        noise = self._streams if isinstance(self._streams, RunNoise) else self._streams.take(rows)
        msg = self.randomizer(phi, labels[rows], noise, rows)
        if runs is None:
            return msg
        out = self.randomizer.empty(self.n_runs)
        for k, v in msg.items():
            out[k][rows] = v
        return out


def _observation(features: np.ndarray, message: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"features": features, **message}


# ---------------------------------------------------------------------------------------------
# The two wrapper bases: single env (batch of one) and native vector env
# ---------------------------------------------------------------------------------------------


def _check_linear_env(env: Any, name: str, randomizer: LinearMessageRandomizer) -> None:
    """Refuse, at construction, an env this randomizer cannot protect: the wrong feedback channel,
    another dimension d, or unbounded labels (unless the randomizer clips)."""
    check_feedback_channel(env, name)
    _, d = _linear_shape(env, name)
    if d != randomizer.d:
        raise ValueError(f"the randomizer is built for d={randomizer.d}, the env has d={d}")
    _check_label_bound(env, name, randomizer.clip)


class LinearMessageWrapper(LocalDP, gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Releases each user's randomized message about the chosen (φ, y) in the observation of a
    single privenv linear contextual env (module docstring: observation
    ``Dict(features=Box(A, d), <message keys>)``, reward 0.0).

    Args:
        env: a ``LinearContextualBandit-v0`` env (or a wrapper of one).
        randomizer: the message randomizer.
    """

    def __init__(self, env: gym.Env, randomizer: LinearMessageRandomizer) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, randomizer=randomizer)
        gym.Wrapper.__init__(self, env)
        _check_linear_env(env, type(self).__name__, randomizer)
        self.randomizer = randomizer
        self.stack_index = ldp_stack_depth(env)
        self.observation_space = spaces.Dict(
            {"features": env.observation_space, **randomizer.message_spaces()}
        )
        self._users = _UserSide(randomizer, 1, self.stack_index)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._users.reset(run_seeds(self), obs[None])
        return self._single(obs, self.randomizer.empty(1)), info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        if self._users.features is None:
            raise ResetNeeded("call reset() before step()")
        obs, reward, terminated, truncated, info = self.env.step(action)
        message = self._users.release(np.asarray([action]), np.asarray([reward]))
        self._users.features = obs[None]
        return self._single(obs, message), 0.0, terminated, truncated, info

    @staticmethod
    def _single(obs: np.ndarray, message: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return _observation(obs, {k: v[0] for k, v in message.items()})


class LinearMessageVectorWrapper(LocalDP, VectorWrapper):
    """:class:`LinearMessageWrapper` for a native privenv vector env: observations
    ``Dict(features=Box(n, A, d), <message keys batched>)``, rewards all 0.0.

    Follows the env's ``autoreset_mode``: runs that sit a step out consume no noise and get an
    all-zero message; runs the env restarts restart their noise from their new seeds.

    Args:
        env: a native ``LinearContextualBandit-v0`` vector env (or a wrapper of one).
        randomizer: the message randomizer.
    """

    def __init__(self, env: VectorEnv, randomizer: LinearMessageRandomizer) -> None:
        VectorWrapper.__init__(self, env)
        _check_linear_env(env, type(self).__name__, randomizer)
        self.randomizer = randomizer
        self.stack_index = ldp_stack_depth(env)
        self.single_observation_space = spaces.Dict(
            {"features": env.single_observation_space, **randomizer.message_spaces()}
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._users = _UserSide(randomizer, self.num_envs, self.stack_index)
        self._runs = AutoresetRuns(env)

    def reset(
        self,
        *,
        seed: int | list[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        # (Gymnasium annotates VectorEnv.reset's seed as an int; privenv's envs take one per run)
        obs, info = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        mask = None if not options else options.get("reset_mask")
        if self._users.features is None or seed is not None or mask is None:
            self._users.reset(run_seeds(self), obs)
            self._runs.reset()
        else:
            runs = np.flatnonzero(np.asarray(mask, dtype=bool))
            self._reseed(runs)
            self._users.features = obs
            self._runs.reset(runs)
        return _observation(obs, self.randomizer.empty(self.num_envs)), info

    def _reseed(self, runs: np.ndarray) -> None:
        seeds = run_seeds(self)
        self._users.reseed(runs, [seeds[i] for i in runs])

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self._users.features is None:
            raise ResetNeeded("call reset() before step()")
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        live, restart = self._runs.before_step()  # live None: every run stepped
        if restart.size:
            self._reseed(restart)
        message = self._users.release(actions, rewards, live)
        self._users.features = obs
        restart = self._runs.after_step(terminated | truncated)
        if restart.size:
            self._reseed(restart)
        return (_observation(obs, message), np.zeros(self.num_envs), terminated, truncated, info)


# ---------------------------------------------------------------------------------------------
# The public wrappers
# ---------------------------------------------------------------------------------------------


def _d_of(env: Any) -> int:
    return int(public_info(env).get("d", 0)) or _linear_shape(env, "this wrapper")[1]


class GaussianStatistics(LinearMessageWrapper):
    """(ε, δ)-local DP sufficient statistics: LDP-LinUCB's user-side randomizer.

    ## Description
    For ``LinearContextualBandit-v0`` (paper 4, §1.1; Zheng et al. 2020, the T^{3/4} baseline
    of paper 4). After the learner plays a_t, the user of round t releases
    ``gram`` = φ_tφ_tᵀ + B_t (B_t symmetric, upper triangle i.i.d. N(0, σ²), mirrored) and
    ``moment`` = φ_t y_t + ξ_t (ξ_t ~ N(0, σ²I_d)), φ_t = φ(x_t, a_t); a server sums them into
    ridge-regression statistics (the zoo's ``ldp-linucb``). σ: see
    :mod:`privenv.wrappers.ldp_linear` ("Calibration", Δ₂ = 2√2; ``calibration="classical"`` is
    Zheng et al.'s public code's σ).

    ## Observation Space
    ``Dict(features=Box(-1, 1, (A, d), float32), gram=Box(-inf, inf, (d, d), float64),
    moment=Box(-inf, inf, (d,), float64))``: the next round's features and the message of the
    round that just ended (zeros after ``reset``).

    ## Rewards
    Always 0.0: the feedback is the message in the observation.

    ## Privacy
    ``privacy``: (ε, δ)-DP, local model, per (context, reward) — the user's label and the
    features of the action served, in the non-anticipating sense of paper 4's Definition 1.1
    (the learner sees the current features to act; see the module docstring).

    ## Arguments
    ``env`` (a ``LinearContextualBandit-v0`` env), ``epsilon`` (ε > 0), ``delta`` (δ ∈ (0, 1)),
    ``calibration`` (``"analytic"`` or ``"classical"``), ``clip`` (default False), ``sampler``
    (``"float"`` or ``"exact"``, by default the one the data calls for —
    :func:`~privenv.wrappers.bookkeeping.data_sampler`: ``"exact"`` on a data set or an env of the
    caller's own; ``"exact"``: the message rounded to a grid 2¹⁴ times finer than the noise plus
    discrete Gaussian noise, σ calibrated through zCDP and never below the float
    σ — 6–9 % above the analytic σ —, exactly (ε′, δ)-DP with ε′ ≤ ε on the doubles released;
    module docstring, "Numerics").

    ## Example
    >>> import gymnasium as gym, privenv
    >>> from privenv.wrappers import GaussianStatistics
    >>> env = GaussianStatistics(gym.make("LinearContextualBandit-v0", d=3, A=4), 1.0, 1e-6)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> sorted(obs), obs["gram"].shape, reward
    (['features', 'gram', 'moment'], (3, 3), 0.0)
    """

    def __init__(self, env: gym.Env, epsilon: float, delta: float,
                 calibration: str = "analytic", clip: bool = False,
                 sampler: str | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, epsilon=epsilon, delta=delta, calibration=calibration, clip=clip,
            sampler=sampler
        )
        randomizer = GaussianStatisticsRandomizer(epsilon, delta, _d_of(env), calibration, clip,
                                                  sampler=data_sampler(env, sampler))
        super().__init__(env, randomizer)


class VectorGaussianStatistics(LinearMessageVectorWrapper):
    """:class:`GaussianStatistics` for a native privenv vector env (same randomizer, batched)."""

    def __init__(self, env: VectorEnv, epsilon: float, delta: float,
                 calibration: str = "analytic", clip: bool = False,
                 sampler: str | None = None) -> None:
        randomizer = GaussianStatisticsRandomizer(epsilon, delta, _d_of(env), calibration, clip,
                                                  sampler=data_sampler(env, sampler))
        super().__init__(env, randomizer)


class LaplaceInput(LinearMessageWrapper):
    r"""ε-local DP by input perturbation: (φ + Lap_d(b), y + Lap(b)), b = (2√d + 2)/ε.

    ## Description
    Paper 4, Theorem 2.2's negative example, as a teaching baseline: after the learner plays a_t
    the user releases ``phi_tilde`` = φ_t + Lap_d(b) (i.i.d. coordinates) and
    ``y_tilde`` = y_t + Lap(b). Any estimator on such data is private by post-processing, and
    Theorem 2.2 shows none has mean absolute deviation error below Ω(n^{−1/3}) in general. The
    paper writes Lap(1/α); b = (2√d + 2)/ε is the scale that makes the release ε-LDP (L1
    sensitivity 2√d + 2 over ‖φ‖₂ ≤ 1, \|y\| ≤ 1).

    ## Observation Space
    ``Dict(features=Box(-1, 1, (A, d), float32), phi_tilde=Box(-inf, inf, (d,), float64),
    y_tilde=Box(-inf, inf, (1,), float64))`` (zeros after ``reset``).

    ## Rewards
    Always 0.0: the feedback is the message in the observation.

    ## Privacy
    ``privacy``: ε-DP, local model, per (context, reward) (as :class:`GaussianStatistics`).

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``clip`` (default False), ``sampler`` (``"float"`` or
    ``"exact"``, by default the one the data calls for, as :class:`GaussianStatistics`;
    ``"exact"``: (φ, y) rounded to a grid 2¹⁴ times finer than b plus discrete Laplace noise,
    exactly ε′-DP with ε′ ≤ ε on the doubles released — the L1 sensitivity in grid units
    includes one unit of rounding per coordinate; module docstring, "Numerics").
    """

    def __init__(self, env: gym.Env, epsilon: float, clip: bool = False,
                 sampler: str | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, epsilon=epsilon, clip=clip,
                                                 sampler=sampler)
        super().__init__(env, LaplaceInputRandomizer(epsilon, _d_of(env), clip,
                                                     sampler=data_sampler(env, sampler)))


class VectorLaplaceInput(LinearMessageVectorWrapper):
    """:class:`LaplaceInput` for a native privenv vector env (same randomizer, batched)."""

    def __init__(self, env: VectorEnv, epsilon: float, clip: bool = False,
                 sampler: str | None = None) -> None:
        super().__init__(env, LaplaceInputRandomizer(epsilon, _d_of(env), clip,
                                                     sampler=data_sampler(env, sampler)))
