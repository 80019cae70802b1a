"""FederatedLinearBandit-v0: paper 2's instance, per-silo rewards, seeding, vector view, bad
input."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import privenv  # noqa: F401
from privenv.envs.federated import FederatedLinearBanditEnv, FederatedLinearBanditVectorEnv
from privenv.problems.federated import FederatedLinearProblem
from privenv.problems.linear import load_dataset
from privenv.seeding import run_seed_sequences

SMALL = {"M": 4, "K": 5}


def test_default_instance_is_paper2_synthetic():
    p = FederatedLinearProblem()
    assert (p.M, p.K, p.d, p.noise, p.sigma) == (100, 100, 10, "gaussian", 0.5)
    assert p.single_observation_space == gym.spaces.Box(-1, 1, (100, 100, 10), np.float32)
    assert p.single_action_space == gym.spaces.MultiDiscrete([100] * 100)
    # θ* = (0.5·u, 0.5), ‖u‖ = 1
    assert p.theta[-1] == 0.5 and np.linalg.norm(p.theta[:-1]) == pytest.approx(0.5)
    env = gym.make("FederatedLinearBandit-v0", **SMALL)
    assert env.spec.max_episode_steps == 10_000 and env.unwrapped.horizon == 10_000


def test_paper2_features():
    """(g/‖g‖, 1)/√2: unit norm, bias coordinate 1/√2, direction part of norm 1/√2."""
    env = FederatedLinearBanditEnv(M=3, K=7, d=6)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, 7, 6) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs[..., -1], np.float32(1 / np.sqrt(2)))
    np.testing.assert_allclose(np.linalg.norm(obs, axis=-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(obs[..., :-1], axis=-1), 1 / np.sqrt(2), rtol=1e-6)
    assert len(np.unique(obs[..., 0])) == 21  # fresh features per silo and arm


def test_buffers_never_grow_with_T():
    """Paper scale (M = K = 100, d = 10): the per-run feature buffer holds a few rounds only."""
    p = FederatedLinearProblem()
    p.reset(run_seed_sequences(0, 1))
    assert p._ctx._buf.nbytes <= 8 * 2**20  # ≤ 8 MiB, not M·T·K·d·4 = 4 GB


@pytest.mark.parametrize("kwargs", [SMALL, {"M": 3, "contexts": "dataset"},
                                    {"M": 2, "K": 3, "d": 4, "noise": "bounded"}])
def test_checkers_pass(kwargs):
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = FederatedLinearBanditEnv(horizon=50, **kwargs)
    check_env(env)
    sb3_check(env)  # may warn about the 3-D observation; must not fail


def test_reward_is_the_sum_of_silo_rewards_and_info_has_per_silo_quantities():
    env = FederatedLinearBanditEnv(**SMALL)
    p = FederatedLinearProblem(**SMALL)  # the batched problem a federated agent steps
    obs, _ = env.reset(seed=3)
    pobs, _ = p.reset(run_seed_sequences(3, 1))
    np.testing.assert_array_equal(obs, pobs[0])
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.integers(0, 5, size=4)
        obs, r, term, trunc, info = env.step(a)
        pobs, silo_r, _, pinfo = p.step(a[None])
        assert silo_r.shape == (1, 4)
        assert type(r) is float and r == pytest.approx(silo_r.sum())
        assert set(info) == {"regret", "expected_reward", "silo_regret", "silo_expected_reward",
                             "optimal_action", "expected_rewards"}
        assert info["silo_regret"].shape == (4,) and info["expected_rewards"].shape == (4, 5)
        assert info["regret"] == pytest.approx(info["silo_regret"].sum())
        assert np.all(info["silo_regret"] >= 0)
        np.testing.assert_array_equal(info["optimal_action"], info["expected_rewards"].argmax(1))
        np.testing.assert_array_equal(
            info["silo_expected_reward"], info["expected_rewards"][np.arange(4), a]
        )
        assert not any(np.isin(silo_r[0], np.atleast_1d(v)).any() for v in info.values())


def test_expected_rewards_are_linear_in_the_features():
    env = FederatedLinearBanditEnv(**SMALL)
    obs, _ = env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(4, dtype=np.int64))
    np.testing.assert_allclose(info["expected_rewards"], obs.astype(np.float64) @ env.problem.theta,
                               atol=1e-12)


def test_gaussian_noise_law():
    """Residuals y − ⟨φ, θ*⟩ of n silo-rounds: mean within 6 standard errors of 0 (sd σ = 0.5) and
    variance within 6 standard errors of σ² (CLT: false alarm < 2e-9 per check)."""
    p = FederatedLinearProblem(M=20, K=5, n_runs=10)
    p.reset(run_seed_sequences(1, 10))
    rng = np.random.default_rng(0)
    res = []
    for _ in range(200):
        a = rng.integers(0, 5, size=(10, 20))
        _, r, _, info = p.step(a)
        res.append(r - info["silo_expected_reward"])
    res = np.concatenate(res).ravel()
    n = res.size
    assert abs(res.mean()) < 6 * 0.5 / np.sqrt(n)
    assert abs(res.var() - 0.25) < 6 * np.sqrt(2 / n) * 0.25


def test_same_seed_same_trajectory():
    def traj(seed):
        env = FederatedLinearBanditEnv(**SMALL)
        env.reset(seed=seed)
        return [env.step(np.full(4, k % 5))[1] for k in range(6)]

    assert traj(5) == traj(5)
    assert traj(5) != traj(6)


def test_vector_run_i_equals_single_env_first_run_i():
    venv = FederatedLinearBanditVectorEnv(num_envs=5, horizon=100, **SMALL)
    obs0, _ = venv.reset(seed=9)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 5, size=(15, 5, 4))
    steps = [venv.step(a) for a in actions]
    for i in (0, 2):
        env = FederatedLinearBanditEnv(horizon=100, **SMALL)
        obs, _ = env.reset(seed=9, options={"first_run": i})
        np.testing.assert_array_equal(obs0[i], obs)
        for a, (vo, vr, _, _, vinfo) in zip(actions[:, i], steps, strict=True):
            o, r, _, _, info = env.step(a)
            np.testing.assert_array_equal(vo[i], o)
            assert vr[i] == r
            np.testing.assert_array_equal(vinfo["silo_regret"][i], info["silo_regret"])


def test_make_vec():
    venv = gym.make_vec("FederatedLinearBandit-v0", num_envs=3,
                        vectorization_mode="vector_entry_point", **SMALL)
    assert isinstance(venv.unwrapped, FederatedLinearBanditVectorEnv)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (3, 4, 5, 10)
    _, r, _, _, info = venv.step(np.zeros((3, 4), dtype=np.int64))
    assert r.shape == (3,) and info["silo_regret"].shape == (3, 4)


def test_dataset_split_across_silos():
    X, labels = load_dataset("wine")
    p = FederatedLinearProblem(M=4, contexts="dataset")
    gen = p.contexts
    assert (p.K, p.d) == (3, 3 * X.shape[1])
    parts = [set(part.tolist()) for part in gen.parts]
    assert sum(len(s) for s in parts) == X.shape[0] and len(set().union(*parts)) == X.shape[0]
    raw = gen.draw(np.random.default_rng(0), (500, 4))
    for m in range(4):
        assert set(raw[:, m].tolist()) == parts[m]  # silo m draws only (and all of) its own rows
    # the split is instance-level (split_seed), the same for every run
    again = FederatedLinearProblem(M=4, contexts="dataset", n_runs=3).contexts
    assert all(np.array_equal(a, b) for a, b in zip(gen.parts, again.parts, strict=True))
    env = FederatedLinearBanditEnv(M=4, contexts="dataset")
    obs, _ = env.reset(seed=0)
    _, r, _, _, info = env.step(np.zeros(4, dtype=np.int64))
    assert info == {}  # every evaluation quantity reveals labels: the runner's channel only
    np.testing.assert_array_equal(np.sort(np.unique(env.evaluation()["expected_rewards"])),
                                  [-1.0, 1.0])


def test_public_info_has_no_theta():
    info = FederatedLinearBanditEnv(horizon=10, **SMALL).public_info()
    assert info == {"M": 4, "K": 5, "d": 10, "contexts": "paper2", "noise": "gaussian",
                    "sigma": 0.5, "reward_bound": None, "feature_bound": 1.0,
                    "theta_bound": 1.0, "horizon": 10}


BAD = [
    (dict(M=0), "M"),
    (dict(M=2.5), "M"),
    (dict(M=4, K=1), "K"),
    (dict(M=4, d=1), "d"),
    (dict(M=4, contexts="mslr"), "contexts"),
    (dict(M=4, noise="laplace"), "noise"),
    (dict(M=4, sigma=-1.0), "sigma"),
    (dict(M=4, noise="bounded", sigma=0.5), "sigma"),
    (dict(M=4, d=3, theta=[1.0, 1.0, 1.0]), "theta"),
    (dict(M=4, d=3, theta=[1.0, 0.0]), "theta"),
    (dict(M=4, theta_seed=-2), "theta_seed"),
    (dict(M=4, split_seed=-1), "split_seed"),
    (dict(M=500, contexts="dataset"), "M"),  # wine has 178 rows
    (dict(M=4, contexts="dataset", K=5), "K"),
    (dict(M=4, contexts="dataset", dataset="mslr"), "dataset"),
    (dict(M=4, contexts="hard", K=3), "K"),
    (dict(M=4, horizon=0), "horizon"),
]


@pytest.mark.parametrize("kwargs,param", BAD)
def test_bad_input(kwargs, param):
    with pytest.raises(ValueError, match=param):
        FederatedLinearBanditEnv(**kwargs)


def test_bad_actions():
    env = FederatedLinearBanditEnv(**SMALL)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(np.array([0, 0, 0, 5]))
    with pytest.raises(ValueError, match="action"):
        env.step(np.array([0, 0, 0]))
    venv = FederatedLinearBanditVectorEnv(num_envs=2, **SMALL)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        venv.step(np.array([[0, 0, 0, 0], [0, 0, -1, 0]]))
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.zeros((2, 4)))  # float actions


def test_pettingzoo_parallel_view():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    from privenv.envs.pettingzoo import FederatedParallelEnv

    parallel_api_test(FederatedParallelEnv(horizon=30, **SMALL), num_cycles=40)
    parallel_seed_test(lambda: FederatedParallelEnv(horizon=30, **SMALL), num_cycles=40)

    # each agent gets its own silo's reward; they sum to the Gymnasium view's reward
    # the PettingZoo view's own default federation is smaller (d = 3, T = 10³): pass the research
    # env's d and horizon explicitly to compare the two views
    pz, gym_env = FederatedParallelEnv(**SMALL, d=3, horizon=1000), FederatedLinearBanditEnv(
        **SMALL, d=3, horizon=1000)
    obs, _ = pz.reset(seed=4, options={"first_run": 2})
    gobs, _ = gym_env.reset(seed=4, options={"first_run": 2})
    assert pz.agents == ["silo_0", "silo_1", "silo_2", "silo_3"]
    np.testing.assert_array_equal(np.stack([obs[a] for a in pz.agents]), gobs)
    for k in range(5):
        actions = {a: (k + m) % 5 for m, a in enumerate(pz.agents)}
        obs, rew, term, trunc, infos = pz.step(actions)
        gobs, r, _, _, ginfo = gym_env.step(np.array(list(actions.values())))
        assert sum(rew.values()) == pytest.approx(r)
        assert [infos[a]["regret"] for a in pz.agents] == list(ginfo["silo_regret"])
        assert not any(term.values()) and not any(trunc.values())
    with pytest.raises(ValueError, match="actions"):
        pz.step({"silo_0": 0})
    with pytest.raises(ValueError, match="action of silo_1"):
        pz.step({a: 1.5 if a == "silo_1" else 0 for a in pz.agents})
    with pytest.raises(ValueError, match="action of silo_3"):
        pz.step({a: 5 if a == "silo_3" else 0 for a in pz.agents})


def test_silo_reward_mode_returns_the_per_silo_rewards():
    """``reward="silo"``: the same rewards, not summed (single and vector views agree)."""
    summed = FederatedLinearBanditEnv(**SMALL)
    silo = FederatedLinearBanditEnv(reward="silo", **SMALL)
    summed.reset(seed=5)
    silo.reset(seed=5)
    a = np.arange(4) % 5
    _, r_sum, *_ = summed.step(a)
    _, r_silo, *_ = silo.step(a)
    assert r_silo.shape == (4,) and r_sum == pytest.approx(r_silo.sum())
    venv = FederatedLinearBanditVectorEnv(num_envs=2, reward="silo", **SMALL)
    venv.reset(seed=5)
    _, r, *_ = venv.step(np.stack([a, a]))
    assert r.shape == (2, 4)
    np.testing.assert_allclose(r[0], r_silo)
    with pytest.raises(ValueError, match="reward"):
        FederatedLinearBanditEnv(reward="mean", **SMALL)


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_pettingzoo_view_renders_like_the_gymnasium_view(mode):
    """The parallel view renders the same board as the Gymnasium view for the same joint actions
    (pulls per action pooled over silos)."""
    pytest.importorskip("pettingzoo")
    pytest.importorskip("matplotlib")
    from privenv.envs.pettingzoo import FederatedParallelEnv
    from privenv.envs.render import FRAME_SHAPE

    pz = FederatedParallelEnv(render_mode=mode, **SMALL, d=3, horizon=1000)
    gym_env = FederatedLinearBanditEnv(render_mode=mode, **SMALL, d=3, horizon=1000)
    pz.reset(seed=1)
    gym_env.reset(seed=1)
    for k in range(6):
        joint = [(k * m) % 5 for m in range(4)]
        pz.step(dict(zip(pz.agents, joint, strict=True)))
        gym_env.step(np.array(joint))
    frame, expected = pz.render(), gym_env.render()
    if mode == "ansi":
        assert frame == expected and "pulls" in frame
    else:
        assert frame.shape == FRAME_SHAPE and frame.dtype == np.uint8
        np.testing.assert_array_equal(frame, expected)


def test_pettingzoo_module_conventions_api_render_and_state(capsys):
    """``parallel_env``, ``raw_env`` and ``env`` as in PettingZoo's own environment modules; the
    AEC form passes ``api_test``, ``seed_test`` and ``render_test`` (``human`` prints the text
    board); ``state()`` is every silo's features, in ``state_space``, as the agents observe."""
    pytest.importorskip("pettingzoo")
    pytest.importorskip("matplotlib")
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.test import api_test, render_test, seed_test
    from pettingzoo.test.state_test import test_state, test_state_space

    from privenv.envs import pettingzoo as module

    small = {**SMALL, "horizon": 20}
    assert isinstance(module.parallel_env(**small), ParallelEnv)
    assert isinstance(module.raw_env(**small), AECEnv)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*graphical observation.*")
        api_test(module.env(**small), num_cycles=20)
        seed_test(lambda: module.env(**small), num_cycles=20)
        render_test(lambda **kw: module.env(**small, **kw))
        aec = module.env(**small)
        test_state_space(aec)
        test_state(aec, 10)
    assert "pulls" in capsys.readouterr().out  # the "human" board
    par = module.parallel_env(**small)
    obs, _ = par.reset(seed=2)
    state = par.state()
    assert state in par.state_space
    np.testing.assert_array_equal(state, np.stack([obs[a] for a in par.agents]))
    obs, *_ = par.step({a: 0 for a in par.agents})
    np.testing.assert_array_equal(par.state(), np.stack([obs[a] for a in par.agents]))
    with pytest.raises(ValueError, match="render_mode"):
        module.parallel_env(render_mode="video", **small)
