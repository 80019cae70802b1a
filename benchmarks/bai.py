"""Benchmark of best-arm identification (SPEC §9, item 2). Run: ``python benchmarks/bai.py``.

For TTUCB, CTB-TT and AdaP-TT on μ1 with δ = 0.01 (private agents at ``--epsilon``, default 1,
theoretical thresholds), prints, measured in one run on this machine:

* the fast path: ``simulate`` with 1000 runs batched (``--runs``), its wall time and cost per
  run-step (a run-step is one pull of one run; runs that have stopped are not counted, although
  the batched runner keeps stepping them until the last one stops);
* the documented step-by-step loop on a ``gym.make`` env (``privenv.simulation.play``, one run at a
  time) on the first ``--slow-runs`` runs (default 3), its cost per run-step;
* their ratio (target ≥ 50×), and whether both paths gave the same stopping times and
  recommendations on the runs they share.

The machine is shared and noisy: compare the ratios, read absolute times as context.
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

ENV_ID = "BestArmIdentification-v0"
INSTANCE = "mu1"
DELTA = 0.01


def fast_vs_slow(name: str, runs: int, slow_runs: int, epsilon: float,
                 seed: int = 0) -> dict[str, Any]:
    kw = with_epsilon(name, epsilon, delta=DELTA)
    env_kwargs = agents.env_kwargs_for(name, {"instance": INSTANCE})
    fast = simulate(name, ENV_ID, n_runs=runs, seed=seed, env_kwargs=env_kwargs, agent_kwargs=kw)

    env = gym.make(ENV_ID, **env_kwargs)
    agent = agents.make(name, env, 1, **kw)
    slow, slow_wall, slow_ns = timed_play(agent, env, slow_runs, seed)
    tau = np.array([r["info"]["stopping_time"] for r in slow])
    rec = np.array([r["info"]["recommendation"] for r in slow])
    same = (np.array_equal(tau, fast.episode["stopping_time"][:slow_runs])
            and np.array_equal(rec, fast.episode["recommendation"][:slow_runs]))
    tau_all = fast.episode["stopping_time"]
    return {
        "agent": name,
        "privacy": str(fast.privacy),
        "tau_mean": float(tau_all.mean()),
        "tau_sd": float(tau_all.std(ddof=1)),
        "tau_max_over_mean": float(tau_all.max() / tau_all.mean()),
        "errors": int((~fast.episode["correct"]).sum()),
        "fast_wall_s": fast.wall_s,
        "fast_ns": fast.ns_per_run_step,
        "slow_wall_s": slow_wall,
        "slow_ns": slow_ns,
        "identical": same,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000, help="batched runs (1000)")
    parser.add_argument("--slow-runs", type=int, default=3, help="runs of the gym.make loop (3)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="ε of the private agents (1)")
    parser.add_argument("--agents", default="ttucb,ctb-tt,adap-tt")
    args = parser.parse_args(argv)

    print(machine_line())
    print(f"\nfast path vs step-by-step gym.make loop — {ENV_ID} {INSTANCE}, δ = {DELTA}, "
          f"ε = {args.epsilon} (private agents), {args.runs} batched runs, {args.slow_runs} "
          "looped runs")
    header = (f"{'agent':<9} {'mean τ':>9} {'sd τ':>8} {'max/mean':>8} {'err':>4} "
              f"{'simulate ns':>12} {'gym.make ns':>12} {'ratio':>7} {'simulate s':>11} "
              f"{'gym.make s':>11}  same")
    print(header)
    print("-" * len(header))
    ratios = []
    for name in (a.strip() for a in args.agents.split(",") if a.strip()):
        r = fast_vs_slow(name, args.runs, args.slow_runs, args.epsilon)
        ratio = r["slow_ns"] / r["fast_ns"]
        ratios.append(ratio)
        print(f"{name:<9} {r['tau_mean']:>9.0f} {r['tau_sd']:>8.0f} {r['tau_max_over_mean']:>8.2f} "
              f"{r['errors']:>4} {r['fast_ns']:>12.0f} {r['slow_ns']:>12.0f} {ratio:>6.1f}× "
              f"{r['fast_wall_s']:>11.1f} {r['slow_wall_s']:>11.1f}  "
              f"{'yes' if r['identical'] else 'NO'}", flush=True)
    print(f"min ratio {min(ratios):.1f}× (target ≥ 50×); ns per run-step counts the pulls of "
          "runs still going")
    return 0


if __name__ == "__main__":
    sys.exit(main())
