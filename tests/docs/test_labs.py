"""Every teaching lab in ``examples/`` states its question, run and what to notice, and runs from
the command line at its ``--quick`` size. (Each lab's ``main`` also runs, at the quick size, in
both of its notebooks: ``tests/docs/test_lab_notebooks.py`` checks the figure there.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LABS = sorted(p.stem for p in EXAMPLES.glob("lab_*.py"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_five_labs_exist() -> None:
    assert [lab[:5] for lab in LABS] == ["lab_a", "lab_b", "lab_c", "lab_d", "lab_e"]


@pytest.mark.parametrize("name", LABS)
def test_lab_states_its_question_run_and_what_to_notice(name: str) -> None:
    doc = _load(name).__doc__
    for section in ("**Question.**", "**Run", "**What to notice**"):
        assert section in doc, f"{name}: docstring lacks {section}"


def test_a_lab_runs_from_the_command_line(tmp_path: Path) -> None:
    """The script form (the notebooks import ``main``): one lab, the quickest."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, str(EXAMPLES / "lab_c_trust_models.py"), "--quick",
                          "--output", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    png = tmp_path / "lab_c_trust_models.png"
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
