r"""A Top Two algorithm for ε-global-DP best-arm identification on the transportation cost of the
divergence d_ε, with arm-dependent geometric batching: our reconstruction of the algorithm of
Jourdan & Azize (2025), *Optimal Best Arm Identification under Differential Privacy*,
arXiv 2510.17348.

**What we could read.** The paper's abstract and the first page of its introduction (the full
text was not available to us: docs/guides/zoo.md, "Optimal private best-arm
identification"). The abstract states: fixed-confidence
BAI for Bernoulli arms under ε-global DP; a lower bound whose transportation cost replaces the KL
divergence of the non-private characteristic time by "a new information-theoretic quantity that
optimally trades off between the KL divergence and the Total Variation distance scaled by ε"; a
stopping rule on these transportation costs and a private estimator of the means "computed using
an arm-dependent geometric batching"; concentration results for the Laplace distribution and the
sum of Bernoulli and Laplace variables; a Top Two sampling rule on these transportation costs,
whose asymptotic expected sample complexity is within a multiplicative constant smaller than 8 of
the lower bound at every ε. Everything below that the abstract does not fix is our choice, stated
as such.

**The divergence.** d_ε(x, y) = inf_z ε\|z − x\| + kl(z, y)
(:func:`privenv.theory.regret.d_eps`), the quantity of the same group's regret paper (Azize, Wu,
Honda, Orabona, Ito & Basu 2025, arXiv 2505.05613), which interpolates between kl (large ε) and
ε·TV (small ε). Our choice of reading of the abstract's quantity. It is the convex conjugate of
the Bernoulli log-MGF ψ_y(λ) = log(1 − y + ye^λ) restricted to \|λ\| ≤ ε — the Chernoff rate of a
sum of Bernoulli rewards plus Laplace noises — which is what makes it the cost of this estimator.

**The estimator** (geometric batching, no forgetting): batch k of arm a ends when its count
reaches n_k = max{n_{k−1} + 1, ⌈ηn_{k−1}⌉}, n₀ = 1 (η = ``ratio``; arm-dependent: each arm's
batches follow its own count); the batch's reward **sum** is released with one Lap(1/ε) and added
to the arm's private cumulative sum S̃_a, and μ̃_a = S̃_a/n_k (the estimator of DP-KLUCB,
:func:`privenv.agents.dp_regret.geometric_update`, the same code). Each reward enters one release
of sensitivity 1 (rewards clipped to [0, 1]): ε-DP in the central model, per reward; everything
else is post-processing. Between batch ends μ̃ and Ñ (the count behind μ̃) are frozen.

**The transportation cost** of the pair (a, b) at means x_a > x_b (clipped to [0, 1]) and
weights w:

    W^ε_{a,b}(x, w) = inf_{u∈[x_b, x_a]} w_a d_ε(x_a, u) + w_b d_ε(x_b, u)

(:func:`dp_transport`), 0 if x_a ≤ x_b. d_ε(x, ·) is convex (a partial minimum of a jointly convex
function) and its derivative in u is (u − z*)/(u(1 − u)) at the minimiser z* (envelope theorem),
so the minimising u solves w_a(u − z*_a(u)) + w_b(u − z*_b(u)) = 0, which has a closed form in
each of four regimes (:func:`dp_transport_point`).

**The sampling rule** (our choices, from the Top Two algorithms of Jourdan, Degenne, Baudry,
de Heide & Kaufmann 2022, *Top Two Algorithms Revisited*, NeurIPS): the empirical-best leader
B = argmax_a μ̃_a (EB); the challenger C = argmin_{a≠B} W^ε_{B,a}(μ̃, Ñ) + log Ñ_a (TCI,
``challenger="tci"``, default) or without the log Ñ_a penalty (TC, ``"tc"``), on the private
means and the counts Ñ behind them (``challenger_weights="released"``, default), or on the
global counts N as AdaP-TT's challenger (paper 3, Algorithm 9 line 15; ``"pulls"``, the default
until 2026-12-06: with N, a best arm whose frozen μ̃ is low looks better known than it is and
is starved, and more runs stall at small ε — docs/results/zoo.md); β-tracking between them
(β = 1/2).

**The stopping rule**: â = argmax μ̃; stop when W^ε_{â,b}(μ̃, Ñ) ≥ c(k_â, k_b) for every b ≠ â,
k_c the number of releases of arm c. The threshold :func:`dp_glr_threshold` is **our derivation**
(the paper's is not available to us), δ-correct for rewards in [0, 1]:

* if the run recommends â ≠ a*, then (μ_â, μ_{a*}) is in the alternative of the pair, so
  W^ε_{â,a*} ≤ Z_â + Z_{a*}, Z_â = Ñ_â d_ε(μ̃_â, μ_â)·1{μ̃_â > μ_â}, Z_{a*} likewise with
  μ̃_{a*} < μ_{a*} (clipping μ̃ to [0, 1] only lowers them);
* Ñ = n_k is deterministic given k, and μ̃ = (S_{n_k} + L₁ + … + L_k)/n_k, so for
  0 < λ ≤ γε (Chernoff, E e^{λL} = (1 − λ²/ε²)⁻¹, the Bernoulli MGF dominating that of any
  reward in [0, 1]): P(μ̃ ≥ x) ≤ (1 − γ²)^{−k} e^{−n_k d_{γε}(x, μ)}, and d_{γε} ≥ γd_ε (ψ convex,
  ψ(0) = 0). Hence P(Z ≥ z) ≤ (1 − γ²)^{−k} e^{−γz}: γZ is stochastically below an Exp(1) plus
  k log(1/(1 − γ²));
* Z_â and Z_{a*} are independent (two arms' rewards and noises), so
  P(γ(Z_â + Z_{a*}) ≥ t + m log s) ≤ (1 + t)e^{−t}, m = k_â + k_{a*}, s = 1/(1 − γ²);
* a union bound over the K − 1 wrong arms and the pairs (k_â, k_{a*}) with
  δ′ = 36δ/((K − 1)π⁴k_â²k_{a*}²): c = (t + m log s)/γ with (1 + t)e^{−t} = δ′, and γ minimising
  it (2m(s − 1) = t + m log s).

As δ → 0, c = log(1/δ)(1 + o(1)). The threshold does not depend on ε (the privacy is in the
statistic). The paper's own threshold, batching ratio and leader may differ from these.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from privenv._jit import jit
from privenv.agents.dp_regret import geometric_update
from privenv.agents.kernel import charge_recorded
from privenv.agents.top_two import (
    TopTwo,
    TopTwoState,
    beta_tracking,
    bonus,
    bonus_total_term,
    challenger_weight,
    global_count,
    glr_excess,
    memoised_excess,
    prepare_stop,
    pull_leader,
    sampling_rule,
    transport,
    update_estimator,
)
from privenv.parameters import EPSILON, SAMPLER, Options, Param, Real
from privenv.privacy.exact import sampler_guarantee
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.samplers import ExactSampler, FloatSampler, central_sampler
from privenv.seeding import NoiseView
from privenv.theory.dp_bai import EPS_CAP
from privenv.theory.regret import d_eps

__all__ = ["CHALLENGERS", "CHALLENGER_WEIGHTS", "DPTTParams", "DPTopTwo", "dp_glr_threshold",
           "dp_transport", "dp_transport_point"]

#: the challenger rules, TCI (W + log N_a) and TC (W) of Jourdan et al. (2022)
CHALLENGERS = ("tci", "tc")
#: the counts that weigh the arms in the challenger's cost, the pulls N (as Algorithm 1 of paper
#: 3) or the released counts Ñ behind μ̃ (as the stopping statistic)
CHALLENGER_WEIGHTS = ("pulls", "released")
#: iterations of the scalar solvers of :func:`dp_glr_threshold` (bisections on bounded brackets)
THRESHOLD_STEPS = 100
PI4 = math.pi**4


# -- the transportation cost -----------------------------------------------------------------
@jit
def _clip01(x: float) -> float:
    return min(max(x, 0.0), 1.0)


@jit
def _positive_root(a: float, b: float, c: float) -> float:
    """The root q ≥ 0 of aq² + bq + c = 0 with a ≥ 0 ≥ c (NaN if there is none), written so that
    it does not cancel."""
    if a <= 0.0:
        return -c / b if b > 0.0 else math.nan
    root = math.sqrt(b * b - 4.0 * a * c)
    return -2.0 * c / (b + root) if b >= 0.0 else (root - b) / (2.0 * a)


@jit
def _regime_matches(u: float, x_a: float, x_b: float, c: float, a_at_mean: bool,
                    b_at_mean: bool) -> bool:
    """Whether u ∈ [x_b, x_a] lies in the regime (z*_a = x_a or not, z*_b = x_b or not): z*_a =
    min{σ(logit u + ε), x_a}, z*_b = max{σ(logit u − ε), x_b}, c = e^ε."""
    if not (x_b <= u <= x_a):
        return False
    a_clipped = u * c >= x_a * (1.0 - u + u * c)  # σ(logit u + ε) ≥ x_a
    b_clipped = u <= x_b * (u + (1.0 - u) * c)  # σ(logit u − ε) ≤ x_b
    return a_clipped == a_at_mean and b_clipped == b_at_mean


@jit
def _cost_at(u: float, x_a: float, x_b: float, w_a: float, w_b: float, epsilon: float) -> float:
    return w_a * d_eps(x_a, u, epsilon) + w_b * d_eps(x_b, u, epsilon)


@jit
def dp_transport_point(x_a: float, x_b: float, w_a: float, w_b: float, epsilon: float) -> float:
    """The u ∈ [x_b, x_a] minimising w_a d_ε(x_a, u) + w_b d_ε(x_b, u), for x_a > x_b in [0, 1]
    and ε ≤ :data:`~privenv.theory.dp_bai.EPS_CAP`.

    With q = u/(1 − u) and c = e^ε, z*_a(u) is x_a or σ(logit u + ε) = qc/(1 + qc), z*_b(u) is
    x_b or σ(logit u − ε) = q/(q + c), and the stationarity condition
    w_a(u − z*_a) + w_b(u − z*_b) = 0 has a closed form in each of the four regimes: the weighted
    mean (both at their means, the KL regime); q = (w_b − w_a c)/(w_a − w_b c) (neither, the TV
    regime); and the positive root of a quadratic in q in the two mixed regimes. The minimiser is
    the candidate that lies in its own regime; if rounding leaves none there, the candidate of
    least cost (the minimiser is one of them)."""
    c = math.exp(epsilon)
    mean = (w_a * x_a + w_b * x_b) / (w_a + w_b)
    if _regime_matches(mean, x_a, x_b, c, True, True):
        return mean
    q = (w_b - w_a * c) / (w_a - w_b * c)
    tv = q / (1.0 + q) if q > 0.0 and math.isfinite(q) else math.nan
    if _regime_matches(tv, x_a, x_b, c, False, False):
        return tv
    q = _positive_root(w_a * (1.0 - x_a), w_a * (c - x_a * (1.0 + c)) + w_b * (c - 1.0),
                       -w_a * x_a * c)  # z*_a = x_a, z*_b = q/(q + c)
    mixed_a = q / (1.0 + q) if math.isfinite(q) else math.nan
    if _regime_matches(mixed_a, x_a, x_b, c, True, False):
        return mixed_a
    q = _positive_root(w_b * c * (1.0 - x_b), w_a * (1.0 - c) + w_b * (1.0 - x_b * (1.0 + c)),
                       -w_b * x_b)  # z*_a = qc/(1 + qc), z*_b = x_b
    mixed_b = q / (1.0 + q) if math.isfinite(q) else math.nan
    if _regime_matches(mixed_b, x_a, x_b, c, False, True):
        return mixed_b
    best, best_cost = mean, _cost_at(mean, x_a, x_b, w_a, w_b, epsilon)
    for u in (tv, mixed_a, mixed_b):
        if x_b <= u <= x_a:
            cost = _cost_at(u, x_a, x_b, w_a, w_b, epsilon)
            if cost < best_cost:
                best, best_cost = u, cost
    return best


@jit
def dp_transport(mu_a: float, mu_b: float, w_a: float, w_b: float, epsilon: float) -> float:
    """W^ε_{a,b}(μ, w) = inf_{u} w_a d_ε(μ_a, u) + w_b d_ε(μ_b, u) over u ∈ [μ_b, μ_a], the
    means clipped to [0, 1], ε capped at :data:`~privenv.theory.dp_bai.EPS_CAP`; 0 when
    μ_a ≤ μ_b (module docstring)."""
    x_a, x_b = _clip01(mu_a), _clip01(mu_b)
    if x_a <= x_b:
        return 0.0
    eps = min(epsilon, EPS_CAP)
    return _cost_at(dp_transport_point(x_a, x_b, w_a, w_b, eps), x_a, x_b, w_a, w_b, eps)


# -- the stopping threshold (our derivation, module docstring) ----------------------------------
@jit
def _gamma_tail_level(log_inv: float) -> float:
    """The t ≥ 0 with (1 + t)e^{−t} = e^{−log_inv}, i.e. t − log(1 + t) = log_inv (increasing in
    t): bisection on [log_inv, 2 log_inv + 2]."""
    lo, hi = log_inv, 2.0 * log_inv + 2.0  # below at t = log_inv, above at 2 log_inv + 2
    for _ in range(THRESHOLD_STEPS):
        mid = 0.5 * (lo + hi)
        if mid - math.log1p(mid) < log_inv:
            lo = mid
        else:
            hi = mid
    return hi


@jit
def dp_glr_threshold(k_a: int, k_b: int, K: int, delta: float) -> float:
    """c(k_a, k_b) = min_γ (t + m log(1/(1 − γ²)))/γ, m = k_a + k_b, (1 + t)e^{−t} = δ′,
    δ′ = 36δ/((K − 1)π⁴k_a²k_b²): the δ-correct threshold of our derivation (module docstring)
    for arms with k_a and k_b releases. The optimal s = 1/(1 − γ²) solves
    2m(s − 1) = t + m log s (bisection on [1, 1 + t/m])."""
    log_inv = (math.log((K - 1) / delta) + math.log(PI4 / 36.0)
               + 2.0 * math.log(float(k_a)) + 2.0 * math.log(float(k_b)))
    t = _gamma_tail_level(log_inv)
    m = float(k_a + k_b)
    lo, hi = 1.0, 1.0 + t / m
    for _ in range(THRESHOLD_STEPS):
        mid = 0.5 * (lo + hi)
        if 2.0 * m * (mid - 1.0) - m * math.log(mid) - t < 0.0:
            lo = mid
        else:
            hi = mid
    s = hi
    return (t + m * math.log(s)) / math.sqrt(1.0 - 1.0 / s)


# -- the kernel's ingredients (agents/top_two.py's generic functions) ---------------------------
class DPTTParams(NamedTuple):
    """The constants of :class:`DPTopTwo`: ``ratio`` η (the batches' geometric ratio), ``tci``
    (the challenger's log N_a penalty), and the geometric estimator's fields (``forget`` and
    ``noise_multiplier`` are the audit hooks: true and 1 in the real agent). ``sigma`` is unused
    (the Top Two kernel passes it to
    :func:`~privenv.agents.top_two.transport`)."""

    K: int
    delta: float
    beta: float
    sigma: float
    epsilon: float
    ratio: float
    tci: bool
    released_weights: bool
    forget: bool
    noise_multiplier: float
    sampler: FloatSampler | ExactSampler
    words_per_step: int = 0


@update_estimator.register(DPTTParams)
@jit(inline="always")
def _dptt_update(p: DPTTParams, s: TopTwoState, noise: NoiseView, run: int, arm: int,
                 reward: float) -> None:
    """The geometric estimator: the state's ``sums`` hold S̃, ``phase_start`` the count that
    ends the arm's batch (0 before its first pull: the first pull is released alone)."""
    geometric_update(p, s, noise, run, arm, reward, s.sums, s.phase_start)


@bonus_total_term.register(DPTTParams)
@jit(inline="always")
def _dptt_bonus_total(p: DPTTParams, total: int) -> float:
    return 0.0


@bonus.register(DPTTParams)
@jit(inline="always")
def _dptt_bonus(p: DPTTParams, w: float, total_term: float) -> float:
    return 0.0  # no bonus: the leader is the empirical best argmax μ̃ (EB)


@transport.register(DPTTParams)
@jit(inline="always")
def _dptt_transport(p: DPTTParams, mu_a: float, mu_b: float, w_a: float, w_b: float,
                    sigma: float, total: int) -> float:
    cost = dp_transport(mu_a, mu_b, w_a, w_b, p.epsilon)
    if p.tci:
        cost += math.log(w_b)  # TCI: + log N_a of the candidate challenger
    return cost


@challenger_weight.register(DPTTParams)
@jit(inline="always")
def _dptt_challenger_weight(p: DPTTParams, s: TopTwoState, run: int, a: int) -> float:
    # N_a, or Ñ_a (the rewards behind μ̃_a). Picked by index, not by an ``if``: numba's IR
    # inlining of a branch here trips its SSA pass's pedantic check (numba issue #7802)
    weights = (global_count(p, s, run, a), s.n_tilde[run, a])
    return weights[int(p.released_weights)]


@pull_leader.register(DPTTParams)
@jit(inline="always")
def _dptt_pull_leader(p: DPTTParams, s: TopTwoState, noise: NoiseView, run: int,
                      leader: int) -> bool:
    return beta_tracking(p, s, run, leader)


@prepare_stop.register(DPTTParams)
@jit(inline="always")
def _dptt_prepare(p: DPTTParams, s: TopTwoState, run: int, a_hat: int, total: int) -> None:
    if s.dirty[run]:  # the statistic and threshold change only at releases
        _refresh(p, s, run, a_hat)


@jit
def _refresh(p: DPTTParams, s: TopTwoState, run: int, a_hat: int) -> None:
    """W^ε_{â,b}(μ̃, Ñ) and c(k_â, k_b) for every b (slot â unused), after a release."""
    mu_a, w_a, k_a = s.mu_tilde[run, a_hat], s.n_tilde[run, a_hat], s.phases[run, a_hat]
    for b in range(p.K):
        if b != a_hat:
            s.glr_stat[run, b] = dp_transport(mu_a, s.mu_tilde[run, b], w_a, s.n_tilde[run, b],
                                              p.epsilon)
            s.glr_thr[run, b] = dp_glr_threshold(k_a, s.phases[run, b], p.K, p.delta)
    s.dirty[run] = False


glr_excess.register(DPTTParams)(memoised_excess)


@sampling_rule.register(DPTTParams)
@jit(inline="always")
def _dptt_sampling(p: DPTTParams, s: TopTwoState, run: int, total: int) -> int:
    return -1  # the Top Two rule


# -- the agent ---------------------------------------------------------------------------------
class DPTopTwo(TopTwo):
    r"""ε-global-DP Top Two on the transportation cost of d_ε with geometric batching: our
    reconstruction of Jourdan & Azize (2025, arXiv 2510.17348) from its abstract (the module
    docstring states what is theirs and what is ours).

    * estimator: per-arm geometric batches of ratio η, each batch's sum + Lap(1/ε), summed
      (no forgetting); rewards clipped to [0, 1];
    * leader: argmax μ̃ (EB); challenger: argmin_{a≠B} W^ε_{B,a}(μ̃, Ñ) (+ log Ñ_a for TCI;
      N in place of Ñ with ``challenger_weights="pulls"``); β-tracking;
    * stop: W^ε_{â,b}(μ̃, Ñ) ≥ c(k_â, k_b) for every b ≠ â, with :func:`dp_glr_threshold`
      (δ-correct by our derivation).

    Privacy: ε-DP in the central model, per reward. Claimed by the paper (for its algorithm):
    lim sup_{δ→0} E[τ_δ]/log(1/δ) ≤ C·T*_ε(ν) with C < 8, T*_ε the characteristic time of
    :func:`privenv.theory.dp_bai.characteristic_time_dp` (our reading of its lower bound).

    Per-run state as :class:`~privenv.agents.top_two.TopTwoState`, with ``sums`` = S̃ (the
    private cumulative sums), ``phase_start`` = the count that ends each arm's current batch,
    ``phases`` = the releases k_a, ``mu_tilde`` = μ̃, ``n_tilde`` = Ñ.

    Args:
        K: number of arms.
        epsilon: privacy budget ε > 0.
        delta: confidence δ ∈ (0, 1).
        ratio: the batches' geometric ratio η > 1 (default 2: doubling, our choice).
        beta: tracking proportion β ∈ (0, 1) (1/2).
        challenger: ``"tci"`` (default) or ``"tc"``.
        challenger_weights: the counts in the challenger's cost W^ε_{B,a}(μ̃, ·) and its
            TCI penalty: ``"released"`` (Ñ, the counts behind μ̃; default since 2026-12-06) or
            ``"pulls"`` (N, as AdaP-TT; it leaves more runs stalled at small ε:
            docs/results/zoo.md measures both).
        reward_mode: ``"sample"`` (the sample is the reward) or ``"cost"`` (the observation).
        sampler: ``"float"`` (binary64 Laplace noise) or ``"exact"`` (the discrete Laplace on a
            grid, :mod:`privenv.privacy.exact`: each batch sum exactly ε′-DP, ε′ ≤ ε).
        n_runs: number of runs.
    """

    name = "dp-top-two"
    parameters = {
        **TopTwo.parameters,
        "epsilon": Param(EPSILON),
        "ratio": Param(Real(1.0, low_open=True)),
        "challenger": Param(Options(CHALLENGERS)),
        "challenger_weights": Param(Options(CHALLENGER_WEIGHTS)),
        "sampler": Param(SAMPLER, assumes="sampler"),
    }
    #: audit hooks, where ``forget = False`` re-releases every earlier reward of the arm in each
    #: batch sum; ``noise_multiplier`` scales every Laplace scale (true and 1 in the real agent)
    forget: bool = True
    noise_multiplier: float = 1.0

    def __init__(
        self,
        K: int,
        epsilon: float = 1.0,
        delta: float = 0.01,
        ratio: float = 2.0,
        beta: float = 0.5,
        challenger: str = "tci",
        challenger_weights: str = "released",
        reward_mode: str = "sample",
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(K, delta=delta, beta=beta, reward_mode=reward_mode, n_runs=n_runs)

    @property
    def privacy(self) -> PrivacyGuarantee:
        return sampler_guarantee(self.sampler, "central", self.epsilon, "reward")

    def kernel_params(self) -> DPTTParams:
        sampler = central_sampler(self.sampler, self.epsilon, float(self.noise_multiplier))
        return DPTTParams(K=self.K, delta=self.delta, beta=self.beta, sigma=0.5,
                          epsilon=self.epsilon, ratio=self.ratio,
                          tci=self.challenger == "tci",
                          released_weights=self.challenger_weights == "released",
                          forget=bool(self.forget),
                          noise_multiplier=float(self.noise_multiplier), sampler=sampler,
                          words_per_step=sampler.words)

    def charge_releases(self) -> None:
        charge_recorded(self, self.state.releases, ("batch sum",))

    def episode_info(self) -> dict[str, np.ndarray]:
        """``releases``: the private releases per run (batches ended, the first pulls
        included), at the stop or at the budget."""
        return {"releases": self.phases.sum(axis=1)}
