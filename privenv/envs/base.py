"""Gymnasium shells over a batched :class:`~privenv.problems.base.Problem`.

:class:`ProblemEnv` (a ``gymnasium.Env``) is the ``n_runs = 1`` view and :class:`ProblemVectorEnv`
(a native ``gymnasium.vector.VectorEnv``) the ``n_runs = num_envs`` view of the same problem
object, so each family writes its dynamics once. Both:

* seed every run from its own ``SeedSequence`` (:mod:`privenv.seeding`): run *i* of a vector env
  reset with ``seed=s`` equals a single env reset with ``seed=s`` and ``options={"first_run": i}``;
  a single env reset with ``seed=s`` is run 0;
* truncate regret problems at ``horizon`` and terminate best-arm identification when the agent
  stops (``truncated`` is never True on a step that terminates);
* return Python ``float`` rewards and ``bool`` flags from the single env (SB3's checker);
* put only evaluation quantities in ``info`` (pseudo-regret, expected reward, optimal action, …),
  never raw rewards or contexts; those that would reveal raw data (a data set's labels) stay out
  of ``info`` and are read by the runner from :meth:`ProblemEnv.evaluation`
  (``env.unwrapped.evaluation()``), which agents and wrappers are never given;
* render (``render_mode="ansi"`` or ``"rgb_array"``) a board of pulls, mean observed rewards and
  cumulative regret per run (:mod:`privenv.envs.render`). Rendering a private problem shows raw
  data to whoever watches: it is a human view, never an agent's input. Without a ``render_mode``
  no rendering bookkeeping is done.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from privenv._validation import check_choice, check_int
from privenv.envs.render import Board, PullsFn, arm_pulls, n_arms
from privenv.problems.base import Problem
from privenv.seeding import SEED_TYPES, Seed, episode_seed, run_seed_sequences

P = TypeVar("P", bound=Problem)



def _check_horizon(horizon: Any) -> int | None:
    return None if horizon is None else check_int("horizon", horizon, low=1)


def _first_run(options: dict | None, allowed: tuple[str, ...] = ("first_run",)) -> int:
    """``options["first_run"]`` (default 0), after checking that ``options`` holds only the keys
    ``allowed`` (a misspelt key is an error, never ignored)."""
    if options is None:
        return 0
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict or None, got {options!r}")
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise ValueError(f"options: unknown key {unknown[0]!r}; allowed keys: {list(allowed)}")
    if "first_run" not in options:
        return 0
    return check_int("options['first_run']", options["first_run"], low=0)


def action_error(action: Any, space: gym.Space) -> str:
    """One line saying why ``action`` is not in ``space``: what is allowed and what came, in a
    few words (never a space's or an array's full printout: a federated env's action space is
    ``MultiDiscrete`` over 100 silos)."""
    if isinstance(space, gym.spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n - 1)
        got = repr(action) if np.ndim(action) == 0 else _array_text(np.asarray(action))
        return f"action must be an integer in [{low}, {high}], got {got}"
    if isinstance(space, gym.spaces.MultiDiscrete):
        nvec = np.asarray(space.nvec)
        lows = np.asarray(space.start)
        same = nvec.size and (nvec == nvec.flat[0]).all() and (lows == lows.flat[0]).all()
        entries = (f"entries in [{int(lows.flat[0])}, {int(lows.flat[0] + nvec.flat[0] - 1)}]"
                   if same else "entry i in [start[i], start[i] + nvec[i] - 1]")
        want = f"action must be an integer array of shape {nvec.shape} with {entries}"
        a = np.asarray(action) if not isinstance(action, (str, bytes)) else None
        if a is None or a.dtype.kind not in "iu" or a.shape != nvec.shape:
            got = repr(action) if a is None or a.ndim == 0 else _array_text(a)
            return f"{want}, got {got}"
        bad = np.flatnonzero(((a < lows) | (a >= lows + nvec)).ravel())
        i = int(bad[0]) if bad.size else 0
        return f"{want}, got {int(a.flat[i])} at index {i}"
    return f"action {action!r} is not in the action space {space}"


def _array_text(a: np.ndarray) -> str:
    return f"an array of dtype {a.dtype} and shape {a.shape}"


class ProblemEnv(gym.Env, Generic[P]):
    """One run of a batched problem as a ``gymnasium.Env`` (subclasses build ``self.problem``)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: how to read a step as (arms pulled, observed values) for the render board
    render_pulls: PullsFn = staticmethod(arm_pulls)

    def __init__(self, problem: P, horizon: int | None = None, render_mode: str | None = None):
        if problem.n_runs != 1:
            raise ValueError(f"a single env needs a problem with n_runs=1, got {problem.n_runs}")
        self.problem = problem
        self.horizon = _check_horizon(horizon)
        self._board = _board(self, problem, render_mode)
        self.render_mode = render_mode
        self.observation_space = problem.single_observation_space
        self.action_space = problem.single_action_space
        self._run_root: Seed | None = None  # the run's first-episode seed
        self._episode = 0
        self._run_seed: Seed | None = None  # the current episode's seed
        self._t = 0
        self._done = True
        self._counts = np.zeros(0, dtype=np.int64)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        first_run = _first_run(options)
        roots = None if seed is None else run_seed_sequences(seed, 1, first_run)  # checks seed
        super().reset(seed=seed)
        if seed is not None or self._run_root is None:
            if roots is None:
                roots = run_seed_sequences(int(self.np_random.integers(2**62)), 1, first_run)
            (self._run_root,) = roots
            self._episode = 0
        else:  # the next episode of the same run, deterministic given the first seed
            self._episode += 1
        self._run_seed = episode_seed(self._run_root, self._episode)
        obs, info = self.problem.reset([self._run_seed])
        self._t = 0
        self._done = False
        if self._board is not None:
            self._board.reset()
        return obs[0], _unbatch(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise ResetNeeded("the episode has ended: call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(action_error(action, self.action_space))
        obs, reward, terminated, info = self.problem.step(np.asarray([action]))
        self.record_render(np.asarray([action]), obs, reward, self.problem.evaluation)
        reward = self.problem.gym_reward(reward)
        self._t += 1
        term = bool(terminated[0])
        trunc = (not term) and self.horizon is not None and self._t >= self.horizon
        self._done = term or trunc
        r = reward[0]  # a scalar, or a problem's opt-in detailed reward (e.g. one per silo)
        r = float(r) if np.ndim(r) == 0 else r
        return obs[0], r, term, bool(trunc), _unbatch(info)

    def evaluation(self) -> dict[str, Any]:
        """The last step's evaluation quantities (pseudo-regret, expected reward, …): ``info``'s,
        and those kept out of ``info`` because they reveal raw data
        (:attr:`~privenv.problems.base.Problem.withheld`). For the runner, never for an agent."""
        return _unbatch(self.problem.evaluation)

    def record_render(self, actions: np.ndarray, obs: Any, reward: np.ndarray,
                      info: dict[str, Any]) -> None:
        """Record one problem step (batched, one run) on the render board — ``info`` the
        problem's :attr:`~privenv.problems.base.Problem.evaluation`; a no-op without a
        ``render_mode``. Views that step :attr:`problem` themselves (PettingZoo) call it too."""
        if self._board is not None:
            self._board.record(*self.render_pulls(self.problem, actions, obs, reward, info), info)

    @property
    def run_seeds(self) -> list[Seed]:
        """The root seed of the current episode's run (wrappers derive their noise from it)."""
        if self._run_seed is None:
            raise ResetNeeded("call reset() first")
        return [self._run_seed]

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: a table of pulls and mean observed reward per arm; ``"rgb_array"``: a bar
        chart frame (:data:`privenv.envs.render.FRAME_SHAPE`). Shows raw data: a human view only."""
        if self._board is None:
            return None
        return self._board.ansi(0) if self.render_mode == "ansi" else self._board.rgb(0)

    def public_info(self) -> dict[str, Any]:
        """What agents may know about the instance (shapes, horizon, moment bounds; no data)."""
        return {**self.problem.public_info(), "horizon": self.horizon}


class ProblemVectorEnv(VectorEnv, Generic[P]):
    """``num_envs`` runs of a batched problem as a native ``gymnasium.vector.VectorEnv``.

    Args:
        problem: the batched problem (``n_runs = num_envs``).
        horizon: truncation time of regret problems (``None``: never truncated).
        autoreset_mode: Gymnasium's ``AutoresetMode`` (``NEXT_STEP`` by default, as in Gymnasium's
            own vector envs; ``DISABLED`` leaves resets to the caller — the runner uses it).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    #: how to read a step as (arms pulled, observed values) for the render board
    render_pulls: PullsFn = staticmethod(arm_pulls)

    def __init__(
        self,
        problem: P,
        horizon: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
    ) -> None:
        self.problem = problem
        self.num_envs = problem.n_runs
        self.horizon = _check_horizon(horizon)
        mode = AutoresetMode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self._board = _board(self, problem, render_mode)
        self.render_mode = render_mode
        self.single_observation_space = problem.single_observation_space
        self.single_action_space = problem.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._run_roots: list[Seed] | None = None  # first-episode seeds
        self._episodes = np.zeros(self.num_envs, dtype=np.int64)
        self._run_seeds: list[Seed] | None = None  # current episodes' seeds
        self._t = np.zeros(self.num_envs, dtype=np.int64)
        self._done = np.ones(self.num_envs, dtype=bool)
        self._n_done = self.num_envs
        self._all = np.ones(self.num_envs, dtype=bool)

    @property
    def autoreset_mode(self) -> AutoresetMode:
        return self.metadata["autoreset_mode"]

    def reset(
        self,
        *,
        seed: int | list[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all runs (or those in ``options["reset_mask"]``).

        ``seed`` an int ``s``: run *i* is run ``first_run + i`` of ``s`` (``options["first_run"]``,
        default 0); a list of ints: run *i* is what a single env reset with ``seed[i]`` gives; a
        list of ``SeedSequence``: run *i*'s root seed is ``seed[i]``.
        """
        first_run = _first_run(options, ("first_run", "reset_mask"))
        # checks the seed before Gymnasium's own seeding sees it
        roots = None if seed is None else run_seed_sequences(seed, self.num_envs, first_run)
        if isinstance(seed, (list, tuple)) or seed is None:
            first = None if seed is None else seed[0]
            if isinstance(first, SEED_TYPES):
                first = first.entropy  # np_random only seeds fresh runs of a later seed=None
            super().reset(seed=None if first is None else int(first))
        else:
            super().reset(seed=seed)
        mask = None if not options else options.get("reset_mask")
        if seed is not None or self._run_roots is None:
            if roots is None:
                roots = run_seed_sequences(int(self.np_random.integers(2**62)), self.num_envs,
                                           first_run)
            self._run_roots = roots
            self._episodes[:] = 0
            self._run_seeds = list(self._run_roots)
        elif mask is None:  # the next episode of every run
            self._episodes += 1
            self._run_seeds = [episode_seed(r, int(e))
                               for r, e in zip(self._run_roots, self._episodes, strict=True)]
        if mask is not None and seed is None and self._t.any():
            runs = np.flatnonzero(np.asarray(mask, dtype=bool))
            return self._reset_runs(runs)
        obs, info = self.problem.reset(self.run_seeds)
        if self._board is not None:
            self._board.reset()
        self._t[:] = 0
        self._done[:] = False
        self._n_done = 0
        return obs, info

    def _reset_runs(self, runs: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        assert self._run_roots is not None and self._run_seeds is not None
        self._episodes[runs] += 1
        seeds = [episode_seed(self._run_roots[i], int(self._episodes[i])) for i in runs]
        for i, s in zip(runs, seeds, strict=True):
            self._run_seeds[i] = s
        obs, info = self.problem.reset(seeds, runs)
        if self._board is not None:
            self._board.reset(runs)
        self._t[runs] = 0
        self._done[runs] = False
        self._n_done = int(np.count_nonzero(self._done))
        return obs, info

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._run_seeds is None:
            raise ResetNeeded("call reset() before step()")
        mode = self.autoreset_mode
        live: np.ndarray | None = None  # None: every run steps (the common, fast case)
        if self._n_done:
            ended = self._done.copy()
            if mode == AutoresetMode.NEXT_STEP:
                # Gymnasium's next-step autoreset: this step resets the runs that ended last step.
                self._reset_runs(np.flatnonzero(ended))
            elif mode == AutoresetMode.DISABLED and self._n_done == self.num_envs:
                raise ResetNeeded("every run has ended: call reset() before step()")
            # Runs that ended (and, under NEXT_STEP, were just reset) sit this step out.
            live = ~ended
        obs, reward, terminated, info = self.problem.step(actions, live)
        if self._board is not None:
            evaluation = self.problem.evaluation
            arms, values = self.render_pulls(self.problem, np.asarray(actions), obs, reward,
                                             evaluation)
            self._board.record(arms, values, evaluation, live)
        reward = self.problem.gym_reward(reward)
        if live is None:
            self._t += 1
            live = self._all
        else:
            self._t += live
            terminated = terminated & live
        truncated = (
            (~terminated) & (self._t >= self.horizon) & live
            if self.horizon is not None
            else np.zeros(self.num_envs, dtype=bool)
        )
        done = terminated | truncated
        if mode == AutoresetMode.DISABLED:
            self._done |= done
        else:
            self._done = done
        self._n_done = int(np.count_nonzero(self._done))
        info = _batch_info(info, live)
        if mode == AutoresetMode.SAME_STEP and self._n_done:
            runs = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in runs:
                final_obs[i] = obs[i]
            info = {
                **info,
                "final_obs": final_obs,
                "_final_obs": done,
                "final_info": dict(info),
                "_final_info": done,
            }
            obs, _ = self._reset_runs(runs)
        return obs, reward, terminated, truncated, info

    def evaluation(self) -> dict[str, Any]:
        """The last step's evaluation quantities of every run (batched; see
        :meth:`ProblemEnv.evaluation`). For the runner, never for an agent."""
        return self.problem.evaluation

    @property
    def run_seeds(self) -> list[Seed]:
        """The root seed of each run's current episode (wrappers derive their noise from them)."""
        if self._run_seeds is None:
            raise ResetNeeded("call reset() first")
        return list(self._run_seeds)

    def render(self) -> tuple[str, ...] | tuple[np.ndarray, ...] | None:
        """One render per run (see :meth:`ProblemEnv.render`). Shows raw data: a human view."""
        if self._board is None:
            return None
        if self.render_mode == "ansi":
            return tuple(self._board.ansi(i) for i in range(self.num_envs))
        return tuple(self._board.rgb(i) for i in range(self.num_envs))

    def public_info(self) -> dict[str, Any]:
        """What agents may know about the instance (shapes, horizon, moment bounds; no data)."""
        return {**self.problem.public_info(), "horizon": self.horizon}


class FamilyVectorEnv(ProblemVectorEnv[P]):
    """Base of the registered native vector envs: builds its problem from keyword arguments.

    Takes the keyword arguments of the family's single env, plus ``num_envs``, ``autoreset_mode``
    and ``max_episode_steps`` (what ``gym.make_vec`` passes; used as the horizon when ``horizon``
    is not given). Subclasses set ``default_horizon`` and write :meth:`make_problem`.
    """

    default_horizon: int | None = None

    def __init__(
        self,
        num_envs: int = 1,
        horizon: int | None = None,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        if horizon is None:  # (never `horizon or ...`: a horizon of 0 is refused, not replaced)
            horizon = self.default_horizon if max_episode_steps is None else max_episode_steps
        horizon = _check_horizon(horizon)
        problem = self.make_problem(num_envs, horizon, **kwargs)
        super().__init__(problem, horizon, autoreset_mode, render_mode)

    def make_problem(self, num_envs: int, horizon: int | None, **kwargs: Any) -> P:
        """The batched problem of ``num_envs`` runs."""
        raise NotImplementedError


def _board(env: Any, problem: Problem, render_mode: str | None) -> Board | None:
    """The render board of an env (``None`` without a render mode: no bookkeeping at all), the
    mode checked against the env's ``metadata``."""
    if render_mode is None:
        return None
    check_choice("render_mode", render_mode, env.metadata["render_modes"])
    return Board(problem.n_runs, n_arms(problem), type(env).__name__.removesuffix("Env"))


def _unbatch(info: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in info.items():
        if isinstance(v, np.ndarray) and v.ndim >= 1:
            x = v[0]
            out[k] = x.item() if isinstance(x, np.generic) else x
        else:
            out[k] = v
    return out


def _batch_info(info: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in info.items():
        out[k] = v
        out[f"_{k}"] = mask
    return out
