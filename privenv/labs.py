"""What the teaching labs of ``examples/`` (``lab_*.py``) share: their two command-line options and
how a lab ends (its PNG figure, one JSON line, the returned summary). Each lab keeps its question,
its runs and its plot; only this scaffolding lives here."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from privenv.plotting import save_figure


def lab_arguments(doc: str | None, name: str, argv: list[str] | None) -> argparse.Namespace:
    """``--quick`` (the reduced size the tests run) and ``--output`` (default ``results/labs``,
    where the lab's notebook also writes its figure), described by the first line of the lab's
    docstring."""
    parser = argparse.ArgumentParser(description=(doc or name).splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the quick size (seconds; what the notebooks run first)")
    parser.add_argument("--output", default="results/labs",
                        help=f"directory of the figure {name}.png (default: results/labs)")
    return parser.parse_args(argv)


def finish_lab(fig: Any, args: argparse.Namespace, name: str, start: float,
               summary: dict[str, Any]) -> dict[str, Any]:
    """Save ``fig`` as ``<output>/<name>.png``, print ``{"figure", "wall_s"}`` as one JSON line
    and return ``{"figure", "wall_s", "summary"}`` (``start``: the lab's ``time.perf_counter()``
    at its start)."""
    (png,) = save_figure(fig, Path(args.output) / name, formats=("png",))
    wall = time.perf_counter() - start
    print(json.dumps({"figure": str(png), "wall_s": round(wall, 1)}))
    return {"figure": str(png), "wall_s": wall, "summary": summary}
