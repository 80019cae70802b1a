"""Paper reproductions (docs/results/): one command per figure, ``privenv reproduce <id>``.

Each figure is a module registered in :data:`FIGURES` under its id. A figure module provides

* ``ID`` and ``DESCRIPTION`` (one line, shown by ``privenv reproduce --list``);
* ``add_arguments(parser)``: its command-line options (at least those of
  :func:`privenv.reproduce.cells.add_common_arguments`: ``--quick``, ``--output``, ``--workers``,
  ``--seed``, ``--resume``, ``--backend``, ``--address``);
* ``main(args) -> int``: run from the parsed options, print a summary table;
* a Python entry point ``reproduce(output=None, *, quick=False, …, seed=0, execution=None,
  **options)``: what it computes as parameters, how it runs as one
  :class:`~privenv.reproduce.cells.Execution` (workers, backend, address, resume, progress,
  figure — built once by ``main`` from the command line, or from ``options`` by keyword).

Full scale is the default and ``--quick`` a reduced version. A figure's cells are a sweep
(:func:`privenv.sweep.run_sweep`) written to a results store in its output directory, on local
worker processes by default, with seeds fixed per cell, so results do not depend on the backend or
the number of workers; the CSVs and the figure are drawn from the store. A later figure registers
itself by adding its module here.
"""

from __future__ import annotations

from typing import Any

from privenv.reproduce import (
    bai_delta,
    bai_global,
    bai_local,
    dp_bai_optimal,
    fed,
    fed_communication,
    fed_leak,
    huber_axes,
    huber_fig1,
    ldp_estimation,
    ldp_linear,
    linear_axes,
    zoo_regret,
)
from privenv.reproduce.cells import SpecFigure

#: figure id → module (or :class:`~privenv.reproduce.cells.SpecFigure`, for the figures of a
#: module that implements several)
FIGURES: dict[str, Any] = {
    huber_fig1.ID: huber_fig1,
    **{spec.id: SpecFigure(huber_axes, spec) for spec in huber_axes.FIGURES.values()},
    bai_local.ID: bai_local,
    bai_global.ID: bai_global,
    bai_delta.ID: bai_delta,
    ldp_linear.ID: ldp_linear,
    ldp_estimation.ID: ldp_estimation,
    **{spec.id: SpecFigure(linear_axes, spec) for spec in linear_axes.FIGURES.values()},
    **{spec.id: SpecFigure(fed, spec) for spec in fed.FIGURES.values()},
    fed_leak.ID: fed_leak,
    fed_communication.ID: fed_communication,
    **{spec.id: SpecFigure(zoo_regret, spec) for spec in zoo_regret.FIGURES.values()},
    dp_bai_optimal.ID: dp_bai_optimal,
}


def figure(name: str) -> Any:
    """The module of figure ``name``."""
    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; known figures: {', '.join(sorted(FIGURES))}")
    return FIGURES[name]


__all__ = ["FIGURES", "figure"]
