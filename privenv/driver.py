"""The compiled fast path: every run played to its own end inside compiled code.

:func:`privenv.simulation.simulate` asks the agent, the env's problem and the local-DP wrapper in
between (if any) for their *compiled views* — the one protocol of the kernel layer:

* ``agent.kernel_view()`` → :class:`~privenv.agents.kernel.AgentView` (the state, the constants,
  the noise) of a compiled agent (:class:`~privenv.agents.kernel.KernelAgent`);
* ``problem.kernel_view()`` → the reward streams (:mod:`privenv.problems.base`: a record whose
  class is the reward law);
* ``wrapper.kernel_view()`` → its local randomizer and noise (:mod:`privenv.privacy.local`);

and, when all have one, calls :func:`run_fast`. Anything else runs step by step through the vector
env, to the same numbers. The driver knows nothing of any family: it calls the agent's kernels
through the generic functions :func:`~privenv.agents.kernel.agent_act`,
:func:`~privenv.agents.kernel.agent_observe` and :func:`~privenv.agents.kernel.agent_ready`, the
reward law's :func:`~privenv.problems.base.next_value`, and the randomizer's
:func:`~privenv.privacy.local.admit` and :func:`~privenv.privacy.local.release`, each chosen at
compile time by the class of its view: a driver is compiled once per combination of classes,
and contains the code of those only.

:func:`run_until` plays each run until it ends or must wait: act; a stop ends the run with its
recommendation; a pull draws the arm's next value, adds its pseudo-regret, releases it through
the randomizer, and the agent observes it. A run that has stopped costs nothing more. When a run
needs something only Python can give — a reward block of a law drawn by numpy, the exact
samplers' words for the agent or the randomizer, an agent's buffer to grow, or the error of a
reward its randomizer refused — it waits (:attr:`Outcome.waiting`) with its state kept, the driver
goes on with the next run, and :func:`run_fast` serves every wait of a kind in one call and calls
it again. Nothing is drawn ahead of need, so both paths see the same numbers: run *i* is
identical step by step or fast, alone or in a batch (``tests/test_golden.py``,
``tests/test_kernels.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba.core.dispatcher import Dispatcher

from privenv._jit import jit
from privenv.agents.kernel import agent_act, agent_observe, agent_ready
from privenv.privacy.local import admit, release
from privenv.problems.base import arm_room, exhausted_arm, next_value
from privenv.seeding import NoiseView, available

__all__ = ["NoRandomizer", "Outcome", "prepare_fast", "run_fast", "run_until"]

#: what a run of :func:`run_until` waits for (:attr:`Outcome.waiting`)
READY = 0
WAIT_ARM = 1  # the reward stream of arm ``Outcome.arm`` is used up (a law drawn by numpy)
WAIT_NOISE = 2  # the agent's words (the exact samplers)
WAIT_RANDOMIZER = 3  # the randomizer's words
OUT_OF_RANGE = 4  # the randomizer refused a reward (outside its range, or NaN): an error
WAIT_AGENT = 5  # the agent's ``serve(run, Outcome.code)`` (e.g. a buffer to grow)


class NoRandomizer(NamedTuple):
    """The randomizer view of a run with no local-DP wrapper: the raw value is released."""

    words: int = 0


@admit.register(NoRandomizer)
@jit(inline="always")
def _admit_any(rv: NoRandomizer, x: float) -> tuple[float, bool]:
    return x, True


@release.register(NoRandomizer)
@jit(inline="always")
def _release_raw(rv: NoRandomizer, noise: NoiseView, run: int, x: float) -> float:
    return x


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
    arm: np.ndarray  # WAIT_ARM: the arm whose stream is used up
    code: np.ndarray  # WAIT_AGENT: the agent's code (what its ``serve`` must do)

    @classmethod
    def start(cls, n_runs: int, n_checkpoints: int) -> Outcome:
        i8 = np.int64
        return cls(steps=np.zeros(n_runs, i8), regret=np.zeros(n_runs),
                   curve=np.zeros((n_runs, n_checkpoints)), next_checkpoint=np.zeros(n_runs, i8),
                   done=np.zeros(n_runs, bool), stopped=np.zeros(n_runs, bool),
                   pulls=np.zeros(n_runs, i8), recommendation=np.full(n_runs, -1, i8),
                   correct=np.zeros(n_runs, bool), waiting=np.zeros(n_runs, i8),
                   arm=np.zeros(n_runs, i8), code=np.zeros(n_runs, i8))


@jit
def run_until(state: Any, params: Any, noise: NoiseView, env: Any, rnd: Any,
              rnd_noise: NoiseView, out: Outcome, checkpoints: np.ndarray,
              horizon: int) -> int:
    """Play every run that has not ended until it ends or must wait; returns how many wait.

    One step of a run: act; a stop (action ≥ K) ends the run with its recommendation; a pull
    draws the arm's next value, adds its pseudo-regret, releases it through the randomizer
    (:func:`~privenv.privacy.local.admit`, :func:`~privenv.privacy.local.release`) and lets the
    agent observe it. A run ends at ``horizon`` steps. Before a step, the run must hold a value
    in every arm's stream (checked in O(1): the smallest number of values left in any arm's
    stream, counted down; a law drawn in compiled code never runs out) and enough words for the
    agent and the randomizer; otherwise it waits (``out.waiting``) and keeps its state.
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
                    out.arm[run] = exhausted_arm(env, run)
                    break
            if not available(noise, run, params.words_per_step):
                out.waiting[run] = WAIT_NOISE
                break
            code = agent_ready(state, params, run)
            if code != 0:
                out.waiting[run] = WAIT_AGENT
                out.code[run] = code
                break
            if not available(rnd_noise, run, rnd.words):
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


def run_fast(agent: Any, problem: Any, local: tuple[Any, Any] | None,
             checkpoints: np.ndarray, horizon: int) -> Outcome:
    """Play every run of ``agent`` on ``problem`` (both just reset) to its end with
    :func:`run_until`, serving what the waiting runs need in between
    (``prepare_fast(…)()``; the arguments are :func:`prepare_fast`'s)."""
    return prepare_fast(agent, problem, local, checkpoints, horizon)()


#: the signatures of :func:`run_until` called once in this process. The first call of a compiled
#: signature costs about 0.7 ms more than the next ones (numba's and the machine's one-time work:
#: a 1 000-step run's loop is 0.1 ms), so :func:`prepare_fast` makes it with runs that have all
#: ended, which returns at once.
_CALLED: set[tuple] = set()


def prepare_fast(agent: Any, problem: Any, local: tuple[Any, Any] | None,
                 checkpoints: np.ndarray, horizon: int) -> Callable[[], Outcome]:
    """Compile (or load from the cache) :func:`run_until` for these views' types, and return
    the function that plays the runs: the one-time work of a process (the types' resolution,
    a kernel's compile or load, the first call) is done here, so that the runs' loop can be
    timed alone.

    The first call of the loop goes to the compiled signature's entry point with the arguments
    typed here, skipping the dispatcher's resolution of their types: about 25 µs a call with
    these views, a quarter of a 1 000-step run (issue 35, ``benchmarks/bai.py --short``). The
    calls after a wait go through the dispatcher, which types the views again (a served wait may
    widen a buffer).

    Args:
        agent: a compiled agent (reset): ``kernel_view()``, ``ensure_noise(runs)``,
            ``serve(run, code)``, ``n_runs``.
        problem: the env's K-armed problem (reset): ``kernel_view()``, ``refill_arms(runs,
            arms)``.
        local: the local randomizer in front of the agent and its noise (a local-DP wrapper's
            ``kernel_view()``), or ``None``.
        checkpoints: the steps (1-based, increasing) after which the regret is recorded.
        horizon: steps per run at most.
    """
    out = Outcome.start(agent.n_runs, len(checkpoints))
    randomizer, rnd_noise = local if local is not None else (None, None)
    rnd = randomizer.kernel_view() if randomizer is not None else NoRandomizer()
    checkpoints = np.ascontiguousarray(checkpoints, dtype=np.int64)
    empty = _no_noise(agent.n_runs)

    def arguments() -> tuple:  # the views again after each wait is served (may widen a buffer)
        view = agent.kernel_view()
        rnd_view = rnd_noise.view() if rnd_noise is not None else empty
        return (view.state, view.params, view.noise, problem.kernel_view(), rnd, rnd_view, out,
                checkpoints, horizon)

    first_args = arguments()
    first: Callable[..., int] = run_until
    if isinstance(run_until, Dispatcher):  # (not with NUMBA_DISABLE_JIT=1)
        signature = tuple(run_until.typeof_pyval(a) for a in first_args)
        run_until.compile(signature)
        first = run_until.overloads[signature].entry_point  # type: ignore[attr-defined]
        if signature not in _CALLED:
            _CALLED.add(signature)
            ended = Outcome.start(1, 1)
            ended.done[:] = True
            first(*first_args[:6], ended, *first_args[7:])
    return functools.partial(_serve_until_done, agent, problem, randomizer, rnd_noise, rnd,
                             out, arguments, first, first_args)


def _serve_until_done(agent: Any, problem: Any, randomizer: Any, rnd_noise: Any, rnd: Any,
                      out: Outcome, arguments: Callable[[], tuple], first: Callable[..., int],
                      first_args: tuple) -> Outcome:
    """:func:`run_until` until no run waits, serving the waits in between (its first call is
    ``first(*first_args)``: :func:`prepare_fast`)."""
    call, args = first, first_args
    while True:
        if call(*args) == 0:
            return out
        # the common waits, each served in one call for all its runs
        waits = out.waiting == WAIT_ARM
        if waits.any():
            problem.refill_arms(np.flatnonzero(waits), out.arm[waits])
        waits = out.waiting == WAIT_NOISE
        if waits.any():
            agent.ensure_noise(np.flatnonzero(waits))
        waits = out.waiting == WAIT_RANDOMIZER
        if waits.any():
            assert rnd_noise is not None  # (only a local-DP system waits for its randomizer)
            rnd_noise.ensure(np.flatnonzero(waits), rnd.words)
        out.waiting[(out.waiting == WAIT_ARM) | (out.waiting == WAIT_NOISE)
                    | (out.waiting == WAIT_RANDOMIZER)] = READY
        for run in np.flatnonzero(out.waiting):
            if out.waiting[run] == WAIT_AGENT:
                agent.serve(int(run), int(out.code[run]))
            else:
                assert randomizer is not None  # (as above)
                randomizer.raise_out_of_range(int(run))
            out.waiting[run] = READY
        call, args = run_until, arguments()


def _no_noise(n_runs: int) -> NoiseView:
    """The noise view of a run with no randomizer (never read)."""
    i = np.zeros(n_runs, dtype=np.int64)
    states = np.zeros((n_runs, 4), np.uint64)
    return NoiseView(u=states, z=states, w=np.zeros((n_runs, 0), np.uint64), w_pos=i, w_end=i)
