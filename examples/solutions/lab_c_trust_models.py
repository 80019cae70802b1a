"""Solutions of lab (c)'s exercises."""

from __future__ import annotations

import numpy as np

from privenv.simulation import simulate


def exercise_1(quick: bool = True) -> dict[float, float]:
    """Local DP's price as a function of ε: LDP-LinUCB's per-user regret at several ε."""
    users, runs = (600, 2) if quick else (10_000, 5)
    problem = {"d": 5, "contexts": "sphere", "noise": "bounded", "A": 10}
    out = {}
    for epsilon in (0.5, 2.0, 8.0):
        res = simulate("ldp-linucb", "LinearContextualBandit-v0", n_runs=runs, horizon=users,
                       seed=0, env_kwargs=problem, agent_kwargs={"epsilon": epsilon})
        out[epsilon] = float(np.mean(res.regret) / users)
        print(f"ε = {epsilon:3g}: LDP-LinUCB regret per user {out[epsilon]:.4f}  [{res.privacy}]")
    return out
