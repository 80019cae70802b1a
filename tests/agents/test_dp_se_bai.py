"""DP-SE (Sajed & Sheffet 2019) for fixed-confidence best-arm identification (paper 3)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy.stats import binom

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.dp_se import DPSE, DPSEBAI
from privenv.privacy import PrivacyBudgetExceeded
from privenv.problems.bai import INSTANCES, stop
from privenv.simulation import make_vector_env, play, simulate
from privenv.theory.bai import global_dp_lower_bound

ENV = "BestArmIdentification-v0"

#: a small hand-traced case: K = 3, δ = 24/e⁵ so that log(8|S|e²/δ) = 5 at e = 1, |S| = 3.
#: Near-deterministic rewards (Gaussian, σ = 10⁻⁶) and ε = 1: the Laplace noise (scale 1/640,
#: then 1/3063) is 24 and 100 scales below the margins, so every run follows the hand trace.
HAND_DELTA = 24 / math.e**5
HAND_ENV = {"means": [0.9, 0.99, 0.45], "law": "gaussian", "sigma": 1e-6}
R1 = 640  # ⌈max{32·5/(1/2)², 8(5 − ln 2)/(1·½)}⌉ = ⌈max{640, 68.9}⌉
R2 = 3063  # |S| = 2, e = 2: ⌈max{32(5 + ln(8/3))·16, 8(5 + ln(4/3))/(1·¼)}⌉ = ⌈3062.18⌉
HAND_TAU = 3 * R1 + 2 * R2  # = 8046

#: random runs that stop after epoch 1 (τ = 3·702) or epoch 2 (τ = 8724), about 70/30
SMALL_ENV = {"means": [0.3, 0.45, 0.6]}
SMALL_KW = {"epsilon": 1.0, "delta": 0.1}


# -- one registry name, two versions ---------------------------------------------------------------


def test_make_builds_the_bai_version_on_the_bai_env():
    agent = make("dp-se", ENV, 3)
    assert type(agent) is DPSEBAI and agent.task == "bai"
    assert agent.beta == agent.delta == 0.01  # β = δ
    assert agent.reward_mode == "cost" and agent.reward_range == (0.0, 1.0)
    assert str(agent.privacy) == "1-DP, central model, per reward, idealized arithmetic"
    regret = make("dp-se", "HuberBandit-v0", 1)
    assert type(regret) is DPSE and regret.task == "regret"
    assert type(DPSE(K=3, task="bai")) is DPSEBAI
    assert type(DPSEBAI(K=3)) is DPSEBAI
    assert DPSEBAI(K=3, delta=0.05, beta=0.05).beta == 0.05  # β = δ as recorded by a sweep


def test_hand_computed_epoch_lengths_and_widths():
    agent = DPSEBAI(K=3, delta=HAND_DELTA, epsilon=1.0)
    assert agent.beta == HAND_DELTA
    assert agent.epoch_length(1, 3) == R1
    h1, c1 = math.sqrt(5 / (2 * R1)), (5 - math.log(2)) / R1  # 1/16 and 0.00673
    assert agent.widths(1, 3, R1) == pytest.approx(h1 + c1, rel=1e-12)
    assert agent.epoch_length(2, 2) == R2
    h2 = math.sqrt((5 + math.log(8 / 3)) / (2 * R2))
    c2 = (5 + math.log(4 / 3)) / R2
    assert agent.widths(2, 2, R2) == pytest.approx(h2 + c2, rel=1e-12)
    # the trace below relies on: gap 0.09 survives epoch 1, is eliminated in epoch 2; 0.54 is not
    assert 2 * (h2 + c2) < 0.09 < 2 * (h1 + c1) < 0.54


def _hand_agent(cls=DPSEBAI, n_runs=4, horizon=20_000):
    env = make_vector_env(ENV, n_runs, horizon, **HAND_ENV)
    agent = cls(K=3, delta=HAND_DELTA, epsilon=1.0, reward_mode="cost", n_runs=n_runs)
    return agent, simulate(agent, env, n_runs=n_runs, seed=0, ledger=True)


def _check_unbiased(agent):
    """Arms 0 (μ = 0.9) and 1 (0.99) were last estimated in epoch 2: each estimate is that epoch's
    mean (≈ μ_a: the rewards have σ = 10⁻⁶) + Lap(1/(εR₂)), |Lap| < 0.01 with probability
    1 − e^{−30.6} per value."""
    np.testing.assert_allclose(agent.estimates[:, :2], [[0.9, 0.99]] * agent.n_runs, atol=0.01)


def _released(agent, n_users):
    """Every pull before the run's current segment (for a stopped run: all τ pulls)."""
    return np.arange(n_users) < agent.seg_start[:, None]


def test_hand_traced_run_every_pull_released_once_then_stopped_for_good():
    agent, res = _hand_agent()
    # epoch 1 eliminates arm 2, epoch 2 arm 0; the stop is at the end of epoch 2
    np.testing.assert_array_equal(res.episode["stopping_time"], [HAND_TAU] * 4)
    np.testing.assert_array_equal(res.episode["recommendation"], [1] * 4)
    np.testing.assert_array_equal(agent.epoch, [3] * 4)  # two epochs done, none begun
    np.testing.assert_array_equal(res.steps, [HAND_TAU + 1] * 4)  # τ pulls, then the stop
    np.testing.assert_array_equal(agent.stopping_time, [HAND_TAU] * 4)
    assert np.all(agent.stopped) and np.all(agent.seg_start == HAND_TAU)
    _check_unbiased(agent)
    # every one of the τ pulls entered exactly one release at ε; nothing after
    agent.ledger.assert_each_user_charged_exactly(1.0, _released(agent, 20_000))

    # a stopped run keeps returning its stop action and ignores its feedback
    before = (agent.estimates.copy(), agent.active.copy(), agent.epoch.copy(), agent.t)
    for _ in range(3):
        actions = agent.act_batch(np.zeros((4, 1)))
        np.testing.assert_array_equal(actions, stop(np.array([1] * 4), 3))
        agent.observe_batch(actions, np.array([-1000.0, 5.0, 0.0, 1.0]), np.full((4, 1), 0.7))
    np.testing.assert_array_equal(agent.estimates, before[0])
    np.testing.assert_array_equal(agent.active, before[1])
    np.testing.assert_array_equal(agent.epoch, before[2])
    np.testing.assert_array_equal(agent.stopping_time, [HAND_TAU] * 4)
    assert agent.seg_sum.sum() == 0.0 and agent.t == before[3] + 3


def test_ledger_on_random_runs():
    env = make_vector_env(ENV, 8, 10_000, **SMALL_ENV)
    agent = make("dp-se", env, 8, **SMALL_KW)
    res = simulate(agent, env, n_runs=8, seed=3, ledger=True)
    assert np.all(agent.stopped) and len(set(agent.stopping_time.tolist())) > 1
    np.testing.assert_array_equal(agent.seg_start, res.episode["stopping_time"])
    agent.ledger.assert_each_user_charged_exactly(1.0, _released(agent, 10_000))


def test_truncated_run_charges_the_unfinished_segment_nothing():
    # a budget inside epoch 2 (arm 1's segment): the run never stops; the pulls of the segment in
    # progress entered no release; those of finished segments exactly one
    budget = 3 * R1 + R2 + 100
    agent, res = _hand_agent(horizon=budget)
    np.testing.assert_array_equal(res.episode["stopping_time"], [budget] * 4)  # all pulls
    assert not agent.stopped.any() and np.all(agent.recommendation == -1)
    assert np.all(agent.epoch == 2) and np.all(agent.seg_start == 3 * R1 + R2)
    agent.ledger.assert_each_user_charged_exactly(1.0, _released(agent, budget))
    assert agent.ledger.epsilon_spent()[:, 3 * R1 + R2:].sum() == 0


class CumulativeCountDPSEBAI(DPSEBAI):
    """Mutation (the authors' public code; the audit hook ``cumulative_count``): the epoch's sum
    over the arm's cumulative count."""

    cumulative_count = True


class ReusingDPSEBAI(DPSEBAI):
    """Mutation (the audit hook ``forget = False``): the epoch sum is never reset, so every
    release reuses all the rewards so far (across epochs and arms)."""

    forget = False


def test_mutation_cumulative_count_fails_the_bias_check():
    agent, _ = _hand_agent(CumulativeCountDPSEBAI)
    agent.ledger.assert_each_user_charged_exactly(1.0, _released(agent, 20_000))  # no leak …
    with pytest.raises(AssertionError):
        _check_unbiased(agent)  # … but 0.9·R2/(R1 + R2) ≈ 0.74: biased


def test_mutation_reusing_rewards_fails_the_ledger():
    agent, _ = _hand_agent(ReusingDPSEBAI)
    # epoch-1 pulls charged again by every later release
    with pytest.raises(PrivacyBudgetExceeded, match="DP-SE epoch mean"):
        agent.ledger.assert_each_user_charged_exactly(1.0, _released(agent, 20_000))


# -- the protocol --------------------------------------------------------------------------------


def test_reward_modes_agree():
    out = []
    for mode in ("cost", "sample"):
        env = make_vector_env(ENV, 8, 10_000, **SMALL_ENV, reward_mode=mode)
        agent = make("dp-se", env, 8, **SMALL_KW)
        assert agent.reward_mode == mode
        out.append((agent, simulate(agent, env, n_runs=8, seed=5).episode))
    assert len(set(out[0][1]["stopping_time"].tolist())) > 1
    for key in ("stopping_time", "recommendation"):
        np.testing.assert_array_equal(out[0][1][key], out[1][1][key])
    np.testing.assert_array_equal(out[0][0].estimates, out[1][0].estimates)


def test_run_i_identical_alone_or_in_a_batch():
    budget = 10_000
    env = make_vector_env(ENV, 12, budget, **SMALL_ENV)
    big = make("dp-se", env, 12, **SMALL_KW)
    res = simulate(big, env, n_runs=12, seed=1)
    assert len(set(res.episode["stopping_time"].tolist())) > 1  # the runs really differ
    for i in (0, 5, 11):
        env1 = make_vector_env(ENV, 1, budget, **SMALL_ENV)
        alone = make("dp-se", env1, 1, **SMALL_KW)
        one = simulate(alone, env1, n_runs=1, seed=1, first_run=i)
        for key in ("stopping_time", "recommendation"):
            assert one.episode[key][0] == res.episode[key][i]
        np.testing.assert_array_equal(alone.estimates[0], big.estimates[i])
        np.testing.assert_array_equal(alone.active[0], big.active[i])


def test_play_on_gym_make_equals_simulate():
    res = simulate("dp-se", ENV, n_runs=2, horizon=10_000, seed=2, env_kwargs=SMALL_ENV,
                   agent_kwargs=SMALL_KW)
    for i in range(2):
        env = gym.make(ENV, horizon=10_000, **SMALL_ENV)
        out = play(make("dp-se", env, 1, **SMALL_KW), env, seed=2, run=i)
        assert out["info"]["stopping_time"] == res.episode["stopping_time"][i]
        assert out["info"]["recommendation"] == res.episode["recommendation"][i]
        assert out["steps"] == res.steps[i]


BAD = [
    ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"), ({"delta": -0.1}, "delta"),
    ({"delta": float("nan")}, "delta"), ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"), ({"epsilon": float("inf")}, "epsilon"),
    ({"beta": 0.2}, "beta"), ({"reward_mode": "raw"}, "reward_mode"), ({"K": 1}, "K"),
    ({"task": "regret"}, "task"), ({"arm_order": "up"}, "arm_order"),
]


@pytest.mark.parametrize("bad,param", BAD)
def test_bad_input(bad, param):
    with pytest.raises(ValueError, match=param):
        DPSEBAI(**{"K": 3, **bad})


@pytest.mark.parametrize("bad,param", [({"delta": 0.0}, "delta"), ({"epsilon": -1.0}, "epsilon"),
                                       ({"task": "ranking"}, "task")])
def test_bad_input_through_make(bad, param):
    with pytest.raises(ValueError, match=param):
        make("dp-se", ENV, 1, **bad)


# -- δ-correctness and the lower bound on μ4 (1000 runs, ε = 1, δ = 0.01) --------------------------

N_RUNS, DELTA, EPSILON = 1000, 0.01, 1.0


@pytest.fixture(scope="module")
def mu4_result():
    return simulate("dp-se", ENV, n_runs=N_RUNS, horizon=100_000, seed=0,
                    env_kwargs={"instance": "mu4"},
                    agent_kwargs={"epsilon": EPSILON, "delta": DELTA})


def test_every_run_stops_and_is_delta_correct(mu4_result):
    ep = mu4_result.episode
    assert np.all(ep["recommendation"] >= 0)  # every run stopped within the budget
    errors = int(np.sum(~ep["correct"].astype(bool)))
    # H0: P(error) ≤ δ. Reject if errors ≥ k, the smallest k with P(Binom(1000, δ) ≥ k) ≤ 10⁻⁶
    # (false-alarm probability ≤ 10⁻⁶; k = 29 against a mean of 10)
    k = int(binom.isf(1e-6, N_RUNS, DELTA)) + 1
    assert binom.sf(k - 1, N_RUNS, DELTA) <= 1e-6
    assert errors < k


def test_mean_stopping_time_above_the_global_dp_lower_bound(mu4_result):
    # any δ-correct ε-global-DP algorithm: E[τ] ≥ T*_g(ν; ε)·log(1/(2.4δ)) (paper 3, Theorem 17)
    bound = global_dp_lower_bound(INSTANCES["mu4"], EPSILON) * math.log(1 / (2.4 * DELTA))
    assert mu4_result.episode["stopping_time"].mean() >= bound
