"""``fed-realdata``: paper 2, Fig. 2c on substituted data (the bundled wine data set, M = 10).

Implemented in :mod:`privenv.reproduce.fed` (shared by the three federated figures)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from privenv.reproduce import fed

SPEC = fed.REALDATA
ID = SPEC.id
DESCRIPTION = SPEC.description


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``privenv reproduce fed-realdata``."""
    fed.add_arguments(parser, SPEC)


def main(args: argparse.Namespace) -> int:
    """Run from parsed command-line options."""
    return fed.main(args, SPEC)


def reproduce(output: str | Path | None = None, **kwargs: Any) -> fed.Reproduction:
    """:func:`privenv.reproduce.fed.reproduce` for this figure."""
    return fed.reproduce(SPEC, output, **kwargs)
