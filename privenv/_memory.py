"""Memory estimates checked before a batch of runs is allocated.

A batch of ``n_runs`` runs holds per-run state in the env (reward streams, counts), the agent
(statistics, noise buffers) and the runner (the regret checkpoints). Asking for more runs than
memory holds must be a clear ``ValueError`` naming the limit — not a ``MemoryError`` traceback
halfway through building the env, nor the kernel's out-of-memory killer once the pages are
touched. :func:`check_runs_fit` estimates the bytes of a batch and refuses it when the estimate
exceeds :func:`memory_limit`.

The estimate is measured, not guessed: the env and agent are built (and reset) for 1 and for
``1 + PROBE_RUNS`` runs under :mod:`tracemalloc`, which numpy reports its array buffers to, and
the difference per run is scaled to ``n_runs``. The probe costs two small builds, so it runs only
for batches of at least :data:`PROBE_FROM` runs; smaller batches are checked against the runner's
own per-run arrays (a lower bound), which catch absurd requests at no cost.
"""

from __future__ import annotations

import os
import resource
import tracemalloc
from collections.abc import Callable
from typing import Any

#: batches of at least this many runs are measured (:func:`per_run_bytes`) before they are built
PROBE_FROM = 1024
#: runs added for the measurement (the per-run cost is the difference of two builds)
PROBE_RUNS = 4


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
        raise ValueError(f"{what} needs about {format_bytes(n_bytes)} of memory, more than the "
                         f"{format_bytes(limit)} {source}; {advice}")


def runner_bytes_per_run(n_checkpoints: int) -> int:
    """The runner's own arrays per run: regret checkpoints, running regret, steps, done flag and
    the episode values (stopping time, recommendation, correct)."""
    return 8 * (n_checkpoints + 2) + 1 + 17


def per_run_bytes(build: Callable[[int], Any]) -> float:
    """Bytes per run of what ``build(n_runs)`` allocates and keeps (measured under
    :mod:`tracemalloc` for 1 and ``1 + PROBE_RUNS`` runs)."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        sizes = []
        for n in (1, 1 + PROBE_RUNS):
            before = tracemalloc.get_traced_memory()[0]
            kept = build(n)
            sizes.append(tracemalloc.get_traced_memory()[0] - before)
            del kept
    finally:
        if started:
            tracemalloc.stop()
    return max(sizes[1] - sizes[0], 0) / PROBE_RUNS


def check_runs_fit(n_runs: int, n_checkpoints: int, build: Callable[[int], Any] | None,
                   what: str = "", advice: str = "") -> None:
    """Refuse (``ValueError``) a batch of ``n_runs`` runs whose estimated memory exceeds the
    limit. ``build(k)`` builds the env and agent for ``k`` runs (``None``: only the runner's
    arrays are counted, e.g. when the caller built them already)."""
    what = what or f"n_runs={n_runs}"
    advice = advice or ("simulate fewer runs at a time (first_run= slices of runs, or a sweep "
                        "with a smaller chunk)")
    per_run = runner_bytes_per_run(n_checkpoints)
    check_fits(what, n_runs * per_run, advice)
    if build is not None and n_runs >= PROBE_FROM:
        per_run += per_run_bytes(build)
        check_fits(f"{what} ({format_bytes(per_run)} per run)", n_runs * per_run, advice)


def check_simulation_fits(agent: Any, env_id: str, n_runs: int, horizon: int | None,
                          wrappers: Any, env_kwargs: dict[str, Any],
                          agent_kwargs: dict[str, Any], n_checkpoints: int) -> None:
    """:func:`check_runs_fit` for :func:`privenv.simulation.simulate` of a registered env id
    (and a registered agent name, else the env alone is measured)."""
    from privenv.agents import env_kwargs_for, make
    from privenv.simulation import make_vector_env

    def build(k: int) -> Any:
        venv = make_vector_env(env_id, k, horizon, wrappers, **env_kwargs_for(agent, env_kwargs))
        venv.reset(seed=0)
        if not isinstance(agent, str):
            return venv
        built = make(agent, venv, k, **agent_kwargs)
        built.reset(seed=0)
        return venv, built

    check_runs_fit(n_runs, n_checkpoints, build)


__all__ = ["PROBE_FROM", "check_fits", "check_runs_fit", "check_simulation_fits",
           "format_bytes", "memory_limit", "per_run_bytes"]
