"""BestArmIdentification-v0: actions, stop semantics, laws, seeding, vector view, bad input."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import privenv  # noqa: F401
from privenv.envs.bai import (
    BestArmIdentificationEnv,
    BestArmIdentificationVectorEnv,
    decode,
    pull,
    stop,
)
from privenv.problems.bai import INSTANCES, BAIProblem
from privenv.seeding import run_seed_sequences
from privenv.simulation import simulate


def test_default_instance_is_mu1_with_budget_1e8():
    env = gym.make("BestArmIdentification-v0")
    p = env.unwrapped.problem
    np.testing.assert_allclose(p.means, [0.95, 0.9, 0.9, 0.9, 0.5])
    assert p.law == "bernoulli" and p.K == 5 and p.best == 0
    assert env.action_space == gym.spaces.Discrete(10)
    assert env.spec.max_episode_steps == 10**8 and env.unwrapped.horizon == 10**8


def test_named_instances_of_appendix_i():
    assert INSTANCES["mu3"] == (0, 0.25, 0.5, 0.75, 1)
    assert INSTANCES["mu5"] == (0.75, 0.53125, 0.375, 0.28125, 0.25)
    for name, means in INSTANCES.items():
        p = BAIProblem(instance=name)
        np.testing.assert_array_equal(p.means, means)
        assert p.best == int(np.argmax(means))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"instance": "mu3", "law": "beta"},
        {"law": "gaussian", "sigma": 2.0, "reward_mode": "sample"},
        {"permute_arms": True},
    ],
)
def test_checkers_pass(kwargs):
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = BestArmIdentificationEnv(horizon=50, **kwargs)
    check_env(env)
    sb3_check(env)


def test_action_helpers():
    assert pull(3) == 3 and stop(3, 5) == 8
    assert decode(3, 5) == (False, 3) and decode(8, 5) == (True, 3)
    assert decode(np.int64(7), 5) == (True, 2)
    stops, arms = decode(np.array([0, 4, 5, 9]), 5)
    np.testing.assert_array_equal(stops, [False, False, True, True])
    np.testing.assert_array_equal(arms, [0, 4, 0, 4])
    np.testing.assert_array_equal(stop(np.array([0, 4]), 5), [5, 9])


def test_stop_semantics_correct_and_wrong():
    env = BestArmIdentificationEnv(wrong_penalty=50.0)
    env.reset(seed=0)
    for a in (0, 1, 2):
        obs, r, term, trunc, info = env.step(pull(a))
        assert r == -1.0 and not term and not trunc and info["recommendation"] == -1
        assert obs.shape == (1,) and obs[0] in (0.0, 1.0)
    obs, r, term, trunc, info = env.step(stop(0, 5))
    assert (r, term, trunc) == (0.0, True, False)
    assert type(r) is float and type(term) is bool and type(trunc) is bool
    assert set(info) == {"regret", "stopping_time", "recommendation", "correct"}
    assert info == {"regret": 0.0, "stopping_time": 3, "recommendation": 0, "correct": True}
    with pytest.raises(gym.error.ResetNeeded):
        env.step(pull(0))

    env.reset(seed=0)
    _, r, term, trunc, info = env.step(stop(4, 5))  # stop at once, wrongly
    assert (r, term, trunc) == (-50.0, True, False)
    assert info == {"regret": 0.0, "stopping_time": 0, "recommendation": 4, "correct": False}


def test_truncated_at_sample_budget():
    env = BestArmIdentificationEnv(horizon=3)
    env.reset(seed=0)
    flags = [env.step(pull(1))[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    env.reset(seed=0)
    for _ in range(3):
        *_, info = env.step(pull(1))
    assert info["recommendation"] == -1 and info["correct"] is False
    assert info["stopping_time"] == 3


def test_reward_modes_carry_the_sample_in_one_channel():
    cost, sample = BestArmIdentificationEnv(), BestArmIdentificationEnv(reward_mode="sample")
    cost.reset(seed=3)
    sample.reset(seed=3)
    for a in (0, 4, 4, 1, 0, 4):
        o1, r1, *_ = cost.step(a)
        o2, r2, *_ = sample.step(a)
        assert r1 == -1.0 and o2[0] == 0.0
        assert o1[0] == r2  # the same sample (common random numbers), in the other channel
    # a wrong stop: the penalty is an RL signal of cost mode; sample mode's reward channel
    # carries samples only (so a reward-perturbing LDP wrapper never sees a value outside [0, 1])
    _, r_cost, *_ = cost.step(stop(1, 5))
    _, r_sample, term, _, info = sample.step(stop(1, 5))
    assert r_cost == -1000.0 and r_sample == 0.0 and term and not info["correct"]


# Mean of n pulls within 6 standard errors (sd ≤ 1/2 for laws on [0, 1], σ for Gaussian): false
# alarm < 2e-9 per check by the CLT, < 1e-7 over the ≤ 30 checks below.
@pytest.mark.parametrize(
    "kwargs,sd",
    [
        ({"instance": "mu1"}, 0.5),
        ({"instance": "mu3"}, 0.5),
        ({"instance": "mu6", "law": "beta"}, 0.5),
        ({"instance": "mu3", "law": "beta", "concentration": 0.5}, 0.5),
        ({"means": [-3.0, 2.0, 7.5], "law": "gaussian", "sigma": 2.0}, 2.0),
    ],
)
def test_laws_have_the_given_means(kwargs, sd):
    p = BAIProblem(**kwargs)
    p.reset(run_seed_sequences(0, 1))
    n = 100_000
    for arm, mu in enumerate(p.means):
        x = p.pulls(0, arm, n)
        assert abs(x.mean() - mu) < 6 * sd / np.sqrt(n)
        if p.law != "gaussian":
            assert x.min() >= 0.0 and x.max() <= 1.0
        if p.law == "bernoulli":
            assert set(np.unique(x)) <= {0.0, 1.0}


def test_beta_law_variance():
    """Beta(cμ, c(1 − μ)) has variance μ(1 − μ)/(c + 1); the sample variance of n = 10⁵ draws is
    within 6 of its standard errors (fourth moment ≤ variance for a law on [0, 1])."""
    p = BAIProblem(means=[0.3, 0.5], law="beta", concentration=3.0)
    p.reset(run_seed_sequences(1, 1))
    n = 100_000
    for arm, mu in enumerate(p.means):
        x = p.pulls(0, arm, n)
        var = mu * (1 - mu) / 4.0
        assert abs(x.var() - var) < 6 * np.sqrt(var / n)


def test_same_seed_same_trajectory():
    def traj(env, seed):
        env.reset(seed=seed)
        return [env.step(a)[0][0] for a in (0, 1, 2, 0, 3, 3, 4, 0)]

    e1, e2 = BestArmIdentificationEnv(), BestArmIdentificationEnv()
    assert traj(e1, 5) == traj(e2, 5)
    assert traj(e1, None) == traj(e2, None)
    assert traj(e1, 5) != traj(e1, 6)


def test_common_random_numbers_kth_pull_same_for_any_policy():
    a, b = BestArmIdentificationEnv(instance="mu4"), BestArmIdentificationEnv(instance="mu4")
    a.reset(seed=1)
    b.reset(seed=1)
    ra = [a.step(2)[0][0] for _ in range(7)]
    rb = []
    for arm in (0, 2, 1, 2, 4, 2, 2, 2, 3, 2, 2):
        o = b.step(arm)[0]
        if arm == 2:
            rb.append(o[0])
    assert ra == rb


def test_vector_run_i_equals_single_env_first_run_i():
    venv = BestArmIdentificationVectorEnv(num_envs=5, instance="mu2")
    venv.reset(seed=9)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 5, size=(60, 5))
    actions[-1] = stop(np.arange(5), 5)
    steps = [venv.step(a) for a in actions]
    obs = np.array([s[0][:, 0] for s in steps])
    rew = np.array([s[1] for s in steps])
    assert steps[-1][2].all()
    for i in (0, 3):
        env = BestArmIdentificationEnv(instance="mu2")
        env.reset(seed=9, options={"first_run": i})
        single = [env.step(int(a)) for a in actions[:, i]]
        np.testing.assert_array_equal(obs[:, i], [s[0][0] for s in single])
        np.testing.assert_array_equal(rew[:, i], [s[1] for s in single])
        assert single[-1][2] and single[-1][4]["correct"] == bool(steps[-1][4]["correct"][i])


def test_runs_sitting_out_consume_no_randomness():
    """A run that sits a step out (live=False) draws nothing: its samples stay those of the run
    stepped alone."""
    p = BAIProblem(n_runs=2)
    seeds = run_seed_sequences(4, 2)
    p.reset(seeds)
    a = np.array([1, 1])
    out = [p.step(a, live=np.array([i % 2 == 0, True]))[0][:, 0] for i in range(10)]
    alone = BAIProblem()
    alone.reset([seeds[0]])
    expected = [alone.step(np.array([1]))[0][0, 0] for _ in range(5)]
    np.testing.assert_array_equal([o[0] for o in out[::2]], expected)


def test_make_vec_and_autoreset_after_stop():
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=3,
                        vectorization_mode="vector_entry_point")
    assert isinstance(venv.unwrapped, BestArmIdentificationVectorEnv)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (3, 1)
    _, r, term, trunc, info = venv.step(np.array([0, 6, 5]))
    np.testing.assert_array_equal(term, [False, True, True])
    np.testing.assert_array_equal(r, [-1.0, -1000.0, 0.0])
    np.testing.assert_array_equal(info["recommendation"], [-1, 1, 0])
    assert not trunc.any()
    _, r, term, _, _ = venv.step(np.array([0, 0, 0]))  # next-step autoreset of runs 1 and 2
    np.testing.assert_array_equal(r, [-1.0, 0.0, 0.0])


def test_simulate_records_stopping_time_and_correctness():
    class PullEachThenStop:
        """Pull every arm m times (round robin), then recommend the best empirical mean."""

        def __init__(self, K=5, m=40):
            self.K, self.m, self.t, self.sums = K, m, 0, np.zeros(K)

        def act(self, obs):
            if self.t < self.K * self.m:
                return pull(self.t % self.K)
            return stop(int(np.argmax(self.sums)), self.K)

        def observe(self, action, reward, obs):
            if action < self.K:
                self.sums[action] += obs[0]  # reward_mode="cost": the sample is the observation
            self.t += 1

    res = simulate(PullEachThenStop(), "BestArmIdentification-v0", n_runs=4, seed=0,
                   horizon=1000, env_kwargs={"instance": "mu4"})
    np.testing.assert_array_equal(res.episode["stopping_time"], [200] * 4)
    assert res.episode["correct"].dtype == bool and res.episode["correct"].mean() >= 0.5
    np.testing.assert_array_equal(res.steps, [201] * 4)
    assert (res.regret == 0).all()


# -- a distribution of instances: permute_arms ------------------------------------------------


def test_without_permute_arms_every_run_shows_the_instance():
    p = BAIProblem(instance="mu4", n_runs=3)
    p.reset(run_seed_sequences(0, 3))
    np.testing.assert_array_equal(p.run_means, np.tile(INSTANCES["mu4"], (3, 1)))


def test_permute_arms_orders_are_uniform():
    """All K! = 6 orders of K = 3 arms equally likely over 6000 runs: χ² test, 5 degrees of
    freedom, false-alarm probability 10⁻⁶, fixed seed."""
    from scipy import stats

    means = np.array([0.2, 0.8, 0.5])
    p = BAIProblem(means=means, permute_arms=True, n_runs=6000)
    p.reset(run_seed_sequences(3, 6000))
    assert (np.sort(p.run_means, axis=1) == np.sort(means)).all()  # each row a permutation
    codes = (p.run_means == means[0]).argmax(1) * 3 + (p.run_means == means[1]).argmax(1)
    counts = np.bincount(codes, minlength=9)[[1, 2, 3, 5, 6, 7]]  # the 6 valid (pos 0, pos 1)
    assert counts.sum() == 6000
    assert stats.chisquare(counts).pvalue > 1e-6


def test_permute_arms_samples_and_correctness_follow_the_shown_order():
    """Arm a of a run samples from that run's μ_{π(a)}; only the shown best arm is correct."""
    n, means = 300, [0.0, 3.0, 1.0, 2.0]
    p = BAIProblem(means=means, law="gaussian", sigma=1e-6, permute_arms=True, n_runs=n)
    p.reset(run_seed_sequences(1, n))
    for a in range(4):
        obs = p.step(np.full(n, a))[0][:, 0]
        np.testing.assert_allclose(obs, p.run_means[:, a], atol=1e-4)
    shown_best = p.run_means.argmax(axis=1)
    assert (p.run_means[np.arange(n), shown_best] == 3.0).all()
    correct = p.step(stop(shown_best, 4))[3]["correct"]
    assert correct.all()
    p.reset(run_seed_sequences(1, n))  # same seeds: same orders
    np.testing.assert_array_equal(p.run_means.argmax(axis=1), shown_best)
    memorised = p.step(stop(np.full(n, 1), 4))[3]["correct"]  # the unpermuted best arm
    assert memorised.mean() == (shown_best == 1).mean() and 0.15 < memorised.mean() < 0.35


def test_permute_arms_new_order_each_episode_reproducible_and_batch_independent():
    env = BestArmIdentificationEnv(means=[0.1, 0.9, 0.5, 0.3], permute_arms=True)
    orders = []
    env.reset(seed=5, options={"first_run": 2})
    for _ in range(12):
        orders.append(env.unwrapped.problem.run_means[0].copy())
        env.reset()  # the next episode of the same run
    assert len({tuple(o) for o in orders}) > 3  # fresh orders (24 possible)
    again = BestArmIdentificationEnv(means=[0.1, 0.9, 0.5, 0.3], permute_arms=True)
    again.reset(seed=5, options={"first_run": 2})
    np.testing.assert_array_equal(again.unwrapped.problem.run_means[0], orders[0])
    venv = BestArmIdentificationVectorEnv(num_envs=4, means=[0.1, 0.9, 0.5, 0.3],
                                          permute_arms=True)
    venv.reset(seed=5)
    np.testing.assert_array_equal(venv.unwrapped.problem.run_means[2], orders[0])


def test_public_info_has_no_means():
    info = BestArmIdentificationEnv(horizon=10).public_info()
    assert info == {"task": "bai", "K": 5, "law": "bernoulli", "sigma": 0.5, "reward_mode": "cost",
                    "pull_cost": 1.0, "wrong_penalty": 1000.0, "horizon": 10}
    assert BestArmIdentificationEnv(law="gaussian", sigma=3.0).public_info()["sigma"] == 3.0


BAD = [
    (dict(means=[1.2, 0.5]), "means"),
    (dict(means=[0.5, -0.1], law="beta"), "means"),
    (dict(means=[0.9, 0.9, 0.1]), "means"),  # tie for the best arm
    (dict(means=[0.5]), "means"),
    (dict(means=[0.5, float("nan")]), "means"),
    (dict(instance="mu7"), "instance"),
    (dict(instance="mu1", means=[0.5, 0.4]), "instance"),
    (dict(law="poisson"), "law"),
    (dict(law="gaussian", sigma=0.0), "sigma"),
    (dict(sigma=1.0), "sigma"),  # sigma with a Bernoulli law
    (dict(law="beta", concentration=-1.0), "concentration"),
    (dict(concentration=2.0), "concentration"),
    (dict(pull_cost=-1.0), "pull_cost"),
    (dict(wrong_penalty=float("nan")), "wrong_penalty"),
    (dict(reward_mode="regret"), "reward_mode"),
    (dict(horizon=0), "horizon"),
    (dict(permute_arms="yes"), "permute_arms"),
]


@pytest.mark.parametrize("kwargs,param", BAD)
def test_bad_input(kwargs, param):
    with pytest.raises(ValueError, match=param):
        BestArmIdentificationEnv(**kwargs)


def test_bad_actions():
    env = BestArmIdentificationEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(10)
    venv = BestArmIdentificationVectorEnv(num_envs=2, autoreset_mode=AutoresetMode.DISABLED)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        venv.step(np.array([0, 10]))


@pytest.mark.parametrize("law", ["bernoulli", "beta"])
def test_permute_arms_orders_are_numpys_permutation_of_the_instance_stream(law):
    """Run i's order is ``default_rng(child(seed_i, INSTANCE)).permutation(K)`` (the numbers
    before the orders were drawn in compiled code), at the first reset of every run and at a
    reset of some runs, and the arms' samples are unchanged by the order's drawing."""
    from privenv.seeding import INSTANCE, child

    means = np.array([0.9, 0.5, 0.1, 0.3, 0.7])
    seeds = run_seed_sequences(11, 40)
    p = BAIProblem(means=means, law=law, permute_arms=True, n_runs=40)
    p.reset(seeds)

    def numpy_order(seed):
        return means[np.random.default_rng(child(seed, INSTANCE)).permutation(5)]

    np.testing.assert_array_equal(p.run_means, [numpy_order(s) for s in seeds])
    if law == "bernoulli":  # arm a's stream is (run, ENV, a) whatever the order
        plain = BAIProblem(means=means, law=law, n_runs=40)
        plain.reset(seeds)
        np.testing.assert_array_equal(p._states, plain._states)
    runs = np.array([3, 17, 39])
    again = run_seed_sequences(12, 3)
    p.reset(again, runs)
    np.testing.assert_array_equal(p.run_means[runs], [numpy_order(s) for s in again])
    if law == "bernoulli":
        plain.reset(again, runs)
        np.testing.assert_array_equal(p._states, plain._states)
