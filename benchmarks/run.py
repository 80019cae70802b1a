"""Benchmark of the Huber MAB. Run: ``python benchmarks/run.py``.

Prints, measured in one run on this machine:

1. the wall time of the full ``huber-fig1`` reproduction (6 panels × 3 agents × 30 runs ×
   T = 10⁵ on one worker process per CPU, simulations + CSVs + figure; target: about a minute on
   2 cores). ``--fraction F`` runs the figure at horizon F·T instead and extrapolates the wall time
   by 1/F (stated in the output when used);
2. for PRAE-R, PRAE-C, DPRSE and UCB1 at ε = 0.5 on the default ``HuberBandit-v0`` instance
   (Student-t, α = 5 %): the cost per run-step of the fast path (``simulate`` with
   ``n_runs = 30``) and of the documented step-by-step loop on a ``gym.make`` env
   (``privenv.simulation.play``, one run at a time, 30 runs), and their ratio (target ≥ 20×);
   the fast path's time is the median of 3 repetitions (it takes well under a second).
   Both paths play the same 30 runs; the output says whether their final regrets are identical.
   The horizon (``--horizon``, default 10⁴) only keeps the slow loop to tens of seconds: the
   ratio is per run-step;
3. the **sampling floor**: the CPU time of drawing as many Student-t (ν = 2.5) samples as the
   figure has run-steps, vectorized in numpy (blocks of 10⁶), against the figure's simulation
   time (the sum of its cells' times): target ≤ 5×. The batched numpy agents the compiled kernels
   replaced cost 34× (1.44 µs per run-step against 42 ns per draw, measured before their removal;
   benchmarks/README.md).

The machine is shared and noisy: compare the ratios, read absolute times as context.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from typing import Any

import gymnasium as gym
import numpy as np
from common import machine_line, timed_play, with_epsilon

from privenv import agents
from privenv.reproduce import huber_fig1
from privenv.reproduce.cells import default_workers
from privenv.simulation import simulate

ENV_ID = "HuberBandit-v0"
EPSILON = 0.5
FAST_REPEATS = 3


def fast_vs_slow(name: str, runs: int, horizon: int, seed: int = 0) -> dict[str, Any]:
    """ns per run-step of ``simulate`` (all runs batched) and of ``play`` (one run at a time)."""
    kw = with_epsilon(name, EPSILON)
    # the fast path takes a fraction of a second: median of FAST_REPEATS timings, against noise
    fasts = [simulate(name, ENV_ID, n_runs=runs, horizon=horizon, seed=seed, agent_kwargs=kw)
             for _ in range(FAST_REPEATS)]
    fast = sorted(fasts, key=lambda r: r.wall_s)[len(fasts) // 2]

    env = gym.make(ENV_ID, horizon=horizon, max_episode_steps=horizon)
    agent = agents.make(name, env, 1, **kw)
    slow, slow_wall, slow_ns = timed_play(agent, env, runs, seed)
    slow_regret = np.array([r["regret"] for r in slow])
    return {
        "agent": name,
        "fast_wall_s": fast.wall_s,
        "fast_ns": fast.ns_per_run_step,
        "slow_wall_s": slow_wall,
        "slow_ns": slow_ns,
        "identical": bool(np.array_equal(fast.regret, slow_regret)),
        "max_abs_diff": float(np.max(np.abs(fast.regret - slow_regret))),
    }


def full_figure(fraction: float, workers: int) -> dict[str, Any]:
    horizon = round(fraction * huber_fig1.PAPER.horizon)
    with tempfile.TemporaryDirectory() as out:
        rep = huber_fig1.reproduce(out, horizon=horizon, workers=workers, progress=False)
        cells = sum(r.result.wall_s for r in rep.results)
        steps = len(rep.results) * rep.cells[0].runs * horizon
        return {
            "horizon": horizon,
            "wall_s": rep.wall_s,
            "simulation_wall_s": rep.simulation_wall_s,
            "cells_sum_s": cells,
            "ns_per_run_step": 1e9 * cells / steps,
            "run_steps": steps,
            "table": rep.table(),
        }


def student_t_floor(n: int, block: int = 1_000_000) -> float:
    """CPU seconds to draw ``n`` Student-t (ν = 2.5) samples vectorized in numpy."""
    rng = np.random.default_rng(0)
    start = time.process_time()
    left = n
    while left > 0:
        rng.standard_t(2.5, size=min(block, left))
        left -= block
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=10_000,
                        help="horizon of the fast/slow comparison (default: 10000)")
    parser.add_argument("--runs", type=int, default=30, help="runs of the comparison (30)")
    parser.add_argument("--agents", default="prae-r,prae-c,dprse,ucb1")
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="run huber-fig1 at this fraction of T = 10^5 and extrapolate (1)")
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--skip-figure", action="store_true", help="only the fast/slow ratio")
    args = parser.parse_args(argv)
    if not 0 < args.fraction <= 1:
        parser.error("--fraction must be in (0, 1]")

    print(machine_line())

    names = [a.strip() for a in args.agents.split(",") if a.strip()]
    print(f"\n(2) fast path vs step-by-step gym.make loop — {ENV_ID} default instance, "
          f"ε = {EPSILON}, {args.runs} runs × T = {args.horizon}")
    header = (f"{'agent':<10} {'simulate ns/run-step':>21} {'gym.make ns/run-step':>21} "
              f"{'ratio':>7} {'simulate s':>11} {'gym.make s':>11}  same regrets")
    print(header)
    print("-" * len(header))
    ratios = []
    for name in names:
        r = fast_vs_slow(name, args.runs, args.horizon)
        ratio = r["slow_ns"] / r["fast_ns"]
        ratios.append(ratio)
        same = "yes" if r["identical"] else f"NO (max diff {r['max_abs_diff']:.3g})"
        print(f"{name:<10} {r['fast_ns']:>21.0f} {r['slow_ns']:>21.0f} {ratio:>6.1f}× "
              f"{r['fast_wall_s']:>11.2f} {r['slow_wall_s']:>11.2f}  {same}", flush=True)
    print(f"min ratio {min(ratios):.1f}× (target ≥ 20×)")

    if not args.skip_figure:
        print(f"\n(1) huber-fig1 reproduction, {args.workers} worker processes, "
              + ("full scale (6 panels × 3 agents × 30 runs × T = 100000)" if args.fraction == 1
                 else f"T = {round(args.fraction * 1e5)} = {args.fraction:g} of the full horizon, "
                      "extrapolated by 1/fraction"), flush=True)
        f = full_figure(args.fraction, args.workers)
        scale = 1.0 / args.fraction
        print(f"wall time: {f['wall_s']:.1f} s (simulations {f['simulation_wall_s']:.1f} s, "
              f"CSVs + figure {f['wall_s'] - f['simulation_wall_s']:.1f} s)")
        if args.fraction != 1:
            print(f"extrapolated to T = 100000: {scale * f['simulation_wall_s']:.0f} s of "
                  "simulation")
        print(f"sum of per-cell simulation times {f['cells_sum_s']:.1f} s → parallel speed-up "
              f"{f['cells_sum_s'] / f['simulation_wall_s']:.2f}× on {args.workers} workers; "
              f"{f['ns_per_run_step']:.0f} ns per run-step inside a cell")
        print(f"target: about 60 s on 2 cores → measured/target = {f['wall_s'] * scale / 60:.2f}")
        floor = student_t_floor(f["run_steps"])
        print(f"\n(3) sampling floor: {f['run_steps']:.3g} Student-t draws in numpy take "
              f"{floor:.2f} s CPU ({1e9 * floor / f['run_steps']:.0f} ns per draw); the figure's "
              f"cells {f['cells_sum_s']:.2f} s → {f['cells_sum_s'] / floor:.1f}× the floor "
              "(target ≤ 5×; the numpy agents: 34×)")
        print(f["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
