"""``fed-scaling``: the privacy cost of Private-FedLinUCB against M, with fitted exponents.

Implemented in :mod:`privenv.reproduce.fed` (shared by the three federated figures)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from privenv.reproduce import fed

SPEC = fed.SCALING
ID = SPEC.id
DESCRIPTION = SPEC.description


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``privenv reproduce fed-scaling``."""
    fed.add_arguments(parser, SPEC)


def main(args: argparse.Namespace) -> int:
    """Run from parsed command-line options."""
    return fed.main(args, SPEC)


def reproduce(output: str | Path | None = None, **kwargs: Any) -> fed.Reproduction:
    """:func:`privenv.reproduce.fed.reproduce` for this figure."""
    return fed.reproduce(SPEC, output, **kwargs)
