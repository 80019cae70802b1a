"""Top Two on per-arm doubling estimators (paper 3, §4.2–4.4 and Appendix H): AdaP-TT,
AdaP-TT* and TTUCB-DPA.

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*. SPEC §3.2.

All three are instances of the Top Two meta-algorithm (:class:`~privenv.agents.top_two.TopTwo`,
paper Algorithm 1) whose estimator is refreshed only at the end of per-arm **phases**:

* arm a's phase ends when its count doubles, N_{n,a} ≥ 2·N_{T_k(a),a} (Algorithm 5 line 3,
  Algorithm 11); with one initial pull per arm the phase ends are at counts 1, 2, 4, 8, …;
* **DAF(ε)** (Algorithm 5; AdaP-TT, AdaP-TT*): at a phase end, μ̃_a = mean of the rewards of
  *that phase only* (forgetting, line 6) + Lap(1/(εÑ_a)) (line 7), Ñ_a = the phase's sample
  count; the initial pull is released with Lap(1/ε). Each reward enters exactly one release of
  sensitivity 1/Ñ_a, so the algorithm is ε-DP in the central model (Lemma 20, rewards in [0, 1]);
* **DPA** (Algorithm 11; TTUCB-DPA): at a phase end, μ̂_a = mean of *all* arm-a rewards so far,
  no noise.

:class:`DoublingTopTwo` holds this machinery once (DPA = DAF without forgetting and without
noise). Between phase ends μ̃ and Ñ are frozen, so the GLR statistic and threshold (which use only
(μ̃, Ñ), Algorithm 9 line 11) can change only at phase ends: they are recomputed for the runs whose
estimate changed and memoised otherwise. The UCB leader uses (μ̃, Ñ) (line 14), the TC challenger
the global counts N (line 15), as :meth:`TopTwo.act_batch` does.

Module functions give the paper's formulas on arrays: :func:`k_fn` (k(x) = log₂x + 2),
:func:`daf_bonus` (eq. 11), :func:`daf_glr_threshold` (eq. 12), :func:`private_transport`
(eq. 13), :func:`lambert_w_bar` and :func:`h_fn` (Lemma 23), :func:`star_glr_threshold` (eq. 14),
:func:`daf_empirical_threshold` (the authors' public-code AdaP-TT threshold) and
:func:`star_empirical_threshold` (the same recipe applied to eq. 14).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import lambertw

from privenv._validation import check_choice, check_epsilon
from privenv.agents.top_two import (
    C_G,
    TopTwo,
    at_arm,
    empirical_threshold,
    glr_threshold,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_from_uniform

BONUSES = ("total", "literal")
PI2 = math.pi**2
_BRANCH = float(np.nextafter(-math.exp(-1.0), 0.0))  # just inside W₋₁'s domain [−1/e, 0)


# -- the paper's formulas ----------------------------------------------------------------------
def k_fn(x: np.ndarray | float) -> np.ndarray:
    """k(x) = log₂ x + 2 (eq. 11). On a phase-end count Ñ = 2^j it is an integer ≥ the phase
    index, which is how the union bounds over phases of Lemmas 21 and 23 use it."""
    return np.log2(x) + 2.0


def C_G_array(x: np.ndarray) -> np.ndarray:
    """𝒞_G (eq. 20) elementwise: one cached scalar minimisation per distinct value."""
    x = np.asarray(x, dtype=float)
    values, inverse = np.unique(x, return_inverse=True)
    return np.array([C_G(float(v)) for v in values])[inverse].reshape(x.shape)


def daf_bonus(w: np.ndarray, k: np.ndarray, epsilon: float) -> np.ndarray:
    """b^{G,ε}_a = √(k/ω_a) + k/(εω_a) (eq. 11) with a given k (k(ω_a) in the paper, k(‖N‖₁)
    by default in :class:`AdaPTT`; see its ``bonus`` argument)."""
    return np.sqrt(k / w) + k / (epsilon * w)


def daf_glr_threshold(
    w_a: np.ndarray, w_b: np.ndarray, K: int, delta: float, epsilon: float, sigma: float
) -> np.ndarray:
    """c^{G,ε}_{a,b}(ω, δ) of eq. 12 (Lemma 21), broadcast:

    2c^G_{a,b}(ω, δ(k(ω_a)²k(ω_b)²π⁴/18)⁻¹) + (1/(ε²σ²)) Σ_{c∈{a,b}} (1/ω_c)(log(π²Kk(ω_c)²/(3δ)))²,

    c^G of eq. 4, whose 𝒞_G term is evaluated at log((K−1)/δ′)/2 for the reduced δ′.
    """
    w_a, w_b = np.broadcast_arrays(np.asarray(w_a, dtype=float), np.asarray(w_b, dtype=float))
    k_a, k_b = k_fn(w_a), k_fn(w_b)
    # log((K−1)/δ′) with δ′ = 18δ/(k_a² k_b² π⁴)
    log_inv = math.log((K - 1) / delta) + 2.0 * np.log(k_a * k_b) + 2.0 * math.log(PI2) \
        - math.log(18.0)
    c_G = (2.0 * C_G_array(log_inv / 2.0)
           + 2.0 * np.log(4.0 + np.log(w_a)) + 2.0 * np.log(4.0 + np.log(w_b)))
    laplace = (np.log(PI2 * K * k_a**2 / (3.0 * delta)) ** 2 / w_a
               + np.log(PI2 * K * k_b**2 / (3.0 * delta)) ** 2 / w_b)
    return 2.0 * c_G + laplace / (epsilon**2 * sigma**2)


def private_transport(
    mu_a: np.ndarray, mu_b: np.ndarray, w_a: np.ndarray, w_b: np.ndarray, epsilon: float,
    sigma: float,
) -> np.ndarray:
    """W^{G,ε}_{a,b}(μ, ω) = (μ_a − μ_b)₊ min{ε/2, (μ_a − μ_b)₊} / (2σ²(1/ω_a + 1/ω_b)) (eq. 13)."""
    gap = np.maximum(mu_a - mu_b, 0.0)
    return gap * np.minimum(epsilon / 2.0, gap) / (2.0 * sigma * sigma * (1.0 / w_a + 1.0 / w_b))


def lambert_w_bar(x: np.ndarray | float) -> np.ndarray:
    """W̄₋₁(x) = −W₋₁(−e^{−x}) for x ≥ 1 (Lemma 23, Lemma 40): the root z ≥ 1 of z − log z = x.

    scipy's ``lambertw`` on branch −1 while e^{−x} is a normal double (x ≤ 700); beyond, where
    −e^{−x} would underflow, the same root is found by Newton's method on z − log z = x (started
    at x + log x, converged to machine precision) — exact, not an asymptotic approximation.
    """
    x = np.asarray(x, dtype=float)
    if np.any(x < 1.0) or np.any(np.isnan(x)):
        raise ValueError(f"lambert_w_bar needs x >= 1, got {x!r}")
    out = np.empty_like(x)
    small = x <= 700.0
    # −e^{−x} ≥ −1/e; at the branch point x = 1 (W̄₋₁(1) = 1) scipy returns nan for the double
    # nearest −1/e, so the argument is kept one ulp inside the domain
    out[small] = -lambertw(np.maximum(-np.exp(-x[small]), _BRANCH), k=-1).real
    if np.any(~small):
        y = x[~small]
        z = y + np.log(y)
        for _ in range(8):  # quadratic convergence from a point within log(y)/y of the root
            z = z - (z - np.log(z) - y) / (1.0 - 1.0 / z)
        out[~small] = z
    return out


def h_fn(x: np.ndarray, K: int, delta: float) -> np.ndarray:
    """h(x, δ) = W̄₋₁(2 log(π²Kk(x)²/(2δ)) + 4 log(4 + log x) + ½)/2 (Lemma 23)."""
    x = np.asarray(x, dtype=float)
    arg = 2.0 * np.log(PI2 * K * k_fn(x) ** 2 / (2.0 * delta)) + 4.0 * np.log(4.0 + np.log(x)) \
        + 0.5
    return lambert_w_bar(arg) / 2.0


def star_glr_threshold(
    gap: np.ndarray, w_a: np.ndarray, w_b: np.ndarray, K: int, delta: float, epsilon: float,
    sigma: float,
) -> np.ndarray:
    """c̃^{G,ε}_{a,b}(μ̃, ω, δ) of eq. 14 (Lemma 23), broadcast; ``gap`` = μ̃_a − μ̃_b.

    If (μ̃_a − μ̃_b)₊ < ε/2: ½c^{G,ε}_{a,b}(ω, 2δ/3) + (√2/(εσ)) Σ_c √(h(ω_c,δ)/ω_c)
    log(π²Kk(ω_c)²/(2δ)); otherwise (1/(2σ²)) log(π²K max_c k(ω_c)/(2δ))
    + (ε/(2√2σ)) Σ_c √(ω_c h(ω_c, δ)).
    """
    gap, w_a, w_b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (gap, w_a, w_b)))
    h_a, h_b = h_fn(w_a, K, delta), h_fn(w_b, K, delta)
    k_a, k_b = k_fn(w_a), k_fn(w_b)
    small = (daf_glr_threshold(w_a, w_b, K, 2.0 * delta / 3.0, epsilon, sigma) / 2.0
             + math.sqrt(2.0) / (epsilon * sigma)
             * (np.sqrt(h_a / w_a) * np.log(PI2 * K * k_a**2 / (2.0 * delta))
                + np.sqrt(h_b / w_b) * np.log(PI2 * K * k_b**2 / (2.0 * delta))))
    large = (np.log(PI2 * K * np.maximum(k_a, k_b) / (2.0 * delta)) / (2.0 * sigma**2)
             + epsilon / (2.0 * math.sqrt(2.0) * sigma)
             * (np.sqrt(w_a * h_a) + np.sqrt(w_b * h_b)))
    return np.where(np.maximum(gap, 0.0) < epsilon / 2.0, small, large)


def daf_empirical_threshold(
    w_a: np.ndarray, w_b: np.ndarray, delta: float, epsilon: float
) -> np.ndarray:
    """The authors' public-code AdaP-TT threshold (SPEC §3.2), for the **unit-variance**
    statistic ½(μ̃_a − μ̃_b)₊²/(1/Ñ_a + 1/Ñ_b):

    log(1/δ) + log(1 + log Ñ_a) + log(1 + log Ñ_b) + (1/Ñ_a + 1/Ñ_b) log²(1/δ)/ε².
    """
    L = math.log(1.0 / delta)
    return (L + np.log1p(np.log(w_a)) + np.log1p(np.log(w_b))
            + (1.0 / w_a + 1.0 / w_b) * L * L / epsilon**2)


def star_empirical_threshold(
    gap: np.ndarray, w_a: np.ndarray, w_b: np.ndarray, delta: float, epsilon: float
) -> np.ndarray:
    """Our ``"empirical"`` threshold for AdaP-TT* (the public code has no AdaP-TT*, SPEC §3.2),
    for the **unit-variance** statistic ½(μ̃_a − μ̃_b)₊ min{ε/2, (μ̃_a − μ̃_b)₊}/(1/Ñ_a + 1/Ñ_b).

    The recipe of the public code's AdaP-TT rule applied to eq. 14: that rule is the paper's
    δ → 0 form of eq. 12 at σ = 1 (with the Gaussian part L, not 2L) plus log(1 + log Ñ_c) per arm.
    The paper's δ → 0 form of eq. 14 (the display after Lemma 23) at σ = 1, plus the same terms:

    L/2 + (ε/(2√2))(√ω_a + √ω_b)√L + ℓ                                if (μ̃_a − μ̃_b)₊ ≥ ε/2,
    L + (1/(2ε²))(1/ω_a + 1/ω_b)L² + (√2/ε)(√(1/ω_a) + √(1/ω_b))L^{3/2} + ℓ   otherwise,

    L = log(1/δ), ℓ = log(1 + log ω_a) + log(1 + log ω_b). In the low-privacy case (where
    W^{G,ε} = W^G) it differs from :func:`daf_empirical_threshold` only in its smaller
    ε-terms, so AdaP-TT and AdaP-TT* are compared under one calibration.
    """
    L = math.log(1.0 / delta)
    loglog = np.log1p(np.log(w_a)) + np.log1p(np.log(w_b))
    small = (L + (1.0 / w_a + 1.0 / w_b) * L * L / (2.0 * epsilon**2)
             + math.sqrt(2.0) / epsilon * (np.sqrt(1.0 / w_a) + np.sqrt(1.0 / w_b)) * L**1.5)
    large = L / 2.0 + epsilon / (2.0 * math.sqrt(2.0)) * (np.sqrt(w_a) + np.sqrt(w_b)) \
        * math.sqrt(L)
    return np.where(np.maximum(gap, 0.0) < epsilon / 2.0, small, large) + loglog


# -- the shared machinery: Algorithm 5 (DAF) and Algorithm 11 (DPA) -----------------------------
class DoublingTopTwo(TopTwo):
    """Algorithm 1 with a per-arm doubling estimator: DAF(ε) (Algorithm 5) when ``forget`` is
    true, DPA (Algorithm 11) when it is false and ε = ∞ (no noise).

    Per-run state added to :class:`TopTwo`'s: ``phase_start`` N_{T_k(a),a} (the count at the
    start of arm a's current phase; 0 before its first pull), ``phase_sum`` (sum of the rewards
    the next release will use), ``mu_tilde`` μ̃, ``n_tilde`` Ñ (the number of rewards behind μ̃),
    ``phases`` k_{n,a} (releases so far; the paper's episode index).

    Subclasses give ``glr_statistic(mu, w, a)`` and ``glr_threshold(mu, w, a, total)`` for a
    subset of runs (rows of ``mu``, ``w``; ``a`` = their â; ``total`` = their pulls so far), and
    :meth:`TopTwo.transport` / :meth:`TopTwo.bonus`. In checking mode (a ledger attached before
    :meth:`reset`) every release charges its users, the pull indices t whose rewards it used,
    ε_release = sensitivity/scale = (1/Ñ)/b — so a reward reused across phases, or a smaller
    noise scale, shows up in the ledger.
    """

    forget: bool = True

    def __init__(self, K: int, epsilon: float, delta: float, beta: float, reward_mode: str,
                 n_runs: int) -> None:
        super().__init__(K, delta=delta, beta=beta, reward_mode=reward_mode, n_runs=n_runs)
        self.epsilon = epsilon

    @property
    def private(self) -> bool:
        return math.isfinite(self.epsilon)

    def reset_state(self) -> None:
        super().reset_state()
        n, K = self.n_runs, self.K
        self.phase_start = np.zeros((n, K), dtype=np.int64)  # N_{T_k(a),a}
        self.phase_sum = np.zeros((n, K))
        self.mu_tilde = np.zeros((n, K))  # μ̃ (Alg. 5 line 7)
        self.n_tilde = np.ones((n, K))  # Ñ (Alg. 5 line 5)
        self.phases = np.zeros((n, K), dtype=np.int64)  # k_{n,a}
        self._stat = np.zeros((n, K))  # memoised GLR statistic and threshold (see _refresh_glr)
        self._thr = np.zeros((n, K))
        self._dirty = np.ones(n, dtype=bool)
        # checking mode: which pulls (users) the next release of (run, arm) would use
        self._contrib = None
        if self.ledger is not None:
            self._contrib = np.zeros((n, K, self.ledger.n_users), dtype=bool)

    # -- estimator --------------------------------------------------------------------------------
    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """(μ̃, Ñ): the values of the last release of each arm (Algorithm 5 line 9)."""
        return self.mu_tilde, self.n_tilde

    def update_estimator(self, live: np.ndarray, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Store the reward in its arm's phase; release the arm if its count has doubled."""
        runs = np.flatnonzero(live)
        if runs.size == 0:
            return
        arms = arms[runs]
        self._accumulate(runs, arms, rewards[runs])
        ends = self.counts[runs, arms] >= 2 * self.phase_start[runs, arms]  # Alg. 5 line 3
        if ends.any():
            self._release(runs[ends], arms[ends])

    def _accumulate(self, runs: np.ndarray, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Add the rewards of pull ``self.t`` to the current phase of (run, arm)."""
        if self.private:  # DP needs rewards in [0, 1] (Lemma 20): clip, part of the algorithm
            rewards = np.clip(rewards, 0.0, 1.0)
        self.phase_sum[runs, arms] += rewards
        if self._contrib is not None:
            self._contrib[runs, arms, self.t] = True

    def noise_scale(self, n_tilde: np.ndarray) -> np.ndarray:
        """Laplace scale 1/(εÑ) of a phase mean of Ñ rewards in [0, 1] (Alg. 5 line 7)."""
        return 1.0 / (self.epsilon * n_tilde)

    def _release(self, runs: np.ndarray, arms: np.ndarray) -> None:
        """End the current phase of arm ``arms[i]`` in run ``runs[i]`` (Alg. 5 lines 4–7)."""
        counts = self.counts[runs, arms]
        n_new = counts - self.phase_start[runs, arms] if self.forget else counts  # line 5
        mean = self.phase_sum[runs, arms] / n_new  # line 6 (DPA: all rewards so far)
        if self.private:
            assert self.noise is not None
            scale = self.noise_scale(n_new)
            mean = mean + scale * laplace_from_uniform(self.noise.uniform(runs), 1.0)  # line 7
            self._charge_release(runs, arms, 1.0 / (n_new * scale))
        self.mu_tilde[runs, arms] = mean
        self.n_tilde[runs, arms] = n_new
        self.phases[runs, arms] += 1  # line 4
        self.phase_start[runs, arms] = counts  # T_k(a) = n
        if self.forget:
            self._forget(runs, arms)
        self._dirty[runs] = True

    def _forget(self, runs: np.ndarray, arms: np.ndarray) -> None:
        """Forgetting (Alg. 5 line 6): the next phase starts from no reward."""
        self.phase_sum[runs, arms] = 0.0
        if self._contrib is not None:
            self._contrib[runs, arms] = False

    def _charge_release(self, runs: np.ndarray, arms: np.ndarray, eps: np.ndarray) -> None:
        """Ledger: each release costs sensitivity/scale = (1/Ñ)/b to the users it used."""
        if self._contrib is None:
            return
        used = self._contrib[runs, arms]  # (releases, users)
        for value in np.unique(eps):
            rows = np.flatnonzero(eps == value)
            i, users = np.nonzero(used[rows])
            self.charge(runs[rows][i], users, float(value), label="DAF phase mean")

    # -- GLR stopping rule (Alg. 9 lines 10–13), memoised between phase ends ----------------------
    def _refresh_glr(self, mu: np.ndarray, w: np.ndarray, a: np.ndarray) -> None:
        rows = np.flatnonzero(self._dirty)
        if rows.size:
            mu_r, w_r, a_r = mu[rows], w[rows], a[rows]
            self._stat[rows] = self.glr_statistic(mu_r, w_r, a_r)
            total_r = self.counts[rows].sum(axis=1, keepdims=True)
            self._thr[rows] = self.glr_threshold(mu_r, w_r, a_r, total_r)
            self._dirty[rows] = False

    def stop_statistic(self, mu: np.ndarray, w: np.ndarray, a: np.ndarray) -> np.ndarray:
        self._refresh_glr(mu, w, a)
        return self._stat

    def stop_threshold(self, w: np.ndarray, a: np.ndarray, total: np.ndarray) -> np.ndarray:
        self._refresh_glr(self.mu_tilde, w, a)
        return self._thr

    def glr_statistic(self, mu: np.ndarray, w: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The GLR statistic W_{a_i, b}(μ̃_i, Ñ_i) for the given rows (:meth:`TopTwo.glr`)."""
        return self.glr(mu, w, a)

    def glr_threshold(
        self, mu: np.ndarray, w: np.ndarray, a: np.ndarray, total: np.ndarray
    ) -> np.ndarray:
        """c_{a_i, b} for the given rows; ``total`` (rows, 1) = their pulls so far."""
        raise NotImplementedError

    def episode_info(self) -> dict[str, np.ndarray]:
        """``adaptivity_rounds`` C(τ) = Σ_a k_{τ,a} (Appendix H): the number of releases (episodes,
        the initial one included) at the stop, or at the budget for runs that did not stop."""
        return {"adaptivity_rounds": self.phases.sum(axis=1)}


class AdaPTT(DoublingTopTwo):
    """AdaP-TT (paper 3, Algorithm 9): ε-global-DP Top Two with the DAF(ε) estimator, the
    Gaussian transportation cost W^G (eq. 3, leader/challenger and stopping), the bonus b^{G,ε}
    (eq. 11) and the threshold c^{G,ε} (eq. 12, Lemma 21).

    * lines 4–9: DAF(ε) (Algorithm 5), see :class:`DoublingTopTwo`;
    * line 10–13: â = argmax μ̃; stop when W^G_{â,a}(μ̃, Ñ) ≥ c_{â,a}(Ñ, δ) for all a ≠ â;
    * line 14: leader B = argmax μ̃_a + b^{G,ε}_a(Ñ); line 15: challenger with the global N;
    * line 16: β-tracking.

    The stopping time counts every pull, including those of unfinished phases (whose rewards are
    never released). Rewards are clipped to [0, 1] before entering a phase mean (the DP
    guarantee assumes [0, 1], Lemma 20; Bernoulli rewards are unchanged).

    **Bonus (eq. 11).** Taken literally, k(ω_a) makes the bonus of an arm shrink with its own
    count only: an arm with a very low first private mean (Laplace noise of scale 1/ε on one
    reward) is never leader or challenger again and the run never stops (SPEC §3.2). Default
    ``bonus="total"`` uses k(‖N‖₁), the total count, as the paper's analysis (§4.3) and the
    authors' public code do; ``bonus="literal"`` is eq. 11 as printed.

    Args:
        K: number of arms.
        epsilon: privacy budget ε > 0.
        delta: confidence δ ∈ (0, 1).
        threshold: ``"theory"``: W^G with σ against c^{G,ε} of eq. 12 (δ-correct, Lemma 21);
            ``"empirical"``: the authors' public-code rule, the unit-variance statistic
            ½(μ̃_â − μ̃_a)₊²/(1/Ñ_â + 1/Ñ_a) against log(1/δ) + log(1 + log Ñ_â) + log(1 + log Ñ_a)
            + (1/Ñ_â + 1/Ñ_a) log²(1/δ)/ε² (:func:`daf_empirical_threshold`), with the sign of
            the gap and â = argmax μ̃ (not the public code's UCB leader).
        bonus: ``"total"`` (default) or ``"literal"``, see above.
        sigma: sub-Gaussian scale σ > 0 (1/2 for rewards in [0, 1]).
        beta: tracking proportion β ∈ (0, 1).
        reward_mode: ``"sample"`` (the sample is the reward) or ``"cost"`` (the observation).
        n_runs: number of runs.
    """

    name = "adap-tt"

    def __init__(
        self,
        K: int,
        epsilon: float = 1.0,
        delta: float = 0.01,
        threshold: str = "theory",
        bonus: str = "total",
        sigma: float = 0.5,
        beta: float = 0.5,
        reward_mode: str = "sample",
        n_runs: int = 1,
    ) -> None:
        super().__init__(K, check_epsilon(epsilon), delta, beta, reward_mode, n_runs)
        self.set_gaussian_parameters(threshold, sigma)
        self.bonus_kind = check_choice("bonus", bonus, BONUSES)

    @property
    def privacy(self) -> PrivacyGuarantee:
        return PrivacyGuarantee("central", self.epsilon, 0.0, "reward")

    def bonus(self, w: np.ndarray, total: np.ndarray) -> np.ndarray:
        k = k_fn(total) if self.bonus_kind == "total" else k_fn(w)
        return daf_bonus(w, k, self.epsilon)  # eq. 11

    def glr_threshold(
        self, mu: np.ndarray, w: np.ndarray, a: np.ndarray, total: np.ndarray
    ) -> np.ndarray:
        if self.threshold == "empirical":
            return daf_empirical_threshold(at_arm(w, a), w, self.delta, self.epsilon)
        return daf_glr_threshold(at_arm(w, a), w, self.K, self.delta, self.epsilon, self.sigma)


class AdaPTTStar(AdaPTT):
    """AdaP-TT* (paper 3, Algorithm 10): AdaP-TT with the privacy-aware transportation cost
    W^{G,ε} (eq. 13) in the TC challenger (line 15) and the GLR stopping rule (line 11), and the
    mean-aware threshold c̃^{G,ε} of eq. 14 (Lemma 23, with h and W̄₋₁ computed exactly).

    Args: as :class:`AdaPTT`, except ``threshold``:
        ``"theory"``: W^{G,ε} with σ against c̃^{G,ε} (eq. 14), δ-correct (Lemma 23);
        ``"empirical"`` (our choice — the authors' public code has no AdaP-TT*): the
        unit-variance statistic W^{G,ε} (σ = 1) against :func:`star_empirical_threshold`, the
        paper's asymptotic form of eq. 14 (after Lemma 23) calibrated like the public code's
        AdaP-TT rule, in the spirit of Remark 53 ("empirical thresholds approximating the
        theoretical ones").
    """

    name = "adap-tt-star"

    def pair_cost(self, mu_a: np.ndarray, mu: np.ndarray, w_a: np.ndarray, w: np.ndarray,
                  sigma: float) -> np.ndarray:
        return private_transport(mu_a, mu, w_a, w, self.epsilon, sigma)  # W^{G,ε}, eq. 13

    def glr_threshold(
        self, mu: np.ndarray, w: np.ndarray, a: np.ndarray, total: np.ndarray
    ) -> np.ndarray:
        gap = at_arm(mu, a) - mu
        if self.threshold == "empirical":
            return star_empirical_threshold(gap, at_arm(w, a), w, self.delta, self.epsilon)
        return star_glr_threshold(gap, at_arm(w, a), w, self.K, self.delta, self.epsilon,
                                  self.sigma)


class TTUCBDPA(DoublingTopTwo):
    """TTUCB with doubling per arm (paper 3, Appendix H, Algorithm 11): a batched, non-private
    TTUCB. Means are refreshed only when an arm's count doubles, with **all** its rewards so far
    (no forgetting, no noise); W^G and b^G (eq. 3), threshold c^G (eq. 4).

    The number of adaptivity rounds C(τ) = Σ_a k_{τ,a} (Appendix H) is reported per run by
    :meth:`episode_info` as ``adaptivity_rounds``.

    Deviation (a reading of Algorithm 11): it returns (μ̂_{n,a}, N_{n,a}); we pair μ̂ with the
    number of rewards behind it, N_{T_k(a),a}, in the leader's bonus and the GLR statistic, so
    the statistic is the Gaussian GLR of the released means (c^G is time-uniform, Lemma 35, hence
    valid on this subsequence) and the stopping rule changes only at phase ends, the source of
    the factor 2 in the paper's bound (2T*_{KL,β}).

    Args:
        K, delta, sigma, beta, alpha, s, reward_mode, n_runs: as
            :class:`~privenv.agents.top_two.TTUCB`.
        threshold: ``"theory"`` (c^G, eq. 4) or ``"empirical"`` (the public-code TTUCB rule
            log((1 + log n)/δ) with the unit-variance statistic; n = total pulls at the last
            phase end — between phase ends the statistic is frozen and this threshold only
            grows, so the stopping decisions equal those of evaluating it with the current n).
    """

    name = "ttucb-dpa"
    forget = False

    def __init__(
        self,
        K: int,
        delta: float = 0.01,
        threshold: str = "theory",
        sigma: float = 0.5,
        beta: float = 0.5,
        alpha: float = 1.2,
        s: float = 1.2,
        reward_mode: str = "sample",
        n_runs: int = 1,
    ) -> None:
        super().__init__(K, math.inf, delta, beta, reward_mode, n_runs)
        self.set_gaussian_parameters(threshold, sigma, alpha, s)

    def glr_threshold(
        self, mu: np.ndarray, w: np.ndarray, a: np.ndarray, total: np.ndarray
    ) -> np.ndarray:
        if self.threshold == "empirical":
            return np.broadcast_to(empirical_threshold(total, self.delta), w.shape)
        return glr_threshold(at_arm(w, a), w, self.K, self.delta)
