"""Regret against ε of the zoo's private regret algorithms, with the lower bounds:
``dp-mab-regret`` (ε-global DP) and ``ldp-mab-regret`` (ε-local DP).

On ``BernoulliBandit-v0``'s standard instances (:mod:`privenv.problems.bernoulli`, where each
comes from is in docs/guides/zoo.md), every algorithm of the setting runs at every ε of the grid
10⁻² … 10 (:data:`EPSILONS`), the non-private references once per instance; the final regret at
the horizon T (mean ± sd over runs) is compared with the lower bounds of
:mod:`privenv.theory.regret` at T:

* ``dp-mab-regret``: DP-UCB (tree) and its hybrid variant, DP-SE, AdaP-UCB, AdaP-KLUCB,
  DP-KLUCB, DP-IMED and Lazy-DP-TS; references UCB1, KL-UCB, Thompson sampling and IMED; bounds:
  Azize et al. (2025) Σ Δ_a log T/d_ε (the largest), Azize & Basu (2022, Theorem 3), the order of
  Shariff & Sheffet (2018) and Lai–Robbins.
* ``ldp-mab-regret``: LDP-UCB-L, LDP-UCB-B and LDP-SE (Ren, Zhou, Liu & Shroff 2020); reference
  UCB1 (the learner they wrap, without the randomizer); bound: the local-DP one.

Each paper's own claim — an ordering, a ratio to a bound, a rate — is tested at the points run and
marked reproduced / partly reproduced / not reproduced / untested (:mod:`zoo_claims
<privenv.reproduce.zoo_claims>` says how, with its false-alarm probability). Every point uses the
same seed: run *i* of every point sees the same reward streams (common random numbers), so the
orderings are paired comparisons.

Full scale (the issue's): ≥ 100 runs per point at T = 10⁶ on every standard instance; its cost is
printed before anything runs (``--dry-run`` prints only that). ``--quick``: ``mu4`` and two ε at
T = 10⁴, 10 runs (seconds once the kernels are compiled). ``--instances``, ``--epsilons``,
``--runs``, ``--horizon`` and ``--agents`` restrict a reproduction.

Outputs (in ``--output``): ``results.sqlite`` (results store), ``points.csv`` (per point: regret
mean, sd and standard error, every lower bound at T and the ratio to the main one, uniform play's
regret), ``runs.csv`` (final regret per run), ``claims.csv`` (one row per claim with its
verdict), ``metadata.json`` (versions, seeds, each point's guarantee and ``privenv run`` command,
wall times) and ``<figure>.png``/``.pdf``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._stats import sample_sd
from privenv._validation import check_choice, check_epsilon, check_int
from privenv.reproduce.bai_plan import about, duration_text
from privenv.reproduce.cells import (
    Execution,
    add_common_arguments,
    csv_float,
    default_workers,
    finish_figure,
    float_list,
    output_dir,
    print_files,
    reproduce_or_report,
    run_metadata,
    utc_now,
)
from privenv.reproduce.zoo_claims import (
    Comparison,
    Verdict,
    claims_table,
    compare,
    order_verdict,
    rate_verdict,
    ratio_verdict,
    write_claims,
)
from privenv.sweep import Configuration, SweepConfig, SweepReport

ENV_ID = "BernoulliBandit-v0"
#: the ε grid of the three comparisons: 10⁻² … 10, half a decade apart
EPSILONS: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: regret checkpoints stored per run (the figures use the final regret)
N_CHECKPOINTS = 10
#: CPU seconds per run-step of each agent on a K = 5 instance, for the cost estimate: measured
#: with ``time.process_time`` around ``simulate`` (4 runs × T = 5·10⁴ on ``mu4``, ε = 1, the
#: kernels loaded; the 2-core development machine, shared), rounded up. KL-UCB's index costs
#: ≈ 0.2 µs per arm and step (about 6 evaluations of kl, :func:`~privenv.agents.bernoulli.
#: klucb_index`). Agents not listed
#: get :data:`DEFAULT_STEP_SECONDS`; the cost grows with K as K/5 (the index policies' loop).
STEP_SECONDS: dict[str, float] = {
    "ucb1": 100e-9, "kl-ucb": 1000e-9, "thompson": 600e-9, "imed": 200e-9, "dp-ucb": 250e-9,
    "dp-ucb-hybrid": 250e-9, "dp-se": 30e-9, "adap-ucb": 40e-9, "adap-klucb": 40e-9,
    "dp-klucb": 100e-9, "dp-imed": 50e-9, "lazy-dp-ts": 600e-9, "ldp-ucb-l": 110e-9,
    "ldp-ucb-b": 70e-9, "ldp-se": 50e-9,
}
DEFAULT_STEP_SECONDS = 600e-9


@dataclass(frozen=True)
class Scale:
    """Which points a comparison runs: instances, ε grid, runs per point and horizon."""

    instances: tuple[str, ...]
    epsilons: tuple[float, ...]
    runs: int
    horizon: int


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, tested on the comparison's points.

    Args:
        id: the claim's id (``D.1``, ``L.1``: its line in docs/results/claims.md).
        source: the paper and where it says it.
        claim: the paper's words (or their content, where we read a summary).
        kind: ``"order"`` (``pairs``: (lower, higher) regret), ``"ratio"`` (``agents``' mean
            regret ≤ ``constant`` × the ``bound``) or ``"rate"`` (``agents``' regret/``bound``
            bounded over ε, :func:`~privenv.reproduce.zoo_claims.rate_verdict`).
        instances, epsilons: the scope (``None``: every instance / ε run); ``epsilons`` a closed
            interval (low, high).
    """

    id: str
    source: str
    claim: str
    kind: str
    pairs: tuple[tuple[str, str], ...] = ()
    agents: tuple[str, ...] = ()
    bound: str = ""
    constant: float = math.nan
    instances: tuple[str, ...] | None = None
    epsilons: tuple[float, float] | None = None

    def in_scope(self, instance: str, epsilon: float | None) -> bool:
        if epsilon is None or (self.instances is not None and instance not in self.instances):
            return False  # (None: a non-private reference, which no claim is about)
        return self.epsilons is None or self.epsilons[0] <= epsilon <= self.epsilons[1]

    @property
    def scope(self) -> str:
        inst = "every instance" if self.instances is None else ", ".join(self.instances)
        if self.epsilons is None:
            return f"{inst}, every ε"
        lo, hi = self.epsilons
        return f"{inst}, ε = {lo:g}" if lo == hi else f"{inst}, ε ∈ [{lo:g}, {hi:g}]"


@dataclass(frozen=True)
class RegretSpec:
    """One regret-against-ε comparison.

    Args:
        id: the figure id (``privenv reproduce <id>``).
        model: ``"global"`` or ``"local"`` (which lower bounds).
        description: one line for ``privenv reproduce --list``.
        agents: the private algorithms (each takes ``epsilon``).
        references: non-private references (one point per instance).
        bounds: the lower bounds of :func:`privenv.theory.regret.lower_bounds` drawn, the first
            the main one (the ratio column).
        full, quick: the full (the issue's) and the ``--quick`` scale.
        claims: the papers' claims tested.
    """

    id: str
    model: str
    description: str
    agents: tuple[str, ...]
    references: tuple[str, ...]
    bounds: tuple[str, ...]
    full: Scale
    quick: Scale
    claims: tuple[Claim, ...]

    @property
    def default_output(self) -> str:
        return f"results/{self.id}"


#: names of the bounds of :func:`privenv.theory.regret.lower_bounds`, as the tables print them
BOUND_LABELS = {
    "azize-2025": "Azize et al. 2025 (Σ Δ log T/d_ε)",
    "azize-basu-2022": "Azize & Basu 2022, Thm 3",
    "shariff-sheffet": "Shariff & Sheffet 2018 (order, constants 1)",
    "lai-robbins": "Lai–Robbins (non-private)",
    "ldp": "local DP (KL ≤ c(ε)·TV²)",
}

DP_AGENTS = ("dp-ucb", "dp-ucb-hybrid", "dp-se", "adap-ucb", "adap-klucb", "dp-klucb", "dp-imed",
             "lazy-dp-ts")
LDP_AGENTS = ("ldp-ucb-l", "ldp-ucb-b", "ldp-se")
#: the standard instances of the global-DP regret literature (docs/guides/zoo.md)
DP_INSTANCES = ("mu1", "mu2", "mu3", "mu4", "mu5", "mu6", "azize-basu-fig3")
#: Ren et al.'s instance first, then the global-DP literature's
LDP_INSTANCES = ("ren-20", *DP_INSTANCES)
#: DP-KLUCB's and DP-IMED's default phase ratio α: their Theorem 2's constant
ALPHA_DP_KLUCB = 1.1

DP_CLAIMS = (
    Claim("D.1", "Azize & Basu 2022, §5 (Fig. 2: mu4, ε = 1, T = 10⁷, 20 runs)",
          "AdaP-KLUCB achieves the lowest regret, followed by AdaP-UCB; both below DP-UCB and "
          "DP-SE", "order",
          pairs=(("adap-klucb", "adap-ucb"), ("adap-ucb", "dp-ucb"), ("adap-ucb", "dp-se"),
                 ("adap-klucb", "dp-ucb"), ("adap-klucb", "dp-se")),
          instances=("mu4",), epsilons=(1.0, 1.0)),
    Claim("D.2", "Azize, Wu, Honda, Orabona, Ito & Basu 2025, experiments (mu2, mu4, mu5, mu6; "
          "ε ∈ {0.01, 0.1, 0.5, 1}; T = 10⁶)",
          "DP-KLUCB and DP-IMED achieve lower regret than DP-SE, AdaP-KLUCB and Lazy-DP-TS",
          "order",
          pairs=tuple((a, b) for a in ("dp-klucb", "dp-imed")
                      for b in ("dp-se", "adap-klucb", "lazy-dp-ts")),
          instances=("mu2", "mu4", "mu5", "mu6"), epsilons=(0.01, 1.0)),
    Claim("D.3", "Azize et al. 2025, Theorem 2 (α = 1.1)",
          "Reg_T ≤ α Σ Δ_a log T/d_ε(μ_a, μ*) + o(log T): regret over the bound tends to ≤ α",
          "ratio", agents=("dp-klucb", "dp-imed"), bound="azize-2025",
          constant=ALPHA_DP_KLUCB),
    Claim("D.4", "Tossou & Dimitrakakis 2016, abstract",
          "the hybrid mechanism substantially improves on DP-UCB's continual-release (tree) "
          "mechanism", "order", pairs=(("dp-ucb-hybrid", "dp-ucb"),)),
    Claim("D.5", "Hu & Hegde 2022, experiments (mu4, T = 10⁵, ε ∈ {0.1, 0.25, 0.5, 1})",
          "Lazy-DP-TS has lower regret than DP-SE", "order", pairs=(("lazy-dp-ts", "dp-se"),),
          instances=("mu4",), epsilons=(0.1, 1.0)),
    Claim("D.6", "Sajed & Sheffet 2019 (DP-SE's bound); Shariff & Sheffet 2018 (the lower "
          "bound)", "DP-SE's regret O(Σ log T/Δ_a + K log T/ε) matches the lower bound's order",
          "rate", agents=("dp-se",), bound="shariff-sheffet"),
)
LDP_CLAIMS = (
    Claim("L.1", "Ren, Zhou, Liu & Shroff 2020, abstract",
          "LDP-UCB-L, LDP-UCB-B and LDP-SE have regret upper bounds that match the LDP lower "
          "bound up to constant factors", "rate", agents=LDP_AGENTS, bound="ldp"),
)

DP_MAB_REGRET = RegretSpec(
    id="dp-mab-regret",
    model="global",
    description=("zoo: regret at T vs ε of the ε-global-DP bandit algorithms (DP-UCB, hybrid, "
                 "DP-SE, AdaP-UCB/KLUCB, DP-KLUCB/IMED, Lazy-DP-TS) with the lower bounds"),
    agents=DP_AGENTS,
    references=("ucb1", "kl-ucb", "thompson", "imed"),
    bounds=("azize-2025", "azize-basu-2022", "shariff-sheffet", "lai-robbins"),
    full=Scale(DP_INSTANCES, EPSILONS, 100, 1_000_000),
    quick=Scale(("mu4",), (0.1, 1.0), 10, 10_000),
    claims=DP_CLAIMS,
)
LDP_MAB_REGRET = RegretSpec(
    id="ldp-mab-regret",
    model="local",
    description=("zoo: regret at T vs ε of the ε-local-DP bandit algorithms (LDP-UCB-L, "
                 "LDP-UCB-B, LDP-SE; Ren et al. 2020) with the local-DP lower bound"),
    agents=LDP_AGENTS,
    references=("ucb1",),
    bounds=("ldp", "lai-robbins"),
    full=Scale(LDP_INSTANCES, EPSILONS, 100, 1_000_000),
    quick=Scale(("mu4",), (1.0, 10.0), 10, 10_000),
    claims=LDP_CLAIMS,
)
FIGURES: dict[str, RegretSpec] = {s.id: s for s in (DP_MAB_REGRET, LDP_MAB_REGRET)}


# -- points ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One agent at one ε (``None``: a non-private reference) on one instance."""

    instance: str
    agent: str
    epsilon: float | None

    @property
    def label(self) -> str:
        return self.agent if self.epsilon is None else f"{self.agent} ε={self.epsilon:g}"

    def configuration(self, horizon: int) -> Configuration:
        from privenv.agents import env_kwargs_for

        kwargs = {} if self.epsilon is None else {"epsilon": self.epsilon}
        return Configuration(ENV_ID, env_kwargs_for(self.agent, {"instance": self.instance}),
                             self.agent, kwargs, horizon)


def make_points(spec: RegretSpec, instances: Sequence[str], epsilons: Sequence[float],
                agents: Sequence[str]) -> list[Point]:
    """Every point, instance-major: references once per instance, private agents at every ε."""
    from privenv.problems.bernoulli import INSTANCES

    known = (*spec.references, *spec.agents)
    if not instances:
        raise ValueError(f"instances must name at least one of {', '.join(INSTANCES)}")
    for inst in instances:
        check_choice("instances", inst, list(INSTANCES))
    if not epsilons:
        raise ValueError("epsilons must contain at least one ε > 0")
    eps = sorted({check_epsilon(e, "epsilons") for e in epsilons})
    if not agents:
        raise ValueError(f"agents must name at least one of {', '.join(known)}")
    for a in agents:
        check_choice("agents", a, known)
    points = []
    for inst in dict.fromkeys(instances):
        for a in dict.fromkeys(agents):
            points += ([Point(inst, a, None)] if a in spec.references
                       else [Point(inst, a, e) for e in eps])
    return points


def bounds_at(spec: RegretSpec, instance: str, horizon: int,
              epsilon: float | None) -> dict[str, float]:
    """The spec's lower bounds at T = ``horizon`` (ε ``None``: the non-private one only)."""
    from privenv.problems.bernoulli import instance_means
    from privenv.theory.regret import lai_robbins, lower_bounds

    mu = instance_means(instance)
    if epsilon is None:
        return {"lai-robbins": float(lai_robbins(mu, horizon))}
    every = lower_bounds(mu, horizon, epsilon)
    return {name: float(every[name]) for name in spec.bounds}


def uniform_regret(instance: str, horizon: int) -> float:
    """Uniform play's expected regret at T: T × the mean gap."""
    from privenv.problems.bernoulli import instance_means

    mu = instance_means(instance)
    return float(horizon * (mu.max() - mu.mean()))


@dataclass
class PointResult:
    """One point's final regrets (one per run) read back from the store, with its bounds."""

    point: Point
    regret: np.ndarray
    privacy: str
    wall_s: float
    ns_per_run_step: float
    bounds: dict[str, float]
    uniform: float

    @property
    def mean(self) -> float:
        return float(self.regret.mean())

    @property
    def sd(self) -> float:
        return sample_sd(self.regret)

    @property
    def bound(self) -> float:
        """The main lower bound at this point (the spec's first; Lai–Robbins for references)."""
        return next(iter(self.bounds.values()))

    @property
    def informative(self) -> bool:
        """The main bound is below uniform play's regret at T (else it is vacuous at this T)."""
        return self.bound < self.uniform

    def row(self) -> dict[str, Any]:
        p = self.point
        return {"instance": p.instance, "agent": p.agent,
                "epsilon": "" if p.epsilon is None else p.epsilon, "privacy": self.privacy,
                "runs": self.regret.size, "regret_mean": self.mean, "regret_sd": self.sd,
                "regret_se": self.sd / math.sqrt(self.regret.size),
                **{f"bound_{k}": v for k, v in self.bounds.items()},
                "regret_over_bound": ratio(self.mean, self.bound),
                "bound_informative": self.informative, "uniform_regret": self.uniform,
                "wall_s": self.wall_s,
                "ns_per_run_step": self.ns_per_run_step}


def ratio(regret: float, bound: float) -> float:
    """regret/bound: +inf (nan without regret) for a bound of 0, Lai–Robbins' on ``mu3``."""
    if bound > 0.0:
        return regret / bound
    return math.inf if regret > 0.0 else math.nan


@dataclass
class Reproduction:
    spec: RegretSpec
    output: Path
    points: list[Point]
    results: list[PointResult]
    horizon: int
    runs: int
    seed: int
    wall_s: float = 0.0
    workers: int = 0
    files: dict[str, Path] = field(default_factory=dict)
    simulation_wall_s: float = 0.0
    sweep: SweepReport | None = None
    verdicts: list[Verdict] = field(default_factory=list)

    def find(self, instance: str, agent: str, epsilon: float | None) -> PointResult | None:
        for r in self.results:
            p = r.point
            if p.instance == instance and p.agent == agent and p.epsilon == epsilon:
                return r
        return None

    def table(self) -> str:
        """One line per point: regret mean ± sd, the main bound, regret/bound."""
        head = (f"{'instance':<16} {'agent':<14} {'ε':>6} {'regret mean ± sd':>22} "
                f"{'bound':>9} {'reg/bound':>9} {'uniform':>9}")
        lines = [head, "-" * len(head)]
        for r in self.results:
            p = r.point
            eps = "—" if p.epsilon is None else f"{p.epsilon:g}"
            lines.append(f"{p.instance:<16} {p.agent:<14} {eps:>6} "
                         f"{f'{r.mean:.4g} ± {r.sd:.3g}':>22} {r.bound:>9.3g} "
                         f"{ratio(r.mean, r.bound):>9.2f} {r.uniform:>9.3g}")
        return "\n".join(lines)


def evaluate(spec: RegretSpec, rep: Reproduction) -> list[Verdict]:
    """Every claim of ``spec`` at the points of ``rep`` (:mod:`privenv.reproduce.zoo_claims`)."""
    out = []
    private = [r for r in rep.results if r.point.epsilon is not None]
    T = f"T = {rep.horizon:,}"
    for c in spec.claims:
        if c.kind == "order":
            comps: list[Comparison] = []
            for r in private:
                p = r.point
                if not c.in_scope(p.instance, p.epsilon):
                    continue
                for better, worse in c.pairs:
                    if p.agent != better:
                        continue
                    other = rep.find(p.instance, worse, p.epsilon)
                    if other is not None:
                        comps.append(compare(f"{p.instance} ε={p.epsilon:g}", better, worse,
                                             r.regret, other.regret))
            verdict, measured = order_verdict(comps)
            test = "paired regret at T, ± 2 se"
        elif c.kind == "ratio":
            ratios = {f"{r.point.instance} {r.point.label}": ratio(r.mean, r.bounds[c.bound])
                      for r in private if r.point.agent in c.agents
                      and c.in_scope(r.point.instance, r.point.epsilon)}
            verdict, measured = ratio_verdict(ratios, c.constant, "regret/bound")
            test = f"mean regret / {BOUND_LABELS[c.bound]} at {T} (an asymptotic claim)"
        else:
            by_inst: dict[str, dict[float, float]] = {}
            parts = []
            for a in c.agents:
                by_inst = {}
                for r in private:
                    p = r.point
                    eps = p.epsilon
                    if p.agent == a and eps is not None and c.in_scope(p.instance, eps) \
                            and r.informative:
                        by_inst.setdefault(p.instance, {})[eps] = ratio(r.mean, r.bounds[c.bound])
                v, m = rate_verdict(by_inst)
                parts.append((a, v, m))
            verdicts = {v for _, v, _ in parts}
            verdict = (verdicts.pop() if len(verdicts) == 1 else
                       "not reproduced" if verdicts == {"not reproduced", "untested"} else
                       "partly reproduced")
            measured = " | ".join(f"{a}: {v}: {m}" for a, v, m in parts)
            test = (f"regret / {BOUND_LABELS[c.bound]} over the ε where the bound is below "
                    f"uniform play's regret, spread < ε_max/ε_min")
        out.append(Verdict(c.id, c.source, c.claim, test, c.scope, measured, verdict))
    return out


# -- the reproduction -----------------------------------------------------------------------------


def estimated_seconds(points: Sequence[Point], runs: int, horizon: int) -> float:
    """CPU seconds of ``points`` at :data:`STEP_SECONDS` per run-step (× K/5)."""
    from privenv.problems.bernoulli import instance_means

    return sum(runs * horizon * STEP_SECONDS.get(p.agent, DEFAULT_STEP_SECONDS)
               * max(1.0, instance_means(p.instance).size / 5.0) for p in points)


def reproduce(
    spec: RegretSpec,
    output: str | Path | None = None,
    *,
    quick: bool = False,
    instances: Sequence[str] | None = None,
    epsilons: Sequence[float] | None = None,
    runs: int | None = None,
    horizon: int | None = None,
    agents: Sequence[str] | None = None,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run comparison ``spec`` (:data:`DP_MAB_REGRET` or :data:`LDP_MAB_REGRET`) and write its
    files; returns the results with the claims' verdicts.

    Args:
        spec: the comparison.
        output: directory (created); default ``results/<id>`` (``…-quick`` with ``quick``).
        quick: the reduced scale.
        instances, epsilons, runs, horizon: override the scale's.
        agents: restrict to these agents (private ones and references; default all).
        seed: the seed of every point.
        log: called with the cost estimate before running (e.g. ``print``).
        execution, options: how it runs: an :class:`~privenv.reproduce.cells.Execution`, or its
            fields (``workers``, ``backend``, ``address``, ``resume``, ``progress``, ``figure``)
            as keywords.

    Raises:
        RuntimeError: if a cell failed (its error is in the store; ``resume`` retries it).
    """
    scale = spec.quick if quick else spec.full
    runs = check_int("runs", scale.runs if runs is None else runs, low=2)
    horizon = check_int("horizon", scale.horizon if horizon is None else horizon, low=2)
    seed = check_int("seed", seed, low=0)
    points = make_points(spec, scale.instances if instances is None else instances,
                         scale.epsilons if epsilons is None else epsilons,
                         (*spec.references, *spec.agents) if agents is None else agents)
    ex = Execution.of(execution, **options)
    if log is not None:
        cpu = estimated_seconds(points, runs, horizon)
        log(f"{spec.id}: {len(points)} points × {runs} runs, T = {horizon:,}; estimated cost "
            f"(measured CPU per run-step, STEP_SECONDS) {duration_text(cpu)} CPU, "
            f"{about(cpu / (ex.workers or default_workers()))} on "
            f"{ex.workers or default_workers()} worker(s)")
    configs = tuple(p.configuration(horizon) for p in points)
    config = SweepConfig(configs, runs=runs, chunk=runs, seed=seed,
                         n_checkpoints=min(N_CHECKPOINTS, horizon), name=spec.id).validate()
    out = output_dir(output, spec.default_output, quick)
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    ids = dict(zip(config.configurations, config.config_ids(), strict=True))
    results = []
    for p, c in zip(points, configs, strict=True):
        res = stored[ids[c]]
        results.append(PointResult(p, np.asarray(res.regret, dtype=float), str(res.privacy),
                                   res.wall_s, res.ns_per_run_step,
                                   bounds_at(spec, p.instance, horizon, p.epsilon),
                                   uniform_regret(p.instance, horizon)))
    rep = Reproduction(spec, out, points, results, horizon, runs, seed, workers=ex.worker_count,
                       sweep=report, simulation_wall_s=time.perf_counter() - start)
    rep.verdicts = evaluate(spec, rep)
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if ex.figure else None, lambda: _metadata(rep, quick))


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    """``points.csv``, ``runs.csv`` and ``claims.csv`` (``runs.csv`` and ``claims.csv`` hold no
    timing: equal seeds give byte-identical files)."""
    out = rep.output
    files = {"points": out / "points.csv", "runs": out / "runs.csv"}
    rows = [r.row() for r in rep.results]
    with files["points"].open("w", newline="") as f:
        w = csv.DictWriter(f, list(dict.fromkeys(k for row in rows for k in row)), restval="",
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with files["runs"].open("w", newline="") as f:
        rw = csv.writer(f, lineterminator="\n")
        rw.writerow(["instance", "agent", "epsilon", "seed", "run", "horizon", "regret"])
        for r in rep.results:
            p = r.point
            for i, x in enumerate(r.regret):
                rw.writerow([p.instance, p.agent, "" if p.epsilon is None else p.epsilon,
                            rep.seed, i, rep.horizon, csv_float(x)])
    files["claims"] = write_claims(out / "claims.csv", rep.verdicts)
    return files


def draw(rep: Reproduction) -> list[Path]:
    """One log–log panel per instance: regret at T against ε per private agent (± 1 sd), the
    references as horizontal lines, the lower bounds and uniform play's regret in grey."""
    from privenv.plotting import (
        Baseline,
        Reference,
        StoppingSeries,
        StoppingTimePanel,
        save_figure,
        stopping_time_grid,
    )
    from privenv.problems.bernoulli import instance_means

    spec = rep.spec
    eps_all = sorted({r.point.epsilon for r in rep.results if r.point.epsilon is not None})
    panels = []
    for inst in dict.fromkeys(p.instance for p in rep.points):
        mine = [r for r in rep.results if r.point.instance == inst]
        series, baselines = [], []
        for a in dict.fromkeys(r.point.agent for r in mine):
            pts = sorted((r for r in mine if r.point.agent == a),
                         key=lambda r: r.point.epsilon or 0.0)
            if pts[0].point.epsilon is None:
                baselines.append(Baseline(f"{a} (non-private)", pts[0].mean, pts[0].sd))
            else:
                series.append(StoppingSeries(
                    a, np.array([r.point.epsilon for r in pts]), np.array([r.mean for r in pts]),
                    np.array([r.sd for r in pts])))
        refs = []
        if eps_all:
            grid = np.unique(np.concatenate([np.geomspace(eps_all[0], eps_all[-1], 30),
                                             eps_all]))
            curves: dict[str, list[float]] = {}
            for e in grid:
                for name, v in bounds_at(spec, inst, rep.horizon, float(e)).items():
                    curves.setdefault(BOUND_LABELS[name], []).append(v)
            refs = [Reference(name, grid, np.array(v)) for name, v in curves.items()]
            refs.append(Reference("uniform play", grid,
                                  np.full(grid.size, uniform_regret(inst, rep.horizon))))
        means = ", ".join(f"{m:g}" for m in instance_means(inst))
        panels.append(StoppingTimePanel(f"{inst} = ({means})"[:70], series, baselines, refs,
                                        ylabel=f"regret at T = {rep.horizon:,}"))
    fig = stopping_time_grid(
        panels, ncols=min(3, len(panels)),
        suptitle=f"{spec.id}\nT = {rep.horizon:,}, {rep.runs} runs, mean ± 1 sd",
        footnote="grey: lower bounds at T (C(ν, ε)·log T)\nand uniform play's regret; "
                 "horizontal:\nnon-private references")
    return save_figure(fig, rep.output / spec.id)


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    spec = rep.spec
    points = []
    for r, p in zip(rep.results, rep.points, strict=True):
        c = p.configuration(rep.horizon)
        from privenv.sweep import Cell

        cell = Cell(ENV_ID, c.env_kwargs, p.agent, c.agent_kwargs, rep.horizon, rep.seed, 0,
                    rep.runs, min(N_CHECKPOINTS, rep.horizon))
        points.append({**r.row(), "command": cell.command()})
    return {
        "figure": spec.id,
        "description": spec.description,
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ENV_ID,
        "horizon": rep.horizon,
        "runs": rep.runs,
        "seed": rep.seed,
        "seeding": "every point uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding): paired runs across agents and ε",
        "bounds": {k: BOUND_LABELS[k] for k in spec.bounds},
        "claims": [asdict(v) for v in rep.verdicts],
        "points": points,
        **run_metadata(rep),
        "scale": {"full": asdict(spec.full), "quick": asdict(spec.quick)},
    }


# -- command line ---------------------------------------------------------------------------------


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def add_arguments(parser: argparse.ArgumentParser, spec: RegretSpec) -> None:
    """Options of ``privenv reproduce <spec.id>``."""
    add_common_arguments(parser, spec.default_output)
    f, q = spec.full, spec.quick
    parser.add_argument("--instances", default=None, metavar="LIST",
                        help=f"comma-separated instances (default: {','.join(f.instances)}; "
                             f"{','.join(q.instances)} with --quick)")
    parser.add_argument("--epsilons", type=float_list, default=None, metavar="LIST",
                        help=f"comma-separated ε (default: {','.join(f'{e:g}' for e in f.epsilons)}"
                             f"; {','.join(f'{e:g}' for e in q.epsilons)} with --quick)")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per point (default {f.runs}; {q.runs} with --quick)")
    parser.add_argument("--horizon", type=int, default=None, metavar="T",
                        help=f"horizon T (default {f.horizon:.0e}; {q.horizon:.0e} with --quick)")
    parser.add_argument("--agents", default=None, metavar="LIST",
                        help=f"comma-separated agents (default: "
                             f"{','.join((*spec.references, *spec.agents))})")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the points' count and the estimated cost, run nothing")


def main(args: argparse.Namespace, spec: RegretSpec) -> int:
    """Run from parsed command-line options; prints the cost, the table and the verdicts."""
    kwargs: dict[str, Any] = dict(
        quick=args.quick,
        instances=None if args.instances is None else _names(args.instances),
        epsilons=args.epsilons, runs=args.runs, horizon=args.horizon,
        agents=None if args.agents is None else _names(args.agents), seed=args.seed)
    if args.dry_run:
        scale = spec.quick if args.quick else spec.full
        pts = make_points(spec, kwargs["instances"] or scale.instances,
                          kwargs["epsilons"] or scale.epsilons,
                          kwargs["agents"] or (*spec.references, *spec.agents))
        cpu = estimated_seconds(pts, args.runs or scale.runs, args.horizon or scale.horizon)
        print(f"{spec.id}: {len(pts)} points; estimated {duration_text(cpu)} CPU")
        return 0
    rep = reproduce_or_report(spec.id, lambda: reproduce(
        spec, args.output, log=print, execution=Execution.from_args(args), **kwargs))
    if rep is None:
        return 1
    print(f"{spec.id}: {len(rep.points)} points, {rep.runs} runs each, T = {rep.horizon:,}, "
          f"{rep.sweep.backend if rep.sweep else ''}, wall time {rep.wall_s:.1f} s, CPU in cells "
          f"{sum(r.wall_s for r in rep.results):.1f} s")
    print(f"final regret at T (mean ± sd over runs), the main lower bound at T "
          f"({BOUND_LABELS[spec.bounds[0]]}; Lai–Robbins for the references), their ratio:")
    print(rep.table())
    print("the papers' claims:")
    print(claims_table(rep.verdicts))
    print_files(rep.files)
    return 0


__all__ = ["BOUND_LABELS", "DP_MAB_REGRET", "EPSILONS", "FIGURES", "LDP_MAB_REGRET", "Claim",
           "Point", "PointResult", "RegretSpec", "Reproduction", "Scale", "add_arguments",
           "bounds_at", "evaluate", "main", "make_points", "reproduce", "uniform_regret"]
