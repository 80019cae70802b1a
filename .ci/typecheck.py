"""Type-check the package with mypy, as it is installed (``make lint``; config in pyproject.toml).

``agents/`` and ``wrappers/`` ship as ``privenv.agents`` and ``privenv.wrappers`` (the
``package-dir`` mapping in pyproject.toml), a layout mypy cannot derive from the source tree, and
the editable install's import hook is invisible to it. So this script builds the installed
layout as a tree of symbolic links (``.mypy_cache/layout/privenv``: every entry of ``privenv/``
plus ``agents`` and ``wrappers``; nothing is copied, so the tree is never stale), runs
``mypy -p privenv`` there with the project's configuration, and prints each error with the path
of the source file (``agents/huber.py``, not ``privenv/agents/huber.py``). The layout sits in a
fixed place so that mypy's incremental cache stays valid between runs (cold: about 35 s of CPU;
warm: a few seconds).

Usage: ``python .ci/typecheck.py [mypy options]``; the exit code is mypy's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: source directory of each subpackage that does not live under privenv/ (pyproject's package-dir)
MAPPED = {"agents": "agents", "wrappers": "wrappers"}


def build_layout(root: Path = ROOT) -> Path:
    """The installed layout of the package as symbolic links under ``root/.mypy_cache/layout``;
    returns the directory that contains ``privenv``."""
    layout = root / ".mypy_cache" / "layout"
    package = layout / "privenv"
    package.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in (root / "privenv").iterdir() if p.name != "__pycache__"}
    wanted.update({name: root / source for name, source in MAPPED.items()})
    for entry in package.iterdir():  # links to entries that no longer exist (or changed target)
        if entry.name not in wanted or not entry.is_symlink() or \
                Path(os.readlink(entry)) != wanted[entry.name]:
            entry.unlink()
    for name, target in wanted.items():
        if not (package / name).is_symlink():
            (package / name).symlink_to(target)
    return layout


def source_path(line: str) -> str:
    """``line`` of mypy's output with a layout path replaced by the source file's path."""
    return re.sub(r"^privenv/(agents|wrappers)/", lambda m: f"{MAPPED[m.group(1)]}/", line)


def main(argv: list[str]) -> int:
    layout = build_layout()
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
               "--cache-dir", str(ROOT / ".mypy_cache"), "-p", "privenv", *argv]
    done = subprocess.run(command, cwd=layout, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        print(source_path(line))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
