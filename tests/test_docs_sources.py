"""The documentation sources, without a build: the short README and what it links to, and no
citation of the design notes that are not in the repository.

The README holds only the two commands, an example and the headline results; everything else is
in ``docs/`` (built by ``make docs``, tested by tests/test_docs.py). Here: every relative link of
the README names a file of the repository; its Python example runs and prints the guarantee its
comment shows; each number of its results table appears on the results page the row links to, so
the README cannot drift from the pages that hold the measurements."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: the team's design notes, which are not in the repository (the design lives in docs/design/)
DESIGN_NOTES = ("SPEC.md", "SPEC §", "PRIVACY-TESTING", "ECOSYSTEM-NOTES")
#: a number as the pages print it: 0.990, 4.4, 1.1·10⁵, 2.0–4.0·10⁵, 10⁻⁴
NUMBER = re.compile(r"10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+|\d+(?:\.\d+)?(?:–\d+(?:\.\d+)?)?(?:·10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?")


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _links(text: str) -> list[str]:
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def test_readme_is_short_and_keeps_the_two_commands() -> None:
    text = _readme()
    assert len(text.encode()) < 8_000 and text.count("\n") < 100
    for line in ("make reproduce   # sets up .venv, then reproduces paper 1's Figure 1 (quick "
                 "form) into results/huber-fig1-quick/",
                 "make test        # sets up .venv (incl. Stable-Baselines3 on the CPU build of "
                 "torch), runs the tests"):
        assert line in text
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("reproduce", "test", "reproduce-full", "test-slow", "bench", "docs", "lint"):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target
        assert f"make {target}" in text.replace("make\nreproduce", "make reproduce"), target


def test_readme_links_name_files_of_the_repository() -> None:
    links = _links(_readme())
    assert len(links) >= 15
    missing = [link for link in links if not (ROOT / link.split("#")[0]).is_file()]
    assert not missing, missing


def test_readme_example_runs_and_prints_the_declared_guarantee() -> None:
    blocks = re.findall(r"```python\n(.*?)```", _readme(), re.S)
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) <= 10
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), {"__name__": "readme"})
    comment = re.search(r"print\(.*#\s*\.\.\.\s*(.+)", blocks[0]).group(1).strip()
    assert out.getvalue().strip().endswith(comment), (out.getvalue(), comment)


def test_readme_results_are_those_of_the_results_pages() -> None:
    rows = [line for line in _readme().splitlines()
            if line.startswith("| ") and "docs/results/" in line]
    assert len(rows) == 4
    for row in rows:
        cells = row.strip("|").split("|")
        (page,) = [link for link in _links(row) if link.startswith("docs/results/")]
        text = (ROOT / page).read_text(encoding="utf-8")
        numbers = NUMBER.findall(cells[1])
        assert len(numbers) >= 5, row
        absent = [n for n in numbers if n not in text]
        assert not absent, f"{page} does not show {absent} (README row: {cells[0].strip()})"


def _sources(*folders: str) -> list[Path]:
    files = [f for folder in folders for f in (ROOT / folder).rglob("*")
             if f.suffix in (".py", ".md", ".toml", ".txt", ".ipynb")]
    return [f for f in files if "_build" not in f.parts and "_generated" not in f.parts]


def test_nothing_cites_the_unpublished_design_notes() -> None:
    """The design lives in the repository: the package, the agents and the wrappers never mention
    the design notes ("SPEC" nowhere, not even in an identifier), the docs pages neither, and the
    README, tests, examples and benchmarks cite the papers or the docs pages instead."""
    for path in _sources("privenv", "agents", "wrappers", "docs"):
        assert "SPEC" not in path.read_text(encoding="utf-8"), path.relative_to(ROOT)
    here = Path(__file__).resolve()
    for path in [README, *_sources("tests", "examples", "benchmarks")]:
        if path.resolve() != here:
            text = path.read_text(encoding="utf-8")
            cited = [note for note in DESIGN_NOTES if note in text]
            assert not cited, f"{path.relative_to(ROOT)} cites {cited}"
