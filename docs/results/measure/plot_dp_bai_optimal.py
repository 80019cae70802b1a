"""Draw dp-bai-optimal's figure from docs/results/dp-bai-optimal-ratios.csv, with dp-top-two's
points before its challenger moved to the released counts (dp-bai-optimal-ratios-pulls.csv,
dotted; docs/results/zoo.md).

E[τ]/(T*·log(1/δ)) against ε per instance, with T*_ε of Jourdan & Azize where the solver has an
allocation and paper 3's T*_g (hollow markers) where it has none, and the claimed factor 8 as a
dashed line.

    python docs/results/measure/plot_dp_bai_optimal.py docs/_static/results/dp-bai-optimal.png
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1]
CSV, BEFORE = RESULTS / "dp-bai-optimal-ratios.csv", RESULTS / "dp-bai-optimal-ratios-pulls.csv"
BEFORE_LABEL = "dp-top-two on N (before)"
STYLE = {"dp-top-two": ("C0", "o", "-"), "adap-tt": ("C1", "s", "-"), "dp-se": ("C2", "^", "-"),
         BEFORE_LABEL: ("C0", ".", ":")}


def main(out: str) -> None:
    series: dict[tuple[str, str], list[tuple[float, float, bool]]] = defaultdict(list)
    for path, only, label in ((CSV, None, None), (BEFORE, "dp-top-two", BEFORE_LABEL)):
        with path.open() as f:
            for row in csv.DictReader(f):
                if only and row["agent"] != only:
                    continue
                eps_ratio = row["tau_over_Teps_log"]
                ratio = float(eps_ratio or row["tau_over_Tg_log"])
                series[(row["instance"], label or row["agent"])].append(
                    (float(row["epsilon"]), ratio, not eps_ratio))
    instances = sorted({i for i, _ in series})
    fig, axes = plt.subplots(2, 3, figsize=(12, 7), sharex=True, sharey=True)
    for ax, inst in zip(axes.flat, instances, strict=True):
        for agent, (color, marker, line) in STYLE.items():
            pts = sorted(series.get((inst, agent), []))
            if not pts:
                continue
            xs, ys, _ = zip(*pts, strict=True)
            ax.plot(xs, ys, color=color, ls=line, label=agent)
            for x, y, g in pts:
                ax.plot([x], [y], marker=marker, color=color,
                        markerfacecolor="none" if g else color)
        ax.axhline(8, color="grey", ls="--", lw=1)
        ax.set(xscale="log", yscale="log", title=inst)
    for ax in axes[-1]:
        ax.set_xlabel("ε")
    for ax in axes[:, 0]:
        ax.set_ylabel("E[τ] / (T*·log(1/δ))")
    axes.flat[4].legend(title="δ = 0.01, 100 runs", loc="upper left")
    fig.suptitle("dp-bai-optimal: hollow = against T*_g (no T*_ε allocation); "
                 "dashed: the claimed 8")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dp-bai-optimal.png")
