"""Audits of the local randomizers built above the privacy layer: LDP-LinUCB's user message and
input perturbation (:mod:`privenv.wrappers.ldp_linear`), and the messages of LPLR's users
(:class:`privenv.agents.lplr.LPLRUsers`).

Each case releases one user's message on the worst neighbouring pair of the declared
sensitivity, with its mutations (noise × 0.5, the sensitivity of the wrong neighbouring relation,
the paper's own scale); the machinery and the score statistics are those of
:mod:`privenv.privacy.harness` and :mod:`privenv.privacy.audit_scores`. The cases are
registered in :data:`CASES`, which :mod:`privenv.audits` merges into the registry of
``privenv audit``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from privenv.privacy import mechanisms as mech
from privenv.privacy.accounting import gaussian_epsilon, rho_to_epsilon_cks
from privenv.privacy.audit_scores import (
    GDP_AUDIT_DELTA,
    gaussian_projection_bound,
    laplace_llr_bound,
)
from privenv.privacy.harness import AuditCase, Measurement, Sampler, register

__all__ = ["CASES"]

#: the cases of this module, in report order
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = {}
_register = functools.partial(register, cases=CASES)

_LIN_D = 2  # the dimension of every message audited here


def _worst_pair() -> tuple[np.ndarray, np.ndarray]:
    """The worst case of (triu φφᵀ, φy) for d = 2 (numerical maximisation): φ·φ′ = −½, with
    y = y′ = 1."""
    c, s = math.cos(math.pi / 12), math.sin(math.pi / 12)
    return np.array([c, s]), np.array([-s, -c])


def _flat_message(msg: dict[str, np.ndarray]) -> np.ndarray:
    """A Gaussian-statistics message as one vector per row: (triu of the Gram part, moment)."""
    iu = np.triu_indices(_LIN_D)
    return np.concatenate([msg["gram"][:, iu[0], iu[1]], msg["moment"]], axis=1)


def _ldp_linucb_message(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.wrappers.ldp_linear import GaussianStatisticsRandomizer

    eps, delta = 4.0, 1e-5
    rand = GaussianStatisticsRandomizer(eps, delta, _LIN_D)
    declared = gaussian_epsilon(GDP_AUDIT_DELTA, rand.sensitivity / rand.sigma)
    sigma = rand.sigma
    if mutation == "noise x 0.5":
        rand.sigma = sigma * 0.5
    elif mutation == "sensitivity add-remove":  # σ calibrated for Δ₂ = √2 instead of 2√2
        rand.sigma = mech.gaussian_sigma_analytic(eps, delta, math.sqrt(2.0))
    phis = _worst_pair()
    iu = np.triu_indices(_LIN_D)
    means, outs = [], []
    for k, phi in enumerate(phis):
        means.append(np.concatenate([np.outer(phi, phi)[iu], phi]))
        draws = np.random.default_rng([seed, k]).standard_normal((n, rand.n_draws()))
        msg = rand(np.tile(phi, (n, 1)), np.ones(n), draws)
        outs.append(_flat_message(msg))
    res = gaussian_projection_bound(outs[0], outs[1], means[0], means[1], sigma)
    return Measurement(res, declared, GDP_AUDIT_DELTA)


_register(AuditCase(
    "ldp-linucb-message", "LDP-LinUCB's user message (φφᵀ + B, φy + ξ), GaussianStatistics "
    "at (ε, δ) = (4, 1e-5), d = 2; worst pair φ·φ′ = −½, y = 1 (‖Δ‖ = 3/√2 of the declared "
    "2√2); projection score; audited at δ = 0.05 of the μ-GDP profile (declared 1.39)",
    _ldp_linucb_message, 200_000, ("noise x 0.5", "sensitivity add-remove"),
    power_floor=0.88 - 0.25))


def _input_perturbation(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.wrappers.ldp_linear import LaplaceInputRandomizer

    eps = 1.0
    rand = LaplaceInputRandomizer(eps, _LIN_D)
    scale = rand.scale
    if mutation == "noise x 0.5":
        rand.scale = 0.5 * scale
    elif mutation == "L1 sensitivity without sqrt(d)":
        rand.scale = 4.0 / eps
    phi = np.full(_LIN_D, 1 / math.sqrt(_LIN_D))
    outs = []
    for k, (p, y) in enumerate(((phi, 1.0), (-phi, -1.0))):
        draws = np.random.default_rng([seed, k]).random((n, rand.n_draws()))
        msg = rand(np.tile(p, (n, 1)), np.full(n, y), draws)
        outs.append(np.concatenate([msg["phi_tilde"], msg["y_tilde"]], axis=1))
    res = laplace_llr_bound(outs[0], outs[1], np.append(phi, 1.0), np.append(-phi, -1.0), scale)
    return Measurement(res, eps, 0.0)


_register(AuditCase(
    "input-perturbation-message", "input perturbation (φ + Lap_d(b), y + Lap(b)), ε = 1, d = 2, "
    "b = (2√d + 2)/ε; the pair φ = (1, 1)/√2, y = 1 vs −φ, −1 attains the L1 sensitivity; "
    "score: the declared Laplace log-likelihood ratio", _input_perturbation, 200_000,
    ("noise x 0.5", "L1 sensitivity without sqrt(d)"), power_floor=0.85))


def _input_perturbation_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy.exact import DiscreteLaplaceParameters, VectorLaplace
    from privenv.wrappers.ldp_linear import LaplaceInputRandomizer

    eps = 1.0
    rand = LaplaceInputRandomizer(eps, _LIN_D, sampler="exact")
    exact = rand.exact
    assert isinstance(exact, VectorLaplace)  # (sampler="exact")
    declared, scale = rand.privacy.epsilon, exact.scale
    if mutation == "noise x 0.5":  # the discrete Laplace's t halved, nothing else
        p = exact.params
        t = p.scale / 2
        exact = rand.exact = dataclasses.replace(exact, params=DiscreteLaplaceParameters(
            p.grid, t.numerator, t.denominator, p.sensitivity_grid))
    phi = np.full(_LIN_D, 1 / math.sqrt(_LIN_D))
    outs, means = [], []
    for k, (p_, y) in enumerate(((phi, 1.0), (-phi, -1.0))):
        phi_v, y_v = rand.validate(np.tile(p_, (n, 1)), np.full(n, y))
        x = rand.message_vector(phi_v[:1], y_v[:1])
        means.append(exact.round(x)[0] * exact.grid.granularity)  # the noise's centre
        msg = rand(phi_v, y_v, np.random.default_rng([seed, k]))
        outs.append(np.concatenate([msg["phi_tilde"], msg["y_tilde"]], axis=1))
    res = laplace_llr_bound(outs[0], outs[1], means[0], means[1], scale)
    return Measurement(res, declared, 0.0)


_register(AuditCase(
    "input-perturbation-exact", "input perturbation with sampler='exact' ((φ, y) on the grid "
    "2^(⌊log₂ b⌋ − 14)ℤ plus discrete Laplace, declared ε′ ≤ ε = 1 with the rounding), d = 2, "
    "the pair of 'input-perturbation-message'; score: the Laplace log-likelihood ratio around "
    "the rounded messages; mutant: the discrete Laplace's scale halved",
    _input_perturbation_exact, 200_000, ("noise x 0.5",), power_floor=0.85))


def _gaussian_statistics_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy.exact import DiscreteGaussianParameters, VectorGaussian
    from privenv.wrappers.ldp_linear import GaussianStatisticsRandomizer

    rand = GaussianStatisticsRandomizer(4.0, 1e-5, _LIN_D, sampler="exact")
    # the declared profile: CKS20's conversion of the exact ρ, at the audited δ
    exact = rand.exact
    assert isinstance(exact, VectorGaussian)  # (sampler="exact")
    declared = rho_to_epsilon_cks(exact.rho(rand.sensitivity, rand.m), GDP_AUDIT_DELTA)
    sigma = rand.sigma
    if mutation == "noise x 0.5":  # σ_k² / 4 (rounded up): the noise halved, nothing else
        v = math.ceil(exact.params.variance / 4)
        exact = rand.exact = dataclasses.replace(exact, params=DiscreteGaussianParameters(v, 1))
    phis = _worst_pair()  # that of 'ldp-linucb-message'
    means, outs = [], []
    for k, phi in enumerate(phis):
        phi_v, y_v = rand.validate(np.tile(phi, (n, 1)), np.ones(n))
        x = rand.message_vector(phi_v[:1], y_v[:1])
        means.append(exact.round(x)[0] * exact.grid.granularity)
        msg = rand(phi_v, y_v, np.random.default_rng([seed, k]))
        outs.append(_flat_message(msg))
    res = gaussian_projection_bound(outs[0], outs[1], means[0], means[1], sigma)
    return Measurement(res, declared, GDP_AUDIT_DELTA)


_register(AuditCase(
    "gaussian-statistics-exact", "LDP-LinUCB's user message with sampler='exact' "
    "((triu φφᵀ, φy) on the grid plus the multivariate discrete Gaussian, zCDP-calibrated at "
    "(ε, δ) = (4, 1e-5)), d = 2, the worst pair of 'ldp-linucb-message'; projection score; "
    "audited at δ = 0.05 of the declared profile (CKS20's conversion of the exact ρ); mutant: "
    "σ_k² / 4", _gaussian_statistics_exact, 200_000, ("noise x 0.5",), power_floor=0.45))


_LPLR_EPS = 3.0  # ε/3 = 1 per LPLR-Update part


def _lplr_release(mode: str, delta: float, part: str, contribution: Callable, seed: list[int],
                  n: int, mutation: str | None) -> np.ndarray:
    """The release of a phase of one user, replicated over the bins of one run (their noise is
    i.i.d.), with the user's terms written into the phase sums by ``contribution(users)``
    (bypassing ``contribute``, whose clipping bounds the terms written here). The mutation
    ``"noise x 0.5"`` halves every noise scale through the users' audit hook."""
    from privenv.agents.lplr import LPLRUsers

    class HalfNoise(LPLRUsers):
        """Mutant: every noise scale of the release × 0.5."""

        noise_multiplier = 0.5

    cls = HalfNoise if mutation == "noise x 0.5" else LPLRUsers
    n_bins = 2 * n if part in ("count", "eps") else n
    users = cls(_LIN_D, 1, [np.random.default_rng(seed)], _LPLR_EPS, mode, delta)
    users.start_phase("ci" if part == "eps" else "update", 1, n_bins, 1,
                      np.ones((1, 1, n_bins), dtype=bool))
    contribution(users)
    return users.release()[part][0, 0]


def _lplr_one_hot(part: str) -> Sampler:
    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        mode = "paper" if mutation == "paper's scale" else "gaussian"
        declared = _LPLR_EPS / 3 if part == "count" else _LPLR_EPS

        def one_hot(offset: int) -> Callable:
            def contribution(users: Any) -> None:
                getattr(users, part)[0, 0, offset::2] = 1.0
            return contribution

        outs = [_lplr_release(mode, 1e-5, part, one_hot(k), [seed, k], n, mutation)
                .reshape(n, 2) for k in (0, 1)]
        res = laplace_llr_bound(outs[0], outs[1], np.array([1.0, 0.0]), np.array([0.0, 1.0]),
                                 2.0 / declared)
        return Measurement(res, declared, 0.0)
    return sample


_register(AuditCase(
    "lplr-update-count", "LPLR-Update's one-hot count (declared ε/3 = 1 at ε = 3): the user "
    "moves from bin b to bin b′, Δ₁ = 2; mutants: noise × 0.5, the paper's Lap(3/α) "
    "(add/remove sensitivity 1: true ε twice the declared)", _lplr_one_hot("count"), 200_000,
    ("noise x 0.5", "paper's scale"), power_floor=1.0 - 0.35))
_register(AuditCase(
    "lplr-ci", "LPLR-CI's one-hot normalized ε_i ∈ [0, 1] (declared ε = 3), Δ₁ = 2; mutants: "
    "noise × 0.5, the paper's Lap(1/α)", _lplr_one_hot("eps"), 200_000,
    ("noise x 0.5", "paper's scale"), power_floor=3.0 - 0.35))


def _lplr_count_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    """LPLR-Update's count with ``sampler="exact"``: one user of a phase, replicated over the
    bins of one run (pairs of bins; the user's rounded one-hot in bin 2j or 2j + 1), with the
    agent's own exact release; mutant: the count's discrete Laplace scale halved."""
    from privenv.agents.lplr import LPLRExact, LPLRUsers
    from privenv.privacy.exact import DiscreteLaplaceParameters

    exact = LPLRExact.calibrate(_LPLR_EPS, 1e-5, _LIN_D)
    declared, scale = exact.count.epsilon, exact.count.scale
    used = exact
    if mutation == "noise x 0.5":
        p = exact.count.params
        t = p.scale / 2
        used = dataclasses.replace(exact, count=dataclasses.replace(
            exact.count, params=DiscreteLaplaceParameters(p.grid, t.numerator, t.denominator,
                                                          p.sensitivity_grid)))
    outs = []
    for k in (0, 1):
        users = LPLRUsers(_LIN_D, 1, [np.random.default_rng(0)], _LPLR_EPS, "gaussian", 1e-5,
                          used, np.random.default_rng([seed, k]))
        users.start_phase("update", 1, 2 * n, 1, np.ones((1, 1, 2 * n), dtype=bool))
        users.count[0, 0, k::2] = exact.count.round(np.ones(1))[0]
        outs.append(users.release()["count"][0, 0].reshape(n, 2))
    res = laplace_llr_bound(outs[0], outs[1], np.array([1.0, 0.0]), np.array([0.0, 1.0]), scale)
    return Measurement(res, declared, 0.0)


_register(AuditCase(
    "lplr-update-count-exact", "LPLR-Update's one-hot count with sampler='exact' (declared "
    "ε′ ≤ ε/3 = 1 at ε = 3, the rounding included): the user moves from bin b to bin b′, one "
    "user's discrete Laplace per bin as the agent draws it; mutant: the discrete scale halved",
    _lplr_count_exact, 200_000, ("noise x 0.5",), power_floor=1.0 - 0.35))


def _lplr_label(mutation: str | None, n: int, seed: int) -> Measurement:
    mode = "paper" if mutation == "paper's scale" else "gaussian"
    v = np.full(_LIN_D, 1 / math.sqrt(_LIN_D))
    declared = _LPLR_EPS / 3

    def user(y: float) -> Callable:
        def contribution(users: Any) -> None:
            users.count[0, 0, :] = 1.0
            users.lam[0, 0, :] = y * v
            users.gram[0, 0, :] = np.outer(v, v)
        return contribution

    outs = [_lplr_release(mode, 1e-5, "lam", user(y), [seed, k], n, mutation)
            for k, y in enumerate((1.0, -1.0))]
    res = laplace_llr_bound(outs[0], outs[1], v, -v, 2 * math.sqrt(_LIN_D) / declared)
    return Measurement(res, declared, 0.0)


_register(AuditCase(
    "lplr-update-label-moment", "LPLR-Update's normalized y_hφ_h (declared ε/3 = 1): "
    "φ_h = (1, 1)/√2, label +1 vs −1, Δ₁ = 2√d attained; mutants: noise × 0.5, the paper's "
    "Lap(3√d/α)", _lplr_label, 200_000, ("noise x 0.5", "paper's scale"),
    power_floor=1.0 - 0.15))


def _lplr_gram(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy.wishart import gram_gaussian_sigma

    delta = 0.01
    sigma = gram_gaussian_sigma(_LPLR_EPS / 3, delta, _LIN_D)
    declared = gaussian_epsilon(GDP_AUDIT_DELTA, math.sqrt(2) / sigma)
    iu = np.triu_indices(_LIN_D)

    def user(phi: np.ndarray) -> Callable:
        def contribution(users: Any) -> None:
            users.count[0, 0, :] = 1.0
            users.gram[0, 0, :] = np.outer(phi, phi)
        return contribution

    e1, e2 = np.eye(_LIN_D)
    outs = [_lplr_release("gaussian", delta, "gram", user(phi), [seed, k], n, mutation)
            [:, iu[0], iu[1]] for k, phi in enumerate((e1, e2))]
    res = gaussian_projection_bound(outs[0], outs[1], np.outer(e1, e1)[iu], np.outer(e2, e2)[iu],
                                    sigma)
    return Measurement(res, declared, GDP_AUDIT_DELTA)


_register(AuditCase(
    "lplr-update-gram", "LPLR-Update's normalized Gram with symmetric Gaussian noise "
    "(ε/3 = 1, δ = 0.01), φ_h = e₁ vs e₂; projection score; audited at δ = 0.05 of the "
    "μ-GDP profile (declared 0.572)", _lplr_gram, 200_000, ("noise x 0.5",),
    power_floor=0.572 - 0.2))


#: runs whose noise streams a preimage case holds at once (a run's stream holds a block of words)
_STREAM_BLOCK = 20_000


def _reward_wrapper_preimage(kind: str) -> Sampler:
    """The local-DP reward wrappers' own randomizer (:class:`~privenv.wrappers.ldp.
    LaplaceRandomizer` at ε = 1, or :class:`~privenv.wrappers.ldp.GaussianRandomizer` at
    (1, 10⁻²), range (0, 1), ``sampler="exact"``) on rewards 0 and 1/3, each run's noise from its
    own word stream as in a wrapper: every release must be a point of the declared grid
    (reachable from both inputs). Mutant: the wrapper ignores the sampler and draws float noise,
    whose releases are then searched exactly (the Laplace transform's support, or for the
    Gaussian's ziggurat normals the addition stage alone)."""

    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from privenv.privacy import preimage
        from privenv.privacy.audit_noise import (
            float_laplace_noise,
            float_reachable,
            preimage_measurement,
        )
        from privenv.privacy.local import GaussianRandomizer, LaplaceRandomizer
        from privenv.seeding import WRAPPER, noise_for

        def randomizer(sampler: str) -> Any:
            if kind == "laplace":
                return LaplaceRandomizer(1.0, (0.0, 1.0), sampler=sampler)
            return GaussianRandomizer(1.0, 1e-2, (0.0, 1.0), sampler=sampler)

        declared = randomizer("exact")
        used = randomizer("float" if mutation == "sampler ignored" else "exact")
        inputs = (0.0, 1.0 / 3.0)

        def releases(x: float, stream_seed: int) -> np.ndarray:
            """n releases of x, one per run, by blocks of runs: run i's stream is the same
            whatever the block (privenv.seeding), and only a block's streams are held."""
            out = np.empty(n)
            for lo in range(0, n, _STREAM_BLOCK):
                m = min(_STREAM_BLOCK, n - lo)
                out[lo:lo + m] = used(np.full(m, x), noise_for(stream_seed, m, WRAPPER,
                                                                first_run=lo))
            return out

        # two distinct stream seeds in the one seed range [0, 2**63 - 1] (privenv.seeding)
        ys = [releases(x, (2 * int(seed) + k) % 2**63) for k, x in enumerate(inputs)]
        if mutation is None:
            step = declared.kernel_view().g
            unreachable = (~preimage.on_grid(ys[0], step), ~preimage.on_grid(ys[1], step))
            search = "support: the grid g·ℤ (exact)"
        else:
            support = float_laplace_noise if kind == "laplace" else None  # b = 1
            unreachable = (~float_reachable(ys[0], inputs[1], support),
                           ~float_reachable(ys[1], inputs[0], support))
            search = "the float sampler's support" if support else "addition only"
        g = declared.privacy
        return preimage_measurement(unreachable, g.epsilon, g.delta, search)

    return sample


_register(AuditCase(
    "preimage-laplace-reward-exact", "exact preimage search of LaplaceReward's randomizer with "
    "sampler='exact' (ε = 1, range (0, 1)), rewards 0 vs 1/3, per-run word streams: every release "
    "a grid point, reachable from both; mutant: the sampler ignored (float noise)",
    _reward_wrapper_preimage("laplace"), 20_000, ("sampler ignored",)))
_register(AuditCase(
    "preimage-gaussian-reward-exact", "exact preimage search of GaussianReward's randomizer "
    "with sampler='exact' ((1, 1e-2), range (0, 1)), rewards 0 vs 1/3; mutant: the sampler "
    "ignored (float noise)", _reward_wrapper_preimage("gaussian"), 20_000,
    ("sampler ignored",)))
