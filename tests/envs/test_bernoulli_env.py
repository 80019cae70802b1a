"""BernoulliBandit-v0: instances, the reward law, seeding (common random numbers with
BestArmIdentification-v0), the vector view, the fast path, bad input."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from scipy import stats

import privenv  # noqa: F401
from privenv.envs.bernoulli import BernoulliBanditEnv
from privenv.problems.bai import BAIProblem
from privenv.problems.bernoulli import INSTANCES, BernoulliProblem
from privenv.seeding import run_seed_sequences
from privenv.simulation import simulate


def test_default_instance_and_horizon():
    env = gym.make("BernoulliBandit-v0")
    p = env.unwrapped.problem
    np.testing.assert_array_equal(p.means, [0.75, 0.625, 0.5, 0.375, 0.25])
    assert p.K == 5 and p.best == 0 and p.family == "bernoulli"
    assert env.spec.max_episode_steps == 10**6 and env.unwrapped.horizon == 10**6
    assert env.action_space == gym.spaces.Discrete(5)
    assert env.unwrapped.public_info() == {"K": 5, "law": "bernoulli", "sigma": 0.5,
                                           "reward_range": (0.0, 1.0), "horizon": 10**6}


def test_named_instances():
    assert INSTANCES["mu2"] == (0.75, 0.7, 0.7, 0.7, 0.7)
    assert INSTANCES["azize-basu-fig3"] == (0.8, 0.1, 0.1, 0.1, 0.1)
    assert len(INSTANCES["ren-20"]) == 20 and INSTANCES["ren-20"][0] == 0.9
    for name, means in INSTANCES.items():
        np.testing.assert_array_equal(BernoulliProblem(instance=name).means, means)


@pytest.mark.parametrize("kwargs", [{}, {"instance": "mu3"}, {"means": [0.5, 0.5]}])
def test_checkers_pass(kwargs):
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = BernoulliBanditEnv(horizon=50, **kwargs)
    check_env(env)
    sb3_check(env)


def test_a_step_returns_a_bit_and_evaluation_info_only():
    env = BernoulliBanditEnv(means=[0.2, 0.9], horizon=3)
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step(0)
    assert r in (0.0, 1.0) and type(r) is float and obs == 0 and not term and not trunc
    assert info == {"regret": pytest.approx(0.7), "expected_reward": 0.2, "optimal_action": 1}
    env.step(1)
    assert env.step(1)[3]  # truncated at the horizon


def test_rewards_are_bernoulli_with_the_arm_means():
    """Each arm's pull frequency over 4·10⁴ pulls lies in its 1 − 10⁻⁶ binomial interval
    (5 arms: false-alarm probability ≤ 5·10⁻⁶, seed fixed)."""
    problem = BernoulliProblem(instance="mu4")
    problem.reset(run_seed_sequences(11, 1))
    n = 40_000
    for arm, mu in enumerate(problem.means):
        ones = problem.pulls(0, arm, n).sum()
        lo, hi = stats.binom.ppf([0.5e-6, 1 - 0.5e-6], n, mu)
        assert lo <= ones <= hi


def test_the_kth_pull_of_an_arm_is_the_bai_envs_kth_sample():
    """Common random numbers across the two Bernoulli families: same means, same seed, same
    stream (run, ENV, arm)."""
    means = [0.3, 0.6, 0.45]
    a, b = BernoulliProblem(means=means, n_runs=3), BAIProblem(means=means, n_runs=3)
    seeds = run_seed_sequences(5, 3)
    a.reset(seeds)
    b.reset(seeds)
    for run in range(3):
        for arm in range(3):
            np.testing.assert_array_equal(a.pulls(run, arm, 50), b.pulls(run, arm, 50))


def test_vector_run_i_equals_the_single_env_with_first_run_i():
    horizon, runs = 30, 3
    venv = gym.make_vec("BernoulliBandit-v0", num_envs=runs,
                        vectorization_mode="vector_entry_point", horizon=horizon)
    venv.reset(seed=4)
    actions = np.arange(horizon * runs).reshape(horizon, runs) % 5
    vec = np.stack([venv.step(a)[1] for a in actions], axis=1)
    for i in range(runs):
        env = gym.make("BernoulliBandit-v0", horizon=horizon)
        env.reset(seed=4, options={"first_run": i})
        single = [env.step(int(a))[1] for a in actions[:, i]]
        np.testing.assert_array_equal(vec[i], single)


def test_the_fast_path_draws_the_same_rewards_as_the_step_by_step_runner(monkeypatch):
    import privenv.simulation as simulation

    fast = simulate("ucb1", "BernoulliBandit-v0", n_runs=3, horizon=2000, seed=2)
    monkeypatch.setattr(simulation, "fast_path", lambda agent, venv: None)
    slow = simulate("ucb1", "BernoulliBandit-v0", n_runs=3, horizon=2000, seed=2)
    np.testing.assert_array_equal(fast.regret_curve, slow.regret_curve)


@pytest.mark.parametrize("kwargs,param", [
    ({"means": [0.5, 1.5]}, "means"), ({"means": [0.5]}, "means"),
    ({"means": [0.5, float("nan")]}, "means"), ({"instance": "mu9"}, "instance"),
    ({"instance": "mu1", "means": [0.1, 0.2]}, "instance"),
])
def test_bad_input_names_the_parameter(kwargs, param):
    with pytest.raises(ValueError, match=param):
        gym.make("BernoulliBandit-v0", **kwargs)
