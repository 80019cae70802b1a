"""Shared machinery of the paper reproductions: run independent cells on local worker processes.

A *cell* is one configuration (e.g. one agent on one panel of a figure) with its seed fixed in
the cell itself, so its result does not depend on which worker runs it, in which order, or how many
workers there are. :func:`run_cells` runs them with ``concurrent.futures.ProcessPoolExecutor``
(in-process for one worker) and returns the results in cell order.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from privenv._validation import check_int

C = TypeVar("C")
R = TypeVar("R")

#: called after each finished cell with (cells done, cells in all, cell, result, seconds elapsed)
Progress = Callable[[int, int, Any, Any, float], None]


def default_workers() -> int:
    """Worker processes by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_cells(
    fn: Callable[[C], R],
    cells: Sequence[C],
    workers: int | None = None,
    progress: Progress | None = None,
) -> list[R]:
    """``[fn(c) for c in cells]``, computed on ``workers`` local processes (``None``: one per CPU).

    ``fn`` must be a module-level function and cells picklable. An exception in a cell cancels the
    cells not yet started and is re-raised.
    """
    workers = default_workers() if workers is None else check_int("workers", workers, low=1)
    start = time.perf_counter()
    results: list[Any] = [None] * len(cells)
    if workers == 1 or len(cells) <= 1:
        for i, cell in enumerate(cells):
            results[i] = fn(cell)
            if progress:
                progress(i + 1, len(cells), cell, results[i], time.perf_counter() - start)
        return results
    with ProcessPoolExecutor(max_workers=min(workers, len(cells))) as pool:
        pending: dict[Future, int] = {pool.submit(fn, cell): i for i, cell in enumerate(cells)}
        done_count = 0
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    results[i] = fut.result()
                    done_count += 1
                    if progress:
                        progress(done_count, len(cells), cells[i], results[i],
                                 time.perf_counter() - start)
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    return results


def stderr_progress(describe: Callable[[Any, Any], str]) -> Progress:
    """A progress callback printing one line per finished cell on stderr."""

    def report(done: int, total: int, cell: Any, result: Any, elapsed: float) -> None:
        print(f"[{done:>{len(str(total))}}/{total}] {describe(cell, result)}  "
              f"({elapsed:.1f} s elapsed)", file=sys.stderr, flush=True)

    return report


def add_common_arguments(parser: argparse.ArgumentParser, default_output: str) -> None:
    """Options every ``privenv reproduce <figure>`` takes."""
    parser.add_argument("--quick", action="store_true",
                        help="reduced version (fewer runs, shorter horizon) that finishes quickly")
    parser.add_argument("--output", "-o", default=None, metavar="DIR",
                        help=f"directory for results and figures (default: {default_output}, "
                             "with '-quick' appended for --quick)")
    parser.add_argument("--workers", "-j", type=int, default=None, metavar="N",
                        help=f"local worker processes (default: number of CPUs, here "
                             f"{default_workers()})")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default: 0)")


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


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


__all__ = ["Progress", "add_common_arguments", "default_workers", "json_ready", "run_cells",
           "stderr_progress", "utc_now", "write_json"]
