"""Bad input (docs/design/architecture.md, "Errors"): every invalid parameter raises ValueError
naming the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privenv.privacy import accounting as acc
from privenv.privacy import audit
from privenv.privacy import mechanisms as mech

RNG = np.random.default_rng(0)
NAN, INF = float("nan"), float("inf")

CASES = [
    # (call, parameter named in the message)
    (lambda: mech.laplace_scale(0.0), "epsilon"),
    (lambda: mech.laplace_scale(-1.0), "epsilon"),
    (lambda: mech.laplace_scale(NAN), "epsilon"),
    (lambda: mech.laplace_scale(INF), "epsilon"),
    (lambda: mech.laplace_scale(True), "epsilon"),
    (lambda: mech.laplace_scale(1.0, sensitivity=0.0), "sensitivity"),
    (lambda: mech.laplace_scale(1.0, sensitivity=-2.0), "sensitivity"),
    (lambda: mech.laplace(0.0, RNG, 3), "scale"),
    (lambda: mech.laplace_from_uniform(np.array([0.2, 1.0]), 1.0), "u"),
    (lambda: mech.laplace_from_uniform(np.array([-0.1]), 1.0), "u"),
    (lambda: mech.laplace_from_uniform(np.array([NAN]), 1.0), "u"),
    (lambda: mech.gaussian_sigma_analytic(0.0, 1e-6), "epsilon"),
    (lambda: mech.gaussian_sigma_analytic(1.0, 0.0), "delta"),
    (lambda: mech.gaussian_sigma_analytic(1.0, 1.0), "delta"),
    (lambda: mech.gaussian_sigma_analytic(1.0, NAN), "delta"),
    (lambda: mech.gaussian_sigma_analytic(1.0, 1e-6, sensitivity=0.0), "sensitivity"),
    (lambda: mech.gaussian_sigma_classical(0.5, 1.5), "delta"),
    (lambda: mech.gaussian_sigma_classical(2.0, 1e-6), "epsilon"),
    (lambda: mech.gaussian_sigma_zcdp(0.0), "rho"),
    (lambda: mech.gaussian(-1.0, RNG, 3), "sigma"),
    (lambda: mech.gaussian_from_standard(np.zeros(3), NAN), "sigma"),
    (lambda: mech.symmetric_gaussian_matrix(1.0, 0, RNG), "dim"),
    (lambda: mech.symmetric_gaussian_from_standard(np.zeros(5), 3, 1.0), "z"),
    (lambda: mech.randomized_response(np.array([0.5, 1.2]), 1.0, RNG), "rewards"),
    (lambda: mech.randomized_response(np.array([-0.01]), 1.0, RNG), "rewards"),
    (lambda: mech.randomized_response(np.array([NAN]), 1.0, RNG), "rewards"),
    (lambda: mech.randomized_response(np.array([0.5]), 0.0, RNG), "epsilon"),
    (lambda: mech.randomized_response_from_uniform(0.5, 1.5, 1.0), "u"),
    (lambda: mech.rr_debias_mean(0.5, -1.0), "epsilon"),
    (lambda: mech.rr_debias_mean(1.5, 1.0), "m"),
    (lambda: mech.rr_keep_probability(NAN), "epsilon"),
    (lambda: acc.compose_sequential([0.1, -0.1]), "epsilons"),
    (lambda: acc.compose_sequential([0.1], [2.0]), "deltas"),
    (lambda: acc.compose_parallel([NAN]), "epsilons"),
    (lambda: acc.BudgetAccountant(0.0), "epsilon"),
    (lambda: acc.BudgetAccountant(1.0, delta=1.0), "delta"),
    (lambda: acc.BudgetAccountant(1.0).spend(-0.1), "epsilon"),
    (lambda: acc.gaussian_rho(0.0), "sigma"),
    (lambda: acc.gaussian_rho(1.0, sensitivity=INF), "sensitivity"),
    (lambda: acc.pure_dp_to_rho(0.0), "epsilon"),
    (lambda: acc.compose_rho([0.1, NAN]), "rhos"),
    (lambda: acc.tree_levels(0), "horizon"),
    (lambda: acc.tree_levels(3.5), "horizon"),
    (lambda: acc.tree_rho(10, 0.0), "sigma"),
    (lambda: acc.rho_to_epsilon_bun_steinke(-0.1, 1e-6), "rho"),
    (lambda: acc.rho_to_epsilon_cks(0.1, 0.0), "delta"),
    (lambda: acc.rdp_to_epsilon(lambda a: a, 1e-6, orders=[0.5, 2.0]), "orders"),
    (lambda: acc.rho_for_epsilon(1.0, 2.0), "delta"),
    (lambda: acc.gaussian_mu([1.0, 0.0]), "sigmas"),
    (lambda: acc.gaussian_mu(1.0, sensitivities=-1.0), "sensitivities"),
    (lambda: acc.gaussian_delta(-1.0, 1.0), "epsilon"),
    (lambda: acc.gaussian_delta(1.0, 0.0), "mu"),
    (lambda: acc.gaussian_epsilon(0.0, 1.0), "delta"),
    (lambda: acc.shuffle_amplification_closed_form(0.0, 1000, 1e-6), "epsilon0"),
    (lambda: acc.shuffle_amplification_closed_form(1.0, 0, 1e-6), "n"),
    (lambda: acc.shuffle_amplification_closed_form(1.0, 1000, 0.0), "delta"),
    (lambda: acc.shuffle_amplification_numerical(1.0, 1000, 1e-6, block=0), "block"),
    (lambda: acc.shuffle_amplification_numerical(1.0, 1000, 1e-6, iterations=0), "iterations"),
    (lambda: acc.shuffle_delta_bound(NAN, 1.0, 100), "epsilon"),
    (lambda: acc.shuffled_rr_delta(0.1, 1.0, 10, ones=[10]), "ones"),
    (lambda: audit.clopper_pearson(5, 3, 0.01), "counts"),
    (lambda: audit.clopper_pearson(1, 3, 0.0), "alpha"),
    (lambda: audit.wilson_interval(-1, 3, 0.05), "counts"),
    (lambda: audit.epsilon_lower_bound(np.array([1, 2]), 10, np.array([1]), 10), "counts_d"),
    (lambda: audit.epsilon_lower_bound(np.array([1]), 10, np.array([1]), 10, delta=1.0), "delta"),
    (lambda: audit.threshold_epsilon_lower_bound(np.zeros(5), np.zeros(5), []), "thresholds"),
    (lambda: audit.holdout_epsilon_lower_bound(np.zeros(1), np.zeros(5)), "scores_d"),
    (lambda: audit.goodness_of_fit(np.zeros(1), None), "samples"),
]


@pytest.mark.parametrize(("call", "name"), CASES, ids=[f"{i}-{c[1]}" for i, c in enumerate(CASES)])
def test_bad_input_raises_value_error_naming_the_parameter(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()


def test_valid_extremes_stay_finite() -> None:
    """The extremes of the numerical-robustness ranges (docs/design/threat-model.md) are accepted
    and give finite numbers."""
    for eps in (1e-4, 1e3):
        for delta in (1e-12, 0.5):
            assert math.isfinite(mech.gaussian_sigma_analytic(eps, delta))
            assert math.isfinite(acc.rho_to_epsilon_cks(acc.pure_dp_to_rho(eps), delta))
        assert math.isfinite(mech.laplace_scale(eps))
        assert np.all(np.isfinite(mech.rr_debias_mean(np.array([0.0, 0.5, 1.0]), eps)))
