"""No best-arm identification agent beats its lower bound (paper 3, Lemma 5, Theorems 10, 17).

For every zoo agent on μ1 and μ4 with δ = 0.01: the mean stopping time over 20 runs (μ4; 5 on
μ1, where runs are long) is at least
T*·log(1/(2.4δ)), where T* is the characteristic time of the agent's trust model — T*_KL for a
non-private agent (and for the (ε, γ)-LDP TTUCB: Theorem 10 is for pure ε-LDP), the local-DP
bound max{T*_KL, T*_TV²/c(ε)} (Corollary 11) for CTB-TT, the exact global-DP bound T*_g(ν; ε)
(Theorem 17) for AdaP-TT, AdaP-TT* and DP-SE — and every run is correct.

The bound holds for the *expectation* of a δ-correct algorithm; a mean over a few runs could dip
below it only if the agent stopped before its evidence was sufficient — an agent bug (e.g. a
threshold too small, a count that omits pulls). Measured margins are ≥ 5× (see the closing note of
issue 4), so the check does not depend on the seed.
"""

from __future__ import annotations

import pytest

from privenv.problems.bai import instance_means
from privenv.simulation import simulate
from privenv.theory.bai import (
    characteristic_time_kl,
    global_dp_lower_bound,
    local_dp_lower_bound,
    sample_complexity_lower_bound,
)

DELTA = 0.01
RUNS = {"mu1": 5, "mu4": 20}


def _kl(mu, eps):
    return characteristic_time_kl(mu)


#: agent → (characteristic time of its trust model (mu, ε), ε on μ1, ε on μ4)
AGENTS = {
    "ttucb": (_kl, None, None),
    "ttucb-dpa": (_kl, None, None),
    "ctb-tt": (local_dp_lower_bound, 10.0, 1.0),
    "gaussian-ldp-ttucb": (_kl, 10.0, 10.0),
    "adap-tt": (global_dp_lower_bound, 10.0, 1.0),
    "adap-tt-star": (global_dp_lower_bound, 10.0, 1.0),
    "dp-se": (global_dp_lower_bound, 10.0, 1.0),
}


@pytest.mark.parametrize("instance", ["mu1", "mu4"])
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_mean_stopping_time_is_above_the_lower_bound(agent, instance):
    T_star, eps_mu1, eps_mu4 = AGENTS[agent]
    eps = eps_mu1 if instance == "mu1" else eps_mu4
    kw = {"delta": DELTA} if eps is None else {"delta": DELTA, "epsilon": eps}
    res = simulate(agent, "BestArmIdentification-v0", n_runs=RUNS[instance], seed=11,
                   env_kwargs={"instance": instance}, agent_kwargs=kw)
    mu = instance_means(instance)
    bound = sample_complexity_lower_bound(T_star(mu, eps), DELTA)
    tau = res.episode["stopping_time"]
    assert res.episode["correct"].all()
    assert tau.mean() >= bound, f"{agent} on {instance}: mean τ {tau.mean():.0f} < {bound:.0f}"
