"""Local-DP wrappers (docs/design/threat-model.md): guarantees, bad input, per-run noise,
autoreset, stacking, composition with the runner."""

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import privenv  # noqa: F401  (registers the ids)
from privenv.envs.bai import BestArmIdentificationEnv, BestArmIdentificationVectorEnv
from privenv.envs.huber import HuberBanditEnv, HuberBanditVectorEnv
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import gaussian_sigma_analytic, laplace_from_uniform
from privenv.seeding import WRAPPER, RunNoise, child, run_seed_sequences
from privenv.simulation import play, simulate, wrapper_guarantees
from privenv.wrappers import (
    GaussianRandomizer,
    GaussianReward,
    LaplaceLabel,
    LaplaceRandomizer,
    LaplaceReward,
    RandomizedResponse,
    VectorGaussianReward,
    VectorLaplaceLabel,
    VectorLaplaceReward,
    VectorRandomizedResponse,
    ldp_stack_depth,
)

HUBER_RANGE = (-50.0, 150.0)

# (single class, vector class, keyword arguments) of each wrapper, on an env whose rewards fit.
WRAPPERS = {
    "rr": (RandomizedResponse, VectorRandomizedResponse, {"epsilon": 1.0}),
    "laplace": (LaplaceReward, VectorLaplaceReward, {"epsilon": 1.0, "reward_range": (0, 1)}),
    "gaussian": (
        GaussianReward,
        VectorGaussianReward,
        {"epsilon": 1.0, "delta": 1e-6, "reward_range": (0, 1)},
    ),
    "label": (LaplaceLabel, VectorLaplaceLabel, {"epsilon": 1.0}),
}


def bai(**kw):
    return BestArmIdentificationEnv(reward_mode="sample", wrong_penalty=0.0, **kw)


def bai_vec(n, mode=AutoresetMode.DISABLED, **kw):
    return BestArmIdentificationVectorEnv(
        num_envs=n, reward_mode="sample", wrong_penalty=0.0, autoreset_mode=mode, **kw
    )


# -- guarantees --------------------------------------------------------------------------------


def test_each_wrapper_declares_its_local_guarantee():
    env = bai(horizon=10)
    assert RandomizedResponse(env, 0.5).privacy == PrivacyGuarantee("local", 0.5, 0.0, "reward")
    assert LaplaceReward(env, 2.0, (0, 1)).privacy == PrivacyGuarantee("local", 2.0)
    g = GaussianReward(env, 0.5, 1e-5, (0, 1)).privacy
    assert (g.model, g.epsilon, g.delta) == ("local", 0.5, 1e-5)
    label = LaplaceLabel(env, 1.0).privacy
    assert label.unit == "label"
    assert str(label) == "1-DP, local model, per label, idealized arithmetic"
    venv = bai_vec(3)
    assert VectorRandomizedResponse(venv, 0.5).privacy == RandomizedResponse(env, 0.5).privacy


def test_calibrations():
    lap = LaplaceRandomizer(0.5, (-1, 3))
    assert lap.scale == pytest.approx(8.0)  # (hi − lo)/ε
    assert LaplaceRandomizer(0.5, (-1, 1), unit="label").scale == pytest.approx(4.0)  # 2/ε
    classical = GaussianRandomizer(0.5, 1e-5, (0, 2), calibration="classical")
    assert classical.sigma == pytest.approx(2 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)
    analytic = GaussianRandomizer(1.0, 1e-6, (0, 1))
    assert analytic.sigma == pytest.approx(4.224678889, rel=1e-8)  # Balle & Wang oracle
    assert GaussianRandomizer(1.0, 1e-6, (0, 3)).sigma == pytest.approx(3 * analytic.sigma)
    assert analytic.sigma == gaussian_sigma_analytic(1.0, 1e-6)


# -- bad input ---------------------------------------------------------------------------------

BAD = [
    # (wrapper, kwargs, parameter named in the error)
    *[
        (w, {**WRAPPERS[w][2], "epsilon": eps}, "epsilon")
        for w in WRAPPERS
        for eps in (0.0, -1.0, float("nan"), float("inf"), "1", True, None)
    ],
    *[
        ("gaussian", {**WRAPPERS["gaussian"][2], "delta": d}, "delta")
        for d in (0.0, 1.0, -0.1, 1.5, float("nan"))
    ],
    *[
        (w, {**WRAPPERS[w][2], "reward_range": rr}, "reward_range")
        for w in ("laplace", "gaussian")
        for rr in ((1, 0), (0, 0), (0, float("nan")), (0, float("inf")), 5, (0, 1, 2), None, "ab")
    ],
    ("gaussian", {**WRAPPERS["gaussian"][2], "calibration": "exact"}, "calibration"),
    # the classical calibration is a theorem only for ε < 1: no false guarantee
    ("gaussian", {**WRAPPERS["gaussian"][2], "calibration": "classical"}, "epsilon"),
    *[(w, {**WRAPPERS[w][2], "clip": "yes"}, "clip") for w in WRAPPERS],
]


@pytest.mark.parametrize("vector", [False, True])
@pytest.mark.parametrize("name,kwargs,param", BAD)
def test_bad_parameters_raise_naming_the_parameter(name, kwargs, param, vector):
    single, vec, _ = WRAPPERS[name]
    env = bai_vec(2) if vector else bai(horizon=5)
    with pytest.raises(ValueError, match=param):
        (vec if vector else single)(env, **kwargs)


@pytest.mark.parametrize("vector", [False, True])
def test_contamination_flag_does_not_pass_a_local_dp_wrapper(vector):
    """``HuberBandit``'s ``info["contaminated"]`` says whether the raw reward came from the
    contamination: behind a local randomizer it is removed (single env and vector env)."""
    env = HuberBanditVectorEnv(num_envs=4, horizon=5) if vector else HuberBanditEnv(horizon=5)
    action = np.zeros(4, dtype=np.int64) if vector else 0
    env.reset(seed=0)
    assert "contaminated" in env.step(action)[4]  # the raw env says it …
    wrapped = (VectorLaplaceReward if vector else LaplaceReward)(env, 1.0, HUBER_RANGE,
                                                                 clip=True)
    wrapped.reset(seed=0)
    for _ in range(3):
        info = wrapped.step(action)[4]
        assert "contaminated" not in info and "_contaminated" not in info  # … the release not


@pytest.mark.parametrize("vector", [False, True])
@pytest.mark.parametrize("name", ["rr", "laplace", "gaussian"])
def test_reward_outside_range_raises_unless_clip(name, vector):
    """Huber rewards (means 0…100) are far outside [0, 1]: never clipped silently."""
    single, vec, kwargs = WRAPPERS[name]
    env = HuberBanditVectorEnv(num_envs=4, horizon=5) if vector else HuberBanditEnv(horizon=5)
    wrapped = (vec if vector else single)(env, **kwargs)
    wrapped.reset(seed=0)
    action = np.zeros(4, dtype=np.int64) if vector else 0
    with pytest.raises(ValueError, match=r"reward must lie in \[0, 1\].*clip=True"):
        wrapped.step(action)
    clipped = (vec if vector else single)(env, **kwargs, clip=True)
    clipped.reset(seed=0)
    r = clipped.step(action)[1]
    assert np.all(np.isfinite(r))
    if name == "rr":
        assert set(np.atleast_1d(r)) <= {0.0, 1.0}


def test_nan_reward_raises_even_with_clip():
    noise = RunNoise(run_seed_sequences(0, 2))
    for clip in (False, True):
        with pytest.raises(ValueError, match=r"reward must lie in \[-1, 1\].*nan.*run 1"):
            LaplaceRandomizer(1.0, (-1, 1), clip=clip)(np.array([0.0, np.nan]), noise)


def test_reward_wrapper_refuses_the_cost_channel_of_bai():
    """With reward_mode='cost' the raw sample is the observation: a reward wrapper would leak it."""
    with pytest.raises(ValueError, match="reward_mode"):
        RandomizedResponse(BestArmIdentificationEnv(), 1.0)
    with pytest.raises(ValueError, match="reward_mode"):
        VectorLaplaceReward(BestArmIdentificationVectorEnv(num_envs=2), 1.0, (0, 1))


def test_step_before_reset_and_non_privenv_env():
    with pytest.raises(gym.error.ResetNeeded):
        LaplaceReward(bai(horizon=5), 1.0, (0, 1)).step(0)
    with pytest.raises(gym.error.ResetNeeded):
        VectorLaplaceReward(bai_vec(2), 1.0, (0, 1)).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(TypeError, match="run_seeds"):
        RandomizedResponse(gym.make("CartPole-v1"), 1.0).reset(seed=0)


# -- per-run noise -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rr", "laplace", "gaussian"])
def test_run_i_identical_in_a_batch_of_1000_and_alone(name):
    single, vec, kwargs = WRAPPERS[name]
    T, n = 60, 1000
    venv = vec(bai_vec(n, law="beta", horizon=T), **kwargs)
    venv.reset(seed=21)
    runs = np.arange(n)
    batch = np.array([venv.step((runs + t) % 5)[1] for t in range(T)])  # (T, n)
    env = single(bai(law="beta", horizon=T), **kwargs)
    for i in (0, 1, 517, 999):
        env.reset(seed=21, options={"first_run": i})
        alone = [env.step((i + t) % 5)[1] for t in range(T)]
        assert all(type(r) is float for r in alone)
        np.testing.assert_array_equal(alone, batch[:, i])


def test_noise_stream_is_the_wrappers_own_child_of_the_run_seed():
    """Run i's noise is child(run_seed_i, WRAPPER, k): reconstructing it reproduces the release."""
    env = LaplaceReward(bai(law="beta", horizon=50), 1.0, (0, 1))
    bare = bai(law="beta", horizon=50)
    env.reset(seed=5, options={"first_run": 3})
    bare.reset(seed=5, options={"first_run": 3})
    (root,) = run_seed_sequences(5, 1, first_run=3)
    u = RunNoise([child(root, WRAPPER, 0)]).uniforms(0, 50)
    raw = np.array([bare.step(t % 5)[1] for t in range(50)])
    expected = raw + laplace_from_uniform(u, LaplaceRandomizer(1.0, (0, 1)).scale)
    np.testing.assert_array_equal([env.step(t % 5)[1] for t in range(50)], expected)


def test_stacked_wrappers_draw_from_distinct_streams():
    """Wrapper k (counted from the env) draws from child(run_seed, WRAPPER, k)."""
    base = bai(law="beta", horizon=100)
    inner = LaplaceReward(base, 1.0, (0, 1))
    # the inner release is within 1 ± 36.7 (the Laplace transform's cap), so never clipped here
    outer = LaplaceReward(gym.wrappers.TransformReward(inner, lambda r: r), 2.0, (-40, 40))
    assert (ldp_stack_depth(base), inner.stack_index, outer.stack_index) == (0, 0, 1)
    assert ldp_stack_depth(outer) == 2
    assert wrapper_guarantees(outer) == (outer.privacy, inner.privacy)
    single = LaplaceReward(bai(law="beta", horizon=100), 1.0, (0, 1))
    bare = bai(law="beta", horizon=100)
    for e in (outer, single, bare):
        e.reset(seed=0)
    raw, once, twice = (
        np.array(x)
        for x in zip(*[(bare.step(t % 5)[1], single.step(t % 5)[1], outer.step(t % 5)[1])
                       for t in range(100)], strict=True)
    )
    (root,) = run_seed_sequences(0, 1)
    u0 = RunNoise([child(root, WRAPPER, 0)]).uniforms(0, 100)
    u1 = RunNoise([child(root, WRAPPER, 1)]).uniforms(0, 100)
    np.testing.assert_allclose(once - raw, laplace_from_uniform(u0, 1.0), atol=1e-12)
    np.testing.assert_allclose(twice - once, laplace_from_uniform(u1, 40.0), atol=1e-9)
    assert not np.any(u0 == u1)


def test_noise_does_not_depend_on_the_agent_or_on_other_arms():
    """The release of run i depends on its raw rewards and its own stream only: replaying the
    same raw rewards in another order of arms gives the same noise sequence."""
    a = LaplaceReward(bai(law="beta", horizon=40), 1.0, (0, 1))
    b = LaplaceReward(bai(law="beta", horizon=40), 1.0, (0, 1))
    ra, rb = bai(law="beta", horizon=40), bai(law="beta", horizon=40)
    for e in (a, b, ra, rb):
        e.reset(seed=9)
    na = [a.step(0)[1] - ra.step(0)[1] for _ in range(40)]
    nb = [b.step(t % 5)[1] - rb.step(t % 5)[1] for t in range(40)]
    np.testing.assert_allclose(na, nb, rtol=0, atol=1e-12)


# -- autoreset and partial resets --------------------------------------------------------------


def _stop_time(i, episode):
    return 3 + (i + 2 * episode) % 4  # pulls before the stop, differs across runs and episodes


def _single_episodes(wrapped, seed, run, episodes):
    """Rewards of the pull steps of successive episodes of one run on a single env."""
    out = []
    wrapped.reset(seed=seed, options={"first_run": run})
    for e in range(episodes):
        if e:
            wrapped.reset()
        rewards = [wrapped.step(t % 5)[1] for t in range(_stop_time(run, e))]
        _, _, term, _, _ = wrapped.step(5)  # stop, recommend arm 0
        assert term
        out.append(rewards)
    return out


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_autoreset_restarts_each_runs_noise_like_a_single_env_reset(mode):
    n, episodes = 6, 3
    venv = VectorRandomizedResponse(bai_vec(n, mode=mode, law="beta", horizon=100), 1.0)
    venv.reset(seed=4)
    ep = np.zeros(n, dtype=int)  # episode index of each run
    t = np.zeros(n, dtype=int)  # pulls in the current episode
    skip = np.zeros(n, dtype=bool)  # NEXT_STEP: the run sits this step out (being reset)
    got = [[[] for _ in range(episodes + 1)] for _ in range(n)]
    while ep.min() < episodes:
        stops = np.array([t[i] == _stop_time(i, ep[i]) for i in range(n)])
        actions = np.where(stops, 5, t % 5)
        _, r, term, trunc, _ = venv.step(actions)
        assert not trunc.any()
        for i in range(n):
            if skip[i]:
                assert r[i] == 0.0  # the dummy step of a next-step autoreset
                skip[i] = False
                continue
            if stops[i]:
                assert term[i]
                ep[i] += 1
                t[i] = 0
                skip[i] = mode == AutoresetMode.NEXT_STEP
            else:
                got[i][ep[i]].append(r[i])
                t[i] += 1
    for i in range(n):
        want = _single_episodes(RandomizedResponse(bai(law="beta", horizon=100), 1.0), 4, i, 3)
        assert got[i][:episodes] == want


def test_disabled_mode_partial_reset_and_finished_runs_consume_no_noise():
    n = 4
    venv = VectorRandomizedResponse(bai_vec(n, law="beta", horizon=100), 1.0)
    venv.reset(seed=8)
    got = [[[], []] for _ in range(n)]
    # episode 0: run i stops after _stop_time(i, 0) pulls, then sits out (reward 0, no noise)
    for t in range(7):  # all four runs have stopped by t = 6
        actions = np.array([5 if t == _stop_time(i, 0) else t % 5 for i in range(n)])
        _, r, term, _, _ = venv.step(actions)
        for i in range(n):
            if t < _stop_time(i, 0):
                got[i][0].append(r[i])
            elif t > _stop_time(i, 0):
                assert r[i] == 0.0 and not term[i]
    # restart runs 1 and 3 only; their noise restarts from their next-episode seeds
    mask = np.array([False, True, False, True])
    venv.reset(options={"reset_mask": mask})
    for t in range(max(_stop_time(i, 1) for i in (1, 3))):
        _, r, _, _, _ = venv.step(np.full(n, t % 5))
        for i in (1, 3):
            if t < _stop_time(i, 1):
                got[i][1].append(r[i])
    for i in range(n):
        want = _single_episodes(RandomizedResponse(bai(law="beta", horizon=100), 1.0), 8, i, 2)
        assert got[i][0] == want[0]
        if mask[i]:
            assert got[i][1] == want[1]


def test_same_seed_same_release_different_seed_differs():
    env = GaussianReward(bai(law="beta", horizon=30), 1.0, 1e-6, (0, 1))

    def episode(seed):
        env.reset(seed=seed)
        return [env.step(t % 5)[1] for t in range(30)]

    assert episode(1) == episode(1)
    assert episode(1) != episode(2)


# -- the runner: composition and equality of the two paths ------------------------------------


def test_simulate_reports_the_local_guarantee_of_the_wrapped_system():
    lap = lambda e: VectorLaplaceReward(e, epsilon=1, reward_range=HUBER_RANGE, clip=True)  # noqa: E731
    res = simulate("ucb1", "HuberBandit-v0", n_runs=4, horizon=200, seed=0, wrappers=[lap])
    assert res.privacy == PrivacyGuarantee("local", 1.0, 0.0, "reward")
    assert str(res.privacy) == "1-DP, local model, per reward, idealized arithmetic"
    tighter = lambda e: VectorGaussianReward(  # noqa: E731
        e, epsilon=0.5, delta=1e-6, reward_range=(-1e3, 1e3), clip=True
    )
    both = simulate("ucb1", "HuberBandit-v0", n_runs=4, horizon=50, seed=0, wrappers=[lap, tighter])
    assert (both.privacy.model, both.privacy.epsilon, both.privacy.delta) == ("local", 0.5, 1e-6)
    bare = simulate("ucb1", "HuberBandit-v0", n_runs=4, horizon=50, seed=0)
    assert not bare.privacy.is_private


def test_play_on_a_wrapped_gym_make_env_equals_simulate_with_the_vector_wrapper():
    """UCB1's choices depend on the released rewards, so equal regret ⇒ equal released streams."""
    from privenv.agents import make

    kw = {"epsilon": 2.0, "reward_range": HUBER_RANGE, "clip": True}
    res = simulate(
        "ucb1", "HuberBandit-v0", n_runs=3, horizon=300, seed=6,
        wrappers=[lambda e: VectorLaplaceReward(e, **kw)],
    )
    for i in range(3):
        env = LaplaceReward(gym.make("HuberBandit-v0", horizon=300), **kw)
        out = play(make("ucb1", "HuberBandit-v0", 1), env, seed=6, run=i)
        assert out["regret"] == pytest.approx(res.regret[i])


def test_randomized_response_on_bernoulli_bai_matches_the_ctb_mean():
    """A Bernoulli(μ) arm behind RR(ε) is Bernoulli(μ_ε), μ_ε = (2μ−1)(e^ε−1)/(2(e^ε+1)) + ½
    (paper 3, Lemma 12). 1000 runs × 400 pulls of arm 0 (μ = 0.95), ε = 1: binomial z-test at
    6 sd (false alarm < 2e-9)."""
    eps, n, T = 1.0, 1000, 400
    venv = VectorRandomizedResponse(bai_vec(n, horizon=T), eps)
    venv.reset(seed=2)
    total = sum(venv.step(np.zeros(n, dtype=np.int64))[1].sum() for _ in range(T))
    mu_eps = (2 * 0.95 - 1) * (math.e**eps - 1) / (2 * (math.e**eps + 1)) + 0.5
    m = n * T
    assert abs(total / m - mu_eps) < 6 * math.sqrt(mu_eps * (1 - mu_eps) / m)
