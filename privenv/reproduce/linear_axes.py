"""Paper 4's linear agents against one parameter: ``lplr-constants`` and ``linear-epsilon``.

* ``lplr-constants`` — **LPLR's constants as an axis.** Paper 4 states LPLR's algorithmic
  parameters κ₁, κ₁′, κ₂, κ₃ only through the lower bounds its proofs need (Lemmas 4.3, 4.4) and
  Theorem 4.7 through "appropriate" values and an unnamed constant C. With those minimal values
  ``lplr-regcb`` never eliminates an action at a feasible horizon (at ε = 1 a bin needs
  ≈ 7·10¹⁰ samples per layer to pass the PCR activation test), so its regret is uniform play's.
  The agent's one documented scale ``kappa_scale`` multiplies the four κ's (default 1 = the
  proofs' values, :func:`~privenv.agents.lplr.lplr_kappas`). This figure sweeps it: regret
  against T and the fitted log–log slope for each scale, and the regret at each T against the
  scale, at ε ∈ {1, 10} on the unit-sphere instance d = 2, A = 5 of ``ldp-linear``, next to
  LDP-LinUCB and uniform play. **Privacy does not depend on the scale**: the κ's only set which
  bins the server fits and how wide its confidence intervals are (post-processing of released
  values); the user-side randomizer never sees them (``tests/agents/test_lplr.py`` checks that
  the guarantee, the noise scales, the ledger and the first releases are unchanged by it). A
  scale below 1 gives up the proofs' coverage guarantee of the confidence intervals, never the
  privacy guarantee: eliminating the best action is then possible, which the regret shows.
* ``linear-epsilon`` — the first table of docs/results/linear.md: final regret at T = 10⁴ against ε
  ∈ {0.1, 1, 10} of ``central-dp-linucb``, ``ldp-linucb`` and ``input-perturbation-ols`` on the
  unit-sphere instance d = 5, A = 10, with non-private ``linucb`` and uniform play as references (10
  runs, mean ± standard error).

Both are sweeps of ``LinearContextualBandit-v0`` cells (:mod:`privenv.reproduce.ldp_linear`'s
cells, one configuration per (agent, ε, parameter, T), every cell the same seed: common random
numbers). Slopes: least squares of log mean final regret on log T, 95 % percentile bootstrap over
runs (:func:`privenv.plotting.loglog_slope`).

Outputs (in ``--output``): ``results.sqlite`` (the results store), ``runs.csv`` (final regret per
run), ``summary.csv`` (mean ± standard error per cell, ratio to uniform play), ``slopes.csv``
(``lplr-constants``), ``metadata.json`` (versions, seeds, the guarantee and the ``privenv run``
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
from privenv.reproduce import ldp_linear
from privenv.reproduce.cells import (
    Execution,
    FigureResult,
    add_common_arguments,
    cell_sweep,
    csv_float,
    finish_figure,
    float_list,
    guarantees_by_epsilon,
    int_list,
    output_dir,
    print_files,
    regret_results,
    reproduce_or_report,
    run_metadata,
    utc_now,
)
from privenv.reproduce.ldp_linear import Cell, Instance, Series
from privenv.sweep import SweepReport

PAPER = ("Li, Simchi-Levi, Wang, On the Optimal Regret of Locally Private Linear Contextual "
         "Bandit (Lemmas 4.3/4.4, Thm 4.7); Zheng et al. 2020 (LDP-LinUCB); Shariff & Sheffet "
         "2018 (central-DP LinUCB)")


@dataclass(frozen=True)
class Scale:
    """Runs, horizons, ε values and (``lplr-constants``) κ scales of one scale."""

    runs: int
    horizons: tuple[int, ...]
    epsilons: tuple[float, ...]
    kappa_scales: tuple[float, ...] = ()


@dataclass(frozen=True)
class AxisSpec:
    """One figure: the instance, the swept agents and the reference agents."""

    id: str
    description: str
    instance: Instance
    agents: tuple[str, ...]  # run at every ε (and κ scale)
    references: tuple[str, ...]  # run at every ε if private, once otherwise
    full: Scale
    quick: Scale
    note: str

    @property
    def default_output(self) -> str:
        return f"results/{self.id}"


#: κ scales of ``lplr-constants``: 1 (the proofs' minimal κ's) down to 10⁻⁸. At T ≤ 10⁵ and d = 2
#: nothing is fitted above 10⁻⁴ (a bin needs √n > kappa_scale·κ₁γ²(d + 1)³ ≈ 2.6·10⁵·kappa_scale
#: at ε = 1), so 10⁻² would repeat 1 exactly
KAPPA_SCALES = (1.0, 1e-4, 1e-5, 1e-6, 1e-8)

LPLR_CONSTANTS = AxisSpec(
    id="lplr-constants",
    description=("paper 4: LPLR-RegCB's unspecified constants as an axis - regret and log-log "
                 "slope against kappa_scale (1 = the proofs' minimal kappas), eps in {1, 10}"),
    instance=ldp_linear.INSTANCES[0],  # d2: unit sphere, d = 2, A = 5
    agents=("lplr-regcb",),
    references=("ldp-linucb",),
    # LPLR-RegCB costs 0.2–1 ms per run-step on 2 loaded cores (more active bins at small
    # scales): the full figure is ≈ 4.4·10⁶ run-steps, about 40 CPU-minutes
    full=Scale(runs=4, horizons=(1_000, 10_000, 100_000), epsilons=(1.0, 10.0),
               kappa_scales=KAPPA_SCALES),
    quick=Scale(runs=3, horizons=(200, 600, 2_000), epsilons=(1.0, 10.0),
                kappa_scales=(1.0, 1e-4, 1e-6)),
    note="unit sphere, d = 2, A = 5 (ldp-linear's d2); kappa_scale multiplies LPLR's four "
         "kappas of Lemmas 4.3/4.4;\nthe privacy guarantee is the same at every scale",
)

LINEAR_EPSILON = AxisSpec(
    id="linear-epsilon",
    description=("paper 4's baselines: final regret at T = 1e4 against eps of central-DP "
                 "LinUCB, LDP-LinUCB and input perturbation, with LinUCB and uniform play"),
    instance=Instance("d5", "unit sphere, d = 5, A = 10", {"d": 5, "A": 10}),
    agents=("central-dp-linucb", "ldp-linucb", "input-perturbation-ols"),
    references=("linucb",),
    full=Scale(runs=10, horizons=(10_000,), epsilons=(0.1, 1.0, 10.0)),
    quick=Scale(runs=3, horizons=(1_000,), epsilons=(0.1, 1.0, 10.0)),
    note="unit sphere, d = 5, A = 10 (the table gives mean ± standard error)",
)

FIGURES: dict[str, AxisSpec] = {s.id: s for s in (LPLR_CONSTANTS, LINEAR_EPSILON)}


def _private(agent: str) -> bool:
    return "epsilon" in Cell(ldp_linear.INSTANCES[0], agent, 2, 2, 0).agent_kwargs


def make_cells(spec: AxisSpec, scale: Scale, seed: int = 0) -> list[Cell]:
    """Every (agent, ε, κ scale, T) cell of ``spec``; references once per ε if private."""
    runs = check_int("runs", scale.runs, low=2)
    hs = tuple(check_int("horizons", h, low=2) for h in scale.horizons)
    if not hs or any(b <= a for a, b in zip(hs, hs[1:], strict=False)):
        raise ValueError(f"horizons must be strictly increasing integers >= 2, got {list(hs)}")
    if spec.id == LPLR_CONSTANTS.id and len(hs) < 2:
        raise ValueError(f"horizons must hold at least 2 values for {spec.id} (a slope), got "
                         f"{list(hs)}")
    eps = tuple(check_real("epsilons", e, low=0.0, low_open=True, high=math.inf,
                           high_open=True) for e in scale.epsilons)
    if not eps:
        raise ValueError("epsilons must hold at least one value")
    ks = tuple(check_real("kappa_scales", k, low=0.0, low_open=True, high=math.inf,
                          high_open=True) for k in scale.kappa_scales)
    seed = check_int("seed", seed, low=0)
    params: list[tuple[tuple[str, float], ...]] = [(("kappa_scale", k),) for k in ks] or [()]
    cells = [Cell(spec.instance, a, h, runs, seed, e, params=p)
             for e in eps for a in spec.agents for p in params for h in hs]
    for a in spec.references:
        for e in (eps if _private(a) else eps[:1]):
            cells += [Cell(spec.instance, a, h, runs, seed, e) for h in hs]
    return list(dict.fromkeys(cells))


def kappa_scale_of(cell: Cell) -> float | None:
    return dict(cell.params).get("kappa_scale")


def label_of(agent: str, epsilon: float | None, kappa_scale: float | None) -> str:
    text = agent if kappa_scale is None else f"{agent}, κ × {kappa_scale:g}"
    return text if epsilon is None else f"{text}, ε = {epsilon:g}"


@dataclass
class Reproduction:
    spec: AxisSpec
    output: Path
    cells: list[Cell]
    results: list[FigureResult]
    uniform_per_round: tuple[float, float]  # (mean, se) of uniform play's regret per round
    series: list[Series] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 0
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None

    def uniform(self, horizon: int) -> float:
        return horizon * self.uniform_per_round[0]

    def result(self, agent: str, epsilon: float | None, horizon: int,
               kappa_scale: float | None = None) -> FigureResult:
        for r in self.results:
            c = r.cell
            if (c.agent == agent and c.horizon == horizon and kappa_scale_of(c) == kappa_scale
                    and (epsilon is None or c.epsilon == epsilon)):
                return r
        raise KeyError((agent, epsilon, horizon, kappa_scale))

    def table(self) -> str:
        """Mean final regret ± standard error per cell, and its ratio to uniform play."""
        head = (f"{'agent':<44}{'T':>8}{'regret ± SE':>22}{'/ uniform':>11}"
                f"{'eliminating':>13}  guarantee")
        lines = [head, "-" * len(head)]
        for r in self.results:
            c = r.cell
            x = r.result.regret
            se = sample_sd(x) / math.sqrt(x.size)
            elim = r.result.episode.get("eliminating_rounds")
            frac = f"{np.mean(elim) / c.horizon:.1%}" if elim is not None else ""
            eps = c.epsilon if "epsilon" in c.agent_kwargs else None
            lines.append(f"{label_of(c.agent, eps, kappa_scale_of(c)):<44}{c.horizon:>8}"
                         f"{f'{x.mean():.4g} ± {se:.2g}':>22}"
                         f"{x.mean() / self.uniform(c.horizon):>11.3f}{frac:>13}  "
                         f"{r.result.privacy}")
        for s in self.series:
            eps = s.epsilon if _private(s.agent) else None
            fit = s.fit.text() if s.fit is not None else f"n/a ({s.fit_error})"
            ks = dict(s.params).get("kappa_scale")
            lines.append(f"slope of {label_of(s.agent, eps, ks)} against T: {fit}")
        return "\n".join(lines)


def reproduce(
    spec: AxisSpec,
    output: str | Path | None = None,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizons: Sequence[int] | None = None,
    epsilons: Sequence[float] | None = None,
    kappa_scales: Sequence[float] | None = None,
    seed: int = 0,
    n_boot: int = ldp_linear.N_BOOT,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run figure ``spec`` (:data:`LPLR_CONSTANTS` or :data:`LINEAR_EPSILON`) and write its files.

    Args:
        spec: the figure.
        output: directory (created); default ``results/<id>`` (``…-quick`` with ``quick``).
        quick: the figure's reduced scale.
        runs, horizons, epsilons, kappa_scales: override the scale's.
        seed: the seed of every cell.
        n_boot: bootstrap resamples of each slope interval.
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or
            its fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``,
            ``figure``) as keywords.
    """
    base = spec.quick if quick else spec.full
    scale = replace(
        base,
        runs=base.runs if runs is None else runs,
        horizons=base.horizons if horizons is None else tuple(horizons),
        epsilons=base.epsilons if epsilons is None else tuple(epsilons),
        kappa_scales=(base.kappa_scales if kappa_scales is None
                      else tuple(sorted(kappa_scales))))
    if spec.id != LPLR_CONSTANTS.id and scale.kappa_scales:
        raise ValueError(f"kappa_scales is only used by {LPLR_CONSTANTS.id}, got "
                         f"{list(scale.kappa_scales)}")
    n_boot = check_int("n_boot", n_boot, low=0)
    ex = Execution.of(execution, **options)
    cells = make_cells(spec, scale, seed)
    config = cell_sweep(cells, spec.id).validate()
    out = output_dir(output, spec.default_output, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    results = regret_results(config, cells, stored)
    rep = Reproduction(spec, out, cells, results,
                       ldp_linear.uniform_regret_per_round(spec.instance, scale.horizons[0]),
                       workers=ex.worker_count, sweep=report,
                       simulation_wall_s=time.perf_counter() - start)
    if len(scale.horizons) >= 2:
        rep.series = ldp_linear.fit_series(results, n_boot=n_boot, seed=seed)
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if ex.figure else None, lambda: _metadata(rep, quick))


# -- files ----------------------------------------------------------------------------------------


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    """``runs.csv``, ``summary.csv`` (and ``slopes.csv`` with two or more horizons); no timing, so
    equal seeds give byte-identical files."""
    out = rep.output
    files = {"runs": out / "runs.csv", "summary": out / "summary.csv"}
    with files["runs"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent", "epsilon", "kappa_scale", "privacy", "seed", "run", "horizon",
                    "regret", "eliminating_rounds"])
        for r in rep.results:
            c = r.cell
            eps = c.agent_kwargs.get("epsilon", "")
            ks = kappa_scale_of(c)
            elim = r.result.episode.get("eliminating_rounds")
            for i, x in enumerate(r.result.regret):
                w.writerow([c.agent, eps, "" if ks is None else ks, str(r.result.privacy), c.seed,
                            i, c.horizon, csv_float(x), "" if elim is None else int(elim[i])])
    with files["summary"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent", "epsilon", "kappa_scale", "privacy", "horizon", "runs",
                    "regret_mean", "regret_se", "uniform_regret", "ratio_to_uniform"])
        for r in rep.results:
            c = r.cell
            ks = kappa_scale_of(c)
            x = r.result.regret
            u = rep.uniform(c.horizon)
            w.writerow([c.agent, c.agent_kwargs.get("epsilon", ""), "" if ks is None else ks,
                        str(r.result.privacy), c.horizon, x.size, csv_float(x.mean()),
                        csv_float(sample_sd(x) / math.sqrt(x.size)), csv_float(u),
                        csv_float(x.mean() / u)])
    if rep.series:
        files["slopes"] = out / "slopes.csv"
        with files["slopes"].open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["agent", "epsilon", "kappa_scale", "horizons", "slope", "ci_low",
                        "ci_high", "level", "n_boot", "note"])
            for s in rep.series:
                ks = dict(s.params).get("kappa_scale", "")
                hs = " ".join(str(int(h)) for h in s.horizons)
                eps = s.epsilon if _private(s.agent) else ""
                if s.fit is None:
                    w.writerow([s.agent, eps, ks, hs, *[""] * 5, s.fit_error])
                else:
                    w.writerow([s.agent, eps, ks, hs, *s.fit.csv_fields(intercept=False), ""])
    return files


def draw(rep: Reproduction) -> list[Path]:
    """``lplr-constants``: per ε, regret against T per κ scale (fitted slopes) and regret at each T
    against the scale; ``linear-epsilon``: regret at T against ε per agent."""
    from privenv.plotting import LogLogPanel, LogLogSeries, Reference, loglog_grid, save_figure

    spec = rep.spec
    panels = []
    if spec.id == LPLR_CONSTANTS.id:
        hs = np.array(sorted({c.horizon for c in rep.cells}), dtype=float)
        u = np.array([rep.uniform(int(h)) for h in hs])
        for eps in dict.fromkeys(c.epsilon for c in rep.cells):
            mine = [s for s in rep.series if s.epsilon == eps]
            refs = [Reference("uniform play", hs, u),
                    Reference("slope 1/2", hs, u[0] * (hs / hs[0]) ** 0.5)]
            panels.append(LogLogPanel(
                f"ε = {eps:g}: regret against T", [LogLogSeries(
                    label_of(s.agent, None, dict(s.params).get("kappa_scale")), s.horizons,
                    s.regret, s.fit) for s in mine], refs))
            ks = np.array(sorted({k for c in rep.cells if (k := kappa_scale_of(c)) is not None}),
                          dtype=float)
            series = []
            for h in hs.astype(int):
                values = np.stack([rep.result("lplr-regcb", eps, h, k).result.regret for k in ks],
                                  axis=1) / rep.uniform(h)
                series.append(LogLogSeries(f"T = {h:,}", ks, values))
            refs = [Reference("uniform play", ks, np.ones(ks.size))]
            for a in spec.references:
                h = int(hs[-1])
                refs.append(Reference(f"{a}, T = {h:,}", ks, np.full(
                    ks.size, rep.result(a, eps, h).result.regret.mean() / rep.uniform(h))))
            panels.append(LogLogPanel(f"ε = {eps:g}: lplr-regcb against the κ scale", series,
                                      refs, xlabel="kappa_scale (1 = the proofs' κ's)",
                                      ylabel="regret at T / uniform play's"))
        ncols = 2
    else:
        h = max(c.horizon for c in rep.cells)
        epsilons = np.array(sorted({c.epsilon for c in rep.cells}), dtype=float)
        series = [LogLogSeries(a, epsilons, np.stack([rep.result(a, e, h).result.regret
                                                      for e in epsilons], axis=1))
                  for a in spec.agents]
        refs = [Reference("uniform play", epsilons, np.full(epsilons.size, rep.uniform(h)))]
        refs += [Reference(f"{a} (non-private)", epsilons,
                           np.full(epsilons.size, rep.result(a, None, h).result.regret.mean()))
                 for a in spec.references if not _private(a)]
        panels.append(LogLogPanel(f"{spec.instance.title}, T = {h:,}", series, refs,
                                  xlabel="privacy budget ε", ylabel="cumulative regret at T"))
        ncols = 1
    runs = rep.cells[0].runs
    fig = loglog_grid(panels, ncols=ncols, panel_size=(5.6, 4.2),
                      suptitle=f"{spec.id} — {runs} runs per cell",
                      footnote=f"{spec.note}\npoints: mean final regret of separate runs, bars "
                               "± 1 sd; dashed: fitted log-log slope (95% bootstrap CI over "
                               "runs); grey: references")
    return save_figure(fig, rep.output / spec.id)


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    spec = rep.spec
    cells = []
    for r in rep.results:
        c = r.cell
        x = r.result.regret
        cells.append({
            "agent": c.agent, "seed": c.seed, "runs": c.runs, "horizon": c.horizon,
            "env_kwargs": c.instance.env_kwargs, "agent_kwargs": c.agent_kwargs,
            "agent_params": r.result.agent_params, **r.result.privacy.as_dict(),
            "regret_mean": float(x.mean()), "regret_se": float(sample_sd(x) / math.sqrt(x.size)),
            "uniform_regret": rep.uniform(c.horizon),
            "episode": {k: np.asarray(v).tolist() for k, v in r.result.episode.items()},
            "wall_s": r.result.wall_s, "ns_per_run_step": r.result.ns_per_run_step,
            "command": c.command(),
        })
    slopes = []
    for s in rep.series:
        row: dict[str, Any] = {"agent": s.agent, "epsilon": s.epsilon, "params": dict(s.params),
                               "horizons": [int(h) for h in s.horizons]}
        row.update(asdict(s.fit) if s.fit is not None else {"slope": None, "note": s.fit_error})
        slopes.append(row)
    return {
        "figure": spec.id,
        "description": spec.description,
        "paper": PAPER,
        "note": spec.note,
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ldp_linear.ENV_ID,
        "instance": {"key": spec.instance.key, "title": spec.instance.title,
                     "env_kwargs": spec.instance.env_kwargs},
        "seed": rep.cells[0].seed,
        "seeding": "every cell uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding): common random numbers across agents, eps, scales and T",
        "uniform_regret_per_round": {"mean": rep.uniform_per_round[0],
                                     "se": rep.uniform_per_round[1]},
        "guarantees": guarantees_by_epsilon(rep.results),  # the same at every κ scale
        "slopes": slopes,
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
    parser.add_argument("--horizons", type=int_list, default=None,
                        metavar="T1,T2,...",
                        help=f"horizons (default {','.join(map(str, f.horizons))}; "
                             f"{','.join(map(str, q.horizons))} with --quick)")
    parser.add_argument("--epsilons", type=float_list, default=None, metavar="E1,E2,...",
                        help=f"local ε values (default {','.join(f'{e:g}' for e in f.epsilons)})")
    if spec.full.kappa_scales:
        parser.add_argument("--kappa-scales", type=float_list, default=None, metavar="K1,...",
                            help="LPLR's kappa_scale values (default "
                                 f"{','.join(f'{k:g}' for k in f.kappa_scales)}; "
                                 f"{','.join(f'{k:g}' for k in q.kappa_scales)} with --quick)")


def main(args: argparse.Namespace, spec: AxisSpec) -> int:
    """Run from parsed command-line options; prints the summary table on stdout."""
    rep = reproduce_or_report(spec.id, lambda: reproduce(
        spec, args.output, quick=args.quick, runs=args.runs, horizons=args.horizons,
        epsilons=args.epsilons, kappa_scales=getattr(args, "kappa_scales", None),
        seed=args.seed, execution=Execution.from_args(args)))
    if rep is None:
        return 1
    print(f"{spec.id}: {len(rep.cells)} cells, {rep.cells[0].runs} runs, "
          f"{rep.sweep.backend if rep.sweep else ''}, wall time {rep.wall_s:.1f} s; uniform "
          f"play {rep.uniform_per_round[0]:.4g} per round")
    print(rep.table())
    print_files(rep.files)
    return 0
