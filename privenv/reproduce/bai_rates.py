"""Paper 3's risk δ, the confidence level of the error bounds, and the theorems' upper rates of
its agents: what both the plan of a stopping-time reproduction
(:mod:`~privenv.reproduce.bai_plan`) and its results (:mod:`~privenv.reproduce.bai_results`)
read, in a module of its own so that neither imports the other back.
"""

from __future__ import annotations

import math

#: the risk of every experiment of paper 3
DELTA = 0.01
#: level of the one-sided Clopper–Pearson bounds on the error probability
CONFIDENCE = 0.95


def upper_constant(agent: str, instance: str, epsilon: float | None) -> tuple[str, float] | None:
    """The paper's asymptotic rate R of ``agent`` (lim sup_{δ→0} E[τ_δ]/log(1/δ) ≤ R) as
    (source, R), or ``None`` where the paper states none: TTUCB T*_{KL,β}(ν) and CTB-TT
    T*_{KL,β}(ν_ε) = (1 + 2/(e^ε − 1))²T*_{KL,β}(ν) (§3.2, after Lemma 12), AdaP-TT Theorem 22,
    AdaP-TT* Theorem 24 (β = 1/2, σ = 1/2)."""
    from privenv.problems.bai import INSTANCES as MEANS
    from privenv.theory import bai as th

    mu = MEANS[instance]
    T_beta = th.characteristic_time_kl_beta(mu, 0.5, "gaussian", 0.5)
    if agent == "ttucb":
        return "T*_KL,β(ν) (Jourdan & Degenne 2024)", T_beta
    if epsilon is None:
        return None
    if agent == "ctb-tt":
        return "T*_KL,β(ν_ε) (§3.2)", th.ctb_factor(epsilon) * T_beta
    if agent == "adap-tt":
        return "Theorem 22", th.adap_tt_upper_bound(mu, epsilon)
    if agent == "adap-tt-star":
        return "Theorem 24", th.adap_tt_star_upper_bound(mu, epsilon)
    return None


def upper_bound(agent: str, instance: str, epsilon: float | None,
                delta: float = DELTA) -> tuple[str, float] | None:
    """:func:`upper_constant` as (source, R·log(1/δ)). The theorems drop the second-order terms
    in log(1/δ): a δ → 0 rate, not a bound at a given δ such as 0.01."""
    rate = upper_constant(agent, instance, epsilon)
    return None if rate is None else (rate[0], rate[1] * math.log(1.0 / delta))


__all__ = ["CONFIDENCE", "DELTA", "upper_bound", "upper_constant"]
