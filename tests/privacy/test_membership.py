"""The membership-inference game (privenv.privacy.membership): the ε-DP success bound and its
inverse, the fitted threshold rule, and the whole game on toy mechanisms whose leak is known —
one that reveals membership (success 1), randomized response (success e^ε/(1+e^ε)) and a constant
one (chance). Fixed seeds; each statistical assertion states its false-alarm probability."""

import math

import numpy as np
import pytest

from privenv.privacy.membership import (
    ThresholdAttack,
    coins,
    dp_success_bound,
    epsilon_from_success,
    membership_test,
)
from privenv.seeding import run_seed_sequences


def test_dp_success_bound_and_its_inverse():
    assert dp_success_bound(0.0) == 0.5
    assert dp_success_bound(1.0) == pytest.approx(math.e / (1 + math.e))
    assert dp_success_bound(1.0, 0.01) == pytest.approx((math.e + 0.01) / (1 + math.e))
    assert dp_success_bound(1e4) == 1.0
    for eps, delta in ((0.3, 0.0), (1.0, 1e-4), (4.0, 0.05)):
        assert epsilon_from_success(dp_success_bound(eps, delta), delta) == pytest.approx(eps)
    assert epsilon_from_success(0.4) == 0.0 and epsilon_from_success(1.0) == math.inf


def test_threshold_attack_fit_picks_the_separating_rule():
    scores = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
    member = np.array([False, False, False, True, True, True])
    attack = ThresholdAttack.fit(scores, member)
    assert not attack.below and 3.0 <= attack.threshold < 10.0
    assert np.array_equal(attack.guess(scores), member)
    flipped = ThresholdAttack.fit(scores, ~member)
    assert flipped.below and np.array_equal(flipped.guess(scores), ~member)


def test_coins_do_not_depend_on_the_batch():
    c = coins(40, seed=3)
    assert np.array_equal(c[25:], coins(15, seed=3, first_run=25))
    assert 5 < c.sum() < 35  # 40 fair coins: P(outside) < 1e-5


def _revealing(member, seed, first_run):
    return member.astype(float)


def _constant(member, seed, first_run):
    return np.zeros(member.shape)


def _randomized_response(epsilon):
    """Output the coin, flipped with probability 1/(1 + e^ε): exactly ε-DP, and the best attack's
    success is e^ε/(1 + e^ε)."""
    def release(member, seed, first_run):
        u = np.array([np.random.default_rng(s).random()
                      for s in run_seed_sequences(seed, member.size, first_run)])
        return np.where(u < 1 / (1 + math.exp(epsilon)), ~member, member).astype(float)
    return release


def test_revealing_mechanism_is_caught():
    result, trial = membership_test(_revealing, trials=200, seed=0)
    assert result.success == 1.0 and np.array_equal(trial["guess"], trial["member"])
    # p_lo = 0.05^(1/200) = 0.985, so every ε < 4.2 is refuted (deterministic here)
    assert result.violates(3.0) and result.epsilon_lower_bound() > 4.0
    assert result.audit().epsilon_lb > 2.0


def test_constant_mechanism_is_at_chance():
    # the guess cannot depend on the coin: successes ~ Binomial(500, 1/2); the 95 % CP interval
    # misses 1/2 with probability <= 0.05 (fixed seed)
    result, trial = membership_test(_constant, trials=500, seed=1)
    assert len(np.unique(trial["guess"])) == 1
    assert result.consistent_with_chance() and not result.violates(0.0)
    assert result.epsilon_lower_bound() == 0.0


def test_randomized_response_matches_its_epsilon():
    eps = 1.0
    result, _ = membership_test(_randomized_response(eps), trials=2000, seed=2)
    # the true success is e/(1+e) = 0.731; the interval misses it with probability <= 0.05
    assert result.interval[0] <= dp_success_bound(eps) <= result.interval[1]
    assert not result.violates(eps)  # false alarm <= 0.05 (one-sided CP), fixed seed
    assert result.violates(0.2)  # bound 0.55: SE 0.01, a miss would need ~15 SE


def test_bad_input():
    with pytest.raises(ValueError, match="trials"):
        membership_test(_constant, trials=1)
    with pytest.raises(ValueError, match="calibration_trials"):
        membership_test(_constant, trials=10, calibration_trials=0)
    with pytest.raises(ValueError, match="alpha"):
        membership_test(_constant, trials=10, alpha=1.5)
    with pytest.raises(ValueError, match="one number per run"):
        membership_test(lambda m, s, f: np.zeros((m.size, 2)), trials=10)
    with pytest.raises(ValueError, match="epsilon"):
        dp_success_bound(-1.0)
    with pytest.raises(ValueError, match="delta"):
        dp_success_bound(1.0, 1.0)
    with pytest.raises(ValueError, match="success"):
        epsilon_from_success(float("nan"))
    with pytest.raises(ValueError, match="equal length"):
        ThresholdAttack.fit(np.zeros(3), np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match="finite"):
        ThresholdAttack.fit(np.array([0.0, np.inf]), np.array([True, False]))
