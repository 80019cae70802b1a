"""Paper 1's agents against one parameter: ``huber-epsilon``, ``huber-alpha``, ``huber-constants``.

Paper 1 (Wu, Zhou, Tao, Wang, *On Private and Robust Bandits*, NeurIPS 2023) states in §7 that
"when ε is smaller or α is larger, the regret will increase", from two panels per parameter at
T = 10⁵, and it states the constants of PRAE only up to Θ/Ω. These figures measure each claim
along its own axis, on the instance of Figure 1 (K = 5 arms with means 100, 75, …, 0, Huber
contamination N(0, 50²)), for PRAE-R, PRAE-C and DPRSE:

* ``huber-epsilon`` — final regret at T = 10⁶ against ε ∈ {0.05, …, 5}, α = 5 %, on both inlier
  laws of the figure (Student-t ν = 2.5 and Pareto);
* ``huber-alpha`` — final regret at T = 10⁶ against α ∈ {1, 2, 5, 10 %}, ε = 0.5, on both laws;
* ``huber-constants`` — **the constants as an axis**: final regret at the paper's horizon
  T = 10⁵ on the six panels of Figure 1 against the agents' ``constant_scale`` c (1 = the proofs'
  constants, :mod:`privenv.agents.huber`), which multiplies the elimination radius β_τ and the
  first-phase threshold 𝒯 of all three agents alike. It shows at which constants the figure's
  ordering PRAE-C ≤ PRAE-R < DPRSE appears. **Privacy does not depend on c**: c changes which
  arms are pulled, never a noise scale (the metadata lists each cell's guarantee, and
  ``tests/agents/test_huber_agents.py`` checks that the releases' noise is unchanged).

Each claim gets a verdict from paired runs (every cell uses the same seed, so run *i* of every
cell sees the same reward streams): the mean over runs of the paired difference between the two
ends of the axis, with its standard error; "rises"/"falls" when it is more than two standard
errors from 0 (a false-alarm probability of about 5 % per comparison under a normal
approximation), "no change" otherwise.

Outputs (in ``--output``): ``results.sqlite`` (the results store), ``runs.csv`` (final regret per
run), ``summary.csv`` (mean, standard deviation and standard error per cell, ratio to uniform
play), ``metadata.json`` (versions, seeds, the guarantee, the verdicts and the ``privenv run``
command of every cell, wall times) and ``<figure>.png``/``.pdf``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from privenv._stats import sample_sd
from privenv._validation import check_int, check_real
from privenv.reproduce import huber_fig1
from privenv.reproduce.cells import (
    Execution,
    FigureResult,
    add_common_arguments,
    cell_sweep,
    csv_float,
    finish_figure,
    float_list,
    guarantees_by_epsilon,
    output_dir,
    print_files,
    regret_results,
    reproduce_or_report,
    run_metadata,
    run_summary,
    utc_now,
)
from privenv.reproduce.huber_fig1 import AGENTS, PANELS, Cell, Panel, uniform_regret_rate
from privenv.sweep import SweepReport
from privenv.theory.huber import ALPHA_MAX_CENTRAL

PAPER = "Wu, Zhou, Tao, Wang, On Private and Robust Bandits (NeurIPS 2023), §7, Figure 1"


@dataclass(frozen=True)
class Scale:
    """Runs, horizon and the values of the axis."""

    runs: int
    horizon: int
    values: tuple[float, ...]


@dataclass(frozen=True)
class AxisSpec:
    """One figure: the swept parameter (``axis``: ``"epsilon"``, ``"alpha"`` or
    ``"constant_scale"``), the base panels whose ε or α the axis replaces, and its scales."""

    id: str
    description: str
    axis: str
    panels: tuple[Panel, ...]
    full: Scale
    quick: Scale
    xlabel: str
    claim: str  # the paper's statement the verdicts test
    claimed: str | None = None  # the trend the claim predicts from the low to the high end

    @property
    def default_output(self) -> str:
        return f"results/{self.id}"


_LAWS_EPS = (Panel("t", "student-t", 0.05, math.nan), Panel("pareto", "pareto", 0.05, math.nan))
_LAWS_ALPHA = (Panel("t", "student-t", math.nan, 0.5), Panel("pareto", "pareto", math.nan, 0.5))

HUBER_EPSILON = AxisSpec(
    id="huber-epsilon",
    description="paper 1: final regret at T = 1e6 against epsilon (alpha = 5%) of PRAE-R, PRAE-C "
                "and DPRSE on both inlier laws",
    axis="epsilon", panels=_LAWS_EPS,
    full=Scale(runs=10, horizon=1_000_000, values=(0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)),
    quick=Scale(runs=2, horizon=10_000, values=(0.2, 1.0)),
    xlabel="privacy budget ε",
    claim="regret increases as ε gets smaller (paper 1, §7)", claimed="falls",
)
HUBER_ALPHA = AxisSpec(
    id="huber-alpha",
    description="paper 1: final regret at T = 1e6 against the contamination level alpha "
                "(epsilon = 0.5) of PRAE-R, PRAE-C and DPRSE on both inlier laws",
    axis="alpha", panels=_LAWS_ALPHA,
    full=Scale(runs=10, horizon=1_000_000, values=(0.01, 0.02, 0.05, 0.1)),
    quick=Scale(runs=2, horizon=10_000, values=(0.02, 0.1)),
    xlabel="contamination level α",
    claim="regret increases as α gets larger (paper 1, §7)", claimed="rises",
)
#: constant scales: 1 (the proofs' constants) down to 3·10⁻³, where the first phase is gone
#: (PRAE-C's 𝒯 at α = 5 % is ≈ 1.7·10⁴ pulls at T = 10⁵, so 𝒯·c < 2 from c ≈ 10⁻⁴)
CONSTANT_SCALES = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003)
HUBER_CONSTANTS = AxisSpec(
    id="huber-constants",
    description="paper 1: PRAE's unspecified constants as an axis - final regret at T = 1e5 on "
                "the six panels of Figure 1 against constant_scale (1 = the proofs' constants)",
    axis="constant_scale", panels=PANELS,
    full=Scale(runs=30, horizon=100_000, values=CONSTANT_SCALES),
    quick=Scale(runs=2, horizon=10_000, values=(1.0, 0.01)),
    xlabel="constant_scale c (1 = the proofs' constants)",
    claim="PRAE-C ≤ PRAE-R < DPRSE at T = 1e5 in every panel (paper 1, Figure 1)",
)

FIGURES: dict[str, AxisSpec] = {s.id: s for s in (HUBER_EPSILON, HUBER_ALPHA, HUBER_CONSTANTS)}


def axis_value(spec: AxisSpec, cell: Cell) -> float:
    """The value of ``spec``'s axis in ``cell``."""
    if spec.axis == "constant_scale":
        return float(dict(cell.params)["constant_scale"])
    return float(getattr(cell.panel, spec.axis))


def make_cells(spec: AxisSpec, scale: Scale, seed: int = 0,
               agents: Sequence[str] = AGENTS, constant_scale: float = 1.0) -> list[Cell]:
    """Every (base panel, value, agent) cell; every cell uses the same seed. On the ε and α
    axes every agent runs with ``constant_scale`` (1, the proofs' constants, by default)."""
    constant_scale = check_real("constant_scale", constant_scale, low=0.0, low_open=True)
    if spec.axis == "constant_scale" and constant_scale != 1.0:
        raise ValueError(f"constant_scale is the axis of {spec.id} (use values), got "
                         f"constant_scale={constant_scale}")
    params = (("constant_scale", constant_scale),) if constant_scale != 1.0 else ()
    runs = check_int("runs", scale.runs, low=2)
    horizon = check_int("horizon", scale.horizon, low=2)
    seed = check_int("seed", seed, low=0)
    high = {"epsilon": math.inf, "alpha": ALPHA_MAX_CENTRAL,
            "constant_scale": math.inf}[spec.axis]  # PRAE-C's breakdown point bounds α
    values = tuple(check_real("values", v, low=0.0, low_open=True, high=high, high_open=True)
                   for v in scale.values)
    if len(values) < 2 or len(set(values)) != len(values):
        raise ValueError(f"values must hold at least 2 distinct values, got {list(values)}")
    cells = []
    for p in spec.panels:
        for v in sorted(values):
            axis_value: dict[str, Any] = {spec.axis: v}  # a field of the panel (spec.axis)
            if spec.axis == "constant_scale":
                cells += huber_fig1.make_cells(agents, runs, horizon, seed, (p,),
                                               params=(("constant_scale", v),))
            else:
                cells += huber_fig1.make_cells(agents, runs, horizon, seed,
                                               (replace(p, **axis_value),), params=params)
    return cells


@dataclass(frozen=True)
class Trend:
    """The paired difference of final regret between the two ends of an axis for one (panel,
    agent): ``mean`` and ``se`` of x(high end) − x(low end) over runs."""

    panel: str
    agent: str
    low: float
    high: float
    mean: float
    se: float

    @property
    def verdict(self) -> str:
        if abs(self.mean) <= 2.0 * self.se:
            return "no change"
        return "rises" if self.mean > 0 else "falls"


@dataclass
class Reproduction:
    spec: AxisSpec
    output: Path
    cells: list[Cell]
    results: list[FigureResult]
    wall_s: float = 0.0
    workers: int = 0
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None

    def regret(self, panel: str, agent: str, value: float) -> np.ndarray:
        for r in self.results:
            c = r.cell
            if c.panel.key == panel and c.agent == agent and axis_value(self.spec, c) == value:
                return r.result.regret
        raise KeyError((panel, agent, value))

    def values(self) -> list[float]:
        return sorted({axis_value(self.spec, c) for c in self.cells})

    def agents(self) -> list[str]:
        return list(dict.fromkeys(c.agent for c in self.cells))

    def trends(self) -> list[Trend]:
        """Per (base panel, agent): the paired change of regret from the lowest to the highest
        value of the axis."""
        lo, hi = self.values()[0], self.values()[-1]
        out = []
        for p in self.spec.panels:
            for a in self.agents():
                d = self.regret(p.key, a, hi) - self.regret(p.key, a, lo)
                out.append(Trend(p.key, a, lo, hi, float(d.mean()),
                                 sample_sd(d) / math.sqrt(d.size)))
        return out

    def judge(self, t: Trend) -> str:
        """``": as claimed"``/``": not as claimed"`` for a figure whose claim predicts a trend."""
        if self.spec.claimed is None:
            return ""
        return ": as claimed" if t.verdict == self.spec.claimed else ": not as claimed"

    def ordering(self) -> dict[float, list[str]]:
        """``huber-constants``: per scale, the panels where the mean regrets are ordered as the
        paper's Figure 1 (PRAE-C ≤ PRAE-R < DPRSE)."""
        out: dict[float, list[str]] = {}
        for v in self.values():
            out[v] = [p.key for p in self.spec.panels
                      if self.regret(p.key, "prae-c", v).mean()
                      <= self.regret(p.key, "prae-r", v).mean()
                      < self.regret(p.key, "dprse", v).mean()]
        return out

    def table(self) -> str:
        """Mean final regret ± sd (×10⁶) per base panel and value, one column per agent."""
        agents = self.agents()
        head = f"{'panel':<34}{self.spec.axis:>16}" + "".join(f"{a:>18}" for a in agents)
        lines = [head, "-" * len(head)]
        for p in self.spec.panels:
            for v in self.values():
                row = [self.regret(p.key, a, v) / 1e6 for a in agents]
                lines.append(f"{panel_title(self.spec, p):<34}{v:>16g}" + "".join(
                    f"{f'{x.mean():.3g} ± {_sd(x):.2g}':>18}" for x in row))
        lines.append(f"(final regret ×10⁶, mean ± sd over runs; uniform play "
                     f"{self.uniform() / 1e6:.3g})")
        lines.append(f"claim: {self.spec.claim}")
        for t in self.trends():
            lines.append(f"  {t.panel:<7}{t.agent:<8} from {self.spec.axis} {t.low:g} to "
                         f"{t.high:g}: {t.mean / 1e6:+.3g} ± {t.se / 1e6:.2g} ×10⁶ ({t.verdict}"
                         f"{self.judge(t)})")
        if self.spec.axis == "constant_scale" and {"prae-r", "prae-c", "dprse"} <= set(agents):
            for v, keys in self.ordering().items():
                ratios = [self.regret(p.key, a, v).mean() / self.uniform()
                          for p in self.spec.panels for a in ("prae-r", "prae-c", "dprse")]
                lines.append(f"  c = {v:g}: ordered as the paper in {len(keys)} of "
                             f"{len(self.spec.panels)} panels ({', '.join(keys) or 'none'}); "
                             f"regret / uniform play's {min(ratios):.2f}–{max(ratios):.2f}")
        return "\n".join(lines)

    def uniform(self) -> float:
        """Uniform play's expected regret at the horizon (the mean gap times T)."""
        return uniform_regret_rate(self.cells[0].panel) * self.cells[0].horizon


def _sd(x: np.ndarray) -> float:
    """The sample sd, 0 where it is round-off of equal values (a deterministic cell)."""
    sd = sample_sd(x)
    return sd if sd > 1e-12 * abs(float(x.mean())) else 0.0


def panel_title(spec: AxisSpec, p: Panel) -> str:
    """A base panel's title without the swept parameter."""
    law = {"student-t": "Student's t", "pareto": "Pareto"}[p.inlier]
    if spec.axis == "epsilon":
        return f"{law}, α = {100 * p.alpha:g}%"
    if spec.axis == "alpha":
        return f"{law}, ε = {p.epsilon:g}"
    return p.title


def reproduce(
    spec: AxisSpec,
    output: str | Path | None = None,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    values: Sequence[float] | None = None,
    agents: Sequence[str] = AGENTS,
    seed: int = 0,
    constant_scale: float = 1.0,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run figure ``spec`` (:data:`HUBER_EPSILON`, :data:`HUBER_ALPHA` or
    :data:`HUBER_CONSTANTS`) and write its files.

    Args:
        spec: the figure.
        output: directory (created); default ``results/<id>`` (``…-quick`` with ``quick``).
        quick: the figure's reduced scale.
        runs, horizon, values: override the scale's (``values``: the axis' values).
        agents: registry names of agents of the Huber family (default PRAE-R, PRAE-C, DPRSE).
        seed: the seed of every cell.
        constant_scale: every agent's ``constant_scale`` on the ε and α axes (default 1, the
            proofs' constants; ``huber-constants`` has it as its axis).
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or
            its fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``,
            ``figure``) as keywords.
    """
    base = spec.quick if quick else spec.full
    scale = replace(base, runs=base.runs if runs is None else runs,
                    horizon=base.horizon if horizon is None else horizon,
                    values=base.values if values is None else tuple(values))
    ex = Execution.of(execution, **options)
    cells = make_cells(spec, scale, seed, agents, constant_scale)
    config = cell_sweep(cells, spec.id).validate()
    out = output_dir(output, spec.default_output, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    rep = Reproduction(spec, out, cells, regret_results(config, cells, stored),
                       workers=ex.worker_count, sweep=report,
                       simulation_wall_s=time.perf_counter() - start)
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if ex.figure else None, lambda: _metadata(rep, quick))


# -- files ----------------------------------------------------------------------------------------


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    """``runs.csv`` and ``summary.csv``; no timing, so equal seeds give byte-identical files."""
    out = rep.output
    files = {"runs": out / "runs.csv", "summary": out / "summary.csv"}
    head = ["panel", "inlier", "alpha", "epsilon", "constant_scale", "agent", "privacy"]

    def fields(r: FigureResult) -> list[Any]:
        c = r.cell
        ks = dict(c.params).get("constant_scale", 1.0)
        return [c.panel.key, c.panel.inlier, c.panel.alpha, c.panel.epsilon, ks, c.agent,
                str(r.result.privacy)]

    with files["runs"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*head, "seed", "run", "horizon", "regret"])
        for r in rep.results:
            for i, x in enumerate(r.result.regret):
                w.writerow([*fields(r), r.cell.seed, i, r.cell.horizon, csv_float(x)])
    with files["summary"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*head, "horizon", "runs", "regret_mean", "regret_sd", "regret_se",
                    "uniform_regret", "ratio_to_uniform"])
        u = rep.uniform()
        for r in rep.results:
            x = r.result.regret
            w.writerow([*fields(r), r.cell.horizon, x.size, csv_float(x.mean()),
                        csv_float(sample_sd(x)), csv_float(sample_sd(x) / math.sqrt(x.size)),
                        csv_float(u), csv_float(x.mean() / u)])
    return files


def draw(rep: Reproduction) -> list[Path]:
    """One log–log panel per base panel: final regret at T against the axis, one series per
    agent, uniform play as reference."""
    from privenv.plotting import LogLogPanel, LogLogSeries, Reference, loglog_grid, save_figure

    spec = rep.spec
    v = np.array(rep.values())
    panels = []
    for p in spec.panels:
        series = [LogLogSeries(a, v, np.stack([rep.regret(p.key, a, x) for x in v], axis=1))
                  for a in rep.agents()]
        panels.append(LogLogPanel(panel_title(spec, p), series,
                                  [Reference("uniform play", v, np.full(v.size, rep.uniform()))],
                                  xlabel=spec.xlabel, ylabel="cumulative regret at T"))
    c0 = rep.cells[0]
    fig = loglog_grid(panels, ncols=min(3, len(panels)), panel_size=(4.4, 3.4),
                      suptitle=f"{spec.id} — T = {c0.horizon:,}, {c0.runs} runs per cell, "
                               "mean ± 1 sd",
                      footnote=f"claim tested: {spec.claim}; K = 5, μ = 100…0, contamination "
                               "N(0, 50²); every cell on the same seed (paired runs)")
    return save_figure(fig, rep.output / spec.id)


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    spec = rep.spec
    cells = []
    for r in rep.results:
        c = r.cell
        x = r.result.regret
        cells.append({
            "panel": c.panel.key, "agent": c.agent, "axis_value": axis_value(spec, c),
            "seed": c.seed, "runs": c.runs, "horizon": c.horizon,
            "env_kwargs": c.panel.env_kwargs, "agent_kwargs": c.agent_kwargs,
            "agent_params": r.result.agent_params, **r.result.privacy.as_dict(),
            "regret_mean": float(x.mean()), "regret_sd": sample_sd(x),
            "wall_s": r.result.wall_s, "ns_per_run_step": r.result.ns_per_run_step,
            "command": c.command(),
        })
    extra = {}
    if spec.axis == "constant_scale" and {"prae-r", "prae-c", "dprse"} <= set(rep.agents()):
        extra["ordered_as_paper"] = {str(k): v for k, v in rep.ordering().items()}
    return {
        "figure": spec.id,
        "description": spec.description,
        "paper": PAPER,
        "claim": spec.claim,
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": huber_fig1.ENV_ID,
        "axis": spec.axis,
        "values": rep.values(),
        "panels": [{"key": p.key, "title": panel_title(spec, p)} for p in spec.panels],
        "seed": rep.cells[0].seed,
        "seeding": "every cell uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding): paired runs across agents and values",
        "uniform_regret": rep.uniform(),
        "trends": [{**asdict(t), "verdict": t.verdict, "as_claimed": (
            None if spec.claimed is None else t.verdict == spec.claimed)} for t in rep.trends()],
        **extra,
        "guarantees": guarantees_by_epsilon(rep.results),  # the same at every constant scale
        "cells": cells,
        **run_metadata(rep),
        "scale": {"full": asdict(spec.full), "quick": asdict(spec.quick)},
    }


# -- command line ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, spec: AxisSpec) -> None:
    """Options of ``privenv reproduce <spec.id>``."""
    add_common_arguments(parser, spec.default_output)
    f, q = spec.full, spec.quick
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per cell (default {f.runs}; {q.runs} with --quick)")
    parser.add_argument("--horizon", type=int, default=None, metavar="T",
                        help=f"horizon T (default {f.horizon}; {q.horizon} with --quick)")
    parser.add_argument("--values", type=float_list, default=None, metavar="V1,V2,...",
                        help=f"the values of {spec.axis} (default "
                             f"{','.join(f'{v:g}' for v in f.values)}; "
                             f"{','.join(f'{v:g}' for v in q.values)} with --quick)")
    parser.add_argument("--agents", default=",".join(AGENTS),
                        help=f"comma-separated agent names (default: {','.join(AGENTS)})")
    if spec.axis != "constant_scale":
        parser.add_argument("--constant-scale", type=float, default=1.0, metavar="C",
                            help="every agent's constant_scale (default 1: the proofs' "
                                 "constants; huber-constants sweeps it)")


def main(args: argparse.Namespace, spec: AxisSpec) -> int:
    """Run from parsed command-line options; prints the table and the verdicts on stdout."""
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not agents:
        raise ValueError("agents must name at least one agent")
    rep = reproduce_or_report(spec.id, lambda: reproduce(
        spec, args.output, quick=args.quick, runs=args.runs, horizon=args.horizon,
        values=args.values, agents=agents, seed=args.seed,
        constant_scale=getattr(args, "constant_scale", 1.0),
        execution=Execution.from_args(args)))
    if rep is None:
        return 1
    print(run_summary(spec.id, rep))
    print(rep.table())
    print_files(rep.files)
    return 0
