"""Per-user privacy ledger ("checking mode"; docs/design/threat-model.md).

In tests every central-DP agent records each noisy release: which users' data entered it and at
what ε (pure DP) or ρ (zCDP). A test then asserts, for every run, that each user's total stays
within the declared guarantee — sequential composition over the releases touching that user
(Dwork & Roth 2014, Thm 3.16; Bun & Steinke 2016, Lemma 1.7), while releases on disjoint users
compose in parallel and do not add up (McSherry 2009). This catches a reward reused across batches
or phases, a release charged at the wrong ε, and a user charged twice in one phase.

Users are integer ids ``0 … n_users − 1`` per run (for bandits: the round t). Storage is dense
(``n_runs × n_users``): the ledger is only switched on in tests.
"""

from __future__ import annotations

import math

import numpy as np

from privenv._validation import check_int, check_real

from .accounting import RELATIVE_TOLERANCE, PrivacyBudgetExceeded

__all__ = ["Ledger", "PrivacyBudgetExceeded"]


class Ledger:
    """Per-(run, user) record of the privacy spent by noisy releases.

    Args:
        n_runs: number of runs tracked.
        n_users: users per run, ids ``0 … n_users − 1``.
    """

    def __init__(self, n_runs: int, n_users: int) -> None:
        self.n_runs = check_int("n_runs", n_runs, low=1)
        self.n_users = check_int("n_users", n_users, low=1)
        shape = (self.n_runs, self.n_users)
        self._eps = np.zeros(shape)
        self._rho = np.zeros(shape)
        self._count = np.zeros(shape, dtype=np.int32)
        # label ids of the first and last release touching each pair (−1: none), for messages
        self._first = np.full(shape, -1, dtype=np.int32)
        self._last = np.full(shape, -1, dtype=np.int32)
        self._labels: list[str] = []
        self._label_ids: dict[str, int] = {}
        self._releases = 0

    # -- recording ------------------------------------------------------------------------------

    def charge(
        self,
        runs: np.ndarray,
        users: np.ndarray,
        epsilon: float = 0.0,
        *,
        rho: float = 0.0,
        label: str = "",
    ) -> None:
        """Record one noisy release whose input contained the data of each (runs[j], users[j]).

        Charges ε (pure DP) and/or ρ (zCDP) once to each distinct pair: a pair repeated within
        one call is one user entering one release (its sensitivity is the caller's business).

        Args:
            runs, users: 1-D integer arrays of equal length.
            epsilon: pure-DP cost of the release (≥ 0).
            rho: zCDP cost of the release (≥ 0).
            label: a short name of the release (e.g. "phase 3 mean, arm 1"), used in messages.
        """
        epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf, high_open=True)
        rho = check_real("rho", rho, low=0.0, high=math.inf, high_open=True)
        if epsilon == 0.0 and rho == 0.0:
            raise ValueError("a release must cost something: pass epsilon > 0 and/or rho > 0")
        runs = self._index_array(runs, "runs", self.n_runs)
        users = self._index_array(users, "users", self.n_users)
        if runs.shape != users.shape:
            raise ValueError(
                "runs and users must have the same length, "
                f"got {runs.shape[0]} and {users.shape[0]}"
            )
        flat = np.unique(runs * self.n_users + users)  # dedupe within the release
        label_id = self._label_id(label)
        eps_flat, rho_flat = self._eps.reshape(-1), self._rho.reshape(-1)
        count_flat, first_flat = self._count.reshape(-1), self._first.reshape(-1)
        eps_flat[flat] += epsilon  # indices are unique, so plain fancy-index addition is exact
        rho_flat[flat] += rho
        count_flat[flat] += 1
        first_flat[flat[first_flat[flat] < 0]] = label_id
        self._last.reshape(-1)[flat] = label_id
        self._releases += 1

    # -- queries ----------------------------------------------------------------------------------

    def epsilon_spent(self) -> np.ndarray:
        """(n_runs, n_users) sequential pure-DP total of each user (a copy)."""
        return self._eps.copy()

    def rho_spent(self) -> np.ndarray:
        """(n_runs, n_users) zCDP total of each user (a copy)."""
        return self._rho.copy()

    def release_counts(self) -> np.ndarray:
        """(n_runs, n_users) number of releases each user entered."""
        return self._count.copy()

    def releases(self) -> int:
        """Number of :meth:`charge` calls so far."""
        return self._releases

    # -- assertions -------------------------------------------------------------------------------

    def assert_within(
        self, epsilon: float, *, rho: float | None = None, users: slice | None = None
    ) -> None:
        """Raise :class:`PrivacyBudgetExceeded` if any user's total exceeds the declared budget.

        Checks the pure-DP total against ``epsilon`` and, if given, the zCDP total against ``rho``
        (relative tolerance 1e-9), for the users in ``users`` (all by default).
        """
        epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf)
        cols = slice(None) if users is None else users
        self._check_budget(self._eps, epsilon, "epsilon", cols)
        if rho is not None:
            rho = check_real("rho", rho, low=0.0, high=math.inf)
            self._check_budget(self._rho, rho, "rho", cols)

    def assert_each_user_charged_exactly(
        self, epsilon: float, users_mask: np.ndarray | None = None
    ) -> None:
        """Assert every (run, user) with ``users_mask`` True was charged exactly ε, the rest 0.

        For agents promising "every reward enters exactly one release at ε". ``users_mask`` is a
        boolean (n_runs, n_users) array (``None``: every pair must be charged ε). Raises
        :class:`PrivacyBudgetExceeded` for a user charged more (e.g. a reward reused) and a plain
        ``AssertionError`` for a user charged less or not at all, naming run, user and values.
        """
        epsilon = check_real(
            "epsilon", epsilon, low=0.0, low_open=True, high=math.inf, high_open=True
        )
        shape = (self.n_runs, self.n_users)
        if users_mask is None:
            mask = np.ones(shape, dtype=bool)
        else:
            mask = np.asarray(users_mask)
            if mask.shape != shape or mask.dtype != bool:
                raise ValueError(
                    f"users_mask must be a boolean array of shape {shape}, "
                    f"got {mask.dtype} {mask.shape}"
                )
        expected = np.where(mask, epsilon, 0.0)
        tol = RELATIVE_TOLERANCE * epsilon
        over = self._eps > expected + tol
        if np.any(over):
            raise PrivacyBudgetExceeded(
                self._describe(over, expected, "epsilon", "charged more than")
            )
        under = self._eps < expected - tol
        if np.any(under):
            raise AssertionError(self._describe(under, expected, "epsilon", "charged less than"))

    # -- helpers ----------------------------------------------------------------------------------

    def _check_budget(self, spent: np.ndarray, budget: float, what: str, cols: slice) -> None:
        sub = spent[:, cols]
        over = sub > budget * (1.0 + RELATIVE_TOLERANCE)
        if np.any(over):
            full = np.zeros(spent.shape, dtype=bool)
            full[:, cols] = over
            expected = np.full(spent.shape, budget)
            raise PrivacyBudgetExceeded(
                self._describe(full, expected, what, "over the declared", spent=spent)
            )

    def _describe(
        self,
        bad: np.ndarray,
        expected: np.ndarray,
        what: str,
        relation: str,
        spent: np.ndarray | None = None,
    ) -> str:
        spent = self._eps if spent is None else spent
        gap = np.where(bad, np.abs(spent - expected), -np.inf)
        run, user = np.unravel_index(int(np.argmax(gap)), gap.shape)
        n_bad = int(bad.sum())
        count = int(self._count[run, user])
        msg = (
            f"privacy ledger: run {run}, user {user} {relation} "
            f"{what} = {expected[run, user]:.12g}: "
            f"spent {what} = {spent[run, user]:.12g} over {count} release(s)"
        )
        if count:
            first, last = self._labels[self._first[run, user]], self._labels[self._last[run, user]]
            msg += f" (first {first!r}, last {last!r})"
        if n_bad > 1:
            msg += f"; {n_bad} (run, user) pairs in all"
        return msg

    def _label_id(self, label: str) -> int:
        label = str(label) or f"release #{self._releases}"
        if label not in self._label_ids:
            self._label_ids[label] = len(self._labels)
            self._labels.append(label)
        return self._label_ids[label]

    @staticmethod
    def _index_array(values: np.ndarray, name: str, size: int) -> np.ndarray:
        arr = np.asarray(values)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError(f"{name} must be a 1-D integer array, got {arr.dtype} {arr.shape}")
        arr = arr.astype(np.int64, copy=False)
        if arr.size and (arr.min() < 0 or arr.max() >= size):
            raise ValueError(
                f"{name} must lie in [0, {size - 1}], got values in [{arr.min()}, {arr.max()}]"
            )
        return arr
