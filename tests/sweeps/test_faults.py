"""Sweep faults (docs/guides/sweeps.md): SIGKILL a sweep mid-way, resume, and compare with an
uninterrupted run (byte-identical export, nothing lost or duplicated); a cell that raises is stored
as failed with its error and the rest of the sweep completes; --resume retries it."""

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from privenv import agents
from privenv.agents import Agent
from privenv.cli import main
from privenv.parameters import Integer, Param
from privenv.store import Store
from privenv.sweep import Cell, SweepConfig, run_cell, run_sweep

#: 2 instances × 2 agents × 5 chunks = 20 cells of about 0.2 s each (2 runs × 2·10⁶ pulls of
#: compiled UCB1 or ε-greedy)
KILL_CONFIG = {
    "name": "kill-test",
    "runs": 10,
    "chunk": 2,
    "horizon": 2_000_000,
    "instances": [{"env": "HuberBandit-v0", "grid": {"alpha": [0.05, 0.1]}}],
    "agents": [{"name": "ucb1"}, {"name": "eps-greedy"}],
}
N_CELLS = 20


def _done_cells(path) -> int:
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM cells WHERE status = 'done'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet, or locked for a moment
        return 0


def _export(capsys, store, out) -> str:
    assert main(["export", str(store), "--format", "csv", "--output", str(out)]) == 0
    capsys.readouterr()
    return out.read_text()


def test_sigkill_then_resume_equals_an_uninterrupted_sweep(tmp_path, capsys):
    config = tmp_path / "kill.json"
    config.write_text(json.dumps(KILL_CONFIG))
    killed = tmp_path / "killed.sqlite"
    cmd = [sys.executable, "-m", "privenv.cli", "sweep", str(config), "--store", str(killed),
           "--workers", "2", "--progress", "none"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # its own process group: workers too
    deadline = time.monotonic() + 120
    try:
        while _done_cells(killed) < 3:
            assert proc.poll() is None, f"the sweep ended before it was killed: {proc.stderr}"
            assert time.monotonic() < deadline, "the sweep made no progress"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, without warning
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    # the killed store: some but not all cells, and every stored cell complete
    with Store(killed, create=False) as store:
        status = store.cell_status()
        assert 3 <= len(status) < N_CELLS and set(status.values()) == {"done"}
        per_cell = [(c["n_runs"], c["cell_id"]) for c in store.cells()]
        counts = dict(store._query("SELECT cell_id, COUNT(*) FROM runs GROUP BY cell_id"))
        assert all(counts[cell_id] == n for n, cell_id in per_cell)
    stored_before = len(status)
    partial = _export(capsys, killed, tmp_path / "partial.csv")
    assert partial.count("\n") == 1 + 2 * stored_before  # header + 2 runs per stored cell

    # resume: only the missing cells run
    assert main(["sweep", str(config), "--store", str(killed), "--resume", "--workers", "2",
                 "--progress", "none"]) == 0
    out = capsys.readouterr().out
    assert f"{N_CELLS - stored_before} finished now" in out
    assert f"{stored_before} already done" in out

    # an uninterrupted sweep of the same config
    fresh = tmp_path / "fresh.sqlite"
    assert main(["sweep", str(config), "--store", str(fresh), "--workers", "2",
                 "--progress", "none"]) == 0
    resumed_csv = _export(capsys, killed, tmp_path / "resumed.csv")
    fresh_csv = _export(capsys, fresh, tmp_path / "fresh.csv")
    assert resumed_csv == fresh_csv  # byte-identical

    rows = list(csv.DictReader(io.StringIO(resumed_csv)))
    keys = [(r["env_kwargs"], r["agent"], int(r["run"])) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * 2 * 10  # none duplicated, none missing
    assert {k[2] for k in keys} == set(range(10))


# -- a cell that raises ---------------------------------------------------------------------------


def fail_one_configuration(cell: Cell):
    """A cell function that raises for one configuration (module level: workers import it)."""
    if cell.agent == "eps-greedy" and cell.env_kwargs["alpha"] == 0.1 and cell.first_run == 2:
        raise RuntimeError("boom in a worker")
    return run_cell(cell)


SMALL = {**KILL_CONFIG, "runs": 4, "horizon": 300}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_cell_is_stored_as_failed_and_the_rest_completes(tmp_path, workers):
    cfg = SweepConfig.from_mapping(SMALL).validate()
    path = tmp_path / "s.sqlite"
    report = run_sweep(cfg, path, workers=workers, progress="none", fn=fail_one_configuration)
    assert not report.ok and len(report.failed) == 1
    cell, error = report.failed[0]
    assert error == "RuntimeError: boom in a worker" and cell.first_run == 2
    assert report.done == len(cfg.cells()) - 1
    with Store(path, create=False) as store:
        [failed] = store.failures()
        assert failed["error"] == "RuntimeError: boom in a worker"
        assert "fail_one_configuration" in failed["traceback"]  # the worker's own traceback
        assert store.counts() == {"done": 7, "failed": 1, "runs": 14}

    # --resume retries the failed cell only, and the result equals an uninterrupted sweep
    again = run_sweep(cfg, path, workers=workers, progress="none", resume=True)
    assert (again.done, again.skipped, again.failed) == (1, 7, [])
    clean = tmp_path / "clean.sqlite"
    run_sweep(cfg, clean, workers=1, progress="none")
    with Store(path, create=False) as a, Store(clean, create=False) as b:
        assert a.table("runs") == b.table("runs") and a.failures() == []


class RaisingAgent(Agent):
    """A test agent that builds fine (so the config validates) and raises while it plays."""

    name = "test-raiser"
    families = ("huber",)
    parameters = {"K": Param(Integer(low=2), problem="K"), "fail_at": Param(Integer(low=0))}

    def __init__(self, K: int, n_runs: int = 1, fail_at: int = 10) -> None:
        super().__init__(n_runs)
        self.K, self.fail_at = K, fail_at

    def reset_state(self) -> None:
        pass

    def act_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.t >= self.fail_at:
            raise RuntimeError(f"test-raiser gives up at t = {self.t}")
        return np.full(self.n_runs, self.t % self.K, dtype=np.int64)

    def observe_batch(self, actions, rewards, observations) -> None:
        self.t += 1


def test_the_command_line_exits_1_when_a_cell_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(agents.REGISTRY, "test-raiser", (__name__, "RaisingAgent"))
    config = tmp_path / "raise.json"
    config.write_text(json.dumps({**SMALL, "agents": [{"name": "ucb1"},
                                                      {"name": "test-raiser"}]}))
    store = tmp_path / "s.sqlite"
    assert main(["sweep", str(config), "--store", str(store), "--workers", "1",
                 "--progress", "none"]) == 1
    captured = capsys.readouterr()
    assert "8 finished now" not in captured.out and "4 finished now, 4 failed" in captured.out
    assert "RuntimeError: test-raiser gives up at t = 10" in captured.err
    assert "--resume" in captured.err
    assert main(["export", str(store), "--output", "-", "--table", "cells"]) == 0
    cells = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sorted(c["status"] for c in cells) == ["done"] * 4 + ["failed"] * 4
    assert {c["agent"] for c in cells if c["status"] == "failed"} == {"test-raiser"}
