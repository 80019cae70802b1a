"""Benchmark of the federated experiments: ``python benchmarks/federated.py``.

Results: docs/results/benchmarks.md.

Runs ``fed-synthetic`` for one privacy budget at paper scale — panel (b): ε = 10⁻³, δ = 10⁻⁴,
non-private, silo-level LDP and SDP via amplification; M = 100 silos, K = 100, d = 10,
T = 10⁴, B = 25, 25 runs — on ``--workers`` local worker processes (default: one per CPU), and
prints, measured in one run on this machine:

* the wall time of the whole reproduction (cells, CSVs, figure; target ≤ 10 minutes on 2 cores);
* each cell's wall time and cost per run-step (one round of all M silos of one run);
* the peak resident memory of the largest worker process and of this process (target < 1 GB:
  the features are generated a few rounds at a time per run, never an M×T×K×d array, which at
  this scale would be 25 × 10⁴ × 100 × 100 × 10 × 4 bytes = 100 GB).

``--panel`` picks another panel of the figure, ``--runs``/``--horizon`` shrink it (then the
wall time is not the target's). The machine is shared and noisy: read absolute times as context.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time

from common import machine_line

from privenv.reproduce import fed
from privenv.reproduce.cells import default_workers


def peak_rss_mb(who: int) -> float:
    """Peak resident set size in MB (``ru_maxrss`` is in kB on Linux): of this process
    (``RUSAGE_SELF``) or of its largest waited-for child (``RUSAGE_CHILDREN``)."""
    return resource.getrusage(who).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panel", default="b", help="panel of fed-synthetic (b: ε = 1e-3)")
    parser.add_argument("--runs", type=int, default=fed.SYNTHETIC.full.runs)
    parser.add_argument("--horizon", type=int, default=fed.SYNTHETIC.full.horizon)
    parser.add_argument("--workers", type=int, default=default_workers())
    args = parser.parse_args(argv)

    print(machine_line())
    panel = next(p for p in fed.SYNTHETIC.panels if p.key == args.panel)
    print(f"\nfed-synthetic panel ({panel.key}) {panel.title}: protocols "
          f"{', '.join(panel.protocols)}; M = K = 100, d = 10, T = {args.horizon}, "
          f"B = {fed.BATCH}, {args.runs} runs, {args.workers} workers")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        rep = fed.reproduce(fed.SYNTHETIC, tmp, runs=args.runs, horizon=args.horizon,
                            workers=args.workers, panels=[args.panel], progress=False)
        wall = time.perf_counter() - start
    print(f"{'protocol':<22} {'cell wall s':>11} {'µs per run-step':>16} {'R(T)/T':>8}")
    for r in rep.results:
        x = r.result
        print(f"{r.cell.label:<22} {x.wall_s:>11.1f} {x.ns_per_run_step / 1e3:>16.0f} "
              f"{float(fed.time_average(r)[:, -1].mean()):>8.4f}")
    target = args.runs == fed.SYNTHETIC.full.runs and args.horizon == fed.SYNTHETIC.full.horizon
    print(f"wall time of the reproduction: {wall:.0f} s = {wall / 60:.1f} min"
          + (" (target ≤ 10 min on 2 cores)" if target else " (reduced scale: not the target)"))
    print(f"peak memory: largest worker {peak_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB, this "
          f"process {peak_rss_mb(resource.RUSAGE_SELF):.0f} MB (target < 1 GB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
