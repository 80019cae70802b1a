"""Audits of the privacy layer's composite mechanisms, built on its noise: the tree mechanism
(:mod:`privenv.privacy.tree`), paper 4's Wishart mechanism and the symmetric Gaussian
alternative (:mod:`privenv.privacy.wishart`), P_Vec's scalar node
(:mod:`privenv.privacy.vector_sum`), a uniform shuffler of randomized responses, and paper 2's
federated protocols (:mod:`privenv.privacy.federated`: one silo's released p-sums, the central
server's prefix sums). Registered in :data:`CASES`, run by the harness
(:mod:`privenv.privacy.harness`) and by ``privenv audit``.

A paper's own mechanism that is known not to be DP (the Wishart mechanism of Jiang et al. 2016,
used by paper 4's LPLR-Update and declared not-DP by our agent) is audited too; its violation is
reported with the distinct verdict :data:`~privenv.privacy.harness.PAPER_VIOLATION` and does not
fail the run.

The tree-shaped cases' helpers (:func:`node_keys`, :func:`tree_s2_sd`, :class:`TreeScores`, the
mutants :func:`tree_mutant_classes` and :func:`fed_redraw_randomizer_class`) serve the agents'
audits of :mod:`privenv.audits` too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from privenv.privacy import audit
from privenv.privacy import mechanisms as mech
from privenv.privacy.accounting import gaussian_rho, tree_levels
from privenv.privacy.audit_scores import best_bound, tree_scores_bound
from privenv.privacy.harness import ALPHA, AuditCase, Measurement, register

__all__ = [
    "CASES",
    "TreeScores",
    "fed_redraw_randomizer_class",
    "node_keys",
    "redrawn_prefix",
    "tree_mutant_classes",
    "tree_s2_sd",
]

#: the cases of this module, in report order
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = {}


# =================================================================================================
# The tree mechanism (threshold events on prefix sums, structure, mutations)
# =================================================================================================

_TREE_T, _TREE_SIGMA, _TREE_DELTA = 16, 1.0, 0.1
_TREE_TS = np.arange(1, _TREE_T + 1)
_TREE_POP = np.array([bin(t).count("1") for t in _TREE_TS], dtype=float)


def node_keys(t: int) -> list[tuple[int, int]]:
    """The dyadic nodes (level j, index t >> j) whose sum is the prefix at t."""
    return [(j, t >> j) for j in range(t.bit_length()) if t >> j & 1]


def tree_s2_sd(sigma: float, horizon: int = _TREE_T) -> float:
    """Standard deviation of S₂ = Σ_{t ≤ horizon} y_t/popcount(t) under the memoised
    mechanism."""
    coef: dict[tuple[int, int], float] = {}
    for t in range(1, horizon + 1):
        for key in node_keys(t):
            coef[key] = coef.get(key, 0.0) + 1.0 / bin(t).count("1")
    return sigma * math.sqrt(sum(c * c for c in coef.values()))


def redrawn_prefix(tree: Any) -> np.ndarray:
    """The prefix sums of a tree mechanism whose node noise is drawn afresh at every query (the
    mutation "node noise redrawn"): Σ over the set bits j of t of (α_j + fresh noise_j), level
    after level, each level's noise one draw for all runs."""
    extra = (slice(None),) + (None,) * len(tree.shape)
    used = (tree.t[:, None] & tree._bits) != 0
    out = np.zeros((tree.n_runs, *tree.shape))
    for j in range(tree.levels):
        out += (tree._psum[:, j] + tree._draw_node_noise(np.arange(tree.n_runs))) \
            * used[:, j][extra]
    return out


def tree_mutant_classes() -> tuple[type, type, type]:
    from privenv.privacy.tree import TreeMechanism

    class RedrawTree(TreeMechanism):
        """Mutant: node noise redrawn at every query instead of memoised."""

        def prefix(self) -> np.ndarray:
            return redrawn_prefix(self)

    class MissingLevelTree(TreeMechanism):
        """Mutant: the budget counts one level too few (⌈log₂T⌉ instead of ⌊log₂T⌋ + 1)."""

        def rho(self, sensitivity: float = 1.0) -> float:
            return (self.levels - 1) * gaussian_rho(self.sigma, sensitivity)

    return TreeMechanism, RedrawTree, MissingLevelTree


class TreeScores:
    """The two scores of the tree-shaped cases, summed as the releases arrive (the T released
    values of a run are never held at once): S₁ = Σ_{t ∈ nodes} y_t (the memoised mechanism's
    likelihood-ratio statistic) and S₂ = Σ_t y_t/pop_t (a redrawing one's), both in the order
    t = 1, 2, … ."""

    def __init__(self, n: int, nodes: Sequence[int], pop: np.ndarray) -> None:
        self.s1, self.s2 = np.zeros(n), np.zeros(n)
        self.nodes, self.pop = frozenset(nodes), pop

    def add(self, t: int, y: np.ndarray) -> None:
        """The values released at step t (0-based), one per run."""
        if t in self.nodes:
            self.s1 += y
        self.s2 += y / self.pop[t]

    @property
    def scores(self) -> tuple[np.ndarray, np.ndarray]:
        return self.s1, self.s2


def _tree(mutation: str | None, n: int, seed: int) -> Measurement:
    tree, redraw, missing = tree_mutant_classes()
    cls = {"node noise redrawn": redraw, "one tree level missing": missing}.get(mutation or "",
                                                                               tree)
    sigma = _TREE_SIGMA * (0.5 if mutation == "noise x 0.5" else 1.0)
    declared = cls(1, (1,), _TREE_SIGMA, _TREE_T, np.random.default_rng(0)).epsilon(_TREE_DELTA)
    scores = []
    for k, first in enumerate((1.0, 0.0)):
        m = cls(n, (1,), sigma, _TREE_T, np.random.default_rng([seed, k]))
        x = np.zeros((n, 1))
        acc = TreeScores(n, [0, 1, 3, 7, 15], _TREE_POP)
        for t in range(_TREE_T):
            x[:] = first if t == 0 else 0.0
            acc.add(t, m.add(x)[:, 0])
        del m
        scores.append(acc.scores)
    grid = np.linspace(-1.0, 5.0, 13)  # standardised units around D′'s mean 0
    sds = (math.sqrt(tree_levels(_TREE_T)) * _TREE_SIGMA, tree_s2_sd(_TREE_SIGMA))
    return Measurement(tree_scores_bound(scores, grid, sds, _TREE_DELTA), declared, _TREE_DELTA)


register(AuditCase(
    "tree", "binary (tree) mechanism, scalar stream T = 16, σ = 1: D = (1, 0, …, 0) vs D′ = 0, "
    "all 16 private prefixes released; scores S₁ = Σ_j y_{2^j} (the LR statistic of the "
    "memoised mechanism) and S₂ = Σ_t y_t/popcount(t) (that of a redrawing one), 13 "
    "thresholds each (α/2 each); audited at δ = 0.1 of the μ = √5 GDP profile (declared "
    "ε(0.1) = 4.59; the missing-level mutant declares μ = 2: 3.81)", _tree, 200_000,
    ("node noise redrawn", "noise x 0.5", "one tree level missing"),
    power_floor=4.59 - 0.6), CASES)


# =================================================================================================
# Wishart: paper 4's mechanism (not DP) and the symmetric Gaussian alternative
# =================================================================================================

_W_D = 2


def _gram_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    e1, e2 = np.zeros((n, _W_D, _W_D)), np.zeros((n, _W_D, _W_D))
    e1[:, 0, 0] = 1.0
    e2[:, 1, 1] = 1.0
    return e1, e2


def _wishart_scores(out_d: np.ndarray, out_dp: np.ndarray, c0: float, sd: float,
                    delta: float) -> audit.AuditResult:
    """Max over the support score λ_min(M + c₀I − e₁e₁ᵀ) (event {≤ 0}: impossible under φ = e₁
    for Wishart noise with d + 1 degrees of freedom) and the projection score M₁₁ − M₂₂ (13
    thresholds around D′'s mean −1, in units of ``sd``), α/2 each."""
    shift = c0 * np.eye(_W_D) - np.diag([1.0, 0.0])
    support = [np.linalg.eigvalsh(m + shift)[:, 0] for m in (out_d, out_dp)]
    proj = [m[:, 0, 0] - m[:, 1, 1] for m in (out_d, out_dp)]
    grid = -1.0 + sd * np.linspace(-1.0, 5.0, 13)
    return best_bound(
        audit.threshold_epsilon_lower_bound(support[0], support[1], [0.0], delta=delta,
                                            alpha=ALPHA / 2),
        audit.threshold_epsilon_lower_bound(proj[0], proj[1], grid, delta=delta,
                                            alpha=ALPHA / 2))


def _wishart_jiang(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy import wishart as W

    alpha = 1.0
    rng = np.random.default_rng(seed)
    e1, e2 = _gram_pair(n)
    out_d, out_dp = W.wishart_jiang2016(e1, alpha, rng), W.wishart_jiang2016(e2, alpha, rng)
    c0 = 3 * 1.5 * (_W_D + 1) / alpha
    res = _wishart_scores(out_d, out_dp, c0, 3 * math.sqrt(3 * 2 * 1.5**2), 0.0)
    return Measurement(res, W.wishart_jiang2016_claimed_epsilon(alpha), 0.0)


register(AuditCase(
    "wishart-jiang2016", "paper 4's Wishart mechanism (Jiang et al. 2016, α = 1, claimed "
    "α/3-LDP), d = 2, φ = e₁ vs φ′ = e₂: the support event has probability 0 under e₁ and "
    "≈ 0.07 under e₂ — NOT DP (Sheffet 2019), reproduced; declared not-DP by LPLR's "
    "mechanism='paper'", _wishart_jiang, 200_000, paper_flawed=True), CASES)


def _wishart_gaussian(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy import wishart as W

    epsilon, delta = 2.0, 0.01
    sigma = W.gram_gaussian_sigma(epsilon, delta, _W_D)
    if mutation == "sensitivity add-remove":
        sigma_used = W.gram_gaussian_sigma(epsilon, delta, _W_D, neighbouring="add-remove")
    else:
        sigma_used = sigma * (0.5 if mutation == "noise x 0.5" else 1.0)
    rng = np.random.default_rng(seed)
    e1, e2 = _gram_pair(n)
    out_d = W.symmetric_gaussian_gram(e1, sigma_used, rng)
    out_dp = W.symmetric_gaussian_gram(e2, sigma_used, rng)
    res = _wishart_scores(out_d, out_dp, 0.0, math.sqrt(2) * sigma, delta)
    return Measurement(res, epsilon, delta)


register(AuditCase(
    "wishart-gaussian", "the valid alternative: symmetric Gaussian Gram noise at (ε, δ) = "
    "(2, 0.01), d = 2, replace-one, φ = e₁ vs e₂ (the same two scores); mutants: σ × 0.5, σ "
    "from the add/remove sensitivity B² instead of √2·B²", _wishart_gaussian, 200_000,
    ("noise x 0.5", "sensitivity add-remove"), power_floor=1.5), CASES)


# =================================================================================================
# Shuffle model: P_Vec's scalar node and a uniform shuffler of randomized responses
# =================================================================================================


#: runs of the pvec-node case whose rounding is computed at once (full size: 10⁷ runs)
_PVEC_CHUNK = 500_000


def _pvec_node(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.privacy import vector_sum as vs

    L = 1.0
    declared = vs.vector_sum_parameters(3, 1, 1.0, 1e-3, s=8.0)
    vs.node_guarantee(declared, c=1)  # exact check of the declared (ε, δ)
    params = declared
    if mutation == "binomial trials / 16":
        params = vs.VectorSumParameters(n=3, d=1, epsilon=1.0, delta=1e-3, s=0.5, g=declared.g,
                                        b=declared.b // 16)
    rng = np.random.default_rng(seed)
    ys = []
    for x_first in (-L, L):
        runs = np.arange(n)
        # the rounding bits of blocks of runs: the generator's uniforms are read row after row,
        # so the blocks draw the numbers one call over all n runs would (in bounded memory);
        # the binomial noise is drawn after all of them, as before
        rounded = np.empty((n, 1), dtype=np.int64)
        for lo in range(0, n, _PVEC_CHUNK):
            hi = min(lo + _PVEC_CHUNK, n)
            x = np.zeros((hi - lo, params.n, 1))
            x[:, 0, 0] = x_first
            rounded[lo:hi] = vs.encode_sum(x, L, params, rng, runs[lo:hi])
        noise = vs.binomial_noise_sum(params, 1, rng, runs)
        if mutation == "no binomial noise":
            noise = np.full_like(noise, round(params.p * params.noise_trials))
        ys.append(vs.analyze(rounded + noise, L, params)[:, 0])
    sd = vs.max_error_std(L, declared)
    res = audit.threshold_epsilon_lower_bound(ys[0], ys[1], np.linspace(-3.0 * sd, 3.0 * sd, 15),
                                              delta=declared.delta, alpha=ALPHA)
    return Measurement(res, declared.epsilon, declared.delta)


register(AuditCase(
    "pvec-node", "P_Vec (Cheu et al. 2021) scalar node, n = 3 users, x₁ = −L vs L: the "
    "analyzer output (a sufficient statistic of the shuffled unary messages), 15 thresholds; "
    "declared (1, 1e-3) checked exactly by node_guarantee", _pvec_node, 1_000_000,
    ("binomial trials / 16", "no binomial noise")), CASES)


_SHUF_USERS, _SHUF_EPS0, _SHUF_DELTA = 50, 2.0, 0.05
#: runs of the shuffler case held at once (full size: 10⁶ runs × 50 messages)
_SHUF_CHUNK = 100_000


def _shuffler(mutation: str | None, n: int, seed: int) -> Measurement:
    """n_users binary randomized responses at ε₀, shuffled by the library's UniformShuffler;
    user 0 holds 1 (D) or 0 (D′), the others 0. Released: the shuffled message vector. Two
    scores (α/2 each): the count of ones (sufficient for a shuffled output; all thresholds) and
    the first message (what an unshuffled output gives away)."""
    from privenv.privacy.accounting import shuffle_amplification_numerical
    from privenv.privacy.federated import IdentityShuffler, UniformShuffler

    declared = shuffle_amplification_numerical(_SHUF_EPS0, _SHUF_USERS, _SHUF_DELTA, block=1,
                                                iterations=20)
    scores = []
    for k, bit in enumerate((1.0, 0.0)):
        rng = np.random.default_rng([seed, k])
        shuffler = IdentityShuffler() if mutation == "no shuffle" else UniformShuffler(
            np.random.default_rng([seed, k, 1]))
        count, first = np.empty(n), np.empty(n)
        for lo in range(0, n, _SHUF_CHUNK):  # both generators are read row after row: the
            hi = min(lo + _SHUF_CHUNK, n)  # chunks draw the numbers one block of n would
            x = np.zeros((hi - lo, _SHUF_USERS))
            x[:, 0] = bit
            msgs = mech.randomized_response(x, _SHUF_EPS0, rng)
            out = shuffler.shuffle(msgs, np.arange(hi - lo))
            count[lo:hi], first[lo:hi] = out.sum(axis=1), out[:, 0]
        scores.append((count, first))
    res = best_bound(
        audit.threshold_epsilon_lower_bound(scores[0][0], scores[1][0],
                                            np.arange(_SHUF_USERS) + 0.5, delta=_SHUF_DELTA,
                                            alpha=ALPHA / 2),
        audit.threshold_epsilon_lower_bound(scores[0][1], scores[1][1], [0.5],
                                            delta=_SHUF_DELTA, alpha=ALPHA / 2))
    return Measurement(res, declared, _SHUF_DELTA)


register(AuditCase(
    "shuffler", f"uniform shuffler of {_SHUF_USERS} binary randomized responses at ε₀ = "
    f"{_SHUF_EPS0:g}; user 0 holds 1 vs 0; declared ε = Feldman–McMillan–Talwar numerical "
    f"amplification bound (block 1) at δ = {_SHUF_DELTA:g} (0.745); scores: count of ones, "
    "first message; mutant: "
    "identity shuffler (messages in user order)", _shuffler, 100_000, ("no shuffle",)), CASES)


# =================================================================================================
# Federated protocols (paper 2): a silo's released p-sums, the central server's prefix sums
# =================================================================================================


# -- Private-FedLinUCB (paper 2), protocol "ldp": one silo's released p-sums ----------------------

_FED_SYNCS, _FED_EPS, _FED_DELTA, _FED_B = 16, 4.6, 0.1, 5.0
_FED_NODES = [0, 1, 3, 7, 15]  # syncs k = 2^j: the nodes containing batch 1


def fed_redraw_randomizer_class() -> type:
    """Mutant of :class:`~privenv.privacy.federated.TreeRandomizer`: at each sync the silo sends
    its noisy prefix with every node's noise redrawn (node noise not memoised: batch 1 is then
    in all 16 messages with fresh noise)."""
    from privenv.privacy.federated import TreeRandomizer

    class RedrawRandomizer(TreeRandomizer):
        def release(self, gram: np.ndarray, moment: np.ndarray, runs: np.ndarray,
                    live: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            super().release(gram, moment, runs, live)
            return tuple(redrawn_prefix(tree)[runs] for tree in (self.gram_tree,
                                                                 self.moment_tree))

    return RedrawRandomizer


def _fed_linucb_silo(mutation: str | None, n: int, seed: int,
                     sampler: str = "float") -> Measurement:
    """One silo (M = 1), d = 1, B = 1, 16 syncs (κ = 5 levels), reward bound b = 5, σ₀ from
    :func:`~privenv.privacy.federated.ldp_sigma0` at (ε, δ) = (4.6, 0.1). Neighbouring silo
    data: the user of round 1 is (φ = 1, y = b) in D and (φ = 1, y = −b) in D′, all other users
    (0, 0): Δ_u = 2b with Δ_G = 0, i.e. Δ_G² + Δ_u² = 100 against the calibrated 1 + 4b² = 101
    (nearly sharp). Released view: the silo's 16 moment messages m_k (its Gram messages are the
    same under D and D′). Scores declared before sampling: S₁ = Σ_{k ∈ {1,2,4,8,16}} m_k (the
    likelihood-ratio statistic of the correct protocol: user 1 is in the nodes completing at
    k = 2^j) and S₂ = Σ_k m_k/popcount(k) (that of a silo re-sending its prefix with redrawn
    node noise), 21 thresholds each (α/2 each), in sd units of the correct protocol."""
    from privenv.privacy.federated import (
        TreeRandomizer,
        federated_kappa,
        ldp_sigma0,
        replace_one_sensitivities,
    )
    from privenv.privacy.wishart import gram_sensitivity

    if sampler == "exact":
        return _fed_linucb_silo_exact(mutation, n, seed)
    kappa = federated_kappa(_FED_SYNCS)
    if mutation == "sensitivity add-remove":  # the halved (add/remove) values Δ_G, Δ_u = b
        sens = (gram_sensitivity(1, 1.0, "add-remove"), _FED_B)
    else:
        sens = replace_one_sensitivities(1, _FED_B)
    if mutation == "one tree level missing":  # budget for κ − 1 = 4 levels, the tree has 5
        kappa -= 1
    sigma0 = ldp_sigma0(_FED_EPS, _FED_DELTA, kappa, *sens)
    cls = fed_redraw_randomizer_class() if mutation == "node noise redrawn" else TreeRandomizer
    # thresholds from the parameters only: sd units of the correct protocol, around the
    # midpoint 0 of the two means
    sigma_ok = ldp_sigma0(_FED_EPS, _FED_DELTA, federated_kappa(_FED_SYNCS),
                          *replace_one_sensitivities(1, _FED_B))
    return Measurement(_fed_silo_bound(cls, sigma0, sigma_ok, "float", n, seed), _FED_EPS,
                       _FED_DELTA)


def _fed_silo_bound(cls: type, sigma0: float, sigma_ok: float, sampler: str, n: int,
                    seed: int) -> audit.AuditResult:
    """The silo audit's ε lower bound for the randomizer class ``cls`` at noise σ₀ (scores and
    thresholds of :func:`_fed_linucb_silo`, σ_ok the correct protocol's noise scale)."""
    ks = np.arange(1, _FED_SYNCS + 1)
    pop = np.array([bin(k).count("1") for k in ks], dtype=float)
    scores = []
    for side, y in enumerate((_FED_B, -_FED_B)):
        rand = cls(n, 1, 1, sigma0, _FED_SYNCS, np.random.default_rng([seed, side]), sampler)
        runs = np.arange(n)
        gram, moment = np.zeros((n, 1, 1, 1)), np.zeros((n, 1, 1))
        acc = TreeScores(n, _FED_NODES, pop)
        for k in range(_FED_SYNCS):
            first = k == 0
            gram[:], moment[:] = float(first), first * y
            _, m = rand.release(gram, moment, runs, None)
            acc.add(k, m[:, 0, 0])
        del rand, m
        scores.append(acc.scores)
    grid = np.linspace(-1.0, 4.0, 21)
    sds = (sigma_ok * math.sqrt(len(_FED_NODES)), sigma_ok * math.sqrt(np.sum(1 / pop**2)))
    return tree_scores_bound(scores, grid, sds, _FED_DELTA)


def _fed_linucb_silo_exact(mutation: str | None, n: int, seed: int) -> Measurement:
    """:func:`_fed_linucb_silo` with ``sampler="exact"``: σ₀ from
    :func:`~privenv.privacy.federated.calibrate` (zCDP, rounding included), declared ε′ ≤ 4.6
    its guarantee; mutants: node noise redrawn, a budget for one level instead of κ = 5 (the
    zCDP calibration's slack hides the float case's "one tree level missing", a factor √(5/4)
    in σ: at (4.6, 0.1) the correct protocol's bound is 3.2, that mutant's 3.9)."""
    from privenv.privacy.federated import TreeRandomizer, calibrate

    kw: dict[str, Any] = dict(epsilon=_FED_EPS, delta=_FED_DELTA, M=1, d=1, horizon=_FED_SYNCS,
                              n_syncs=_FED_SYNCS, alpha=0.01, reward_bound=_FED_B,
                              sampler="exact")
    cal = calibrate("ldp", **kw)
    sigma0 = cal.sigma0
    if mutation == "budget for one level":  # σ₀ for κ = 1, the tree has κ = 5 levels
        sigma0 = calibrate("ldp", **{**kw, "n_syncs": 1}).sigma0
    cls = fed_redraw_randomizer_class() if mutation == "node noise redrawn" else TreeRandomizer
    bound = _fed_silo_bound(cls, sigma0, cal.sigma0, "exact", n, seed)
    return Measurement(bound, cal.guarantee.epsilon, _FED_DELTA)


register(AuditCase(
    "fed-linucb-silo", "Private-FedLinUCB (paper 2), protocol 'ldp': one silo's 16 released "
    "moment p-sums (M = 1, d = 1, B = 1, κ = 5, b = 5, σ₀ by ldp_sigma0 at (ε, δ) = (4.6, 0.1)); "
    "user 1's (1, b) vs (1, −b) (Δ² = 100 of the calibrated 101); scores S₁ (memoised LR), S₂ "
    "(redrawn LR); mutants: node noise not memoised, one tree level missing from the budget, "
    "σ₀ from the add/remove sensitivities", _fed_linucb_silo, 200_000,
    ("node noise redrawn", "one tree level missing", "sensitivity add-remove"),
    power_floor=4.6 - 0.7), CASES)

register(AuditCase(
    "fed-linucb-silo-exact", "fed-linucb-silo with sampler='exact' (items on the grid, discrete "
    "Gaussian node noise; σ₀ through zCDP, declared ε′ ≤ 4.6 by CKS20's conversion); mutants: "
    "node noise not memoised, σ₀ budgeted for one level instead of κ = 5",
    lambda mutation, n, seed: _fed_linucb_silo(mutation, n, seed, "exact"), 200_000,
    ("budget for one level", "node noise redrawn"), power_floor=4.6 - 1.6), CASES)


# -- the super single agent (paper 2), protocol "central": the server's released prefix sums ------

_SUPER_M = 3  # silos; the central noise is added once to their sum


def _super_agent_central(mutation: str | None, n: int, seed: int,
                         sampler: str = "float") -> Measurement:
    """``super-agent``'s protocol ``"central"`` (:func:`~privenv.privacy.federated.calibrate`,
    :func:`~privenv.privacy.federated.make_protocol`) with M = 3 silos, d = 1, B = 1, 16 syncs
    (κ = 5 levels), reward bound b = 5, at (ε, δ) = (4.6, 0.1). Neighbouring data: the user of
    round 1 at silo 0 is (φ = 1, y = b) in D and (1, −b) in D′, every other user (0, 0) (Δ_u = 2b,
    Δ_G = 0: 100 of the calibrated 101). View: the server's 16 moment prefixes Ũ_k (its Gram
    prefixes are the same under D and D′). Scores declared before sampling, as in the "tree"
    case: S₁ = Σ_j Ũ_{2^j} (the 5 nodes containing user 1: the memoised mechanism's LR statistic)
    and S₂ = Σ_k Ũ_k/popcount(k) (a redrawing server's), 21 thresholds each (α/2 each)."""
    from dataclasses import replace

    from privenv.privacy.federated import calibrate, make_protocol

    _, redraw, _ = tree_mutant_classes()
    kw: dict[str, Any] = dict(epsilon=_FED_EPS, delta=_FED_DELTA, M=_SUPER_M, d=1,
                              horizon=_FED_SYNCS, n_syncs=_FED_SYNCS, alpha=0.01,
                              reward_bound=_FED_B, sampler=sampler)
    cal = calibrate("central", **kw)
    if mutation == "one tree level missing":  # the budget of κ − 1 levels, the tree has κ
        short = calibrate("central", **{**kw, "n_syncs": _FED_SYNCS // 2})
        cal = replace(cal, sigma0=short.sigma0)
    elif mutation == "budget for one level":  # σ for κ = 1, the tree has κ = 5 levels
        cal = replace(cal, sigma0=calibrate("central", **{**kw, "n_syncs": 1}).sigma0)
    elif mutation == "sigma / sqrt(M)":  # as if M silos' noise were summed at the server
        cal = replace(cal, sigma0=cal.sigma0 / math.sqrt(_SUPER_M))
    ks = np.arange(1, _FED_SYNCS + 1)
    pop = np.array([bin(k).count("1") for k in ks], dtype=float)
    scores = []
    for side, y in enumerate((_FED_B, -_FED_B)):
        proto = make_protocol(cal, n, _SUPER_M, 1, _FED_SYNCS, np.random.default_rng([seed, side]))
        if mutation == "node noise redrawn":
            for analyzer, shape in ((proto.gram_analyzer, (1, 1)), (proto.moment_analyzer, (1,))):
                noise, analyzer.tree = analyzer.tree.noise, None  # (one tree at a time)
                analyzer.tree = redraw(n, shape, cal.sigma0, _FED_SYNCS, noise,
                                       symmetric=len(shape) == 2, sampler=sampler)
        acc = TreeScores(n, _FED_NODES, pop)
        for k in range(_FED_SYNCS):
            if k == 0:  # user (round 1, silo 0); every later batch is zero (a read-only view)
                gram, moment = np.zeros((n, _SUPER_M, 1, 1)), np.zeros((n, _SUPER_M, 1))
                gram[:, 0], moment[:, 0] = 1.0, y
            else:
                gram = np.broadcast_to(0.0, (n, _SUPER_M, 1, 1))
                moment = np.broadcast_to(0.0, (n, _SUPER_M, 1))
            _, u = proto.synchronize(gram, moment)
            acc.add(k, u[:, 0])
        del proto, u
        scores.append(acc.scores)
    correct = calibrate("central", **kw)
    sigma = correct.sigma0
    grid = np.linspace(-1.0, 4.0, 21)
    sds = (sigma * math.sqrt(len(_FED_NODES)), tree_s2_sd(sigma, _FED_SYNCS))
    return Measurement(tree_scores_bound(scores, grid, sds, _FED_DELTA),
                       correct.guarantee.epsilon, _FED_DELTA)


register(AuditCase(
    "super-agent-central", "paper 2's super single agent, protocol 'central' (a trusted server's "
    "binary mechanism on the sum of M = 3 silos; d = 1, B = 1, κ = 5, b = 5, σ by calibrate at "
    "(ε, δ) = (4.6, 0.1)): the 16 released moment prefixes; user (round 1, silo 0) (1, b) vs "
    "(1, −b); scores S₁ (memoised LR), S₂ (redrawn LR); mutants: node noise redrawn, one tree "
    "level missing from the budget, σ divided by √M", _super_agent_central, 200_000,
    ("node noise redrawn", "one tree level missing", "sigma / sqrt(M)"),
    power_floor=4.6 - 0.7), CASES)

register(AuditCase(
    "super-agent-central-exact", "super-agent-central with sampler='exact' (the server's tree on "
    "the grid with discrete Gaussian node noise; σ through zCDP, declared ε′ ≤ 4.6 by CKS20's "
    "conversion); mutants: node noise redrawn, σ budgeted for one level instead of κ = 5 (the "
    "zCDP calibration's slack hides a missing level: correct 3.3, that mutant 3.8), σ / √M",
    lambda mutation, n, seed: _super_agent_central(mutation, n, seed, "exact"), 200_000,
    ("budget for one level", "node noise redrawn", "sigma / sqrt(M)"),
    power_floor=4.6 - 1.6), CASES)
