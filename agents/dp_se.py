"""DP-SE: differentially private successive elimination (Sajed & Sheffet 2019).

Sajed & Sheffet, *An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping
Rule*, ICML 2019 (Algorithm 2, "DP-SE"), as specified in SPEC §3.2 (and used by paper 3 as a
baseline). Rewards in [0, 1]. Epochs e = 1, 2, … with active set S:

    Δ_e = 2^{−e},
    R_e = ⌈max{32 log(8|S|e²/β)/Δ_e², 8 log(4|S|e²/β)/(εΔ_e)}⌉ pulls of every active arm,
    μ̃_a = (mean of arm a's rewards in this epoch only) + Lap(1/(εR_e)),
    h_e = √(log(8|S|e²/β)/(2R_e)),  c_e = log(4|S|e²/β)/(εR_e),
    eliminate a if max_b μ̃_b − μ̃_a > 2(h_e + c_e).

Each reward enters one epoch mean of one arm (sensitivity 1/R_e) and is then forgotten, so the
algorithm is ε-DP in the central model (per reward).

This module is the **regret** version: β = 1/T, and once one arm is left it is played to the end
with no further release. The best-arm-identification version differs only in β = δ and in
stopping (recommending the survivor) when one arm is left; it is meant to subclass :class:`DPSE`
and override :meth:`DPSE._plan_epoch`'s one-arm case and ``act_batch`` — the epoch schedule
(:meth:`DPSE.epoch_length`), the estimator and the widths (:meth:`DPSE.widths`) are shared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privenv._validation import check_epsilon, check_real
from privenv.agents.mab import NEVER, BatchedElimination
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_from_uniform

#: default reward range on an env with a public mean range D and moment bound v (order k):
#: [−D − 3σ, D + 3σ] with σ = v^{1/k} — the means and three inlier standard deviations around them.
RANGE_MARGIN_SD = 3.0


class DPSE(BatchedElimination):
    """DP-SE (Sajed & Sheffet 2019) for regret: ε-DP successive elimination, β = 1/T.

    Rewards must be bounded for the Laplace sensitivity: every reward x is mapped to
    (x − lo)/(hi − lo) and **clipped to [0, 1] as part of the algorithm** (``reward_range``). On
    rewards that really lie in [lo, hi] nothing is clipped; on heavy-tailed or contaminated rewards
    the clipping biases the means — that is the price of DP-SE's bounded-reward assumption.

    Args:
        K: number of arms (≥ 2).
        horizon: T.
        epsilon: privacy budget ε > 0.
        beta: failure probability β ∈ (0, 1) of the elimination; default 1/T.
        reward_range: (lo, hi), lo < hi. Default: from the env's public description if it has a
            mean range D — [−D − 3σ, D + 3σ], σ = ``central_moment_bound``^{1/k} (0 if unknown)
            (on ``HuberBandit-v0``: D = 100, σ = √5, so [−106.7, 106.7]) — else [0, 1].
        mean_range, central_moment_bound, moment_order: public description used only for the
            default ``reward_range`` (filled by :func:`privenv.agents.make`).
        arm_order: ``"index"`` (default) or ``"random"`` order of the active arms in an epoch
            (see :class:`~privenv.agents.mab.BatchedElimination`).
        n_runs: number of runs.
    """

    name = "dp-se"

    def __init__(
        self,
        K: int,
        horizon: int,
        epsilon: float = 1.0,
        beta: float | None = None,
        reward_range: Sequence[float] | None = None,
        mean_range: float | None = None,
        central_moment_bound: float | None = None,
        moment_order: float = 2.0,
        arm_order: str = "index",
        n_runs: int = 1,
    ) -> None:
        super().__init__(K, horizon, n_runs, arm_order)
        self.epsilon = check_epsilon(epsilon)
        if beta is None:
            beta = 1.0 / self.horizon if self.horizon > 1 else 0.5
        self.beta = check_real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        if reward_range is None:
            reward_range = self.default_reward_range(mean_range, central_moment_bound,
                                                     moment_order)
        lo, hi = self._check_range(reward_range)
        self.reward_range = (lo, hi)
        self._lo, self._width = lo, hi - lo

    @staticmethod
    def default_reward_range(mean_range: float | None, central_moment_bound: float | None,
                             moment_order: float = 2.0) -> tuple[float, float]:
        """[−D − 3σ, D + 3σ] from a public mean range D and moment bound, else [0, 1]."""
        if mean_range is None:
            return (0.0, 1.0)
        D = check_real("mean_range", mean_range, low=0.0)
        sigma = 0.0
        if central_moment_bound is not None:
            v = check_real("central_moment_bound", central_moment_bound, low=0.0)
            sigma = v ** (1.0 / check_real("moment_order", moment_order, low=2.0))
        return (-D - RANGE_MARGIN_SD * sigma, D + RANGE_MARGIN_SD * sigma)

    @staticmethod
    def _check_range(reward_range: Sequence[float]) -> tuple[float, float]:
        try:
            lo, hi = (float(v) for v in reward_range)
        except (TypeError, ValueError):
            msg = f"reward_range must be a pair (lo, hi), got {reward_range!r}"
            raise ValueError(msg) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"reward_range must be finite with lo < hi, got {reward_range!r}")
        return lo, hi

    @property
    def privacy(self) -> PrivacyGuarantee:
        return PrivacyGuarantee("central", self.epsilon, 0.0, "reward")

    # -- the schedule of Sajed & Sheffet -------------------------------------------------------
    def epoch_length(self, e: np.ndarray, n_active: np.ndarray) -> np.ndarray:
        """R_e = ⌈max{32 log(8|S|e²/β)/Δ_e², 8 log(4|S|e²/β)/(εΔ_e)}⌉, Δ_e = 2^{−e}."""
        e = np.asarray(e, dtype=float)
        S = np.asarray(n_active, dtype=float)
        gap = 2.0**-e
        sampling = 32.0 * np.log(8.0 * S * e**2 / self.beta) / gap**2
        privacy = 8.0 * np.log(4.0 * S * e**2 / self.beta) / (self.epsilon * gap)
        return np.ceil(np.maximum(sampling, privacy)).astype(np.int64)

    def widths(self, e: np.ndarray, n_active: np.ndarray, R: np.ndarray) -> np.ndarray:
        """h_e + c_e = √(log(8|S|e²/β)/(2R_e)) + log(4|S|e²/β)/(εR_e)."""
        e = np.asarray(e, dtype=float)
        S = np.asarray(n_active, dtype=float)
        h = np.sqrt(np.log(8.0 * S * e**2 / self.beta) / (2.0 * R))
        c = np.log(4.0 * S * e**2 / self.beta) / (self.epsilon * R)
        return h + c

    def reset_state(self) -> None:
        self.seg_sum = np.zeros(self.n_runs)  # Σ of the mapped rewards of the current segment
        self.n_active = np.full(self.n_runs, self.K)  # |S| at the start of the epoch
        super().reset_state()

    def _plan_epoch(self, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        plan = self.active[runs].copy()
        S = plan.sum(axis=1)
        self.n_active[runs] = S
        R = self.epoch_length(self.epoch[runs], S)
        # regret version: the survivor is played to the end, with no further release
        return plan, np.where(S == 1, NEVER, R)

    def _begin_segment(self, runs: np.ndarray) -> None:
        self.seg_sum[runs] = 0.0

    def _accumulate(self, rewards: np.ndarray) -> None:
        self.seg_sum += np.clip((rewards - self._lo) / self._width, 0.0, 1.0)

    def _end_segment(self, runs: np.ndarray) -> None:
        assert self.noise is not None
        R = self.seg_len[runs]
        noise = laplace_from_uniform(self.noise.uniform(runs), 1.0) / (self.epsilon * R)
        self.estimates[runs, self.arm[runs]] = self.seg_sum[runs] / R + noise  # Lap(1/(εR_e))
        self.charge_rounds(runs, self.seg_start[runs], self.seg_end[runs], self.epsilon,
                           "DP-SE epoch mean")

    def _end_epoch(self, runs: np.ndarray) -> None:
        w = self.widths(self.epoch[runs], self.n_active[runs], self.seg_len[runs])
        self.eliminate(runs, 2.0 * w)
