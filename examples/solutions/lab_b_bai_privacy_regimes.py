"""Solutions of lab (b)'s exercises."""

from __future__ import annotations

from privenv.simulation import simulate
from privenv.theory import bai as theory

MEANS = [0.9, 0.6, 0.5]


def exercise_1(quick: bool = True) -> dict[str, float]:
    """Where the regime switch lies for a harder instance (smaller gaps), and AdaP-TT there."""
    means = [0.9, 0.8, 0.5]
    switch = theory.global_regime_switch_epsilon(means)
    runs = 3 if quick else 10
    out = {"switch_easy": theory.global_regime_switch_epsilon(MEANS), "switch_hard": switch}
    for label, eps in (("below", switch / 3), ("above", switch * 3)):
        res = simulate("adap-tt", "BestArmIdentification-v0", n_runs=runs, horizon=10_000_000,
                       seed=0, env_kwargs={"means": means},
                       agent_kwargs={"epsilon": eps, "delta": 0.01})
        out[f"stopping_{label}"] = float(res.episode["stopping_time"].mean())
    print(f"regime switch: ε = {out['switch_easy']:.3f} for {MEANS}, "
          f"{switch:.3f} for {means}; AdaP-TT stops after {out['stopping_below']:.0f} pulls at "
          f"ε = {switch / 3:.3f} and {out['stopping_above']:.0f} at ε = {switch * 3:.3f}")
    return out
