"""``ldp-linear``: paper 4 — regret against T of locally private linear contextual bandits.

Paper 4 (Li, Simchi-Levi, Wang, *On the Optimal Regret of Locally Private Linear Contextual
Bandit*) proves Õ(√T) regret for LPLR + RegCB elimination (Theorem 4.7) under α-local DP, against
Õ(T^{3/4}) for the mean-square-error approach of Zheng et al. 2020 (LDP-LinUCB), and shows with
Theorem 2.1 that no locally private estimator beats MSE Ω(1/√n) on an instance whose informative
direction occurs with probability 1/√n. The paper has no experiments; this figure measures what
its theorems predict, the fitted log–log slope of regret against T (≈ 1/2 for LPLR-RegCB, ≈ 3/4 for
LDP-LinUCB), d ≤ 3, T up to 10⁶, and the hard instance of Theorem 2.1.

Instances (``LinearContextualBandit-v0``, ±1 rewards, A = 5 unless fixed by the instance):

=====  ==========================================================================================
key    instance
=====  ==========================================================================================
d2     unit-sphere features, d = 2
d3     unit-sphere features, d = 3
hard   Theorem 2.1's instance with n = T (``contexts="hard"``): φ = e₂ with probability 1/√T,
       e₁ otherwise, actions ±φ, here with θ* = (0, −1) (the env's default (0, 1) makes action
       0 optimal on every round, which rewards an agent that breaks ties towards action 0).
       Uniform play has regret √T (slope 1/2). The rare rounds are the only informative ones;
       under ε-LDP their total signal (≈ √T) is of the order of the privacy noise of all T
       messages (≈ √T/ε), so the signal-to-noise ratio does not grow with T — the intuition of
       Theorem 2.1, which bounds the MSE of any locally private estimator by Ω(1/√n), not the
       regret. Expect slope ≈ 1/2 for the private agents and ≈ 0 for non-private LinUCB
wine   the bundled wine data set as a 3-class contextual bandit (``contexts="dataset"``,
       disjoint encoding, d = 42; reward +1 for the true class). LPLR-RegCB is left out: its
       partition has (M+1)^d bins per action (the agent accepts d ≤ 6)
=====  ==========================================================================================

Agents: ``lplr-regcb`` (paper 4, κ at the minimal values of its Lemmas 4.3/4.4), ``ldp-linucb``
(Zheng et al. 2020), ``linucb`` (non-private OFUL) and ``input-perturbation-ols`` (Theorem 2.2's
negative example, a teaching line), every private agent at the same local ε (default 1).

Each (instance, agent, T) is one configuration of a sweep (:mod:`privenv.sweep`), with its own
horizon — the agents' schedules and confidence levels depend on T, so "regret against T" is the
final regret of separate runs at each T, not one anytime curve. Every configuration uses the same
seed, so run i of every cell shares its seed (common random numbers) and a bootstrap over runs
resamples whole runs across horizons. The slope is the least-squares slope of log(mean final
regret) on log T over the horizons (:func:`privenv.plotting.loglog_slope`), with a 95 %
percentile-bootstrap interval over runs.

Known facts the figure shows rather than hides: with the paper's κ constants LPLR-RegCB never
eliminates an action at feasible T — its regret is that of uniform play (slope ≈ 1); LDP-LinUCB
with Zheng et al.'s confidence widths is close to uniform play at T ≤ 10⁴ for ε ≤ 10. The summary
table gives each agent's regret at the largest T as a fraction of uniform play's.

Outputs (in ``--output``): ``results.sqlite`` (the results store), ``runs.csv`` (final regret per
run and horizon), ``curves.csv`` (within-run regret at log-spaced checkpoints), ``slopes.csv``
(the fits), ``metadata.json`` (versions, seeds, privacy guarantees, agent parameters, uniform-play
regret, wall times, the ``privenv run`` command of every cell) and ``ldp-linear.png``/``.pdf``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._validation import check_int, check_real
from privenv.plotting import SlopeFit, loglog_slope
from privenv.reproduce.cells import (
    Execution,
    FigureResult,
    add_common_arguments,
    cell_sweep,
    csv_float,
    finish_figure,
    int_list,
    output_dir,
    print_files,
    regret_results,
    reproduce_or_report,
    run_metadata,
    select,
    utc_now,
)
from privenv.sweep import Configuration, SweepReport

ID = "ldp-linear"
DESCRIPTION = ("paper 4: log-log regret against T of LPLR-RegCB, LDP-LinUCB, LinUCB and input "
               "perturbation (d <= 3, Thm 2.1's hard instance, wine data), with fitted slopes")
ENV_ID = "LinearContextualBandit-v0"

#: the agents of the figure (registry names, :mod:`privenv.agents`)
AGENTS: tuple[str, ...] = ("lplr-regcb", "ldp-linucb", "linucb", "input-perturbation-ols")
#: local ε (paper 4's α) of every private agent
EPSILON = 1.0
#: bootstrap resamples and confidence level of the slope intervals
N_BOOT = 2000
LEVEL = 0.95
#: within-run regret checkpoints (curves.csv)
N_CHECKPOINTS = 40
#: contexts drawn to estimate uniform play's regret per round
UNIFORM_ROUNDS = 200_000
#: an agent whose regret at the largest T is at least this fraction of uniform play's is flagged
NEAR_UNIFORM = 0.9
DEFAULT_OUTPUT = "results/ldp-linear"


@dataclass(frozen=True)
class Scale:
    runs: int
    horizons: tuple[int, ...]


#: full scale (T up to 10⁶) and the ``--quick`` scale. Measured on 2 cores: ``--quick``
#: (60 cells) ≈ 70 s; 10 runs at T = 10³ … 10⁵ (75 cells) ≈ 12 min, the T = 10⁵ cells costing
#: 16–180 µs per run-step (LPLR-RegCB ≈ 170, LDP-LinUCB on wine ≈ 150), so the full scale is
#: ≈ 4–5 CPU-hours, ≈ 2–2.5 h on 2 cores (its largest cell, LPLR-RegCB at T = 10⁶, ≈ 45 min).
FULL = Scale(runs=20, horizons=(1_000, 10_000, 100_000, 1_000_000))
QUICK = Scale(runs=10, horizons=(300, 1_000, 3_000, 10_000))


@dataclass(frozen=True)
class Instance:
    """One panel: an instance of ``LinearContextualBandit-v0``."""

    key: str
    title: str
    env_kwargs: dict[str, Any]

    def __hash__(self) -> int:
        return hash(self.key)


INSTANCES: tuple[Instance, ...] = (
    Instance("d2", "unit sphere, d = 2, A = 5", {"d": 2, "A": 5}),
    Instance("d3", "unit sphere, d = 3, A = 5", {"d": 3, "A": 5}),
    Instance("hard", "Thm 2.1 hard instance, n = T, θ* = (0, −1)",
             {"contexts": "hard", "theta": [0.0, -1.0]}),
    Instance("wine", "wine data set (A = 3, d = 42)", {"contexts": "dataset", "dataset": "wine"}),
)

#: (instance, agent) pairs left out, with the reason (recorded in the metadata)
SKIPPED: dict[tuple[str, str], str] = {
    ("wine", "lplr-regcb"): "LPLR's partition has (M+1)^d bins per action; the agent accepts "
                            "d <= 6 and the wine instance has d = 42",
}


@dataclass(frozen=True)
class Cell:
    """One (instance, agent, horizon) configuration; everything its result depends on."""

    instance: Instance
    agent: str
    horizon: int
    runs: int
    seed: int
    epsilon: float = EPSILON
    n_checkpoints: int = N_CHECKPOINTS
    #: further agent arguments, as sorted (name, value) pairs (e.g. LPLR's ``kappa_scale``)
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def agent_kwargs(self) -> dict[str, Any]:
        """ε for agents that take one (the non-private baseline does not), then ``params``."""
        from privenv.agents import agent_class

        declared = agent_class(self.agent).parameters
        return {**({"epsilon": self.epsilon} if "epsilon" in declared else {}),
                **dict(self.params)}

    @property
    def configuration(self) -> Configuration:
        return Configuration(ENV_ID, self.instance.env_kwargs, self.agent, self.agent_kwargs,
                             self.horizon)

    def command(self) -> str:
        """The ``privenv run`` command that reproduces this cell's final regrets."""
        sets = [f"--set {k}={v!r}" for k, v in self.agent_kwargs.items()]
        sets += ["--set " + shlex.quote(f"env.{k}={json.dumps(v, separators=(',', ':'))}")
                 for k, v in self.instance.env_kwargs.items()]
        return (f"privenv run --env {ENV_ID} --agent {self.agent} --runs {self.runs} "
                f"--horizon {self.horizon} --seed {self.seed} " + " ".join(sets))


@dataclass
class Series:
    """One (instance, agent) line of the figure: final regret per run at every horizon."""

    instance: Instance
    agent: str
    horizons: np.ndarray
    regret: np.ndarray  # (runs, len(horizons))
    fit: SlopeFit | None
    fit_error: str = ""  # why there is no fit (a non-positive mean regret)
    params: tuple[tuple[str, Any], ...] = ()  # the cells' extra agent arguments
    epsilon: float = EPSILON


def check_horizons(horizons: Sequence[int]) -> tuple[int, ...]:
    """At least two increasing horizons ≥ 2 (a slope needs two points)."""
    hs = tuple(check_int("horizons", h, low=2) for h in horizons)
    if len(hs) < 2 or any(b <= a for a, b in zip(hs, hs[1:], strict=False)):
        raise ValueError(f"horizons must be at least 2 strictly increasing integers >= 2, got "
                         f"{list(horizons)}")
    return hs


def make_cells(agents: Sequence[str] = AGENTS, runs: int = FULL.runs,
               horizons: Sequence[int] = FULL.horizons, seed: int = 0,
               instances: Sequence[Instance] = INSTANCES, epsilon: float = EPSILON) -> list[Cell]:
    """Every (instance, agent, horizon) cell but the :data:`SKIPPED` pairs; same seed for all."""
    from privenv.agents import agent_class

    runs = check_int("runs", runs, low=2)  # a bootstrap over runs needs at least 2
    hs = check_horizons(horizons)
    seed = check_int("seed", seed, low=0)
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True, high=math.inf,
                         high_open=True)
    if not agents:
        raise ValueError("agents must name at least one agent")
    for a in agents:  # unknown or missing agents fail here, before any work starts
        try:
            agent_class(a)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"agent {a!r} is registered but cannot be imported: {e}") from e
    return [Cell(inst, a, h, runs, seed, epsilon) for inst in instances for a in agents
            if (inst.key, a) not in SKIPPED for h in hs]


def fit_series(results: Sequence[FigureResult], n_boot: int = N_BOOT, level: float = LEVEL,
               seed: int = 0) -> list[Series]:
    """Group the cells by (instance, agent, ε, extra parameters) and fit the log–log slope of each
    group."""
    groups: dict[tuple[Instance, str, float, tuple[tuple[str, Any], ...]], list[FigureResult]] = {}
    for r in results:
        c = r.cell
        eps = c.epsilon if "epsilon" in c.agent_kwargs else EPSILON
        groups.setdefault((c.instance, c.agent, eps, c.params), []).append(r)
    out = []
    for (inst, agent, eps, params), rs in groups.items():
        rs = sorted(rs, key=lambda r: r.cell.horizon)
        horizons = np.array([r.cell.horizon for r in rs], dtype=float)
        regret = np.stack([r.result.regret for r in rs], axis=1)
        try:
            fit, error = loglog_slope(horizons, regret, n_boot=n_boot, level=level, seed=seed), ""
        except ValueError as e:  # a zero mean regret (e.g. LinUCB on an easy instance)
            fit, error = None, str(e)
        out.append(Series(inst, agent, horizons, regret, fit, error, params, eps))
    return out


# -- uniform play ---------------------------------------------------------------------------------


def uniform_regret_per_round(instance: Instance, horizon: int, rounds: int = UNIFORM_ROUNDS,
                             seed: int = 12345) -> tuple[float, float]:
    """Expected regret per round of uniformly random play, E[max_a m_a − mean_a m_a] with m_a =
    E[y | x, a], and its Monte Carlo standard error (``rounds`` contexts from a fixed seed; the
    hard instance uses n = ``horizon``, where the exact value is 1/√n)."""
    from privenv.problems.linear import LinearContextualProblem

    kw = dict(instance.env_kwargs)
    if kw.get("contexts") == "hard":
        kw["n"] = horizon
    p = LinearContextualProblem(**kw)
    gen = np.random.default_rng(seed)
    gaps = []
    for n in [50_000] * (rounds // 50_000) + ([rounds % 50_000] if rounds % 50_000 else []):
        raw = p.contexts.draw(gen, (n,))
        m = p.contexts.expected_rewards(raw, p.contexts.features(raw), p.theta)
        gaps.append(m.max(axis=-1) - m.mean(axis=-1))
    g = np.concatenate(gaps)
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(g.size))


# -- the reproduction -----------------------------------------------------------------------------


@dataclass
class Reproduction:
    output: Path
    cells: list[Cell]
    results: list[FigureResult]
    series: list[Series]
    uniform: dict[str, dict[int, tuple[float, float]]]  # instance → T → (regret/round, se)
    wall_s: float
    workers: int
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None

    def uniform_regret(self, instance: Instance, horizon: int) -> float:
        return horizon * self.uniform[instance.key][horizon][0]

    def near_uniform(self) -> list[Series]:
        """Series whose mean regret at the largest T is ≥ :data:`NEAR_UNIFORM` × uniform's."""
        out = []
        for s in self.series:
            h = int(s.horizons[-1])
            if s.regret[:, -1].mean() >= NEAR_UNIFORM * self.uniform_regret(s.instance, h):
                out.append(s)
        return out

    def table(self) -> str:
        """One row per (instance, agent): slope [CI], regret at the largest T, ratio to uniform."""
        head = (f"{'instance':<9}{'agent':<24}{'slope [95% CI]':>22}{'regret at T':>20}"
                f"{'/ uniform':>11}")
        lines = [head, "-" * len(head)]
        for s in self.series:
            h = int(s.horizons[-1])
            x = s.regret[:, -1]
            slope = s.fit.text() if s.fit is not None else "n/a (zero mean)"
            ratio = x.mean() / self.uniform_regret(s.instance, h)
            lines.append(f"{s.instance.key:<9}{s.agent:<24}{slope:>22}"
                         f"{f'{x.mean():.4g} ± {x.std(ddof=1):.2g}':>20}{ratio:>11.2f}")
        return "\n".join(lines)


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    """``runs.csv``, ``curves.csv`` and ``slopes.csv``; nothing timing-dependent goes into them,
    so equal seeds give byte-identical files."""
    out = rep.output
    paths = {"runs": out / "runs.csv", "curves": out / "curves.csv", "slopes": out / "slopes.csv"}
    with paths["runs"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["instance", "agent", "epsilon", "privacy", "seed", "run", "horizon",
                    "regret", "uniform_regret"])
        for r in rep.results:
            c = r.cell
            eps = c.agent_kwargs.get("epsilon", "")
            u = rep.uniform_regret(c.instance, c.horizon)
            for i, x in enumerate(r.result.regret):
                w.writerow([c.instance.key, c.agent, eps, str(r.result.privacy), c.seed, i,
                            c.horizon, csv_float(x), csv_float(u)])
    with paths["curves"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["instance", "agent", "horizon", "run", "t", "regret"])
        for r in rep.results:
            for i, row in enumerate(r.result.regret_curve):
                for t, x in zip(r.result.checkpoint_times, row, strict=True):
                    w.writerow([r.cell.instance.key, r.cell.agent, r.cell.horizon, i, int(t),
                                csv_float(x)])
    with paths["slopes"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["instance", "agent", "horizons", "slope", "ci_low", "ci_high", "level",
                    "n_boot", "intercept", "note"])
        for s in rep.series:
            hs = " ".join(str(int(h)) for h in s.horizons)
            if s.fit is None:
                w.writerow([s.instance.key, s.agent, hs, *[""] * 6, s.fit_error])
            else:
                w.writerow([s.instance.key, s.agent, hs, *s.fit.csv_fields(), ""])
    return paths


FOOTNOTE = ("points: mean final regret of separate runs at each horizon T, bars ± 1 sd; dashed: "
            "least-squares fit of log mean regret on log T,\nslope with 95% bootstrap CI over "
            "runs; grey: uniform play, and slope-1/2 and slope-3/4 guides through it at the "
            "smallest T")


def draw(rep: Reproduction) -> list[Path]:
    """The log–log figure, one panel per instance (PNG and PDF)."""
    from privenv.plotting import LogLogPanel, LogLogSeries, Reference, loglog_grid, save_figure

    panels = []
    for inst in dict.fromkeys(s.instance for s in rep.series):
        mine = [s for s in rep.series if s.instance == inst]
        t = mine[0].horizons
        u = np.array([rep.uniform_regret(inst, int(h)) for h in t])
        refs = [Reference("uniform play", t, u)]
        refs += [Reference(f"slope {name}", t, u[0] * (t / t[0]) ** p)
                 for name, p in (("1/2", 0.5), ("3/4", 0.75))]
        panels.append(LogLogPanel(inst.title, [LogLogSeries(s.agent, s.horizons, s.regret, s.fit)
                                               for s in mine], refs))
    c = rep.cells[0]
    fig = loglog_grid(panels, ncols=2, suptitle=(
        f"Paper 4 — locally private linear contextual bandits, ε = {c.epsilon:g}, {c.runs} runs "
        f"per horizon"), footnote=FOOTNOTE)
    return save_figure(fig, rep.output / ID)


def reproduce(
    output: str | Path | None = None,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizons: Sequence[int] | None = None,
    epsilon: float = EPSILON,
    seed: int = 0,
    agents: Sequence[str] = AGENTS,
    instances: Sequence[str] | None = None,
    n_boot: int = N_BOOT,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run the reproduction and write its files; returns the results.

    Args:
        output: directory (created); default ``results/ldp-linear`` (``…-quick`` with ``quick``).
        quick: the reduced scale :data:`QUICK` instead of :data:`FULL`.
        runs, horizons: override the scale's (at least 2 runs and 2 increasing horizons).
        epsilon: local ε of every private agent.
        seed: the seed of every cell.
        agents: registry names (default :data:`AGENTS`).
        instances: keys of :data:`INSTANCES` (default: all).
        n_boot: bootstrap resamples of each slope interval.
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or
            its fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``,
            ``figure``) as keywords.

    Raises:
        RuntimeError: if a cell failed (its error is in the store; ``resume`` retries it).
    """
    scale = QUICK if quick else FULL
    runs = scale.runs if runs is None else runs
    horizons = scale.horizons if horizons is None else tuple(horizons)
    chosen = select("instances", instances, {i.key: i for i in INSTANCES})
    n_boot = check_int("n_boot", n_boot, low=0)
    ex = Execution.of(execution, **options)
    cells = make_cells(agents, runs, horizons, seed, chosen, epsilon)
    if not cells:
        raise ValueError(f"no cell to run: every (instance, agent) pair chosen is skipped "
                         f"({'; '.join(SKIPPED.values())})")
    config = cell_sweep(cells, ID).validate()
    out = output_dir(output, DEFAULT_OUTPUT, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    results = regret_results(config, cells, stored)
    simulation_wall_s = time.perf_counter() - start
    uniform: dict[str, dict[int, tuple[float, float]]] = {}
    hs = sorted({c.horizon for c in cells})
    for inst in dict.fromkeys(c.instance for c in cells):  # only the hard instance depends on T
        if inst.env_kwargs.get("contexts") == "hard":
            uniform[inst.key] = {h: uniform_regret_per_round(inst, h) for h in hs}
        else:
            uniform[inst.key] = dict.fromkeys(hs, uniform_regret_per_round(inst, hs[0]))
    rep = Reproduction(out, cells, results, fit_series(results, n_boot=n_boot, seed=seed),
                       uniform, 0.0, ex.worker_count, sweep=report,
                       simulation_wall_s=simulation_wall_s)
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if ex.figure else None, lambda: _metadata(rep, quick))


NOTES = (
    "With the paper's kappa constants (minimal values of Lemmas 4.3/4.4) LPLR-RegCB never "
    "eliminates an action at feasible T: its regret equals uniform play's (slope about 1), not "
    "the sqrt(T) of Theorem 4.7, whose constants only bite at astronomically large T "
    "(privenv reproduce lplr-constants sweeps them).",
    "LDP-LinUCB with Zheng et al.'s confidence widths is close to uniform play at T <= 1e4 for "
    "epsilon <= 10; its T^(3/4) regime needs larger T.",
    "On Theorem 2.1's hard instance (n = T) uniform play has regret sqrt(T) in expectation; "
    "the locally private agents' signal-to-noise ratio along the rare direction does not grow "
    "with T (slope about 1/2 expected), while non-private LinUCB learns the sign (slope about 0). "
    "The instance uses theta* = (0, -1) so that breaking ties towards action 0 is not rewarded.",
    "input-perturbation-ols is Theorem 2.2's negative example, drawn as a teaching line.",
)


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:

    cells = []
    for r in rep.results:
        c = r.cell
        x = r.result.regret
        cells.append({
            "instance": c.instance.key, "agent": c.agent, "seed": c.seed, "runs": c.runs,
            "first_run": 0, "horizon": c.horizon, "env_kwargs": c.instance.env_kwargs,
            "agent_kwargs": c.agent_kwargs, "agent_params": r.result.agent_params,
            **r.result.privacy.as_dict(),
            "regret_mean": float(x.mean()), "regret_sd": float(x.std(ddof=1)),
            "uniform_regret": rep.uniform_regret(c.instance, c.horizon),
            "wall_s": r.result.wall_s, "ns_per_run_step": r.result.ns_per_run_step,
            "command": c.command(),
        })
    slopes = []
    for s in rep.series:
        row: dict[str, Any] = {"instance": s.instance.key, "agent": s.agent,
                               "horizons": [int(h) for h in s.horizons]}
        row.update(asdict(s.fit) if s.fit is not None else {"slope": None,
                                                             "note": s.fit_error})
        slopes.append(row)
    near = [f"{s.instance.key}/{s.agent}" for s in rep.near_uniform()]
    return {
        "figure": ID,
        "description": DESCRIPTION,
        "paper": "Li, Simchi-Levi, Wang, On the Optimal Regret of Locally Private Linear "
                 "Contextual Bandit (Thm 2.1, Thm 2.2, Thm 4.7); Zheng et al. 2020 (LDP-LinUCB)",
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ENV_ID,
        "agents": list(dict.fromkeys(c.agent for c in rep.cells)),
        "instances": [{"key": i.key, "title": i.title, "env_kwargs": i.env_kwargs}
                      for i in dict.fromkeys(c.instance for c in rep.cells)],
        "skipped": {f"{k[0]}/{k[1]}": v for k, v in SKIPPED.items()},
        "epsilon": rep.cells[0].epsilon,
        "runs": rep.cells[0].runs,
        "horizons": sorted({c.horizon for c in rep.cells}),
        "seed": rep.cells[0].seed,
        "seeding": "every cell uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding), so agents, instances and horizons share common random "
                   "numbers and the bootstrap resamples whole runs",
        "slope_fit": "least squares of log(mean final regret over runs) on log T; percentile "
                     f"bootstrap over runs, {LEVEL:.0%} level (privenv.plotting.loglog_slope)",
        "slopes": slopes,
        "uniform_regret_per_round": {k: {str(h): {"mean": m, "se": se} for h, (m, se) in v.items()}
                                     for k, v in rep.uniform.items()},
        "near_uniform_at_largest_T": near,
        "notes": list(NOTES),
        "cells": cells,
        **run_metadata(rep),
        "scale": {"full": asdict(FULL), "quick": asdict(QUICK), "n_checkpoints": N_CHECKPOINTS},
    }


# -- command line ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``privenv reproduce ldp-linear``."""
    add_common_arguments(parser, DEFAULT_OUTPUT)
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per cell (default {FULL.runs}; {QUICK.runs} with --quick)")
    parser.add_argument("--horizons", type=int_list, default=None, metavar="T1,T2,...",
                        help="horizons (default " + ",".join(map(str, FULL.horizons)) + "; "
                             + ",".join(map(str, QUICK.horizons)) + " with --quick)")
    parser.add_argument("--epsilon", type=float, default=EPSILON,
                        help=f"local ε of the private agents (default {EPSILON:g})")
    parser.add_argument("--agents", default=",".join(AGENTS),
                        help=f"comma-separated agent names (default: {','.join(AGENTS)})")
    parser.add_argument("--instances", default=",".join(i.key for i in INSTANCES),
                        help="comma-separated instances (default: "
                             + ",".join(i.key for i in INSTANCES) + ")")


def main(args: argparse.Namespace) -> int:
    """Run from parsed command-line options; prints the slope table on stdout."""
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    instances = [a.strip() for a in args.instances.split(",") if a.strip()]
    rep = reproduce_or_report(ID, lambda: reproduce(
        args.output, quick=args.quick, runs=args.runs, horizons=args.horizons,
        epsilon=args.epsilon, seed=args.seed, agents=agents, instances=instances,
        execution=Execution.from_args(args)))
    if rep is None:
        return 1
    c = rep.cells[0]
    print(f"{ID}: {len(rep.cells)} cells, {c.runs} runs, T = "
          f"{', '.join(str(h) for h in sorted({x.horizon for x in rep.cells}))}, ε = "
          f"{c.epsilon:g}, {rep.sweep.backend}, wall time {rep.wall_s:.1f} s")
    print("log-log slope of mean final regret against T (95% bootstrap CI over runs), regret at "
          "the largest T (mean ± sd) and its ratio to uniform play:")
    print(rep.table())
    near = rep.near_uniform()
    if near:
        print(f"at the largest T, within {1 - NEAR_UNIFORM:.0%} of uniform play (learned "
              "nothing visible yet): " + ", ".join(f"{s.instance.key}/{s.agent}" for s in near))
    for k, v in SKIPPED.items():
        if k[1] in agents and k[0] in instances:
            print(f"skipped {k[0]}/{k[1]}: {v}")
    print_files(rep.files)
    return 0
