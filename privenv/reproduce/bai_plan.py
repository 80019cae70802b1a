"""What a stopping-time reproduction of paper 3 runs: its figures, points, lower bounds and cost.

The figures (:class:`FigureSpec`: ``bai-local`` and ``bai-global``, run by
:mod:`privenv.reproduce.bai`), the paper's theory at each point (lower bounds, the regime switch,
the asymptotic upper bounds) and the plan of a reproduction (:func:`plan`), with its cost
estimated before anything runs.

**Points and cells.** A *point* is (instance, agent, threshold, ε); an agent without an ``epsilon``
parameter (TTUCB) has one point per instance and threshold, drawn as a horizontal line. Top Two
agents (those with a ``threshold`` parameter) run with the thresholds chosen by ``--threshold``:
``theory`` (the δ-correct thresholds of the lemmas) or ``empirical`` (the authors' public-code
rules, Remark 53 — what the paper's figures used), or ``both`` (the default: the
comparison is reported for both). Every point is one configuration of a sweep
(:mod:`privenv.sweep`) on ``BestArmIdentification-v0`` with the same integer seed (common random
numbers: run *i* of every point sees the same reward streams), split into cells of ``--chunk``
runs that the backend runs in parallel, most expensive first.

**Compute cost.** Each run is played to its own stop inside compiled code
(:mod:`privenv.agents.kernel`): a run costs its own stopping time × the agent's cost per pull
(:data:`PULL_SECONDS`, measured), and a run that has stopped costs nothing. The cost is estimated
before running, E[τ] ≈ max{a × the lower bound, b × the paper's δ → 0 rate × log(1/δ)} with the
factors of :data:`COST_FACTORS` (fitted to every point measured so far: the estimate is an upper
value at each of them), capped at the budget. The estimate is printed (and with ``--dry-run``
only printed). Full scale is days on a small machine: CTB-TT's τ grows like ε⁻² (the local bound
alone is ≈ 10⁸ at ε = 0.01 on μ1), so at ε = 0.01 on μ1, μ2, μ4, μ6 its runs reach the 10⁸-pull
budget, about 2.2 CPU-hours per 1000 runs; the estimate for AdaP-TT* on μ6 (empirical
thresholds) reaches it at 0.8 ≤ ε ≤ 1, where Theorem 24's rate grows like
ε²T*_{KL,β}(ν_{G,ε})² (measured: 1.9·10⁷ pulls per run at ε = 0.5, 2.9·10⁷ at 0.9, 1.9·10⁶ at
1). The estimate for all of ``bai-local`` is 37 CPU-hours (both thresholds) and for
``bai-global`` 53.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privenv._validation import check_choice, check_delta, check_epsilon, check_int
from privenv.parameters import Param
from privenv.reproduce.bai_rates import CONFIDENCE, DELTA, upper_bound, upper_constant
from privenv.sweep import Configuration, SweepConfig

ENV_ID = "BestArmIdentification-v0"
#: the instances of Appendix I, in order
INSTANCES: tuple[str, ...] = ("mu1", "mu2", "mu3", "mu4", "mu5", "mu6")
THRESHOLDS: tuple[str, ...] = ("theory", "empirical")
THRESHOLD_CHOICES: tuple[str, ...] = (*THRESHOLDS, "both")
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
    # dp-top-two (Jourdan & Azize 2025): the K − 1 transportation costs W^ε of its TCI challenger
    # at every pull; in the cells of `privenv reproduce dp-bai-optimal` (2026-12-06, idle
    # machine) 314–426 ns per run-step where E[τ] ≥ 10⁵, up to 1.2 µs on μ3's short runs (the
    # per-run setup weighs), 1.2–1.6 µs on 2026-12-04's shared machine
    "dp-top-two": 0.6e-6,
}
#: E[τ] ≈ max{a × the lower bound, b × the paper's δ → 0 rate × log(1/δ)} per (agent, threshold),
#: as (a, b) (:func:`estimated_steps`; the rate: TTUCB's and CTB-TT's T*_{KL,β}, Theorems 22 and
#: 24, :func:`~privenv.reproduce.bai_rates.upper_bound`). Fitted by
#: ``docs/results/measure/fit_bai_cost.py`` to the 628 points of docs/results whose runs all
#: stopped (bai-local and bai-global on μ1…μ6, 1000 runs, 25 at the costliest;
#: 2026-12-07): the smallest factors that put the estimate at or above every measured mean, so
#: the estimate is an upper value wherever it was measured (summed over each group 1.02–1.03×
#: the measured τ for TTUCB and CTB-TT, 4.0× and 6.8× for AdaP-TT* with the empirical and the
#: theory thresholds, 6.8–7.9× for AdaP-TT and DP-SE). The rate term carries AdaP-TT*'s rise where
#: (μ_a − μ_b) crosses ε/2, which the lower bound does not see (μ1, theory thresholds, ε = 0.4 …
#: 0.6: 6 200–8 900× the bound, 0.77–1.19× the rate). Where the far arm's gap equals ε/2 (μ1 at
#: ε = 0.9) the runs split between the branches and the mean is 861× the bound while the rate is
#: small; that point sets AdaP-TT*'s ``a`` with the theory thresholds. Agents not in the table get
#: the largest ``a``.
COST_FACTORS: dict[tuple[str, str | None], tuple[float, float]] = {
    ("ttucb", "theory"): (0.0, 4.3), ("ttucb", "empirical"): (0.0, 6.2),
    ("ctb-tt", "theory"): (0.0, 4.6), ("ctb-tt", "empirical"): (0.0, 6.5),
    ("adap-tt", "theory"): (252.0, 0.0), ("adap-tt", "empirical"): (103.0, 0.0),
    ("adap-tt-star", "theory"): (986.0, 1.2), ("adap-tt-star", "empirical"): (129.0, 2.5),
    ("dp-se", None): (125.0, 0.0),
    # dp-top-two (its challenger on Ñ): 20–158× the global bound over μ1…μ6 × 7 ε, the largest on
    # μ1 at ε = 0.03, where 1 run of 100 reached the budget of 10⁸ pulls (docs/results/zoo.md);
    # with the challenger on N ("pulls") up to about 1 400× (its stalls)
    ("dp-top-two", None): (160.0, 0.0),
}


@dataclass(frozen=True)
class Scale:
    """Which points a reproduction runs and how many runs each."""

    instances: tuple[str, ...]
    epsilons: tuple[float, ...]
    runs: int
    deltas: tuple[float, ...] = (DELTA,)


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
        threshold: the Top Two agents' thresholds by default (``"both"``, ``"theory"`` or
            ``"empirical"``).
    """

    id: str
    model: str
    description: str
    paper: str
    agents: tuple[str, ...]
    full: Scale
    quick: Scale
    threshold: str = "both"

    @property
    def default_output(self) -> str:
        return f"results/{self.id}"

    def lower_bounds(self, instance: str, epsilon: float | None,
                     delta: float = DELTA) -> dict[str, float]:
        """The lower bounds on E[τ_δ] at ε and δ (``None``: the non-private bound T*_KL·log)."""
        return dict(lower_bounds_at(self.model, instance, epsilon, delta))

    def point_bounds(self, point: Point) -> dict[str, float]:
        """The lower bounds that apply at ``point`` (the figure's model at its ε and δ)."""
        return self.lower_bounds(point.instance, point.epsilon, point.delta)

    # what a figure writes and prints (a figure with another axis overrides them)
    def write_files(self, results: Sequence[Any], output: Path, seed: int) -> dict[str, Path]:
        """The figure's CSVs (:func:`~privenv.reproduce.bai_results.write_csvs`)."""
        from privenv.reproduce.bai_results import write_csvs

        return write_csvs(self, results, output, seed)

    def draw(self, results: Sequence[Any], output: Path, runs: int | str) -> list[Path]:
        """The figure's PNG and PDF (:func:`~privenv.reproduce.bai_results.draw`)."""
        from privenv.reproduce.bai_results import draw

        return draw(self, results, output, runs)

    def summary(self, results: Sequence[Any]) -> str:
        """What the command prints after its table and checks (nothing by default)."""
        return ""

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
def characteristic_times(instance: str) -> dict[str, float]:
    """T*_KL, T*_TV and T*_TV² of an instance (paper 3, eq. 1)."""
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    mu = MEANS[instance]
    return {"T_KL": th.characteristic_time_kl(mu), "T_TV": th.characteristic_time_tv(mu),
            "T_TV2": th.characteristic_time_tv2(mu)}


@functools.cache
def lower_constants(model: str, instance: str,
                    epsilon: float | None) -> tuple[tuple[str, float], ...]:
    """The characteristic times T* of the lower bounds E[τ_δ] ≥ T*·log(1/(2.4δ)), as (name, T*):
    T*_KL (Lemma 5) for ``epsilon=None``; else max{T*_KL, T*_TV²/c(ε)} (Cor. 11) for
    ``model="local"``, T*_g(ε) (Theorem 17, exact) and its relaxation max{T*_KL, T*_TV/ε}
    (Cor. 18) for ``"global"``."""
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    t = characteristic_times(instance)
    if epsilon is None:
        return (("non-private bound T*_KL·log(1/2.4δ) (Lemma 5)", t["T_KL"]),)
    if model == "local":
        return (("local-DP bound (Cor. 11)", max(t["T_KL"], t["T_TV2"] / th.c_local(epsilon))),)
    return (("global-DP bound (Thm 17)", th.global_dp_lower_bound(MEANS[instance], epsilon)),
            ("relaxation max{T*_KL, T*_TV/ε} (Cor. 18)", max(t["T_KL"], t["T_TV"] / epsilon)))


@functools.cache
def lower_bounds_at(model: str, instance: str, epsilon: float | None,
                    delta: float = DELTA) -> tuple[tuple[str, float], ...]:
    """The bounds of :func:`lower_constants` on E[τ_δ], × log(1/(2.4δ)), as (name, bound)."""
    L = _log_factor(delta)
    return tuple((name, c * L) for name, c in lower_constants(model, instance, epsilon))


@functools.cache
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
                agents: Sequence[str], threshold: str = "both",
                deltas: Sequence[float] = (DELTA,)) -> list[Point]:
    """Every point, instance-major; non-private agents once per instance, threshold and δ."""
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
    if not deltas:
        raise ValueError("deltas must contain at least one δ in (0, 1)")
    deltas = sorted({check_delta(d, "deltas") for d in deltas}, reverse=True)
    points = []
    for inst in dict.fromkeys(instances):
        for a in dict.fromkeys(agents):
            ths: tuple[str | None, ...] = (
                thresholds if "threshold" in _agent_params(a) else (None,))
            eps: Sequence[float | None] = epsilons if is_private(a) else (None,)
            points += [Point(inst, a, e, th, d) for th in ths for d in deltas for e in eps]
    return points


def model_steps(factors: tuple[float, float], bound: float, rate: float | None) -> float:
    """The cost model's pulls per run, max{a × bound, b × rate} for ``factors`` (a, b) of
    :data:`COST_FACTORS` (no rate: the bound term alone), uncapped."""
    a, b = factors
    return max(a * bound, b * rate if rate is not None else 0.0)


def estimated_steps(spec: FigureSpec, point: Point, horizon: int) -> float:
    """Estimated pulls of one run of this point, capped at the budget ``horizon``:
    max{a × the lower bound, b × the paper's rate × log(1/δ)}, (a, b) of :data:`COST_FACTORS`."""
    bound = max(spec.point_bounds(point).values())
    default = (max(a for a, _ in COST_FACTORS.values()), 0.0)
    a, b = COST_FACTORS.get((point.agent, point.threshold), default)
    rate = upper_bound(point.agent, point.instance, point.epsilon, point.delta) if b else None
    if rate is None and not a:  # no rate at this point: the lower-bound term alone
        a = default[0]
    return min(float(horizon), model_steps((a, b), bound, None if rate is None else rate[1]))


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
            "estimated cost (measured factors × the lower bound or the paper's rate, not a "
            f"promise): "
            f"{duration_text(self.total_seconds)} CPU, "
            f"{about(self.total_seconds / workers)} on {workers} worker(s), plus a "
            "first run's kernel compile (tens of seconds, once per machine); most expensive "
            "points:",
        ]
        for p in top:
            steps = estimated_steps(self.spec, p, self.horizon)
            capped = " (reaches the budget)" if steps >= self.horizon else ""
            eps = ("" if p.epsilon is None else f" ε = {p.epsilon:g}") + (
                "" if p.delta == DELTA else f" δ = {p.delta:g}")
            lines.append(f"  {p.instance} {p.label}{eps}: ~{steps:.2g} steps{capped}, "
                         f"{duration_text(self.estimates[p])}")
        return "\n".join(lines)


def duration_text(seconds: float) -> str:
    """A duration for people: seconds, minutes, hours or days ("< 1 s" below half a second)."""
    if seconds < 0.5:
        return "< 1 s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def about(seconds: float) -> str:
    """An estimated duration: "≈ 3 min", or "< 1 s" as it is."""
    text = duration_text(seconds)
    return text if text.startswith("<") else f"≈ {text}"


def plan(spec: FigureSpec, *, quick: bool = False, instances: Sequence[str] | None = None,
         epsilons: Sequence[float] | None = None, runs: int | None = None,
         agents: Sequence[str] | None = None, threshold: str = "both",
         horizon: int | None = None, chunk: int | None = None, seed: int = 0,
         deltas: Sequence[float] | None = None) -> Plan:
    """The points of a reproduction and their estimated cost (nothing runs)."""
    from privenv.envs.bai import DEFAULT_HORIZON

    scale = spec.quick if quick else spec.full
    runs = check_int("runs", scale.runs if runs is None else runs, low=1)
    horizon = check_int("horizon", DEFAULT_HORIZON if horizon is None else horizon, low=2)
    chunk = check_int("chunk", default_chunk(runs) if chunk is None else chunk, low=1)
    seed = check_int("seed", seed, low=0)
    points = make_points(spec, scale.instances if instances is None else instances,
                         scale.epsilons if epsilons is None else epsilons,
                         spec.agents if agents is None else agents, threshold,
                         scale.deltas if deltas is None else deltas)
    estimates = {p: estimated_seconds(spec, p, horizon, runs) for p in points}
    return Plan(spec, points, runs, horizon, seed, min(chunk, runs), estimates)

__all__ = ["CONFIDENCE", "DELTA", "ENV_ID", "FIGURES", "GLOBAL", "GLOBAL_EPSILONS", "COST_FACTORS",
           "INSTANCES", "LOCAL", "LOCAL_EPSILONS", "PULL_SECONDS", "THRESHOLDS",
           "THRESHOLD_CHOICES", "FigureSpec", "Plan", "Point", "Scale", "characteristic_times",
           "about", "default_chunk", "duration_text", "estimated_seconds", "estimated_steps",
           "is_private", "lower_bounds_at", "lower_constants", "make_points", "model_steps", "plan",
           "upper_bound", "upper_constant"]
