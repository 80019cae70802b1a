"""Figures matching the papers (SPEC §6): regret vs t with error bands and reference curves.

matplotlib is an optional dependency (``privenv[experiments]``) and is imported only when a figure
is drawn. Figures are built with matplotlib's object-oriented API on the Agg canvas, never through
``pyplot``: drawing a figure neither needs a display nor changes the backend of a notebook.

A figure is a grid of :class:`RegretPanel` values; :func:`regret_grid` draws them and
:func:`save_figure` writes PNG and PDF::

    panel = RegretPanel("(a) Student-t, α = 5 %, ε = 0.2", t, {"prae-r": curves_r},
                        references=[Reference("Thm 4.1 rate (constant 1)", t, y)])
    save_figure(regret_grid([panel]), "out/fig")     # out/fig.png, out/fig.pdf
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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
    """

    title: str
    t: np.ndarray
    curves: Mapping[str, np.ndarray]
    references: Sequence[Reference] = field(default_factory=tuple)


def _matplotlib() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError(
            "plots need matplotlib: pip install 'privenv[experiments]'"
        ) from e
    return Figure, FigureCanvasAgg


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


def draw_regret(
    ax: Any,
    panel: RegretPanel,
    colors: Mapping[str, Any] | None = None,
    ylim_from_curves: bool = True,
) -> None:
    """Draw ``panel`` on a matplotlib ``Axes``: mean ± 1 sd bands, then the reference curves.

    With ``ylim_from_curves`` the y range is set by the agents' bands (and by the references if
    they reach at most twice as high), so a reference curve far above the data leaves the axes
    rather than flattening the agents' curves (the legend still lists it).
    """
    colors = colors or agent_colors(list(panel.curves))
    t = np.asarray(panel.t, dtype=float)
    top = 0.0
    for label, values in panel.curves.items():
        mean, sd = mean_sd(values)
        ax.plot(t, mean, color=colors[label], lw=1.6, label=label)
        ax.fill_between(t, mean - sd, mean + sd, color=colors[label], alpha=0.22, lw=0)
        top = max(top, float(np.max(mean + sd)))
    for i, ref in enumerate(panel.references):
        ax.plot(
            np.asarray(ref.t, dtype=float), np.asarray(ref.y, dtype=float), color="0.35",
            lw=1.0, ls=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], label=ref.label,
        )
    ax.set_title(panel.title, fontsize=9)
    ax.set_xlabel("round t", fontsize=8)
    ax.set_ylabel("cumulative regret", fontsize=8)
    ax.tick_params(labelsize=7)
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
) -> Any:
    """A ``matplotlib.figure.Figure`` with one subplot per panel (row-major), a shared colour per
    agent and one legend per panel."""
    if not panels:
        raise ValueError("panels must contain at least one RegretPanel")
    Figure, FigureCanvasAgg = _matplotlib()
    ncols = min(ncols, len(panels))
    nrows = -(-len(panels) // ncols)
    fig = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows + (0.4 if footnote else 0)),
                 layout="constrained")
    FigureCanvasAgg(fig)
    labels: list[str] = []
    for p in panels:
        labels += [k for k in p.curves if k not in labels]
    colors = agent_colors(labels)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, panel in zip(axes.ravel(), panels, strict=False):
        draw_regret(ax, panel, colors)
        ax.legend(fontsize=6.5, loc="upper left", framealpha=0.85)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    if footnote:
        fig.supxlabel(footnote, fontsize=7, color="0.3")
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


__all__ = ["Reference", "RegretPanel", "agent_colors", "draw_regret", "mean_sd", "regret_grid",
           "save_figure"]
