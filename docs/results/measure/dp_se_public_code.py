"""DP-SE as the authors' public code computes its means, against privenv's DP-SE (paper 3, §5.2).

The public code of paper 3 (github.com/achraf-azize/DP-BAI, ``algorithms/dp_se.py``) divides each
epoch's reward sum by the arm's *cumulative* count, a mean biased towards 0 from epoch 2 on;
``privenv``'s ``dp-se`` divides it by the epoch's own count. The public code's mean is available
as the agent's audit hook ``cumulative_count`` (the bias the DP-SE tests must catch), which
scales the epoch's Laplace noise by the same factor R_e/N_a — less noise than the public code
adds, so if anything it stops sooner than the public code. Run (about 5 CPU-minutes)::

    python docs/results/measure/dp_se_public_code.py --runs 1000

It prints, per instance and ε, the mean ± sd stopping time and the wrong recommendations of both
DP-SE, on the seed and instances of ``privenv reproduce bai-global`` (δ = 0.01).
"""

from __future__ import annotations

import argparse

from privenv.agents.dp_se import DPSEBAI
from privenv.simulation import simulate


class PublicCodeDPSE(DPSEBAI):
    """DP-SE with the public code's cumulative-count means (the audit hook)."""

    cumulative_count = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--instances", default="mu1,mu2")
    parser.add_argument("--epsilons", default="0.1,1,10")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("instance  epsilon  DP-SE (privenv)        DP-SE (public code's means)  errors")
    for inst in args.instances.split(","):
        for eps in (float(e) for e in args.epsilons.split(",")):
            cells = []
            for cls in (DPSEBAI, PublicCodeDPSE):
                agent = cls(K=5, epsilon=eps, delta=0.01, task="bai", reward_mode="cost",
                            n_runs=args.runs)
                res = simulate(agent, "BestArmIdentification-v0", n_runs=args.runs,
                               seed=args.seed, horizon=10**8, env_kwargs={"instance": inst})
                tau = res.episode["stopping_time"]
                cells.append((f"{tau.mean():.0f} ± {tau.std(ddof=1):.0f}",
                              int((~res.episode["correct"]).sum())))
            print(f"{inst:<9} {eps:<8g} {cells[0][0]:<22} {cells[1][0]:<28} "
                  f"{cells[0][1]}, {cells[1][1]}", flush=True)


if __name__ == "__main__":
    main()
