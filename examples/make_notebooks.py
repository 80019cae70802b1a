"""Write the lab notebooks of ``examples/notebooks/`` from the labs' sources, and run them.

Each lab has one source, ``examples/lab_*.py`` (its docstring: question, run, what to notice at
both sizes; its ``main``; its ``EXERCISES``), and its solutions in ``examples/solutions/lab_*.py``
(``exercise_1``, …, each asserting its answer, and ``ANSWERS``, the written answer to each
exercise's question). This script writes two notebooks per lab:

* ``lab_*.ipynb``: the lab's text, a parameters cell (``QUICK``, ``OUTPUT``), the run and its
  figure, then each exercise followed by an empty cell to answer in;
* ``lab_*_solutions.ipynb``: the same, with each exercise's solution (its source and its run,
  which checks itself) and its written answer.

``python examples/make_notebooks.py`` rewrites them; ``--check`` exits 1 if a committed notebook
differs from what the sources give (the tests run that check and execute every notebook).
``--run`` executes every notebook from the repository root (nbclient and ipykernel: the ``docs``
extra, which ``make test`` installs) at the quick size (``--full``: the size the texts measured)
and writes the executed notebooks and their figures to ``results/labs/`` (ignored by git).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import inspect
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import nbformat

EXAMPLES = Path(__file__).resolve().parent
ROOT = EXAMPLES.parent
NOTEBOOKS = EXAMPLES / "notebooks"
#: where ``--run`` writes the executed notebooks and the labs' figures (``/results/`` is ignored)
RESULTS = ROOT / "results" / "labs"
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markdown_text(rst: str) -> str:
    """reST inline markup as Markdown (roles and double backquotes to code spans)."""
    text = re.sub(r":(?:mod|class|func|meth|data):`~?([^`]+)`", r"`\1`", rst)
    return re.sub(r"``([^`]+)``", r"`\1`", text).strip()


def _markdown(rst: str) -> str:
    """The labs' docstrings are reST for the API pages; in a notebook: Markdown, the first line
    a title."""
    lines = _markdown_text(rst).splitlines()
    return "\n".join([f"# {lines[0]}", *lines[1:]])


def _setup(lab: str) -> str:
    return (
        "import sys\nfrom pathlib import Path\n\n"
        "from IPython.display import Image\n\n"
        f"# the source, examples/{lab}.py, is found from the repository root,\n"
        "# examples/ or examples/notebooks/ (wherever Jupyter was started)\n"
        "here = Path.cwd().resolve()\n"
        "ROOT = next(p for p in (here, *here.parents)\n"
        f"            if (p / 'examples' / '{lab}.py').is_file())\n"
        "sys.path.insert(0, str(ROOT / 'examples'))\n"
        f"import {lab} as lab  # noqa: E402\n"
    )


PARAMETERS = (
    "# True: the quick size (seconds; what the tests run). False: the default size; the text\n"
    "# gives the numbers of both.\n"
    "QUICK = True\n"
    "OUTPUT = str(ROOT / 'results' / 'labs')  # where the figure goes (ignored by git)\n"
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
    answers = getattr(solutions, "ANSWERS", {})
    for i, prompt in enumerate(module.EXERCISES, start=1):
        solve = getattr(solutions, f"exercise_{i}", None)
        if solve is None:
            raise ValueError(f"{lab}: exercise {i} has no solution exercise_{i} in solutions/")
        if i not in answers:
            raise ValueError(f"{lab}: exercise {i} has no written answer (ANSWERS[{i}])")
        source = inspect.getsource(solve)
        if "assert " not in source:
            raise ValueError(f"{lab}: the solution of exercise {i} checks nothing (no assert)")
        cell = v4.new_markdown_cell(f"### Exercise {i}\n\n{prompt}")
        student += [cell, v4.new_code_cell("# your answer\n")]
        teacher += [cell, v4.new_code_cell(source.rstrip() + "\n\n\n"
                                           f"exercise_{i}(QUICK)  # checks its answer (assert)"),
                    v4.new_markdown_cell(f"**Answer.** {_markdown_text(answers[i])}")]
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


def execute(notebook: Path, output: Path, quick: bool = True,
            timeout: int = 1800) -> nbformat.NotebookNode:
    """Run ``notebook`` from the repository root with its parameters cell set to ``QUICK`` and
    ``OUTPUT = output`` (where its figure goes); returns the executed notebook (an exercise whose
    answer does not hold raises nbclient's ``CellExecutionError``)."""
    import nbclient
    from traitlets.config import Config

    nb = nbformat.read(notebook, as_version=4)
    (params,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    params.source = f"QUICK = {quick}\nOUTPUT = {str(output)!r}\n"
    with tempfile.TemporaryDirectory() as sockets:  # the kernel's sockets, removed afterwards
        config = Config()
        if os.name == "posix":  # local sockets (a TCP kernel warns that it is unencrypted)
            config.KernelManager.transport = "ipc"
            config.KernelManager.ip = str(Path(sockets) / "kernel")
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", config=config,
                                resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb


def run_all(output: Path = RESULTS, quick: bool = True) -> int:
    """Execute every notebook (:func:`execute`) and write it, with its outputs, to
    ``output/notebooks/``; the figures go to ``output``. Prints one line per notebook."""
    (output / "notebooks").mkdir(parents=True, exist_ok=True)
    failed = []
    for path in sorted(NOTEBOOKS.glob("lab_*.ipynb")):
        start = time.perf_counter()
        try:
            nb = execute(path, output, quick)
        except Exception as e:  # report it and run the others
            failed.append(path.name)
            print(f"{path.name}: FAILED ({type(e).__name__}: {str(e).strip().splitlines()[-1]})")
            continue
        nbformat.write(nb, output / "notebooks" / path.name)
        print(f"{path.name}: ran in {time.perf_counter() - start:.0f} s -> "
              f"{(output / 'notebooks' / path.name).relative_to(ROOT)}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a committed notebook differs from its sources")
    parser.add_argument("--run", action="store_true",
                        help="execute every notebook from the repository root into "
                             "results/labs/ (the quick size)")
    parser.add_argument("--full", action="store_true",
                        help="with --run: the labs' default size (minutes), not the quick one")
    args = parser.parse_args(argv)
    if args.full and not args.run:
        parser.error("--full goes with --run")
    if args.run:
        return run_all(RESULTS, quick=not args.full)
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
