r"""Linear contextual bandits (paper 4: Li, Simchi-Levi, Wang, *On the Optimal Regret of Locally
Private Linear Contextual Bandit*; also the base of paper 2's federated problem).

At each round t a context x_t is drawn; the learner sees the feature matrix φ(x_t, ·) ∈ ℝ^{A×d}
(one row per action, ‖φ(x_t, a)‖₂ ≤ 1), picks a_t and receives y_t with
E[y_t | x_t, a_t] = ⟨φ(x_t, a_t), θ*⟩, ‖θ*‖₂ ≤ 1.

Reward noise (``noise=``):

* ``"bounded"`` (default): y = ±1 with P(y = 1) = (1 + ⟨φ, θ*⟩)/2, so y ∈ [−1, 1] as paper 4
  assumes;
* ``"gaussian"``: y = ⟨φ, θ*⟩ + σ·N(0, 1) — then rewards are **not** bounded (σ-sub-Gaussian), and
  mechanisms that assume \|y\| ≤ 1 (e.g. paper 4's LDP protocols) need the rewards clipped first.

Each run draws one noise value per round (a uniform or a normal) shared by all actions, before the
action is known: the reward of action a at round t is then the same whichever agent plays (common
random numbers), and the law of the observed reward is exactly the one above.

Context generators (``contexts=``):

* ``"sphere"`` (default): φ(x_t, a) = g_a/‖g_a‖, g_a ~ N(0, I_d) i.i.d. per action (uniform on
  the unit sphere; the normals are made by Box–Muller in float32, see :func:`_unit_sphere`);
* ``"disjoint"``: the disjoint linear model: one context x_t uniform on the unit sphere of ℝ^p,
  φ(x_t, a) = e_a ⊗ x_t (x_t in block a of ℝ^{A·p}, zeros elsewhere), so d = A·p and
  ⟨φ(x, a), θ*⟩ = ⟨x, θ*_a⟩ with θ*_a the a-th block;
* ``"hard"``: paper 4's Theorem 2.1 instance (eq. 3 and its proof in §6.1), d = 2:
  φ_t = e₂ with probability c/√n and e₁ otherwise, where n is the number of samples the
  lower bound is about (here: the horizon) and c = 1 in eq. 3 (the proof takes
  c = 1/(4√2(e^α − 1))). The theorem is an estimation (not a bandit) statement; we make it a
  bandit with A = 2 actions φ(x_t, 0) = φ_t and φ(x_t, 1) = −φ_t, so the regression data any
  policy collects has the theorem's design Λ = E[φφᵀ] = diag(1 − c/√n, c/√n). The default
  θ* = (0, 1) is the proof's hypothesis H₁ (θ* = (0, 0) is H₀): the rare e₂ rounds are the only
  informative ones.
* ``"paper2"``: paper 2's synthetic features (the authors' experiment code): a (d − 1)-dimensional
  standard Gaussian vector normalized to unit norm, a bias coordinate 1 appended, the whole
  normalized to unit norm (i.e. divided by √2); default θ* = (0.5·u, 0.5) with u a uniform unit
  vector of ℝ^{d−1}.
* ``"dataset"``: a classification data set bundled with scikit-learn (``"wine"`` by default,
  ``"digits"``, ``"breast_cancer"``; no download) as a contextual bandit: each round a row is drawn
  uniformly with replacement; actions are the classes; the row's features are standardized
  (z-scores), a bias coordinate 1 is appended and the vector is normalized to unit norm, giving
  x̃ ∈ ℝ^{p+1}, and φ(x, a) = e_a ⊗ x̃ (the disjoint encoding, d = A·(p + 1)). The reward is
  +1 for the true class and −1 otherwise (using the whole range [−1, 1], like the bounded noise).
  Such an instance is **not exactly linear**: there is no θ* (``theta`` must not be given), the
  "expected" reward of every action is its ±1 label reward, and the regret is 2 for every
  misclassified round — each determines the raw label, so none is put in ``info``
  (:attr:`~privenv.problems.base.Problem.withheld`): the runner reads them from the problem's
  :attr:`~privenv.problems.base.Problem.evaluation` (``env.unwrapped.evaluation()``), which
  agents and wrappers are never given. scikit-learn is an optional extra
  (``pip install 'privenv[data]'``).

θ* (instance-level, the same for every run): ``theta`` if given, else a random unit vector drawn
from ``theta_seed`` (``"sphere"``, ``"disjoint"``), (0, 1) (``"hard"``) or paper 2's vector
(``"paper2"``).
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from privenv._validation import check_choice, check_int, check_real, check_vector
from privenv.problems.base import Problem
from privenv.seeding import ENV, RunStreams, Seed, child

CONTEXTS = ("sphere", "disjoint", "hard", "paper2", "dataset")
#: the evaluation quantities of a linear family's step (``info``, the per-silo ones for paper 2)
EVALUATION_KEYS = ("regret", "expected_reward", "optimal_action", "expected_rewards",
                   "silo_regret", "silo_expected_reward")
NOISES = ("bounded", "gaussian")
DATASETS = ("wine", "digits", "breast_cancer")

#: values per run kept in a random-stream buffer (float32 features: 128 KiB per run). Small on
#: purpose: a refill's temporaries then stay in cache and in malloc's heap (a 1 MiB block cost
#: ~1.5 ns a value in page faults alone on the benchmark machine).
_BUFFER_VALUES = 2**15


def _unit_rows(g: np.ndarray) -> np.ndarray:
    """Rows of ``g`` (last axis) normalized to unit Euclidean norm (in ``g``'s precision)."""
    return g / np.sqrt(np.einsum("...i,...i->...", g, g))[..., None]


def _unit_sphere(gen: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
    """float32 points uniform on the unit sphere of ℝ^d, shape ``(*shape, d)``, from ``gen`` only.

    g/‖g‖ with g ~ N(0, I_d), the normals made by Box–Muller from float32 uniforms (numpy's
    ziggurat costs ~9 ns a normal here, Box–Muller ~3): the n = ∏shape·d values are m = ⌈n/2⌉
    pairs (r cos 2πv, r sin 2πv), r = √(−2 ln(1 − u)), u, v ~ U[0, 1) on the float32 grid
    2⁻²⁴ℤ. The law is that of the sphere up to that grid: each pair's radius is cut at
    √(48 ln 2) ≈ 5.77 (probability 2⁻²⁴ ≈ 6·10⁻⁸), far below the float32 features' own rounding
    for every statistic we can estimate; the cell u ∈ [0, 2⁻²⁴) gets its midpoint's radius
    2⁻¹² instead of 0 and v its cell's midpoint (v + 2⁻²⁵), so no normal is exactly 0 (with
    d = 1 a zero would be a 0/0 feature).
    Row i's values depend only on ``gen`` and ``shape`` (a run's block size is fixed by the
    instance, never by the number of runs).
    """
    n = math.prod(shape) * d
    m = (n + 1) // 2
    u = gen.random(2 * m, dtype=np.float32)
    r = np.log1p(-u[:m])
    r *= np.float32(-2.0)
    np.sqrt(r, out=r)
    np.maximum(r, np.float32(2.0**-12), out=r)
    angle = u[m:]
    angle += np.float32(2.0**-25)  # the cell's midpoint: sin(0) would be an exact 0
    angle *= np.float32(2.0 * math.pi)
    g = np.empty(2 * m, dtype=np.float32)
    np.cos(angle, out=g[:m])
    np.sin(angle, out=g[m:])
    g[:m] *= r
    g[m:] *= r
    return _as_features(_unit_rows(g[:n].reshape(*shape, d)))


def _as_features(phi: np.ndarray) -> np.ndarray:
    """float32 features in [−1, 1]: rounding can push a normalized coordinate an ulp past ±1."""
    phi = phi.astype(np.float32, copy=False)
    return np.clip(phi, -1.0, 1.0, out=phi)


def _disjoint(x: np.ndarray, A: int) -> np.ndarray:
    """The disjoint encoding φ(x, a) = e_a ⊗ x: shape (..., p) → (..., A, A·p)."""
    eye = np.eye(A, dtype=x.dtype)
    phi = eye[:, :, None] * x[..., None, None, :]
    return phi.reshape(*x.shape[:-1], A, A * x.shape[-1])


def random_unit_vector(d: int, theta_seed: int) -> np.ndarray:
    """A uniform unit vector of ℝ^d drawn from ``theta_seed`` (instance-level randomness)."""
    return _unit_rows(np.random.default_rng(theta_seed).standard_normal(d))


class Contexts(ABC):
    """A context generator: per-round feature matrices φ(x_t, ·) ∈ ℝ^{A×d}, ‖φ‖₂ ≤ 1.

    :meth:`draw` produces the compact raw draws of a batch of rounds (what a random-stream buffer
    holds), :meth:`features` turns them into float32 features, :meth:`expected_rewards` gives
    E[y | x, a] for every action.
    """

    name: str = ""
    #: whether E[y | x, a] = ⟨φ(x, a), θ*⟩ exactly
    linear: bool = True

    def __init__(self, A: int, d: int) -> None:
        self.A, self.d = A, d

    @property
    def raw_size(self) -> int:
        """Numbers per round in a raw draw (to size buffers)."""
        return self.A * self.d

    @abstractmethod
    def draw(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Raw draws of ``shape`` rounds (e.g. ``(n,)`` or ``(n, M)``) from ``gen`` only."""

    def features(self, raw: np.ndarray) -> np.ndarray:
        """float32 features ``(..., A, d)`` of raw draws (the raw draws themselves by default)."""
        return raw

    def expected_rewards(
        self, raw: np.ndarray, phi: np.ndarray, theta: np.ndarray | None
    ) -> np.ndarray:
        """E[y | x, a] for every action: ``(..., A)``; ⟨φ(x, a), θ*⟩ for a linear generator."""
        if theta is None:
            raise ValueError(f"{type(self).__name__}: a linear generator's expected rewards "
                             "need theta")
        return phi.astype(np.float64) @ theta

    def default_theta(self, theta_seed: int) -> np.ndarray | None:
        """θ* when the user gives none: a uniform unit vector."""
        return random_unit_vector(self.d, theta_seed)


class SphereContexts(Contexts):
    """φ(x, a) = g_a/‖g_a‖, g_a ~ N(0, I_d) i.i.d. per action."""

    name = "sphere"

    def draw(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return _unit_sphere(gen, (*shape, self.A), self.d)


class DisjointContexts(Contexts):
    """One context x uniform on the unit sphere of ℝ^p; φ(x, a) = e_a ⊗ x, d = A·p."""

    name = "disjoint"

    def __init__(self, A: int, d: int) -> None:
        if d % A:
            raise ValueError(
                f"d must be a multiple of the number of actions ({A}) for contexts='disjoint' "
                f"(d = actions·p), got d={d}"
            )
        super().__init__(A, d)
        self.p = d // A

    @property
    def raw_size(self) -> int:
        return self.p

    def draw(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return _unit_sphere(gen, shape, self.p)

    def features(self, raw: np.ndarray) -> np.ndarray:
        return _disjoint(raw, self.A)


class HardContexts(Contexts):
    """Paper 4, Theorem 2.1 / eq. (3): φ = e₂ w.p. c/√n, e₁ otherwise; actions ±φ (d = A = 2)."""

    name = "hard"

    def __init__(self, n: int, c: float) -> None:
        super().__init__(2, 2)
        self.n = check_int("n", n, low=1)
        self.c = check_real("c", c, low=0.0, low_open=True, high=math.sqrt(self.n))
        self.p_rare = self.c / math.sqrt(self.n)

    @property
    def raw_size(self) -> int:
        return 1

    def draw(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return gen.random(shape) < self.p_rare  # True: the rare direction e₂

    def features(self, raw: np.ndarray) -> np.ndarray:
        phi = np.zeros((*raw.shape, 2, 2), dtype=np.float32)
        phi[..., 0, 0] = np.where(raw, 0.0, 1.0)
        phi[..., 0, 1] = np.where(raw, 1.0, 0.0)
        phi[..., 1, :] = -phi[..., 0, :]
        return phi

    def default_theta(self, theta_seed: int) -> np.ndarray:
        return np.array([0.0, 1.0])  # hypothesis H₁ of the proof (§6.1, eq. 11)


class Paper2Contexts(Contexts):
    """Paper 2's synthetic features: (g/‖g‖, 1)/√2 with g ~ N(0, I_{d−1})."""

    name = "paper2"

    def __init__(self, A: int, d: int) -> None:
        if d < 2:
            raise ValueError(f"d must be an integer in [2, ∞) for contexts='paper2', got {d}")
        super().__init__(A, d)

    def draw(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        phi = np.empty((*shape, self.A, self.d), dtype=np.float32)
        phi[..., :-1] = _unit_sphere(gen, (*shape, self.A), self.d - 1) * np.float32(
            1.0 / math.sqrt(2.0)
        )
        phi[..., -1] = 1.0 / math.sqrt(2.0)
        return _as_features(phi)

    def default_theta(self, theta_seed: int) -> np.ndarray:
        u = random_unit_vector(self.d - 1, theta_seed)
        return np.append(0.5 * u, 0.5)


@functools.cache
def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X̃, labels)`` of a scikit-learn bundled data set: z-scored features with a bias 1
    appended, each row normalized to unit norm; labels 0 … A − 1. Read-only arrays (cached)."""
    check_choice("dataset", name, DATASETS)
    try:
        from sklearn import datasets
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "contexts='dataset' needs scikit-learn: pip install 'privenv[data]'"
        ) from None
    loader = {
        "wine": datasets.load_wine,
        "digits": datasets.load_digits,
        "breast_cancer": datasets.load_breast_cancer,
    }[name]
    X, labels = loader(return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    std = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
    Xt = _unit_rows(np.hstack([Z, np.ones((Z.shape[0], 1))]))
    _, y = np.unique(np.asarray(labels), return_inverse=True)
    Xt.flags.writeable = False
    y = y.astype(np.int64)
    y.flags.writeable = False
    return Xt, y


class DatasetContexts(Contexts):
    """A bundled classification data set as a contextual bandit (not exactly linear).

    Each round draws a row index uniformly; with :meth:`split`, silo m draws only from its own
    part of the rows.
    """

    name = "dataset"
    linear = False

    def __init__(self, dataset: str) -> None:
        self.dataset = dataset
        self.X, self.labels = load_dataset(dataset)
        A = int(self.labels.max()) + 1
        super().__init__(A, A * self.X.shape[1])
        self.parts: list[np.ndarray] | None = None  # silo m's rows (after split)
        self._order = self._sizes = self._offsets = np.zeros(0, dtype=np.int64)

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def raw_size(self) -> int:
        return 1

    def split(self, M: int, split_seed: int) -> DatasetContexts:
        """A copy whose rows are shuffled (by ``split_seed``) and cut into M near-equal parts."""
        if M > self.n_rows:
            raise ValueError(
                f"M must be in [1, {self.n_rows}] to split the {self.dataset!r} data set "
                f"({self.n_rows} rows) across silos, got {M}"
            )
        out = DatasetContexts(self.dataset)
        perm = np.random.default_rng(split_seed).permutation(self.n_rows)
        out.parts = np.array_split(perm, M)
        out._order = np.concatenate(out.parts)  # rows of silo 0, then of silo 1, …
        out._sizes = np.array([len(p) for p in out.parts])
        out._offsets = np.concatenate([[0], np.cumsum(out._sizes)[:-1]])
        return out

    def draw(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if self.parts is None:
            return gen.integers(0, self.n_rows, size=shape)
        if shape[-1] != len(self.parts):
            raise ValueError(f"draw shape must end with M={len(self.parts)}, got {shape}")
        u = gen.random(shape)
        k = np.minimum((u * self._sizes).astype(np.int64), self._sizes - 1)
        return self._order[self._offsets + k]

    def features(self, raw: np.ndarray) -> np.ndarray:
        return _disjoint(self.X[raw].astype(np.float32), self.A)

    def expected_rewards(
        self, raw: np.ndarray, phi: np.ndarray, theta: np.ndarray | None
    ) -> np.ndarray:
        return np.where(np.arange(self.A) == self.labels[raw][..., None], 1.0, -1.0)

    def default_theta(self, theta_seed: int) -> None:
        return None


def make_contexts(
    contexts: str,
    A: int | None,
    d: int | None,
    *,
    default_A: int,
    default_d: int,
    n: int | None = None,
    c: float | None = None,
    dataset: str | None = None,
    actions_name: str = "A",
) -> Contexts:
    """Build a context generator, checking the family-specific parameters.

    ``A``/``d`` default to ``default_A``/``default_d`` (``"disjoint"``: d = A·``default_d``, i.e.
    ``default_d`` is the context dimension p); ``"hard"`` fixes A = d = 2 and ``"dataset"`` takes
    them from the data, so a different explicit value is an error. ``actions_name`` is the
    caller's name for A in error messages (``"K"`` in the federated problem).
    """
    check_choice("contexts", contexts, CONTEXTS)
    if contexts != "hard":
        for name, value in (("n", n), ("c", c)):
            if value is not None:
                raise ValueError(f"{name} is only used with contexts='hard', got {name}={value!r}")
    if contexts != "dataset" and dataset is not None:
        raise ValueError(f"dataset is only used with contexts='dataset', got {dataset!r}")
    if contexts in ("hard", "dataset"):
        gen: Contexts = (
            HardContexts(10_000 if n is None else n, 1.0 if c is None else c)
            if contexts == "hard"
            else DatasetContexts("wine" if dataset is None else dataset)
        )
        for name, value, actual in ((actions_name, A, gen.A), ("d", d, gen.d)):
            if value is not None and value != actual:
                raise ValueError(
                    f"{name} must be {actual} with contexts={contexts!r}"
                    + (f" and dataset={gen.dataset!r}" if isinstance(gen, DatasetContexts) else "")
                    + f", got {value!r}"
                )
        return gen
    A = check_int(actions_name, default_A if A is None else A, low=2)
    if contexts == "disjoint":
        d = check_int("d", A * default_d if d is None else d, low=1)
        return DisjointContexts(A, d)
    d = check_int("d", default_d if d is None else d, low=1)
    return Paper2Contexts(A, d) if contexts == "paper2" else SphereContexts(A, d)


def check_theta(theta: Any, contexts: Contexts, theta_seed: int) -> np.ndarray | None:
    """θ* given by the user (length d, ‖θ‖₂ ≤ 1) or the generator's default."""
    theta_seed = check_int("theta_seed", theta_seed, low=0)
    if not contexts.linear:
        if theta is not None:
            raise ValueError(
                f"theta must not be given with contexts={contexts.name!r} (not a linear instance)"
            )
        return None
    if theta is None:
        return contexts.default_theta(theta_seed)
    theta = check_vector("theta", theta, length=contexts.d)
    norm = float(np.linalg.norm(theta))
    if norm > 1.0 + 1e-12:
        raise ValueError(f"theta must have Euclidean norm in [0, 1], got norm {norm:g}")
    return theta


def noisy_rewards(means: np.ndarray, z: np.ndarray, noise: str, sigma: float) -> np.ndarray:
    """Rewards with the given means from one standard draw each (uniform for ``"bounded"``:
    ±1 with P(+1) = (1 + mean)/2; normal for ``"gaussian"``: mean + σz)."""
    if noise == "bounded":
        return np.where(z < 0.5 * (1.0 + means), 1.0, -1.0)
    return means + sigma * z


class LinearFamilyProblem(Problem):
    """Shared machinery of the linear contextual problems, with an optional silo axis.

    Every run owns two streams: its contexts ``(run, ENV, 0)`` and its reward noise ``(run, ENV,
    1)`` — one standard draw per round (and silo), taken before the action is known. Contexts are
    generated on the fly in blocks; nothing of size T is ever stored.

    Args:
        contexts: a :class:`Contexts` generator.
        theta: θ* (``None`` for a non-linear generator).
        noise: ``"bounded"`` or ``"gaussian"``.
        sigma: Gaussian noise standard deviation.
        silos: ``None`` for one learner, or the number of silos M (a leading axis after the runs).
        n_runs: number of runs.
    """

    def __init__(
        self,
        contexts: Contexts,
        theta: np.ndarray | None,
        noise: str,
        sigma: float | None,
        silos: int | None = None,
        n_runs: int = 1,
    ) -> None:
        super().__init__(n_runs)
        self.contexts = contexts
        self.A, self.d = contexts.A, contexts.d
        self.theta = theta
        self.noise = check_choice("noise", noise, NOISES)
        if sigma is not None and self.noise != "gaussian":
            raise ValueError(f"sigma is only used with noise='gaussian', got noise={noise!r}")
        self.sigma = check_real(
            "sigma", 0.5 if sigma is None else sigma, low=0.0, low_open=True, high=np.inf,
            high_open=True,
        )
        if not contexts.linear:  # a data set's evaluation quantities reveal its labels
            self.withheld = EVALUATION_KEYS
        self._silo_shape: tuple[int, ...] = () if silos is None else (silos,)
        per_round = contexts.raw_size * int(np.prod(self._silo_shape, dtype=np.int64))
        per_round = max(per_round, 1)
        # ≤ _BUFFER_VALUES values per run, but ≥ 16 rounds per refill while that stays ≤ 4 MiB
        block = max(_BUFFER_VALUES // per_round, min(16, 2**20 // per_round), 1)
        self._block = int(min(256, block))
        self._ctx: RunStreams | None = None
        self._noise: RunStreams | None = None

    def data_info(self) -> dict[str, Any]:
        """``{"sampler": "exact"}`` for real data (a data set): the exact samplers are the
        default wherever the data is not simulated (docs/design/threat-model.md); ``{}`` for a
        simulated instance (the agents' default, the float samplers of the papers)."""
        return {} if self.contexts.linear else {"sampler": "exact"}

    # -- streams ----------------------------------------------------------------------------------
    def _fill_contexts(self, gen: np.random.Generator, n: int, _row: int) -> np.ndarray:
        return self.contexts.draw(gen, (n, *self._silo_shape))

    def _fill_noise(self, gen: np.random.Generator, n: int, _row: int) -> np.ndarray:
        shape = (n, *self._silo_shape)
        return gen.random(shape) if self.noise == "bounded" else gen.standard_normal(shape)

    def _observe(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        phi = self.contexts.features(raw)
        return phi, self.contexts.expected_rewards(raw, phi, self.theta)

    # -- Problem API ----------------------------------------------------------------------------
    def _reset(
        self, run_seeds: list[Seed], runs: np.ndarray
    ) -> tuple[np.ndarray, dict]:
        ctx_seeds = [child(s, ENV, 0) for s in run_seeds]
        noise_seeds = [child(s, ENV, 1) for s in run_seeds]
        if self._ctx is None or len(runs) == self.n_runs:
            if len(runs) != self.n_runs:
                raise RuntimeError("the first reset must cover all runs")
            self._ctx = RunStreams(ctx_seeds, self._fill_contexts, block=self._block)
            self._noise = RunStreams(noise_seeds, self._fill_noise, block=self._block)
            self._phi, self._means = self._observe(self._ctx.take())
        else:
            assert self._noise is not None
            self._ctx.reseed(runs, ctx_seeds)
            self._noise.reseed(runs, noise_seeds)
            self._phi, self._means = self._phi.copy(), self._means.copy()
            self._phi[runs], self._means[runs] = self._observe(self._ctx.take(runs))
        return self._phi.copy(), {}

    def _step(
        self, actions: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        ctx, noise = self._ctx, self._noise
        assert ctx is not None and noise is not None  # (made by the first reset)
        means = self._means  # E[y | x_t, a] of the context the actions answer
        chosen = np.take_along_axis(means, actions[..., None], axis=-1)[..., 0]
        best = means.max(axis=-1)
        regret = best - chosen
        if live is None:
            reward = noisy_rewards(chosen, noise.take(), self.noise, self.sigma)
            self._phi, self._means = self._observe(ctx.take())
        else:
            rows = np.flatnonzero(live)
            reward = np.zeros_like(chosen)
            reward[rows] = noisy_rewards(
                chosen[rows], noise.take(rows), self.noise, self.sigma
            )
            regret = np.where(live.reshape(-1, *[1] * len(self._silo_shape)), regret, 0.0)
            self._phi, self._means = self._phi.copy(), self._means.copy()
            self._phi[rows], self._means[rows] = self._observe(ctx.take(rows))
        info = self._info(means, chosen, regret)
        return self._phi, reward, np.zeros(self.n_runs, dtype=bool), info

    def _info(self, means: np.ndarray, chosen: np.ndarray, regret: np.ndarray) -> dict[str, Any]:
        return {
            "regret": regret,
            "expected_reward": chosen,
            "optimal_action": means.argmax(axis=-1),
            "expected_rewards": means,
        }


class LinearContextualProblem(LinearFamilyProblem):
    """Finite-action linear contextual bandit (paper 4), for ``n_runs`` runs at once.

    Args:
        d: feature dimension (default 5; ``"disjoint"``: 5·A, ``"hard"``: 2, ``"dataset"``: from
            the data).
        A: number of actions (default 10; ``"hard"``: 2, ``"dataset"``: the number of classes).
        theta: θ* ∈ ℝ^d with ‖θ*‖₂ ≤ 1 (default: see the module docstring).
        theta_seed: seed of the default random θ* (instance-level: the same θ* for every run).
        contexts: ``"sphere"``, ``"disjoint"``, ``"hard"``, ``"paper2"`` or ``"dataset"``.
        noise: ``"bounded"`` (y = ±1) or ``"gaussian"`` (unbounded rewards).
        sigma: standard deviation of the Gaussian noise (0.5; only with ``noise="gaussian"``).
        n: the sample size n of the ``"hard"`` instance (default 10⁴; the envs use the horizon).
        c: the constant c of the ``"hard"`` instance, P(φ = e₂) = c/√n (default 1, as in eq. 3).
        dataset: ``"wine"`` (default), ``"digits"`` or ``"breast_cancer"`` (``contexts="dataset"``).
        n_runs: number of runs.
    """

    family = "linear"
    #: actions and feature dimension when not given (the context dimension p for ``"disjoint"``)
    DEFAULT_A, DEFAULT_D = 10, 5

    @classmethod
    def sizes(cls, d: int | None = None, A: int | None = None, contexts: str = "sphere",
              n: int | None = None, c: float | None = None, dataset: str | None = None,
              **_: Any) -> dict[str, int]:
        """A and d as the constructor resolves them (:func:`make_contexts`: no feature array is
        drawn; ``"dataset"`` loads its small table)."""
        gen = make_contexts(contexts, A, d, default_A=cls.DEFAULT_A, default_d=cls.DEFAULT_D,
                            n=n, c=c, dataset=dataset)
        return {"A": gen.A, "d": gen.d}

    def __init__(
        self,
        d: int | None = None,
        A: int | None = None,
        theta: Sequence[float] | None = None,
        theta_seed: int = 0,
        contexts: str = "sphere",
        noise: str = "bounded",
        sigma: float | None = None,
        n: int | None = None,
        c: float | None = None,
        dataset: str | None = None,
        n_runs: int = 1,
    ) -> None:
        gen = make_contexts(contexts, A, d, default_A=self.DEFAULT_A, default_d=self.DEFAULT_D, n=n,
                            c=c, dataset=dataset)
        super().__init__(gen, check_theta(theta, gen, theta_seed), noise, sigma, None, n_runs)
        self.single_observation_space = spaces.Box(-1.0, 1.0, (self.A, self.d), np.float32)
        self.single_action_space = spaces.Discrete(self.A)

    def public_info(self) -> dict[str, Any]:
        """Shapes and the model's public bounds (never θ*): d, A, ‖φ‖ ≤ 1, ‖θ*‖ ≤ 1, the noise
        and its sub-Gaussian scale (1 for ±1 rewards, σ for Gaussian noise); for a data set, the
        sampler real data calls for (:meth:`LinearFamilyProblem.data_info`)."""
        return {
            **self.data_info(),
            "d": self.d,
            "A": self.A,
            "contexts": self.contexts.name,
            "noise": self.noise,
            "sigma": self.sigma if self.noise == "gaussian" else 1.0,
            "reward_bound": 1.0 if self.noise == "bounded" else None,
            "feature_bound": 1.0,
            "theta_bound": 1.0,
        }
