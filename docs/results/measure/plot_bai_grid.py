"""Draw paper 3's Figure 3 (``bai-local``) or Figures 4–5 (``bai-global``) from a points CSV in
docs/results, whose points may come from several stores and run counts (e.g. 1000 runs at most
ε, 25 at the costliest ones; the ``runs`` column says which).

The panels are those of ``privenv reproduce bai-local`` / ``bai-global``
(:func:`privenv.reproduce.bai_results.draw`): one per instance, mean ± 1 sd against ε, the lower
bounds in grey, hollow markers where runs reached the sample budget.

    python docs/results/measure/plot_bai_grid.py bai-local docs/results/bai-local-grid-points.csv \\
        docs/_static/results/bai-local-grid.png
"""

from __future__ import annotations

import csv
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from privenv.reproduce.bai_plan import FIGURES, Point  # noqa: E402


@dataclass(frozen=True)
class Summary:
    """The columns of one points.csv row that the figure reads."""

    point: Point
    runs: int
    tau_mean: float
    tau_sd: float
    non_stopping: int


def read(path: Path) -> list[Summary]:
    with path.open() as f:
        return [Summary(Point(row["instance"], row["agent"],
                              float(row["epsilon"]) if row["epsilon"] else None,
                              row["threshold"] or None),
                        int(row["runs"]), float(row["tau_mean"]), float(row["tau_sd"]),
                        int(row["non_stopping"]))
                for row in csv.DictReader(f)]


def _label(s: Summary) -> str:
    return f"{s.point.agent} [{s.point.threshold}]" if s.point.threshold else s.point.agent


def _epsilons(values: set[float], grid: list[float]) -> str:
    """``0.05 … 1000`` for three or more ε that are a contiguous stretch of the CSV's ε, else the
    list."""
    eps = sorted(values)
    lo = grid.index(eps[0])
    if len(eps) >= 3 and grid[lo:lo + len(eps)] == eps:
        return f"{eps[0]:g} … {eps[-1]:g}"
    return ", ".join(f"{e:g}" for e in eps)


def runs_label(points: list[Summary]) -> str:
    """"1000 runs" when every point has 1000 runs, else the main count and, for each other count,
    the ε and instances it covers, with the point's label where other points at the same ε and
    instance have another count."""
    private = [(s, s.point.epsilon) for s in points if s.point.epsilon is not None]
    counts = Counter(s.runs for s, _ in private)
    if len(counts) <= 1:
        return f"{next(iter(counts)) if counts else points[0].runs} runs"
    main = counts.most_common(1)[0][0]
    grid = sorted({eps for _, eps in private})
    runs_at: dict[tuple[str, float], set[int]] = {}
    for s, eps in private:
        runs_at.setdefault((s.point.instance, eps), set()).add(s.runs)
    groups: dict[tuple[int, str], dict[str, set[float]]] = {}
    for s, eps in private:
        if s.runs != main:
            mixed = len(runs_at[(s.point.instance, eps)]) > 1
            key = (s.runs, f" for {_label(s)}" if mixed else "")
            groups.setdefault(key, {}).setdefault(s.point.instance, set()).add(eps)
    parts = []
    for (n, qualifier), where in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        by_eps: dict[str, list[str]] = {}
        for instance, eps in sorted(where.items()):
            by_eps.setdefault(_epsilons(eps, grid), []).append(instance)
        parts.append(f"{n}{qualifier} at " + " and ".join(
            f"ε = {text} on {', '.join(instances)}" for text, instances in by_eps.items()))
    return f"{main} runs (" + "; ".join(parts) + ")"


def main(figure: str, points_csv: str, out: str) -> None:
    spec = FIGURES[figure]
    points = sorted(read(Path(points_csv)), key=lambda s: s.point.instance)  # panels μ1, μ2, …
    with tempfile.TemporaryDirectory() as tmp:
        png = next(p for p in spec.draw(points, Path(tmp), runs_label(points))
                   if p.suffix == ".png")
        shutil.copyfile(png, out)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in FIGURES:
        print(f"usage: plot_bai_grid.py FIGURE POINTS_CSV OUT_PNG, FIGURE one of "
              f"{sorted(FIGURES)}, got {sys.argv[1:]}", file=sys.stderr)
        sys.exit(2)
    try:
        main(*sys.argv[1:4])
    except (OSError, KeyError, ValueError) as exc:  # a missing file, column or number
        print(f"plot_bai_grid.py: cannot draw {sys.argv[2]}: {exc!r}", file=sys.stderr)
        sys.exit(2)
