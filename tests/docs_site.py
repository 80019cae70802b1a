"""Build the documentation site once per test session, shared by the pytest-xdist workers.

The docs sources are copied to a session folder (the build writes ``_generated/`` next to them,
so two builds never share a source tree), ``docs/generate.py --quick`` runs the quick
reproductions there, and ``sphinx-build -W`` (warnings are errors, as in ``make docs``) writes
the HTML. An ``flock`` on a file in the folder the workers share makes the first worker build
and the others wait for its result (or its failure, which each then reports)."""

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

ROOT = Path(__file__).resolve().parents[1]


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
    src = root / "docs"
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("_build", "_generated"))
    start = time.perf_counter()
    log = []
    gen = subprocess.run([sys.executable, str(src / "generate.py"), "--quick",
                          "--results", str(root / "results"), "--docs", str(src)],
                         capture_output=True, text=True, cwd=ROOT)
    log.append(gen.stdout + gen.stderr)
    code = gen.returncode
    html = root / "html"
    if code == 0:
        build = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q",
                                "-b", "html", str(src), str(html)],
                               capture_output=True, text=True, cwd=ROOT)
        log.append(build.stdout + build.stderr)
        code = build.returncode
    return {"html": str(html), "seconds": time.perf_counter() - start, "log": "\n".join(log),
            "returncode": code}
