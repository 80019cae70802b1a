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
    naive = out[0.2]["ucb1"] - out[0.0]["ucb1"]
    truncated = abs(out[0.2]["robust-ucb"] - out[0.0]["robust-ucb"])
    assert naive > 5 * truncated, "contamination should hurt the naive mean far more"
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
    assert len(set(out.values())) == 1, "at this horizon ε should not change PRAE-R's pulls"
    return out


#: the written answer to each exercise's question (shown under its solution)
ANSWERS = {
    1: ("The naive mean degrades and the truncated one barely moves. From α = 0 to 20 % UCB1's "
        "final regret rises from 789 to 43 195 at the default size (314 to 974 at the quick "
        "size), Robust UCB's from 9 775 to 13 709 (717 to 725). A sample x moves a mean of n "
        "samples by x/n, so one N(0, 50²) outlier can move UCB1's estimate of an arm by more "
        "than the gap ½ and make it drop the best arm for a long time. Robust UCB counts the s-th "
        "sample only if |x| ≤ √(u·s/log(1/δ)) (Bubeck et al. 2013), so one sample moves its mean "
        "of n samples by at most that level divided by n: each outlier's influence is bounded, "
        "and a fraction α of them shifts the estimate by at most about α times the level."),
    2: ("It does not depend on ε: the final regret is the same at ε = 0.1, 1 and 10 (33 828.6 "
        "at the default size, 701.0 at the quick size). PRAE-R eliminates an arm only when it "
        "is 2β below the best, and β contains the α-term 2(8α)^{1/2} of Theorem 6.1, scaled by "
        "√(max E[X²]) = √6 here: 2β ≥ 6.2 at α = 5 %, against gaps of ½. So PRAE-R never "
        "eliminates an arm at any ε; its pulls (a random first phase, then every arm in turn) "
        "never depend on its private estimates, and the price of privacy is hidden under the "
        "price of robustness at this horizon."),
}
