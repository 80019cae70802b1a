"""Federated linear contextual bandits across M silos (paper 2; docs/guides/federated.md).

* :class:`FedLinUCB` (``fed-linucb``) — Private-FedLinUCB, paper 2's Algorithm 1 (Zhou &
  Chowdhury, *On Differentially Private Federated Linear Contextual Bandits*, ICLR 2024): every
  silo runs LinUCB on the server's private sums plus its own not-yet-synchronised data; every B
  rounds (a fixed, data-independent schedule) all silos send their batch sums through the
  protocol P = (R, S, A) of Algorithm 2 (:mod:`privenv.privacy.federated`): non-private,
  silo-level LDP, shuffle DP by amplification, or shuffle DP by P_Vec vector summation inside
  the tree (``"sdp-vector-sum"``: each user randomizes, the silos forward one-bit messages).
* :class:`SuperAgent` (``super-agent``) — paper 2's benchmark "(super) single agent running for
  MT rounds under the central model DP" (§6.1): one trusted server serves every silo's users
  with one model updated after every round, central-DP by a binary mechanism on the sums of all
  silos' data (protocol ``"central"``).
* :class:`FedUCBAdaptive` (``feducb-adaptive``) — the same learner with the data-adaptive
  synchronisation of FedUCB (Dubey & Pentland 2020), the flawed baseline of paper 2, §4: the sync
  times depend on the silos' raw data and are public, so it is **not** DP whatever the noise on
  the messages (paper 2, Example 4.1). Its sync times are exposed for membership tests.

Both hold ``n_runs`` runs × M silos with leading axes (n_runs, M): per silo a d×d inverse and two
d-vectors, plus the protocol's trees, O(n_runs·M·κ·d²) memory, never O(T) except the public
per-round sync record (a bool (n_runs, T) array). A round costs a few batched numpy calls: the
scores need φV⁻¹ for the K arms of every silo (n_runs·M·K·d² flops), V⁻¹ follows the local
rank-one updates by Sherman–Morrison, and at a sync one d×d eigendecomposition per run (W̃ is
shared by the run's silos).

Observations are the env's (n_runs, M, K, d) feature matrices; rewards the per-silo rewards
(n_runs, M): the agents declare ``env_requirements = {"reward": "silo"}`` so the runner builds
``FederatedLinearBandit-v0`` with ``reward="silo"``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privenv._validation import check_int
from privenv.agents.base import Agent
from privenv.agents.linear import (
    ALPHA_PARAM,
    D_PARAM,
    HORIZON_PARAM,
    REWARD_BOUND_PARAM,
    SIGMA_PARAM,
    THETA_BOUND_PARAM,
    oful_radius,
)
from privenv.parameters import DELTA, EPSILON, POSITIVE, SAMPLER, Integer, Options, Param, Real
from privenv.privacy.federated import (
    CENTRAL,
    PROTOCOLS,
    UNIT,
    Calibration,
    calibrate,
    make_protocol,
    message_floats,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.tree import lowest_set_bit
from privenv.privacy.vector_sum import VECTOR_SUM_S

__all__ = ["EIGEN_FLOOR", "FedLinUCB", "FedUCBAdaptive", "SuperAgent", "fed_confidence_radius"]

#: at a sync, eigenvalues of λI + W̃ below EIGEN_FLOOR·λ are raised to it (post-processing; only
#: possible when the privacy noise exceeds λ's high-probability bound; counted per run)
EIGEN_FLOOR = 1e-2
#: features may exceed norm 1 by float32 rounding up to this much (then projected); more raises
NORM_TOLERANCE = 1e-5


def fed_confidence_radius(
    t: int, M: int, d: int, lambda_: float, sigma: float, theta_bound: float, alpha: float
) -> float:
    """β_t: OFUL's radius (Abbasi-Yadkori et al. 2011, Thm 2) at round t with the
    determinant–trace bound on the ≤ (t − 1)M users in a silo's V:
    log det V ≤ d log(λ + (t − 1)M/d) (‖φ‖ ≤ 1), so

        β_t = R√(2 log(1/α) + d log(1 + (t − 1)M/(dλ))) + √λ·S.

    Data-independent (the same for every silo and run), like the authors' experiment code, whose
    width is R√(d log(1 + tM/(dλ)) + log(1/α)) + √λ·√d with a scale ``crs`` = 1 on the synthetic
    instance. Differences: OFUL's 2 log(1/α), S = ‖θ*‖ bound from the env (1) instead of √d.
    With privacy λ is the noisy λ and the same formula is used (as the authors do); paper 2's
    theorem width has further noise terms whose constants are not in our excerpt."""
    n = max(t - 1, 0) * M
    return float(oful_radius(d * math.log(lambda_ + n / d), d, lambda_, sigma, theta_bound,
                             alpha))


#: the protocols with a privacy level (every one but ``"none"``; the super agent's ``"central"``)
_PRIVATE = (*(p for p in PROTOCOLS if p != "none"), CENTRAL)


class _FederatedLinUCB(Agent):
    """Paper 2's Algorithm 1 for every silo of every run; subclasses choose the schedule
    (:meth:`sync_due`). Line numbers refer to Algorithm 1."""

    env_requirements = {"reward": "silo"}
    #: the protocol names this agent accepts
    protocols: tuple[str, ...] = PROTOCOLS
    families = ("federated",)
    parameters = {
        "M": Param(Integer(low=1), problem="M"),
        "K": Param(Integer(low=1), problem="K"),
        "d": D_PARAM,
        "horizon": HORIZON_PARAM,
        "protocol": Param(Options(PROTOCOLS), attribute="protocol_name"),
        "epsilon": Param(EPSILON, only_with=("protocol", _PRIVATE)),
        "delta": Param(DELTA, only_with=("protocol", _PRIVATE)),
        "alpha": ALPHA_PARAM,
        "reward_bound": REWARD_BOUND_PARAM,
        "sigma": SIGMA_PARAM,
        "theta_bound": THETA_BOUND_PARAM,
        "lambda_": Param(Real(0.0, low_open=True, none=True)),
        "beta": Param(Real(0.0, none=True)),
        "sampler": Param(SAMPLER, assumes="sampler", only_with=("protocol", _PRIVATE)),
    }

    # parameters stored by set_params (privenv.parameters; lambda_ None resolved below)
    protocol_name: str
    lambda_: float
    K: int
    M: int
    alpha: float
    beta: float | None
    d: int
    delta: float
    epsilon: float
    horizon: int
    reward_bound: float | None
    sampler: str
    sigma: float
    theta_bound: float

    def __init__(
        self,
        M: int,
        K: int,
        d: int,
        horizon: int,
        protocol: str,
        epsilon: float,
        delta: float,
        alpha: float,
        reward_bound: float | None,
        sigma: float,
        theta_bound: float,
        lambda_: float | None,
        beta: float | None,
        n_syncs: int,
        n_runs: int,
        batch: int | None = None,
        vector_sum_scale: float = VECTOR_SUM_S,
        sampler: str = "float",
    ) -> None:
        super().__init__(n_runs)
        self.set_params({k: v for k, v in locals().items()  # (the schedule: the subclass's)
                         if k not in ("n_syncs", "batch", "vector_sum_scale")})
        self.n_syncs_max = n_syncs
        self.calibration: Calibration = calibrate(
            self.protocol_name, epsilon=self.epsilon, delta=self.delta, M=self.M, d=self.d,
            horizon=self.horizon, n_syncs=n_syncs, alpha=self.alpha,
            reward_bound=self.reward_bound, batch=batch, vector_sum_scale=vector_sum_scale,
            sampler=self.sampler)
        if self.lambda_ is None:
            self.lambda_ = self.calibration.lambda_

    # -- public -------------------------------------------------------------------------------

    @property
    def sigma0(self) -> float:
        """Per-silo, per-node noise of the protocol (0 without privacy)."""
        return self.calibration.sigma0

    @property
    def rho_budget(self) -> float:
        """zCDP of one silo's message stream per user, κ·ρ_node (the ledger's budget; 0 without
        privacy). For shuffle DP it is the message-level cost before amplification."""
        return self.calibration.rho_stream

    def width(self) -> float:
        """β_t of the coming round (the override ``beta`` if given)."""
        if self.beta is not None:
            return self.beta
        return fed_confidence_radius(self.t + 1, self.M, self.d, self.lambda_, self.sigma,
                                     self.theta_bound, self.alpha)

    @property
    def ledger_users(self) -> int:
        """Users per run for the privacy ledger: one per (round, silo), T·M (the runner sizes
        ``simulate(..., ledger=True)``'s ledger with it)."""
        return self.horizon * self.M

    def episode_info(self) -> dict[str, np.ndarray]:
        """Per run: ``sync_rounds`` (number of synchronisations), ``floats_sent_per_silo``
        (real numbers each silo sent: d(d+1)/2 + d per sync; 0 for ``"sdp-vector-sum"``, which
        sends none), ``bits_sent_per_silo`` (one-bit messages each silo's users sent, only for
        ``"sdp-vector-sum"``: messages_per_user(P_Vec of the node) per user and released node;
        0 for the other protocols), ``clipped_rewards`` (rewards clipped to [−b, b] over all
        silos and rounds), ``eigen_clamps`` (syncs where λI + W̃ had an eigenvalue below
        EIGEN_FLOOR·λ)."""
        vector_sum = self.protocol_name == "sdp-vector-sum"
        return {
            "sync_rounds": self.n_syncs.copy(),
            "floats_sent_per_silo": self.n_syncs * (0 if vector_sum else message_floats(self.d)),
            "bits_sent_per_silo": (self.protocol.randomizer.bits_per_silo.copy() if vector_sum
                                   else np.zeros(self.n_runs, dtype=np.int64)),
            "clipped_rewards": self.clipped.copy(),
            "eigen_clamps": self.eigen_clamps.copy(),
        }

    def sync_rounds_of(self, run: int) -> np.ndarray:
        """The rounds t (1-based) at whose end ``run`` synchronised."""
        return np.flatnonzero(self.sync_times[run]) + 1

    # -- state --------------------------------------------------------------------------------

    def reset_state(self) -> None:
        n, M, d = self.n_runs, self.M, self.d
        assert self.noise is not None
        self.protocol = make_protocol(self.calibration, n, M, d, self.n_syncs_max, self.noise)
        self.W_tilde = np.zeros((n, d, d))  # W̃: the server's private Σφφᵀ (broadcast)
        self.U_tilde = np.zeros((n, d))  # Ũ: the server's private Σyφ
        self.W_loc = np.zeros((n, M, d, d))  # W_i: silo i's Σφφᵀ since the last sync
        self.U_loc = np.zeros((n, M, d))  # U_i
        # V⁻¹ = (λI + W̃ + W_i)⁻¹ per silo, and log det(V) − log det(λI + W̃) (adaptive rule)
        self.V_inv = np.broadcast_to(np.eye(d) / self.lambda_, (n, M, d, d)).copy()
        self.gain = np.zeros((n, M))
        self.last_sync = np.zeros(n, dtype=np.int64)
        self.n_syncs = np.zeros(n, dtype=np.int64)
        #: public record: sync_times[r, t − 1] is True iff run r synchronised after round t
        self.sync_times = np.zeros((n, self.horizon), dtype=bool)
        self._sync_end = np.zeros((n, self.n_syncs_max + 1), dtype=np.int64)  # round of sync k
        self.clipped = np.zeros(n, dtype=np.int64)
        self.eigen_clamps = np.zeros(n, dtype=np.int64)
        self._phi: np.ndarray | None = None
        self._buf: np.ndarray | None = None

    # -- the schedule (subclasses) ----------------------------------------------------------------

    def sync_due(self) -> np.ndarray:
        """Boolean (n_runs,): the runs that synchronise after round ``self.t``."""
        raise NotImplementedError

    # -- Algorithm 1 ---------------------------------------------------------------------------

    def _load(self, observations: Any) -> tuple[np.ndarray, np.ndarray]:
        """The features (a reused float64 buffer) and a scratch buffer of their shape."""
        obs = np.asarray(observations)
        shape = (self.n_runs, self.M, self.K, self.d)
        if obs.shape != shape:
            raise ValueError(f"observations must be feature matrices of shape {shape}, got "
                             f"{obs.shape}")
        if self._phi is None or self._buf is None:
            self._phi, self._buf = np.empty(shape), np.empty(shape)
        np.copyto(self._phi, obs)  # float64 copy into a reused buffer
        return self._phi, self._buf

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        phi, buf = self._load(observations)
        # line 5: θ̂_i = V⁻¹(Ũ + U_i), V = λI + W̃ + W_i (V⁻¹ kept up to date)
        theta = np.einsum("nmij,nmj->nmi", self.V_inv, self.U_tilde[:, None, :] + self.U_loc)
        # line 6: a = argmax_a ⟨φ_a, θ̂_i⟩ + β_t‖φ_a‖_{V⁻¹} (ties to the lowest index)
        np.matmul(phi, self.V_inv, out=buf)
        quad = np.einsum("nmkd,nmkd->nmk", buf, phi)
        score = np.matmul(phi, theta[..., None])[..., 0]
        score += self.width() * np.sqrt(np.maximum(quad, 0.0))
        return score.argmax(axis=2)

    def _clean(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Boundary of the mechanism: ‖φ‖ ≤ 1 (float rounding projected, more raises) and
        rewards clipped to the declared [−b, b] (counted in ``clipped_rewards``)."""
        if not np.all(np.isfinite(y)):
            raise ValueError("rewards must be finite numbers")
        if self.reward_bound is not None:
            over = np.abs(y) > self.reward_bound
            self.clipped += over.sum(axis=1)
            y = np.clip(y, -self.reward_bound, self.reward_bound)
        norm = np.sqrt(np.einsum("nmd,nmd->nm", x, x))
        if np.any(norm > 1.0 + NORM_TOLERANCE):
            raise ValueError(f"the chosen features must have Euclidean norm <= 1 (the "
                             f"calibration assumes it), got norm {norm.max()!r}")
        return x / np.maximum(norm, 1.0)[..., None], y

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        if self._phi is None:
            raise RuntimeError("call act() before observe()")
        n, M = self.n_runs, self.M
        a = np.asarray(actions)
        y = np.asarray(rewards, dtype=np.float64)
        if a.shape != (n, M) or y.shape != (n, M):
            raise ValueError(f"actions and rewards must have shape ({n}, {M}) (one per silo; "
                             f"build the env with reward='silo'), got {a.shape} and {y.shape}")
        x = self._phi[np.arange(n)[:, None], np.arange(M)[None, :], a]
        x, y = self._clean(x, y)
        # line 7: W_i ← W_i + φφᵀ, U_i ← U_i + yφ; V⁻¹ by Sherman–Morrison, and the log-det
        # gain by the matrix determinant lemma
        self.W_loc += x[..., :, None] * x[..., None, :]
        self.U_loc += y[..., None] * x
        Vx = np.einsum("nmij,nmj->nmi", self.V_inv, x)
        denom = 1.0 + np.einsum("nmi,nmi->nm", x, Vx)
        self.V_inv -= Vx[..., :, None] * Vx[..., None, :] / denom[..., None, None]
        self.gain += np.log(denom)
        self.protocol.collect(x, y)
        self.t += 1
        due = self.sync_due()  # line 9: communicate at the end of a batch
        if due.any():
            self._synchronize(due)

    def _synchronize(self, due: np.ndarray) -> None:
        runs = np.flatnonzero(due)
        # lines 10-16: every silo sends (W_i, U_i) through P = (R, S, A); the server's output
        W, U = self.protocol.synchronize(self.W_loc, self.U_loc, None if due.all() else due)
        self.W_tilde[runs], self.U_tilde[runs] = W[runs], U[runs]
        # line 17: silos receive W̃, Ũ and reset W_i, U_i: V = λI + W̃ for all of a run's silos
        w, Q = np.linalg.eigh(self.lambda_ * np.eye(self.d) + W[runs])
        floor = EIGEN_FLOOR * self.lambda_
        self.eigen_clamps[runs] += (w < floor).any(axis=1)
        w = np.maximum(w, floor)
        self.V_inv[runs] = ((Q / w[:, None, :]) @ np.swapaxes(Q, 1, 2))[:, None]
        self.W_loc[runs] = 0.0
        self.U_loc[runs] = 0.0
        self.gain[runs] = 0.0
        self.last_sync[runs] = self.t
        self.n_syncs[runs] += 1
        self.sync_times[runs, self.t - 1] = True
        self._sync_end[runs, self.n_syncs[runs]] = self.t
        self._charge(runs)

    def _charge(self, runs: np.ndarray) -> None:
        """Ledger (checking mode): the node released at sync k covers the syncs
        (k − 2^{j*}, k], i.e. the users (round s, silo m) of those batches; each is charged
        ρ_node (Gaussian protocols) or ε₀ (``"sdp-vector-sum"``: the node's (ε₀, δ₀); the
        ledger's ε column then counts nodes × ε₀, ≤ κε₀, while the declared ε composes them by
        advanced composition). Users are numbered s·M + m (s the 0-based round):
        ``Ledger(n_runs, T·M)``."""
        if self.ledger is None or not self.calibration.private:
            return
        if self.ledger.n_users != self.horizon * self.M:
            raise ValueError(f"{type(self).__name__}'s ledger users are (round, silo) pairs: "
                             f"attach Ledger(n_runs, horizon * M) = Ledger({self.n_runs}, "
                             f"{self.horizon * self.M}), got n_users={self.ledger.n_users}")
        k = self.n_syncs[runs]
        j = lowest_set_bit(k)
        first = self._sync_end[runs, k - (1 << j)]
        last = self._sync_end[runs, k]
        silos = np.arange(self.M)
        for r, s0, s1, jr, kr in zip(runs, first, last, j, k, strict=True):
            users = (np.arange(s0, s1)[:, None] * self.M + silos).ravel()
            self.charge(np.full(users.size, r), users, self.calibration.epsilon_node,
                        rho=self.calibration.rho_node, label=f"tree node level {jr} at sync {kr}")


class FedLinUCB(_FederatedLinUCB):
    """Private-FedLinUCB with fixed batches: paper 2, Algorithm 1 with the protocol of
    Algorithm 2.

    Round t, every silo i of every run (line numbers of Algorithm 1):

    5. V = λI + W̃ + W_i, θ̂ = V⁻¹(Ũ + U_i);
    6. play a = argmax_a ⟨φ_a, θ̂⟩ + β_t‖φ_a‖_{V⁻¹} (:func:`fed_confidence_radius`);
    7. observe y, W_i ← W_i + φφᵀ, U_i ← U_i + yφ;

    9. if t = kB: every silo sends its batch sums through P = (R, S, A) (lines 10–16,
       :class:`~privenv.privacy.federated.FederatedProtocol`), receives the server's W̃, Ũ
       (line 17) and resets W_i, U_i.

    The schedule t = kB never depends on data; a final partial batch (B ∤ T) is never sent.

    **Privacy** (:func:`~privenv.privacy.federated.calibrate`): ``"ldp"`` is silo-level
    (ε, δ)-LDP by the exact Gaussian calibration; ``"sdp-amplification"`` is (ε, δ) shuffle DP by
    the authors' amplification formula (ε ≤ 1, and only where the server's sum alone does not
    already exceed ε); ``"sdp-vector-sum"`` is (ε, δ) shuffle DP by P_Vec inside the tree: each
    user randomizes its packed (φφᵀ, yφ) once per released node containing it, each node
    (ε₀, δ₀)-shuffle DP, composed over κ nodes (:mod:`privenv.privacy.vector_sum`); all per
    user's (context, reward), replace-one, rewards clipped to the declared [−b, b]. ``"none"``:
    not private. In checking mode every user (round s, silo m) is
    charged ρ_node for each released node containing it (≤ κ of them).

    **Constants** (one choice, documented, the same in every experiment): λ = √M without noise,
    √(Mκ)σ₀(√(κ + log(1/α)) + √d) with noise (the authors' experiment code;
    docs/guides/federated.md); β_t of :func:`fed_confidence_radius`.

    Args:
        M, K, d: silos, arms per round, dimension (from the env).
        horizon: T (from the env).
        protocol: ``"none"`` (default), ``"ldp"``, ``"sdp-amplification"``, ``"sdp-vector-sum"``.
        epsilon, delta: the privacy target (paper 2's experiments: δ = 10⁻⁴ with
            ε ∈ {10⁻⁴, 10⁻³}; ε = 0.2, δ = 0.1).
        batch: B, rounds per batch (paper 2: 25), 1 ≤ B ≤ T.
        alpha: failure probability α of the confidence width and of λ (default 0.01).
        reward_bound: b: rewards are clipped to [−b, b]; required with noise (the env's
            ``public_info`` gives 1 for ±1 rewards and none for Gaussian noise).
        sigma: R, the reward noise's sub-Gaussian scale (env: 0.5 for paper 2's instance).
        theta_bound: S ≥ ‖θ*‖ (env: 1).
        lambda_: override λ.
        beta: override β_t by a constant.
        vector_sum_scale: s, the scale of P_Vec's binomial trials b (``"sdp-vector-sum"`` only;
            default :data:`~privenv.privacy.vector_sum.VECTOR_SUM_S` = 1, fixed, not tuned).
            The calibration refuses an s too small for the declared (ε, δ) and says so: raise it
            then (more noise, never less privacy).
        sampler: ``"float"`` (default) or ``"exact"``: with ``"ldp"`` (and the super agent's
            ``"central"``) the trees' items on a grid and discrete Gaussian node noise from each
            run's words, σ₀ calibrated through zCDP
            (:mod:`privenv.privacy.federated`, "Exact sampler"); refused for the shuffle
            protocols.
        n_runs: number of runs.
    """

    name = "fed-linucb"
    parameters = {
        **_FederatedLinUCB.parameters,
        "batch": Param(Integer(low=1)),
        "vector_sum_scale": Param(POSITIVE, only_with=("protocol", ("sdp-vector-sum",))),
    }

    # parameters stored by set_params (privenv.parameters)
    batch: int
    vector_sum_scale: float

    def __init__(
        self,
        M: int,
        K: int,
        d: int,
        horizon: int,
        protocol: str = "none",
        epsilon: float = 1.0,
        delta: float = 1e-4,
        batch: int = 25,
        alpha: float = 0.01,
        reward_bound: float | None = None,
        sigma: float = 1.0,
        theta_bound: float = 1.0,
        lambda_: float | None = None,
        beta: float | None = None,
        vector_sum_scale: float = VECTOR_SUM_S,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        horizon = self.horizon
        check_int("batch", self.batch, low=1, high=horizon)  # a sync at least once
        super().__init__(M, K, d, horizon, protocol, epsilon, delta, alpha, reward_bound, sigma,
                         theta_bound, lambda_, beta, horizon // self.batch, n_runs, self.batch,
                         self.vector_sum_scale, self.sampler)

    @property
    def privacy(self) -> PrivacyGuarantee:
        return self.calibration.guarantee

    def sync_due(self) -> np.ndarray:
        return np.full(self.n_runs, self.t % self.batch == 0)


class SuperAgent(FedLinUCB):
    """The "super single agent" of paper 2: a trusted server that serves all M silos' users,
    with central DP (Zhou & Chowdhury, ICLR 2024, §6.1, "Comparisons with related work").

    Paper 2 benchmarks Private-FedLinUCB against "a (super) single agent running for MT rounds
    under the central model DP (i.e., where central server is trusted)", whose regret is
    Õ(d√(MT) + √(MT)·d^{3/4} log^{1/4}(1/δ)/√ε) (paper 2's references [SS18] — Shariff & Sheffet
    2018 — and [CZ22a]) — the privacy cost silo-level LDP exceeds by M^{1/4} and shuffle DP
    matches. The excerpt
    defines it only by that sentence; here it is paper 2's learner (Algorithm 1, the same λ rule
    and width :func:`fed_confidence_radius` as :class:`FedLinUCB`, so that only the trust model
    changes) with:

    * **one model for all silos, updated every round** (``batch`` = 1 by default): the M users of
      round t arrive together, so a single agent serving them all plays the MT rounds in blocks
      of M, each block's actions chosen with everything seen before it;
    * **central DP** (protocol ``"central"``, :func:`~privenv.privacy.federated.calibrate`): the
      server sees the raw (φ, y) of every user and releases, after each sync, the prefix sums of
      a binary mechanism over the syncs, Gaussian node noise once on the *sum over silos*.
      Calibration: each user enters ≤ κ = ⌊log₂(T/B)⌋ + 1 nodes of the two trees, with
      replace-one sensitivities Δ_G = √2 (Gram upper triangle), Δ_u = 2b (rewards clipped to
      [−b, b]); the exact μ-GDP composition gives σ = √(κ(Δ_G² + Δ_u²))/μ*(ε, δ) (analytic
      Gaussian, Balle & Wang 2018) — the same formula as silo-level LDP's σ₀ (each silo there is
      such a stream), added once instead of M times. (ε, δ)-DP per user's (context, reward) in
      the central model; the actions a user's own round takes from its context are joint DP, as
      for ``central-dp-linucb``;
    * ``protocol="none"``: the same learner without noise (the non-private super agent, the
      reference of its privacy cost).

    Communication: every silo forwards its users' raw sums to the server at each sync
    (``floats_sent_per_silo`` = syncs·(d(d+1)/2 + d), unprotected — the trust model, not a
    federated protocol).

    Args:
        M, K, d, horizon: from the env.
        protocol: ``"central"`` (default) or ``"none"``.
        epsilon, delta: the central (ε, δ) per user (ignored for ``"none"``).
        batch: rounds between syncs (default 1: every round).
        alpha, reward_bound, sigma, theta_bound, lambda_, beta, sampler, n_runs: as
            :class:`FedLinUCB`.
    """

    name = "super-agent"
    protocols = (CENTRAL, "none")
    parameters = {**{k: v for k, v in FedLinUCB.parameters.items() if k != "vector_sum_scale"},
                  "protocol": Param(Options(protocols), attribute="protocol_name")}

    def __init__(
        self,
        M: int,
        K: int,
        d: int,
        horizon: int,
        protocol: str = CENTRAL,
        epsilon: float = 1.0,
        delta: float = 1e-4,
        batch: int = 1,
        alpha: float = 0.01,
        reward_bound: float | None = None,
        sigma: float = 1.0,
        theta_bound: float = 1.0,
        lambda_: float | None = None,
        beta: float | None = None,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(M, K, d, horizon, protocol, epsilon, delta, batch, alpha, reward_bound,
                         sigma, theta_bound, lambda_, beta, sampler=sampler, n_runs=n_runs)


class FedUCBAdaptive(_FederatedLinUCB):
    """FedUCB with data-adaptive synchronisation (Dubey & Pentland 2020, "Differentially-private
    federated linear bandits", NeurIPS; synchronous setting) — paper 2's flawed baseline (§4).

    The learner is Algorithm 1 of paper 2 (same λ, β, protocol and noise per ``protocol``); only
    the schedule differs: after round t, silo i triggers a global sync when

        (t − t_last) · (log det(V_sync + W_i) − log det(V_sync)) > D,

    V_sync = λI + W̃ the matrix of the last sync (the log-det gain is accumulated by the
    determinant lemma). Any trigger syncs all M silos of that run. Trees are sized for up to T
    syncs (κ = ⌊log₂T⌋ + 1). ``protocol="sdp-vector-sum"`` is refused (``ValueError`` naming
    ``batch``): P_Vec needs the node sizes in advance, i.e. fixed batches.

    **Not DP.** The sync times are public (every silo, and the server, sees when it happens) and
    depend on the silos' raw, un-noised data, so changing one user can move them (paper 2,
    Example 4.1) — no noise on the messages repairs that. ``privacy`` is therefore
    ``PrivacyGuarantee.none``; ``message_privacy`` is what the messages alone would give *if the
    schedule were public and data-independent* (it is not: a nominal value, not a guarantee). The
    ledger, which sees only the messages, stays within that nominal budget — it cannot see the
    side channel.

    **Public sync record** (what a membership-inference test reads): ``sync_times``, a bool array
    (n_runs, T), True at [r, t − 1] iff run r synchronised after round t;
    :meth:`sync_rounds_of` lists them; ``episode_info()["sync_rounds"]`` counts them.

    Args:
        M, K, d, horizon, protocol, epsilon, delta, alpha: as :class:`FedLinUCB`.
        reward_bound, sigma, theta_bound, lambda_, beta, sampler, n_runs: as :class:`FedLinUCB`
            (which also takes ``batch``).
        D: the threshold (default T·log(MT)/(dM), the threshold of DisLinUCB, Wang, Hu, Chen &
            Wang 2020, Theorem 4, whose rule FedUCB's synchronous version uses; a
            reconstruction — Dubey & Pentland's own constant is not in our sources).
    """

    name = "feducb-adaptive"
    parameters = {**_FederatedLinUCB.parameters, "D": Param(Real(0.0, low_open=True, none=True))}
    D: float  # (set_params' None resolved by the constructor)

    def __init__(
        self,
        M: int,
        K: int,
        d: int,
        horizon: int,
        protocol: str = "none",
        epsilon: float = 1.0,
        delta: float = 1e-4,
        D: float | None = None,
        alpha: float = 0.01,
        reward_bound: float | None = None,
        sigma: float = 1.0,
        theta_bound: float = 1.0,
        lambda_: float | None = None,
        beta: float | None = None,
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        horizon = self.horizon
        super().__init__(M, K, d, horizon, protocol, epsilon, delta, alpha, reward_bound, sigma,
                         theta_bound, lambda_, beta, horizon, n_runs, sampler=self.sampler)
        if self.D is None:
            self.D = horizon * math.log(self.M * horizon) / (self.d * self.M)

    @property
    def privacy(self) -> PrivacyGuarantee:
        """Not private — the data-dependent sync times are a public output."""
        return PrivacyGuarantee.none(UNIT)

    @property
    def message_privacy(self) -> PrivacyGuarantee:
        """The messages' guarantee conditional on a data-independent schedule — NOT a guarantee
        of this agent (see the class docstring)."""
        return self.calibration.guarantee

    def sync_due(self) -> np.ndarray:
        since = (self.t - self.last_sync)[:, None]
        return np.asarray((since * self.gain > self.D).any(axis=1))
