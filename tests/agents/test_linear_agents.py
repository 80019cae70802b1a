"""Linear contextual bandit baselines (agents/linear.py): LinUCB/OFUL, LDP-LinUCB (Zheng et al.
2020) and input-perturbation least squares (paper 4, Theorem 2.2).

Hand-computed one-step updates and widths; regret checks on the default sphere instance (fixed
seeds: each check is a deterministic computation, no false-alarm probability); the local-DP
systems run behind their randomizer wrappers and only ever receive wrapper outputs; determinism
(run i alone = run i in a batch), ``play`` = ``simulate``; memory independent of T; bad input.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.linear import (
    InputPerturbationOLS,
    LDPLinUCB,
    LinUCB,
    ldp_linucb_beta,
    ldp_linucb_upsilon,
    oful_radius,
)
from privenv.agents.mab import Uniform
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.simulation import play, simulate, system_env
from privenv.wrappers import (
    GaussianStatisticsRandomizer,
    LaplaceInputRandomizer,
    LinearMessageWrapper,
)

ENV = "LinearContextualBandit-v0"
AGENTS = {
    "linucb": {},
    "ldp-linucb": {"epsilon": 1.0},
    "input-perturbation-ols": {"epsilon": 1.0},
}


# -- hand-computed widths and one-step updates ------------------------------------------------


def test_oful_radius_by_hand():
    # R√(2 log(1/δ) + log det V − d log λ) + √λ S at V = λI: R√(2 log(1/δ)) + √λ S
    assert oful_radius(2 * math.log(2.0), 2, 2.0, 0.5, 1.0, math.exp(-2)) == pytest.approx(
        0.5 * 2.0 + math.sqrt(2.0))
    # log det V − d log λ = 5, δ = e^{-2}: √(4 + 5) = 3
    assert oful_radius(5.0, 3, 1.0, 1.0, 2.0, math.exp(-2)) == pytest.approx(3.0 + 2.0)


def test_ldp_linucb_widths_by_hand():
    # σ = 0.5, s = 4, d = 4, T = 100, α = 0.2: log(2T/α) = log 1000
    upsilon = ldp_linucb_upsilon(0.5, 4, 4, 100, 0.2)
    assert upsilon == pytest.approx(1.0 * (8.0 + 2 * math.log(1000.0)))  # 21.81551
    assert ldp_linucb_beta(0.5, 4, 4, 100, upsilon) == pytest.approx(161.2012009, rel=1e-9)


def test_linucb_one_step_by_hand():
    agent = LinUCB(d=2, sigma=1.0, theta_bound=1.0, lambda_=2.0, alpha=0.1, n_runs=1)
    agent.reset(seed=0)
    obs = np.array([[0.6, 0.8], [0.5, 0.5], [0.0, -0.9]], dtype=np.float32)
    assert agent.act(obs) == 0  # θ̂ = 0, V = λI: the largest ‖φ‖ wins
    agent.observe(0, -1.0, obs)
    x = np.array([0.6, 0.8], dtype=np.float32).astype(float)
    V = 2.0 * np.eye(2) + np.outer(x, x)
    np.testing.assert_allclose(agent.V_inv[0], np.linalg.inv(V), atol=1e-12)
    np.testing.assert_allclose(agent.theta[0], np.linalg.solve(V, -x), atol=1e-12)
    assert agent.logdet_V[0] == pytest.approx(math.log(np.linalg.det(V)))
    # next round: score = ⟨φ, θ̂⟩ + √β ‖φ‖_{V⁻¹} with √β = √(2 log 10 + log det V − 2 log 2) + √2
    root_beta = math.sqrt(2 * math.log(10) + math.log(np.linalg.det(V) / 4)) + math.sqrt(2)
    obs2 = np.array([[0.6, 0.8], [-0.6, -0.8], [0.8, -0.6]], dtype=np.float32)
    phi = obs2.astype(float)
    scores = phi @ np.linalg.solve(V, -x) + root_beta * np.sqrt(
        np.einsum("ad,ad->a", phi @ np.linalg.inv(V), phi))
    assert agent.act(obs2) == int(np.argmax(scores)) == 2


def test_ldp_linucb_one_step_by_hand():
    agent = LDPLinUCB(d=2, horizon=100, epsilon=0.5, delta=1e-5, alpha=0.1,
                      calibration="classical", n_runs=1)
    agent.reset(seed=0)
    sigma = 4 * math.sqrt(math.log(1.25 / 1e-5)) / 0.5
    assert agent.sigma == pytest.approx(sigma)
    feats = np.array([[0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    gram = np.array([[30.0, -5.0], [-5.0, 10.0]])
    moment = np.array([3.0, -4.0])
    agent.observe(1, 0.0, {"features": feats, "gram": gram, "moment": moment})
    agent.observe(0, 0.0, {"features": feats, "gram": gram, "moment": moment})
    np.testing.assert_array_equal(agent.V[0], 2 * gram)
    np.testing.assert_array_equal(agent.u[0], 2 * moment)
    s = 2  # messages received
    ups = sigma * math.sqrt(s) * (4 * math.sqrt(2) + 2 * math.log(2 * 100 / 0.1))
    beta = (2 * sigma * math.sqrt(2 * math.log(100))
            + (math.sqrt(3 * ups) + sigma * math.sqrt(2 * s / ups)) * 2 * math.log(100))
    M = 2 * gram + 2 * ups * np.eye(2)
    theta = np.linalg.solve(M, 2 * moment)
    obs = {"features": np.array([[0.6, -0.8], [-0.6, 0.8], [1.0, 0.0]], dtype=np.float32),
           "gram": gram, "moment": moment}
    phi = obs["features"].astype(float)
    scores = phi @ theta + beta * np.sqrt(np.einsum("ad,ad->a", phi @ np.linalg.inv(M), phi))
    assert agent.act(obs) == int(np.argmax(scores))


def test_input_perturbation_ols_one_step_by_hand():
    agent = InputPerturbationOLS(d=2, epsilon=1.0, lambda_=1.0)
    agent.reset(seed=0)
    feats = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert agent.act({"features": feats, "phi_tilde": np.zeros(2), "y_tilde": np.zeros(1)}) == 0
    pt, yt = np.array([2.0, -1.0]), np.array([3.0])
    agent.observe(0, 0.0, {"features": feats, "phi_tilde": pt, "y_tilde": yt})
    theta = np.linalg.solve(np.eye(2) + np.outer(pt, pt), pt * 3.0)  # = (1, −0.5)
    np.testing.assert_allclose(agent.theta[0], theta)
    assert agent.act({"features": feats, "phi_tilde": pt, "y_tilde": yt}) == 0
    assert agent.scale == pytest.approx((2 * math.sqrt(2) + 2) / 1.0)


# -- regret ---------------------------------------------------------------------------------


def test_linucb_regret_is_sublinear_and_far_below_uniform():
    """Default sphere instance (d = 5, A = 10), T = 2000, 20 runs, seed 0. Checks: (i) mean
    regret < 10 % of the uniform policy's; (ii) sublinear growth: the regret per round after
    t₁ ≈ T/2 is < 1/3 of the regret per round before t₁ (linear growth gives ratio 1)."""
    T, n = 2000, 20
    lin = simulate("linucb", ENV, n_runs=n, horizon=T, seed=0)
    uni = simulate(Uniform(10, n_runs=n), ENV, n_runs=n, horizon=T, seed=0)
    k = int(np.searchsorted(lin.checkpoint_times, T // 2))  # first checkpoint t₁ ≥ T/2
    t1, r_t1, r_T = lin.checkpoint_times[k], lin.regret_curve[:, k].mean(), lin.regret.mean()
    assert r_T < 0.1 * uni.regret.mean()
    assert (r_T - r_t1) / (T - t1) < (r_t1 / t1) / 3  # per-round regret after t₁ vs before


def test_ldp_linucb_regret_decreases_with_epsilon():
    """ε ∈ {1, 10, 100}, T = 2000, 20 runs, seed 0 (the same users in every cell): mean regret
    strictly decreasing in ε, and at ε = 100 below 60 % of ε = 1's (Zheng et al.'s theoretical
    widths are wide, so ε = 1 is close to uniform at this horizon)."""
    regrets = [simulate("ldp-linucb", ENV, n_runs=20, horizon=2000, seed=0,
                        agent_kwargs={"epsilon": eps}).regret.mean() for eps in (1.0, 10.0, 100.0)]
    assert regrets[0] > regrets[1] > regrets[2]
    assert regrets[2] < 0.6 * regrets[0]


def test_input_perturbation_regret_decreases_with_epsilon():
    regrets = [simulate("input-perturbation-ols", ENV, n_runs=20, horizon=1000, seed=0,
                        agent_kwargs={"epsilon": eps}).regret.mean() for eps in (1.0, 10.0)]
    assert regrets[1] < 0.5 * regrets[0]


# -- the local-DP systems: wrapper in front, guarantee, what the learner receives -------------


def test_systems_declare_the_wrappers_guarantee():
    res = simulate("ldp-linucb", ENV, n_runs=2, horizon=5, seed=0,
                   agent_kwargs={"epsilon": 2.0, "delta": 1e-7})
    assert res.privacy == PrivacyGuarantee("local", 2.0, 1e-7, "(context, reward)")
    res = simulate("input-perturbation-ols", ENV, n_runs=2, horizon=5, seed=0,
                   agent_kwargs={"epsilon": 3.0})
    assert res.privacy == PrivacyGuarantee("local", 3.0, 0.0, "(context, reward)")
    assert simulate("linucb", ENV, n_runs=2, horizon=5).privacy == PrivacyGuarantee.none()
    assert make("ldp-linucb", ENV).privacy == PrivacyGuarantee.none()  # the learner alone
    env = gym.make(ENV)  # the runner puts each system's declared randomizer in front
    ldp = system_env(make("ldp-linucb", env), env)
    assert isinstance(ldp, LinearMessageWrapper)
    assert isinstance(ldp.randomizer, GaussianStatisticsRandomizer)
    ols = system_env(make("input-perturbation-ols", env), env)
    assert isinstance(ols.randomizer, LaplaceInputRandomizer)


class SpyLDPLinUCB(LDPLinUCB):
    """LDP-LinUCB recording everything the learner is given."""

    def reset_state(self) -> None:
        super().reset_state()
        self.seen: list = []

    def act_batch(self, observations):
        self.seen.append(("act", {k: np.array(v) for k, v in observations.items()}))
        return super().act_batch(observations)

    def observe_batch(self, actions, rewards, observations) -> None:
        self.seen.append(("observe", np.array(rewards),
                          {k: np.array(v) for k, v in observations.items()}))
        super().observe_batch(actions, rewards, observations)


def test_the_learner_only_receives_wrapper_outputs():
    """Leak test at the agent: the rewards it gets are all 0.0, its observations are exactly the
    wrapper's dict (features + message), and after a run no attribute holds a feature matrix
    (features are used to act, never stored)."""
    agent = SpyLDPLinUCB(d=5, horizon=30, epsilon=1.0, n_runs=4)
    simulate(agent, ENV, n_runs=4, horizon=30, seed=2)
    assert len(agent.seen) == 60
    for entry in agent.seen:
        obs = entry[-1]
        assert set(obs) == {"features", "gram", "moment"}
        if entry[0] == "observe":
            assert not entry[1].any()
    assert not [k for k, v in vars(agent).items()
                if k != "seen" and isinstance(v, np.ndarray) and v.shape[-2:] == (10, 5)]


def test_message_learners_refuse_raw_observations():
    agent = LDPLinUCB(d=5, horizon=10)
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="system_env"):
        agent.act(np.zeros((10, 5), dtype=np.float32))


# -- determinism, play = simulate, memory --------------------------------------------------------


@pytest.mark.parametrize("name", list(AGENTS))
def test_run_i_alone_equals_run_i_in_a_batch(name):
    batch = simulate(name, ENV, n_runs=4, horizon=60, seed=7, agent_kwargs=AGENTS[name])
    for i in (0, 2):
        alone = simulate(name, ENV, n_runs=1, horizon=60, seed=7, first_run=i,
                         agent_kwargs=AGENTS[name])
        np.testing.assert_array_equal(alone.regret_curve[0], batch.regret_curve[i])


@pytest.mark.parametrize("name", list(AGENTS))
def test_play_equals_simulate(name):
    T = 50
    fast = simulate(name, ENV, n_runs=3, horizon=T, seed=4, agent_kwargs=AGENTS[name])
    env = gym.make(ENV, horizon=T, max_episode_steps=T)
    agent = make(name, env, 1, **AGENTS[name])
    for i in range(3):
        slow = play(agent, env, seed=4, run=i)
        assert slow["steps"] == T
        assert slow["regret"] == fast.regret[i]


@pytest.mark.parametrize("name", list(AGENTS))
def test_state_memory_does_not_grow_with_the_horizon(name):
    def state_bytes(T: int) -> int:
        agent = make(name, ENV, 3, **AGENTS[name])
        simulate(agent, ENV, n_runs=3, horizon=T, seed=0)
        return sum(v.nbytes for v in vars(agent).values() if isinstance(v, np.ndarray))

    assert state_bytes(5) == state_bytes(300)


def test_make_fills_parameters_from_the_env():
    agent = make("linucb", gym.make(ENV, d=3, A=4, noise="gaussian", sigma=0.3))
    assert (agent.d, agent.sigma, agent.theta_bound) == (3, 0.3, 1.0)
    agent = make("ldp-linucb", gym.make(ENV, d=3, horizon=500))
    assert (agent.d, agent.horizon) == (3, 500)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cls, kwargs, match", [
    (LinUCB, {"d": 0}, "d must be"),
    (LinUCB, {"d": 2, "lambda_": 0.0}, "lambda_"),
    (LinUCB, {"d": 2, "alpha": 1.0}, "alpha"),
    (LinUCB, {"d": 2, "sigma": -1.0}, "sigma"),
    (LinUCB, {"d": 2, "theta_bound": float("nan")}, "theta_bound"),
    (LDPLinUCB, {"d": 2, "horizon": 0}, "horizon"),
    (LDPLinUCB, {"d": 2, "horizon": 10, "epsilon": 0.0}, "epsilon"),
    (LDPLinUCB, {"d": 2, "horizon": 10, "delta": 0.0}, "delta"),
    (LDPLinUCB, {"d": 2, "horizon": 10, "alpha": 1.0}, "alpha"),
    (LDPLinUCB, {"d": 2, "horizon": 10, "calibration": "spec"}, "calibration"),
    (LDPLinUCB, {"d": 2, "horizon": 10, "epsilon": 2.0, "calibration": "classical"},
     "epsilon must be in \\(0, 1\\)"),
    (LDPLinUCB, {"d": 2, "horizon": 10, "clip": "no"}, "clip"),
    (InputPerturbationOLS, {"d": 2, "epsilon": -1.0}, "epsilon"),
    (InputPerturbationOLS, {"d": 2, "lambda_": -1.0}, "lambda_"),
    (InputPerturbationOLS, {"d": 2, "clip": 1}, "clip"),
])
def test_bad_parameters(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(**kwargs)


def test_bad_observations_and_envs():
    agent = LinUCB(d=3, n_runs=2)
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="shape \\(2, A, 3\\)"):
        agent.act_batch(np.zeros((2, 4, 5)))
    with pytest.raises(RuntimeError, match="act"):
        agent.observe_batch(np.zeros(2, dtype=np.int64), np.zeros(2), np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match="reward_bound"):  # unbounded labels, no clip
        simulate("ldp-linucb", ENV, n_runs=2, horizon=5, env_kwargs={"noise": "gaussian"})
    res = simulate("ldp-linucb", ENV, n_runs=2, horizon=5, env_kwargs={"noise": "gaussian"},
                   agent_kwargs={"clip": True})
    assert res.steps.tolist() == [5, 5]


# -- numerical robustness (docs/design/threat-model.md) ---------------------------------------


@settings(max_examples=200, deadline=None)
@given(eps=st.floats(1e-4, 1e3), delta=st.floats(1e-12, 0.5), t=st.integers(1, 10**9),
       d=st.integers(1, 100), T=st.integers(1, 10**9), alpha=st.floats(1e-12, 0.5))
def test_widths_stay_finite(eps, delta, t, d, T, alpha):
    from privenv.wrappers import GaussianStatisticsRandomizer

    sigma = GaussianStatisticsRandomizer(eps, delta, d).sigma
    upsilon = ldp_linucb_upsilon(sigma, t, d, T, alpha)
    assert math.isfinite(upsilon) and upsilon > 0
    assert math.isfinite(ldp_linucb_beta(sigma, t, d, T, upsilon))
    logdet = d * math.log(1.0 + t / d)  # the largest log det V after t unit-norm rounds, λ = 1
    assert np.isfinite(oful_radius(logdet, d, 1.0, 1.0, 1.0, delta))


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("ldp-linucb", "ldp-linucb-message", "input-perturbation-message",
                 "input-perturbation-exact", "gaussian-statistics-exact")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
