"""AdaP-TT, AdaP-TT* and TTUCB-DPA (paper 3, Algorithms 5, 9, 10, 11; eqs. 11–14, Lemma 23)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.adap_tt import (
    TTUCBDPA,
    AdaPTT,
    AdaPTTStar,
    DAFWrapper,
    NonPrivateAdaPTT,
    daf_bonus,
    daf_empirical_threshold,
    daf_glr_threshold,
    h_fn,
    k_fn,
    lambert_w_bar,
    private_transport,
    star_empirical_threshold,
    star_glr_threshold,
)
from privenv.agents.top_two import C_G, bonus, bonus_total_term, glr_threshold
from privenv.privacy.ledger import PrivacyBudgetExceeded
from privenv.simulation import play, simulate

DELTA = 0.01
PI2 = math.pi**2
ENV = "BestArmIdentification-v0"


# -- eqs. 11–14 and Lemma 23: hand-computed values ----------------------------------------------


def test_k_and_bonus_eq11_hand_values():
    assert k_fn(1.0) == 2.0 and k_fn(4.0) == 4.0 and k_fn(1024.0) == 12.0
    # ω_a = 4, k = 4, ε = 2: √(4/4) + 4/(2·4) = 1.5
    assert daf_bonus(4.0, k_fn(4.0), 2.0) == pytest.approx(1.5)
    # the default bonus uses k(‖N‖₁): ω_a = 4, ‖N‖₁ = 64, k = 8, ε = 1: √2 + 2
    agent = AdaPTT(K=2, epsilon=1.0)
    k_total = bonus_total_term(agent.params, 64)
    assert bonus(agent.params, 4.0, k_total) == pytest.approx(math.sqrt(2) + 2)
    literal = AdaPTT(K=2, epsilon=1.0, bonus="literal")
    unused = bonus_total_term(literal.params, 64)
    assert bonus(literal.params, 4.0, unused) == pytest.approx(1.0 + 1.0)


def test_daf_threshold_eq12_hand_value():
    # K = 5, δ = 0.01, ε = 0.5, σ = 1/2, ω_a = 2 (k = 3), ω_b = 4 (k = 4):
    # δ′ = 18δ/(3²·4²·π⁴); c^G(ω, δ′) = 2𝒞_G(log(4/δ′)/2) + 2 log(4 + log 2) + 2 log(4 + log 4)
    d_prime = 18 * DELTA / (9 * 16 * math.pi**4)
    c_G = 2 * C_G(math.log(4 / d_prime) / 2) + 2 * math.log(4 + math.log(2)) + 2 * math.log(
        4 + math.log(4)
    )
    laplace = (math.log(PI2 * 5 * 9 / (3 * DELTA)) ** 2 / 2
               + math.log(PI2 * 5 * 16 / (3 * DELTA)) ** 2 / 4) / (0.25 * 0.25)
    got = daf_glr_threshold(np.array(2.0), np.array(4.0), K=5, delta=DELTA, epsilon=0.5,
                            sigma=0.5)
    assert float(got) == pytest.approx(2 * c_G + laplace, rel=1e-12)
    # the same through eq. 4's implementation with the reduced δ′
    via_eq4 = glr_threshold(np.array([2.0]), np.array([4.0]), K=5, delta=d_prime)[0]
    assert float(got) == pytest.approx(2 * via_eq4 + laplace, rel=1e-12)
    # and symmetric in (a, b)
    assert float(daf_glr_threshold(4.0, 2.0, 5, DELTA, 0.5, 0.5)) == pytest.approx(float(got))


def test_private_transport_eq13_hand_values():
    # gap 0.4, ω = (2, 2), σ = ½: ε = 0.2 → 0.4·0.1/(2·¼·1) = 0.08; ε = 10 → W^G = 0.32
    assert private_transport(0.9, 0.5, 2.0, 2.0, 0.2, 0.5) == pytest.approx(0.08)
    assert private_transport(0.9, 0.5, 2.0, 2.0, 10.0, 0.5) == pytest.approx(0.32)
    assert private_transport(0.5, 0.9, 2.0, 2.0, 0.2, 0.5) == 0.0


def _root_by_bisection(x: float) -> float:
    lo, hi = 1.0, x + 2 * math.log(x) + 2  # z − log z is increasing on [1, ∞)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid - math.log(mid) < x else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("x", [1.0, 1.5, 3.0, 12.0, 90.0, 650.0, 750.0, 1e5])
def test_lambert_w_bar_solves_its_equation(x):
    z = float(lambert_w_bar(x))
    assert z == pytest.approx(_root_by_bisection(x), rel=1e-12, abs=1e-7)
    assert z >= 1.0
    if x > 3:
        assert abs(z - (x + math.log(x))) < 1.0  # W̄₋₁(x) ≈ x + log x (Lemma 23)


def test_lambert_w_bar_rejects_x_below_one():
    with pytest.raises(ValueError, match="x >= 1"):
        lambert_w_bar(0.5)


def test_h_hand_value():
    # x = 4: k = 4; argument 2 log(π²·5·16/(2δ)) + 4 log(4 + log 4) + ½
    arg = 2 * math.log(PI2 * 5 * 16 / (2 * DELTA)) + 4 * math.log(4 + math.log(4)) + 0.5
    assert float(h_fn(4.0, K=5, delta=DELTA)) == pytest.approx(_root_by_bisection(arg) / 2,
                                                               rel=1e-12)


def test_star_threshold_eq14_both_cases_hand_values():
    K, eps, sigma, wa, wb = 5, 0.4, 0.5, 8.0, 16.0
    ha, hb = float(h_fn(wa, K, DELTA)), float(h_fn(wb, K, DELTA))
    ka, kb = 5.0, 6.0
    small = (float(daf_glr_threshold(wa, wb, K, 2 * DELTA / 3, eps, sigma)) / 2
             + math.sqrt(2) / (eps * sigma)
             * (math.sqrt(ha / wa) * math.log(PI2 * K * ka**2 / (2 * DELTA))
                + math.sqrt(hb / wb) * math.log(PI2 * K * kb**2 / (2 * DELTA))))
    large = (math.log(PI2 * K * kb / (2 * DELTA)) / (2 * sigma**2)
             + eps / (2 * math.sqrt(2) * sigma) * (math.sqrt(wa * ha) + math.sqrt(wb * hb)))
    # (μ̃_a − μ̃_b)₊ < ε/2 = 0.2 → first case (negative gaps too); ≥ ε/2 → second case
    for gap, want in [(0.1999, small), (-0.3, small), (0.2, large), (0.9, large)]:
        got = float(star_glr_threshold(gap, wa, wb, K, DELTA, eps, sigma))
        assert got == pytest.approx(want, rel=1e-12)


def test_empirical_thresholds_hand_values():
    L = math.log(1 / DELTA)
    # public-code AdaP-TT rule, Ñ = (e, e): L + 2 log 2 + (2/e) L²/ε²
    got = float(daf_empirical_threshold(math.e, math.e, DELTA, 2.0))
    assert got == pytest.approx(L + 2 * math.log(2) + 2 / math.e * L * L / 4)
    # our AdaP-TT* rule (eq. 14's asymptotic form at σ = 1 + log(1 + log Ñ)), ω = (e, e), ε = 1
    loglog = 2 * math.log(2)
    small = L + L * L / math.e + math.sqrt(2) * 2 / math.sqrt(math.e) * L**1.5 + loglog
    large = L / 2 + 1 / (2 * math.sqrt(2)) * 2 * math.sqrt(math.e) * math.sqrt(L) + loglog
    assert float(star_empirical_threshold(0.1, math.e, math.e, DELTA, 1.0)) == pytest.approx(small)
    assert float(star_empirical_threshold(0.5, math.e, math.e, DELTA, 1.0)) == pytest.approx(large)
    # low privacy (gap < ε/2): within the ε-terms of AdaP-TT's public-code rule
    w = np.array([64.0, 1e4])
    a, b = star_empirical_threshold(0.0, w, w, DELTA, 1e3), daf_empirical_threshold(w, w, DELTA,
                                                                                    1e3)
    assert np.allclose(a, b, rtol=1e-2)


@settings(max_examples=200, deadline=None)
@given(
    eps=st.floats(1e-4, 1e3),
    delta=st.floats(1e-12, 0.5),
    wa=st.floats(1.0, 1e9),
    wb=st.floats(1.0, 1e9),
    gap=st.floats(-1.0, 1.0),
    total=st.floats(1.0, 1e9),
)
def test_thresholds_and_bonuses_finite(eps, delta, wa, wb, gap, total):
    K = 5
    values = [
        daf_glr_threshold(wa, wb, K, delta, eps, 0.5),
        star_glr_threshold(gap, wa, wb, K, delta, eps, 0.5),
        daf_empirical_threshold(wa, wb, delta, eps),
        star_empirical_threshold(gap, wa, wb, delta, eps),
        h_fn(wa, K, delta),
        daf_bonus(wa, k_fn(total), eps),
        daf_bonus(wa, k_fn(wa), eps),
        private_transport(gap, 0.0, wa, wb, eps, 0.5),
    ]
    for v in values:
        assert np.all(np.isfinite(v)) and np.all(np.asarray(v) >= 0.0)


# -- the doubling-and-forgetting structure -------------------------------------------------------


class Recording(AdaPTT):
    """AdaP-TT that records every release (t, run, arm, count, Ñ) and every action (it reads the
    kernel's state around each step: a release is a phase count that went up)."""

    def reset_state(self):
        super().reset_state()
        self.releases = []
        self.actions = []

    def observe_batch(self, actions, rewards, observations):
        self.actions.append(np.asarray(actions).copy())
        before, t = self.phases.copy(), self.t
        super().observe_batch(actions, rewards, observations)
        for r, a in zip(*np.nonzero(self.phases != before), strict=True):
            self.releases.append((t, int(r), int(a), int(self.counts[r, a]),
                                  int(self.n_tilde[r, a])))


@pytest.fixture(scope="module")
def recorded():
    agent = Recording(K=5, epsilon=1.0, threshold="empirical", reward_mode="cost", n_runs=6)
    res = simulate(agent, ENV, n_runs=6, seed=3, horizon=40_000, env_kwargs={"instance": "mu3"})
    return agent, res


def test_phases_double(recorded):
    agent, _ = recorded
    for r in range(agent.n_runs):
        for a in range(agent.K):
            rel = [(c, n) for (_, rr, aa, c, n) in agent.releases if rr == r and aa == a]
            counts = [c for c, _ in rel]
            assert counts == [2**j for j in range(len(counts))]  # releases at counts 1, 2, 4, 8, …
            assert [n for _, n in rel] == [1] + [c // 2 for c in counts[1:]]  # Ñ = phase length
            assert agent.phases[r, a] == len(counts)
            # the unfinished phase: the next release would be at twice the last count
            assert counts[-1] <= agent.counts[r, a] < 2 * counts[-1]


def test_stopping_only_at_phase_ends(recorded):
    agent, res = recorded
    assert agent.stopped.all()
    for r in range(agent.n_runs):
        tau = int(res.episode["stopping_time"][r])
        assert tau == agent.counts[r].sum()  # every pull counts, unfinished phases included
        release_steps = {t for (t, rr, *_) in agent.releases if rr == r}
        assert tau - 1 in release_steps  # decided right after the pull that ended a phase


def test_adaptivity_rounds_reported(recorded):
    agent, res = recorded
    rounds = res.episode["adaptivity_rounds"]
    assert np.array_equal(rounds, agent.phases.sum(axis=1))
    assert np.array_equal(rounds, [sum(rr == r for (_, rr, *_) in agent.releases)
                                   for r in range(agent.n_runs)])


def test_ttucb_dpa_means_use_all_rewards_and_no_noise():
    agent = TTUCBDPA(K=3, n_runs=2)
    agent.reset(seed=0)
    obs = np.zeros((2, 1))
    rewards = {0: [1.0, 0.0, 0.0, 1.0], 1: [0.5, 0.5], 2: [0.2]}
    seq = [0, 1, 2, 0, 0, 1, 0]
    seen = {a: 0 for a in range(3)}
    for a in seq:
        act = np.array([a, a])
        agent.observe_batch(act, np.full(2, rewards[a][seen[a]]), obs)
        seen[a] += 1
    # arm 0: releases at counts 1, 2, 4 with the cumulative means 1, ½, ½
    assert agent.mu_tilde[0, 0] == pytest.approx(0.5) and agent.n_tilde[0, 0] == 4
    assert agent.mu_tilde[0, 1] == pytest.approx(0.5) and agent.n_tilde[0, 1] == 2
    assert agent.phases[0].tolist() == [3, 2, 1]
    assert agent.privacy.model == "none"


def test_non_private_adap_tt_forgets_and_adds_no_noise():
    """NeurIPS 2023 version, Theorem 6: the DAF means of the last phase, exactly, no noise."""
    agent = NonPrivateAdaPTT(K=2, n_runs=1)
    agent.reset(seed=0)
    obs = np.zeros((1, 1))
    for a, r in [(0, 1.0), (1, 0.0), (0, 0.0), (0, 1.0), (0, 0.5)]:
        agent.observe_batch(np.array([a]), np.array([r]), obs)
    # arm 0 rewards 1 | 0 | 1 ½: phases end at counts 1, 2, 4 → last phase mean (1 + ½)/2
    assert agent.mu_tilde[0, 0] == 0.75 and agent.n_tilde[0, 0] == 2
    assert agent.privacy.model == "none" and agent.forget


def test_daf_means_forget_previous_phases():
    agent = AdaPTT(K=2, epsilon=1e12, n_runs=1)  # noise scale 1e−12: the phase means show
    agent.reset(seed=0)
    obs = np.zeros((1, 1))
    for a, r in [(0, 1.0), (1, 0.0), (0, 0.0), (0, 1.0), (0, 1.0)]:
        agent.observe_batch(np.array([a]), np.array([r]), obs)
    # arm 0 rewards 1 | 0 | 1 1: phases end at counts 1, 2, 4 → last phase mean (1 + 1)/2
    assert agent.mu_tilde[0, 0] == pytest.approx(1.0, abs=1e-9) and agent.n_tilde[0, 0] == 2


# -- correctness on bandit instances -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_every_run_stops_on_mu1_total_bonus(epsilon):
    n = 20
    res = simulate("adap-tt", ENV, n_runs=n, seed=0, horizon=20_000_000,
                   env_kwargs={"instance": "mu1"},
                   agent_kwargs={"epsilon": epsilon, "delta": DELTA})
    assert (res.steps < res.horizon).all()
    assert res.episode["correct"].all()


@pytest.mark.parametrize("agent, kwargs", [
    ("adap-tt", {"threshold": "empirical", "epsilon": 1.0}),
    ("adap-tt-star", {"threshold": "empirical", "epsilon": 1.0}),
    ("adap-tt", {"threshold": "empirical", "epsilon": 0.1}),
    ("adap-tt-star", {"threshold": "empirical", "epsilon": 0.1}),
    ("ttucb-dpa", {"threshold": "empirical"}),
    ("adap-tt-nonprivate", {"threshold": "empirical"}),
])
def test_delta_correct_sanity_easy_instance(agent, kwargs):
    # μ3 = (0, ¼, ½, ¾, 1) at δ = 0.1: if the error rate were ≤ δ, P(errors > bound) ≤ 1e−6
    n, delta = 100, 0.1
    res = simulate(agent, ENV, n_runs=n, seed=11, horizon=2_000_000,
                   env_kwargs={"instance": "mu3"}, agent_kwargs={"delta": delta, **kwargs})
    assert (res.steps < res.horizon).all()
    errors = int((~res.episode["correct"].astype(bool)).sum())
    assert errors <= binom.isf(1e-6, n, delta)


def test_theory_thresholds_stop_on_easy_instance():
    for name in ("adap-tt", "adap-tt-star", "ttucb-dpa", "adap-tt-nonprivate"):
        kwargs = {"epsilon": 10.0} if name.startswith("adap-tt") and "non" not in name else {}
        res = simulate(name, ENV, n_runs=8, seed=2, horizon=1_000_000,
                       env_kwargs={"instance": "mu3"}, agent_kwargs=kwargs)
        assert (res.steps < res.horizon).all(), name
        assert res.episode["correct"].all(), name


# -- determinism and the two runners ------------------------------------------------------------


NON_PRIVATE = ("ttucb-dpa", "adap-tt-nonprivate")


@pytest.mark.parametrize("name", ["adap-tt", "adap-tt-star", *NON_PRIVATE])
def test_same_seed_same_run_across_batch_sizes(name):
    kw = {"env_kwargs": {"instance": "mu3"}, "horizon": 3000, "seed": 5}
    agent_kwargs = {} if name in NON_PRIVATE else {"epsilon": 0.5}
    batch = simulate(name, ENV, n_runs=4, agent_kwargs=agent_kwargs, **kw)
    for i in (1, 3):
        alone = simulate(name, ENV, n_runs=1, first_run=i, agent_kwargs=agent_kwargs, **kw)
        assert alone.steps[0] == batch.steps[i]
        for key in ("stopping_time", "recommendation", "adaptivity_rounds"):
            assert alone.episode[key][0] == batch.episode[key][i]
        assert alone.regret[0] == batch.regret[i]


@pytest.mark.parametrize("name", ["adap-tt", "adap-tt-star", *NON_PRIVATE])
def test_gym_loop_matches_simulate(name):
    agent_kwargs = {} if name in NON_PRIVATE else {"epsilon": 0.5}
    env = gym.make(ENV, instance="mu3", horizon=3000)
    agent = make(name, env, n_runs=1, **agent_kwargs)
    out = play(agent, env, seed=9, run=2)
    res = simulate(name, ENV, n_runs=1, first_run=2, seed=9, horizon=3000,
                   env_kwargs={"instance": "mu3"}, agent_kwargs=agent_kwargs)
    assert out["steps"] == res.steps[0]
    assert out["info"]["stopping_time"] == res.episode["stopping_time"][0]
    assert out["info"]["recommendation"] == res.episode["recommendation"][0]
    assert out["regret"] == pytest.approx(res.regret[0], abs=1e-9)


# -- privacy ledger -------------------------------------------------------------------------------


def released_mask(agent: Recording, n_users: int) -> np.ndarray:
    """(run, pull t) pairs whose reward entered a completed phase, from the actions alone: the
    j-th pull of arm a was released iff j ≤ the count at arm a's last phase end."""
    actions = np.stack(agent.actions, axis=1)  # (runs, steps)
    mask = np.zeros((agent.n_runs, n_users), dtype=bool)
    for r in range(agent.n_runs):
        seen = np.zeros(agent.K, dtype=np.int64)
        for t, a in enumerate(actions[r]):
            if a >= agent.K:
                break
            seen[a] += 1
            mask[r, t] = seen[a] <= agent.phase_start[r, a]
    return mask


RecordingWrapper = type("RecordingWrapper", (Recording, DAFWrapper), {})


@pytest.mark.parametrize("cls, kw", [
    (Recording, {}), (type("RecordingStar", (Recording, AdaPTTStar), {}), {}),
    (RecordingWrapper, {"sampling": "lucb"}), (RecordingWrapper, {"sampling": "uniform"}),
], ids=["adap-tt", "adap-tt-star", "wrapper-lucb", "wrapper-uniform"])
@pytest.mark.parametrize("instance, horizon", [("mu3", 5000), ("mu1", 3000)])
def test_ledger_each_released_reward_charged_exactly_once(cls, kw, instance, horizon):
    eps = 0.5
    agent = cls(K=5, epsilon=eps, reward_mode="cost", n_runs=5, **kw)
    simulate(agent, ENV, n_runs=5, seed=1, horizon=horizon, env_kwargs={"instance": instance},
             ledger=True)
    mask = released_mask(agent, horizon)
    assert mask[:, :5].all()  # the initial pulls are released (Lap(1/ε))
    if instance == "mu1":  # the budget cuts phases: unreleased pulls exist and are charged 0
        assert (~mask).sum() > 0 and not agent.stopped.all()
    agent.ledger.assert_each_user_charged_exactly(eps, users_mask=mask)


class CumulativeMean(Recording):
    """Mutation (the audit hook ``forget = False``): no forgetting — each phase mean uses all the
    arm's rewards so far."""

    forget = False


class ReusedBoundaryReward(Recording):
    """Mutation: the reward that ends a phase is also put into the next phase (off by one),
    injected into the kernel's state after each step."""

    def observe_batch(self, actions, rewards, observations):
        before, t = self.phases.copy(), self.state.t.copy()
        super().observe_batch(actions, rewards, observations)
        values = np.clip(self.feedback(rewards, observations), 0.0, 1.0)
        for r in np.flatnonzero((self.phases != before).any(axis=1)):
            self.phase_sum[r, actions[r]] += values[r]
            self.contrib[r, actions[r], t[r]] = True


class HalfNoise(Recording):
    """Mutation (the audit hook ``noise_multiplier``): Laplace scale halved (1/(2εÑ))."""

    noise_multiplier = 0.5


@pytest.mark.parametrize("mutant", [CumulativeMean, ReusedBoundaryReward, HalfNoise])
def test_ledger_catches_mutations(mutant):
    eps, horizon = 0.5, 3000
    agent = mutant(K=5, epsilon=eps, reward_mode="cost", n_runs=3)
    simulate(agent, ENV, n_runs=3, seed=1, horizon=horizon, env_kwargs={"instance": "mu3"},
             ledger=True)
    with pytest.raises(PrivacyBudgetExceeded):
        agent.ledger.assert_each_user_charged_exactly(eps, users_mask=released_mask(agent,
                                                                                    horizon))


# -- the generic wrapper (NeurIPS 2023 version, Appendix D.1) ------------------------------------


@pytest.mark.parametrize("threshold", ["theory", "empirical"])
def test_wrapper_with_the_top_two_rule_is_adap_tt(threshold):
    """D.2: AdaP-TT is the wrapper instantiated with the Top Two sampling rule, run for run."""
    kw = dict(n_runs=6, seed=4, horizon=200_000, env_kwargs={"instance": "mu3"})
    a = simulate("adap-tt", ENV, agent_kwargs={"epsilon": 0.5, "threshold": threshold}, **kw)
    w = simulate("daf-wrapper", ENV, agent_kwargs={"epsilon": 0.5, "threshold": threshold,
                                                   "sampling": "top-two"}, **kw)
    for key in ("stopping_time", "recommendation", "adaptivity_rounds"):
        assert np.array_equal(a.episode[key], w.episode[key])
    assert str(a.privacy) == str(w.privacy)


def _wrapper_trace(sampling, horizon=4000):
    """(actions, states before each action) of one run of the wrapper, through the Gym loop."""
    return _trace("daf-wrapper", horizon, sampling=sampling)


def _trace(name, horizon, seed=6, **kwargs):
    """(action, (N, μ̃, Ñ) before it) of one run of ``name`` at ε = 1 on μ1, through the Gym
    loop, and the agent."""
    env = gym.make(ENV, instance="mu1", horizon=horizon)
    agent = make(name, env, n_runs=1, epsilon=1.0, **kwargs)
    obs, _ = env.reset(seed=seed)
    agent.reset(seed=seed)
    trace = []
    for _ in range(horizon):
        state = (agent.counts[0].copy(), agent.mu_tilde[0].copy(), agent.n_tilde[0].copy())
        a = int(agent.act(obs))
        trace.append((a, state))
        if a >= agent.K:
            break
        obs, reward, *_ = env.step(a)
        agent.observe(a, reward, obs)
    return trace, agent


def test_wrapper_uniform_rule_is_round_robin():
    trace, agent = _wrapper_trace("uniform")
    pulls = [a for a, _ in trace if a < agent.K]
    assert pulls == [t % agent.K for t in range(len(pulls))]


def test_wrapper_lucb_rule_pulls_the_leader_or_its_strongest_rival():
    """From the state before each step: h = argmax μ̃, l = argmax_{a≠h} μ̃_a + b^{G,ε}_a(Ñ) with
    k(‖N‖₁) (eq. 11), and the one of (h, l) with fewer pulls, h on ties."""
    trace, agent = _wrapper_trace("lucb")
    p = agent.kernel_params()
    checked = 0
    for a, (counts, mu, w) in trace[agent.K:]:
        if a >= agent.K:
            break
        total = int(counts.sum())
        h = int(np.argmax(mu))
        index = mu + daf_bonus(w, k_fn(total), 1.0)
        index[h] = -np.inf
        rival = int(np.argmax(index))
        assert a == (h if counts[h] <= counts[rival] else rival)
        assert bonus(p, w[rival], bonus_total_term(p, total)) == pytest.approx(
            daf_bonus(w[rival], k_fn(total), 1.0))
        checked += 1
    assert checked > 1000 and len({a for a, _ in trace[agent.K:]}) > 2


@pytest.mark.parametrize("sampling", ["uniform", "lucb"])
def test_wrapper_delta_correct_sanity_easy_instance(sampling):
    # μ3 = (0, ¼, ½, ¾, 1) at δ = 0.1: if the error rate were ≤ δ, P(errors > bound) ≤ 1e−6
    n, delta = 100, 0.1
    res = simulate("daf-wrapper", ENV, n_runs=n, seed=11, horizon=2_000_000,
                   env_kwargs={"instance": "mu3"},
                   agent_kwargs={"delta": delta, "epsilon": 1.0, "sampling": sampling})
    assert (res.steps < res.horizon).all()
    assert int((~res.episode["correct"].astype(bool)).sum()) <= binom.isf(1e-6, n, delta)
    assert res.privacy.model == "central" and res.privacy.epsilon == 1.0


def test_wrapper_bad_sampling_rule():
    with pytest.raises(ValueError, match="sampling"):
        DAFWrapper(K=3, sampling="thompson")


def test_privacy_declared():
    g = AdaPTTStar(K=3, epsilon=0.25).privacy
    assert (g.model, g.epsilon, g.delta, g.unit) == ("central", 0.25, 0.0, "reward")


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [AdaPTT, AdaPTTStar])
@pytest.mark.parametrize("kwargs, name", [
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": math.nan}, "epsilon"),
    ({"epsilon": math.inf}, "epsilon"),
    ({"bonus": "log"}, "bonus"),
    ({"threshold": "heuristic"}, "threshold"),
    ({"delta": 1.0}, "delta"),
    ({"sigma": 0.0}, "sigma"),
    ({"beta": 1.0}, "beta"),
    ({"reward_mode": "raw"}, "reward_mode"),
])
def test_bad_input(cls, kwargs, name):
    with pytest.raises(ValueError, match=name):
        cls(K=3, **kwargs)


def test_bad_input_dpa():
    with pytest.raises(ValueError, match="threshold"):
        TTUCBDPA(K=3, threshold="private")
    with pytest.raises(ValueError, match="alpha"):
        TTUCBDPA(K=3, alpha=1.0)


# -- the authors' public-code choices, as options (docs/results/bai.md) -------------------------


def test_public_code_sampling_rule_leader_challenger_and_coin():
    """``bonus="public-code"``, ``challenger_bonus="kappa"``, ``beta_rule="coin"``: from the state
    before each step, the leader is argmax μ̃_a + √(log n/(2Ñ_a)) + log n/(εÑ_a) and the
    challenger argmin_{a≠B} (μ̃_B − μ̃_a + 1/(1 + √n))/√(1/N_B + 1/N_a) (n = pulls so far); the
    pulled arm is one of them, the leader in a fraction β of the steps where they differ
    (two-sided binomial test, false alarm 10⁻³ at the fixed seed), and the β-tracking counters
    are never touched."""
    kw = dict(threshold="empirical", bonus="public-code", challenger_bonus="kappa")
    trace, agent = _trace("adap-tt", 6000, beta_rule="coin", **kw)
    leader_pulls = other = 0
    for a, (counts, mu, w) in trace[agent.K:]:
        if a >= agent.K:
            break
        n = int(counts.sum())
        leader = int(np.argmax(mu + np.sqrt(np.log(n) / (2 * w)) + np.log(n) / w))
        cost = (mu[leader] - mu + 1 / (1 + math.sqrt(n))) / np.sqrt(1 / counts[leader] + 1 / counts)
        cost[leader] = np.inf
        challenger = int(np.argmin(cost))
        assert a in (leader, challenger)
        if leader != challenger:
            leader_pulls += a == leader
            other += 1
    assert other > 1000
    assert binom.cdf(leader_pulls, other, 0.5) > 5e-4
    assert binom.sf(leader_pulls - 1, other, 0.5) > 5e-4
    assert (agent.leader_counts == 0).all() and (agent.leader_pulls == 0).all()
    tracking, _ = _trace("adap-tt", 6000, **kw)
    assert [a for a, _ in tracking] != [a for a, _ in trace]


@pytest.mark.parametrize("candidate", ["argmax", "leader"])
def test_stop_candidate_at_the_stop(candidate):
    """At the stop (right after a phase end), every pair (c, b), b ≠ c, passes the empirical rule
    with the squared gap: c = â = argmax μ̃ (Algorithm 9) or c = the UCB leader of that phase end
    (``stop_candidate="leader"``, the public code); the recommendation is â either way."""
    agent = AdaPTT(K=5, epsilon=1.0, threshold="empirical", stop_candidate=candidate,
                   reward_mode="cost", n_runs=20)
    simulate(agent, ENV, n_runs=20, seed=2, horizon=10**6, env_kwargs={"instance": "mu3"})
    assert agent.stopped.all()
    differs = 0
    for r in range(agent.n_runs):
        mu, w, tau = agent.mu_tilde[r], agent.n_tilde[r], int(agent.stopping_time[r])
        a_hat = int(np.argmax(mu))
        assert agent.recommendation[r] == a_hat
        c = a_hat if candidate == "argmax" else int(np.argmax(mu + daf_bonus(w, k_fn(tau), 1.0)))
        differs += c != a_hat
        others = np.arange(agent.K) != c
        stat = 0.5 * (mu[c] - mu[others]) ** 2 / (1 / w[c] + 1 / w[others])
        assert (stat >= daf_empirical_threshold(w[c], w[others], DELTA, 1.0)).all()
    if candidate == "argmax":
        assert differs == 0


def test_released_pulls_omit_unfinished_phases(recorded):
    """``released_pulls`` = Σ_a (the count at arm a's last phase end) ≤ τ: the stopping time the
    public code reports."""
    agent, res = recorded
    last = {}
    for (_, r, a, c, _) in agent.releases:
        last[(r, a)] = c
    expected = [sum(last[(r, a)] for a in range(agent.K)) for r in range(agent.n_runs)]
    assert res.episode["released_pulls"].tolist() == expected
    assert (res.episode["released_pulls"] < res.episode["stopping_time"]).all()


def test_paper_defaults_draw_no_coin_and_keep_the_runs():
    """The defaults are Algorithm 9's: the same runs as with every option set to its default by
    name (the golden tests keep the numbers of earlier versions)."""
    kw = dict(n_runs=4, seed=1, horizon=10**6, env_kwargs={"instance": "mu3"})
    base = simulate("adap-tt", ENV, agent_kwargs={"epsilon": 0.5}, **kw)
    named = simulate("adap-tt", ENV, agent_kwargs={
        "epsilon": 0.5, "beta_rule": "tracking", "stop_candidate": "argmax",
        "challenger_bonus": "none", "bonus": "total"}, **kw)
    assert np.array_equal(base.episode["stopping_time"], named.episode["stopping_time"])


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("adap-tt", "adap-tt-star", "daf-wrapper", "adap-tt-exact")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
