"""The zoo's ``uniform`` agent: the reference every regret is compared with, built for every family
where uniform play makes sense (not best-arm identification: it has no stopping rule)."""

import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.mab import Uniform
from privenv.simulation import simulate


@pytest.mark.parametrize("env_id,env_kwargs,n_actions,silos", [
    ("HuberBandit-v0", {"K": 4}, 4, None),
    ("LinearContextualBandit-v0", {"d": 3, "A": 6}, 6, None),
    ("FederatedLinearBandit-v0", {"M": 3, "K": 5, "d": 2}, 5, 3),
    ("HuberBandit-RL-v0", {"K": 3}, 3, None),
])
def test_make_builds_uniform_for_every_regret_family(env_id, env_kwargs, n_actions, silos):
    import gymnasium as gym

    agent = make("uniform", gym.make(env_id, **env_kwargs), n_runs=2)
    assert isinstance(agent, Uniform)
    assert (agent.n_actions, agent.silos) == (n_actions, silos)
    res = simulate("uniform", env_id, n_runs=2, horizon=20, seed=0, env_kwargs=env_kwargs)
    assert res.steps.tolist() == [20, 20] and str(res.privacy) == "not private"


def test_uniform_regret_is_the_mean_gap():
    """E[regret per pull] = mean_a (μ* − μ_a) = 50 on μ = (100, 75, 50, 25, 0); per pull the
    regret has sd ≤ 50, so over 20 runs × 1000 pulls its mean has se ≤ 0.36: the ±2 band is
    5.5 se (false alarm < 10⁻⁷)."""
    res = simulate("uniform", "HuberBandit-v0", n_runs=20, horizon=1000, seed=3)
    assert abs(res.regret.mean() / 1000 - 50.0) < 2.0


def test_uniform_is_refused_for_best_arm_identification():
    with pytest.raises(ValueError, match="uniform.*stopping rule"):
        make("uniform", "BestArmIdentification-v0")
    assert np.all(make("uniform", "HuberBandit-v0").n_actions == 5)
