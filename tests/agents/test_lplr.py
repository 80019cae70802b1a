"""LPLR + RegCB elimination (agents/lplr.py, paper 4 Algorithms 1–6, Theorem 4.7).

Every check is a deterministic computation with fixed seeds (no false-alarm probability) except
the two noise-law checks, whose 6-standard-error tolerances give a false alarm < 10⁻⁸ each.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents import make
from privenv.agents.lplr import (
    LPLR,
    LPLRRegCB,
    LPLRServer,
    LPLRUsers,
    epoch_lengths,
    lplr_kappas,
    lplr_n0,
    partition_parameters,
)
from privenv.agents.mab import Uniform
from privenv.privacy.wishart import gram_gaussian_sigma
from privenv.simulation import simulate

ENV = "LinearContextualBandit-v0"


def unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# -- schedule ----------------------------------------------------------------------------------


def test_epoch_schedule_and_n0():
    T, d = 10_000, 2
    beta = 1 / math.log(T)
    n0 = lplr_n0(T, d, beta)
    assert n0 == 2 * d * math.ceil(d * d * math.log(d * T / beta) / (2 * d)) == 52
    lengths = epoch_lengths(T, n0)
    assert lengths == [2**tau * n0 for tau in range(1, len(lengths) + 1)]  # n_τ = 2^τ n₀
    assert sum(lengths[:-1]) < T <= sum(lengths)
    gamma, M = partition_parameters(T, beta)
    assert gamma == pytest.approx(math.e) and M == math.ceil(math.log(T) / 2) == 5
    # the agent switches oracles exactly at the epoch ends
    agent = LPLRRegCB(d=2, A=3, horizon=T, epsilon=1.0)
    agent.reset(seed=0)
    rng = np.random.default_rng(0)
    ends = np.cumsum(lengths)
    for t in range(1, ends[1] + 1):
        agent.act(unit_rows(rng, (3, 2)))
        agent.observe(0, 0.5, None)
        assert agent.n_finished == int(np.sum(ends <= t)), t
        assert agent.oracle.n == 2**agent.tau * n0 // (2 * d)


def test_kappas_are_the_papers_minimal_values():
    k = lplr_kappas(0.5, 2, 0.1, 1e-4)
    L48, L24 = math.log(48 * 2 / (0.1 * 1e-4)), math.log(24 * 2 / (0.1 * 1e-4))
    assert k["kappa1"] == pytest.approx(43 * L48 / 0.5)
    assert k["kappa1_prime"] == pytest.approx(15 * L48 / 0.5)
    assert k["kappa2"] == pytest.approx(118 * L24 / 0.5)
    assert k["kappa3"] == pytest.approx(300 * L48 / 0.5)
    assert lplr_kappas(0.5, 2, 0.1, 1e-4, kappa_scale=0.01)["kappa3"] == pytest.approx(
        0.01 * k["kappa3"])


# -- one LPLR-Update by hand -------------------------------------------------------------------


def test_one_lplr_update_by_hand():
    """Layer 1, d = 2, one oracle, n = 3 users; γ = e, M = 3. The release is the data sum plus
    the summed noise, drawn in a fixed order from the run's generator — reproduced here."""
    d, n, M, g = 2, 3, 3, math.e
    eps, delta = 2.0, 1e-5
    users = LPLRUsers(d, 1, [np.random.default_rng(99)], eps, "gaussian", delta)
    open_bins = (np.arange(M + 1) < M)[None, None]  # layer 1: bins k = 0, 1, 2 (k = M closed)
    users.start_phase("update", 1, M + 1, n, open_bins)
    bc = {"levels": [], "pcr": None, "gamma": g, "log_gamma": 1.0, "M": M}
    data = [((0.6, 0.8), 1.0), ((0.3, 0.0), -1.0), ((0.0, 0.2), 0.5)]  # ‖φ‖ = 1, 0.3, 0.2
    for phi, y in data:
        users.contribute(np.array([phi]), np.array([y]), np.array([0]), bc)
    out = users.release()
    # by hand: k = max{k : ‖φ‖ ≤ e^{−k}}: 1 → 0, 0.3 → 1, 0.2 → 1
    count = np.array([1.0, 2.0, 0.0, 0.0])
    lam = np.zeros((4, 2))
    lam[0] = 1.0 * np.array([0.6, 0.8])
    lam[1] = g * (-1.0 * np.array([0.3, 0.0]) + 0.5 * np.array([0.0, 0.2]))
    gram = np.zeros((4, 2, 2))
    gram[0] = np.outer([0.6, 0.8], [0.6, 0.8])
    gram[1] = g**2 * (np.outer([0.3, 0], [0.3, 0]) + np.outer([0, 0.2], [0, 0.2]))
    # the noise, in the order LPLRUsers draws it: Lap sums as b(G − G′), then the Gram's normals
    rng = np.random.default_rng(99)
    b_c, b_l = 6 / eps, 6 * math.sqrt(d) / eps
    nc = b_c * (rng.standard_gamma(n, (1, 4)) - rng.standard_gamma(n, (1, 4)))
    nl = b_l * (rng.standard_gamma(n, (1, 4, 2)) - rng.standard_gamma(n, (1, 4, 2)))
    sigma = gram_gaussian_sigma(eps / 3, delta, d)
    z = rng.standard_normal((1, 4, 2, 2)) * sigma * math.sqrt(n)
    ng = np.triu(z) + np.swapaxes(np.triu(z, 1), -1, -2)
    keep = open_bins[0, 0]
    np.testing.assert_allclose(out["count"][0, 0], np.where(keep, count + nc[0], 0.0))
    np.testing.assert_allclose(out["lam"][0, 0], np.where(keep[:, None], lam + nl[0], 0.0))
    np.testing.assert_allclose(out["gram"][0, 0],
                               np.where(keep[:, None, None], gram + ng[0], 0.0))


def test_pcr_on_hand_released_sums():
    """LPLR-PCR: ψ̂ = ĉ/n, top eigenpair of Λ̂/(ψ̂n), θ̂ = û ŝ⁻¹ ûᵀλ̂/(ψ̂n) (Algorithm 4)."""
    n, M = 100, 3
    kap = {"kappa1": 1e-3, "kappa1_prime": 1e-3, "kappa2": 0.0, "kappa3": 0.0}
    server = LPLRServer(1, 1, 2, n, math.e, M, kap)
    released = {"count": np.zeros((1, 1, 4)), "lam": np.zeros((1, 1, 4, 2)),
                "gram": np.zeros((1, 1, 4, 2, 2))}
    released["count"][0, 0, 0] = 50.0  # ψ̂ = 0.5
    released["lam"][0, 0, 0] = [20.0, 5.0]
    released["gram"][0, 0, 0] = [[40.0, 0.0], [0.0, 10.0]]
    opened = server.open_bins(1)
    server.absorb_update(1, released, opened)
    p = server.pcr
    assert p["active"][0, 0].tolist() == [True, False, False, False]
    assert p["psi"][0, 0, 0] == pytest.approx(0.5)
    assert p["s"][0, 0, 0] == pytest.approx(40.0 / 50.0)
    u = p["u"][0, 0, 0]
    assert abs(u[0]) == pytest.approx(1.0)
    theta = u * p["t"][0, 0, 0]
    np.testing.assert_allclose(theta, [(20.0 / 50.0) / 0.8, 0.0], atol=1e-12)


# -- the oracle --------------------------------------------------------------------------------


def test_oracle_converges_noiseless_large_epsilon():
    """Noiseless labels y = ⟨φ, θ*⟩, ε = 10⁶: f̂ is close to ⟨φ, θ*⟩ and inside f̂ ± Δ̂."""
    d, R, n, T, eps = 2, 2, 1500, 10_000, 1e6
    beta = 1 / math.log(T)
    gamma, M = partition_parameters(T, beta)
    oracle = LPLR(LPLRUsers(d, 1, [np.random.default_rng(i) for i in range(R)], eps,
                            "gaussian", 1e-6),
                  LPLRServer(R, 1, d, n, gamma, M, lplr_kappas(eps, d, beta, 1 / T**2)))
    rng = np.random.default_rng(0)
    theta = np.array([0.6, -0.8])
    while not oracle.done:
        phi = unit_rows(rng, (R, d)) * rng.uniform(0.05, 1.0, (R, 1))
        oracle.feed(phi, phi @ theta, np.zeros(R, dtype=int))
    x = unit_rows(rng, (R, 200, d)) * rng.uniform(0.1, 1.0, (R, 200, 1))
    f, delta = oracle.evaluate(x)
    truth = x @ theta
    assert np.max(np.abs(f - truth)) < 0.01
    assert np.all(np.abs(f - truth) <= delta)


def test_noise_sums_have_the_summed_law():
    """The phase release draws Σ of n per-user noises at once: Var = n·(per-user variance).
    Laplace(b): 2b² per user; the paper's 3(W_d(d+1, cI) − (d+1)cI): Var(W₁₁) = 2(d+1)c²·9,
    Var(W₁₂) = (d+1)c²·9; the Gaussian Gram: σ² per entry. 6-s.e. tolerances."""
    d, n, N = 2, 7, 40_000
    for wishart in ("paper", "gaussian"):
        users = LPLRUsers(d, 1, [np.random.default_rng(5)], 1.5, wishart, 1e-5)
        users.n = n
        gen = np.random.default_rng(6)
        lap = users._laplace_sum(gen, 2.0, (N,))
        w = users._gram_noise_sum(gen, (N,))
        if wishart == "paper":
            c = 1.5 / 1.5
            v11, v12 = 9 * n * 2 * (d + 1) * c**2, 9 * n * (d + 1) * c**2
        else:
            v11 = v12 = n * users.sigma_gram**2
        np.testing.assert_allclose(w[:, 0, 1], w[:, 1, 0])
        for x, var in ((lap, n * 2 * 4.0), (w[:, 0, 0], v11), (w[:, 0, 1], v12)):
            assert abs(x.mean()) < 6 * math.sqrt(var / N)
            # variance of a sample variance ≈ (κ₄ + 2)var²/N; κ₄ ≤ 6 for these laws
            assert abs(x.var() - var) < 6 * var * math.sqrt(8 / N)


# -- the agent ---------------------------------------------------------------------------------


def _regret(agent, T, R, seed=3, **env_kwargs):
    res = simulate(agent, ENV, n_runs=R, horizon=T, seed=seed, env_kwargs={"d": 2, **env_kwargs})
    return res.regret_curve[:, -1]


def test_default_constants_play_uniformly():
    """With the paper's κ's at ε = 1 nothing is certified at small T: the agent keeps every action
    and, drawing the same uniforms, its regret equals uniform play's exactly."""
    T, R = 1500, 2
    lplr = LPLRRegCB(d=2, A=10, horizon=T, epsilon=1.0, n_runs=R)
    assert np.array_equal(_regret(lplr, T, R), _regret(Uniform(10, n_runs=R), T, R))


def test_regret_below_uniform_large_epsilon():
    T, R = 5000, 2
    lplr = LPLRRegCB(d=2, A=10, horizon=T, epsilon=1e6, n_runs=R)
    ours, uniform = _regret(lplr, T, R), _regret(Uniform(10, n_runs=R), T, R)
    assert np.all(ours < 0.8 * uniform), (ours, uniform)


@pytest.mark.slow
def test_regret_below_uniform_large_epsilon_T20000():
    T, R = 20_000, 2
    lplr = LPLRRegCB(d=2, A=10, horizon=T, epsilon=1e6, n_runs=R)
    ours, uniform = _regret(lplr, T, R), _regret(Uniform(10, n_runs=R), T, R)
    assert np.all(ours < 0.8 * uniform), (ours, uniform)


def test_determinism_across_batch_sizes():
    T = 700
    kw = dict(d=2, A=10, horizon=T, epsilon=1e6, n0=8)
    batch = simulate(LPLRRegCB(**kw, n_runs=3), ENV, n_runs=3, horizon=T, seed=11,
                     env_kwargs={"d": 2})
    alone = simulate(LPLRRegCB(**kw, n_runs=1), ENV, n_runs=1, horizon=T, seed=11,
                     first_run=2, env_kwargs={"d": 2})
    np.testing.assert_array_equal(batch.regret_curve[2], alone.regret_curve[0])
    assert not np.array_equal(batch.regret_curve[0], batch.regret_curve[1])


def test_ledger_each_user_charged_once():
    T, R = 900, 2
    agent = LPLRRegCB(d=2, A=4, horizon=T, epsilon=0.5, n0=8, n_runs=R)
    simulate(agent, ENV, n_runs=R, horizon=T, seed=1, ledger=True,
             env_kwargs={"d": 2, "A": 4})
    released = agent.phase_start  # users of finished phases: rounds 0 … phase_start − 1
    assert released > T // 2
    mask = np.zeros((R, T), dtype=bool)
    mask[:, :released] = True
    agent.ledger.assert_each_user_charged_exactly(0.5, users_mask=mask)


# -- the trust boundary ------------------------------------------------------------------------

_RECORD: list[dict[str, np.ndarray]] = []


class RecordingUsers(LPLRUsers):
    def release(self):
        out = super().release()
        _RECORD.append({k: v.copy() for k, v in out.items()})
        return out


class ReplayUsers(LPLRUsers):
    """Never looks at (φ, y): its releases are the recorded ones."""

    def contribute(self, phi, y, a, broadcast):
        pass

    def release(self):
        self.kind = None
        return _RECORD.pop(0)


def test_learner_depends_on_raw_data_only_through_releases():
    """Agent 1 learns from real users; agent 2's user component ignores its inputs (fed sentinel
    labels 0) and replays agent 1's releases: the learners act identically. The public features
    shown at decision time are the same for both (Definition 1.1)."""
    R, A, T = 2, 3, 1200
    rng = np.random.default_rng(4)
    theta = np.array([0.8, 0.6])
    obs = unit_rows(rng, (T, R, A, 2))
    kw = dict(d=2, A=A, horizon=T, epsilon=1e6, n0=8, n_runs=R)
    real, replay = LPLRRegCB(**kw), LPLRRegCB(**kw)
    real.users_class, replay.users_class = RecordingUsers, ReplayUsers
    _RECORD.clear()
    real.reset(seed=2)
    actions = []
    for t in range(T):
        a = real.act(obs[t])
        mean = obs[t][np.arange(R), a] @ theta
        y = np.where(rng.random(R) < (1 + mean) / 2, 1.0, -1.0)
        real.observe(a, y, None)
        actions.append(a)
    assert real.n_finished >= 3 and len(_RECORD) > 0
    replay.reset(seed=2)
    for t in range(T):
        assert np.array_equal(replay.act(obs[t]), actions[t]), t
        replay.observe(actions[t], np.zeros(R), None)
    for p_real, p_replay in zip(real.finished, replay.finished, strict=True):
        np.testing.assert_array_equal(p_real, p_replay)
    assert not _RECORD
    # and the releases do carry the data: other labels give another learner
    _RECORD.clear()
    other = LPLRRegCB(**kw)
    other.reset(seed=2)
    for t in range(T):
        other.act(obs[t])
        other.observe(actions[t], -np.ones(R), None)
    assert not np.array_equal(other.finished[0], real.finished[0])


# -- privacy declaration and bad input -----------------------------------------------------------


def test_privacy_declarations():
    ok = LPLRRegCB(d=2, A=3, horizon=1000, epsilon=0.5, delta=1e-7)
    assert (ok.privacy.model, ok.privacy.epsilon, ok.privacy.delta) == ("local", 0.5, 1e-7)
    with pytest.warns(UserWarning, match="NOT differentially private"):
        paper = LPLRRegCB(d=2, A=3, horizon=1000, epsilon=0.5, wishart="paper")
    assert "not DP" in str(paper.privacy)
    with pytest.warns(UserWarning):
        r = _regret(LPLRRegCB(d=2, A=10, horizon=600, epsilon=1e6, wishart="paper", n0=8,
                              n_runs=1), 600, 1)
    assert np.isfinite(r).all()


# -- the κ scale is an axis of the oracle, never of privacy (privenv reproduce lplr-constants) -----

SCALES = (1.0, 1e-3, 1e-6)


def test_kappa_scale_leaves_the_guarantee_and_the_noise_calibration_unchanged():
    """The user-side randomizer is built without the κ's (its constructor does not take them),
    so the declared guarantee and every noise scale are the same at every scale, in both Gram
    modes; the κ's themselves scale linearly."""
    import inspect

    assert not any("kappa" in p for p in inspect.signature(LPLRUsers.__init__).parameters)
    for wishart in ("gaussian", "paper"):
        seen = set()
        for scale in SCALES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # wishart="paper" warns
                agent = LPLRRegCB(d=2, A=3, horizon=2000, epsilon=0.7, wishart=wishart,
                                  kappa_scale=scale, n_runs=2)
            agent.reset(seed=0)
            users = agent.oracle.users
            seen.add((str(agent.privacy), agent.privacy.epsilon, agent.privacy.delta,
                      users.b_count, users.b_lam, users.b_ci, users.sigma_gram))
            np.testing.assert_allclose(agent.kappas["kappa3"],
                                       scale * LPLRRegCB(d=2, A=3, horizon=2000,
                                                         epsilon=0.7).kappas["kappa3"])
        assert len(seen) == 1, seen


class _FirstRelease(LPLRUsers):
    first: list[dict[str, np.ndarray]] = []

    def release(self):
        out = super().release()
        if not _FirstRelease.first:
            _FirstRelease.first.append({k: v.copy() for k, v in out.items()})
        return out


def test_kappa_scale_leaves_the_first_releases_unchanged():
    """Epoch 1's first phase (layer 1, every bin open whatever the κ's) releases the same numbers
    at every scale from the same seeds: the noise draws do not depend on the scale."""
    T, R = 600, 2
    releases = []
    for scale in SCALES:
        agent = LPLRRegCB(d=2, A=4, horizon=T, epsilon=1.0, kappa_scale=scale, n0=8, n_runs=R)
        agent.users_class = _FirstRelease
        _FirstRelease.first = []
        _regret(agent, T, R, seed=5, A=4)
        releases.append(_FirstRelease.first[0])
    for other in releases[1:]:
        for key, value in releases[0].items():
            np.testing.assert_array_equal(value, other[key])


@pytest.mark.parametrize("scale", [1e-6, 1e-9])
def test_ledger_each_user_charged_once_at_small_kappa_scale(scale):
    """Where small κ's make the oracle eliminate actions, each released user is still charged ε
    exactly once (the ledger of the default scale, ``test_ledger_each_user_charged_once``)."""
    T, R = 2500, 2
    agent = LPLRRegCB(d=2, A=4, horizon=T, epsilon=5.0, kappa_scale=scale, n0=8, n_runs=R)
    simulate(agent, ENV, n_runs=R, horizon=T, seed=1, ledger=True, env_kwargs={"d": 2, "A": 4})
    assert agent.episode_info()["eliminating_rounds"].min() > 0  # the oracle acts on the data
    mask = np.zeros((R, T), dtype=bool)
    mask[:, :agent.phase_start] = True
    agent.ledger.assert_each_user_charged_exactly(5.0, users_mask=mask)


def test_registry_and_make():
    agent = make("lplr-regcb", ENV, n_runs=2, epsilon=2.0)
    assert isinstance(agent, LPLRRegCB)
    assert (agent.d, agent.A, agent.horizon) == (5, 10, 10_000)


@pytest.mark.parametrize("kwargs, match", [
    (dict(d=0), "d"), (dict(A=1), "A"), (dict(horizon=1), "horizon"),
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=float("nan")), "epsilon"),
    (dict(alpha=1.5), "alpha"), (dict(beta=0.0), "beta"), (dict(beta=-1.0), "beta"),
    (dict(wishart="jiang"), "wishart"), (dict(delta=0.0), "delta"),
    (dict(kappa_scale=0.0), "kappa_scale"), (dict(n0=6), "n0"), (dict(n0=2), "n0"),
])
def test_bad_constructor_input(kwargs, match):
    base = dict(d=2, A=3, horizon=1000)
    with pytest.raises(ValueError, match=match):
        LPLRRegCB(**{**base, **kwargs})


def test_bad_step_input():
    agent = LPLRRegCB(d=2, A=3, horizon=1000, n_runs=2)
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="before act"):
        agent.observe(np.array([0, 1]), np.zeros(2), None)
    with pytest.raises(ValueError, match="observations"):
        agent.act(np.zeros((2, 4, 2)))
    agent.act(np.full((2, 3, 2), 0.5))
    with pytest.raises(ValueError, match="rewards"):
        agent.observe(np.array([0, 1]), np.array([0.0, 1.5]), None)
    with pytest.raises(ValueError, match="rewards"):
        agent.observe(np.array([0, 1]), np.array([0.0, np.nan]), None)
    with pytest.raises(ValueError, match="actions"):
        agent.observe(np.array([0, 3]), np.zeros(2), None)


# -- the privacy audits of this agent (privenv.audits) at the quick size: a wrong noise scale in
# the agent fails here (tests/conftest.py runs each case and each of its mutations) ------------

AUDIT_TARGETS = ("lplr-update-count", "lplr-ci", "lplr-update-count-exact",
                 "lplr-update-label-moment", "lplr-update-gram")


def test_privacy_audit(audit_target, audit_mutation, check_audit):
    check_audit(audit_target, audit_mutation)
