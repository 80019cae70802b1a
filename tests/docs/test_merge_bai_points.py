"""docs/results/measure/merge_bai_points.py, which merges a store's points.csv into a points CSV
of docs/results: a point with more runs replaces the CSV's, a new point is added, a point with
as many runs must agree with the CSV in every column but the times, or nothing is written."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from measure_scripts import DOCS, load

FIELDS = ["figure", "instance", "agent", "threshold", "epsilon", "delta", "runs",
          "non_stopping", "tau_mean", "wall_s"]


def _write(path: Path, rows: list[tuple[str, str, int, str, float]]) -> Path:
    """Rows (agent, ε, runs, mean τ, wall_s) of bai-local on μ3, theory thresholds."""
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(FIELDS)
        for agent, eps, runs, tau, wall in rows:
            w.writerow(["bai-local", "mu3", agent, "theory", eps, "0.01", runs, 0, tau, wall])
    return path


def _means(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    with path.open() as f:
        return {(r["agent"], r["epsilon"]): (r["runs"], r["tau_mean"]) for r in csv.DictReader(f)}


def test_more_runs_replace_new_points_are_added_equal_runs_agree(tmp_path: Path,
                                                                 capsys) -> None:
    script = load("merge_bai_points")
    grid = _write(tmp_path / "grid.csv", [("ttucb", "", 1000, "659.331", 3.0),
                                          ("ctb-tt", "0.01", 25, "28650000.0", 90.0),
                                          ("ctb-tt", "0.1", 1000, "280000.5", 50.0)])
    store = _write(tmp_path / "store.csv", [("ttucb", "", 1000, "659.331", 4.5),  # times differ
                                            ("ctb-tt", "0.010", 1000, "29000000.25", 3000.0),
                                            ("ctb-tt", "0.1", 100, "281000.0", 5.0),
                                            ("ctb-tt", "0.05", 1000, "1170700.0", 400.0)])
    assert script.main([str(grid), str(store)]) == 0
    assert _means(grid) == {("ttucb", ""): ("1000", "659.331"),
                            ("ctb-tt", "0.010"): ("1000", "29000000.25"),  # raised 25 -> 1000
                            ("ctb-tt", "0.1"): ("1000", "280000.5"),  # more runs than the store
                            ("ctb-tt", "0.05"): ("1000", "1170700.0")}  # added
    out = capsys.readouterr().out
    assert "replaced mu3 ctb-tt theory 0.01 0.01: 25 -> 1000 runs" in out
    assert "added    mu3 ctb-tt theory 0.05 0.01: 1000 runs" in out
    assert script.main([str(grid), str(grid)]) == 0  # merging a CSV into itself changes nothing
    assert "nothing to change" in capsys.readouterr().out


def test_a_point_that_differs_at_the_same_run_count_writes_nothing(tmp_path: Path,
                                                                   capsys) -> None:
    script = load("merge_bai_points")
    grid = _write(tmp_path / "grid.csv", [("ttucb", "", 1000, "659.331", 3.0),
                                          ("ctb-tt", "0.01", 25, "28650000.0", 90.0)])
    before = grid.read_bytes()
    store = _write(tmp_path / "store.csv", [("ttucb", "", 1000, "659.332", 3.0),
                                            ("ctb-tt", "0.01", 1000, "29000000.25", 3000.0)])
    assert script.main([str(grid), str(store)]) == 1
    assert "differs  mu3 ttucb theory 0.01: tau_mean '659.331' (CSV) against '659.332'" in (
        capsys.readouterr().out)
    assert grid.read_bytes() == before
    other = tmp_path / "other.csv"
    other.write_text("figure,instance\nbai-local,mu3\n")
    assert script.main([str(grid), str(other)]) == 1  # lacks the CSV's columns
    assert script.main([str(grid), str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert grid.read_bytes() == before


def test_the_shipped_grids_merge_into_themselves_unchanged(tmp_path: Path) -> None:
    script = load("merge_bai_points")
    for name in ("bai-local-grid-points.csv", "bai-global-grid-points.csv"):
        copy = shutil.copy(DOCS / "results" / name, tmp_path / name)
        assert script.main([str(copy), str(DOCS / "results" / name)]) == 0
        assert Path(copy).read_bytes() == (DOCS / "results" / name).read_bytes()


def test_a_csv_with_fewer_columns_keeps_its_own(tmp_path: Path) -> None:
    script = load("merge_bai_points")
    grid = tmp_path / "grid.csv"
    grid.write_text("instance,agent,threshold,epsilon,runs,tau_mean\n"
                    "mu3,adap-tt,theory,0.1,200,5000.5\n")
    store = _write(tmp_path / "store.csv", [("adap-tt", "0.1", 1000, "5100.25", 60.0)])
    assert script.main([str(grid), str(store)]) == 0
    assert grid.read_text() == ("instance,agent,threshold,epsilon,runs,tau_mean\n"
                                "mu3,adap-tt,theory,0.1,1000,5100.25\n")
