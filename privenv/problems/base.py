"""The problem layer: pure-numpy, batched descriptions of bandit instances (no Gymnasium here).

A :class:`Problem` holds the state of ``n_runs`` independent runs with a leading run axis. The
Gymnasium single env is a view of the ``n_runs = 1`` case and the native vector env a view of the
general case (:mod:`privenv.envs.base`), so the dynamics are written once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces

from privenv._jit import generic, jit
from privenv._pcg64 import bernoulli, next_normal, stream_states
from privenv._validation import check_int
from privenv.seeding import ENV, Fill, RunStreams, Seed, child

#: values drawn per refill of a (run, arm) reward stream (part of the numbers when a law's fill
#: interleaves draws, as the Huber problem's inliers, coins and outliers)
ARM_BLOCK = 512


# -- the compiled views of a K-armed problem (what the fast path draws rewards from) -----------
#
# A problem's :meth:`Problem.kernel_view` is one of these records (or its own): the reward law is
# chosen by the record's class, so a driver compiled for one law contains no code of the others.
# Every view has ``K``, ``gaps[arm]`` (the pseudo-regret of a pull; 0 in best-arm
# identification) and ``best[run]`` (the arm a correct recommendation names).


class BufferedArms(NamedTuple):
    """Reward streams drawn in blocks by numpy (:class:`~privenv.seeding.RunStreams`):
    ``values[run·K + arm, pos[run·K + arm], 0]`` is the next reward of ``arm`` in ``run``; a
    stream is exhausted when its ``pos`` reaches its ``end`` and Python refills it
    (:meth:`Problem.refill_arms`)."""

    values: np.ndarray
    pos: np.ndarray
    end: np.ndarray
    K: int
    gaps: np.ndarray
    best: np.ndarray


class BernoulliArms(NamedTuple):
    """Bernoulli rewards drawn where they are pulled: row ``run·K + arm`` of ``states`` is that
    stream's PCG64 (:mod:`privenv._pcg64`), and a pull is 1 with probability
    ``means[run, arm]`` (numpy's ``random() < μ``)."""

    states: np.ndarray
    means: np.ndarray
    K: int
    gaps: np.ndarray
    best: np.ndarray


class GaussianArms(NamedTuple):
    """Gaussian rewards drawn where they are pulled: μ + σ·``standard_normal()`` of the stream
    (numpy's ``mu + sigma * gen.standard_normal(n)``, value after value)."""

    states: np.ndarray
    means: np.ndarray
    sigma: float
    K: int
    gaps: np.ndarray
    best: np.ndarray


@generic
def next_value(env: Any, run: int, arm: int) -> float:
    """The next reward of ``arm`` in ``run`` (a buffered stream must not be exhausted)."""
    raise NotImplementedError


@jit
def _never_exhausted(env: Any, run: int) -> int:
    return 2**62


@generic(default=_never_exhausted)
def arm_room(env: Any, run: int) -> int:
    """The smallest number of values left in the reward streams of ``run``'s arms (a law drawn
    in the kernel never runs out)."""
    raise NotImplementedError


@jit
def _no_arm(env: Any, run: int) -> int:
    return -1


@generic(default=_no_arm)
def exhausted_arm(env: Any, run: int) -> int:
    """The first arm of ``run`` whose reward stream is exhausted, or −1 if none is."""
    raise NotImplementedError


@next_value.register(BufferedArms)
@jit(inline="always")
def _buffered_value(env: BufferedArms, run: int, arm: int) -> float:
    row = run * env.K + arm
    i = env.pos[row]
    env.pos[row] = i + 1
    return env.values[row, i, 0]


@arm_room.register(BufferedArms)
@jit
def _buffered_room(env: BufferedArms, run: int) -> int:
    room = env.values.shape[1]
    for arm in range(env.K):
        row = run * env.K + arm
        room = min(room, env.end[row] - env.pos[row])
    return room


@exhausted_arm.register(BufferedArms)
@jit
def _buffered_exhausted(env: BufferedArms, run: int) -> int:
    for arm in range(env.K):
        row = run * env.K + arm
        if env.pos[row] == env.end[row]:
            return arm
    return -1


@next_value.register(BernoulliArms)
@jit(inline="always")
def _bernoulli_value(env: BernoulliArms, run: int, arm: int) -> float:
    return bernoulli(env.states, run * env.K + arm, env.means[run, arm])


@next_value.register(GaussianArms)
@jit(inline="always")
def _gaussian_value(env: GaussianArms, run: int, arm: int) -> float:
    return env.means[run, arm] + env.sigma * next_normal(env.states, run * env.K + arm)


@jit
def take_values(env: Any, rows: np.ndarray, out: np.ndarray, at: np.ndarray) -> None:
    """``out[at[i]]``: the next reward of stream ``rows[i]`` (row = run·K + arm; rows may
    repeat: in order). The step-by-step path's pulls, with the fast path's kernel."""
    for i in range(rows.size):
        out[at[i]] = next_value(env, rows[i] // env.K, rows[i] % env.K)


#: the problem families, name → what an error message calls it. A problem class names its family
#: (:attr:`Problem.family`); an agent names the families it plays
#: (:attr:`privenv.agents.Agent.families`).
FAMILIES: dict[str, str] = {
    "huber": "heavy-tailed multi-armed bandit",
    "bai": "best-arm identification",
    "linear": "linear contextual bandit",
    "federated": "federated linear bandit",
    "bernoulli": "Bernoulli multi-armed bandit",
}


class Problem(ABC):
    """A batched bandit problem.

    Subclasses set ``single_observation_space`` and ``single_action_space`` and implement
    :meth:`_reset` and :meth:`_step`. Rewards and contexts must come only from per-run streams
    created in :meth:`_reset` from the run seeds (see :mod:`privenv.seeding`).

    Args:
        n_runs: number of independent runs held at once.
    """

    single_observation_space: spaces.Space
    single_action_space: spaces.Space
    #: the family of problems this is (a key of :data:`FAMILIES`)
    family: ClassVar[str] = ""
    #: whether an episode ends by the agent's choice (best-arm identification) rather than by time.
    terminates: bool = False
    #: the keys of a step's evaluation quantities kept out of ``info`` because they determine raw
    #: data (a data set's labels, :class:`~privenv.problems.linear.DatasetContexts`): the runner
    #: reads them in :attr:`evaluation`, which agents and wrappers are never given
    withheld: tuple[str, ...] = ()
    #: the numpy-drawn reward streams of :meth:`reset_arm_streams` (``None`` until a reset with
    #: a ``fill``; read them through :attr:`arm_streams`)
    _streams: RunStreams | None = None

    def __init__(self, n_runs: int = 1) -> None:
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self._was_reset = False
        #: the last step's evaluation quantities (pseudo-regret, expected reward, …) for the
        #: runner and the render board: ``info`` with the :attr:`withheld` keys
        self.evaluation: dict[str, Any] = {}

    def reset(
        self, run_seeds: Sequence[Seed], runs: np.ndarray | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start runs afresh from their seeds; returns batched (observation, info) for all runs.

        ``runs`` (indices) restricts the reset to some runs (a vector env's autoreset); then
        ``run_seeds`` has one entry per reset run. The first reset must cover all runs.
        """
        runs = np.arange(self.n_runs) if runs is None else np.asarray(runs, dtype=np.int64)
        if len(run_seeds) != len(runs):
            raise ValueError(f"run_seeds must have {len(runs)} entries, got {len(run_seeds)}")
        out = self._reset(list(run_seeds), runs)
        self._was_reset = True
        return out

    def step(
        self, actions: np.ndarray, live: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        """Play one action per run; returns batched (observation, reward, terminated, info).

        ``live`` (a boolean mask) restricts the step to some runs: the others consume no
        randomness, keep their state and get reward 0 (a vector env's finished or just-reset runs).
        ``info`` lacks the :attr:`withheld` keys, which stay in :attr:`evaluation`.
        """
        if not self._was_reset:
            raise RuntimeError("call reset() before step()")
        actions = self.check_actions(actions)
        obs, reward, terminated, info = self._step(actions, live)
        self.evaluation = info
        if self.withheld:
            info = {k: v for k, v in info.items() if k not in self.withheld}
        return obs, reward, terminated, info

    def check_actions(self, actions: Any) -> np.ndarray:
        """Validate a batch of actions against ``single_action_space``."""
        space = self.single_action_space
        if isinstance(space, spaces.Discrete):
            a = np.asarray(actions)
            if a.shape != (self.n_runs,) or a.dtype.kind not in "iu":
                raise ValueError(
                    f"actions must be an integer array of shape ({self.n_runs},), got "
                    f"{a.dtype} array of shape {a.shape}"
                )
            n = int(space.n)
            if a.min() < 0 or a.max() >= n:
                bad = a[(a < 0) | (a >= n)][0]
                raise ValueError(f"action must be in [0, {n - 1}], got {bad}")
            return a
        a = np.asarray(actions)
        expected = (self.n_runs, *(space.shape or ()))
        if a.shape != expected:
            raise ValueError(f"actions must have shape {expected}, got {a.shape}")
        return a

    @abstractmethod
    def _reset(
        self, run_seeds: list[Seed], runs: np.ndarray
    ) -> tuple[np.ndarray, dict]: ...

    @abstractmethod
    def _step(
        self, actions: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]: ...

    def reset_arm_streams(
        self,
        run_seeds: list[Seed],
        runs: np.ndarray,
        n_arms: int,
        fill: Fill | None,
        states: np.ndarray | None = None,
    ) -> bool:
        """(Re)start one reward stream per (run, arm) for the runs in ``runs``.

        Row ``run·n_arms + arm`` of ``self._streams`` owns the stream (run, ENV, arm), so the k-th
        pull of an arm yields the same reward whichever agent plays (common random numbers);
        ``self._rows[i]`` is run i's first row. ``fill(generator, n, row)`` draws n pulls of arm
        ``row % n_arms``. ``fill`` ``None``: the law is drawn in compiled code, from row
        ``run·n_arms + arm`` of ``self._states`` (the streams' PCG64 states,
        :mod:`privenv._pcg64`). ``states``: those rows' states if the caller seeded them already
        (with ``fill`` ``None``; :func:`privenv._pcg64.stream_states` of the keys ``(ENV, arm)``,
        row ``i·n_arms + arm`` for ``run_seeds[i]``). Returns whether every run was reset (the
        first reset must be).
        """
        all_runs = len(runs) == self.n_runs
        if not all_runs and getattr(self, "_rows", None) is None:
            raise RuntimeError("the all_runs reset must cover all runs")
        rows = (runs[:, None] * n_arms + np.arange(n_arms)).ravel()
        if fill is None:
            if states is None:
                states = stream_states(run_seeds, [(ENV, a) for a in range(n_arms)])
            if all_runs:
                self._states = states
            else:
                self._states[rows] = states
        else:
            seeds = [child(s, ENV, a) for s in run_seeds for a in range(n_arms)]
            if all_runs:
                self._streams = RunStreams(seeds, fill, block=ARM_BLOCK,
                                           refill_block=self.arm_block(len(seeds)))
            else:
                self.arm_streams.reseed(rows, seeds)
        if all_runs:
            self._rows = np.arange(self.n_runs) * n_arms
            self._n_arms = n_arms
        return all_runs

    @property
    def arm_streams(self) -> RunStreams:
        """The reward streams that numpy draws (:meth:`reset_arm_streams` with a ``fill``)."""
        if self._streams is None:
            raise RuntimeError("no numpy-drawn reward streams: reset the problem first (with "
                               "a fill: a law drawn in compiled code has none)")
        return self._streams

    def arm_block(self, n_rows: int) -> int:
        """Values per refill of each of ``n_rows`` reward streams (the first block is always
        :data:`ARM_BLOCK`): :data:`ARM_BLOCK`, part of the numbers. A problem whose fill draws
        each value after the last from its stream's generator, so that the block size changes
        no number, may return a longer block (fewer refills, each a call back to Python; and a
        short run never draws it): :func:`privenv.seeding.long_block`."""
        return ARM_BLOCK

    def kernel_view(self) -> Any:
        """The compiled view of this problem's reward streams (after a reset), which the fast
        path (:mod:`privenv.driver`) draws each pull from: a record of this module
        (:class:`BernoulliArms`, :class:`GaussianArms`, :class:`BufferedArms`) or of the
        family's own, with ``K``, ``gaps`` and ``best``; ``None`` (the default) if the problem
        has none: it is then run step by step."""
        return None

    def refill_arms(self, runs: np.ndarray, arms: np.ndarray) -> None:
        """Draw the next block of the reward stream of ``arms[i]`` in ``runs[i]`` (a compiled
        driver asks, for the runs whose stream is used up)."""
        self.arm_streams.refill(runs * self._n_arms + arms)

    def gym_reward(self, rewards: np.ndarray) -> np.ndarray:
        """The Gymnasium reward of each run, shape ``(n_runs,)``, from what :meth:`step` returned.

        The identity for one reward per run; a problem whose :meth:`step` returns several rewards
        per run (e.g. one per silo, shape ``(n_runs, M)``) reduces them here (the env views call
        this; the batched problem keeps the detailed rewards for agents that need them).
        """
        return rewards

    def public_info(self) -> dict[str, Any]:
        """What an agent may legitimately know about the instance (no data): shapes, horizon,
        moment bounds, … Agents' defaults are filled from this (see :func:`privenv.agents.make`)."""
        return {}

    @classmethod
    def sizes(cls, **kwargs: Any) -> dict[str, int]:
        """The sizes (``K``, ``A``, ``d``, ``M``: the keys of :meth:`public_info` that arrays are
        allocated from) of an instance built with the constructor arguments ``kwargs``, without
        building it (the runner checks them before it allocates anything: :mod:`privenv._memory`);
        arguments it does not need are ignored, a bad one may raise the constructor's error.
        Empty if the family does not say."""
        return {}

    @staticmethod
    def means_length(means: Any) -> int | None:
        """K of explicit arm means ``means`` (a sized value, not a string), else ``None`` (not
        given, or a value the constructor refuses): what :meth:`sizes` reads in the families
        with a ``means`` argument."""
        if means is not None and hasattr(means, "__len__") and not isinstance(means, str):
            return len(means)
        return None
