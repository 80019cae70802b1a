"""The table of docs/results/bai.md, "AdaP-TT against the authors' code", from the results store of
``adap-tt-public-code.toml``::

    privenv sweep docs/results/measure/adap-tt-public-code.toml \\
        --store results/adap-tt-public-code.sqlite
    python docs/results/measure/adap_tt_public_code.py results/adap-tt-public-code.sqlite

One line per configuration: the public-code choices it makes, the mean ± sd stopping time τ
(every pull counted), its paired difference with Algorithm 9 (privenv's defaults; every
configuration runs on the same seed, so run i of each sees the same rewards) with a 95 % normal
interval, the tenth percentile of τ, ``released_pulls`` (τ without the pulls of unfinished phases:
what the public code reports as its stopping time) and the wrong recommendations.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from privenv.store import Store

#: the options of the public code, in the table's order
OPTIONS = ("beta_rule", "stop_candidate", "challenger_bonus", "bonus")
DEFAULTS = {"beta_rule": "tracking", "stop_candidate": "argmax", "challenger_bonus": "none",
            "bonus": "total"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    args = parser.parse_args()
    with Store(args.store, create=False) as store:
        results = store.results()
    rows = []
    for r in results:
        chosen = {k: v for k, v in r.agent_kwargs.items() if k in OPTIONS and v != DEFAULTS[k]}
        rows.append((chosen, r))
    base = next(r for chosen, r in rows if not chosen)
    tau0 = np.asarray(base.episode["stopping_time"], dtype=float)
    print(f"{'public-code choices':<58} {'τ mean ± sd':>17} {'paired Δτ (95 %)':>22} "
          f"{'τ p10':>8} {'released pulls':>17} {'wrong':>5}")
    for chosen, r in sorted(rows, key=lambda x: len(x[0])):
        tau = np.asarray(r.episode["stopping_time"], dtype=float)
        rel = np.asarray(r.episode["released_pulls"], dtype=float)
        d = tau - tau0
        half = 1.959963984540054 * d.std(ddof=1) / math.sqrt(d.size)
        label = ", ".join(f"{k}={v}" for k, v in chosen.items()) or "none (Algorithm 9)"
        wrong = int(np.count_nonzero(~np.asarray(r.episode["correct"], dtype=bool)))
        print(f"{label:<58} {tau.mean():>8.0f} ± {tau.std(ddof=1):<6.0f} "
              f"{d.mean():>+9.0f} [{d.mean() - half:+.0f}, {d.mean() + half:+.0f}] "
              f"{np.percentile(tau, 10):>8.0f} {rel.mean():>8.0f} ± {rel.std(ddof=1):<6.0f} "
              f"{wrong:>5}")


if __name__ == "__main__":
    main()
