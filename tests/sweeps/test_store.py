"""The SQLite results store: exact round trip, one transaction per cell, no duplicates, resume
rules, failed cells, exports (CSV, Parquet, pandas) sorted deterministically."""

import csv
import io
import math
import sqlite3
import sys

import numpy as np
import pytest

from privenv.store import Store, StoreError
from privenv.sweep import Cell, SweepConfig, run_cell, run_sweep

CONFIG = {
    "name": "store-test",
    "runs": 4,
    "chunk": 2,
    "horizon": 300,
    "instances": [{"env": "HuberBandit-v0", "grid": {"alpha": [0.05, 0.1]}}],
    "agents": [{"name": "ucb1"}, {"name": "dprse", "params": {"epsilon": 0.5}}],
}


def config(**changes) -> SweepConfig:
    return SweepConfig.from_mapping({**CONFIG, **changes}).validate()


@pytest.fixture(scope="module")
def done_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s.sqlite"
    report = run_sweep(config(), path, workers=1, progress="none")
    assert report.ok and report.done == 8
    return path


def _begin(store: Store, cfg: SweepConfig, resume: bool = False) -> int:
    return store.begin_sweep(config_hash=cfg.config_hash, config=cfg.to_dict(),
                             cell_ids=[c.cell_id for c in cfg.cells()], name=cfg.name,
                             resume=resume)


def test_results_read_back_exactly(tmp_path):
    cell = Cell("HuberBandit-v0", {"alpha": 0.05}, "prae-c", {"epsilon": 0.5}, 500, 0, 3, 4)
    result = run_cell(cell)
    with Store(tmp_path / "s.sqlite") as store:
        store.record_result(result, "hash")
    with Store(tmp_path / "s.sqlite", create=False) as store:
        [back] = store.results()
        [row] = store.cells()
    np.testing.assert_array_equal(back.runs, [3, 4, 5, 6])
    assert np.array_equal(back.regret_curve, result.regret_curve)  # bit for bit
    assert np.array_equal(back.checkpoint_times, result.checkpoint_times)
    assert np.array_equal(back.steps, result.steps)
    assert back.privacy == result.privacy  # the guarantee itself, read back
    assert back.privacy.epsilon == 0.5 and back.privacy.model == "central"
    assert back.agent_params == result.agent_params and back.agent_params["epsilon"] == 0.5
    assert back.config_id == cell.config_id
    assert row["status"] == "done" and row["versions"]["numpy"] == np.__version__
    assert row["wall_s"] > 0 and row["worker"] and row["config_hash"] == "hash"
    # the loop's and the kernels' shares of the cell's time, kept apart (ns_per_run_step reads
    # the loop's)
    assert 0 <= row["compile_s"] <= row["wall_s"] and 0 < row["loop_s"] <= row["wall_s"]
    assert (back.compile_s, back.loop_s) == (result.compile_s, result.loop_s)
    assert back.ns_per_run_step == result.ns_per_run_step


def test_non_private_epsilon_inf_and_bai_episode_values(tmp_path):
    cells = [Cell("HuberBandit-v0", {}, "ucb1", {}, 50, 0, 0, 2),
             Cell("BestArmIdentification-v0", {}, "dp-se", {"epsilon": 1.0}, 300, 0, 0, 2)]
    with Store(tmp_path / "s.sqlite") as store:
        for c in cells:
            store.record_result(run_cell(c), "hash")
        by_env = {r.env: r for r in store.results()}
    assert math.isinf(by_env["HuberBandit-v0"].privacy.epsilon)
    assert by_env["HuberBandit-v0"].episode == {}
    bai = by_env["BestArmIdentification-v0"]
    assert set(bai.episode) == {"stopping_time", "recommendation", "correct"}
    assert bai.episode["correct"].dtype == bool


def test_a_cell_is_one_transaction(tmp_path, monkeypatch):
    result = run_cell(Cell("HuberBandit-v0", {}, "ucb1", {}, 50, 0, 0, 3))
    store = Store(tmp_path / "s.sqlite")

    class Boom(Exception):
        pass

    real = sqlite3.Connection.executemany

    class Conn:  # the real connection, except that inserting the runs fails half-way
        def __init__(self, conn):
            self.conn = conn

        def execute(self, *a):
            return self.conn.execute(*a)

        def executemany(self, sql, rows):
            rows = list(rows)
            real(self.conn, sql, rows[:1])  # one run row written, then the "crash"
            raise Boom

    monkeypatch.setattr(store, "_conn", Conn(store._conn))
    with pytest.raises(Boom):
        store.record_result(result, "hash")
    monkeypatch.undo()
    assert store.counts() == {"done": 0, "failed": 0, "runs": 0}  # rolled back: nothing
    store.record_result(result, "hash")
    assert store.counts() == {"done": 1, "failed": 0, "runs": 3}
    store.close()


def test_a_done_cell_is_never_stored_twice(tmp_path):
    result = run_cell(Cell("HuberBandit-v0", {}, "ucb1", {}, 50, 0, 0, 3))
    with Store(tmp_path / "s.sqlite") as store:
        store.record_result(result, "hash")
        with pytest.raises(StoreError, match="already stored as done"):
            store.record_result(result, "hash")
        with pytest.raises(StoreError, match="already stored as done"):
            store.record_failure(result.cell, "RuntimeError: x", "tb", "hash")
        # the primary key (configuration, run) refuses a run twice even from another chunking
        overlapping = run_cell(Cell("HuberBandit-v0", {}, "ucb1", {}, 50, 0, 2, 2))
        with pytest.raises(StoreError, match="UNIQUE constraint failed: runs.config_id"):
            store.record_result(overlapping, "hash")
        assert store.counts() == {"done": 1, "failed": 0, "runs": 3}


def test_a_failed_cell_is_replaced_when_it_succeeds(tmp_path):
    cell = Cell("HuberBandit-v0", {}, "ucb1", {}, 50, 0, 0, 2)
    with Store(tmp_path / "s.sqlite") as store:
        store.record_failure(cell, "RuntimeError: boom", "Traceback ...", "hash")
        [failed] = store.failures()
        assert failed["error"] == "RuntimeError: boom" and failed["traceback"] == "Traceback ..."
        assert store.cell_status() == {cell.cell_id: "failed"} and store.results() == []
        store.record_result(run_cell(cell), "hash")
        assert store.cell_status() == {cell.cell_id: "done"}
        assert store.failures() == [] and store.counts()["runs"] == 2


def test_resume_rules(tmp_path):
    path = tmp_path / "s.sqlite"
    base = config()
    run_sweep(base, path, workers=1, progress="none")
    with Store(path) as store:
        with pytest.raises(StoreError, match="already holds 8 cells .* pass --resume"):
            _begin(store, base)
        _begin(store, base, resume=True)  # the same config
        # an extension (another agent, more chunks of the same size) may resume the store
        bigger = config(runs=6, agents=[*CONFIG["agents"], {"name": "eps-greedy"}])
        _begin(store, bigger, resume=True)
        # anything whose cells differ (here: another chunk size) is refused
        for other in (config(chunk=4), config(seed=1), config(horizon=400)):
            with pytest.raises(StoreError, match="not cells of this config"):
                _begin(store, other, resume=True)
        assert len(store.sweeps()) == 3  # the refused ones were not recorded


def test_resume_skips_done_cells_and_extends(tmp_path):
    path = tmp_path / "s.sqlite"
    first = run_sweep(config(), path, workers=1, progress="none")
    again = run_sweep(config(), path, workers=1, progress="none", resume=True)
    assert (first.done, again.done, again.skipped) == (8, 0, 8)
    more = run_sweep(config(runs=6), path, workers=1, progress="none", resume=True)
    assert (more.done, more.skipped) == (4, 8)
    with Store(path, create=False) as store:
        assert store.counts() == {"done": 12, "failed": 0, "runs": 24}


def test_the_sweep_record_says_whether_it_ran_with_resume(tmp_path):
    """``sweeps.resumed`` is the invocation's --resume, also on an empty store (it was 0 there)."""
    path = tmp_path / "s.sqlite"
    small = config(runs=2, agents=[{"name": "ucb1"}])
    run_sweep(small, path, workers=1, progress="none", resume=True)  # an empty store, --resume
    run_sweep(small, path, workers=1, progress="none", resume=True)
    other = tmp_path / "other.sqlite"
    run_sweep(small, other, workers=1, progress="none")
    with Store(path, create=False) as store, Store(other, create=False) as plain:
        assert [s["resumed"] for s in store.sweeps()] == [1, 1]
        assert [s["resumed"] for s in plain.sweeps()] == [0]


def test_csv_export_is_sorted_and_complete(done_store, tmp_path):
    with Store(done_store, create=False) as store:
        path = store.export(tmp_path / "runs.csv")
        columns, rows = store.table("runs")
    text = path.read_text()
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert len(parsed) == 16 and list(parsed[0]) == columns
    keys = [(r["env"], r["agent"], r["env_kwargs"], r["agent_kwargs"], int(r["run"]))
            for r in parsed]
    assert keys == sorted(keys) and len(set(keys)) == 16
    assert {r["env.alpha"] for r in parsed} == {"0.05", "0.1"}
    assert {r["agent.epsilon"] for r in parsed} == {"0.5", ""}  # ucb1 has no epsilon
    assert {r["privacy_epsilon"] for r in parsed if r["agent"] == "ucb1"} == {"inf"}
    for r in parsed:
        assert float(r["regret"]) >= 0 and r["stopping_time"] == ""
    # curves: one row per run and checkpoint, final value = the run's regret
    with Store(done_store, create=False) as store:
        ccols, crows = store.table("curves")
        cells_cols, cell_rows = store.table("cells")
    assert ccols[-2:] == ["t", "regret"]
    finals = {(r[0], r[1], r[2], r[3], r[6]): r[-1] for r in crows if r[-2] == 300}
    assert len(finals) == 16
    assert all(finals[(r[0], r[1], r[2], r[3], r[6])] == r[columns.index("regret")]
               for r in rows)
    assert len(cell_rows) == 8 and "status" in cells_cols


def test_pandas_and_parquet(done_store, tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    with Store(done_store, create=False) as store:
        frame = store.to_frame()
        store.export(tmp_path / "runs.parquet", format="parquet")
    assert len(frame) == 16 and frame["regret"].dtype == float
    back = pd.read_parquet(tmp_path / "runs.parquet")
    assert list(back.columns) == list(frame.columns)
    pd.testing.assert_series_equal(back["regret"], frame["regret"])
    assert back["run"].tolist() == frame["run"].tolist()


def test_parquet_without_pyarrow_is_a_clear_error(done_store, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with Store(done_store, create=False) as store:
        with pytest.raises(ValueError, match="Parquet export needs pyarrow"):
            store.export(tmp_path / "runs.parquet", format="parquet")
        with pytest.raises(ValueError, match="format must be one of"):
            store.export(tmp_path / "runs.xlsx", format="xlsx")


def test_opening_errors(tmp_path):
    with pytest.raises(StoreError, match="no results store"):
        Store(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database, just text " * 100)
    with pytest.raises(StoreError, match="not a results store"):
        Store(junk, create=False)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()
    with pytest.raises(StoreError, match="not a privenv results store"):
        Store(empty, create=False)
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE mine (x INTEGER)")
    conn.commit()
    conn.close()
    for create in (True, False):  # never written into, never read as a store
        with pytest.raises(StoreError, match="not a privenv results store"):
            Store(other, create=create)
    conn = sqlite3.connect(other)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["mine"]
    conn.close()


def test_summary(done_store):
    with Store(done_store, create=False) as store:
        rows = store.summary()
        results = {(r.agent, r.env_kwargs["alpha"]): r for r in store.results()}
    assert len(rows) == 4 and all(r["runs"] == 4 and r["failed_cells"] == 0 for r in rows)
    for r in rows:
        x = results[(r["agent"], r["env_kwargs"]["alpha"])].regret
        assert r["regret_mean"] == pytest.approx(x.mean()) and r["regret_sd"] == pytest.approx(
            x.std(ddof=1))


def test_one_results_record_and_no_import_circle():
    """simulate, a sweep's cell and the store's read-back are one record (RunResults); the store
    imports neither the sweeps nor the simulation, so nothing imports in a circle."""
    import ast
    from pathlib import Path

    import privenv
    from privenv.results import RunResults
    from privenv.simulation import simulate

    cell = Cell("HuberBandit-v0", {}, "ucb1", {}, 50, 0, 0, 2)
    computed = run_cell(cell)
    assert type(computed) is RunResults and computed.cell == cell
    assert type(simulate("ucb1", horizon=50)) is RunResults
    root = Path(privenv.__file__).parent

    def imports(path: Path) -> set[str]:
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        return found

    store = imports(root / "store.py")
    assert not any(m.startswith(("privenv.sweep", "privenv.simulation", "privenv.plotting"))
                   for m in store), store
    assert not any(m.startswith(("privenv.sweep", "privenv.store", "privenv.simulation"))
                   for m in imports(root / "results.py"))
    config = imports(root / "sweep" / "config.py")
    assert not any(m.startswith(("privenv.store", "privenv.sweep.run")) for m in config)
