"""HuberBandit-v0: the problem, the single and vector views, seeding and bad input."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from scipy import stats

import privenv  # noqa: F401
from privenv.envs.huber import HuberBanditEnv, HuberBanditVectorEnv
from privenv.problems.huber import HuberProblem, paper1_means
from privenv.seeding import run_seed_sequences


def test_default_instance_is_paper1():
    env = gym.make("HuberBandit-v0")
    p = env.unwrapped.problem
    np.testing.assert_allclose(p.means, [100, 75, 50, 25, 0])
    assert p.alpha == 0.05 and p.K == 5 and p.noise.var == pytest.approx(5.0)
    assert env.spec.max_episode_steps == 100_000 and env.unwrapped.horizon == 100_000


def test_checkers_pass():
    from stable_baselines3.common.env_checker import check_env as sb3_check

    for kwargs in ({}, {"inlier": "pareto", "alpha": 0.1}, {"contamination": "adversarial"}):
        env = HuberBanditEnv(horizon=50, **kwargs)
        check_env(env)
        sb3_check(env)


@pytest.mark.parametrize("laws", [{}, {"inlier": "pareto", "alpha": 0.3},
                                  {"inlier": "gaussian", "inlier_params": {"sigma": 2.0},
                                   "contamination": "adversarial", "alpha": 0.2},
                                  {"alpha": 0.0}])
def test_compiled_blocks_are_the_numpy_fill(laws):
    """The named laws are drawn in compiled code (``HuberArms``); each (run, arm) stream gives
    exactly what the numpy fill (``HuberProblem._fill``, the path of the scipy laws) draws from
    the stream's Generator, block after block: the inliers, the coins, the outliers."""
    from privenv.problems.base import ARM_BLOCK
    from privenv.seeding import ENV, child

    p = HuberProblem(n_runs=2, **laws)
    assert p.compiled
    seeds = run_seed_sequences(3, 2)
    p.reset(seeds)
    for run, arm in ((0, 0), (1, 3)):
        gen = np.random.default_rng(child(seeds[run], ENV, arm))
        want = np.concatenate([p._fill(gen, ARM_BLOCK, run * p.K + arm) for _ in range(3)])
        np.testing.assert_array_equal(p.pulls(run, arm, 3 * ARM_BLOCK), want)


@pytest.mark.parametrize("inlier", ["student-t", "pareto", "gaussian", stats.laplace(scale=2)])
def test_inlier_means_are_exact(inlier):
    """Mean of 2·10⁵ clean pulls is within 6 standard errors of μ_a (false alarm < 2e-9 for a
    finite-variance law by the CLT; the heavy-tailed laws have variance 5)."""
    p = HuberProblem(means=[3.0, -1.0], alpha=0.0, inlier=inlier)
    p.reset(run_seed_sequences(0, 1))
    n = 200_000
    for arm, mu in enumerate(p.means):
        x = p.pulls(0, arm, n)[:, 0]
        assert abs(x.mean() - mu) < 6 * np.sqrt(p.noise.var / n)


def test_contamination_rate_and_flags():
    """Outlier fraction ≈ α (binomial, 6 sd: false alarm < 2e-9)."""
    p = HuberProblem(alpha=0.1, n_runs=1)
    p.reset(run_seed_sequences(0, 1))
    n = 100_000
    flags = p.pulls(0, 0, n)[:, 1]
    assert abs(flags.mean() - 0.1) < 6 * np.sqrt(0.1 * 0.9 / n)


def test_adversarial_contamination_pushes_toward_confusion():
    p = HuberProblem(alpha=0.5, contamination="adversarial")
    p.reset(run_seed_sequences(0, 1))
    best = p.pulls(0, 0, 20_000)
    other = p.pulls(0, 1, 20_000)
    assert best[best[:, 1] == 1, 0].mean() < p.means.min()
    assert other[other[:, 1] == 1, 0].mean() > p.means.max()


def test_info_has_clean_regret_and_no_raw_reward():
    env = HuberBanditEnv(horizon=10)
    env.reset(seed=0)
    _, r, _, _, info = env.step(3)
    assert set(info) == {"regret", "expected_reward", "optimal_action", "contaminated"}
    assert info["regret"] == 75.0 and info["expected_reward"] == 25.0
    assert r not in info.values()


def test_single_env_truncates_at_horizon_and_needs_reset():
    env = HuberBanditEnv(horizon=3)
    env.reset(seed=0)
    flags = [env.step(0)[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_same_seed_same_trajectory_and_reset_without_seed_continues():
    def traj(env, seed):
        env.reset(seed=seed)
        return [env.step(a)[1] for a in (0, 1, 2, 0)]

    e1, e2 = HuberBanditEnv(), HuberBanditEnv()
    assert traj(e1, 5) == traj(e2, 5)
    assert traj(e1, None) == traj(e2, None)  # next episode is deterministic too
    assert traj(e1, 5) != traj(e1, 6)


def test_vector_run_i_equals_single_env_first_run_i():
    venv = HuberBanditVectorEnv(num_envs=6, horizon=100)
    venv.reset(seed=9)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 5, size=(40, 6))
    vec = np.array([venv.step(a)[1] for a in actions])
    for i in (0, 4):
        env = HuberBanditEnv(horizon=100)
        env.reset(seed=9, options={"first_run": i})
        single = [env.step(int(a))[1] for a in actions[:, i]]
        np.testing.assert_array_equal(vec[:, i], single)


def test_common_random_numbers_kth_pull_same_for_any_policy():
    """The k-th pull of arm a yields the same reward whatever was pulled before."""
    a, b = HuberBanditEnv(), HuberBanditEnv()
    a.reset(seed=1)
    b.reset(seed=1)
    ra = [a.step(2)[1] for _ in range(3)]
    rb = []
    for arm in (0, 2, 1, 2, 4, 2):
        r = b.step(arm)[1]
        if arm == 2:
            rb.append(r)
    assert ra == rb


def test_vector_autoreset_modes():
    for mode in AutoresetMode:
        venv = HuberBanditVectorEnv(num_envs=3, horizon=2, autoreset_mode=mode)
        venv.reset(seed=0)
        a = np.zeros(3, dtype=np.int64)
        venv.step(a)
        _, _, term, trunc, _ = venv.step(a)
        assert trunc.all() and not term.any()
        if mode == AutoresetMode.DISABLED:
            with pytest.raises(gym.error.ResetNeeded):
                venv.step(a)
        elif mode == AutoresetMode.NEXT_STEP:
            _, r, term, trunc, _ = venv.step(a)  # the reset step: reward 0, no flags
            assert not r.any() and not term.any() and not trunc.any()
        else:
            _, r, term, trunc, _ = venv.step(a)  # already reset: a real first step
            assert r.all() and not trunc.any()


def test_make_vec_uses_native_vector_env():
    venv = gym.make_vec("HuberBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(venv.unwrapped, HuberBanditVectorEnv)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (4,)
    _, r, *_ = venv.step(np.array([0, 1, 2, 3]))
    assert r.shape == (4,) and r.dtype == np.float64


BAD = [
    (dict(alpha=1.0), "alpha"),
    (dict(alpha=-0.1), "alpha"),
    (dict(alpha=float("nan")), "alpha"),
    (dict(K=1), "K"),
    (dict(means=[1.0]), "means"),
    (dict(means=[1.0, float("nan")]), "means"),
    (dict(inlier="cauchy"), "inlier"),
    (dict(inlier="student-t", inlier_params={"nu": 2.0}), "nu"),
    (dict(inlier="pareto", inlier_params={"shape": 1.5}), "shape"),
    (dict(contamination="uniform"), "contamination"),
    (dict(contamination_scale=0.0), "contamination_scale"),
    (dict(inlier=stats.cauchy()), "inlier"),
]


@pytest.mark.parametrize("kwargs,param", BAD)
def test_bad_input(kwargs, param):
    with pytest.raises(ValueError, match=param):
        HuberBanditEnv(**kwargs)


def test_bad_actions_and_horizon():
    env = HuberBanditEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(5)
    with pytest.raises(ValueError, match="horizon"):
        HuberBanditEnv(horizon=0)
    venv = HuberBanditVectorEnv(num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        venv.step(np.array([0, 7]))
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.array([0.0, 1.0]))


def test_paper1_means():
    np.testing.assert_allclose(paper1_means(3), [100, 50, 0])
