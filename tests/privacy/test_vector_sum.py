"""P_Vec (Cheu, Joseph, Mao & Peng 2021) for paper 2: parameters, exactness, privacy, mutations.

Statistical tests use fixed seeds; each states its family-wise false-alarm probability α
(Bonferroni inside the test): a correct implementation fails with probability ≤ α = 1e-6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privenv.privacy import vector_sum as vs
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.seeding import AGENT, noise_for

ALPHA = 1e-6


def _points(rng: np.random.Generator, shape: tuple[int, ...], L: float) -> np.ndarray:
    """Random points with ‖x‖₂ ≤ L (last axis = coordinates)."""
    x = rng.uniform(-1, 1, size=shape)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return L * x / np.maximum(norms, 1.0) * rng.uniform(0.2, 1.0, size=(*shape[:-1], 1))


def _node_sums(x, L, params, rng, reps: int, rounding: str = "random") -> np.ndarray:
    """``reps`` independent node outputs (analyzer applied) for the same data x (n, c)."""
    xx = np.broadcast_to(x, (reps, *x.shape))
    runs = np.arange(reps)
    if rounding == "random":
        rounded = vs.encode_sum(xx, L, params, rng, runs)
    else:  # mutation: deterministic rounding ⌊t⌋
        rounded = np.floor((xx / L + 1.0) * params.g).sum(axis=1)
    noise = vs.binomial_noise_sum(params, x.shape[-1], rng, runs)
    return vs.analyze(rounded + noise, L, params)


# -- parameters ---------------------------------------------------------------------------------


def test_parameters_follow_the_spec_formula() -> None:
    p = vs.vector_sum_parameters(2500, 10, 0.2, 0.1, s=1.0)
    assert p.g == 100 and p.p == 0.25
    assert p.b == math.ceil(100**2 * math.log(100 / 0.1) ** 2 / (0.2**2 * 2500))
    small = vs.vector_sum_parameters(3, 2, 1.0, 0.01, s=2.0)
    assert small.g == 4  # max(2√3, 2, 4) = 4
    assert small.b == math.ceil(2.0 * 16 * math.log(4 / 0.01) ** 2 / 3)
    assert vs.vector_sum_parameters(10, 7, 1.0, 0.01).g == 7
    assert vs.vector_sum_parameters(101, 3, 1.0, 0.01).g == math.ceil(2 * math.sqrt(101))
    assert "g=100" in str(p) and "b=" in str(p)
    with pytest.raises(AttributeError):
        p.b = 3  # frozen
    assert vs.messages_per_user(p, 65) == 65 * (2 * p.g + p.b)


# -- exactness ----------------------------------------------------------------------------------


def test_analyzer_is_unbiased_with_the_stated_variance() -> None:
    """z-tests (α = 1e-6 over 2c tests): mean = Σx and variance = estimator_variance(x).
    Mutation: deterministic rounding is biased and must be caught by the same mean test."""
    rng = np.random.default_rng(11)
    L, reps = 1.5, 200_000
    params = vs.vector_sum_parameters(5, 1, 10.0, 0.3, s=1.0)  # small b: rounding matters
    assert params.b <= 3
    x = _points(rng, (params.n, 3), L)
    true, var = x.sum(axis=0), vs.estimator_variance(x, L, params)
    z_crit = stats.norm.isf(ALPHA / (2 * 2 * x.shape[1]))
    y = _node_sums(x, L, params, rng, reps)
    z_mean = (y.mean(axis=0) - true) / np.sqrt(var / reps)
    c4 = ((y - y.mean(axis=0)) ** 4).mean(axis=0)
    z_var = (y.var(axis=0) - var) / np.sqrt((c4 - var**2) / reps)
    assert np.all(np.abs(z_mean) < z_crit), z_mean
    assert np.all(np.abs(z_var) < z_crit), z_var
    biased = _node_sums(x, L, params, rng, reps, rounding="deterministic")
    z_bias = (biased.mean(axis=0) - true) / np.sqrt(var / reps)
    assert np.any(np.abs(z_bias) > z_crit), z_bias
    assert vs.max_error_std(L, params) ** 2 >= var.max()


def _chi2_same(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample χ² p-value for integer samples (bins with < 20 pooled counts merged)."""
    values = np.union1d(a, b)
    ca = np.array([np.sum(a == v) for v in values])
    cb = np.array([np.sum(b == v) for v in values])
    keep = (ca + cb) >= 20
    table = np.vstack([np.append(ca[keep], ca[~keep].sum()), np.append(cb[keep], cb[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    return stats.chi2_contingency(table)[1]


def test_block_sums_agree_with_summing_the_randomizer() -> None:
    """encode_sum + binomial_noise_sum has the law of Σ_i randomize(x_i) (two-sample χ²,
    α = 1e-6 over c = 2 coordinates), including when the n points arrive in two blocks."""
    rng = np.random.default_rng(5)
    L, reps = 1.0, 40_000
    params = vs.vector_sum_parameters(3, 1, 3.0, 0.2, s=1.0)
    x = _points(rng, (params.n, 2), L)
    xx = np.broadcast_to(x, (reps, *x.shape))
    direct = vs.randomize(xx, L, params, rng, rng).sum(axis=1)
    runs = np.arange(reps)
    blocks = vs.encode_sum(xx[:, :1], L, params, rng, runs) + vs.encode_sum(
        xx[:, 1:], L, params, rng, runs
    )
    fast = blocks + vs.binomial_noise_sum(params, 2, rng, runs)
    for j in range(2):
        assert _chi2_same(direct[:, j], fast[:, j]) > ALPHA / 2


def test_randomize_on_explicit_uniforms() -> None:
    params = vs.vector_sum_parameters(2, 1, 3.0, 0.2, s=1.0)
    L = 1.0
    x = np.array([[-1.0, 0.0], [0.3, 0.2]])
    t = (x / L + 1.0) * params.g
    u_round = np.array([[0.5, 0.5], [0.0, 0.999]])
    m = vs.randomize(x, L, params, u_round, np.zeros_like(x))
    expected = np.floor(t) + (u_round < t - np.floor(t))
    np.testing.assert_array_equal(m, expected.astype(np.int64))  # Binomial at u = 0 is 0
    top = vs.randomize(x, L, params, u_round, np.full(x.shape, 1 - 1e-12))
    np.testing.assert_array_equal(top - m, params.b)  # the largest binomial value is b


def test_binomial_noise_sum_is_binomial_nb_p() -> None:
    """χ² goodness of fit to Binomial(n·b, ¼), and the sum identity in law: Σ_i Binomial(b, ¼)
    over the n users (χ² two-sample), for both noise sources (α = 1e-6 per comparison)."""
    rng = np.random.default_rng(8)
    params = vs.vector_sum_parameters(4, 1, 2.0, 0.1, s=1.0)
    reps = 100_000
    z = vs.binomial_noise_sum(params, (1,), rng, np.arange(reps))[:, 0]
    N = params.noise_trials
    k = np.arange(N + 1)
    expected = reps * stats.binom.pmf(k, N, params.p)
    observed = np.bincount(z, minlength=N + 1)[: N + 1]
    keep = expected >= 20
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    assert stats.chisquare(obs, exp).pvalue > ALPHA / 2
    per_user = rng.binomial(params.b, params.p, size=(reps, params.n)).sum(axis=1)
    assert _chi2_same(z, per_user) > ALPHA / 2
    runs = 20_000  # the RunNoise path (per-run seeded generators)
    zr = vs.binomial_noise_sum(params, (1,), noise_for(3, runs, AGENT), np.arange(runs))[:, 0]
    assert _chi2_same(zr, per_user) > ALPHA / 2


def test_batch_size_invariance_with_run_noise() -> None:
    """Run i's numbers come from run i's stream only: the same whether drawn alone or with
    other runs, for both the rounding and the noise."""
    rng = np.random.default_rng(1)
    params = vs.vector_sum_parameters(6, 2, 1.0, 0.1)
    L = 1.0
    x = _points(rng, (4, params.n, 5), L)
    all_runs = noise_for(7, 4, AGENT)
    a = vs.encode_sum(x, L, params, all_runs, np.arange(4))
    za = vs.binomial_noise_sum(params, 5, all_runs, np.arange(4))
    alone = noise_for(7, 4, AGENT)
    b = vs.encode_sum(x[2:3], L, params, alone, np.array([2]))
    zb = vs.binomial_noise_sum(params, 5, alone, np.array([2]))
    np.testing.assert_array_equal(a[2], b[0])
    np.testing.assert_array_equal(za[2], zb[0])
    assert a.dtype == np.int64 and a.shape == (4, 5)


# -- privacy ------------------------------------------------------------------------------------


def test_scalar_worst_pair_is_the_full_shift() -> None:
    """The exact δ(ε) of any pair of scalar inputs (mixtures of shifts through randomized
    rounding) is at most the one at shift 2g (x = −L vs x = L), which node_guarantee uses."""
    params = vs.vector_sum_parameters(2, 1, 1.0, 0.01, s=8.0)
    N, p, g = params.noise_trials, params.p, params.g
    support = np.arange(N + 2 * g + 2)

    def pmf(x: float) -> np.ndarray:
        t = (x + 1.0) * g
        f, lo = t - math.floor(t), math.floor(t)
        base = stats.binom.pmf(support, N, p)
        return (1 - f) * np.roll(base, lo) + f * np.roll(base, lo + 1)

    def hockey(a: np.ndarray, b: np.ndarray) -> float:
        e = math.exp(params.epsilon)
        return max(np.maximum(a - e * b, 0).sum(), np.maximum(b - e * a, 0).sum())

    worst = vs.scalar_node_delta(params)
    np.testing.assert_allclose(worst, hockey(pmf(-1.0), pmf(1.0)), rtol=1e-9)
    grid = np.linspace(-1.0, 1.0, 9) + 0.013
    grid = np.clip(grid, -1.0, 1.0)
    for x in grid:
        for xp in grid:
            assert hockey(pmf(x), pmf(xp)) <= worst + 1e-12
    assert worst <= params.delta  # this node is (1, 0.01)-DP exactly


def test_node_guarantee_and_its_checks() -> None:
    params = vs.vector_sum_parameters(2500, 10, 0.05, 1e-3)
    g = vs.node_guarantee(params)
    assert isinstance(g, PrivacyGuarantee)
    assert (g.model, g.epsilon, g.delta, g.neighbouring) == ("shuffle", 0.05, 1e-3, "replace-one")
    with pytest.raises(ValueError, match="s=0.01 is too small"):
        vs.node_guarantee(vs.vector_sum_parameters(2500, 10, 0.05, 1e-3, s=0.01))
    with pytest.raises(ValueError, match="exact scalar"):  # Gaussian limit passes, exact fails
        vs.node_guarantee(vs.vector_sum_parameters(3, 1, 1.0, 1e-3, s=3.0), c=1)


def test_composition_over_the_tree() -> None:
    """node_budget splits (ε, δ) so that κ nodes compose back within it; the advanced bound is
    the textbook formula; basic composition wins for small κ."""
    for eps, delta, kappa in [(0.2, 0.1, 9), (1.0, 1e-4, 9), (1.0, 1e-6, 1), (5.0, 1e-3, 14)]:
        e0, d0 = vs.node_budget(eps, delta, kappa)
        node = PrivacyGuarantee("shuffle", e0, d0, "point")
        total = vs.compose_nodes(node, kappa)
        assert total.epsilon <= eps * (1 + 1e-9) and total.delta <= delta * (1 + 1e-12)
        assert e0 >= eps / kappa
    node = PrivacyGuarantee("shuffle", 0.01, 1e-6, "point")
    adv = vs.compose_nodes(node, 100, 1e-5)
    expected = 0.01 * math.sqrt(200 * math.log(1e5)) + 100 * 0.01 * math.expm1(0.01)
    assert adv.epsilon == pytest.approx(expected) and adv.delta == pytest.approx(100e-6 + 1e-5)
    basic = vs.compose_nodes(PrivacyGuarantee("shuffle", 0.5, 1e-6, "point"), 2, 1e-5)
    assert basic.epsilon == pytest.approx(1.0) and basic.delta == pytest.approx(2e-6)


# The privacy audit of a scalar node (with its mutants b/16 and no binomial noise) is the
# "pvec-node" case of privenv.privacy.audit_composite (run by tests/privacy/test_audits.py).


# -- bad input ----------------------------------------------------------------------------------


def test_bad_input() -> None:
    p = vs.vector_sum_parameters(3, 2, 1.0, 0.1)
    rng = np.random.default_rng(0)
    for kwargs, name in [
        (dict(n=0, d=2, epsilon=1.0, delta=0.1), "n"),
        (dict(n=3, d=0, epsilon=1.0, delta=0.1), "d"),
        (dict(n=3, d=2, epsilon=0.0, delta=0.1), "epsilon"),
        (dict(n=3, d=2, epsilon=1.0, delta=1.0), "delta"),
        (dict(n=3, d=2, epsilon=1.0, delta=0.1, s=-1.0), "s"),
        (dict(n=2.5, d=2, epsilon=1.0, delta=0.1), "n"),
    ]:
        with pytest.raises(ValueError, match=name):
            vs.vector_sum_parameters(**kwargs)
    ok = np.zeros((1, 3, 2))
    with pytest.raises(ValueError, match=r"\[-L, L\]"):
        vs.encode_sum(ok + 1.5, 1.0, p, rng, np.array([0]))
    with pytest.raises(ValueError, match="l2 norm"):
        vs.encode_sum(ok + 0.9, 1.0, p, rng, np.array([0]))  # |x_j| ≤ L but ‖x‖₂ > L
    with pytest.raises(ValueError, match="finite"):
        vs.encode_sum(ok + np.nan, 1.0, p, rng, np.array([0]))
    with pytest.raises(ValueError, match="L"):
        vs.encode_sum(ok, 0.0, p, rng, np.array([0]))
    with pytest.raises(ValueError, match="shape"):
        vs.encode_sum(ok, 1.0, p, rng, np.array([0, 1]))
    with pytest.raises(ValueError, match="runs"):
        vs.encode_sum(ok, 1.0, p, rng, np.array([0.5]))
    with pytest.raises(ValueError, match="shape"):
        vs.randomize(np.zeros((2, 2)), 1.0, p, rng, rng)  # n = 3 points expected
    with pytest.raises(ValueError, match="u_round"):
        vs.randomize(np.zeros((3, 2)), 1.0, p, np.ones((3, 2)), rng)
    with pytest.raises(ValueError, match="params"):
        vs.analyze(np.zeros(2), 1.0, {"g": 4})
    with pytest.raises(ValueError, match="shape"):
        vs.binomial_noise_sum(p, (0,), rng, np.array([0]))
    with pytest.raises(ValueError, match="kappa"):
        vs.node_budget(1.0, 0.1, 0)
    with pytest.raises(ValueError, match="node"):
        vs.compose_nodes(PrivacyGuarantee.none(), 3)
