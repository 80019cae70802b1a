"""Solutions of lab (d)'s exercises."""

from __future__ import annotations

from privenv.privacy.membership import dp_success_bound


def exercise_1(quick: bool = True) -> dict[float, float]:
    """The largest membership-attack success any (ε, 10⁻⁴)-DP view allows, for several ε: how
    small must the interval of the adaptive agent be to prove a violation at ε = 2?"""
    out = {eps: float(dp_success_bound(eps, 1e-4)) for eps in (0.5, 1.0, 2.0, 4.0)}
    for eps, bound in out.items():
        print(f"ε = {eps:3g}: success ≤ {bound:.3f}")
    return out
