"""The distributed backend: sweep cells on a Dask cluster or a local one (docs/guides/sweeps.md).

``DaskBackend(address="tcp://HOST:8786")`` connects a :class:`distributed.Client` to a running
scheduler (started with ``dask scheduler``; workers join with ``dask worker tcp://HOST:8786``, or
through dask-jobqueue / dask-kubernetes / ``distributed.SSHCluster``). ``DaskBackend(workers=N)``
starts a :class:`distributed.LocalCluster` of ``N`` worker *processes* with one thread each and
shuts it down on :meth:`~DaskBackend.close`: the same code path as a cluster, on one machine (the
tests use it).

Why Dask rather than Ray: ``dask`` and ``distributed`` are pure-Python wheels (2.5 MB together),
and the same scheduler runs on SSH hosts, HPC job queues and Kubernetes through small companion
packages (``distributed.SSHCluster``, dask-jobqueue, dask-kubernetes). Ray 2.60 ships compiled
wheels of 29-79 MB (with its own raylet and GCS server binaries) for four platforms, and no source
distribution (see docs/guides/sweeps.md).

Faults. An exception raised by a cell is caught on the worker and yielded as the exception instance
(the sweep records the cell as failed and goes on). A worker process that dies (segfault,
``os._exit``, out of memory) is restarted by its nanny and Dask reschedules the cells it was
running; a cell that keeps killing workers is given up after the scheduler's
``distributed.scheduler.allowed-failures`` retries (3 by default) as
:class:`distributed.KilledWorker`. Since the scheduler counts a death against every cell assigned
to the dead worker, a cell given up this way is run once more, alone, after the others, and
yielded as ``KilledWorker`` only if it kills workers on its own (the local cluster also assigns one
cell per worker at a time, so there are no bystanders to begin with). The local cluster replaces
workers that ``LocalCluster`` retires after repeated deaths. Losing the scheduler itself is not a
cell failure: it raises, the cells already yielded are stored, and the sweep resumes with
``--resume``.

Determinism. Cells carry their own seeds, so a cell's numbers do not depend on the worker, the order
or the number of workers (docs/design/architecture.md, "The seeding contract"). Workers must run the
same privenv, numpy, scipy and gymnasium as the client: checked on the workers present when
connecting.
"""

from __future__ import annotations

import gc
import logging
import uuid
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import closing
from typing import Any

from privenv._validation import check_int, check_real
from privenv.backends.base import Backend
from privenv.backends.local import default_workers

try:
    import dask
    import distributed
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.core import Status
    from tornado.ioloop import PeriodicCallback
except ImportError as exc:  # pragma: no cover - the test extra installs it
    raise ImportError('the "dask" backend needs dask.distributed: pip install "privenv[cluster]"',
                      name=exc.name) from exc

#: seconds to wait for the scheduler at ``address`` before giving up
CONNECT_TIMEOUT_S = 5.0

#: seconds the local cluster's scheduler tries to reach one of its workers
LOCAL_CONNECT_TIMEOUT_S = 3.0

#: cells in flight at least, whatever the cluster size (see ``DaskBackend(window=…)``)
MIN_WINDOW = 64


def _worker_versions() -> dict[str, str]:
    """Runs on each worker: the versions a cell's numbers depend on (those results record, less
    Python's)."""
    from privenv.simulation import versions

    found = versions()
    found.pop("python", None)
    return found


def check_address(address: Any) -> str:
    """``address`` stripped, if it reads as a scheduler address (``[tcp://]HOST:PORT`` or another
    Dask protocol), else a ``ValueError``."""
    hint = f"address must be a Dask scheduler address such as 'tcp://HOST:8786', got {address!r}"
    if not isinstance(address, str) or not address.strip():
        raise ValueError(hint)
    address = address.strip()
    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls", "ws", "wss"):
            host, port = parse_host_port(location)
            if not host or not 0 < int(port) < 65536:
                raise ValueError(f"no host, or port {port} outside [1, 65535]")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{hint} ({exc})") from None
    return address


class DaskBackend(Backend):
    """Run sweep cells on a Dask cluster (``address``) or on a local cluster of ``workers``.

    Parameters
    ----------
    workers:
        Worker processes of the local cluster (default: one per CPU). Must be ``None`` with
        ``address``: a running cluster has its own workers.
    address:
        Scheduler address of a running cluster, e.g. ``"tcp://10.0.0.5:8786"``.
    timeout:
        Seconds to wait for the scheduler at ``address`` (default :data:`CONNECT_TIMEOUT_S`).
    window:
        Most cells submitted and not yet yielded (default: max(:data:`MIN_WINDOW`, 4 × the
        cluster's threads when :meth:`imap_unordered` starts)). Bounds the client's and the
        scheduler's memory on sweeps of many thousands of cells.
    """

    name = "dask"

    def __init__(
        self,
        workers: int | None = None,
        address: str | None = None,
        *,
        timeout: float = CONNECT_TIMEOUT_S,
        window: int | None = None,
    ) -> None:
        if address is not None and workers is not None:
            raise ValueError(
                f"workers sizes the local cluster started without an address; the cluster at "
                f"{address!r} has its own workers (start them with `dask worker {address}`), "
                f"got workers={workers!r}"
            )
        super().__init__(workers=workers, address=address)
        self.timeout = check_real("timeout", timeout, low=0.0, low_open=True)
        self.window = None if window is None else check_int("window", window, low=1)
        self.cluster: Any = None
        self.client: Any = None
        self._keeper: PeriodicCallback | None = None
        if address is None:
            n = default_workers() if workers is None else check_int("workers", workers)
            # one cell per worker at a time (saturation 1.0, not Dask's 1.1 that sends a 1-thread
            # worker a second cell in advance), so a dying worker takes no bystander cell down
            with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
                self.cluster = distributed.LocalCluster(
                    n_workers=n,
                    processes=True,  # real worker processes, as on a cluster
                    threads_per_worker=1,  # one cell per process, like the local backend
                    host="127.0.0.1",
                    scheduler_port=0,  # any free port: several sweeps (or test processes) at once
                    dashboard_address=None,
                    # the scheduler's HTTP routes (health, metrics) would still take port 8787,
                    # the dashboard port of any real scheduler on this host: any free port instead
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                    silence_logs=logging.CRITICAL,  # failed cells are recorded by the sweep
                )
            try:
                self.client = distributed.Client(self.cluster, set_as_default=False)
            except BaseException:
                self.cluster.close()
                raise
            self.workers = n
            self.address = self.cluster.scheduler_address
            # every process is on this host, where a dead worker refuses connections at once: when
            # the scheduler fetches a finished cell's result from a worker that has just died,
            # give up after LOCAL_CONNECT_TIMEOUT_S (and recompute it), not Dask's default 30 s
            rpc = getattr(self.cluster.scheduler, "rpc", None)
            if rpc is not None and hasattr(rpc, "timeout"):
                rpc.timeout = LOCAL_CONNECT_TIMEOUT_S
            # LocalCluster retires a worker for good when it is still down 15 s
            # (distributed.deploy.lost-worker-timeout) after an earlier death of it, e.g. in a
            # run of cells that kill workers; with all of them gone the sweep would wait
            # forever. Check every second and start replacements.
            self._keeper = PeriodicCallback(self._keep_workers, 1000)
            self.cluster.loop.add_callback(self._keeper.start)
        else:
            self.address = check_address(address)
            self.client = self._connect(self.address)
            self._check_workers()

    def _keep_workers(self) -> None:
        """Runs on the local cluster's event loop: bring the cluster back to ``workers``."""
        cluster = self.cluster
        if cluster is not None and self.workers is not None \
                and cluster.status == Status.running and len(cluster.workers) < self.workers:
            cluster.scale(self.workers)

    def _connect(self, address: str) -> Any:
        try:
            return distributed.Client(address, timeout=self.timeout, set_as_default=False)
        except Exception as exc:  # timeout, refused, not a Dask scheduler (e.g. the dashboard)
            # the half-built Client sits in a reference cycle; collected later, at a random
            # moment, its __del__ can deadlock a Client or LocalCluster being started (seen with
            # distributed 2026.8): collect it now
            gc.collect()
            raise ConnectionError(
                f"could not connect to a Dask scheduler at {address} within {self.timeout:g} s "
                f"({type(exc).__name__}: {exc}). Is `dask scheduler` running there, and is this "
                f"its scheduler port (8786 by default, not the dashboard's 8787)?"
            ) from None

    def _check_workers(self) -> None:
        """Every worker present must compute what this process would: same privenv, numpy, scipy
        and gymnasium. Workers that join later are not checked (their rows record their
        versions)."""
        try:
            found = self.client.run(_worker_versions)
        except Exception as exc:  # noqa: BLE001 - a worker's ImportError arrives as Exception
            self.close()
            raise RuntimeError(
                f"could not check the workers of the Dask cluster at {self.address} ({exc}); "
                f"install the same privenv on every worker (pip install \"privenv[cluster]\")"
            ) from None
        mine = _worker_versions()
        wrong = {w: v for w, v in found.items() if v != mine}
        if wrong:
            self.close()
            raise RuntimeError(f"workers of the Dask cluster at {self.address} run other versions "
                               f"than this process ({mine}): {wrong}; their results would differ "
                               f"from a local sweep")
        if not found:
            warnings.warn(f"no workers are connected to the Dask scheduler at {self.address} "
                          f"yet: cells wait until workers join (dask worker {self.address})",
                          RuntimeWarning, stacklevel=3)

    def _window(self) -> int:
        if self.window is not None:
            return self.window
        return max(MIN_WINDOW, 4 * sum(self.client.nthreads().values()))

    def imap_unordered(
        self, fn: Callable[[Any], Any], items: Sequence
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(i, fn(items[i]))`` as cells finish, at most ``window`` in flight.

        If ``fn`` raised, the value is the exception instance. A cell given up as
        :class:`~distributed.KilledWorker` may only have shared a dying worker with the cell that
        killed it (the scheduler counts a death against every cell assigned to that worker), so
        it is run once more at the end, alone: the value is then its result, or ``KilledWorker``
        if it kills workers on its own too. Closing the iterator early cancels the cells not yet
        yielded.
        """
        if self.client is None:
            raise RuntimeError("this DaskBackend is closed")
        prefix = f"{getattr(fn, '__name__', 'cell')}-{uuid.uuid4().hex}"
        suspects = []
        with closing(self._run(fn, enumerate(items), prefix, self._window())) as cells:
            for i, item, value in cells:
                if isinstance(value, distributed.KilledWorker):
                    suspects.append((i, item))
                else:
                    yield i, value
        with closing(self._run(fn, iter(suspects), f"{prefix}-alone", 1)) as cells:
            for i, _, value in cells:
                yield i, value

    def _run(
        self, fn: Callable[[Any], Any], todo: Iterator[tuple[int, Any]], prefix: str, window: int
    ) -> Generator[tuple[int, Any, Any], None, None]:
        """``(i, item, fn(item) or its exception)`` for ``(i, item)`` of ``todo``, ``window`` at a
        time, as they finish."""
        pending: dict[str, tuple[int, Any, Any]] = {}  # key -> (index, item, future)
        done = distributed.as_completed(
            loop=self.client.loop, with_results=True, raise_errors=False
        )

        def submit_next() -> None:
            nxt = next(todo, None)
            if nxt is not None:
                i, item = nxt
                fut = self.client.submit(fn, item, key=f"{prefix}-{i}", pure=False)
                pending[fut.key] = (i, item, fut)
                done.add(fut)

        for _ in range(window):
            submit_next()
        try:
            for fut, value in done:
                i, item, _ = pending.pop(fut.key)
                if isinstance(value, CancelledError):  # the scheduler or client went away
                    raise RuntimeError(
                        f"the Dask cluster at {self.address} dropped cell {i} "
                        f"({getattr(value, 'reason', None) or type(value).__name__}); the "
                        f"cells already yielded are kept: restart the cluster and resume the sweep"
                    ) from value
                if fut.status == "error":  # value is (type, exception, traceback)
                    _, exc, tb = value
                    value = exc.with_traceback(tb)
                del fut, _  # release the finished cell's result on the cluster
                submit_next()
                yield i, item, value
        finally:
            if pending and self.client is not None and self.client.status == "running":
                self.client.cancel([f for _, _, f in pending.values()])
            pending.clear()

    def describe(self) -> str:
        if self.cluster is not None:
            return f"dask (local cluster, {self.workers} workers)"
        return f"dask ({self.address})"

    def close(self) -> None:
        """Disconnect; a local cluster is shut down (a cluster at ``address`` keeps running)."""
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        if self._keeper is not None:
            self._keeper.stop()
            self._keeper = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


__all__ = ["CONNECT_TIMEOUT_S", "DaskBackend"]
