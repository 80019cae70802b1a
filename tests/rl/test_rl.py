"""Stable-Baselines3 tooling (privenv.rl, docs/guides/rl.md): the sufficient-statistics
observation, the Gymnasium VectorEnv → SB3 VecEnv adapter, trained models as zoo agents, and
PPO/A2C/DQN learning the best arm of a HuberBandit instance.

The bare registered envs already pass both checkers in tests/envs/test_check_env_all.py; here the
checkers run on the statistics wrapper stacks.
"""

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import privenv  # noqa: F401
from privenv.envs import ENV_IDS
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.rl import (
    RunStatistics,
    SB3Agent,
    StatisticsSpec,
    SufficientStatistics,
    VectorSufficientStatistics,
)
from privenv.simulation import play, simulate
from privenv.wrappers import GaussianReward, LaplaceReward, RandomizedResponse, VectorLaplaceReward

sb3 = pytest.importorskip("stable_baselines3")
from stable_baselines3 import A2C, DQN, PPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecMonitor  # noqa: E402

from privenv.rl import SB3VecEnv  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

HUBER = {"K": 3, "horizon": 10}
BAI = {"horizon": 10}
BAI_SAMPLE = {"horizon": 10, "reward_mode": "sample", "wrong_penalty": 0.0}

#: name → (env id, env kwargs, single-env stack builder)
STACKS = {
    "huber-whole-run": ("HuberBandit-v0", HUBER, lambda e: SufficientStatistics(e)),
    "huber-one-step": ("HuberBandit-v0", HUBER, lambda e: SufficientStatistics(e, "one-step")),
    "huber-laplace-whole-run": (
        "HuberBandit-v0", HUBER,
        lambda e: SufficientStatistics(LaplaceReward(e, 1.0, (-50.0, 150.0), clip=True)),
    ),
    "huber-gaussian-one-step": (
        "HuberBandit-v0", HUBER,
        lambda e: SufficientStatistics(
            GaussianReward(e, 1.0, 1e-6, (-50.0, 150.0), clip=True), "one-step"
        ),
    ),
    "bai-cost": ("BestArmIdentification-v0", BAI, lambda e: SufficientStatistics(e)),
    "bai-sample-rr": (
        "BestArmIdentification-v0", BAI_SAMPLE,
        lambda e: SufficientStatistics(RandomizedResponse(e, 1.0)),
    ),
}


def _make(name):
    env_id, kwargs, build = STACKS[name]
    return build(gym.make(env_id, **kwargs))


# -- the checkers on every stack ----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(STACKS))
def test_statistics_stacks_pass_gymnasium_and_sb3_checkers(name):
    env = _make(name)
    assert env.observation_space.shape == (env.statistics_spec.dim,)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        check_env(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a flat float32 Box: SB3 has nothing to warn about
        sb3_check_env(env, warn=True)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_every_registered_env_is_summarised(env_id):
    """Every family has its statistics (K-armed counts and means; linear ridge statistics); the
    federated view needs each silo's reward and refuses the summed one, naming the argument."""
    small = {
        "HuberBandit-v0": HUBER, "BestArmIdentification-v0": BAI,
        "BernoulliBandit-v0": {"horizon": 10, "means": [0.2, 0.8, 0.5]},
        "LinearContextualBandit-v0": {"horizon": 10, "d": 3, "A": 4},
        "FederatedLinearBandit-v0": {"horizon": 10, "M": 2, "K": 3, "d": 3, "reward": "silo"},
    }[env_id]
    env = SufficientStatistics(gym.make(env_id, **small))
    obs, _ = env.reset(seed=0)
    assert obs.shape == (env.statistics_spec.dim,) and obs in env.observation_space
    if env_id == "FederatedLinearBandit-v0":
        with pytest.raises(ValueError, match="reward='silo'"):
            SufficientStatistics(gym.make(env_id, **{**small, "reward": "sum"}))


def test_import_does_not_need_torch_and_sb3vecenv_names_the_extra():
    code = (
        "import sys\n"
        "sys.modules['stable_baselines3'] = None  # as if the extra were not installed\n"
        "import privenv.rl\n"
        "assert 'torch' not in sys.modules\n"
        "try:\n"
        "    privenv.rl.SB3VecEnv\n"
        "except ImportError as e:\n"
        "    assert \"privenv[sb3]\" in str(e), e\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the features -------------------------------------------------------------------------------
def test_huber_features_by_hand():
    env = SufficientStatistics(gym.make("HuberBandit-v0", K=3, means=[0.0, 10.0, 20.0],
                                        horizon=8))
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, np.zeros(7, dtype=np.float32))
    rewards = {0: [], 1: [], 2: []}
    for a in (0, 2, 2, 1, 2):
        obs, r, *_ = env.step(a)
        rewards[a].append(r)
    assert obs.dtype == np.float32 and obs in env.observation_space
    scale = 20.0  # the env's public mean_range = max |μ|
    means = [np.clip(np.mean(rewards[a]) / scale, -10, 10) for a in range(3)]
    expected = [1 / 8, 1 / 8, 3 / 8, *means, 5 / 8]
    np.testing.assert_allclose(obs, expected, rtol=1e-6)


def test_bai_features_by_hand():
    """Cost mode: the sample is the observation. W_{â,a} = (μ̂_â − μ̂_a)²/(2σ²(1/N_â + 1/N_a)),
    σ = 1/2 (Bernoulli), Λ = min over a ≠ â; an unpulled arm has W = 0 and mean 0."""
    spec = StatisticsSpec(K=3, horizon=100, bai=True, channel="observation", sigma=0.5)
    stats = RunStatistics(spec)
    samples = [(0, 1.0), (1, 0.0), (0, 1.0), (1, 1.0), (0, 0.0)]  # arm 2 never pulled
    for a, x in samples:
        stats.update(np.array([a]), np.array([-1.0]), np.array([[x]]))
    stats.update(np.array([3 + 1]), np.array([0.0]), np.array([[0.0]]))  # a stop: no sample
    f = stats.features()[0]
    mu0, mu1, n0, n1 = 2 / 3, 1 / 2, 3, 2
    W01 = (mu0 - mu1) ** 2 / (2 * 0.25 * (1 / n0 + 1 / n1))
    expected = [
        3 / 100, 2 / 100, 0, mu0, mu1, 0.0, 5 / 100,   # counts/T, means, t/T
        1, 0, 0,                                        # â = 0
        0, np.log1p(W01), 0,                            # log(1 + W_{â,a})
        0.0,                                            # Λ = 0: arm 2 unpulled
        np.log1p(5) / np.log1p(100),
    ]
    np.testing.assert_allclose(f, expected, rtol=1e-6)
    stats.update(np.array([2]), np.array([-1.0]), np.array([[0.0]]))
    f = stats.features()[0]
    W02 = mu0**2 / (2 * 0.25 * (1 / n0 + 1))
    np.testing.assert_allclose(f[13], np.log1p(min(W01, W02)), rtol=1e-6)
    assert spec.dim == 4 * 3 + 3 == f.shape[0]


def test_statistics_under_a_local_dp_wrapper_average_the_released_rewards():
    base = gym.make("HuberBandit-v0", K=3, horizon=20)
    released = LaplaceReward(base, 1.0, (-50.0, 150.0), clip=True)
    env = SufficientStatistics(released)
    env.reset(seed=3)
    got = []
    for _ in range(6):
        obs, r, *_ = env.step(1)
        got.append(r)
    np.testing.assert_allclose(obs[4], np.mean(got) / 100.0, rtol=1e-6)
    raw = gym.make("HuberBandit-v0", K=3, horizon=20)
    raw.reset(seed=3)
    assert not np.allclose(got, [raw.step(1)[1] for _ in range(6)])  # the noise is there


# -- episode semantics --------------------------------------------------------------------------
def test_one_step_episodes_continue_the_run_and_see_the_same_data():
    T = 5
    whole = SufficientStatistics(gym.make("HuberBandit-v0", **dict(HUBER, horizon=T)))
    one = SufficientStatistics(gym.make("HuberBandit-v0", **dict(HUBER, horizon=T)), "one-step")
    actions = [0, 1, 2, 1, 1]
    ow, _ = whole.reset(seed=9)
    oo, _ = one.reset(seed=9)
    first_reward = None
    for t, a in enumerate(actions):
        if t:
            oo, info = one.reset()  # a new one-step episode: the statistics are kept
            np.testing.assert_array_equal(oo, ow)
        ow, rw, tw, uw, _ = whole.step(a)
        oo, ro, to, uo, _ = one.step(a)
        assert (to, uo) == (True, False)
        assert rw == ro
        first_reward = rw if first_reward is None else first_reward
        np.testing.assert_array_equal(oo, ow)
    assert tw and not uw  # the run ends at T: terminated (t/T = 1 is a terminal state)
    first, _ = one.reset()  # the run is over: the next run starts (the env's next-episode seed)
    np.testing.assert_array_equal(first, np.zeros_like(first))
    r_next = one.step(0)[1]
    whole.reset()
    assert whole.step(0)[1] == r_next
    one.step(1)
    restarted, _ = one.reset(seed=9)  # a seed always restarts: run 0 of seed 9
    np.testing.assert_array_equal(restarted, np.zeros_like(restarted))
    assert one.step(actions[0])[1] == first_reward


def test_bai_refuses_one_step_episodes():
    with pytest.raises(ValueError, match="episode must be 'whole-run'"):
        SufficientStatistics(gym.make("BestArmIdentification-v0", **BAI), "one-step")


# -- the VecEnv adapter ---------------------------------------------------------------------------
def _native(env_id, kwargs, n, mode=AutoresetMode.SAME_STEP):
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                        autoreset_mode=mode, **kwargs)


def _same_as_dummy(a, b, n_actions, n_envs, steps=40):
    """Drive an SB3VecEnv and a DummyVecEnv with the same seed and actions; compare everything
    SB3 uses. Returns the number of episode ends seen."""
    a.seed(5)
    b.seed(5)
    np.testing.assert_array_equal(a.reset(), b.reset())
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(steps):
        actions = rng.integers(0, n_actions, n_envs)
        (oa, ra, da, ia), (ob, rb, db, ib) = a.step(actions), b.step(actions)
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(da, db)
        assert ra.dtype == rb.dtype and da.dtype == db.dtype
        for x, y in zip(ia, ib, strict=True):
            assert ("terminal_observation" in x) == ("terminal_observation" in y)
            if "terminal_observation" in x:
                ends += 1
                np.testing.assert_array_equal(x["terminal_observation"], y["terminal_observation"])
                assert x["TimeLimit.truncated"] == y["TimeLimit.truncated"]
    return ends


@pytest.mark.parametrize(
    "env_id,kwargs,episode",
    [
        ("HuberBandit-v0", {"K": 3, "horizon": 7}, "whole-run"),
        ("HuberBandit-v0", {"K": 3, "horizon": 7}, "one-step"),
        ("BestArmIdentification-v0", {"horizon": 9}, "whole-run"),
    ],
)
def test_sb3_vec_env_over_vector_statistics_equals_dummy_vec_env(env_id, kwargs, episode):
    """Seeding s + i per sub-env, autoreset, terminal_observation and TimeLimit.truncated: the
    native vector env behaves exactly like SB3's DummyVecEnv of single envs."""
    n = 3
    a = SB3VecEnv(VectorSufficientStatistics(_native(env_id, kwargs, n), episode))
    b = DummyVecEnv([lambda: SufficientStatistics(gym.make(env_id, **kwargs), episode)] * n)
    ends = _same_as_dummy(a, b, a.action_space.n, n)
    assert ends >= n  # episodes did end (and were compared)


def test_sb3_vec_env_on_a_disabled_autoreset_env_resets_ended_runs_itself():
    n, kwargs = 2, {"K": 3, "horizon": 4}
    a = SB3VecEnv(_native("HuberBandit-v0", kwargs, n, AutoresetMode.DISABLED))
    b = DummyVecEnv([lambda: gym.make("HuberBandit-v0", **kwargs)] * n)
    assert _same_as_dummy(a, b, 3, n, steps=12) == 3 * n


def test_sb3_vec_env_with_a_local_dp_vector_wrapper_trains_ppo():
    native = VectorLaplaceReward(_native("HuberBandit-v0", {"K": 3, "horizon": 50}, 4), 1.0,
                                 (-50.0, 150.0), clip=True)
    venv = VecCheckNan(VecMonitor(SB3VecEnv(VectorSufficientStatistics(native, "one-step"))),
                       raise_exception=True)
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    assert model.num_timesteps == 128
    assert SB3Agent(model).statistics_spec == venv.get_attr("statistics_spec")[0]


def test_sb3_vec_env_refuses_next_step_autoreset_and_non_vector_envs():
    with pytest.raises(ValueError, match="autoreset_mode SAME_STEP or DISABLED"):
        SB3VecEnv(_native("HuberBandit-v0", HUBER, 2, AutoresetMode.NEXT_STEP))
    with pytest.raises(TypeError, match="gymnasium.vector.VectorEnv"):
        SB3VecEnv(gym.make("HuberBandit-v0"))
    with pytest.raises(ValueError, match="SAME_STEP for one-step"):
        VectorSufficientStatistics(_native("HuberBandit-v0", HUBER, 2, AutoresetMode.DISABLED),
                                   "one-step")


# -- PPO, A2C and DQN reach the best arm ----------------------------------------------------------
#: K = 3, best arm in the middle (μ = 50, 100, 0: gaps 50 and 100), the env's default heavy tails:
#: Student-t(2.5) inliers and 5 % N(0, 50²) contamination. One-step episodes (they learn fastest).
LEARN_ENV = {"K": 3, "means": [50.0, 100.0, 0.0]}
LEARN_T = 1000
BUDGET = 3000  # environment steps of training (4 sub-envs)
ALGOS = {
    "ppo": (PPO, {"n_steps": 64, "batch_size": 128, "n_epochs": 4, "learning_rate": 3e-3,
                  "gamma": 0.0}),
    "a2c": (A2C, {"n_steps": 8, "learning_rate": 3e-3, "gamma": 0.0}),
    "dqn": (DQN, {"learning_starts": 200, "exploration_fraction": 0.5, "train_freq": 1,
                  "target_update_interval": 100, "learning_rate": 1e-3, "gamma": 0.0,
                  "batch_size": 64, "buffer_size": 20_000}),
}


def _learn_env():
    return SufficientStatistics(gym.make("HuberBandit-v0", **LEARN_ENV, horizon=LEARN_T),
                                "one-step")


def _best_arm_share(model) -> float:
    """Greedy policy as a zoo agent in the runner: 20 runs × T = 1000 pulls, seed 1."""
    agent = SB3Agent(model, n_runs=20)
    simulate(agent, "HuberBandit-v0", n_runs=20, seed=1, horizon=LEARN_T, env_kwargs=LEARN_ENV)
    counts = agent.statistics.counts
    return float(counts[:, 1].sum() / counts.sum())


@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_sb3_algorithm_reaches_the_best_arm(algo):
    """Success criterion: after BUDGET = 3000 training steps (seed 0) the greedy policy pulls the
    best arm in ≥ 90 % of 20 000 evaluation pulls. Control: the same model before training
    (seed 0) pulls it < 90 % (measured: 0 % for all three), so the check can fail.
    Measured (seeds 0–4, 2 cores): best-arm share ≥ 99.5 % for every algorithm and seed."""
    cls, kwargs = ALGOS[algo]
    model = cls("MlpPolicy", DummyVecEnv([_learn_env] * 4), seed=0, device="cpu", **kwargs)
    assert _best_arm_share(model) < 0.9
    model.learn(BUDGET)
    share = _best_arm_share(model)
    assert share >= 0.9, f"{algo}: best-arm share {share:.3f} after {BUDGET} steps"


# -- a trained model in the runner ----------------------------------------------------------------
@pytest.fixture(scope="module")
def a2c_model():
    model = A2C("MlpPolicy", DummyVecEnv([_learn_env] * 4), seed=0, device="cpu",
                **ALGOS["a2c"][1])
    return model.learn(1000)


def test_sb3_agent_simulate_equals_play(a2c_model):
    T = 200
    spec = StatisticsSpec.from_env(_learn_env())
    res = simulate(SB3Agent(a2c_model, spec, n_runs=3), "HuberBandit-v0", n_runs=3, seed=4,
                   horizon=T, env_kwargs=LEARN_ENV)
    assert res.privacy == PrivacyGuarantee.none()  # a model is not a private algorithm
    for i in range(3):
        out = play(SB3Agent(a2c_model, spec), gym.make("HuberBandit-v0", **LEARN_ENV, horizon=T),
                   seed=4, run=i)
        assert out["steps"] == T
        assert out["regret"] == pytest.approx(res.regret[i], abs=1e-9)


def test_sb3_agent_computes_the_features_the_wrapper_fed_the_model(a2c_model):
    """Wrapper and agent share RunStatistics; along one run they hold the same features."""
    env = _learn_env()
    agent = SB3Agent(a2c_model, env)
    obs, _ = env.reset(seed=2)
    agent.reset(seed=2)
    for _ in range(30):
        np.testing.assert_array_equal(agent.statistics.features()[0], obs)
        action = agent.act(np.zeros(()))
        expected, _ = a2c_model.predict(obs, deterministic=True)
        assert action == int(expected)
        obs, reward, *_ = env.step(action)
        agent.observe(action, reward, 0)


def test_sb3_agent_runs_with_a_local_dp_wrapper_and_records_its_guarantee(a2c_model):
    res = simulate(SB3Agent(a2c_model, n_runs=2), "HuberBandit-v0", n_runs=2, seed=0,
                   horizon=50, env_kwargs=LEARN_ENV,
                   wrappers=[lambda e: VectorLaplaceReward(e, 1.0, (-50.0, 150.0), clip=True)])
    assert res.privacy.model == "local" and res.privacy.epsilon == 1.0


def test_sb3_agent_on_best_arm_identification_stops_and_is_recorded():
    """An (untrained) model on BAI: a run ends when the policy stops, else at the budget; the
    runner records stopping time, recommendation and correctness either way."""
    env = DummyVecEnv([lambda: SufficientStatistics(gym.make("BestArmIdentification-v0",
                                                             horizon=30))])
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu")
    res = simulate(SB3Agent(model, n_runs=4), "BestArmIdentification-v0", n_runs=4, seed=0,
                   horizon=30)
    assert set(res.episode) >= {"stopping_time", "recommendation", "correct"}
    assert np.all(res.steps <= 30)
    again = simulate(SB3Agent(model, n_runs=4), "BestArmIdentification-v0", n_runs=4, seed=0,
                     horizon=30)
    np.testing.assert_array_equal(res.steps, again.steps)


# -- bad input ----------------------------------------------------------------------------------
def test_bad_input(a2c_model):
    env = gym.make("HuberBandit-v0", **HUBER)
    with pytest.raises(ValueError, match="episode must be one of"):
        SufficientStatistics(env, episode="per-pull")
    with pytest.raises(ValueError, match="reward_scale must be in"):
        SufficientStatistics(env, reward_scale=0.0)
    with pytest.raises(ValueError, match="horizon must be an integer|horizon must be"):
        StatisticsSpec(K=3, horizon=0)
    with pytest.raises(ValueError, match="K must be"):
        StatisticsSpec(K=1, horizon=10)
    with pytest.raises(TypeError, match="predict"):
        SB3Agent(object(), StatisticsSpec(K=3, horizon=10))
    with pytest.raises(ValueError, match="model must match the env: the model observes"):
        SB3Agent(a2c_model, StatisticsSpec(K=4, horizon=10))
    with pytest.raises(ValueError, match="statistics must be a StatisticsSpec"):
        SB3Agent(a2c_model, env)  # a bare env: no statistics wrapper
    saved = A2C("MlpPolicy", DummyVecEnv([_learn_env]), device="cpu")
    saved.env = None  # as after A2C.load(path) without an env
    with pytest.raises(ValueError, match="statistics must be given"):
        SB3Agent(saved).reset(seed=0)  # not run through simulate/play: no env to learn them from


@pytest.mark.slow
def test_examples_readme_rl_snippets_run():
    """The ``python`` code blocks of examples/README-rl.md run as written, in order (one PPO
    training of 3000 steps; the ``py`` blocks are illustrations of longer runs)."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "examples" / "README-rl.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README-rl.md", "exec"), namespace)
    assert namespace["mean"] / 100 > 90.0
    assert namespace["rl"].regret.mean() < 0.2 * namespace["uniform"].regret.mean()
    assert [p.suffix for p in namespace["files"]] == [".png", ".pdf"]
    assert all(p.stat().st_size > 0 for p in namespace["files"])
