"""Batch draws of the exact samplers on a seeded ``numpy.random.Generator``.

:func:`discrete_laplace`, :func:`discrete_gaussian`, :func:`snap` and :func:`uniform_doubles`
read the generator's raw 64-bit words (``gen.integers(0, 2**64, dtype=np.uint64)``, its bit
generator's output) through the constant-work kernels of :mod:`privenv.privacy.constant_work`: each
draw reads exactly its budget of words (:mod:`privenv.privacy.work`; two for snapping), so n
draws read n·budget words and advance the generator by that much (plus whole budgets for the
draws that overrun, probability ≤ 2⁻⁶⁴ each). Same seed, same numbers; the first n of
``size = m > n`` draws are the ``size = n`` draws. The words are drawn :data:`WORD_BLOCK` at a
time (bounded memory) and the values do not depend on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from privenv import seeding
from privenv._jit import jit
from privenv._validation import check_int

from .constant_work import (
    OVERFLOW,
    UNCERTAIN,
    correctly_rounded_log,
    discrete_gaussian_kernel,
    discrete_laplace_kernel,
    snap_from_log,
    snapping_kernel,
    uniform_double,
)
from .grid import MAX_SCALE, DiscreteGaussianParameters, SnappingParameters, rational
from .work import laplace_budget

__all__ = [
    "WORD_BLOCK",
    "discrete_gaussian",
    "discrete_laplace",
    "snap",
    "snap_uncertain",
    "uniform_doubles",
]

#: raw words an exact sampler holds at once (8 MB)
WORD_BLOCK = 1 << 20

_LAPLACE, _GAUSSIAN, _SNAPPING, _UNIFORM_DOUBLE = 0, 1, 2, 3


@jit
def _fill(words: np.ndarray, pos: int, i: int, kind: int, ints: np.ndarray, floats: np.ndarray,
          x: np.ndarray, out_int: np.ndarray, out_float: np.ndarray) -> tuple[int, int, int]:
    """Draws i, i + 1, … of one sampler into ``out_int`` / ``out_float`` → (next index, cursor,
    status 0 | EXHAUSTED | OVERFLOW | UNCERTAIN). ``kind``: discrete Laplace (ints = scale num,
    den, budget), discrete Gaussian (ints = var_num, var_den, t, budget), snapping of x[i]
    (floats = λ, B, Λ), or (U*, sign bit)."""
    n = max(out_int.shape[0], out_float.shape[0])
    while i < n:
        v, f = 0, 0.0
        if kind == _LAPLACE:
            v, p = discrete_laplace_kernel(words, pos, ints[0], ints[1], ints[3])
        elif kind == _GAUSSIAN:
            v, p = discrete_gaussian_kernel(words, pos, ints[0], ints[1], ints[2], ints[3])
        elif kind == _SNAPPING:
            f, p = snapping_kernel(words, pos, x[i], floats[0], floats[1], floats[2])
        else:
            f, v, p = uniform_double(words, pos)
        if p < 0:
            return i, pos, p
        if kind != _SNAPPING:
            out_int[i] = v
        if kind >= _SNAPPING:
            out_float[i] = f
        pos = p
        i += 1
    return i, pos, 0


class _WordStream:
    """The next ``pending`` words of ``rng``'s stream, drawn on demand."""

    def __init__(self, rng: np.random.Generator, pending: int) -> None:
        self.rng, self.pending = rng, pending

    def take(self, most: int) -> np.ndarray:
        m = min(most, self.pending)
        self.pending -= m
        return seeding.random_words(self.rng, m)

    def skip_rest(self) -> None:
        """Consume the pending words unread (as if drawn)."""
        advance = getattr(self.rng.bit_generator, "advance", None)
        if advance is not None:
            advance(self.pending)
            self.pending = 0
        while self.pending:
            self.take(WORD_BLOCK)


def _run_fill(rng: np.random.Generator, n: int, budget: int, kind: int,
              ints: tuple[int, ...] = (), floats: tuple[float, ...] = (),
              x: np.ndarray | None = None,
              resolve: Callable[[np.ndarray, int, int], tuple[Any, int]] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """n draws of sampler ``kind`` (``budget`` words each) on ``rng``'s word stream → (int64
    values, float64 values). The stream holds n·budget words; a draw that overruns (or runs out
    at a block's end) keeps its unread words, has a further budget appended and is redone, so
    the values do not depend on the blocks; on UNCERTAIN, ``resolve(words, cursor, index)``
    decides that draw."""
    out_int = np.empty(n if kind != _SNAPPING else 0, np.int64)
    out_float = np.empty(n if kind >= _SNAPPING else 0)
    ip = np.zeros(4, np.int64)
    ip[:len(ints)] = ints
    fp = np.zeros(3)
    fp[:len(floats)] = floats
    xs = np.zeros(0) if x is None else x
    stream = _WordStream(rng, budget * n)
    words = stream.take(WORD_BLOCK)
    pos, i = 0, 0
    while True:
        i, pos, status = _fill(words, pos, i, kind, ip, fp, xs, out_int, out_float)
        if status == 0:
            stream.skip_rest()
            return out_int, out_float
        if status == UNCERTAIN and resolve is not None:
            value, p = resolve(words, pos, i)
            if p >= 0:
                out_float[i], pos, i = value, p, i + 1
                continue
            status = p
        if status == OVERFLOW:
            raise OverflowError("an exact sampler's intermediate integer exceeded 2**62 "
                                "(an event of probability below e**-1000 for valid parameters)")
        if stream.pending == 0:  # an overrun: one more budget of words
            stream.pending = budget
        words = np.concatenate([words[pos:], stream.take(WORD_BLOCK)])
        pos = 0


def _size(size: int | tuple[int, ...] | None) -> tuple[tuple[int, ...], int]:
    shape = () if size is None else ((size,) if isinstance(size, (int, np.integer))
                                     else tuple(size))
    for s in shape:
        check_int("size", s, low=0)
    return shape, math.prod(shape)


def discrete_laplace(scale: int | Fraction | float, rng: np.random.Generator,
                     size: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Exact draws of the discrete Laplace Lap_ℤ(t) (int64), t = ``scale`` (CKS20 Algorithm 2),
    with constant work (:func:`privenv.privacy.constant_work.discrete_laplace_kernel`).

    Args:
        scale: t > 0, a rational with numerator and denominator ≤ 2⁵² (an int, a
            ``fractions.Fraction``, or a float, taken exactly).
        rng: the seeded generator whose raw 64-bit words are consumed.
        size: output shape (``None``: a 0-d array).
    """
    t = rational("scale", scale, MAX_SCALE)
    shape, n = _size(size)
    budget = laplace_budget(t.numerator, t.denominator)
    return _run_fill(rng, n, budget, _LAPLACE,
                     (t.numerator, t.denominator, 0, budget))[0].reshape(shape)


def discrete_gaussian(sigma2: int | Fraction | float, rng: np.random.Generator,
                      size: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Exact draws of the discrete Gaussian N_ℤ(0, σ²) (int64), σ² = ``sigma2`` (CKS20 Alg. 3),
    with constant work (:func:`privenv.privacy.constant_work.discrete_gaussian_kernel`).

    Args:
        sigma2: σ² > 0, a rational (see
            :class:`~privenv.privacy.grid.DiscreteGaussianParameters` for its limits).
        rng: the seeded generator whose raw 64-bit words are consumed.
        size: output shape.
    """
    p = DiscreteGaussianParameters.from_variance(sigma2)
    shape, n = _size(size)
    return _run_fill(rng, n, p.budget, _GAUSSIAN,
                     (p.var_num, p.var_den, p.t, p.budget))[0].reshape(shape)


def uniform_doubles(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n draws of Mironov's U* (uniform over the doubles of (0, 1)) and of an independent sign
    bit, from ``rng``'s words as :func:`~privenv.privacy.constant_work.snapping_kernel` draws them
    (two words each)."""
    n = check_int("n", n, low=0)
    sign, u = _run_fill(rng, n, 2, _UNIFORM_DOUBLE)
    return u, sign


def snap_uncertain(words: np.ndarray, pos: int, x: float, params: SnappingParameters
                   ) -> tuple[float, int]:
    """The draw :func:`~privenv.privacy.constant_work.snapping_kernel` reported UNCERTAIN at cursor
    ``pos``, decided with :func:`~privenv.privacy.constant_work.correctly_rounded_log` →
    (release, cursor′)."""
    u, sign, p = uniform_double(words, pos)
    if p < 0:
        return 0.0, p
    return snap_from_log(x, correctly_rounded_log(u), sign, params.lam, params.bound,
                         params.lam_pow2), p


def snap(values: np.ndarray | float, params: SnappingParameters,
         rng: np.random.Generator) -> np.ndarray:
    """Snapping releases (float64) of ``values`` (one per entry, in C order) with ``params``
    (two words each)."""
    x = np.ascontiguousarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError(f"values must not be NaN ({int(np.isnan(x).sum())} entries are)")
    flat = x.ravel()
    _, out = _run_fill(rng, x.size, 2, _SNAPPING, (), (params.lam, params.bound,
                                                      params.lam_pow2), flat,
                       resolve=lambda w, p, i: snap_uncertain(w, p, float(flat[i]), params))
    return out.reshape(x.shape)

