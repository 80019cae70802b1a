"""The base class of the execution backends (:mod:`privenv.backends`: the contract and the names).

A module of its own so that the backends (:mod:`~privenv.backends.local`,
:mod:`~privenv.backends.dask`) derive from it without importing the package that chooses among
them (:func:`privenv.backends.get_backend`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any


class Backend(ABC):
    """Runs ``fn`` over items somewhere; a context manager (``close`` on exit).

    Args:
        workers: number of worker processes (``None``: the backend's default).
        address: where the engine runs (a scheduler address); ``None`` for the local backend.
    """

    name: str = ""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        self.workers = workers
        self.address = address

    @abstractmethod
    def imap_unordered(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(i, fn(items[i]))`` as each item finishes, in any order; the value is the
        exception instance if ``fn`` raised an ``Exception``."""

    def close(self) -> None:
        """Release workers and connections (idempotent; nothing to release by default)."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """One line for logs and the results store, e.g. ``local (2 workers)``."""
        parts = [] if self.workers is None else [f"{self.workers} workers"]
        if self.address:
            parts.append(self.address)
        return f"{self.name} ({', '.join(parts)})" if parts else self.name
