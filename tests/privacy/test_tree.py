"""The tree-based (binary) mechanism: exactness, structure of its noise, privacy audit, mutations.

Statistical tests use fixed seeds and a stated false-alarm probability α (Bonferroni inside each
test): a correct mechanism fails a test with probability ≤ α = 1e-6.

The privacy audit (ε lower bound from D = (1, 0, …) vs D′ = 0, with the mutants: node noise
redrawn, σ × 0.5, one tree level missing) is the "tree" case of
:mod:`privenv.privacy.audit_composite`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privenv.privacy import audit
from privenv.privacy.accounting import gaussian_epsilon, tree_levels, tree_rho
from privenv.privacy.audit_composite import node_keys, tree_mutant_classes
from privenv.privacy.tree import TreeMechanism, lowest_set_bit, run_normals
from privenv.seeding import AGENT, noise_for

ALPHA = 1e-6

# -- helpers ------------------------------------------------------------------------------------


def _stream(mech: TreeMechanism, values: np.ndarray) -> np.ndarray:
    """Feed values (T, n_runs, *shape) and collect every released prefix: (T, n_runs, *shape)."""
    return np.stack([mech.add(v) for v in values])


def _shared_nodes(t: int, s: int) -> int:
    return len(set(node_keys(t)) & set(node_keys(s)))


# -- exactness, memoisation, determinism, memory ---------------------------------------------


def test_lowest_set_bit() -> None:
    t = np.arange(1, 2**12)
    expected = [(int(v) & -int(v)).bit_length() - 1 for v in t]
    assert lowest_set_bit(t).tolist() == expected


@pytest.mark.parametrize(
    ("shape", "symmetric"), [((3,), False), ((2, 2), True), ((2, 3), False)]
)
def test_prefix_is_exact_sum_plus_data_independent_noise(shape, symmetric) -> None:
    """prefix(x) − prefix(0) = Σx exactly-ish, for the same seed: the noise never sees the data,
    and the prefix is the true sum whatever T's binary decomposition (T = 37, not a power of 2)."""
    n, horizon = 5, 37
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(horizon, n, *shape))
    if symmetric:
        x = x + np.swapaxes(x, -1, -2)
    a = TreeMechanism(n, shape, 0.7, horizon, noise_for(9, n, AGENT), symmetric=symmetric)
    b = TreeMechanism(n, shape, 0.7, horizon, noise_for(9, n, AGENT), symmetric=symmetric)
    ya, yb = _stream(a, x), _stream(b, np.zeros_like(x))
    np.testing.assert_allclose(ya - yb, np.cumsum(x, axis=0), atol=1e-12)
    assert np.all(a.n_nodes() == bin(horizon).count("1"))
    if symmetric:
        np.testing.assert_array_equal(ya, np.swapaxes(ya, -1, -2))


def test_noise_is_memoised() -> None:
    """Repeated queries return the same numbers; the prefix at 2^j reuses the node [1, 2^j]."""
    mech = TreeMechanism(4, (2,), 1.0, 16, np.random.default_rng(0))
    first = mech.add(np.zeros((4, 2)))
    np.testing.assert_array_equal(first, mech.prefix())
    np.testing.assert_array_equal(mech.prefix(), mech.prefix())
    y2 = mech.add(np.zeros((4, 2)))  # node [1, 2] is new: fresh noise, not first + something
    y3 = mech.add(np.zeros((4, 2)))  # [1, 2] + [3, 3]: the [1, 2] part memoised
    assert mech.n_nodes().tolist() == [2] * 4
    node_12 = mech._psum[:, 1] + mech._node_noise[:, 1]
    np.testing.assert_array_equal(node_12, y2)
    np.testing.assert_allclose(y3 - y2, mech._node_noise[:, 0], atol=0)


def test_run_independent_of_batch_and_live_mask() -> None:
    """Run 2 of seed 11 gives the same prefixes alone (first_run=2) or in a batch of 5, with the
    same live pattern for it while the other runs skip steps."""
    horizon = 20
    rng = np.random.default_rng(1)
    x = rng.normal(size=(horizon, 5, 2, 2))
    x = x + np.swapaxes(x, -1, -2)
    live = rng.random((horizon, 5)) < 0.6
    batch = TreeMechanism(5, (2, 2), 1.3, horizon, noise_for(11, 5, AGENT), symmetric=True)
    alone = TreeMechanism(
        1, (2, 2), 1.3, horizon, noise_for(11, 1, AGENT, first_run=2), symmetric=True
    )
    for t in range(horizon):
        yb = batch.add(x[t], live=live[t])
        ya = alone.add(x[t, 2:3], live=live[t, 2:3])
        np.testing.assert_array_equal(yb[2], ya[0])
    assert batch.t.tolist() == live.sum(axis=0).tolist()


@pytest.mark.parametrize("shape, symmetric", [((1,), False), ((3,), False), ((2, 2), True)])
@pytest.mark.parametrize("live_frac", [1.0, 0.6])
def test_blocks_of_runs_give_the_same_numbers(monkeypatch, shape, symmetric, live_frac) -> None:
    """A large batch is updated and summed by blocks of runs (bounded temporaries): with blocks
    of 3 runs every release and every prefix is bit for bit that of one block, over 40 items
    (6 levels, more than numpy's 8-term unrolled sums never reached here, and all the rest)."""
    import privenv.privacy.tree as tree_module

    horizon, n = 40, 11
    rng = np.random.default_rng(2)
    x = rng.normal(size=(horizon, n, *shape)) * np.exp(rng.normal(size=(horizon, n, *shape)))
    if symmetric:
        x = x + np.swapaxes(x, -1, -2)
    live = rng.random((horizon, n)) < live_frac
    out = []
    for block in (1 << 16, 3):
        monkeypatch.setattr(tree_module, "_BLOCK", block)
        m = TreeMechanism(n, shape, 0.7, horizon, noise_for(5, n, AGENT), symmetric=symmetric)
        out.append([(m.add(x[t], live=None if live_frac == 1.0 else live[t]), m.released())
                    for t in range(horizon)])
    for (p1, r1), (p2, r2) in zip(*out, strict=True):
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_array_equal(r1, r2)


def test_run_normals_order_independent_of_path() -> None:
    """Column-wise and row-wise reads of RunNoise give each run's stream in order."""
    few = run_normals(noise_for(4, 3, AGENT), np.arange(3), 2)  # 2 ≤ 3 runs: column loop
    many = run_normals(noise_for(4, 3, AGENT), np.arange(3), 50)  # row loop
    np.testing.assert_array_equal(few, many[:, :2])


def test_memory_does_not_grow_with_time() -> None:
    mech = TreeMechanism(3, (4, 4), 1.0, 2**20, np.random.default_rng(0), symmetric=True)
    assert mech.levels == 21

    def nbytes() -> int:
        return sum(v.nbytes for v in vars(mech).values() if isinstance(v, np.ndarray))

    before = nbytes()
    for _ in range(300):
        mech.add(np.zeros((3, 4, 4)))
    assert nbytes() == before
    assert mech._psum.shape == mech._node_noise.shape == (3, 21, 4, 4)
    small = TreeMechanism(3, (4, 4), 1.0, 2**10, np.random.default_rng(0), symmetric=True)
    assert small._psum.shape == (3, 11, 4, 4)  # O(log T)


def test_reset_empties_selected_runs() -> None:
    mech = TreeMechanism(3, (2,), 1.0, 8, np.random.default_rng(0))
    for _ in range(3):
        mech.add(np.ones((3, 2)))
    mech.reset(np.array([1]))
    assert mech.t.tolist() == [3, 0, 3]
    np.testing.assert_array_equal(mech.prefix()[1], 0.0)
    assert np.all(mech.prefix()[[0, 2]] != 0.0)


def test_privacy_accounting_matches_oracle() -> None:
    """ρ = levels·Δ²/(2σ²); ε from the exact μ-GDP curve; dp-accounting oracle at T = 1023/1024
    (reference values: noise multiplier 10, δ = 1e-6 → ε = 1.4716563 / 1.5493972 by RDP)."""
    for horizon, levels in ((1, 1), (2, 2), (3, 2), (16, 5), (1023, 10), (1024, 11)):
        mech = TreeMechanism(1, (1,), 2.0, horizon, np.random.default_rng(0))
        assert mech.levels == levels == tree_levels(horizon)
        assert mech.rho(1.5) == pytest.approx(levels * 1.5**2 / 8.0, rel=1e-15)
    mech = TreeMechanism(1, (1,), 10.0, 1023, np.random.default_rng(0))
    mu = math.sqrt(2 * tree_rho(1023, 10.0))
    assert mech.epsilon(1e-6) == pytest.approx(gaussian_epsilon(1e-6, mu), rel=1e-12)
    assert mech.epsilon(1e-6) < 1.4716563  # exact composition is tighter than the RDP oracle
    lap = TreeMechanism(1, (3,), 2.0, 16, np.random.default_rng(0), distribution="laplace")
    assert lap.epsilon(0.0, sensitivity=3.0) == pytest.approx(5 * 3.0 / 2.0)


# -- goodness of fit of the noise (docs/design/threat-model.md, audits item 3) -------------------


def _covariance_max_z(cls: type[TreeMechanism], seed: int) -> tuple[float, np.ndarray]:
    """Max |z| of the empirical prefix-noise covariance against σ²·#shared nodes (T = 16,
    σ = 1.5, 2·10⁵ runs, 136 entries), and the prefixes (n, T)."""
    n, horizon, sigma = 200_000, 16, 1.5
    mech = cls(n, (1,), sigma, horizon, np.random.default_rng(seed))
    y = _stream(mech, np.zeros((horizon, n, 1)))[..., 0].T  # (n, T)
    emp = y.T @ y / n  # the mean is known (0)
    ts = range(1, horizon + 1)
    theory = sigma**2 * np.array([[_shared_nodes(t, s) for s in ts] for t in ts], dtype=float)
    assert np.diag(theory).tolist() == [sigma**2 * bin(t).count("1") for t in ts]
    iu = np.triu_indices(horizon)
    se = np.sqrt((np.outer(np.diag(theory), np.diag(theory)) + theory**2) / n)[iu]
    return float(np.max(np.abs((emp[iu] - theory[iu]) / se))), y


def test_prefix_noise_covariance_is_sigma2_times_shared_nodes() -> None:
    """Over 2·10⁵ runs, Cov(noise_t, noise_s) = σ²·#shared nodes, so Var(noise_t) =
    σ²·popcount(t). z-test on each of the 136 entries with SE² = (Σ_tt Σ_ss + Σ_ts²)/n
    (Gaussian), Bonferroni at α/2; KS + variance test of a 4-node (t = 15) and a 1-node (t = 16)
    prefix at α/4 each. Total false alarm ≤ 1e-6."""
    crit = stats.norm.isf(ALPHA / 2 / 2 / 136)
    max_z, y = _covariance_max_z(TreeMechanism, seed=20261129)
    assert max_z < crit
    for t in (15, 16):
        law = stats.norm(0, 1.5 * math.sqrt(bin(t).count("1")))
        gof = audit.goodness_of_fit(y[:, t - 1], law, alpha=ALPHA / 4)
        assert gof.passed, gof


def test_covariance_test_catches_redrawn_noise() -> None:
    """Mutation: with node noise redrawn at each query, prefixes are uncorrelated."""
    max_z, _ = _covariance_max_z(RedrawTree, seed=7)
    assert max_z > stats.norm.isf(ALPHA / 2 / 2 / 136)


def test_symmetric_and_laplace_node_noise() -> None:
    """Symmetric noise: every upper-triangle entry of a 2-node prefix has variance 2σ², distinct
    entries are uncorrelated; Laplace vector noise: variance 2b² per node. z-tests of the
    variances (Gaussian SE σ²√(2/n); Laplace SE 2b²√(5/n)), Bonferroni over 5 tests: α = 1e-6."""
    n, sigma = 100_000, 0.8
    sym = TreeMechanism(n, (2, 2), sigma, 4, np.random.default_rng(5), symmetric=True)
    y = _stream(sym, np.zeros((3, n, 2, 2)))[2]  # t = 3: nodes [1, 2] and [3, 3]
    crit = stats.norm.isf(ALPHA / 2 / 5)
    var = 2 * sigma**2
    for i, j in ((0, 0), (0, 1), (1, 1)):
        v = np.mean(y[:, i, j] ** 2)
        assert abs(v - var) / (var * math.sqrt(2 / n)) < crit
    c = np.mean(y[:, 0, 0] * y[:, 0, 1])
    assert abs(c) / (var / math.sqrt(n)) < crit
    b = 0.5
    lap = TreeMechanism(n, (3,), b, 4, np.random.default_rng(6), distribution="laplace")
    y = _stream(lap, np.zeros((1, n, 3)))[0].ravel()  # 1 node, 3n values
    assert abs(np.mean(y**2) - 2 * b * b) / (2 * b * b * math.sqrt(5 / y.size)) < crit


# -- privacy audit and mutation tests: the "tree" case of privenv.privacy.audit_composite --------
# (run by tests/privacy/test_audits.py); its redrawing mutant is also used by the covariance test
# above.

RedrawTree = tree_mutant_classes()[1]


# -- bad input ----------------------------------------------------------------------------------


def _tree(**kw):
    args = dict(n_runs=2, shape=(2,), sigma=1.0, horizon=4, noise=np.random.default_rng(0))
    args.update(kw)
    return TreeMechanism(**args)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: _tree(n_runs=0), "n_runs"),
        (lambda: _tree(sigma=0.0), "sigma"),
        (lambda: _tree(sigma=float("nan")), "sigma"),
        (lambda: _tree(horizon=0), "horizon"),
        (lambda: _tree(horizon=2.5), "horizon"),
        (lambda: _tree(shape=(0,)), "shape"),
        (lambda: _tree(shape=(2, 3), symmetric=True), "shape"),
        (lambda: _tree(shape=(2, 2), symmetric=True, distribution="laplace"), "distribution"),
        (lambda: _tree(distribution="cauchy"), "distribution"),
        (lambda: _tree(noise=noise_for(0, 3, AGENT)), "noise"),
        (lambda: _tree(noise=42), "noise"),
        (lambda: _tree().add(np.zeros((2, 3))), "values"),
        (lambda: _tree().add(np.full((2, 2), np.nan)), "values"),
        (lambda: _tree(shape=(2, 2), symmetric=True).add(np.ones((2, 2, 2)) * [[0, 1], [2, 0]]),
         "symmetric"),
        (lambda: _tree().add(np.zeros((2, 2)), live=np.array([1, 0])), "live"),
        (lambda: _tree().add(np.zeros((2, 2)), live=np.array([True])), "live"),
        (lambda: _tree(distribution="laplace").rho(), "rho"),
        (lambda: _tree(sampler="fast"), "sampler"),
        (lambda: _tree().epsilon(0.0), "delta"),
        (lambda: lowest_set_bit(np.array([0])), "t"),
    ],
)
def test_bad_input(build, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        build()


def test_horizon_exceeded() -> None:
    mech = _tree(horizon=3)
    for _ in range(3):
        mech.add(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="horizon"):
        mech.add(np.zeros((2, 2)))


# -- distributed form (paper 2, Algorithm 2) ----------------------------------------------------


@pytest.mark.parametrize(("shape", "symmetric"), [((3, 2), False), ((3, 2, 2), True)])
def test_distributed_form(shape, symmetric) -> None:
    """M = 3 silos: each releases its own noisy p-sum of the completed node; the server's prefix
    (sum over silos) is the exact total plus data-independent noise; messages match the nodes."""
    n, horizon = 4, 8
    rng = np.random.default_rng(12)
    x = rng.normal(size=(horizon, n, *shape))
    if symmetric:
        x = x + np.swapaxes(x, -1, -2)
    a = TreeMechanism(n, shape, 1.0, horizon, noise_for(3, n, AGENT), symmetric=symmetric)
    b = TreeMechanism(n, shape, 1.0, horizon, noise_for(3, n, AGENT), symmetric=symmetric)
    prev = None
    for t in range(horizon):
        ya, yb = a.add(x[t]), b.add(np.zeros_like(x[t]))
        np.testing.assert_allclose(
            ya.sum(axis=1) - yb.sum(axis=1), x[: t + 1].sum(axis=(0, 2)), atol=1e-12
        )
        msg = a.released()
        if (t + 1) & t == 0:  # t + 1 = 2^j: the prefix is the single new node
            np.testing.assert_array_equal(msg, ya)
        if t + 1 == 3:  # prefix(3) = node [1, 2] + node [3, 3]
            np.testing.assert_allclose(msg, ya - prev, atol=1e-12)
        prev = ya
    if symmetric:
        np.testing.assert_array_equal(ya, np.swapaxes(ya, -1, -2))


def test_distributed_server_noise_variance() -> None:
    """Server noise at k = 3 (2 nodes) with M = 3 silos: variance M·2·σ² per coordinate
    (z-test on 2·10⁵ values, SE = var·√(2/n), α = 1e-6)."""
    n, m, sigma = 100_000, 3, 0.6
    mech = TreeMechanism(n, (m, 2), sigma, 4, np.random.default_rng(9))
    y = _stream(mech, np.zeros((3, n, m, 2)))[2].sum(axis=1).ravel()
    var = m * 2 * sigma**2
    assert abs(np.mean(y**2) - var) / (var * math.sqrt(2 / y.size)) < stats.norm.isf(ALPHA / 2)


# -- the exact sampler ---------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "symmetric", "distribution"),
                         [((3,), False, "gaussian"), ((2, 2), True, "gaussian"),
                          ((2, 3, 3), True, "gaussian"), ((3,), False, "laplace")])
def test_exact_tree_releases_grid_multiples_independent_of_the_batch(shape, symmetric,
                                                                     distribution) -> None:
    """With sampler='exact' every prefix sum is an exact multiple of g, a run's prefixes are the
    same alone or in a batch, and prefix(x) − prefix(0) is Σ of the rounded items exactly."""
    horizon, n = 21, 4
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, size=(horizon, n, *shape))
    if symmetric:
        x = x + np.swapaxes(x, -1, -2)

    def tree(runs: int, first: int = 0) -> TreeMechanism:
        return TreeMechanism(runs, shape, 0.7, horizon, noise_for(9, runs, AGENT, first),
                             symmetric=symmetric, distribution=distribution, sampler="exact")

    a, b, alone = tree(n), tree(n), tree(1, 2)
    ya, yb = _stream(a, x), _stream(b, np.zeros_like(x))
    g = a.grid.granularity
    assert np.all(ya / g == np.round(ya / g))
    np.testing.assert_array_equal(ya - yb, np.cumsum(a.grid.round(x) * g, axis=0))
    np.testing.assert_array_equal(_stream(alone, x[:, 2:3])[:, 0], ya[:, 2])
    assert a.noise_sigma >= 0.7
    if symmetric:
        np.testing.assert_array_equal(ya, np.swapaxes(ya, -1, -2))


def test_exact_tree_accounting_covers_the_rounding() -> None:
    """ρ = levels·(Δ/g + √m)²/(2σ_k²) ≥ the float tree's ρ, within 1 %; ε from CKS20's
    conversion; Laplace ε = levels·(⌈Δ₁/g⌉ + m)/t."""
    from privenv.privacy import exact
    from privenv.privacy.accounting import rho_to_epsilon_cks

    f = TreeMechanism(2, (3, 3), 0.7, 40, noise_for(0, 2, AGENT), symmetric=True)
    e = TreeMechanism(2, (3, 3), 0.7, 40, noise_for(0, 2, AGENT), symmetric=True,
                      sampler="exact")
    b = math.sqrt(2) / e.grid.granularity + math.sqrt(6)
    assert e.rho(math.sqrt(2)) == pytest.approx(e.levels * b * b / (2 * 0.7**2 / e.grid
                                                                      .granularity**2), rel=1e-8)
    assert f.rho(math.sqrt(2)) <= e.rho(math.sqrt(2)) <= 1.01 * f.rho(math.sqrt(2))
    assert e.epsilon(1e-6, math.sqrt(2)) == rho_to_epsilon_cks(e.rho(math.sqrt(2)), 1e-6)
    lap = TreeMechanism(2, (3,), 2.0, 40, noise_for(0, 2, AGENT), distribution="laplace",
                        sampler="exact")
    dk = exact.l1_grid_sensitivity(lap.grid, 2.0, 3)
    t = lap.noise_sigma / lap.grid.granularity
    assert lap.epsilon(0.0, 2.0) == pytest.approx(lap.levels * dk / t, rel=1e-12)
    assert lap.epsilon(0.0, 2.0) >= TreeMechanism(
        2, (3,), 2.0, 40, noise_for(0, 2, AGENT), distribution="laplace").epsilon(0.0, 2.0)
