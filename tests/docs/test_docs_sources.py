"""The documentation sources, without a build: the short README and what it links to, and no
citation of the design notes that are not in the repository.

The README holds only the two commands, an example and the headline results; everything else is
in ``docs/`` (built by ``make docs``, tested by tests/docs/test_docs.py). Here: every relative
link of the README names a file of the repository; its Python example runs and prints exactly
the output shown under it, where the private agent's regret is below uniform play's, and its
command-line twin prints the number it states; no table cell is over 200 characters; each line
of the results table is one claim with a verdict, and its numbers appear on the results page the
line links to, so the README cannot drift from the pages that hold the measurements."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
    assert len(text.encode()) < 10_000 and text.count("\n") < 120
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


def _example() -> tuple[str, str]:
    """The README's Python example and the output it shows (the ```text block after it)."""
    found = re.findall(r"```python\n(.*?)```\n\n(?:(?!```).)*?```text\n(.*?)```", _readme(), re.S)
    assert len(found) == 1, "one Python example followed by the output it prints"
    return found[0]


def _regrets(output: str) -> dict[tuple[str, str], float]:
    """(agent, privacy) -> the regret of each printed line ``agent regret 1,234   privacy``."""
    rows = [re.match(r"(\S+)\s+regret\s+([\d,]+)\s+(.+)$", line) for line in output.splitlines()]
    assert rows and all(rows), output
    return {(m[1], m[3].strip()): float(m[2].replace(",", "")) for m in rows}


def test_readme_example_prints_what_the_readme_shows() -> None:
    """The example runs as written and prints exactly the lines shown under it (fixed seed: the
    numbers are deterministic), so the README cannot drift from what the code does."""
    code, shown = _example()
    assert len(code.strip().splitlines()) <= 10
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert out.getvalue() == shown


def test_readme_example_shows_a_private_agent_learning() -> None:
    """In the shown output every private agent's regret is below uniform play's, and a
    non-private agent is there to compare with."""
    regrets = _regrets(_example()[1])
    (uniform,) = [r for (agent, _), r in regrets.items() if agent == "uniform"]
    private = {k: r for k, r in regrets.items() if k[1] != "not private"}
    assert private and any(k[0] != "uniform" and k[1] == "not private" for k in regrets)
    for (agent, privacy), regret in private.items():
        assert regret < uniform, f"{agent} ({privacy}): {regret} is not below uniform's {uniform}"


def test_readme_command_line_twin_prints_the_example_numbers(capsys) -> None:
    """The README's ``privenv run`` command prints the regret the README states, which is the
    example's own number for that agent and ε, and below uniform play's (the same command with
    ``--agent uniform`` and no ε, whose number the README states too)."""
    import json
    import shlex

    from privenv.cli import main

    text = " ".join(_readme().split())
    (command,) = re.findall(r"`(privenv run [^`]+)`", text)
    argv = shlex.split(command)[1:]
    stated = int(re.search(r"`regret_mean (\d+)`", text)[1])
    stated_uniform = int(re.search(r"`--agent uniform`[^:]*: (\d+)", text)[1])
    sets = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--set")
    agent = argv[argv.index("--agent") + 1]
    uniform = [a for i, a in enumerate(argv) if not (
        (a == "--set" and argv[i + 1].startswith("epsilon="))
        or (a.startswith("epsilon=") and argv[i - 1] == "--set"))]
    uniform[uniform.index("--agent") + 1] = "uniform"

    def regret(args: list[str]) -> int:
        assert main([*args, "--format", "json"]) == 0
        return round(json.loads(capsys.readouterr().out)["regret_mean"])

    assert regret(argv) == stated < stated_uniform == regret(uniform)
    shown = [r for (a, privacy), r in _regrets(_example()[1]).items()
             if a == agent and privacy.startswith(f"{sets['epsilon']}-DP,")]
    assert shown == [stated]


def _table_rows(text: str) -> list[list[str]]:
    """The cells of every row of every Markdown table (the separator rows left out)."""
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines()
            if line.startswith("|") and not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip())]


def test_readme_tables_are_readable_at_a_glance() -> None:
    """No cell of a README table is longer than 200 characters (its details are on the page the
    row links to)."""
    rows = _table_rows(_readme())
    assert rows
    long = [(len(c), c[:60]) for row in rows for c in row if len(c) > 200]
    assert not long, long


def test_readme_results_are_one_claim_per_line_with_a_verdict() -> None:
    """The headline table: one row per claim — the paper, the claim linked to its results page,
    the measured numbers and a verdict. Each number of the measured cell appears on the linked
    page, so the README cannot drift from the pages that hold the measurements."""
    rows = [r for r in _table_rows(_readme()) if any("docs/results/" in c for c in r)]
    assert len(rows) >= 15
    for paper, claim, measured, verdict in rows:
        assert paper in ("1", "2", "3", "4", "zoo"), paper  # zoo: issue 32's comparisons
        (page,) = [link for link in _links(claim) if link.startswith("docs/results/")]
        assert re.search(r"\breproduced\b|\bfinding\b", verdict), verdict
        text = (ROOT / page).read_text(encoding="utf-8")
        numbers = NUMBER.findall(measured)
        assert numbers, claim
        absent = [n for n in numbers if n not in text]
        assert not absent, f"{page} does not show {absent} (README claim: {claim})"


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
