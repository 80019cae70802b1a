"""The runner (SPEC §6): drive an agent on a batched problem, and the documented Gymnasium loop.

:func:`simulate` steps a native vector env (no per-step Gymnasium wrappers) for ``n_runs`` runs at
once, records the cumulative clean pseudo-regret at log-spaced checkpoints (never O(T) arrays),
stopping times, recommendations and correctness, the privacy guarantee of the whole system, seeds,
versions and wall time. :func:`play` is the plain step-by-step loop on a ``gym.make`` env; both
give identical numbers for the same seed (tested).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

import privenv
from privenv._stats import sample_sd
from privenv._validation import check_int
from privenv.agents import Agent, as_batched, env_kwargs_for, make
from privenv.privacy.guarantee import PrivacyGuarantee, system_guarantee

#: keys an env may put in ``info`` at the end of an episode that the runner records per run
EPISODE_KEYS = ("stopping_time", "recommendation", "correct")


def checkpoints(horizon: int, n: int = 40) -> np.ndarray:
    """About ``n`` log-spaced integer times in [1, horizon], always including ``horizon``."""
    pts = np.unique(np.geomspace(1, horizon, n).round().astype(np.int64))
    return np.unique(np.append(pts, horizon))


class RunTotals:
    """Derived totals of per-run results with ``regret_curve``, ``steps`` and ``wall_s``."""

    regret_curve: np.ndarray
    steps: np.ndarray
    wall_s: float

    @property
    def regret(self) -> np.ndarray:
        """Final cumulative pseudo-regret of each run."""
        return self.regret_curve[:, -1]

    @property
    def ns_per_run_step(self) -> float:
        """Wall time per (run, round) in nanoseconds."""
        total = float(self.steps.sum())
        return 1e9 * self.wall_s / total if total else float("nan")


@dataclass
class SimulationResult(RunTotals):
    """Per-run results of one configuration (one agent on one env)."""

    env: str
    agent: str
    privacy: PrivacyGuarantee
    n_runs: int
    horizon: int
    seed: int
    first_run: int
    env_kwargs: dict[str, Any]
    agent_kwargs: dict[str, Any]
    checkpoint_times: np.ndarray
    regret_curve: np.ndarray  # (n_runs, len(checkpoint_times)), cumulative pseudo-regret
    steps: np.ndarray  # rounds played by each run
    episode: dict[str, np.ndarray] = field(default_factory=dict)  # EPISODE_KEYS recorded per run
    wall_s: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The JSON object printed by ``privenv run --format json``."""

        def mean_sd(x: np.ndarray | None) -> tuple[float | None, float | None]:
            if x is None or len(x) == 0:
                return None, None
            x = np.asarray(x, dtype=float)
            return float(x.mean()), sample_sd(x)

        stopping = self.episode.get("stopping_time")
        correct = self.episode.get("correct")
        is_bai = stopping is not None
        r_mean, r_sd = (None, None) if is_bai else mean_sd(self.regret)
        s_mean, s_sd = mean_sd(stopping)
        return {
            "env": self.env,
            "agent": self.agent,
            "privacy": str(self.privacy),
            **{k: _json_number(v) for k, v in self.privacy.as_dict().items() if k != "privacy"},
            "runs": self.n_runs,
            "horizon": self.horizon,
            "seed": self.seed,
            "first_run": self.first_run,
            "regret_mean": r_mean,
            "regret_sd": r_sd,
            "stopping_time_mean": s_mean,
            "stopping_time_sd": s_sd,
            "error_rate": None if correct is None else float(1.0 - np.mean(correct)),
            "wall_s": self.wall_s,
            "ns_per_run_step": self.ns_per_run_step,
            "env_kwargs": self.env_kwargs,
            "agent_kwargs": self.agent_kwargs,
            "versions": self.versions,
        }

    def to_frame(self) -> Any:
        """One row per run (pandas): configuration, privacy, seed, final regret, episode keys."""
        import pandas as pd

        rows = {
            "env": self.env,
            "agent": self.agent,
            **self.privacy.as_dict(),
            "seed": self.seed,
            "run": np.arange(self.first_run, self.first_run + self.n_runs),
            "horizon": self.horizon,
            "steps": self.steps,
            "regret": self.regret,
            **{k: v for k, v in self.episode.items()},
            "wall_s": self.wall_s,
        }
        return pd.DataFrame(rows)

    def curve_frame(self) -> Any:
        """Long table of the regret curve: (run, t, regret)."""
        import pandas as pd

        n, m = self.regret_curve.shape
        return pd.DataFrame(
            {
                "run": np.repeat(np.arange(self.first_run, self.first_run + n), m),
                "t": np.tile(self.checkpoint_times, n),
                "regret": self.regret_curve.ravel(),
            }
        )


def _json_number(v: Any) -> Any:
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


def versions() -> dict[str, str]:
    """Versions recorded with every result."""
    import scipy

    return {
        "privenv": privenv.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "gymnasium": gym.__version__,
        "python": platform.python_version(),
    }


Wrapper = Callable[[VectorEnv], VectorEnv]


def make_vector_env(
    env_id: str,
    n_runs: int,
    horizon: int | None = None,
    wrappers: Sequence[Wrapper] = (),
    **env_kwargs: Any,
) -> VectorEnv:
    """The native vector env of ``env_id`` with resets left to the caller (``DISABLED``), then
    ``wrappers`` (functions ``VectorEnv -> VectorEnv``, e.g. local-DP wrappers) applied in order."""
    kwargs = dict(env_kwargs)
    if horizon is not None:
        kwargs["horizon"] = horizon
    env = gym.make_vec(
        env_id,
        num_envs=n_runs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.DISABLED,
        **kwargs,
    )
    for w in wrappers:
        env = w(env)
    return env


def wrapper_guarantees(env: Any) -> tuple[PrivacyGuarantee, ...]:
    """The guarantees declared by the (local-DP) wrappers around ``env``, outermost first."""
    out = []
    while hasattr(env, "env"):
        g = getattr(env, "privacy", None)
        if isinstance(g, PrivacyGuarantee):
            out.append(g)
        env = env.env
    return tuple(out)


def check_wrappers(wrappers: Any) -> tuple[Wrapper, ...]:
    """``wrappers`` as a tuple of functions ``VectorEnv -> VectorEnv``, else ``ValueError`` saying
    what is expected (a single-env wrapper class or a ``(class, kwargs)`` pair is named)."""
    example = "e.g. wrappers=[lambda e: VectorLaplaceReward(e, 1.0, (0.0, 1.0))]"
    if callable(wrappers) or isinstance(wrappers, (str, bytes)) or not isinstance(
        wrappers, Sequence
    ):
        raise ValueError(f"wrappers must be a sequence of functions VectorEnv -> VectorEnv "
                         f"({example}), got {wrappers!r}")
    for i, w in enumerate(wrappers):
        if isinstance(w, type) and issubclass(w, gym.Wrapper):
            raise ValueError(
                f"wrappers[{i}] must be a function VectorEnv -> VectorEnv, got the single-env "
                f"wrapper class {w.__name__}: simulate runs a native vector env; use its vector "
                f"twin with its arguments ({example})"
            )
        if not callable(w):
            raise ValueError(f"wrappers[{i}] must be a function VectorEnv -> VectorEnv "
                             f"({example}), got {w!r}")
    return tuple(wrappers)


def simulate(
    agent: Agent | str | Any,
    env: str | VectorEnv = "HuberBandit-v0",
    *,
    n_runs: int = 1,
    horizon: int | None = None,
    seed: int = 0,
    first_run: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    wrappers: Sequence[Wrapper] = (),
    n_checkpoints: int = 40,
    ledger: bool = False,
) -> SimulationResult:
    """Simulate ``n_runs`` runs of ``agent`` on ``env``.

    Args:
        agent: a zoo agent built for ``n_runs`` runs, a registered name (built with
            ``agent_kwargs`` by :func:`privenv.agents.make`), or any one-run agent object
            (looped, see :class:`privenv.agents.LoopedAgent`).
        env: a registered id (built natively vectorized with ``env_kwargs`` and ``wrappers``) or a
            ``VectorEnv`` with ``autoreset_mode=DISABLED``.
        n_runs: number of runs (the vector env's ``num_envs``).
        horizon: rounds per run (regret) or sample budget (best-arm identification); defaults to
            the env's.
        seed: run *i* uses run ``first_run + i`` of this seed, for the env and the agent alike
            (separate streams, see :mod:`privenv.seeding`).
        first_run: index of the first run, so that any slice of runs can be reproduced alone.
        n_checkpoints: number of log-spaced regret checkpoints.
        ledger: checking mode: attach a per-user privacy ledger to the agent (tests).

    Returns:
        A :class:`SimulationResult`.
    """
    n_runs = check_int("n_runs", n_runs, low=1)
    wrappers = check_wrappers(wrappers)
    env_kwargs = dict(env_kwargs or {})
    agent_kwargs = dict(agent_kwargs or {})
    if isinstance(env, str):
        env_id = env
        venv = make_vector_env(env, n_runs, horizon, wrappers,
                               **env_kwargs_for(agent, env_kwargs))
    else:
        venv = env
        env_id = venv.spec.id if getattr(venv, "spec", None) else type(venv.unwrapped).__name__
        if venv.num_envs != n_runs:
            raise ValueError(f"env has num_envs={venv.num_envs}, but n_runs={n_runs}")
        if venv.metadata.get("autoreset_mode") != AutoresetMode.DISABLED:
            raise ValueError("env must be built with autoreset_mode=AutoresetMode.DISABLED")
    base = venv.unwrapped
    horizon = base.horizon
    if horizon is None:
        raise ValueError("horizon must be given (the env has none)")

    if isinstance(agent, str):
        name = agent
        agent = make(agent, venv, n_runs, **agent_kwargs)
    else:
        agent = as_batched(agent, n_runs)
        name = agent.name or type(agent).__name__
    venv = agent.wrap_env(venv)
    if ledger:
        from privenv.privacy.ledger import Ledger

        # one user per round, unless the agent serves several per round (federated silos)
        agent.ledger = Ledger(n_runs, getattr(agent, "ledger_users", horizon))

    times = checkpoints(horizon, n_checkpoints)
    curve = np.zeros((n_runs, len(times)))
    regret = np.zeros(n_runs)
    steps = np.zeros(n_runs, dtype=np.int64)
    episode: dict[str, np.ndarray] = {}
    done = np.zeros(n_runs, dtype=bool)

    start = time.perf_counter()
    obs, _ = venv.reset(seed=seed, options={"first_run": first_run})
    agent.reset(seed=seed, first_run=first_run)
    k = 0
    any_done = False
    for t in range(1, horizon + 1):
        actions = agent.act_batch(obs)
        obs, rewards, terminated, truncated, info = venv.step(actions)
        agent.observe_batch(actions, rewards, obs)
        if any_done:  # finished runs (best-arm identification) accrue nothing
            live = ~done
            regret += np.where(live, info["regret"], 0.0)
            steps += live
        else:
            regret += info["regret"]
            steps += 1
        if t == times[k]:
            curve[:, k] = regret
            k += 1
        ended = terminated | truncated
        if ended.any():
            ended &= ~done
            for key in EPISODE_KEYS:
                if key in info:
                    value = np.asarray(info[key])
                    col = episode.setdefault(key, np.zeros(n_runs, dtype=value.dtype))
                    col[ended] = value[ended]
            done |= ended
            any_done = True
            if done.all():
                break
    curve[:, k:] = regret[:, None]
    wall = time.perf_counter() - start
    episode.update(agent.episode_info())

    return SimulationResult(
        env=env_id,
        agent=name,
        privacy=system_guarantee(agent.privacy, wrapper_guarantees(venv)),
        n_runs=n_runs,
        horizon=horizon,
        seed=seed,
        first_run=first_run,
        env_kwargs=env_kwargs,
        agent_kwargs=agent_kwargs,
        checkpoint_times=times,
        regret_curve=curve,
        steps=steps,
        episode=episode,
        wall_s=wall,
        versions=versions(),
    )


def play(
    agent: Any,
    env: gym.Env,
    *,
    seed: int = 0,
    run: int = 0,
    max_steps: int | None = None,
) -> dict[str, Any]:
    """The documented step-by-step loop of one run on a plain ``gym.make`` env::

        obs, info = env.reset(seed=seed, options={"first_run": run})
        agent.reset(seed=seed, first_run=run)
        while True:
            action = agent.act(obs)
            obs, reward, terminated, truncated, info = env.step(action)
            agent.observe(action, reward, obs)      # the agent never sees info
            if terminated or truncated:
                break

    ``agent`` is a one-run agent (``n_runs=1``). Returns the run's cumulative pseudo-regret,
    steps and the final ``info``. Same seed and run ⇒ the same numbers as :func:`simulate`.
    """
    if isinstance(agent, Agent):
        env = agent.wrap_env(env)
    obs, info = env.reset(seed=seed, options={"first_run": run})
    if isinstance(agent, Agent):
        agent.reset(seed=seed, first_run=run)
    elif callable(getattr(agent, "reset", None)):
        agent.reset(seed=seed)
    regret, steps = 0.0, 0
    while max_steps is None or steps < max_steps:
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        agent.observe(action, reward, obs)
        regret += info["regret"]
        steps += 1
        if terminated or truncated:
            break
    return {"regret": regret, "steps": steps, "info": info}
