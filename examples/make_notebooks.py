"""Write the lab notebooks of ``examples/notebooks/`` from the labs' sources (nbformat).

Each lab has one source, ``examples/lab_*.py`` (its docstring: question, run, what to notice; its
``main``; its ``EXERCISES``), and its solutions in ``examples/solutions/lab_*.py``
(``exercise_1``, …). This script writes two notebooks per lab:

* ``lab_*.ipynb``: the lab's text, a parameters cell (``QUICK``, ``OUTPUT``), the run and its
  figure, then each exercise followed by an empty cell to answer in;
* ``lab_*_solutions.ipynb``: the same, with each exercise's solution (its source and its run).

``python examples/make_notebooks.py`` rewrites them; ``--check`` exits 1 if a committed notebook
differs from what the sources give (the tests run that check and execute every notebook).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType

import nbformat

EXAMPLES = Path(__file__).resolve().parent
NOTEBOOKS = EXAMPLES / "notebooks"
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markdown(rst: str) -> str:
    """The labs' docstrings are reST for the API pages; in a notebook: Markdown."""
    text = re.sub(r":(?:mod|class|func|meth|data):`~?([^`]+)`", r"`\1`", rst)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    lines = text.strip().splitlines()
    return "\n".join([f"# {lines[0]}", *lines[1:]])


def _setup(lab: str) -> str:
    return (
        "import sys\nfrom pathlib import Path\n\n"
        "from IPython.display import Image\n\n"
        f"# the source: examples/{lab}.py; this notebook: examples/notebooks/\n"
        "sys.path.insert(0, str(Path.cwd().resolve().parent))\n"
        f"import {lab} as lab  # noqa: E402\n"
    )


PARAMETERS = (
    "# True: the quick size (seconds; what the tests run). False: the size the text measured.\n"
    "QUICK = True\n"
    "OUTPUT = 'results'  # where the figure goes\n"
)


def notebooks(lab: str) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """(exercises notebook, solutions notebook) of ``lab`` (a module name like ``lab_a_…``)."""
    module = _load(EXAMPLES / f"{lab}.py")
    solutions = _load(EXAMPLES / "solutions" / f"{lab}.py")
    v4 = nbformat.v4
    head = [
        v4.new_markdown_cell(_markdown(module.__doc__)),
        v4.new_code_cell(_setup(lab)),
        v4.new_code_cell(PARAMETERS, metadata={"tags": ["parameters"]}),
        v4.new_code_cell("out = lab.main(['--output', OUTPUT] + (['--quick'] if QUICK else []))\n"
                         "Image(out['figure'])"),
        v4.new_markdown_cell("## Exercises\n\nSolutions: `lab_" + lab[4:] + "_solutions.ipynb` "
                             f"(source: `examples/solutions/{lab}.py`)."),
    ]
    student, teacher = list(head), list(head)
    if len(module.EXERCISES) < 1:
        raise ValueError(f"{lab}: EXERCISES is empty")
    for i, prompt in enumerate(module.EXERCISES, start=1):
        solve = getattr(solutions, f"exercise_{i}", None)
        if solve is None:
            raise ValueError(f"{lab}: exercise {i} has no solution exercise_{i} in solutions/")
        cell = v4.new_markdown_cell(f"### Exercise {i}\n\n{prompt}")
        student += [cell, v4.new_code_cell("# your answer\n")]
        teacher += [cell, v4.new_code_cell(inspect.getsource(solve).rstrip() + "\n\n\n"
                                           f"exercise_{i}(QUICK)")]
    extra = [n for n in dir(solutions) if n.startswith("exercise_")
             and int(n.split("_")[1]) > len(module.EXERCISES)]
    if extra:
        raise ValueError(f"{lab}: solutions without an exercise: {extra}")
    imports = _imports(solutions)
    teacher.insert(5, v4.new_code_cell(imports))
    return (_notebook(student), _notebook(teacher))


def _imports(module: ModuleType) -> str:
    """The solution module's top-level code other than its functions (imports, constants)."""
    source = inspect.getsource(module)
    body = source.split('"""', 2)[2] if source.lstrip().startswith('"""') else source
    body = body.split("\ndef ", 1)[0].replace("from __future__ import annotations\n", "")
    return "# the solutions' imports and constants (examples/solutions)\n" + body.strip() + "\n"


def _notebook(cells: list) -> nbformat.NotebookNode:
    cells = [copy.deepcopy(c) for c in cells]  # the two notebooks share cells: own copies
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNEL,
                                                         "language_info": {"name": "python"}})
    for i, cell in enumerate(nb.cells):  # stable ids: regenerating gives the same file
        cell["id"] = f"cell-{i}"
    return nb


def labs() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("lab_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a committed notebook differs from its sources")
    args = parser.parse_args(argv)
    NOTEBOOKS.mkdir(exist_ok=True)
    stale = []
    for lab in labs():
        for suffix, nb in zip(("", "_solutions"), notebooks(lab), strict=True):
            path = NOTEBOOKS / f"{lab}{suffix}.ipynb"
            text = nbformat.writes(nb) + "\n"
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(path.name)
            else:
                path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale notebooks (run python examples/make_notebooks.py): {', '.join(stale)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
