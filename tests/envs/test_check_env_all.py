"""Every registered privenv id passes Gymnasium's and Stable-Baselines3's env checkers, bare and
under each applicable local-DP wrapper (docs/design/architecture.md, "Conventions"); the vector
wrappers keep the vector env's contract.

Which wrappers apply (and why):

* ``HuberBandit-v0``: rewards are unbounded (heavy tails, contamination), so only the additive
  mechanisms with an explicit range and ``clip=True``; randomized response needs [0, 1].
* ``BestArmIdentification-v0``: the bandit sample must be the reward (``reward_mode="sample"``;
  the default ``"cost"`` mode carries it in the observation and is refused by the wrappers) and the
  stop reward −wrong_penalty must be in range (``wrong_penalty=0``); Bernoulli samples are in
  [0, 1], so randomized response, Laplace and Gaussian on [0, 1] all apply.
* ``LinearContextualBandit-v0``: the label wrapper (y + Lap(2/ε), y ∈ [−1, 1]).
* ``BernoulliBandit-v0``: rewards in {0, 1}: randomized response and Laplace on [0, 1] (the
  reports of Ren et al. 2020's LDP-UCB-B and LDP-UCB-L).
* ``FederatedLinearBandit-v0``: none — its reward is a sum over silos, and privacy is the silos'
  protocol (paper 2); the wrappers refuse it.
"""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import privenv  # noqa: F401
from privenv.envs import ENV_IDS
from privenv.wrappers import (
    GaussianReward,
    LaplaceLabel,
    LaplaceReward,
    RandomizedResponse,
    VectorGaussianReward,
    VectorLaplaceLabel,
    VectorLaplaceReward,
    VectorRandomizedResponse,
)

HUBER = (-50.0, 150.0)

#: small instances that keep the checks fast
SMALL: dict[str, dict] = {
    "HuberBandit-v0": {"horizon": 10},
    "BestArmIdentification-v0": {"horizon": 10},
    "LinearContextualBandit-v0": {"horizon": 10, "d": 3, "A": 4},
    "FederatedLinearBandit-v0": {"horizon": 10, "M": 2, "K": 3, "d": 3},
    "BernoulliBandit-v0": {"horizon": 10},
}

#: env id → [(name, extra env kwargs, single wrapper, vector wrapper)]
LDP: dict[str, list] = {
    "HuberBandit-v0": [
        (
            "laplace-clip",
            {},
            lambda e: LaplaceReward(e, 1.0, HUBER, clip=True),
            lambda e: VectorLaplaceReward(e, 1.0, HUBER, clip=True),
        ),
        (
            "gaussian-clip",
            {},
            lambda e: GaussianReward(e, 1.0, 1e-6, HUBER, clip=True),
            lambda e: VectorGaussianReward(e, 1.0, 1e-6, HUBER, clip=True),
        ),
    ],
    "BestArmIdentification-v0": [
        (
            "rr",
            {"reward_mode": "sample", "wrong_penalty": 0.0},
            lambda e: RandomizedResponse(e, 1.0),
            lambda e: VectorRandomizedResponse(e, 1.0),
        ),
        (
            "laplace",
            {"reward_mode": "sample", "wrong_penalty": 0.0},
            lambda e: LaplaceReward(e, 1.0, (0, 1)),
            lambda e: VectorLaplaceReward(e, 1.0, (0, 1)),
        ),
        (
            "gaussian-classical",
            {"reward_mode": "sample", "wrong_penalty": 0.0},
            lambda e: GaussianReward(e, 0.5, 1e-3, (0, 1), calibration="classical"),
            lambda e: VectorGaussianReward(e, 0.5, 1e-3, (0, 1), calibration="classical"),
        ),
    ],
    "LinearContextualBandit-v0": [
        ("label", {}, lambda e: LaplaceLabel(e, 1.0), lambda e: VectorLaplaceLabel(e, 1.0)),
    ],
    "FederatedLinearBandit-v0": [],
    "BernoulliBandit-v0": [
        ("rr", {}, lambda e: RandomizedResponse(e, 1.0),
         lambda e: VectorRandomizedResponse(e, 1.0)),
        ("laplace", {}, lambda e: LaplaceReward(e, 1.0, (0, 1)),
         lambda e: VectorLaplaceReward(e, 1.0, (0, 1))),
    ],
}

WRAPPED = [(env_id, *case) for env_id, cases in LDP.items() for case in cases]


def test_every_registered_id_is_covered():
    """A new id must say which local-DP wrappers apply to it (possibly none, with a reason)."""
    missing = sorted(set(ENV_IDS) - set(SMALL) | set(ENV_IDS) - set(LDP))
    assert not missing, f"add {missing} to SMALL and LDP in {__file__}"


def _checks(env: gym.Env) -> None:
    with warnings.catch_warnings():
        # we check the wrapped env on purpose; Gymnasium suggests checking env.unwrapped
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        check_env(env)
    sb3_check_env(env, warn=True)  # warnings (e.g. non-flat Box observations) are allowed


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_bare_env_passes_both_checkers(env_id):
    _checks(gym.make(env_id, **SMALL.get(env_id, {"horizon": 10})))


@pytest.mark.parametrize(
    "env_id,name,kwargs,single,vector", WRAPPED, ids=[f"{c[0]}-{c[1]}" for c in WRAPPED]
)
def test_wrapped_env_passes_both_checkers(env_id, name, kwargs, single, vector):
    env = single(gym.make(env_id, **SMALL[env_id], **kwargs))
    assert env.privacy.model == "local"
    _checks(env)


@pytest.mark.parametrize(
    "env_id,name,kwargs,single,vector", WRAPPED, ids=[f"{c[0]}-{c[1]}" for c in WRAPPED]
)
def test_wrapped_vector_env_keeps_the_vector_contract(env_id, name, kwargs, single, vector):
    """Spaces unchanged; float64 reward batch; bool flags; observations in the space; same seed,
    same rewards; run i of the batch equals the single wrapped env's run i."""
    n, T = 3, 6

    def make():
        return vector(
            gym.make_vec(
                env_id, num_envs=n, vectorization_mode="vector_entry_point",
                autoreset_mode=AutoresetMode.NEXT_STEP, **SMALL[env_id], **kwargs,
            )
        )

    a, b = make(), make()
    assert a.single_action_space == a.env.single_action_space
    assert a.observation_space == a.env.observation_space
    actions = [np.array([(i + t) % a.single_action_space.n for i in range(n)]) for t in range(T)]
    ra = []
    for venv in (a, b):
        obs, _ = venv.reset(seed=7)
        assert obs in venv.observation_space
        rewards = []
        for t in range(T):
            obs, r, term, trunc, info = venv.step(actions[t])
            assert obs in venv.observation_space
            assert r.shape == (n,) and r.dtype == np.float64 and np.all(np.isfinite(r))
            assert term.dtype == bool and trunc.dtype == bool
            rewards.append(r)
        ra.append(np.array(rewards))
    np.testing.assert_array_equal(ra[0], ra[1])
    env = single(gym.make(env_id, **SMALL[env_id], **kwargs))
    for i in range(n):
        env.reset(seed=7, options={"first_run": i})
        alone = []
        for t in range(T):
            _, r, term, trunc, _ = env.step(int(actions[t][i]))
            alone.append(r)
            if term or trunc:
                break
        np.testing.assert_array_equal(alone, ra[0][: len(alone), i])


def test_wrappers_refuse_the_federated_env():
    """Its reward is a sum over silos: a per-reward randomizer would declare the wrong unit."""
    env = gym.make("FederatedLinearBandit-v0", **SMALL["FederatedLinearBandit-v0"],
                   noise="bounded")
    with pytest.raises(ValueError, match="aggregates several users"):
        LaplaceLabel(env, 1.0)
    with pytest.raises(ValueError, match="aggregates several users"):
        LaplaceReward(env, 1.0, (-2, 2))
