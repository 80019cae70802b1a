"""Every lab notebook (exercises and solutions) executes at the quick size from the repository
root (the exercise notebooks under ``-m slow``: see ``EXECUTED``), the way
``python examples/make_notebooks.py --run`` runs them, its solutions checking their answers
(assertions); the committed notebooks are exactly what ``examples/make_notebooks.py``
writes from the labs' sources."""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the docs extra is not installed")
nbclient = pytest.importorskip("nbclient", reason="the docs extra is not installed")
pytest.importorskip("ipykernel", reason="the docs extra is not installed")
pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(p.name for p in (EXAMPLES / "notebooks").glob("lab_*.ipynb"))


def _make_notebooks():
    spec = importlib.util.spec_from_file_location("make_notebooks", EXAMPLES / "make_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lab(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_notebooks_are_generated_from_the_lab_sources() -> None:
    run = subprocess.run([sys.executable, str(EXAMPLES / "make_notebooks.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    labs = sorted(p.stem for p in EXAMPLES.glob("lab_*.py"))
    assert NOTEBOOKS == sorted([f"{lab}.ipynb" for lab in labs]
                               + [f"{lab}_solutions.ipynb" for lab in labs])


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("lab_*.py")))
def test_every_exercise_has_a_solution(name: str, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))  # a solution may import its lab
    lab = _lab(name)
    spec = importlib.util.spec_from_file_location(f"sol_{name}",
                                                  EXAMPLES / "solutions" / f"{name}.py")
    solutions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(solutions)
    assert lab.EXERCISES, f"{name} has no exercises"
    for i, _ in enumerate(lab.EXERCISES, start=1):
        solve = getattr(solutions, f"exercise_{i}", None)
        assert callable(solve), f"{name}: exercise {i}"
        assert "assert " in inspect.getsource(solve), f"{name}: exercise {i} checks nothing"
        assert len(solutions.ANSWERS[i].split()) >= 15, f"{name}: exercise {i} has no answer"
    assert sorted(solutions.ANSWERS) == list(range(1, len(lab.EXERCISES) + 1))


#: the default suite executes the solutions notebooks: each holds every code cell of its exercise
#: notebook (the lab's setup, parameters and run; the test above checks both are generated from
#: the same sources) besides the empty answer cells, plus the solutions and their assertions.
#: The exercise notebooks, which would run the same lab a second time, run under ``-m slow``.
EXECUTED = [name if name.endswith("_solutions.ipynb")
            else pytest.param(name, marks=pytest.mark.slow) for name in NOTEBOOKS]


@pytest.mark.parametrize("notebook", EXECUTED)
def test_notebook_executes_at_quick_size(notebook: str, tmp_path: Path) -> None:
    """Run from the repository root (``make_notebooks.execute``), the figure in ``OUTPUT``, no
    file left in examples/; in a solutions notebook every solution ran, printed and asserted its
    answer (a failed assertion fails the run), and a written answer follows it."""
    before = sorted(p.relative_to(EXAMPLES) for p in EXAMPLES.rglob("*") if p.is_file())
    nb = _make_notebooks().execute(EXAMPLES / "notebooks" / notebook, tmp_path, quick=True)
    lab = notebook.removesuffix(".ipynb").removesuffix("_solutions")
    assert [p.name for p in tmp_path.glob("*.png")] == [f"{lab}.png"]
    png = (tmp_path / f"{lab}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000  # a drawn figure
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "image/png" in o.get("data", {})]
    assert shown, "the notebook does not display its figure"
    if notebook.endswith("_solutions.ipynb"):
        cells = nb.cells
        ran = [i for i, c in enumerate(cells)
               if c.cell_type == "code" and "def exercise_" in c.source]
        assert ran and all(cells[i].outputs for i in ran), "a solution cell printed nothing"
        assert all("assert " in cells[i].source for i in ran)
        assert all(cells[i + 1].source.startswith("**Answer.**") for i in ran)
    after = sorted(p.relative_to(EXAMPLES) for p in EXAMPLES.rglob("*") if p.is_file()
                   and "__pycache__" not in p.parts)
    assert after == [p for p in before if "__pycache__" not in p.parts], "files left in examples/"
