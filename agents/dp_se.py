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

Two versions behind one registry name ``dp-se`` (SPEC §3.2):

* :class:`DPSE`, **regret** (``task="regret"``, the default): β = 1/T, and once one arm is left
  it is played to the end with no further release.
* :class:`DPSEBAI`, **fixed-confidence best-arm identification** (``task="bai"``; paper 3, §4.4
  "Comparison to DP-SE"): β = δ, and the run **stops** recommending the survivor when one arm is
  left. It overrides only the one-arm case of :meth:`DPSE._plan_epoch`, ``act_batch`` (stop
  actions) and ``observe_batch`` (where the sample is); the epoch schedule
  (:meth:`DPSE.epoch_length`), the estimator and the widths (:meth:`DPSE.widths`) are shared.

``DPSE(..., task="bai")`` builds a :class:`DPSEBAI`, so :func:`privenv.agents.make` gives the BAI
version on ``BestArmIdentification-v0``, whose public description says ``"task": "bai"``.

Not copied from the authors' public code of paper 3: its DP-SE divided each epoch's sum by the
arm's *cumulative* count (a mean biased towards 0 from epoch 2 on); here the epoch's sum is divided
by R_e, the epoch's own count.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privenv._validation import check_choice, check_delta, check_epsilon, check_real
from privenv.agents.mab import NEVER, BatchedElimination
from privenv.envs.bai import DEFAULT_HORIZON
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_from_uniform
from privenv.problems.bai import REWARD_MODES, stop

#: the two versions: ``"regret"`` (:class:`DPSE`) and ``"bai"`` (:class:`DPSEBAI`)
TASKS = ("regret", "bai")

#: default reward range on an env with a public mean range D and moment bound v (order k):
#: [−D − 3σ, D + 3σ] with σ = v^{1/k} — the means and three inlier standard deviations around them.
RANGE_MARGIN_SD = 3.0


class DPSE(BatchedElimination):
    """DP-SE (Sajed & Sheffet 2019): ε-DP successive elimination, for regret (β = 1/T) and for
    best-arm identification (β = δ, stop on the survivor; :class:`DPSEBAI`, built on BAI envs).

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
        delta, reward_mode: parameters of the best-arm-identification version only (see
            :class:`DPSEBAI`); the regret version rejects them.
        task: ``"regret"`` (this class; the default) or ``"bai"``: ``DPSE(..., task="bai")``
            builds a :class:`DPSEBAI`. :func:`privenv.agents.make` fills it from the env's public
            description (``"bai"`` on ``BestArmIdentification-v0``).
        n_runs: number of runs.
    """

    name = "dp-se"
    TASK = "regret"

    def __new__(cls, *args: object, task: str | None = None, **kwargs: object) -> DPSE:
        # one registry name, two versions: the task picks the class (then its __init__ runs)
        return super().__new__(DPSEBAI if cls is DPSE and task == "bai" else cls)

    def __init__(
        self,
        K: int,
        horizon: int | None = None,
        epsilon: float = 1.0,
        beta: float | None = None,
        reward_range: Sequence[float] | None = None,
        mean_range: float | None = None,
        central_moment_bound: float | None = None,
        moment_order: float = 2.0,
        arm_order: str = "index",
        delta: float | None = None,
        reward_mode: str = "sample",
        task: str | None = None,
        n_runs: int = 1,
    ) -> None:
        self.task = self.TASK if task is None else check_choice("task", task, TASKS)
        if self.task != self.TASK:
            raise ValueError(f"task must be {self.TASK!r} for {type(self).__name__}, got "
                             f"{task!r}; DPSE(task={task!r}) builds the right class")
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        horizon = self._check_task_parameters(horizon, delta)
        super().__init__(K, horizon, n_runs, arm_order)
        self.epsilon = check_epsilon(epsilon)
        self.beta = self._failure_probability(beta, delta)
        if reward_range is None:
            reward_range = self.default_reward_range(mean_range, central_moment_bound,
                                                     moment_order)
        lo, hi = self._check_range(reward_range)
        self.reward_range = (lo, hi)
        self._lo, self._width = lo, hi - lo

    def _check_task_parameters(self, horizon: int | None, delta: float | None) -> int | None:
        """The regret version needs T and takes no BAI parameter; returns the horizon."""
        if delta is not None:
            raise ValueError("delta is the confidence of best-arm identification (task='bai'); "
                             "the regret version's failure probability is beta (default 1/T)")
        if self.reward_mode != "sample":
            raise ValueError(f"reward_mode must be 'sample' for the regret version (the "
                             f"reward is the sample), got {self.reward_mode!r}")
        return horizon

    def _failure_probability(self, beta: float | None, delta: float | None) -> float:
        """β ∈ (0, 1); regret default 1/T."""
        if beta is None:
            beta = 1.0 / self.horizon if self.horizon > 1 else 0.5
        return check_real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)

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


class DPSEBAI(DPSE):
    """DP-SE for fixed-confidence best-arm identification (Sajed & Sheffet 2019, Algorithm 2 with
    β = δ; paper 3, §4.4 "Comparison to DP-SE", and its experiments' baseline).

    The epochs of :class:`DPSE` with β = δ; when one arm is left at the end of an epoch the run
    **stops** and recommends it (action ``stop(survivor, K)``). The stopping time τ is every pull
    made — since the stop comes at an epoch's end, every pull has entered exactly one released
    epoch mean. A stopped run's state is frozen: the runner keeps calling
    :meth:`act_batch`/:meth:`observe_batch` for all runs until all stop, and a stopped run keeps
    returning its stop action and ignores its feedback (as in
    :class:`~privenv.agents.top_two.TopTwo`).
    ε-DP in the central model, per reward: each reward enters one Laplace release at ε, and
    the stop and the recommendation are functions of the releases (post-processing).

    Per-run state (besides :class:`DPSE`'s): ``stopped``, ``recommendation`` (−1 while running),
    ``stopping_time`` (pulls when it stopped).

    Args:
        K: number of arms (≥ 2).
        epsilon: privacy budget ε > 0.
        delta: confidence δ ∈ (0, 1) (default 0.01, paper 3's experiments); β = δ.
        reward_mode: where the sample is: ``"sample"`` (the reward) or ``"cost"`` (the
            observation; ``BestArmIdentification-v0``'s default, filled by
            :func:`privenv.agents.make`).
        reward_range: (lo, hi) mapped to [0, 1] and clipped (default [0, 1]: Bernoulli and Beta
            laws are untouched; a Gaussian law is clipped, see :class:`DPSE`).
        arm_order: order of the active arms within an epoch (see :class:`DPSE`).
        horizon: the env's sample budget (unused by the algorithm; default: the env's, 10⁸).
        task: ``"bai"`` (or ``None``).
        n_runs: number of runs.

    ``beta``, ``mean_range``, ``central_moment_bound`` and ``moment_order`` are the regret
    version's; a ``beta`` other than δ is rejected (β = δ).
    """

    TASK = "bai"

    def _check_task_parameters(self, horizon: int | None, delta: float | None) -> int:
        self.delta = check_delta(0.01 if delta is None else delta)
        return DEFAULT_HORIZON if horizon is None else horizon  # unused: the env enforces it

    def _failure_probability(self, beta: float | None, delta: float | None) -> float:
        if beta is not None and beta != self.delta:  # (β = δ itself is accepted, as recorded)
            raise ValueError(f"beta is not a parameter of the BAI version (β = δ); give delta, "
                             f"got beta={beta!r}")
        return self.delta  # β = δ

    def reset_state(self) -> None:
        n = self.n_runs
        self.stopped = np.zeros(n, dtype=bool)
        self.recommendation = np.full(n, -1, dtype=np.int64)
        self.stopping_time = np.zeros(n, dtype=np.int64)
        super().reset_state()

    def _plan_epoch(self, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        plan, R = super()._plan_epoch(runs)
        # BAI: one arm left at the end of an epoch → stop and recommend it; τ = all pulls so far
        last = runs[self.n_active[runs] == 1]
        if last.size:
            self.stopped[last] = True
            self.recommendation[last] = np.argmax(self.active[last], axis=1)
            self.stopping_time[last] = self.t
        return plan, R

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        return np.where(self.stopped, stop(self.recommendation, self.K), self.arm)

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        if self.reward_mode == "cost":
            rewards = np.asarray(observations, dtype=float).reshape(self.n_runs, -1)[:, 0]
        # stop actions (every action of a stopped run) carry no sample; a stopped run's segment
        # never ends, so nothing it accumulates is ever released
        super().observe_batch(actions, np.where(actions < self.K, rewards, 0.0), observations)
