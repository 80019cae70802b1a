"""Compiled agents: the shell every scalar-state agent shares, and the fast path.

The multi-armed and best-arm agents (UCB1, ε-greedy, Robust UCB, PRAE-R/C, DPRSE, DP-SE, TTUCB,
CTB-TT, the Gaussian-LDP TTUCB, AdaP-TT, AdaP-TT*, TTUCB-DPA) are each written once, as compiled
kernels over one run's state (:mod:`privenv._jit`):

* ``act(state, params, noise, run) -> action`` — the next arm of ``run`` (or, in best-arm
  identification, a stop ``K + recommended arm``);
* ``observe(state, params, noise, run, action, value)`` — take in the value that action released.

``state`` is a ``NamedTuple`` of arrays with one row per run, ``params`` a ``NamedTuple`` of the
algorithm's constants (with ``normals_per_step`` and ``words_per_step``: the most buffered
noise one step may draw; uniforms are drawn where they are used and never run out), ``noise``
the agent's :class:`~privenv.seeding.NoiseView`. A family registers its pair with
:func:`agent_act` and :func:`agent_observe` (generic kernel functions, dispatched on the state's
class).

Two drivers call the same two functions:

* **step by step** — :class:`KernelAgent` is the :class:`~privenv.agents.base.Agent` of such an
  algorithm: ``act_batch`` / ``observe_batch`` call them for every run (one compiled loop per
  step), so ``gym.make`` envs, :func:`privenv.simulation.play`, vector envs and wrappers drive it
  through the usual protocol;
* **the fast path** — :func:`run_until` plays each run to its own end inside compiled code:
  act, draw the pulled arm's next reward from the problem's stream (:class:`~privenv.problems.
  base.ArmView`), release it through the local randomizer if there is one
  (:class:`~privenv.wrappers.ldp.RandomizerView`), observe, check the stop and the horizon. A
  run that has stopped costs nothing more. When a run needs a value its buffers do not hold (a
  reward stream's block is used up, or the agent's or the randomizer's noise runs low), the
  driver leaves that run waiting and goes on with the next; :func:`run_fast` refills in Python
  and calls it again. Nothing is drawn ahead of need, so both drivers see the same numbers: run
  *i* is identical step by step or fast, alone or in a batch (tests/test_golden.py,
  tests/test_kernels.py).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv.agents.base import Agent
from privenv.problems.base import ArmView, arm_room, exhausted_arm, next_value
from privenv.seeding import NoiseView, available
from privenv.wrappers.ldp import NO_RANDOMIZER, RandomizerView, admit, release

__all__ = [
    "KernelAgent",
    "Outcome",
    "agent_act",
    "agent_observe",
    "run_fast",
    "run_until",
]


@generic
def agent_act(state: Any, params: Any, noise: NoiseView, run: int) -> int:
    """The next action of ``run`` (an arm, or ``K + arm`` to stop and recommend ``arm``)."""
    raise NotImplementedError


@generic
def agent_observe(state: Any, params: Any, noise: NoiseView, run: int, action: int,
                  value: float) -> None:
    """Take in the value released for ``action`` in ``run`` (the reward or the sample)."""
    raise NotImplementedError


@generic
def agent_ready(state: Any, params: Any, run: int) -> int:
    """0 if ``run`` can take a step; else a code the agent's ``serve(run, code)`` fulfils in
    Python before it does (e.g. grow a buffer)."""
    raise NotImplementedError


@jit
def ready_all(state: Any, params: Any, codes: np.ndarray) -> bool:
    """Every run's :func:`agent_ready` code; whether all are 0."""
    for run in range(codes.size):
        codes[run] = agent_ready(state, params, run)
    return not codes.any()


@jit
def act_all(state: Any, params: Any, noise: NoiseView, actions: np.ndarray) -> None:
    for run in range(actions.size):
        actions[run] = agent_act(state, params, noise, run)


@jit
def observe_all(state: Any, params: Any, noise: NoiseView, actions: np.ndarray,
                values: np.ndarray) -> None:
    for run in range(actions.size):
        agent_observe(state, params, noise, run, actions[run], values[run])


# -- the fast path ------------------------------------------------------------------------------

#: what a run of :func:`run_until` waits for
READY = 0
WAIT_ARM = 1  # the reward stream of arm ``waiting_arm`` is used up
WAIT_NOISE = 2  # the agent's noise
WAIT_RANDOMIZER = 3  # the randomizer's noise
OUT_OF_RANGE = 4  # the randomizer refused a reward (outside its range, or NaN): an error
WAIT_AGENT = 5  # the agent's ``serve(run, waiting_arm)`` (e.g. a buffer to grow)


class Outcome(NamedTuple):
    """Per-run results of the fast path (one row per run)."""

    steps: np.ndarray  # env steps taken: pulls, plus the stop of best-arm identification
    regret: np.ndarray  # cumulative pseudo-regret
    curve: np.ndarray  # (runs, checkpoints): the regret after checkpoint step k
    next_checkpoint: np.ndarray
    done: np.ndarray  # ended (stopped, or at the horizon)
    stopped: np.ndarray  # stopped by the agent (best-arm identification)
    pulls: np.ndarray
    recommendation: np.ndarray  # −1 unless stopped
    correct: np.ndarray
    waiting: np.ndarray  # READY or a WAIT_* / OUT_OF_RANGE code
    waiting_arm: np.ndarray

    @classmethod
    def start(cls, n_runs: int, n_checkpoints: int) -> Outcome:
        i8 = np.int64
        return cls(np.zeros(n_runs, i8), np.zeros(n_runs), np.zeros((n_runs, n_checkpoints)),
                   np.zeros(n_runs, i8), np.zeros(n_runs, bool), np.zeros(n_runs, bool),
                   np.zeros(n_runs, i8), np.full(n_runs, -1, i8), np.zeros(n_runs, bool),
                   np.zeros(n_runs, i8), np.zeros(n_runs, i8))


@jit
def run_until(state: Any, params: Any, noise: NoiseView, env: ArmView, rnd: RandomizerView,
              rnd_noise: NoiseView, out: Outcome, checkpoints: np.ndarray,
              horizon: int) -> int:
    """Play every run that has not ended until it ends or must wait; returns how many wait.

    One step of a run: act; a stop (action ≥ K) ends the run with its recommendation; a pull
    draws the arm's next value, adds its pseudo-regret, releases it through the randomizer
    (``rnd.kind`` ≠ ``NO_RANDOMIZER``) and lets the agent observe it. A run ends at ``horizon``
    steps. Before a step, the run must hold a value in every arm's stream (checked in O(1): the
    smallest number of values left in any arm's stream, counted down) and enough noise for
    the agent and the randomizer; otherwise it waits (``out.waiting``) and keeps its state.
    """
    n_waiting = 0
    for run in range(out.done.size):
        if out.done[run] or out.waiting[run] != READY:
            continue
        room = arm_room(env, run)  # a step takes one value: this many steps are safe
        steps, pulls, regret = out.steps[run], out.pulls[run], out.regret[run]  # kept in registers
        k = out.next_checkpoint[run]  # the next checkpoint of the regret curve
        while True:
            if steps >= horizon:  # truncated: the horizon, or the sample budget
                out.done[run] = True
                break
            if room == 0:
                room = arm_room(env, run)
                if room == 0:
                    out.waiting[run] = WAIT_ARM
                    out.waiting_arm[run] = exhausted_arm(env, run)
                    break
            if not available(noise, run, params.normals_per_step, params.words_per_step):
                out.waiting[run] = WAIT_NOISE
                break
            code = agent_ready(state, params, run)
            if code != 0:
                out.waiting[run] = WAIT_AGENT
                out.waiting_arm[run] = code
                break
            if rnd.kind != NO_RANDOMIZER and not available(rnd_noise, run, rnd.normals,
                                                           rnd.words):
                out.waiting[run] = WAIT_RANDOMIZER
                break
            action = agent_act(state, params, noise, run)
            steps += 1
            if action >= env.K:  # stop and recommend action − K
                out.stopped[run] = True
                out.recommendation[run] = action - env.K
                out.correct[run] = action - env.K == env.best[run]
                out.done[run] = True
                break
            value = next_value(env, run, action)
            room -= 1
            regret += env.gaps[action]
            pulls += 1
            if rnd.kind != NO_RANDOMIZER:
                value, ok = admit(rnd, value)
                if not ok:
                    out.waiting[run] = OUT_OF_RANGE
                    break
                value = release(rnd, rnd_noise, run, value)
            agent_observe(state, params, noise, run, action, value)
            while k < checkpoints.size and checkpoints[k] <= steps:
                out.curve[run, k] = regret
                k += 1
        out.steps[run], out.pulls[run], out.regret[run] = steps, pulls, regret
        out.next_checkpoint[run] = k
        if out.done[run]:
            out.next_checkpoint[run] = _fill_checkpoints(out, run, checkpoints)
        else:
            n_waiting += 1
    return n_waiting


@jit
def _fill_checkpoints(out: Outcome, run: int, checkpoints: np.ndarray) -> int:
    """A run that has ended keeps its final regret at every later checkpoint."""
    for k in range(out.next_checkpoint[run], checkpoints.size):
        out.curve[run, k] = out.regret[run]
    return checkpoints.size


def run_fast(agent: KernelAgent, problem: Any, randomizer: Any, randomizer_noise: Any,
             checkpoints: np.ndarray, horizon: int) -> Outcome:
    """Play every run of ``agent`` on ``problem`` (both just reset) to its end with
    :func:`run_until`, refilling what the waiting runs need in between.

    Args:
        agent: a :class:`KernelAgent` (reset).
        problem: the env's K-armed problem (reset), with ``arm_view`` and ``refill_arms``.
        randomizer: the local randomizer in front of the agent (a
            :class:`~privenv.wrappers.ldp.LocalRandomizer`), or ``None``.
        randomizer_noise: its :class:`~privenv.seeding.RunNoise` (``None`` without one).
        checkpoints: the steps (1-based, increasing) after which the regret is recorded.
        horizon: steps per run at most.
    """
    out = Outcome.start(agent.n_runs, len(checkpoints))
    rnd = randomizer.kernel_view() if randomizer is not None else RandomizerView.none()
    params = agent.params
    checkpoints = np.ascontiguousarray(checkpoints, dtype=np.int64)
    empty = _no_noise(agent.n_runs)
    while True:  # the views again after each refill (which may widen the buffers)
        env = problem.arm_view()
        noise = agent.noise.view()
        rnd_noise = randomizer_noise.view() if randomizer_noise is not None else empty
        if run_until(agent.state, params, noise, env, rnd, rnd_noise, out, checkpoints,
                     horizon) == 0:
            return out
        # the common waits, each served in one call for all its runs
        waits = out.waiting == WAIT_ARM
        if waits.any():
            problem.refill_arms(np.flatnonzero(waits), out.waiting_arm[waits])
        waits = out.waiting == WAIT_NOISE
        if waits.any():
            agent.noise.ensure(params.normals_per_step, np.flatnonzero(waits),
                               params.words_per_step)
        waits = out.waiting == WAIT_RANDOMIZER
        if waits.any():
            randomizer_noise.ensure(rnd.normals, np.flatnonzero(waits), rnd.words)
        out.waiting[(out.waiting == WAIT_ARM) | (out.waiting == WAIT_NOISE)
                    | (out.waiting == WAIT_RANDOMIZER)] = READY
        for run in np.flatnonzero(out.waiting):
            code = out.waiting[run]
            if code == WAIT_AGENT:
                agent.serve(int(run), int(out.waiting_arm[run]))
            else:
                randomizer.raise_out_of_range(int(run))
            out.waiting[run] = READY


def _no_noise(n_runs: int) -> NoiseView:
    z = np.zeros((n_runs, 0))
    i = np.zeros(n_runs, dtype=np.int64)
    return NoiseView(np.zeros((n_runs, 4), np.uint64), z, i, i, np.zeros((n_runs, 0), np.uint64),
                     i, i)


# -- the shell -----------------------------------------------------------------------------------


class KernelAgent(Agent):
    """An :class:`~privenv.agents.base.Agent` whose algorithm is a compiled kernel.

    Subclasses set :attr:`State` (the state's ``NamedTuple`` class, registered with
    :func:`agent_act` and :func:`agent_observe`) and write :meth:`kernel_params` (the constants,
    after validation) and :meth:`new_state`. ``agent.<field>`` reads a field of the state (e.g.
    ``agent.counts``), one row per run.

    ``reward_mode`` (best-arm identification): where the sample is — ``"sample"``, the reward;
    ``"cost"``, the observation. Agents on regret problems always read the reward.
    """

    State: ClassVar[type]
    reward_mode: str = "sample"

    def __init__(self, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        self.state: Any = None
        self._params: Any = None

    @property
    def params(self) -> Any:
        """The kernel's constants (built once, after the constructor's checks)."""
        if self._params is None:
            self._params = self.kernel_params()
        return self._params

    def kernel_params(self) -> Any:
        raise NotImplementedError

    def new_state(self) -> Any:
        """The state of ``n_runs`` fresh runs (a :attr:`State`)."""
        raise NotImplementedError

    def reset_state(self) -> None:
        self.state = self.new_state()

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__.get("state")
        if state is not None and name in type(state)._fields:
            return getattr(state, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def feedback(self, rewards: np.ndarray, observations: np.ndarray) -> np.ndarray:
        """The value each run's last action released: the reward, or in ``reward_mode="cost"``
        the sample in the observation."""
        if self.reward_mode == "cost":
            return np.ascontiguousarray(
                np.asarray(observations, dtype=float).reshape(self.n_runs, -1)[:, 0])
        return np.ascontiguousarray(rewards, dtype=float).reshape(self.n_runs)

    def serve(self, run: int, code: int) -> None:
        """Fulfil what :func:`agent_ready` asked for ``run`` (agents whose kernel asks)."""
        raise NotImplementedError(f"{type(self).__name__} cannot serve code {code}")

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        p = self.params
        self.noise.ensure(p.normals_per_step, words=p.words_per_step)
        codes = np.zeros(self.n_runs, dtype=np.int64)
        while not ready_all(self.state, p, codes):
            for run in np.flatnonzero(codes):
                self.serve(int(run), int(codes[run]))
        actions = np.empty(self.n_runs, dtype=np.int64)
        act_all(self.state, p, self.noise.view(), actions)
        return actions

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        p = self.params
        self.noise.ensure(p.normals_per_step, words=p.words_per_step)
        actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(self.n_runs)
        observe_all(self.state, p, self.noise.view(), actions,
                    self.feedback(rewards, observations))
        self.t += 1
        if self.ledger is not None:
            self.charge_releases()

    def charge_releases(self) -> None:
        """Checking mode: charge the ledger for the releases of the last step (agents that
        release write them to their state's event buffers, see :class:`Releases`)."""

    @classmethod
    def runs_fast(cls) -> bool:
        """Whether the fast path may drive this class: its act/observe are the kernels' (a
        subclass that overrides them in Python, e.g. to record what it sees, runs step by
        step)."""
        return (cls.act_batch is KernelAgent.act_batch
                and cls.observe_batch is KernelAgent.observe_batch)


class Releases(NamedTuple):
    """Checking mode's record of one step's private releases, per run (state field
    ``releases``): ``count[run]`` releases, the ``e``-th over the users (rounds) in
    ``users[run, e]`` at budget ``epsilon[run, e]``, labelled ``label[run, e]`` (an index into the
    agent's ``RELEASE_LABELS``). Outside checking mode the user axis has length 0 and nothing is
    recorded."""

    count: np.ndarray
    users: np.ndarray
    epsilon: np.ndarray
    label: np.ndarray

    @classmethod
    def make(cls, n_runs: int, n_users: int, per_step: int = 2) -> Releases:
        return cls(np.zeros(n_runs, np.int64), np.zeros((n_runs, per_step, n_users), bool),
                   np.zeros((n_runs, per_step)), np.zeros((n_runs, per_step), np.int64))


@jit
def record_release(rel: Releases, run: int, start: int, stop: int, epsilon: float,
                   label: int) -> None:
    """Checking mode: record a release over users ``start … stop − 1`` of ``run``."""
    if rel.users.shape[2] == 0:
        return
    e = rel.count[run]
    rel.count[run] = e + 1
    for u in range(start, min(stop, rel.users.shape[2])):
        rel.users[run, e, u] = True
    rel.epsilon[run, e] = epsilon
    rel.label[run, e] = label


def charge_recorded(agent: Agent, rel: Releases, labels: tuple[str, ...]) -> None:
    """Charge the ledger for the releases in ``rel`` and clear it."""
    for run in np.flatnonzero(rel.count):
        for e in range(int(rel.count[run])):
            users = np.flatnonzero(rel.users[run, e])
            agent.charge(np.full(users.size, run), users, float(rel.epsilon[run, e]),
                         label=labels[int(rel.label[run, e])])
            rel.users[run, e] = False
    rel.count[:] = 0
