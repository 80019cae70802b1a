"""Tree-based (binary) mechanism for continual release of private prefix sums.

Dwork, Naor, Pitassi & Rothblum 2010 ("Differential privacy under continual observation");
Chan, Shi & Song 2011 ("Private and continual release of statistics", the *binary mechanism*);
used for private LinUCB by Shariff & Sheffet 2018 (Gram matrix and reward vector).

The items x₁, x₂, … are the leaves of a binary tree. Write t in binary; the p-sum of level j is
the sum of the 2ʲ consecutive items of a dyadic interval. When item t arrives, the node of level
i = (index of the lowest set bit of t) completes: its exact p-sum is x_t plus the p-sums of levels
< i, which are then discarded (the binary mechanism of Chan et al. 2011). The node's noise is drawn
**once**, when it completes, and memoised; the private prefix sum at time t is the sum of the
noisy p-sums of the set bits of t — at most ⌊log₂T⌋ + 1 of them. So each run keeps
``levels`` exact p-sums and ``levels`` noises: memory O(levels·d²), never O(T).

Privacy. An item enters at most ``tree_levels(T) = ⌊log₂T⌋ + 1`` completed nodes (a node of
level j is released only if its interval ends by T). With Gaussian node noise N(0, σ²) (for
matrices: symmetric noise, upper triangle i.i.d., mirrored) and L2 sensitivity Δ of one item
(for matrices: of its upper triangle), the whole stream is the composition of ``levels``
Gaussian mechanisms: ρ = levels·Δ²/(2σ²)-zCDP (Bun & Steinke 2016, Prop. 1.6 and Lemma 1.7;
:func:`~privenv.privacy.accounting.tree_rho`), and exactly μ-GDP with μ = √(2ρ) (Dong, Roth &
Su 2022, Cor. 3.3), which :meth:`TreeMechanism.epsilon` converts to (ε, δ) exactly (Balle &
Wang 2018). This holds for adaptively chosen items (composition is adaptive). With Laplace node
noise of scale b and L1 sensitivity Δ₁: ε = levels·Δ₁/b pure DP (basic composition).

Distributed form (paper 2, Algorithm 2). Give items a leading silo axis,
``shape=(M, d)`` or ``(M, d, d)``: each silo keeps its own p-sums and, when the node of level j*
(the lowest set bit of the batch index k) completes, releases its p-sum of the last 2^{j*}
batches with its own fresh noise (:meth:`TreeMechanism.released`: one message per silo, what a
shuffler permutes). The server sums the M messages into node j* and the prefix over the set bits
of k: ``prefix().sum(axis=1)``, whose noise has variance M·popcount(k)·σ². Each user's data
enters ≤ ``levels`` messages of its silo: the per-silo accounting is :meth:`TreeMechanism.rho`.

Exact sampler (``sampler="exact"``). Each item is rounded to the grid g = 2^(⌊log₂σ⌋ − 14)
before it enters the p-sums, and each node's noise is the discrete Gaussian N_ℤ(0, σ_k²),
σ_k² = ⌈(σ/g)²⌉ grid units² (Canonne, Kamath & Steinke 2020, "CKS20"), drawn from the run's
word stream (:func:`privenv.privacy.exact.run_discrete`). All sums are then multiples of g, held
exactly in binary64. Replacing one item moves its rounded upper triangle (m coordinates) by at most
B = Δ/g + √m in L2 (:func:`~privenv.privacy.exact.l2_grid_sensitivity`), so the stream is
ρ = levels·B²/(2σ_k²)-zCDP, the composition of ``levels`` multivariate discrete Gaussians (CKS20,
Theorem 14 — exact, not an approximation). The discrete Gaussian is not exactly μ-GDP, so
:meth:`TreeMechanism.epsilon` converts ρ with CKS20's conversion
(:func:`~privenv.privacy.accounting.rho_to_epsilon_cks`), a little looser than the float
sampler's exact GDP conversion. Laplace nodes: Lap_ℤ(t), t ≥ b/g, and ε = levels·Δ_k/t with
Δ_k = ⌈Δ₁/g⌉ + m.

Randomness comes from the caller: a :class:`~privenv.seeding.RunNoise` (run *i*'s noise from
run *i*'s stream, whatever the batch size) or a single ``numpy.random.Generator`` (fast for
audits over 10⁶ runs; then the numbers depend on the batch).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal, overload

import numpy as np

from privenv._validation import check_choice, check_int
from privenv.seeding import RunNoise

from . import exact
from .accounting import gaussian_epsilon, rho_to_epsilon_cks, tree_levels, tree_rho
from .mechanisms import (
    check_positive,
    gaussian_from_standard,
    laplace_from_uniform,
    symmetric_from_upper,
)

__all__ = ["NoiseSource", "TreeMechanism", "lowest_set_bit", "run_normals", "run_uniforms"]

NoiseSource = RunNoise | np.random.Generator


#: runs whose (levels, *shape) sums are formed at once (bounds the temporaries of a large batch)
_BLOCK = 1 << 16


def _check_runs(noise: NoiseSource, runs: np.ndarray) -> np.ndarray:
    runs = np.asarray(runs)
    if runs.ndim != 1 or (runs.size and not np.issubdtype(runs.dtype, np.integer)):
        raise ValueError(f"runs must be a 1-D array of run indices, got {runs!r}")
    return runs


def _draw(noise: NoiseSource, runs: np.ndarray, n: int, kind: Literal["normal", "uniform"]):
    runs = _check_runs(noise, runs)
    if isinstance(noise, np.random.Generator):
        shape = (runs.size, n)
        return noise.standard_normal(shape) if kind == "normal" else noise.random(shape)
    if not isinstance(noise, RunNoise):
        raise ValueError(
            f"noise must be a privenv.seeding.RunNoise or a numpy Generator, got {noise!r}"
        )
    out = np.empty((runs.size, n))
    if runs.size == 0 or n == 0:
        return out
    # Both loops read each run's stream in order, so they give the same numbers; take the one
    # with fewer Python-level calls.
    if n <= runs.size:
        take = noise.normal if kind == "normal" else noise.uniform
        for j in range(n):
            out[:, j] = take(runs)
    else:
        take_many = noise.normals if kind == "normal" else noise.uniforms
        for i, r in enumerate(runs):
            out[i] = take_many(int(r), n)
    return out


def run_normals(noise: NoiseSource, runs: np.ndarray, n: int) -> np.ndarray:
    """``n`` standard normals for each run in ``runs``: shape ``(len(runs), n)``.

    With a :class:`~privenv.seeding.RunNoise`, row i holds the next ``n`` normals of run
    ``runs[i]``'s own stream, in order (so they do not depend on the batch); with a
    ``Generator``, one block from it.
    """
    return _draw(noise, runs, n, "normal")


def run_uniforms(noise: NoiseSource, runs: np.ndarray, n: int) -> np.ndarray:
    """``n`` standard uniforms in [0, 1) for each run in ``runs`` (see :func:`run_normals`)."""
    return _draw(noise, runs, n, "uniform")


def lowest_set_bit(t: np.ndarray) -> np.ndarray:
    """Index i of the lowest set bit of each t ≥ 1 (t = 2ⁱ·odd): the level of the node that
    completes when item t arrives."""
    t = np.asarray(t, dtype=np.int64)
    if np.any(t < 1):
        raise ValueError(f"t must be >= 1, got {t!r}")
    return np.log2((t & -t).astype(float)).astype(np.int64)  # t & −t = 2ⁱ exactly


class TreeMechanism:
    """Batched binary mechanism: private prefix sums of a stream of vectors or symmetric matrices.

    Each of ``n_runs`` independent runs keeps its own clock: :meth:`add` appends one item to
    each live run and returns the private prefix sums of all runs.

    Args:
        n_runs: number of runs (leading axis of every array).
        shape: shape of one item: ``(d,)`` for vectors, ``(d, d)`` for symmetric matrices;
            a leading silo axis, ``(M, d)`` or ``(M, d, d)``, gives the distributed form below.
        sigma: per-node noise scale: the standard deviation σ of N(0, σ²) for
            ``distribution="gaussian"``, the Laplace scale b for ``"laplace"``.
        horizon: T, the largest number of items any run will add (fixes the number of levels).
        noise: per-run :class:`~privenv.seeding.RunNoise` (with ``noise.n_runs == n_runs``) or a
            ``numpy.random.Generator``.
        symmetric: items are symmetric d×d matrices (the last two axes); node noise is
            symmetric Gaussian (upper triangle i.i.d. N(0, σ²), mirrored:
            :func:`symmetric_gaussian_from_standard`).
        distribution: ``"gaussian"`` (default) or ``"laplace"`` (vectors only).
        sampler: ``"float"`` (default; binary64 noise, DP in idealized arithmetic only) or
            ``"exact"``: items rounded to the grid g = 2^(⌊log₂σ⌋ − 14) and node noise drawn
            from the discrete Gaussian N_ℤ(0, σ_k²), σ_k² = ⌈(σ/g)²⌉ (or the discrete Laplace
            Lap_ℤ(t), t ≥ b/g) on each run's word stream (:mod:`privenv.privacy.exact`,
            "Vector releases"). Every p-sum, noise and prefix sum is then a multiple of g held
            exactly in binary64 (while below 2⁵³·g), and :meth:`rho` / :meth:`epsilon` account
            for the rounding (module docstring, "Exact sampler").

    Example:
        >>> from privenv.seeding import noise_for, AGENT
        >>> tree = TreeMechanism(4, (3,), 1.0, 100, noise_for(0, 4, AGENT))
        >>> tree.add(np.ones((4, 3))).shape
        (4, 3)
    """

    def __init__(
        self,
        n_runs: int,
        shape: tuple[int, ...] | int,
        sigma: float,
        horizon: int,
        noise: NoiseSource,
        *,
        symmetric: bool = False,
        distribution: str = "gaussian",
        sampler: str = "float",
    ) -> None:
        self.n_runs = check_int("n_runs", n_runs, low=1)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.sigma = check_positive(sigma, "sigma")
        self.horizon = check_int("horizon", horizon, low=1)
        self.distribution = check_choice("distribution", distribution, ("gaussian", "laplace"))
        self.symmetric = bool(symmetric)
        if not shape or any(
            not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 1 for s in shape
        ):
            raise ValueError(f"shape must be a tuple of integers >= 1, got {shape!r}")
        if self.symmetric:
            if len(shape) < 2 or shape[-1] != shape[-2]:
                raise ValueError(
                    f"shape must end with (d, d) when symmetric=True, got {shape!r}"
                )
            if self.distribution != "gaussian":
                raise ValueError(
                    "distribution must be 'gaussian' when symmetric=True (symmetric matrix noise "
                    f"is Gaussian), got {distribution!r}"
                )
            # upper triangles, one per leading index (e.g. per silo)
            self._n_noise = math.prod(shape[:-2]) * shape[-1] * (shape[-1] + 1) // 2
        else:
            self._n_noise = math.prod(shape)
        if isinstance(noise, RunNoise) and noise.n_runs != self.n_runs:
            raise ValueError(
                f"noise must have one stream per run (n_runs={self.n_runs}), "
                f"got a RunNoise with n_runs={noise.n_runs}"
            )
        if not isinstance(noise, (RunNoise, np.random.Generator)):
            raise ValueError(
                f"noise must be a privenv.seeding.RunNoise or a numpy Generator, got {noise!r}"
            )
        self.noise = noise
        self.shape = shape
        self.sampler = check_choice("sampler", sampler, ("float", "exact"))
        #: coordinates one user's item occupies (one silo's, in the distributed form)
        self.item_size = shape[-1] * (shape[-1] + 1) // 2 if self.symmetric else shape[-1]
        self._gauss: exact.VectorGaussian | None = None
        self._lap: exact.DiscreteLaplaceParameters | None = None
        if self.sampler == "exact" and self.distribution == "gaussian":
            self._gauss = exact.VectorGaussian.for_sigma(self.sigma)
            self.grid: exact.Grid | None = self._gauss.grid
        elif self.sampler == "exact":  # t ≥ b/g on the 2⁻²⁰ lattice; Δ_k is set by epsilon()
            self.grid = exact.vector_grid(self.sigma)
            t = Fraction(math.ceil(self.grid.units(self.sigma) * 2**20), 2**20)
            self._lap = exact.DiscreteLaplaceParameters(self.grid, t.numerator, t.denominator, 1)
        else:
            self.grid = None
        self.levels = tree_levels(self.horizon)
        state = (self.n_runs, self.levels, *shape)
        self._psum = np.zeros(state)  # exact p-sums α_j of the open/complete nodes
        self._node_noise = np.zeros(state)  # their noise, drawn once when the node completes
        self.t = np.zeros(self.n_runs, dtype=np.int64)  # items added so far, per run
        # bit j of t → level j's node is part of the prefix decomposition
        self._bits = 1 << np.arange(self.levels, dtype=np.int64)

    # -- state ------------------------------------------------------------------------------------

    def reset(self, runs: np.ndarray | None = None) -> None:
        """Empty the given runs (all if ``None``). Reseeding their noise is the caller's job."""
        sel = slice(None) if runs is None else _check_runs(self.noise, runs)
        self._psum[sel] = 0.0
        self._node_noise[sel] = 0.0
        self.t[sel] = 0

    @property
    def noise_sigma(self) -> float:
        """The node noise's scale as drawn (σ or b; with the exact sampler σ_k·g ≥ σ, or
        t·g ≥ b)."""
        if self._gauss is not None:
            return self._gauss.sigma
        if self._lap is not None:
            return float(self._lap.scale * Fraction(self._lap.grid.granularity))
        return self.sigma

    def _draw_node_noise(self, runs: np.ndarray) -> np.ndarray:
        """Fresh noise of one node for each run in ``runs``: shape ``(len(runs), *shape)``."""
        if self.grid is not None:  # the exact sampler: integers of the run's words, times g
            params = self._gauss.params if self._gauss is not None else self._lap
            assert params is not None  # the exact sampler has one or the other
            z = exact.run_discrete(self.noise, runs, self._n_noise, params)
            noise = z * self.grid.granularity
        elif self.distribution == "laplace":
            u = run_uniforms(self.noise, runs, self._n_noise)
            return laplace_from_uniform(u, self.sigma).reshape(runs.size, *self.shape)
        else:
            noise = gaussian_from_standard(run_normals(self.noise, runs, self._n_noise),
                                           self.sigma)
        if self.symmetric:  # upper triangles, one per leading index (e.g. per silo), mirrored
            d = self.shape[-1]
            noise = noise.reshape(runs.size, *self.shape[:-2], d * (d + 1) // 2)
            return symmetric_from_upper(noise, d)
        return noise.reshape(runs.size, *self.shape)

    # -- the mechanism ----------------------------------------------------------------------------

    @overload
    def add(self, values: np.ndarray, live: np.ndarray | None = None,
            prefix: Literal[True] = True) -> np.ndarray: ...

    @overload
    def add(self, values: np.ndarray, live: np.ndarray | None, prefix: Literal[False]) -> None:
        ...

    @overload
    def add(self, values: np.ndarray, live: np.ndarray | None = None, *,
            prefix: Literal[False]) -> None: ...

    def add(self, values: np.ndarray, live: np.ndarray | None = None,
            prefix: bool = True) -> np.ndarray | None:
        """Append one item to each live run; return the private prefix sums of all runs.

        Args:
            values: shape ``(n_runs, *shape)`` (rows of runs that are not live are ignored).
                Symmetric items must be symmetric (they are not symmetrised here).
            live: boolean mask of shape ``(n_runs,)``; ``None`` = all runs.
            prefix: compute and return :meth:`prefix` (``False``: return ``None``, e.g. for the
                distributed form, whose silos release :meth:`released` only).

        Returns:
            ``(n_runs, *shape)``: :meth:`prefix` after the update, or ``None``.
        """
        values = np.asarray(values, dtype=float)
        if values.shape != (self.n_runs, *self.shape):
            raise ValueError(
                f"values must have shape {(self.n_runs, *self.shape)}, got {values.shape}"
            )
        runs = self._live_runs(live)
        # blocks of runs bound the temporaries of a large batch; a block is a view when every
        # run is live. Every check comes before any change of state or draw of noise.
        blocks = [(lo, slice(lo, lo + _BLOCK) if live is None else runs[lo:lo + _BLOCK])
                  for lo in range(0, runs.size, _BLOCK)]
        for _, r in blocks:
            x = values[r]
            if not np.all(np.isfinite(x)):
                raise ValueError("values must be finite")
            if self.symmetric and not np.allclose(x, np.swapaxes(x, -1, -2)):
                raise ValueError("values must be symmetric matrices when symmetric=True")
        t = self.t[runs] + 1
        if np.any(t > self.horizon):
            raise ValueError(
                f"horizon={self.horizon} exceeded: a run received item {int(t.max())}"
            )
        fresh = self._draw_node_noise(runs)  # one draw for all runs, memoised below
        extra = (slice(None), slice(None)) + (None,) * len(self.shape)
        for lo, r in blocks:
            x = values[r]
            if self.grid is not None:  # on the grid: k·g, exact
                x = self.grid.round(x) * self.grid.granularity
            i = lowest_set_bit(t[lo:lo + _BLOCK])  # the level of the node that completes now
            below = np.arange(self.levels) < i[:, None]  # levels j < i, merged into node i
            psum, noise = self._psum[r], self._node_noise[r]
            merged = x + (psum * below[extra]).sum(axis=1)  # α_i = x_t + Σ_{j<i} α_j
            psum[below] = 0.0  # α_j ← 0 for j < i (merged)
            noise[below] = 0.0
            rows = np.arange(i.size)
            psum[rows, i] = merged
            noise[rows, i] = fresh[lo:lo + _BLOCK]  # drawn once, memoised
            if live is not None:  # fancy indexing copied: write back
                self._psum[r], self._node_noise[r] = psum, noise
        self.t[runs] = t
        return self.prefix() if prefix else None

    def prefix(self) -> np.ndarray:
        """Private prefix sums of all runs: Σ over the set bits j of t of (α_j + noise_j).

        Shape ``(n_runs, *shape)``; zero for a run with no item yet. Repeated calls return the
        same numbers (the noise is memoised).
        """
        used = (self.t[:, None] & self._bits) != 0  # (n_runs, levels)
        extra = (slice(None), slice(None)) + (None,) * len(self.shape)
        out = np.empty((self.n_runs, *self.shape))
        for lo in range(0, self.n_runs, _BLOCK):  # by blocks of runs: the same sums, and the
            hi = lo + _BLOCK  # temporary is one block's
            out[lo:hi] = ((self._psum[lo:hi] + self._node_noise[lo:hi])
                          * used[lo:hi][extra]).sum(axis=1)
        return out

    def n_nodes(self) -> np.ndarray:
        """Number of noisy nodes in each run's current prefix sum: popcount(t)."""
        return ((self.t[:, None] & self._bits) != 0).sum(axis=1)

    def released(self) -> np.ndarray:
        """The noisy p-sum each run released at its latest step (node of level
        lowest_set_bit(t)); zero for a run with no item yet. Shape ``(n_runs, *shape)``.

        In the distributed form (shape ``(M, …)``) row r holds the M silos' messages of that
        step — what a shuffler would permute — and the server's node is their sum.
        """
        out = np.zeros((self.n_runs, *self.shape))
        started = np.flatnonzero(self.t > 0)
        level = lowest_set_bit(self.t[started])
        out[started] = self._psum[started, level] + self._node_noise[started, level]
        return out

    def _live_runs(self, live: np.ndarray | None) -> np.ndarray:
        if live is None:
            return np.arange(self.n_runs)
        live = np.asarray(live)
        if live.shape != (self.n_runs,) or live.dtype != bool:
            raise ValueError(
                f"live must be a boolean mask of shape ({self.n_runs},), got "
                f"dtype {live.dtype} and shape {live.shape}"
            )
        return np.flatnonzero(live)

    # -- privacy ----------------------------------------------------------------------------------

    def rho(self, sensitivity: float = 1.0) -> float:
        """zCDP ρ of the whole stream per item: levels·Δ²/(2σ²) (Gaussian noise only).

        ``sensitivity`` is Δ, the L2 norm of the largest change of one item (for symmetric
        matrices, of its upper triangle including the diagonal; e.g. √2 for replacing φφᵀ by
        φ′φ′ᵀ with ‖φ‖, ‖φ′‖ ≤ 1, see :func:`privenv.privacy.wishart.gram_sensitivity`).
        """
        if self.distribution != "gaussian":
            raise ValueError("rho is defined for distribution='gaussian'; use epsilon()")
        if self._gauss is not None:  # levels·B²/(2σ_k²), B = Δ/g + √m (CKS20 zCDP)
            return self._gauss.rho(sensitivity, self.item_size, self.levels)
        return tree_rho(self.horizon, self.sigma, sensitivity)

    def epsilon(self, delta: float = 0.0, sensitivity: float = 1.0) -> float:
        """ε of the whole stream per item at δ.

        Gaussian: exact conversion of the μ-GDP guarantee, μ = √(2ρ) (:func:`gaussian_epsilon`;
        needs 0 < δ < 1). Laplace: pure ε = levels·Δ₁/b (δ may be 0); ``sensitivity`` is then the
        L1 sensitivity Δ₁.
        """
        if self.distribution == "laplace":
            check_positive(sensitivity, "sensitivity")
            if self._lap is not None:  # levels·Δ_k/t, Δ_k = ⌈Δ₁/g⌉ + m
                dk = exact.l1_grid_sensitivity(self._lap.grid, sensitivity, self.item_size)
                return exact.float_up(self.levels * dk / self._lap.scale)
            return self.levels * sensitivity / self.sigma
        if self._gauss is not None:  # zCDP only (not exactly μ-GDP): CKS20's conversion
            return rho_to_epsilon_cks(self.rho(sensitivity), delta)
        return gaussian_epsilon(delta, math.sqrt(2.0 * self.rho(sensitivity)))
