"""Solutions of lab (e)'s exercises."""

from __future__ import annotations

import lab_e_your_own_private_agent as lab  # examples/ on the path, as in the lab's notebook
import numpy as np

from privenv.simulation import simulate


def exercise_1(quick: bool = True) -> dict[float, float]:
    """Tune the clipping bound B of ``LaplaceEpsGreedy``: the noise scale 2B/ε against the bias
    of clipping the rewards of the contaminated env."""
    horizon, runs = (1_000, 3) if quick else (20_000, 20)
    out = {}
    for bound in (2.0, 5.0, 20.0, 80.0):
        agent = lab.LaplaceEpsGreedy(K=5, epsilon=1.0, B=bound, n_runs=runs)
        res = simulate(agent, "HuberBandit-v0", n_runs=runs, horizon=horizon, seed=0,
                       env_kwargs=lab.ENV)
        out[bound] = float(np.mean(res.regret))
        print(f"B = {bound:4g}: final regret {out[bound]:8.1f}  [{res.privacy}]")
    return out
