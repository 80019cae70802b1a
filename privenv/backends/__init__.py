"""Execution backends for sweeps: where the cells of a sweep run.

A backend maps a picklable top-level function over a sequence of items and yields
``(index, value)`` pairs *as each item finishes*, in any order. The sweep
(:func:`privenv.sweep.run_sweep`) writes each finished cell to the results store in the parent
process, so the backend never touches the store and never decides what a cell's numbers are: a
cell carries its own seed, and its results are the same whichever backend, worker or order runs it.

=========  ==============================================  =====================================
name       class                                           set-up
=========  ==============================================  =====================================
``local``  :class:`privenv.backends.local.LocalBackend`    none: worker processes on this
                                                           machine (``workers=1``: in-process)
``dask``   ``privenv.backends.dask.DaskBackend``           a Dask scheduler at ``address``
                                                           (``pip install 'dask[distributed]'``)
=========  ==============================================  =====================================

Ray is not supported: privenv uses one distributed engine, and Dask is the one that runs a
process-per-core cluster from ``pip install`` alone, on any scheduler (SSH, Slurm/PBS via
dask-jobqueue, Kubernetes) — see docs/guides/sweeps.md.

The contract of :meth:`Backend.imap_unordered <privenv.backends.base.Backend.imap_unordered>`
(the base class, :mod:`privenv.backends.base`): if ``fn(item)`` raises an ``Exception``, the value
yielded for that item is the exception instance (the backend catches it per item and carries on);
the sweep records the cell as failed with the exception's text and traceback. ``BaseException``
that is not an ``Exception`` (``KeyboardInterrupt``) propagates.
"""

from __future__ import annotations

from privenv.backends.base import Backend

#: backend names accepted by :func:`get_backend` (and ``privenv sweep --backend``); ``"ray"`` is
#: accepted only to be refused with a pointer to Dask
BACKENDS = ("local", "ray", "dask")
#: the backends that run work, as the command-line help shows them
BACKEND_METAVAR = "{" + ",".join(name for name in BACKENDS if name != "ray") + "}"


def get_backend(name: str, workers: int | None = None, address: str | None = None) -> Backend:
    """The backend called ``name``: ``"local"`` or ``"dask"`` (``"ray"`` is refused, see above)."""
    if name == "local":
        from privenv.backends.local import LocalBackend

        return LocalBackend(workers=workers, address=address)
    if name == "dask":
        try:
            from privenv.backends.dask import DaskBackend
        except ImportError as e:
            missing = getattr(e, "name", None) or ""
            if missing.startswith("privenv"):
                raise ValueError(
                    "backend 'dask' is not available in this version of privenv"
                ) from e
            raise ValueError(
                f"backend 'dask' needs dask.distributed ({e}); install it with "
                "pip install 'dask[distributed]'"
            ) from e
        try:
            return DaskBackend(workers=workers, address=address)
        except ImportError as e:  # dask.distributed missing: a usage error, not a crash
            raise ValueError(str(e)) from e
    if name == "ray":
        raise ValueError(
            "backend 'ray' is not supported: privenv supports Dask as its distributed engine "
            "(one engine to test; Dask runs a cluster from pip alone, on SSH, Slurm/PBS or "
            "Kubernetes), use --backend dask --address tcp://SCHEDULER:8786"
        )
    raise ValueError(f"backend must be one of {list(BACKENDS)}, got {name!r}")


__all__ = ["BACKENDS", "BACKEND_METAVAR", "Backend", "get_backend"]
