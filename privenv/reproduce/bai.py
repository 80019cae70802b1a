"""Stopping time against ε for private best-arm identification: ``bai-local`` and ``bai-global``.

Paper 3 (Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*), §5
and Appendix I: Bernoulli instances μ1 … μ6 (Sajed and Sheffet 2019), risk δ = 0.01, 1000 runs per
point; the mean ± sd stopping time τ against the privacy budget ε, on log–log axes, with the
lower bound and the ε at which it switches regime. This module is the implementation shared by
the two figures (the modules :mod:`~privenv.reproduce.bai_local` and
:mod:`~privenv.reproduce.bai_global` hold their :class:`FigureSpec` and command-line entry):

* ``bai-local`` (Figures 1 and 3): CTB-TT (ε-local DP) against the non-private TTUCB, ε in
  {0.01, 0.05, 0.1, 0.2, …, 0.9, 1, 10, 100}; lower bound max{T*_KL, T*_TV²/c(ε)}·log(1/(2.4δ))
  (Corollary 11).
* ``bai-global`` (Figures 2, 4 and 5): AdaP-TT, AdaP-TT* and DP-SE (ε-global DP) against TTUCB,
  ε in {0.001, 0.005, 0.01, 0.05, 0.1, 0.2, …, 0.9, 1, 10, 100, 1000}; lower bounds T*_g(ε)
  (Theorem 17, exact) and its relaxation max{T*_KL, T*_TV/ε} (Corollary 18), × log(1/(2.4δ)).

**Points and cells.** A *point* is (instance, agent, threshold, ε); an agent without an ``epsilon``
parameter (TTUCB) has one point per instance and threshold, drawn as a horizontal line. Top Two
agents (those with a ``threshold`` parameter) run with the thresholds chosen by ``--threshold``:
``theory`` (the δ-correct thresholds of the lemmas) or ``empirical`` (the authors' public-code
rules, Remark 53 — what the paper's figures used), or ``both`` (the default: the
comparison is reported for both). Every point is one configuration of a sweep
(:mod:`privenv.sweep`) on ``BestArmIdentification-v0`` with the same integer seed (common random
numbers: run *i* of every point sees the same reward streams), split into cells of ``--chunk``
runs that the backend runs in parallel, most expensive first. Results go to the results store
``results.sqlite`` (``--resume`` continues an interrupted reproduction); CSVs and figure are
drawn from it.

**Sample budget.** The env's ``horizon`` (10⁸ by default) caps a run. A run that reaches it
without stopping is *non-stopping*: it is counted (``non_stopping`` column), its stopping time
enters the mean as the budget (so the mean is then a lower bound; hollow markers in the figure),
and it is not an error (it recommended nothing).

**Errors.** ``errors`` counts runs that stopped with a wrong arm; ``error_ucb`` is the one-sided
Clopper–Pearson upper confidence bound on the error probability at level :data:`CONFIDENCE`
(95 %); ``error_le_delta_shown`` says whether it is ≤ δ (the runs *demonstrate* δ-correctness;
needs ≥ 300 runs at δ = 0.01), ``error_le_delta_consistent`` whether error ≤ δ is *consistent*
with the runs (the one-sided 95 % lower bound is ≤ δ, i.e. the binomial test of p ≤ δ does not
reject at 5 %).

**Compute cost.** Each run is played to its own stop inside compiled code
(:mod:`privenv.agents.kernel`): a run costs its own stopping time × the agent's cost per pull
(:data:`PULL_SECONDS`, measured), and a run that has stopped costs nothing. The cost is estimated
before running from the lower bound, E[τ] ≈ :data:`INFLATION` × bound, capped at the budget. The
estimate is printed (and with ``--dry-run`` only printed). Full scale is days on a small
machine: CTB-TT's τ grows like ε⁻² (the local bound alone is ≈ 10⁸ at ε = 0.01 on μ1), so at
ε ≤ 0.1 on μ1, μ2, μ6 its runs reach the 10⁸-pull budget, about 2.2 CPU-hours per 1000 runs; the
estimate for all of ``bai-local`` is about 2.3 CPU-days (both thresholds) and for ``bai-global``
about 19 CPU-hours (AdaP-TT and AdaP-TT* at ε = 0.001 take 10⁷–10⁸ steps). The E[τ]/bound factors
were measured on μ4/μ5, then raised where 1000 runs on μ1/μ2 measured more. ``--instances``,
``--epsilons``, ``--runs``, ``--agents``, ``--threshold`` and ``--horizon`` restrict a
reproduction; ``--quick`` (μ4 and μ5, three ε on both sides of the
switch, 100 runs) takes a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import csv
import functools
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._validation import check_choice, check_epsilon, check_int
from privenv.parameters import Param
from privenv.reproduce.cells import (
    add_common_arguments,
    default_workers,
    finish_figure,
    run_figure_sweep,
    run_metadata,
    utc_now,
)
from privenv.results import RunResults
from privenv.sweep import Cell as SweepCell
from privenv.sweep import Configuration, ProgressCallback, SweepConfig, SweepReport

ENV_ID = "BestArmIdentification-v0"
#: the risk of every experiment of paper 3
DELTA = 0.01
#: the instances of Appendix I, in order
INSTANCES: tuple[str, ...] = ("mu1", "mu2", "mu3", "mu4", "mu5", "mu6")
THRESHOLDS: tuple[str, ...] = ("theory", "empirical")
THRESHOLD_CHOICES: tuple[str, ...] = (*THRESHOLDS, "both")
#: level of the one-sided Clopper–Pearson bounds on the error probability
CONFIDENCE = 0.95
#: ε grids of Appendix I
LOCAL_EPSILONS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
                                     1.0, 10.0, 100.0)
GLOBAL_EPSILONS: tuple[float, ...] = (0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6,
                                      0.7, 0.8, 0.9, 1.0, 10.0, 100.0, 1000.0)

# -- cost model (printed before running; an order of magnitude, not a promise) --------------------
#: CPU seconds per pull of one run, per agent (the fast path, K = 5, measured on the 2-core
#: development machine: with ``python benchmarks/bai.py`` on μ1, 300 and 1000 runs — TTUCB
#: 62–73 ns, CTB-TT 68–76, AdaP-TT 49–52 — and on μ4 at ε = 1, 20 runs, the fastest of 3 —
#: TTUCB 102 (runs of about 3 000 pulls: the per-run setup weighs), TTUCB-DPA 55, CTB-TT 73,
#: Gaussian-LDP TTUCB 77, AdaP-TT 48, AdaP-TT* 52, DP-SE 12; the larger, rounded up to the next
#: 10 ns); other agents get the largest
PULL_SECONDS: dict[str, float] = {
    "ttucb": 110e-9, "ttucb-dpa": 60e-9, "ctb-tt": 80e-9, "gaussian-ldp-ttucb": 80e-9,
    "adap-tt": 60e-9, "adap-tt-star": 60e-9, "dp-se": 20e-9,
}
#: E[τ] / lower bound per (agent, threshold) (measured at 20–100 runs on μ1…μ6 for TTUCB and on
#: μ4/μ5 at ε ∈ {0.1, 0.3, 1, 10} for the others, rounded up; others get the largest): TTUCB
#: 5–21× T*_KL·log(1/(2.4δ)) with the theory thresholds, 8–31× with the empirical ones; CTB-TT
#: 26–52× / 38–76× the local bound (largest next to the switch, where the bound's max{·} is
#: loosest); AdaP-TT 46–71× / 17–38×, AdaP-TT* 33–160× / 5–47×, DP-SE 18–31× the global bound;
#: then at 1000 runs on μ1/μ2 (ε ∈ {0.1, 1, 10}, empirical thresholds): AdaP-TT 47–136×,
#: AdaP-TT* 47–263×, DP-SE 25–74× (the largest values are used)
INFLATION: dict[tuple[str, str | None], float] = {
    ("ttucb", "theory"): 25.0, ("ttucb", "empirical"): 35.0,
    ("ctb-tt", "theory"): 55.0, ("ctb-tt", "empirical"): 80.0,
    ("adap-tt", "theory"): 75.0, ("adap-tt", "empirical"): 140.0,
    ("adap-tt-star", "theory"): 160.0, ("adap-tt-star", "empirical"): 270.0,
    ("dp-se", None): 75.0,
}


@dataclass(frozen=True)
class Scale:
    """Which points a reproduction runs and how many runs each."""

    instances: tuple[str, ...]
    epsilons: tuple[float, ...]
    runs: int


@dataclass(frozen=True)
class FigureSpec:
    """One stopping-time-vs-ε figure of paper 3.

    Args:
        id: the figure id (``privenv reproduce <id>``).
        model: ``"local"`` or ``"global"`` (which lower bound and regime switch).
        description: one line for ``privenv reproduce --list``.
        paper: the figures of paper 3 it reproduces.
        agents: registry names; agents without ``epsilon`` are non-private references.
        full, quick: the paper's scale and the ``--quick`` scale.
    """

    id: str
    model: str
    description: str
    paper: str
    agents: tuple[str, ...]
    full: Scale
    quick: Scale

    @property
    def default_output(self) -> str:
        return f"results/{self.id}"

    def lower_bounds(self, instance: str, epsilon: float | None) -> dict[str, float]:
        """The lower bounds on E[τ_δ] at ε (``None``: the non-private bound T*_KL·log)."""
        return dict(_lower_bounds(self.model, instance, epsilon))

    def switch(self, instance: str) -> float:
        """The ε at which the (relaxed) lower bound switches from the privacy term to T*_KL."""
        return _switch(self.model, instance)


LOCAL = FigureSpec(
    id="bai-local",
    model="local",
    description=("paper 3, Fig. 1 & 3: stopping time vs ε of CTB-TT (ε-local DP) and TTUCB on "
                 "μ1…μ6, with the local lower bound"),
    paper="Fig. 1 and Fig. 3 (§5.1, Appendix I)",
    agents=("ttucb", "ctb-tt"),
    full=Scale(INSTANCES, LOCAL_EPSILONS, 1000),
    # μ4/μ5: the cheapest instances whose τ is still well above the K initial pulls; ε from the
    # high-privacy side of the switch (≈ 0.6) to the flat regime
    quick=Scale(("mu4", "mu5"), (0.5, 1.0, 10.0), 100),
)

GLOBAL = FigureSpec(
    id="bai-global",
    model="global",
    description=("paper 3, Fig. 2, 4 & 5: stopping time vs ε of AdaP-TT, AdaP-TT*, DP-SE "
                 "(ε-global DP) and TTUCB on μ1…μ6, with the global lower bound"),
    paper="Fig. 2, Fig. 4 and Fig. 5 (§5.2, Appendix I)",
    agents=("ttucb", "adap-tt", "adap-tt-star", "dp-se"),
    full=Scale(INSTANCES, GLOBAL_EPSILONS, 1000),
    # switches at ε ≈ 0.2 (μ4) and 0.34 (μ5)
    quick=Scale(("mu4", "mu5"), (0.1, 1.0, 10.0), 100),
)

FIGURES: dict[str, FigureSpec] = {LOCAL.id: LOCAL, GLOBAL.id: GLOBAL}


# -- theory (cached: the exact global bound is a numerical optimisation) -------------------------


def _log_factor(delta: float = DELTA) -> float:
    return math.log(1.0 / (2.4 * delta))


@functools.cache
def _times(instance: str) -> dict[str, float]:
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    mu = MEANS[instance]
    return {"T_KL": th.characteristic_time_kl(mu), "T_TV": th.characteristic_time_tv(mu),
            "T_TV2": th.characteristic_time_tv2(mu)}


@functools.cache
def _lower_bounds(model: str, instance: str,
                  epsilon: float | None) -> tuple[tuple[str, float], ...]:
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    L = _log_factor()
    t = _times(instance)
    if epsilon is None:
        return (("non-private bound T*_KL·log(1/2.4δ) (Lemma 5)", t["T_KL"] * L),)
    if model == "local":
        return (("local-DP bound (Cor. 11)",
                 max(t["T_KL"], t["T_TV2"] / th.c_local(epsilon)) * L),)
    exact = th.global_dp_lower_bound(MEANS[instance], epsilon)
    return (("global-DP bound (Thm 17)", exact * L),
            ("relaxation max{T*_KL, T*_TV/ε} (Cor. 18)", max(t["T_KL"], t["T_TV"] / epsilon) * L))


@functools.cache
def upper_bound(agent: str, instance: str, epsilon: float | None) -> tuple[str, float] | None:
    """The paper's asymptotic upper bound on E[τ_δ] for ``agent`` (lim sup E[τ_δ]/log(1/δ) ≤ R),
    as (source, R·log(1/δ)) at δ = :data:`DELTA`, or ``None`` where the paper states none:
    TTUCB T*_{KL,β}(ν) and CTB-TT T*_{KL,β}(ν_ε) = (1 + 2/(e^ε − 1))²T*_{KL,β}(ν) (§3.2, after
    Lemma 12), AdaP-TT Theorem 22, AdaP-TT* Theorem 24 (β = 1/2, σ = 1/2). They drop the
    second-order terms in log(1/δ): a δ → 0 rate, not a bound at δ = 0.01."""
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    mu, L = MEANS[instance], math.log(1.0 / DELTA)
    T_beta = th.characteristic_time_kl_beta(mu, 0.5, "gaussian", 0.5)
    if agent == "ttucb":
        return "T*_KL,β(ν) (Jourdan & Degenne 2024)", T_beta * L
    if epsilon is None:
        return None
    if agent == "ctb-tt":
        return "T*_KL,β(ν_ε) (§3.2)", th.ctb_factor(epsilon) * T_beta * L
    if agent == "adap-tt":
        return "Theorem 22", th.adap_tt_upper_bound(mu, epsilon) * L
    if agent == "adap-tt-star":
        return "Theorem 24", th.adap_tt_star_upper_bound(mu, epsilon) * L
    return None


@functools.cache
def _switch(model: str, instance: str) -> float:
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    if model == "local":
        return th.local_regime_switch_epsilon(MEANS[instance])
    return th.global_regime_switch_epsilon(MEANS[instance])


# -- points ---------------------------------------------------------------------------------------


def _agent_params(agent: str) -> dict[str, Param]:
    """The agent's declared parameters."""
    from privenv.agents import agent_class

    try:
        cls = agent_class(agent)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"agent {agent!r} is registered but cannot be imported: {e}") from e
    return cls.parameters


def is_private(agent: str) -> bool:
    """Whether the agent takes a privacy budget ``epsilon`` (else it is a non-private reference,
    one point per instance)."""
    return "epsilon" in _agent_params(agent)


@dataclass(frozen=True)
class Point:
    """One point of a figure: an agent with its threshold at one ε on one instance."""

    instance: str
    agent: str
    epsilon: float | None  # None: a non-private agent (ε-independent)
    threshold: str | None  # None: the agent has no threshold choice
    delta: float = DELTA

    @property
    def label(self) -> str:
        return self.agent + (f" [{self.threshold}]" if self.threshold else "")

    @property
    def agent_kwargs(self) -> dict[str, Any]:
        params = _agent_params(self.agent)
        kw: dict[str, Any] = {}
        if self.epsilon is not None:
            kw["epsilon"] = self.epsilon
        if "delta" in params:
            kw["delta"] = self.delta
        if self.threshold is not None:
            kw["threshold"] = self.threshold
        return kw

    @property
    def env_kwargs(self) -> dict[str, Any]:
        """The instance, plus the env arguments the agent requires (e.g. rewards as samples)."""
        from privenv.agents import env_kwargs_for

        return env_kwargs_for(self.agent, {"instance": self.instance})

    def configuration(self, horizon: int | None) -> Configuration:
        return Configuration(ENV_ID, self.env_kwargs, self.agent, self.agent_kwargs, horizon)


def make_points(spec: FigureSpec, instances: Sequence[str], epsilons: Sequence[float],
                agents: Sequence[str], threshold: str = "both") -> list[Point]:
    """Every point, instance-major; non-private agents once per instance and threshold."""
    from privenv.agents import REGISTRY

    threshold = check_choice("threshold", threshold, THRESHOLD_CHOICES)
    thresholds = THRESHOLDS if threshold == "both" else (threshold,)
    if not instances:
        raise ValueError(f"instances must name at least one of {', '.join(INSTANCES)}")
    for inst in instances:
        check_choice("instances", inst, INSTANCES)
    if not epsilons:
        raise ValueError("epsilons must contain at least one ε > 0")
    epsilons = sorted({check_epsilon(e, "epsilons") for e in epsilons})
    if not agents:
        raise ValueError(f"agents must name at least one agent (figure agents: "
                         f"{', '.join(spec.agents)})")
    for a in agents:
        if a not in REGISTRY:
            raise ValueError(f"unknown agent {a!r} in agents; known agents: "
                             f"{', '.join(sorted(REGISTRY))}")
    points = []
    for inst in dict.fromkeys(instances):
        for a in dict.fromkeys(agents):
            ths: tuple[str | None, ...] = (
                thresholds if "threshold" in _agent_params(a) else (None,))
            eps: Sequence[float | None] = epsilons if is_private(a) else (None,)
            points += [Point(inst, a, e, th) for th in ths for e in eps]
    return points


def estimated_steps(spec: FigureSpec, point: Point, horizon: int) -> float:
    """Estimated pulls of one run of this point: INFLATION × the lower bound, capped at the
    budget ``horizon``."""
    lb = spec.lower_bounds(point.instance, point.epsilon)
    factor = INFLATION.get((point.agent, point.threshold), max(INFLATION.values()))
    return min(float(horizon), factor * max(lb.values()))


def estimated_seconds(spec: FigureSpec, point: Point, horizon: int, runs: int) -> float:
    """Estimated CPU seconds of all the runs of this point (runs cost their own pulls: how they
    are split into cells does not matter)."""
    per_pull = PULL_SECONDS.get(point.agent, max(PULL_SECONDS.values()))
    return runs * estimated_steps(spec, point, horizon) * per_pull


def default_chunk(runs: int) -> int:
    """Runs per cell by default: two halves from 200 runs on, so that the most expensive point
    (at full scale CTB-TT or AdaP-TT at the smallest ε, which dominates the total) runs on two
    workers (a run costs the same in any cell)."""
    return runs if runs < 200 else -(-runs // 2)


@dataclass
class Plan:
    """What a reproduction will run, with its estimated cost."""

    spec: FigureSpec
    points: list[Point]
    runs: int
    horizon: int
    seed: int
    chunk: int
    estimates: dict[Point, float]  # CPU seconds per point

    @property
    def total_seconds(self) -> float:
        return float(sum(self.estimates.values()))

    def sweep_config(self) -> SweepConfig:
        """One configuration per point, the most expensive first (so that the long cells start
        first and the workers finish together)."""
        order = sorted(self.points, key=lambda p: -self.estimates[p])
        return SweepConfig(tuple(p.configuration(self.horizon) for p in order), runs=self.runs,
                           chunk=self.chunk, seed=self.seed, n_checkpoints=1, name=self.spec.id)

    def describe_cost(self, workers: int) -> str:
        n_cells = len(self.points) * -(-self.runs // self.chunk)
        top = sorted(self.points, key=lambda p: -self.estimates[p])[:5]
        lines = [
            f"{self.spec.id}: {len(self.points)} points × {self.runs} runs in {n_cells} cells of "
            f"≤ {self.chunk} runs, budget {self.horizon:.3g} pulls per run",
            f"estimated cost (lower bound × E[τ]/bound factor, not a promise): "
            f"{_duration(self.total_seconds)} CPU, ≈ {_duration(self.total_seconds / workers)} "
            f"on {workers} worker(s); most expensive points:",
        ]
        for p in top:
            steps = estimated_steps(self.spec, p, self.horizon)
            capped = " (reaches the budget)" if steps >= self.horizon else ""
            eps = "" if p.epsilon is None else f" ε = {p.epsilon:g}"
            lines.append(f"  {p.instance} {p.label}{eps}: ~{steps:.2g} steps{capped}, "
                         f"{_duration(self.estimates[p])}")
        return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def plan(spec: FigureSpec, *, quick: bool = False, instances: Sequence[str] | None = None,
         epsilons: Sequence[float] | None = None, runs: int | None = None,
         agents: Sequence[str] | None = None, threshold: str = "both",
         horizon: int | None = None, chunk: int | None = None, seed: int = 0) -> Plan:
    """The points of a reproduction and their estimated cost (nothing runs)."""
    from privenv.envs.bai import DEFAULT_HORIZON

    scale = spec.quick if quick else spec.full
    runs = check_int("runs", scale.runs if runs is None else runs, low=1)
    horizon = check_int("horizon", DEFAULT_HORIZON if horizon is None else horizon, low=2)
    chunk = check_int("chunk", default_chunk(runs) if chunk is None else chunk, low=1)
    seed = check_int("seed", seed, low=0)
    points = make_points(spec, scale.instances if instances is None else instances,
                         scale.epsilons if epsilons is None else epsilons,
                         spec.agents if agents is None else agents, threshold)
    estimates = {p: estimated_seconds(spec, p, horizon, runs) for p in points}
    return Plan(spec, points, runs, horizon, seed, min(chunk, runs), estimates)


# -- results --------------------------------------------------------------------------------------


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
            lower_bounds=spec.lower_bounds(point.instance, point.epsilon),
            switch=spec.switch(point.instance), estimated_s=estimated_s,
        )

    @property
    def runs(self) -> int:
        return int(self.stopping_time.shape[0])

    @property
    def non_stopping(self) -> int:
        """Runs that reached the sample budget without stopping (recommendation −1)."""
        return int(np.count_nonzero(self.recommendation < 0))

    @property
    def errors(self) -> int:
        """Runs that stopped and recommended a wrong arm."""
        return int(np.count_nonzero((self.recommendation >= 0) & ~self.correct))

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

    def row(self, spec: FigureSpec) -> dict[str, Any]:
        """The summary row of ``points.csv``."""
        p = self.point
        lo, hi = self.error_bounds()
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
            "error_le_delta_shown": hi <= p.delta, "error_le_delta_consistent": lo <= p.delta,
            "lower_bound": lbs[0], "lower_bound_relaxed": lbs[1] if len(lbs) > 1 else "",
            "tau_over_lower_bound": self.tau_mean / lbs[0],
            "above_lower_bound": self.tau_mean >= lbs[0],
            "regime_switch_epsilon": self.switch,
            "regime": ("" if p.epsilon is None else
                       "high privacy" if p.epsilon < self.switch else "low privacy"),
            "wall_s": self.wall_s, "estimated_s": self.estimated_s,
        }
        ub = upper_bound(p.agent, p.instance, p.epsilon)
        row.update({"upper_bound_asymptotic": ub[1] if ub else "",
                    "upper_bound_source": ub[0] if ub else "",
                    "tau_over_upper_bound": self.tau_mean / ub[1] if ub else ""})
        for k, v in sorted(self.extra.items()):
            if np.issubdtype(np.asarray(v).dtype, np.number):
                row[f"{k}_mean"] = float(np.mean(v))
        return row


def ttucb_ratios(results: Sequence[PointResult]) -> dict[Point, float]:
    """E[τ] of each private point over that of TTUCB on the same instance with the same
    threshold choice (when the figure has that TTUCB point): the measured price of privacy."""
    ref = {(r.point.instance, r.point.threshold): r.tau_mean for r in results
           if r.point.agent == "ttucb"}
    return {r.point: r.tau_mean / ref[(r.point.instance, r.point.threshold)] for r in results
            if r.point.epsilon is not None and (r.point.instance, r.point.threshold) in ref}


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
        non-stopping runs."""
        w = max([26, *(len(r.point.label) for r in self.results)])  # the longest agent label
        head = (f"{'instance':<8} {'agent':<{w}} {'ε':>7} {'τ mean ± sd':>23} {'bound':>9} "
                f"{'τ/bound':>7} {'errors (ucb95)':>16} {'non-stop':>8} {'×TTUCB':>7}")
        lines = [head, "-" * len(head)]
        ratios = ttucb_ratios(self.results)
        for r in self.results:
            p = r.point
            eps = "—" if p.epsilon is None else f"{p.epsilon:g}"
            _, hi = r.error_bounds()
            tau = f"{r.tau_mean:.4g} ± {r.tau_sd:.3g}"
            err = f"{r.errors}/{r.runs} ({hi:.3f})"
            lines.append(f"{p.instance:<8} {p.label:<{w}} {eps:>7} {tau:>23} "
                         f"{r.lower_bound:>9.3g} {r.tau_mean / r.lower_bound:>7.1f} {err:>16} "
                         f"{r.non_stopping:>8} "
                         + (f"{ratios[p]:>7.2f}" if p in ratios else f"{'':>7}"))
        return "\n".join(lines)


def write_csvs(spec: FigureSpec, results: Sequence[PointResult], output: Path,
               seed: int) -> dict[str, Path]:
    """``points.csv`` (one row per point) and ``runs.csv`` (one row per run). Nothing
    timing-dependent goes into ``runs.csv``; ``points.csv`` ends with the wall times."""
    ratios = ttucb_ratios(results)
    rows = []
    for r in results:
        row = r.row(spec)
        if r.point in ratios:  # the price of privacy against TTUCB; CTB-TT's predicted one
            row["tau_over_ttucb"] = ratios[r.point]
            if r.point.agent == "ctb-tt":
                from privenv.theory.bai import ctb_factor

                row["ctb_factor"] = ctb_factor(r.point.epsilon)
        rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    points_path, runs_path = output / "points.csv", output / "runs.csv"
    with points_path.open("w", newline="") as f:
        w = csv.DictWriter(f, columns, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with runs_path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["instance", "agent", "threshold", "epsilon", "seed", "run", "stopping_time",
                    "recommendation", "correct", "stopped"])
        for r in results:
            p = r.point
            for i in range(r.runs):
                w.writerow([p.instance, p.agent, p.threshold or "",
                            "" if p.epsilon is None else p.epsilon, seed, i,
                            int(r.stopping_time[i]), int(r.recommendation[i]),
                            int(r.correct[i]), int(r.recommendation[i] >= 0)])
    return {"points": points_path, "runs": runs_path}


#: lower-bound curves are drawn at this many log-spaced ε (plus the grid points)
N_CURVE_POINTS = 40


#: line style of each threshold choice (one colour per agent)
THRESHOLD_STYLES = {None: "-", "theory": "-", "empirical": (0, (4, 1.5))}


def draw(spec: FigureSpec, results: Sequence[PointResult], output: Path, runs: int) -> list[Path]:
    """One log–log panel per instance (PNG and PDF): one colour per agent, one line style per
    threshold choice."""
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
        suptitle=(f"Paper 3 {spec.paper}\nstopping time vs ε ({spec.model} DP), δ = {DELTA:g}, "
                  f"{runs} runs, mean ± 1 sd"),
        footnote=("grey: lower bounds on E[τ] × log(1/(2.4δ)); shaded vertical line: the ε where "
                  "the (relaxed) bound switches regime;\nhollow markers: some runs hit the "
                  "sample budget (their τ counts as the budget, so the mean is a lower bound); "
                  "solid: theory thresholds, dashed: empirical"),
    )
    return save_figure(fig, output / spec.id)


# -- the reproduction -----------------------------------------------------------------------------


def reproduce(
    spec: FigureSpec,
    output: str | Path | None = None,
    *,
    quick: bool = False,
    instances: Sequence[str] | None = None,
    epsilons: Sequence[float] | None = None,
    runs: int | None = None,
    agents: Sequence[str] | None = None,
    threshold: str = "both",
    horizon: int | None = None,
    chunk: int | None = None,
    workers: int | None = None,
    seed: int = 0,
    progress: bool | str | ProgressCallback = True,
    figure: bool = True,
    backend: str = "local",
    address: str | None = None,
    resume: bool = False,
    log: Callable[[str], None] | None = None,
) -> Reproduction:
    """Run a stopping-time-vs-ε reproduction and write its files; returns the results.

    Args:
        spec: :data:`LOCAL` or :data:`GLOBAL`.
        output: directory (created); default ``results/<id>`` (``…-quick`` with ``quick``).
        quick: the figure's quick scale (instances, ε, runs) instead of the full one.
        instances, epsilons, runs, agents: override the scale's (restrict a reproduction).
        threshold: ``"theory"``, ``"empirical"`` or ``"both"`` for the Top Two agents.
        horizon: the sample budget per run (default: the env's, 10⁸).
        chunk: runs per cell (default :func:`default_chunk`).
        workers: worker processes (default: one per CPU).
        seed: the seed of every point.
        progress, figure, backend, address, resume: as in
            :func:`privenv.reproduce.huber_fig1.reproduce`.
        log: called with the cost estimate before running (e.g. ``print``).

    Raises:
        RuntimeError: if a cell failed (its error is in the store; ``resume`` retries it).
    """
    pl = plan(spec, quick=quick, instances=instances, epsilons=epsilons, runs=runs,
              agents=agents, threshold=threshold, horizon=horizon, chunk=chunk, seed=seed)
    if backend == "local":
        workers = default_workers() if workers is None else check_int("workers", workers, low=1)
    if log is not None:
        log(pl.describe_cost(workers or default_workers()))
    config = pl.sweep_config().validate()
    out = Path(output if output is not None else spec.default_output + ("-quick" if quick else ""))
    start = time.perf_counter()
    report, store_path, stored = run_figure_sweep(config, out, resume=resume, backend=backend,
                                                  workers=workers, address=address,
                                                  progress=progress)
    config_ids = dict(zip(config.configurations, config.config_ids(), strict=True))
    results = [PointResult.from_store(spec, p, stored[config_ids[p.configuration(pl.horizon)]],
                                      pl.estimates[p])
               for p in pl.points]
    rep = Reproduction(spec, out, pl, results, 0.0, workers or 0, sweep=report)
    rep.simulation_wall_s = time.perf_counter() - start
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: write_csvs(spec, results, out, pl.seed),
                         (lambda: draw(spec, results, out, pl.runs)) if figure else None,
                         lambda: _metadata(rep, quick))


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    from privenv.problems.bai import INSTANCES as MEANS

    spec, pl = rep.spec, rep.plan
    points = []
    for r in rep.results:
        p = r.point
        cell = SweepCell(ENV_ID, p.env_kwargs, p.agent, p.agent_kwargs, pl.horizon, pl.seed, 0,
                         pl.runs, 1)
        points.append({**r.row(spec), "agent_kwargs": p.agent_kwargs, "env_kwargs": p.env_kwargs,
                       "agent_params": r.agent_params, **r.privacy,
                       "lower_bounds": r.lower_bounds, "command": cell.command()})
    instances = {}
    for inst in dict.fromkeys(p.instance for p in pl.points):
        instances[inst] = {"means": list(MEANS[inst]), **_times(inst),
                           "non_private_bound": spec.lower_bounds(inst, None),
                           "regime_switch_epsilon": spec.switch(inst)}
    return {
        "figure": spec.id,
        "description": spec.description,
        "paper": ("Azize, Jourdan, Al Marjani, Basu, Differentially Private Best-Arm "
                  f"Identification, {spec.paper}"),
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ENV_ID,
        "delta": DELTA,
        "runs": pl.runs,
        "budget": pl.horizon,
        "seed": pl.seed,
        "chunk": pl.chunk,
        "thresholds": sorted({p.threshold for p in pl.points if p.threshold}),
        "confidence": CONFIDENCE,
        "seeding": "every point uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding), so agents and ε are compared on common random numbers",
        "instances": instances,
        "points": points,
        "cost_model": {"pull_seconds": PULL_SECONDS,
                       "inflation": {f"{a} [{t}]" if t else a: v
                                     for (a, t), v in INFLATION.items()},
                       "estimated_cpu_s": pl.total_seconds},
        **run_metadata(rep),
        "scale": {"full": asdict(spec.full), "quick": asdict(spec.quick)},
    }


# -- command line ---------------------------------------------------------------------------------


def _names(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise ValueError(f"{what} must name at least one item, got {text!r}")
    return items


def _floats(text: str) -> list[float]:
    out = []
    for x in _names(text, "epsilons"):
        try:
            out.append(float(x))
        except ValueError:
            raise ValueError(f"epsilons must be comma-separated numbers > 0, got {x!r}") from None
    return out


def add_arguments(parser: argparse.ArgumentParser, spec: FigureSpec) -> None:
    """Options of ``privenv reproduce bai-local`` / ``bai-global``."""
    add_common_arguments(parser, spec.default_output)
    q, f = spec.quick, spec.full
    parser.add_argument("--instances", default=None, metavar="LIST",
                        help=f"comma-separated instances among {','.join(INSTANCES)} (default: "
                             f"all; {','.join(q.instances)} with --quick)")
    parser.add_argument("--epsilons", default=None, metavar="LIST",
                        help=f"comma-separated ε values (default: Appendix I's grid "
                             f"{','.join(f'{e:g}' for e in f.epsilons)}; "
                             f"{','.join(f'{e:g}' for e in q.epsilons)} with --quick)")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per point (default {f.runs}; {q.runs} with --quick)")
    parser.add_argument("--agents", default=",".join(spec.agents),
                        help=f"comma-separated agent names (default: {','.join(spec.agents)})")
    parser.add_argument("--threshold", choices=THRESHOLD_CHOICES, default="both",
                        help="stopping thresholds of the Top Two agents: the δ-correct ones of "
                             "the paper's lemmas (theory), the authors' code (empirical, what "
                             "the paper's figures used) or both (default: the comparison is "
                             "reported under both)")
    parser.add_argument("--horizon", type=int, default=None, metavar="BUDGET",
                        help="sample budget per run (default: the env's, 1e8); runs reaching it "
                             "are reported as non-stopping")
    parser.add_argument("--chunk", type=int, default=None, metavar="N",
                        help="runs per cell (default: all runs below 200, else two halves); "
                             "keep it fixed when resuming")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the points and the estimated cost, run nothing")


def main(args: argparse.Namespace, spec: FigureSpec) -> int:
    """Run from parsed command-line options; prints the cost estimate and the summary table."""
    kwargs = dict(
        quick=args.quick,
        instances=None if args.instances is None else _names(args.instances, "instances"),
        epsilons=None if args.epsilons is None else _floats(args.epsilons),
        runs=args.runs, agents=_names(args.agents, "agents"), threshold=args.threshold,
        horizon=args.horizon, chunk=args.chunk, seed=args.seed,
    )
    if args.dry_run:
        pl = plan(spec, **kwargs)
        print(pl.describe_cost(args.workers or default_workers()))
        return 0
    try:
        rep = reproduce(spec, args.output, workers=args.workers, backend=args.backend,
                        address=args.address, resume=args.resume, log=print, **kwargs)
    except RuntimeError as e:
        print(f"privenv reproduce {spec.id}: {e}", file=sys.stderr)
        return 1
    pl = rep.plan
    print(f"{spec.id}: {len(pl.points)} points, {pl.runs} runs each, δ = {DELTA:g}, budget "
          f"{pl.horizon:.3g}, {rep.sweep.backend}, wall time {rep.wall_s:.1f} s "
          f"(estimated {_duration(pl.total_seconds)} CPU)")
    print(f"stopping time τ (mean ± sd over runs; non-stopping runs count as the budget), the "
          f"lower bound × log(1/(2.4δ)), wrong recommendations with their one-sided "
          f"{100 * CONFIDENCE:g} % Clopper–Pearson upper bound:")
    print(rep.table())
    bad = [r for r in rep.results if r.error_bounds()[0] > DELTA]
    below = [r for r in rep.results if r.tau_mean < r.lower_bound]
    print(f"error ≤ δ consistent at every point: {'yes' if not bad else 'NO'}"
          + "".join(f"\n  rejected: {r.point.instance} {r.point.label} ε={r.point.epsilon}"
                    for r in bad))
    print(f"every mean τ above its lower bound: {'yes' if not below else 'NO'}"
          + "".join(f"\n  below: {r.point.instance} {r.point.label} ε={r.point.epsilon}"
                    for r in below))
    for name, path in rep.files.items():
        print(f"{name:>9}: {path}")
    return 0


__all__ = ["CONFIDENCE", "DELTA", "FIGURES", "GLOBAL", "GLOBAL_EPSILONS", "INSTANCES",
           "LOCAL", "LOCAL_EPSILONS", "FigureSpec", "Plan", "Point", "PointResult",
           "Reproduction", "Scale", "add_arguments", "default_chunk", "estimated_seconds",
           "estimated_steps", "is_private", "main", "make_points", "plan", "reproduce",
           "write_csvs"]
