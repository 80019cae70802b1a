"""PettingZoo view of ``FederatedLinearBandit-v0``: one agent per silo.

The module follows PettingZoo's environment-module conventions:

* :func:`parallel_env` — the native :class:`FederatedParallelEnv` (silos act in lock-step);
* :func:`raw_env` — its AEC form (``pettingzoo.utils.parallel_to_aec``: silos act in turn, the
  round is played once every live silo has acted);
* :func:`env` — the AEC form behind PettingZoo's ``AssertOutOfBoundsWrapper`` and
  ``OrderEnforcingWrapper``, what ``pettingzoo.test.api_test`` and ``render_test`` take.

All three take the keyword arguments of :class:`FederatedParallelEnv`. Render modes: ``"human"``
(prints the text board, returns None), ``"ansi"`` and ``"rgb_array"`` (as the Gymnasium view), so
``render_test`` passes. ``state()`` is the global state, every silo's features of the round.

PettingZoo is an optional extra (``pip install 'privenv[pettingzoo]'``); this module imports it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

try:
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.utils import parallel_to_aec, wrappers
except ImportError:  # pragma: no cover - depends on the installation
    raise ImportError(
        "the PettingZoo view needs pettingzoo: pip install 'privenv[pettingzoo]'"
    ) from None

from privenv._validation import check_choice
from privenv.envs.federated import FederatedLinearBanditEnv

#: the view's default federation, small enough for a multi-agent learner to train on in minutes
#: (the Gymnasium research id's is paper 2's M = 100 silos over T = 10⁴ rounds; pass
#: ``M=100, K=None, d=None, horizon=10_000`` for it)
SMALL_FEDERATION: dict[str, int] = {"M": 4, "K": 4, "d": 3, "horizon": 1000}


class FederatedParallelEnv(ParallelEnv):
    """The federated linear bandit with one PettingZoo agent per silo (``"silo_0"``, …).

    ## Description
    The problem of :class:`~privenv.envs.federated.FederatedLinearBanditEnv` (paper 2), seen as M
    agents acting in lock-step: at each round every silo observes its own K×d feature matrix,
    picks an action and receives **its own** reward (the Gymnasium view sums them).

    ## Action Space
    ``Discrete(K)`` per agent. Every live agent must act at every step (lock-step rounds).

    ## Observation Space
    ``Box(-1, 1, (K, d), float32)`` per agent: the silo's features for this round.

    ## State
    ``state()``: every silo's features of the round, ``Box(-1, 1, (M, K, d), float32)``
    (``state_space``) — what a centralised critic sees; after the last round, the last features.

    ## Rewards
    The silo's reward. ``infos[agent]``: the silo's ``regret``, ``expected_reward``,
    ``optimal_action`` and ``expected_rewards`` (never a realized reward).

    ## Episode End
    Every agent is truncated at ``horizon`` (T); no agent terminates.

    ## Arguments
    The keyword arguments of :class:`~privenv.envs.federated.FederatedLinearBanditEnv`
    (``M``, ``K``, ``d``, ``contexts``, …, ``horizon``), with a small default federation
    (:data:`SMALL_FEDERATION`: M = 4 silos, K = 4 actions, d = 3, T = 1000), and
    ``render_mode`` (``"human"``: the text board printed; ``"ansi"``; ``"rgb_array"``).

    ## Privacy
    As for the Gymnasium view: each silo's contexts and rewards are its private data; the
    guarantee is the silos' protocol's.

    ## Examples
    >>> from privenv.envs.pettingzoo import FederatedParallelEnv
    >>> env = FederatedParallelEnv(M=3, K=4, d=5, horizon=10)
    >>> obs, infos = env.reset(seed=0)
    >>> actions = {agent: 0 for agent in env.agents}
    >>> obs, rewards, terminations, truncations, infos = env.step(actions)
    """

    metadata: dict[str, Any] = {
        "name": "federated_linear_bandit_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": True,
    }

    def __init__(
        self,
        M: int = SMALL_FEDERATION["M"],
        K: int = SMALL_FEDERATION["K"],
        d: int = SMALL_FEDERATION["d"],
        horizon: int | None = SMALL_FEDERATION["horizon"],
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        # The single Gymnasium env supplies the problem and the seeding rules (run i of seed s);
        # "human" prints its text board.
        board = "ansi" if render_mode == "human" else render_mode
        self._env = FederatedLinearBanditEnv(M=M, K=K, d=d, horizon=horizon, render_mode=board,
                                             **kwargs)
        self.problem = self._env.problem
        self.horizon = self._env.horizon
        self.render_mode = render_mode
        M, K, d = self.problem.M, self.problem.K, self.problem.d
        self.possible_agents = [f"silo_{m}" for m in range(M)]
        self.agents: list[str] = []
        self._index = {agent: m for m, agent in enumerate(self.possible_agents)}
        self._observation_spaces = {
            agent: spaces.Box(-1.0, 1.0, (K, d), np.float32) for agent in self.possible_agents
        }
        self._action_spaces = {agent: spaces.Discrete(K) for agent in self.possible_agents}
        self.state_space = spaces.Box(-1.0, 1.0, (M, K, d), np.float32)
        self._state: np.ndarray | None = None
        self._t = 0

    def observation_space(self, agent: str) -> spaces.Box:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """Start a run: ``seed=s`` (and ``options={"first_run": i}``) is run *i* of seed *s*,
        exactly as in the Gymnasium views. Other keys are not used: each one is named in a
        warning (PettingZoo's own API test resets with an arbitrary key, so they cannot be
        refused here as the Gymnasium views refuse them)."""
        if options:
            for key in options:
                if key != "first_run":
                    warnings.warn(f"options: unknown key {key!r} ignored (only 'first_run' is "
                                  "used)", stacklevel=2)
            options = {k: v for k, v in options.items() if k == "first_run"}
        obs, _ = self._env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._state = obs
        self._t = 0
        return {a: obs[m] for a, m in self._index.items()}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise ResetNeeded("the episode has ended: call reset() before step()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(
                f"actions must hold one action per silo (lock-step); missing {missing}"
            )
        for a in self.agents:
            if not self._action_spaces[a].contains(actions[a]):
                raise ValueError(
                    f"action of {a} must be an integer in [0, {self.problem.K - 1}], "
                    f"got {actions[a]!r}"
                )
        joint = np.array([[int(actions[a]) for a in self.possible_agents]], dtype=np.int64)
        obs, rewards, _, info = self.problem.step(joint)
        self._env.record_render(joint, obs, rewards, self.problem.evaluation)  # the board
        self._state = obs[0]
        self._t += 1
        done = self.horizon is not None and self._t >= self.horizon
        agents = self.agents
        out_obs = {a: obs[0, self._index[a]] for a in agents}
        out_rew = {a: float(rewards[0, self._index[a]]) for a in agents}
        terminations = dict.fromkeys(agents, False)
        truncations = dict.fromkeys(agents, bool(done))
        infos = {  # (empty where the problem withholds them: a data set's labels)
            a: {
                "regret": float(info["silo_regret"][0, m]),
                "expected_reward": float(info["silo_expected_reward"][0, m]),
                "optimal_action": int(info["optimal_action"][0, m]),
                "expected_rewards": info["expected_rewards"][0, m],
            } if "silo_regret" in info else {}
            for a, m in ((a, self._index[a]) for a in agents)
        }
        if done:
            self.agents = []
        return out_obs, out_rew, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """The global state: every silo's features of the current round, shape (M, K, d)."""
        if self._state is None:
            raise ResetNeeded("call reset() before state()")
        return np.array(self._state, dtype=np.float32)

    def render(self) -> str | np.ndarray | None:
        """As the Gymnasium view renders (pulls per action pooled over silos, mean observed reward,
        regret): ``"ansi"`` text, an ``"rgb_array"`` frame, or (``"human"``) the text printed.
        Shows raw data: a human view."""
        frame = self._env.render()
        if self.render_mode == "human":
            print(frame)
            return None
        return frame

    def close(self) -> None:
        pass


def parallel_env(**kwargs: Any) -> FederatedParallelEnv:
    """The parallel env (PettingZoo's module convention): :class:`FederatedParallelEnv`."""
    return FederatedParallelEnv(**kwargs)


def raw_env(**kwargs: Any) -> AECEnv:
    """The AEC form of :func:`parallel_env` (silos act in turn; a round is played once all live
    silos have acted), without PettingZoo's checking wrappers."""
    return parallel_to_aec(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """The AEC env of PettingZoo's convention: :func:`raw_env` behind ``AssertOutOfBoundsWrapper``
    (actions in ``Discrete(K)``) and ``OrderEnforcingWrapper`` (``reset`` before ``step``)."""
    aec = wrappers.AssertOutOfBoundsWrapper(raw_env(**kwargs))
    return wrappers.OrderEnforcingWrapper(aec)
