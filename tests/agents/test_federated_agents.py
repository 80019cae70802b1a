"""Federated LinUCB (paper 2, Algorithm 1) and FedUCB with adaptive sync: runner, equivalences,
regret, ledger, the side channel of data-dependent schedules, bad input.

Everything here is deterministic (fixed seeds); no statistical test (the protocol's audits are in
tests/privacy/test_federated_protocol.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privenv.agents import make
from privenv.agents.base import Agent
from privenv.agents.federated import FedLinUCB, FedUCBAdaptive, SuperAgent, fed_confidence_radius
from privenv.agents.linear import LinUCB
from privenv.agents.mab import Uniform
from privenv.privacy import vector_sum as vs
from privenv.privacy.federated import (
    UNIT,
    federated_kappa,
    ldp_sigma0,
    private_lambda,
    replace_one_sensitivities,
)
from privenv.privacy.ledger import Ledger
from privenv.simulation import make_vector_env, simulate

ENV = "FederatedLinearBandit-v0"
SMALL = dict(M=3, K=5, d=3)
LDP = dict(protocol="ldp", epsilon=1.0, delta=1e-3, reward_bound=2.0)
SDP = dict(protocol="sdp-amplification", epsilon=0.5, delta=1e-4, reward_bound=2.0)
VS = dict(protocol="sdp-vector-sum", epsilon=0.2, delta=0.1, reward_bound=2.0)
CENTRAL = dict(protocol="central", epsilon=1.0, delta=1e-3, reward_bound=2.0)


def _env(n_runs: int, horizon: int, **kw):
    return make_vector_env(ENV, n_runs, horizon, reward="silo", **{**SMALL, **kw})


def _drive(agent: Agent, env, seed: int = 0, replace=None) -> list[np.ndarray]:
    """The runner's loop; ``replace=(t0, silo)`` swaps that silo's user of round t0 for one with
    all-zero features and reward 0. Returns the actions of every round."""
    obs, _ = env.reset(seed=seed)
    agent.reset(seed=seed)
    actions = []
    for t in range(1, env.unwrapped.horizon + 1):
        if replace is not None and t == replace[0]:
            obs = obs.copy()
            obs[:, replace[1]] = 0.0
        a = agent.act_batch(obs)
        obs, r, *_ = env.step(a)
        if replace is not None and t == replace[0]:
            r = r.copy()
            r[:, replace[1]] = 0.0
        agent.observe_batch(a, r, obs)
        actions.append(a)
    return actions


# -- the runner ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [{}, LDP, SDP], ids=["none", "ldp", "sdp"])
def test_runner_shapes_communication_and_guarantee(kw) -> None:
    res = simulate("fed-linucb", ENV, n_runs=2, horizon=42, seed=3, env_kwargs=SMALL,
                   agent_kwargs=dict(batch=4, **kw))
    assert res.regret.shape == (2,) and np.all(res.regret > 0)
    np.testing.assert_array_equal(res.episode["sync_rounds"], [10, 10])  # ⌊42/4⌋
    np.testing.assert_array_equal(res.episode["floats_sent_per_silo"], [90, 90])  # 10·(6+3)
    assert set(res.episode) >= {"clipped_rewards", "eigen_clamps"}
    model = {"": "none", "ldp": "silo-local", "sdp-amplification": "shuffle"}[
        kw.get("protocol", "")]
    assert res.privacy.model == model
    if model != "none":
        assert (res.privacy.epsilon, res.privacy.neighbouring) == (kw["epsilon"], "replace-one")


def test_runner_vector_sum_guarantee_and_bits() -> None:
    """``sdp-vector-sum`` through the runner (±1 rewards: b = 1 from the env): the declared
    guarantee is the κ-fold composition of the checked node guarantee (within the target); no
    floats are sent, and each silo's bits are Σ over syncs k of B·2^j·messages_per_user(level
    j = lowest set bit of k)."""
    env = dict(SMALL, noise="bounded")
    res = simulate("fed-linucb", ENV, n_runs=2, horizon=42, seed=3, env_kwargs=env,
                   agent_kwargs={"protocol": "sdp-vector-sum", "epsilon": 0.2, "delta": 0.1,
                                 "batch": 4})
    agent = make("fed-linucb", make_vector_env(ENV, 1, 42, reward="silo", **env), 1, batch=4,
                 protocol="sdp-vector-sum", epsilon=0.2, delta=0.1)
    cal = agent.calibration
    assert cal.reward_bound == 1.0 and cal.kappa == federated_kappa(10) == 4
    node = vs.node_guarantee(cal.vector_sum[0], unit=UNIT)
    assert res.privacy == agent.privacy == vs.compose_nodes(node, 4)
    assert (res.privacy.model, res.privacy.neighbouring) == ("shuffle", "replace-one")
    assert res.privacy.epsilon <= 0.2 and res.privacy.delta <= 0.1
    assert np.all(res.regret > 0)
    np.testing.assert_array_equal(res.episode["sync_rounds"], [10, 10])
    np.testing.assert_array_equal(res.episode["floats_sent_per_silo"], [0, 0])
    bits = sum(4 * 2**j * vs.messages_per_user(cal.vector_sum[j], 9)
               for j in (int(math.log2(k & -k)) for k in range(1, 11)))
    np.testing.assert_array_equal(res.episode["bits_sent_per_silo"], [bits, bits])
    ldp = simulate("fed-linucb", ENV, n_runs=1, horizon=42, seed=3, env_kwargs=env,
                   agent_kwargs=dict(batch=4, protocol="ldp", epsilon=0.2, delta=0.1))
    assert ldp.episode["bits_sent_per_silo"][0] == 0


def test_vector_sum_memory_does_not_grow_with_horizon() -> None:
    """The P_Vec state is O(n_runs·κ·c) integers: the same arrays at T = 64 and T = 256 except
    for the κ axis (κ = 5 vs 7 levels); no per-user storage."""
    shapes = {}
    for T in (64, 256):
        env = _env(2, T)
        agent = make("fed-linucb", env, 2, batch=2, **VS)
        _drive(agent, env)
        rand = agent.protocol.randomizer
        shapes[T] = (rand.counts.shape, rand.users.shape, agent.protocol.gram_analyzer.nodes.shape)
    kappa = {T: federated_kappa(T // 2) for T in (64, 256)}
    for T in (64, 256):
        assert shapes[T] == ((2, kappa[T], 9), (2, kappa[T]), (2, kappa[T], 3, 3))


def test_agent_asks_for_per_silo_rewards() -> None:
    assert FedLinUCB.env_requirements == {"reward": "silo"}
    env = make_vector_env(ENV, 1, 10, **SMALL)  # reward="sum": scalar rewards
    with pytest.raises(ValueError, match="reward='silo'"):
        simulate(make("fed-linucb", env, 1, batch=2), env, n_runs=1)


@pytest.mark.parametrize(("name", "kw"), [("fed-linucb", LDP), ("fed-linucb", SDP),
                                          ("fed-linucb", VS), ("feducb-adaptive", LDP),
                                          ("super-agent", CENTRAL),
                                          ("fed-linucb", {**LDP, "sampler": "exact"}),
                                          ("super-agent", {**CENTRAL, "sampler": "exact"})],
                         ids=["fed-ldp", "fed-sdp", "fed-vs", "feducb", "super", "fed-ldp-exact",
                              "super-exact"])
def test_run_independent_of_batch(name, kw) -> None:
    """Run 2 of a batch of 3 equals run 2 simulated alone (regret curve and episode values)."""
    args = dict(horizon=40, seed=5, env_kwargs=SMALL, agent_kwargs=dict(kw))
    if name == "fed-linucb":
        args["agent_kwargs"]["batch"] = 3
    full = simulate(name, ENV, n_runs=3, **args)
    alone = simulate(name, ENV, n_runs=1, first_run=2, **args)
    np.testing.assert_array_equal(full.regret_curve[2], alone.regret_curve[0])
    for key, value in full.episode.items():
        assert value[2] == alone.episode[key][0], key


def test_single_run_gym_protocol() -> None:
    """n_runs = 1: act takes one (M, K, d) observation and returns M actions."""
    env = _env(1, 5)
    agent = make("fed-linucb", env, 1, batch=2)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    a = agent.act(obs[0])
    assert a.shape == (3,)
    obs, r, *_ = env.step(a[None])
    agent.observe(a, r[0], obs[0])
    assert agent.t == 1


def test_play_loop_equals_runner() -> None:
    """The documented gym.make loop gives run 1's numbers of the batched runner. (Gymnasium's
    passive checker warns, once, that the reward is not a scalar: ``reward="silo"`` returns one
    reward per silo by design.)"""
    import gymnasium as gym

    from privenv.simulation import play

    kw = dict(batch=3, **LDP)
    env = gym.make(ENV, reward="silo", horizon=30, **SMALL)
    with pytest.warns(UserWarning, match=r"reward returned by `step\(\)` must be a float"):
        out = play(make("fed-linucb", env, 1, **kw), env, seed=4, run=1)
    res = simulate("fed-linucb", ENV, n_runs=2, horizon=30, seed=4, env_kwargs=SMALL,
                   agent_kwargs=kw)
    assert out["regret"] == pytest.approx(res.regret[1], rel=1e-12)


# -- equivalences -------------------------------------------------------------------------------


class NaiveFedLinUCB:
    """Paper 2's Algorithm 1 written as loops over runs and silos with a fresh inverse each round
    (like the authors' code): the reference for the batched agent."""

    def __init__(self, n, M, d, lam, batch, width, bound=None):
        self.lam, self.batch, self.width, self.bound = lam, batch, width, bound
        self.Wt, self.Ut = np.zeros((n, d, d)), np.zeros((n, d))
        self.W, self.U = np.zeros((n, M, d, d)), np.zeros((n, M, d))
        self.clipped = np.zeros(n, dtype=int)

    def act(self, obs, t):
        n, M, _, d = obs.shape
        a = np.zeros((n, M), dtype=np.int64)
        for r in range(n):
            for m in range(M):
                Vi = np.linalg.inv(self.lam * np.eye(d) + self.Wt[r] + self.W[r, m])
                theta = Vi @ (self.Ut[r] + self.U[r, m])
                x = obs[r, m].astype(float)
                ucb = x @ theta + self.width(t) * np.sqrt(np.einsum("kd,de,ke->k", x, Vi, x))
                a[r, m] = np.argmax(ucb)
        self.obs = obs
        return a

    def observe(self, a, y, t):
        n, M = a.shape
        for r in range(n):
            for m in range(M):
                x = self.obs[r, m, a[r, m]].astype(float)
                yy = y[r, m]
                if self.bound is not None:
                    self.clipped[r] += abs(yy) > self.bound
                    yy = np.clip(yy, -self.bound, self.bound)
                self.W[r, m] += np.outer(x, x)
                self.U[r, m] += yy * x
        if t % self.batch == 0:
            self.Wt += self.W.sum(axis=1)
            self.Ut += self.U.sum(axis=1)
            self.W[:] = 0.0
            self.U[:] = 0.0


@pytest.mark.parametrize("batch", [1, 4])
def test_matches_naive_algorithm_1(batch) -> None:
    """Non-private FedLinUCB = the naive loop implementation of Algorithm 1 (same actions every
    round; rewards clipped to b = 0.3 in both, with the same count)."""
    n, T = 2, 60
    env = _env(n, T)
    agent = make("fed-linucb", env, n, batch=batch, reward_bound=0.3)
    M, d = SMALL["M"], SMALL["d"]
    ref = NaiveFedLinUCB(n, M, d, math.sqrt(M), batch, lambda t: fed_confidence_radius(
        t, M, d, math.sqrt(M), agent.sigma, agent.theta_bound, agent.alpha), bound=0.3)
    obs, _ = env.reset(seed=8)
    agent.reset(seed=8)
    for t in range(1, T + 1):
        a = agent.act_batch(obs)
        np.testing.assert_array_equal(a, ref.act(obs, t))
        nxt, r, *_ = env.step(a)
        agent.observe_batch(a, r, nxt)
        ref.observe(a, r, t)
        obs = nxt
    np.testing.assert_array_equal(agent.episode_info()["clipped_rewards"], ref.clipped)
    assert ref.clipped.sum() > 0


def test_one_silo_batch_one_equals_linucb() -> None:
    """M = 1, B = 1, no privacy: FedLinUCB is LinUCB on the pooled data (λ = √M = 1, the same
    constant width β = 1.3: LinUCB with R = 0 and S = β/√λ). With M > 1 and B = 1 it is the pooled
    LinUCB that serves the M users of a round with one model (updated once per round), not a
    sequential LinUCB over MT users — that case is covered by the naive-reference test."""
    n, T, beta = 3, 150, 1.3
    env = make_vector_env(ENV, n, T, reward="silo", M=1, K=6, d=4)
    fed = make("fed-linucb", env, n, batch=1, beta=beta)
    lin = LinUCB(4, sigma=0.0, theta_bound=beta, lambda_=1.0, n_runs=n)
    assert fed.lambda_ == 1.0
    obs, _ = env.reset(seed=4)
    fed.reset(seed=4)
    lin.reset(seed=4)
    for _ in range(T):
        a = fed.act_batch(obs)
        np.testing.assert_array_equal(a[:, 0], lin.act_batch(obs[:, 0]))
        obs, r, *_ = env.step(a)
        fed.observe_batch(a, r, obs)
        lin.observe_batch(a[:, 0], r[:, 0], obs[:, 0])


# -- the super single agent (central DP) -----------------------------------------------------------


def test_super_agent_calibration_and_guarantee() -> None:
    """Central DP: σ is the exact calibration of one stream of κ = ⌊log₂T⌋ + 1 nodes (B = 1),
    the same formula as a silo's σ₀; λ counts one noise source (√κ·σ·(…)), not M; the declared
    guarantee is (ε, δ) in the central model, replace-one, per user."""
    T = 100
    agent = make("super-agent", _env(1, T), 1, **{k: v for k, v in CENTRAL.items()
                                                   if k != "protocol"})
    kappa = federated_kappa(T)
    dg, du = replace_one_sensitivities(3, 2.0)
    assert (agent.batch, agent.calibration.kappa) == (1, kappa)
    assert agent.sigma0 == ldp_sigma0(1.0, 1e-3, kappa, dg, du)
    assert agent.lambda_ == private_lambda(1, kappa, agent.sigma0, 0.01, 3)
    assert agent.lambda_ < private_lambda(3, kappa, agent.sigma0, 0.01, 3)
    assert agent.privacy.model == "central" and agent.privacy.neighbouring == "replace-one"
    assert (agent.privacy.epsilon, agent.privacy.delta) == (1.0, 1e-3)
    assert make("super-agent", _env(1, T), 1, protocol="none").privacy.model == "none"
    with pytest.raises(ValueError, match="protocol"):
        SuperAgent(M=3, K=5, d=3, horizon=T, protocol="ldp", reward_bound=2.0)
    with pytest.raises(ValueError, match="reward_bound"):
        SuperAgent(M=3, K=5, d=3, horizon=T)  # central DP needs the declared bound
    with pytest.raises(ValueError, match="protocol"):
        FedLinUCB(M=3, K=5, d=3, horizon=T, protocol="central", reward_bound=2.0)


def test_super_agent_syncs_every_round_and_is_the_learner_of_fed_linucb() -> None:
    """Without noise the super agent is FedLinUCB with B = 1 (one model, updated every round):
    identical actions on the same seeds. It reports T syncs and the raw floats its silos send."""
    n, T = 2, 60
    env = _env(n, T)
    sup = _drive(make("super-agent", env, n, protocol="none"), env, seed=3)
    fed = _drive(make("fed-linucb", env, n, batch=1), env, seed=3)
    for a, b in zip(sup, fed, strict=True):
        np.testing.assert_array_equal(a, b)
    res = simulate("super-agent", ENV, n_runs=2, horizon=T, seed=1, env_kwargs=SMALL,
                   agent_kwargs=CENTRAL)
    np.testing.assert_array_equal(res.episode["sync_rounds"], [T, T])
    np.testing.assert_array_equal(res.episode["floats_sent_per_silo"], [T * 9, T * 9])
    assert res.privacy.model == "central" and np.all(res.regret > 0)


def test_super_agent_ledger_charges_each_user_once_per_node() -> None:
    """T = 21, B = 1: every user (round s, silo m) is charged ρ_node once per released node of
    the server's tree containing round s + 1 (≤ κ = 5), within the budget κ·ρ_node."""
    n, T, M = 2, 21, SMALL["M"]
    env = _env(n, T)
    agent = make("super-agent", env, n, **{k: v for k, v in CENTRAL.items() if k != "protocol"})
    agent.ledger = Ledger(n, T * M)
    _drive(agent, env, seed=2)
    cal = agent.calibration
    rho = agent.ledger.rho_spent().reshape(n, T, M)
    for s in range(T):
        np.testing.assert_allclose(rho[:, s, :], _nodes_containing(s + 1, T) * cal.rho_node,
                                   rtol=1e-12)
    assert _nodes_containing(1, T) == cal.kappa == 5
    agent.ledger.assert_within(0.0, rho=agent.rho_budget)


# -- regret ---------------------------------------------------------------------------------------


def test_regret_well_below_uniform() -> None:
    """M = 4, K = 10, d = 5, T = 400, 4 runs: non-private FedLinUCB's group regret is below a
    quarter of the uniform policy's (measured 0.10×); LDP at ε = 10 (δ = 10⁻³) below it too
    (measured 0.52×)."""
    kw = dict(n_runs=4, horizon=400, seed=1, env_kwargs=dict(M=4, K=10, d=5, reward="silo"))
    fed = simulate("fed-linucb", ENV, agent_kwargs=dict(batch=5), **kw).regret.mean()
    env = make_vector_env(ENV, 4, 400, M=4, K=10, d=5, reward="silo")
    uni = simulate(Uniform(10, silos=4, n_runs=4), env, n_runs=4, seed=1).regret.mean()
    ldp = simulate("fed-linucb", ENV, agent_kwargs=dict(batch=5, protocol="ldp", epsilon=10.0,
                                                        delta=1e-3, reward_bound=2.0),
                   **kw).regret.mean()
    assert fed < 0.25 * uni, (fed, uni)
    assert ldp < uni, (ldp, uni)


# -- calibration, ledger ------------------------------------------------------------------------


def test_agent_uses_the_calibration() -> None:
    env = _env(1, 100)
    agent = make("fed-linucb", env, 1, batch=5, **LDP)
    kappa = federated_kappa(20)
    dg, du = replace_one_sensitivities(3, 2.0)
    assert agent.sigma0 == ldp_sigma0(1.0, 1e-3, kappa, dg, du)
    assert agent.lambda_ == private_lambda(3, kappa, agent.sigma0, 0.01, 3)
    assert agent.rho_budget == pytest.approx(kappa * (dg**2 + du**2) / (2 * agent.sigma0**2))
    nonpriv = make("fed-linucb", env, 1)
    assert (nonpriv.sigma0, nonpriv.lambda_, nonpriv.rho_budget) == (0.0, math.sqrt(3), 0.0)
    assert make("fed-linucb", env, 1, lambda_=7.0, beta=0.5).lambda_ == 7.0


def _nodes_containing(k: int, n_batches: int) -> int:
    """Released dyadic nodes containing batch k: the level-j node containing k is the c-th,
    c = ⌈k/2^j⌉; it is released (at sync c·2^j, whose lowest set bit is j) iff c is odd and
    c·2^j ≤ n_batches."""
    count = 0
    for j in range(n_batches.bit_length()):
        c = ((k - 1) >> j) + 1
        count += c % 2 == 1 and c << j <= n_batches
    return count


@pytest.mark.parametrize("kw", [LDP, SDP, VS], ids=["ldp", "sdp", "vector-sum"])
def test_ledger_charges_each_user_once_per_node(kw) -> None:
    """T = 47, B = 5: 9 batches (κ = 4); every user (round s, silo m) of batch k is charged
    ρ_node (Gaussian) or ε₀ (vector sum) × (number of released nodes containing k) ≤ the budget
    κ·ρ_node or κ·ε₀; the users of the final partial batch (rounds 46, 47) are never charged."""
    n, T, B, M = 2, 47, 5, SMALL["M"]
    env = _env(n, T)
    agent = make("fed-linucb", env, n, batch=B, **kw)
    agent.ledger = Ledger(n, T * M)
    _drive(agent, env, seed=2)
    cal = agent.calibration
    rho = agent.ledger.rho_spent().reshape(n, T, M)
    eps = agent.ledger.epsilon_spent().reshape(n, T, M)
    for s in range(T):
        k = s // B + 1
        nodes = _nodes_containing(k, T // B) if k <= 9 else 0
        np.testing.assert_allclose(rho[:, s, :], nodes * cal.rho_node, rtol=1e-12)
        np.testing.assert_allclose(eps[:, s, :], nodes * cal.epsilon_node, rtol=1e-12)
    assert _nodes_containing(1, 9) == 4 == cal.kappa
    assert (cal.rho_node > 0) != (cal.epsilon_node > 0)
    agent.ledger.assert_within(cal.kappa * cal.epsilon_node, rho=agent.rho_budget)


def test_runner_sizes_the_ledger_by_round_and_silo() -> None:
    """``simulate(..., ledger=True)`` builds Ledger(n_runs, T·M) from ``agent.ledger_users``."""
    from privenv.simulation import simulate

    T = 12
    agent = make("fed-linucb", _env(2, T), 2, batch=4, **LDP)
    assert agent.ledger_users == T * SMALL["M"]
    simulate(agent, _env(2, T), n_runs=2, ledger=True)
    assert agent.ledger.n_users == T * SMALL["M"] and agent.ledger.rho_spent().max() > 0


def test_ledger_needs_round_silo_users() -> None:
    env = _env(1, 10)
    agent = make("fed-linucb", env, 1, batch=2, **LDP)
    agent.ledger = Ledger(1, 10)
    with pytest.raises(ValueError, match="horizon \\* M"):
        _drive(agent, env)


def test_nonprivate_agent_charges_nothing() -> None:
    env = _env(1, 10)
    agent = make("fed-linucb", env, 1, batch=2)
    agent.ledger = Ledger(1, 30)
    _drive(agent, env)
    assert agent.ledger.releases() == 0


# -- the side channel of adaptive synchronisation ------------------------------------------------


@pytest.mark.parametrize(("kw", "min_moved"), [({}, 6), (dict(LDP, D=3.0), 2)],
                         ids=["none", "ldp"])
def test_adaptive_sync_times_move_with_one_user_fixed_batches_never(kw, min_moved) -> None:
    """Replacing the user of round 3 in silo 0 (all-zero features, reward 0) moves FedUCB's
    public sync times in some of 12 runs, with or without noise on the messages (measured: 9 and
    3 runs; with LDP λ is large, the log-det gains are small and fewer syncs happen, D = 3 gives
    a few); the fixed schedule's times are identical. Deterministic given the seeds."""
    n, T = 12, 200
    env = _env(n, T)
    ada, fixed = [], []
    for replace in (None, (3, 0), None):
        agent = make("feducb-adaptive", env, n, **kw)
        _drive(agent, env, seed=6, replace=replace)
        ada.append(agent.sync_times.copy())
        fed = make("fed-linucb", env, n, batch=10, **{k: v for k, v in kw.items() if k != "D"})
        _drive(fed, env, seed=6, replace=replace)
        fixed.append(fed.sync_times.copy())
    np.testing.assert_array_equal(ada[0], ada[2])  # deterministic
    moved = np.any(ada[0] != ada[1], axis=1)
    assert moved.sum() >= min_moved, moved
    np.testing.assert_array_equal(fixed[0], fixed[1])
    assert np.all(fixed[0].sum(axis=1) == 20)


def test_adaptive_declares_no_guarantee_and_exposes_sync_record() -> None:
    env = _env(2, 120)
    assert make("feducb-adaptive", env, 2).D == pytest.approx(120 * math.log(3 * 120) / (3 * 3))
    agent = make("feducb-adaptive", env, 2, D=1.0, **LDP)
    assert not agent.privacy.is_private
    assert agent.message_privacy.model == "silo-local"
    assert agent.calibration.kappa == federated_kappa(120)
    agent.ledger = Ledger(2, 120 * 3)
    _drive(agent, env, seed=1)
    info = agent.episode_info()
    np.testing.assert_array_equal(info["sync_rounds"], agent.sync_times.sum(axis=1))
    assert np.all(info["sync_rounds"] >= 1)
    np.testing.assert_array_equal(info["floats_sent_per_silo"], info["sync_rounds"] * 9)
    rounds = agent.sync_rounds_of(0)
    assert rounds.size == info["sync_rounds"][0] and np.all(np.diff(rounds) > 0)
    agent.ledger.assert_within(0.0, rho=agent.rho_budget)  # the ledger cannot see the schedule


def test_adaptive_with_huge_threshold_never_syncs() -> None:
    env = _env(1, 50)
    agent = make("feducb-adaptive", env, 1, D=1e12)
    _drive(agent, env)
    assert agent.episode_info()["sync_rounds"][0] == 0


# -- bad input ----------------------------------------------------------------------------------


def _make(name="fed-linucb", **kw):
    return make(name, _env(1, 60), 1, **kw)


@pytest.mark.parametrize(("build", "exc", "match"), [
    (lambda: _make(protocol="central"), ValueError, "protocol"),
    (lambda: _make(batch=0), ValueError, "batch"),
    (lambda: _make(batch=61), ValueError, "batch"),
    (lambda: _make(protocol="ldp"), ValueError, "reward_bound"),  # Gaussian noise: no bound
    (lambda: _make(protocol="ldp", reward_bound=0.0), ValueError, "reward_bound"),
    (lambda: _make(epsilon=0.0), ValueError, "epsilon"),
    (lambda: _make(delta=1.5), ValueError, "delta"),
    (lambda: _make(alpha=0.0), ValueError, "alpha"),
    (lambda: _make(lambda_=0.0), ValueError, "lambda_"),
    (lambda: _make(beta=-1.0), ValueError, "beta"),
    (lambda: _make(sigma=-1.0), ValueError, "sigma"),
    (lambda: _make(protocol="sdp-amplification", epsilon=2.0, reward_bound=1.0), ValueError,
     "epsilon"),
    (lambda: _make(protocol="sdp-vector-sum", epsilon=0.2, delta=0.1), ValueError,
     "reward_bound"),
    (lambda: _make("feducb-adaptive", protocol="sdp-vector-sum", epsilon=0.2, delta=0.1,
                   reward_bound=1.0), ValueError, "batch"),
    (lambda: _make("feducb-adaptive", D=0.0), ValueError, "D"),
    (lambda: FedLinUCB(M=0, K=3, d=2, horizon=10, batch=2), ValueError, "M"),
    (lambda: FedUCBAdaptive(M=2, K=3, d=2, horizon=0), ValueError, "horizon"),
])
def test_bad_construction(build, exc, match) -> None:
    with pytest.raises(exc, match=match):
        build()


def test_bad_step_inputs() -> None:
    agent = _make()
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="observations"):
        agent.act_batch(np.zeros((1, 3, 5, 2)))
    with pytest.raises(RuntimeError, match="act"):
        agent.observe_batch(np.zeros((1, 3), dtype=int), np.zeros((1, 3)), None)
    obs = np.full((1, 3, 5, 3), 0.1)
    a = agent.act_batch(obs)
    with pytest.raises(ValueError, match="finite"):
        agent.observe_batch(a, np.array([[0.0, np.nan, 0.0]]), obs)
    agent.act_batch(np.full((1, 3, 5, 3), 1.0))  # ‖φ‖ = √3 > 1
    with pytest.raises(ValueError, match="norm"):
        agent.observe_batch(a, np.zeros((1, 3)), obs)


def test_vector_sum_scale_is_the_users_lever_when_the_check_refuses_s() -> None:
    """At (ε, δ) = (1, 1e-4), M = 4, T = 100 the default s = 1 is refused (the Gaussian-limit
    check fails) with a message naming s; a larger s calibrates, with more binomial trials."""
    env = _env(1, 100)
    kw = dict(protocol="sdp-vector-sum", epsilon=1.0, delta=1e-4, batch=5, reward_bound=1.0)
    with pytest.raises(ValueError, match="increase s"):
        make("fed-linucb", env, 1, **kw)
    agent = make("fed-linucb", env, 1, vector_sum_scale=8.0, **kw)
    assert agent.vector_sum_scale == 8.0
    assert all(p.s == 8.0 for p in agent.calibration.vector_sum)
    with pytest.raises(ValueError, match="vector_sum_scale"):
        make("fed-linucb", env, 1, vector_sum_scale=0.0, **kw)


@pytest.mark.parametrize(("name", "kw"), [("fed-linucb", LDP), ("super-agent", CENTRAL),
                                          ("feducb-adaptive", LDP)])
def test_the_exact_sampler_reaches_the_protocol_and_the_guarantee(name, kw) -> None:
    """sampler='exact': the calibration and its trees use it, the declared guarantee says so
    (ε′ ≤ ε), and the shuffle protocols refuse it with one line naming ``sampler``."""
    env = _env(1, 20)
    batch = {"batch": 5} if name == "fed-linucb" else {}
    agent = make(name, env, 1, **kw, sampler="exact", **batch)
    g = agent.calibration.guarantee
    assert g.sampler == "exact" and g.epsilon <= kw["epsilon"]
    if name != "feducb-adaptive":  # that one declares no privacy (its schedule leaks)
        assert agent.privacy == g
    agent.reset(seed=0)
    trees = ([agent.protocol.randomizer.gram_tree] if kw["protocol"] == "ldp"
             else [agent.protocol.gram_analyzer.tree])
    assert all(t.sampler == "exact" for t in trees)
    with pytest.raises(ValueError, match="sampler"):
        make("fed-linucb", env, 1, **SDP, batch=5, sampler="exact")


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("super-agent-central", "super-agent-central-exact")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
