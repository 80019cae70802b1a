"""The agent protocol (docs/design/architecture.md, "Agents").

Every zoo agent holds the state of ``n_runs`` independent runs with a leading run axis::

    agent.privacy                               # the PrivacyGuarantee it provides
    agent.reset(seed=None)                      # fresh state; per-run noise streams
    action = agent.act(observation)             # one action per run
    agent.observe(action, reward, observation)  # feedback for that action (and the next obs)

**Shapes (one rule):** an agent built with ``n_runs=1`` takes a single observation and returns a
single action (a Python ``int`` for discrete actions), like a Gymnasium ``Env``; an agent built
with ``n_runs=N > 1`` takes observations with a leading axis of length N and returns an array of
N actions, like a Gymnasium ``VectorEnv``. Subclasses write only the batched form,
:meth:`Agent.act_batch` / :meth:`Agent.observe_batch`, which the runner calls directly.

A one-run agent written without this base class (any object with ``act``, ``observe`` and
optionally ``reset`` and ``privacy``) runs too: :class:`LoopedAgent` drives one copy per run.

Randomness: an agent draws its noise from ``self.noise`` (:class:`privenv.seeding.RunNoise`),
whose run *i* stream depends only on run *i*'s seed, so results do not depend on the batch size.
Agents never see ``info``.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from privenv._validation import check_int
from privenv.parameters import Param
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.seeding import AGENT, RunNoise, noise_for


class Agent(ABC):
    """Base class of batched agents.

    Args:
        n_runs: number of independent runs the agent plays at once.
    """

    #: command-line name (lower-case with hyphens; a looped one-run agent's is its own)
    name: str = ""
    #: the problem families this agent plays (keys of :data:`privenv.problems.base.FAMILIES`);
    #: :func:`privenv.agents.make` refuses an env of another family
    families: ClassVar[tuple[str, ...]] = ()
    #: why the agent does not play a family, for the refusal's message (family → reason)
    family_notes: ClassVar[dict[str, str]] = {}
    #: every constructor parameter but ``n_runs``, declared once (:mod:`privenv.parameters`),
    #: with its valid values and whether it is a quantity of the problem
    parameters: ClassVar[dict[str, Param]] = {}
    #: env constructor arguments this agent needs (e.g. CTB-TT needs the sample in the reward, where
    #: its randomizer wrapper can reach it); the runner builds env ids with them
    #: (:func:`privenv.agents.env_kwargs_for`)
    env_requirements: dict[str, Any] = {}  # (a trained model's depend on it: privenv.rl.agent)

    def __init__(self, n_runs: int = 1) -> None:
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self.ledger: Any = None  # a privenv.privacy.ledger.Ledger in checking mode (tests)
        self.noise: RunNoise | None = None
        self.t = 0  # rounds observed so far (the same in every run)

    @property
    def run_noise(self) -> RunNoise:
        """``self.noise``, which :meth:`reset` sets (an error before the first reset)."""
        if self.noise is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() before drawing noise")
        return self.noise

    # -- the protocol -------------------------------------------------------------------------
    @property
    def privacy(self) -> PrivacyGuarantee:
        """The guarantee this agent provides on its own inputs (non-private by default)."""
        return PrivacyGuarantee.none()

    def reset(self, seed: Any = None, *, first_run: int = 0) -> None:
        """Forget everything; run *i* draws noise from seed ``seed``'s run ``first_run + i``."""
        self.noise = noise_for(seed, self.n_runs, AGENT, first_run)
        self.t = 0
        self.reset_state()

    def act(self, observation: Any) -> Any:
        """One action per run (a single action when ``n_runs == 1``)."""
        if self.n_runs == 1:
            a = self.act_batch(np.asarray(observation)[None])
            return a[0].item() if a.ndim == 1 else a[0]
        return self.act_batch(np.asarray(observation))

    def observe(self, action: Any, reward: Any, observation: Any) -> None:
        """Feedback for ``action``: the (possibly privatized) ``reward`` and the next obs."""
        if self.n_runs == 1:
            self.observe_batch(
                np.asarray(action)[None],
                np.asarray(reward, dtype=float)[None],
                np.asarray(observation)[None],
            )
        else:
            self.observe_batch(
                np.asarray(action), np.asarray(reward, dtype=float), np.asarray(observation)
            )

    def local_randomizer(self) -> Any:
        """The user-side randomizer of a *local-DP system* defined as "local randomizer +
        non-private learner" (CTB-TT: randomized response + TTUCB; LDP-LinUCB: each user's
        Gaussian statistics), or ``None`` (default).

        The agent declares it and never builds the wrapper: the runner puts the env behind it
        (:func:`privenv.simulation.system_env`), so the learner only ever sees released values
        and the guarantee of the system is the randomizer's. An audit's mutant overrides this
        (e.g. a randomizer at 2ε in front of a learner that declares ε).
        """
        return None

    def wrap_env(self, env: Any) -> Any:
        """The env this agent is run on, given the env after its :meth:`local_randomizer`: a
        hook for an agent that must see the env it is given (e.g. to check it or to learn its
        description). The runner (:func:`privenv.simulation.system_env`) calls it once per env.
        Default: ``env`` unchanged.
        """
        return env

    def episode_info(self) -> dict[str, np.ndarray]:
        """Per-run values the agent reports at the end of a run (e.g. a batched algorithm's
        number of adaptivity rounds), recorded by the runner next to the env's episode values.
        Default: none."""
        return {}

    # -- what subclasses write ------------------------------------------------------------------
    @abstractmethod
    def reset_state(self) -> None:
        """Initialise the per-run state (called by :meth:`reset`)."""

    @abstractmethod
    def act_batch(self, observations: Any) -> np.ndarray:
        """Actions of all runs, shape ``(n_runs, …)``. ``observations``: the batched array, or
        for a learner behind a user-side randomizer wrapper a dict of batched arrays (its
        subclasses say which)."""

    @abstractmethod
    def observe_batch(self, actions: np.ndarray, rewards: np.ndarray, observations: Any) -> None:
        """Update every run with its action, reward and next observation (then ``self.t += 1``)."""

    # -- parameters -----------------------------------------------------------------------------
    def set_params(self, values: dict[str, Any]) -> None:
        """Check the parameters in ``values`` (a constructor's ``locals()``, taken first thing)
        with their declared constraints and store each as an attribute of the same name.

        A parameter's declaration is the one of the nearest class (in method resolution order)
        that declares it. A parameter a base constructor has already stored (and perhaps
        resolved, e.g. a default δ = 1/T) is left as it is: each is checked and stored once.
        """
        given = {k: v for k, v in values.items() if k not in ("self", "n_runs", "__class__")}
        for name, value in given.items():
            declared = next((params[name] for c in type(self).__mro__
                             if name in (params := getattr(c, "parameters", {}))), None)
            if declared is None:  # a constructor parameter nobody declared: a bug of the class
                raise TypeError(f"{type(self).__name__} does not declare its parameter {name!r}")
            attribute = declared.attribute or name
            if attribute not in vars(self):
                setattr(self, attribute, declared.constraint.check(name, value))

    @classmethod
    def problem_values(cls, info: dict[str, Any]) -> dict[str, Any]:
        """The parameters this agent takes from an env's public description ``info``: each
        declared ``problem=``/``assumes=`` key that ``info`` has."""
        return {name: info[p.env_key] for name, p in cls.parameters.items()
                if p.env_key is not None and p.env_key in info}

    # -- helpers --------------------------------------------------------------------------------
    def charge(
        self,
        runs: np.ndarray,
        users: np.ndarray,
        epsilon: float = 0.0,
        *,
        rho: float = 0.0,
        label: str = "",
    ) -> None:
        """Record a noisy release in the ledger (checking mode only; a no-op otherwise)."""
        if self.ledger is not None:
            self.ledger.charge(runs, users, epsilon, rho=rho, label=label)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_runs={self.n_runs}, privacy='{self.privacy}')"


class LoopedAgent(Agent):
    """Runs a one-run agent (``act(obs) -> action``, ``observe(a, r, obs)``) for ``n_runs`` runs
    by keeping one deep copy per run — slower, but any agent a student writes runs in the runner.

    A copy's ``reset(seed=…)`` (if it has one) receives an int seed derived from run *i*'s own
    seed, so runs stay independent of the batch size.
    """

    def __init__(self, agent: Any, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        for method in ("act", "observe"):
            if not callable(getattr(agent, method, None)):
                raise TypeError(f"agent must have a callable {method}() method, got {agent!r}")
        self.prototype = agent
        self.copies = [copy.deepcopy(agent) for _ in range(self.n_runs)]
        self.name = getattr(agent, "name", type(agent).__name__)

    @property
    def privacy(self) -> PrivacyGuarantee:
        return getattr(self.prototype, "privacy", PrivacyGuarantee.none())

    def reset(self, seed: Any = None, *, first_run: int = 0) -> None:
        super().reset(seed, first_run=first_run)
        self.copies = [copy.deepcopy(self.prototype) for _ in range(self.n_runs)]
        assert self.noise is not None
        for i, c in enumerate(self.copies):
            if callable(getattr(c, "reset", None)):
                c.reset(seed=int(self.noise.uniforms(i, 2)[0] * 2**62))

    def reset_state(self) -> None:
        pass

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        return np.asarray([c.act(o) for c, o in zip(self.copies, observations, strict=True)])

    def observe_batch(
        self, actions: np.ndarray, rewards: np.ndarray, observations: np.ndarray
    ) -> None:
        for c, a, r, o in zip(self.copies, actions, rewards, observations, strict=True):
            c.observe(a.item() if isinstance(a, np.generic) else a, float(r), o)
        self.t += 1


def as_batched(agent: Any, n_runs: int) -> Agent:
    """``agent`` itself if it is a batched :class:`Agent` for ``n_runs`` runs, else a loop."""
    if isinstance(agent, Agent):
        if agent.n_runs != n_runs:
            raise ValueError(f"agent was built for n_runs={agent.n_runs}, the run has {n_runs}")
        return agent
    return LoopedAgent(agent, n_runs)
