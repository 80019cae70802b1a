"""The runner: determinism, batch-size independence, the documented gym.make loop, looped agents."""

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import LoopedAgent, make
from privenv.simulation import checkpoints, make_vector_env, play, simulate

CFG = dict(horizon=1500, agent_kwargs={"sigma": 2.0})


def test_same_seed_same_results_and_different_seed_differs():
    a = simulate("eps-greedy", n_runs=4, seed=3, **CFG_EPS)
    b = simulate("eps-greedy", n_runs=4, seed=3, **CFG_EPS)
    c = simulate("eps-greedy", n_runs=4, seed=4, **CFG_EPS)
    np.testing.assert_array_equal(a.regret_curve, b.regret_curve)
    assert not np.array_equal(a.regret, c.regret)


CFG_EPS = dict(horizon=1500, agent_kwargs={"explore": 0.2})


@pytest.mark.parametrize("agent,kw", [("ucb1", CFG), ("eps-greedy", CFG_EPS)])
def test_run_i_identical_alone_or_in_a_batch_of_1000(agent, kw):
    kw = dict(kw, horizon=200)
    big = simulate(agent, n_runs=1000, seed=11, **kw)
    for i in (0, 517, 999):
        alone = simulate(agent, n_runs=1, seed=11, first_run=i, **kw)
        np.testing.assert_array_equal(alone.regret_curve[0], big.regret_curve[i])


def test_play_on_gym_make_equals_simulate():
    res = simulate("eps-greedy", n_runs=3, seed=5, **CFG_EPS)
    for i in range(3):
        agent = make("eps-greedy", "HuberBandit-v0", 1, explore=0.2)
        env = gym.make("HuberBandit-v0", horizon=1500)
        out = play(agent, env, seed=5, run=i)
        assert out["steps"] == 1500
        assert out["regret"] == pytest.approx(res.regret[i])


class GreedyStudent:
    """A one-run agent written without the base class (docs/design/architecture.md, "Agents")."""

    def __init__(self, K):
        self.K = K

    def reset(self, seed=None):
        self.n = np.zeros(self.K)
        self.s = np.zeros(self.K)

    def act(self, obs):
        if self.n.min() == 0:
            return int(np.argmin(self.n))
        return int(np.argmax(self.s / self.n))

    def observe(self, action, reward, obs):
        self.n[action] += 1
        self.s[action] += reward


def test_student_agent_runs_looped_and_matches_play():
    res = simulate(GreedyStudent(5), n_runs=3, horizon=300, seed=2)
    assert res.agent == "GreedyStudent" and res.regret.shape == (3,)
    env = gym.make("HuberBandit-v0", horizon=300)
    for i in range(3):
        assert play(GreedyStudent(5), env, seed=2, run=i)["regret"] == pytest.approx(res.regret[i])
    assert isinstance(LoopedAgent(GreedyStudent(5), 2), LoopedAgent)
    with pytest.raises(TypeError, match="act"):
        LoopedAgent(object(), 2)


def test_summary_has_contract_keys_and_frames():
    res = simulate("ucb1", n_runs=3, seed=0, **CFG)
    s = res.summary()
    for key in (
        "env",
        "agent",
        "privacy",
        "runs",
        "horizon",
        "seed",
        "regret_mean",
        "regret_sd",
        "stopping_time_mean",
        "stopping_time_sd",
        "error_rate",
        "wall_s",
        "ns_per_run_step",
    ):
        assert key in s
    assert s["stopping_time_mean"] is None and s["error_rate"] is None
    assert s["regret_mean"] == pytest.approx(res.regret.mean())
    assert len(res.to_frame()) == 3
    assert len(res.curve_frame()) == 3 * len(res.checkpoint_times)
    assert (np.diff(res.regret_curve, axis=1) >= 0).all()


def test_checkpoints_are_log_spaced_and_end_at_horizon():
    t = checkpoints(100_000, 40)
    assert t[0] == 1 and t[-1] == 100_000 and len(t) <= 41
    assert np.all(np.diff(t) > 0)


def test_env_kwargs_and_errors():
    res = simulate("ucb1", n_runs=2, seed=0, env_kwargs={"means": [1.0, 0.0]}, **CFG)
    assert res.regret.max() <= 1500
    with pytest.raises(ValueError, match="unknown agent"):
        simulate("nope", n_runs=1, horizon=10)
    with pytest.raises(ValueError, match="parameter"):
        simulate("ucb1", n_runs=1, horizon=10, agent_kwargs={"epsilon": 1.0})
    with pytest.raises(ValueError, match="n_runs"):
        simulate("ucb1", n_runs=0, horizon=10)
    agent = make("ucb1", "HuberBandit-v0", 2)
    with pytest.raises(ValueError, match="n_runs"):
        simulate(agent, n_runs=3, horizon=10)


@pytest.mark.parametrize("name", ["prae-r", "prae-c", "dprse", "dp-se"])
def test_private_agents_run_i_identical_alone_or_in_a_batch_of_1000(name):
    """Regret curves and the private estimates (which carry per-run Laplace noise) of run i are
    bit-identical alone and in a batch of 1000."""
    env_kwargs = {"inlier": "gaussian", "alpha": 0.1, "means": [1.0, 0.7, 0.4, 0.0]}

    def run(n_runs, first_run):
        env = make_vector_env("HuberBandit-v0", n_runs, 3000, **env_kwargs)
        # PRAE-C's default first phase releases nothing before T = 3000; its greedy first phase
        # (Remark 5.1) releases a private estimate per batch
        extra = {"first_phase": "greedy"} if name == "prae-c" else {}
        agent = make(name, env, n_runs, epsilon=1.0, **extra)
        return agent, simulate(agent, env, n_runs=n_runs, seed=21, first_run=first_run)

    big_agent, big = run(1000, 0)
    released = np.isfinite(big_agent.estimates)
    assert released.any() and len(np.unique(big_agent.estimates[released])) > 100
    for i in (0, 999):
        agent, alone = run(1, i)
        np.testing.assert_array_equal(alone.regret_curve[0], big.regret_curve[i])
        np.testing.assert_array_equal(agent.estimates[0], big_agent.estimates[i])


def test_seed_none_records_the_entropy_used_so_the_run_repeats():
    first = simulate("eps-greedy", n_runs=3, horizon=300, seed=None)
    second = simulate("eps-greedy", n_runs=3, horizon=300, seed=None)
    assert isinstance(first.seed, int) and first.seed >= 0
    assert first.seed != second.seed  # fresh entropy each time
    again = simulate("eps-greedy", n_runs=3, horizon=300, seed=first.seed)
    np.testing.assert_array_equal(again.regret_curve, first.regret_curve)
    assert again.seed == first.seed
