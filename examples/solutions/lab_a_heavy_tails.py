"""Solutions of lab (a)'s exercises."""

from __future__ import annotations

import numpy as np

from privenv.simulation import simulate

MEANS = [1.0, 0.5, 0.5, 0.5, 0.5]


def exercise_1(quick: bool = True) -> dict[float, dict[str, float]]:
    """Final regret of UCB1 and Robust UCB as the Gaussian contamination level α grows."""
    horizon, runs = (2_000, 4) if quick else (100_000, 20)
    out: dict[float, dict[str, float]] = {}
    for alpha in (0.0, 0.05, 0.2):
        out[alpha] = {}
        for agent in ("ucb1", "robust-ucb"):
            res = simulate(agent, "HuberBandit-v0", n_runs=runs, horizon=horizon, seed=0,
                           env_kwargs={"means": MEANS, "alpha": alpha})
            out[alpha][agent] = float(np.mean(res.regret))
        print(f"α = {alpha:4.2f}: " + ", ".join(f"{a} {r:8.1f}" for a, r in out[alpha].items()))
    return out


def exercise_2(quick: bool = True) -> dict[float, float]:
    """The price of privacy: PRAE-R's final regret at several ε (adversarial contamination)."""
    horizon, runs = (2_000, 4) if quick else (100_000, 20)
    out = {}
    for epsilon in (0.1, 1.0, 10.0):
        res = simulate("prae-r", "HuberBandit-v0", n_runs=runs, horizon=horizon, seed=0,
                       env_kwargs={"means": MEANS, "alpha": 0.05, "contamination": "adversarial"},
                       agent_kwargs={"epsilon": epsilon})
        out[epsilon] = float(np.mean(res.regret))
        print(f"ε = {epsilon:5g}: PRAE-R final regret {out[epsilon]:8.1f}  [{res.privacy}]")
    return out
