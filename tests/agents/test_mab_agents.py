"""Multi-armed bandit baselines: UCB1's scale on the Huber env, RobustUCB, ε-greedy."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.mab import UCB1, EpsilonGreedy, RobustUCB
from privenv.simulation import make_vector_env, play, simulate

HEAVY = dict(means=[1.0, 0.5, 0.0], inlier="student-t", alpha=0.0)  # u = 1 + 5 = 6


# -- UCB1 ---------------------------------------------------------------------------------------


def test_ucb1_scale_from_public_central_moment():
    assert make("ucb1", "HuberBandit-v0", 1).sigma == pytest.approx(math.sqrt(5.0))
    assert make("ucb1", "HuberBandit-v0", 1, sigma=2.0).sigma == 2.0  # explicit wins
    assert UCB1(K=3).sigma == 1.0
    assert UCB1(K=3, central_moment_bound=16.0, moment_order=4.0).sigma == pytest.approx(2.0)


@pytest.mark.parametrize("cls,bad,param", [
    (UCB1, {"sigma": 0.0}, "sigma"), (UCB1, {"K": 1}, "K"),
    (UCB1, {"central_moment_bound": -1.0}, "central_moment_bound"),
    (RobustUCB, {"raw_moment_bound": 0.0}, "raw_moment_bound"), (RobustUCB, {"K": 1}, "K"),
    (RobustUCB, {"moment_order": 1.0}, "moment_order"), (RobustUCB, {"horizon": 0}, "horizon"),
    (EpsilonGreedy, {"explore": 1.5}, "explore"),
])
def test_bad_input(cls, bad, param):
    with pytest.raises(ValueError, match=param):
        cls(**{"K": 3, **bad})


# -- RobustUCB ----------------------------------------------------------------------------------


def test_robust_ucb_truncated_means_match_a_brute_force_recomputation():
    """Bubeck et al. (2013) Lemma 1 with δ = t⁻²: sample s of an arm counts at round t iff
    |X_s| ≤ √(u·s/(2 log t)). The agent's incremental sums equal a direct recomputation."""
    horizon = 3000
    env = gym.make("HuberBandit-v0", horizon=horizon)  # means up to 100, contamination: drops
    agent = make("robust-ucb", env, 1)
    rewards = [[] for _ in range(agent.K)]
    obs, _ = env.reset(seed=4)
    agent.reset(seed=4)
    for _ in range(horizon):
        a = agent.act(obs)
        obs, r, *_ = env.step(a)
        agent.observe(a, r, obs)
        rewards[a].append(r)
    a_next = agent.act(obs)  # round T + 1: drops samples whose threshold fell below them
    log_t = math.log(horizon + 1)
    dropped = 0
    for a in range(agent.K):
        x = np.array(rewards[a])
        s = np.arange(1, x.size + 1)
        keep = 2 * log_t * x**2 <= agent.u * s
        dropped += int((~keep).sum())
        assert agent.sums[0, a] == pytest.approx(x[keep].sum(), rel=1e-9, abs=1e-9)
        assert agent.counts[0, a] == x.size
    assert dropped > 0  # the test exercised the drops
    # the index: truncated mean + 4√(u·2 log t/N)
    index = agent.sums[0] / agent.counts[0] + 4 * np.sqrt(agent.u * 2 * log_t / agent.counts[0])
    assert a_next == int(np.argmax(index))


def test_robust_ucb_u_from_the_raw_moment():
    agent = make("robust-ucb", "HuberBandit-v0", 1)
    assert agent.u == pytest.approx(100.0**2 + 5.0)
    assert RobustUCB(K=2, raw_moment_bound=16.0, moment_order=4.0).u == pytest.approx(4.0)


@pytest.mark.parametrize("name", ["robust-ucb", "ucb1", "eps-greedy"])
def test_run_i_identical_alone_or_in_a_batch(name):
    big = simulate(name, n_runs=50, horizon=2000, seed=6)
    for i in (0, 49):
        one = simulate(name, n_runs=1, horizon=2000, seed=6, first_run=i)
        np.testing.assert_array_equal(one.regret_curve[0], big.regret_curve[i])


def test_robust_ucb_play_on_gym_make_equals_simulate():
    res = simulate("robust-ucb", n_runs=2, horizon=2000, seed=3, env_kwargs=HEAVY)
    for i in range(2):
        env = gym.make("HuberBandit-v0", horizon=2000, **HEAVY)
        assert play(make("robust-ucb", env, 1), env, seed=3, run=i)["regret"] == pytest.approx(
            res.regret[i])


def test_robust_ucb_learns_on_heavy_tails():
    horizon = 20_000
    env = make_vector_env("HuberBandit-v0", 5, horizon, **HEAVY)
    res = simulate(make("robust-ucb", env, 5), env, n_runs=5, seed=0)
    uniform = horizon * 0.5  # mean gap of (0, 0.5, 1)
    assert res.regret.mean() < 0.35 * uniform
    assert str(res.privacy) == "not private"
