"""Paper 1 rate curves (privenv.theory.huber) against hand-computed values."""

import math

import numpy as np
import pytest

from privenv.theory import huber as th

E = math.e


def test_lower_bound_theorem_4_1_hand_values():
    # T = 10⁴, K = 4, ε = 0.25, α = 0.01, k = 2: √(4·10⁴) = 200, (16)^½·10² = 400, 10⁴·0.1 = 1000
    terms = th.lower_bound_terms(1e4, 4, 0.25, 0.01, k=2)
    assert terms["sqrt(KT)"] == pytest.approx(200.0)
    assert terms["privacy"] == pytest.approx(400.0)
    assert terms["contamination"] == pytest.approx(1000.0)
    assert th.lower_bound_rate(1e4, 4, 0.25, 0.01) == pytest.approx(1600.0)
    # k = 4: T = 16, K = 2, ε = 2, α = 1/16: √32 + 1·16^¼ + 16·(1/16)^¾ = 4√2 + 2 + 2
    assert th.lower_bound_rate(16, 2, 2.0, 1 / 16, k=4) == pytest.approx(4 * math.sqrt(2) + 4)
    # k = ∞ (bounded rewards), α = 0: √(KT) + K/ε
    assert th.lower_bound_rate(100, 4, 1.0, 0.0, k=math.inf) == pytest.approx(20 + 4)


def test_lower_bound_is_an_array_over_T():
    T = np.array([1.0, 100.0, 1e4])
    r = th.lower_bound_rate(T, 4, 1.0, 0.0)
    assert r.shape == (3,)
    # √(4T) + 2√T = 4√T
    np.testing.assert_allclose(r, 4 * np.sqrt(T))


def test_upper_bound_raw_theorem_6_2_and_remark_6_3():
    # T = e² (log T = 2), K = 2, ε = 1, α = 1/4, k = 2:
    # √(2e²·2) = 2e, (2·2/1)^½·e = 2e, e²·(1/4)^½ = e²/2, K log T/α = 16
    terms = th.upper_bound_raw_terms(E**2, 2, 1.0, 0.25)
    assert terms["sqrt(KT log T)"] == pytest.approx(2 * E)
    assert terms["privacy"] == pytest.approx(2 * E)
    assert terms["contamination"] == pytest.approx(E**2 / 2)
    assert terms["first phase"] == pytest.approx(16.0)
    assert th.upper_bound_raw_rate(E**2, 2, 1.0, 0.25) == pytest.approx(4 * E + E**2 / 2 + 16)
    # α = 0 (Remark 6.3): the first two terms only
    assert set(th.upper_bound_raw_terms(E**2, 2, 1.0, 0.0)) == {"sqrt(KT log T)", "privacy"}
    assert th.upper_bound_raw_rate(E**2, 2, 1.0, 0.0) == pytest.approx(4 * E)


def test_upper_bound_central_theorems_6_10_and_6_12():
    # Theorem 6.10 (α = 0), T = e², K = 2, ε = 1, k = 2, D = 1: 4e + γ, γ = K·D·log(DT)/ε = 4
    assert th.upper_bound_central_rate(E**2, 2, 1.0, 0.0, D=1.0) == pytest.approx(4 * E + 4)
    # Theorem 6.12 (α = 0.049): ι = 0.951/0.2 = 4.755;
    # γ̂ = D·K·log T/α² + ι·D·K·log T/ε + D·K·log(DT)/ε = 4/0.049² + 4.755·4 + 4
    assert th.iota(0.049) == pytest.approx(4.755)
    expected = 4 * E + E**2 * math.sqrt(0.049) + 4 / 0.049**2 + 4.755 * 4 + 4
    assert th.upper_bound_central_rate(E**2, 2, 1.0, 0.049, D=1.0) == pytest.approx(expected)
    # D scales γ̂ and enters the log: D = e, T = e: log(DT) = 2
    terms = th.upper_bound_central_terms(E, 2, 1.0, 0.0, D=E)
    assert terms["first phase"] == pytest.approx(2 * E * 2)


def test_rates_move_in_the_directions_the_theorems_say():
    T = np.geomspace(10, 1e5, 20)
    lb = [th.lower_bound_rate(T, 5, eps, 0.05) for eps in (0.2, 0.5, 1.0)]
    assert np.all(lb[0] > lb[1]) and np.all(lb[1] > lb[2])  # regret grows as ε shrinks
    # in Theorem 6.12 the first-phase term D·K·log T/α² falls as α grows: at T = 10⁵ it dominates
    ub = [th.upper_bound_central_terms(1e5, 5, 0.5, a, D=1.0) for a in (0.02, 0.1)]
    assert ub[0]["first phase"] > ub[1]["first phase"]
    assert ub[0]["contamination"] < ub[1]["contamination"]
    big_t = [th.lower_bound_rate(1e12, 5, 0.5, a) for a in (0.02, 0.05, 0.1)]
    assert big_t[0] < big_t[1] < big_t[2]


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: th.lower_bound_rate(100, 5, 0.0, 0.05), "epsilon"),
        (lambda: th.lower_bound_rate(100, 5, 0.5, 1.0), "alpha"),
        (lambda: th.lower_bound_rate(100, 1, 0.5, 0.05), "K"),
        (lambda: th.lower_bound_rate(100, 5, 0.5, 0.05, k=1.0), "k"),
        (lambda: th.lower_bound_rate(0.5, 5, 0.5, 0.05), "T"),
        (lambda: th.upper_bound_central_rate(100, 5, 0.5, 0.133), "alpha"),
        (lambda: th.upper_bound_central_rate(100, 5, 0.5, 0.05, D=0.0), "D"),
        (lambda: th.upper_bound_raw_rate(100, 5, float("nan"), 0.05), "epsilon"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()
