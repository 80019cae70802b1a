"""The results store of sweeps: one SQLite file, one row per run, written as each cell finishes.

Only the process that runs the sweep writes (:func:`privenv.sweep.run_sweep`, never a worker), and
each finished cell is **one transaction**: its metadata row and all its run rows commit together
or not at all. A sweep killed at any moment (Ctrl-C, SIGKILL, a dead machine) therefore leaves
every cell either complete or absent — never half a cell — and ``--resume`` runs exactly the
absent (and the failed) ones. The primary key of a run is (configuration, run index), so a run can
never be stored twice. A sweep holds the store's writer lock while it runs
(:meth:`Store.begin_sweep`), so a second sweep on the same store is refused at once.

Every SQLite or file-system fault — a damaged (page-corrupted) file, a full disk, a read-only file
system, a directory where the file should be — is a :class:`StoreError` of one line naming the
store and what to do; a transaction it interrupts is rolled back, so what was stored stays intact.
Records are :class:`privenv.results.RunResults` (a cell's result in, a configuration's runs out).

**Row checksums.** SQLite checks its pages, not what they hold: a byte changed inside a stored
value (a disk fault, an editor, a stray script) leaves a valid database with a wrong number in
it. Every ``cells`` and ``runs`` row therefore carries a checksum of its content (BLAKE2b, 128
bits, over the row's values in column order, :func:`row_checksum`), written in the transaction
that writes the row. Every read that returns results (:meth:`Store.results`, :meth:`Store.table`
and so the exports, :meth:`Store.summary`) verifies every row first and refuses, in one line
naming the row, a store with a row whose content no longer matches; ``--resume``
(:meth:`Store.begin_sweep` with ``resume=True``) removes each cell with such a row (its cells row
and all its runs), names it on stderr, and runs it again.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`)::

    sweeps  one row per invocation of a sweep on this store (history, provenance)
            sweep_id, config_hash, name, config (canonical expanded config, JSON), source (the
            config file's text), n_cells, backend, resumed (1: run with --resume),
            started (UTC), versions (JSON)
    cells   one row per finished cell (a chunk of runs of one configuration)
            cell_id (PK), config_id, env, env_kwargs (JSON), agent, agent_kwargs (JSON), horizon,
            seed, first_run, n_runs, n_checkpoints,
            status ('done' | 'failed'), error, traceback,
            privacy, privacy_model, privacy_epsilon, privacy_delta, privacy_unit,
            privacy_neighbouring, privacy_sampler (schema 2; 'float' for every schema-1 cell),
            agent_params (JSON, the agent's resolved constructor parameters),
            checkpoint_times (JSON), versions (JSON), wall_s, compile_s, loop_s (schema 4: of
            wall_s, the seconds compiling or loading kernels and the seconds of the runs' loop
            alone; NULL where unknown), worker (host:pid), finished (UTC), config_hash, sweep_id,
            checksum (of the row's other columns)
    runs    one row per run of a done cell
            config_id, run (PK together), cell_id, steps, regret (final cumulative pseudo-regret),
            stopping_time, recommendation, correct (best-arm identification; NULL otherwise),
            extra (JSON of any other per-run episode values, or NULL),
            curve (JSON array: the cumulative regret at the cell's checkpoint_times),
            checksum (of the row's other columns)

A store of an earlier schema (1 or 2: no checksums; 3: no compile_s and loop_s) is refused with
one line; export it with the privenv that wrote it, or run its sweep again into a new store.

JSON text columns are canonical (sorted keys, no spaces), so equal kwargs compare equal as text;
floats are written with Python's shortest round-trip ``repr``, so numbers read back are the
numbers computed.

Exports (:meth:`Store.export`, :meth:`Store.to_frame`) are sorted by (env, agent, env_kwargs,
agent_kwargs, horizon, seed, run) and hold nothing that depends on timing, chunking or the
backend: an interrupted-and-resumed sweep exports byte for byte what an uninterrupted one does.
An export to a file is written to a temporary file beside it and renamed over it once complete,
so a failed export (a full disk, Ctrl-C) leaves no truncated file and any previous file intact.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no writer lock
    fcntl = None  # type: ignore[assignment]

from privenv._stats import sample_sd
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.results import Cell, RunResults, canonical_json, utc_now, versions

SCHEMA_VERSION = 4

#: per-run episode values with their own column (others go to ``extra``)
EPISODE_COLUMNS = ("stopping_time", "recommendation", "correct")

#: privacy columns of a cell (from :meth:`privenv.privacy.guarantee.PrivacyGuarantee.as_dict`)
PRIVACY_COLUMNS = ("privacy", "privacy_model", "privacy_epsilon", "privacy_delta",
                   "privacy_unit", "privacy_neighbouring", "privacy_sampler")

#: the tables whose rows carry a checksum (the rows that hold results)
CHECKED_TABLES = ("cells", "runs")

CONFIG_COLUMNS = ("env", "env_kwargs", "agent", "agent_kwargs", "horizon", "seed",
                  "n_checkpoints")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sweeps (
    sweep_id INTEGER PRIMARY KEY AUTOINCREMENT,
    config_hash TEXT NOT NULL,
    name TEXT,
    config TEXT NOT NULL,
    source TEXT,
    n_cells INTEGER NOT NULL,
    backend TEXT,
    resumed INTEGER NOT NULL,
    started TEXT NOT NULL,
    versions TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    cell_id TEXT PRIMARY KEY,
    config_id TEXT NOT NULL,
    env TEXT NOT NULL,
    env_kwargs TEXT NOT NULL,
    agent TEXT NOT NULL,
    agent_kwargs TEXT NOT NULL,
    horizon INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    first_run INTEGER NOT NULL,
    n_runs INTEGER NOT NULL,
    n_checkpoints INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    error TEXT,
    traceback TEXT,
    {", ".join(f"{c} {'REAL' if c in ('privacy_epsilon', 'privacy_delta') else 'TEXT'}"
               for c in PRIVACY_COLUMNS)},
    agent_params TEXT,
    checkpoint_times TEXT,
    versions TEXT,
    wall_s REAL,
    compile_s REAL,
    loop_s REAL,
    worker TEXT,
    finished TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    sweep_id INTEGER REFERENCES sweeps (sweep_id),
    checksum TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    config_id TEXT NOT NULL,
    run INTEGER NOT NULL,
    cell_id TEXT NOT NULL REFERENCES cells (cell_id),
    steps INTEGER NOT NULL,
    regret REAL NOT NULL,
    stopping_time INTEGER,
    recommendation INTEGER,
    correct INTEGER,
    extra TEXT,
    curve TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (config_id, run)
);
CREATE INDEX IF NOT EXISTS runs_by_cell ON runs (cell_id);
"""

_ORDER = "c.env, c.agent, c.env_kwargs, c.agent_kwargs, c.horizon, c.n_checkpoints, c.seed"


class StoreError(ValueError):
    """A results store cannot be used as asked (missing, another sweep's, another schema,
    damaged, a row changed after it was written, being written by another sweep, or on a full or
    read-only disk)."""


def _column_value(kind: str, value: Any) -> Any:
    """``value`` as SQLite gives it back from a column of declared type ``kind``: the form a
    checksum is computed on, whether the row is being written or was read back."""
    if value is None:
        return None
    if kind == "INTEGER":
        return int(value)
    if kind == "REAL":
        v = float(value)
        if math.isnan(v):  # SQLite stores NaN as NULL
            return None
        return 0.0 if v == 0.0 else v  # (and -0.0 as 0.0)
    return str(value)


def row_checksum(kinds: Sequence[str], values: Sequence[Any]) -> str:
    """The checksum of one row: BLAKE2b (128 bits) of its values in column order (``kinds``:
    each column's declared type), as canonical JSON (floats as their shortest round-trip
    ``repr``)."""
    text = json.dumps([_column_value(k, v) for k, v in zip(kinds, values, strict=True)],
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already (it does on a full disk)."""
    try:
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError:  # "no transaction is active"
        pass


def _store_error(path: Path, e: BaseException, doing: str = "use") -> StoreError:
    """A one-line :class:`StoreError` for a SQLite or file-system error on the store at
    ``path`` (what went wrong and what to do)."""
    text = str(e) if isinstance(e, sqlite3.Error) else (getattr(e, "strerror", None) or str(e))
    name = repr(str(path))
    low = text.lower()
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return StoreError(f"results store {name} is damaged (SQLite: {text}); it cannot be read "
                          "reliably: restore it from a copy, or run the sweep into a new store")
    if "full" in low:
        return StoreError(f"cannot write to results store {name}: {text}; the cells stored "
                          "before are kept: free space (or move the store), then rerun with "
                          "--resume")
    if isinstance(e, sqlite3.IntegrityError):
        return StoreError(f"results store {name} refuses the write: {text} (a run stored twice: "
                          "two sweeps writing one store, or overlapping chunks)")
    if "readonly" in low or "read-only" in low:
        return StoreError(f"cannot write to results store {name}: it is read-only ({text})")
    return StoreError(f"cannot {doing} results store {name}: {text}")


class Store:
    """A SQLite results store.

    Args:
        path: the database file.
        create: create it (and its directory) if missing; ``False`` raises :class:`StoreError`
            for a missing file and opens the store for reading (the write methods refuse).
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path)
        self.readonly = not create
        self._lock_fd: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._created = False  # this object created the file (removed again if unusable)
        if self.path.is_dir():
            raise StoreError(f"results store {str(self.path)!r} is a directory; give the path "
                             "of a file (e.g. results.sqlite)")
        try:
            self._open(create)
        except sqlite3.Error as e:
            self._discard()
            raise _store_error(self.path, e, "open") from e
        except OSError as e:
            self._discard()
            raise _store_error(self.path, e, "create" if create else "open") from e
        except BaseException:
            self._discard()
            raise

    def _discard(self) -> None:
        """Close after a failed open, removing the file if this object created it and it is
        still empty (never a file another process has begun to use meanwhile)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        try:
            if self._created and self.path.stat().st_size == 0:
                self.path.unlink()
        except OSError:  # gone already, or a read-only file system: nothing to remove
            pass

    def _open(self, create: bool) -> None:
        if create:
            parent = self.path.parent
            for p in (parent, *parent.parents):
                if p.exists():
                    if not p.is_dir():
                        raise StoreError(f"cannot create results store {str(self.path)!r}: "
                                         f"{str(p)!r} is not a directory")
                    break
            parent.mkdir(parents=True, exist_ok=True)
            try:  # (an OSError here names the cause, unlike SQLite's "unable to open")
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                self._created = True
            except FileExistsError:
                pass
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        else:
            if not self.path.is_file():
                raise StoreError(f"no results store at {str(self.path)!r}")
            # read-write if possible, so that SQLite can roll back a cell a killed sweep left
            # half-written (a "hot journal"); this object itself never writes
            uri = self.path.resolve().as_uri()
            try:
                conn = sqlite3.connect(f"{uri}?mode=rw", uri=True, timeout=30.0,
                                       isolation_level=None)
            except sqlite3.OperationalError:  # a read-only file or directory
                conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0,
                                       isolation_level=None)
        conn.row_factory = sqlite3.Row
        # text that a changed byte made invalid UTF-8 reads as U+FFFD (and fails its checksum)
        # instead of raising in the middle of a read
        conn.text_factory = lambda b: b.decode("utf-8", "replace")
        self._conn = conn
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            if "not a database" in str(e):
                raise StoreError(f"{str(self.path)!r} is not a results store (SQLite): "
                                 f"{e}") from e
            raise
        if version > SCHEMA_VERSION:
            raise StoreError(f"{str(self.path)!r} has store schema {version}; this privenv "
                             f"reads schema {SCHEMA_VERSION} (upgrade privenv)")
        if 0 < version < SCHEMA_VERSION:
            lacks = "row checksums" if version < 3 else "the compile_s and loop_s timings"
            raise StoreError(f"{str(self.path)!r} has store schema {version}, written by an "
                             f"earlier privenv without {lacks}; this privenv reads schema "
                             f"{SCHEMA_VERSION}: export it with the privenv that wrote it, or run "
                             "its sweep again into a new store")
        if version == 0 and conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
            self._created = False  # someone else's database: never add tables to it
            raise StoreError(f"{str(self.path)!r} is a SQLite database but not a privenv "
                             "results store")
        # (SQLite's default rollback journal: the store stays one file, a commit is durable)
        if create:
            conn.execute("PRAGMA foreign_keys=ON")
            if version == 0:
                with self._transaction():  # DDL is transactional in SQLite
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version == 0:
            raise StoreError(f"{str(self.path)!r} is not a privenv results store")
        self._created = False  # a usable store from here on
        #: each checked table's columns but the checksum, in order, and their declared types
        self._columns = {t: [(r[1], r[2].upper()) for r in conn.execute(f"PRAGMA table_info({t})")
                             if r[1] != "checksum"] for t in CHECKED_TABLES}
        self._verified: int | None = None  # PRAGMA data_version when every row last verified
        #: the cells :meth:`begin_sweep` removed for a row that failed its checksum (resume)
        self.removed_corrupt: list[str] = []

    # -- plumbing -------------------------------------------------------------------------------

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._lock_fd is not None:  # after the connection (see _lock_for_writing)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self.readonly:
            raise StoreError(f"results store {str(self.path)!r} was opened for reading "
                             "(create=False)")
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                _rollback(conn)
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            _rollback(conn)
            raise _store_error(self.path, e, "write to") from e

    def _connection(self) -> sqlite3.Connection:
        """The connection; ``StoreError`` once the store is closed."""
        if self._conn is None:
            raise StoreError(f"results store {str(self.path)!r} is closed")
        return self._conn

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            return self._connection().execute(sql, params).fetchall()
        except sqlite3.Error as e:
            raise _store_error(self.path, e, "read") from e

    def _lock_for_writing(self) -> None:
        """Take the store's writer lock, held until :meth:`close`: one sweep writes a store at a
        time, and a second one is refused at once (whatever its config).

        An exclusive ``flock`` on the database file, which the kernel releases when the process
        ends however it ends (SIGKILL included), so a killed sweep never leaves the store locked.
        It is independent of SQLite's own (``fcntl``) locks; the descriptor is closed only after
        the SQLite connection. On a file system without ``flock`` the lock is skipped (each
        cell's transaction still refuses a cell stored twice)."""
        if self._lock_fd is not None or fcntl is None:
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreError(f"results store {str(self.path)!r} is being written by another "
                             "sweep; wait until it ends (then --resume extends it), or choose "
                             "another store") from None
        except OSError:  # no flock on this file system
            os.close(fd)
            return
        self._lock_fd = fd

    @staticmethod
    def is_being_written(path: str | os.PathLike[str]) -> bool:
        """Whether a sweep holds the writer lock of the store at ``path`` now."""
        if fcntl is None:
            return False
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)
        return False

    # -- writing (the sweep's parent process only) ----------------------------------------------

    def begin_sweep(
        self,
        *,
        config_hash: str,
        config: dict[str, Any],
        cell_ids: Sequence[str],
        name: str | None = None,
        source: str | None = None,
        backend: str | None = None,
        resume: bool = False,
    ) -> int:
        """Check that this sweep may write here and record it; returns its ``sweep_id``. Takes
        the store's writer lock (held until :meth:`close`): a store another sweep is writing is
        refused at once.

        An empty store takes any sweep. A store with cells takes one only with ``resume``, and
        only if every stored cell (done or failed) is a cell of the new sweep — the same config,
        or one that extends it (more agents, instances, parameter values, or more chunks of the
        same size). Anything else is refused: its runs could not be told apart from this sweep's.
        """
        self._lock_for_writing()
        # the check and the record in one write transaction: nothing can come in between
        with self._transaction() as conn:
            if resume:  # a cell with a changed row is removed here, and so runs again
                self.removed_corrupt = self._remove_corrupt(conn)
            stored = {r[0] for r in conn.execute("SELECT cell_id FROM cells")}
            if stored:
                self._check_resumable(stored, cell_ids, resume)
            cur = conn.execute(
                "INSERT INTO sweeps (config_hash, name, config, source, n_cells, backend, "
                "resumed, started, versions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (config_hash, name, canonical_json(config), source, len(cell_ids), backend,
                 int(bool(resume)), utc_now(), canonical_json(versions())),
            )
            assert cur.lastrowid is not None  # (set by the INSERT)
            return cur.lastrowid

    def _check_resumable(self, stored: set[str], cell_ids: Sequence[str], resume: bool) -> None:
        last = self.last_sweep() or {}
        what = (f"{len(stored)} cells of sweep {last.get('name')!r} "
                f"(config hash {last.get('config_hash')})")
        if not resume:
            raise StoreError(
                f"results store {str(self.path)!r} already holds {what}; pass --resume "
                "(resume=True) to continue it, or choose another store"
            )
        foreign = stored - set(cell_ids)
        if foreign:
            example = self._query("SELECT agent, agent_kwargs, env, env_kwargs, first_run, "
                                  "n_runs FROM cells WHERE cell_id = ?", (min(foreign),))[0]
            raise StoreError(
                f"results store {str(self.path)!r} holds {what}, and {len(foreign)} of them "
                f"are not cells of this config (e.g. {example['agent']} "
                f"{example['agent_kwargs']} on {example['env']} {example['env_kwargs']}, "
                f"runs {example['first_run']}..{example['first_run'] + example['n_runs'] - 1}"
                "); a store can be resumed only by the same config or one that extends it "
                "(more agents, instances, values or chunks of the same size); use another "
                "store"
            )

    def _cell_values(self, cell: Cell, status: str, config_hash: str,
                     sweep_id: int | None) -> dict[str, Any]:
        return {
            "cell_id": cell.cell_id, "config_id": cell.config_id, "env": cell.env,
            "env_kwargs": canonical_json(cell.env_kwargs), "agent": cell.agent,
            "agent_kwargs": canonical_json(cell.agent_kwargs), "horizon": cell.horizon,
            "seed": cell.seed, "first_run": cell.first_run, "n_runs": cell.n_runs,
            "n_checkpoints": cell.n_checkpoints, "status": status, "finished": utc_now(),
            "config_hash": config_hash, "sweep_id": sweep_id,
        }

    def _with_checksum(self, table: str, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` (column → value; absent columns are NULL) and their row's checksum."""
        columns = self._columns[table]
        checksum = row_checksum([k for _, k in columns], [values.get(c) for c, _ in columns])
        return {**values, "checksum": checksum}

    def _insert_cell(self, conn: sqlite3.Connection, values: dict[str, Any]) -> None:
        values = self._with_checksum("cells", values)
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        # a failed attempt of this cell is replaced; a done cell is never replaced (checked below)
        conn.execute(f"INSERT OR REPLACE INTO cells ({cols}) VALUES ({marks})",
                     tuple(values.values()))

    def _check_not_done(self, conn: sqlite3.Connection, cell_id: str) -> None:
        row = conn.execute("SELECT status FROM cells WHERE cell_id = ?", (cell_id,)).fetchone()
        if row is not None and row[0] == "done":
            raise StoreError(f"cell {cell_id} is already stored as done (two sweeps writing "
                             "the same store?)")

    def record_result(self, result: RunResults, config_hash: str,
                      sweep_id: int | None = None) -> None:
        """Store a finished cell (``result.cell``: consecutive runs) and all its runs in one
        transaction."""
        cell = result.cell
        curve = np.asarray(result.regret_curve, dtype=float)
        n = cell.n_runs
        if curve.shape[0] != n or len(result.steps) != n:
            raise ValueError(f"cell {cell.cell_id} has {n} runs but its result has "
                             f"{curve.shape[0]} curves and {len(result.steps)} step counts")
        values = self._cell_values(cell, "done", config_hash, sweep_id)
        privacy = result.privacy.as_dict()
        values.update({k: privacy[k] for k in PRIVACY_COLUMNS})
        values.update(
            agent_params=canonical_json(result.agent_params),
            checkpoint_times=canonical_json(np.asarray(result.checkpoint_times).tolist()),
            versions=canonical_json(result.versions),
            wall_s=float(result.wall_s),
            compile_s=float(result.compile_s),
            loop_s=None if result.loop_s is None else float(result.loop_s),
            worker=result.worker,
        )
        episode = {k: np.asarray(v).tolist() for k, v in result.episode.items()}
        extra_keys = sorted(k for k in episode if k not in EPISODE_COLUMNS)
        steps = np.asarray(result.steps).tolist()
        rows = []
        for i in range(n):
            extra = canonical_json({k: episode[k][i] for k in extra_keys}) if extra_keys else None
            rows.append(self._with_checksum("runs", {
                "config_id": cell.config_id, "run": cell.first_run + i, "cell_id": cell.cell_id,
                "steps": int(steps[i]), "regret": float(curve[i, -1]),
                **{k: _plain_int(episode[k][i]) if k in episode else None
                   for k in EPISODE_COLUMNS},
                "extra": extra, "curve": json.dumps(curve[i].tolist()),
            }))
        columns = list(rows[0]) if rows else []
        with self._transaction() as conn:
            self._check_not_done(conn, cell.cell_id)
            self._insert_cell(conn, values)
            conn.executemany(
                f"INSERT INTO runs ({', '.join(columns)}) VALUES "
                f"({', '.join('?' for _ in columns)})",
                [tuple(r.values()) for r in rows],
            )

    def record_failure(self, cell: Cell, error: str, traceback: str, config_hash: str,
                       sweep_id: int | None = None) -> None:
        """Store a cell whose computation raised, with the error text (``--resume`` retries it)."""
        values = self._cell_values(cell, "failed", config_hash, sweep_id)
        values.update(error=error, traceback=traceback, worker=None)
        with self._transaction() as conn:
            self._check_not_done(conn, cell.cell_id)
            self._insert_cell(conn, values)

    # -- row checksums --------------------------------------------------------------------------

    def _corrupt_rows(self) -> list[tuple[str, int, dict[str, Any]]]:
        """(table, rowid, values) of every ``cells`` and ``runs`` row whose content no longer
        matches its checksum (read row by row: a store larger than memory is checked too)."""
        out = []
        for table in CHECKED_TABLES:
            names = [c for c, _ in self._columns[table]]
            kinds = [k for _, k in self._columns[table]]
            try:
                cursor = self._connection().execute(
                    f"SELECT rowid, checksum, {', '.join(names)} FROM {table}")
                for row in cursor:
                    values = tuple(row)[2:]
                    try:
                        ok = row[1] == row_checksum(kinds, values)
                    except (ValueError, TypeError, OverflowError):  # a value of another type
                        ok = False
                    if not ok:
                        out.append((table, int(row[0]), dict(zip(names, values, strict=True))))
            except sqlite3.Error as e:
                raise _store_error(self.path, e, "read") from e
        return out

    def _describe_row(self, table: str, values: dict[str, Any]) -> str:
        """A changed row in words: which run or cell, and the configuration it belongs to."""
        cell_id = values.get("cell_id")
        rows = self._connection().execute(
            "SELECT agent, agent_kwargs, env, env_kwargs, first_run, n_runs FROM cells "
            "WHERE cell_id = ?", (cell_id,)).fetchall()
        what = f"run {values.get('run')} of cell {cell_id}" if table == "runs" else (
            f"the record of cell {cell_id}")
        if len(rows) == 1:
            c = rows[0]
            try:
                last = int(c["first_run"]) + int(c["n_runs"]) - 1
                what += (f" ({c['agent']} {c['agent_kwargs']} on {c['env']} {c['env_kwargs']}, "
                         f"runs {c['first_run']}..{last})")
            except (TypeError, ValueError):  # the cell's own record is the changed one
                pass
        return what

    def verify(self) -> list[str]:
        """The rows whose content no longer matches their checksum, in words (empty: every
        row is as it was written)."""
        return [self._describe_row(t, v) for t, _, v in self._corrupt_rows()]

    def _require_intact(self) -> None:
        """Refuse (:class:`StoreError`, one line) to read results from a store with a changed
        row. Verified once per change of the file by another connection (``data_version``)."""
        try:
            version = self._connection().execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error as e:
            raise _store_error(self.path, e, "read") from e
        if self._verified == version:
            return
        bad = self.verify()
        if bad:
            more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
            raise StoreError(
                f"results store {str(self.path)!r} holds {len(bad)} row(s) changed after they "
                f"were written (their checksums do not match): {bad[0]}{more}; nothing is read "
                "from it: rerun its sweep with --resume (which runs those cells again), or "
                "restore the store from a copy")
        self._verified = version

    def _remove_corrupt(self, conn: sqlite3.Connection) -> list[str]:
        """Within a write transaction: remove every cell with a changed row (its cells row and
        all its runs), so that a resumed sweep runs it again; returns them in words."""
        bad = self._corrupt_rows()
        if not bad:
            return []
        removed = [self._describe_row(t, v) for t, _, v in bad]
        cell_ids = {v.get("cell_id") for _, _, v in bad}
        # (runs before their cell: the foreign key)
        conn.executemany("DELETE FROM runs WHERE rowid = ?",
                         [(rowid,) for t, rowid, _ in bad if t == "runs"])
        conn.executemany("DELETE FROM runs WHERE cell_id = ?", [(c,) for c in cell_ids])
        conn.executemany("DELETE FROM cells WHERE rowid = ?",
                         [(rowid,) for t, rowid, _ in bad if t == "cells"])
        conn.executemany("DELETE FROM cells WHERE cell_id = ?", [(c,) for c in cell_ids])
        # runs whose cell record was the changed row (its own id changed): their cell is gone
        conn.execute("DELETE FROM runs WHERE cell_id NOT IN (SELECT cell_id FROM cells)")
        return removed

    # -- reading --------------------------------------------------------------------------------

    def cell_status(self) -> dict[str, str]:
        """cell_id → 'done' or 'failed'."""
        return {r["cell_id"]: r["status"] for r in self._query("SELECT cell_id, status FROM cells")}

    def done_cell_ids(self) -> set[str]:
        return {k for k, v in self.cell_status().items() if v == "done"}

    def counts(self) -> dict[str, int]:
        """Number of cells by status and of runs stored."""
        out = {"done": 0, "failed": 0}
        for r in self._query("SELECT status, COUNT(*) FROM cells GROUP BY status"):
            out[r[0]] = r[1]
        out["runs"] = self._query("SELECT COUNT(*) FROM runs")[0][0]
        return out

    def last_sweep(self) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM sweeps ORDER BY sweep_id DESC LIMIT 1")
        return dict(rows[0]) if rows else None

    def sweeps(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._query("SELECT * FROM sweeps ORDER BY sweep_id")]

    def cells(self, status: str | None = None) -> list[dict[str, Any]]:
        """Cell metadata rows (JSON columns decoded), sorted like the exports."""
        self._require_intact()
        where, params = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self._query(f"SELECT * FROM cells c {where} ORDER BY {_ORDER}, c.first_run",
                           params)
        out = []
        for r in rows:
            d = dict(r)
            for key in ("env_kwargs", "agent_kwargs", "agent_params", "checkpoint_times",
                        "versions"):
                if d.get(key) is not None:
                    d[key] = json.loads(d[key])
            out.append(d)
        return out

    def failures(self) -> list[dict[str, Any]]:
        return self.cells("failed")

    def results(self) -> list[RunResults]:
        """Every configuration with at least one done cell, its runs in ascending order."""
        cells = self.cells("done")  # (verifies every row's checksum)
        by_config: dict[str, list[dict[str, Any]]] = {}
        for c in cells:
            by_config.setdefault(c["config_id"], []).append(c)
        out = []
        for config_id, group in by_config.items():
            rows = self._query("SELECT * FROM runs WHERE config_id = ? ORDER BY run",
                               (config_id,))
            first = group[0]
            episode: dict[str, list[Any]] = {}
            for k in EPISODE_COLUMNS:
                if rows and rows[0][k] is not None:
                    episode[k] = [r[k] for r in rows]
            extras = [json.loads(r["extra"]) for r in rows if r["extra"] is not None]
            for key in sorted({k for e in extras for k in e}):
                episode[key] = [e.get(key) for e in extras]
            out.append(RunResults(
                **{k: first[k] for k in CONFIG_COLUMNS},
                runs=np.array([r["run"] for r in rows], dtype=np.int64),
                checkpoint_times=np.asarray(first["checkpoint_times"], dtype=np.int64),
                regret_curve=np.array([json.loads(r["curve"]) for r in rows], dtype=float),
                steps=np.array([r["steps"] for r in rows], dtype=np.int64),
                episode={k: np.asarray(v, dtype=bool) if k == "correct" else np.asarray(v)
                         for k, v in episode.items()},
                privacy=PrivacyGuarantee(
                    model=first["privacy_model"], epsilon=first["privacy_epsilon"],
                    delta=first["privacy_delta"], unit=first["privacy_unit"],
                    neighbouring=first["privacy_neighbouring"],
                    sampler=first["privacy_sampler"]),
                agent_params=first["agent_params"],
                versions=first["versions"],
                wall_s=float(sum(c["wall_s"] for c in group)),
                compile_s=float(sum(c["compile_s"] or 0.0 for c in group)),
                loop_s=None if any(c["loop_s"] is None for c in group)
                else float(sum(c["loop_s"] for c in group)),
            ))
        return out

    # -- tables for export ----------------------------------------------------------------------

    def table(self, name: str = "runs") -> tuple[list[str], list[tuple[Any, ...]]]:
        """(columns, rows) of an export table, sorted deterministically:

        * ``runs``: one row per run — configuration (env, its parameters, agent, its parameters,
          horizon, seed), run, privacy guarantee, steps, final regret, best-arm-identification
          values, and each env/agent parameter in its own column (``env.alpha``,
          ``agent.epsilon``; lists as JSON text);
        * ``curves``: one row per (run, checkpoint): configuration, run, t, cumulative regret;
        * ``cells``: one row per cell — status, error, wall time, worker, versions.

        Raises :class:`StoreError` if a row's content no longer matches its checksum.
        """
        self._require_intact()
        if name == "runs":
            return self._runs_table()
        if name == "curves":
            return self._curves_table()
        if name == "cells":
            return self._cells_table()
        raise ValueError(f"table must be one of ['runs', 'curves', 'cells'], got {name!r}")

    def _param_columns(self) -> tuple[list[str], list[str]]:
        env_keys: set[str] = set()
        agent_keys: set[str] = set()
        for r in self._query("SELECT DISTINCT env_kwargs, agent_kwargs FROM cells "
                             "WHERE status = 'done'"):
            env_keys |= set(json.loads(r[0]))
            agent_keys |= set(json.loads(r[1]))
        return sorted(env_keys), sorted(agent_keys)

    def _runs_table(self) -> tuple[list[str], list[tuple[Any, ...]]]:
        env_keys, agent_keys = self._param_columns()
        base = ["env", "env_kwargs", "agent", "agent_kwargs", "horizon", "seed", "run",
                *PRIVACY_COLUMNS, "steps", "regret", *EPISODE_COLUMNS, "extra"]
        cell_columns = {*CONFIG_COLUMNS, *PRIVACY_COLUMNS}
        select = ", ".join(("c." if k in cell_columns else "r.") + k for k in base)
        sql = (f"SELECT {select} FROM runs r JOIN cells c ON r.cell_id = c.cell_id "
               f"WHERE c.status = 'done' ORDER BY {_ORDER}, r.run")
        columns = [*base, *(f"env.{k}" for k in env_keys), *(f"agent.{k}" for k in agent_keys)]
        rows = []
        for r in self._query(sql):
            env_kw, agent_kw = json.loads(r["env_kwargs"]), json.loads(r["agent_kwargs"])
            rows.append((*tuple(r), *(_cell_value(env_kw, k) for k in env_keys),
                         *(_cell_value(agent_kw, k) for k in agent_keys)))
        return columns, rows

    def _curves_table(self) -> tuple[list[str], list[tuple[Any, ...]]]:
        columns = ["env", "env_kwargs", "agent", "agent_kwargs", "horizon", "seed", "run", "t",
                   "regret"]
        sql = ("SELECT c.env, c.env_kwargs, c.agent, c.agent_kwargs, c.horizon, c.seed, r.run, "
               "c.checkpoint_times, r.curve FROM runs r JOIN cells c ON r.cell_id = c.cell_id "
               f"WHERE c.status = 'done' ORDER BY {_ORDER}, r.run")
        rows = []
        for r in self._query(sql):
            head = tuple(r)[:7]
            times = json.loads(r["checkpoint_times"])
            for t, x in zip(times, json.loads(r["curve"]), strict=True):
                rows.append((*head, t, x))
        return columns, rows

    def _cells_table(self) -> tuple[list[str], list[tuple[Any, ...]]]:
        columns = ["cell_id", "config_id", "env", "env_kwargs", "agent", "agent_kwargs",
                   "horizon", "seed", "first_run", "n_runs", "n_checkpoints", "status", "error",
                   *PRIVACY_COLUMNS, "agent_params", "wall_s", "compile_s", "loop_s", "worker",
                   "finished",
                   "config_hash", "versions"]
        rows = self._query(f"SELECT {', '.join('c.' + k for k in columns)} FROM cells c "
                           f"ORDER BY {_ORDER}, c.first_run")
        return columns, [tuple(r) for r in rows]

    def to_frame(self, table: str = "runs") -> Any:
        """The export table as a pandas DataFrame (see :meth:`table`)."""
        import pandas as pd

        columns, rows = self.table(table)
        return pd.DataFrame.from_records(rows, columns=columns)

    def export(self, path: str | os.PathLike[str] | None, format: str = "csv",
               table: str = "runs") -> Path | None:
        """Write an export table as CSV (``path=None``: to stdout) or Parquet (needs pyarrow)."""
        if format not in ("csv", "parquet"):
            raise ValueError(f"format must be one of ['csv', 'parquet'], got {format!r}")
        columns, rows = self.table(table)
        try:
            return self._write_export(path, format, columns, rows)
        except OSError as e:  # an unwritable place: one line naming it (BrokenPipe: the caller's)
            if isinstance(e, BrokenPipeError):
                raise
            where = "stdout" if path is None else repr(str(path))
            raise StoreError(f"cannot write the export to {where}: "
                             f"{e.strerror or e}") from e

    def _write_export(self, path: str | os.PathLike[str] | None, format: str,
                      columns: list[str], rows: list[tuple[Any, ...]]) -> Path | None:
        if format == "parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError as e:
                raise ValueError("Parquet export needs pyarrow: pip install pyarrow "
                                 "(or export --format csv)") from e
            if path is None:
                raise ValueError("Parquet export needs an output file (--output FILE)")
            data = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
            with _replacing(Path(path)) as tmp:
                pq.write_table(pa.table(data), str(tmp))
            return Path(path)
        if path is None:
            _write_csv(sys.stdout, columns, rows)
            return None
        with _replacing(Path(path)) as tmp, open(tmp, "w", newline="") as f:
            _write_csv(f, columns, rows)
            f.flush()
            os.fsync(f.fileno())
        return Path(path)

    def summary(self) -> list[dict[str, Any]]:
        """Per configuration: runs stored, final regret mean and sd (ddof 1), failed cells."""
        failed: dict[str, int] = {}
        for c in self.cells("failed"):
            failed[c["config_id"]] = failed.get(c["config_id"], 0) + 1
        out = []
        for r in self.results():
            x = r.regret
            out.append({
                "env": r.env, "env_kwargs": r.env_kwargs, "agent": r.agent,
                "agent_kwargs": r.agent_kwargs, "horizon": r.horizon, "seed": r.seed,
                "runs": len(x), "regret_mean": float(x.mean()),
                "regret_sd": sample_sd(x),
                "privacy": str(r.privacy), "failed_cells": failed.pop(r.config_id, 0),
            })
        return out


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write, renamed over ``path`` when the block ends
    without error, removed otherwise: ``path`` is either the complete new file or what it was
    before (nothing, or the previous export), never a truncated one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # the mode a plain open() would give (mkstemp: 0o600)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _plain_int(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    return value


def _cell_value(kwargs: dict[str, Any], key: str) -> Any:
    if key not in kwargs:
        return None
    v = kwargs[key]
    return canonical_json(v) if isinstance(v, (list, dict)) else v


def _csv_value(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _write_csv(f: Any, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_csv_value(v) for v in r])



__all__ = ["SCHEMA_VERSION", "Store", "StoreError", "canonical_json", "row_checksum", "utc_now"]
