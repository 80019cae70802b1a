"""The command-line contract: ``privenv sweep CONFIG --store PATH [--backend] [--address]
[--workers] [--resume]``, ``privenv export STORE --format csv --output FILE``, ``privenv plot``,
and ``privenv reproduce huber-fig1`` writing (and resuming) its results store."""

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from privenv.cli import main
from privenv.reproduce.cells import STORE_NAME
from privenv.store import Store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "demo-sweep.toml"

TINY = """
name = "tiny"
runs = 4
chunk = 2
horizon = 300
[[instances]]
env = "HuberBandit-v0"
grid = { alpha = [0.05, 0.1] }
[[agents]]
name = "ucb1"
[[agents]]
name = "prae-c"
grid = { epsilon = [0.5, 1.0] }
"""


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def _sweep(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["sweep", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sweep_export_plot(tiny, tmp_path, capsys):
    store = tmp_path / "out" / "tiny.sqlite"
    code, out, err = _sweep(capsys, str(tiny), "--store", str(store), "--workers", "2")
    assert code == 0
    assert out.count("\n") == 1 and out.startswith("12 cells: 12 finished now, 0 failed")
    assert err.count("final regret") == 12  # progress: one line per cell (not a terminal)

    # without --resume a non-empty store is refused; with it, finished cells are skipped
    code, out, err = _sweep(capsys, str(tiny), "--store", str(store))
    assert code == 2 and out == "" and "pass --resume" in err
    code, out, err = _sweep(capsys, str(tiny), "--store", str(store), "--resume",
                            "--workers", "1", "--progress", "none")
    assert code == 0 and "0 finished now" in out and "12 already done" in out and err == ""

    csv_path = tmp_path / "runs.csv"
    assert main(["export", str(store), "--format", "csv", "--output", str(csv_path)]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert len(rows) == 2 * 3 * 4  # configurations × runs
    order = [(r["env"], r["agent"], r["env_kwargs"], r["agent_kwargs"], int(r["run"]))
             for r in rows]
    assert order == sorted(order)
    assert main(["export", str(store), "--output", "-"]) == 0
    assert capsys.readouterr().out == csv_path.read_text()

    pytest.importorskip("pyarrow")
    import pandas as pd

    pq_path = tmp_path / "runs.parquet"
    assert main(["export", str(store), "--format", "parquet", "--output", str(pq_path)]) == 0
    assert len(pd.read_parquet(pq_path)) == 24
    assert main(["export", str(store), "--table", "curves", "--output",
                 str(tmp_path / "curves.csv")]) == 0
    assert (tmp_path / "curves.csv").read_text().startswith("env,env_kwargs,agent")

    plots = tmp_path / "plots"
    assert main(["plot", str(store), "--output", str(plots)]) == 0
    out = capsys.readouterr().out
    assert "regret mean" in out and "prae-c" in out and "epsilon=0.5" in out
    assert (plots / "regret.png").read_bytes().startswith(b"\x89PNG")
    assert (plots / "regret.pdf").read_bytes().startswith(b"%PDF")


def test_sweep_in_a_subprocess_uses_the_installed_entry_point(tiny, tmp_path):
    import subprocess
    import sys

    script = Path(sys.executable).with_name("privenv")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "privenv.cli"]
    store = tmp_path / "s.sqlite"
    proc = subprocess.run([*cmd, "sweep", str(tiny), "--store", str(store), "--workers", "2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("12 cells: 12 finished now")
    with Store(store, create=False) as st:
        assert st.counts() == {"done": 12, "failed": 0, "runs": 24}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--backend", "ray"], "privenv supports Dask"),
        (["--backend", "local", "--address", "tcp://localhost:8786"], "address"),
        (["--workers", "0"], "workers"),
    ],
)
def test_sweep_option_errors(tiny, tmp_path, capsys, args, message):
    code, out, err = _sweep(capsys, str(tiny), "--store", str(tmp_path / "s.sqlite"), *args)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("privenv sweep: error:") and message in err


def test_export_and_plot_errors(tmp_path, capsys):
    missing = str(tmp_path / "missing.sqlite")
    assert main(["export", missing, "--output", str(tmp_path / "x.csv")]) == 2
    assert "no results store" in capsys.readouterr().err
    assert main(["plot", missing, "--output", str(tmp_path)]) == 2
    assert "no results store" in capsys.readouterr().err
    assert main(["export", missing]) == 2  # --output is required
    capsys.readouterr()


def test_missing_config_file_is_a_clear_error(tmp_path, capsys):
    code, out, err = _sweep(capsys, str(tmp_path / "nope.toml"), "--store",
                            str(tmp_path / "s.sqlite"))
    assert code == 2 and "cannot read sweep config" in err


# -- huber-fig1 on the sweep machinery ------------------------------------------------------------


def test_huber_fig1_writes_its_store_and_resumes(tmp_path, capsys):
    out = tmp_path / "fig"
    args = ["reproduce", "huber-fig1", "--runs", "2", "--horizon", "300", "--output", str(out),
            "--workers", "2"]
    assert main(args) == 0
    capsys.readouterr()
    store = out / STORE_NAME
    first = {n: (out / n).read_bytes() for n in ("runs.csv", "curves.csv")}
    with Store(store, create=False) as st:
        assert st.counts() == {"done": 18, "failed": 0, "runs": 36}
        assert st.last_sweep()["name"] == "huber-fig1"
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["files"]["store"] == STORE_NAME and meta["cells_resumed"] == 0

    # an interrupted reproduction: drop 5 finished cells, then --resume runs exactly those
    conn = sqlite3.connect(store)
    dropped = [r[0] for r in conn.execute("SELECT cell_id FROM cells LIMIT 5")]
    conn.executemany("DELETE FROM runs WHERE cell_id = ?", [(c,) for c in dropped])
    conn.executemany("DELETE FROM cells WHERE cell_id = ?", [(c,) for c in dropped])
    conn.commit()
    conn.close()
    assert main([*args, "--resume"]) == 0
    err = capsys.readouterr().err
    assert "resuming: 13 cells already done, 5 to run" in err and err.count("final regret") == 5
    assert json.loads((out / "metadata.json").read_text())["cells_resumed"] == 13
    assert {n: (out / n).read_bytes() for n in first} == first

    # without --resume the store starts afresh
    assert main(args) == 0
    assert capsys.readouterr().err.count("final regret") == 18


@pytest.mark.slow
def test_the_example_sweep_runs(tmp_path, capsys):
    """examples/demo-sweep.toml end to end (about a minute on 2 cores)."""
    store = tmp_path / "demo.sqlite"
    code, out, _ = _sweep(capsys, str(EXAMPLE), "--store", str(store), "--workers", "2",
                          "--progress", "none")
    assert code == 0 and out.startswith("42 cells: 42 finished now, 0 failed")
    with Store(store, create=False) as st:
        assert st.counts() == {"done": 42, "failed": 0, "runs": 14 * 30}


# the same rows on both backends: tests/sweeps/test_dask_backend.py (API) in the default run
@pytest.mark.slow
def test_dask_and_local_backends_store_identical_rows(tiny, tmp_path, capsys):
    pytest.importorskip("distributed")
    exports = []
    for backend in ("local", "dask"):
        store = tmp_path / f"{backend}.sqlite"
        code, out, err = _sweep(capsys, str(tiny), "--store", str(store), "--backend", backend,
                                "--workers", "2", "--progress", "none")
        assert code == 0, err
        assert f"backend {backend}" in out
        assert main(["export", str(store), "--output", "-"]) == 0
        exports.append(capsys.readouterr().out)
    assert exports[0] == exports[1] and exports[0].count("\n") == 25


def test_unreachable_cluster_is_one_clear_line(tiny, tmp_path, monkeypatch, capsys):
    """A backend that cannot connect (no scheduler at --address) ends with exit code 2 and the
    backend's message, not a traceback."""
    import privenv.sweep

    def refuse(*args, **kwargs):
        raise ConnectionError("could not connect to a Dask scheduler at tcp://10.0.0.1:8786")

    monkeypatch.setattr(privenv.sweep, "run_sweep", refuse)
    code = main(["sweep", str(tiny), "--store", str(tmp_path / "s.sqlite"), "--backend", "dask",
                 "--address", "tcp://10.0.0.1:8786"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("privenv sweep: error: could not connect to a Dask scheduler")
    assert "Traceback" not in err
