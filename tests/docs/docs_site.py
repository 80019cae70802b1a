"""Build the documentation site once per test session, shared by the pytest-xdist workers.

The docs sources are copied to a session folder (the build writes ``_generated/`` next to them, so
two builds never share a source tree) and ``make docs-build`` — the recipe of ``make docs`` without
its install step — builds them there at the reproductions' quick size (``DOCS_SCALE=--quick``):
``docs/generate.py`` then ``sphinx-build -W`` (warnings are errors), with this interpreter. So the
tests build the site with the Makefile's own commands (without the highlighted source pages:
``PRIVENV_DOCS_VIEWCODE=0``, docs/conf.py). An ``flock`` on a file in the folder the workers share
makes the first worker build and the others wait for its result (or its failure, which each then
reports)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def build_site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The session's build: ``{"html": Path, "seconds", "log", "returncode"}``."""
    pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install .[docs])")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed")
    base = tmp_path_factory.getbasetemp()
    # the session's folder: an xdist worker's basetemp is <session>/popen-gwN
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root = shared / "docs-site"
    root.mkdir(exist_ok=True)
    with open(shared / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = root / "build.json"
        if not record.exists():
            record.write_text(json.dumps(_build(root)))
        fcntl.flock(lock, fcntl.LOCK_UN)
    out = json.loads(record.read_text())
    out["html"] = Path(out["html"])
    return out


def _build(root: Path) -> dict:
    src, html = root / "docs", root / "html"
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("_build", "_generated"))
    # the labs page offers the notebooks for download from ../examples/notebooks
    shutil.copytree(ROOT / "examples" / "notebooks", root / "examples" / "notebooks",
                    ignore=shutil.ignore_patterns("results", ".ipynb_checkpoints"))
    make = shutil.which("make")
    if make is None:
        return {"html": str(html), "seconds": 0.0, "returncode": 127,
                "log": "make is not installed (the build runs `make docs-build`)"}
    start = time.perf_counter()
    # huber-fig1's outputs at a horizon of 2·10⁴ (its quick size is 10⁶, ~35 s of runs that this
    # build test does not need): generate.py reuses outputs it finds and draws the page from them.
    # One worker process: with two, both compiled the three agents' kernels at once (cold cache,
    # 47.5 s of CPU for the reproduction; the other pytest worker keeps the second core busy)
    subprocess.run([sys.executable, "-m", "privenv.cli", "reproduce", "huber-fig1",
                    "--output", str(root / "results" / "huber-fig1-quick"), "--quick",
                    "--horizon", "20000", "--workers", "1"],
                   check=True, capture_output=True, cwd=ROOT)
    build = subprocess.run([make, "--no-print-directory", "-C", str(ROOT), "docs-build",
                            f"PY={sys.executable}", f"DOCS={src}", f"DOCS_HTML={html}",
                            f"DOCS_RESULTS={root / 'results'}", "DOCS_SCALE=--quick"],
                           capture_output=True, text=True,
                           env={**os.environ, "PRIVENV_DOCS_VIEWCODE": "0"})  # docs/conf.py
    return {"html": str(html), "seconds": time.perf_counter() - start,
            "log": build.stdout + build.stderr, "returncode": build.returncode}
