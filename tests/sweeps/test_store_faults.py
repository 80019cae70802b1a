"""Faults around the results store and the sweep command, each injected for real: two sweeps
started together on one store, a read-only filesystem (a tmpfs mounted read-only), a full disk (a
small tmpfs), a page-corrupted SQLite file, a directory or a file where the store or its parent
should be, an export to a read-only place, and a SIGKILL of a sweep's parent process. Each ends in
one line on stderr and exit code 2 (never a traceback), and loses nothing that was stored."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from privenv.cli import main
from privenv.store import Store, StoreError
from privenv.sweep import SweepConfig, run_sweep

#: 4 cells of about 0.3 s each (a sweep that lasts long enough to overlap another)
CONFIG_A = {
    "name": "a", "runs": 8, "chunk": 2, "horizon": 5000,
    "instances": [{"env": "HuberBandit-v0"}], "agents": [{"name": "ucb1"}],
}
CONFIG_B = {**CONFIG_A, "name": "b", "agents": [{"name": "eps-greedy"}]}
SMALL = {**CONFIG_A, "name": "small", "runs": 4, "horizon": 300}


def _write(tmp_path: Path, name: str, config: dict) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(config))
    return path


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(code: int, err: str, command: str, *words: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(f"privenv {command}: error:"), err
    for word in words:
        assert word in err, err


def _refused(capsys, *args: str, words: tuple[str, ...] = ()) -> None:
    """``privenv *args`` ends in one line naming ``words`` and exit code 2."""
    code, out, err = _cli(capsys, *args)
    _one_line_error(code, err, args[0], *words)


def _sweep_cmd(config: Path, store: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "privenv.cli", "sweep", str(config), "--store", str(store),
            "--workers", "1", "--progress", "none", *extra]


# -- two sweeps on one store --------------------------------------------------------------------


def test_two_different_sweeps_started_together_one_runs_the_other_exits_2(tmp_path, capsys):
    a, b = _write(tmp_path, "a", CONFIG_A), _write(tmp_path, "b", CONFIG_B)
    store = tmp_path / "shared.sqlite"
    procs = [subprocess.Popen(_sweep_cmd(cfg, store), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for cfg in (a, b)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    winner = 0 if results[0][0] == 0 else 1
    code, out, err = results[1 - winner]
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("privenv sweep: error: results store")

    # the store holds the winner's cells only, and stays resumable by the winner's config
    with Store(store, create=False) as st:
        assert st.counts() == {"done": 4, "failed": 0, "runs": 8}
        assert {c["agent"] for c in st.cells()} == {("ucb1", "eps-greedy")[winner]}
    code, out, err = _cli(capsys, "sweep", str((a, b)[winner]), "--store", str(store),
                          "--resume", "--workers", "1", "--progress", "none")
    assert code == 0 and "0 finished now" in out and "4 already done" in out
    # and the other config is refused with one line, as for any store of another sweep
    _refused(capsys, "sweep", str((b, a)[winner]), "--store", str(store), "--resume",
             "--workers", "1", "--progress", "none", words=("not cells of this config",))


def test_a_store_being_written_refuses_a_second_writer_at_once(tmp_path):
    cfg = SweepConfig.from_mapping(SMALL).validate()
    path = tmp_path / "s.sqlite"
    first = Store(path)
    try:
        first.begin_sweep(config_hash=cfg.config_hash, config=cfg.to_dict(),
                          cell_ids=[c.cell_id for c in cfg.cells()], name="first")
        with pytest.raises(StoreError, match="being written by another sweep"):
            run_sweep(cfg, path, workers=1, progress="none", resume=True)
    finally:
        first.close()
    report = run_sweep(cfg, path, workers=1, progress="none", resume=True)  # free again
    assert report.ok and report.done == 2


# -- what the sweep checks before it writes -------------------------------------------------------


def test_sweep_applies_the_agents_env_requirements(tmp_path, capsys):
    """ctb-tt needs BestArmIdentification-v0 with reward_mode='sample' (as `privenv run` sets)."""
    from privenv.simulation import simulate

    config = {"runs": 2, "horizon": 3000, "instances": [{"env": "BestArmIdentification-v0"}],
              "agents": [{"name": "ctb-tt"}, {"name": "gaussian-ldp-ttucb"}]}
    store = tmp_path / "bai.sqlite"
    code, out, err = _cli(capsys, "sweep", str(_write(tmp_path, "bai", config)), "--store",
                          str(store), "--workers", "1", "--progress", "none")
    assert code == 0, err
    with Store(store, create=False) as st:
        stored = {r.agent: r for r in st.results()}
    for name in ("ctb-tt", "gaussian-ldp-ttucb"):
        alone = simulate(name, "BestArmIdentification-v0", n_runs=2, horizon=3000)
        assert stored[name].steps.tolist() == alone.steps.tolist()


@pytest.mark.parametrize("field, value, message", [
    ("seed", 2**64, "seed must be an integer in [0, 2**63 - 1]"),  # not at the first insert
    ("runs", 10**12, "memory"),  # 5·10¹¹ cells: refused before the cell list is built
])
def test_a_config_is_refused_before_any_cell_runs(tmp_path, capsys, field, value, message):
    store = tmp_path / "s.sqlite"
    cfg = _write(tmp_path, "bad", {**SMALL, field: value})
    _refused(capsys, "sweep", str(cfg), "--store", str(store), words=(message,))
    assert not store.exists()


@pytest.mark.parametrize("args", [["--workers", "0"], ["--address", "tcp://localhost:1"],
                                  ["--backend", "ray"]])
def test_a_usage_error_leaves_no_store_behind(tmp_path, capsys, args):
    store = tmp_path / "new.sqlite"
    _refused(capsys, "sweep", str(_write(tmp_path, "s", SMALL)), "--store", str(store), *args)
    assert not store.exists()


# -- the store's path -----------------------------------------------------------------------------


def test_a_directory_as_the_store_or_a_file_as_its_parent(tmp_path, capsys):
    cfg = str(_write(tmp_path, "s", SMALL))
    (tmp_path / "adir").mkdir()
    _refused(capsys, "sweep", cfg, "--store", str(tmp_path / "adir"), words=("is a directory",))
    (tmp_path / "afile").write_text("x")
    _refused(capsys, "sweep", cfg, "--store", str(tmp_path / "afile" / "s.sqlite"),
             words=("not a directory",))
    _refused(capsys, "export", str(tmp_path / "adir"), "--output", "-")


@contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` at ``path`` (root only; the test is skipped elsewhere)."""
    path.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                         capture_output=True, text=True)
    if res.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _remount(path: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], check=True)


def test_a_read_only_filesystem(tmp_path, capsys):
    cfg = str(_write(tmp_path, "s", SMALL))
    with _tmpfs(tmp_path / "ro", "4m") as ro:
        store = ro / "s.sqlite"
        assert _cli(capsys, "sweep", cfg, "--store", str(store), "--workers", "1",
                    "--progress", "none")[0] == 0
        before = (tmp_path / "before.csv")
        assert _cli(capsys, "export", str(store), "--output", str(before))[0] == 0
        _remount(ro, "ro")
        # a new store there, resuming the existing one, an export into it: one line each
        _refused(capsys, "sweep", cfg, "--store", str(ro / "new.sqlite"),
                 words=("Read-only file system",))
        _refused(capsys, "sweep", cfg, "--store", str(store), "--resume", "--workers", "1",
                 "--progress", "none", words=("read-only",))
        _refused(capsys, "export", str(store), "--output", str(ro / "out.csv"),
                 words=("Read-only file system",))
        # reading still works and nothing was lost
        after = tmp_path / "after.csv"
        assert _cli(capsys, "export", str(store), "--output", str(after))[0] == 0
        assert after.read_text() == before.read_text()


def test_a_full_disk_stops_the_sweep_with_one_line_and_loses_nothing(tmp_path, capsys):
    """A 64 kB tmpfs holds the store's first cells, not all 20 (the whole store takes about
    110 kB): the sweep stops at the first cell that does not fit; the cells stored before stay
    intact, and the store, moved to a roomier disk, resumes to exactly an uninterrupted sweep."""
    config = {**SMALL, "runs": 40, "chunk": 2, "horizon": 2000, "n_checkpoints": 200}
    cfg = str(_write(tmp_path, "full", config))
    with _tmpfs(tmp_path / "small", "64k") as small:
        store = small / "s.sqlite"
        _refused(capsys, "sweep", cfg, "--store", str(store), "--workers", "1", "--progress",
                 "none", words=("full", "--resume"))
        with sqlite3.connect(store) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with Store(store, create=False) as st:
            counts = st.counts()
        assert 0 < counts["done"] < 20 and counts["runs"] == 2 * counts["done"]
        moved = tmp_path / "moved.sqlite"
        shutil.copy(store, moved)
    code, out, err = _cli(capsys, "sweep", cfg, "--store", str(moved), "--resume",
                          "--workers", "1", "--progress", "none")
    assert code == 0 and f"{counts['done']} already done" in out
    fresh = tmp_path / "fresh.sqlite"
    assert _cli(capsys, "sweep", cfg, "--store", str(fresh), "--workers", "1",
                "--progress", "none")[0] == 0
    exports = []
    for path in (moved, fresh):
        out_csv = tmp_path / f"{path.stem}.csv"
        assert _cli(capsys, "export", str(path), "--output", str(out_csv))[0] == 0
        exports.append(out_csv.read_text())
    assert exports[0] == exports[1]


def test_an_export_onto_a_full_disk_leaves_no_file(tmp_path, capsys):
    """An export larger than a 4 kB tmpfs: one line naming the full disk; the place holds
    neither a truncated export nor a temporary file (exports are written aside, then renamed)."""
    cfg = str(_write(tmp_path, "s", SMALL))
    store = tmp_path / "s.sqlite"
    assert _cli(capsys, "sweep", cfg, "--store", str(store), "--workers", "1",
                "--progress", "none")[0] == 0
    with _tmpfs(tmp_path / "tiny", "4k") as tiny:
        _refused(capsys, "export", str(store), "--output", str(tiny / "curves.csv"), "--table",
                 "curves", words=("No space left on device",))
        assert list(tiny.iterdir()) == []


def test_a_page_corrupted_store_is_one_line(tmp_path, capsys):
    cfg = str(_write(tmp_path, "s", SMALL))
    store = tmp_path / "s.sqlite"
    assert _cli(capsys, "sweep", cfg, "--store", str(store), "--workers", "1",
                "--progress", "none")[0] == 0
    with sqlite3.connect(store) as conn:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(store.read_bytes())
    for start in range(page, len(data), page):  # every page but the header page
        data[start:start + page] = b"\xa5" * page
    store.write_bytes(bytes(data))
    _refused(capsys, "export", str(store), "--output", "-", words=("damaged",))
    _refused(capsys, "sweep", cfg, "--store", str(store), "--resume", "--workers", "1",
             "--progress", "none", words=("damaged",))
    _refused(capsys, "plot", str(store), "--output", str(tmp_path / "fig"), words=("damaged",))


# -- a killed parent ------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_the_sweep_parent_ends_its_workers(tmp_path):
    config = {**CONFIG_A, "runs": 40, "chunk": 2}
    store = tmp_path / "s.sqlite"
    cmd = _sweep_cmd(_write(tmp_path, "k", config), store)
    cmd[cmd.index("--workers") + 1] = "2"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2:  # both pool workers have started
            assert proc.poll() is None and time.monotonic() < deadline
            workers = [p for p in _children(proc.pid) if _alive(p)]
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the parent only, without warning
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        orphans = [p for p in workers if _alive(p)]
        assert orphans == [], f"pool workers {orphans} outlived their killed parent"
    finally:
        for p in workers:  # never leave them running, whatever the outcome
            if _alive(p):
                os.kill(p, signal.SIGKILL)
