"""Seeding: one independent random stream per run (and per arm), whatever the batch size.

A run's trajectory depends only on its own seed, so run *i* is identical whether simulated alone,
in a batch of 1000, in another process or on a cluster worker. The rule, used everywhere:

* run *i* of a batch seeded with the integer ``seed`` owns ``SeedSequence(seed, spawn_key=(i,))``;
* inside a run, each consumer owns a child keyed by a fixed *purpose*: the environment's reward
  stream of arm *a* is ``(i, ENV, a)``, the agent's noise ``(i, AGENT)``, a local-DP wrapper's
  noise ``(i, WRAPPER)``, a run's random instance (best-arm identification's arm permutation,
  ``permute_arms=True``) ``(i, INSTANCE)``. Changing the agent's seed therefore never changes the
  rewards (common random numbers), and the k-th pull of arm *a* returns the same reward whichever
  agent plays.

:class:`RunNoise` (an agent's or a wrapper's noise) draws uniforms and normals where they are
used, in compiled code, from each run's PCG64 state (:mod:`privenv._pcg64`: numpy's own draws, bit
for bit). :class:`RunStreams` (reward streams drawn in blocks by numpy, for laws with no compiled
sampler) and :class:`DrawStream` (the exact samplers' words) hand out values row by row from
per-row buffers, so a batched agent or problem draws for many runs with a few numpy calls while
each row's values still come from that row's own generator, in order. Compiled kernels read the
same states and buffers, so the two ways of running an algorithm (step by step through
Gymnasium, or a whole run inside compiled code) see the same numbers.
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

from privenv._jit import jit
from privenv._pcg64 import next_double, next_normal, stream_states
from privenv._validation import check_int

# The purpose keys of a run's seed (``child(run_seed, PURPOSE, ...)``): distinct, so that no two
# consumers ever share a stream (tests/test_seeding.py checks they stay distinct).
ENV = 0
AGENT = 1
WRAPPER = 2
INSTANCE = 3
#: episode e ≥ 1 of a run (a vector env's autoreset, a single env's ``reset()``) is seeded by
#: ``(i, NEXT_EPISODE, e)`` (:func:`episode_seed`)
NEXT_EPISODE = 7
#: a membership-inference trial's coin (:mod:`privenv.privacy.membership`)
COIN = 8

class RunSeed(ISpawnableSeedSequence):
    """``SeedSequence(entropy, spawn_key=spawn_key)``, built only when something draws from it.

    Numpy's ``SeedSequence`` mixes its entropy pool when it is built (about 15 µs); seeding a
    batch of short runs built several per run, a third of the runs' time (issue 35's 1 000-step
    TTUCB batch). A ``RunSeed`` is only the key: :func:`~privenv._pcg64.stream_states` reads its
    ``entropy`` and ``spawn_key`` (the compiled seeding of the streams), and numpy's generators
    accept it as a seed sequence (``np.random.default_rng(seed)``, ``PCG64(seed)``), which
    builds the ``SeedSequence`` then, once. The numbers are those of the ``SeedSequence``.
    """

    __slots__ = ("entropy", "spawn_key", "_sequence", "_spawned")
    pool_size = 4  # numpy's DEFAULT_POOL_SIZE, the only one the rule uses

    def __init__(self, entropy: int | Sequence[int], spawn_key: tuple[int, ...] = ()) -> None:
        self.entropy = entropy
        self.spawn_key = spawn_key
        self._sequence: np.random.SeedSequence | None = None
        self._spawned = 0

    @property
    def sequence(self) -> np.random.SeedSequence:
        """The ``SeedSequence`` (built at the first use)."""
        if self._sequence is None:
            self._sequence = np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key)
        return self._sequence

    @property
    def n_children_spawned(self) -> int:
        return self._spawned

    @property
    def pool(self) -> np.ndarray:
        """The ``SeedSequence``'s entropy pool."""
        return self.sequence.pool

    @property
    def state(self) -> dict[str, Any]:
        """The ``SeedSequence``'s state (its constructor's arguments)."""
        return {"entropy": self.entropy, "spawn_key": self.spawn_key,
                "pool_size": self.pool_size, "n_children_spawned": self._spawned}

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        return self.sequence.generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[RunSeed]:
        """The next ``n_children`` children, as ``SeedSequence.spawn`` numbers them."""
        first, self._spawned = self._spawned, self._spawned + n_children
        return [RunSeed(self.entropy, self.spawn_key + (i,))
                for i in range(first, self._spawned)]

    def __reduce__(self) -> tuple[Any, ...]:
        return RunSeed, (self.entropy, self.spawn_key)

    def __repr__(self) -> str:
        return f"RunSeed(entropy={self.entropy!r}, spawn_key={self.spawn_key!r})"


#: the type of a run's seed, numpy's ``SeedSequence`` (given by a user) or the library's lazy
#: :class:`RunSeed`
Seed = np.random.SeedSequence | RunSeed
#: the classes of :data:`Seed`, for ``isinstance``
SEED_TYPES = (np.random.SeedSequence, RunSeed)


def run_seed_sequences(
    seed: int | Sequence[int] | Sequence[Seed] | None,
    n_runs: int,
    first_run: int = 0,
) -> list[Seed]:
    """The root seed sequence of each run (:class:`RunSeed` unless given).

    ``seed`` an int: runs ``first_run … first_run + n_runs − 1`` of that seed. ``seed`` a sequence
    of ints (Gymnasium's per-sub-env seeds): run *i* is run 0 of ``seed[i]``, i.e. what a single env
    reset with ``seed[i]`` does. A sequence of ``SeedSequence`` (or :class:`RunSeed`): used as
    given. ``None``: fresh OS entropy.
    """
    if seed is None:
        entropy = np.random.SeedSequence().entropy
        assert entropy is not None  # (drawn from the OS when built)
        return [RunSeed(entropy, (first_run + i,)) for i in range(n_runs)]
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = check_int("seed", seed, low=0)  # one rule everywhere: [0, 2**63 - 1]
        return [RunSeed(seed, (first_run + i,)) for i in range(n_runs)]
    if isinstance(seed, (bool, np.bool_, str, bytes)) or not hasattr(seed, "__iter__"):
        raise ValueError(f"seed must be a non-negative integer, a sequence of them (one per run) "
                         f"or None, got {seed!r}")
    seeds = list(seed)
    if len(seeds) != n_runs:
        raise ValueError(f"seed must have one entry per run ({n_runs}), got {len(seeds)}")
    if all(isinstance(s, SEED_TYPES) for s in seeds):
        return cast(list[Seed], seeds)
    return [RunSeed(check_int(f"seed[{i}]", s, low=0), (0,)) for i, s in enumerate(seeds)]


def child(ss: Seed, *key: int) -> RunSeed:
    """The child of ``ss`` at ``key`` (deterministic; independent of spawn order)."""
    assert ss.entropy is not None  # (a SeedSequence draws its entropy when built)
    return RunSeed(ss.entropy, tuple(ss.spawn_key) + key)


def episode_seed(root: Seed, episode: int) -> Seed:
    """The seed of a run's episode ``episode`` (0, 1, …): its root for the first episode, then
    ``child(root, NEXT_EPISODE, episode)`` — the key never grows with the number of episodes."""
    return root if episode == 0 else child(root, NEXT_EPISODE, episode)


def generator(seed: Seed) -> np.random.Generator:
    """numpy's ``Generator(PCG64(seed))`` (``np.random.default_rng(seed)``)."""
    return np.random.Generator(np.random.PCG64(
        seed.sequence if isinstance(seed, RunSeed) else seed))


def generators(seqs: Sequence[Seed]) -> list[np.random.Generator]:
    return [generator(s) for s in seqs]


def sparse_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.empty(shape, dtype)`` for a buffer of which only parts are ever written (per-row
    blocks of streams): on Linux, anonymous memory with transparent huge pages declined, so that
    memory is provided page by page (4 KiB) where values are written. (numpy asks for huge pages
    for arrays ≥ 4 MiB; then writing a row's first block provides, and zeroes, every 2 MiB around
    it: the whole buffer at once, which costs as much as the run for a short one.)"""
    size = math.prod(shape) * np.dtype(dtype).itemsize
    if size < SPARSE_BYTES or not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.empty(shape, dtype)
    memory = mmap.mmap(-1, size)
    memory.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(memory, dtype=dtype).reshape(shape)


#: buffers from this size on are :func:`sparse_empty`'s own mappings (numpy's huge-page threshold)
SPARSE_BYTES = 2**22

Fill = Callable[[np.random.Generator, int, int], np.ndarray]


class RunStreams:
    """Buffered per-row random streams drawn in blocks (an environment's reward streams).

    Row ``r`` owns ``Generator(seeds[r])``; ``fill(generator, n, r)`` must return an array of
    ``n`` values (shape ``(n, *value_shape)``) drawn from that generator only. :meth:`take` returns
    the next value of each requested row. Values are produced in blocks, so the cost per value is
    a few numpy operations whatever the number of rows. The block size is part of the numbers
    when ``fill`` interleaves several draws (e.g. n inlier draws, then n coins); a fill that
    draws value after value may refill in longer blocks (``refill_block``) than its first.

    Compiled kernels read the same buffers (:meth:`view`): ``values[r, pos[r]]`` is row r's next
    value; a row is exhausted when ``pos[r] == end[r]``, and :meth:`refill` draws its next block.
    Refills happen when a value is needed, never ahead, so a row's values are the same whoever
    consumes them.

    Args:
        seeds: one ``SeedSequence`` per row.
        fill: the sampler.
        block: values drawn at the start.
        refill_block: values drawn per refill (default ``block``).
    """

    def __init__(self, seeds: Sequence[Seed], fill: Fill, block: int = 1024,
                 refill_block: int | None = None):
        self._gens = generators(seeds)
        self._fill = fill
        self.block = int(block)
        self.refill_block = self.block if refill_block is None else int(refill_block)
        first = np.asarray(fill(self._gens[0], self.block, 0))
        # The buffer is as wide as the longest block from the start: its pages are touched only
        # where a row's values are written, so a row that never refills costs its first block,
        # and a refill never copies the whole buffer to widen it.
        width = max(self.block, self.refill_block)
        self._buf = sparse_empty((len(self._gens), width, *first.shape[1:]), first.dtype)
        self._buf[0, : self.block] = first
        for r in range(1, len(self._gens)):
            self._buf[r, : self.block] = fill(self._gens[r], self.block, r)
        self._pos = np.zeros(len(self._gens), dtype=np.int64)
        self._end = np.full(len(self._gens), self.block, dtype=np.int64)

    @property
    def n_rows(self) -> int:
        return len(self._gens)

    def view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(values, pos, end)``: the buffers a kernel reads (``values`` shape (rows, width, …);
        refills write into them in place)."""
        return self._buf, self._pos, self._end

    def refill(self, rows: np.ndarray) -> None:
        """Draw the next block of each (exhausted) row in ``rows``."""
        n = self.refill_block
        for r in rows:
            self._buf[r, :n] = self._fill(self._gens[r], n, int(r))
            self._pos[r] = 0
            self._end[r] = n

    def take(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Next value of each row in ``rows`` (distinct row indices; ``None`` = all rows)."""
        if rows is None:
            rows = np.arange(self.n_rows)
        pos = self._pos[rows]
        empty = pos == self._end[rows]
        if empty.any():
            self.refill(rows[empty])
            pos = self._pos[rows]
        out = self._buf[rows, pos]
        self._pos[rows] = pos + 1
        return out

    def take_many(self, row: int, n: int) -> np.ndarray:
        """The next ``n`` values of one row, in order."""
        parts = []
        while n > 0:
            if self._pos[row] == self._end[row]:
                self.refill(np.array([row]))
            p = int(self._pos[row])
            m = min(n, int(self._end[row]) - p)
            parts.append(self._buf[row, p : p + m].copy())
            self._pos[row] = p + m
            n -= m
        return np.concatenate(parts) if parts else self._buf[row, :0].copy()

    def reseed(self, rows: np.ndarray, seeds: Sequence[Seed]) -> None:
        """Restart the given rows from new seeds (a partial reset)."""
        for r, s in zip(rows, seeds, strict=True):
            self._gens[r] = generator(s)
        self.refill(np.asarray(rows))


Draw = Callable[[np.random.Generator, int], np.ndarray]

#: the most bytes a batch's buffers of one stream kind take for a longer block (:func:`long_block`)
BUFFER_BYTES = 2**27
#: the longest block
LONG_BLOCK = 8192


def long_block(n_rows: int, shortest: int, item_bytes: int = 8) -> int:
    """Values per refill of ``n_rows`` streams whose draws the block size does not change: the
    longest power-of-two multiple of ``shortest``, up to :data:`LONG_BLOCK`, whose ``n_rows``
    buffers fit in :data:`BUFFER_BYTES`; never shorter than ``shortest`` (a large batch keeps
    the memory it always took). Fewer refills: each is a call back to Python from a compiled
    driver."""
    block = shortest
    while 2 * block <= LONG_BLOCK and n_rows * 2 * block * item_bytes <= BUFFER_BYTES:
        block *= 2
    return block


class DrawStream:
    """Per-row buffered draws of one standard law (uniforms, normals or raw 64-bit words) for
    compiled kernels.

    Row ``r`` owns ``Generator(seeds[r])`` (``child(seeds[r], key)`` with a ``key``) and holds its
    next unread values in ``values[r, pos[r]:end[r]]``. ``draw(generator, n)`` must give the same
    sequence however it is chunked (``Generator.random`` and ``Generator.standard_normal`` do),
    so the buffering never changes the values: a row's k-th value is the k-th draw of its
    generator. A kernel that may take up to m values in a call is given rows holding at least m
    (:meth:`ensure`); it takes a value as ``values[r, pos[r]]`` and advances ``pos[r]``. A row's
    seed and generator are made when it is first drawn from (a run that never needs this law
    costs nothing).

    Args:
        seeds: one ``SeedSequence`` per row.
        draw: the sampler.
        block: values drawn at the start (0: none, the stream is drawn from at its first
            top-up); a top-up draws :func:`long_block` values (the stream's draws do not depend
            on it).
        dtype: the values' type (``float64``; ``uint64`` for words).
        key: row ``r`` draws from ``child(seeds[r], key)`` (``None``: from ``seeds[r]``).
    """

    def __init__(self, seeds: Sequence[Seed], draw: Draw, block: int = 256,
                 dtype: type = np.float64, key: int | None = None):
        self._seeds = list(seeds)
        self._key = key
        self._gens: list[np.random.Generator | None] = [None] * len(self._seeds)
        self._draw = draw
        n = len(self._seeds)
        self.block = long_block(n, int(block) or 256)
        # room for a top-up beside up to a block of unread values (:meth:`top_up`), so that the
        # buffer never grows for the usual needs (less than a block per step). Memory is
        # provided where values are written (:func:`sparse_empty`): a row that is never drawn
        # from costs nothing.
        self.values = sparse_empty((n, max(int(block), 2 * self.block)), dtype)
        if block:
            for r in range(n):
                self.values[r, : int(block)] = draw(self._generator(r), int(block))
        self.pos = np.zeros(n, dtype=np.int64)
        self.end = np.full(n, int(block), dtype=np.int64)

    def _generator(self, row: int) -> np.random.Generator:
        gen = self._gens[row]
        if gen is None:
            seed = self._seeds[row] if self._key is None else child(self._seeds[row], self._key)
            gen = self._gens[row] = generator(seed)
        return gen

    @property
    def n_rows(self) -> int:
        return len(self._seeds)

    def view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(values, pos, end)``: the buffers a kernel reads (valid until the next top-up)."""
        return self.values, self.pos, self.end

    def ensure(self, need: int, rows: np.ndarray | None = None) -> None:
        """Give every row in ``rows`` (all rows if ``None``) at least ``need`` unread values."""
        idx = np.arange(self.n_rows) if rows is None else np.asarray(rows)
        for r in idx[self.end[idx] - self.pos[idx] < need]:
            self.top_up(int(r), need)

    def top_up(self, row: int, need: int) -> None:
        """Append whole blocks to row ``row`` until it holds at least ``need`` unread values."""
        p, e = int(self.pos[row]), int(self.end[row])
        rest = e - p
        blocks = max(1, -(-(need - rest) // self.block))
        size = rest + blocks * self.block
        if size > self.values.shape[1]:  # grow every row's capacity (the first top-up, or a
            # large ``need``)
            grown = sparse_empty((self.n_rows, size), self.values.dtype)
            grown[:, : self.values.shape[1]] = self.values
            self.values = grown
        self.values[row, :rest] = self.values[row, p:e]
        self.values[row, rest:size] = self._draw(self._generator(row), blocks * self.block)
        self.pos[row] = 0
        self.end[row] = size

    def take(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Next value of each row in ``rows`` (distinct row indices; ``None`` = all rows)."""
        if rows is None:
            rows = np.arange(self.n_rows)
        self.ensure(1, rows)
        pos = self.pos[rows]
        out = self.values[rows, pos]
        self.pos[rows] = pos + 1
        return out

    def take_many(self, row: int, n: int) -> np.ndarray:
        """The next ``n`` values of one row, in order."""
        self.ensure(n, np.array([row]))
        p = int(self.pos[row])
        self.pos[row] = p + n
        return self.values[row, p : p + n].copy()

    def reseed(self, rows: np.ndarray, seeds: Sequence[Seed],
               draw: bool = True) -> None:
        """Restart the given rows from new seeds (a partial reset); ``draw=False`` leaves them
        empty until their next :meth:`ensure`."""
        for r, s in zip(rows, seeds, strict=True):
            self._seeds[r], self._gens[r] = s, None
            self.pos[r] = self.end[r] = 0
            if draw:
                self.top_up(int(r), 1)


def random_words(gen: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform 64-bit words from ``gen`` (its bit generator's raw output, in order: the
    same sequence however it is chunked). The exact samplers (:mod:`privenv.privacy.exact`)
    decide every outcome from these."""
    return gen.integers(0, 2**64, size=n, dtype=np.uint64)


class NoiseView(NamedTuple):
    """What a kernel sees of a :class:`RunNoise` (row = run): the PCG64 states of its uniform
    and normal streams (drawn in the kernel: :func:`take_uniform`, :func:`take_normal`) and the
    buffer of its word stream: the exact samplers read ``w[run, w_pos[run]:w_end[run]]`` and
    advance ``w_pos[run]``."""

    u: np.ndarray
    z: np.ndarray
    w: np.ndarray
    w_pos: np.ndarray
    w_end: np.ndarray


@jit(inline="always")
def take_uniform(noise: NoiseView, run: int) -> float:
    """The next U[0, 1) draw of ``run`` (drawn here: its stream never runs out)."""
    return next_double(noise.u, run)


@jit(inline="always")
def take_normal(noise: NoiseView, run: int) -> float:
    """The next N(0, 1) draw of ``run`` (drawn here, numpy's ziggurat: never runs out)."""
    return next_normal(noise.z, run)


@jit
def available(noise: NoiseView, run: int, words: int) -> bool:
    """Whether ``run`` holds at least ``words`` words (a need of 0 reads nothing: this runs at
    every step of the fast path)."""
    return words == 0 or noise.w_end[run] - noise.w_pos[run] >= words


@jit
def _draw(states: np.ndarray, rows: np.ndarray, normal: bool, out: np.ndarray) -> None:
    """``out[i]``: the next uniform (or normal) of row ``rows[i]`` (rows may repeat: in
    order)."""
    for i in range(rows.size):
        out[i] = next_normal(states, rows[i]) if normal else next_double(states, rows[i])


class RunNoise:
    """The per-run noise source of an agent or a wrapper: standard uniforms, standard normals
    and raw 64-bit words.

    Each run draws from its own streams (``child(seed, 0)`` uniforms, ``child(seed, 1)``
    normals, ``child(seed, 2)`` words), so run *i*'s noise does not depend on the batch size. The
    floating-point mechanisms of :mod:`privenv.privacy.mechanisms` are transforms of the first
    two; the exact samplers (:mod:`privenv.privacy.exact`) read the words. Uniforms and normals
    are drawn where they are used, in compiled code, from each run's PCG64 state
    (:mod:`privenv._pcg64`: numpy's ``Generator.random()`` and ``standard_normal()``, bit for
    bit); words are buffered, their stream seeded and drawn from only once a consumer asks for
    them. Python code takes values with :meth:`uniform`, :meth:`normal`, :meth:`uniforms`,
    :meth:`normals`; compiled kernels read :meth:`view` (after :meth:`ensure` for words).
    """

    def __init__(self, seeds: Sequence[Seed]):
        self.n_runs = len(seeds)
        self._u, self._z = _two_streams(seeds)
        self._word = DrawStream(seeds, random_words, 0, np.uint64, key=2)

    def reseed(self, runs: np.ndarray, seeds: Sequence[Seed]) -> None:
        """Restart the given runs from new seeds (a partial reset, e.g. an autoreset): the word
        stream is drawn from again at its next use."""
        runs = np.asarray(runs)
        self._u[runs], self._z[runs] = _two_streams(seeds)
        self._word.reseed(runs, seeds, draw=False)

    def _take(self, states: np.ndarray, rows: np.ndarray, normal: bool) -> np.ndarray:
        out = np.empty(rows.size)
        _draw(states, np.ascontiguousarray(rows, dtype=np.int64), normal, out)
        return out

    def uniform(self, runs: np.ndarray | None = None) -> np.ndarray:
        """One U(0,1) draw for each run in ``runs`` (all runs if ``None``)."""
        rows = np.arange(self.n_runs) if runs is None else np.asarray(runs)
        return self._take(self._u, rows, False)

    def normal(self, runs: np.ndarray | None = None) -> np.ndarray:
        """One N(0,1) draw for each run in ``runs`` (all runs if ``None``)."""
        rows = np.arange(self.n_runs) if runs is None else np.asarray(runs)
        return self._take(self._z, rows, True)

    def uniforms(self, run: int, n: int) -> np.ndarray:
        """``n`` consecutive U(0,1) draws of one run."""
        return self._take(self._u, np.full(n, run), False)

    def normals(self, run: int, n: int) -> np.ndarray:
        """``n`` consecutive N(0,1) draws of one run."""
        return self._take(self._z, np.full(n, run), True)

    def ensure(self, runs: np.ndarray | None = None, words: int = 0) -> None:
        """Give every run in ``runs`` (all runs if ``None``) at least ``words`` words (uniforms
        and normals never run out)."""
        if words:
            self._word.ensure(words, runs)

    def view(self) -> NoiseView:
        """The states and buffers a kernel reads (rebuild after :meth:`ensure`: a top-up may
        reallocate)."""
        w, w_pos, w_end = self._word.view()
        return NoiseView(u=self._u, z=self._z, w=w, w_pos=w_pos, w_end=w_end)


def _two_streams(seeds: Sequence[Seed]) -> tuple[np.ndarray, np.ndarray]:
    """The PCG64 states of the uniform and normal streams of each seed (one compiled call)."""
    states = stream_states(seeds, [(0,), (1,)]).reshape(len(seeds), 2, 4)
    return np.ascontiguousarray(states[:, 0]), np.ascontiguousarray(states[:, 1])


def noise_for(seed: Any, n_runs: int, purpose: int, first_run: int = 0) -> RunNoise:
    """Per-run noise for ``purpose`` (AGENT, WRAPPER, …) from an int seed, a list or ``None``."""
    roots = run_seed_sequences(seed, n_runs, first_run)
    return RunNoise([child(s, purpose) for s in roots])
