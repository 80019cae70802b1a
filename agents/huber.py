"""Private and robust arm elimination (paper 1): PRAE-R, PRAE-C and the DPRSE baseline.

Paper 1: Wu, Zhou, Tao, Wang, *On Private and Robust Bandits*, NeurIPS 2023. Heavy-tailed rewards
with Huber α-contamination (Definition 3.3), ε-DP in the central model (Definition 3.4).

* :class:`PrivateRobustArmElimination` — **Algorithm 1**, the batched arm-elimination
  meta-algorithm, with a pluggable private robust mean estimator (PRM);
* :func:`prm_raw_moment` — **Algorithm 2** (truncate at M around 0, Laplace) → :class:`PRAER`;
* :func:`prm_central_moment` — **Algorithm 3** (private histogram, then truncate around its mode)
  → :class:`PRAEC`;
* :class:`DPRSE` — the baseline of Tao, Wu, Zhao, Wang (2022), **reconstructed** (see its
  docstring).

Units. The theorems assume a unit moment bound (E|X|^k ≤ 1, or E|X − μ|^k ≤ 1). An instance with
bound u is the unit instance scaled by s = u^{1/k}, so M, r, D and β are computed in units of s and
multiplied by s (u = ``raw_moment_bound`` for Algorithm 2, ``central_moment_bound`` for
Algorithm 3; both come from the env's public description).

**Constants — chosen once, on principle, and used in every experiment.** The theorems state M, β
and 𝒯 up to Θ/Ω constants. We take every constant from the proofs in the paper's appendix where
they are explicit, and 1 where they are not:

* Theorem 6.1 (App. C, proof): M = min{(nε/(4L))^{1/k}, (8α)^{−1/k}}, L = log(16/δ), and
  β = √(2L/n) + 2(4L/(nε))^{1−1/k} + 2(8α)^{1−1/k}; for α = 0, L = log(4/δ) and no α-terms.
  The first phase needs n ≥ log(8/δ)/α (the proof's condition for its bound T₁ ≤ 4αM).
* Theorem 6.5 (App. D, proof): M = 4·min{(nε/log(1/δ))^{1/k}, α^{−1/k}} and β = the sum of the
  proof's explicit bounds on its terms T₁, T₂, T₃ and the Laplace noise (:func:`central_moment_
  parameters`), valid once the histogram picks a bin within 2r of μ, i.e. for n ≥ 𝒯 with
  𝒯 = max{ι log(16/δ)/ε, c₁ log(16D/δ)/ε, log(16/δ)/α²} (proof of Theorem 6.12), and
  𝒯 = 200 log(16D/δ)/ε for α = 0 (proof of Theorem 6.10, which gives the constant).
* c₁ (α > 0) is not given: ``C1_HISTOGRAM = 1``. (The proof's own condition 6C₁ + 4C₂ < 1 with
  its choice ι = (1 − α)/(0.249 − α) leaves C₂ = 0.249, so C₁ < 1/1500 and n ≳ 4.5·10⁶·log(16D/δ)
  — vacuous at any practical horizon. We do not use that.)
* Union bound over arms and batches (proof of Theorem 6.2): each estimate of batch τ uses
  δ_τ = δ/(2|S|τ²), |S| the number of arms in the batch; δ = 1/T.
* Where a proof merges terms assuming ε ≤ 1 (Theorem 6.1's last step, Corollaries 6.6/6.8), the
  accuracy parameters use ε̄ = min(ε, 1) so that the radius stays valid for ε > 1; the Laplace
  noise always uses ε itself. Nothing changes for ε ≤ 1.

What to expect at T = 10⁵ on the paper's instance (SPEC §3.1): the regret of PRAE is dominated by
two structural terms — the first elimination batch (each active arm is pulled B_τ ≥ 𝒯 times before
anything is eliminated; for PRAE-C 𝒯 ≥ log(16/δ)/α² ≈ 8.7·10³ at α = 5 %) and the α-term of β, a
constant bias bound (PRAE-R: 2(8α)^{1/2}·u^{1/2} ≈ 126 > every gap when the means reach 100, so
PRAE-R never eliminates there). These are properties of the theorems' parameters, not bugs. A
third effect follows: when nothing is eliminated, regret is decided by the schedule itself — which
arm the horizon's unfinished batch happens to pull. Algorithm 1 does not order the active arms of
a batch; ``arm_order="index"`` (default, the literal loop) favours the lowest-index arm (the best
one on the paper's instance), ``arm_order="random"`` makes the regret independent of the labels.

Privacy. Every reward of the elimination phase enters exactly one Laplace release of one batch
(batching and forgetting); Algorithm 3's histogram and mean use disjoint folds (parallel
composition); the random first phase uses no reward. So each agent is ε-DP in the central model
(per reward, replace-one neighbours). With ``first_phase="greedy"`` (Remark 5.1) the first phase's
batches are released the same way, once each.
"""

from __future__ import annotations

import math

import numpy as np

from privenv._validation import check_choice, check_delta, check_epsilon, check_real
from privenv.agents.mab import BatchedElimination
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_from_uniform
from privenv.theory.huber import ALPHA_MAX_CENTRAL, iota

#: c₁ of Corollary 6.8 / Theorem 6.12 (α > 0): "there exists an absolute constant"; not given → 1.
C1_HISTOGRAM = 1.0
#: the histogram step's constant for α = 0, given by the proof of Theorem 6.10:
#: n ≥ 200·log(16D/δ)/ε makes C₁ < 0.1 (Corollary 6.6).
C_HISTOGRAM_ALPHA0 = 200.0
#: accuracy parameters use ε̄ = min(ε, EPSILON_CAP): the proofs merge terms assuming ε ≤ 1.
EPSILON_CAP = 1.0
#: largest α of the proof of Theorem 6.1 (case 2: α ∈ (0, 1/2]).
ALPHA_MAX_RAW = 0.5

FIRST_PHASES = ("batch-random", "round-random", "greedy")


# =================================================================================================
# The private robust mean estimators (PRM)
# =================================================================================================


def prm_raw_moment(x: np.ndarray, M: np.ndarray | float, epsilon: float,
                   u: np.ndarray | float) -> np.ndarray:
    """**Algorithm 2** (PRM for the finite raw moment case), for m batches at once.

    Args:
        x: rewards, shape (m, n): row i is one batch {x_j}, j = 1…n.
        M: truncation threshold(s), scalar or shape (m,).
        epsilon: privacy budget ε.
        u: standard uniforms, shape (m,), for the Laplace noise (u = 0.5 gives noise ≈ 0).

    Returns:
        μ̃, shape (m,).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    M = np.asarray(M, dtype=float)
    x_bar = np.where(np.abs(x) <= M[..., None], x, 0.0)  # line 3: x̄_j = x_j·1{|x_j| ≤ M}
    # line 5: replace-one sensitivity of the mean of values in [−M, M] is 2M/n
    return x_bar.mean(axis=-1) + laplace_from_uniform(u, 1.0) * (2.0 * M / (n * epsilon))


def histogram_bins(D: float, r: float) -> np.ndarray:
    """Left endpoints j ∈ 𝒥 = {−D, −D + r, …, D − r} of the bins B_j = [j, j + r) (Algorithm 3,
    line 3)."""
    n_bins = int(round(2.0 * D / r))
    if n_bins < 1 or not math.isclose(n_bins * r, 2.0 * D, rel_tol=1e-9):
        raise ValueError(f"2D/r must be a positive integer, got D={D!r}, r={r!r}")
    return -D + r * np.arange(n_bins)


def prm_central_moment(x: np.ndarray, M: np.ndarray | float, epsilon: float, D: float, r: float,
                       u_hist: np.ndarray, u_mean: np.ndarray | float,
                       return_initial: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """**Algorithm 3** (PRM for the finite central moment case), for m batches at once.

    Args:
        x: rewards, shape (m, 2n): the first n of each row are the first fold, the rest the second.
        M: truncation threshold(s) around J, scalar or shape (m,).
        epsilon: privacy budget ε (each fold's release is ε-DP; the folds are disjoint).
        D, r: bins B_j = [j, j + r), j ∈ {−D, …, D − r} (2D/r an integer).
        u_hist: standard uniforms, shape (m, 2D/r), for the histogram's Laplace noise.
        u_mean: standard uniforms, shape (m,), for the mean's Laplace noise.
        return_initial: also return the initial estimates J.

    Returns:
        μ̃, shape (m,) (and J if ``return_initial``).
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] % 2 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (m, 2n) with n >= 1, got {x.shape}")
    m, n = x.shape[0], x.shape[1] // 2
    first, second = x[:, :n], x[:, n:]
    # First step (lines 3-5): private histogram of the first fold, J = argmax_j p̃_j.
    left = histogram_bins(D, r)  # line 3
    n_bins = left.size
    j = np.floor((first + D) / r)
    inside = (j >= 0) & (j < n_bins)  # points outside [−D, D) fall in no bin
    flat = (np.arange(m)[:, None] * n_bins + j.astype(np.int64))[inside]
    counts = np.bincount(flat, minlength=m * n_bins).reshape(m, n_bins)
    # line 4: replacing one point moves two counts by 1/n each: L1 sensitivity 2/n
    p_tilde = counts / n + laplace_from_uniform(u_hist, 2.0 / (n * epsilon))
    J = left[np.argmax(p_tilde, axis=1)]  # line 5
    # Second step (line 7): truncated mean of the second fold around J, sensitivity 2M/n.
    M = np.asarray(M, dtype=float)
    dev = second - J[:, None]
    kept = np.where(np.abs(dev) <= M[..., None], dev, 0.0)
    mu = J + kept.mean(axis=1) + laplace_from_uniform(u_mean, 1.0) * (2.0 * M / (n * epsilon))
    return (mu, J) if return_initial else mu


# =================================================================================================
# Parameters of Theorems 6.1 and 6.5 (unit moment bound), with the proofs' constants
# =================================================================================================


def batch_delta(delta: float, tau: np.ndarray, n_active: np.ndarray) -> np.ndarray:
    """δ_τ = δ/(2|S|τ²): each estimate's failure probability (union bound, proof of Thm 6.2)."""
    return delta / (2.0 * np.asarray(n_active, dtype=float) * np.asarray(tau, dtype=float) ** 2)


def raw_moment_parameters(n: np.ndarray | int, epsilon: float, delta: np.ndarray | float,
                          alpha: float, k: float) -> tuple[np.ndarray, np.ndarray]:
    """Truncation M and radius β of Theorem 6.1 for E|X|^k ≤ 1 (constants of App. C).

    With probability ≥ 1 − δ, Algorithm 2 on n points with this M is within β of μ (for α > 0
    once n ≥ :func:`raw_moment_threshold`).
    """
    n = np.asarray(n, dtype=float)
    delta = np.asarray(delta, dtype=float)
    eps = min(epsilon, EPSILON_CAP)
    if alpha == 0.0:  # uncontaminated case
        L = np.log(4.0 / delta)
        M = (n * eps / (4.0 * L)) ** (1.0 / k)
        beta = np.sqrt(2.0 * L / n) + 2.0 * (4.0 * L / (n * eps)) ** (1.0 - 1.0 / k)
        return M, beta
    L = np.log(16.0 / delta)  # contaminated case
    M = np.minimum((n * eps / (4.0 * L)) ** (1.0 / k), (8.0 * alpha) ** (-1.0 / k))
    beta = (np.sqrt(2.0 * L / n) + 2.0 * (4.0 * L / (n * eps)) ** (1.0 - 1.0 / k)
            + 2.0 * (8.0 * alpha) ** (1.0 - 1.0 / k))
    return M, beta


def raw_moment_threshold(delta: np.ndarray | float, alpha: float) -> np.ndarray:
    """𝒯 of Theorem 6.2: n ≥ log(8/δ)/α (proof of Thm 6.1: |N_G|/n ≤ 4α); 0 when α = 0."""
    delta = np.asarray(delta, dtype=float)
    return np.log(8.0 / delta) / alpha if alpha > 0 else np.zeros_like(delta)


def central_bin_width(alpha: float, k: float) -> float:
    """r of Corollaries 6.6/6.8: 10^{1/k} (α = 0) or ι^{1/k}, ι = (1 − α)/(0.249 − α)."""
    return (10.0 if alpha == 0.0 else iota(alpha)) ** (1.0 / k)


def central_moment_parameters(n: np.ndarray | int, epsilon: float, delta: np.ndarray | float,
                              alpha: float, k: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Bin width r, truncation M and radius β of Theorem 6.5 for E|X − μ|^k ≤ 1 (App. D).

    n is the fold size (Algorithm 3 uses 2n points). β is the sum of the proof's bounds, each at
    its stated probability (histogram δ/2; |N_G|, Bernstein, Hoeffding and Laplace δ/8 each),
    valid for n ≥ :func:`central_moment_threshold`:

        g  = α + √(2αL/n) + 2L/(3n)                          (|N_G|/n, Bernstein; 0 if α = 0)
        T₁ = g·(M + 2r)
        T₂ = √(2L/n) + 4(M + 2r)L/(3n) + (2/M)^{k−1} + T₁
        T₃ = 2r·(α + (2/M)^k + √(L/(2n)))
        β  = T₁ + T₂ + T₃ + 2M·log(8/δ)/(nε),               L = log(16/δ).
    """
    n = np.asarray(n, dtype=float)
    delta = np.asarray(delta, dtype=float)
    r = central_bin_width(alpha, k)
    M = 4.0 * (n * epsilon / np.log(1.0 / delta)) ** (1.0 / k)
    if alpha > 0:
        M = np.minimum(M, 4.0 * alpha ** (-1.0 / k))
    L = np.log(16.0 / delta)
    g = alpha + np.sqrt(2.0 * alpha * L / n) + 2.0 * L / (3.0 * n) if alpha > 0 else 0.0
    T1 = g * (M + 2.0 * r)
    T2 = np.sqrt(2.0 * L / n) + 4.0 * (M + 2.0 * r) * L / (3.0 * n) + (2.0 / M) ** (k - 1.0) + T1
    T3 = 2.0 * r * (alpha + (2.0 / M) ** k + np.sqrt(L / (2.0 * n)))
    laplace = 2.0 * M * np.log(8.0 / delta) / (n * epsilon)
    return r, M, T1 + T2 + T3 + laplace


def central_moment_threshold(delta: np.ndarray | float, alpha: float, epsilon: float,
                             D: float) -> np.ndarray:
    """𝒯 of Corollaries 6.6/6.8 on the fold size n (constants: proofs of Theorems 6.10, 6.12).

    D is the (unit-scaled) range of the means.
    """
    delta = np.asarray(delta, dtype=float)
    eps = min(epsilon, EPSILON_CAP)
    if alpha == 0.0:
        return C_HISTOGRAM_ALPHA0 * np.log(16.0 * D / delta) / eps
    return np.maximum.reduce([
        iota(alpha) * np.log(16.0 / delta) / eps,  # M ≥ 4r
        C1_HISTOGRAM * np.log(16.0 * D / delta) / eps,  # the histogram finds μ's bin
        np.log(16.0 / delta) / alpha**2,  # |N_G|/n and the Hoeffding term of T₃ are O(α)
    ])


# =================================================================================================
# Algorithm 1: private and robust arm elimination
# =================================================================================================


class PrivateRobustArmElimination(BatchedElimination):
    """**Algorithm 1** of paper 1 (Private and Robust Arm Elimination), with a pluggable PRM.

    Batches τ = 1, 2, … of size B_τ = 2^τ (line 4). While B_τ is below the PRM's sample
    threshold 𝒯 (line 5) the batch is a *first-phase* batch: one uniformly random arm for the
    whole batch (lines 6–7; ``first_phase`` offers Remark 5.1's alternatives). Afterwards each
    active arm is pulled B_τ times in a row (lines 9–13), its mean estimated by the PRM from
    **this batch's rewards only** (line 16, forgetting), and every arm with
    μ̃_max − μ̃_a > 2β_τ is removed (lines 18–20). The run exits at the horizon (line 12).

    Subclasses give the PRM (:meth:`prm`), its radius (:meth:`radius`) and the batch size from
    which the radius holds (:meth:`samples_needed`).

    Args:
        K: number of arms (≥ 2).
        horizon: T.
        epsilon: privacy budget ε > 0.
        delta: failure probability δ ∈ (0, 1); default 1/T (Theorems 6.2, 6.12).
        first_phase: Remark 5.1 — ``"batch-random"`` (the paper's: one random arm per batch),
            ``"round-random"`` (a random arm every round) or ``"greedy"`` (play the arm with the
            best PRM estimate from its last batch, untried arms first; those batches are
            released through the PRM once each).
        arm_order: order of the active arms within a batch (lines 9–13 do not fix one):
            ``"index"`` (default) or ``"random"`` (see :class:`~privenv.agents.mab.
            BatchedElimination`).
        n_runs: number of runs.
    """

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, delta: float | None = None,
                 first_phase: str = "batch-random", arm_order: str = "index",
                 n_runs: int = 1) -> None:
        super().__init__(K, horizon, n_runs, arm_order)
        self.epsilon = check_epsilon(epsilon)
        self.delta = 1.0 / self.horizon if delta is None else check_delta(delta)
        if delta is None and self.horizon == 1:
            self.delta = 0.5
        self.first_phase = check_choice("first_phase", first_phase, FIRST_PHASES)

    def _init_schedule(self) -> None:
        """The first phase: batches τ < τ₁, τ₁ the first with B_τ ≥ 𝒯 (|S| = K; line 5).

        Sets ``first_elimination_batch`` and ``first_phase_rounds`` (at construction and reset).
        """
        tau = 1
        while 2**tau < self.samples_needed(batch_delta(self.delta, tau, self.K)):
            tau += 1
            if 2 ** (tau - 1) > self.horizon:
                break
        #: first batch that eliminates (τ₁); earlier batches form the first phase
        self.first_elimination_batch = tau
        #: rounds of the first phase: B_1 + … + B_{τ₁−1} = 2^τ₁ − 2
        self.first_phase_rounds = 2**tau - 2

    @property
    def privacy(self) -> PrivacyGuarantee:
        return PrivacyGuarantee("central", self.epsilon, 0.0, "reward")

    # -- the PRM (subclasses) -------------------------------------------------------------------
    def samples_needed(self, delta: np.ndarray | float) -> np.ndarray:
        """The batch size B from which the PRM's radius holds at confidence δ (𝒯)."""
        raise NotImplementedError

    def prm(self, runs: np.ndarray, x: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Private estimates from the batches ``x`` (m, B) of ``runs``; charges the ledger."""
        raise NotImplementedError

    def radius(self, B: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Confidence radius β_τ of an estimate from a batch of B pulls at confidence δ."""
        raise NotImplementedError

    # -- Algorithm 1 on the shared schedule -----------------------------------------------------
    def reset_state(self) -> None:
        self._init_schedule()
        self.delta_tau = np.zeros(self.n_runs)  # δ_τ of each run's current batch
        self._buf = np.zeros((self.n_runs, 2))  # this segment's rewards (one arm, ≤ B_τ values)
        super().reset_state()

    def _in_first_phase(self, runs: np.ndarray) -> np.ndarray:
        return self.epoch[runs] < self.first_elimination_batch

    def _plan_epoch(self, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tau = self.epoch[runs]
        plan = self.active[runs].copy()  # line 9: every active arm, B_τ pulls each
        self.delta_tau[runs] = batch_delta(self.delta, tau, plan.sum(axis=1))
        first = self._in_first_phase(runs)
        if first.any():  # lines 5–7: one arm for the whole batch
            arm = self._first_phase_arm(runs[first])
            plan[first] = np.arange(self.K) == arm[:, None]
        return plan, 2**tau  # line 4: B_τ = 2^τ

    def _first_phase_arm(self, runs: np.ndarray) -> np.ndarray:
        if self.first_phase == "batch-random":  # line 6
            assert self.noise is not None
            return np.minimum((self.noise.uniform(runs) * self.K).astype(np.int64), self.K - 1)
        if self.first_phase == "greedy":  # Remark 5.1: best last estimate, untried arms first
            est = self.estimates[runs]
            return np.argmax(np.where(np.isnan(est), np.inf, est), axis=1)
        return np.zeros(runs.size, dtype=np.int64)  # round-random: drawn every round in act

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.first_phase == "round-random" and self.t < self.first_phase_rounds:
            assert self.noise is not None  # Remark 5.1: a random arm every round
            return np.minimum((self.noise.uniform() * self.K).astype(np.int64), self.K - 1)
        return super().act_batch(observations)

    def _stores_rewards(self) -> bool:
        return self.first_phase == "greedy" or self.t >= self.first_phase_rounds

    def _begin_segment(self, runs: np.ndarray) -> None:
        # keep room for this segment's rewards if it can end before the horizon (else it is
        # never released and need not be stored)
        fits = self.seg_end[runs] <= self.horizon
        need = int(self.seg_len[runs][fits].max(initial=0))
        if need > self._buf.shape[1]:
            buf = np.zeros((self.n_runs, need))
            buf[:, : self._buf.shape[1]] = self._buf
            self._buf = buf

    def _accumulate(self, rewards: np.ndarray) -> None:  # line 11: observe x_i^a
        if self._stores_rewards():
            pos = np.minimum(self.t - self.seg_start, self._buf.shape[1] - 1)
            self._buf[self._runs, pos] = rewards

    def _end_segment(self, runs: np.ndarray) -> None:  # line 16: μ̃_a = PRM(this batch)
        if self.first_phase != "greedy":
            runs = runs[~self._in_first_phase(runs)]
        B = self.seg_len[runs]
        for b in np.unique(B):
            group = runs[B == b]
            self.estimates[group, self.arm[group]] = self.prm(
                group, self._buf[group, :b], self.delta_tau[group]
            )

    def _end_epoch(self, runs: np.ndarray) -> None:  # lines 18–20
        runs = runs[~self._in_first_phase(runs)]
        if runs.size:
            beta = self.radius(2 ** self.epoch[runs], self.delta_tau[runs])
            self.eliminate(runs, 2.0 * beta)


class PRAER(PrivateRobustArmElimination):
    """**PRAE-R**: Algorithm 1 with Algorithm 2 (finite k-th raw moment), Theorems 6.1/6.2.

    M_τ and β_τ are those of Theorem 6.1 (contaminated form; uncontaminated for α = 0, Remark
    6.3) with n = B_τ and δ_τ = δ/(2|S|τ²); 𝒯 = log(8/δ_τ)/α (Theorem 6.2, proof). For a moment
    bound E|X|^k ≤ u, M and β are scaled by u^{1/k}. Constants: see the module docstring.

    Args:
        K, horizon, epsilon, delta, first_phase, arm_order, n_runs: see
            :class:`PrivateRobustArmElimination`.
        alpha: contamination level α ∈ [0, 0.5] (the proof of Theorem 6.1 covers α ≤ 1/2).
        raw_moment_bound: u with E|X|^k ≤ u for every inlier law (the env's public value;
            u = max μ_a² + Var on ``HuberBandit-v0``).
        moment_order: k ≥ 2.
    """

    name = "prae-r"

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, alpha: float = 0.0,
                 raw_moment_bound: float = 1.0, moment_order: float = 2.0,
                 delta: float | None = None, first_phase: str = "batch-random",
                 arm_order: str = "index", n_runs: int = 1) -> None:
        super().__init__(K, horizon, epsilon, delta, first_phase, arm_order, n_runs)
        self.alpha = check_real("alpha", alpha, low=0.0, high=ALPHA_MAX_RAW)
        self.raw_moment_bound = check_real("raw_moment_bound", raw_moment_bound, low=0.0,
                                           low_open=True)
        self.moment_order = check_real("moment_order", moment_order, low=2.0)
        self.scale = self.raw_moment_bound ** (1.0 / self.moment_order)  # u^{1/k}
        self._init_schedule()

    def samples_needed(self, delta: np.ndarray | float) -> np.ndarray:
        return raw_moment_threshold(delta, self.alpha)

    def prm(self, runs: np.ndarray, x: np.ndarray, delta: np.ndarray) -> np.ndarray:
        assert self.noise is not None
        M, _ = raw_moment_parameters(x.shape[1], self.epsilon, delta, self.alpha,
                                     self.moment_order)
        mu = prm_raw_moment(x, self.scale * M, self.epsilon, self.noise.uniform(runs))
        self.charge_rounds(runs, self.seg_start[runs], self.seg_end[runs], self.epsilon,
                           "Algorithm 2 mean")
        return mu

    def radius(self, B: np.ndarray, delta: np.ndarray) -> np.ndarray:
        return self.scale * raw_moment_parameters(B, self.epsilon, delta, self.alpha,
                                                  self.moment_order)[1]


class DPRSE(PRAER):
    """**DPRSE** (Tao, Wu, Zhao, Wang 2022, "Optimal rates of (locally) differentially private
    heavy-tailed multi-armed bandits"), the baseline of paper 1 §7 — a **reconstruction**.

    Its pseudocode is in neither of our papers and no public code exists. Following SPEC §3.1 and
    paper 1's description ("more aggressive truncation thresholds which incorporate more
    outliers"), it is the same batched successive elimination with the raw-moment truncated
    Laplace mean (Algorithm 2) but thresholds that ignore contamination: Theorem 6.1's
    uncontaminated parameters M_τ = u^{1/k}(B_τ ε/(4 log(4/δ_τ)))^{1/k} and
    β_τ = u^{1/k}[√(2 log(4/δ_τ)/B_τ) + 2(4 log(4/δ_τ)/(B_τ ε))^{1−1/k}] (no α-term), and no
    random first phase. That is exactly :class:`PRAER` with α = 0.

    Args:
        K, horizon, epsilon, delta, raw_moment_bound, moment_order, arm_order, n_runs: as
            :class:`PRAER`.
    """

    name = "dprse"

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, raw_moment_bound: float = 1.0,
                 moment_order: float = 2.0, delta: float | None = None, arm_order: str = "index",
                 n_runs: int = 1) -> None:
        super().__init__(K, horizon, epsilon, 0.0, raw_moment_bound, moment_order, delta,
                         "batch-random", arm_order, n_runs)


class PRAEC(PrivateRobustArmElimination):
    """**PRAE-C**: Algorithm 1 with Algorithm 3 (finite k-th central moment), Theorems 6.10/6.12.

    r, M_τ, β_τ and 𝒯 follow Corollary 6.6 (α = 0) / 6.8 (α > 0) with the proofs' constants
    (module docstring). Algorithm 3 splits the B_τ pulls of a batch into two folds of
    n = B_τ/2 — the corollaries' conditions are on this fold size, so the first phase lasts while
    B_τ/2 < 𝒯 (Theorem 6.12 writes "n replaced by B_τ"; the radius must hold for the data actually
    used). Bins have width r and cover [−D, D) with D ≥ max(2r, ``mean_range``), rounded up so that
    2D/r is an integer. For a central moment bound E|X − μ|^k ≤ v, r, M and β are scaled by
    v^{1/k}.

    Args:
        K, horizon, epsilon, delta, first_phase, arm_order, n_runs: see
            :class:`PrivateRobustArmElimination`.
        alpha: contamination level α ∈ [0, 0.133) (the breakdown point of Corollary 6.8).
        central_moment_bound: v with E|X − μ|^k ≤ v (the env's public value: Var = 5).
        mean_range: a bound on |μ_a| (the env's public value); required.
        moment_order: k ≥ 2.
    """

    name = "prae-c"

    def __init__(self, K: int, horizon: int, epsilon: float = 1.0, alpha: float = 0.0,
                 central_moment_bound: float = 1.0, mean_range: float | None = None,
                 moment_order: float = 2.0, delta: float | None = None,
                 first_phase: str = "batch-random", arm_order: str = "index",
                 n_runs: int = 1) -> None:
        super().__init__(K, horizon, epsilon, delta, first_phase, arm_order, n_runs)
        self.alpha = check_real("alpha", alpha, low=0.0, high=ALPHA_MAX_CENTRAL, high_open=True)
        self.central_moment_bound = check_real("central_moment_bound", central_moment_bound,
                                               low=0.0, low_open=True)
        if mean_range is None:
            raise ValueError("mean_range (a bound D on |μ_a|) must be given for PRAE-C")
        self.mean_range = check_real("mean_range", mean_range, low=0.0)
        self.moment_order = check_real("moment_order", moment_order, low=2.0)
        self.scale = self.central_moment_bound ** (1.0 / self.moment_order)  # v^{1/k}
        self.r = self.scale * central_bin_width(self.alpha, self.moment_order)  # bin width
        self.n_bins = max(4, math.ceil(2.0 * self.mean_range / self.r))  # D ≥ 2r, D ≥ |μ_a|
        self.D = self.n_bins * self.r / 2.0
        self._init_schedule()

    def samples_needed(self, delta: np.ndarray | float) -> np.ndarray:
        return 2.0 * central_moment_threshold(delta, self.alpha, self.epsilon,
                                              self.D / self.scale)

    def prm(self, runs: np.ndarray, x: np.ndarray, delta: np.ndarray) -> np.ndarray:
        assert self.noise is not None
        n = x.shape[1] // 2
        _, M, _ = central_moment_parameters(n, self.epsilon, delta, self.alpha, self.moment_order)
        u_hist = np.stack([self.noise.uniforms(int(i), self.n_bins) for i in runs])
        u_mean = self.noise.uniform(runs)
        mu = prm_central_moment(x, self.scale * M, self.epsilon, self.D, self.r, u_hist, u_mean)
        start, mid = self.seg_start[runs], self.seg_start[runs] + n
        self.charge_rounds(runs, start, mid, self.epsilon, "Algorithm 3 histogram (fold 1)")
        self.charge_rounds(runs, mid, self.seg_end[runs], self.epsilon, "Algorithm 3 mean (fold 2)")
        return mu

    def radius(self, B: np.ndarray, delta: np.ndarray) -> np.ndarray:
        n = np.asarray(B) // 2
        return self.scale * central_moment_parameters(n, self.epsilon, delta, self.alpha,
                                                      self.moment_order)[2]
