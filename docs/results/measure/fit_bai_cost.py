"""Fit the cost model of ``privenv reproduce bai-local`` / ``bai-global``
(:data:`privenv.reproduce.bai_plan.COST_FACTORS`) to the points measured in docs/results.

A run's estimated pulls are max{a × the lower bound, b × the paper's δ → 0 rate × log(1/δ)}
(:func:`privenv.reproduce.bai_plan.estimated_steps`). For each (agent, threshold) this script
picks the smallest (a, b) that put the estimate at or above the measured mean τ of every point
whose runs all stopped, minimising the summed estimate: ``a`` over 0 and the measured ratios
τ/bound (rounded up to an integer), ``b`` the largest τ/rate left uncovered (rounded up to 0.1).
``a = 0`` drops the lower-bound term, ``b = 0`` the rate term (an agent without a rate: DP-SE).

    python docs/results/measure/fit_bai_cost.py            # the CSVs in docs/results
    python docs/results/measure/fit_bai_cost.py DIR         # bai-local*-points.csv, bai-global*
"""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from privenv.reproduce.bai_plan import FIGURES, Point, model_steps
from privenv.reproduce.bai_rates import upper_bound

RESULTS = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Measured:
    """One measured point: its mean τ, its lower bound and the paper's rate (``None``: none)."""

    figure: str
    point: Point
    tau_mean: float
    bound: float
    rate: float | None


def read(directory: Path) -> list[Measured]:
    """The points of every ``bai-local*-points.csv`` and ``bai-global*-points.csv`` whose runs all
    stopped (a point is counted once: the first file, in name order, that has it)."""
    seen: dict[tuple[str, Point], Measured] = {}
    for figure in ("bai-local", "bai-global"):
        spec = FIGURES[figure]
        for path in sorted(directory.glob(f"{figure}*-points.csv")):
            with path.open() as f:
                for row in csv.DictReader(f):
                    if int(row["non_stopping"]):
                        continue
                    eps = float(row["epsilon"]) if row["epsilon"] else None
                    point = Point(row["instance"], row["agent"], eps, row["threshold"] or None)
                    rate = upper_bound(point.agent, point.instance, eps, point.delta)
                    seen.setdefault((figure, point), Measured(
                        figure, point, float(row["tau_mean"]),
                        max(spec.point_bounds(point).values()),
                        None if rate is None else rate[1]))
    return list(seen.values())


def _total(points: list[Measured], a: float, b: float) -> float:
    """The model's summed estimate over ``points`` with the factors (a, b)."""
    return sum(model_steps((a, b), m.bound, m.rate) for m in points)


def _cover(points: list[Measured], a: float) -> float:
    """The smallest b (up to 0.1) with max{a·bound, b·rate} ≥ τ at every point."""
    left = [m.tau_mean / m.rate for m in points if a * m.bound < m.tau_mean and m.rate]
    return math.ceil(max(left, default=0.0) * 10.0) / 10.0


def fit(points: list[Measured]) -> dict[tuple[str, str | None], tuple[float, float]]:
    """(a, b) per (agent, threshold), as described in the module's docstring."""
    groups: dict[tuple[str, str | None], list[Measured]] = {}
    for m in points:
        groups.setdefault((m.point.agent, m.point.threshold), []).append(m)
    factors: dict[tuple[str, str | None], tuple[float, float]] = {}
    for key, group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        need_a = sorted({float(math.ceil(m.tau_mean / m.bound)) for m in group})
        if any(m.rate is None for m in group):  # no rate: the lower-bound term covers all
            factors[key] = (need_a[-1], 0.0)
            continue
        best: tuple[float, float, float] | None = None
        for a in [0.0, *need_a]:
            b = _cover(group, a)
            total = _total(group, a, b)
            if best is None or total < best[0]:
                best = (total, a, b)
        assert best is not None
        factors[key] = (best[1], best[2])
    return factors


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else RESULTS
    if not directory.is_dir():
        print(f"fit_bai_cost.py: DIR must be a directory of points CSVs, got {directory}",
              file=sys.stderr)
        return 2
    points = read(directory)
    if not points:
        print(f"fit_bai_cost.py: no bai-local*/bai-global*-points.csv in {directory}",
              file=sys.stderr)
        return 2
    for (agent, threshold), (a, b) in fit(points).items():
        group = [m for m in points if (m.point.agent, m.point.threshold) == (agent, threshold)]
        print(f"({agent!r}, {threshold!r}): ({a:g}, {b:g}),  # {len(group)} points, "
              f"estimate / measured {_total(group, a, b) / sum(m.tau_mean for m in group):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
