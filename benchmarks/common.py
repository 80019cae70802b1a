"""What every benchmark script shares: the machine line, the agents' ε, and the timed
step-by-step ``gym.make`` loop (:func:`privenv.simulation.play`) the fast path is compared with."""

from __future__ import annotations

import gc
import inspect
import os
import platform
import time
from typing import Any

import numpy as np

import privenv
from privenv import agents
from privenv.simulation import play


def machine_line() -> str:
    """Versions and CPUs, printed first by every benchmark."""
    return (f"privenv {privenv.__version__}, numpy {np.__version__}, Python "
            f"{platform.python_version()}, {os.cpu_count()} CPUs ({platform.processor() or '?'})")


def settle() -> None:
    """Collect garbage before a timing, so that no timing pays for a full collection the
    previous one left due. A full collection walks every object of the process (about 0.1 s with
    numba's compiled functions loaded, measured), whichever code triggers it; the collector stays
    on while the timed code runs, so its own allocations are paid for."""
    gc.collect()


def with_epsilon(name: str, epsilon: float, **kwargs: Any) -> dict[str, Any]:
    """``kwargs`` plus ``epsilon`` if agent ``name`` takes one."""
    if "epsilon" in inspect.signature(agents.agent_class(name).__init__).parameters:
        kwargs["epsilon"] = epsilon
    return kwargs


def timed_play(agent: Any, env: Any, runs: int, seed: int = 0) -> tuple[list[dict], float, float]:
    """Runs 0 … ``runs``−1 of ``seed`` one at a time through ``play``; returns their results, the
    wall time and the ns per run-step. Closes ``env``."""
    start = time.perf_counter()
    results = [play(agent, env, seed=seed, run=i) for i in range(runs)]
    wall = time.perf_counter() - start
    env.close()
    return results, wall, 1e9 * wall / sum(r["steps"] for r in results)
