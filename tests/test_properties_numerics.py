"""Numerical robustness (docs/design/threat-model.md): thresholds, bonuses and accountants stay
finite and monotone over ε ∈ [1e-4, 1e3], δ ∈ [1e-12, 0.5] and counts up to 1e9 (property tests,
``hypothesis``).

Covered here: the federated calibrations (paper 2: σ₀, λ, the whole ``calibrate`` record), P_Vec's
parameters and node budget, the tree accounting, LDP-LinUCB's Υ_t and β_t, and the widths of the
linear agents (OFUL's radius, the central tree's noise bounds). The Gaussian/zCDP conversions and
the Top Two thresholds have their own property tests (tests/privacy/test_privacy_accounting.py,
tests/agents/test_top_two.py, tests/agents/test_adap_tt.py).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privenv.agents.central_linucb import CentralDPLinUCB, tree_noise_bounds
from privenv.agents.linear import ldp_linucb_beta, ldp_linucb_upsilon, oful_radius
from privenv.privacy import vector_sum as vs
from privenv.privacy.accounting import gaussian_epsilon, tree_levels, tree_rho
from privenv.privacy.federated import (
    calibrate,
    federated_kappa,
    ldp_epsilon,
    ldp_sigma0,
    private_lambda,
    replace_one_sensitivities,
)
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.wrappers.ldp_linear import GaussianStatisticsRandomizer

EPS = st.floats(1e-4, 1e3)
LOG_DELTA = st.floats(math.log(1e-12), math.log(0.5))
COUNT = st.integers(1, 10**9)
SETTINGS = settings(max_examples=40, deadline=None)


def _finite_positive(*xs: float) -> bool:
    return all(math.isfinite(x) and x > 0 for x in xs)


# -- federated calibrations (privenv/privacy/federated.py) ---------------------------------------


@SETTINGS
@given(eps=EPS, ratio=st.floats(1.001, 10.0), log_delta=LOG_DELTA, n_syncs=COUNT,
       d=st.integers(1, 50), b=st.floats(1e-3, 1e3))
def test_ldp_sigma0_is_finite_decreasing_in_epsilon_and_inverts(eps, ratio, log_delta, n_syncs,
                                                                d, b):
    delta = math.exp(log_delta)
    kappa = federated_kappa(n_syncs)
    assert kappa == n_syncs.bit_length() <= 30
    sens = replace_one_sensitivities(d, b)
    s1 = ldp_sigma0(eps, delta, kappa, *sens)
    s2 = ldp_sigma0(min(eps * ratio, 1e3), delta, kappa, *sens)
    assert _finite_positive(s1, s2) and s2 <= s1
    # more tree levels (longer streams) never need less noise
    assert ldp_sigma0(eps, delta, kappa + 1, *sens) >= s1
    assert ldp_epsilon(s1, delta, kappa, *sens) == pytest.approx(eps, rel=1e-6, abs=1e-9)


@SETTINGS
@given(M=st.integers(1, 10**4), n_syncs=COUNT, sigma0=st.floats(1e-6, 1e6),
       log_alpha=st.floats(math.log(1e-12), math.log(0.5)), d=st.integers(1, 100))
def test_private_lambda_is_finite_and_increasing(M, n_syncs, sigma0, log_alpha, d):
    kappa, alpha = federated_kappa(n_syncs), math.exp(log_alpha)
    lam = private_lambda(M, kappa, sigma0, alpha, d)
    assert _finite_positive(lam)
    assert private_lambda(M, kappa, 2 * sigma0, alpha, d) >= lam
    assert private_lambda(M + 1, kappa, sigma0, alpha, d) >= lam
    assert private_lambda(M, kappa, sigma0, alpha / 2, d) >= lam


@SETTINGS
@given(eps=EPS, log_delta=LOG_DELTA, M=st.integers(1, 1000), d=st.integers(1, 20),
       horizon=COUNT, b=st.floats(1e-2, 1e2))
def test_calibrate_ldp_record_is_finite(eps, log_delta, M, d, horizon, b):
    delta = math.exp(log_delta)
    n_syncs = max(horizon // 25, 1)
    cal = calibrate("ldp", epsilon=eps, delta=delta, M=M, d=d, horizon=horizon,
                    n_syncs=n_syncs, alpha=0.01, reward_bound=b)
    assert _finite_positive(cal.sigma0, cal.lambda_, cal.rho_node, cal.rho_stream)
    assert cal.kappa == federated_kappa(n_syncs)
    assert cal.guarantee.epsilon == eps and cal.guarantee.delta == delta
    higher = calibrate("ldp", epsilon=min(2 * eps, 1e3), delta=delta, M=M, d=d,
                       horizon=horizon, n_syncs=n_syncs, alpha=0.01, reward_bound=b)
    assert higher.sigma0 <= cal.sigma0 and higher.lambda_ <= cal.lambda_


# -- P_Vec (privenv/privacy/vector_sum.py) -------------------------------------------------------


@SETTINGS
@given(n=COUNT, d=st.integers(1, 100), eps=EPS, log_delta=LOG_DELTA)
def test_vector_sum_parameters_are_finite_and_monotone(n, d, eps, log_delta):
    delta = math.exp(log_delta)
    p = vs.vector_sum_parameters(n, d, eps, delta)
    assert p.g >= max(4, d) and p.b >= 1 and isinstance(p.b, int)
    assert p.g >= 2 * math.sqrt(n) - 1e-9
    # more budget never needs more binomial trials
    q = vs.vector_sum_parameters(n, d, min(2 * eps, 1e3), delta)
    assert q.b <= p.b
    assert math.isfinite(vs.max_error_std(1.0, p)) and vs.max_error_std(1.0, p) > 0


@SETTINGS
@given(eps=st.floats(1e-4, 1e3), log_delta=LOG_DELTA, n_syncs=COUNT)
def test_node_budget_composes_within_the_target(eps, log_delta, n_syncs):
    delta = math.exp(log_delta)
    kappa = federated_kappa(n_syncs)
    eps0, delta0 = vs.node_budget(eps, delta, kappa)
    assert _finite_positive(eps0, delta0) and eps0 <= eps
    total = vs.compose_nodes(PrivacyGuarantee("shuffle", eps0, delta0, "user"), kappa)
    assert total.epsilon <= eps * (1 + 1e-9) and total.delta <= delta * (1 + 1e-9)
    assert vs.node_budget(min(2 * eps, 2e3), delta, kappa)[0] >= eps0


def test_node_budget_at_epsilon_1e3():
    """Advanced composition's e^{ε₀} would overflow above ε₀ ≈ 709.8 (a bug the property tests
    found): there basic composition is used."""
    eps0, _ = vs.node_budget(1e3, 1e-6, 1)
    assert math.isfinite(eps0) and eps0 <= 1e3


# -- the tree accounting --------------------------------------------------------------------------


@SETTINGS
@given(T=COUNT, sigma=st.floats(1e-3, 1e6), sens=st.floats(1e-3, 1e3),
       log_delta=LOG_DELTA)
def test_tree_accounting_is_finite_and_monotone(T, sigma, sens, log_delta):
    delta = math.exp(log_delta)
    assert tree_levels(T) == T.bit_length() == math.floor(math.log2(T)) + 1
    rho = tree_rho(T, sigma, sens)
    assert _finite_positive(rho)
    assert rho == pytest.approx(tree_levels(T) * sens**2 / (2 * sigma**2))
    assert tree_rho(2 * T, sigma, sens) > rho  # one more level
    assert tree_rho(T, 2 * sigma, sens) < rho
    eps = gaussian_epsilon(delta, math.sqrt(2 * rho))
    assert math.isfinite(eps) and eps >= 0
    assert gaussian_epsilon(delta, math.sqrt(2 * tree_rho(2 * T, sigma, sens))) >= eps


# -- LDP-LinUCB: σ, Υ_t, β_t ----------------------------------------------------------------------


@SETTINGS
@given(eps=EPS, log_delta=LOG_DELTA, t=COUNT, extra=st.integers(0, 10**9), d=st.integers(1, 50),
       log_alpha=st.floats(math.log(1e-12), math.log(0.5)))
def test_ldp_linucb_upsilon_and_beta_are_finite_and_monotone(eps, log_delta, t, extra, d,
                                                              log_alpha):
    delta, alpha = math.exp(log_delta), math.exp(log_alpha)
    T = t + extra
    sigma = GaussianStatisticsRandomizer(eps, delta, d).sigma
    assert _finite_positive(sigma)
    assert GaussianStatisticsRandomizer(min(2 * eps, 1e3), delta, d).sigma <= sigma
    ups = ldp_linucb_upsilon(sigma, t, d, T, alpha)
    beta = ldp_linucb_beta(sigma, t, d, T, ups)
    assert _finite_positive(ups) and math.isfinite(beta) and beta >= 0
    ups2 = ldp_linucb_upsilon(sigma, t + 1, d, T + 1, alpha)
    assert ups2 >= ups  # Υ_t grows with t
    assert ldp_linucb_upsilon(sigma, t, d, T, alpha / 2) >= ups


# -- linear agents' widths ---------------------------------------------------------------------


@SETTINGS
@given(d=st.integers(1, 50), log_lambda=st.floats(math.log(1e-6), math.log(1e6)),
       gain=st.floats(0.0, 1e4), log_alpha=st.floats(math.log(1e-12), math.log(0.5)),
       sigma=st.floats(0.0, 1e3), S=st.floats(0.0, 1e3))
def test_oful_radius_is_finite_and_monotone(d, log_lambda, gain, log_alpha, sigma, S):
    lam, alpha = math.exp(log_lambda), math.exp(log_alpha)
    logdet = d * math.log(lam) + gain  # log det V ≥ d log λ
    r = float(oful_radius(logdet, d, lam, sigma, S, alpha))
    assert math.isfinite(r) and r >= 0
    assert float(oful_radius(logdet + 1.0, d, lam, sigma, S, alpha)) >= r
    assert float(oful_radius(logdet, d, lam, sigma, S, alpha / 2)) >= r


@SETTINGS
@given(eps=EPS, log_delta=LOG_DELTA, horizon=COUNT, d=st.integers(1, 20),
       log_alpha=st.floats(math.log(1e-12), math.log(0.5)))
def test_central_dp_linucb_noise_bounds_and_width_are_finite(eps, log_delta, horizon, d,
                                                              log_alpha):
    delta, alpha = math.exp(log_delta), math.exp(log_alpha)
    agent = CentralDPLinUCB(d=d, horizon=horizon, epsilon=eps, delta=delta, alpha=alpha)
    assert _finite_positive(agent.noise_sigma, agent.upsilon, agent.h_max, agent.gamma,
                            agent.rho)
    width = float(agent.width(d * math.log(agent.rho_min)))
    assert math.isfinite(width) and width > 0
    # the noise bounds grow with the horizon and the number of levels
    ups, h = tree_noise_bounds(agent.noise_sigma, agent.levels, d, horizon, alpha)
    ups2, h2 = tree_noise_bounds(agent.noise_sigma, agent.levels + 1, d, 2 * horizon, alpha)
    assert (ups, h) == (agent.upsilon, agent.h_max) and ups2 >= ups and h2 >= h
    assert CentralDPLinUCB(d=d, horizon=horizon, epsilon=min(2 * eps, 1e3), delta=delta,
                           alpha=alpha).noise_sigma <= agent.noise_sigma
