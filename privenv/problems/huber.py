"""Heavy-tailed K-armed bandit with Huber contamination (paper 1, Definition 3.3).

Each pull of arm *a* returns, with probability 1 − α, a draw from the inlier law P_a (mean exactly
μ_a) and otherwise a draw from the contamination law G_a. Regret is the *clean* pseudo-regret
Σ_t (μ* − μ_{a_t}) of Definition 3.6.

Inlier families (all centred so that the mean is exactly μ_a):

* ``"student-t"``: μ_a + t(ν), ν = 2.5 by default (variance ν/(ν − 2) = 5);
* ``"pareto"``: μ_a + η − s·x_m/(s − 1), η ~ Pareto(shape s = 2.5, scale x_m = 1.5) (variance 5);
* ``"gaussian"``: μ_a + N(0, σ²), σ = 1 by default;
* any frozen ``scipy.stats`` law X: μ_a + X − E[X] (slower, checked for NaN).

Contamination laws: ``"gaussian"`` N(0, 50²) (the paper's), ``"adversarial"`` (below), any frozen
``scipy.stats`` law, or a list of K frozen laws (one per arm).

``"adversarial"`` contamination pushes the estimates of a naive mean toward the wrong order: the
best arm's outliers are N(μ_min − c, 1) and every other arm's N(μ_max + c, 1), c =
``contamination_scale`` (50 by default). With α = 5 % the naive means move by up to 7.5 toward
each other on the default instance.

Sampling. The stream of (run, arm) is drawn in blocks of :data:`~privenv.problems.base.ARM_BLOCK`
pulls: the block's n inlier draws, then its n contamination coins (``random() < α``), then one
outlier per coin that came up — the block size is part of the numbers. For the named laws the
blocks are drawn in compiled code from the stream's PCG64 (:func:`fill_block`, numpy's
``standard_t``, ``pareto``, ``standard_normal`` and ``random``, bit for bit: :mod:`privenv._pcg64`)
when a pull finds its block used up; a ``scipy.stats`` law is drawn by numpy
(:class:`~privenv.seeding.RunStreams`), to the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from privenv._jit import jit
from privenv._pcg64 import next_double, next_normal, next_pareto, next_t
from privenv._validation import check_choice, check_int, check_probability, check_real, check_vector
from privenv.problems.base import ARM_BLOCK, BufferedArms, Problem, next_value, take_values
from privenv.seeding import RunStreams, Seed, sparse_empty

INLIER_LAWS = ("student-t", "pareto", "gaussian")
CONTAMINATION_LAWS = ("gaussian", "adversarial")


def paper1_means(K: int = 5) -> np.ndarray:
    """μ_a = 100 − 100(a − 1)/(K − 1), a = 1…K (paper 1 §7.1)."""
    K = check_int("K", K, low=2)
    return 100.0 - 100.0 * np.arange(K) / (K - 1)


def _is_frozen(law: Any) -> bool:
    return hasattr(law, "rvs") and hasattr(law, "mean") and hasattr(law, "var")


class _Noise:
    """Centred inlier noise: ``sample(gen, n)`` has mean 0; ``var`` its variance."""

    def __init__(self, law: Any, params: dict[str, float]) -> None:
        self.law = law
        if _is_frozen(law):
            mean, var = float(law.mean()), float(law.var())
            if not (np.isfinite(mean) and np.isfinite(var)):
                raise ValueError(
                    f"inlier law must have a finite mean and variance, got mean={mean}, var={var}"
                )
            self._mean, self.var = mean, var
            return
        check_choice("inlier", law, INLIER_LAWS)
        if law == "student-t":
            self.nu = check_real("nu", params.get("nu", 2.5), low=2.0, low_open=True)
            self.var = self.nu / (self.nu - 2.0)
        elif law == "pareto":
            self.shape = check_real("shape", params.get("shape", 2.5), low=2.0, low_open=True)
            self.scale = check_real("scale", params.get("scale", 1.5), low=0.0, low_open=True)
            s, xm = self.shape, self.scale
            self._mean = s * xm / (s - 1.0)
            self.var = xm**2 * s / ((s - 1.0) ** 2 * (s - 2.0))
        else:
            self.sigma = check_real("sigma", params.get("sigma", 1.0), low=0.0, low_open=True)
            self.var = self.sigma**2

    def sample(self, gen: np.random.Generator, n: int) -> np.ndarray:
        law = self.law
        if law == "student-t":
            return gen.standard_t(self.nu, n)
        if law == "pareto":
            # numpy's pareto is the Lomax law: x_m·(1 + Lomax(s)) ~ Pareto(s, x_m).
            return self.scale * (1.0 + gen.pareto(self.shape, n)) - self._mean
        if law == "gaussian":
            return self.sigma * gen.standard_normal(n)
        x = np.asarray(law.rvs(size=n, random_state=gen), dtype=float)
        if not np.all(np.isfinite(x)):
            raise ValueError("inlier law returned a non-finite (NaN or inf) reward")
        return x - self._mean

#: :attr:`HuberArms.inlier` of each named inlier law, and :attr:`HuberArms.outlier` of each named
#: contamination
STUDENT_T, PARETO, GAUSSIAN = range(3)
GAUSSIAN_OUTLIERS, ADVERSARIAL = range(2)


class HuberArms(NamedTuple):
    """The compiled view of a Huber problem with named laws: each (run, arm) stream's block
    (``values[row, i]`` = (reward, contaminated flag), ``pos[row]`` the next unread pull, a
    block used up when ``pos[row] == values.shape[1]``), its PCG64 ``states[row]``, and the laws'
    constants (row = run·K + arm)."""

    values: np.ndarray
    pos: np.ndarray
    states: np.ndarray
    means: np.ndarray
    alpha: float
    inlier: int
    nu: float  # Student-t
    shape: float  # Pareto: s, x_m and the mean s·x_m/(s − 1)
    scale: float
    pareto_mean: float
    sigma: float  # Gaussian inliers
    outlier: int
    outlier_scale: float  # Gaussian contamination's σ
    centres: np.ndarray  # adversarial contamination's centre of each arm
    K: int
    gaps: np.ndarray
    best: np.ndarray


@jit
def fill_block(env: HuberArms, row: int) -> None:
    """Draw the next block of stream ``row`` (as :meth:`HuberProblem._fill`: n inliers, n coins,
    then the outliers of the coins that came up, in order)."""
    arm = row % env.K
    n = env.values.shape[1]
    mu = env.means[arm]
    for i in range(n):  # μ_a + the centred inlier noise (numpy: means[arm] + sample(gen, n))
        if env.inlier == STUDENT_T:
            noise = next_t(env.states, row, env.nu)
        elif env.inlier == PARETO:  # x_m·(1 + Lomax(s)) − its mean
            noise = env.scale * (1.0 + next_pareto(env.states, row, env.shape)) - env.pareto_mean
        else:
            noise = env.sigma * next_normal(env.states, row)
        env.values[row, i, 0] = mu + noise
    flagged = 0
    for i in range(n):  # the contamination coins: random() < α
        flag = next_double(env.states, row) < env.alpha
        env.values[row, i, 1] = 1.0 if flag else 0.0
        flagged += flag
    if env.alpha > 0 and flagged:
        for i in range(n):
            if env.values[row, i, 1] != 0.0:
                z = next_normal(env.states, row)
                if env.outlier == GAUSSIAN_OUTLIERS:
                    env.values[row, i, 0] = env.outlier_scale * z
                else:
                    env.values[row, i, 0] = env.centres[arm] + z
    env.pos[row] = 0


@next_value.register(HuberArms)
@jit(inline="always")
def _huber_value(env: HuberArms, run: int, arm: int) -> float:
    row = run * env.K + arm
    i = env.pos[row]
    if i == env.values.shape[1]:  # the block is used up: draw the next (a call, once a block)
        fill_block(env, row)
        i = 0
    env.pos[row] = i + 1
    return env.values[row, i, 0]


@jit
def _take_flags(env: HuberArms, rows: np.ndarray, flags: np.ndarray, at: np.ndarray) -> None:
    """The contamination flag of the pull each ``rows[i]`` has just made (after
    :func:`~privenv.problems.base.take_values`)."""
    for i in range(rows.size):
        flags[at[i]] = env.values[rows[i], env.pos[rows[i]] - 1, 1] != 0.0



@jit
def _pulls(env: HuberArms, row: int, out: np.ndarray) -> None:
    """The next ``len(out)`` pulls of stream ``row``: (reward, flag) rows."""
    for i in range(out.shape[0]):
        out[i, 0] = next_value(env, row // env.K, row % env.K)
        out[i, 1] = env.values[row, env.pos[row] - 1, 1]


class HuberProblem(Problem):
    """K-armed heavy-tailed bandit with Huber α-contamination, for ``n_runs`` runs at once.

    Args:
        K: number of arms (≥ 2; default 5, or the length of ``means``, which must then agree).
        means: inlier means μ_a (default: paper 1's 100 … 0).
        alpha: contamination level α ∈ [0, 1).
        inlier: ``"student-t"``, ``"pareto"``, ``"gaussian"`` or a frozen ``scipy.stats`` law.
        inlier_params: parameters of the named inlier law (``nu``; ``shape``, ``scale``; ``sigma``).
        contamination: ``"gaussian"``, ``"adversarial"``, a frozen law or a list of K frozen laws.
        contamination_scale: standard deviation of the Gaussian contamination / offset of the
            adversarial one (50).
        n_runs: number of runs.
    """

    family = "huber"
    #: arms when neither K nor means is given
    DEFAULT_K = 5

    @classmethod
    def sizes(cls, K: int | None = None, means: Any = None, **_: Any) -> dict[str, int]:
        """K: the length of ``means`` if given, else ``K``, else :attr:`DEFAULT_K`."""
        if (n := cls.means_length(means)) is not None:
            return {"K": n}
        return {"K": cls.DEFAULT_K if K is None else K}

    def __init__(
        self,
        K: int | None = None,
        means: Sequence[float] | np.ndarray | None = None,
        alpha: float = 0.05,
        inlier: Any = "student-t",
        inlier_params: dict[str, float] | None = None,
        contamination: Any = "gaussian",
        contamination_scale: float = 50.0,
        n_runs: int = 1,
    ) -> None:
        super().__init__(n_runs)
        if means is None:
            means = paper1_means(self.DEFAULT_K if K is None else K)
        self.means = check_vector("means", means, min_length=2)
        if K is not None and check_int("K", K, low=2) != self.means.shape[0]:
            raise ValueError(f"K={K} disagrees with the {self.means.shape[0]} means given; give "
                             "one of them (K defaults to the length of means)")
        root_max = float(np.sqrt(np.finfo(float).max))  # the moment bound max μ_a² is finite
        if np.max(np.abs(self.means)) >= root_max:
            raise ValueError(f"means must be below {root_max:.3g} in absolute value (so that "
                             f"max μ_a² is finite), got {means!r}")
        self.K = self.means.shape[0]
        self.alpha = check_probability(alpha, "alpha", high_open=True)
        self.noise = _Noise(inlier, dict(inlier_params or {}))
        self.contamination_scale = check_real(
            "contamination_scale", contamination_scale, low=0.0, low_open=True
        )
        self.contamination = self._check_contamination(contamination)
        self.best = int(np.argmax(self.means))
        self.gaps = self.means.max() - self.means
        # the adversarial contamination's centre of each arm (the best arm's below every mean)
        self._centres = np.where(np.arange(self.K) == self.best,
                                 self.means.min() - self.contamination_scale,
                                 self.means.max() + self.contamination_scale)
        self.single_observation_space = spaces.Discrete(1)
        self.single_action_space = spaces.Discrete(self.K)
        self._obs = np.zeros(self.n_runs, dtype=np.int64)
        self._obs.flags.writeable = False  # constant: shared, never copied
        self._streams: RunStreams | None = None
        #: the named laws are drawn in compiled code (:class:`HuberArms`), a scipy law by numpy
        self.compiled = isinstance(inlier, str) and isinstance(self.contamination, str)

    def _check_contamination(self, c: Any) -> Any:
        if isinstance(c, str):
            return check_choice("contamination", c, CONTAMINATION_LAWS)
        if _is_frozen(c):
            return c
        if isinstance(c, (list, tuple)) and len(c) == self.K and all(_is_frozen(g) for g in c):
            return list(c)
        raise ValueError(
            "contamination must be 'gaussian', 'adversarial', a frozen scipy.stats law or a "
            f"list of K={self.K} frozen laws, got {c!r}"
        )

    # -- sampling -------------------------------------------------------------------------------
    def _outliers(self, gen: np.random.Generator, n: int, arm: int) -> np.ndarray:
        c = self.contamination
        if c == "gaussian":
            return self.contamination_scale * gen.standard_normal(n)
        if c == "adversarial":
            centre = (
                self.means.min() - self.contamination_scale
                if arm == self.best
                else self.means.max() + self.contamination_scale
            )
            return centre + gen.standard_normal(n)
        law = c[arm] if isinstance(c, list) else c
        x = np.asarray(law.rvs(size=n, random_state=gen), dtype=float)
        if not np.all(np.isfinite(x)):
            raise ValueError("contamination law returned a non-finite (NaN or inf) reward")
        return x

    def _fill(self, gen: np.random.Generator, n: int, row: int) -> np.ndarray:
        """n pulls of arm ``row % K``: columns (observed reward, contaminated flag)."""
        arm = row % self.K
        inlier = self.means[arm] + self.noise.sample(gen, n)
        flag = gen.random(n) < self.alpha
        out = np.empty((n, 2))
        out[:, 0] = inlier
        out[:, 1] = flag
        if self.alpha > 0 and flag.any():
            out[flag, 0] = self._outliers(gen, int(flag.sum()), arm)
        return out

    # -- Problem API ----------------------------------------------------------------------------
    def _reset(
        self, run_seeds: list[Seed], runs: np.ndarray
    ) -> tuple[np.ndarray, dict]:
        if not self.compiled:
            self.reset_arm_streams(run_seeds, runs, self.K, self._fill)
        elif self.reset_arm_streams(run_seeds, runs, self.K, None):  # every run: new blocks
            rows = self.n_runs * self.K
            self._values = sparse_empty((rows, ARM_BLOCK, 2), np.float64)
            self._pos = np.full(rows, ARM_BLOCK, dtype=np.int64)  # drawn at the first pull
        else:
            self._pos[(runs[:, None] * self.K + np.arange(self.K)).ravel()] = ARM_BLOCK
        self._optimal = np.full(self.n_runs, self.best)
        self._optimal.flags.writeable = False
        self._never = np.zeros(self.n_runs, dtype=bool)
        self._never.flags.writeable = False
        return self._obs.copy(), {}

    def _step(
        self, actions: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        rows = self._rows + actions
        if self.compiled:
            at = np.arange(self.n_runs) if live is None else np.flatnonzero(live)
            reward, contaminated = np.zeros(self.n_runs), np.zeros(self.n_runs, dtype=bool)
            view = self.kernel_view()
            take_values(view, rows[at], reward, at)
            _take_flags(view, rows[at], contaminated, at)
        elif live is None:
            draw = self.arm_streams.take(rows)
            reward, contaminated = draw[:, 0].copy(), draw[:, 1].astype(bool)
        else:
            reward, contaminated = np.zeros(self.n_runs), np.zeros(self.n_runs, dtype=bool)
            draw = self.arm_streams.take(rows[live])
            reward[live], contaminated[live] = draw[:, 0], draw[:, 1].astype(bool)
        info = {
            "regret": self.gaps[actions],
            "expected_reward": self.means[actions],
            "optimal_action": self._optimal,
            "contaminated": contaminated,
        }
        return self._obs, reward, self._never, info

    def kernel_view(self) -> HuberArms | BufferedArms:
        """The reward streams (the compiled laws' :class:`HuberArms`, or a scipy law's blocks
        drawn by numpy), the clean pseudo-regret of each arm, and the best arm of every run."""
        if not self.compiled:
            values, pos, end = self.arm_streams.view()
            return BufferedArms(values=values, pos=pos, end=end, K=self.K, gaps=self.gaps,
                                best=self._optimal)
        noise, c = self.noise, self.contamination_scale
        return HuberArms(
            values=self._values, pos=self._pos, states=self._states, means=self.means,
            alpha=self.alpha, inlier=INLIER_LAWS.index(noise.law), nu=getattr(noise, "nu", 0.0),
            shape=getattr(noise, "shape", 0.0), scale=getattr(noise, "scale", 0.0),
            pareto_mean=getattr(noise, "_mean", 0.0), sigma=getattr(noise, "sigma", 0.0),
            outlier=CONTAMINATION_LAWS.index(self.contamination), outlier_scale=c,
            centres=self._centres, K=self.K, gaps=self.gaps, best=self._optimal)

    def pulls(self, run: int, arm: int, n: int) -> np.ndarray:
        """The next ``n`` pulls of ``arm`` in ``run``, in order, shape (n, 2): the observed
        reward and the contamination flag (they advance its stream, as ``n`` pulls would): a
        direct look at the laws."""
        row = self._rows[run] + arm
        if not self.compiled:
            return self.arm_streams.take_many(row, n)
        out = np.empty((n, 2))
        _pulls(self.kernel_view(), row, out)
        return out

    def public_info(self) -> dict[str, Any]:
        r"""K, α and the moment bounds of Definitions 3.1/3.2 with k = 2 (what PRAE assumes known):
        raw bound u = max_a E[X_a²] = max μ_a² + Var, central bound Var, mean range
        D = max \|μ_a\|."""
        var = self.noise.var
        return {
            "K": self.K,
            "alpha": self.alpha,
            "moment_order": 2.0,
            "raw_moment_bound": float(np.max(self.means**2) + var),
            "central_moment_bound": float(var),
            "mean_range": float(np.max(np.abs(self.means))),
        }
