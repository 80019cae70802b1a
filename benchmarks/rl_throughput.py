"""Env-steps per second of the RL ids, beside CartPole, in one run (docs/results/rl.md).

Run: ``python benchmarks/rl_throughput.py`` (about a minute). For each RL id at its default and
``CartPole-v1``, with uniformly random actions drawn beforehand:

Best-arm identification is measured twice: uniformly random actions of ``Discrete(K + 1)`` stop
after K + 1 steps on average, so most steps start a new episode (a new random order of the arms,
fresh per-arm streams); "pulls only" draws pull actions alone, so runs last their whole budget.

* ``single``: ``gym.make(id)`` (with Gymnasium's checker and order wrappers, as users get it),
  one ``step`` per env-step, resets included;
* ``vector 64``: ``gym.make_vec(id, num_envs=64)`` — the native vector env (the default mode of
  ``make_vec`` for ids with a vector entry point, CartPole's too), env-steps = 64 × calls;
* ``SB3 make_vec_env 64``: SB3's ``make_vec_env(id, n_envs=64)`` (a ``DummyVecEnv`` of 64 single
  envs: the slow path) and ``make_sb3_vec_env(id, n_envs=64)`` (the native path behind
  :class:`privenv.rl.sb3.SB3VecEnv`).

Each cell is env-steps per CPU second of this process (``time.process_time``: the machine is
shared by several sessions, whose load would otherwise divide the wall-clock rates), the best of
3 timings of at least 0.5 CPU-s of stepping (construction and the first reset are not timed); run
it with one BLAS thread (``OMP_NUM_THREADS=1``), so that CPU time is the time of one core.
Compare the rows of one run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import privenv  # noqa: F401  (registers the ids)

IDS = ("HuberBandit-RL-v0", "BestArmIdentification-RL-v0", "LinearContextualBandit-RL-v0",
       "FederatedLinearBandit-RL-v0", "CartPole-v1")
#: best-arm identification with pulls only (a < K): whole budgets, no stop, few resets
PULLS_ONLY = "BestArmIdentification-RL-v0 (pulls only)"


def _actions(env_id: str, space: gym.spaces.Discrete) -> tuple[str, int]:
    """The env id and the number of actions to draw from (pulls only: the K pull actions a < K of
    ``Discrete(K + 1)``)."""
    if env_id == PULLS_ONLY:
        return "BestArmIdentification-RL-v0", space.n - 1
    return env_id, space.n


def _best_rate(step: Callable[[int], int], repeats: int = 3, min_seconds: float = 0.5) -> float:
    """Env-steps per CPU second of this process: the best of ``repeats`` timings of calls to
    ``step(i)`` (which returns the env-steps it made) lasting at least ``min_seconds`` each."""
    best, i = 0.0, 0
    for _ in range(repeats):
        steps, start = 0, time.process_time()
        while (elapsed := time.process_time() - start) < min_seconds:
            for _ in range(50):
                steps += step(i)
                i += 1
        best = max(best, steps / elapsed)
    return best


def single(label: str) -> float:
    env_id, _ = _actions(label, gym.spaces.Discrete(2))
    env = gym.make(env_id)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, _actions(label, env.action_space)[1], 100_000)

    def step(i: int) -> int:
        _, _, terminated, truncated, _ = env.step(int(actions[i % len(actions)]))
        if terminated or truncated:
            env.reset()
        return 1

    return _best_rate(step)


def vector(label: str, n: int) -> float:
    env_id, _ = _actions(label, gym.spaces.Discrete(2))
    env = gym.make_vec(env_id, num_envs=n)
    env.reset(seed=0)
    high = _actions(label, env.single_action_space)[1]
    actions = np.random.default_rng(0).integers(0, high, (1000, n))
    return _best_rate(lambda i: (env.step(actions[i % 1000]), n)[1])


def sb3(label: str, n: int, native: bool) -> float:
    from stable_baselines3.common.env_util import make_vec_env

    from privenv.rl import make_sb3_vec_env

    env_id, _ = _actions(label, gym.spaces.Discrete(2))
    env = (make_sb3_vec_env(env_id, n_envs=n, seed=0) if native
           else make_vec_env(env_id, n_envs=n, seed=0))
    env.reset()
    high = _actions(label, env.action_space)[1]
    actions = np.random.default_rng(0).integers(0, high, (1000, n))
    return _best_rate(lambda i: (env.step(actions[i % 1000]), n)[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=64, help="sub-envs of the vector cases")
    rows = (*IDS[:2], PULLS_ONLY, *IDS[2:])
    parser.add_argument("--ids", nargs="*", default=list(rows), choices=rows, metavar="ID",
                        help="the rows to measure (default: every id and CartPole-v1)")
    args = parser.parse_args(argv)
    n = args.n
    print(f"| id | single | vector {n} | SB3 make_vec_env {n} (DummyVecEnv) | "
          f"make_sb3_vec_env {n} (native) |")
    print("|---|---|---|---|---|")
    for env_id in args.ids:
        native = "n/a" if env_id == "CartPole-v1" else f"{sb3(env_id, n, True):,.0f}"
        print(f"| {env_id} | {single(env_id):,.0f} | {vector(env_id, n):,.0f} | "
              f"{sb3(env_id, n, False):,.0f} | {native} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
