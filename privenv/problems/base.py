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

from privenv._jit import jit
from privenv._pcg64 import bernoulli, stream_states
from privenv._validation import check_int
from privenv.seeding import ENV, Fill, RunStreams, child

#: values drawn per refill of a (run, arm) reward stream (part of the numbers when a law's fill
#: interleaves draws, as the Huber problem's inliers, coins and outliers)
ARM_BLOCK = 512


class ArmView(NamedTuple):
    """What a compiled driver sees of a K-armed problem (:meth:`Problem.arm_view`).

    ``values[run·K + arm, pos[run·K + arm], 0]`` is the next reward (or sample) of ``arm`` in
    ``run`` (a stream is exhausted when its ``pos`` reaches its ``end``; Python refills it);
    ``gaps[arm]`` is the pseudo-regret of a pull (0 for best-arm identification) and
    ``best[run]`` the arm a correct recommendation names.

    A Bernoulli law (``bernoulli``) is drawn where it is pulled, with no buffer: row
    ``run·K + arm`` of ``states`` is that stream's PCG64 (:mod:`privenv._pcg64`), and a pull is
    1 with probability ``means[run, arm]``.
    """

    values: np.ndarray
    pos: np.ndarray
    end: np.ndarray
    K: int
    gaps: np.ndarray
    best: np.ndarray
    states: np.ndarray = np.zeros((0, 4), dtype=np.uint64)
    means: np.ndarray = np.zeros((0, 0))
    bernoulli: bool = False


#: the buffers of an :class:`ArmView` whose law is drawn in the kernel (never read)
NO_VALUES = (np.zeros((0, 0, 1)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


@jit
def next_value(env: ArmView, run: int, arm: int) -> float:
    """The next reward of ``arm`` in ``run`` (its stream must not be exhausted)."""
    row = run * env.K + arm
    if env.bernoulli:
        return bernoulli(env.states, row, env.means[run, arm])
    i = env.pos[row]
    env.pos[row] = i + 1
    return env.values[row, i, 0]


@jit
def arm_room(env: ArmView, run: int) -> int:
    """The smallest number of values left in the reward streams of ``run``'s arms (a law drawn
    in the kernel never runs out)."""
    if env.bernoulli:
        return 2**62
    room = env.values.shape[1]
    for arm in range(env.K):
        row = run * env.K + arm
        room = min(room, env.end[row] - env.pos[row])
    return room


@jit
def exhausted_arm(env: ArmView, run: int) -> int:
    """The first arm of ``run`` whose reward stream is exhausted, or −1 if none is."""
    for arm in range(env.K):
        row = run * env.K + arm
        if env.pos[row] == env.end[row]:
            return arm
    return -1


#: the problem families, name → what an error message calls it. A problem class names its family
#: (:attr:`Problem.family`); an agent names the families it plays
#: (:attr:`privenv.agents.Agent.families`).
FAMILIES: dict[str, str] = {
    "huber": "heavy-tailed multi-armed bandit",
    "bai": "best-arm identification",
    "linear": "linear contextual bandit",
    "federated": "federated linear bandit",
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

    def __init__(self, n_runs: int = 1) -> None:
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self._was_reset = False

    def reset(
        self, run_seeds: Sequence[np.random.SeedSequence], runs: np.ndarray | None = None
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
        """
        if not self._was_reset:
            raise RuntimeError("call reset() before step()")
        actions = self.check_actions(actions)
        return self._step(actions, live)

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
        expected = (self.n_runs, *space.shape)
        if a.shape != expected:
            raise ValueError(f"actions must have shape {expected}, got {a.shape}")
        return a

    @abstractmethod
    def _reset(
        self, run_seeds: list[np.random.SeedSequence], runs: np.ndarray
    ) -> tuple[np.ndarray, dict]: ...

    @abstractmethod
    def _step(
        self, actions: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]: ...

    def reset_arm_streams(
        self,
        run_seeds: list[np.random.SeedSequence],
        runs: np.ndarray,
        n_arms: int,
        fill: Fill | None,
    ) -> bool:
        """(Re)start one reward stream per (run, arm) for the runs in ``runs``.

        Row ``run·n_arms + arm`` of ``self._streams`` owns the stream (run, ENV, arm), so the k-th
        pull of an arm yields the same reward whichever agent plays (common random numbers);
        ``self._rows[i]`` is run i's first row. ``fill(generator, n, row)`` draws n pulls of arm
        ``row % n_arms``. ``fill`` ``None``: the law is drawn in compiled code, from row
        ``run·n_arms + arm`` of ``self._states`` (the streams' PCG64 states,
        :mod:`privenv._pcg64`). Returns whether every run was reset (the first reset must be).
        """
        all_runs = len(runs) == self.n_runs
        if not all_runs and getattr(self, "_rows", None) is None:
            raise RuntimeError("the all_runs reset must cover all runs")
        rows = (runs[:, None] * n_arms + np.arange(n_arms)).ravel()
        if fill is None:
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
                self._streams.reseed(rows, seeds)
        if all_runs:
            self._rows = np.arange(self.n_runs) * n_arms
        return all_runs

    def arm_block(self, n_rows: int) -> int:
        """Values per refill of each of ``n_rows`` reward streams (the first block is always
        :data:`ARM_BLOCK`): :data:`ARM_BLOCK`, part of the numbers. A problem whose fill draws
        each value after the last from its stream's generator, so that the block size changes
        no number, may return a longer block (fewer refills, each a call back to Python; and a
        short run never draws it): :func:`privenv.seeding.long_block`."""
        return ARM_BLOCK

    def arm_view(self) -> ArmView:
        """The compiled drivers' view of a K-armed problem's reward streams (after a reset)."""
        raise NotImplementedError(f"{type(self).__name__} has no compiled arm view")

    def refill_arms(self, runs: np.ndarray, arms: np.ndarray) -> None:
        """Draw the next block of the reward stream of ``arms[i]`` in ``runs[i]`` (a compiled
        driver asks, for the runs whose stream is used up)."""
        self._streams.refill(runs * self.K + arms)

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

    def reference_scale(self) -> float:
        """A reward scale used to normalise plots (1 unless a family says otherwise)."""
        return 1.0
