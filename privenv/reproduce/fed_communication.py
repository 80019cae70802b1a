"""``fed-communication``: paper 2 — what fixed-batch and data-adaptive synchronisation send.

Zhou & Chowdhury (ICLR 2024) replace FedUCB's data-adaptive schedule (Dubey & Pentland 2020: a
silo triggers a sync when (t − t_last)·(log det(V_sync + W_i) − log det V_sync) > D) by fixed
batches of B rounds, which costs "an O(√T) communication cost rather than the reported O(log T)"
(with B ∝ √T; the experiments use B = 25, so ⌊T/B⌋ syncs), and they observe that "due to the
presence of privacy noise, [the adaptive schedule's] current analysis for O(M log T)
communication cost no longer holds". This figure measures both schedules' communication against
the number of silos M (T = 10⁴) and the horizon T (M = 10), without privacy and with silo-level
LDP noise on the messages (for the adaptive schedule a *nominal* protection: its sync times leak,
``fed-leak``), plus the vector-sum shuffle protocol, whose users send one-bit messages.

Per run the agents report (``Agent.episode_info``): ``sync_rounds``, ``floats_sent_per_silo``
(d(d+1)/2 + d real numbers per sync: the upper triangle of the Gram message and the moment
vector; 0 for vector sum) and ``bits_sent_per_silo`` (vector sum only). Instance: paper 2's
synthetic features with K = 20 arms, d = 10 (``fed-scaling``'s), (ε, δ) = (0.2, 0.1) (paper 2's
vector-sum setting: P_Vec cannot be calibrated at δ = 10⁻⁴ on nodes of a few hundred users),
rewards clipped to [−3, 3]. The central-DP super agent is not a schedule: it syncs every round
(T syncs).

Each (variant, M, T) is one sweep configuration (:mod:`privenv.reproduce.fed`'s cells), every
cell the same seed. Exponents: least squares of log(mean sync rounds) on log M and on log T with a
95 % percentile bootstrap over runs (:func:`privenv.plotting.loglog_slope`); a fixed schedule's
are 0 and 1 exactly.

Outputs (in ``--output``): ``results.sqlite``, ``runs.csv`` (every run: regret and
communication), ``summary.csv`` (means per cell), ``exponents.csv``, ``metadata.json`` and
``fed-communication.png``/``.pdf``.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._validation import check_int
from privenv.plotting import SlopeFit, loglog_slope
from privenv.reproduce import fed
from privenv.reproduce.cells import (
    Execution,
    FigureResult,
    add_common_arguments,
    cell_sweep,
    finish_figure,
    output_dir,
    print_files,
    regret_results,
    reproduce_or_report,
    run_metadata,
    select,
    utc_now,
)
from privenv.sweep import SweepReport

ID = "fed-communication"
DESCRIPTION = ("paper 2: sync rounds, floats and bits per silo of fixed-batch vs data-adaptive "
               "synchronisation (with and without LDP noise) against M and T")
DEFAULT_OUTPUT = f"results/{ID}"
#: the schedules × protocols compared (keys of :data:`privenv.reproduce.fed.VARIANTS`)
VARIANTS = ("none", "ldp", "sdp-vector-sum", "adaptive-none", "adaptive-ldp")
#: paper 2's vector-sum budget (fed-synthetic panel c): P_Vec's calibration needs a δ this large
#: at small nodes (n = M·B users), and every variant uses the same budget
EPSILON, DELTA = 0.2, 0.1
K = 20
N_BOOT = 2000
#: communication counters of every run
KEYS = ("sync_rounds", "floats_sent_per_silo", "bits_sent_per_silo")


@dataclass(frozen=True)
class Scale:
    runs: int
    M: tuple[int, ...]  # at horizon T_for_M
    T_for_M: int
    T: tuple[int, ...]  # at M_for_T silos
    M_for_T: int


#: full scale; ``--quick``. Measured on 2 loaded cores: docs/results/federated.md.
FULL = Scale(runs=3, M=(5, 10, 20, 40), T_for_M=10_000, T=(1_000, 3_000, 10_000, 30_000),
             M_for_T=10)
QUICK = Scale(runs=2, M=(2, 4, 8), T_for_M=500, T=(200, 500, 1_000), M_for_T=4)


def _panel(M: int) -> fed.Panel:
    return fed.Panel(f"M{M}", f"M = {M}", {"M": M, "K": K}, EPSILON, DELTA, VARIANTS)


def make_cells(scale: Scale, seed: int = 0, variants: Sequence[str] = VARIANTS) -> list[fed.Cell]:
    """The M sweep at T = ``T_for_M`` and the T sweep at M = ``M_for_T`` (shared cells once)."""
    runs = check_int("runs", scale.runs, low=1)
    seed = check_int("seed", seed, low=0)
    variants = select("variants", variants, {v: v for v in VARIANTS})
    for name, grid in (("M", scale.M), ("T", scale.T)):
        if len(grid) < 2 or any(b <= a for a, b in zip(grid, grid[1:], strict=False)):
            raise ValueError(f"{name} must hold at least 2 increasing values, got {list(grid)}")
    pairs = [(m, scale.T_for_M) for m in scale.M] + [(scale.M_for_T, t) for t in scale.T]
    cells = []
    for m, t in dict.fromkeys(pairs):
        check_int("M", m, low=1)
        check_int("horizon", t, low=fed.BATCH)
        panel = _panel(m)
        cells += [fed.Cell(panel, v, runs, t, seed, dict(panel.env_kwargs)) for v in variants]
    return cells


@dataclass
class Exponent:
    """The fitted exponent of one variant's mean sync rounds against M or T."""

    variant: str
    axis: str  # "M" or "T"
    x: np.ndarray
    syncs: np.ndarray  # (runs, len(x))
    fit: SlopeFit | None
    error: str = ""


@dataclass
class Reproduction:
    output: Path
    scale: Scale
    cells: list[fed.Cell]
    results: list[FigureResult]
    exponents: list[Exponent] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 0
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None

    def result(self, variant: str, M: int, T: int) -> FigureResult:
        return next(r for r in self.results if r.cell.protocol == variant
                    and r.cell.env["M"] == M and r.cell.horizon == T)

    def table(self) -> str:
        head = (f"{'variant':<38}{'M':>4}{'T':>7}{'syncs':>9}{'floats/silo':>13}"
                f"{'bits/silo':>12}{'R(T)/T':>9}")
        lines = [head, "-" * len(head)]
        for r in self.results:
            comm = fed.communication(r)
            c = r.cell
            lines.append(f"{c.label:<38}{c.env['M']:>4}{c.horizon:>7}"
                         f"{comm['sync_rounds']:>9.1f}{comm['floats_sent_per_silo']:>13.4g}"
                         f"{comm['bits_sent_per_silo']:>12.4g}"
                         f"{r.result.regret.mean() / c.horizon:>9.3f}")
        for e in self.exponents:
            fit = e.fit.text() if e.fit is not None else f"n/a ({e.error})"
            lines.append(f"sync rounds of {fed.PROTOCOLS[e.variant]} ∝ {e.axis}^b: b = {fit}")
        return "\n".join(lines)


def sync_exponents(rep: Reproduction, n_boot: int, seed: int) -> list[Exponent]:
    """Per variant and axis, the log–log slope of the mean sync rounds."""
    out = []
    s = rep.scale
    variants = list(dict.fromkeys(c.protocol for c in rep.cells))
    for v in variants:
        for axis, xs, pick in (("M", s.M, lambda x: (x, s.T_for_M)),
                               ("T", s.T, lambda x: (s.M_for_T, x))):
            syncs = np.stack([np.asarray(rep.result(v, *pick(x)).result.episode["sync_rounds"],
                                         dtype=float) for x in xs], axis=1)
            try:
                fit, err = loglog_slope(np.asarray(xs, float), syncs, n_boot=n_boot, seed=seed), ""
            except ValueError as e:  # a variant that never syncs
                fit, err = None, str(e)
            out.append(Exponent(v, axis, np.asarray(xs, float), syncs, fit, err))
    return out


def reproduce(
    output: str | Path | None = None,
    *,
    quick: bool = False,
    runs: int | None = None,
    variants: Sequence[str] = VARIANTS,
    seed: int = 0,
    n_boot: int = N_BOOT,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run the figure and write its files; returns the results.

    Args:
        output: directory (created); default ``results/fed-communication`` (``…-quick``).
        quick: the reduced scale :data:`QUICK` instead of :data:`FULL`.
        runs: override the scale's.
        variants: keys of :data:`VARIANTS` (default: all).
        seed: the seed of every cell.
        n_boot: bootstrap resamples of each exponent interval.
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or
            its fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``,
            ``figure``) as keywords.
    """
    base = QUICK if quick else FULL
    scale = base if runs is None else Scale(runs, base.M, base.T_for_M, base.T, base.M_for_T)
    n_boot = check_int("n_boot", n_boot, low=0)
    ex = Execution.of(execution, **options)
    cells = make_cells(scale, seed, variants)
    config = cell_sweep(cells, ID, n_checkpoints=fed.N_CHECKPOINTS).validate()
    out = output_dir(output, DEFAULT_OUTPUT, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    rep = Reproduction(out, scale, cells, regret_results(config, cells, stored),
                       workers=ex.worker_count, sweep=report)
    rep.exponents = sync_exponents(rep, n_boot, seed)
    rep.simulation_wall_s = time.perf_counter() - start
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if ex.figure else None, lambda: _metadata(rep, quick))


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    """``runs.csv``, ``summary.csv``, ``exponents.csv`` (no timing: equal seeds, equal bytes)."""
    out = rep.output
    files = {"runs": out / "runs.csv", "summary": out / "summary.csv",
             "exponents": out / "exponents.csv"}
    with files["runs"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "agent", "M", "horizon", "privacy", "seed", "run", "regret",
                    *KEYS])
        for r in rep.results:
            c = r.cell
            for i, x in enumerate(r.result.regret):
                w.writerow([c.protocol, c.agent, c.env["M"], c.horizon,
                            str(r.result.privacy), c.seed, i, repr(float(x)),
                            *(int(r.result.episode[k][i]) for k in KEYS)])
    with files["summary"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "agent", "M", "horizon", "runs", *KEYS,
                    "time_average_regret", "time_average_regret_se"])
        for r in rep.results:
            c = r.cell
            comm = fed.communication(r)
            avg = r.result.regret / c.horizon
            w.writerow([c.protocol, c.agent, c.env["M"], c.horizon, avg.size,
                        *(repr(comm[k]) for k in KEYS), repr(float(avg.mean())),
                        repr(float(fed.standard_error(avg[:, None])[0]))])
    with files["exponents"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "axis", "values", "mean_sync_rounds", "exponent", "ci_low",
                    "ci_high", "level", "note"])
        for e in rep.exponents:
            fit = e.fit
            w.writerow([e.variant, e.axis, " ".join(str(int(x)) for x in e.x),
                        " ".join(repr(float(v)) for v in e.syncs.mean(axis=0)),
                        fit.slope if fit else "", fit.low if fit else "",
                        fit.high if fit else "", fit.level if fit else "", e.error])
    return files


def draw(rep: Reproduction) -> list[Path]:
    """Two log–log panels: mean sync rounds against M and against T, one series per variant."""
    from privenv.plotting import LogLogPanel, LogLogSeries, loglog_grid, save_figure

    s = rep.scale
    panels = []
    for axis, title in (("M", f"sync rounds against M (T = {s.T_for_M:,})"),
                        ("T", f"sync rounds against T (M = {s.M_for_T})")):
        series = [LogLogSeries(fed.PROTOCOLS[e.variant], e.x, e.syncs, e.fit)
                  for e in rep.exponents if e.axis == axis and np.all(e.syncs.mean(axis=0) > 0)]
        panels.append(LogLogPanel(title, series, xlabel="silos M" if axis == "M" else "horizon T",
                                  ylabel="synchronisations"))
    fig = loglog_grid(panels, ncols=2, panel_size=(5.4, 4.2),
                      suptitle=f"{ID} — {rep.cells[0].runs} runs per cell, B = {fed.BATCH}, "
                               f"ε = {EPSILON:g}, δ = {DELTA:g}",
                      footnote="points: mean sync rounds (bars ± 1 sd); dashed: fitted exponent "
                               "(95% bootstrap CI over runs); floats per silo = syncs·(d(d+1)/2 "
                               "+ d) except vector sum (one-bit messages: summary.csv)")
    return save_figure(fig, rep.output / ID)


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    cells = []
    for r in rep.results:
        c = r.cell
        cells.append({
            "variant": c.protocol, "agent": c.agent, "M": c.env["M"], "horizon": c.horizon,
            "runs": c.runs, "seed": c.seed, "env_kwargs": c.env, "agent_kwargs": c.agent_kwargs,
            "agent_params": r.result.agent_params, **r.result.privacy.as_dict(),
            "communication": fed.communication(r),
            "time_average_regret_mean": float((r.result.regret / c.horizon).mean()),
            "wall_s": r.result.wall_s, "ns_per_run_step": r.result.ns_per_run_step,
            "command": c.command(),
        })
    return {
        "figure": ID,
        "description": DESCRIPTION,
        "paper": fed.PAPER + " (sections 4 and 6.1)",
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": fed.ENV_ID,
        "scale": {"used": asdict(rep.scale), "full": asdict(FULL), "quick": asdict(QUICK)},
        "batch": fed.BATCH,
        "epsilon": EPSILON,
        "delta": DELTA,
        "seed": rep.cells[0].seed,
        "exponents": [{"variant": e.variant, "axis": e.axis, "x": e.x,
                       "mean_sync_rounds": e.syncs.mean(axis=0),
                       "fit": asdict(e.fit) if e.fit else None, "error": e.error}
                      for e in rep.exponents],
        "cells": cells,
        **run_metadata(rep),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``privenv reproduce fed-communication``."""
    add_common_arguments(parser, DEFAULT_OUTPUT)
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per cell (default {FULL.runs}; {QUICK.runs} with --quick)")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated variants (default: all: {','.join(VARIANTS)})")


def main(args: argparse.Namespace) -> int:
    """Run from parsed command-line options; prints the summary table on stdout."""
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    rep = reproduce_or_report(ID, lambda: reproduce(
        args.output, quick=args.quick, runs=args.runs, variants=variants, seed=args.seed,
        execution=Execution.from_args(args)))
    if rep is None:
        return 1
    print(f"{ID}: {len(rep.cells)} cells, {rep.cells[0].runs} runs, "
          f"{rep.sweep.backend if rep.sweep else ''}, wall time {rep.wall_s:.1f} s")
    print(rep.table())
    print_files(rep.files)
    return 0

