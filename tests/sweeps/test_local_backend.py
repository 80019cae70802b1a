"""The local backend and determinism: the same per-run numbers for any worker count, chunk size
or start method; forked workers never share a random stream; progress goes to stderr."""

import multiprocessing
import os
import random
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest

from privenv.backends import Backend, get_backend
from privenv.backends.local import LocalBackend
from privenv.store import Store
from privenv.sweep import Cell, SweepConfig, run_cell, run_sweep

CONFIG = {
    "runs": 20,
    "horizon": 400,
    "instances": [{"env": "HuberBandit-v0", "params": {"inlier": "pareto", "alpha": 0.1}}],
    "agents": [{"name": "eps-greedy"}, {"name": "prae-c", "params": {"epsilon": 0.5}}],
}


# -- module-level cell functions (workers import them by reference) -------------------------------


def square_or_fail(x: int) -> int:
    if x == 3:
        raise ValueError("item 3 failed")
    return x * x


def square_or_die(x: int) -> int:
    if x == 2:
        os._exit(1)  # the worker process dies without a word
    return x * x


def cell_after_global_draws(cell: Cell):
    """Put every global random state of this process in a different state for each cell (and
    each worker), then run the cell."""
    salt = os.getpid() * 1000 + cell.first_run + 100 * len(cell.agent)
    np.random.seed(salt % 2**32)  # noqa: NPY002 (the legacy global state, on purpose)
    np.random.random(1000)  # noqa: NPY002 (the legacy global state, on purpose)
    random.seed(salt)
    random.random()
    return run_cell(cell), np.random.random(), os.getpid()  # noqa: NPY002


# -- the backend interface ------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_imap_unordered_yields_every_index_once_with_exceptions_as_values(workers):
    with get_backend("local", workers=workers) as backend:
        assert isinstance(backend, Backend) and backend.name == "local"
        out = dict(backend.imap_unordered(square_or_fail, list(range(7))))
    assert sorted(out) == list(range(7))
    assert isinstance(out[3], ValueError) and str(out[3]) == "item 3 failed"
    assert {i: v for i, v in out.items() if i != 3} == {i: i * i for i in range(7) if i != 3}


def test_a_dead_worker_fails_only_the_items_in_flight():
    with LocalBackend(workers=2) as backend:
        out = dict(backend.imap_unordered(square_or_die, list(range(12))))
    assert sorted(out) == list(range(12))
    assert isinstance(out[2], BrokenProcessPool)
    broken = [i for i, v in out.items() if isinstance(v, BrokenProcessPool)]
    # at most the window of items in flight (2 × workers) dies with the pool; the rest run on a
    # fresh pool
    assert len(broken) <= 4
    assert all(out[i] == i * i for i in range(12) if i not in broken)


def test_get_backend_choices_and_errors():
    assert isinstance(get_backend("local", workers=1), LocalBackend)
    with pytest.raises(ValueError, match="Dask"):
        get_backend("ray")
    with pytest.raises(ValueError, match="backend must be one of"):
        get_backend("spark")
    with pytest.raises(ValueError, match="address is for a distributed backend"):
        get_backend("local", address="tcp://localhost:8786")
    with pytest.raises(ValueError, match="workers must be an integer"):
        get_backend("local", workers=0)
    with pytest.raises(ValueError, match="start_method"):
        LocalBackend(workers=2, start_method="teleport")


def test_closing_the_iterator_early_cancels_the_rest():
    with LocalBackend(workers=2) as backend:
        it = backend.imap_unordered(square_or_fail, list(range(100)))
        first = next(it)
        it.close()
    # the first to finish may be item 3, whose result is its error (unordered: a loaded machine
    # finished it first once, in CI)
    assert first[1] == first[0] ** 2 or (first[0] == 3 and isinstance(first[1], ValueError))


# -- determinism ----------------------------------------------------------------------------------


def _sweep_csv(tmp_path, name, *, chunk, workers, start_method=None) -> str:
    cfg = SweepConfig.from_mapping({**CONFIG, "chunk": chunk}).validate()
    backend = LocalBackend(workers=workers, start_method=start_method)
    path = tmp_path / f"{name}.sqlite"
    report = run_sweep(cfg, path, backend=backend, progress="none")
    backend.close()
    assert report.ok and report.done == len(cfg.cells())
    with Store(path, create=False) as store:
        store.export(tmp_path / f"{name}.csv")
        store.export(tmp_path / f"{name}-curves.csv", table="curves")
    return (tmp_path / f"{name}.csv").read_text() + (tmp_path / f"{name}-curves.csv").read_text()


def test_rows_do_not_depend_on_chunk_size_or_worker_count(tmp_path):
    reference = _sweep_csv(tmp_path, "chunk20-w1", chunk=20, workers=1)
    assert reference.count("\n") > 2 * 20 * 2  # runs + curve rows of both configurations
    assert _sweep_csv(tmp_path, "chunk5-w2", chunk=5, workers=2) == reference
    assert _sweep_csv(tmp_path, "chunk3-w2", chunk=3, workers=2) == reference


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_forked_workers_never_share_a_random_stream():
    cells = SweepConfig.from_mapping({**CONFIG, "chunk": 5}).cells()
    here = [run_cell(c) for c in cells]
    with LocalBackend(workers=2, start_method="fork") as backend:
        out = dict(backend.imap_unordered(run_cell, cells))
    assert sorted(out) == list(range(len(cells)))
    for i, cell in enumerate(cells):
        assert out[i].cell == cell
        assert np.array_equal(out[i].regret_curve, here[i].regret_curve)
    # the chunks of a configuration are different runs, not copies of one forked stream
    regrets = [tuple(out[i].regret) for i, c in enumerate(cells) if c.agent == "eps-greedy"]
    assert len(set(regrets)) == len(regrets)
    assert len({out[i].worker for i in out}) == 2  # really two processes


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_results_do_not_depend_on_the_global_random_state():
    cells = SweepConfig.from_mapping({**CONFIG, "chunk": 10}).cells()
    np.random.seed(1)  # noqa: NPY002 (the legacy global state, on purpose)
    a = run_cell(cells[0])
    np.random.seed(2)  # noqa: NPY002 (the legacy global state, on purpose)
    b = run_cell(cells[0])
    assert np.array_equal(a.regret_curve, b.regret_curve)
    # forked workers inherit the parent's global numpy state; each scrambles it differently here,
    # and the cells' numbers are still the in-process ones
    np.random.seed(3)  # noqa: NPY002 (the legacy global state, on purpose)
    with LocalBackend(workers=2, start_method="fork") as backend:
        out = dict(backend.imap_unordered(cell_after_global_draws, cells))
    assert len({pid for _, _, pid in out.values()}) == 2
    assert len({draw for _, draw, _ in out.values()}) == len(cells)  # global states differed
    for i, cell in enumerate(cells):
        assert np.array_equal(out[i][0].regret_curve, run_cell(cell).regret_curve)


# -- progress -------------------------------------------------------------------------------------


def test_progress_lines_go_to_stderr_only(tmp_path, capsys):
    cfg = SweepConfig.from_mapping({**CONFIG, "runs": 4, "chunk": 2}).validate()
    run_sweep(cfg, tmp_path / "s.sqlite", workers=1, progress="lines")
    captured = capsys.readouterr()
    assert captured.out == ""
    # (a cold numba cache adds the announcement of the kernels' compile, "privenv: …")
    lines = [ln for ln in captured.err.strip().splitlines() if not ln.startswith("privenv: ")]
    assert len(lines) == 4 and lines[0].startswith("[1/4] ") and lines[-1].startswith("[4/4] ")
    assert all("final regret" in line and "ETA" in line for line in lines)


def test_progress_bar_and_callback(tmp_path, capsys):
    pytest.importorskip("tqdm")
    cfg = SweepConfig.from_mapping({**CONFIG, "runs": 4, "chunk": 2}).validate()
    run_sweep(cfg, tmp_path / "bar.sqlite", workers=1, progress="bar")
    captured = capsys.readouterr()
    assert captured.out == "" and "4/4" in captured.err and "cell" in captured.err
    seen = []
    run_sweep(cfg, tmp_path / "cb.sqlite", workers=1,
              progress=lambda done, total, cell, value, elapsed: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(ValueError, match="progress must be one of"):
        run_sweep(cfg, tmp_path / "x.sqlite", workers=1, progress="loud")
