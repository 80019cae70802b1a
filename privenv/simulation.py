"""The runner: drive an agent on a batched problem, and the documented Gymnasium loop.

:func:`simulate` runs ``n_runs`` runs of an agent on a native vector env and records the
cumulative clean pseudo-regret at log-spaced checkpoints (never O(T) arrays), stopping times,
recommendations and correctness, the privacy guarantee of the whole system, seeds, versions and
wall time. A compiled agent on a K-armed problem (:func:`fast_path`) plays each run to its own end
inside compiled code (:mod:`privenv.agents.kernel`), so a run that has stopped costs nothing;
anything else steps every run together through the vector env. :func:`play` is the plain
step-by-step loop on a ``gym.make`` env; all three give identical numbers for the same seed
(tested).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from privenv._jit import kernel_seconds, report_compile
from privenv._memory import (
    check_checkpoints,
    check_runs_fit,
    check_sizes,
    run_bytes,
    runner_bytes_per_run,
)
from privenv._validation import check_int
from privenv.agents import (
    Agent,
    agent_class,
    as_batched,
    env_kwargs_for,
    family_of,
    make,
    public_info_of,
)
from privenv.privacy.guarantee import PrivacyGuarantee, system_guarantee
from privenv.results import RunResults, versions

#: keys an env may put in ``info`` at the end of an episode that the runner records per run
EPISODE_KEYS = ("stopping_time", "recommendation", "correct")


def checkpoints(horizon: int, n: int = 40) -> np.ndarray:
    """About ``n`` log-spaced integer times in [1, horizon], always including ``horizon``."""
    pts = np.unique(np.geomspace(1, horizon, n).round().astype(np.int64))
    return np.unique(np.append(pts, horizon))


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


def estimate_run_bytes(env: Any, agent: Any, n_checkpoints: int,
                       horizon: int | None = None, env_kwargs: dict[str, Any] | None = None
                       ) -> tuple[int, dict[str, int]]:
    """A lower bound of the bytes one run of ``agent`` on ``env`` holds, from sizes alone,
    before anything of the run is allocated; checks the sizes first (one ``ValueError`` naming
    the parameter: the ranges of :data:`privenv._memory.SIZE_LIMITS`, the checkpoints against
    the horizon).

    ``env``: a registered id, whose sizes are read from ``env_kwargs`` as its problem would
    resolve them (:func:`privenv.envs.env_sizes`: nothing is built), with ``horizon`` (``None``:
    the id's default); or a built env (not yet reset), whose sizes are its public description.
    ``agent``: a registered name, whose declared problem quantities say what it allocates, or a
    built agent (allocated already: nothing is added). The bound is
    :func:`privenv._memory.run_bytes` plus the runner's arrays; returned with the sizes (and the
    horizon) it was computed from.
    """
    from privenv.envs import ENV_IDS, env_family, env_sizes

    if isinstance(env, str):
        kwargs = dict(env_kwargs or {})
        check_sizes({**kwargs, "horizon": horizon})  # the sizes given, before any is derived
        if env not in ENV_IDS:  # (not a research id: its constructor checks its arguments)
            return runner_bytes_per_run(n_checkpoints, horizon or 1), {}
        sizes = env_sizes(env, env_kwargs_for(agent, kwargs))
        family, horizon = env_family(env), ENV_IDS[env].horizon if horizon is None else horizon
    else:
        sizes, family = public_info_of(env), family_of(env)
        horizon = getattr(env.unwrapped, "horizon", None)
    check_sizes(sizes)
    horizon = int(horizon or 1)
    check_checkpoints(n_checkpoints, horizon)
    keys: set[str] = set()
    if isinstance(agent, str):
        keys = {p.problem for p in getattr(agent_class(agent), "parameters", {}).values()
                if p.problem}
    per_run = runner_bytes_per_run(n_checkpoints, horizon) + run_bytes(family, sizes, keys)
    return per_run, {**sizes, "horizon": horizon}


def simulate(
    agent: Agent | str | Any,
    env: str | VectorEnv = "HuberBandit-v0",
    *,
    n_runs: int = 1,
    horizon: int | None = None,
    seed: int | None = 0,
    first_run: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    wrappers: Sequence[Wrapper] = (),
    n_checkpoints: int = 40,
    ledger: bool = False,
) -> RunResults:
    """Simulate ``n_runs`` runs of ``agent`` on ``env``.

    Args:
        agent: a zoo agent built for ``n_runs`` runs, a registered name (built with
            ``agent_kwargs`` by :func:`privenv.agents.make`), or any one-run agent object
            (looped, see :class:`privenv.agents.LoopedAgent`).
        env: a registered id (built natively vectorized with ``env_kwargs`` and ``wrappers``) or a
            ``VectorEnv`` with ``autoreset_mode=DISABLED``.
        n_runs: number of runs (the vector env's ``num_envs``).
        horizon: rounds per run (regret) or sample budget (best-arm identification), ≥ 1;
            defaults to the env's.
        seed: run *i* uses run ``first_run + i`` of this seed, for the env and the agent alike
            (separate streams, see :mod:`privenv.seeding`); ``None``: a fresh seed drawn from OS
            entropy, recorded in the result (so the runs can be repeated).
        first_run: index of the first run, so that any slice of runs can be reproduced alone.
        n_checkpoints: number of log-spaced regret checkpoints, at most the horizon (or the
            default 40; with a shorter horizon every step is one).
        ledger: checking mode: attach a per-user privacy ledger to the agent (tests).

    Returns:
        A :class:`~privenv.results.RunResults` (the one results record of simulations,
        sweeps, the store and the reproductions).

    Every size the run allocates from is checked before anything of the run is built
    (:mod:`privenv._memory`: the sanity ranges of K, A, d, M and the horizon, the checkpoints
    against the horizon, and a lower bound of the batch's memory against what this process may
    allocate), so an impossible request is one ``ValueError`` naming the parameter, at once.
    """
    # -- arguments (checked before anything is built) --
    n_runs = check_int("n_runs", n_runs, low=1)
    horizon = None if horizon is None else check_int("horizon", horizon, low=1)
    seed = secrets.randbits(63) if seed is None else check_int("seed", seed, low=0)
    first_run = check_int("first_run", first_run, low=0)
    n_checkpoints = check_int("n_checkpoints", n_checkpoints, low=1)
    wrappers = check_wrappers(wrappers)
    env_kwargs = dict(env_kwargs or {})
    agent_kwargs = dict(agent_kwargs or {})
    if isinstance(env, str):
        per_run, sizes = estimate_run_bytes(env, agent, n_checkpoints, horizon, env_kwargs)
        check_runs_fit(n_runs, per_run, sizes=sizes)
    # -- building --
    if isinstance(env, str):
        env_id = env
        venv = make_vector_env(env, n_runs, horizon, wrappers,
                               **env_kwargs_for(agent, env_kwargs))
    else:
        venv = env
        spec = getattr(venv, "spec", None)
        env_id = spec.id if spec else type(venv.unwrapped).__name__
        if venv.num_envs != n_runs:
            raise ValueError(f"env has num_envs={venv.num_envs}, but n_runs={n_runs}")
        if venv.metadata.get("autoreset_mode") != AutoresetMode.DISABLED:
            raise ValueError("env must be built with autoreset_mode=AutoresetMode.DISABLED")
        if getattr(venv.unwrapped, "problem", None) is not None:  # (else: a user's own env)
            per_run, sizes = estimate_run_bytes(venv, agent, n_checkpoints)
            check_runs_fit(n_runs, per_run, sizes=sizes)
    base: Any = venv.unwrapped  # a privenv env, or a user's own with a horizon
    horizon = base.horizon
    if horizon is None:
        raise ValueError("horizon must be given (the env has none)")

    if isinstance(agent, str):
        name = agent
        agent = make(agent, venv, n_runs, **agent_kwargs)
    else:
        agent = as_batched(agent, n_runs)
        name = agent.name or type(agent).__name__
    venv = system_env(agent, venv)
    if ledger:
        from privenv.privacy.ledger import Ledger

        # one user per round, unless the agent serves several per round (federated silos)
        agent.ledger = Ledger(n_runs, getattr(agent, "ledger_users", horizon))

    times = checkpoints(horizon, n_checkpoints)
    # wall time = setup + loop; the kernels' compile or load (in either) is timed apart
    kernels_before = kernel_seconds()
    start = time.perf_counter()
    obs, _ = venv.reset(seed=seed, options={"first_run": first_run})
    agent.reset(seed=seed, first_run=first_run)
    fast = None if ledger else fast_path(agent, venv)
    if fast is not None:  # its driver compiled or loaded before the loop
        from privenv.driver import prepare_fast

        play_fast = prepare_fast(*fast, times, horizon)
    kernels_setup, loop_start = kernel_seconds(), time.perf_counter()
    if fast is not None:
        curve, regret, steps, episode = _fast_results(fast[1], play_fast())
    else:
        curve, regret, steps, episode = _run_stepwise(agent, venv, obs, times, horizon)
    end = time.perf_counter()
    kernels_after = kernel_seconds()
    compiled = kernels_after[0] - kernels_before[0]
    report_compile(compiled)
    episode.update(agent.episode_info())

    return RunResults(
        env=env_id,
        agent=name,
        privacy=system_guarantee(agent.privacy, wrapper_guarantees(venv)),
        runs=np.arange(first_run, first_run + n_runs),
        n_checkpoints=n_checkpoints,
        horizon=horizon,
        seed=seed,
        env_kwargs=env_kwargs,
        agent_kwargs=agent_kwargs,
        checkpoint_times=times,
        regret_curve=curve,
        steps=steps,
        episode=episode,
        wall_s=end - start,
        compile_s=compiled + kernels_after[1] - kernels_before[1],
        loop_s=end - loop_start - sum(kernels_after) + sum(kernels_setup),
        versions=versions(),
    )


def system_env(agent: Agent, env: Any) -> Any:
    """The env ``agent`` is run on, given the bare one (a single or a vector env): inside the
    agent's declared local randomizer if it is a local-DP system
    (:meth:`~privenv.agents.base.Agent.local_randomizer`, e.g. CTB-TT's randomized response:
    the learner only ever sees released values, and the guarantee is the randomizer's), then
    the agent's own :meth:`~privenv.agents.base.Agent.wrap_env`. :func:`simulate` and
    :func:`play` call it once per env; an audit or a user driving an agent by hand calls it
    too."""
    randomizer = agent.local_randomizer()
    if randomizer is not None:
        from privenv.wrappers import local_system

        env = local_system(env, randomizer)
    return agent.wrap_env(env)


def fast_path(agent: Any, venv: Any) -> tuple[Any, Any, Any] | None:
    """``(agent, problem, local)`` if ``simulate`` may run ``agent`` on ``venv`` (both reset)
    inside compiled code (:func:`privenv.driver.run_fast`), else ``None``.

    It may when each part has a compiled view (``kernel_view()``, :mod:`privenv.driver`): the
    agent (a compiled agent whose act and observe are its kernels), the env's problem (its
    reward streams), and between them nothing, or one local-DP wrapper whose randomizer is
    compiled (e.g. CTB-TT's randomized response; ``local`` is then its randomizer and noise).
    Anything else (a Python agent, another wrapper, a randomizer that overrides its Python
    methods) runs step by step, to the same numbers.
    """
    if getattr(agent, "kernel_view", lambda: None)() is None:
        return None
    problem = getattr(venv.unwrapped, "problem", None)
    if problem is None or problem.kernel_view() is None:
        return None
    local = None
    env = venv
    while env is not venv.unwrapped:
        method = getattr(type(env), "kernel_view", None)  # (a wrapper's own, never forwarded)
        view = method(env) if method is not None else None
        if view is None or local is not None:
            return None
        local = view
        env = env.env
    return agent, problem, local


def _fast_results(problem: Any, out: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    dict[str, np.ndarray]]:
    """The runner's arrays from the fast path's :class:`~privenv.driver.Outcome`."""
    episode: dict[str, np.ndarray] = {}
    if problem.terminates:  # best-arm identification: what the env's last info would say
        episode = {"stopping_time": out.pulls, "recommendation": out.recommendation,
                   "correct": out.correct}
    return out.curve, out.regret, out.steps, episode


def _run_stepwise(agent: Agent, venv: VectorEnv, obs: Any, times: np.ndarray,
                  horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                         dict[str, np.ndarray]]:
    """The runner's loop: every run steps together until the last one ends."""
    n_runs = venv.num_envs
    curve = np.zeros((n_runs, len(times)))
    regret = np.zeros(n_runs)
    steps = np.zeros(n_runs, dtype=np.int64)
    episode: dict[str, np.ndarray] = {}
    done = np.zeros(n_runs, dtype=bool)
    k = 0
    any_done = False
    for t in range(1, horizon + 1):
        actions = agent.act_batch(obs)
        obs, rewards, terminated, truncated, info = venv.step(actions)
        agent.observe_batch(actions, rewards, obs)
        step_regret = step_evaluation(venv, info)["regret"]
        if any_done:  # finished runs (best-arm identification) accrue nothing
            live = ~done
            regret += np.where(live, step_regret, 0.0)
            steps += live
        else:
            regret += step_regret
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
    return curve, regret, steps, episode


def step_evaluation(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The evaluation quantities of ``env``'s last step: ``info``, or, where the problem keeps
    them out of ``info`` because they reveal raw data (a data set's labels), the runner's channel
    ``env.unwrapped.evaluation()`` (never given to an agent or a wrapper's caller)."""
    if "regret" in info:
        return info
    return env.unwrapped.evaluation()


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
        env = system_env(agent, env)
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
        regret += step_evaluation(env, info)["regret"]
        steps += 1
        if terminated or truncated:
            break
    return {"regret": regret, "steps": steps, "info": info}
