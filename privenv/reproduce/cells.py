"""Shared pieces of the paper reproductions: how they run, command-line options, JSON files.

Cells run through the sweep machinery (:func:`privenv.sweep.run_sweep`): a figure turns its cells
into a :class:`privenv.sweep.SweepConfig`, runs it with its :class:`Execution` into a results store
(``results.sqlite`` in its output directory) on a backend (local worker processes by default, see
:mod:`privenv.backends`), and draws its CSVs and figure from the store. Seeds are fixed per cell,
so results do not depend on the backend or the number of workers.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from privenv._validation import check_int
from privenv.backends import BACKEND_METAVAR, BACKENDS
from privenv.backends.local import default_workers
from privenv.results import RunResults, utc_now

if TYPE_CHECKING:
    from privenv.sweep import ProgressCallback, SweepConfig, SweepReport

#: the results store of a figure, in its output directory
STORE_NAME = "results.sqlite"
T = TypeVar("T")


def add_common_arguments(parser: argparse.ArgumentParser, default_output: str) -> None:
    """Options every ``privenv reproduce <figure>`` takes."""
    parser.add_argument("--quick", action="store_true",
                        help="reduced version (fewer runs, shorter horizon) that finishes quickly")
    parser.add_argument("--output", "-o", default=None, metavar="DIR",
                        help=f"directory for results and figures (default: {default_output}, "
                             "with '-quick' appended for --quick)")
    parser.add_argument("--workers", "-j", type=int, default=None, metavar="N",
                        help=f"worker processes (default: number of CPUs, here "
                             f"{default_workers()})")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default: 0)")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted reproduction in the same output directory "
                             "(finished cells are kept; by default the store is started afresh)")
    parser.add_argument("--backend", choices=BACKENDS, default="local", metavar=BACKEND_METAVAR,
                        help="where cells run: local worker processes (default) or a Dask "
                             "cluster (with --address)")
    parser.add_argument("--address", default=None, metavar="ADDR",
                        help="scheduler address of a distributed backend")


class SweepOutcome(NamedTuple):
    """What :meth:`Execution.run` returns: the sweep report, the store's path and the stored
    results by configuration id."""

    report: SweepReport
    store: Path
    results: dict[str, RunResults]


@dataclass(frozen=True)
class Execution:
    """How a reproduction runs, never what it computes: the same seed and scale give the same
    numbers whatever these are. Built once — from the command line (:meth:`from_args`) or from a
    ``reproduce`` call's keywords (:meth:`of`) — and handed to the figure, which runs its sweep
    with :meth:`run`.

    Args:
        workers: worker processes of the local backend (``None``: one per CPU; 1 runs in the
            calling process); checked and resolved on construction when ``backend`` is
            ``"local"``, left to the backend otherwise.
        backend: where the cells run: ``"local"`` worker processes (default) or ``"dask"``
            (:func:`privenv.backends.get_backend`).
        address: the scheduler address of a distributed backend.
        resume: keep the cells already in the output's results store (same seed; a figure with
            more points extends it) and run only the others; by default the store is started
            afresh.
        progress: ``True`` for progress on stderr (a bar on a terminal, else a line per finished
            cell), ``False`` for none, or a mode/callback of :func:`privenv.sweep.run_sweep`.
        figure: draw the PNG/PDF (needs matplotlib).
    """

    workers: int | None = None
    backend: str = "local"
    address: str | None = None
    resume: bool = False
    progress: bool | str | ProgressCallback = True
    figure: bool = True

    def __post_init__(self) -> None:
        if self.backend == "local":
            workers = (default_workers() if self.workers is None
                       else check_int("workers", self.workers, low=1))
            object.__setattr__(self, "workers", workers)

    @classmethod
    def of(cls, execution: Execution | None = None, **options: Any) -> Execution:
        """``execution``, or one built from ``options`` (its fields by name), not both."""
        if execution is None:
            return cls(**options)
        if options:
            raise TypeError(f"pass either execution or its fields ({', '.join(options)}), "
                            "not both")
        return execution

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Execution:
        """From the options :func:`add_common_arguments` declares."""
        return cls(workers=args.workers, backend=args.backend, address=args.address,
                   resume=args.resume)

    @property
    def worker_count(self) -> int:
        """The workers a figure records (0 where the backend chooses them)."""
        return self.workers or 0

    def run(self, config: SweepConfig, out: Path) -> SweepOutcome:
        """Run a figure's sweep into ``out/results.sqlite`` (started afresh unless
        :attr:`resume`).

        Raises ``RuntimeError`` if a cell failed (its error is in the store; ``resume`` retries
        it).
        """
        from privenv.store import Store, StoreError
        from privenv.sweep import run_sweep

        out.mkdir(parents=True, exist_ok=True)
        store_path = out / STORE_NAME
        if Store.is_being_written(store_path):  # never delete a store another run is writing
            raise StoreError(f"results store {str(store_path)!r} is being written by another "
                             "reproduction; wait until it ends, or choose another --output")
        if not self.resume:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{store_path}{suffix}").unlink(missing_ok=True)
        report = run_sweep(config, store_path, backend=self.backend, workers=self.workers,
                           address=self.address, resume=self.resume, progress=self.progress)
        if report.failed:
            cell, error = report.failed[0]
            raise RuntimeError(
                f"{len(report.failed)} of {report.cells} cells failed (first: {cell.describe()}: "
                f"{error}); the errors are in {store_path}; rerun with --resume to retry them")
        with Store(store_path, create=False) as store:
            stored = {r.config_id: r for r in store.results()}
        return SweepOutcome(report, store_path, stored)


@dataclass(frozen=True)
class FigureResult:
    """A figure's cell (the figure's own cell type) and its runs read back from the results
    store: the one results record, :class:`privenv.results.RunResults`."""

    cell: Any
    result: RunResults


def regret_results(config: SweepConfig, cells: list[Any],
                   stored: dict[str, RunResults]) -> list[FigureResult]:
    """The stored results of a regret figure's ``cells`` (each with a ``configuration`` of
    ``config``; all the runs of a configuration, whatever its chunks), in the order of
    ``cells``."""
    by_config = dict(zip(config.configurations, config.config_ids(), strict=True))
    return [FigureResult(c, stored[by_config[c.configuration]]) for c in cells]


def output_dir(output: str | Path | None, default: str, quick: bool) -> Path:
    """A figure's output directory: ``output`` if given, else ``default`` (``…-quick`` with
    ``quick``)."""
    return Path(output if output is not None else default + ("-quick" if quick else ""))


def stored_chunk(out: Path) -> int | None:
    """The runs per cell of the sweep last run into ``out``'s results store (``None`` without
    one). A resumed reproduction keeps it by default, so that a larger ``--runs`` extends the
    store's cells instead of asking for cells of another size, which the store refuses."""
    from privenv.store import Store

    path = out / STORE_NAME
    if not path.is_file():
        return None
    with Store(path, create=False) as store:
        last = store.last_sweep()
    chunk = None if last is None else json.loads(last["config"]).get("chunk")
    return int(chunk) if chunk else None


def cell_sweep(cells: Sequence[Any], name: str, *, chunk: int | None = None,
               n_checkpoints: int | None = None) -> SweepConfig:
    """The sweep of a figure's ``cells`` (each with a ``configuration``, ``runs``, ``seed`` and,
    unless ``n_checkpoints`` is given, ``n_checkpoints``): one configuration per distinct cell
    configuration, in order (cells that share one share its runs), with the runs, seed and
    checkpoints of the first cell; all the runs of a configuration in one chunk unless ``chunk``
    says (a batch of runs costs about one run per step)."""
    from privenv.sweep import SweepConfig

    first = cells[0]
    return SweepConfig(tuple(dict.fromkeys(c.configuration for c in cells)), runs=first.runs,
                       chunk=first.runs if chunk is None else chunk, seed=first.seed,
                       n_checkpoints=(first.n_checkpoints if n_checkpoints is None
                                      else n_checkpoints), name=name)


def guarantees_by_epsilon(results: Sequence[FigureResult]) -> dict[str, list[str]]:
    """The privacy guarantees of a figure's results per (agent, ε), keyed ``"<agent> eps=<ε>"``
    (``-`` for an agent without ε), each list sorted: one guarantee where the figure's other axis
    does not change it (the constants' scales)."""
    found: dict[str, set[str]] = {}
    for r in results:
        key = f"{r.cell.agent} eps={r.cell.agent_kwargs.get('epsilon', '-')}"
        found.setdefault(key, set()).add(str(r.result.privacy))
    return {k: sorted(v) for k, v in found.items()}


def run_metadata(rep: Any) -> dict[str, Any]:
    """The provenance every figure's ``metadata.json`` carries: workers, backend, sweep hash,
    resumed cells, wall times, versions and files (``rep``: a figure's ``Reproduction``)."""
    from privenv.simulation import versions

    sweep = rep.sweep
    return {
        "workers": rep.workers,
        "backend": sweep.backend if sweep else None,
        "config_hash": sweep.config_hash if sweep else None,
        "cells_resumed": sweep.skipped if sweep else 0,
        "wall_s": rep.wall_s,
        "simulation_wall_s": rep.simulation_wall_s,
        "cell_wall_s_total": float(sum(getattr(r, "result", r).wall_s for r in rep.results)),
        "versions": versions(),
        "files": {k: v.name for k, v in rep.files.items()},
    }


def finish_figure(
    rep: Any,
    start: float,
    csvs: Callable[[], dict[str, Path]],
    draw: Callable[[], list[Path]] | None,
    metadata: Callable[[], dict[str, Any]],
) -> Any:
    """The last steps every figure shares, in order: its CSVs, its PNG/PDF (``draw``; ``None``
    for no figure), ``rep.wall_s`` (since ``start``: simulation + files + figure, not the
    metadata) and ``metadata.json`` in ``rep.output``; each file is recorded in ``rep.files``.
    Returns ``rep``."""
    rep.files.update(csvs())
    if draw is not None:
        png, pdf = draw()
        rep.files.update(png=png, pdf=pdf)
    rep.files["metadata"] = Path(rep.output) / "metadata.json"
    rep.wall_s = time.perf_counter() - start
    write_json(rep.files["metadata"], metadata())
    return rep


class SpecFigure:
    """A figure defined by a *spec* of a module that implements several figures (the three
    federated figures share :mod:`privenv.reproduce.fed`): the figure interface of
    :mod:`privenv.reproduce` — ``ID``, ``DESCRIPTION``, ``add_arguments``, ``main``,
    ``reproduce`` — bound to that spec (``DEFINITION``). The help text is the implementing
    module's docstring.

    Args:
        impl: the implementing module, with ``add_arguments(parser, spec)``,
            ``main(args, spec)`` and ``reproduce(spec, output, **kwargs)``.
        spec: the figure's spec, with ``id`` and ``description``.
    """

    def __init__(self, impl: Any, spec: Any) -> None:
        self.impl, self.DEFINITION = impl, spec
        self.ID, self.DESCRIPTION = spec.id, spec.description
        self.__doc__ = impl.__doc__

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        self.impl.add_arguments(parser, self.DEFINITION)

    def main(self, args: argparse.Namespace) -> int:
        return self.impl.main(args, self.DEFINITION)

    def reproduce(self, output: str | Path | None = None, **kwargs: Any) -> Any:
        return self.impl.reproduce(self.DEFINITION, output, **kwargs)


def select(name: str, requested: Sequence[str] | None, known: Mapping[str, T]) -> list[T]:
    """The items of ``known`` named by ``requested`` (all if ``None``), in the requested order,
    once each; ``ValueError`` naming ``name`` for an empty list or an unknown key."""
    if requested is None:
        return list(known.values())
    bad = [k for k in requested if k not in known]
    if bad or not requested:
        raise ValueError(f"{name} must be a non-empty list of {', '.join(known)}, got "
                         f"{list(requested)}")
    return [known[k] for k in dict.fromkeys(requested)]


def reproduce_or_report(figure_id: str, call: Callable[[], Any]) -> Any | None:
    """``call()`` (a figure's ``reproduce``); if a cell failed (``RuntimeError``: its error is in
    the results store, ``--resume`` retries it) print one line on stderr and return ``None``."""
    try:
        return call()
    except RuntimeError as e:
        print(f"privenv reproduce {figure_id}: {e}", file=sys.stderr)
        return None


def run_summary(figure_id: str, rep: Any) -> str:
    """The first line of a regret figure's summary (``rep``: its ``Reproduction``): its cells,
    runs, horizon, backend and wall time."""
    return (f"{figure_id}: {len(rep.cells)} cells, {rep.cells[0].runs} runs, "
            f"T = {rep.cells[0].horizon}, {rep.sweep.backend if rep.sweep else ''}, wall time "
            f"{rep.wall_s:.1f} s")


def print_files(files: Mapping[str, Path]) -> None:
    """The files a figure wrote, one ``name: path`` line each (the end of every summary)."""
    for name, path in files.items():
        print(f"{name:>9}: {path}")


def float_list(text: str) -> list[float]:
    """An argparse type: comma-separated numbers (``"0.1,1,10"``)."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers (e.g. 0.1,1), got {text!r}") from None


def int_list(text: str) -> list[int]:
    """An argparse type: comma-separated integers, scientific notation allowed
    (``"1000,1e4"``)."""
    try:
        return [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers (e.g. 1000,1e4), got {text!r}") from None


def csv_float(x: float) -> str:
    """A number as a CSV field: the shortest string that reads back as the same float
    (``repr``), so equal seeds give byte-identical files."""
    return repr(float(x))


def json_ready(value: Any) -> Any:
    """``value`` with numpy scalars/arrays and non-finite floats made JSON-friendly."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if hasattr(value, "tolist"):
        return json_ready(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(json_ready(data), indent=2) + "\n")
    return path


__all__ = [
    "STORE_NAME",
    "Execution",
    "FigureResult",
    "SpecFigure",
    "SweepOutcome",
    "add_common_arguments",
    "cell_sweep",
    "csv_float",
    "default_workers",
    "finish_figure",
    "float_list",
    "guarantees_by_epsilon",
    "int_list",
    "json_ready",
    "output_dir",
    "print_files",
    "regret_results",
    "reproduce_or_report",
    "run_metadata",
    "run_summary",
    "select",
    "stored_chunk",
    "utc_now",
    "write_json",
]
