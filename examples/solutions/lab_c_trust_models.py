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
    assert out[8.0] < out[0.5], "a larger ε (less privacy) should cost less"
    return out


#: the written answer to each exercise's question (shown under its solution)
ANSWERS = {
    1: ("Local DP's price falls as ε grows, but slowly, and only with enough users. After 10⁴ "
        "users LDP-LinUCB's regret per user is 0.64 at ε = 0.5, 0.59 at 2 and 0.40 at 8 "
        "(random play is about 0.7), still far above the non-private LinUCB's 0.006; after the "
        "quick size's 600 users it is 0.63–0.65 at every ε. Every user randomizes its own "
        "context and reward, with noise whose scale grows like 1/ε, before the learner sees "
        "anything, so the learner must average that noise away over many users: its regret "
        "bound grows like T^{3/4}/ε, not √T."),
}
