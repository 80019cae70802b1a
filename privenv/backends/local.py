"""The local backend: worker processes on this machine, zero set-up (the default).

``workers=1`` runs every item in the calling process, one after another (no pickling, easiest to
debug). More workers use :class:`concurrent.futures.ProcessPoolExecutor`; at most ``2 × workers``
items are in flight, so a sweep of thousands of cells neither pickles them all up front nor waits
long for a Ctrl-C. If a worker process dies (killed, out of memory), the items it was running are
reported as failed (:class:`~concurrent.futures.process.BrokenProcessPool`) and the remaining items
go to a fresh pool.

Random numbers: a worker process — forked or spawned — starts with a copy of (or a fresh)
global numpy random state, and nothing in privenv draws from it: every cell seeds its own
generators from ``SeedSequence(seed, spawn_key=(run,))`` (:mod:`privenv.seeding`), so two workers
never share a stream and a cell's numbers do not depend on which worker runs it (tested).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from privenv._validation import check_choice, check_int
from privenv.backends.base import Backend


def exit_with_parent() -> None:
    """Pool worker initializer: end this worker as soon as its parent (a sweep, an audit) is gone.

    A worker otherwise waits for work forever once its parent is killed (SIGKILL, the OOM
    killer), holding memory and CPU. :mod:`multiprocessing` gives each worker a *sentinel*, the
    read end of a pipe whose write end only the parent (and workers forked after this one, which
    end the same way) holds; it becomes readable when they are all gone. A daemon thread waits on
    it and exits the process: the cell in flight is lost, which is what a killed sweep means
    (``--resume`` recomputes it; the store never sees half a cell)."""
    parent = multiprocessing.parent_process()
    if parent is None:  # pragma: no cover - not a multiprocessing child
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="privenv-exit-with-parent", daemon=True).start()


def default_workers() -> int:
    """Worker processes by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class LocalBackend(Backend):
    """Local worker processes.

    Args:
        workers: worker processes (``None``: one per CPU, :func:`default_workers`); ``1`` runs
            in the calling process.
        address: must be ``None`` (a local backend has no address).
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` (``None``: the platform's
            default for :mod:`multiprocessing`).
    """

    name = "local"
    #: the number of worker processes (resolved: never None)
    workers: int

    def __init__(
        self,
        workers: int | None = None,
        address: str | None = None,
        start_method: str | None = None,
    ) -> None:
        if address is not None:
            raise ValueError(
                f"address is for a distributed backend (--backend dask --address ...); the local "
                f"backend takes none, got {address!r}"
            )
        workers = default_workers() if workers is None else check_int("workers", workers, low=1)
        if start_method is not None:
            check_choice("start_method", start_method, multiprocessing.get_all_start_methods())
        super().__init__(workers=workers, address=None)
        self.start_method = start_method
        self._pool: ProcessPoolExecutor | None = None

    def _new_pool(self, n_items: int) -> ProcessPoolExecutor:
        ctx = multiprocessing.get_context(self.start_method) if self.start_method else None
        return ProcessPoolExecutor(max_workers=min(self.workers, max(1, n_items)), mp_context=ctx,
                                   initializer=exit_with_parent)

    def imap_unordered(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        if self.workers == 1 or len(items) <= 1:
            for i, item in enumerate(items):
                try:
                    value = fn(item)
                except Exception as e:  # noqa: BLE001 - per-item failure, reported as the value
                    value = e
                yield i, value
            return
        yield from self._imap_pool(fn, items)

    def _imap_pool(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        window = 2 * self.workers
        next_item = 0
        pending: dict[Future, int] = {}
        try:
            while next_item < len(items) or pending:
                if self._pool is None:
                    self._pool = self._new_pool(len(items) - next_item + len(pending))
                while next_item < len(items) and len(pending) < window:
                    try:
                        fut = self._pool.submit(fn, items[next_item])
                    except BrokenProcessPool:
                        break  # a worker died since the last wait: a fresh pool below
                    pending[fut] = next_item
                    next_item += 1
                if not pending:  # the pool broke before anything could be submitted
                    self._discard_pool()
                    continue
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                broken = False
                for fut in done:
                    i = pending.pop(fut)
                    exc = fut.exception()
                    broken |= isinstance(exc, BrokenProcessPool)
                    yield i, (fut.result() if exc is None else exc)
                if broken:
                    # every item in flight died with the pool: report them, start a fresh pool
                    for fut, i in list(pending.items()):
                        exc = fut.exception()
                        yield i, (fut.result() if exc is None else exc)
                    pending.clear()
                    self._discard_pool()
        finally:
            for fut in pending:
                fut.cancel()

    def _discard_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def describe(self) -> str:
        if self.workers == 1:
            return "local (in-process)"
        method = f", {self.start_method}" if self.start_method else ""
        return f"local ({self.workers} workers{method})"


__all__ = ["LocalBackend", "default_workers"]
