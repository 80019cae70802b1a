"""Paper 2's experiments: Private-FedLinUCB under silo-level LDP and shuffle DP.

Zhou & Chowdhury, *On Differentially Private Federated Linear Contextual Bandits* (ICLR 2024), §7,
with the setup of the authors' public experiment code (docs/guides/federated.md). Three figures
share this module; each is a sweep of ``fed-linucb`` cells (:mod:`privenv.agents.federated`) on
``FederatedLinearBandit-v0``, one cell per (panel, protocol), all runs of a cell in one batch:

* ``fed-synthetic`` (Fig. 2a–b): M = 100 silos, K = 100, d = 10, T = 10⁴, batch B = 25, 25 runs;
  δ = 10⁻⁴ with ε ∈ {10⁻⁴, 10⁻³} (SDP via amplification against silo-level LDP), and ε = 0.2,
  δ = 0.1 (SDP via the vector-sum protocol against LDP). Time-average regret (cumulative regret / t)
  with ± 1 standard error over runs, as the paper plots it. A fourth panel, ε = 1, δ = 10⁻⁴ (SDP
  via amplification against LDP), is ours: with calibrations we can prove, at the paper's budgets
  the private variants do not leave uniform play's regret within T = 10⁴, so their ordering
  cannot show.
* ``fed-realdata`` (Fig. 2c, **substituted data**): the paper used MSLR-WEB10K, which cannot be
  downloaded here; we use scikit-learn's bundled wine data set split across M = 10 silos
  (``contexts="dataset"``, disjoint encoding: not exactly linear), ε ∈ {0.2, 1, 5}, δ = 0.1.
* ``fed-scaling``: the privacy cost — mean final regret of a private protocol minus the
  non-private one's on the same seeds — against M, with the fitted log–log exponent and a 95 %
  bootstrap interval over runs. Theory: ≈ M^{3/4} for silo-level LDP, ≈ √M for shuffle DP
  (paper 2, Theorems 6.2 and 6.5: regret Õ(d√(MT) + M^{3/4}√T·…/√ε) vs Õ(d√(MT) + √(MT)·…/√ε)).
  Also the paper's benchmark, the central-DP "super single agent" (``super-agent``: one trusted
  server, one model updated every round; variant ``"super-central"``), whose cost is measured
  against the same learner without noise (``"super-none"``): theory ≈ √M as well (§6.1).

Outputs (in ``--output``): ``results.sqlite`` (the results store), ``runs.csv`` (final regret and
communication per run), ``curves.csv`` (time-average regret at the checkpoints), ``metadata.json``
(versions, seeds, guarantees with their calibration, resolved agent parameters, ``privenv run``
commands, wall times) and ``<figure>.png``/``.pdf``; ``fed-scaling`` adds ``exponents.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._validation import check_int
from privenv.plotting import SlopeFit, loglog_slope
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
    run_summary,
    utc_now,
)
from privenv.sweep import Configuration, SweepConfig, SweepReport

ENV_ID = "FederatedLinearBandit-v0"
AGENT = "fed-linucb"
#: variant (a cell's ``protocol``) → legend label: fed-linucb's protocols, the super single agent
PROTOCOLS: dict[str, str] = {
    "none": "non-private",
    "ldp": "silo-level LDP",
    "sdp-amplification": "SDP (amplification)",
    "sdp-vector-sum": "SDP (vector sum)",
    "super-none": "super agent (non-private)",
    "super-central": "super agent (central DP)",
    "adaptive-none": "adaptive sync (non-private)",
    "adaptive-ldp": "adaptive sync, LDP messages (not DP)",
}
#: variant → (agent, its ``protocol`` argument); the others are fed-linucb's own protocols
VARIANTS: dict[str, tuple[str, str]] = {
    **{p: (AGENT, p) for p in ("none", "ldp", "sdp-amplification", "sdp-vector-sum")},
    "super-none": ("super-agent", "none"),
    "super-central": ("super-agent", "central"),
    "adaptive-none": ("feducb-adaptive", "none"),
    "adaptive-ldp": ("feducb-adaptive", "ldp"),
}
#: the non-private reference of each private variant (its privacy cost is measured against it)
REFERENCE = {"super-central": "super-none", "adaptive-ldp": "adaptive-none"}


def is_private(variant: str) -> bool:
    return VARIANTS[variant][1] != "none"


def reference_of(variant: str) -> str:
    return REFERENCE.get(variant, "none")
#: paper 2's batch length B (authors' code)
BATCH = 25
#: the declared reward bound b of the synthetic instance: its rewards are ⟨φ, θ*⟩ + N(0, 0.5²)
#: with ⟨φ, θ*⟩ ∈ [0, 1/√2], so they are unbounded and the private protocols clip them to [−b, b]
#: before they enter (the replace-one sensitivity of φy is 2b). b = 3 clips a reward only when
#: the noise exceeds 4.6σ (≤ 3·10⁻⁶ of the rewards at the largest mean) — chosen once, so that
#: clipping is negligible, not to make the private variants look good (b = 1 would clip ~28 % of
#: the best arm's rewards)
REWARD_BOUND = 3.0
#: regret checkpoints per run (log-spaced, the curves of the figure)
N_CHECKPOINTS = 60
#: bootstrap resamples of the fed-scaling exponents
N_BOOT = 2000
PAPER = ("Zhou & Chowdhury, On Differentially Private Federated Linear Contextual Bandits "
         "(ICLR 2024), §7")


@dataclass(frozen=True)
class Scale:
    """Runs, horizon and instance overrides of one scale (``env`` is merged into each panel's
    instance: the quick scale shrinks M and K)."""

    runs: int
    horizon: int
    env: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Panel:
    """One panel: an instance, a privacy budget (ε, δ) and the protocols compared on it."""

    key: str
    title: str
    env_kwargs: dict[str, Any]
    epsilon: float
    delta: float
    protocols: tuple[str, ...]
    reward_bound: float | None = REWARD_BOUND  # None: the env's declared bound (±1 rewards)

    def __hash__(self) -> int:
        return hash(self.key)


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its panels and scales; ``scaling`` figures fit the privacy cost against M."""

    id: str
    description: str
    panels: tuple[Panel, ...]
    full: Scale
    quick: Scale
    note: str
    scaling: bool = False

    @property
    def default_output(self) -> str:
        return f"results/{self.id}"


def _synthetic_panels() -> tuple[Panel, ...]:
    amp = ("none", "ldp", "sdp-amplification")
    return (
        Panel("a", "ε = 10⁻⁴, δ = 10⁻⁴", {}, 1e-4, 1e-4, amp),
        Panel("b", "ε = 10⁻³, δ = 10⁻⁴", {}, 1e-3, 1e-4, amp),
        Panel("c", "ε = 0.2, δ = 0.1", {}, 0.2, 0.1, ("none", "ldp", "sdp-vector-sum")),
        # not in the paper: at its budgets every private variant stays at uniform play's regret
        # over T = 10⁴ with a calibration we can prove; at ε = 1 they learn, so their ordering
        # is visible (see the module docstring)
        Panel("d", "ε = 1, δ = 10⁻⁴ (not in the paper)", {}, 1.0, 1e-4, amp),
    )


SYNTHETIC = FigureSpec(
    id="fed-synthetic",
    description=("paper 2, Fig. 2a-b: Private-FedLinUCB, silo-level LDP vs shuffle DP "
                 "(amplification, vector sum) vs non-private, synthetic M = 100 silos"),
    panels=_synthetic_panels(),
    full=Scale(runs=25, horizon=10_000),
    quick=Scale(runs=4, horizon=2_000, env={"M": 10, "K": 20}),
    note="paper 2's synthetic instance (authors' code): K fresh unit features per round and silo, "
         "θ* = (0.5·u, 0.5), Gaussian noise σ = 0.5",
)

REALDATA = FigureSpec(
    id="fed-realdata",
    description=("paper 2, Fig. 2c with substituted data: Private-FedLinUCB on the bundled wine "
                 "data set split across M = 10 silos, ε in {0.2, 1, 5}"),
    panels=tuple(
        Panel(chr(ord("a") + i), f"wine, M = 10, ε = {eps:g}, δ = 0.1",
              {"M": 10, "contexts": "dataset", "dataset": "wine", "noise": "bounded"}, eps, 0.1,
              ("none", "ldp", "sdp-vector-sum"), reward_bound=None)
        for i, eps in enumerate((0.2, 1.0, 5.0))
    ),
    full=Scale(runs=25, horizon=10_000),
    quick=Scale(runs=4, horizon=2_000),
    note="substituted data: paper 2 used MSLR-WEB10K (not downloadable here); the wine data set "
         "(scikit-learn, bundled) as a 3-class contextual bandit, disjoint encoding, reward +1 for "
         "the true class and −1 otherwise (noise='bounded': no added noise, |y| ≤ 1) — not "
         "exactly linear",
)

#: the M grid of fed-scaling and its privacy budget (one ε for all M)
SCALING_M: tuple[int, ...] = (5, 10, 20, 40, 80)
SCALING_EPSILON, SCALING_DELTA = 1.0, 1e-4

SCALING = FigureSpec(
    id="fed-scaling",
    description=("paper 2: privacy cost of Private-FedLinUCB against the number of silos M "
                 "(theory: M^(3/4) for silo-level LDP, M^(1/2) for shuffle DP and for the "
                 "central-DP super agent), fitted exponents"),
    panels=tuple(
        Panel(f"M{m}", f"M = {m}", {"M": m, "K": 20}, SCALING_EPSILON, SCALING_DELTA,
              ("none", "ldp", "sdp-amplification", "super-none", "super-central"))
        for m in SCALING_M
    ),
    full=Scale(runs=25, horizon=10_000),
    quick=Scale(runs=4, horizon=2_000),
    note="paper 2's synthetic features with K = 20 arms (K only sets the context law; the noise "
         "calibration does not depend on it)",
    scaling=True,
)

FIGURES: dict[str, FigureSpec] = {s.id: s for s in (SYNTHETIC, REALDATA, SCALING)}


# -- cells ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One (panel, protocol) configuration; everything its result depends on."""

    panel: Panel
    protocol: str
    runs: int
    horizon: int
    seed: int
    env: dict[str, Any]  # the panel's instance with the scale's overrides
    batch: int = BATCH

    def __hash__(self) -> int:
        return hash((self.panel, self.protocol))

    @property
    def label(self) -> str:
        return PROTOCOLS[self.protocol]

    @property
    def agent(self) -> str:
        return VARIANTS[self.protocol][0]

    @property
    def agent_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"protocol": VARIANTS[self.protocol][1]}
        if self.agent == AGENT:  # the super agent syncs every round (its default batch 1),
            kw["batch"] = self.batch  # the adaptive agent when its rule fires
        if is_private(self.protocol):  # a non-private cell is shared by panels of one instance
            kw.update(epsilon=self.panel.epsilon, delta=self.panel.delta)
            if self.panel.reward_bound is not None:
                kw["reward_bound"] = self.panel.reward_bound
        return kw

    @property
    def configuration(self) -> Configuration:
        return Configuration(ENV_ID, self.env, self.agent, self.agent_kwargs, self.horizon)

    def command(self) -> str:
        """The ``privenv run`` command that reproduces this cell's final regrets."""
        sets = [f"--set {k}={v!r}" for k, v in self.agent_kwargs.items()]
        sets += ["--set " + shlex.quote(f"env.{k}={json.dumps(v)}") for k, v in self.env.items()]
        return (f"privenv run --env {ENV_ID} --agent {self.agent} --runs {self.runs} "
                f"--horizon {self.horizon} --seed {self.seed} " + " ".join(sets))


def make_cells(spec: FigureSpec, scale: Scale, seed: int = 0,
               protocols: Sequence[str] | None = None,
               panels: Sequence[str] | None = None) -> list[Cell]:
    """Every (panel, protocol) cell of ``spec`` at ``scale``, panel-major (``protocols``
    restricts the protocols — ``"none"`` is always kept: it is the reference of every panel, as
    is ``"super-none"`` of ``"super-central"``; ``panels`` restricts the panels by key)."""
    seed = check_int("seed", seed, low=0)
    keys = [p.key for p in spec.panels]
    if panels is not None and (not panels or any(k not in keys for k in panels)):
        raise ValueError(f"panels must be among {keys}, got {list(panels)}")
    if protocols is not None:
        unknown = [p for p in protocols if p not in PROTOCOLS]
        if unknown:
            raise ValueError(f"protocols must be among {list(PROTOCOLS)}, got {unknown}")
    cells = []
    for panel in spec.panels:
        if panels is not None and panel.key not in panels:
            continue
        keep = None if protocols is None else {"none", *protocols,
                                                *(reference_of(p) for p in protocols)}
        for p in panel.protocols:
            if keep is None or p in keep:
                cells.append(Cell(panel, p, scale.runs, scale.horizon, seed,
                                  {**panel.env_kwargs, **scale.env}))
    return cells


def sweep_config(spec: FigureSpec, cells: Sequence[Cell]) -> SweepConfig:
    """One configuration per distinct (instance, protocol, ε, δ), its runs in two chunks: a
    panel has three configurations, so with one chunk each, two workers would wait for the third
    alone; halves keep both busy (a run's numbers do not depend on its chunk, and per run-step
    cost barely depends on the batch size at these array sizes)."""
    return cell_sweep(cells, spec.id, chunk=-(-cells[0].runs // 2), n_checkpoints=N_CHECKPOINTS)


# -- analysis -------------------------------------------------------------------------------------


def time_average(result: FigureResult) -> np.ndarray:
    """Per-run time-average regret R(t)/t at the checkpoints: ``(runs, len(t))``."""
    return result.result.regret_curve / result.result.checkpoint_times


def standard_error(values: np.ndarray) -> np.ndarray:
    """Standard error of the mean over runs (axis 0; 0 for one run)."""
    v = np.asarray(values, dtype=float)
    return v.std(axis=0, ddof=1) / np.sqrt(v.shape[0]) if v.shape[0] > 1 else np.zeros(v.shape[1:])


@dataclass
class Exponent:
    """fed-scaling: the fitted exponent of one protocol's privacy cost against M."""

    protocol: str
    M: np.ndarray
    cost: np.ndarray  # (runs, len(M)): private final regret − its reference's, same seeds
    fit: SlopeFit | None
    theory: float
    error: str = ""

    @property
    def local(self) -> np.ndarray:
        """The slopes of log mean cost between consecutive M (NaN where a mean is ≤ 0): whether
        the exponent drifts with M."""
        mean = self.cost.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.diff(np.log(np.where(mean > 0, mean, np.nan))) / np.diff(np.log(self.M))


#: the exponents paper 2's bounds predict for the privacy cost against M (the super agent's:
#: Õ(√(MT)·d^{3/4} log^{1/4}(1/δ)/√ε), §6.1)
THEORY_EXPONENT = {"ldp": 0.75, "sdp-amplification": 0.5, "sdp-vector-sum": 0.5,
                   "super-central": 0.5}


def privacy_cost_exponents(results: Sequence[FigureResult]) -> list[Exponent]:
    """Fit log(mean privacy cost) on log M per private variant, against its non-private
    reference (:func:`reference_of`), bootstrap over paired runs."""
    by = {(r.cell.panel.env_kwargs["M"], r.cell.protocol): r.result.regret for r in results}
    Ms = np.array(sorted({m for m, _ in by}), dtype=float)
    out = []
    for p in dict.fromkeys(r.cell.protocol for r in results):
        ref = reference_of(p)
        if not is_private(p) or not all((int(m), q) in by for m in Ms for q in (p, ref)):
            continue
        cost = np.stack([by[(int(m), p)] - by[(int(m), ref)] for m in Ms], axis=1)
        try:
            fit, err = loglog_slope(Ms, cost, n_boot=N_BOOT), ""
        except ValueError as e:  # a non-positive mean cost: nothing to fit on a log scale
            fit, err = None, str(e)
        out.append(Exponent(p, Ms, cost, fit, THEORY_EXPONENT.get(p, float("nan")), err))
    return out


# -- the reproduction -----------------------------------------------------------------------------


@dataclass
class Reproduction:
    spec: FigureSpec
    output: Path
    cells: list[Cell]
    results: list[FigureResult]
    wall_s: float
    workers: int
    exponents: list[Exponent] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None

    def table(self) -> str:
        """Per cell: time-average regret at T (mean ± SE), communication, guarantee."""
        w = max(len("panel"), *(len(r.cell.panel.title) for r in self.results))
        v = max(len("protocol"), *(len(r.cell.label) for r in self.results))
        head = (f"{'panel':<{w}} {'protocol':<{v}} {'R(T)/T':>9} {'± SE':>8} {'syncs':>6} "
                f"{'floats/silo':>12} {'bits/silo':>10}  guarantee")
        lines = [head, "-" * len(head)]
        for r in self.results:
            avg = time_average(r)[:, -1]
            comm = communication(r)
            lines.append(f"{r.cell.panel.title:<{w}} {r.cell.label:<{v}} {avg.mean():>9.4f} "
                         f"{standard_error(avg[:, None])[0]:>8.4f} "
                         f"{comm.get('sync_rounds', float('nan')):>6.0f} "
                         f"{comm.get('floats_sent_per_silo', float('nan')):>12.0f} "
                         f"{comm.get('bits_sent_per_silo', float('nan')):>10.3g}  "
                         f"{r.result.privacy}")
        for e in self.exponents:
            fit = e.fit.text() if e.fit is not None else f"no fit ({e.error})"
            lines.append(f"privacy cost of {PROTOCOLS[e.protocol]} ∝ M^b: b = {fit} "
                         f"(theory {e.theory:g}; between consecutive M: "
                         f"{', '.join(f'{x:.2f}' for x in e.local)})")
        return "\n".join(lines)


#: per-run communication values the federated agents report (``Agent.episode_info``)
COMMUNICATION_KEYS = ("sync_rounds", "floats_sent_per_silo", "bits_sent_per_silo",
                      "clipped_rewards")


def communication(result: FigureResult) -> dict[str, float]:
    """Mean over runs of the communication values the agent reported (sync rounds, numbers sent
    per silo), from the stored episode values."""
    episode = result.result.episode
    return {k: float(np.mean(episode[k])) for k in COMMUNICATION_KEYS if k in episode}


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    """``runs.csv``, ``curves.csv`` (and ``exponents.csv`` for fed-scaling); nothing
    timing-dependent, so equal seeds give byte-identical files."""
    out = rep.output
    files = {"runs": out / "runs.csv", "curves": out / "curves.csv"}
    with files["runs"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "protocol", "epsilon", "delta", "privacy", "seed", "run", "horizon",
                    "regret", "time_average_regret", *COMMUNICATION_KEYS])
        for r in rep.results:
            c, episode = r.cell, r.result.episode
            for i, x in enumerate(r.result.regret):
                comm = [episode[k][i] if k in episode else "" for k in COMMUNICATION_KEYS]
                w.writerow([c.panel.key, c.protocol, c.panel.epsilon, c.panel.delta,
                            str(r.result.privacy), c.seed, i, c.horizon, repr(float(x)),
                            repr(float(x) / c.horizon), *comm])
    with files["curves"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "protocol", "t", "time_average_mean", "time_average_se"])
        for r in rep.results:
            avg = time_average(r)
            for t, m, s in zip(r.result.checkpoint_times, avg.mean(axis=0), standard_error(avg),
                               strict=True):
                w.writerow([r.cell.panel.key, r.cell.protocol, int(t), repr(float(m)),
                            repr(float(s))])
    if rep.exponents:
        files["exponents"] = out / "exponents.csv"
        with files["exponents"].open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["protocol", "M", "mean_cost", "exponent", "ci_low", "ci_high", "level",
                        "theory", "local_exponents", "note"])
            for e in rep.exponents:
                fit = e.fit
                w.writerow([e.protocol, " ".join(str(int(m)) for m in e.M),
                            " ".join(repr(float(c)) for c in e.cost.mean(axis=0)),
                            fit.slope if fit else "", fit.low if fit else "",
                            fit.high if fit else "", fit.level if fit else "", e.theory,
                            " ".join(f"{x:.4f}" for x in e.local), e.error])
    return files


def draw(rep: Reproduction) -> list[Path]:
    """Time-average regret panels (mean ± 1 SE), plus the privacy-cost panel of fed-scaling."""
    from privenv.plotting import (
        LogLogPanel,
        LogLogSeries,
        RegretPanel,
        agent_colors,
        draw_loglog,
        regret_grid,
        save_figure,
    )

    spec, runs, horizon = rep.spec, rep.cells[0].runs, rep.cells[0].horizon
    panels = []
    for p in dict.fromkeys(r.cell.panel for r in rep.results):
        mine = [r for r in rep.results if r.cell.panel == p]
        panels.append(RegretPanel(p.title, mine[0].result.checkpoint_times,
                                  {r.cell.label: time_average(r) for r in mine},
                                  band="se", ylabel="time-average regret R(t)/t"))
    suptitle = (f"{spec.id} ({spec.description.split(':')[0]}) — T = {horizon:,}, {runs} runs, "
                "mean ± 1 SE")
    ncols = min(3, len(panels) + spec.scaling)
    fig = regret_grid(panels, ncols=ncols, suptitle=suptitle,
                      footnote=textwrap.fill(spec.note, 60 * ncols),
                      extra_panels=1 if rep.exponents else 0)
    if rep.exponents:
        ax = fig.axes[len(panels)]
        ax.set_visible(True)
        series = [LogLogSeries(PROTOCOLS[e.protocol], e.M, e.cost, e.fit)
                  for e in rep.exponents]
        labels = list(dict.fromkeys(label for p in panels for label in p.curves))
        draw_loglog(ax, LogLogPanel("privacy cost at T against M", series),
                    agent_colors(labels))  # the same colour per protocol as in the curves
        ax.set_xlabel("silos M", fontsize=8)
        ax.set_ylabel("R_private(T) − R_non-private(T)", fontsize=8)
        ax.legend(fontsize=6, loc="upper left", framealpha=0.85)
    return save_figure(fig, rep.output / spec.id)


def reproduce(
    spec: FigureSpec,
    output: str | Path | None = None,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    protocols: Sequence[str] | None = None,
    panels: Sequence[str] | None = None,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run figure ``spec`` and write its files; returns the results.

    Args:
        spec: :data:`SYNTHETIC`, :data:`REALDATA` or :data:`SCALING`.
        output: directory (created); default ``results/<id>`` (``…-quick`` with ``quick``).
        quick: the figure's reduced scale instead of its full one.
        runs, horizon: override the scale's.
        seed: the seed of every cell (common random numbers across protocols).
        protocols: restrict the private protocols (the non-private reference always runs).
        panels: restrict the panels (by key, e.g. ``["b"]``).
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or
            its fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``,
            ``figure``) as keywords.
    """
    base = spec.quick if quick else spec.full
    scale = Scale(base.runs if runs is None else check_int("runs", runs, low=1),
                  base.horizon if horizon is None else check_int("horizon", horizon, low=2),
                  base.env)
    ex = Execution.of(execution, **options)
    cells = make_cells(spec, scale, seed, protocols, panels)
    config = sweep_config(spec, cells).validate()
    out = output_dir(output, spec.default_output, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    results = regret_results(config, cells, stored)
    rep = Reproduction(spec, out, cells, results, 0.0, ex.worker_count, sweep=report)
    if spec.scaling:
        rep.exponents = privacy_cost_exponents(results)
    rep.simulation_wall_s = time.perf_counter() - start
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if ex.figure else None, lambda: _metadata(rep, quick))


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    spec = rep.spec
    cells = []
    for r in rep.results:
        c = r.cell
        avg = time_average(r)[:, -1]
        cells.append({
            "panel": c.panel.key, "protocol": c.protocol, "agent": c.agent, "seed": c.seed,
            "runs": c.runs,
            "horizon": c.horizon, "env_kwargs": c.env, "agent_kwargs": c.agent_kwargs,
            "agent_params": r.result.agent_params, **r.result.privacy.as_dict(),
            "regret_mean": float(r.result.regret.mean()),
            "time_average_regret_mean": float(avg.mean()),
            "time_average_regret_se": float(standard_error(avg[:, None])[0]),
            "communication": communication(r),
            "wall_s": r.result.wall_s, "ns_per_run_step": r.result.ns_per_run_step,
            "command": c.command(),
        })
    return {
        "figure": spec.id,
        "description": spec.description,
        "paper": PAPER,
        "note": spec.note,
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ENV_ID,
        "agents": sorted({c.agent for c in rep.cells}),
        "runs": rep.cells[0].runs,
        "horizon": rep.cells[0].horizon,
        "seed": rep.cells[0].seed,
        "seeding": "every cell uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding), so protocols are compared on common random numbers",
        "panels": [{"key": p.key, "title": p.title, "env_kwargs": p.env_kwargs,
                    "epsilon": p.epsilon, "delta": p.delta, "protocols": list(p.protocols)}
                   for p in spec.panels],
        "cells": cells,
        "exponents": [{"protocol": e.protocol, "M": e.M, "mean_cost": e.cost.mean(axis=0),
                       "fit": asdict(e.fit) if e.fit else None, "theory": e.theory,
                       "local_exponents": e.local, "error": e.error} for e in rep.exponents],
        **run_metadata(rep),
        "scale": {"full": asdict(spec.full), "quick": asdict(spec.quick),
                  "n_checkpoints": N_CHECKPOINTS, "batch": BATCH},
    }


# -- command line ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, spec: FigureSpec) -> None:
    """Options of ``privenv reproduce <spec.id>``."""
    add_common_arguments(parser, spec.default_output)
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per cell (default {spec.full.runs}; {spec.quick.runs} with "
                             "--quick)")
    parser.add_argument("--horizon", type=int, default=None, metavar="T",
                        help=f"horizon T (default {spec.full.horizon}; {spec.quick.horizon} with "
                             "--quick)")
    parser.add_argument("--protocols", default=None,
                        help="comma-separated private protocols to run (default: the figure's; "
                             "the non-private reference always runs)")
    parser.add_argument("--panels", default=None,
                        help="comma-separated panel keys to run (default: all: "
                             f"{','.join(p.key for p in spec.panels)})")


def main(args: argparse.Namespace, spec: FigureSpec) -> int:
    """Run from parsed command-line options; prints the summary table on stdout."""
    protocols = panels = None
    if args.protocols:
        protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    if args.panels:
        panels = [p.strip() for p in args.panels.split(",") if p.strip()]
    rep = reproduce_or_report(spec.id, lambda: reproduce(
        spec, args.output, quick=args.quick, runs=args.runs, horizon=args.horizon,
        seed=args.seed, protocols=protocols, panels=panels,
        execution=Execution.from_args(args)))
    if rep is None:
        return 1
    print(run_summary(spec.id, rep))
    print(rep.table())
    print_files(rep.files)
    return 0
