"""``bai-delta``: paper 3's δ → 0 rates, E[τ_δ]/log(1/δ) as the risk δ shrinks.

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*. Every figure
of the paper is at δ = 0.01, but its upper bounds are statements about δ → 0,
lim sup_{δ→0} E[τ_δ]/log(1/δ) ≤ R, with R:

* TTUCB: T*_{KL,β}(ν) (Jourdan & Degenne 2024); CTB-TT: T*_{KL,β}(ν_ε) = (1 + 2/(e^ε − 1))²
  T*_{KL,β}(ν) (§3.2, after Lemma 12);
* AdaP-TT: Theorem 22; AdaP-TT*: Theorem 24 (β = σ = ½);
* DP-SE: none (the paper gives its order only);

and the lower bounds E[τ_δ] ≥ T*·log(1/(2.4δ)) hold at every δ (Lemma 5; Corollary 11 for the
ε-local-DP CTB-TT; Theorem 17 for the ε-global-DP agents). The paper also conjectures that
AdaP-TT* has a worse non-asymptotic cost than AdaP-TT, and that "the extra cost vanishes as
δ → 0" (§4.4, end).

The figure runs TTUCB, CTB-TT, AdaP-TT, AdaP-TT* and DP-SE with the theory thresholds (the
δ-correct ones: the empirical rules are not functions of δ the theorems speak of) on μ1 and μ3,
at ε ∈ {0.1, 1, 10} and δ ∈ {10⁻², 10⁻⁴, 10⁻⁶, 10⁻⁸}, 200 runs per point, every point on the
same seed (run i of every point sees the same reward streams, so two δ are compared run by run).
What it reports, per (instance, agent, ε):

* E[τ_δ]/log(1/δ) at each δ, against R and the lower constant T*;
* the **marginal rate** between consecutive δ, (E[τ_{δ′}] − E[τ_δ])/(log(1/δ′) − log(1/δ)),
  with a 95 % interval from the paired runs: the lower-order terms (log log(1/δ), constants)
  cancel in it, so it approaches lim E[τ_δ]/log(1/δ) faster than the ratio does;
* for AdaP-TT*, its E[τ] over AdaP-TT's at each δ, and the ratio of their marginal rates
  against R₂₄/R₂₂.

Outputs (in ``--output``): the files of ``bai-global`` (``points.csv``, ``runs.csv`` with a
``delta`` column, ``metadata.json``, ``results.sqlite``), ``rates.csv`` (one row per
(instance, agent, ε, δ)) and ``bai-delta.png``/``.pdf``: E[τ_δ]/log(1/δ) against log(1/δ), one
panel per (instance, ε), with each agent's R (dashed) and the global lower constant. Run by
:func:`privenv.reproduce.bai.reproduce` (points, cost model, resume: as for ``bai-global``).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from privenv.reproduce import bai
from privenv.reproduce.bai_plan import (
    FigureSpec,
    Point,
    Scale,
    lower_bounds_at,
    lower_constants,
    upper_constant,
)
from privenv.reproduce.bai_results import PointResult, write_csvs
from privenv.reproduce.cells import csv_float

#: the risks of the figure, largest first
DELTAS: tuple[float, ...] = (1e-2, 1e-4, 1e-6, 1e-8)
AGENTS: tuple[str, ...] = ("ttucb", "ctb-tt", "adap-tt", "adap-tt-star", "dp-se")
#: level of the marginal rates' intervals (normal approximation on the paired runs)
LEVEL = 0.95
_Z = 1.959963984540054  # the standard normal's 97.5 % quantile


def is_local(agent: str) -> bool:
    """Whether ``agent`` is a local-DP system ("randomizer wrapper + learner", e.g. CTB-TT): its
    class wraps the env (:meth:`~privenv.agents.base.Agent.wrap_env`)."""
    from privenv.agents import agent_class
    from privenv.agents.base import Agent

    return agent_class(agent).wrap_env is not Agent.wrap_env


def lower_model(agent: str) -> str:
    """Which lower bound an agent answers to: ``"local"`` (Corollary 11) for a local-DP system,
    ``"global"`` (Theorem 17) otherwise (the non-private bound when ε is ``None``)."""
    return "local" if is_local(agent) else "global"


@dataclass(frozen=True)
class DeltaSpec(FigureSpec):
    """A figure with δ as its axis: each point answers to its own agent's lower bound, and it
    writes :func:`rates` beside the ``bai-global`` files."""

    def point_bounds(self, point: Point) -> dict[str, float]:
        return dict(lower_bounds_at(lower_model(point.agent), point.instance, point.epsilon,
                                    point.delta))

    def write_files(self, results: Sequence[Any], output: Path, seed: int) -> dict[str, Path]:
        files = write_csvs(self, results, output, seed, with_delta=True)
        files["rates"] = write_rates(rates(results), output / "rates.csv")
        return files

    def draw(self, results: Sequence[Any], output: Path, runs: int | str) -> list[Path]:
        return draw(self, results, output, runs)

    def summary(self, results: Sequence[Any]) -> str:
        found = rates(results)
        return "\n".join([rates_table(found), *star_verdicts(found)])


DEFINITION = DeltaSpec(
    id="bai-delta",
    model="global",
    description=("paper 3, the δ → 0 rates: E[τ]/log(1/δ) of TTUCB, CTB-TT, AdaP-TT, AdaP-TT* and "
                 "DP-SE on μ1 and μ3 at δ = 1e-2 … 1e-8, against Theorems 22/24 and the lower "
                 "bounds"),
    paper="Theorems 22 and 24, §3.2, Lemma 5, Corollary 11, Theorem 17 (δ → 0)",
    agents=AGENTS,
    full=Scale(("mu1", "mu3"), (0.1, 1.0, 10.0), 200, DELTAS),
    quick=Scale(("mu3",), (1.0,), 30, (1e-2, 1e-4)),
    threshold="theory",
)
ID = DEFINITION.id
DESCRIPTION = DEFINITION.description


# -- the rates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """One (instance, agent, threshold, ε) across δ.

    Attributes:
        deltas: the risks, largest first; ``tau``: E[τ_δ] at each; ``per_log``:
            E[τ_δ]/log(1/δ).
        marginal, marginal_low, marginal_high: the marginal rate between each δ and the next
            (one fewer than ``deltas``) and its interval at :data:`LEVEL`.
        rate, rate_source: the paper's R (``nan`` where it states none).
        lower: the lower bound's constant T* (the first of :func:`lower_constants`).
    """

    instance: str
    agent: str
    threshold: str | None
    epsilon: float | None
    deltas: np.ndarray
    tau: np.ndarray
    per_log: np.ndarray
    marginal: np.ndarray
    marginal_low: np.ndarray
    marginal_high: np.ndarray
    rate: float
    rate_source: str
    lower: float

    @property
    def label(self) -> str:
        return self.agent + ("" if self.epsilon is None else f", ε = {self.epsilon:g}")


def rates(results: Sequence[PointResult]) -> list[Rate]:
    """The :class:`Rate` of every (instance, agent, threshold, ε) with at least one δ; points
    with runs that did not stop are kept (their τ counts as the budget)."""
    groups: dict[tuple[Any, ...], list[PointResult]] = {}
    for r in results:
        p = r.point
        groups.setdefault((p.instance, p.agent, p.threshold, p.epsilon), []).append(r)
    out = []
    for (inst, agent, th, eps), rs in groups.items():
        rs = sorted(rs, key=lambda r: -r.point.delta)
        logs = np.array([math.log(1.0 / r.point.delta) for r in rs])
        tau = np.array([r.tau_mean for r in rs])
        marginal, low, high = [], [], []
        for a, b, la, lb in zip(rs, rs[1:], logs, logs[1:], strict=False):
            n = min(a.runs, b.runs)  # paired: run i of both points saw the same rewards
            d = (b.stopping_time[:n] - a.stopping_time[:n]).astype(float) / (lb - la)
            se = float(np.std(d, ddof=1) / math.sqrt(n)) if n > 1 else math.nan
            marginal.append(float(d.mean()))
            low.append(float(d.mean()) - _Z * se)
            high.append(float(d.mean()) + _Z * se)
        up = upper_constant(agent, inst, eps)
        (_, lower), *_ = lower_constants(lower_model(agent), inst, eps)
        out.append(Rate(inst, agent, th, eps, np.array([r.point.delta for r in rs]), tau,
                        tau / logs, np.array(marginal), np.array(low), np.array(high),
                        up[1] if up else math.nan, up[0] if up else "", lower))
    return out


def star_verdicts(found: Sequence[Rate]) -> list[str]:
    """AdaP-TT* against AdaP-TT on each (instance, threshold, ε): E[τ*]/E[τ] at each δ, and the
    ratio of their last marginal rates against R₂₄/R₂₂ (the paper's "extra cost vanishes as
    δ → 0": the ratio of the E[τ] should move towards R₂₄/R₂₂, the marginal rates' be near it)."""
    by = {(r.instance, r.agent, r.threshold, r.epsilon): r for r in found}
    lines = []
    for (inst, agent, th, eps), star in by.items():
        base = by.get((inst, "adap-tt", th, eps))
        if agent != "adap-tt-star" or base is None or len(star.deltas) != len(base.deltas):
            continue
        ratio = star.tau / base.tau
        text = ", ".join(f"{x:.2f} (δ = {d:g})" for x, d in zip(ratio, star.deltas, strict=True))
        line = f"AdaP-TT*/AdaP-TT on {inst}, ε = {eps:g}: E[τ] ratio {text}"
        if star.marginal.size:
            line += (f"; last marginal rates {star.marginal[-1]:.4g} / {base.marginal[-1]:.4g} = "
                     f"{star.marginal[-1] / base.marginal[-1]:.2f}")
        line += f"; R24/R22 = {star.rate / base.rate:.2f}"
        lines.append(line)
    return lines


def rates_table(found: Sequence[Rate]) -> str:
    """One line per (instance, agent, ε): E[τ_δ]/log(1/δ) at each δ, the last marginal rate with
    its interval, the paper's R and the lower constant T*."""
    if not found:
        return ""
    deltas = found[0].deltas
    head = (f"{'instance':<8} {'agent':<24} "
            + " ".join(f"{f'τ/log, δ={d:g}':>15}" for d in deltas)
            + f" {'last marginal rate (95 %)':>32} {'R (paper)':>10} {'T* (lower)':>10}")
    lines = ["E[τ_δ]/log(1/δ) against δ; marginal rate = ΔE[τ]/Δlog(1/δ) between the two "
             "smallest δ (paired runs)", head, "-" * len(head)]
    for r in found:
        cells = " ".join(f"{x:>15.4g}" for x in r.per_log)
        cells += " " * 16 * (len(deltas) - len(r.per_log))
        m = (f"{r.marginal[-1]:.4g} [{r.marginal_low[-1]:.4g}, {r.marginal_high[-1]:.4g}]"
             if r.marginal.size else "")
        lines.append(f"{r.instance:<8} {r.label:<24} {cells} {m:>32} {r.rate:>10.4g} "
                     f"{r.lower:>10.4g}")
    return "\n".join(lines)


def write_rates(found: Sequence[Rate], path: Path) -> Path:
    """``rates.csv``: one row per (instance, agent, threshold, ε, δ); the marginal rate on the
    row of the smaller δ of each pair."""
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["instance", "agent", "threshold", "epsilon", "delta", "log_inv_delta",
                    "tau_mean", "tau_over_log", "marginal_rate", "marginal_low", "marginal_high",
                    "level", "rate_paper", "rate_source", "lower_constant",
                    "tau_over_log_over_rate"])
        for r in found:
            for i, d in enumerate(r.deltas):
                m = ([csv_float(r.marginal[i - 1]), csv_float(r.marginal_low[i - 1]),
                      csv_float(r.marginal_high[i - 1]), LEVEL] if i else ["", "", "", ""])
                w.writerow([r.instance, r.agent, r.threshold or "",
                            "" if r.epsilon is None else r.epsilon, d,
                            csv_float(math.log(1.0 / d)), csv_float(r.tau[i]),
                            csv_float(r.per_log[i]), *m,
                            "" if math.isnan(r.rate) else csv_float(r.rate), r.rate_source,
                            csv_float(r.lower),
                            "" if math.isnan(r.rate) else csv_float(r.per_log[i] / r.rate)])
    return path


def draw(spec: FigureSpec, results: Sequence[PointResult], output: Path,
         runs: int | str) -> list[Path]:
    """One panel per (instance, ε): E[τ_δ]/log(1/δ) against log(1/δ) (mean ± 1 sd over runs,
    log y-axis), TTUCB in every panel; each agent's R dashed in its colour, the global lower
    bound's T* in grey."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from privenv.plotting import agent_colors, mean_sd, save_figure

    found = rates(results)
    by_point = {r.point: r for r in results}
    colors = agent_colors(list(dict.fromkeys(r.agent for r in found)))
    keys = [(inst, eps) for inst in dict.fromkeys(r.instance for r in found)
            for eps in sorted({r.epsilon for r in found if r.instance == inst and r.epsilon})]
    ncols = min(3, len(keys))
    nrows = -(-len(keys) // ncols)
    fig = Figure(figsize=(4.4 * ncols, 3.4 * nrows + 1.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    handles: dict[str, Any] = {}
    for ax, (inst, eps) in zip(axes, keys, strict=False):
        for r in (r for r in found if r.instance == inst and r.epsilon in (eps, None)):
            pts = sorted((p for p in by_point if p.instance == inst and p.agent == r.agent
                          and p.threshold == r.threshold and p.epsilon == r.epsilon),
                         key=lambda p: -p.delta)
            logs = np.array([math.log(1.0 / p.delta) for p in pts])
            mean, sd = mean_sd(np.stack([by_point[p].stopping_time / lg
                                         for p, lg in zip(pts, logs, strict=True)], axis=1))
            handles[r.agent] = ax.errorbar(logs, mean, yerr=[np.minimum(sd, 0.95 * mean), sd],
                                           color=colors[r.agent], marker="o", ms=3.5, lw=1.0,
                                           capsize=2, label=r.agent)
            if not math.isnan(r.rate):
                ax.axhline(r.rate, color=colors[r.agent], lw=1.0, ls="--")
        (_, lower), *_ = lower_constants("global", inst, eps)
        handles["T*"] = ax.axhline(lower, color="0.45", lw=1.0, ls=":",
                                   label="global lower bound's T*_g(ε) (Thm 17)")
        ticks = sorted({math.log(1.0 / d) for r in found for d in r.deltas})
        ax.set_xticks(ticks, [f"{math.exp(-t):.0e}" for t in ticks])
        ax.set_yscale("log")
        ax.set_title(f"{inst}, ε = {eps:g}", fontsize=9)
        ax.set_xlabel("δ (axis: log(1/δ))", fontsize=8)
        ax.set_ylabel("E[τ_δ] / log(1/δ)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, lw=0.5)
    fig.legend(list(handles.values()), [h.get_label() for h in handles.values()],
               loc="outside lower center", ncols=min(len(handles), 3 * ncols), fontsize=7)
    fig.suptitle(f"{spec.id}: stopping time per log(1/δ), theory thresholds, {runs} runs per "
                 "point (mean ± 1 sd)\ndashed: each agent's rate R in the paper (its lim sup "
                 "as δ → 0)", fontsize=9)
    return save_figure(fig, output / spec.id)


# -- command line -------------------------------------------------------------------------------

add_arguments, main, reproduce = bai.entry_points(DEFINITION)


__all__ = ["AGENTS", "DEFINITION", "DELTAS", "DESCRIPTION", "ID", "LEVEL", "DeltaSpec", "Rate",
           "add_arguments", "draw", "is_local", "lower_model", "main", "rates", "rates_table",
           "reproduce", "star_verdicts", "write_rates"]
