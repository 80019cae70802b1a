"""numpy's ``SeedSequence`` → ``PCG64`` seeding and PCG64's draws, step for step in compiled code.

A compiled driver that draws a value at every step of a run is cheapest when it draws it where it
is used, rather than reading a block drawn ahead in numpy: no buffer, no call back to Python to
refill it. This module gives compiled code numpy's own streams, bit for bit, so that moving a draw
into a kernel changes no number:

* :func:`stream_states` — the state of ``Generator(PCG64(child(root, *key)))`` for many roots and
  keys at once (numpy's ``SeedSequence`` entropy pool, its ``generate_state(4, uint64)`` and
  ``pcg64_set_seed``), without making a Python object per stream;
* :func:`next_double` — that generator's next ``random()`` (one PCG64 step,
  ``(x >> 11) · 2⁻⁵³``); :func:`bernoulli` — a 0/1 value as ``random() < p``;
* :func:`next_normal`, :func:`next_exponential` — its next ``standard_normal()`` and
  ``standard_exponential()``: numpy's ziggurat (Marsaglia and Tsang 2000) with numpy's own tables
  (:mod:`privenv._ziggurat`) and its fallbacks for the tail and the wedges, step for step;
  :func:`next_gamma`, :func:`next_t`, :func:`next_pareto` — ``standard_gamma(shape)``
  (Marsaglia and Tsang 2000 for shape > 1), ``standard_t(df)`` and ``pareto(a)`` built on them
  as numpy builds them (``numpy/random/src/distributions/distributions.c``);
* :func:`permutations` — ``Generator.permutation(K)`` of many streams at once.

A stream's state is one row of a ``(rows, 4)`` ``uint64`` array: the 128-bit LCG state (high,
low word) and its increment (high, low). The references are numpy's ``bit_generator.pyx``
(``SeedSequence``) and ``pcg64.h`` / ``pcg64.c`` (O'Neill's PCG ``setseq_128`` generator with the
``XSL RR 128/64`` output); ``tests/test_seeding.py`` checks every law against numpy, value
for value. The transcendental functions are the C library's, as numpy's (``math.log``,
``math.exp``, ``math.expm1``, ``math.pow`` compile to the same libm calls; numpy's own vectorized
``np.exp`` may differ from them in the last bit, so references are drawn with the generator's
methods, never recomputed with ufuncs).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from privenv import _ziggurat as zig
from privenv._jit import jit

__all__ = ["bernoulli", "next_double", "next_exponential", "next_gamma", "next_normal",
           "next_pareto", "next_t", "permutations", "stream_states"]

_M32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)

# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_MULT_L = np.uint64(0xCA01F9DD)
_MIX_MULT_R = np.uint64(0x4973F715)
_XSHIFT = np.uint64(16)
_POOL_SIZE = 4

# PCG64's 128-bit multiplier (pcg64.h: PCG_DEFAULT_MULTIPLIER_HIGH, _LOW)
_MULT_HI = np.uint64(2549297995355413924)
_MULT_LO = np.uint64(4865540595714422341)


# -- SeedSequence: entropy words, pool, generate_state -----------------------------------------


@functools.lru_cache(maxsize=256)  # a batch's runs share one entropy: converted once
def _int_words(n: int) -> tuple[int, ...]:
    """An int as little-endian 32-bit words (0 is one word), as ``SeedSequence`` reads it."""
    if n < 0:
        raise ValueError(f"a seed's entropy must be non-negative, got {n}")
    if n == 0:
        return (0,)
    words = []
    while n > 0:
        words.append(n & 0xFFFFFFFF)
        n >>= 32
    return tuple(words)


def _words(x: int | Sequence[int]) -> list[int]:
    if isinstance(x, int | np.integer):
        return list(_int_words(int(x)))
    if all(type(v) is int and 0 <= v < 2**32 for v in x):  # the usual spawn key: one word each
        return list(x)
    return [w for v in x for w in _words(v)]


def stream_states(roots: Sequence[Any], keys: Sequence[tuple[int, ...]]) -> np.ndarray:
    """The PCG64 state of ``Generator(PCG64(child(roots[i], *keys[j])))`` at row
    ``i·len(keys) + j``, shape ``(len(roots)·len(keys), 4)`` (``roots``: numpy ``SeedSequence``
    or :class:`privenv.seeding.RunSeed`, read only for their ``entropy`` and ``spawn_key``;
    ``child`` as in :func:`privenv.seeding.child`: the root's entropy, its spawn key extended by
    the key).

    The assembled entropy follows ``SeedSequence.get_assembled_entropy``: the entropy's words,
    padded with zeros to the pool size when there is a spawn key, then the spawn key's words.
    """
    key_words = [_words(k) for k in keys]
    rows: list[list[int]] = []
    for root in roots:
        if root.pool_size != _POOL_SIZE:
            raise ValueError(f"a seed's pool size must be {_POOL_SIZE}, got {root.pool_size}")
        assert root.entropy is not None  # (a SeedSequence draws its entropy when built)
        entropy = _words(root.entropy)
        padded = entropy + [0] * (_POOL_SIZE - len(entropy))
        prefix = _words(root.spawn_key)
        for kw in key_words:
            spawn = prefix + kw
            rows.append((padded if spawn else entropy) + spawn)
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    width = int(lengths.max()) if rows else 0
    # one conversion of the zero-padded rows (a resetting vector env seeds a few runs per step)
    words = np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.uint64).reshape(
        len(rows), width)
    states = np.empty((len(rows), 4), dtype=np.uint64)
    _seed_all(words, lengths, states)
    return states


@jit(inline="always")
def _hashmix(value: np.uint64, hash_const: np.uint64) -> tuple[np.uint64, np.uint64]:
    """``hashmix``: the mixed word and the next hash constant (32-bit arithmetic)."""
    value = (value ^ hash_const) & _M32
    hash_const = (hash_const * _MULT_A) & _M32
    value = (value * hash_const) & _M32
    return value ^ (value >> _XSHIFT), hash_const


@jit(inline="always")
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _M32
    return result ^ (result >> _XSHIFT)


@jit(allocates=True)
def _seed_all(words: np.ndarray, lengths: np.ndarray, states: np.ndarray) -> None:
    pool = np.zeros(_POOL_SIZE, dtype=np.uint64)
    seed = np.zeros(8, dtype=np.uint64)
    for r in range(lengths.size):
        n = lengths[r]
        # SeedSequence.mix_entropy
        h = _INIT_A
        for i in range(_POOL_SIZE):
            v, h = _hashmix(words[r, i] if i < n else np.uint64(0), h)
            pool[i] = v
        for i_src in range(_POOL_SIZE):
            for i_dst in range(_POOL_SIZE):
                if i_src != i_dst:
                    v, h = _hashmix(pool[i_src], h)
                    pool[i_dst] = _mix(pool[i_dst], v)
        for i_src in range(_POOL_SIZE, n):
            for i_dst in range(_POOL_SIZE):
                v, h = _hashmix(words[r, i_src], h)
                pool[i_dst] = _mix(pool[i_dst], v)
        # SeedSequence.generate_state(4, np.uint64): eight 32-bit words, read in pairs
        h = _INIT_B
        for i in range(8):
            v = (pool[i % _POOL_SIZE] ^ h) & _M32
            h = (h * _MULT_B) & _M32
            v = (v * h) & _M32
            seed[i] = v ^ (v >> _XSHIFT)
        init_hi, init_lo = seed[0] | (seed[1] << _32), seed[2] | (seed[3] << _32)
        seq_hi, seq_lo = seed[4] | (seed[5] << _32), seed[6] | (seed[7] << _32)
        # pcg64_set_seed → pcg_setseq_128_srandom_r: state 0, inc = initseq·2 + 1, step,
        # state += initstate, step
        states[r, 2] = (seq_hi << np.uint64(1)) | (seq_lo >> np.uint64(63))
        states[r, 3] = (seq_lo << np.uint64(1)) | np.uint64(1)
        states[r, 0] = 0
        states[r, 1] = 0
        _step(states, r)
        lo = states[r, 1] + init_lo
        states[r, 0] += init_hi + (np.uint64(1) if lo < init_lo else np.uint64(0))
        states[r, 1] = lo
        _step(states, r)


# -- PCG64 ---------------------------------------------------------------------------------------


@jit(inline="always")
def _mul64(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The 128-bit product of two 64-bit words, as (high, low) words."""
    a_lo, a_hi = a & _M32, a >> _32
    b_lo, b_hi = b & _M32, b >> _32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> _32) + (p1 & _M32) + (p2 & _M32)
    return p3 + (p1 >> _32) + (p2 >> _32) + (mid >> _32), (p0 & _M32) | (mid << _32)


@jit(inline="always")
def _step(states: np.ndarray, row: int) -> None:
    """state ← state · multiplier + increment (mod 2¹²⁸)."""
    s_hi, s_lo = states[row, 0], states[row, 1]
    hi, lo = _mul64(s_lo, _MULT_LO)
    hi += s_lo * _MULT_HI + s_hi * _MULT_LO
    new_lo = lo + states[row, 3]
    states[row, 0] = hi + states[row, 2] + (np.uint64(1) if new_lo < lo else np.uint64(0))
    states[row, 1] = new_lo


@jit(inline="always")
def next64(states: np.ndarray, row: int) -> np.uint64:
    """The stream's next 64-bit output (numpy's ``pcg64_next64``: step, then XSL RR)."""
    _step(states, row)
    hi = states[row, 0]
    x = hi ^ states[row, 1]
    rot = hi >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@jit(inline="always")
def next_double(states: np.ndarray, row: int) -> float:
    """The stream's next U[0, 1) draw: numpy's ``Generator.random()``."""
    return float(next64(states, row) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit(inline="always")
def bernoulli(states: np.ndarray, row: int, p: float) -> float:
    """1.0 with probability ``p``, else 0.0: ``random() < p`` on the stream (as numpy's
    ``(generator.random(n) < p)``, value after value)."""
    return 1.0 if next_double(states, row) < p else 0.0


# -- numpy's standard laws on the stream (numpy/random/src/distributions/distributions.c) ------

_KI, _WI, _FI = zig.KI, zig.WI, zig.FI
_KE, _WE, _FE = zig.KE, zig.WE, zig.FE
_NOR_R, _NOR_INV_R, _EXP_R = zig.NOR_R, zig.NOR_INV_R, zig.EXP_R
_BYTE = np.uint64(0xFF)
_MANTISSA = np.uint64(0x000FFFFFFFFFFFFF)
_ONE = np.uint64(1)


@jit(inline="always")
def next_normal(states: np.ndarray, row: int) -> float:
    """The stream's next ``standard_normal()``: numpy's ziggurat (``random_standard_normal``).
    One 64-bit word gives the layer (low 8 bits), the sign (next bit) and a 52-bit magnitude;
    99.3 % of draws return here, the rest go to :func:`_normal_tail_or_wedge`."""
    idx, rabs, x = _ziggurat_word(next64(states, row))
    if rabs < _KI[idx]:
        return x
    return _normal_tail_or_wedge(states, row, idx, rabs, x)


@jit(inline="always")
def _ziggurat_word(r: np.uint64) -> tuple[int, np.uint64, float]:
    """One word of numpy's normal ziggurat read as (layer, 52-bit magnitude, signed x): layer
    from the low 8 bits, sign from the next bit, magnitude from the 52 above it."""
    idx = int(r & _BYTE)
    r = r >> np.uint64(8)
    rabs = (r >> _ONE) & _MANTISSA
    x = float(rabs) * _WI[idx]
    if r & _ONE:
        x = -x
    return idx, rabs, x


@jit
def _normal_tail_or_wedge(states: np.ndarray, row: int, idx: int, rabs: np.uint64,
                          x: float) -> float:
    """The rest of numpy's ziggurat loop: the tail beyond r (layer 0) or the wedge test of
    layer ``idx``, then fresh draws until one is accepted."""
    while True:
        if idx == 0:  # the tail: Marsaglia's method on two exponentials, log1p(−U)
            while True:
                xx = -_NOR_INV_R * math.log1p(-next_double(states, row))
                yy = -math.log1p(-next_double(states, row))
                if yy + yy > xx * xx:
                    return -(_NOR_R + xx) if (rabs >> np.uint64(8)) & _ONE else _NOR_R + xx
        elif ((_FI[idx - 1] - _FI[idx]) * next_double(states, row) + _FI[idx]
              < math.exp(-0.5 * x * x)):
            return x
        idx, rabs, x = _ziggurat_word(next64(states, row))  # a fresh draw, as numpy's loop
        if rabs < _KI[idx]:
            return x


@jit(inline="always")
def next_exponential(states: np.ndarray, row: int) -> float:
    """The stream's next ``standard_exponential()``: numpy's ziggurat
    (``random_standard_exponential_zig``): 3 bits dropped, 8 for the layer, 53 for the value."""
    ri = next64(states, row) >> np.uint64(3)
    idx = int(ri & _BYTE)
    ri = ri >> np.uint64(8)
    x = float(ri) * _WE[idx]
    if ri < _KE[idx]:
        return x  # 98.9 % of draws
    return _exponential_tail_or_wedge(states, row, idx, x)


@jit
def _exponential_tail_or_wedge(states: np.ndarray, row: int, idx: int, x: float) -> float:
    """``standard_exponential_zig_unlikely``: the tail (layer 0), the wedge test, or a fresh
    draw."""
    while True:
        if idx == 0:
            return _EXP_R - math.log1p(-next_double(states, row))
        if (_FE[idx - 1] - _FE[idx]) * next_double(states, row) + _FE[idx] < math.exp(-x):
            return x
        ri = next64(states, row) >> np.uint64(3)
        idx = int(ri & _BYTE)
        ri = ri >> np.uint64(8)
        x = float(ri) * _WE[idx]
        if ri < _KE[idx]:
            return x


@jit
def next_gamma(states: np.ndarray, row: int, shape: float) -> float:
    """The stream's next ``standard_gamma(shape)`` (``random_standard_gamma``): an exponential
    for shape 1, Marsaglia and Tsang (2000) for shape > 1, numpy's rejection method below 1."""
    if shape == 1.0:
        return next_exponential(states, row)
    if shape == 0.0:
        return 0.0
    if shape < 1.0:
        while True:
            u = next_double(states, row)
            v = next_exponential(states, row)
            if u <= 1.0 - shape:
                x = math.pow(u, 1.0 / shape)
                if x <= v:
                    return x
            else:
                y = -math.log((1.0 - u) / shape)
                x = math.pow(1.0 - shape + shape * y, 1.0 / shape)
                if x <= v + y:
                    return x
    b = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * b)
    while True:
        while True:
            x = next_normal(states, row)
            v = 1.0 + c * x
            if v > 0.0:
                break
        v = v * v * v
        u = next_double(states, row)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            return b * v
        if math.log(u) < 0.5 * x * x + b * (1.0 - v + math.log(v)):  # log(0) = −inf: fine
            return b * v


@jit
def next_t(states: np.ndarray, row: int, df: float) -> float:
    """The stream's next ``standard_t(df)`` (``random_standard_t``): √(df/2)·Z/√G,
    Z ~ N(0, 1) then G ~ Gamma(df/2)."""
    num = next_normal(states, row)
    denom = next_gamma(states, row, df / 2.0)
    return math.sqrt(df / 2.0) * num / math.sqrt(denom)


@jit(inline="always")
def next_pareto(states: np.ndarray, row: int, a: float) -> float:
    """The stream's next ``pareto(a)`` (numpy's Lomax law, ``random_pareto``): expm1(E/a)."""
    return math.expm1(next_exponential(states, row) / a)


# -- Generator.permutation (numpy/random/_generator.pyx: shuffle; distributions.c) -------------


@jit
def permutations(states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """Row r of ``out`` (shape ``(len(rows), K)``) ← ``Generator.permutation(K)`` of the stream
    ``rows[r]`` (the stream advances as numpy's would).

    numpy's ``permutation(K)`` shuffles ``arange(K)`` in place (``_shuffle_raw``): for i = K − 1
    down to 1, swap entries i and j = ``random_interval(i)``, which draws 32-bit words
    (``pcg64_next32``: the low half of a 64-bit output, then its high half) masked to the
    smallest all-ones mask ≥ i until one is ≤ i. A fresh generator has no buffered half.
    """
    K = out.shape[1]
    for r in range(rows.size):
        row = rows[r]
        for a in range(K):
            out[r, a] = a
        has_half = False
        half = np.uint64(0)
        for i in range(K - 1, 0, -1):
            top = np.uint64(i)
            mask = top
            for shift in (1, 2, 4, 8, 16, 32):
                mask |= mask >> np.uint64(shift)
            while True:
                if has_half:
                    word, has_half = half, False
                else:
                    x = next64(states, row)
                    word, half, has_half = x & _M32, x >> _32, True
                word &= mask
                if word <= top:
                    break
            j = int(word)
            out[r, i], out[r, j] = out[r, j], out[r, i]
