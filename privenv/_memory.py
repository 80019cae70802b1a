"""Sizes checked before a run allocates anything: sanity ranges, and memory estimated from sizes.

A run allocates from a few sizes: the arms K (actions per silo), the actions A, the feature
dimension d, the silos M, the horizon, the regret checkpoints, the runs of a batch and the worker
processes of a sweep. :func:`simulate <privenv.simulation.simulate>`, ``privenv run``, sweeps
(:meth:`SweepConfig.validate <privenv.sweep.SweepConfig.validate>` and
:func:`run_sweep <privenv.sweep.run_sweep>`) and the reproductions, which run sweeps, check them
here before any env or agent of the run is built, and refuse in one line naming the parameter
and its allowed range or the estimate (``ValueError``; on the command line, exit code 2):

1. **Sanity ranges** (:data:`SIZE_LIMITS`): each size against the largest value a run is set up
   for. Beyond it a run would spend minutes before its first step or hours per run, which a typo
   (``K=100000000``, a horizon of 10¹²) far more often explains than an experiment; a Gymnasium
   env built directly (``gym.make``) is not limited.
2. **Memory** (:func:`run_bytes`): the bytes of one run estimated from its sizes alone, without
   building anything, as a *lower bound*: the arrays every env of the family and every agent
   declaring that size must hold (a K-armed env's per-arm stream state, an agent's per-arm
   counts, a d × d Gram matrix, …; checked against every registered agent in
   ``tests/test_memory.py``). A batch whose lower bound exceeds the memory this process may
   allocate (:func:`memory_limit`) cannot fit, so refusing it never refuses a run that would
   have fit.
3. **Workers** (:func:`check_workers`): each worker process of a sweep costs at least
   :data:`WORKER_BYTES` of its own, plus a cell running in it.

This module imports no env, agent or runner (only the results record's defaults): the caller
reads the sizes from the env's public description and the agent's declared problem quantities
and passes them in (:func:`privenv.simulation.estimate_run_bytes`).
"""

from __future__ import annotations

import os
import resource
from collections.abc import Collection, Mapping
from typing import Any, TypeGuard

import numpy as np

from privenv.results import DEFAULT_CHECKPOINTS

#: size → (the largest value a run is set up for, what it counts and why the limit)
SIZE_LIMITS: dict[str, tuple[int, str]] = {
    "K": (10**6, "arms: each run seeds one reward stream per arm, about 3 µs and 32 B or more "
                 "each, before its first step"),
    "A": (10**6, "actions: each round draws the features of every action"),
    "d": (10**4, "feature dimensions: a d × d matrix is 800 MB per run at d = 10**4"),
    "M": (10**4, "silos: each round steps every silo"),
    "horizon": (10**10, "steps per run: 10**10 steps take minutes to hours per run at 20-500 ns "
                        "a step"),
}
_LIMIT_TEXT = {10**4: "10**4", 10**6: "10**6", 10**10: "10**10"}

#: bytes a forked worker process holds of its own after running a small cell (measured 6.1 MB
#: private dirty memory, ``/proc/PID/smaps_rollup``, Python 3.11, Linux; a spawned one holds
#: 104 MB): the lower bound counted per worker
WORKER_BYTES = 4 * 2**20


def memory_limit() -> tuple[int, str]:
    """The bytes this process may still allocate and where that limit comes from: the memory
    the kernel reports available (``MemAvailable``), a cgroup limit, or ``RLIMIT_AS``, whichever
    is smallest."""
    limits: list[tuple[int, str]] = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append((int(line.split()[1]) * 1024, "available on this machine"))
    except (OSError, ValueError, IndexError):
        pass
    if not limits:
        try:
            pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            limits.append((int(pages), "of physical memory on this machine"))
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
            pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file) as f, open(usage_file) as g:
                limit, usage = f.read().strip(), int(g.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:  # "max" or a huge number: no limit
            limits.append((max(int(limit) - usage, 0), "left under this cgroup's memory limit"))
        break
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limits.append((int(soft), "of address space allowed by RLIMIT_AS"))
    if not limits:  # pragma: no cover - nothing to measure against
        return 2**63 - 1, "(no limit known)"
    return min(limits)


def format_bytes(n: float) -> str:
    """``n`` bytes as ``1.5 GB`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.3g} PB"  # pragma: no cover


def check_fits(what: str, n_bytes: float, advice: str) -> None:
    """Raise ``ValueError`` if ``n_bytes`` exceed :func:`memory_limit`."""
    limit, source = memory_limit()
    if n_bytes > limit:
        raise ValueError(f"{what} needs at least {format_bytes(n_bytes)} of memory, more than "
                         f"the {format_bytes(limit)} {source}; {advice}")


# -- sizes --------------------------------------------------------------------------------------


def _is_int(value: Any) -> TypeGuard[int | np.integer]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_sizes(sizes: Mapping[str, Any], prefix: str = "") -> None:
    """Refuse (``ValueError``) a size of :data:`SIZE_LIMITS` beyond its range. Values that are
    not integers are left to the constructor that takes them (its own one-line error).
    ``prefix`` names where the size was given (``"env."`` for ``--set env.K=…``)."""
    for name, (high, why) in SIZE_LIMITS.items():
        value = sizes.get(name)
        if _is_int(value) and int(value) > high:
            raise ValueError(f"{prefix}{name} must be at most {_LIMIT_TEXT[high]} for a run "
                             f"({why}), got {int(value)}")


def check_checkpoints(n_checkpoints: int, horizon: int) -> None:
    """At most one regret checkpoint per step: ``n_checkpoints`` ≤ the horizon (the default 40
    is always allowed; with a shorter horizon every step is a checkpoint)."""
    high = max(int(horizon), DEFAULT_CHECKPOINTS)
    if n_checkpoints > high:
        raise ValueError(f"n_checkpoints must be an integer in [1, {high}] (at most one per step "
                         f"of the horizon {int(horizon)}, or the default {DEFAULT_CHECKPOINTS}), "
                         f"got {n_checkpoints}")


def runner_bytes_per_run(n_checkpoints: int, horizon: int | None = None) -> int:
    """The runner's own arrays per run: regret checkpoints, running regret, steps, done flag and
    the episode values (stopping time, recommendation, correct)."""
    points = n_checkpoints if horizon is None else min(n_checkpoints, int(horizon))
    return 8 * (points + 2) + 1 + 17


def run_bytes(family: str, sizes: Mapping[str, int], agent_keys: Collection[str] = ()) -> int:
    """A lower bound of the bytes one run of a ``family`` env holds, from its ``sizes`` (its
    public description: ``K``, ``d``, ``A``, ``M``) and, for an agent, the problem quantities it
    declares (``agent_keys``, e.g. ``{"K"}`` or ``{"M", "K", "d"}``):

    * env: a K-armed env (``huber``, ``bai``, ``bernoulli``) the state of one reward stream per
      arm (a PCG64 state, 32 B); a linear env one round's features (A·d, float32 at least); a
      federated env every silo's (M·K·d);
    * agent: declaring K, a count and a sum per arm (16 B); declaring d, a d × d matrix, packed
      symmetric at least (4·d² B; 8·d² in float64), one per silo if it declares M, one per
      action if it declares A (LPLR's per-action statistics).
    """
    K, A, d, M = (int(sizes.get(k) or 0) for k in ("K", "A", "d", "M"))
    env = {"huber": 32 * K, "bai": 32 * K, "bernoulli": 32 * K, "linear": 4 * A * d,
           "federated": 4 * M * K * d}.get(family, 0)
    agent = 0
    if "K" in agent_keys and family in ("huber", "bai", "bernoulli"):
        agent += 16 * K
    if "d" in agent_keys:
        copies = M if "M" in agent_keys else A if "A" in agent_keys else 1
        agent += 4 * d * d * max(copies, 1)
    return env + agent


def check_runs_fit(n_runs: int, per_run: int, what: str = "", advice: str = "",
                   sizes: Mapping[str, Any] | None = None) -> None:
    """Refuse (``ValueError``) a batch of ``n_runs`` runs of ``per_run`` bytes each that memory
    cannot hold (``sizes``: the sizes of a run, named when one run alone does not fit)."""
    named = ", ".join(f"{k}={v}" for k, v in (sizes or {}).items() if k in SIZE_LIMITS)
    check_fits(f"one run ({named})" if named else "one run", per_run,
               "use smaller sizes")
    what = what or f"n_runs={n_runs}"
    advice = advice or ("simulate fewer runs at a time (first_run= slices of runs, or a sweep "
                        "with a smaller chunk)")
    check_fits(f"{what} ({format_bytes(per_run)} per run)", n_runs * per_run, advice)


def check_workers(workers: int, cell_bytes: int = 0) -> None:
    """Refuse ``workers`` worker processes that memory cannot hold, each at least
    :data:`WORKER_BYTES` of its own plus a cell of ``cell_bytes``."""
    per_worker = WORKER_BYTES + int(cell_bytes)
    limit, _ = memory_limit()
    most = max(limit // per_worker, 1)
    check_fits(f"workers={workers} ({format_bytes(per_worker)} per worker process: its own "
               f"memory and a cell)", workers * per_worker,
               f"use at most {most} workers")


__all__ = ["SIZE_LIMITS", "WORKER_BYTES", "check_checkpoints",
           "check_fits", "check_runs_fit", "check_sizes", "check_workers", "format_bytes",
           "memory_limit", "run_bytes", "runner_bytes_per_run"]
