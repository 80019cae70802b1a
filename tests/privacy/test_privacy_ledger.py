"""The per-user ledger (docs/design/threat-model.md): exact-once charging, reuse detection,
parallel composition."""

from __future__ import annotations

import numpy as np
import pytest

from privenv.privacy import Ledger, PrivacyBudgetExceeded


def _phases(ledger: Ledger, n_runs: int, bounds: list[tuple[int, int]], eps: float) -> None:
    """A phased agent: each phase releases one noisy mean of the rewards of its rounds."""
    for start, stop in bounds:
        runs = np.repeat(np.arange(n_runs), stop - start)
        users = np.tile(np.arange(start, stop), n_runs)
        ledger.charge(runs, users, eps, label=f"phase [{start}, {stop})")


def test_exact_once_charging_passes() -> None:
    """Disjoint phases (parallel composition): every user spends ε once, whatever the count."""
    ledger = Ledger(n_runs=3, n_users=16)
    _phases(ledger, 3, [(0, 2), (2, 6), (6, 14)], eps=0.5)  # rounds 14, 15 never used
    mask = np.zeros((3, 16), dtype=bool)
    mask[:, :14] = True
    ledger.assert_each_user_charged_exactly(0.5, users_mask=mask)
    ledger.assert_within(0.5)
    assert ledger.releases() == 3
    assert ledger.epsilon_spent().max() == 0.5  # parallel releases do not add up


def test_reused_user_is_caught_with_a_clear_message() -> None:
    """A phase that reuses round 5 (overlapping windows) exceeds ε for that user only."""
    ledger = Ledger(n_runs=2, n_users=10)
    _phases(ledger, 2, [(0, 6), (5, 10)], eps=0.5)  # round 5 enters both releases
    with pytest.raises(PrivacyBudgetExceeded, match=r"user 5 .*spent epsilon = 1 over 2 release"):
        ledger.assert_within(0.5)
    with pytest.raises(
        PrivacyBudgetExceeded, match=r"first 'phase \[0, 6\)', last 'phase \[5, 10\)'"
    ):
        ledger.assert_each_user_charged_exactly(0.5)
    with pytest.raises(AssertionError, match="2 \\(run, user\\) pairs"):  # both runs reuse it
        ledger.assert_within(0.5)
    ledger.assert_within(0.5, users=slice(0, 5))  # the other users are fine
    ledger.assert_within(1.0)  # and within a budget of 2 × 0.5


def test_user_not_charged_or_undercharged_is_caught() -> None:
    ledger = Ledger(n_runs=1, n_users=4)
    ledger.charge(np.array([0, 0, 0]), np.array([0, 1, 2]), 0.25)
    with pytest.raises(AssertionError, match="user 3 charged less than epsilon"):
        ledger.assert_each_user_charged_exactly(0.25)
    with pytest.raises(AssertionError, match="charged less than"):
        ledger.assert_each_user_charged_exactly(
            0.5, users_mask=np.array([[True, True, True, False]])
        )
    with pytest.raises(PrivacyBudgetExceeded, match="user 2 charged more than epsilon = 0"):
        ledger.assert_each_user_charged_exactly(
            0.25, users_mask=np.array([[True, True, False, False]])
        )


def test_duplicates_within_one_release_count_once() -> None:
    ledger = Ledger(n_runs=2, n_users=3)
    ledger.charge(np.array([0, 0, 0, 1]), np.array([1, 1, 1, 2]), 0.3)
    spent = ledger.epsilon_spent()
    assert spent[0, 1] == 0.3 and spent[1, 2] == 0.3 and spent.sum() == pytest.approx(0.6)
    assert ledger.release_counts()[0, 1] == 1


def test_zcdp_charges() -> None:
    """Gaussian releases charge ρ; ρ adds over releases touching a user (zCDP composition)."""
    ledger = Ledger(n_runs=1, n_users=8)
    for t in range(1, 9):  # a running sum: release t contains users 0..t-1
        ledger.charge(np.zeros(t, dtype=int), np.arange(t), rho=0.01, label=f"prefix {t}")
    rho = ledger.rho_spent()[0]
    np.testing.assert_allclose(rho, 0.01 * np.arange(8, 0, -1))
    assert ledger.epsilon_spent().sum() == 0.0
    ledger.assert_within(0.0, rho=0.08)
    with pytest.raises(PrivacyBudgetExceeded, match="user 0 over the declared rho"):
        ledger.assert_within(0.0, rho=0.05)


def test_tolerance_for_floating_point_sums() -> None:
    """Ten releases of 0.1 total 1.0 up to rounding: within a budget of 1.0."""
    ledger = Ledger(n_runs=1, n_users=1)
    for _ in range(10):
        ledger.charge(np.array([0]), np.array([0]), 0.1)
    ledger.assert_within(1.0)
    with pytest.raises(PrivacyBudgetExceeded):
        ledger.assert_within(0.999999)


@pytest.mark.parametrize(
    ("runs", "users", "kwargs", "match"),
    [
        ([0, 1], [0], {"epsilon": 0.1}, "same length"),
        ([0, 2], [0, 0], {"epsilon": 0.1}, "runs must lie"),
        ([0], [5], {"epsilon": 0.1}, "users must lie"),
        ([0], [-1], {"epsilon": 0.1}, "users must lie"),
        ([0.0], [0], {"epsilon": 0.1}, "runs must be a 1-D integer"),
        ([[0]], [[0]], {"epsilon": 0.1}, "runs must be a 1-D integer"),
        ([0], [0], {"epsilon": -0.1}, "epsilon"),
        ([0], [0], {"epsilon": float("nan")}, "epsilon"),
        ([0], [0], {"rho": float("inf")}, "rho"),
        ([0], [0], {}, "epsilon > 0 and/or rho > 0"),
    ],
)
def test_charge_bad_input(runs, users, kwargs, match) -> None:
    ledger = Ledger(n_runs=2, n_users=5)
    with pytest.raises(ValueError, match=match):
        ledger.charge(np.asarray(runs), np.asarray(users), **kwargs)
    assert ledger.releases() == 0


def test_ledger_constructor_and_mask_bad_input() -> None:
    with pytest.raises(ValueError, match="n_runs"):
        Ledger(0, 3)
    with pytest.raises(ValueError, match="n_users"):
        Ledger(2, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="users_mask"):
        Ledger(2, 3).assert_each_user_charged_exactly(0.1, users_mask=np.ones((3, 2), dtype=bool))
