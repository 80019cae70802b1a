"""``huber-fig1``: paper 1, Figure 1 (a–f) — private and robust arm elimination on heavy tails.

Paper 1 §7 (Wu, Zhou, Tao, Wang, *On Private and Robust Bandits*, NeurIPS 2023): K = 5 arms with
means μ_a = 100 − 100(a − 1)/(K − 1), Huber contamination N(0, 50²), horizon T = 10⁵ (δ = 1/T),
30 runs; cumulative clean regret against t for PRAE-R, PRAE-C and DPRSE.

Scales (:data:`FULL`, :data:`QUICK`, :data:`PAPER`): the full reproduction is the paper's 30 runs
at T = 10⁶, ten times the paper's horizon, and ``--quick`` (what ``make reproduce`` runs) the same
horizon with 3 runs. With the proofs' constants no agent has left its exploration at the paper's
T = 10⁵ (docs/results/huber-fig1.md); at T = 10⁶ two of them have, and the figure shows learning.
The paper's own scale is ``--horizon 100000`` (:data:`PAPER`).

======  ===========================  =====  =====
panel   inliers                      α      ε
======  ===========================  =====  =====
(a)     Student-t, ν = 2.5           5 %    0.2
(b)     Student-t, ν = 2.5           5 %    0.5
(c)     Student-t, ν = 2.5           5 %    1
(d)     Pareto, s = 2.5, x_m = 1.5   2 %    0.5
(e)     Pareto, s = 2.5, x_m = 1.5   5 %    0.5
(f)     Pareto, s = 2.5, x_m = 1.5   10 %   0.5
======  ===========================  =====  =====

The paper reports PRAE-C ≤ PRAE-R < DPRSE in every panel, DPRSE degrading as α grows while PRAE
barely moves, and regret growing as ε shrinks. The agents' constants (confidence radius, first
phase) are fixed once in :mod:`privenv.agents.huber`; nothing here is tuned per panel.

Each (panel, agent) pair is one *cell*: one configuration of a sweep (:mod:`privenv.sweep`), run
by :func:`privenv.simulation.simulate` with the same integer seed for every cell: run *i* of every
cell sees the same reward streams (common random numbers), so agents and panels are compared on
paired data, and a cell's numbers do not depend on the backend or the number of worker processes.
The sweep writes every finished cell to the results store ``results.sqlite`` (``--resume``
continues an interrupted reproduction), and the CSVs and the figure are drawn from the store.
Cell (a, prae-r) is exactly ``privenv run --env HuberBandit-v0 --agent prae-r --runs 30
--horizon 100000 --seed 0 --set epsilon=0.2 --set env.alpha=0.05`` (the metadata file lists the
command of every cell).

Outputs (in ``--output``): ``results.sqlite`` (the results store, :mod:`privenv.store`, which
``privenv export`` and ``privenv plot`` read), ``runs.csv`` (one row per run: final regret),
``curves.csv`` (the regret of every run at log-spaced checkpoints), ``metadata.json`` (versions,
seeds, privacy guarantees, agent parameters, theory rates, wall times) and
``huber-fig1.png``/``.pdf``.

The figure draws the agents' mean regret ± 1 sd over runs and uniform play's expected regret
(t × mean gap). An agent whose runs all have the same regret (DPRSE: its eliminations come at
batches its schedule fixes, the same in every run, and the pseudo-regret counts only which arms
were pulled) is drawn without a band and says so in the legend and the footnote. The paper's
rates (:mod:`privenv.theory.huber`, every constant set to 1: orders, not bounds for this
instance) are recorded in ``metadata.json`` at the horizon, not drawn.
"""

from __future__ import annotations

import argparse
import csv
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._stats import sample_sd
from privenv._validation import check_choice, check_int
from privenv.reproduce.cells import (
    Execution,
    FigureResult,
    add_common_arguments,
    cell_sweep,
    csv_float,
    finish_figure,
    output_dir,
    print_files,
    regret_results,
    run_metadata,
    run_summary,
    utc_now,
)
from privenv.sweep import Configuration, SweepReport

ID = "huber-fig1"
DESCRIPTION = ("paper 1, Figure 1 (a-f): PRAE-R, PRAE-C and DPRSE on heavy-tailed bandits with "
               "Huber contamination (6 panels)")
ENV_ID = "HuberBandit-v0"

#: the agents of the figure (registry names, :mod:`privenv.agents`)
AGENTS: tuple[str, ...] = ("prae-r", "prae-c", "dprse")


@dataclass(frozen=True)
class Scale:
    runs: int
    horizon: int


#: the paper's scale (§7.1): 30 runs at T = 10⁵ (``--horizon 100000``)
PAPER = Scale(runs=30, horizon=100_000)
#: the full scale: the paper's 30 runs at ten times its horizon, where the agents have left their
#: first batches and learning is visible (PRAE-C's regret well below uniform play's 5·10⁷)
FULL = Scale(runs=30, horizon=1_000_000)
#: the ``--quick`` scale (``make reproduce``): the full horizon with 3 runs
QUICK = Scale(runs=3, horizon=1_000_000)
#: log-spaced regret checkpoints per run (the curves of the figure)
N_CHECKPOINTS = 200
DEFAULT_OUTPUT = "results/huber-fig1"

_INLIER_NAMES = {"student-t": "Student's t", "pareto": "Pareto"}


@dataclass(frozen=True)
class Panel:
    """One panel of Figure 1: inlier law, contamination level α, privacy budget ε."""

    key: str
    inlier: str
    alpha: float
    epsilon: float

    @property
    def title(self) -> str:
        return (f"({self.key}) {_INLIER_NAMES[self.inlier]}, α = {100 * self.alpha:g}%, "
                f"ε = {self.epsilon:g}")

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return {"inlier": self.inlier, "alpha": self.alpha}


PANELS: tuple[Panel, ...] = (
    Panel("a", "student-t", 0.05, 0.2),
    Panel("b", "student-t", 0.05, 0.5),
    Panel("c", "student-t", 0.05, 1.0),
    Panel("d", "pareto", 0.02, 0.5),
    Panel("e", "pareto", 0.05, 0.5),
    Panel("f", "pareto", 0.10, 0.5),
)


@dataclass(frozen=True)
class Cell:
    """One (panel, agent) configuration; everything its result depends on. ``params`` are further
    agent parameters as (name, value) pairs (e.g. ``arm_order`` or ``constant_scale``)."""

    panel: Panel
    agent: str
    runs: int
    horizon: int
    seed: int
    n_checkpoints: int = N_CHECKPOINTS
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def agent_kwargs(self) -> dict[str, Any]:
        """The panel's ε and ``params``, each for the agents that take it (non-private baselines
        take no ε)."""
        from privenv.agents import agent_class

        known = agent_class(self.agent).parameters
        kwargs = {"epsilon": self.panel.epsilon, **dict(self.params)}
        return {k: v for k, v in kwargs.items() if k in known}

    @property
    def configuration(self) -> Configuration:
        """This cell as a sweep configuration."""
        return Configuration(ENV_ID, self.panel.env_kwargs, self.agent, self.agent_kwargs,
                             self.horizon)

    def command(self) -> str:
        """The ``privenv run`` command that reproduces this cell's final regrets."""
        sets = [f"--set {k}={v!r}" for k, v in self.agent_kwargs.items()]
        sets += [f"--set env.{k}={v}" for k, v in self.panel.env_kwargs.items()]
        return (f"privenv run --env {ENV_ID} --agent {self.agent} --runs {self.runs} "
                f"--horizon {self.horizon} --seed {self.seed} " + " ".join(sets))


def make_cells(agents: Sequence[str] = AGENTS, runs: int = FULL.runs,
               horizon: int = FULL.horizon, seed: int = 0,
               panels: Sequence[Panel] = PANELS,
               params: tuple[tuple[str, Any], ...] = ()) -> list[Cell]:
    """Every (panel, agent) cell, panel-major; every cell uses the same ``seed`` and ``params``."""
    from privenv.agents import agent_class

    runs = check_int("runs", runs, low=1)
    horizon = check_int("horizon", horizon, low=2)
    seed = check_int("seed", seed, low=0)
    for a in agents:  # unknown or missing agents fail here, before any work starts
        try:
            agent_class(a)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"agent {a!r} is registered but cannot be imported: {e}") from e
    return [Cell(p, a, runs, horizon, seed, params=params) for p in panels for a in agents]


# -- theory references ----------------------------------------------------------------------------


def theory_curves(panel: Panel, t: np.ndarray) -> dict[str, np.ndarray]:
    """Paper 1 rates on this panel's instance, all constants 1, rescaled to reward units.

    The theorems are stated for a unit moment bound; the class of instances with bound u is the
    unit class scaled by u^{1/k}, so its rates are u^{1/k} times the unit rates:

    * Theorem 4.1 (minimax lower-bound rate) and Theorem 6.2 (PRAE-R): × u^{1/k} with u the raw
      moment bound max_a E[X_a²] (≈ 100² on the paper's instance), the class Algorithm 2 assumes;
    * Theorem 6.12 (PRAE-C): × σ = (central moment bound)^{1/k} = √5, with D = max|μ_a|/σ.
    """
    from privenv.problems.huber import HuberProblem
    from privenv.theory import huber as th

    info = HuberProblem(**panel.env_kwargs).public_info()
    k = info["moment_order"]
    s_raw = info["raw_moment_bound"] ** (1.0 / k)
    s_central = info["central_moment_bound"] ** (1.0 / k)
    K, eps, alpha = info["K"], panel.epsilon, info["alpha"]
    t = np.asarray(t, dtype=float)
    return {
        "Thm 4.1 lower-bound rate": s_raw * th.lower_bound_rate(t, K, eps, alpha, k),
        "Thm 6.2 PRAE-R rate": s_raw * th.upper_bound_raw_rate(t, K, eps, alpha, k),
        "Thm 6.12 PRAE-C rate": s_central * th.upper_bound_central_rate(
            t, K, eps, alpha, k, D=info["mean_range"] / s_central),
    }


def uniform_regret_rate(panel: Panel) -> float:
    """Expected regret per round of uniformly random play, the mean gap (50 on the paper's
    instance): the scale against which 'learned nothing yet' is read off the figure."""
    from privenv.problems.huber import HuberProblem

    return float(HuberProblem(**panel.env_kwargs).gaps.mean())


THEORY_NOTE = ("paper 1 rates with all constants set to 1 (orders only), rescaled by "
               "u^(1/k) = √(max E[X²]) ≈ 100 (raw-moment class); Thm 4.1 is a minimax bound over "
               "that class, not a bound for this instance")
#: why an agent's runs can all have the same regret (the footnote of the figure and the table)
EQUAL_RUNS_NOTE = ("sd 0: every run eliminated at the same batches (the schedule fixes them and "
                   "the gaps are far above the radii), and regret counts only the arms pulled")


# -- the reproduction -----------------------------------------------------------------------------


@dataclass
class Reproduction:
    output: Path
    cells: list[Cell]
    results: list[FigureResult]
    wall_s: float  # the whole reproduction: simulations, CSVs and figure
    workers: int
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0  # the cells only
    sweep: SweepReport | None = None

    def table(self) -> str:
        """Final regret, mean ± sd over runs, one row per panel and one column per agent."""
        agents = list(dict.fromkeys(c.agent for c in self.cells))
        panels = list(dict.fromkeys(c.panel for c in self.cells))
        by = {(r.cell.panel, r.cell.agent): r.result.regret for r in self.results}

        def cell(x: np.ndarray) -> str:
            return f"{x.mean():.0f} ± {sample_sd(x):.0f}" + ("*" if _equal_runs(x) else "")

        texts = {key: cell(x) for key, x in by.items()}
        width = max(len(a) for a in agents) + 3
        width = max(width, *(len(v) + 3 for v in texts.values()))
        title = max(len(p.title) for p in panels) + 1
        head = f"{'panel':<{title}}" + "".join(f"{a:>{width}}" for a in agents)
        lines = [head, "-" * len(head)]
        for p in panels:
            lines.append(f"{p.title:<{title}}" + "".join(f"{texts[(p, a)]:>{width}}"
                                                         for a in agents))
        if any(v.endswith("*") for v in texts.values()):
            lines += textwrap.wrap(f"* {EQUAL_RUNS_NOTE}", len(head), subsequent_indent="  ")
        return "\n".join(lines)


def write_csvs(results: Sequence[FigureResult], output: Path) -> dict[str, Path]:
    """``runs.csv`` (final regret per run) and ``curves.csv`` (regret at every checkpoint).
    Nothing timing-dependent goes into them, so equal seeds give byte-identical files."""
    runs_path, curves_path = output / "runs.csv", output / "curves.csv"
    with runs_path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "inlier", "alpha", "epsilon", "agent", "privacy", "seed", "run",
                    "horizon", "regret"])
        for r in results:
            c = r.cell
            for i, x in enumerate(r.result.regret):
                w.writerow([c.panel.key, c.panel.inlier, c.panel.alpha, c.panel.epsilon, c.agent,
                            str(r.result.privacy), c.seed, i, c.horizon, csv_float(x)])
    with curves_path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "agent", "run", "t", "regret"])
        for r in results:
            for i, row in enumerate(r.result.regret_curve):
                for t, x in zip(r.result.checkpoint_times, row, strict=True):
                    w.writerow([r.cell.panel.key, r.cell.agent, i, int(t), csv_float(x)])
    return {"runs": runs_path, "curves": curves_path}


def draw(results: Sequence[FigureResult], output: Path, runs: int, horizon: int) -> list[Path]:
    """The six-panel figure (:func:`figure`) as ``huber-fig1.png`` and ``.pdf`` in ``output``."""
    from privenv.plotting import save_figure

    return save_figure(figure(results, runs, horizon), output / ID)


def figure(results: Sequence[FigureResult], runs: int, horizon: int) -> Any:
    """The six-panel figure in the layout of paper 1 Figure 1: each agent's mean regret ± 1 sd
    and uniform play's expected regret; a footnote says why an agent's runs are all equal."""
    from privenv.plotting import Reference, RegretPanel, regret_grid

    panels = []
    equal = set()
    for p in dict.fromkeys(r.cell.panel for r in results):
        mine = [r for r in results if r.cell.panel == p]
        t = mine[0].result.checkpoint_times
        rate = uniform_regret_rate(p)
        refs = [Reference(f"uniform play (expected: t × mean gap {rate:g})", t, t * rate)]
        panels.append(RegretPanel(p.title, t, {r.cell.agent: r.result.regret_curve for r in mine},
                                  refs))
        equal |= {r.cell.agent for r in mine if _equal_runs(r.result.regret)}
    scale = "" if horizon == PAPER.horizon else (
        f" ({horizon / PAPER.horizon:g}× the paper's T = {PAPER.horizon:,})")
    return regret_grid(
        panels, ncols=3,
        suptitle=(f"Paper 1 Figure 1 — K = 5, μ = 100…0, T = {horizon:,}{scale}, {runs} runs, "
                  "mean ± 1 sd"),
        footnote=f"{', '.join(sorted(equal))} {EQUAL_RUNS_NOTE}" if equal else None,
    )


def _equal_runs(regret: np.ndarray) -> bool:
    """Several runs, all with the same final regret."""
    return regret.size > 1 and bool(np.all(regret == regret[0]))


def reproduce(
    output: str | Path | None = None,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    agents: Sequence[str] = AGENTS,
    arm_order: str = "index",
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run the reproduction and write its files; returns the results.

    Args:
        output: directory (created); default ``results/huber-fig1`` (``…-quick`` with ``quick``).
        quick: the reduced scale :data:`QUICK` instead of :data:`FULL`.
        runs, horizon: override the scale's.
        seed: the seed of every cell.
        agents: registry names (default: the figure's :data:`AGENTS`).
        arm_order: the order in which a batch visits its active arms, for every agent
            (``"index"``, the default, or ``"random"``; Algorithm 1 does not fix one).
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or
            its fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``,
            ``figure``) as keywords.

    Raises:
        RuntimeError: if a cell failed (its error is in the store; ``resume`` retries it).
    """
    scale = QUICK if quick else FULL
    runs = scale.runs if runs is None else runs
    horizon = scale.horizon if horizon is None else horizon
    ex = Execution.of(execution, **options)
    from privenv.agents.mab import BatchedElimination

    arm_order = check_choice("arm_order", arm_order, BatchedElimination.ARM_ORDERS)
    params = (("arm_order", arm_order),) if arm_order != "index" else ()
    cells = make_cells(agents, runs, horizon, seed, params=params)
    # panels that share an instance and ε (a non-private baseline) share a configuration
    config = cell_sweep(cells, ID).validate()
    out = output_dir(output, DEFAULT_OUTPUT, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    results = regret_results(config, cells, stored)
    rep = Reproduction(out, cells, results, 0.0, ex.worker_count, sweep=report)
    rep.simulation_wall_s = time.perf_counter() - start
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(results, out),
                         (lambda: draw(results, out, runs, horizon)) if ex.figure else None,
                         lambda: _metadata(rep, quick))


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:

    cells = []
    for r in rep.results:
        c = r.cell
        x = r.result.regret
        cells.append({
            "panel": c.panel.key, "agent": c.agent, "seed": c.seed, "runs": c.runs,
            "first_run": 0, "horizon": c.horizon, "env_kwargs": c.panel.env_kwargs,
            "agent_kwargs": c.agent_kwargs, "agent_params": r.result.agent_params,
            **r.result.privacy.as_dict(),
            "regret_mean": float(x.mean()),
            "regret_sd": sample_sd(x),
            "wall_s": r.result.wall_s, "ns_per_run_step": r.result.ns_per_run_step,
            "command": c.command(),
        })
    theory = {}
    for p in dict.fromkeys(c.panel for c in rep.cells):
        horizon = rep.cells[0].horizon
        theory[p.key] = {k: float(v[-1]) for k, v in theory_curves(p, np.array([horizon])).items()}
    return {
        "figure": ID,
        "description": DESCRIPTION,
        "paper": "Wu, Zhou, Tao, Wang, On Private and Robust Bandits (NeurIPS 2023), §7, Fig. 1",
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ENV_ID,
        "agents": list(dict.fromkeys(c.agent for c in rep.cells)),
        "runs": rep.cells[0].runs,
        "horizon": rep.cells[0].horizon,
        "seed": rep.cells[0].seed,
        "seeding": "every cell uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding), so agents and panels are compared on common random numbers",
        "panels": [{"key": p.key, "title": p.title, "env_kwargs": p.env_kwargs,
                    "epsilon": p.epsilon} for p in dict.fromkeys(c.panel for c in rep.cells)],
        "cells": cells,
        "theory_at_horizon": theory,
        "theory_note": THEORY_NOTE + "; Thm 6.12 rescaled by σ = √(central moment bound), "
                                     "D = max|μ|/σ",
        **run_metadata(rep),
        "scale": {"full": asdict(FULL), "quick": asdict(QUICK), "paper": asdict(PAPER),
                  "n_checkpoints": N_CHECKPOINTS},
    }


# -- command line ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``privenv reproduce huber-fig1``."""
    add_common_arguments(parser, DEFAULT_OUTPUT)
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per cell (default {FULL.runs}; {QUICK.runs} with --quick)")
    parser.add_argument("--horizon", type=int, default=None, metavar="T",
                        help=f"horizon T (default {FULL.horizon}, also with --quick; the paper's: "
                             f"{PAPER.horizon})")
    parser.add_argument("--agents", default=",".join(AGENTS),
                        help=f"comma-separated agent names (default: {','.join(AGENTS)})")
    parser.add_argument("--arm-order", default="index", metavar="ORDER",
                        help="order in which a batch visits its active arms: index (default, the "
                             "pseudocode's loop) or random (regret independent of the labels)")


def main(args: argparse.Namespace) -> int:
    """Run from parsed command-line options; prints the final-regret table on stdout."""
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not agents:
        raise ValueError("agents must name at least one agent")
    try:
        rep = reproduce(args.output, quick=args.quick, runs=args.runs, horizon=args.horizon,
                        seed=args.seed, agents=agents, arm_order=args.arm_order,
                        execution=Execution.from_args(args))
    except RuntimeError as e:  # failed cells: stored with their errors, retried by --resume
        print(f"privenv reproduce {ID}: {e}", file=sys.stderr)
        return 1
    print(run_summary(ID, rep))
    print("final cumulative regret, mean ± sd over runs:")
    print(rep.table())
    print_files(rep.files)
    return 0
