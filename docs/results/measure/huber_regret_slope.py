"""Paper 1's regret against the horizon T: log–log slopes from ``huber-constants`` run at several T.

Each horizon is its own reproduction (every agent sets δ = 1/T from its horizon, so a run to T is
not the first T steps of a longer run)::

    for T in 100000 1000000 10000000; do
        privenv reproduce huber-constants --values 1,0.1 --horizon $T --runs 10 \\
            --output results/huber-slope-T$T
    done
    python docs/results/measure/huber_regret_slope.py results/huber-slope-T*

For each panel, agent and ``constant_scale`` it prints the final regret at each T and the log–log
slope between consecutive horizons, with a 95 % bootstrap interval over runs
(:func:`privenv.plotting.loglog_slope`: run i at every T shares its seed).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from privenv.plotting import loglog_slope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", nargs="+", help="output directories of huber-constants")
    args = parser.parse_args()
    regret: dict[tuple[str, str, str], dict[int, dict[int, float]]] = {}
    for out in args.outputs:
        with (Path(out) / "runs.csv").open() as f:
            for row in csv.DictReader(f):
                key = (row["panel"], row["agent"], row["constant_scale"])
                regret.setdefault(key, {}).setdefault(int(row["horizon"]), {})[
                    int(row["run"])] = float(row["regret"])
    print(f"{'panel':<6} {'agent':<7} {'c':>5}  final regret ×10⁶ at each T"
          "                    slope between consecutive T (95 %)")
    for (panel, agent, c), by_t in sorted(regret.items()):
        ts = np.array(sorted(by_t), dtype=float)
        runs = sorted(set.intersection(*(set(by_t[int(t)]) for t in ts)))
        values = np.array([[by_t[int(t)][r] for t in ts] for r in runs])
        means = " ".join(f"{m / 1e6:>9.3g}" for m in values.mean(axis=0))
        slopes = []
        for i in range(len(ts) - 1):
            fit = loglog_slope(ts[i:i + 2], values[:, i:i + 2], n_boot=2000, seed=0)
            slopes.append(f"{fit.slope:+.2f} [{fit.low:+.2f}, {fit.high:+.2f}]")
        print(f"{panel:<6} {agent:<7} {float(c):>5g}  {means}    {'   '.join(slopes)}")


if __name__ == "__main__":
    main()
