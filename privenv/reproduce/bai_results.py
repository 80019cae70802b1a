"""The results of a stopping-time reproduction of paper 3: each point's runs read back from the
results store (:class:`PointResult`), the summary table, the CSVs and the figure.

**Sample budget.** The env's ``horizon`` (10⁸ by default) caps a run. A run that reaches it
without stopping is *non-stopping*: it is counted (``non_stopping`` column), its stopping time
enters the mean as the budget (so the mean is then a lower bound; hollow markers in the figure),
and it is not an error (it recommended nothing).

**Errors.** ``errors`` counts runs that stopped with a wrong arm; ``error_ucb`` is the one-sided
Clopper–Pearson upper confidence bound on the error probability at level :data:`CONFIDENCE`
(95 %); ``error_le_delta_shown`` says whether it is ≤ δ (the runs *demonstrate* δ-correctness;
with no error that needs :func:`runs_to_show` runs, 299 at δ = 0.01),
``error_le_delta_consistent`` whether error ≤ δ is *consistent* with the runs (the one-sided
95 % lower bound is ≤ δ, i.e. the binomial test of p ≤ δ does not reject at 5 %).
"""

from __future__ import annotations

import csv
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from privenv.reproduce.bai_rates import CONFIDENCE, DELTA, upper_bound
from privenv.results import RunResults, bai_outcomes
from privenv.sweep import SweepReport

if TYPE_CHECKING:  # the plan calls this module's writers lazily: no import back at run time
    from privenv.reproduce.bai_plan import FigureSpec, Plan, Point


def runs_to_show(delta: float) -> int:
    """The fewest runs that, with no wrong recommendation, put the one-sided Clopper–Pearson
    upper bound at level :data:`CONFIDENCE` at or below δ: 1 − (1 − CONFIDENCE)^{1/n} ≤ δ."""
    return math.ceil(math.log(1.0 - CONFIDENCE) / math.log1p(-delta))


@dataclass
class PointResult:
    """The runs of one point, read back from the results store, and their summary."""

    point: Point
    stopping_time: np.ndarray
    recommendation: np.ndarray
    correct: np.ndarray
    extra: dict[str, np.ndarray]  # other per-run episode values (e.g. adaptivity rounds)
    privacy: dict[str, Any]
    agent_params: dict[str, Any]
    wall_s: float
    horizon: int
    lower_bounds: dict[str, float]
    switch: float
    estimated_s: float

    @classmethod
    def from_store(cls, spec: FigureSpec, point: Point, stored: RunResults,
                   estimated_s: float) -> PointResult:
        ep = stored.episode
        n = len(stored.runs)
        extra = {k: np.asarray(v) for k, v in ep.items()
                 if k not in ("stopping_time", "recommendation", "correct")}
        return cls(
            point=point,
            stopping_time=np.asarray(ep.get("stopping_time", stored.steps), dtype=np.int64),
            recommendation=np.asarray(ep.get("recommendation", np.full(n, -1)), dtype=np.int64),
            correct=np.asarray(ep.get("correct", np.zeros(n, dtype=bool)), dtype=bool),
            extra=extra, privacy=stored.privacy.as_dict(), agent_params=stored.agent_params,
            wall_s=stored.wall_s, horizon=stored.horizon,
            lower_bounds=spec.point_bounds(point),
            switch=spec.switch(point.instance), estimated_s=estimated_s,
        )

    @property
    def runs(self) -> int:
        return int(self.stopping_time.shape[0])

    @property
    def non_stopping(self) -> int:
        """Runs that reached the sample budget without stopping (recommendation −1)."""
        return int(np.count_nonzero(~bai_outcomes(self.recommendation, self.correct)[0]))

    @property
    def errors(self) -> int:
        """Runs that stopped and recommended a wrong arm."""
        return int(np.count_nonzero(bai_outcomes(self.recommendation, self.correct)[1]))

    @property
    def tau_mean(self) -> float:
        return float(self.stopping_time.mean())

    @property
    def tau_sd(self) -> float:
        return float(self.stopping_time.std(ddof=1)) if self.runs > 1 else 0.0

    @property
    def lower_bound(self) -> float:
        """The figure's main lower bound at this point (Cor. 11, Thm 17, or T*_KL)."""
        return next(iter(self.lower_bounds.values()))

    def error_bounds(self) -> tuple[float, float]:
        """One-sided Clopper–Pearson (lower, upper) confidence bounds at :data:`CONFIDENCE` on
        the error probability."""
        from privenv.privacy.audit import clopper_pearson_lower, clopper_pearson_upper

        a = 1.0 - CONFIDENCE
        return (float(clopper_pearson_lower(self.errors, self.runs, a)),
                float(clopper_pearson_upper(self.errors, self.runs, a)))

    def error_verdict(self) -> tuple[bool, bool]:
        """(shown, consistent): error ≤ δ is shown by the runs (the upper bound of
        :meth:`error_bounds` is ≤ δ) and consistent with them (the lower bound is ≤ δ)."""
        lo, hi = self.error_bounds()
        return hi <= self.point.delta, lo <= self.point.delta

    def row(self, spec: FigureSpec) -> dict[str, Any]:
        """The summary row of ``points.csv``."""
        p = self.point
        lo, hi = self.error_bounds()
        shown, consistent = self.error_verdict()
        lbs = list(self.lower_bounds.values())
        row = {
            "figure": spec.id, "instance": p.instance, "agent": p.agent,
            "threshold": p.threshold or "", "epsilon": "" if p.epsilon is None else p.epsilon,
            "label": p.label, "privacy": self.privacy.get("privacy", ""), "delta": p.delta,
            "runs": self.runs, "non_stopping": self.non_stopping, "budget": self.horizon,
            "tau_mean": self.tau_mean, "tau_sd": self.tau_sd,
            "tau_median": float(np.median(self.stopping_time)),
            "tau_min": int(self.stopping_time.min()), "tau_max": int(self.stopping_time.max()),
            "errors": self.errors, "error_rate": self.errors / self.runs,
            "error_ucb": hi, "error_lcb": lo, "confidence": CONFIDENCE,
            "error_le_delta_shown": shown, "error_le_delta_consistent": consistent,
            "lower_bound": lbs[0], "lower_bound_relaxed": lbs[1] if len(lbs) > 1 else "",
            "tau_over_lower_bound": self.tau_mean / lbs[0],
            "above_lower_bound": self.tau_mean >= lbs[0],
            "regime_switch_epsilon": self.switch,
            "regime": ("" if p.epsilon is None else
                       "high privacy" if p.epsilon < self.switch else "low privacy"),
            "wall_s": self.wall_s, "estimated_s": self.estimated_s,
        }
        ub = upper_bound(p.agent, p.instance, p.epsilon, p.delta)
        row.update({"upper_bound_asymptotic": ub[1] if ub else "",
                    "upper_bound_source": ub[0] if ub else "",
                    "tau_over_upper_bound": self.tau_mean / ub[1] if ub else ""})
        for k, v in sorted(self.extra.items()):
            if np.issubdtype(np.asarray(v).dtype, np.number):
                row[f"{k}_mean"] = float(np.mean(v))
        return row


def ttucb_ratios(results: Sequence[PointResult]) -> dict[Point, float]:
    """E[τ] of each private point over that of TTUCB on the same instance with the same
    threshold choice and δ (when the figure has that TTUCB point): the measured price of
    privacy."""
    def key(p: Point) -> tuple[str, str | None, float]:
        return p.instance, p.threshold, p.delta

    ref = {key(r.point): r.tau_mean for r in results if r.point.agent == "ttucb"}
    return {r.point: r.tau_mean / ref[key(r.point)] for r in results
            if r.point.epsilon is not None and key(r.point) in ref}


@dataclass
class Reproduction:
    spec: FigureSpec
    output: Path
    plan: Plan
    results: list[PointResult]
    wall_s: float
    workers: int
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None

    def table(self) -> str:
        """One line per point: τ mean ± sd, τ/bound, errors with their 95 % upper bound,
        non-stopping runs (and δ, when the points do not share one)."""
        w = max([26, *(len(r.point.label) for r in self.results)])  # the longest agent label
        several = len({r.point.delta for r in self.results}) > 1
        head = (f"{'instance':<8} {'agent':<{w}} {'ε':>7} " + ("     δ " if several else "")
                + f"{'τ mean ± sd':>23} {'bound':>9} "
                f"{'τ/bound':>7} {'errors (ucb95)':>16} {'non-stop':>8} {'×TTUCB':>7}")
        lines = [head, "-" * len(head)]
        ratios = ttucb_ratios(self.results)
        for r in self.results:
            p = r.point
            eps = "—" if p.epsilon is None else f"{p.epsilon:g}"
            eps += f" {p.delta:>6.0e}" if several else ""
            _, hi = r.error_bounds()
            tau = f"{r.tau_mean:.4g} ± {r.tau_sd:.3g}"
            err = f"{r.errors}/{r.runs} ({hi:.3f})"
            lines.append(f"{p.instance:<8} {p.label:<{w}} {eps:>{14 if several else 7}} {tau:>23} "
                         f"{r.lower_bound:>9.3g} {r.tau_mean / r.lower_bound:>7.1f} {err:>16} "
                         f"{r.non_stopping:>8} "
                         + (f"{ratios[p]:>7.2f}" if p in ratios else f"{'':>7}"))
        return "\n".join(lines)


def write_csvs(spec: FigureSpec, results: Sequence[PointResult], output: Path,
               seed: int, with_delta: bool = False) -> dict[str, Path]:
    """``points.csv`` (one row per point) and ``runs.csv`` (one row per run, with a ``delta``
    column if ``with_delta``). Nothing timing-dependent goes into ``runs.csv``; ``points.csv``
    ends with the wall times."""
    ratios = ttucb_ratios(results)
    rows = []
    for r in results:
        row = r.row(spec)
        if r.point in ratios:  # the price of privacy against TTUCB; CTB-TT's predicted one
            row["tau_over_ttucb"] = ratios[r.point]
            if r.point.agent == "ctb-tt" and r.point.epsilon is not None:
                from privenv.theory.bai import ctb_factor

                row["ctb_factor"] = ctb_factor(r.point.epsilon)
        rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    points_path, runs_path = output / "points.csv", output / "runs.csv"
    with points_path.open("w", newline="") as f:
        points = csv.DictWriter(f, columns, restval="", lineterminator="\n")
        points.writeheader()
        points.writerows(rows)
    with runs_path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["instance", "agent", "threshold", "epsilon", *(["delta"] * with_delta),
                    "seed", "run", "stopping_time", "recommendation", "correct", "stopped"])
        for r in results:
            p = r.point
            stopped = bai_outcomes(r.recommendation, r.correct)[0]
            for i in range(r.runs):
                w.writerow([p.instance, p.agent, p.threshold or "",
                            "" if p.epsilon is None else p.epsilon, *([p.delta] * with_delta),
                            seed, i, int(r.stopping_time[i]), int(r.recommendation[i]),
                            int(r.correct[i]), int(stopped[i])])
    return {"points": points_path, "runs": runs_path}


#: lower-bound curves are drawn at this many log-spaced ε (plus the grid points)
N_CURVE_POINTS = 40


#: line style of each threshold choice (one colour per agent)
THRESHOLD_STYLES = {None: "-", "theory": "-", "empirical": (0, (4, 1.5))}


def draw(spec: FigureSpec, results: Sequence[PointResult], output: Path,
         runs: int | str) -> list[Path]:
    """One log–log panel per instance (PNG and PDF): one colour per agent, one line style per
    threshold choice; ``runs`` is the run count per point, or a phrase giving the counts when
    they differ (e.g. "1000 runs (25 at ε = 0.01)")."""
    from privenv.plotting import (
        Baseline,
        Reference,
        StoppingSeries,
        StoppingTimePanel,
        agent_colors,
        save_figure,
        stopping_time_grid,
    )
    from privenv.problems.bai import INSTANCES as MEANS

    agent_color = agent_colors(list(dict.fromkeys(r.point.agent for r in results)))
    colors = {}
    panels = []
    all_eps = [r.point.epsilon for r in results if r.point.epsilon is not None]
    for inst in dict.fromkeys(r.point.instance for r in results):
        mine = [r for r in results if r.point.instance == inst]
        series, baselines = [], []
        for label in dict.fromkeys(r.point.label for r in mine):
            pts = sorted((r for r in mine if r.point.label == label),
                         key=lambda r: r.point.epsilon or 0.0)
            p = pts[0].point
            style = THRESHOLD_STYLES[p.threshold]
            if p.epsilon is None:
                label = f"{label} (non-private)"
                baselines.append(Baseline(label, pts[0].tau_mean, pts[0].tau_sd,
                                          "--" if p.threshold != "empirical" else ":"))
            else:
                series.append(StoppingSeries(
                    label, np.array([r.point.epsilon for r in pts]),
                    np.array([r.tau_mean for r in pts]), np.array([r.tau_sd for r in pts]),
                    np.array([r.non_stopping > 0 for r in pts]), style))
            colors[label] = agent_color[p.agent]
        refs = []
        if all_eps:
            grid = np.unique(np.concatenate([
                np.geomspace(min(all_eps), max(all_eps), N_CURVE_POINTS), all_eps]))
            curves: dict[str, list[float]] = {}
            for e in grid:
                for name, v in spec.lower_bounds(inst, float(e)).items():
                    curves.setdefault(name, []).append(v)
            refs = [Reference(name, grid, np.array(v)) for name, v in curves.items()]
        title = (f"{inst} = ({', '.join(f'{m:g}' for m in MEANS[inst])})\n"
                 f"regime switch at ε = {spec.switch(inst):.3g}")
        panels.append(StoppingTimePanel(title, series, baselines, refs,
                                        [("regime switch of the bound", spec.switch(inst))]))
    fig = stopping_time_grid(
        panels, ncols=3, colors=colors,
        # a long run-count phrase wraps; "mean ± 1 sd" (no-break spaces) stays on one line
        suptitle=f"Paper 3 {spec.paper}\n" + textwrap.fill(
            f"stopping time vs ε ({spec.model} DP), δ = {DELTA:g}, "
            f"{runs if isinstance(runs, str) else f'{runs} runs'}, mean\u00a0±\u00a01\u00a0sd",
            width=130, break_on_hyphens=False),
        footnote=("grey: lower bounds on E[τ] × log(1/(2.4δ)); shaded vertical line: the ε where "
                  "the (relaxed) bound switches regime;\nhollow markers: some runs hit the "
                  "sample budget (their τ counts as the budget, so the mean is a lower bound); "
                  "solid: theory thresholds, dashed: empirical"),
    )
    return save_figure(fig, output / spec.id)



__all__ = ["N_CURVE_POINTS", "THRESHOLD_STYLES", "PointResult", "Reproduction", "draw",
           "runs_to_show", "ttucb_ratios", "write_csvs"]
