r"""The federated privacy protocol P = (R, S, A) of paper 2 (Algorithm 2) and its calibrations.

Paper 2: Zhou & Chowdhury, *On Differentially Private Federated Linear Contextual Bandits* (ICLR
2024), §5 and Algorithm 2 (choices: docs/guides/federated.md). M silos synchronise at sync
k = 1, 2, … (after batch k of their users). Silo i's data for sync k are its batch sums
γ_{k,i} = (Σ φφᵀ, Σ yφ) over the users it served since the previous sync. The protocol has three
swappable parts, each batched over ``n_runs`` independent runs:

* **R, the local randomizer** (Algorithm 2, lines 4–7), run by every silo: with j* the index of
  the lowest set bit of k, form the p-sum of the last 2^{j*} batches of its own data and release
  it with fresh Gaussian noise — vector N(0, σ₀²I); matrix symmetric Gaussian (upper triangle
  i.i.d. N(0, σ₀²), mirrored). This is the distributed form of the binary mechanism,
  :class:`~privenv.privacy.tree.TreeMechanism` with a silo axis (node noise drawn once and
  memoised; its :meth:`~privenv.privacy.tree.TreeMechanism.released` are the M messages):
  :class:`TreeRandomizer`. Without privacy, :class:`BatchSumRandomizer` sends γ_{k,i} as is.
* **S, the shuffler** (between R and A): :class:`IdentityShuffler` (silo-level LDP) or
  :class:`UniformShuffler`, a uniform permutation of the M messages of each run (SDP), computed
  from run *i*'s own uniforms (so run *i*'s numbers never depend on the batch of runs).
* **A, the analyzer** (lines 13–14), at the server: :class:`TreeAnalyzer` sums the M messages
  into node j* and outputs the prefix sum over the set bits of k — the private W̃, Ũ broadcast
  to the silos; its noise has variance M·popcount(k)·σ₀² per coordinate. Without privacy,
  :class:`SumAnalyzer` keeps the running sum.

:class:`FederatedProtocol` chains them; :func:`make_protocol` builds the one a
:class:`Calibration` (from :func:`calibrate`) describes. Privacy holds for each silo's *messages*
whatever the shuffler, the analyzer and the other silos do (post-processing).

Calibrations (derivations in each function's docstring)
-------------------------------------------------------
Neighbouring relation (silo-level LDP, Definition 3.1 of paper 2 as we read it):
**replace-one** — the stream of pairs (φ_t, y_t) that one silo collected differs in one user's
pair, ‖φ‖₂ ≤ 1, \|y\| ≤ b (``reward_bound``). The actions are taken as given: a user's raw data also
steer that silo's *local* choices for the rest of the same batch (paper 2's Algorithm 1 uses
W_i, U_i locally), an influence this relation (like the paper's accounting) does not cover.
Sensitivities of one node (:func:`replace_one_sensitivities`):
Δ_G = ‖triu(φφᵀ − φ′φ′ᵀ)‖₂ ≤ √2 (1 if d = 1;
:func:`~privenv.privacy.wishart.gram_sensitivity`), Δ_u = ‖φy − φ′y′‖₂ ≤ 2b. Both are bounds
taken separately (jointly, the worst pair has a smaller Δ_G² + Δ_u²: the calibration is
conservative). The synthetic instance has Gaussian reward noise, so b must be *declared* and the
rewards clipped to [−b, b] before they enter the protocol (the agents do it and count the clipped
rewards); nothing is clipped silently.

* :func:`ldp_sigma0` — silo-level LDP by the exact all-Gaussian conversion (μ-GDP).
* :func:`sdp_amplification_sigma0` — shuffle DP by amplification, the authors' formula, in its
  validity domain only (:func:`check_sdp_amplification`).
* ``"none"`` — no noise, λ = √M.
* ``"central"`` — the trusted-server reference of paper 2 (its "super single agent" under central
  DP, §6.1): the silos send their raw batch sums to a server that sums them and releases the
  prefix sums of one binary mechanism over the syncs (:class:`CentralTreeAnalyzer`). A user still
  enters ≤ κ nodes with the same sensitivities, so σ is :func:`ldp_sigma0`'s exact calibration,
  but the noise is added once to the sum instead of once per silo: the server's variance is
  popcount(k)·σ² against the M·popcount(k)·σ₀² of silo-level LDP (the M^{1/4} of paper 2's
  comparison). Not a federated protocol — the silos' data leave them unprotected.
* ``"sdp-vector-sum"`` — shuffle DP by the P_Vec protocol (Cheu, Joseph, Mao & Peng 2021;
  :mod:`privenv.privacy.vector_sum`) inside the tree: :func:`vector_sum_levels`, and below.

P_Vec inside the tree (``"sdp-vector-sum"``). Here the *users* randomize, not the silos. User u
(round s, silo i) of batch k packs its pair into one point z = (triu(φφᵀ), yφ) of
c = d(d+3)/2 coordinates, ‖z‖₂ ≤ L = √(1 + b²) (:func:`vector_sum_point_bound`), and for every
released tree node containing batch k (≤ κ of them: level j's node c_j = ⌈k/2^j⌉ is released at
sync c_j·2^j iff c_j is odd and c_j·2^j ≤ K, like :class:`TreeRandomizer`'s nodes; the partial
nodes at the horizon are never released, so nobody randomizes for them) it runs P_Vec's local
randomizer afresh with that level's parameters (g_j, b_j for n_j = M·B·2^j points: M silos × B
rounds × 2^j batches). Its messages are unary bits (:mod:`~privenv.privacy.vector_sum`); the
shuffler mixes the bits of all n_j users of a node, whose per-coordinate counts are a sufficient
statistic of the shuffled multiset — so :class:`VectorSumRandomizer` keeps only the running
count sums per (run, level) (:func:`~privenv.privacy.vector_sum.encode_sum`, streaming: O(κ·c)
per run, no raw point is stored) and adds the users' Binomial(b_j, ¼) bits as one
Binomial(n_j·b_j, ¼) per coordinate when the node completes
(:func:`~privenv.privacy.vector_sum.binomial_noise_sum`). :class:`VectorSumAnalyzer` applies
P_Vec's analyzer to the node's counts and feeds the estimate, as a single message, to the
prefix over the set bits of k (:class:`TreeAnalyzer`). Guarantee: each node is (ε₀, δ₀)-shuffle
DP per user, replace-one (:func:`~privenv.privacy.vector_sum.node_guarantee`, which checks the
calibration), (ε₀, δ₀) = :func:`~privenv.privacy.vector_sum.node_budget` (ε, δ, κ), and a user's
≤ κ nodes compose to (ε, δ) (:func:`~privenv.privacy.vector_sum.compose_nodes`). The
communication is :func:`~privenv.privacy.vector_sum.messages_per_user` one-bit messages per user
and node.

Exact sampler (``sampler="exact"``, protocols ``"ldp"`` and ``"central"``). The trees round
each item (a silo's batch sums, or the server's sum) to the grid and draw discrete Gaussian node
noise from each run's words (:class:`~privenv.privacy.tree.TreeMechanism`, "Exact sampler").
Replacing a user moves the rounded upper triangle and moment of its node by at most
B_G = Δ_G/g + √(d(d+1)/2) and B_u = Δ_u/g + √d grid units (rounding included), so one node is
ρ_node = (B_G² + B_u²)/(2σ_k²)-zCDP (Canonne, Kamath & Steinke 2020) and a user's κ nodes
κ·ρ_node. The discrete Gaussian is not exactly μ-GDP, so σ₀ is the smallest value (at least the
float σ₀) with κ·ρ_node ≤ ρ(ε, δ), the largest ρ whose CKS20 conversion is (ε, δ)-DP; the declared
ε′ ≤ ε is that conversion of the exact κ·ρ_node. λ uses the drawn scale σ_k·g. The shuffle
protocols keep the float sampler: the amplification bound is proved for continuous Gaussian
messages, and P_Vec's messages are bits.

λ follows the authors' experiment code: λ = √M without privacy, λ = √(Mκ)·σ₀·(√(κ + log(1/α))
+ √d) with noise (:func:`private_lambda`; for ``"central"`` with one noise source instead of M,
λ = √κ·σ·(…)). For ``"sdp-vector-sum"`` σ₀ is the Gaussian-equivalent
σ₀ = max_j std_j/√M, std_j the worst-case per-coordinate std of a level-j node estimate
(:func:`~privenv.privacy.vector_sum.max_error_std`), so that M·popcount(k)·σ₀² bounds the
server's noise variance as for the Gaussian protocols and the same λ formula applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privenv._validation import check_choice, check_delta, check_epsilon, check_int, check_real

from .accounting import gaussian_epsilon, gaussian_rho, tree_levels
from .exact import calibrate_gaussian
from .guarantee import PrivacyGuarantee
from .mechanisms import check_positive, gaussian_sigma_analytic
from .tree import NoiseSource, TreeMechanism, lowest_set_bit, run_uniforms
from .vector_sum import (
    VECTOR_SUM_S,
    VectorSumParameters,
    analyze,
    binomial_noise_sum,
    compose_nodes,
    encode_sum,
    max_error_std,
    messages_per_user,
    node_budget,
    node_guarantee,
    vector_sum_parameters,
)
from .wishart import gram_sensitivity

__all__ = [
    "PROTOCOLS",
    "SDP_MAX_EPSILON",
    "UNIT",
    "BatchSumRandomizer",
    "CENTRAL",
    "Calibration",
    "CentralTreeAnalyzer",
    "FederatedProtocol",
    "IdentityShuffler",
    "SumAnalyzer",
    "TreeAnalyzer",
    "TreeRandomizer",
    "UniformShuffler",
    "VectorSumAnalyzer",
    "VectorSumRandomizer",
    "aggregate_epsilon",
    "calibrate",
    "check_sdp_amplification",
    "federated_kappa",
    "ldp_epsilon",
    "ldp_sigma0",
    "make_protocol",
    "message_floats",
    "private_lambda",
    "replace_one_sensitivities",
    "sdp_amplification_sigma0",
    "vector_sum_levels",
    "vector_sum_point_bound",
]

#: protocol names of paper 2's variants
PROTOCOLS = ("none", "ldp", "sdp-amplification", "sdp-vector-sum")
#: the trusted-server reference (paper 2's "super single agent" under central DP)
CENTRAL = "central"
#: the protected unit of every federated guarantee
UNIT = "(context, reward) of one user of a silo"
#: largest ε for which the amplification formula is used (its small-ε regime)
SDP_MAX_EPSILON = 1.0


# ---------------------------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------------------------


def federated_kappa(n_syncs: int) -> int:
    """κ = ⌊log₂ K⌋ + 1 for at most K synchronisations (K = T/B for fixed batches): the number of
    tree levels, i.e. the largest number of released nodes (p-sums) containing one batch."""
    return tree_levels(check_int("n_syncs", n_syncs, low=1))


def replace_one_sensitivities(
    d: int, reward_bound: float, feature_bound: float = 1.0
) -> tuple[float, float]:
    r"""(Δ_G, Δ_u): L2 sensitivities of one node of the Gram tree (its upper triangle) and of the
    moment tree when one user's (φ, y), ‖φ‖₂ ≤ L, \|y\| ≤ b, is replaced by another.

    Δ_G = √2·L² (L² if d = 1) (:func:`~privenv.privacy.wishart.gram_sensitivity`);
    Δ_u = sup ‖φy − φ′y′‖₂ = 2·L·b (φ′ = φ, y′ = −y): twice the add/remove sensitivity L·b.
    """
    b = check_positive(reward_bound, "reward_bound")
    lb = check_positive(feature_bound, "feature_bound")
    return gram_sensitivity(d, lb, "replace-one"), 2.0 * lb * b


def _node_sensitivity(gram_sens: float, moment_sens: float) -> float:
    """√(Δ_G² + Δ_u²): the two trees release their node at the same sync, on the same users."""
    return math.hypot(check_positive(gram_sens, "gram_sensitivity"),
                      check_positive(moment_sens, "moment_sensitivity"))


def ldp_sigma0(
    epsilon: float, delta: float, kappa: int, gram_sens: float, moment_sens: float
) -> float:
    """Per-silo, per-node noise σ₀ for silo-level (ε, δ)-LDP (exact Gaussian calibration).

    Derivation. Fix a silo and a user u of batch k. The silo's messages are the noisy p-sums of
    its two trees; u's pair enters exactly the nodes whose dyadic interval contains k and which
    complete by the last sync — at most κ per tree (:func:`federated_kappa`). Each such node
    is a Gaussian mechanism on u's pair, with L2 sensitivity Δ_G (Gram, upper triangle with
    i.i.d. N(0, σ₀²)) or Δ_u (moment, N(0, σ₀²I)); the other nodes do not depend on u. The
    nodes' inputs are chosen adaptively (later data depend on earlier releases), and adaptive
    composition of Gaussian mechanisms is exactly μ-GDP with
    μ² = Σ Δᵢ²/σᵢ² = κ(Δ_G² + Δ_u²)/σ₀² (Dong, Roth & Su 2022, Cor. 3.3), whose exact (ε, δ)
    curve is δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Thm 8). So the
    smallest σ₀ is the analytic-Gaussian σ for the total sensitivity √(κ(Δ_G² + Δ_u²)):
    σ₀ = √(κ(Δ_G² + Δ_u²)) / μ*(ε, δ). Equivalently ρ = κ(Δ_G² + Δ_u²)/(2σ₀²)-zCDP
    (Bun & Steinke 2016, Prop. 1.6, Lemma 1.7). The shuffler and the analyzer are
    post-processing; so are the actions the other silos take from W̃, Ũ.

    Paper 2 states the total noise level σ² = 8Mκ²(log(2/δ) + ε)/ε², i.e. σ₀² = 8κ(log(2/δ) + ε)/ε²
    per silo and node (a Bun–Steinke-style bound with Δ = 2); the exact curve needs less noise for
    the same (ε, δ) and sensitivities. The authors' code uses σ₀² = κ(log(1/δ) + ε)/ε², which
    ignores the replace-one sensitivities (too small).
    """
    kappa = check_int("kappa", kappa, low=1)
    total = math.sqrt(kappa) * _node_sensitivity(gram_sens, moment_sens)
    return gaussian_sigma_analytic(check_epsilon(epsilon), check_delta(delta), total)


def ldp_epsilon(
    sigma0: float, delta: float, kappa: int, gram_sens: float, moment_sens: float
) -> float:
    """Exact ε at δ of one silo's message stream at noise σ₀ (inverse of :func:`ldp_sigma0`)."""
    sigma0 = check_positive(sigma0, "sigma0")
    kappa = check_int("kappa", kappa, low=1)
    mu = math.sqrt(kappa) * _node_sensitivity(gram_sens, moment_sens) / sigma0
    return gaussian_epsilon(check_delta(delta), mu)


def aggregate_epsilon(
    sigma0: float, delta: float, kappa: int, M: int, gram_sens: float, moment_sens: float
) -> float:
    """Exact ε at δ of the *sum over silos* of each node — a post-processing of the shuffled
    messages, so a **lower bound** on the ε of any shuffle protocol built on these messages.

    The server's node j is the silos' true p-sums plus N(0, Mσ₀²) per coordinate; replacing one
    user moves ≤ κ nodes by the node sensitivities, so the sum is exactly μ-GDP with
    μ = √(κ(Δ_G² + Δ_u²))/(√M σ₀) — and this is tight (the sum's law is a Gaussian shift).
    """
    M = check_int("M", M, low=1)
    return ldp_epsilon(check_positive(sigma0, "sigma0") * math.sqrt(M), delta, kappa,
                       gram_sens, moment_sens)


def sdp_amplification_sigma0(
    epsilon: float, delta: float, kappa: int, M: int, horizon: int, sensitivity: float = 1.0
) -> float:
    """Per-silo noise for shuffle DP by amplification (paper 2, §6.2), the authors'
    formula: σ₀ = Δ·√(κ log(1/δ) log(1 + κ/(Tδ)) log(Mκ/δ)) / (ε√M).

    T is the horizon (rounds), κ the tree levels, M the number of silos. The formula is the
    closed form of paper 2's amplification lemma for Gaussian mechanisms on datasets of size
    > 1 (its Appendix E, not in our excerpt), with the constants of the authors' public
    experiment code; it is *not* re-derived here. It relies on the small-ε regime of
    amplification-by-shuffling bounds (ε ≤ 1, :data:`SDP_MAX_EPSILON`) and is only used where it
    passes the necessary check of :func:`check_sdp_amplification`. Δ: the authors' code multiplies
    by the feature bound L = 1 only; we multiply by the node's replace-one sensitivity
    √(Δ_G² + Δ_u²) (passed by :func:`calibrate`) so that the noise scales with the data's range
    like every other calibration here (more noise than the authors' by that factor).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    kappa = check_int("kappa", kappa, low=1)
    M = check_int("M", M, low=1)
    horizon = check_int("horizon", horizon, low=1)
    sensitivity = check_positive(sensitivity, "sensitivity")
    inner = (kappa * math.log(1.0 / delta) * math.log1p(kappa / (horizon * delta))
             * math.log(M * kappa / delta))
    return sensitivity * math.sqrt(inner) / (epsilon * math.sqrt(M))


def check_sdp_amplification(
    epsilon: float, delta: float, sigma0: float, kappa: int, M: int, gram_sens: float,
    moment_sens: float,
) -> None:
    """Raise ``ValueError`` where the amplification calibration cannot be relied on.

    1. ε ≤ :data:`SDP_MAX_EPSILON` (= 1): amplification-by-shuffling bounds of this form
       (Feldman, McMillan & Talwar 2021; paper 2, Appendix E) are stated for small ε.
    2. A necessary condition we *can* prove: the per-node sum over silos is a post-processing of
       the shuffled messages and is exactly μ-GDP (:func:`aggregate_epsilon`); if its ε at δ
       already exceeds the target, the claimed (ε, δ) is false. (Example: ε = 0.2, δ = 0.1,
       T = 10⁴, B = 25, M = 100 — paper 2's vector-sum setting — fails: log(1 + κ/(Tδ)) ≈ 0.009
       removes almost all the noise.)
    """
    if epsilon > SDP_MAX_EPSILON:
        raise ValueError(
            f"epsilon must be in (0, {SDP_MAX_EPSILON:g}] for protocol='sdp-amplification' (the "
            f"small-epsilon regime of the amplification lemma), got {epsilon!r}; use "
            "protocol='ldp' or 'sdp-vector-sum' for larger epsilon"
        )
    floor = aggregate_epsilon(sigma0, delta, kappa, M, gram_sens, moment_sens)
    if floor > epsilon:
        raise ValueError(
            f"protocol='sdp-amplification' cannot give (epsilon={epsilon:g}, delta={delta:g}) "
            f"here: its noise sigma0={sigma0:.6g} leaves the server's sum of the M={M} messages "
            f"alone at epsilon={floor:.6g} (exact Gaussian), already above the target; the "
            "authors' formula is outside its validity domain (choose a smaller delta or "
            "protocol='ldp')"
        )


def private_lambda(M: int, kappa: int, sigma0: float, alpha: float, d: int) -> float:
    """λ = √(Mκ)·σ₀·(√(κ + log(1/α)) + √d) (the authors' experiment code): the server's Gram
    noise after k syncs has upper-triangle entries N(0, M·popcount(k)·σ₀²), popcount ≤ κ, and
    λ is of the order of its spectral norm over the ≤ 2^κ syncs (union bound: √κ inside)."""
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    return (math.sqrt(M * kappa) * check_positive(sigma0, "sigma0")
            * (math.sqrt(kappa + math.log(1.0 / alpha)) + math.sqrt(d)))


def vector_sum_point_bound(reward_bound: float, feature_bound: float = 1.0) -> float:
    r"""L: the ℓ2 bound of one user's packed point z = (triu(φφᵀ), yφ) for ‖φ‖₂ ≤ L_φ, \|y\| ≤ b.

    ‖triu(φφᵀ)‖₂² = (‖φ‖⁴ + Σᵢφᵢ⁴)/2 ≤ ‖φ‖⁴ and ‖yφ‖₂ ≤ b‖φ‖, so ‖z‖₂ ≤ L_φ·√(L_φ² + b²)
    (= √(1 + b²) for unit features), attained at φ = L_φ·e₁, y = ±b.
    """
    b = check_positive(reward_bound, "reward_bound")
    lb = check_positive(feature_bound, "feature_bound")
    return lb * math.sqrt(lb * lb + b * b)


def vector_sum_levels(
    epsilon: float, delta: float, kappa: int, M: int, d: int, batch: int,
    s: float = VECTOR_SUM_S,
) -> tuple[VectorSumParameters, ...]:
    """P_Vec's parameters of each tree level j = 0, …, κ − 1: n_j = M·B·2^j points, at the
    per-node budget (ε₀, δ₀) = :func:`~privenv.privacy.vector_sum.node_budget` (ε, δ, κ), with
    scale ``s`` of b (default :data:`~privenv.privacy.vector_sum.VECTOR_SUM_S`)."""
    kappa = check_int("kappa", kappa, low=1)
    M = check_int("M", M, low=1)
    batch = check_int("batch", batch, low=1)
    eps0, delta0 = node_budget(epsilon, delta, kappa)
    return tuple(vector_sum_parameters(M * batch * (1 << j), check_int("d", d, low=1), eps0,
                                       delta0, s) for j in range(kappa))


def message_floats(d: int) -> int:
    """Numbers one silo uploads per sync: the upper triangle of its Gram message and its moment
    vector, d(d+1)/2 + d."""
    d = check_int("d", d, low=1)
    return d * (d + 1) // 2 + d


@dataclass(frozen=True)
class Calibration:
    """Everything a protocol variant fixes before the run starts (all public).

    Attributes:
        protocol: one of :data:`PROTOCOLS`.
        sigma0: per-silo, per-node noise standard deviation (0 for ``"none"``; for
            ``"central"`` the server's node noise).
        kappa: tree levels κ (nodes containing one batch, at most).
        lambda_: the ridge λ of paper 2's Algorithm 1.
        guarantee: the declared :class:`PrivacyGuarantee`.
        gram_sensitivity, moment_sensitivity: Δ_G, Δ_u of one node (0 for ``"none"``).
        rho_node: zCDP cost of one released node (both trees) to each user in it, at the
            *message* level (before any shuffling): (Δ_G² + Δ_u²)/(2σ₀²); 0 for ``"none"``
            and ``"sdp-vector-sum"``.
        reward_bound: b, the declared reward bound (``None`` for ``"none"``).
        point_bound: ``"sdp-vector-sum"``: L, the ℓ2 bound of a packed point
            (:func:`vector_sum_point_bound`); 0 otherwise.
        vector_sum: ``"sdp-vector-sum"``: P_Vec's parameters of each level
            (:func:`vector_sum_levels`); empty otherwise.
        epsilon_node: ``"sdp-vector-sum"``: ε₀ of one node to each user in it (the ledger's
            charge; δ₀ is ``vector_sum[0].delta``); 0 otherwise.
        sampler: ``"float"`` or ``"exact"`` (``"ldp"`` and ``"central"``: the trees' items on the
            grid and discrete Gaussian node noise; module docstring, "Exact sampler").

    For ``"sdp-vector-sum"``, ``sigma0`` is the Gaussian-equivalent max_j std_j/√M (module
    docstring) and Δ_G, Δ_u are 0 (P_Vec's sensitivity is in :mod:`~privenv.privacy.vector_sum`).
    """

    protocol: str
    sigma0: float
    kappa: int
    lambda_: float
    guarantee: PrivacyGuarantee
    gram_sensitivity: float = 0.0
    moment_sensitivity: float = 0.0
    rho_node: float = 0.0
    reward_bound: float | None = None
    point_bound: float = 0.0
    vector_sum: tuple[VectorSumParameters, ...] = ()
    epsilon_node: float = 0.0
    sampler: str = "float"

    @property
    def private(self) -> bool:
        return self.protocol != "none"

    @property
    def rho_stream(self) -> float:
        """zCDP of one silo's whole message stream per user, κ·ρ_node (the ledger's budget)."""
        return self.kappa * self.rho_node


def calibrate(
    protocol: str,
    *,
    epsilon: float,
    delta: float,
    M: int,
    d: int,
    horizon: int,
    n_syncs: int,
    alpha: float,
    reward_bound: float | None,
    batch: int | None = None,
    vector_sum_scale: float = VECTOR_SUM_S,
    sampler: str = "float",
) -> Calibration:
    """σ₀, κ, λ and the guarantee of a protocol variant (see the module docstring).

    Args:
        protocol: ``"none"``, ``"ldp"``, ``"sdp-amplification"``, ``"sdp-vector-sum"`` or
            ``"central"`` (a trusted server: the super single agent's calibration).
        epsilon, delta: the target (ε, δ) per user (ignored for ``"none"``).
        M, d: silos and feature dimension.
        horizon: T (rounds).
        n_syncs: the largest number of synchronisations (T // B for fixed batches; T for a
            data-dependent schedule).
        alpha: failure probability α in λ.
        reward_bound: b, the declared bound the rewards are clipped to (required with noise).
        batch: B, rounds per batch (fixed batches); required by ``"sdp-vector-sum"``, whose
            node sizes n_j = M·B·2^j must be known in advance.
        vector_sum_scale: s of P_Vec's b (``"sdp-vector-sum"`` only).
        sampler: ``"float"`` (default) or ``"exact"`` (``"ldp"``, ``"central"`` and ``"none"``
            only; module docstring, "Exact sampler").
    """
    check_choice("protocol", protocol, (*PROTOCOLS, CENTRAL))
    sampler = check_choice("sampler", sampler, ("float", "exact"))
    if sampler == "exact" and protocol.startswith("sdp"):
        raise ValueError(
            f"sampler='exact' is not available for protocol={protocol!r}: "
            + ("the amplification bound is proved for continuous Gaussian messages"
               if protocol == "sdp-amplification" else
               "P_Vec's messages are bits, it adds no Laplace or Gaussian noise")
            + "; use protocol='ldp' or 'central', or sampler='float'")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    M = check_int("M", M, low=1)
    d = check_int("d", d, low=1)
    horizon = check_int("horizon", horizon, low=1)
    kappa = federated_kappa(n_syncs)
    if protocol == "none":
        return Calibration("none", 0.0, kappa, math.sqrt(M), PrivacyGuarantee.none(UNIT))
    if reward_bound is None:
        raise ValueError(
            f"reward_bound must be a positive number for protocol={protocol!r}: rewards are "
            "clipped to [-reward_bound, reward_bound] before they enter the protocol, and the "
            "calibration depends on it; the env declares no bound (e.g. Gaussian reward noise), "
            "so pass reward_bound explicitly"
        )
    if protocol == "sdp-vector-sum":
        return _calibrate_vector_sum(epsilon, delta, M, d, kappa, alpha, reward_bound, batch,
                                     vector_sum_scale)
    gram_sens, moment_sens = replace_one_sensitivities(d, reward_bound)
    node = _node_sensitivity(gram_sens, moment_sens)
    sources = M  # independent noise sources in the server's sum (one per silo)
    if protocol in ("ldp", CENTRAL):
        model = "silo-local" if protocol == "ldp" else "central"
        sigma0 = ldp_sigma0(epsilon, delta, kappa, gram_sens, moment_sens)
        guarantee = PrivacyGuarantee(model, epsilon, delta, UNIT, "replace-one")
        if protocol == CENTRAL:  # one stream of κ nodes, noised once at the trusted server
            sources = 1
        if sampler == "exact":
            return _calibrate_exact(protocol, model, epsilon, delta, d, kappa, alpha, sources,
                                    gram_sens, moment_sens, sigma0, reward_bound)
    else:  # sdp-amplification
        sigma0 = sdp_amplification_sigma0(epsilon, delta, kappa, M, horizon, node)
        check_sdp_amplification(epsilon, delta, sigma0, kappa, M, gram_sens, moment_sens)
        guarantee = PrivacyGuarantee("shuffle", epsilon, delta, UNIT, "replace-one")
    return Calibration(
        protocol,
        sigma0,
        kappa,
        private_lambda(sources, kappa, sigma0, alpha, d),
        guarantee,
        gram_sens,
        moment_sens,
        gaussian_rho(sigma0, node),
        reward_bound,
    )


def _calibrate_exact(protocol: str, model: str, epsilon: float, delta: float, d: int, kappa: int,
                     alpha: float, sources: int, gram_sens: float, moment_sens: float,
                     float_sigma0: float, reward_bound: float) -> Calibration:
    """``"ldp"`` or ``"central"`` with the exact sampler: σ₀ through zCDP, rounding included
    (module docstring, "Exact sampler")."""
    cal = calibrate_gaussian(epsilon, delta, [(gram_sens, d * (d + 1) // 2), (moment_sens, d)],
                             kappa, float_sigma0)
    guarantee = PrivacyGuarantee(model, cal.epsilon, delta, UNIT, "replace-one", sampler="exact")
    return Calibration(protocol, cal.sigma, kappa,
                       private_lambda(sources, kappa, cal.noise.sigma, alpha, d), guarantee,
                       gram_sens, moment_sens, cal.rho / kappa, reward_bound, sampler="exact")


def _calibrate_vector_sum(
    epsilon: float, delta: float, M: int, d: int, kappa: int, alpha: float,
    reward_bound: float, batch: int | None, vector_sum_scale: float = VECTOR_SUM_S,
) -> Calibration:
    """``"sdp-vector-sum"``: per-level P_Vec parameters, each node's checked (ε₀, δ₀) guarantee
    (:func:`~privenv.privacy.vector_sum.node_guarantee` raises if the scale s is too small) and
    their composition over κ nodes (module docstring)."""
    if batch is None:
        raise ValueError(
            "batch must be a positive integer for protocol='sdp-vector-sum': P_Vec's parameters "
            "depend on the number of users n = M*batch*2^j of each tree node, so the schedule "
            "must be fixed batches (FedUCB's data-adaptive schedule cannot use it)"
        )
    batch = check_int("batch", batch, low=1)
    L = vector_sum_point_bound(reward_bound)
    levels = vector_sum_levels(epsilon, delta, kappa, M, d, batch, vector_sum_scale)
    nodes = [node_guarantee(p, unit=UNIT) for p in levels]  # each level checked, all (ε₀, δ₀)
    guarantee = compose_nodes(nodes[0], kappa)
    sigma0 = max(max_error_std(L, p) for p in levels) / math.sqrt(M)
    return Calibration(
        "sdp-vector-sum", sigma0, kappa, private_lambda(M, kappa, sigma0, alpha, d), guarantee,
        reward_bound=reward_bound, point_bound=L, vector_sum=levels,
        epsilon_node=levels[0].epsilon,
    )


# ---------------------------------------------------------------------------------------------
# R: local randomizers
# ---------------------------------------------------------------------------------------------


def _live_runs(live: np.ndarray | None, n_runs: int) -> np.ndarray:
    if live is None:
        return np.arange(n_runs)
    live = np.asarray(live)
    if live.shape != (n_runs,) or live.dtype != bool:
        raise ValueError(f"live must be a boolean mask of shape ({n_runs},), got dtype "
                         f"{live.dtype} and shape {live.shape}")
    return np.flatnonzero(live)


class BatchSumRandomizer:
    """R without privacy: each silo sends its batch sums γ_{k,i} = (W_i, U_i) as they are."""

    def collect(self, x: np.ndarray, y: np.ndarray, live: np.ndarray | None) -> None:
        """Per-round hook: unused (the silo's batch sums arrive at the sync)."""

    def release(
        self, gram: np.ndarray, moment: np.ndarray, runs: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if live is None:  # every run: the sums themselves (read only downstream), no copy
            return gram, moment
        return gram[runs], moment[runs]


class TreeRandomizer:
    """R of Algorithm 2 (lines 4–7) for all silos of all runs: the distributed binary mechanism.

    Two :class:`~privenv.privacy.tree.TreeMechanism` in distributed form, shapes ``(M, d, d)``
    (symmetric Gaussian node noise) and ``(M, d)``, over ``n_syncs`` items (batches). At sync k
    of a run, each silo's batch sums are appended; the node of level j* = lowest set bit of k
    completes (α_{j*} = γ_k + Σ_{j<j*} α_j, line 6) and gets its noise once (line 7). The
    messages are the M noisy p-sums of that node.

    Args:
        n_runs, M, d: shapes.
        sigma0: per-node noise σ₀ > 0.
        n_syncs: the largest number of syncs of a run (the trees' horizon: κ levels).
        noise: a :class:`~privenv.seeding.RunNoise` (the agent's) or a ``Generator``.
    """

    def __init__(self, n_runs: int, M: int, d: int, sigma0: float, n_syncs: int,
                 noise: NoiseSource, sampler: str = "float") -> None:
        self.gram_tree = TreeMechanism(n_runs, (M, d, d), sigma0, n_syncs, noise, symmetric=True,
                                       sampler=sampler)
        self.moment_tree = TreeMechanism(n_runs, (M, d), sigma0, n_syncs, noise, sampler=sampler)
        self.levels = self.gram_tree.levels

    def collect(self, x: np.ndarray, y: np.ndarray, live: np.ndarray | None) -> None:
        """Per-round hook: unused (the silo's batch sums arrive at the sync)."""

    def release(
        self, gram: np.ndarray, moment: np.ndarray, runs: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The M noisy p-sums of the completed node of each run in ``runs`` (= the live runs):
        shapes ``(len(runs), M, d, d)`` and ``(len(runs), M, d)``."""
        self.gram_tree.add(gram, live, prefix=False)  # the silos release p-sums, not prefixes
        self.moment_tree.add(moment, live, prefix=False)
        return self.gram_tree.released()[runs], self.moment_tree.released()[runs]


class VectorSumRandomizer:
    """R of ``"sdp-vector-sum"``: every user runs P_Vec's local randomizer once for each released
    tree node containing its batch (module docstring), for all silos of all runs.

    Kept per run: the number k of syncs so far (so the current batch is k + 1), and per level j
    the count sums of the rounding parts of the unary messages of the open level-j node
    (:func:`~privenv.privacy.vector_sum.encode_sum`) and its number of users — O(κ·c) integers,
    never a raw point. At sync k the node of level j* = lowest set bit of k completes: its
    users' Binomial(b_{j*}, ¼) bits are added (one Binomial(n·b, ¼) per coordinate,
    :func:`~privenv.privacy.vector_sum.binomial_noise_sum`) and the per-coordinate counts — what
    the shuffled multiset of bits reveals — are the message. Randomness: run r's own stream of
    ``noise`` (a :class:`~privenv.seeding.RunNoise`: independent of the batch of runs).

    Args:
        n_runs, M, d: shapes.
        reward_bound: b (rewards must already be clipped to [−b, b]).
        levels: P_Vec's parameters per tree level (:func:`vector_sum_levels`), n_j = M·B·2^j.
        n_syncs: K, the largest number of syncs of a run (nodes completing later are never
            released: no user randomizes for them).
        noise: a :class:`~privenv.seeding.RunNoise` (the agent's) or a ``Generator``.
    """

    def __init__(self, n_runs: int, M: int, d: int, reward_bound: float,
                 levels: tuple[VectorSumParameters, ...], n_syncs: int,
                 noise: NoiseSource) -> None:
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self.M = check_int("M", M, low=1)
        self.d = check_int("d", d, low=1)
        self.reward_bound = check_positive(reward_bound, "reward_bound")
        self.L = vector_sum_point_bound(self.reward_bound)
        self.n_syncs = check_int("n_syncs", n_syncs, low=1)
        self.params = tuple(levels)
        self.levels = len(self.params)
        if self.levels != federated_kappa(self.n_syncs):
            raise ValueError(f"levels must hold one VectorSumParameters per tree level "
                             f"({federated_kappa(self.n_syncs)} for n_syncs={self.n_syncs}), "
                             f"got {self.levels}")
        for p in self.params:
            if p.d != self.d or p.n % self.M:
                raise ValueError(f"levels must be P_Vec parameters for d={self.d} and a multiple "
                                 f"of M={self.M} users per node, got {p}")
        self.c = self.d * (self.d + 3) // 2  # packed point: triu(φφᵀ), then yφ
        self._iu = np.triu_indices(self.d)
        self.noise = noise
        self.k = np.zeros(self.n_runs, dtype=np.int64)
        self.counts = np.zeros((self.n_runs, self.levels, self.c), dtype=np.int64)
        self.users = np.zeros((self.n_runs, self.levels), dtype=np.int64)
        #: one-bit messages each silo sent so far (messages_per_user per user and node)
        self.bits_per_silo = np.zeros(self.n_runs, dtype=np.int64)

    def pack(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The points z = (triu(φφᵀ), yφ), shape ``(..., c)``, c = d(d+3)/2."""
        return np.concatenate([x[..., self._iu[0]] * x[..., self._iu[1]], y[..., None] * x],
                              axis=-1)

    def entered_levels(self, batch: np.ndarray) -> np.ndarray:
        """Boolean (len(batch), κ): level j's node containing batch k is released (c = ⌈k/2^j⌉
        odd and c·2^j ≤ K)."""
        j = np.arange(self.levels)
        c = ((np.asarray(batch, dtype=np.int64)[:, None] - 1) >> j) + 1
        return (c % 2 == 1) & ((c << j) <= self.n_syncs)

    def collect(self, x: np.ndarray, y: np.ndarray, live: np.ndarray | None) -> None:
        r"""Randomize the round's users: x (n_runs, M, d) with ‖φ‖₂ ≤ 1, y (n_runs, M) with
        \|y\| ≤ b (rows of runs that are not live are ignored)."""
        runs = _live_runs(live, self.n_runs)
        x, y = np.asarray(x, dtype=float)[runs], np.asarray(y, dtype=float)[runs]
        if x.shape != (runs.size, self.M, self.d) or y.shape != (runs.size, self.M):
            raise ValueError(f"x and y must have shapes (n_runs, {self.M}, {self.d}) and "
                             f"(n_runs, {self.M}), got {x.shape} and {y.shape}")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise ValueError("x and y must be finite")
        norm = np.sqrt(np.einsum("nmd,nmd->nm", x, x))
        if np.any(norm > 1.0 + 1e-12):
            raise ValueError(f"the features x must have Euclidean norm <= 1 (feature_bound), "
                             f"got {float(norm.max())!r}")
        if np.any(np.abs(y) > self.reward_bound):
            raise ValueError(f"the rewards y must lie in [-reward_bound, reward_bound] = "
                             f"[{-self.reward_bound:g}, {self.reward_bound:g}] (clip them "
                             f"first), got max |y| = {float(np.abs(y).max())!r}")
        z = self.pack(x, y)
        entered = self.entered_levels(self.k[runs] + 1)
        for j in range(self.levels):
            sel = np.flatnonzero(entered[:, j])
            if sel.size:
                r = runs[sel]
                self.counts[r, j] += encode_sum(z[sel], self.L, self.params[j], self.noise, r)
                self.users[r, j] += self.M

    def release(
        self, gram: np.ndarray, moment: np.ndarray, runs: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The completed node's per-coordinate counts of each run in ``runs`` as one message:
        shapes ``(len(runs), 1, d(d+1)/2)`` (Gram part) and ``(len(runs), 1, d)``. The batch
        sums ``gram``, ``moment`` are not used (the users randomized in :meth:`collect`)."""
        self.k[runs] += 1
        j = lowest_set_bit(self.k[runs])
        out = np.empty((runs.size, 1, self.c), dtype=np.int64)
        for level in np.unique(j):
            sel = np.flatnonzero(j == level)
            r, p = runs[sel], self.params[level]
            if np.any(self.users[r, level] != p.n):
                raise RuntimeError(f"a level-{level} node has {self.users[r, level]} users, "
                                   f"but its P_Vec parameters are for n={p.n} (batch size?)")
            out[sel, 0] = self.counts[r, level] + binomial_noise_sum(p, self.c, self.noise, r)
            self.bits_per_silo[r] += p.n // self.M * messages_per_user(p, self.c)
            self.counts[r, level] = 0
            self.users[r, level] = 0
        cg = self.d * (self.d + 1) // 2
        return out[..., :cg], out[..., cg:]


# ---------------------------------------------------------------------------------------------
# S: shufflers
# ---------------------------------------------------------------------------------------------


class IdentityShuffler:
    """S = identity (silo-level LDP): the server knows which silo sent which message."""

    def shuffle(self, messages: np.ndarray, runs: np.ndarray) -> np.ndarray:
        return messages


class UniformShuffler:
    """S = a uniform random permutation of the M messages of each run (shuffle DP).

    The permutation of run r is the argsort of M fresh uniforms of run r's own stream (ties have
    probability 0), so it is uniform over the M! orders and independent of the other runs and of
    the batch of runs. Every call draws a fresh permutation (the Gram and moment messages are
    shuffled independently, as two instances of Algorithm 2).

    Args:
        noise: a :class:`~privenv.seeding.RunNoise` or a ``Generator``.
    """

    def __init__(self, noise: NoiseSource) -> None:
        self.noise = noise

    def permutations(self, runs: np.ndarray, M: int) -> np.ndarray:
        """One uniform permutation of range(M) per run in ``runs``: shape ``(len(runs), M)``."""
        return np.argsort(run_uniforms(self.noise, runs, M), axis=1, kind="stable")

    def shuffle(self, messages: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """``messages`` (len(runs), M, …) with each run's M messages permuted."""
        perm = self.permutations(runs, messages.shape[1])
        return messages[np.arange(len(runs))[:, None], perm]


# ---------------------------------------------------------------------------------------------
# A: analyzers
# ---------------------------------------------------------------------------------------------


class SumAnalyzer:
    """A without privacy: W̃ ← W̃ + Σ_i γ_{k,i} (the running sum of everything synchronised)."""

    def __init__(self, n_runs: int, shape: tuple[int, ...]) -> None:
        self.total = np.zeros((n_runs, *shape))

    def aggregate(self, messages: np.ndarray, runs: np.ndarray) -> np.ndarray:
        self.total[runs] += messages.sum(axis=1)
        return self.total


class TreeAnalyzer:
    """A of Algorithm 2 (lines 13–14): the server's half of the distributed tree.

    Keeps, per run, its count k of syncs and the synchronised noisy nodes. At sync k: node
    j* = lowest set bit of k is the sum of the M (shuffled) messages (line 13); the output is
    the sum of the nodes of the set bits of k (line 14). It sees only the messages.
    """

    def __init__(self, n_runs: int, levels: int, shape: tuple[int, ...]) -> None:
        self.nodes = np.zeros((n_runs, levels, *shape))
        self.k = np.zeros(n_runs, dtype=np.int64)
        self._bits = 1 << np.arange(levels, dtype=np.int64)
        self._extra = (slice(None), slice(None)) + (None,) * len(shape)

    def aggregate(self, messages: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """Receive the messages (len(runs), M, …) of sync k; return the prefixes of all runs."""
        self.k[runs] += 1
        j = lowest_set_bit(self.k[runs])
        self.nodes[runs, j] = messages.sum(axis=1)  # line 13: Σ_i of the M noisy p-sums
        return self.prefix()

    def prefix(self) -> np.ndarray:
        """Σ over the set bits j of k of node j (line 14), shape ``(n_runs, …)``."""
        used = (self.k[:, None] & self._bits) != 0
        return (self.nodes * used[self._extra]).sum(axis=1)


class CentralTreeAnalyzer:
    """A of the central model (``"central"``): a trusted server sums the silos' raw batch sums
    and releases the private prefix sums of one binary mechanism over the syncs
    (:class:`~privenv.privacy.tree.TreeMechanism`, node noise drawn once and memoised).

    Args:
        n_runs: runs.
        shape: ``(d, d)`` (symmetric Gaussian node noise) or ``(d,)``.
        sigma: node noise σ.
        n_syncs: the largest number of syncs of a run (κ levels).
        noise: a :class:`~privenv.seeding.RunNoise` (the agent's) or a ``Generator``.
        sampler: the tree's sampler (``"float"`` or ``"exact"``).
    """

    def __init__(self, n_runs: int, shape: tuple[int, ...], sigma: float, n_syncs: int,
                 noise: NoiseSource, sampler: str = "float") -> None:
        self.tree = TreeMechanism(n_runs, shape, sigma, n_syncs, noise,
                                  symmetric=len(shape) == 2, sampler=sampler)
        self.levels = self.tree.levels

    def aggregate(self, messages: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """Receive the raw batch sums (len(runs), M, …) of sync k; return the prefixes of all
        runs."""
        total = np.zeros((self.tree.n_runs, *self.tree.shape))
        total[runs] = messages.sum(axis=1)
        live = np.zeros(self.tree.n_runs, dtype=bool)
        live[runs] = True
        return self.tree.add(total, None if live.all() else live)


class VectorSumAnalyzer(TreeAnalyzer):
    """A of ``"sdp-vector-sum"``: P_Vec's analyzer on each completed node's counts, then the
    prefix over the set bits of k of :class:`TreeAnalyzer` (the estimate is its single message).

    Args:
        n_runs: runs.
        point_bound: L of the packed points.
        levels: P_Vec's parameters per level (as the randomizer's).
        d: dimension.
        symmetric: the Gram part (counts of the upper triangle → symmetric d×d) if True, the
            moment part (d) otherwise.
    """

    def __init__(self, n_runs: int, point_bound: float, levels: tuple[VectorSumParameters, ...],
                 d: int, symmetric: bool) -> None:
        self.d = check_int("d", d, low=1)
        self.symmetric = bool(symmetric)
        self.shape = (self.d, self.d) if self.symmetric else (self.d,)
        super().__init__(n_runs, len(levels), self.shape)
        self.L = check_positive(point_bound, "point_bound")
        self.params = tuple(levels)
        self._iu = np.triu_indices(self.d)

    def aggregate(self, messages: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """Receive the counts (len(runs), 1, c_part) of sync k; return the prefixes of all runs."""
        total = messages.sum(axis=1)
        j = lowest_set_bit(self.k[runs] + 1)
        est = np.empty((runs.size, *self.shape))
        for level in np.unique(j):
            sel = np.flatnonzero(j == level)
            node = analyze(total[sel], self.L, self.params[level])  # A_Vec: unbiased node sum
            if self.symmetric:
                est[sel[:, None], self._iu[0], self._iu[1]] = node
                est[sel[:, None], self._iu[1], self._iu[0]] = node
            else:
                est[sel] = node
        return super().aggregate(est[:, None], runs)


# ---------------------------------------------------------------------------------------------
# P = (R, S, A)
# ---------------------------------------------------------------------------------------------


class FederatedProtocol:
    """P = (R, S, A) of paper 2, Algorithm 2, for the Gram matrices and the moment vectors.

    The agent calls :meth:`collect` after every round with each silo's new user (a no-op for the
    batch-sum and tree randomizers; the hook a per-user randomizer such as P_Vec needs) and
    :meth:`synchronize` at each sync with the silos' batch sums.

    For ``protocol="sdp-vector-sum"``: R = :class:`VectorSumRandomizer` (the users randomize in
    ``collect``, x (n_runs, M, d) the chosen features, y (n_runs, M) the clipped rewards; its
    message at a sync is the node's count sums), S = identity on those counts (the shuffle of the
    unary bits does not change their counts), A = :class:`VectorSumAnalyzer`.

    Args:
        randomizer: R (``release(gram, moment, runs, live)`` → messages with a silo axis).
        shuffler: S (``shuffle(messages, runs)``).
        gram_analyzer, moment_analyzer: A for each statistic (``aggregate(messages, runs)``).
    """

    def __init__(self, randomizer, shuffler, gram_analyzer, moment_analyzer) -> None:
        self.randomizer = randomizer
        self.shuffler = shuffler
        self.gram_analyzer = gram_analyzer
        self.moment_analyzer = moment_analyzer

    def collect(self, x: np.ndarray, y: np.ndarray, live: np.ndarray | None = None) -> None:
        """Per-round hook: R's ``collect`` (a no-op for the batch-sum randomizers; P_Vec's users
        randomize here)."""
        self.randomizer.collect(x, y, live)

    def synchronize(
        self, gram: np.ndarray, moment: np.ndarray, live: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """One sync of the live runs (all if ``None``).

        Args:
            gram: (n_runs, M, d, d) each silo's Σφφᵀ since its last sync (rows of runs that are
                not live are ignored).
            moment: (n_runs, M, d) each silo's Σyφ since its last sync.

        Returns:
            (W̃, Ũ): the server's private sums of all runs, (n_runs, d, d) and (n_runs, d).
        """
        runs = _live_runs(live, gram.shape[0])
        g_msg, u_msg = self.randomizer.release(gram, moment, runs, live)  # R
        g_msg = self.shuffler.shuffle(g_msg, runs)  # S
        u_msg = self.shuffler.shuffle(u_msg, runs)
        return (self.gram_analyzer.aggregate(g_msg, runs),  # A
                self.moment_analyzer.aggregate(u_msg, runs))


def make_protocol(
    calibration: Calibration, n_runs: int, M: int, d: int, n_syncs: int, noise: NoiseSource
) -> FederatedProtocol:
    """The protocol a :class:`Calibration` describes, for ``n_runs`` runs of M silos: identity
    randomizer and summing analyzer without privacy; the tree randomizer and analyzer with the
    identity (``"ldp"``) or uniform (``"sdp-amplification"``) shuffler; P_Vec's users and
    analyzer in the tree for ``"sdp-vector-sum"``; raw batch sums into the server's own tree for
    ``"central"``."""
    if not calibration.private:
        return FederatedProtocol(BatchSumRandomizer(), IdentityShuffler(),
                                 SumAnalyzer(n_runs, (d, d)), SumAnalyzer(n_runs, (d,)))
    if calibration.protocol == CENTRAL:
        gram = CentralTreeAnalyzer(n_runs, (d, d), calibration.sigma0, n_syncs, noise,
                                   calibration.sampler)
        if gram.levels != calibration.kappa:
            raise ValueError(f"n_syncs={n_syncs} gives {gram.levels} tree levels, but the "
                             f"calibration used kappa={calibration.kappa}")
        return FederatedProtocol(BatchSumRandomizer(), IdentityShuffler(), gram,
                                 CentralTreeAnalyzer(n_runs, (d,), calibration.sigma0, n_syncs,
                                                     noise, calibration.sampler))
    if calibration.protocol == "sdp-vector-sum":
        levels = calibration.vector_sum
        if federated_kappa(n_syncs) != calibration.kappa:
            raise ValueError(f"n_syncs={n_syncs} gives {federated_kappa(n_syncs)} tree levels, "
                             f"but the calibration used kappa={calibration.kappa}")
        assert calibration.reward_bound is not None
        return FederatedProtocol(
            VectorSumRandomizer(n_runs, M, d, calibration.reward_bound, levels, n_syncs, noise),
            IdentityShuffler(),
            VectorSumAnalyzer(n_runs, calibration.point_bound, levels, d, symmetric=True),
            VectorSumAnalyzer(n_runs, calibration.point_bound, levels, d, symmetric=False))
    randomizer = TreeRandomizer(n_runs, M, d, calibration.sigma0, n_syncs, noise,
                                calibration.sampler)
    if randomizer.levels != calibration.kappa:  # one κ for the tree and its budget
        raise ValueError(f"n_syncs={n_syncs} gives {randomizer.levels} tree levels, but the "
                         f"calibration used kappa={calibration.kappa}")
    shuffler = UniformShuffler(noise) if calibration.protocol.startswith("sdp") else (
        IdentityShuffler())
    n_levels = randomizer.levels
    return FederatedProtocol(randomizer, shuffler, TreeAnalyzer(n_runs, n_levels, (d, d)),
                             TreeAnalyzer(n_runs, n_levels, (d,)))
