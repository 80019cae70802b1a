"""DP-SE (Sajed & Sheffet 2019), regret version."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.dp_se import DPSE
from privenv.privacy import PrivacyBudgetExceeded
from privenv.privacy.mechanisms import laplace_from_uniform
from privenv.simulation import make_vector_env, play, simulate

#: runs eliminate different arms (gaps near the epoch-1 threshold 2(h₁ + c₁))
DIVERGING = (dict(means=[0.5, -0.33, -0.35, -0.37], inlier="gaussian",
                  inlier_params={"sigma": 1.0}, alpha=0.0),
             {"epsilon": 1.0, "reward_range": (-3.0, 3.0)}, 12_000)
EASY = dict(means=[-1.0, 1.0], inlier="gaussian", inlier_params={"sigma": 0.5}, alpha=0.0)


def test_epoch_length_and_widths_hand_values():
    # |S| = 2, e = 1 (Δ = ½), β = 16/e⁴: log(8|S|e²/β) = 4, log(4|S|e²/β) = 4 − ln 2
    agent = DPSE(K=2, horizon=100, epsilon=1.0, beta=16 / math.e**4)
    R = agent.epoch_length(1, 2)
    assert R == 512  # max{32·4/¼, 8(4 − ln 2)/(1·½)} = max{512, 52.9}
    h_plus_c = agent.widths(1, 2, R)
    assert h_plus_c == pytest.approx(math.sqrt(4 / 1024) + (4 - math.log(2)) / 512)
    # high privacy: the second term wins, R = ⌈8(4 − ln 2)/(0.01·½)⌉
    private = DPSE(K=2, horizon=100, epsilon=0.01, beta=16 / math.e**4)
    assert private.epoch_length(1, 2) == math.ceil(8 * (4 - math.log(2)) / 0.005)
    # e = 2 (Δ = ¼), |S| = 1: log(8·1·4/β) = log(2e⁴) = 4 + ln 2
    assert agent.epoch_length(2, 1) == math.ceil(32 * (4 + math.log(2)) * 16)


def test_reward_range_default_from_public_info_and_clipping():
    agent = make("dp-se", "HuberBandit-v0", 1)
    margin = 3 * math.sqrt(5.0)
    assert agent.reward_range == pytest.approx((-100 - margin, 100 + margin))
    assert agent.beta == pytest.approx(1e-5)
    assert make("dp-se", "HuberBandit-v0", 1, reward_range=(0, 200)).reward_range == (0.0, 200.0)
    assert DPSE(K=2, horizon=10).reward_range == (0.0, 1.0)
    # rewards are mapped to [0, 1] and clipped: 20 → 1, −5 → 0, 5 → ½
    clip = DPSE(K=2, horizon=10_000, reward_range=(0.0, 10.0))
    clip.reset(seed=0)
    for r in (20.0, -5.0, 5.0):
        clip.observe(clip.act(0), r, 0)
    assert clip.seg_sum[0] == pytest.approx(1.5)


def test_epoch_mean_is_this_epochs_mean_plus_laplace():
    import copy

    agent = DPSE(K=2, horizon=10_000, epsilon=0.5, reward_range=(0.0, 1.0))
    agent.reset(seed=3)
    R = int(agent.seg_len[0])
    rng = np.random.default_rng(0)
    x = rng.random(R)
    for r in x[:-1]:
        agent.observe(agent.act(0), r, 0)
    noise = copy.deepcopy(agent.noise)
    agent.observe(agent.act(0), x[-1], 0)
    expected = x.mean() + laplace_from_uniform(noise.uniform(np.array([0])), 1.0)[0] / (0.5 * R)
    assert agent.estimates[0, 0] == pytest.approx(expected, rel=1e-12)
    assert agent.arm[0] == 1 and agent.seg_start[0] == R


def test_regret_task_is_the_default_and_the_bai_env_selects_the_bai_version():
    from privenv.agents.dp_se import DPSEBAI

    assert type(make("dp-se", "HuberBandit-v0", 1)) is DPSE
    assert type(DPSE(K=2, horizon=10, task="regret")) is DPSE
    assert type(make("dp-se", "BestArmIdentification-v0", 1)) is DPSEBAI


def test_runs_on_default_env_and_declares_privacy():
    res = simulate("dp-se", n_runs=3, horizon=3000, seed=0, agent_kwargs={"epsilon": 0.5})
    assert np.all(np.isfinite(res.regret))
    assert str(res.privacy) == "0.5-DP, central model, per reward, idealized arithmetic"


def test_run_i_identical_alone_or_in_a_batch():
    env_kwargs, kw, horizon = DIVERGING
    env = make_vector_env("HuberBandit-v0", 12, horizon, **env_kwargs)
    big = make("dp-se", env, 12, **kw)
    res = simulate(big, env, n_runs=12, seed=1)
    assert len({tuple(a) for a in big.active}) > 1  # the runs' schedules really differ
    for i in (0, 3, 11):
        env1 = make_vector_env("HuberBandit-v0", 1, horizon, **env_kwargs)
        alone = make("dp-se", env1, 1, **kw)
        one = simulate(alone, env1, n_runs=1, seed=1, first_run=i)
        np.testing.assert_array_equal(one.regret_curve[0], res.regret_curve[i])
        np.testing.assert_array_equal(alone.active[0], big.active[i])
        np.testing.assert_array_equal(alone.estimates[0], big.estimates[i])


def test_play_on_gym_make_equals_simulate():
    env_kwargs, kw, horizon = DIVERGING
    res = simulate("dp-se", n_runs=2, horizon=horizon, seed=2, env_kwargs=env_kwargs,
                   agent_kwargs=kw)
    for i in range(2):
        env = gym.make("HuberBandit-v0", horizon=horizon, **env_kwargs)
        out = play(make("dp-se", env, 1, **kw), env, seed=2, run=i)
        assert out["regret"] == pytest.approx(res.regret[i])


@pytest.mark.parametrize("bad,param", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -2.0}, "epsilon"),
    ({"beta": 0.0}, "beta"), ({"beta": 1.0}, "beta"), ({"K": 1}, "K"), ({"horizon": 0}, "horizon"),
    ({"reward_range": (1.0, 1.0)}, "reward_range"), ({"reward_range": (0.0,)}, "reward_range"),
    ({"reward_range": (0.0, float("inf"))}, "reward_range"), ({"arm_order": "up"}, "arm_order"),
    ({"horizon": None}, "horizon"),  # β = 1/T needs T
    # the BAI version's parameters (tests/agents/test_dp_se_bai.py) are rejected, not ignored
    ({"delta": 0.01}, "delta"), ({"reward_mode": "cost"}, "reward_mode"),
    ({"task": "ranking"}, "task"),
])
def test_bad_input(bad, param):
    with pytest.raises(ValueError, match=param):
        DPSE(**{"K": 3, "horizon": 100, **bad})


def _released_mask(agent, horizon):
    """Every round before the current (unfinished, or the survivor's never-ending) segment."""
    return np.arange(horizon) < agent.seg_start[:, None]


def test_every_reward_enters_exactly_one_release():
    env_kwargs, kw, horizon = DIVERGING
    env = make_vector_env("HuberBandit-v0", 4, horizon, **env_kwargs)
    agent = make("dp-se", env, 4, **kw)
    simulate(agent, env, n_runs=4, seed=1, ledger=True)
    mask = _released_mask(agent, horizon)
    assert mask.sum() > horizon
    agent.ledger.assert_each_user_charged_exactly(1.0, users_mask=mask)


class CumulativeDPSE(DPSE):
    """Mutation (the agent's audit hook ``forget = False``): epoch means over every reward of the
    run so far (no forgetting)."""

    forget = False


def test_ledger_catches_epoch_means_that_do_not_forget():
    # two close arms: epoch 1 releases both arms (the mutant's second release reuses arm 0's
    # rewards); the honest agent eliminates nothing in epoch 1 and releases both again in epoch 2
    horizon = 20_000
    env_kwargs = dict(means=[0.1, 0.0], inlier="gaussian", alpha=0.0)
    kw = {"epsilon": 1.0, "reward_range": (-3.0, 3.0)}
    env = make_vector_env("HuberBandit-v0", 3, horizon, **env_kwargs)
    agent = CumulativeDPSE(K=2, horizon=horizon, n_runs=3, **kw)
    simulate(agent, env, n_runs=3, seed=1, ledger=True)
    assert np.all(agent.epoch >= 2)  # epoch 1 was released for both arms
    with pytest.raises(PrivacyBudgetExceeded, match="DP-SE epoch mean"):
        agent.ledger.assert_each_user_charged_exactly(1.0, _released_mask(agent, horizon))
    honest = make("dp-se", env, 3, **kw)
    simulate(honest, env, n_runs=3, seed=1, ledger=True)
    assert np.all(honest.epoch >= 3)
    honest.ledger.assert_each_user_charged_exactly(1.0, _released_mask(honest, horizon))


def test_far_below_uniform_and_the_survivor_is_played_without_releases():
    horizon = 20_000
    env = make_vector_env("HuberBandit-v0", 5, horizon, **EASY)
    agent = make("dp-se", env, 5, epsilon=1.0)
    res = simulate(agent, env, n_runs=5, seed=0, ledger=True)
    assert res.regret.mean() < 0.35 * horizon * 1.0  # uniform play: T × mean gap = T
    np.testing.assert_array_equal(agent.active, [[False, True]] * 5)
    survivor_from = agent.seg_start
    assert np.all(survivor_from < horizon // 2)
    spent = agent.ledger.epsilon_spent()
    assert np.all(spent[:, survivor_from[0]:] == 0)  # no release after one arm is left


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("dp-se", "dp-se-exact")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
