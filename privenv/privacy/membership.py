"""Membership inference from a mechanism's public output (paper 2, §4; ``fed-leak``).

The game (a fair coin per trial):

1. a coin decides whether the target user's data is in the input (``member = True``: data set D)
   or not (``member = False``: the neighbouring data set D′ — the target replaced by another
   user, or removed, whichever neighbouring relation the guarantee is stated for);
2. the mechanism runs and releases its public output;
3. the attacker sees only that output and guesses the coin.

**Why it measures privacy.** If the mechanism is (ε, δ)-DP for the relation between D and D′, any
attacker's true- and false-positive rates satisfy TPR ≤ e^ε·FPR + δ and 1 − FPR ≤ e^ε(1 − TPR) + δ,
so with a balanced prior its success probability is at most

    P(success) ≤ (e^ε + δ) / (1 + e^ε)          (:func:`dp_success_bound`; e^ε/(1+e^ε) for δ = 0),

attained where both constraints bind. Conversely a measured success p implies
ε ≥ ln((p − δ)/(1 − p)) (:func:`epsilon_from_success`). The trials are i.i.d., so the number of
successes is exactly Binomial(trials, p): a one-sided Clopper–Pearson lower bound p_lo on p gives
ε ≥ ln((p_lo − δ)/(1 − p_lo)) with confidence 1 − α (the false-alarm probability: for a mechanism
that really is (ε, δ)-DP, this bound exceeds ε with probability ≤ α).

**The attack** is a threshold on a scalar score of the output (:class:`ThresholdAttack`), e.g.
the length of the synchronisation interval around the target's round. Its threshold and
direction are fitted on *separate calibration trials* (labelled, other runs, fresh coins) before
any evaluation trial is looked at, so the evaluation success is an unbiased estimate of the fixed
rule's success. :func:`membership_test` runs the whole game, batched: the mechanism is a function
of the coins of many runs at once.

A mechanism whose output does not depend on the data (e.g. paper 2's fixed-batch schedule) gives
the same score to every trial; any rule then guesses independently of the coin and the success is
exactly Binomial(trials, 1/2) — chance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privenv._validation import check_int, check_real
from privenv.privacy.audit import (
    AuditResult,
    clopper_pearson,
    clopper_pearson_lower,
    epsilon_lower_bound,
)
from privenv.seeding import COIN, child, generator, run_seed_sequences

__all__ = [
    "COIN",
    "MembershipResult",
    "Release",
    "ThresholdAttack",
    "coins",
    "dp_success_bound",
    "epsilon_from_success",
    "membership_test",
]

#: ``release(member, seed, first_run)`` → the public outputs of runs ``first_run …
#: first_run + len(member) − 1`` of ``seed``, run i on D if ``member[i]`` else on D′
Release = Callable[[np.ndarray, int, int], Any]


def dp_success_bound(epsilon: float, delta: float = 0.0) -> float:
    """The largest membership success (balanced prior) of any attack on an (ε, δ)-DP mechanism:
    (e^ε + δ)/(1 + e^ε)."""
    epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if epsilon > 700.0:  # e^ε overflows; the bound is 1 to double precision
        return 1.0
    e = math.exp(epsilon)
    return (e + delta) / (1.0 + e)


def epsilon_from_success(success: float, delta: float = 0.0) -> float:
    """The smallest ε whose bound :func:`dp_success_bound` (ε, δ) admits ``success``:
    ln((p − δ)/(1 − p)) (0 at or below chance, ``inf`` for p = 1)."""
    p = check_real("success", success, low=0.0, high=1.0)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if p >= 1.0:
        return math.inf
    if p - delta <= 1.0 - p:
        return 0.0
    return math.log((p - delta) / (1.0 - p))


def coins(trials: int, seed: int, first_run: int = 0) -> np.ndarray:
    """The fair coins (True = member) of runs ``first_run …`` of ``seed``: run i's coin comes
    from its own seed's child ``COIN``, so it does not depend on the batch."""
    roots = run_seed_sequences(seed, trials, first_run)
    return np.array([generator(child(s, COIN)).random() < 0.5 for s in roots],
                    dtype=bool)


@dataclass(frozen=True)
class ThresholdAttack:
    """Guess "member" iff score ≤ ``threshold`` (``below=True``) or score > ``threshold``."""

    threshold: float
    below: bool

    def guess(self, scores: np.ndarray) -> np.ndarray:
        s = np.asarray(scores, dtype=float)
        return s <= self.threshold if self.below else s > self.threshold

    @classmethod
    def fit(cls, scores: np.ndarray, member: np.ndarray) -> ThresholdAttack:
        """The rule with the best accuracy on labelled calibration trials. Candidates: every
        threshold between two distinct scores (and below all of them), both directions; ties go
        to the first candidate (smallest threshold, ``below`` first), so the fit is
        deterministic."""
        s = np.asarray(scores, dtype=float).ravel()
        m = np.asarray(member, dtype=bool).ravel()
        if s.shape != m.shape or s.size < 2:
            raise ValueError(f"scores and member must be 1-D of equal length >= 2, got "
                             f"{s.shape} and {m.shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError("scores must be finite numbers")
        u = np.unique(s)
        cand = np.concatenate([[u[0] - 1.0], (u[:-1] + u[1:]) / 2.0, [u[-1]]])
        below = s[:, None] <= cand  # (trials, candidates)
        acc_below = (below == m[:, None]).mean(axis=0)
        best = int(np.argmax(np.concatenate([acc_below, 1.0 - acc_below])))
        return cls(float(cand[best % cand.size]), best < cand.size)


@dataclass(frozen=True)
class MembershipResult:
    """Outcome of :func:`membership_test` on the evaluation trials.

    Attributes:
        trials, successes: evaluation trials and correct guesses.
        true_positives, members: correct "member" guesses and member trials.
        false_positives: "member" guesses on non-member trials.
        attack: the rule, fitted on the calibration trials.
        alpha: confidence parameter: ``interval`` is the two-sided (1 − α) Clopper–Pearson
            interval of the success probability, ``success_lower`` its one-sided (1 − α) lower
            bound.
    """

    trials: int
    successes: int
    members: int
    true_positives: int
    false_positives: int
    attack: ThresholdAttack
    alpha: float
    interval: tuple[float, float]
    success_lower: float

    @property
    def success(self) -> float:
        return self.successes / self.trials

    def epsilon_lower_bound(self, delta: float = 0.0) -> float:
        """ε that any (ε, δ)-DP guarantee for this mechanism needs, with confidence 1 − α:
        :func:`epsilon_from_success` of the one-sided lower bound on the success."""
        return epsilon_from_success(self.success_lower, delta)

    def violates(self, epsilon: float, delta: float = 0.0) -> bool:
        """True if the measured success proves (at confidence 1 − α) that the mechanism is not
        (ε, δ)-DP: the lower bound on the success exceeds :func:`dp_success_bound`."""
        return self.success_lower > dp_success_bound(epsilon, delta)

    def consistent_with_chance(self) -> bool:
        """1/2 lies in the two-sided interval (a test of "success = 1/2" at level α)."""
        return self.interval[0] <= 0.5 <= self.interval[1]

    def audit(self, delta: float = 0.0) -> AuditResult:
        """The same trials as an ε audit of the event {guess "member"} on D vs D′
        (:func:`privenv.privacy.audit.epsilon_lower_bound`: TPR vs FPR, both directions and
        their complements, Bonferroni over 4 bounds, family-wise false alarm α)."""
        non = self.trials - self.members
        if self.members < 1 or non < 1:
            raise ValueError("the audit needs member and non-member evaluation trials")
        return epsilon_lower_bound(
            np.array([self.true_positives, self.members - self.true_positives]), self.members,
            np.array([self.false_positives, non - self.false_positives]), non,
            delta=delta, alpha=self.alpha)


def membership_test(
    release: Release,
    *,
    trials: int,
    calibration_trials: int | None = None,
    score: Callable[[Any], np.ndarray] | None = None,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[MembershipResult, dict[str, np.ndarray]]:
    """Play the membership game against ``release``: fit the attack on calibration trials, then
    evaluate it on fresh ones.

    Runs ``0 … calibration_trials − 1`` of ``seed`` calibrate, runs ``calibration_trials …
    calibration_trials + trials − 1`` evaluate; each run's coin is :func:`coins` of its seed.

    Args:
        release: the mechanism, batched over runs (:data:`Release`).
        trials: evaluation trials (≥ 2).
        calibration_trials: trials used only to fit the rule (default: ``trials``; ≥ 2).
        score: maps the released outputs to one number per run (default: the outputs as is).
        seed: base seed of the runs and coins.
        alpha: confidence parameter of the intervals (the false-alarm probability of
            :meth:`MembershipResult.violates` and of the "chance" test).

    Returns:
        The result and the evaluation trials' ``member``, ``score`` and ``guess`` arrays.
    """
    trials = check_int("trials", trials, low=2)
    n_cal = trials if calibration_trials is None else check_int(
        "calibration_trials", calibration_trials, low=2)
    seed = check_int("seed", seed, low=0)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    to_score = score if score is not None else (lambda out: np.asarray(out, dtype=float))

    def scores_of(member: np.ndarray, first_run: int) -> np.ndarray:
        s = np.asarray(to_score(release(member, seed, first_run)), dtype=float)
        if s.shape != member.shape:
            raise ValueError(f"score must give one number per run, shape {member.shape}, got "
                             f"{s.shape}")
        return s

    cal_member = coins(n_cal, seed)  # 1. calibration: the rule is fixed here ...
    attack = ThresholdAttack.fit(scores_of(cal_member, 0), cal_member)
    member = coins(trials, seed, n_cal)  # 2. ... before any evaluation trial is drawn
    s = scores_of(member, n_cal)
    guess = attack.guess(s)
    successes = int((guess == member).sum())
    lo, hi = clopper_pearson(successes, trials, alpha)
    result = MembershipResult(
        trials=trials, successes=successes, members=int(member.sum()),
        true_positives=int((guess & member).sum()), false_positives=int((guess & ~member).sum()),
        attack=attack, alpha=alpha, interval=(float(lo), float(hi)),
        success_lower=float(clopper_pearson_lower(successes, trials, alpha)))
    return result, {"member": member, "score": s, "guess": guess}
