"""Figures matching the papers (docs/results/): regret vs t with error bands and reference curves;
stopping time vs ε on log axes with lower bounds and regime switches (best-arm identification).

matplotlib is an optional dependency (``privenv[experiments]``) and is imported only when a figure
is drawn. Figures are built with matplotlib's object-oriented API on the Agg canvas, never through
``pyplot``: drawing a figure neither needs a display nor changes the backend of a notebook.

A figure is a grid of :class:`RegretPanel` values; :func:`regret_grid` draws them and
:func:`save_figure` writes PNG and PDF::

    panel = RegretPanel("(a) Student-t, α = 5 %, ε = 0.2", t, {"prae-r": curves_r},
                        references=[Reference("Thm 4.1 rate (constant 1)", t, y)])
    save_figure(regret_grid([panel]), "out/fig")     # out/fig.png, out/fig.pdf

Best-arm identification (paper 3, Figures 1–4) uses :class:`StoppingTimePanel` values and
:func:`stopping_time_grid`: per agent the mean ± 1 sd stopping time against ε (log–log), non-private
references as horizontal lines, lower bounds as grey curves and the regime switch as a shaded
vertical line.

Regret against the horizon T on log–log axes (paper 4's rates) uses :class:`LogLogPanel` values and
:func:`loglog_grid`: per agent the mean final regret of each horizon with its ± 1 sd, the
least-squares line of log mean regret on log T (:func:`loglog_slope`, with a bootstrap confidence
interval over runs) and its slope in the legend, references as grey lines.

A results store's regret curves (``privenv plot``): :func:`plot_regret`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privenv._validation import check_int, check_real
from privenv.results import canonical_json

#: line styles of reference (theory) curves, in order
REFERENCE_STYLES = ((0, (5, 2)), (0, (1, 1.5)), (0, (5, 2, 1, 2)), (0, (8, 3)))


@dataclass
class Reference:
    """A reference curve (e.g. a theory rate), drawn as a thin grey line.

    Args:
        label: legend text; say what the curve is and how it is scaled (e.g. "constant 1").
        t: times.
        y: values at ``t``.
    """

    label: str
    t: np.ndarray
    y: np.ndarray


@dataclass
class RegretPanel:
    """One panel: cumulative regret of several agents against t.

    Args:
        title: panel title.
        t: checkpoint times shared by every curve (length m).
        curves: agent label → per-run cumulative regret, shape ``(n_runs, m)``; drawn as the mean
            across runs with a band of ± 1 standard deviation (ddof = 1; no band for one run).
        references: reference curves.
        band: ``"sd"`` (± 1 standard deviation, default) or ``"se"`` (± 1 standard error of
            the mean, sd/√n_runs).
        ylabel: the y-axis label (e.g. for time-average regret R(t)/t curves).
    """

    title: str
    t: np.ndarray
    curves: Mapping[str, np.ndarray]
    references: Sequence[Reference] = field(default_factory=tuple)
    band: str = "sd"
    ylabel: str = "cumulative regret"


def _label_axes(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
    """The house style of a panel: title, axis labels and tick sizes."""
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)

def _matplotlib() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError(
            "plots need matplotlib: pip install 'privenv[experiments]'"
        ) from e
    return Figure, FigureCanvasAgg


def _panel_axes(n: int, ncols: int, panel_size: tuple[float, float],
                extra_height: float = 0.0, legend_height: float = 0.0) -> tuple[Any, np.ndarray]:
    """A constrained-layout figure of ``n`` panels in rows of ``ncols`` (the unused cells of the
    last row hidden), and its axes as a flat array of length ``n``. With ``legend_height`` > 0
    every panel has a blank axes of that height (inches) below it for its legend, the array then
    of shape ``(2, n)``: the panels, and the legends' axes."""
    Figure, FigureCanvasAgg = _matplotlib()
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig = Figure(figsize=(panel_size[0] * ncols,
                          (panel_size[1] + legend_height) * nrows + extra_height),
                 layout="constrained")
    FigureCanvasAgg(fig)
    if legend_height <= 0:
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax in axes[n:]:
            ax.set_visible(False)
        return fig, axes[:n]
    grid = fig.add_gridspec(2 * nrows, ncols,
                            height_ratios=[panel_size[1], legend_height] * nrows)
    pairs = np.array([[fig.add_subplot(grid[2 * (i // ncols) + j, i % ncols]) for i in range(n)]
                      for j in (0, 1)])
    for ax in pairs[1]:
        ax.axis("off")
    return fig, pairs


def _titles(fig: Any, suptitle: str | None, footnote: str | None) -> None:
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    if footnote:
        fig.supxlabel(footnote, fontsize=7, color="0.3")


def mean_sd(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (ddof = 1; 0 for a single run) over the run axis 0."""
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[None]
    sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros(v.shape[1])
    return v.mean(axis=0), sd


def agent_colors(labels: Sequence[str]) -> dict[str, Any]:
    """A fixed colour per label (matplotlib's tab10 cycle, in the order given)."""
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {label: cmap(i % 10) for i, label in enumerate(labels)}


#: how a curve that would hide under an earlier one is drawn instead: (name, line style,
#: marker), in order for the first, second, … such curve of a panel
OVERLAP_STYLES = (("dashed", (0, (4, 2)), "o"), ("dotted", (0, (1, 1.5)), "s"),
                  ("dash-dotted", (0, (6, 2, 1, 2)), "^"), ("dashed", (0, (2, 3)), "D"))
#: curves closer than this fraction of the y range at every t are drawn as overlapping
OVERLAP_FRACTION = 0.01


def overlaps(curves: Mapping[str, np.ndarray], span: float,
             fraction: float = OVERLAP_FRACTION) -> dict[str, tuple[str, bool]]:
    """For each curve (label → values at the panel's times) that lies within ``fraction`` ×
    ``span`` of an earlier one at every time, the earlier curve's label and whether the two are
    equal to the last bit: the curves a plot would hide under another."""
    out: dict[str, tuple[str, bool]] = {}
    seen: list[tuple[str, np.ndarray]] = []
    for label, y in curves.items():
        y = np.asarray(y, dtype=float)
        for other, z in seen:
            if np.array_equal(y, z):
                out[label] = (other, True)
                break
            if span > 0 and np.max(np.abs(y - z)) <= fraction * span:
                out[label] = (other, False)
                break
        seen.append((label, y))
    return out


def draw_regret(
    ax: Any,
    panel: RegretPanel,
    colors: Mapping[str, Any] | None = None,
    ylim_from_curves: bool = True,
) -> None:
    """Draw ``panel`` on a matplotlib ``Axes``: mean ± 1 sd bands, then the reference curves.

    No curve is hidden: one that lies on an earlier one (within 1 % of the y range at every t,
    :func:`overlaps`) is drawn dashed or dotted with markers, offset along the curve, and its
    legend entry says on which curve it lies ("= a" when equal, "≈ a" when within 1 %). A curve
    whose runs are all equal (sd 0 at every t, several runs) says so in its legend entry.

    With ``ylim_from_curves`` the y range is set by the agents' bands (and by the references if
    they reach at most twice as high), so a reference curve far above the data leaves the axes
    rather than flattening the agents' curves (the legend still lists it).
    """
    colors = colors or agent_colors(list(panel.curves))
    t = np.asarray(panel.t, dtype=float)
    stats = {}
    for label, values in panel.curves.items():
        runs = np.atleast_2d(np.asarray(values, dtype=float)).shape[0]
        mean, sd = mean_sd(values)
        if panel.band == "se":
            sd = sd / np.sqrt(max(runs, 1))
        stats[label] = (mean, sd, runs)
    top = max((float(np.max(m + s)) for m, s, _ in stats.values()), default=0.0)
    low = min((float(np.min(m - s)) for m, s, _ in stats.values()), default=0.0)
    on_top = overlaps({k: v[0] for k, v in stats.items()}, top - min(low, 0.0))
    for label, (mean, sd, runs) in stats.items():
        text, style = label, {}
        if runs > 1 and not np.any(sd):
            text += " (runs all equal: sd 0)"
        if label in on_top:
            other, equal = on_top[label]
            k = list(on_top).index(label) % len(OVERLAP_STYLES)
            name, ls, marker = OVERLAP_STYLES[k]
            style = {"ls": ls, "marker": marker, "ms": 3.5, "markevery": (0.03 + 0.04 * k, 0.12)}
            text += f" ({'=' if equal else '≈'} {other}: {name})"
        ax.plot(t, mean, color=colors[label], lw=1.6, label=text, **style)
        ax.fill_between(t, mean - sd, mean + sd, color=colors[label], alpha=0.22, lw=0)
    for i, ref in enumerate(panel.references):
        ax.plot(
            np.asarray(ref.t, dtype=float), np.asarray(ref.y, dtype=float), color="0.35",
            lw=1.0, ls=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], label=ref.label,
        )
    _label_axes(ax, panel.title, "round t", panel.ylabel)
    ax.ticklabel_format(axis="both", style="sci", scilimits=(-3, 4))
    ax.set_xlim(0, float(t.max()))
    if ylim_from_curves and top > 0:
        ref_top = max((float(np.max(r.y)) for r in panel.references), default=0.0)
        if ref_top <= 2 * top:  # references close to the data stay fully visible
            top = max(top, ref_top)
        ax.set_ylim(0, 1.12 * top)
    ax.grid(alpha=0.3, lw=0.5)


def regret_grid(
    panels: Sequence[RegretPanel],
    ncols: int = 3,
    panel_size: tuple[float, float] = (4.0, 3.2),
    suptitle: str | None = None,
    footnote: str | None = None,
    extra_panels: int = 0,
    legend: str = "inside",
) -> Any:
    """A ``matplotlib.figure.Figure`` with one subplot per panel (row-major), a shared colour per
    agent and one legend per panel, ``"inside"`` its axes (upper left) or ``"below"`` them, in
    a space of its own (for long labels); ``extra_panels`` empty, hidden axes follow them (the
    caller draws on ``fig.axes[len(panels):]`` and makes them visible; ``"inside"`` only)."""
    if not panels:
        raise ValueError("panels must contain at least one RegretPanel")
    if legend not in ("inside", "below") or (legend == "below" and extra_panels):
        raise ValueError(f"legend must be 'inside' or 'below' (without extra panels), got "
                         f"{legend!r}")
    entries = max(len(p.curves) + len(p.references) for p in panels)
    legend_height = 0.13 * entries + 0.1 if legend == "below" else 0.0
    fig, axes = _panel_axes(len(panels) + extra_panels, ncols, panel_size,
                            0.4 if footnote else 0.0, legend_height)
    legend_axes = None
    if legend == "below":
        axes, legend_axes = axes
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    axes = axes[:len(panels)]
    labels: list[str] = []
    for p in panels:
        labels += [k for k in p.curves if k not in labels]
    colors = agent_colors(labels)
    for i, (ax, panel) in enumerate(zip(axes, panels, strict=True)):
        draw_regret(ax, panel, colors)
        if legend_axes is None:
            ax.legend(fontsize=6.5, loc="upper left", framealpha=0.85)
        else:
            legend_axes[i].legend(*ax.get_legend_handles_labels(), fontsize=6.5,
                                  loc="upper center", frameon=False)
    _titles(fig, suptitle, footnote)
    return fig


# -- stopping time against ε (best-arm identification) ---------------------------------------------


@dataclass
class StoppingSeries:
    """Stopping time of one agent against ε: mean ± sd over runs at each ε.

    Args:
        label: legend text.
        epsilon: the ε values (> 0), ascending.
        mean, sd: mean and standard deviation of the stopping time at each ε.
        censored: points where some runs hit the sample budget without stopping (their stopping
            time counts as the budget, so the mean is a lower bound): drawn as hollow markers.
        linestyle: matplotlib line style (e.g. one per threshold choice of the same agent).
    """

    label: str
    epsilon: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    censored: np.ndarray | None = None
    linestyle: Any = "-"


@dataclass
class Baseline:
    """An ε-independent agent (a non-private reference): a horizontal line at the mean stopping
    time with a ± 1 sd band."""

    label: str
    mean: float
    sd: float
    linestyle: Any = "--"


@dataclass
class StoppingTimePanel:
    """One panel of stopping time against ε (log–log).

    Args:
        title: panel title.
        series: agents with one point per ε, drawn with ± 1 sd error bars.
        baselines: ε-independent agents (non-private references), horizontal lines.
        references: curves against ε (``Reference.t`` holds ε), e.g. lower bounds; thin grey.
        switches: (label, ε) of regime switches, drawn as shaded vertical lines (say the value in
            the label or the title).
        ylabel: the quantity against ε (default the stopping time; the regret comparisons draw
            the regret at the horizon on the same axes).
    """

    title: str
    series: Sequence[StoppingSeries] = field(default_factory=tuple)
    baselines: Sequence[Baseline] = field(default_factory=tuple)
    references: Sequence[Reference] = field(default_factory=tuple)
    switches: Sequence[tuple[str, float]] = field(default_factory=tuple)
    ylabel: str = "stopping time τ"


def draw_stopping_time(ax: Any, panel: StoppingTimePanel,
                       colors: Mapping[str, Any] | None = None) -> None:
    """Draw ``panel`` on a matplotlib ``Axes`` with log–log axes.

    Error bars are ± 1 sd; on a log axis the lower bar is cut at 0.1 % of the mean when sd ≥ mean.
    """
    labels = [s.label for s in panel.series] + [b.label for b in panel.baselines]
    colors = colors or agent_colors(labels)
    for i, ref in enumerate(panel.references):
        ax.plot(np.asarray(ref.t, dtype=float), np.asarray(ref.y, dtype=float), color="0.35",
                lw=1.1, ls=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], label=ref.label,
                zorder=1)
    for b in panel.baselines:
        ax.axhline(b.mean, color=colors[b.label], lw=1.4, ls=b.linestyle, label=b.label, zorder=2)
        if b.sd > 0:
            ax.axhspan(max(b.mean - b.sd, 1e-3 * b.mean), b.mean + b.sd, color=colors[b.label],
                       alpha=0.12, lw=0, zorder=0)
    for s in panel.series:
        eps = np.asarray(s.epsilon, dtype=float)
        mean = np.asarray(s.mean, dtype=float)
        sd = np.asarray(s.sd, dtype=float)
        lower = np.minimum(sd, 0.999 * mean)
        ax.errorbar(eps, mean, yerr=np.vstack([lower, sd]), color=colors[s.label], lw=1.4,
                    ls=s.linestyle, marker="o", ms=3.5, capsize=2, elinewidth=0.8, label=s.label,
                    zorder=3)
        if s.censored is not None and np.any(s.censored):
            c = np.asarray(s.censored, dtype=bool)
            ax.plot(eps[c], mean[c], ls="none", marker="o", ms=7, mfc="white",
                    mec=colors[s.label], zorder=4)
    for label, switch in panel.switches:
        ax.axvline(switch, color="0.55", lw=5, alpha=0.25, zorder=0, label=label)
        ax.axvline(switch, color="0.4", lw=0.6, zorder=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _label_axes(ax, panel.title, "privacy budget ε", panel.ylabel)
    ax.grid(alpha=0.3, lw=0.5)


def _fitted_legend(fig: Any, handles: Mapping[str, Any]) -> Any:
    """The figure's legend below the panels, with as many columns (at most 4) as fit in the
    figure's width: a legend wider than the figure would be cut at both edges."""
    renderer = fig.canvas.get_renderer()
    for ncols in range(min(4, len(handles)), 0, -1):
        leg = fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                         ncols=ncols, fontsize=7, frameon=False)
        if ncols == 1 or leg.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            return leg
        leg.remove()
    raise AssertionError("unreachable: one column always returns")


def stopping_time_grid(
    panels: Sequence[StoppingTimePanel],
    ncols: int = 3,
    panel_size: tuple[float, float] = (4.2, 3.4),
    suptitle: str | None = None,
    footnote: str | None = None,
    legend: str = "figure",
    colors: Mapping[str, Any] | None = None,
) -> Any:
    """A ``matplotlib.figure.Figure`` with one log–log stopping-time panel per instance
    (row-major) and a shared colour per agent. Hollow markers flag points where some runs hit the
    sample budget (mean = a lower bound).

    ``legend="figure"`` draws one legend for all panels below them (the panels share agents and
    colours); ``"panel"`` one legend per panel. ``colors`` maps labels to colours (default: one
    per label, :func:`agent_colors`), e.g. one colour per agent across its threshold choices.
    """
    if not panels:
        raise ValueError("panels must contain at least one StoppingTimePanel")
    if legend not in ("figure", "panel"):
        raise ValueError(f"legend must be 'figure' or 'panel', got {legend!r}")
    extra = (0.4 if footnote else 0) + (0.9 if legend == "figure" else 0)
    fig, axes = _panel_axes(len(panels), ncols, panel_size, extra)
    labels: list[str] = []
    for p in panels:
        labels += [s.label for s in p.series if s.label not in labels]
        labels += [b.label for b in p.baselines if b.label not in labels]
    colors = {**agent_colors(labels), **(colors or {})}
    handles: dict[str, Any] = {}
    for ax, panel in zip(axes, panels, strict=True):
        draw_stopping_time(ax, panel, colors)
        if legend == "panel":
            ax.legend(fontsize=6, loc="upper right", framealpha=0.85)
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if legend == "figure":  # the footnote heads the legend (a supxlabel would overlap it)
        leg = _fitted_legend(fig, handles)
        if footnote:
            leg.set_title(footnote, prop={"size": 7})
            leg.get_title().set_color("0.3")
            leg.set_alignment("center")
    _titles(fig, suptitle, None if legend == "figure" else footnote)
    return fig


def save_figure(fig: Any, stem: str | Path, formats: Sequence[str] = ("png", "pdf"),
                dpi: int = 150) -> list[Path]:
    """Write ``fig`` as ``stem.png``, ``stem.pdf`` (…); returns the paths written."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = stem.with_name(f"{stem.name}.{fmt}")
        fig.savefig(path, dpi=dpi, format=fmt)
        paths.append(path)
    return paths


# -- regret against the horizon on log–log axes (fitted slopes) ------------------------------------


@dataclass(frozen=True)
class SlopeFit:
    """The least-squares line log ȳ = intercept + slope·log t through the mean over runs ȳ(t).

    ``low``/``high`` is the percentile bootstrap interval of the slope at ``level`` over
    ``n_boot`` resamples of the runs (NaN without resamples); ``n_valid`` resamples had a positive
    mean at every t (only those give a slope).
    """

    slope: float
    intercept: float
    low: float
    high: float
    level: float
    n_boot: int
    n_valid: int

    def csv_fields(self, intercept: bool = True) -> list[Any]:
        """The fields of a CSV row: slope, low, high (exact float reprs), level, n_boot and,
        with ``intercept``, the intercept."""
        fields: list[Any] = [repr(float(self.slope)), repr(float(self.low)),
                             repr(float(self.high)), self.level, self.n_boot]
        return fields + [repr(float(self.intercept))] if intercept else fields

    def line(self, t: np.ndarray) -> np.ndarray:
        """The fitted power law e^intercept · t^slope at ``t``."""
        return np.exp(self.intercept) * np.asarray(t, dtype=float) ** self.slope

    def text(self) -> str:
        """``"0.51 [0.47, 0.55]"``."""
        if not np.isfinite(self.low):
            return f"{self.slope:.2f}"
        return f"{self.slope:.2f} [{self.low:.2f}, {self.high:.2f}]"


def _slopes(x: np.ndarray, log_y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of the rows of ``log_y`` on ``x``."""
    xc = x - x.mean()
    return (log_y - log_y.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)


def loglog_slope(
    t: np.ndarray, values: np.ndarray, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> SlopeFit:
    """Fit log(mean regret) = a + b·log t by least squares; bootstrap the slope b over runs.

    Args:
        t: increasing positive times (horizons or checkpoints), length m ≥ 2.
        values: per-run values at ``t``, shape ``(n_runs, m)`` (or ``(m,)`` for one run); the mean
            over runs must be positive at every t.
        n_boot: bootstrap resamples (0: no interval). A resample draws ``n_runs`` rows with
            replacement, keeping each run's values at all t together (the runs of a reproduction
            share their seeds across horizons, so the columns are paired).
        level: confidence level of the percentile interval, in (0, 1).
        seed: seed of the resampling.
    """
    t = np.asarray(t, dtype=float)
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[None]
    if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)) or np.any(t <= 0) or np.any(
            np.diff(t) <= 0):
        raise ValueError(f"t must be at least 2 increasing positive finite times, got {t!r}")
    if v.ndim != 2 or v.shape[1] != t.size or v.shape[0] < 1:
        raise ValueError(f"values must have shape (n_runs, {t.size}), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    n_boot = check_int("n_boot", n_boot, low=0)
    level = check_real("level", level, low=0.0, low_open=True, high=1.0, high_open=True)
    mean = v.mean(axis=0)
    if np.any(mean <= 0):
        raise ValueError(f"values must have a positive mean at every t to fit a log–log slope; "
                         f"the mean is {mean[mean <= 0][0]:g} at t = {t[mean <= 0][0]:g}")
    x = np.log(t)
    slope = float(_slopes(x, np.log(mean)))
    intercept = float(np.log(mean).mean() - slope * x.mean())
    low = high = float("nan")
    n_valid = 0
    if n_boot:
        rng = np.random.default_rng(seed)
        boot = v[rng.integers(0, v.shape[0], size=(n_boot, v.shape[0]))].mean(axis=1)
        ok = np.all(boot > 0, axis=1)
        n_valid = int(ok.sum())
        if n_valid:
            b = _slopes(x, np.log(boot[ok]))
            low, high = (float(q) for q in np.quantile(b, [(1 - level) / 2, (1 + level) / 2]))
    return SlopeFit(slope, intercept, low, high, level, n_boot, n_valid)


@dataclass
class LogLogSeries:
    """One agent's final regret at several horizons.

    Args:
        label: legend text (the fitted slope is appended).
        t: the horizons (length m).
        values: per-run final regret at each horizon, shape ``(n_runs, m)``; drawn as the mean
            with ± 1 sd error bars (ddof = 1; none for one run).
        fit: the fitted line (drawn dashed in the series' colour), or ``None``.
        hollow: draw hollow markers and a dotted fit (e.g. a component of another series).
    """

    label: str
    t: np.ndarray
    values: np.ndarray
    fit: SlopeFit | None = None
    hollow: bool = False


@dataclass
class LogLogPanel:
    """One log–log panel: several :class:`LogLogSeries` and grey reference lines."""

    title: str
    series: Sequence[LogLogSeries]
    references: Sequence[Reference] = field(default_factory=tuple)
    xlabel: str = "horizon T"
    ylabel: str = "cumulative regret at T"


def draw_loglog(ax: Any, panel: LogLogPanel, colors: Mapping[str, Any] | None = None) -> None:
    """Draw ``panel`` on a matplotlib ``Axes``: mean ± 1 sd per horizon, fitted lines, references.
    Non-positive means (nothing to show on a log axis) are left out."""
    colors = colors or agent_colors([s.label for s in panel.series])
    for s in panel.series:
        t = np.asarray(s.t, dtype=float)
        mean, sd = mean_sd(s.values)
        keep = mean > 0
        label = s.label + (f": slope {s.fit.text()}" if s.fit is not None else "")
        if not keep.all():
            label += f" ({int((~keep).sum())} of {keep.size} means ≤ 0, not shown)"
        lower = np.minimum(sd, 0.95 * mean)  # a log axis cannot show mean − sd ≤ 0
        ax.errorbar(t[keep], mean[keep], yerr=[lower[keep], sd[keep]], color=colors[s.label],
                    marker="o", ms=3.5, lw=0, elinewidth=1.0, capsize=2, label=label,
                    mfc="white" if s.hollow else colors[s.label])
        if s.fit is not None:
            ax.plot(t, s.fit.line(t), color=colors[s.label], lw=1.2,
                    ls=":" if s.hollow else "--")
    for i, ref in enumerate(panel.references):
        ax.plot(np.asarray(ref.t, dtype=float), np.asarray(ref.y, dtype=float), color="0.35",
                lw=1.0, ls=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], label=ref.label)
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # label the decades only (minor labels collide)
        axis.set_minor_formatter(NullFormatter())
    _label_axes(ax, panel.title, panel.xlabel, panel.ylabel)
    ax.grid(alpha=0.3, lw=0.5)


def loglog_grid(
    panels: Sequence[LogLogPanel],
    ncols: int = 2,
    panel_size: tuple[float, float] = (4.6, 3.6),
    suptitle: str | None = None,
    footnote: str | None = None,
    colors: Mapping[str, Any] | None = None,
) -> Any:
    """A ``matplotlib.figure.Figure`` with one log–log subplot per panel (row-major), a shared
    colour per agent and one legend per panel. ``colors`` maps labels to colours (default: one
    per label, :func:`agent_colors`), e.g. one colour for a series and its components."""
    if not panels:
        raise ValueError("panels must contain at least one LogLogPanel")
    fig, axes = _panel_axes(len(panels), ncols, panel_size, 0.4 if footnote else 0.0)
    colors = {**agent_colors(list(dict.fromkeys(s.label for p in panels for s in p.series))),
              **(colors or {})}
    for ax, panel in zip(axes, panels, strict=True):
        draw_loglog(ax, panel, colors)
        ax.legend(fontsize=6, loc="upper left", framealpha=0.85)
    _titles(fig, suptitle, footnote)
    return fig


# -- a results store ----------------------------------------------------------------------------


def uniform_play(env: str, env_kwargs: Mapping[str, Any], t: np.ndarray, *, horizon: int,
                 runs: Sequence[int], seed: int) -> Reference | None:
    """Uniform play's cumulative regret on an instance, as a reference curve at times ``t``.

    Exact where every pull has a fixed pseudo-regret (the K-armed problems' ``gaps``): its
    expectation t × mean gap. Otherwise (contexts drawn each round) uniform play is simulated on
    the same runs of the same seed (common random numbers), drawn as its mean over those runs.
    ``None`` where regret is not defined (best-arm identification: every gap is 0) or the zoo's
    ``uniform`` agent cannot play the env."""
    import gymnasium as gym

    import privenv  # noqa: F401  (registers the ids)
    from privenv.envs.base import ProblemEnv

    single = gym.make(env, **env_kwargs)
    try:
        base = single.unwrapped
        assert isinstance(base, ProblemEnv)  # (every privenv id)
        gaps = getattr(base.problem, "gaps", None)
    finally:
        single.close()
    t = np.asarray(t, dtype=float)
    if gaps is not None:
        rate = float(np.mean(gaps))
        if rate <= 0:
            return None
        return Reference(f"uniform play (expected: t × mean gap {rate:.3g})", t, rate * t)
    from privenv.simulation import simulate

    run_ids = np.asarray(runs)
    contiguous = np.array_equal(run_ids, np.arange(run_ids[0], run_ids[0] + run_ids.size))
    first, n = (int(run_ids[0]), int(run_ids.size)) if contiguous else (0, int(run_ids.size))
    try:
        res = simulate("uniform", env, n_runs=n, horizon=horizon, seed=seed, first_run=first,
                       env_kwargs=dict(env_kwargs), n_checkpoints=max(2, t.size))
    except ValueError:  # an env the uniform agent does not play
        return None
    mean = np.interp(t, res.checkpoint_times, res.regret_curve.mean(axis=0))
    return Reference(f"uniform play (simulated, the same {n} runs)", t, mean)


def plot_regret(store: Any, output: str | os.PathLike[str], stem: str = "regret",
                ncols: int = 3) -> list[Path]:
    """:func:`store_figure` written as ``output/stem.png`` and ``.pdf`` (``privenv plot``)."""
    return save_figure(store_figure(store, ncols), Path(output) / stem)


def store_figure(store: Any, ncols: int = 3) -> Any:
    """Regret against t, mean ± 1 sd over runs: one panel per (env, env parameters, horizon),
    one line per (agent, agent parameters), and uniform play (:func:`uniform_play`) on every
    panel that has no ``uniform`` agent of its own, legends below the panels. Curves that lie on
    one another are told apart (:func:`draw_regret`).

    ``store``: a :class:`privenv.store.Store`."""
    from privenv.store import StoreError

    results = store.results()
    if not results:
        raise StoreError(f"results store {str(store.path)!r} has no finished cells to plot")
    panels: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}
    times: dict[tuple[Any, ...], np.ndarray] = {}
    first: dict[tuple[Any, ...], Any] = {}
    seeds = {r.seed for r in results}
    for r in results:
        key = (r.env, canonical_json(r.env_kwargs), r.horizon, r.n_checkpoints)
        label = r.agent + (f"({_kwargs_label(r.agent_kwargs)})" if r.agent_kwargs else "")
        if len(seeds) > 1:
            label += f" seed {r.seed}"
        panels.setdefault(key, {})[label] = r.regret_curve
        times[key] = r.checkpoint_times
        first.setdefault(key, r)
    grid = []
    for key, curves in panels.items():
        env, env_kwargs, horizon, _ = key
        kw = _kwargs_label(json.loads(env_kwargs))
        title = f"{env}" + (f"\n{kw}" if kw else "") + f", T = {horizon:,}"
        r = first[key]
        refs = []
        if "uniform" not in curves:
            ref = uniform_play(env, r.env_kwargs, times[key], horizon=horizon, runs=r.runs,
                               seed=r.seed)
            refs = [ref] if ref is not None else []
        grid.append(RegretPanel(title, times[key], curves, refs))
    runs = sorted({len(r.runs) for r in results})
    return regret_grid(grid, ncols=ncols, panel_size=(4.6, 3.2), legend="below",
                       suptitle=f"{store.path.name}: cumulative regret, mean ± 1 sd over "
                                f"{'/'.join(map(str, runs))} runs")


def _kwargs_label(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={canonical_json(v) if isinstance(v, (list, dict)) else v}"
                     for k, v in kwargs.items())


__all__ = ["Baseline", "LogLogPanel", "LogLogSeries", "Reference", "RegretPanel", "SlopeFit",
           "StoppingSeries", "StoppingTimePanel", "agent_colors", "draw_loglog", "draw_regret",
           "draw_stopping_time", "loglog_grid", "loglog_slope", "mean_sd", "overlaps",
           "plot_regret", "regret_grid", "save_figure", "stopping_time_grid", "store_figure",
           "uniform_play"]
