"""Row checksums and atomic exports (privenv.store): a byte changed inside a stored row — a value
SQLite itself cannot tell is wrong — is detected on ``export`` (refused, one line naming the run)
and on ``sweep --resume`` (the cell is named and run again); an export that fails half-way leaves
no truncated file; a store of an earlier schema is refused with one line."""

from __future__ import annotations

import errno
import json
import math
import os
import sqlite3
import struct
from pathlib import Path

import pytest

import privenv.store as store_module
from privenv.cli import main
from privenv.store import SCHEMA_VERSION, Store, StoreError, row_checksum

#: 3 cells of 2 runs, a few hundredths of a second each
SMALL = {"name": "small", "runs": 6, "chunk": 2, "horizon": 300,
         "instances": [{"env": "HuberBandit-v0"}], "agents": [{"name": "eps-greedy"}]}


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _swept(tmp_path: Path, capsys, name: str = "s") -> tuple[Path, Path]:
    config = tmp_path / f"{name}.json"
    config.write_text(json.dumps(SMALL))
    store = tmp_path / f"{name}.sqlite"
    code, _, err = _cli(capsys, "sweep", str(config), "--store", str(store), "--workers", "1",
                        "--progress", "none")
    assert code == 0, err
    return config, store


def _flip_inside(store: Path, sql: str, pick) -> bytes:
    """Change one byte of the stored value that ``sql`` selects (``pick(text) -> index`` of the
    byte within it), in the file itself, as a disk fault or a stray editor would; returns the
    value's old text. The file stays a valid SQLite database."""
    with sqlite3.connect(store) as conn:
        value = conn.execute(sql).fetchone()[0]
    # (SQLite writes a REAL as a big-endian binary64)
    old = value.encode() if isinstance(value, str) else struct.pack(">d", value)
    data = bytearray(store.read_bytes())
    at = data.find(old)
    assert at > 0 and data.find(old, at + 1) == -1  # found once: we change that value only
    i = pick(old)
    data[at + i] = ord("7") if data[at + i] != ord("7") else ord("3")
    store.write_bytes(bytes(data))
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # SQLite sees nothing
    return old


def _a_digit_after(offset: int):
    def pick(text: bytes) -> int:
        return next(i for i in range(offset, len(text)) if chr(text[i]).isdigit())
    return pick


def test_a_changed_byte_in_a_run_is_refused_on_export_and_rerun_on_resume(tmp_path, capsys):
    config, store = _swept(tmp_path, capsys)
    reference = tmp_path / "reference.csv"
    assert _cli(capsys, "export", str(store), "--output", str(reference))[0] == 0
    # one digit inside run 3's regret curve (a value the export prints)
    _flip_inside(store, "SELECT curve FROM runs WHERE run = 3", _a_digit_after(20))

    out = tmp_path / "out.csv"
    code, stdout, err = _cli(capsys, "export", str(store), "--output", str(out))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("privenv export: error:") and "run 3 of cell" in err
    assert "checksums do not match" in err and "--resume" in err
    assert not out.exists()  # nothing exported
    code, _, err = _cli(capsys, "export", str(store), "--output", "-")
    assert code == 2 and "run 3 of cell" in err
    code, _, err = _cli(capsys, "plot", str(store), "--output", str(tmp_path / "fig"))
    assert code == 2 and "run 3 of cell" in err
    with Store(store, create=False) as st, pytest.raises(StoreError, match="run 3 of cell"):
        st.results()

    # --resume names the cell, removes it and runs it again: the store is as if never changed
    code, stdout, err = _cli(capsys, "sweep", str(config), "--store", str(store), "--resume",
                             "--workers", "1", "--progress", "none")
    assert code == 0, err
    assert "run 3 of cell" in err and "runs again" in err and err.count("\n") == 1
    assert "1 finished now" in stdout and "2 already done" in stdout
    assert _cli(capsys, "export", str(store), "--output", str(out))[0] == 0
    assert out.read_text() == reference.read_text()


def test_a_changed_cell_record_is_detected_too(tmp_path, capsys):
    """A changed byte in a cell's own record (the last byte of its wall time, a binary REAL) and
    a byte made invalid UTF-8 in a run: both are found, and resume runs both cells again."""
    config, store = _swept(tmp_path, capsys)
    reference = tmp_path / "reference.csv"
    assert _cli(capsys, "export", str(store), "--output", str(reference))[0] == 0
    _flip_inside(store, "SELECT wall_s FROM cells WHERE first_run = 4", lambda b: len(b) - 1)
    with sqlite3.connect(store) as conn:
        curve = conn.execute("SELECT curve FROM runs WHERE run = 0").fetchone()[0].encode()
    data = bytearray(store.read_bytes())
    data[data.find(curve) + 5] = 0xFF  # not UTF-8: read as U+FFFD, which fails the checksum
    store.write_bytes(bytes(data))

    with Store(store, create=False) as st:
        found = st.verify()
    assert len(found) == 2
    assert any("the record of cell" in f for f in found) and any("run 0 of cell" in f
                                                                for f in found)
    code, _, err = _cli(capsys, "export", str(store), "--output", "-")
    assert code == 2 and "2 row(s) changed" in err and err.count("\n") == 1

    code, stdout, err = _cli(capsys, "sweep", str(config), "--store", str(store), "--resume",
                             "--workers", "1", "--progress", "none")
    assert code == 0 and err.count("\n") == 2 and "2 finished now" in stdout
    out = tmp_path / "out.csv"
    assert _cli(capsys, "export", str(store), "--output", str(out))[0] == 0
    assert out.read_text() == reference.read_text()


def test_the_checksum_covers_every_column_and_reads_back_equal(tmp_path, capsys):
    """Each stored row's checksum is that of its values read back (a store just written
    verifies), and changing any one column of a row through SQLite changes it."""
    _, store = _swept(tmp_path, capsys)
    with Store(store, create=False) as st:
        assert st.verify() == []
    conn = sqlite3.connect(store)
    for table in ("cells", "runs"):
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")
                   if r[1] != "checksum"]
        kinds = [r[2] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] != "checksum"]
        row = conn.execute(f"SELECT {', '.join(columns)}, checksum FROM {table} "
                           "WHERE rowid = 1").fetchone()
        assert row_checksum(kinds, row[:-1]) == row[-1]
        for i in range(len(columns)):
            changed = list(row[:-1])
            v = changed[i]
            if v is None:
                changed[i] = "x" if kinds[i] == "TEXT" else 1
            else:
                changed[i] = (v + "x" if isinstance(v, str) else
                              v + 1 if math.isfinite(v) else 1.0)
            assert row_checksum(kinds, changed) != row[-1], (table, columns[i])
    conn.close()


def test_a_failed_export_leaves_no_truncated_file(tmp_path, capsys, monkeypatch):
    """The disk fills half-way through the CSV: one line, exit 2; no file where there was none,
    the previous export intact where there was one, and no temporary file left behind."""
    _, store = _swept(tmp_path, capsys)
    out_dir = tmp_path / "exports"
    out_dir.mkdir()
    previous = out_dir / "old.csv"
    previous.write_text("the previous export\n")
    real = store_module._write_csv

    def full_disk(f, columns, rows):
        real(f, columns, rows[: len(rows) // 2])
        f.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store_module, "_write_csv", full_disk)
    for target in (out_dir / "new.csv", previous):
        code, _, err = _cli(capsys, "export", str(store), "--output", str(target))
        assert code == 2 and err.count("\n") == 1 and "No space left on device" in err
    assert sorted(p.name for p in out_dir.iterdir()) == ["old.csv"]
    assert previous.read_text() == "the previous export\n"
    monkeypatch.undo()
    assert _cli(capsys, "export", str(store), "--output", str(previous))[0] == 0
    assert previous.read_text().startswith("env,env_kwargs,agent")
    assert sorted(p.name for p in out_dir.iterdir()) == ["old.csv"]
    # the file has the mode a plain open() gives, not the temporary file's 0o600
    umask = os.umask(0)
    os.umask(umask)
    assert previous.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_store_of_an_earlier_schema_is_refused_with_one_line(tmp_path, capsys, version):
    _, store = _swept(tmp_path, capsys)
    with sqlite3.connect(store) as conn:
        conn.execute(f"PRAGMA user_version={version}")
    for args in (("export", str(store), "--output", "-"),
                 ("plot", str(store), "--output", str(tmp_path / "fig"))):
        code, _, err = _cli(capsys, *args)
        assert code == 2 and err.count("\n") == 1
        assert f"schema {version}" in err and f"reads schema {SCHEMA_VERSION}" in err
