"""The work budgets (privenv.privacy.work): the proved bounds against the measured work of CKS20's
reference loops, the budgets' minimality, the releases' constant.

The bound must hold: at every budget B tested, the measured frequency of draws needing more than
B words stays below the bound (one-sided Clopper–Pearson lower bound of the frequency ≤ the
bound, α = 1e-6 per case, Bonferroni over its budgets; fixed seeds). And it must be informative:
within a factor 30 of the measured frequency where that is resolved (≥ 200 draws beyond B),
and its generating function at most 5 % above the measured E[z^N] at z = 1.02 (and not
below it by more than the sampling error, 2 %).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from privenv import seeding
from privenv.privacy import audit, work
from privenv.privacy import variable_work as V
from privenv.privacy.grid import DiscreteGaussianParameters, DiscreteLaplaceParameters, Grid
from privenv.privacy.releases import RELEASE_BUDGET

ALPHA = 1e-6
N_DRAWS = 1_000_000


@numba.njit
def _reference_work(words, n_draws, gaussian, a, b, c):
    out = np.empty(n_draws, np.int64)
    pos = 0
    for i in range(n_draws):
        if gaussian:
            _, p = V.discrete_gaussian_kernel(words, pos, a, b, c)
        else:
            _, p = V.discrete_laplace_kernel(words, pos, a, b)
        out[i] = p - pos
        pos = p
    return out


#: (gaussian, a, b): the releases' Laplace, t = 1 written two ways, t < 1, a small odd t, the
#: discrete Gaussian at the scalar mechanisms' σ and at a small one
CASES = [(False, 1025 * 2**20, 2**20), (False, 1, 1), (False, 2**20, 2**20), (False, 3, 2**20),
         (False, 7, 3), (True, 3697716, 1), (True, 15, 2)]


@pytest.mark.parametrize(("gaussian", "a", "b"), CASES)
def test_the_bound_holds_and_is_informative(gaussian: bool, a: int, b: int) -> None:
    c = DiscreteGaussianParameters(a, b).t if gaussian else 0
    words = seeding.random_words(np.random.default_rng(a % 1000 + b % 7), N_DRAWS * 30)
    n_words = _reference_work(words, N_DRAWS, gaussian, a, b, c)
    tail = work.gaussian_tail if gaussian else work.laplace_tail
    budgets = np.unique(np.quantile(n_words, [0.9, 0.99, 0.999, 0.9999]).astype(int))
    for budget in budgets:
        k = int(np.sum(n_words > budget))
        bound = tail(a, b, int(budget))
        lo = audit.clopper_pearson_lower(np.array([k]), np.array([N_DRAWS]),
                                         ALPHA / len(budgets))[0]
        assert lo <= bound, (budget, k, bound)
        if k >= 200:
            assert bound <= 30 * k / N_DRAWS, (budget, k, bound)
    pgf = work._gaussian_pgf(1.02, a, b) if gaussian else work._laplace_pgf(1.02, a, b)
    measured = float(np.mean(1.02 ** n_words.astype(float)))
    assert measured * (1 - 0.02) <= pgf <= measured * 1.05


@pytest.mark.parametrize(("gaussian", "a", "b"), CASES)
def test_a_budget_is_the_least_with_its_bound_below_two_to_the_minus_64(gaussian, a, b) -> None:
    budget = (work.gaussian_budget if gaussian else work.laplace_budget)(a, b)
    tail = work.gaussian_tail if gaussian else work.laplace_tail
    assert tail(a, b, budget) <= work.WORK_FAILURE < tail(a, b, budget - 1)


def test_the_releases_budget_is_the_range_bound_and_covers_the_range() -> None:
    """:data:`RELEASE_BUDGET` is the bound over every scale a release can have (numerators
    2³⁰ … 2⁵² over 2²⁰), and no smaller than any single scale's budget in it."""
    assert RELEASE_BUDGET == work.laplace_range_budget(2**30, 2**52, 2**20)
    for n in (2**30, 1025 * 2**20, 3 * 2**35 + 1, 2**52):
        assert work.laplace_budget(n, 2**20) <= RELEASE_BUDGET
    with pytest.raises(ValueError, match="num_lo"):
        work.laplace_range_budget(2**10, 2**52, 2**20)


def test_the_parameters_carry_their_budgets() -> None:
    p = DiscreteLaplaceParameters.calibrate(1.0, Grid(-10), 1024)
    assert p.budget == work.laplace_budget(p.scale_num, p.scale_den) == RELEASE_BUDGET
    q = DiscreteGaussianParameters(3697716, 1)
    assert q.budget == work.gaussian_budget(3697716, 1)
    assert 400 < q.budget < 600
    assert math.isclose(work.WORK_FAILURE, 2.0**-64)
