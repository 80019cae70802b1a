"""LinearContextualBandit-v0: context generators, reward laws, seeding, vector view, bad input."""

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import privenv  # noqa: F401
from privenv.envs.linear import LinearContextualBanditEnv, LinearContextualBanditVectorEnv
from privenv.problems.linear import LinearContextualProblem, load_dataset
from privenv.seeding import run_seed_sequences

CONTEXTS = [
    {},
    {"contexts": "disjoint", "A": 3, "d": 6},
    {"contexts": "hard", "n": 100},
    {"contexts": "paper2", "A": 4, "d": 3},
    {"contexts": "dataset"},
    {"noise": "gaussian", "sigma": 0.3},
]


def rollout(env, seed, actions, **reset_kwargs):
    """(observation, reward, evaluation quantities) of each step (the runner's channel: ``info``
    holds them too, but for a data set's, which reveal its labels)."""
    obs, _ = env.reset(seed=seed, **reset_kwargs)
    out = [(obs, None, None)]
    for a in actions:
        obs, r, _, _, _ = env.step(a)
        out.append((obs, r, env.unwrapped.evaluation()))
    return out


def test_default_instance():
    env = gym.make("LinearContextualBandit-v0")
    p = env.unwrapped.problem
    assert (p.d, p.A, p.contexts.name, p.noise) == (5, 10, "sphere", "bounded")
    assert env.observation_space == gym.spaces.Box(-1, 1, (10, 5), np.float32)
    assert env.action_space == gym.spaces.Discrete(10)
    assert env.spec.max_episode_steps == 10_000 and env.unwrapped.horizon == 10_000
    assert np.linalg.norm(p.theta) == pytest.approx(1.0)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(obs, axis=1), 1.0, rtol=1e-6)
    # θ* is instance-level: the same for every run and seed, changed only by theta_seed
    assert np.array_equal(p.theta, LinearContextualProblem(n_runs=3).theta)
    assert not np.array_equal(p.theta, LinearContextualProblem(theta_seed=1).theta)


@pytest.mark.parametrize("kwargs", CONTEXTS)
def test_checkers_pass(kwargs):
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = LinearContextualBanditEnv(horizon=50, **kwargs)
    check_env(env)
    with pytest.warns(UserWarning, match="unconventional shape"):  # (A, d) is not flat
        sb3_check(env)


@pytest.mark.parametrize("kwargs", CONTEXTS)
def test_info_is_consistent_with_features_and_theta(kwargs):
    env = LinearContextualBanditEnv(horizon=100, **kwargs)
    p = env.problem
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = int(rng.integers(p.A))
        assert env.observation_space.contains(obs)
        assert np.all(np.linalg.norm(obs, axis=1) <= 1 + 1e-6)
        nxt, r, term, trunc, public = env.step(a)
        info = env.evaluation()  # = ``info``, but on a data set (whose labels it reveals)
        assert set(info) == {"regret", "expected_reward", "optimal_action", "expected_rewards"}
        assert set(public) == (set() if kwargs.get("contexts") == "dataset" else set(info))
        means = info["expected_rewards"]
        if p.theta is not None:  # linear: E[y | x, a] = <φ(x, a), θ*>
            np.testing.assert_allclose(means, obs.astype(np.float64) @ p.theta, atol=1e-12)
        assert info["expected_reward"] == means[a]
        assert info["optimal_action"] == int(np.argmax(means))
        assert info["regret"] == pytest.approx(means.max() - means[a])
        if p.noise == "bounded":
            assert r in (-1.0, 1.0)
        obs = nxt


# Residual y − E[y | x, a] over n rounds with uniform actions: mean 0 with sd ≤ 1 (bounded) or σ
# (Gaussian); also uncorrelated with the mean. Each bound is 6 standard errors: false alarm
# < 2e-9 per check by the CLT.
@pytest.mark.parametrize("kwargs,sd", [({}, 1.0), ({"noise": "gaussian", "sigma": 0.3}, 0.3),
                                       ({"contexts": "disjoint"}, 1.0)])
def test_reward_law_has_the_linear_mean(kwargs, sd):
    venv = LinearContextualBanditVectorEnv(num_envs=50, horizon=400, **kwargs)
    venv.reset(seed=2)
    rng = np.random.default_rng(3)
    res, ms = [], []
    for _ in range(400):
        a = rng.integers(0, venv.problem.A, size=50)
        _, r, _, _, info = venv.step(a)
        res.append(r - info["expected_reward"])
        ms.append(info["expected_reward"])
    res, ms = np.concatenate(res), np.concatenate(ms)
    n = res.size
    assert abs(res.mean()) < 6 * sd / np.sqrt(n)
    assert abs((res * ms).mean()) < 6 * sd / np.sqrt(n)
    if "sigma" in kwargs:  # variance σ² (fourth moment 3σ⁴ ⇒ sd of the estimate √(2/n)σ²)
        assert abs(res.var() - sd**2) < 6 * np.sqrt(2 / n) * sd**2
    else:  # bounded: Var(y | m) = 1 − m²
        assert abs(res.var() - (1 - ms**2).mean()) < 6 * np.sqrt(1 / n)


def test_hard_instance_of_theorem_2_1():
    """φ = e₂ with probability c/√n (binomial, 6 sd: false alarm < 2e-9), actions ±φ,
    θ* = (0, 1)."""
    n, c = 400, 2.0  # P(e₂) = 0.1
    p = LinearContextualProblem(contexts="hard", n=n, c=c)
    np.testing.assert_array_equal(p.theta, [0.0, 1.0])
    p.reset(run_seed_sequences(0, 1))
    raw = p._ctx.take_many(0, 50_000)
    q = c / np.sqrt(n)
    assert abs(raw.mean() - q) < 6 * np.sqrt(q * (1 - q) / raw.size)
    phi = p.contexts.features(raw[:20])
    np.testing.assert_array_equal(phi[:, 1], -phi[:, 0])
    np.testing.assert_array_equal(phi[:, 0, 1], raw[:20].astype(np.float32))
    # the env's default n is its horizon
    assert LinearContextualBanditEnv(contexts="hard", horizon=123).problem.contexts.n == 123
    venv = LinearContextualBanditVectorEnv(num_envs=2, contexts="hard", max_episode_steps=77)
    assert venv.problem.contexts.n == 77
    # regret: 2 on a rare round for the wrong sign, 0 on e₁ rounds (θ*₁ = 0)
    env = LinearContextualBanditEnv(contexts="hard", n=4, c=1.0)  # P(e₂) = 1/2
    obs, _ = env.reset(seed=0)
    for _ in range(20):
        rare = obs[0, 1] == 1.0
        obs, r, _, _, info = env.step(1)
        assert info["regret"] == (2.0 if rare else 0.0)
        if rare:
            assert r == -1.0  # mean −1: deterministic under bounded noise


def test_disjoint_features_are_blocks_of_one_context():
    p = LinearContextualProblem(contexts="disjoint", A=3, d=12)
    obs, _ = p.reset(run_seed_sequences(0, 1))
    phi = obs[0]
    x = phi[0, 0:4]
    assert np.linalg.norm(x) == pytest.approx(1.0, rel=1e-6)
    for a in range(3):
        np.testing.assert_array_equal(phi[a, 4 * a: 4 * a + 4], x)
        assert np.count_nonzero(phi[a]) == np.count_nonzero(x)
    assert LinearContextualProblem(contexts="disjoint").d == 50  # A = 10 blocks of p = 5


@pytest.mark.parametrize("dataset,A", [("wine", 3), ("breast_cancer", 2), ("digits", 10)])
def test_dataset_contexts(dataset, A):
    X, labels = load_dataset(dataset)
    env = LinearContextualBanditEnv(contexts="dataset", dataset=dataset, horizon=50)
    p = env.problem
    assert p.A == A and p.d == A * X.shape[1] and p.theta is None
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    obs, _ = env.reset(seed=0)
    for t in range(30):
        a = t % A
        # the disjoint encoding: row b holds x̃ in block b
        x = obs[0, : X.shape[1]]
        for b in range(A):
            np.testing.assert_array_equal(obs[b, b * X.shape[1]: (b + 1) * X.shape[1]], x)
        row = np.flatnonzero(np.all(np.abs(X.astype(np.float32) - x) == 0, axis=1))
        assert row.size >= 1
        obs, r, _, _, info = env.step(a)
        label = labels[row[0]]
        ev = env.evaluation()  # the runner's channel: info holds nothing of the label
        assert info == {}
        assert r == (1.0 if a == label else -1.0) == ev["expected_reward"]
        assert ev["regret"] == (0.0 if a == label else 2.0)
        assert ev["optimal_action"] == label


def test_dataset_needs_scikit_learn(monkeypatch):
    load_dataset.cache_clear()
    monkeypatch.setitem(sys.modules, "sklearn", None)
    try:
        with pytest.raises(ImportError, match="scikit-learn"):
            LinearContextualProblem(contexts="dataset")
    finally:
        load_dataset.cache_clear()


def test_same_seed_same_trajectory():
    actions = [0, 3, 9, 1, 1, 4]
    e1, e2 = LinearContextualBanditEnv(), LinearContextualBanditEnv()
    t1, t2 = rollout(e1, 5, actions), rollout(e2, 5, actions)
    for (o1, r1, i1), (o2, r2, i2) in zip(t1, t2, strict=True):
        np.testing.assert_array_equal(o1, o2)
        assert r1 == r2
        if i1 is not None:
            assert i1["regret"] == i2["regret"] and i1["optimal_action"] == i2["optimal_action"]
    t3 = rollout(e1, 6, actions)
    assert not np.array_equal(t1[1][0], t3[1][0])


@pytest.mark.parametrize("kwargs", [{}, {"contexts": "dataset"}, {"contexts": "hard"}])
def test_vector_run_i_equals_single_env_first_run_i(kwargs):
    venv = LinearContextualBanditVectorEnv(num_envs=5, horizon=100, **kwargs)
    A = venv.problem.A
    rng = np.random.default_rng(0)
    actions = rng.integers(0, A, size=(25, 5))
    obs0, _ = venv.reset(seed=9)
    steps = [(*venv.step(a)[:4], venv.evaluation()) for a in actions]
    for i in (0, 4):
        env = LinearContextualBanditEnv(horizon=100, **kwargs)
        single = rollout(env, 9, [int(a) for a in actions[:, i]], options={"first_run": i})
        np.testing.assert_array_equal(obs0[i], single[0][0])
        for (o, r, _, _, info), (so, sr, sinfo) in zip(steps, single[1:], strict=True):
            np.testing.assert_array_equal(o[i], so)
            assert r[i] == sr
            assert info["regret"][i] == sinfo["regret"]
            np.testing.assert_array_equal(info["expected_rewards"][i], sinfo["expected_rewards"])


def test_runs_sitting_out_consume_no_randomness():
    p = LinearContextualProblem(n_runs=2)
    seeds = run_seed_sequences(4, 2)
    o, _ = p.reset(seeds)
    seen, rewards = [o[0]], []
    for i in range(10):
        live = np.array([i % 2 == 0, True])
        o, r, _, info = p.step(np.array([2, 2]), live=live)
        if live[0]:
            seen.append(o[0])
            rewards.append(r[0])
        else:
            assert r[0] == 0.0 and info["regret"][0] == 0.0
            np.testing.assert_array_equal(o[0], seen[-1])  # the context stays
    alone = LinearContextualProblem()
    o, _ = alone.reset([seeds[0]])
    np.testing.assert_array_equal(o[0], seen[0])
    for k in range(5):
        o, r, _, _ = alone.step(np.array([2]))
        np.testing.assert_array_equal(o[0], seen[k + 1])
        assert r[0] == rewards[k]


def test_partial_reset_and_make_vec():
    venv = gym.make_vec("LinearContextualBandit-v0", num_envs=3,
                        vectorization_mode="vector_entry_point", d=3, A=4)
    assert isinstance(venv.unwrapped, LinearContextualBanditVectorEnv)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (3, 4, 3) and obs.dtype == np.float32
    _, r, term, trunc, info = venv.step(np.array([0, 1, 2]))
    assert r.shape == (3,) and info["expected_rewards"].shape == (3, 4)
    v = LinearContextualBanditVectorEnv(num_envs=3, horizon=2,
                                        autoreset_mode=AutoresetMode.DISABLED)
    v.reset(seed=0)
    v.step(np.zeros(3, dtype=np.int64))
    v.step(np.zeros(3, dtype=np.int64))
    obs, _ = v.reset(options={"reset_mask": np.array([False, True, False])})
    assert obs.shape == (3, 10, 5)


def test_public_info_has_no_theta():
    info = LinearContextualBanditEnv(horizon=10).public_info()
    assert info == {"d": 5, "A": 10, "contexts": "sphere", "noise": "bounded", "sigma": 1.0,
                    "reward_bound": 1.0, "feature_bound": 1.0, "theta_bound": 1.0,
                    "horizon": 10}


BAD = [
    (dict(contexts="gaussian"), "contexts"),
    (dict(noise="laplace"), "noise"),
    (dict(sigma=0.5), "sigma"),  # sigma with bounded noise
    (dict(noise="gaussian", sigma=0.0), "sigma"),
    (dict(theta=[1.0, 0.0]), "theta"),
    (dict(theta=[1.0, 1.0, 0.0, 0.0, 0.0]), "theta"),  # norm √2 > 1
    (dict(theta=[np.nan, 0.0, 0.0, 0.0, 0.0]), "theta"),
    (dict(contexts="dataset", theta=[0.0] * 42), "theta"),
    (dict(theta_seed=-1), "theta_seed"),
    (dict(A=1), "A"),
    (dict(d=0), "d"),
    (dict(d=2.5), "d"),
    (dict(contexts="disjoint", A=2, d=7), "d"),
    (dict(contexts="hard", A=3), "A"),
    (dict(contexts="hard", d=3), "d"),
    (dict(contexts="hard", c=0.0), "c"),
    (dict(contexts="hard", n=100, c=11.0), "c"),  # c/√n > 1
    (dict(contexts="hard", n=0), "n"),
    (dict(c=1.0), "c"),  # c without the hard instance
    (dict(n=10), "n"),
    (dict(contexts="dataset", dataset="iris"), "dataset"),
    (dict(dataset="wine"), "dataset"),  # dataset without contexts="dataset"
    (dict(contexts="dataset", d=5), "d"),
    (dict(contexts="dataset", A=4), "A"),
    (dict(contexts="paper2", d=1), "d"),
    (dict(horizon=0), "horizon"),
]


@pytest.mark.parametrize("kwargs,param", BAD)
def test_bad_input(kwargs, param):
    with pytest.raises(ValueError, match=param):
        LinearContextualBanditEnv(**kwargs)


def test_bad_actions():
    env = LinearContextualBanditEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(10)
    venv = LinearContextualBanditVectorEnv(num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        venv.step(np.array([0, -1]))
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.array([0, 1, 2]))


@pytest.mark.parametrize("contexts,A,d,p", [("sphere", 7, 3, 3), ("disjoint", 2, 6, 3),
                                            ("sphere", 5, 10, 10)])
def test_sphere_features_are_uniform_on_the_sphere(contexts, A, d, p):
    """The Box–Muller sphere sampler has the uniform law on S^{p−1}. p = 3 (Archimedes): every
    coordinate is U[−1, 1], KS test at level 1e-6 per coordinate; p = 10: E[x_i²] = 1/p and
    E[x_i x_j] = 0 within 6 standard errors (false alarm < 2e-9 per check by the CLT)."""
    from scipy import stats

    prob = LinearContextualProblem(contexts=contexts, A=A, d=d)
    prob.reset(run_seed_sequences(11, 1))
    raw = prob._ctx.take_many(0, 20_000)  # rounds × (A, d) or rounds × p
    x = raw.reshape(-1, p).astype(np.float64)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-6)
    n = x.shape[0]
    if p == 3:
        for i in range(3):
            assert stats.kstest(x[:, i], "uniform", args=(-1, 2)).pvalue > 1e-6
    second = x.T @ x / n
    sd = np.sqrt(3.0 / (p * (p + 2)) - 1.0 / p**2) / np.sqrt(n)  # sd of the mean of x_i²
    assert np.all(np.abs(np.diag(second) - 1.0 / p) < 6 * sd)
    assert np.all(np.abs(second[~np.eye(p, dtype=bool)]) < 6 * np.sqrt(1.0 / (p * (p + 2)) / n))
    # a run's stream does not depend on the number of runs
    many = LinearContextualProblem(contexts=contexts, A=A, d=d, n_runs=3)
    many.reset(run_seed_sequences(11, 3))
    np.testing.assert_array_equal(many._ctx.take_many(0, 300), raw[:300])


def test_sphere_sampler_never_divides_zero_by_zero():
    """u = 0 (probability 2⁻²⁴ per pair) must not give a zero normal: with d = 1 that is 0/0."""
    from privenv.problems.linear import _unit_sphere

    class ZeroUniforms:
        def random(self, n, dtype):
            return np.zeros(n, dtype=dtype)

    x = _unit_sphere(ZeroUniforms(), (4, 3), 1)
    assert x.shape == (4, 3, 1) and np.all(np.abs(x) == 1.0)
    assert np.all(np.isfinite(_unit_sphere(ZeroUniforms(), (5,), 4)))
