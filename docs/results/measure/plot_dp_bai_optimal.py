"""Draw dp-bai-optimal's figure over the whole ε grid from docs/results/dp-bai-optimal-ratios.csv.

The grid was run in three stores (ε = 0.1 … 10, ε = 0.03, ε = 0.01: docs/results/zoo.md), and a
store draws only its own points; this draws every row of the committed CSV: E[τ]/(T*·log(1/δ))
against ε per instance, with T*_ε of Jourdan & Azize where the solver has an allocation and paper
3's T*_g (hollow markers) where it has none, and the claimed factor 8 as a dashed line.

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

CSV = Path(__file__).resolve().parents[1] / "dp-bai-optimal-ratios.csv"
STYLE = {"dp-top-two": ("C0", "o"), "adap-tt": ("C1", "s"), "dp-se": ("C2", "^")}


def main(out: str) -> None:
    series: dict[tuple[str, str], list[tuple[float, float, bool]]] = defaultdict(list)
    with CSV.open() as f:
        for row in csv.DictReader(f):
            eps_ratio = row["tau_over_Teps_log"]
            ratio = float(eps_ratio or row["tau_over_Tg_log"])
            series[(row["instance"], row["agent"])].append(
                (float(row["epsilon"]), ratio, not eps_ratio))
    instances = sorted({i for i, _ in series})
    fig, axes = plt.subplots(2, 3, figsize=(12, 7), sharex=True, sharey=True)
    for ax, inst in zip(axes.flat, instances, strict=True):
        for agent, (color, marker) in STYLE.items():
            pts = sorted(series.get((inst, agent), []))
            if not pts:
                continue
            xs, ys, _ = zip(*pts, strict=True)
            ax.plot(xs, ys, color=color, label=agent)
            for x, y, g in pts:
                ax.plot([x], [y], marker=marker, color=color,
                        markerfacecolor="none" if g else color)
        ax.axhline(8, color="grey", ls="--", lw=1)
        ax.set(xscale="log", yscale="log", title=inst)
    for ax in axes[-1]:
        ax.set_xlabel("ε")
    for ax in axes[:, 0]:
        ax.set_ylabel("E[τ] / (T*·log(1/δ))")
    axes.flat[0].legend(title="δ = 0.01, 100 runs")
    fig.suptitle("dp-bai-optimal: hollow = against T*_g (no T*_ε allocation); "
                 "dashed: the claimed 8")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dp-bai-optimal.png")
