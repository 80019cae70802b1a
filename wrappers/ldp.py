"""Local differential privacy: wrappers that randomize each user's feedback before the learner
sees it (docs/design/threat-model.md).

Each wrapper does one thing — apply one *local randomizer* to the reward of every step — and
declares its guarantee as ``wrapper.privacy`` (a
:class:`~privenv.privacy.guarantee.PrivacyGuarantee` with ``model="local"``). Anything a learner
computes from the released stream is post-processing, so an agent behind an ε-LDP wrapper is an
ε-LDP system (:func:`privenv.privacy.guarantee.system_guarantee`; the runner records it).

* ``RandomizedResponse`` / ``VectorRandomizedResponse`` — ε-LDP on rewards r ∈ [0, 1]: release
  Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)) (CTB, paper 3 Algorithm 4 line 2, after Ren et al. 2020);
* ``LaplaceReward`` / ``VectorLaplaceReward`` — ε-LDP on r ∈ [lo, hi]: r + Lap((hi − lo)/ε);
* ``GaussianReward`` / ``VectorGaussianReward`` — (ε, δ)-LDP on r ∈ [lo, hi]: r + N(0, σ²) with
  Δ₂ = hi − lo, σ analytic (Balle & Wang 2018) or classical Δ₂√(2 ln(1.25/δ))/ε (paper 3
  Algorithm 8, with γ as δ);
* ``LaplaceLabel`` / ``VectorLaplaceLabel`` — ε-LDP on the label y ∈ [−1, 1] of a linear
  contextual bandit: y + Lap(2/ε) (paper 4).

The neighbouring relation is replace-one: a user's reward r is replaced by any r′ in the declared
range, so the sensitivity is hi − lo (randomized response: the range is [0, 1]).

## One implementation per mechanism

A mechanism is a :class:`LocalRandomizer` applied to a *batch* of values, one per run, with each
run's next draw from its own noise stream. The single-env wrapper (a ``gymnasium.RewardWrapper``)
is the batch-of-one case of the same object that the vector wrapper (a
``gymnasium.vector.VectorRewardWrapper``) applies to ``num_envs`` runs at once. The samplers are
the transforms of :mod:`privenv.privacy.mechanisms` (``randomized_response_from_uniform``,
``laplace_from_uniform``, ``gaussian_from_standard`` and the Gaussian calibrations). The paired
classes follow Gymnasium's own convention (``TransformReward`` / ``vector.TransformReward``).

## Per-run noise

After ``reset`` the wrapper takes the base env's ``run_seeds`` (one ``SeedSequence`` per run, see
:mod:`privenv.seeding`) and draws run *i*'s noise only from ``child(run_seeds[i], WRAPPER, k)``,
where ``k`` is the number of local-DP wrappers beneath this one (stacked wrappers never share a
stream). So run *i*'s released rewards are the same in a vector env of 1000 runs and in a single
env reset with ``options={"first_run": i}``, and they do not depend on the agent's seed. A vector
wrapper follows the env's autoreset mode: a run that sits a step out (finished, or being reset
under ``NEXT_STEP``) consumes no noise and gets reward 0, as from the env; a run the env restarts
(autoreset, or ``reset(options={"reset_mask": …})``) restarts its noise from its new seed.

## Trust boundary (what "local" means in a simulator)

The agent-facing stream is exactly what ``step`` returns: the randomized reward, the observation,
the flags and ``info``. Neither the envs nor these wrappers put raw rewards or raw contexts into
``info``; a wrapper removes what ``info`` says about the raw data (:data:`RAW_INFO_KEYS`, e.g.
``HuberBandit``'s ``contaminated``) and keeps no raw value in any attribute.
But local DP is *simulated* here: the raw rewards exist inside the process — ``env.unwrapped`` is
the env itself, its problem buffers future raw rewards, and the noise is a deterministic function
of the seed, so anyone holding the env object or the seed can undo the randomization. The runner
(:func:`privenv.simulation.simulate`, :func:`privenv.simulation.play`) therefore never passes the
env, the seed or ``info`` to an agent; an agent written for privenv must only use what ``act`` and
``observe`` give it. The guarantee is about that stream.

## Numerics

By default (``sampler="float"``) the Laplace and Gaussian noise is binary64 arithmetic on uniform
or normal draws: DP for idealized real arithmetic only — the low bits of a released double can
identify the raw reward (Mironov 2012; ``privenv audit --targets preimage-laplace-float``). With
``sampler="exact"`` the reward is rounded to a grid about 1000 times finer than the noise and the
noise is the discrete Laplace or Gaussian drawn from uniform 64-bit words
(:mod:`privenv.privacy.exact`, Canonne, Kamath & Steinke 2020): the declared guarantee (ε′, δ′),
computed exactly with the grid and the range, holds for the doubles released. Randomized response
releases one bit and has only the float sampler: its coin compares a uniform double with the
double nearest 1/(e^ε + 1).

Rewards outside the declared range raise ``ValueError`` naming ``reward`` and the range (never the
raw value); they are clipped only if the caller asks for it (``clip=True``).

## Compiled form

Each randomizer is one compiled kernel pair (:func:`admit`: check or clip a value; :func:`release`:
perturb it with the run's next draws) over a :class:`RandomizerView` of its constants. The wrappers
apply it to a batch of runs; the compiled fast path of the scalar-state agents
(:mod:`privenv.agents.kernel`) applies it to one reward at a time, to the same numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv, VectorRewardWrapper

from privenv._jit import jit
from privenv._validation import check_choice, check_delta, check_epsilon, check_real
from privenv.privacy.exact import (
    RELEASE_WORDS,
    GaussianMechanism,
    LaplaceMechanism,
    grid_round,
    take_discrete_gaussian,
    take_discrete_laplace,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import (
    gaussian_noise,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    laplace_noise,
    laplace_scale,
    rr_release,
    rr_zero_probability,
)
from privenv.problems.base import Problem
from privenv.seeding import WRAPPER, NoiseView, RunNoise, child, take_normal, take_uniform

__all__ = [
    "GaussianRandomizer",
    "GaussianReward",
    "LABEL_RANGE",
    "LaplaceLabel",
    "LaplaceRandomizer",
    "LaplaceReward",
    "LocalDPRewardWrapper",
    "LocalDPVectorRewardWrapper",
    "LocalRandomizer",
    "RandomizerView",
    "RandomizedResponse",
    "RandomizedResponseRandomizer",
    "VectorGaussianReward",
    "VectorLaplaceLabel",
    "VectorLaplaceReward",
    "VectorRandomizedResponse",
    "ldp_stack_depth",
]

CALIBRATIONS = ("analytic", "classical")
#: range of the labels y of a linear contextual bandit (paper 4, Definition 1.1)
LABEL_RANGE = (-1.0, 1.0)


def _check_reward_range(reward_range: Any) -> tuple[float, float]:
    """A pair (lo, hi) of finite reals with lo < hi."""
    try:
        lo, hi = reward_range
    except (TypeError, ValueError):
        raise ValueError(
            "reward_range must be a pair (lo, hi) of finite reals with lo < hi, "
            f"got {reward_range!r}"
        ) from None
    lo = check_real("reward_range[0]", lo, low_open=True, high_open=True)  # finite
    hi = check_real("reward_range[1]", hi, low_open=True, high_open=True)
    if not lo < hi:
        raise ValueError(f"reward_range must have lo < hi, got {reward_range!r}")
    return lo, hi


# ---------------------------------------------------------------------------------------------
# The compiled randomizers: one implementation of each mechanism
# ---------------------------------------------------------------------------------------------

#: :attr:`RandomizerView.kind` of each mechanism (``NO_RANDOMIZER``: the raw value is released;
#: the ``_EXACT`` kinds: the exact samplers of :mod:`privenv.privacy.exact`)
NO_RANDOMIZER, RANDOMIZED_RESPONSE, LAPLACE, GAUSSIAN, LAPLACE_EXACT, GAUSSIAN_EXACT = range(6)


class RandomizerView(NamedTuple):
    """What a kernel sees of a :class:`LocalRandomizer`: its mechanism (``kind``), the declared
    range, whether it clips, its one constant ``p`` (randomized response: p₀ = 1/(e^ε + 1);
    Laplace: the scale b; Gaussian: σ), the buffered noise one release draws (uniforms are drawn
    where they are used), and the exact samplers'
    grid ``g`` with their integers (Laplace: t = a/b grid units; Gaussian: σ² = a/b grid units²
    and CKS20's t = c)."""

    kind: int
    lo: float
    hi: float
    clip: bool
    p: float
    normals: int
    words: int = 0
    g: float = 1.0
    a: int = 1
    b: int = 1
    c: int = 1

    @classmethod
    def none(cls) -> RandomizerView:
        return cls(NO_RANDOMIZER, -np.inf, np.inf, False, 0.0, 0)


@jit(inline="always")
def admit(rv: RandomizerView, x: float) -> tuple[float, bool]:
    """(value, ok): ``x`` if it lies in the declared range; clipped into it if the randomizer
    clips; not ok if it is NaN, or outside and the randomizer does not clip."""
    if x != x:  # NaN
        return x, False
    if x < rv.lo:
        return rv.lo, rv.clip
    if x > rv.hi:
        return rv.hi, rv.clip
    return x, True


@jit(inline="always")  # at every step of the fast path (privenv._jit, "Inlining")
def release(rv: RandomizerView, noise: NoiseView, run: int, x: float) -> float:
    """The release of an admitted value ``x`` of ``run``, with that run's next draw."""
    if rv.kind == RANDOMIZED_RESPONSE:
        return rr_release(x, take_uniform(noise, run), rv.p)
    if rv.kind == LAPLACE:
        return x + laplace_noise(take_uniform(noise, run), rv.p)
    if rv.kind == GAUSSIAN:
        return x + gaussian_noise(take_normal(noise, run), rv.p)
    if rv.kind == LAPLACE_EXACT:  # (k + Z)·g, k = x on the grid, Z ~ Lap_ℤ(a/b)
        return float(grid_round(x, rv.g) + take_discrete_laplace(noise, run, rv.a, rv.b)) * rv.g
    if rv.kind == GAUSSIAN_EXACT:  # (k + Z)·g, Z ~ N_ℤ(0, a/b)
        return float(grid_round(x, rv.g)
                     + take_discrete_gaussian(noise, run, rv.a, rv.b, rv.c)) * rv.g
    return x


@jit
def _admit_all(rv: RandomizerView, x: np.ndarray, out: np.ndarray, ok: np.ndarray) -> None:
    for j in range(x.size):
        out[j], ok[j] = admit(rv, x[j])


@jit
def _release_all(rv: RandomizerView, noise: NoiseView, runs: np.ndarray, x: np.ndarray,
                 out: np.ndarray) -> None:
    for j in range(x.size):
        out[j] = release(rv, noise, runs[j], x[j])


# ---------------------------------------------------------------------------------------------
# Local randomizers: one implementation of each mechanism, applied to a batch of runs
# ---------------------------------------------------------------------------------------------


class LocalRandomizer(ABC):
    """A local randomizer of scalar feedback in ``[lo, hi]``, applied to one value per run.

    ``randomizer(values, noise, runs)`` validates the values (or clips them if ``clip``) and
    returns their randomized release; ``values[j]`` is perturbed with the next draw of run
    ``runs[j]`` of ``noise`` (all runs in order when ``runs`` is ``None``).

    Subclasses set :attr:`kind` and write :meth:`constant`; the arithmetic is the compiled
    :func:`admit` / :func:`release`.

    Args:
        epsilon: ε > 0.
        delta: δ (0 for pure ε-LDP).
        reward_range: the declared range (lo, hi) of one user's value.
        clip: clip values into the range instead of raising ``ValueError``.
        unit: the protected unit recorded in the guarantee.
        sampler: ``"float"`` (binary64 noise: DP in idealized arithmetic only) or ``"exact"``
            (the value rounded to a grid plus discrete noise: the guarantee holds for the
            doubles released; Laplace and Gaussian only, :mod:`privenv.privacy.exact`).
    """

    #: what the error messages call the mechanism
    description: str = "local randomizer"
    #: :attr:`RandomizerView.kind`
    kind: int = NO_RANDOMIZER
    #: the samplers this mechanism offers
    samplers: tuple[str, ...] = ("float",)

    def __init__(
        self,
        epsilon: float,
        delta: float,
        reward_range: tuple[float, float],
        clip: bool,
        unit: str,
        sampler: str = "float",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = delta
        self.reward_range = _check_reward_range(reward_range)
        if not isinstance(clip, (bool, np.bool_)):
            raise ValueError(f"clip must be a bool, got {clip!r}")
        self.clip = bool(clip)
        self.unit = unit
        self.sampler = check_choice("sampler", sampler, self.samplers)
        #: the exact sampler's mechanism (its grid, integers and guarantee), else ``None``
        self.exact: LaplaceMechanism | GaussianMechanism | None = None

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The (ε, δ)-local-DP guarantee of one release, per ``unit``, replace-one; with the
        exact sampler the exact (ε′, δ′) ≤ (ε, δ), grid and clamping included."""
        if self.exact is not None:
            g = self.exact.guarantee
            return PrivacyGuarantee("local", g.epsilon, g.delta, self.unit, sampler="exact")
        return PrivacyGuarantee("local", self.epsilon, self.delta, self.unit)

    @property
    def sensitivity(self) -> float:
        """hi − lo, how far replacing one user's value can move it (L1 = L2 for a scalar)."""
        lo, hi = self.reward_range
        return hi - lo

    @abstractmethod
    def constant(self) -> float:
        """The mechanism's one constant (:attr:`RandomizerView.p`)."""

    def kernel_view(self) -> RandomizerView:
        """The compiled form's view of this randomizer."""
        lo, hi = self.reward_range
        if isinstance(self.exact, LaplaceMechanism):
            p = self.exact.params
            return RandomizerView(LAPLACE_EXACT, lo, hi, self.clip, self.constant(), 0,
                                  RELEASE_WORDS, p.grid.granularity, p.scale_num, p.scale_den)
        if isinstance(self.exact, GaussianMechanism):
            q = self.exact.params
            return RandomizerView(GAUSSIAN_EXACT, lo, hi, self.clip, self.constant(), 0,
                                  RELEASE_WORDS, self.exact.grid.granularity, q.var_num,
                                  q.var_den, q.t)
        return RandomizerView(self.kind, lo, hi, self.clip, self.constant(),
                              1 if self.kind == GAUSSIAN else 0)

    def validate(self, values: np.ndarray, runs: np.ndarray | None = None) -> np.ndarray:
        """``values`` as floats in the range (clipped if ``clip``); else ``ValueError``."""
        x = np.ascontiguousarray(values, dtype=float)
        out, ok = np.empty(x.shape), np.empty(x.shape, dtype=bool)
        _admit_all(self.kernel_view(), x.reshape(-1), out.reshape(-1), ok.reshape(-1))
        if not ok.all():
            j = int(np.flatnonzero(~ok.reshape(-1))[0])
            self._raise(j if runs is None else int(runs[j]), int((~ok).sum()),
                        bool(np.isnan(x.flat[j])))
        return out

    def raise_out_of_range(self, run: int) -> None:
        """The error of a value the compiled path refused (``run``'s)."""
        self._raise(run, 1, None)

    def _raise(self, run: int, count: int, nan: bool | None) -> None:
        lo, hi = self.reward_range
        hint = "" if self.clip else " (pass clip=True to clip it into the range)"
        # the raw value is private: the message names its run, never the value
        what = {True: "nan", False: "a value outside"}.get(nan, "a nan or out-of-range value")
        raise ValueError(f"reward must lie in [{lo:g}, {hi:g}] for {self.description}{hint}, "
                         f"got {what} (run {run}); {count} value(s) outside")

    def __call__(
        self, values: np.ndarray, noise: RunNoise, runs: np.ndarray | None = None
    ) -> np.ndarray:
        return self.perturb(self.validate(values, runs), noise, runs)

    def perturb(self, x: np.ndarray, noise: RunNoise, runs: np.ndarray | None) -> np.ndarray:
        """The release of validated values ``x``, with one noise draw of each run in ``runs``."""
        view = self.kernel_view()
        runs = np.arange(noise.n_runs) if runs is None else np.asarray(runs, dtype=np.int64)
        noise.ensure(view.normals, runs, view.words)
        x = np.ascontiguousarray(x, dtype=float)
        out = np.empty(x.shape)
        _release_all(view, noise.view(), runs, x.reshape(-1), out.reshape(-1))
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.privacy})"


class RandomizedResponseRandomizer(LocalRandomizer):
    """Randomized response for values in [0, 1]: report 1 with probability
    q(r) = (r(e^ε − 1) + 1)/(e^ε + 1), else 0 (CTB, paper 3 Algorithm 4 line 2; Lemma 12:
    ε-LDP on [0, 1]). The report's mean is q(μ) (:func:`privenv.privacy.mechanisms.rr_mean`);
    de-bias with :func:`privenv.privacy.mechanisms.rr_debias_mean`."""

    description = "randomized response"
    kind = RANDOMIZED_RESPONSE

    def __init__(self, epsilon: float, clip: bool = False, unit: str = "reward") -> None:
        super().__init__(epsilon, 0.0, (0.0, 1.0), clip, unit)

    def constant(self) -> float:
        return rr_zero_probability(self.epsilon)


class LaplaceRandomizer(LocalRandomizer):
    """r + Lap(b), b = (hi − lo)/ε: the Laplace mechanism on one value (ε-LDP, replace-one).

    ``sampler="exact"``: r rounded to the grid g = 2^(⌊log₂ b⌋ − 10) plus the discrete Laplace
    (:class:`privenv.privacy.exact.LaplaceMechanism`), exactly ε′-LDP with ε′ ≤ ε."""

    description = "the Laplace mechanism"
    kind = LAPLACE
    samplers = ("float", "exact")

    def __init__(
        self,
        epsilon: float,
        reward_range: tuple[float, float],
        clip: bool = False,
        unit: str = "reward",
        sampler: str = "float",
    ) -> None:
        super().__init__(epsilon, 0.0, reward_range, clip, unit, sampler)
        self.scale = laplace_scale(self.epsilon, self.sensitivity)
        if self.sampler == "exact":
            self.exact = LaplaceMechanism(epsilon=self.epsilon, bounds=self.reward_range,
                                          sampler="exact")

    def constant(self) -> float:
        return self.scale


class GaussianRandomizer(LocalRandomizer):
    """r + N(0, σ²): the Gaussian mechanism on one value, (ε, δ)-LDP with Δ₂ = hi − lo.

    ``calibration="analytic"`` (default): the smallest σ giving (ε, δ)-DP (Balle & Wang 2018,
    Theorem 8), valid for every ε. ``"classical"``: σ = Δ₂√(2 ln(1.25/δ))/ε, the formula of
    paper 3 Algorithm 8 (after Zheng et al. 2020, with their γ as δ); it is a theorem only for
    ε < 1 (Dwork & Roth 2014, Theorem A.1), so ε ≥ 1 raises ``ValueError`` — a wrapper must not
    declare a guarantee its noise does not give.
    """

    description = "the Gaussian mechanism"
    kind = GAUSSIAN
    samplers = ("float", "exact")

    def __init__(
        self,
        epsilon: float,
        delta: float,
        reward_range: tuple[float, float],
        calibration: str = "analytic",
        clip: bool = False,
        unit: str = "reward",
        sampler: str = "float",
    ) -> None:
        super().__init__(epsilon, check_delta(delta), reward_range, clip, unit, sampler)
        self.calibration = check_choice("calibration", calibration, CALIBRATIONS)
        if calibration == "analytic":
            self.sigma = gaussian_sigma_analytic(self.epsilon, self.delta, self.sensitivity)
        else:
            self.sigma = gaussian_sigma_classical(self.epsilon, self.delta, self.sensitivity)
        if self.sampler == "exact":  # the discrete Gaussian with σ² ≥ this σ², exact δ ≤ δ
            self.exact = GaussianMechanism(
                epsilon=self.epsilon, delta=self.delta, bounds=self.reward_range,
                sampler="exact", sigma=None if calibration == "analytic" else self.sigma)
            self.sigma = self.exact.sigma

    def constant(self) -> float:
        return self.sigma


# ---------------------------------------------------------------------------------------------
# Per-run noise of a wrapper
# ---------------------------------------------------------------------------------------------


class _LocalDP:
    """Marker of privenv's local-DP wrappers (counted to give stacked wrappers distinct streams)."""

    randomizer: LocalRandomizer

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The local-DP guarantee this wrapper provides (see :class:`LocalRandomizer`)."""
        return self.randomizer.privacy


def ldp_stack_depth(env: Any) -> int:
    """The number of privenv local-DP wrappers in ``env``'s wrapper chain (walking ``.env``)."""
    n = 0
    while env is not None:
        n += isinstance(env, _LocalDP)
        env = getattr(env, "env", None)
    return n


def _run_seeds(wrapper: gym.Wrapper | VectorRewardWrapper) -> list[np.random.SeedSequence]:
    base = wrapper.unwrapped
    if not hasattr(type(base), "run_seeds"):
        raise TypeError(
            f"{type(wrapper).__name__} draws each run's noise from the env's per-run seeds "
            f"(`run_seeds`, provided by privenv envs); {type(base).__name__} has none"
        )
    return base.run_seeds


def _public_info(env: Any) -> dict[str, Any]:
    base = getattr(env, "unwrapped", env)
    return base.public_info() if callable(getattr(base, "public_info", None)) else {}


def _check_feedback_channel(env: Any, wrapper: str) -> None:
    """Refuse an env whose Gymnasium reward is not one user's raw feedback, where a reward
    randomizer would leave data in the clear or declare the wrong unit:

    * best-arm identification with ``reward_mode="cost"`` carries the sample in the observation
      (its reward is −pull_cost); ``reward_mode="sample"`` puts it in the reward;
    * a problem whose reward aggregates several users (it overrides ``Problem.gym_reward``, e.g.
      the federated env's sum over silos): privacy there is the silos' protocol (paper 2).
    """
    info = _public_info(env)
    if info.get("reward_mode", "sample") != "sample":
        raise ValueError(
            f"{wrapper} randomizes the reward, but this env has reward_mode="
            f"{info['reward_mode']!r} and releases the raw sample in the observation; build it "
            "with reward_mode='sample'"
        )
    problem = getattr(getattr(env, "unwrapped", env), "problem", None)
    if isinstance(problem, Problem) and type(problem).gym_reward is not Problem.gym_reward:
        raise ValueError(
            f"{wrapper} randomizes one user's reward, but the reward of "
            f"{type(problem).__name__} aggregates several users' rewards (e.g. a sum over silos);"
            " its privacy is the agents' protocol, not a reward wrapper"
        )


_NO_RUNS = np.empty(0, dtype=np.int64)
_NO_RUNS.flags.writeable = False


class _AutoresetRuns:
    """Which runs of a vector env a local-DP wrapper serves at each step, and which runs' noise it
    must restart, under the env's ``autoreset_mode`` — one bookkeeping for every vector wrapper.

    A run that ended sits the next step out (``DISABLED``: for good, until a reset;
    ``NEXT_STEP``: the step on which the env restarts it — its noise restarts then); under
    ``SAME_STEP`` the env restarts a run within the step it ends, so its noise restarts after it.
    """

    def __init__(self, env: VectorEnv) -> None:
        self.mode = AutoresetMode(env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self.ended = np.zeros(env.num_envs, dtype=bool)  # runs that sit the next step out
        self.n_ended = 0

    def reset(self, runs: np.ndarray | None = None) -> None:
        """All runs (or ``runs``) start afresh."""
        if runs is None:
            self.ended[:] = False
        else:
            self.ended[runs] = False
        self.n_ended = int(np.count_nonzero(self.ended))

    def before_step(self) -> tuple[np.ndarray | None, np.ndarray]:
        """(runs served this step — ``None`` for all —, runs whose noise restarts now)."""
        if not self.n_ended or self.mode == AutoresetMode.SAME_STEP:
            return None, _NO_RUNS
        restart = np.flatnonzero(self.ended) if self.mode == AutoresetMode.NEXT_STEP else _NO_RUNS
        return np.flatnonzero(~self.ended), restart

    def after_step(self, done: np.ndarray) -> np.ndarray:
        """Record the runs that ended; returns the runs whose noise restarts after the step."""
        if self.mode == AutoresetMode.DISABLED:
            self.ended |= done
        else:
            self.ended = done.copy()
        self.n_ended = int(np.count_nonzero(self.ended))
        if self.mode == AutoresetMode.SAME_STEP and self.n_ended:
            return np.flatnonzero(done)
        return _NO_RUNS


def _noise_seeds(
    run_seeds: Sequence[np.random.SeedSequence], stack_index: int
) -> list[np.random.SeedSequence]:
    return [child(s, WRAPPER, stack_index) for s in run_seeds]


# ---------------------------------------------------------------------------------------------
# The two wrapper bases: single env (batch of one) and native vector env
# ---------------------------------------------------------------------------------------------


#: ``info`` keys that describe the raw data a local-DP wrapper protects (``HuberBandit``'s
#: ``contaminated``: whether this step's raw reward came from the contamination): a wrapper
#: removes them, so that nothing downstream of a local randomizer sees more than its release
RAW_INFO_KEYS: tuple[str, ...] = ("contaminated", "_contaminated")


def public_step_info(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` without the keys of :data:`RAW_INFO_KEYS`."""
    if not any(k in info for k in RAW_INFO_KEYS):
        return info
    return {k: v for k, v in info.items() if k not in RAW_INFO_KEYS}


class LocalDPRewardWrapper(_LocalDP, gym.RewardWrapper, gym.utils.RecordConstructorArgs):
    """Releases ``randomizer(reward)`` instead of the reward of a single privenv env.

    Records its constructor arguments (``gym.utils.RecordConstructorArgs``), so the env's spec
    can rebuild it (``env.spec.make()``, used by Gymnasium's checker).

    Args:
        env: a privenv env (or a wrapper of one), which provides per-run seeds.
        randomizer: the local randomizer.
    """

    def __init__(self, env: gym.Env, randomizer: LocalRandomizer) -> None:
        # a subclass records its own (public) arguments first; this call is then ignored
        gym.utils.RecordConstructorArgs.__init__(self, randomizer=randomizer)
        gym.RewardWrapper.__init__(self, env)
        _check_feedback_channel(env, type(self).__name__)
        self.randomizer = randomizer
        #: number of local-DP wrappers beneath this one (its noise stream key)
        self.stack_index = ldp_stack_depth(env)
        self._noise: RunNoise | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._noise = RunNoise(_noise_seeds(_run_seeds(self), self.stack_index))
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, self.reward(reward), terminated, truncated, public_step_info(info)

    def reward(self, reward: SupportsFloat) -> float:
        """The randomized release of one reward (a Python float)."""
        if self._noise is None:
            raise ResetNeeded("call reset() before step()")
        return float(self.randomizer(np.array([reward], dtype=float), self._noise)[0])


class LocalDPVectorRewardWrapper(_LocalDP, VectorRewardWrapper):
    """Releases ``randomizer(rewards)`` instead of the rewards of a native privenv vector env.

    Follows the env's ``autoreset_mode``: runs that sit a step out get reward 0 and consume no
    noise; runs the env restarts restart their noise from their new seeds.

    Args:
        env: a privenv vector env (or a wrapper of one), which provides per-run seeds.
        randomizer: the local randomizer.
    """

    def __init__(self, env: VectorEnv, randomizer: LocalRandomizer) -> None:
        VectorRewardWrapper.__init__(self, env)
        _check_feedback_channel(env, type(self).__name__)
        self.randomizer = randomizer
        self.stack_index = ldp_stack_depth(env)
        self._noise: RunNoise | None = None
        self._runs = _AutoresetRuns(env)

    def reset(
        self,
        *,
        seed: int | list[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        mask = None if not options else options.get("reset_mask")
        if self._noise is None or seed is not None or mask is None:
            self._noise = RunNoise(_noise_seeds(_run_seeds(self), self.stack_index))
            self._runs.reset()
        else:
            runs = np.flatnonzero(np.asarray(mask, dtype=bool))
            self._reseed(runs)
            self._runs.reset(runs)
        return obs, info

    @property
    def noise(self) -> RunNoise:
        """The wrapper's per-run noise (after ``reset``)."""
        if self._noise is None:
            raise ResetNeeded("call reset() first")
        return self._noise

    def _reseed(self, runs: np.ndarray) -> None:
        assert self._noise is not None
        seeds = _run_seeds(self)
        self._noise.reseed(runs, _noise_seeds([seeds[i] for i in runs], self.stack_index))

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        if self._noise is None:
            raise ResetNeeded("call reset() before step()")
        live, restart = self._runs.before_step()  # live None: every run stepped
        if restart.size:
            self._reseed(restart)
        released = self.rewards(rewards, live)
        restart = self._runs.after_step(terminated | truncated)
        if restart.size:
            self._reseed(restart)
        return obs, released, terminated, truncated, public_step_info(info)

    def rewards(self, rewards: np.ndarray, runs: np.ndarray | None = None) -> np.ndarray:
        """The randomized release of a batch of rewards; only ``runs`` (indices) if given, the
        other runs getting 0."""
        if self._noise is None:
            raise ResetNeeded("call reset() before step()")
        rewards = np.asarray(rewards, dtype=float)
        if runs is None:
            return self.randomizer(rewards, self._noise)
        out = np.zeros(rewards.shape)
        out[runs] = self.randomizer(rewards[runs], self._noise, runs)
        return out


# ---------------------------------------------------------------------------------------------
# The public wrappers
# ---------------------------------------------------------------------------------------------


class RandomizedResponse(LocalDPRewardWrapper):
    """ε-local DP on rewards in [0, 1] by randomized response (CTB).

    ## Description
    Each reward r ∈ [0, 1] is replaced by a Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)) report
    (paper 3, Algorithm 4 line 2, after Ren et al. 2020; Lemma 12). A Bernoulli(μ) reward becomes
    Bernoulli(μ_ε), μ_ε = (2μ − 1)(e^ε − 1)/(2(e^ε + 1)) + ½, so any non-private algorithm run
    behind this wrapper is CTB-style ε-LDP (e.g. TTUCB → CTB-TT).

    ## Rewards
    0.0 or 1.0 (a Python float). A reward outside [0, 1] raises ``ValueError`` unless
    ``clip=True``. On ``BestArmIdentification-v0`` the sample must be the reward
    (``reward_mode="sample"``; the default ``"cost"`` mode is refused, its observation carries the
    raw sample); there the stop step's reward is 0, randomized like any other (a BAI agent
    ignores it). The zoo's ``ctb-tt`` agent is TTUCB behind this wrapper, built so by the runner.

    ## Privacy
    ``privacy``: ε-DP, local model, per reward (replace-one).

    ## Arguments
    ``env`` (a privenv env), ``epsilon`` (ε > 0), ``clip`` (default False).

    ## Example
    >>> import gymnasium as gym, privenv
    >>> from privenv.wrappers import RandomizedResponse
    >>> base = gym.make("BestArmIdentification-v0", reward_mode="sample")
    >>> env = RandomizedResponse(base, epsilon=1.0)
    >>> obs, info = env.reset(seed=0)
    """

    def __init__(self, env: gym.Env, epsilon: float, clip: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, epsilon=epsilon, clip=clip)
        super().__init__(env, RandomizedResponseRandomizer(epsilon, clip))


class VectorRandomizedResponse(LocalDPVectorRewardWrapper):
    """:class:`RandomizedResponse` for a native privenv vector env (same randomizer, batched)."""

    def __init__(self, env: VectorEnv, epsilon: float, clip: bool = False) -> None:
        super().__init__(env, RandomizedResponseRandomizer(epsilon, clip))


class LaplaceReward(LocalDPRewardWrapper):
    """ε-local DP on bounded rewards by the Laplace mechanism.

    ## Description
    Each reward r ∈ [lo, hi] is released as r + Lap((hi − lo)/ε) (Dwork & Roth 2014,
    Theorem 3.6, sensitivity hi − lo under replace-one).

    ## Rewards
    A Python float, unbiased for r. A reward outside ``reward_range`` raises ``ValueError``
    unless ``clip=True`` (then it is clipped into the range before the noise: the released value
    is unbiased for the *clipped* reward — e.g. for heavy-tailed or contaminated rewards).

    ## Privacy
    ``privacy``: ε-DP, local model, per reward.

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``reward_range`` = (lo, hi), lo < hi, ``clip`` (default False),
    ``sampler`` (``"float"``, default, or ``"exact"``: the reward rounded to a grid 1000 times
    finer than the noise plus discrete Laplace noise, exactly ε′-DP with ε′ ≤ ε on the doubles
    released; see docs/design/threat-model.md).

    ## Example
    >>> import gymnasium as gym, privenv
    >>> from privenv.wrappers import LaplaceReward
    >>> env = LaplaceReward(gym.make("HuberBandit-v0"), epsilon=1.0, reward_range=(-50, 150),
    ...                     clip=True)
    >>> obs, info = env.reset(seed=0)
    """

    def __init__(
        self,
        env: gym.Env,
        epsilon: float,
        reward_range: tuple[float, float],
        clip: bool = False,
        sampler: str = "float",
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, epsilon=epsilon, reward_range=reward_range, clip=clip, sampler=sampler
        )
        super().__init__(env, LaplaceRandomizer(epsilon, reward_range, clip, sampler=sampler))


class VectorLaplaceReward(LocalDPVectorRewardWrapper):
    """:class:`LaplaceReward` for a native privenv vector env (same randomizer, batched)."""

    def __init__(
        self,
        env: VectorEnv,
        epsilon: float,
        reward_range: tuple[float, float],
        clip: bool = False,
        sampler: str = "float",
    ) -> None:
        super().__init__(env, LaplaceRandomizer(epsilon, reward_range, clip, sampler=sampler))


class GaussianReward(LocalDPRewardWrapper):
    """(ε, δ)-local DP on bounded rewards by the Gaussian mechanism.

    ## Description
    Each reward r ∈ [lo, hi] is released as r + N(0, σ²) with Δ₂ = hi − lo and σ from
    ``calibration``: ``"analytic"`` (default; Balle & Wang 2018, exact for every ε) or
    ``"classical"`` (σ = Δ₂√(2 ln(1.25/δ))/ε, paper 3 Algorithm 8 with γ as δ; ε < 1 only).
    On rewards in [0, 1] with the classical calibration, a non-private TTUCB behind this wrapper
    is paper 3's (ε, γ)-LDP TTUCB (Algorithm 8, after Zheng et al. 2020).

    ## Rewards
    A Python float, unbiased for r. Out-of-range rewards: as :class:`LaplaceReward`.

    ## Privacy
    ``privacy``: (ε, δ)-DP, local model, per reward.

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``delta`` (δ ∈ (0, 1)), ``reward_range`` = (lo, hi),
    ``calibration`` (``"analytic"`` or ``"classical"``), ``clip`` (default False), ``sampler``
    (``"float"``, default, or ``"exact"``: the discrete Gaussian on a grid, with the smallest σ
    at least the calibration's whose exact δ(ε) ≤ δ).
    """

    def __init__(
        self,
        env: gym.Env,
        epsilon: float,
        delta: float,
        reward_range: tuple[float, float],
        calibration: str = "analytic",
        clip: bool = False,
        sampler: str = "float",
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            epsilon=epsilon,
            delta=delta,
            reward_range=reward_range,
            calibration=calibration,
            clip=clip,
            sampler=sampler,
        )
        super().__init__(env, GaussianRandomizer(epsilon, delta, reward_range, calibration, clip,
                                                 sampler=sampler))


class VectorGaussianReward(LocalDPVectorRewardWrapper):
    """:class:`GaussianReward` for a native privenv vector env (same randomizer, batched)."""

    def __init__(
        self,
        env: VectorEnv,
        epsilon: float,
        delta: float,
        reward_range: tuple[float, float],
        calibration: str = "analytic",
        clip: bool = False,
        sampler: str = "float",
    ) -> None:
        super().__init__(env, GaussianRandomizer(epsilon, delta, reward_range, calibration, clip,
                                                 sampler=sampler))


def _check_label_bound(env: Any, clip: bool) -> None:
    """Fail at construction, not mid-run, when the env declares unbounded labels."""
    bound = _public_info(env).get("reward_bound", 1.0)
    if not clip and (bound is None or bound > 1.0):
        raise ValueError(
            f"reward must lie in [-1, 1] for LaplaceLabel, but the env declares reward_bound="
            f"{bound!r} (e.g. noise='gaussian'); pass clip=True to clip labels into [-1, 1]"
        )


class LaplaceLabel(LocalDPRewardWrapper):
    """ε-local DP on the label of a linear contextual bandit: y + Lap(2/ε), y ∈ [−1, 1].

    ## Description
    For ``LinearContextualBandit-v0`` (paper 4, §1.1): the reward is the label
    y ∈ [−1, 1] of the user served at this round; the wrapper releases y + Lap(2/ε) (the
    Laplace randomizer with range [−1, 1], sensitivity 2). It protects the **label only**: the
    context φ(x_t, ·) is the observation, which the learner needs to act and sees in the clear.

    It is *not* the user-side randomizer of LDP-LinUCB (Zheng et al. 2020), where each
    user sends (φφᵀ + symmetric Gaussian noise, φy + Gaussian noise) for the chosen action and the
    learner never touches the raw pair: that is
    :class:`~privenv.wrappers.ldp_linear.GaussianStatistics` (and its vector twin).

    ## Rewards
    A Python float, unbiased for y. An env that declares unbounded labels
    (``public_info()["reward_bound"] is None``, e.g. ``noise="gaussian"``) is refused at
    construction, and a label outside [−1, 1] raises ``ValueError``, unless ``clip=True``.
    With ``contexts="dataset"`` the context predicts the label (it *is* the class): that is
    inference from the public context, which this wrapper does not hide.

    ## Privacy
    ``privacy``: ε-DP, local model, per label.

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``clip`` (default False), ``sampler`` (``"float"`` or
    ``"exact"``, as :class:`LaplaceReward`).
    """

    def __init__(self, env: gym.Env, epsilon: float, clip: bool = False,
                 sampler: str = "float") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, epsilon=epsilon, clip=clip,
                                                 sampler=sampler)
        _check_label_bound(env, clip)
        super().__init__(env, LaplaceRandomizer(epsilon, LABEL_RANGE, clip, unit="label",
                                                sampler=sampler))


class VectorLaplaceLabel(LocalDPVectorRewardWrapper):
    """:class:`LaplaceLabel` for a native privenv vector env (same randomizer, batched)."""

    def __init__(self, env: VectorEnv, epsilon: float, clip: bool = False,
                 sampler: str = "float") -> None:
        _check_label_bound(env, clip)
        super().__init__(env, LaplaceRandomizer(epsilon, LABEL_RANGE, clip, unit="label",
                                                sampler=sampler))
