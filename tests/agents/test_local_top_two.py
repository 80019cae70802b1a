"""Local-DP Top Two agents (paper 3): CTB-TT (Algorithm 7) and (ε, γ)-LDP TTUCB (Algorithm 8).

Both are "randomizer wrapper + TTUCB" systems: the tests check that the runner puts the wrapper
in front of the learner, that the guarantee comes from the wrapper, that the learner never sees a
raw sample, and the agents' constants.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import env_kwargs_for, make
from privenv.agents.top_two import CTBTT, TTUCB, GaussianLDPTTUCB
from privenv.simulation import play, simulate, system_env
from privenv.wrappers import (
    GaussianRandomizer,
    RandomizedResponse,
    VectorRandomizedResponse,
)

ENV = "BestArmIdentification-v0"
MU4 = {"instance": "mu4"}
MU3 = {"instance": "mu3"}  # easy: short runs


class Spy(CTBTT):
    """CTB-TT that records every reward and observation the learner is given."""

    def reset_state(self) -> None:
        super().reset_state()
        self.seen_rewards: list[np.ndarray] = []
        self.seen_obs: list[np.ndarray] = []

    def observe_batch(self, actions, rewards, observations) -> None:
        self.seen_rewards.append(np.array(rewards))
        self.seen_obs.append(np.array(observations))
        super().observe_batch(actions, rewards, observations)


def test_ctb_tt_runs_behind_randomized_response_and_declares_its_guarantee():
    res = simulate("ctb-tt", ENV, n_runs=20, seed=1, env_kwargs=MU4,
                   agent_kwargs={"epsilon": 2.0})
    assert res.privacy.model == "local" and res.privacy.epsilon == 2.0
    assert res.privacy.delta == 0.0 and res.privacy.unit == "reward"
    assert make("ctb-tt", gym.make(ENV, reward_mode="sample")).privacy.model == "none"
    assert res.episode["correct"].all()


def test_the_learner_only_sees_released_bits():
    """Leak test: with the wrapper on, every reward the learner gets is a randomized-response bit
    and the observation carries nothing (the sample is the reward, reward_mode="sample")."""
    venv = gym.make_vec(ENV, num_envs=8, vectorization_mode="vector_entry_point",
                        autoreset_mode=gym.vector.AutoresetMode.DISABLED,
                        **env_kwargs_for("ctb-tt", {"instance": "mu3"}))
    spy = Spy(K=5, epsilon=0.5, n_runs=8)
    simulate(spy, venv, n_runs=8, seed=3)
    rewards = np.concatenate(spy.seen_rewards)
    assert set(np.unique(rewards)) <= {0.0, 1.0}
    assert not np.concatenate(spy.seen_obs).any()
    # μ3 has arms with means 0 and 1: raw samples would be constant 0 on arm 0; the bits are not
    assert rewards.mean() not in (0.0, 1.0)


def test_released_rewards_follow_the_randomized_response_law():
    """On arm 0 of μ3 (mean 0) the released bit is Bernoulli(1/(e^ε + 1)). Binomial two-sided test
    at false-alarm probability 1e-6 (fixed seed)."""
    from scipy.stats import binom

    eps, n = 0.5, 20_000
    env = RandomizedResponse(gym.make(ENV, instance="mu3", reward_mode="sample"), epsilon=eps)
    env.reset(seed=7)
    bits = np.array([env.step(0)[1] for _ in range(n)])
    p = 1.0 / (math.exp(eps) + 1.0)
    k = int(bits.sum())
    assert binom.cdf(k, n, p) > 5e-7 and binom.sf(k - 1, n, p) > 5e-7


def test_ctb_tt_equals_ttucb_on_the_released_stream():
    """CTB-TT is TTUCB on the wrapper's output: the same numbers as TTUCB behind the wrapper."""
    kw = env_kwargs_for("ctb-tt", MU3)
    a = simulate("ctb-tt", ENV, n_runs=6, seed=5, env_kwargs=MU3, agent_kwargs={"epsilon": 0.8})
    b = simulate(TTUCB(K=5, reward_mode="sample", n_runs=6), ENV, n_runs=6, seed=5,
                 env_kwargs=kw, wrappers=[lambda e: VectorRandomizedResponse(e, 0.8)])
    np.testing.assert_array_equal(a.episode["stopping_time"], b.episode["stopping_time"])
    np.testing.assert_array_equal(a.episode["recommendation"], b.episode["recommendation"])


def test_ctb_tt_matches_ttucb_at_large_epsilon_and_slows_down_at_small_epsilon():
    """Low-privacy regime: at ε = 20 a flip has probability 2·10⁻⁹, so CTB-TT equals TTUCB run
    for run; at ε = 1 the gaps shrink by tanh(1/2) = 0.46 and τ grows (about 1/0.46² ≈ 4.7×)."""
    t = simulate("ttucb", ENV, n_runs=30, seed=2, env_kwargs={**MU4, "reward_mode": "sample"})
    c20 = simulate("ctb-tt", ENV, n_runs=30, seed=2, env_kwargs=MU4,
                   agent_kwargs={"epsilon": 20.0})
    c1 = simulate("ctb-tt", ENV, n_runs=30, seed=2, env_kwargs=MU4, agent_kwargs={"epsilon": 1.0})
    np.testing.assert_array_equal(t.episode["stopping_time"], c20.episode["stopping_time"])
    ratio = c1.episode["stopping_time"].mean() / t.episode["stopping_time"].mean()
    assert 3.0 < ratio < 7.0


def test_same_numbers_alone_in_a_batch_and_through_gym_make():
    batch = simulate("ctb-tt", ENV, n_runs=4, seed=9, env_kwargs=MU3,
                     agent_kwargs={"epsilon": 1.0})
    alone = simulate("ctb-tt", ENV, n_runs=1, seed=9, first_run=2, env_kwargs=MU3,
                     agent_kwargs={"epsilon": 1.0})
    assert alone.episode["stopping_time"][0] == batch.episode["stopping_time"][2]
    env = gym.make(ENV, **env_kwargs_for("ctb-tt", MU3))
    out = play(make("ctb-tt", env, epsilon=1.0), env, seed=9, run=2)
    assert out["info"]["stopping_time"] == batch.episode["stopping_time"][2]
    assert out["info"]["recommendation"] == batch.episode["recommendation"][2]


def test_gaussian_ldp_ttucb_noise_scale_and_statistic_variance():
    """σ_{ε,γ} = √(2 log(1.25/γ))/ε with the classical calibration (hand value at ε = 0.5,
    γ = 10⁻⁶: √(2·14.03865)/0.5 = 10.5976); TTUCB uses σ = √(σ²_{ε,γ} + 1/4)."""
    a = GaussianLDPTTUCB(K=5, epsilon=0.5, gamma=1e-6, calibration="classical")
    assert a.sigma_privacy == pytest.approx(math.sqrt(2 * math.log(1.25e6)) / 0.5, rel=1e-12)
    assert a.sigma_privacy == pytest.approx(10.5976, abs=1e-4)
    assert a.sigma == pytest.approx(math.sqrt(a.sigma_privacy**2 + 0.25), rel=1e-12)
    b = GaussianLDPTTUCB(K=5, epsilon=0.5, gamma=1e-6)  # analytic: exact and smaller
    assert b.sigma_privacy < a.sigma_privacy
    env = system_env(b, gym.make(ENV, reward_mode="sample"))
    assert isinstance(env.randomizer, GaussianRandomizer)
    assert env.randomizer.sigma == b.sigma_privacy
    assert env.privacy.epsilon == 0.5 and env.privacy.delta == 1e-6


def test_gaussian_ldp_ttucb_runs_and_is_correct():
    res = simulate("gaussian-ldp-ttucb", ENV, n_runs=20, seed=4, env_kwargs={"instance": "mu3"},
                   agent_kwargs={"epsilon": 5.0})
    assert res.privacy.model == "local" and res.privacy.delta == 1e-6
    assert res.episode["correct"].all()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: CTBTT(K=5, epsilon=0.0), "epsilon"),
        (lambda: CTBTT(K=5, epsilon=1.0, reward_mode="cost"), "reward_mode"),
        (lambda: GaussianLDPTTUCB(K=5, gamma=1.0), "gamma"),
        (lambda: GaussianLDPTTUCB(K=5, epsilon=1.0, calibration="classical"), "epsilon"),
        (lambda: GaussianLDPTTUCB(K=5, calibration="exact"), "calibration"),
        (lambda: simulate("ctb-tt", ENV, env_kwargs={"reward_mode": "cost"}), "reward_mode"),
        (lambda: simulate("ctb-tt", ENV, env_kwargs={"law": "gaussian", "means": [0.1, 0.2]}),
         "law"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("ctb-tt",)


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
