"""Local randomizers: one user's value released through one mechanism, applied to one value per
run, with each run's next draws from its own noise stream.

* :class:`RandomizedResponseRandomizer` — ε-LDP on r ∈ [0, 1]: Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1))
  (CTB, paper 3 Algorithm 4 line 2, after Ren et al. 2020);
* :class:`LaplaceRandomizer` — ε-LDP on r ∈ [lo, hi]: r + Lap((hi − lo)/ε);
* :class:`GaussianRandomizer` — (ε, δ)-LDP on r ∈ [lo, hi]: r + N(0, σ²) with Δ₂ = hi − lo, σ
  analytic (Balle & Wang 2018) or classical Δ₂√(2 ln(1.25/δ))/ε (paper 3 Algorithm 8, with γ as
  δ).

The neighbouring relation is replace-one: a user's value r is replaced by any r′ in the declared
range, so the sensitivity is hi − lo (randomized response: the range is [0, 1]). The wrappers of
:mod:`privenv.wrappers.ldp` put a randomizer in front of a learner; a local-DP *system* declares
its randomizer (:meth:`privenv.agents.base.Agent.local_randomizer`) and the runner puts it there.

**Compiled form.** Each mechanism is one compiled kernel pair over a *view* of its constants
(:meth:`LocalRandomizer.kernel_view`): :func:`admit` (check, or clip, a value) and
:func:`release` (perturb it with the run's next draws), a generic kernel function
(:func:`privenv._jit.generic`) with one implementation per view class — :class:`ResponseView`,
:class:`LaplaceView`, :class:`GaussianView`, and the exact samplers' :class:`ExactLaplaceView`,
:class:`ExactGaussianView` —, so a driver compiled for one mechanism contains no code of the
others. The Python methods apply the same kernels to a batch of runs; the compiled fast path
(:mod:`privenv.driver`) applies them to one reward at a time, to the same numbers.

**Numerics.** The ``"float"`` sampler (the default of the randomizers, and of the wrappers and
agents on privenv's simulated problems: the papers' noise) is binary64 arithmetic on uniform or
normal draws: DP for idealized real arithmetic only — the low bits of a released double can
identify the raw value (Mironov 2012; ``privenv audit --targets preimage-laplace-float``). With
``sampler="exact"`` (the default on real data: a data set, or an env of the caller's own,
:func:`privenv.wrappers.bookkeeping.data_sampler`) the value is rounded to a grid about 1000
times finer than the noise and the noise is the discrete Laplace or Gaussian drawn from uniform
64-bit words (:mod:`privenv.privacy.exact`, Canonne, Kamath & Steinke 2020) with constant work
(each draw reads its budget of words whatever its value, :mod:`privenv.privacy.constant_work`):
the declared guarantee (ε′, δ′), computed exactly with the grid and the range, holds for the
doubles released.
Randomized response releases one bit and has only the float sampler: its coin compares a uniform
double with the double nearest 1/(e^ε + 1).

Values outside the declared range raise ``ValueError`` naming ``reward`` and the range (never the
raw value); they are clipped only if the caller asks for it (``clip=True``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv._validation import (
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_range,
)
from privenv.privacy.exact import (
    ENSURED_PER_BUDGET,
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
from privenv.seeding import NoiseView, RunNoise, take_normal, take_uniform

__all__ = [
    "CALIBRATIONS",
    "ExactGaussianView",
    "ExactLaplaceView",
    "GaussianRandomizer",
    "GaussianView",
    "LaplaceRandomizer",
    "LaplaceView",
    "LocalRandomizer",
    "RandomizedResponseRandomizer",
    "ResponseView",
    "admit",
    "release",
]

#: the two calibrations of a Gaussian noise σ (the analytic Gaussian mechanism, or the classical
#: σ = Δ·√(2 ln(1.25/δ))/ε)
CALIBRATIONS = ("analytic", "classical")


# ---------------------------------------------------------------------------------------------
# The compiled randomizers: one view class and one release per mechanism
# ---------------------------------------------------------------------------------------------


class ResponseView(NamedTuple):
    """Randomized response on [lo, hi] = [0, 1]: ``p0`` = 1/(e^ε + 1)."""

    lo: float
    hi: float
    clip: bool
    p0: float
    words: int = 0  # the exact samplers' words one release may read (none here)


class LaplaceView(NamedTuple):
    """x + Lap(``scale``) on [lo, hi] (the float sampler)."""

    lo: float
    hi: float
    clip: bool
    scale: float
    words: int = 0


class GaussianView(NamedTuple):
    """x + N(0, σ²) on [lo, hi], σ = ``sigma`` (the float sampler)."""

    lo: float
    hi: float
    clip: bool
    sigma: float
    words: int = 0


class ExactLaplaceView(NamedTuple):
    """(k + Z)·g, k = x on the grid g, Z ~ Lap_ℤ(a/b) grid units (:mod:`privenv.privacy.exact`),
    drawn over ``budget`` words (constant work); ``words``: the words a release needs available
    (:data:`~privenv.privacy.releases.ENSURED_PER_BUDGET` budgets)."""

    lo: float
    hi: float
    clip: bool
    g: float
    a: int
    b: int
    budget: int
    words: int


class ExactGaussianView(NamedTuple):
    """(k + Z)·g, Z ~ N_ℤ(0, a/b) grid units², CKS20's t = ``c``, over ``budget`` words (as
    :class:`ExactLaplaceView`)."""

    lo: float
    hi: float
    clip: bool
    g: float
    a: int
    b: int
    c: int
    budget: int
    words: int


@jit(inline="always")
def _admit_in_range(rv: Any, x: float) -> tuple[float, bool]:
    if x != x:  # NaN
        return x, False
    if x < rv.lo:
        return rv.lo, rv.clip
    if x > rv.hi:
        return rv.hi, rv.clip
    return x, True


@generic(default=_admit_in_range)
def admit(rv: Any, x: float) -> tuple[float, bool]:
    """(value, ok): ``x`` if it lies in the declared range [``rv.lo``, ``rv.hi``]; clipped into
    it if the randomizer clips (``rv.clip``); not ok if it is NaN, or outside and the randomizer
    does not clip."""
    raise NotImplementedError


@generic
def release(rv: Any, noise: NoiseView, run: int, x: float) -> float:
    """The release of an admitted value ``x`` of ``run``, with that run's next draw (one
    implementation per view class; inlined at every step of the fast path)."""
    raise NotImplementedError


@release.register(ResponseView)
@jit(inline="always")
def _response_release(rv: ResponseView, noise: NoiseView, run: int, x: float) -> float:
    return rr_release(x, take_uniform(noise, run), rv.p0)


@release.register(LaplaceView)
@jit(inline="always")
def _laplace_release(rv: LaplaceView, noise: NoiseView, run: int, x: float) -> float:
    return x + laplace_noise(take_uniform(noise, run), rv.scale)


@release.register(GaussianView)
@jit(inline="always")
def _gaussian_release(rv: GaussianView, noise: NoiseView, run: int, x: float) -> float:
    return x + gaussian_noise(take_normal(noise, run), rv.sigma)


@release.register(ExactLaplaceView)
@jit(inline="always")
def _exact_laplace_release(rv: ExactLaplaceView, noise: NoiseView, run: int, x: float) -> float:
    return float(grid_round(x, rv.g)
                 + take_discrete_laplace(noise, run, rv.a, rv.b, rv.budget)) * rv.g


@release.register(ExactGaussianView)
@jit(inline="always")
def _exact_gaussian_release(rv: ExactGaussianView, noise: NoiseView, run: int,
                            x: float) -> float:
    return float(grid_round(x, rv.g)
                 + take_discrete_gaussian(noise, run, rv.a, rv.b, rv.c, rv.budget)) * rv.g


@jit
def _admit_all(rv: Any, x: np.ndarray, out: np.ndarray, ok: np.ndarray) -> None:
    for j in range(x.size):
        out[j], ok[j] = admit(rv, x[j])


@jit
def _release_all(rv: Any, noise: NoiseView, runs: np.ndarray, x: np.ndarray,
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

    Subclasses write :meth:`kernel_view`; the arithmetic is the compiled :func:`admit` /
    :func:`release`. A subclass that overrides the Python methods (``__call__``,
    :meth:`validate`, :meth:`perturb`; e.g. a test that records what it is given) is not
    compiled: :attr:`compiled` is then false and the fast path leaves it to the wrappers.

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
    #: the samplers this mechanism offers
    samplers: tuple[str, ...] = ("float",)
    #: whether the compiled kernels are this randomizer (false for a subclass that overrides
    #: the Python methods)
    compiled: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if any(name in vars(cls) for name in ("__call__", "validate", "perturb")):
            cls.compiled = False

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
        self.reward_range = check_range("reward_range", reward_range)
        self.clip: bool = check_bool("clip", clip)
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
    def kernel_view(self) -> Any:
        """The compiled form's view of this randomizer (a view class of this module)."""

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
        what = "a nan or out-of-range value" if nan is None else \
            "nan" if nan else "a value outside"
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
        noise.ensure(runs, view.words)
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

    def __init__(self, epsilon: float, clip: bool = False, unit: str = "reward") -> None:
        super().__init__(epsilon, 0.0, (0.0, 1.0), clip, unit)

    def kernel_view(self) -> ResponseView:
        lo, hi = self.reward_range
        return ResponseView(lo=lo, hi=hi, clip=self.clip, p0=rr_zero_probability(self.epsilon))


class LaplaceRandomizer(LocalRandomizer):
    """r + Lap(b), b = (hi − lo)/ε: the Laplace mechanism on one value (ε-LDP, replace-one).

    ``sampler="exact"``: r rounded to the grid g = 2^(⌊log₂ b⌋ − 10) plus the discrete Laplace
    (:class:`privenv.privacy.exact.LaplaceMechanism`), exactly ε′-LDP with ε′ ≤ ε."""

    description = "the Laplace mechanism"
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

    def kernel_view(self) -> LaplaceView | ExactLaplaceView:
        lo, hi = self.reward_range
        if isinstance(self.exact, LaplaceMechanism):
            p = self.exact.discrete_params
            return ExactLaplaceView(lo=lo, hi=hi, clip=self.clip, g=p.grid.granularity,
                                    a=p.scale_num, b=p.scale_den, budget=p.budget,
                                    words=ENSURED_PER_BUDGET * p.budget)
        return LaplaceView(lo=lo, hi=hi, clip=self.clip, scale=self.scale)


class GaussianRandomizer(LocalRandomizer):
    """r + N(0, σ²): the Gaussian mechanism on one value, (ε, δ)-LDP with Δ₂ = hi − lo.

    ``calibration="analytic"`` (default): the smallest σ giving (ε, δ)-DP (Balle & Wang 2018,
    Theorem 8), valid for every ε. ``"classical"``: σ = Δ₂√(2 ln(1.25/δ))/ε, the formula of
    paper 3 Algorithm 8 (after Zheng et al. 2020, with their γ as δ); it is a theorem only for
    ε < 1 (Dwork & Roth 2014, Theorem A.1), so ε ≥ 1 raises ``ValueError`` — a wrapper must not
    declare a guarantee its noise does not give.
    """

    description = "the Gaussian mechanism"
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

    def kernel_view(self) -> GaussianView | ExactGaussianView:
        lo, hi = self.reward_range
        if isinstance(self.exact, GaussianMechanism):
            q = self.exact.discrete_params
            return ExactGaussianView(lo=lo, hi=hi, clip=self.clip,
                                     g=self.exact.exact_grid.granularity,
                                     a=q.var_num, b=q.var_den, c=q.t, budget=q.budget,
                                     words=ENSURED_PER_BUDGET * q.budget)
        return GaussianView(lo=lo, hi=hi, clip=self.clip, sigma=self.sigma)
