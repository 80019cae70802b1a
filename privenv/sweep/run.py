"""Running a sweep: each cell on a backend, each finished cell into the results store.

:func:`run_sweep` writes each finished cell to a :class:`privenv.store.Store` in the parent
process, one transaction per cell; ``resume=True`` skips cells already done (failed cells are
retried, and so are cells with a stored row that no longer matches its checksum, each named on
stderr). A cell that raises is stored as ``failed`` with its error and traceback, and the rest of
the sweep completes.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from privenv._memory import check_workers
from privenv._stats import sample_sd
from privenv.backends import Backend, get_backend
from privenv.results import Cell, RunResults, bai_outcomes
from privenv.store import Store
from privenv.sweep.config import SweepConfig, load_config


def resolved_params(agent: Any) -> dict[str, Any]:
    """An agent's constructor parameters as resolved (defaults filled from the env), where they
    are plain numbers, strings or booleans."""
    out = {}
    for name, declared in getattr(type(agent), "parameters", {}).items():
        value = getattr(agent, declared.attribute or name, None)
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, (bool, int, float, str)):
            out[name] = value
    return out


def own_workers(backend: Any, workers: Any, address: str | None) -> bool:
    """Whether ``workers`` are processes this call starts on this machine (the local backend,
    or a local Dask cluster), more than the calling process alone."""
    return (isinstance(backend, str) and address is None and isinstance(workers, int)
            and not isinstance(workers, bool) and workers > 1)


def run_cell(cell: Cell) -> RunResults:
    """Simulate one cell with :func:`privenv.simulation.simulate` (a pure top-level function, so
    any worker process can run it: it depends on nothing but ``cell``)."""
    import privenv  # noqa: F401  (registers the env ids in a fresh worker)
    from privenv.agents import env_kwargs_for, make
    from privenv.simulation import make_vector_env, simulate

    env_kwargs = env_kwargs_for(cell.agent, cell.env_kwargs)
    env = make_vector_env(cell.env, cell.n_runs, cell.horizon, **env_kwargs)
    try:
        agent = make(cell.agent, env, cell.n_runs, **cell.agent_kwargs)
        res = simulate(agent, env, n_runs=cell.n_runs, seed=cell.seed,
                       first_run=cell.first_run, n_checkpoints=cell.n_checkpoints)
    finally:
        env.close()
    # the record under the cell's own names (simulate saw built objects, not the ids and kwargs)
    return replace(res, env=cell.env, env_kwargs=dict(cell.env_kwargs), agent=cell.agent,
                   agent_kwargs=dict(cell.agent_kwargs), n_checkpoints=cell.n_checkpoints,
                   agent_params=resolved_params(agent),
                   worker=f"{socket.gethostname()}:{os.getpid()}")


# -- running --------------------------------------------------------------------------------------


#: a progress callback, called with (cells finished, cells to run, cell, RunResults or exception,
#: seconds)
ProgressCallback = Callable[[int, int, Cell, Any, float], None]


def describe_result(cell: Cell, value: Any) -> str:
    """One line about a finished cell (the progress lines)."""
    if isinstance(value, BaseException):
        return f"{cell.describe()}: FAILED {type(value).__name__}: {value}"
    episode = value.episode
    if "stopping_time" in episode:  # best-arm identification: no regret, a stopping time
        tau = np.asarray(episode["stopping_time"], dtype=float)
        text = f"{cell.describe()}: stopping time {tau.mean():.6g} ± {sample_sd(tau):.3g}"
        if "recommendation" in episode:
            stopped, wrong = bai_outcomes(episode["recommendation"], episode["correct"])
            text += f", {int(wrong.sum())} wrong of {int(stopped.sum())} stopped runs"
            if not stopped.all():
                text += f", {int((~stopped).sum())} reached the budget"
        elif "correct" in episode:
            text += f", error rate {1.0 - np.mean(episode['correct']):.3g}"
    else:
        r = value.regret
        text = f"{cell.describe()}: final regret {r.mean():.6g} ± {sample_sd(r):.3g}"
    kernels = (f" ({value.compile_s:.1f} s of it compiling or loading kernels)"
               if value.compile_s >= 0.05 else "")
    return text + f" [{value.wall_s:.1f} s{kernels}, {value.ns_per_run_step:.0f} ns/run-step]"



class _Progress:
    """Progress on stderr (never stdout): a tqdm bar with ETA, or one line per finished cell."""

    def __init__(self, mode: str | bool | ProgressCallback, total: int, skipped: int) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self.cell_s, self.kernel_s = 0.0, 0.0  # the finished cells' wall and compile seconds
        self.start = time.perf_counter()
        self.callback: ProgressCallback | None = None
        self.bar = None
        if callable(mode):
            self.callback, mode = mode, "callback"
        elif mode is True:
            mode = "auto"
        elif mode is False or mode is None:
            mode = "none"
        if mode not in ("auto", "bar", "lines", "none", "callback"):
            raise ValueError(f"progress must be one of ['auto', 'bar', 'lines', 'none'], a bool "
                             f"or a callable, got {mode!r}")
        if mode in ("auto", "bar"):
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            tty = getattr(sys.stderr, "isatty", lambda: False)()
            if tqdm is not None and (mode == "bar" or tty):
                # our own ETA (tqdm's would count the kernels' compile as the cells' pace)
                self.bar = tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True,
                                desc="sweep", bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} cells "
                                "[{elapsed}{postfix}]")
            else:
                mode = "lines"
        self.mode = mode
        if skipped and mode != "none" and mode != "callback":
            print(f"resuming: {skipped} cells already done, {total} to run", file=sys.stderr,
                  flush=True)

    def update(self, cell: Cell, value: Any) -> None:
        self.done += 1
        self.failed += isinstance(value, BaseException)
        elapsed = time.perf_counter() - self.start
        if not isinstance(value, BaseException):
            self.cell_s += value.wall_s
            self.kernel_s += value.compile_s
        if self.callback is not None:
            self.callback(self.done, self.total, cell, value, elapsed)
        elif self.bar is not None:
            failed = f", {self.failed} failed" if self.failed else ""
            self.bar.set_postfix_str(f"ETA {self.eta(elapsed):.0f} s{failed}", refresh=False)
            self.bar.update(1)
        elif self.mode == "lines":
            eta = self.eta(elapsed)
            width = len(str(self.total))
            print(f"[{self.done:>{width}}/{self.total}] {describe_result(cell, value)}  "
                  f"({elapsed:.1f} s elapsed, ETA {eta:.0f} s)", file=sys.stderr, flush=True)

    def eta(self, elapsed: float) -> float:
        """Seconds left at the pace of the cells so far, their kernels' compile left out: the
        elapsed time less the share of the finished cells' time that was compiling (or loading)
        kernels (with parallel workers, cell seconds add up faster than elapsed ones)."""
        work = elapsed * (1.0 - self.kernel_s / self.cell_s) if self.cell_s > 0 else elapsed
        return work / self.done * (self.total - self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@dataclass
class SweepReport:
    """What :func:`run_sweep` did."""

    store: Path
    config_hash: str
    backend: str
    cells: int  # cells of the config
    skipped: int  # already done in the store (resume)
    done: int  # finished in this call
    failed: list[tuple[Cell, str]]  # (cell, error) of the cells that raised in this call
    wall_s: float
    #: cells removed on resume because a stored row had changed (they ran again), in words
    corrupt: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        return (f"{self.cells} cells: {self.done} finished now, {len(self.failed)} failed, "
                f"{self.skipped} already done; backend {self.backend}; wall time "
                f"{self.wall_s:.1f} s; store {self.store}")


def run_sweep(
    config: SweepConfig | Mapping[str, Any] | str | os.PathLike[str],
    store: Store | str | os.PathLike[str],
    *,
    backend: Backend | str = "local",
    workers: int | None = None,
    address: str | None = None,
    resume: bool = False,
    progress: str | bool | ProgressCallback = "auto",
    fn: Callable[[Cell], RunResults] = run_cell,
) -> SweepReport:
    """Run a sweep, writing each finished cell to ``store``.

    Args:
        config: a :class:`SweepConfig`, the config-file structure as a dict, or a file path.
        store: a :class:`privenv.store.Store` or the path of its SQLite file (created).
        backend: ``"local"`` (default) or ``"dask"``, or a :class:`~privenv.backends.base.Backend`
            (then ``workers``/``address`` are the backend's own).
        workers: worker processes (local default: one per CPU; 1 runs in-process).
        address: the distributed engine's scheduler address.
        resume: continue a store that already holds cells of this config (or of a config this
            one extends): done cells are skipped, failed ones retried. Without it, a non-empty
            store is refused.
        progress: ``"auto"`` (a tqdm bar on a terminal, else one line per cell), ``"bar"``,
            ``"lines"``, ``"none"``, a bool, or a callback; always on stderr.
        fn: the cell function (a picklable top-level function; default :func:`run_cell`).

    Returns:
        A :class:`SweepReport`; cells that raised are stored as failed and listed in it.
    """
    if isinstance(config, SweepConfig):
        cfg = config
    elif isinstance(config, Mapping):
        cfg = SweepConfig.from_mapping(config)
    else:
        cfg = load_config(config)
    cfg = cfg.validate()
    cells = cfg.cells()
    config_hash = cfg.config_hash
    if own_workers(backend, workers, address):  # worker processes on this machine, each a cell
        assert workers is not None  # (own_workers: an int above 1)
        chunk = min(cfg.chunk or cfg.runs, cfg.runs)
        check_workers(workers, chunk * max(c.run_bytes for c in cfg.configurations))

    own_backend = isinstance(backend, str)
    be = get_backend(backend, workers, address) if isinstance(backend, str) else backend
    own_store = not isinstance(store, Store)
    try:  # (the backend first: a usage error leaves no store behind)
        st = store if isinstance(store, Store) else Store(store)
    except BaseException:
        if own_backend:
            be.close()
        raise
    start = time.perf_counter()
    failed: list[tuple[Cell, str]] = []
    try:
        sweep_id = st.begin_sweep(config_hash=config_hash, config=cfg.to_dict(),
                                  cell_ids=[c.cell_id for c in cells], name=cfg.name,
                                  source=cfg.source, backend=be.describe(), resume=resume)
        for what in st.removed_corrupt:
            print(f"results store {str(st.path)!r}: {what} changed after it was written (its "
                  "checksum does not match): removed, it runs again", file=sys.stderr, flush=True)
        done_ids = st.done_cell_ids()
        todo = [c for c in cells if c.cell_id not in done_ids]
        bar = _Progress(progress, len(todo), len(cells) - len(todo))
        finished = be.imap_unordered(fn, todo)
        try:
            for i, value in finished:
                cell = todo[i]
                if isinstance(value, BaseException):
                    error = f"{type(value).__name__}: {value}"
                    st.record_failure(cell, error, _traceback_text(value), config_hash, sweep_id)
                    failed.append((cell, error))
                else:
                    if value.cell != cell:
                        raise RuntimeError(f"the cell function returned the result of "
                                           f"{value.cell.describe()} for {cell.describe()}")
                    st.record_result(value, config_hash, sweep_id)
                bar.update(cell, value)
        finally:
            close = getattr(finished, "close", None)
            if close is not None:  # a generator: stop it now (cancels cells not yet started)
                close()
            bar.close()
    finally:
        if own_backend:
            be.close()
        if own_store:
            st.close()
    return SweepReport(
        store=st.path, config_hash=config_hash, backend=be.describe(), cells=len(cells),
        skipped=len(cells) - len(todo), done=len(todo) - len(failed), failed=failed,
        wall_s=time.perf_counter() - start, corrupt=list(st.removed_corrupt),
    )


def _traceback_text(exc: BaseException) -> str:
    """The exception's traceback, including a worker process's (chained as its cause)."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


__all__ = ["ProgressCallback", "SweepReport", "describe_result", "resolved_params", "run_cell",
           "run_sweep"]
