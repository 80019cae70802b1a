"""Every teaching lab in ``examples/`` runs at its ``--quick`` size and writes its PNG figure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
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
def test_lab_runs_and_writes_its_figure(name: str, tmp_path: Path) -> None:
    module = _load(name)
    doc = module.__doc__
    for section in ("**Question.**", "**Run", "**What to notice**"):
        assert section in doc, f"{name}: docstring lacks {section}"
    out = module.main(["--quick", "--output", str(tmp_path)])
    png = Path(out["figure"])
    assert png.parent == tmp_path and png.name == f"{name}.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert png.stat().st_size > 10_000  # a drawn figure, not an empty canvas
