"""Compiled agents: the shell every scalar-state agent shares, and its kernel protocol.

The multi-armed and best-arm agents (UCB1, ε-greedy, Robust UCB, PRAE-R/C, DPRSE, DP-SE, TTUCB,
CTB-TT, the Gaussian-LDP TTUCB, AdaP-TT, AdaP-TT*, TTUCB-DPA) are each written once, as compiled
kernels over one run's state (:mod:`privenv._jit`):

* ``act(state, params, noise, run) -> action`` — the next arm of ``run`` (or, in best-arm
  identification, a stop ``K + recommended arm``);
* ``observe(state, params, noise, run, action, value)`` — take in the value that action released;
* optionally ``ready(state, params, run) -> code`` — 0, or a code the agent's ``serve(run, code)``
  fulfils in Python before the next step (e.g. grow a buffer); and ``init(state, params, noise,
  run)`` — set a fresh run up (e.g. plan its first epoch).

``state`` is a ``NamedTuple`` of arrays with one row per run, ``params`` a ``NamedTuple`` of the
algorithm's constants, built by name (with ``words_per_step``: the most words of the exact
samplers one step may read; uniforms and normals are drawn where they are used and never run
out), ``noise`` the agent's :class:`~privenv.seeding.NoiseView`. A family registers its kernels
for its state class with :func:`agent_act`, :func:`agent_observe` and, if it needs them,
:func:`agent_ready` and :func:`agent_init` (generic kernel functions, dispatched on the state's
class at compile time). The recipe: docs/design/contributing.md, "A compiled agent".

Two drivers call the same kernels:

* **step by step** — :class:`KernelAgent` is the :class:`~privenv.agents.base.Agent` of such an
  algorithm: ``act_batch`` / ``observe_batch`` call them for every run (one compiled loop per
  step), so ``gym.make`` envs, :func:`privenv.simulation.play`, vector envs and wrappers drive it
  through the usual protocol;
* **the fast path** — :mod:`privenv.driver` plays each run to its own end inside compiled code,
  from the agent's :meth:`KernelAgent.kernel_view`; the agent never sees the env or a wrapper.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from privenv._jit import generic, jit
from privenv.agents.base import Agent
from privenv.seeding import NoiseView

__all__ = [
    "AgentView",
    "KernelAgent",
    "Releases",
    "agent_act",
    "agent_init",
    "agent_observe",
    "agent_ready",
    "charge_recorded",
    "record_release",
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


@jit(inline="always")
def _always_ready(state: Any, params: Any, run: int) -> int:
    return 0


@generic(default=_always_ready)
def agent_ready(state: Any, params: Any, run: int) -> int:
    """0 if ``run`` can take a step; else a code the agent's ``serve(run, code)`` fulfils in
    Python before it does (e.g. grow a buffer). Default: always 0."""
    raise NotImplementedError


@jit(inline="always")
def _nothing_to_set_up(state: Any, params: Any, noise: NoiseView, run: int) -> None:
    pass


@generic(default=_nothing_to_set_up)
def agent_init(state: Any, params: Any, noise: NoiseView, run: int) -> None:
    """Set a fresh run up after :meth:`KernelAgent.new_state` (e.g. plan its first epoch, with
    its noise). Default: nothing."""
    raise NotImplementedError


@jit
def init_all(state: Any, params: Any, noise: NoiseView) -> None:
    """:func:`agent_init` for every run."""
    for run in range(noise.u.shape[0]):
        agent_init(state, params, noise, run)


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


# -- the shell -----------------------------------------------------------------------------------


class AgentView(NamedTuple):
    """The compiled view of a :class:`KernelAgent` (:meth:`KernelAgent.kernel_view`): what its
    kernels are called with. Valid until the agent next changes its state in Python
    (:meth:`KernelAgent.serve`, :meth:`KernelAgent.ensure_noise`)."""

    state: Any
    params: Any
    noise: NoiseView


class KernelAgent(Agent):
    """An :class:`~privenv.agents.base.Agent` whose algorithm is a compiled kernel.

    Subclasses set :attr:`State` (the state's ``NamedTuple`` class, registered with
    :func:`agent_act` and :func:`agent_observe`) and write :meth:`kernel_params` (the constants,
    after validation, built by name) and :meth:`new_state`. ``agent.<field>`` reads a field of
    the state (e.g. ``agent.counts``), one row per run.

    A subclass that overrides :meth:`act_batch` or :meth:`observe_batch` in Python (e.g. to
    record what it sees) is not its kernels any more: :attr:`compiled` is then false, its
    :meth:`kernel_view` is ``None`` and the runner drives it step by step.

    ``reward_mode`` (best-arm identification): where the sample is — ``"sample"``, the reward;
    ``"cost"``, the observation. Agents on regret problems always read the reward.
    """

    State: ClassVar[type]
    reward_mode: str = "sample"
    #: whether the kernels are this class's act and observe (false for a subclass that
    #: overrides them in Python)
    compiled: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "act_batch" in vars(cls) or "observe_batch" in vars(cls):
            cls.compiled = False

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
        """The kernel's constants: a ``NamedTuple`` built by name (keywords), with
        ``words_per_step`` (0 unless the agent uses the exact samplers)."""
        raise NotImplementedError

    def new_state(self) -> Any:
        """The state of ``n_runs`` fresh runs (a :attr:`State`)."""
        raise NotImplementedError

    def reset_state(self) -> None:
        """A fresh state, each run set up by :func:`agent_init` (with the agent's noise)."""
        self.state = self.new_state()
        if type(self.state) in agent_init.implementations:  # (no call to compile otherwise)
            self.ensure_noise()
            init_all(self.state, self.params, self.run_noise.view())

    def kernel_view(self) -> AgentView | None:
        """The compiled view of this agent (after :meth:`reset`): its state, constants and noise,
        which the fast path (:mod:`privenv.driver`) drives; ``None`` if the class is not
        :attr:`compiled`."""
        if not self.compiled:
            return None
        return AgentView(state=self.state, params=self.params, noise=self.run_noise.view())

    def ensure_noise(self, runs: np.ndarray | None = None) -> None:
        """Give the runs in ``runs`` (all if ``None``) the words one step may read."""
        self.run_noise.ensure(runs, words=self.params.words_per_step)

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
        self.ensure_noise()
        p = self.params
        codes = np.zeros(self.n_runs, dtype=np.int64)
        while not ready_all(self.state, p, codes):
            for run in np.flatnonzero(codes):
                self.serve(int(run), int(codes[run]))
        actions = np.empty(self.n_runs, dtype=np.int64)
        act_all(self.state, p, self.run_noise.view(), actions)
        return actions

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        self.ensure_noise()
        actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(self.n_runs)
        observe_all(self.state, self.params, self.run_noise.view(), actions,
                    self.feedback(rewards, observations))
        self.t += 1
        if self.ledger is not None:
            self.charge_releases()

    def charge_releases(self) -> None:
        """Checking mode: charge the ledger for the releases of the last step (agents that
        release write them to their state's event buffers, see :class:`Releases`)."""


class Releases(NamedTuple):
    """Checking mode's record of one step's private releases, per run (state field
    ``releases``): ``count[run]`` releases, the ``e``-th over the users (rounds) in
    ``users[run, e]`` at budget ``epsilon[run, e]``, labelled ``label[run, e]`` (an index into the
    agent's ``RELEASE_LABELS``). Outside checking mode the user axis has length 0 and nothing is
    recorded."""

    count: np.ndarray  # type: ignore[assignment]  # (shadows tuple.count; kernels read it)
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
