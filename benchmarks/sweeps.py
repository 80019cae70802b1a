"""Benchmark of sweeps and their backends. Run: ``python benchmarks/sweeps.py``.

Results: docs/results/benchmarks.md.

Prints, measured in one run on this machine:

(a) the throughput (cells/s) of a real sweep on the **local** backend with 1 and with 2 workers,
    and their ratio (target ≥ 1.8×). The sweep is ``--cells`` equal cells: one configuration
    (PRAE-R, ε = 0.5, on the default ``HuberBandit-v0`` instance) split into chunks of 10 runs,
    with the horizon calibrated first so that one cell takes about ``--cell-seconds`` (1 s). Wall
    times are those of :func:`privenv.sweep.run_sweep`, store writes and pool start-up included.
(b) the per-cell overhead of the **Dask** backend (a ``LocalCluster`` of 2 worker processes)
    against cells of a known duration: each cell spins the CPU for exactly ``--cell-seconds``, so
    N cells on W workers ideally take ``ceil(N / W)`` cell durations; the overhead of a cell is
    ``(wall − ideal) / ceil(N / W)``, the time each cell adds to its worker's timeline (W times
    the ``(wall − ideal) / N`` average over all cells), reported in seconds and relative to the
    cell duration. The cluster's start-up and a warm-up round are timed separately. The same
    cells through the local backend with 2 workers give its overhead for comparison.
(c) the sweep of (a) on the Dask backend with 2 workers: cells/s and its ratio to the local
    backend's, and whether both stores hold identical rows.

The machine is shared and noisy: compare the ratios, read absolute times as context.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine_line

from privenv.backends import get_backend
from privenv.store import Store
from privenv.sweep import SweepConfig, run_cell, run_sweep

ENV_ID = "HuberBandit-v0"
AGENT = "prae-r"
EPSILON = 0.5
CHUNK = 10  # runs per cell
CALIBRATION_HORIZON = 20_000


def spin(seconds: float) -> float:
    """A cell of known duration: keep one CPU busy for ``seconds`` of wall time."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return seconds


def sweep_config(cells: int, horizon: int) -> dict[str, Any]:
    return {
        "name": "bench-sweeps",
        "seed": 0,
        "runs": cells * CHUNK,
        "chunk": CHUNK,
        "horizon": horizon,
        "instances": [{"env": ENV_ID}],
        "agents": [{"name": AGENT, "params": {"epsilon": EPSILON}}],
    }


def cell_seconds(horizon: int) -> float:
    """Wall time of one cell of the benchmark sweep at ``horizon``, run in this process."""
    cell = SweepConfig.from_mapping(sweep_config(1, horizon)).cells()[0]
    start = time.perf_counter()
    run_cell(cell)
    return time.perf_counter() - start


def calibrate(target: float) -> tuple[int, float]:
    """The horizon at which one cell takes about ``target`` seconds, and the time measured."""
    cell_seconds(1000)  # imports, first-call costs
    t0 = cell_seconds(CALIBRATION_HORIZON)
    horizon = max(100, round(CALIBRATION_HORIZON * target / t0))
    return horizon, cell_seconds(horizon)


def timed_sweep(config: dict[str, Any], path: Path, backend: Any, workers: int | None) -> float:
    start = time.perf_counter()
    report = run_sweep(config, path, backend=backend, workers=workers, progress="none")
    wall = time.perf_counter() - start
    if not report.ok or report.done != report.cells:
        raise RuntimeError(f"the benchmark sweep did not complete: {report.summary()}")
    return wall


def timed_map(backend: Any, fn: Any, items: list[Any]) -> float:
    start = time.perf_counter()
    out = dict(backend.imap_unordered(fn, items))
    wall = time.perf_counter() - start
    bad = [v for v in out.values() if isinstance(v, BaseException)]
    if len(out) != len(items) or bad:
        raise RuntimeError(f"benchmark cells failed: {bad[:1]}")
    return wall


def overhead(wall: float, n: int, workers: int, duration: float) -> tuple[float, float]:
    """(ideal wall time, overhead per cell on its worker's timeline)."""
    rounds = math.ceil(n / workers)
    ideal = rounds * duration
    return ideal, (wall - ideal) / rounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=12,
                        help="cells of each measured sweep / map (default 12)")
    parser.add_argument("--cell-seconds", type=float, default=1.0,
                        help="target duration of one cell (default 1.0)")
    args = parser.parse_args(argv)
    if args.cells < 2 or not args.cell_seconds > 0:
        parser.error("--cells must be ≥ 2 and --cell-seconds > 0")
    n, d = args.cells, args.cell_seconds

    print(machine_line())
    horizon, measured = calibrate(d)
    print(f"\none cell = {AGENT} (ε = {EPSILON}) on {ENV_ID}, {CHUNK} runs × T = {horizon}: "
          f"{measured:.2f} s in this process (target {d:g} s)", flush=True)
    config = sweep_config(n, horizon)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)

        # (a) local backend, 1 vs 2 workers -------------------------------------------------------
        print(f"\n(a) local backend: a sweep of {n} equal cells", flush=True)
        wall1 = timed_sweep(config, out / "local1.sqlite", "local", 1)
        wall2 = timed_sweep(config, out / "local2.sqlite", "local", 2)
        with Store(out / "local2.sqlite") as st:
            cell_sum = float(st.to_frame("cells")["wall_s"].sum())
        print(f"1 worker : {wall1:6.2f} s wall, {n / wall1:.3f} cells/s")
        print(f"2 workers: {wall2:6.2f} s wall, {n / wall2:.3f} cells/s (cells took "
              f"{cell_sum / n:.2f} s each on average, vs {wall1 / n:.2f} s alone)")
        print(f"throughput ratio 2 / 1 workers: {wall1 / wall2:.2f}× (target ≥ 1.8×)", flush=True)

        # (b) Dask backend overhead against cells of a known duration -----------------------------
        print(f"\n(b) per-cell overhead: {n} cells spinning {d:g} s each on 2 workers "
              f"(ideal wall = ceil({n}/2) × {d:g} s)", flush=True)
        start = time.perf_counter()
        dask = get_backend("dask", 2)
        started = time.perf_counter() - start
        try:
            warm = timed_map(dask, spin, [0.01, 0.01])
            wall_dask = timed_map(dask, spin, [d] * n)
            # (c) the real sweep of (a) on the same Dask cluster
            wall_dask_sweep = timed_sweep(config, out / "dask.sqlite", dask, None)
        finally:
            dask.close()
        with get_backend("local", 2) as local:
            wall_local = timed_map(local, spin, [d] * n)
        ideal, o_dask = overhead(wall_dask, n, 2, d)
        _, o_local = overhead(wall_local, n, 2, d)
        print(f"Dask LocalCluster start-up {started:.2f} s, warm-up round {warm:.2f} s "
              f"(not counted below)")
        print(f"dask  (2 workers): {wall_dask:6.2f} s wall vs ideal {ideal:.2f} s → "
              f"{1e3 * o_dask:6.1f} ms per cell = {o_dask / d:.2%} of a {d:g}-s cell")
        print(f"local (2 workers): {wall_local:6.2f} s wall vs ideal {ideal:.2f} s → "
              f"{1e3 * o_local:6.1f} ms per cell = {o_local / d:.2%} of a {d:g}-s cell")

        with Store(out / "local2.sqlite") as a, Store(out / "dask.sqlite") as b:
            same = a.table("runs") == b.table("runs") and a.table("curves") == b.table("curves")
        print(f"\n(c) the sweep of (a) on the Dask backend, 2 workers: {wall_dask_sweep:6.2f} s "
              f"wall, {n / wall_dask_sweep:.3f} cells/s = {wall2 / wall_dask_sweep:.2f}× the "
              f"local backend's with 2 workers; identical rows: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
