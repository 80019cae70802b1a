"""Benchmark of the linear contextual bandit (issue 5). Run: ``python benchmarks/linear.py``.

For LinUCB/OFUL on ``LinearContextualBandit-v0`` with d = 10, A = 100 (unit-sphere features,
±1 rewards), prints, measured in one run on this machine:

* the fast path: ``simulate`` with 100 runs batched (``--runs``), its wall time and cost per
  run-step (one round of one run);
* the documented step-by-step loop on a ``gym.make`` env (``privenv.simulation.play``, one run at a
  time) on the first ``--slow-runs`` runs (default 3), its cost per run-step;
* their ratio (target ≥ 20×), and whether both paths gave identical regrets on the runs they share;
* the same for a null agent (action 0 every round): the environment's own cost per run-step in
  each path, which every agent pays; and the agents' own cost (total − env only) in each path.

The horizon (``--horizon``, default 2000) only keeps the slow loop short: the ratio is per
run-step. ``--d`` and ``--A`` change the instance (the env draws A·d Gaussians per run-step).
``--agents`` adds the local-DP systems (e.g. ``linucb,ldp-linucb,input-perturbation-ols``; ε = 1),
whose per-step cost includes their user-side randomizer wrapper. The machine is shared and noisy:
compare the ratios, read absolute times as context.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import gymnasium as gym
import numpy as np
from common import machine_line, timed_play, with_epsilon

from privenv import agents
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
