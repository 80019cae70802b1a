"""Safe defaults where real data enters (docs/design/threat-model.md, "Which sampler by default"):
the exact samplers on a data set (``contexts="dataset"``) and on an env of the caller's own, the
float samplers of the papers on privenv's simulated problems (every golden number unchanged:
tests/test_golden.py), and every result saying which guarantee holds."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import privenv  # noqa: F401
from privenv import agents
from privenv.envs.bai import BestArmIdentificationEnv
from privenv.envs.federated import FederatedLinearBanditEnv
from privenv.envs.huber import HuberBanditEnv
from privenv.envs.linear import LinearContextualBanditEnv
from privenv.privacy.exact import GaussianMechanism, LaplaceMechanism
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.simulation import simulate, system_env
from privenv.wrappers import GaussianReward, LaplaceLabel, LaplaceReward
from privenv.wrappers.bookkeeping import data_sampler
from privenv.wrappers.ldp_linear import GaussianStatistics, LaplaceInput

DATASET = {"contexts": "dataset", "dataset": "wine"}


class OwnRewards(gym.Env):
    """An env of the caller's own: rewards privenv did not simulate."""

    observation_space = spaces.Discrete(1)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, float(self.np_random.random()), False, False, {}


def test_the_data_decides_the_default_and_an_explicit_choice_wins() -> None:
    simulated = BestArmIdentificationEnv(horizon=10)
    dataset = LinearContextualBanditEnv(horizon=10, **DATASET)
    assert data_sampler(simulated, None) == "float"
    assert data_sampler(LinearContextualBanditEnv(horizon=10), None) == "float"
    assert data_sampler(dataset, None) == "exact"
    assert data_sampler(gym.make("LinearContextualBandit-v0", **DATASET), None) == "exact"
    assert data_sampler(OwnRewards(), None) == "exact"
    assert data_sampler(dataset, "float") == "float" and data_sampler(simulated, "exact") == "exact"
    assert dataset.public_info()["sampler"] == "exact"
    assert "sampler" not in simulated.public_info()  # simulated problems: unchanged
    assert FederatedLinearBanditEnv(M=4, **DATASET).public_info()["sampler"] == "exact"


def test_the_wrappers_default_to_the_exact_sampler_on_real_data() -> None:
    """(The local-DP wrappers run on privenv envs only — they draw each run's noise from the
    env's per-run seeds —, so real data reaches them through the data set instances; around an
    env of one's own they declare the exact sampler, then refuse to reset.)"""
    own = LaplaceReward(OwnRewards(), 1.0, (0.0, 1.0))
    assert own.privacy.sampler == "exact" and str(own.privacy).endswith("exact in binary64")
    with pytest.raises(TypeError, match="run_seeds"):
        own.reset(seed=0)
    assert LaplaceReward(HuberBanditEnv(horizon=10), 1.0, (-50.0, 150.0), clip=True) \
        .privacy.sampler == "float"
    dataset = LinearContextualBanditEnv(horizon=10, **DATASET)
    assert LaplaceLabel(dataset, 1.0).privacy.sampler == "exact"
    assert GaussianStatistics(dataset, 1.0, 1e-5).privacy.sampler == "exact"
    assert LaplaceInput(LinearContextualBanditEnv(horizon=10), 1.0).privacy.sampler == "float"
    assert LaplaceLabel(dataset, 1.0, sampler="float").privacy.sampler == "float"
    label = LaplaceLabel(dataset, 1.0)
    assert str(label.privacy).endswith("exact in binary64")
    assert GaussianReward(LinearContextualBanditEnv(horizon=10, **DATASET), 1.0, 1e-5,
                          (-1.0, 1.0)).privacy.sampler == "exact"
    label.reset(seed=0)
    _, reward, *_ = label.step(0)
    g = label.randomizer.exact.params.grid.granularity
    assert reward / g == np.floor(reward / g)  # a grid point: the exact sampler released it


@pytest.mark.parametrize("name", ["central-dp-linucb", "ldp-linucb", "input-perturbation-ols"])
def test_the_agents_default_to_the_exact_sampler_on_a_data_set(name: str) -> None:
    """(LPLR plays d ≤ 6 only: no bundled data set fits it.)"""
    dataset = LinearContextualBanditEnv(horizon=100, **DATASET)
    agent = agents.make(name, dataset)
    assert agent.sampler == "exact"
    assert agents.make(name, LinearContextualBanditEnv(horizon=100)).sampler == "float"
    assert agents.make(name, dataset, sampler="float").sampler == "float"  # an assumption
    privacy = agent.privacy if agent.privacy.is_private else system_env(agent, dataset).privacy
    assert privacy.sampler == "exact"


def test_a_data_set_with_a_mechanism_that_has_no_exact_sampler_says_so() -> None:
    env = FederatedLinearBanditEnv(M=4, K=3, horizon=100, **DATASET)
    kw = dict(protocol="sdp-amplification", epsilon=1.0, delta=1e-4, reward_bound=1.0, batch=5)
    with pytest.raises(ValueError, match="sampler='float'"):
        agents.make("fed-linucb", env, **kw)
    assert agents.make("fed-linucb", env, **kw, sampler="float").sampler == "float"


def test_every_result_says_which_guarantee_holds() -> None:
    res = simulate("central-dp-linucb", "LinearContextualBandit-v0", n_runs=2, seed=0,
                   horizon=30, env_kwargs=DATASET)
    assert res.privacy.sampler == "exact"
    assert str(res.privacy).endswith(", exact in binary64")
    assert res.privacy.as_dict()["privacy"].endswith("exact in binary64")
    sim = simulate("dp-se", "BestArmIdentification-v0", n_runs=2, seed=0, horizon=50,
                   env_kwargs={"instance": "mu4"})
    assert str(sim.privacy).endswith(", idealized arithmetic")
    assert str(PrivacyGuarantee.none()) == "not private"


def test_the_mechanisms_on_caller_values_default_to_exact() -> None:
    assert LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0)).guarantee.holds_in_floating_point
    assert GaussianMechanism(epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0)).sampler == "exact"
    assert LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="float").sampler == "float"
