"""Lab (b): the two privacy regimes of best-arm identification, against the lower bound.

**Question.** How many samples does an ε-global-DP best-arm identification strategy need, as a
function of ε? Paper 3 (Azize et al.) proves a lower bound T*_g(ν; ε)·log(1/(2.4δ)) with two
regimes (Theorem 17, Corollary 18): for large ε privacy is free (the bound is the non-private
T*_KL), for small ε it grows like T*_TV/ε. The switch is at ε ≈ T*_TV/T*_KL.

**Run.** ``BestArmIdentification-v0`` with Bernoulli means (0.9, 0.6, 0.5), δ = 0.01. Agents:
``adap-tt`` (paper 3's AdaP-TT, ε-global DP) over a grid of ε on both sides of the switch, and
``ttucb`` (non-private TTUCB) as the ε-free reference. References: the exact lower bound
T*_g(ν; ε)·log(1/(2.4δ)) (:func:`privenv.theory.bai.global_dp_lower_bound`) and its two
relaxed terms, the switch :func:`~privenv.theory.bai.global_regime_switch_epsilon`. Default: ε
from 0.03 to 10, 10 runs per ε (about 10 s); ``--quick``: three ε, 3 runs.

**What to notice** (measured at the default size, seed 0; wall time ≈ 10 s):

* The switch of this instance is at ε ≈ 0.49 (shaded line); the lower bound is 70 for ε ≥ 1 and
  1140 at ε = 0.03.
* Above the switch AdaP-TT's stopping time is flat: 4992 ± 481 at ε = 1, 4988 ± 485 at ε = 10 —
  privacy costs a constant factor there (≈ 10 × the non-private TTUCB's 486 ± 54).
* Below it the stopping time grows as ε shrinks: 6936 at ε = 0.3, 14 799 at 0.1, 32 965 at 0.03
  — a log–log slope ≈ −0.7 over that decade, approaching the −1 of the T*_TV/ε term.
* Every run stopped within the budget and recommended the right arm (0 wrong of 10 stopped
  runs at each ε; δ allows 1 %). The agent stays ≈ 30–70 × above the lower bound: the bound's
  *shape* (two regimes, the switch) is matched, its constant is not (worst-case thresholds,
  doubling phases).

**At the** ``--quick`` **size** (ε = 0.3, 1 and 10, 3 runs; what the notebooks run first): 7141
± 1632 at ε = 0.3, 4821 ± 620 at 1 and 4816 ± 624 at 10, TTUCB 480 ± 48, the lower bound 114,
70 and 70: the flat part above the switch and the rise below it show already; the slope below
the switch needs the default grid.

The numbers above are printed by the run; rerun to check them.
"""

from __future__ import annotations

import time

import numpy as np

from privenv.labs import finish_lab, lab_arguments
from privenv.plotting import (
    Baseline,
    Reference,
    StoppingSeries,
    StoppingTimePanel,
    stopping_time_grid,
)
from privenv.results import bai_outcomes
from privenv.simulation import simulate
from privenv.theory import bai as theory

NAME = "lab_b_bai_privacy_regimes"
#: the exercises (prompts); their solutions: solutions/lab_b_bai_privacy_regimes.py
EXERCISES = [
    ('Take a harder instance, μ = (0.9, 0.8, 0.5). Where is its regime switch '
     "(`privenv.theory.bai.global_regime_switch_epsilon`) compared with the lab's "
     'instance? Run `adap-tt` at a third of that ε and at three times it: in which regime '
     'does the stopping time depend on ε?'),
]
MEANS = [0.9, 0.6, 0.5]
DELTA = 0.01
BUDGET = 10_000_000


def main(argv: list[str] | None = None) -> dict:
    args = lab_arguments(__doc__, NAME, argv)
    epsilons = [0.3, 1.0, 10.0] if args.quick else [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
    runs = 3 if args.quick else 10
    start = time.perf_counter()
    env = {"means": MEANS}
    mean, sd, wrong, unstopped = [], [], [], []
    for eps in epsilons:
        res = simulate("adap-tt", "BestArmIdentification-v0", n_runs=runs, horizon=BUDGET, seed=0,
                       env_kwargs=env, agent_kwargs={"epsilon": eps, "delta": DELTA})
        tau = res.episode["stopping_time"]
        # a run that reaches the budget recommends nothing: it is not a wrong answer
        stopped, wrong_runs = bai_outcomes(res.episode["recommendation"], res.episode["correct"])
        mean.append(tau.mean()), sd.append(tau.std(ddof=1))
        wrong.append(int(wrong_runs.sum())), unstopped.append(int((~stopped).sum()))
        print(f"adap-tt ε = {eps:<5g} stopping time {tau.mean():9.0f} ± {tau.std(ddof=1):.0f}, "
              f"{wrong[-1]} wrong of {int(stopped.sum())} stopped runs, "
              f"{unstopped[-1]} reached the budget")
    ref = simulate("ttucb", "BestArmIdentification-v0", n_runs=runs, horizon=BUDGET, seed=0,
                   env_kwargs=env, agent_kwargs={"delta": DELTA}).episode["stopping_time"]
    print(f"ttucb (non-private) stopping time {ref.mean():.0f} ± {ref.std(ddof=1):.0f}")

    grid = np.geomspace(min(epsilons) / 2, max(epsilons) * 2, 60)
    log_factor = theory.sample_complexity_lower_bound(1.0, DELTA)  # log(1/(2.4δ))
    bound = np.array([theory.global_dp_lower_bound(MEANS, e) for e in grid]) * log_factor
    t_kl = theory.characteristic_time_kl(MEANS) * log_factor
    t_tv = theory.characteristic_time_tv(MEANS) * log_factor / grid
    switch = theory.global_regime_switch_epsilon(MEANS)
    panel = StoppingTimePanel(
        f"μ = {tuple(MEANS)}, δ = {DELTA}",
        series=[StoppingSeries("adap-tt (ε-global DP)", np.array(epsilons), np.array(mean),
                               np.array(sd))],
        baselines=[Baseline("ttucb (non-private)", float(ref.mean()), float(ref.std(ddof=1)))],
        references=[Reference("lower bound T*_g(ε)·log(1/2.4δ)", grid, bound),
                    Reference("T*_KL·log(1/2.4δ)", grid, np.full_like(grid, t_kl)),
                    Reference("T*_TV/ε·log(1/2.4δ)", grid, t_tv)],
        switches=[(f"regime switch ε = {switch:.2f}", switch)])
    fig = stopping_time_grid([panel], ncols=1, panel_size=(6.0, 4.2),
                             suptitle=f"Lab (b): global-DP BAI, {runs} runs per ε (mean ± 1 sd)")
    summary = {"switch_epsilon": switch, "epsilons": epsilons, "adap_tt_mean": mean,
               "wrong": wrong, "reached_budget": unstopped, "ttucb_mean": float(ref.mean()),
               "lower_bound_at_eps": [theory.global_dp_lower_bound(MEANS, e) * log_factor
                                      for e in epsilons]}
    print(f"regime switch ε = {switch:.3f}; lower bound at each ε: "
          + ", ".join(f"{b:.0f}" for b in summary["lower_bound_at_eps"]))
    return finish_lab(fig, args, NAME, start, summary)


if __name__ == "__main__":
    main()
