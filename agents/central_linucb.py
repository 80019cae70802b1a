"""Central-DP LinUCB (Shariff & Sheffet 2018, "Differentially private contextual linear bandits"):
a trusted server keeps tree-based private prefix sums of Σφφᵀ and Σφy
(:class:`~privenv.privacy.tree.TreeMechanism`) and runs OFUL on them with a shift and a width
inflated for the noise — the trusted-server reference point of paper 4's baselines
(:mod:`privenv.agents.linear` has the others and the ridge machinery this agent shares;
docs/guides/linear.md).

Like the other linear agents it holds the state of ``n_runs`` runs with a leading run axis, and
adds its two trees: O(n_runs·log T·d²) memory, independent of the horizon.
"""

from __future__ import annotations

import math

import numpy as np

from privenv.agents.base import Agent
from privenv.agents.linear import (
    ALPHA_PARAM,
    D_PARAM,
    HORIZON_PARAM,
    REWARD_BOUND_PARAM,
    SIGMA_PARAM,
    THETA_BOUND_PARAM,
    chosen_features,
    feature_matrices,
    oful_radius,
    optimistic_actions,
)
from privenv.parameters import DELTA, EPSILON, POSITIVE, SAMPLER, Flag, Param
from privenv.privacy.accounting import compose_rho, rho_to_epsilon_cks, tree_levels, tree_rho
from privenv.privacy.exact import calibrate_gaussian
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import gaussian_sigma_analytic
from privenv.privacy.tree import TreeMechanism
from privenv.privacy.wishart import gram_sensitivity

__all__ = ["CentralDPLinUCB", "tree_noise_bounds"]


def tree_noise_bounds(
    noise_sigma: float, levels: int, d: int, T: int, alpha: float
) -> tuple[float, float]:
    """(Υ, ‖h‖_max): high-probability bounds on the noise of the private prefix sums of
    :class:`CentralDPLinUCB`, each holding for all rounds t ≤ T with probability ≥ 1 − α/4.

    After t items each tree's prefix is the sum of k = popcount(t) ≤ m = ``levels`` nodes, so the
    Gram noise N_t is symmetric with upper triangle i.i.d. N(0, kσ²) and the vector noise h_t is
    N(0, kσ²I_d). Gaussian concentration of the 1-Lipschitz Euclidean norm of n standard normals
    (E‖z‖ ≤ √n, P(‖z‖ ≥ √n + u) ≤ e^{−u²/2}) with u = √(2 ln(4T/α)) and a union bound over t ≤ T:

    * ‖N_t‖_op ≤ ‖N_t‖_F ≤ √2‖triu N_t‖₂ ≤ Υ = √m σ(√(d(d+1)) + 2√(ln(4T/α)));
    * ‖h_t‖₂ ≤ √m σ(√d + √(2 ln(4T/α))).

    Shariff & Sheffet (2018, §4, additive Gaussian noise) state Υ as √m σ(4√d + 2 ln(2T/α)) (the
    form of Zheng et al.'s Υ_t, :func:`ldp_linucb_upsilon`); their constants could not be checked
    here, so we use this derivation instead: it is a proof, and for d ≤ 15 it is also the smaller of
    the two (√(d(d+1)) ≤ 4√d iff d ≤ 15).
    """
    root = math.sqrt(levels) * noise_sigma
    log_term = math.log(4.0 * T / alpha)
    upsilon = root * (math.sqrt(d * (d + 1.0)) + 2.0 * math.sqrt(log_term))
    h_max = root * (math.sqrt(d) + math.sqrt(2.0 * log_term))
    return upsilon, h_max


class CentralDPLinUCB(Agent):
    r"""Central-DP LinUCB with the tree-based mechanism (Shariff & Sheffet 2018, "Differentially
    private contextual linear bandits", NeurIPS; their tree-based LinUCB with additive Gaussian
    noise).

    A trusted server sees each user's (φ_t, y_t) and keeps two private prefix sums with the binary
    mechanism (:class:`~privenv.privacy.tree.TreeMechanism`, node noise drawn once and memoised):
    G̃_t = Σ_{s≤t} φ_sφ_sᵀ + N_t (symmetric Gaussian node noise) and ũ_t = Σ_{s≤t} y_sφ_s + h_t.
    Round t (per run), with m = ⌊log₂T⌋ + 1 tree levels:

    1. Ṽ = G̃_{t−1} + (λ + 2Υ)I, i.e. V_{t−1} + H_{t−1} with the regulariser H = N + (λ + 2Υ)I
       (Υ from :func:`tree_noise_bounds`: ‖N‖ ≤ Υ w.h.p., so ρ_min I ⪯ H ⪯ ρ_max I with
       ρ_min = λ + Υ, ρ_max = λ + 3Υ — Shariff & Sheffet's shift 2Υ and bounds [Υ, 3Υ], plus the
       ridge λ so that the agent stays well-posed as ε → ∞);
    2. θ̃ = Ṽ⁻¹ũ_{t−1};
    3. √β = R√(2 ln(2/α) + ln det Ṽ − d ln ρ_min) + S√ρ_max + γ, γ = ‖h‖_max/√ρ_min
       (their width for a noisy regulariser ρ_min I ⪯ H ⪯ ρ_max I: OFUL's Theorem 2 with
       regulariser ρ_min I — V + ρ_min I ⪯ Ṽ, so ln det Ṽ bounds its log det — plus
       ‖θ*‖_H ≤ S√ρ_max and ‖h‖_{Ṽ⁻¹} ≤ ‖h‖/√ρ_min; the three events fail with probability
       ≤ α/2 + α/4 + α/4);
    4. play argmax_a ⟨φ(x_t, a), θ̃⟩ + √β ‖φ(x_t, a)‖_{Ṽ⁻¹} (ties to the lowest index);
    5. observe y_t; add φ_tφ_tᵀ and y_tφ_t to the trees.

    Ṽ changes by a full-rank noise update every round, so it is eigendecomposed per round (a
    batched d×d ``eigh``: Ṽ⁻¹ and ln det Ṽ at once). On the failure event of step 1 (probability
    ≤ α/4) eigenvalues below λ are raised to λ — post-processing of private values.

    **Privacy.** One user = one round's (φ, y), ‖φ‖₂ ≤ 1, \|y\| ≤ 1, replace-one. Replacing a user
    changes the upper triangle of φφᵀ by ≤ Δ_G = √2 (1 for d = 1;
    :func:`~privenv.privacy.wishart.gram_sensitivity`) and yφ by ≤ Δ_u = 2 in L2; each item
    enters m nodes of each tree, so the two trees together are ρ = m(Δ_G² + Δ_u²)/(2σ²)-zCDP
    (:func:`~privenv.privacy.accounting.tree_rho` composed by
    :func:`~privenv.privacy.accounting.compose_rho`) and, being a composition of
    Gaussian mechanisms, exactly μ-GDP with μ = √(2ρ). σ is the analytic-Gaussian calibration
    (Balle & Wang 2018) for the sensitivity √(m(Δ_G² + Δ_u²)): the smallest σ whose exact (ε, δ)
    conversion meets the declared (ε, δ). Actions of other rounds are post-processing of the
    released prefix sums and of their own users' contexts, so the guarantee is Shariff & Sheffet's
    *joint* DP: round t's own action uses φ(x_t, ·) and is not protected from user t. In checking
    mode every user is charged ρ once, when their data enter the trees.

    **Exact sampler** (``sampler="exact"``): both trees round their items to the grid and draw
    discrete Gaussian node noise from each run's words
    (:class:`~privenv.privacy.tree.TreeMechanism`, "Exact sampler"). The multivariate discrete
    Gaussian is ρ-zCDP but not exactly μ-GDP, so σ is calibrated through zCDP instead: the smallest
    σ whose two trees, rounding included, are ρ-zCDP with ρ =
    :func:`~privenv.privacy.accounting.rho_for_epsilon` (ε, δ) (CKS20's conversion), never below
    the float σ; the declared ε′ ≤ ε is that conversion of the exact ρ. The conversion is looser
    than the exact GDP one, so σ is 7.6 % larger than the float sampler's at ε = 1, δ = 10⁻⁶ (d =
    5, T = 10⁴; tests/agents/test_central_linucb.py). The confidence width uses the drawn scale
    σ_k·g; Υ and γ keep their Gaussian derivation (the discrete Gaussian N_ℤ(0, σ_k²) has variance
    below σ_k² and is σ_k²-sub-Gaussian, CKS20; we did not re-derive Υ for it).

    Deviations: two trees (Σφφᵀ and Σφy) instead of one tree over the (d+1)×(d+1) matrix of
    (φ, y), with the accounting above; the extra ridge λ; Υ and γ from our derivation
    (:func:`tree_noise_bounds`); σ calibrated exactly rather than by their ln(4/δ)-style formula.

    Args:
        d: feature dimension.
        horizon: T (from the env): fixes the number of tree levels.
        epsilon: ε > 0 of the whole stream per user.
        delta: the privacy δ ∈ (0, 1) (default 10⁻⁶, our choice).
        sigma: R, the sub-Gaussian scale of the reward noise (``public_info``: 1 for ±1 rewards).
        theta_bound: S ≥ ‖θ*‖₂ (``public_info``: 1).
        lambda_: ridge λ > 0 added to the shift 2Υ (default 1).
        alpha: failure probability α ∈ (0, 1) of the confidence set (default 0.01).
        clip: clip labels into [−1, 1] and project features onto the unit ball instead of raising
            (needed for ``noise="gaussian"`` envs).
        reward_bound: the env's label bound (``public_info``); ``None`` (unbounded labels) is
            refused unless ``clip=True``.
        sampler: ``"float"`` (default: binary64 Gaussian node noise, DP in idealized arithmetic
            only) or ``"exact"`` (discrete Gaussian on a grid; see "Exact sampler").
        n_runs: number of runs.
    """

    name = "central-dp-linucb"
    description = "central-DP LinUCB"  # for the input check's messages
    families = ("linear",)
    parameters = {
        "d": D_PARAM,
        "horizon": HORIZON_PARAM,
        "epsilon": Param(EPSILON),
        "delta": Param(DELTA),
        "sigma": SIGMA_PARAM,
        "theta_bound": THETA_BOUND_PARAM,
        "lambda_": Param(POSITIVE),
        "alpha": ALPHA_PARAM,
        "clip": Param(Flag()),
        "reward_bound": REWARD_BOUND_PARAM,
        "sampler": Param(SAMPLER, assumes="sampler"),
    }
    #: audit hooks, kept by every real agent — the binary mechanism of both trees, and a factor on
    #: their node noise σ (the declared ρ and the confidence widths keep the calibrated σ). A
    #: mutant subclass swaps in a tree that redraws its node noise, or a factor 0.5, and runs this
    #: agent's own code (``privenv audit --targets central-dp-linucb``).
    tree_class: type[TreeMechanism] = TreeMechanism
    noise_multiplier: float = 1.0

    # parameters stored by set_params (privenv.parameters)
    alpha: float
    clip: bool
    d: int
    delta: float
    epsilon: float
    horizon: int
    lambda_: float
    reward_bound: float | None
    sampler: str
    sigma: float
    theta_bound: float

    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        sigma: float = 1.0,
        theta_bound: float = 1.0,
        lambda_: float = 1.0,
        alpha: float = 0.01,
        clip: bool = False,
        reward_bound: float | None = 1.0,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        reward_bound = self.reward_bound
        if reward_bound is None or reward_bound > 1.0:
            if not self.clip:
                raise ValueError(f"reward must lie in [-1, 1] for {self.description}, but the "
                                 f"env declares reward_bound={reward_bound!r} (e.g. "
                                 "noise='gaussian'); pass clip=True to clip labels")
        # privacy calibration (class docstring, "Privacy" and "Exact sampler")
        self.levels = tree_levels(self.horizon)
        self.gram_sensitivity = gram_sensitivity(self.d, 1.0)
        self.moment_sensitivity = 2.0
        total = math.sqrt(self.levels * (self.gram_sensitivity**2 + self.moment_sensitivity**2))
        self.noise_sigma = gaussian_sigma_analytic(self.epsilon, self.delta, total)
        drawn_sigma = self.noise_sigma
        if self.sampler == "exact":
            cal = calibrate_gaussian(self.epsilon, self.delta,
                                     [(self.gram_sensitivity, self.d * (self.d + 1) // 2),
                                      (self.moment_sensitivity, self.d)],
                                     self.levels, self.noise_sigma)
            self.noise_sigma, self.rho, drawn_sigma = cal.sigma, cal.rho, cal.noise.sigma
        else:
            self.rho = compose_rho([
                tree_rho(self.horizon, self.noise_sigma, self.gram_sensitivity),
                tree_rho(self.horizon, self.noise_sigma, self.moment_sensitivity)])
        # noise bounds and the regulariser's spectrum (step 1)
        self.upsilon, self.h_max = tree_noise_bounds(drawn_sigma, self.levels, self.d,
                                                     self.horizon, self.alpha)
        self.shift = self.lambda_ + 2.0 * self.upsilon
        self.rho_min = self.lambda_ + self.upsilon
        self.rho_max = self.lambda_ + 3.0 * self.upsilon
        self.gamma = self.h_max / math.sqrt(self.rho_min)

    @property
    def privacy(self) -> PrivacyGuarantee:
        """(ε, δ)-DP in the central model (joint DP), per user's (context, reward); with the
        exact sampler ε′ ≤ ε, CKS20's conversion of the exact ρ."""
        if self.sampler == "exact":
            return PrivacyGuarantee("central", rho_to_epsilon_cks(self.rho, self.delta),
                                    self.delta, "(context, reward)", sampler="exact")
        return PrivacyGuarantee("central", self.epsilon, self.delta, "(context, reward)")

    def reset_state(self) -> None:
        n, d = self.n_runs, self.d
        sigma = self.noise_multiplier * self.noise_sigma
        self.gram_tree = self.tree_class(n, (d, d), sigma, self.horizon, self.run_noise,
                                         symmetric=True, sampler=self.sampler)
        self.moment_tree = self.tree_class(n, (d,), sigma, self.horizon, self.run_noise,
                                           sampler=self.sampler)
        self.G = np.zeros((n, d, d))  # G̃: private Σφφᵀ (the tree's latest prefix sum)
        self.u = np.zeros((n, d))  # ũ: private Σyφ
        self._phi: np.ndarray | None = None

    def width(self, logdet: np.ndarray) -> np.ndarray:
        """√β of every run given ln det Ṽ (step 3)."""
        return (oful_radius(logdet, self.d, self.rho_min, self.sigma, 0.0, self.alpha / 2.0)
                + self.theta_bound * math.sqrt(self.rho_max) + self.gamma)

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        phi = feature_matrices(observations, self.d, self.n_runs)
        self._phi = phi
        w, Q = np.linalg.eigh(self.G + self.shift * np.eye(self.d))  # step 1
        w = np.maximum(w, self.lambda_)
        V_inv = (Q / w[:, None, :]) @ np.swapaxes(Q, 1, 2)
        theta = np.einsum("nij,nj->ni", V_inv, self.u)  # step 2
        width = self.width(np.log(w).sum(axis=1))
        return optimistic_actions(phi, theta, width, V_inv)  # step 4

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        from privenv.wrappers.ldp_linear import validate_linear_input

        x = chosen_features(self._phi, actions)
        # ‖φ‖ ≤ 1, |y| ≤ 1 (or clipped): the same boundary check as the local randomizers
        x, y = validate_linear_input(x, np.asarray(rewards, dtype=np.float64), self.d, self.clip,
                                     self.description)
        self.G = self.gram_tree.add(x[:, :, None] * x[:, None, :])  # step 5
        self.u = self.moment_tree.add(y[:, None] * x)
        self.charge(np.arange(self.n_runs), np.full(self.n_runs, self.t), rho=self.rho,
                    label="binary trees of Σφφᵀ and Σyφ")
        self.t += 1
