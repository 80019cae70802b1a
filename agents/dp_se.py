"""DP-SE: differentially private successive elimination (Sajed & Sheffet 2019).

Sajed & Sheffet, *An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping
Rule*, ICML 2019 (Algorithm 2, "DP-SE"), also paper 3's baseline (docs/guides/bai.md, "Design
choices"). Rewards in [0, 1]. Epochs e = 1, 2, … with active set S:

    Δ_e = 2^{−e},
    R_e = ⌈max{32 log(8|S|e²/β)/Δ_e², 8 log(4|S|e²/β)/(εΔ_e)}⌉ pulls of every active arm,
    μ̃_a = (mean of arm a's rewards in this epoch only) + Lap(1/(εR_e)),
    h_e = √(log(8|S|e²/β)/(2R_e)),  c_e = log(4|S|e²/β)/(εR_e),
    eliminate a if max_b μ̃_b − μ̃_a > 2(h_e + c_e).

Each reward enters one epoch mean of one arm (sensitivity 1/R_e) and is then forgotten, so the
algorithm is ε-DP in the central model (per reward).

Two versions behind one registry name ``dp-se``:

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
from typing import NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv.agents.kernel import record_release
from privenv.agents.mab import (
    MOMENT_ORDER,
    NEVER,
    BatchedElimination,
    ElimState,
    accumulate,
    begin_segment,
    eliminate,
    elimination_action,
    elimination_ready,
    end_epoch,
    end_segment,
    first_active,
    plan_epoch,
)
from privenv.envs.bai import DEFAULT_HORIZON
from privenv.parameters import EPSILON, SAMPLER, Integer, Options, Param, Real, RealRange
from privenv.privacy.exact import laplace_release, sampler_guarantee
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import laplace_noise
from privenv.privacy.samplers import ExactSampler, FloatSampler, central_sampler
from privenv.problems.bai import REWARD_MODES
from privenv.seeding import NoiseView, take_uniform

#: the two versions, ``"regret"`` (:class:`DPSE`) and ``"bai"`` (:class:`DPSEBAI`)
TASKS = ("regret", "bai")

#: default reward range on an env with a public mean range D and moment bound v (order k):
#: [−D − 3σ, D + 3σ] with σ = v^{1/k} — the means and three inlier standard deviations around them.
RANGE_MARGIN_SD = 3.0
#: epochs tabulated (R_e ≥ 4^e·32 log(…) exceeds any sample budget long before)
MAX_EPOCH = 64


class DPSEParams(NamedTuple):
    r"""DP-SE's constants: R_e and h_e + c_e tabulated over epochs e and active-set sizes \|S\|
    (``epoch_table``, ``width_table``); rewards are mapped by (x − ``lo``)/``width``. ``bai``
    selects the best-arm-identification version; ``cumulative_count`` is an audit hook (the
    authors' public code's bias, see :class:`DPSE`)."""

    K: int
    epsilon: float
    lo: float
    width: float
    epoch_table: np.ndarray
    width_table: np.ndarray
    bai: bool
    random_order: bool
    forget: bool
    noise_multiplier: float
    cumulative_count: bool
    sampler: FloatSampler | ExactSampler
    words_per_step: int = 0


@plan_epoch.register(DPSEParams)
@jit
def _dpse_plan(p: DPSEParams, s: ElimState, noise: NoiseView, run: int) -> int:
    size = 0
    for a in range(p.K):
        s.todo[run, a] = s.active[run, a]
        size += s.active[run, a]
    s.n_active[run] = size
    if size == 1:
        if p.bai:  # one arm left at the end of an epoch: stop and recommend it; τ = all pulls
            s.stopped[run] = True
            s.recommendation[run] = first_active(s, run)
            s.stopping_time[run] = s.t[run]
        return NEVER  # the survivor is played to the end (regret), with no further release
    return p.epoch_table[min(s.epoch[run], MAX_EPOCH), size]


@begin_segment.register(DPSEParams)
@jit
def _dpse_begin(p: DPSEParams, s: ElimState, run: int) -> None:
    if p.forget:
        s.seg_sum[run] = 0.0


@accumulate.register(DPSEParams)
@jit
def _dpse_accumulate(p: DPSEParams, s: ElimState, run: int, reward: float) -> None:
    """Each reward mapped to [0, 1] and clipped (part of the algorithm, see :class:`DPSE`)."""
    s.seg_sum[run] += np.minimum(np.maximum((reward - p.lo) / p.width, 0.0), 1.0)


@end_segment.register(DPSEParams)
@jit
def _dpse_end_segment(p: DPSEParams, s: ElimState, noise: NoiseView, run: int) -> None:
    """μ̃_a = (this epoch's sum)/R_e + Lap(1/(εR_e)): sensitivity 1/R_e."""
    R = s.seg_len[run]
    arm = s.arm[run]
    estimate = _epoch_release(p.sampler, p, s.seg_sum[run], R, noise, run)
    if p.cumulative_count:  # audit hook: the public code's division by the cumulative count
        s.cum_count[run, arm] += R
        estimate *= R / s.cum_count[run, arm]
    s.estimates[run, arm] = estimate
    record_release(s.releases, run, s.acc_start[run], s.seg_end[run], p.epsilon, np.int64(0))


@generic
def _epoch_release(sampler: FloatSampler | ExactSampler, p: DPSEParams, total: float, R: int,
                   noise: NoiseView, run: int) -> float:
    """The epoch's mean (sum/R) + Lap(1/(εR)) with the agent's sampler (sensitivity 1/R)."""
    raise NotImplementedError


@_epoch_release.register(FloatSampler)
@jit(inline="always")
def _epoch_release_float(sampler: FloatSampler, p: DPSEParams, total: float, R: int,
                         noise: NoiseView, run: int) -> float:
    # Lap(1/(εR)) drawn as Lap(1)/(εR): the order of operations of the numpy implementation,
    # whose outputs the golden tests reproduce bit for bit (Lap(1/(εR)) itself rounds differently)
    noise_value = laplace_noise(take_uniform(noise, run), p.noise_multiplier)
    return total / R + noise_value / (p.epsilon * R)


@_epoch_release.register(ExactSampler)
@jit(inline="always")
def _epoch_release_exact(sampler: ExactSampler, p: DPSEParams, total: float, R: int,
                         noise: NoiseView, run: int) -> float:
    return laplace_release(noise, run, total / R, 1.0 / R, sampler.q)


@end_epoch.register(DPSEParams)
@jit
def _dpse_end_epoch(p: DPSEParams, s: ElimState, run: int) -> None:
    """Eliminate a if max_b μ̃_b − μ̃_a > 2(h_e + c_e)."""
    eliminate(p, s, run, 2.0 * p.width_table[min(s.epoch[run], MAX_EPOCH), s.n_active[run]])


@elimination_action.register(DPSEParams)
@jit
def _dpse_action(p: DPSEParams, s: ElimState, noise: NoiseView, run: int) -> int:
    if s.stopped[run]:
        return p.K + s.recommendation[run]
    return s.arm[run]


@elimination_ready.register(DPSEParams)
@jit
def _dpse_ready(p: DPSEParams, s: ElimState, run: int) -> int:
    return 0


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
        sampler: ``"float"`` (default: binary64 Laplace noise) or ``"exact"`` (the discrete
            Laplace on a grid, :mod:`privenv.privacy.exact`: each epoch mean exactly ε′-DP,
            ε′ = 2²⁰/⌈2²⁰/ε⌉ ≤ ε, on the doubles the computer releases).
        n_runs: number of runs.
    """

    name = "dp-se"
    TASK = "regret"
    families = ("huber", "bai", "bernoulli")
    # parameters that the constructor resolves (stored by set_params, None meaning a default)
    task: str
    horizon: int
    beta: float
    reward_range: tuple[float, float]
    parameters = {
        **BatchedElimination.parameters,
        "horizon": Param(Integer(low=1, none=True), assumes="horizon"),
        "epsilon": Param(EPSILON),
        "beta": Param(Real(0.0, 1.0, low_open=True, high_open=True, none=True)),
        "reward_range": Param(RealRange(none=True)),
        "mean_range": Param(Real(0.0, none=True), assumes="mean_range"),
        "central_moment_bound": Param(Real(0.0, none=True), assumes="central_moment_bound"),
        "moment_order": MOMENT_ORDER,
        "delta": Param(Real(0.0, 1.0, low_open=True, high_open=True, none=True)),
        "reward_mode": Param(Options(REWARD_MODES), problem="reward_mode"),
        "task": Param(Options(TASKS, none=True), problem="task"),
        "sampler": Param(SAMPLER, assumes="sampler"),
    }

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
        sampler: str = "float",
        n_runs: int = 1,
    ) -> None:
        self.set_params(locals())
        super().__init__(n_runs)
        if self.task is None:
            self.task = self.TASK
        if self.task != self.TASK:
            raise ValueError(f"task must be {self.TASK!r} for {type(self).__name__}, got "
                             f"{task!r}; DPSE(task={task!r}) builds the right class")
        self.horizon = self._check_task_parameters(self.horizon, self.delta)
        self.beta = self._failure_probability(self.beta, self.delta)
        if self.reward_range is None:
            self.reward_range = self.default_reward_range(self.mean_range,
                                                          self.central_moment_bound,
                                                          self.moment_order)
        lo, hi = self.reward_range
        self._lo, self._width = lo, hi - lo

    def _check_task_parameters(self, horizon: int | None, delta: float | None) -> int:
        """The regret version needs T and takes no BAI parameter; returns the horizon."""
        if delta is not None:
            raise ValueError("delta is the confidence of best-arm identification (task='bai'); "
                             "the regret version's failure probability is beta (default 1/T)")
        if self.reward_mode != "sample":
            raise ValueError(f"reward_mode must be 'sample' for the regret version (the "
                             f"reward is the sample), got {self.reward_mode!r}")
        return Integer(low=1).check("horizon", horizon)

    def _failure_probability(self, beta: float | None, delta: float | None) -> float:
        """β ∈ (0, 1); regret default 1/T."""
        if beta is None:
            return 1.0 / self.horizon if self.horizon > 1 else 0.5
        return beta

    @staticmethod
    def default_reward_range(mean_range: float | None, central_moment_bound: float | None,
                             moment_order: float = 2.0) -> tuple[float, float]:
        """[−D − 3σ, D + 3σ] from a public mean range D and moment bound, else [0, 1]."""
        if mean_range is None:
            return (0.0, 1.0)
        sigma = 0.0 if central_moment_bound is None else central_moment_bound ** (
            1.0 / moment_order)
        return (-mean_range - RANGE_MARGIN_SD * sigma, mean_range + RANGE_MARGIN_SD * sigma)

    @property
    def privacy(self) -> PrivacyGuarantee:
        return sampler_guarantee(self.sampler, "central", self.epsilon, "reward")

    # -- the schedule of Sajed & Sheffet -------------------------------------------------------
    def epoch_length(self, e: np.ndarray, n_active: np.ndarray) -> np.ndarray:
        """R_e = ⌈max{32 log(8|S|e²/β)/Δ_e², 8 log(4|S|e²/β)/(εΔ_e)}⌉, Δ_e = 2^{−e} (capped at
        ``NEVER``, an epoch longer than any budget: at tiny ε or late epochs R_e exceeds int64)."""
        e = np.asarray(e, dtype=float)
        S = np.asarray(n_active, dtype=float)
        gap = 2.0**-e
        sampling = 32.0 * np.log(8.0 * S * e**2 / self.beta) / gap**2
        privacy = 8.0 * np.log(4.0 * S * e**2 / self.beta) / (self.epsilon * gap)
        return np.minimum(np.ceil(np.maximum(sampling, privacy)), NEVER).astype(np.int64)

    def widths(self, e: np.ndarray, n_active: np.ndarray, R: np.ndarray) -> np.ndarray:
        """h_e + c_e = √(log(8|S|e²/β)/(2R_e)) + log(4|S|e²/β)/(εR_e)."""
        e = np.asarray(e, dtype=float)
        S = np.asarray(n_active, dtype=float)
        h = np.sqrt(np.log(8.0 * S * e**2 / self.beta) / (2.0 * R))
        c = np.log(4.0 * S * e**2 / self.beta) / (self.epsilon * R)
        return h + c

    #: audit hook — divide each epoch's mean by the arm's cumulative count, as the authors' public
    #: code did (biased towards 0 from epoch 2 on; the bias checks must catch it)
    cumulative_count: bool = False
    RELEASE_LABELS = ("DP-SE epoch mean",)

    def kernel_params(self) -> DPSEParams:
        r"""The constants, with R_e and h_e + c_e tabulated by :meth:`epoch_length` and
        :meth:`widths` over epochs e ≤ ``MAX_EPOCH`` and active-set sizes \|S\| ≤ K."""
        e = np.arange(MAX_EPOCH + 1)[:, None]
        size = np.arange(self.K + 1)[None, :]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # e = 0, |S| ≤ 1
            R = self.epoch_length(np.maximum(e, 1), np.maximum(size, 1))
            width = self.widths(np.maximum(e, 1), np.maximum(size, 1), R)
        sampler = central_sampler(self.sampler, self.epsilon, float(self.noise_multiplier))
        return DPSEParams(K=self.K, epsilon=self.epsilon, lo=self._lo, width=self._width,
                          epoch_table=R, width_table=width, bai=self.TASK == "bai",
                          random_order=self.arm_order == "random", forget=self.forget,
                          noise_multiplier=float(self.noise_multiplier),
                          cumulative_count=self.cumulative_count, sampler=sampler,
                          words_per_step=sampler.words)


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
        sampler: ``"float"`` or ``"exact"`` (see :class:`DPSE`).
        n_runs: number of runs.

    ``beta``, ``mean_range``, ``central_moment_bound`` and ``moment_order`` are the regret
    version's; a ``beta`` other than δ is rejected (β = δ).
    """

    TASK = "bai"

    def _check_task_parameters(self, horizon: int | None, delta: float | None) -> int:
        self.delta = 0.01 if delta is None else delta
        return DEFAULT_HORIZON if horizon is None else horizon  # unused: the env enforces it

    def _failure_probability(self, beta: float | None, delta: float | None) -> float:
        if beta is not None and beta != self.delta:  # (β = δ itself is accepted, as recorded)
            raise ValueError(f"beta is not a parameter of the BAI version (β = δ); give delta, "
                             f"got beta={beta!r}")
        return self.delta  # β = δ

