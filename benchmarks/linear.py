"""Benchmark of the linear contextual bandit (issue 5). Run: ``python benchmarks/linear.py``.

For LinUCB/OFUL on ``LinearContextualBandit-v0`` with d = 10, A = 100 (unit-sphere features,
±1 rewards), prints, measured in one run on this machine:

* the fast path: ``simulate`` with 100 runs batched (``--runs``), its wall time and cost per
  run-step (one round of one run);
* the documented step-by-step loop on a ``gym.make`` env (``privenv.simulation.play``, one run at a
  time) on the first ``--slow-runs`` runs (default 3), its cost per run-step;
* their ratio (target ≥ 20×), and whether both paths gave identical regrets on the runs they share;
* the same for a null agent (action 0 every round): the environment's own cost per run-step in
  each path, which every agent pays; and the agents' own cost (total − env only) in each path;
* the floor under the batched path: what drawing one round's A·d feature values costs on one
  stream (float32 uniforms alone, numpy's ziggurat normals, the env's sampler, and the fastest
  numpy variant we found, which the env does not use because it would change every linear
  result), and the ratio each floor would allow if the rest of the batched path (env and agent)
  cost nothing.

The horizon (``--horizon``, default 2000) only keeps the slow loop short: the ratio is per
run-step. ``--d`` and ``--A`` change the instance (the env draws A·d Gaussians per run-step).
``--agents`` adds the local-DP systems (e.g. ``linucb,ldp-linucb,input-perturbation-ols``; ε = 1),
whose per-step cost includes their user-side randomizer wrapper. The machine is shared and noisy:
compare the ratios, read absolute times as context.
"""

from __future__ import annotations

import argparse
import math
import sys
import timeit
from typing import Any

import gymnasium as gym
import numpy as np
from common import machine_line, timed_play, with_epsilon

from privenv import agents
from privenv.problems.linear import _unit_sphere
from privenv.simulation import simulate

ENV_ID = "LinearContextualBandit-v0"
INSTANCE = {"d": 10, "A": 100}
EPSILON = 1.0


class NullAgent(agents.Agent):
    """Always plays action 0: its cost per run-step is the environment's (contexts, rewards,
    stepping), the floor under every agent's in each path."""

    name = "env only"

    def __init__(self, d: int = 0, n_runs: int = 1) -> None:
        super().__init__(n_runs)

    def reset_state(self) -> None:
        pass

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_runs, dtype=np.int64)

    def observe_batch(self, actions: np.ndarray, rewards: np.ndarray,
                      observations: np.ndarray) -> None:
        self.t += 1


def fast_vs_slow(name: str, runs: int, slow_runs: int, horizon: int,
                 seed: int = 0) -> dict[str, Any]:
    null = name == NullAgent.name
    kw = {} if null else with_epsilon(name, EPSILON)
    fast_agent = NullAgent(n_runs=runs) if null else name
    fast = simulate(fast_agent, ENV_ID, n_runs=runs, horizon=horizon, seed=seed,
                    env_kwargs=INSTANCE, agent_kwargs=kw)

    env = gym.make(ENV_ID, horizon=horizon, max_episode_steps=horizon, **INSTANCE)
    agent = NullAgent() if null else agents.make(name, env, 1, **kw)
    slow, slow_wall, slow_ns = timed_play(agent, env, slow_runs, seed)
    same = all(r["regret"] == fast.regret[i] for i, r in enumerate(slow))
    return {
        "agent": name,
        "privacy": str(fast.privacy),
        "regret_mean": float(fast.regret.mean()),
        "regret_sd": float(fast.regret.std(ddof=1)),
        "fast_wall_s": fast.wall_s,
        "fast_ns": fast.ns_per_run_step,
        "slow_wall_s": slow_wall,
        "slow_ns": slow_ns,
        "identical": same,
    }


def _unit_sphere_paired(gen: np.random.Generator, rows: int, d: int) -> np.ndarray:
    """Floor probe only (not the env's sampler): Box–Muller pairs laid out inside a row, so that
    ‖g‖² is the sum of the pairs' r² and the normalization needs no pass over the coordinates."""
    h = (d + 1) // 2
    m = rows * h
    u = gen.random(2 * m, dtype=np.float32)
    u += np.float32(2.0**-25)
    r2 = np.log(u[:m]).reshape(rows, h)
    r2 *= np.float32(-2.0)
    angle = u[m:] * np.float32(2.0 * math.pi)
    cos, sin = np.cos(angle).reshape(rows, h), np.sin(angle).reshape(rows, h)
    norm2 = r2[:, : d // 2] @ np.ones(d // 2, dtype=np.float32)
    if d % 2:
        norm2 += r2[:, -1] * cos[:, -1] ** 2
    r2 /= norm2[:, None]
    np.sqrt(r2, out=r2)
    out = np.empty((rows, 2 * h), dtype=np.float32)
    np.multiply(r2, cos, out=out[:, 0::2])
    np.multiply(r2, sin, out=out[:, 1::2])
    return out[:, :d]


def sampler_floor(A: int, d: int, rounds: int = 32) -> dict[str, float]:
    """ns per run-step of drawing ``rounds`` rounds of A·d feature values at once on one stream
    (the env refills each run's buffer in blocks of about that many rounds); best of 5."""
    gen = np.random.default_rng(0)
    probes = {
        "float32 uniforms alone": lambda: gen.random(rounds * A * d, dtype=np.float32),
        "numpy ziggurat normals": lambda: gen.standard_normal((rounds, A, d), dtype=np.float32),
        "env sampler (Box–Muller + g/‖g‖)": lambda: _unit_sphere(gen, (rounds, A), d),
        "paired Box–Muller (probe)": lambda: _unit_sphere_paired(gen, rounds * A, d),
    }
    return {name: 1e9 * min(timeit.repeat(f, number=50, repeat=5)) / (50 * rounds)
            for name, f in probes.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100, help="batched runs (100)")
    parser.add_argument("--slow-runs", type=int, default=3, help="runs of the gym.make loop (3)")
    parser.add_argument("--horizon", type=int, default=2000, help="rounds per run (2000)")
    parser.add_argument("--agents", default="linucb")
    parser.add_argument("--d", type=int, default=INSTANCE["d"], help="dimension (10)")
    parser.add_argument("--A", type=int, default=INSTANCE["A"], help="actions (100)")
    args = parser.parse_args(argv)
    INSTANCE.update(d=args.d, A=args.A)

    print(machine_line())
    print(f"\nfast path vs step-by-step gym.make loop — {ENV_ID} d = {INSTANCE['d']}, "
          f"A = {INSTANCE['A']}, T = {args.horizon}, {args.runs} batched runs, {args.slow_runs} "
          f"looped runs (private agents at ε = {EPSILON})")
    header = (f"{'agent':<23} {'regret':>8} {'sd':>6} {'simulate ns':>12} {'gym.make ns':>12} "
              f"{'ratio':>7} {'simulate s':>11} {'gym.make s':>11}  same")
    print(header)
    print("-" * len(header))
    ratios, rows = [], {}
    for name in [NullAgent.name] + [a.strip() for a in args.agents.split(",") if a.strip()]:
        r = rows[name] = fast_vs_slow(name, args.runs, args.slow_runs, args.horizon)
        ratio = r["slow_ns"] / r["fast_ns"]
        if name != NullAgent.name:
            ratios.append(ratio)
        print(f"{name:<23} {r['regret_mean']:>8.1f} {r['regret_sd']:>6.1f} {r['fast_ns']:>12.0f} "
              f"{r['slow_ns']:>12.0f} {ratio:>6.1f}× {r['fast_wall_s']:>11.2f} "
              f"{r['slow_wall_s']:>11.2f}  {'yes' if r['identical'] else 'NO'}", flush=True)
    print(f"min ratio {min(ratios):.1f}× (target ≥ 20×)")
    env = rows[NullAgent.name]
    print(f"\nthe environment alone (action 0 every round) costs {env['fast_ns']:.0f} ns per "
          f"run-step batched and {env['slow_ns']:.0f} ns through gym.make: it draws A·d = "
          f"{INSTANCE['A'] * INSTANCE['d']} Gaussians per run-step in both paths. The agents' "
          "own cost (total − env only):")
    for name, r in rows.items():
        if name != NullAgent.name:
            fast, slow = r["fast_ns"] - env["fast_ns"], r["slow_ns"] - env["slow_ns"]
            print(f"  {name:<23} simulate {fast:>8.0f} ns, gym.make {slow:>8.0f} ns, ratio "
                  f"{slow / fast if fast > 0 else float('nan'):.1f}×")
    slowest = max(r["slow_ns"] for name, r in rows.items() if name != NullAgent.name)
    print(f"\nfloor: drawing one round's A·d = {INSTANCE['A'] * INSTANCE['d']} feature values "
          f"(ns per run-step), and the ratio the gym.make loop's {slowest:.0f} ns would allow if "
          "nothing else cost anything:")
    print(f"  {'batched env, action 0 (measured above)':<40} {env['fast_ns']:>8.0f}   "
          f"{slowest / env['fast_ns']:>5.1f}×")
    for name, ns in sampler_floor(INSTANCE["A"], INSTANCE["d"]).items():
        print(f"  {name:<40} {ns:>8.0f}   {slowest / ns:>5.1f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
