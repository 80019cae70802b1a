"""The user-side randomizers of the linear contextual bandit (wrappers/ldp_linear.py): LDP-LinUCB's
Gaussian statistics (Zheng et al. 2020) and input perturbation (paper 4, Theorem 2.2).

Covers hand-computed releases, calibration and declared guarantees, the sensitivity bounds the
calibration rests on, the noise laws (KS tests), leak tests (the learner-facing stream depends on
the raw label only through the mechanism), batch-size independence of the noise, autoreset,
Gymnasium/SB3 checkers, and bad input. Statistical tests use fixed seeds; each states its
false-alarm probability.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from scipy import stats

import privenv  # noqa: F401
from privenv.privacy import exact as ex
from privenv.privacy.accounting import rho_for_epsilon, rho_to_epsilon_cks
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.privacy.mechanisms import (
    gaussian_sigma_analytic,
    laplace_from_uniform,
    symmetric_gaussian_from_standard,
)
from privenv.problems import linear as linear_problem
from privenv.seeding import RunNoise, child
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

#: (name, single wrapper, vector wrapper, message keys)
WRAPPERS = [
    ("gaussian", lambda e: GaussianStatistics(e, 1.0, 1e-6),
     lambda e: VectorGaussianStatistics(e, 1.0, 1e-6), ("gram", "moment")),
    ("laplace", lambda e: LaplaceInput(e, 1.0), lambda e: VectorLaplaceInput(e, 1.0),
     ("phi_tilde", "y_tilde")),
]
IDS = [w[0] for w in WRAPPERS]


def vec(n: int, mode: AutoresetMode = AutoresetMode.DISABLED, **kw) -> gym.vector.VectorEnv:
    return gym.make_vec(ENV, num_envs=n, vectorization_mode="vector_entry_point",
                        autoreset_mode=mode, **{**SMALL, **kw})


#: (name, single wrapper, vector wrapper, message keys), both with the exact sampler
EXACT_WRAPPERS = [
    ("gaussian", lambda e, s="exact": GaussianStatistics(e, 1.0, 1e-6, sampler=s),
     lambda e, s="exact": VectorGaussianStatistics(e, 1.0, 1e-6, sampler=s), ("gram", "moment")),
    ("laplace", lambda e, s="exact": LaplaceInput(e, 1.0, sampler=s),
     lambda e, s="exact": VectorLaplaceInput(e, 1.0, sampler=s), ("phi_tilde", "y_tilde")),
]


def _run(venv, T: int, seed: int = 9) -> list[dict[str, np.ndarray]]:
    venv.reset(seed=seed)
    actions = np.random.default_rng(2).integers(0, 4, (T, venv.num_envs))
    return [venv.step(actions[t])[0] for t in range(T)]


# -- hand-computed releases and calibration -----------------------------------------------------


def test_gaussian_statistics_release_by_hand():
    r = GaussianStatisticsRandomizer(0.5, 1e-5, d=2, calibration="classical")
    s = r.sigma
    phi = np.array([[0.6, 0.8]])
    z = np.array([[1.0, -2.0, 0.5, 0.25, -1.0]])  # triu (0,0), (0,1), (1,1), then ξ
    msg = r(phi, np.array([-1.0]), z)
    gram = np.array([[0.36 + s, 0.48 - 2 * s], [0.48 - 2 * s, 0.64 + 0.5 * s]])
    np.testing.assert_allclose(msg["gram"][0], gram)
    np.testing.assert_allclose(msg["moment"][0], [-0.6 + 0.25 * s, -0.8 - s])


def test_gaussian_statistics_calibration():
    eps, delta = 0.5, 1e-5
    classical = GaussianStatisticsRandomizer(eps, delta, d=4, calibration="classical")
    # Zheng et al.'s public code: σ = 4√(ln(1.25/δ))/ε (the classical formula with Δ₂ = 2√2)
    assert classical.sigma == pytest.approx(4 * math.sqrt(math.log(1.25 / delta)) / eps)
    analytic = GaussianStatisticsRandomizer(eps, delta, d=4)
    assert analytic.sigma == pytest.approx(gaussian_sigma_analytic(eps, delta, 2 * math.sqrt(2)))
    assert analytic.sigma < classical.sigma
    assert analytic.n_draws() == 4 * 5 // 2 + 4
    with pytest.raises(ValueError, match="epsilon must be in \\(0, 1\\)"):
        GaussianStatisticsRandomizer(1.0, delta, d=4, calibration="classical")


def test_laplace_input_release_by_hand_and_scale():
    r = LaplaceInputRandomizer(2.0, d=4)
    assert r.scale == pytest.approx((2 * 2 + 2) / 2.0)  # b = (2√d + 2)/ε
    phi = np.array([[0.5, -0.5, 0.5, 0.5]])
    u = np.array([[0.1, 0.5, 0.75, 0.999, 0.25]])
    msg = r(phi, np.array([0.3]), u)
    noise = laplace_from_uniform(u, 3.0)
    np.testing.assert_allclose(msg["phi_tilde"][0], phi[0] + noise[0, :4])
    np.testing.assert_allclose(msg["y_tilde"][0], [0.3 + noise[0, 4]])


def test_declared_sensitivities_bound_the_releases():
    """The calibrations rest on Δ₂ = 2√2 for (triu(φφᵀ), φy) and Δ₁ = 2√d + 2 for (φ, y): no pair
    of inputs exceeds them (random pairs plus the known extremal pairs), and Δ₁ is attained."""
    d = 4
    rng = np.random.default_rng(0)
    g = rng.standard_normal((20000, 2, d))
    g /= np.linalg.norm(g, axis=-1, keepdims=True)
    g *= rng.random((20000, 2, 1)) ** 0.1  # norms in (0, 1], mostly near 1
    y = rng.uniform(-1, 1, (20000, 2))
    y[::2] = np.sign(y[::2])
    iu = np.triu_indices(d)

    def release(p, yy):
        return np.concatenate([(p[:, :, None] * p[:, None, :])[:, iu[0], iu[1]], p * yy[:, None]],
                              axis=1)

    l2 = np.linalg.norm(release(g[:, 0], y[:, 0]) - release(g[:, 1], y[:, 1]), axis=1)
    assert l2.max() <= GaussianStatisticsRandomizer.sensitivity
    l1 = np.abs(g[:, 0] - g[:, 1]).sum(1) + np.abs(y[:, 0] - y[:, 1])
    laplace = LaplaceInputRandomizer(1.0, d)
    assert l1.max() <= laplace.sensitivity
    phi = np.full(d, 1 / math.sqrt(d))
    assert np.abs(phi - (-phi)).sum() + 2.0 == pytest.approx(laplace.sensitivity)


@pytest.mark.parametrize("name, single, vector, keys", WRAPPERS, ids=IDS)
def test_wrappers_declare_their_guarantee(name, single, vector, keys):
    env = single(gym.make(ENV, **SMALL))
    venv = vector(vec(2))
    delta = 1e-6 if name == "gaussian" else 0.0
    expected = PrivacyGuarantee("local", 1.0, delta, "(context, reward)")
    assert env.privacy == expected and venv.privacy == expected
    assert set(env.observation_space.spaces) == {"features", *keys}
    assert venv.single_observation_space == env.observation_space


# -- noise laws ------------------------------------------------------------------------------------


def test_gaussian_statistics_noise_law():
    """(gram − φφᵀ)/σ: symmetric, upper triangle N(0, 1); (moment − φy)/σ: N(0, 1) — KS tests on
    the pooled draws of a real vector run, each at α = 10⁻⁶ (two tests: false alarm ≤ 2·10⁻⁶)."""
    n, T = 50, 80
    venv = VectorGaussianStatistics(vec(n, horizon=T), 0.7, 1e-4)
    obs, _ = venv.reset(seed=5)
    B, xi = [], []
    rng = np.random.default_rng(1)
    for _ in range(T):
        phi = obs["features"]
        a = rng.integers(0, 4, n)
        x = phi[np.arange(n), a].astype(float)
        obs, _, _, _, _ = venv.step(a)
        # the raw label is not known here: test the moment's noise through its projection on
        # the orthogonal complement of φ (φy lies along φ), where it is pure N(0, σ²I) noise
        Bt = obs["gram"] - x[:, :, None] * x[:, None, :]
        np.testing.assert_array_equal(Bt, np.swapaxes(Bt, 1, 2))
        rows, cols = np.triu_indices(3)
        B.append(Bt[:, rows, cols])
        q, _ = np.linalg.qr(np.concatenate([x[:, :, None], rng.standard_normal((n, 3, 2))], 2))
        xi.append(np.einsum("nij,ni->nj", q[:, :, 1:], obs["moment"]))  # ⊥ φ: pure noise
    sigma = venv.randomizer.sigma
    assert stats.kstest(np.concatenate(B).ravel() / sigma, "norm").pvalue > 1e-6
    assert stats.kstest(np.concatenate(xi).ravel() / sigma, "norm").pvalue > 1e-6


def test_laplace_input_noise_law():
    """φ̃ − φ ~ Laplace(b) coordinatewise: KS test at α = 10⁻⁶ on a real vector run."""
    n, T = 50, 80
    venv = VectorLaplaceInput(vec(n, horizon=T), 2.0)
    obs, _ = venv.reset(seed=6)
    noise = []
    for _ in range(T):
        x = obs["features"][:, 0].astype(float)
        obs, _, _, _, _ = venv.step(np.zeros(n, dtype=np.int64))
        noise.append(obs["phi_tilde"] - x)
    b = venv.randomizer.scale
    assert stats.kstest(np.concatenate(noise).ravel(), "laplace", args=(0, b)).pvalue > 1e-6


# -- leak tests --------------------------------------------------------------------------------


def _sentinel_run(monkeypatch, wrapper, label: float, n=6, T=30, seed=3):
    """Everything a learner receives from the wrapped vector env when every raw label is
    ``label`` (a sentinel law replacing the env's), with fixed actions."""
    monkeypatch.setattr(linear_problem, "noisy_rewards",
                        lambda means, z, noise, sigma: np.full(means.shape, label))
    venv = wrapper(vec(n, horizon=T))
    obs, _ = venv.reset(seed=seed)
    stream = [obs]
    rng = np.random.default_rng(0)
    chosen = []
    for _ in range(T):
        a = rng.integers(0, 4, n)
        chosen.append(obs["features"][np.arange(n), a].astype(float))
        obs, reward, term, trunc, info = venv.step(a)
        assert not any(np.array_equal(np.asarray(v, dtype=float), np.full(n, label))
                       for k, v in info.items() if not k.startswith("_")), "raw label in info"
        stream.append({**obs, "reward": reward, "term": term, "trunc": trunc})
    return stream, chosen


def test_learner_stream_depends_on_the_label_only_through_the_mechanism(monkeypatch):
    """Sentinel labels y ≡ +1 and y ≡ −1 with identical seeds and actions: every value the
    learner receives is bit-identical except the released φy + ξ, which differs by exactly
    2φ_chosen — the label enters only through the randomizer's φy term (and the reward is 0)."""
    plus, chosen = _sentinel_run(monkeypatch, lambda e: VectorGaussianStatistics(e, 1.0, 1e-6),
                                 +1.0)
    minus, _ = _sentinel_run(monkeypatch, lambda e: VectorGaussianStatistics(e, 1.0, 1e-6), -1.0)
    for t, (p, m) in enumerate(zip(plus, minus, strict=True)):
        for key in p:
            if key == "moment" and t > 0:
                np.testing.assert_allclose(p[key] - m[key], 2 * chosen[t - 1], atol=1e-9)
            else:
                np.testing.assert_array_equal(p[key], m[key])
        if t > 0:
            assert not p["reward"].any()


def test_input_perturbation_stream_depends_on_the_label_only_through_the_mechanism(monkeypatch):
    plus, _ = _sentinel_run(monkeypatch, lambda e: VectorLaplaceInput(e, 1.0), +1.0)
    minus, _ = _sentinel_run(monkeypatch, lambda e: VectorLaplaceInput(e, 1.0), -1.0)
    for t, (p, m) in enumerate(zip(plus, minus, strict=True)):
        for key in p:
            if key == "y_tilde" and t > 0:
                np.testing.assert_allclose(p[key] - m[key], 2.0, atol=1e-9)
            else:
                np.testing.assert_array_equal(p[key], m[key])


@pytest.mark.parametrize("name, single, vector, keys", WRAPPERS, ids=IDS)
def test_wrapper_keeps_no_raw_label(name, single, vector, keys, monkeypatch):
    """No attribute of the wrapper (or its user side) holds the raw label after a step."""
    sentinel = -0.123456789
    monkeypatch.setattr(linear_problem, "noisy_rewards",
                        lambda means, z, noise, sigma: np.full(means.shape, sentinel))
    env = single(gym.make(ENV, **SMALL))
    env.reset(seed=0)
    env.step(1)

    def holds(obj, depth=0) -> bool:
        if isinstance(obj, (float, np.floating)):
            return float(obj) == sentinel
        if isinstance(obj, np.ndarray):
            return obj.dtype.kind == "f" and bool(np.any(obj == sentinel))
        if isinstance(obj, dict) and depth < 3:
            return any(holds(v, depth + 1) for v in obj.values())
        if hasattr(obj, "__dict__") and depth < 3 and not isinstance(obj, gym.Env):
            return any(holds(v, depth + 1) for v in vars(obj).values())
        return False

    assert not any(holds(v) for k, v in vars(env).items() if k != "env")


# -- per-run noise, autoreset, checkers --------------------------------------------------------


@pytest.mark.parametrize("name, single, vector, keys",
                         WRAPPERS + EXACT_WRAPPERS, ids=IDS + [f"{i}-exact" for i in IDS])
def test_run_i_alone_equals_run_i_in_a_batch(name, single, vector, keys):
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


def test_next_step_autoreset_gives_empty_messages_and_fresh_noise():
    venv = VectorGaussianStatistics(vec(3, AutoresetMode.NEXT_STEP, horizon=2), 1.0, 1e-6)
    venv.reset(seed=0)
    a = np.zeros(3, dtype=np.int64)
    first = venv.step(a)[0]
    venv.step(a)  # truncated
    obs, reward, term, trunc, _ = venv.step(a)  # the reset step
    assert not obs["gram"].any() and not obs["moment"].any() and not reward.any()
    again = venv.step(a)[0]  # the new episode's first release: noise restarted from new seeds
    assert not np.array_equal(again["gram"], first["gram"])


@pytest.mark.parametrize("name, single, vector, keys", WRAPPERS, ids=IDS)
def test_gymnasium_and_sb3_checkers(name, single, vector, keys):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_env(single(gym.make(ENV, horizon=10, **SMALL)), skip_render_check=True)
        sb3_check_env(single(gym.make(ENV, horizon=10, **SMALL)))


# -- bad input -------------------------------------------------------------------------------------


def test_bad_input():
    env = gym.make(ENV, **SMALL)
    with pytest.raises(ValueError, match="epsilon"):
        GaussianStatistics(env, 0.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        GaussianStatistics(env, 1.0, 1.0)
    with pytest.raises(ValueError, match="calibration"):
        GaussianStatistics(env, 1.0, 1e-6, calibration="zheng")
    with pytest.raises(ValueError, match="clip must be a bool"):
        LaplaceInput(env, 1.0, clip="yes")
    with pytest.raises(ValueError, match="reward_bound"):
        GaussianStatistics(gym.make(ENV, noise="gaussian", **SMALL), 1.0, 1e-6)
    GaussianStatistics(gym.make(ENV, noise="gaussian", **SMALL), 1.0, 1e-6, clip=True)
    with pytest.raises(ValueError, match="linear contextual bandit"):
        LaplaceInput(gym.make("HuberBandit-v0"), 1.0)
    with pytest.raises(ValueError, match="aggregates"):
        VectorLaplaceInput(gym.make_vec("FederatedLinearBandit-v0", num_envs=2,
                                        vectorization_mode="vector_entry_point", M=2, K=3, d=3),
                           1.0)
    with pytest.raises(gym.error.ResetNeeded):
        GaussianStatistics(gym.make(ENV, **SMALL), 1.0, 1e-6).step(0)
    r = GaussianStatisticsRandomizer(1.0, 1e-6, d=2)
    z = np.zeros((1, 5))
    with pytest.raises(ValueError, match="reward must lie in \\[-1, 1\\]"):
        r(np.array([[0.6, 0.8]]), np.array([1.5]), z)
    with pytest.raises(ValueError, match="Euclidean norm"):
        r(np.array([[0.9, 0.9]]), np.array([1.0]), z)
    with pytest.raises(ValueError, match="shape"):
        r(np.array([[0.6, 0.8]]), np.array([1.0]), np.zeros((1, 4)))
    clipped = GaussianStatisticsRandomizer(1.0, 1e-6, d=2, clip=True)
    msg = clipped(np.array([[3.0, 4.0]]), np.array([2.0]), z)
    np.testing.assert_allclose(msg["moment"][0], [0.6, 0.8])  # φ projected, y clipped to 1
    rounding = r(np.array([[0.6, 0.8 + 5e-6]]), np.array([1.0]), z)  # float32 rounding: rescaled
    assert np.linalg.norm(rounding["moment"][0]) == pytest.approx(1.0)


def test_symmetric_noise_helper_is_what_the_randomizer_uses():
    r = GaussianStatisticsRandomizer(1.0, 1e-6, d=3)
    z = np.random.default_rng(0).standard_normal((2, r.n_draws()))
    msg = r(np.zeros((2, 3)), np.zeros(2), z)
    np.testing.assert_array_equal(msg["gram"], symmetric_gaussian_from_standard(z[:, :6], 3,
                                                                                r.sigma))


# -- the exact sampler: calibration and the declared guarantee ----------------------------------


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


@pytest.mark.parametrize("name, single, vector, keys", EXACT_WRAPPERS, ids=IDS)
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


@pytest.mark.parametrize("name, single, vector, keys", EXACT_WRAPPERS, ids=IDS)
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
    noise.ensure(np.arange(2), words=4)
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
