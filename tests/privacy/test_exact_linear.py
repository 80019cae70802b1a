"""The exact samplers of the linear local-DP messages (issue 17): ``sampler="exact"`` on
GaussianStatistics / LaplaceInput (wrappers/ldp_linear.py) and on the LPLR agent
(agents/lplr.py).

Deterministic checks with fixed seeds (no false-alarm probability), except the noise-mean check,
whose 6-standard-error tolerance gives a false alarm below 10⁻⁸.
"""

from __future__ import annotations

import math
from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import privenv  # noqa: F401
from privenv.agents.lplr import LPLRExact, LPLRRegCB
from privenv.privacy import exact as ex
from privenv.privacy.accounting import rho_for_epsilon, rho_to_epsilon_cks
from privenv.privacy.wishart import gram_gaussian_sigma
from privenv.seeding import RunNoise, child
from privenv.simulation import simulate
from privenv.wrappers import (
    GaussianStatistics,
    GaussianStatisticsRandomizer,
    LaplaceInput,
    LaplaceInputRandomizer,
    VectorGaussianStatistics,
    VectorLaplaceInput,
)

ENV = "LinearContextualBandit-v0"
SMALL = {"d": 3, "A": 4}
#: (name, single wrapper, vector wrapper, message keys), both with the exact sampler
WRAPPERS = [
    ("gaussian", lambda e, s="exact": GaussianStatistics(e, 1.0, 1e-6, sampler=s),
     lambda e, s="exact": VectorGaussianStatistics(e, 1.0, 1e-6, sampler=s), ("gram", "moment")),
    ("laplace", lambda e, s="exact": LaplaceInput(e, 1.0, sampler=s),
     lambda e, s="exact": VectorLaplaceInput(e, 1.0, sampler=s), ("phi_tilde", "y_tilde")),
]
IDS = [w[0] for w in WRAPPERS]


def vec(n: int, mode: AutoresetMode = AutoresetMode.DISABLED, **kw) -> gym.vector.VectorEnv:
    return gym.make_vec(ENV, num_envs=n, vectorization_mode="vector_entry_point",
                        autoreset_mode=mode, **{**SMALL, **kw})


def _run(venv, T: int, seed: int = 9) -> list[dict[str, np.ndarray]]:
    venv.reset(seed=seed)
    actions = np.random.default_rng(2).integers(0, 4, (T, venv.num_envs))
    return [venv.step(actions[t])[0] for t in range(T)]


# -- calibration and the declared guarantee -----------------------------------------------------


@pytest.mark.parametrize(("eps", "delta", "d", "calibration"),
                         [(1.0, 1e-6, 3, "analytic"), (0.5, 1e-5, 2, "analytic"),
                          (4.0, 1e-5, 2, "analytic"), (0.5, 1e-5, 2, "classical")])
def test_gaussian_statistics_exact_calibration(eps, delta, d, calibration):
    flt = GaussianStatisticsRandomizer(eps, delta, d, calibration)
    r = GaussianStatisticsRandomizer(eps, delta, d, calibration, sampler="exact")
    m = d * (d + 1) // 2 + d
    assert r.m == m and r.exact.grid.granularity == ex.vector_grid(r.sigma).granularity
    rho_k = r.exact.rho(2 * math.sqrt(2), m)
    assert rho_k <= rho_for_epsilon(eps, delta)  # zCDP-calibrated, the rounding included
    g = r.privacy
    assert (g.sampler, g.delta, g.model) == ("exact", delta, "local")
    assert g.epsilon == rho_to_epsilon_cks(rho_k, delta) <= eps
    assert r.sigma >= flt.sigma  # never below the float calibration
    if calibration == "analytic":  # a few per cent above: the zCDP conversion is looser
        assert 1.0 < r.sigma / flt.sigma < 1.1
    assert flt.privacy.sampler == "float" and flt.privacy.epsilon == eps


@pytest.mark.parametrize("d", [1, 2, 3, 10])
def test_laplace_input_exact_calibration(d):
    r = LaplaceInputRandomizer(0.7, d, sampler="exact")
    p = r.exact.params
    assert p.sensitivity_grid == math.ceil(r.exact.grid.units(2 * math.sqrt(d) + 2)) + d + 1
    assert p.epsilon_exact <= Fraction(0.7) and r.privacy.epsilon <= 0.7
    assert r.privacy.epsilon > 0.7 * (1 - 1e-3)  # d + 1 grid units of slack out of ≈ 2¹⁴
    assert r.privacy.sampler == "exact" and r.privacy.delta == 0.0
    assert r.scale >= (2 * math.sqrt(d) + 2) / 0.7


@pytest.mark.parametrize("name, single, vector, keys", WRAPPERS, ids=IDS)
def test_wrappers_declare_the_exact_guarantee(name, single, vector, keys):
    env = single(gym.make(ENV, **SMALL))
    assert env.privacy.sampler == "exact" and env.privacy.epsilon <= 1.0
    assert env.spec.additional_wrappers[-1].kwargs["sampler"] == "exact"
    assert single(gym.make(ENV, **SMALL), "float").privacy.sampler == "float"
    assert vector(vec(2)).privacy == env.privacy


# -- the releases -------------------------------------------------------------------------------


def test_exact_messages_are_grid_points_around_the_rounded_message():
    phi, y = np.array([[0.6, 0.0, 0.8]]), np.array([-0.5])
    for r in (GaussianStatisticsRandomizer(1.0, 1e-6, 3, sampler="exact"),
              LaplaceInputRandomizer(1.0, 3, sampler="exact")):
        g = r.exact.grid.granularity
        n = 20_000
        msg = r(np.repeat(phi, n, 0), np.repeat(y, n), np.random.default_rng(3))
        for v in msg.values():
            assert np.all(v / g == np.round(v / g))  # on the grid
        if "gram" in msg:
            np.testing.assert_array_equal(msg["gram"], np.swapaxes(msg["gram"], 1, 2))
            x = np.concatenate([np.outer(phi[0], phi[0])[np.triu_indices(3)], phi[0] * y[0]])
            iu = np.triu_indices(3)
            got = np.concatenate([msg["gram"][:, iu[0], iu[1]], msg["moment"]], axis=1)
            sd = r.sigma
        else:
            x = np.append(phi[0], y[0])
            got = np.concatenate([msg["phi_tilde"], msg["y_tilde"]], axis=1)
            sd = math.sqrt(2) * r.scale
        k = r.exact.round(x[None])[0] * g  # the rounded message: the noise is centred there
        assert np.all(np.abs(k - x) <= g / 2)
        assert np.all(np.abs(got.mean(axis=0) - k) < 6 * sd / math.sqrt(n))


def test_exact_randomizer_refuses_an_array_of_draws():
    r = LaplaceInputRandomizer(1.0, 2, sampler="exact")
    with pytest.raises(TypeError, match="RunNoise"):
        r(np.zeros((1, 2)), np.zeros(1), np.zeros((1, 3)))


@pytest.mark.parametrize("name, single, vector, keys", WRAPPERS, ids=IDS)
def test_exact_run_i_alone_equals_run_i_in_a_batch(name, single, vector, keys):
    n, T = 4, 12
    batch = _run(vector(vec(n, horizon=T)), T)
    actions = np.random.default_rng(2).integers(0, 4, (T, n))
    for i in (0, 3):
        env = single(gym.make(ENV, horizon=T, **SMALL))
        env.reset(seed=9, options={"first_run": i})
        for t in range(T):
            o, *_ = env.step(int(actions[t, i]))
            for k in ("features", *keys):
                np.testing.assert_array_equal(o[k], batch[t][k][i])
    assert not np.array_equal(batch[0][keys[0]][0], batch[0][keys[0]][1])


@pytest.mark.parametrize("name, single, vector, keys", WRAPPERS, ids=IDS)
def test_the_float_numbers_do_not_change(name, single, vector, keys):
    """The default is the float sampler, and its numbers are those of the float randomizer fed
    the ``child(s, 0)`` draws of the wrapper seeds, whatever sampler other wrappers use."""
    T = 5
    default = _run(_default(name)(vec(3, horizon=T)), T)
    flt = _run(vector(vec(3, horizon=T), "float"), T)
    exact = _run(vector(vec(3, horizon=T)), T)
    for a, b, c in zip(default, flt, exact, strict=True):
        for k in keys:
            np.testing.assert_array_equal(a[k], b[k])
            assert not np.array_equal(a[k], c[k])


def _default(name: str):
    if name == "gaussian":
        return lambda e: VectorGaussianStatistics(e, 1.0, 1e-6)
    return lambda e: VectorLaplaceInput(e, 1.0)


def test_exact_words_are_not_the_float_stream():
    """The exact path reads child(s, 2) of the wrapper seeds, the float path child(s, 0)."""
    seeds = [np.random.SeedSequence(1, spawn_key=(i,)) for i in range(2)]
    noise = RunNoise(seeds)
    noise.ensure(0, 0, np.arange(2), words=4)
    words = noise.view().w[:, :4]
    for i, s in enumerate(seeds):
        child0 = np.random.Generator(np.random.PCG64(child(s, 0)))
        assert not np.array_equal(child0.integers(0, 2**64, 4, dtype=np.uint64), words[i])


def test_next_step_autoreset_restarts_the_exact_words():
    venv = VectorLaplaceInput(vec(3, AutoresetMode.NEXT_STEP, horizon=2), 1.0, sampler="exact")
    venv.reset(seed=0)
    a = np.zeros(3, dtype=np.int64)
    first = venv.step(a)[0]
    venv.step(a)  # truncated
    obs, *_ = venv.step(a)  # the reset step: nothing released
    assert not obs["phi_tilde"].any() and not obs["y_tilde"].any()
    again = venv.step(a)[0]
    assert not np.array_equal(again["phi_tilde"], first["phi_tilde"])


# -- LPLR ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps", "delta", "d"), [(1.0, 1e-6, 2), (3.0, 1e-5, 3), (0.1, 1e-7, 1)])
def test_lplr_exact_guarantee_composes_the_parts(eps, delta, d):
    agent = LPLRRegCB(d=d, A=3, horizon=1000, epsilon=eps, delta=delta, sampler="exact")
    x = agent.exact
    assert isinstance(x, LPLRExact)
    third = Fraction(eps) / 3
    assert x.count.params.epsilon_exact <= third and x.lam.params.epsilon_exact <= third
    assert x.epsilon_gram <= third
    total = x.count.params.epsilon_exact + x.lam.params.epsilon_exact + Fraction(x.epsilon_gram)
    assert Fraction(x.epsilon_update) >= total
    assert x.ci.params.epsilon_exact <= Fraction(eps)
    g = agent.privacy
    assert (g.sampler, g.delta) == ("exact", delta)
    assert g.epsilon == max(x.epsilon_update, x.ci.epsilon) <= eps
    assert g.epsilon > 0.99 * eps
    assert x.gram.sigma >= gram_gaussian_sigma(eps / 3, delta, d)  # the float σ is the floor
    assert x.gram.rho(math.sqrt(2), d * (d + 1)) <= rho_for_epsilon(float(third), delta)
    flt = LPLRRegCB(d=d, A=3, horizon=1000, epsilon=eps, delta=delta)
    assert flt.exact is None and flt.privacy.sampler == "float" and flt.privacy.epsilon == eps


def test_lplr_exact_run_i_alone_equals_run_i_in_a_batch_and_float_unchanged():
    T = 700
    kw = dict(d=2, A=10, horizon=T, epsilon=1e6, n0=8)
    env_kw = {"d": 2}

    def regret(sampler, runs, first_run=0):
        agent = LPLRRegCB(**kw, sampler=sampler, n_runs=runs)
        return simulate(agent, ENV, n_runs=runs, horizon=T, seed=11, first_run=first_run,
                        env_kwargs=env_kw).regret_curve

    batch = regret("exact", 3)
    np.testing.assert_array_equal(batch[2], regret("exact", 1, first_run=2)[0])
    assert not np.array_equal(batch[0], batch[1])
    default = simulate(LPLRRegCB(**kw, n_runs=3), ENV, n_runs=3, horizon=T, seed=11,
                       env_kwargs=env_kw).regret_curve
    np.testing.assert_array_equal(default, regret("float", 3))
    assert not np.array_equal(default, batch)


def test_lplr_exact_releases_are_grid_points_and_the_ledger_charges_the_declared_epsilon():
    T, R = 900, 2
    agent = LPLRRegCB(d=2, A=4, horizon=T, epsilon=0.5, n0=8, sampler="exact", n_runs=R)
    seen: list[dict[str, np.ndarray]] = []
    cls = agent.users_class

    class Recording(cls):
        def release(self):
            out = super().release()
            seen.append(out)
            return out

    agent.users_class = Recording
    simulate(agent, ENV, n_runs=R, horizon=T, seed=1, ledger=True, env_kwargs={"d": 2, "A": 4})
    x = agent.exact
    grids = {"count": x.count, "lam": x.lam, "gram": x.gram, "eps": x.ci}
    assert {k for out in seen for k in out} == set(grids)
    for out in seen:
        for k, v in out.items():
            g = grids[k].grid.granularity
            assert np.all(v / g == np.round(v / g)), k
        if "gram" in out:
            np.testing.assert_array_equal(out["gram"], np.swapaxes(out["gram"], -1, -2))
    released = agent.phase_start
    mask = np.zeros((R, T), dtype=bool)
    mask[:, :released] = True
    agent.ledger.assert_each_user_charged_exactly(agent.privacy.epsilon, users_mask=mask)


def test_lplr_exact_noise_sum_is_every_users_noise():
    """The phase's noise on a bin is the sum of its n users' own draws, in order."""
    from privenv.agents.lplr import LPLRUsers

    x = LPLRExact.calibrate(1.0, 1e-6, 2)
    seeds = [np.random.SeedSequence(4)]
    users = LPLRUsers(2, 1, [np.random.default_rng(0)], 1.0, "gaussian", 1e-6, x,
                      RunNoise(seeds))
    users.start_phase("ci", 1, 3, 5, np.array([[[True, False, True]]]))
    out = users.release()["eps"][0, 0]
    z = ex.run_discrete(RunNoise(seeds), np.array([0]), 10, x.ci.params)[0].reshape(5, 2)
    np.testing.assert_array_equal(out, np.array([z[:, 0].sum(), 0, z[:, 1].sum()])
                                  * x.ci.grid.granularity)


def test_lplr_exact_bad_input():
    with pytest.raises(ValueError, match="sampler"):
        LPLRRegCB(d=2, A=3, horizon=100, sampler="bogus")
    with pytest.raises(ValueError, match="wishart='gaussian'"):
        LPLRRegCB(d=2, A=3, horizon=100, sampler="exact", wishart="paper")


@pytest.mark.parametrize("name", ["ldp-linucb", "input-perturbation-ols"])
def test_the_message_learners_pass_their_sampler_to_their_users(name):
    """``sampler="exact"`` on the learner reaches the wrapper it applies (its declared guarantee
    and its messages on the grid), and run i alone equals run i in a batch."""
    from privenv.agents import make

    kw = {"sampler": "exact"}
    batch = simulate(name, "LinearContextualBandit-v0", n_runs=3, horizon=30, seed=4,
                     agent_kwargs=kw)
    alone = simulate(name, "LinearContextualBandit-v0", n_runs=1, first_run=1, horizon=30,
                     seed=4, agent_kwargs=kw)
    np.testing.assert_array_equal(batch.regret_curve[1], alone.regret_curve[0])
    assert batch.privacy.sampler == "exact"
    env = gym.make("LinearContextualBandit-v0")
    agent = make(name, env, 1, **kw)
    wrapped = agent.wrap_env(env)
    assert wrapped.privacy.sampler == "exact" and wrapped.randomizer.sampler == "exact"
