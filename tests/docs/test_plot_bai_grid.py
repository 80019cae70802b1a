"""docs/results/measure/plot_bai_grid.py, which draws paper 3's Figures 3–5 from the points CSVs
in docs/results: the title states every run count the points have, and the figure is drawn
from a shipped CSV."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest
from measure_scripts import DOCS, MEASURE, load

pytest.importorskip("matplotlib")

SCRIPT = MEASURE / "plot_bai_grid.py"


def _script() -> ModuleType:
    return load("plot_bai_grid")


def _write(path: Path, rows: list[tuple[str, str, str, str, int]]) -> Path:
    head = "instance,agent,threshold,epsilon,runs,tau_mean,tau_sd,non_stopping\n"
    path.write_text(head + "".join(f"{i},{a},{t},{e},{n},1000.0,10.0,0\n"
                                   for i, a, t, e, n in rows))
    return path


def test_the_title_names_each_run_count_with_its_points(tmp_path: Path) -> None:
    script = _script()
    same = script.read(_write(tmp_path / "same.csv", [
        ("mu3", "ttucb", "theory", "", 1000), ("mu3", "ctb-tt", "theory", "0.5", 1000)]))
    assert script.runs_label(same) == "1000 runs"
    mixed = script.read(_write(tmp_path / "mixed.csv", [
        ("mu3", "ttucb", "theory", "", 1000), ("mu3", "ctb-tt", "theory", "0.5", 1000),
        ("mu3", "ctb-tt", "theory", "1", 1000), ("mu3", "ctb-tt", "theory", "0.01", 25),
        ("mu1", "ctb-tt", "theory", "0.01", 25), ("mu1", "ctb-tt", "theory", "0.1", 100)]))
    assert script.runs_label(mixed) == (
        "1000 runs (25 at ε = 0.01 on mu1, mu3; 100 at ε = 0.1 on mu1)")
    # where other points at the same ε and instance have the main count, the label names the
    # point; three or more ε in a row of the CSV's ε read "first … last"
    eps = ["0.1", "0.5", "1", "10"]
    partial = script.read(_write(tmp_path / "partial.csv", [
        *[("mu6", "adap-tt", "theory", e, 1000) for e in eps],
        *[("mu6", "adap-tt-star", "theory", e, 200) for e in eps[1:]],
        ("mu6", "adap-tt-star", "theory", "0.1", 1000)]))
    assert script.runs_label(partial) == (
        "1000 runs (200 for adap-tt-star [theory] at ε = 0.5 … 10 on mu6)")
    apart = script.read(_write(tmp_path / "apart.csv", [
        *[("mu6", "adap-tt", "theory", e, 1000) for e in eps],
        *[("mu6", "adap-tt-star", "theory", e, 200) for e in ("0.1", "1", "10")],
        ("mu6", "adap-tt-star", "theory", "0.5", 1000)]))
    assert script.runs_label(apart) == (
        "1000 runs (200 for adap-tt-star [theory] at ε = 0.1, 1, 10 on mu6)")


def test_figure_3_is_drawn_from_the_shipped_points(tmp_path: Path) -> None:
    script = _script()
    out = tmp_path / "fig3.png"
    script.main("bai-local", str(DOCS / "results" / "bai-local-grid-points.csv"), str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("args", "named"), [
    (["bai-lokal", "x.csv", "y.png"], "bai-lokal"),
    (["bai-local", "missing.csv", "y.png"], "missing.csv"),
])
def test_bad_arguments_get_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                                named: str) -> None:
    import subprocess

    done = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and named in done.stderr
