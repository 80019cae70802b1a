"""Solutions of lab (d)'s exercises."""

from __future__ import annotations

import math

from privenv.privacy.membership import dp_success_bound


def exercise_1(quick: bool = True) -> dict[float, float]:
    """The largest membership-attack success any (ε, 10⁻⁴)-DP view allows, for several ε: how
    small must the interval of the adaptive agent be to prove a violation at ε = 2?"""
    out = {eps: float(dp_success_bound(eps, 1e-4)) for eps in (0.5, 1.0, 2.0, 4.0)}
    for eps, bound in out.items():
        print(f"ε = {eps:3g}: success ≤ {bound:.3f}")
    bounds = list(out.values())
    assert bounds == sorted(bounds), "more privacy loss allows a better attack"
    assert math.isclose(out[2.0], (math.exp(2.0) + 1e-4) / (1 + math.exp(2.0)))
    return out


#: the written answer to each exercise's question (shown under its solution)
ANSWERS = {
    1: ("The bound (e^ε + δ)/(1 + e^ε) is 0.622, 0.731, 0.881 and 0.982 at ε = 0.5, 1, 2 and "
        "4. At ε = 2 it is 0.881: the adaptive agent's measured success, 0.798 with the 95 % "
        "interval [0.764, 0.830] at the default size (0.797, [0.755, 0.836] at the quick size), "
        "lies below it, so its whole view is consistent with ε = 2. The attack proves a "
        "violation of the claimed ε = 1 (the interval lies above 0.731), and that the view "
        "needs ε ≥ 1.21, not more. To show the view is not even 2-DP, an attack would need a "
        "success whose lower confidence bound exceeds 0.881."),
}
