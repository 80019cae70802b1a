"""End-to-end statistical privacy audit of AdaP-TT (SPEC §8; PRIVACY-TESTING.md).

AdaP-TT (paper 3, Algorithm 9) is driven directly on two fixed tables of potential rewards that
differ in one user (the user of pull 0), K = 2 arms, T = 8 pulls, many runs at once (one batched
agent: the first half of its runs sees table D, the second half D′). Its public output is the
action sequence; for the pre-declared events E_t = {a_t = arm 0}, t = 2, 3, 4, ε-DP implies
P_D(E) ≤ e^ε P_D′(E) and the reverse. One-sided Clopper–Pearson bounds with a Bonferroni split
(:func:`privenv.privacy.audit.epsilon_lower_bound`) give an ε lower bound whose false-alarm
probability (declaring a violation of a correct ε-DP agent) is ≤ α = 1e−6, for a fixed seed.

Why the events have power: user 0's reward (1 in D, 0 in D′) enters only arm 0's first release
μ̃_0 = x_0 + Lap(1/ε); arm 1's first reward is 1, so the first adaptive pull (t = 2) goes to arm 0
iff μ̃_0 > μ̃_1, i.e. Y_0 − Y_1 > 1 − x_0. With ε = 2 the true log-ratio is ≈ 1.3 (< ε); with the
Laplace scale halved (the mutation) it is ≈ 2.9 (> ε), and N = 6000 runs per table resolve both.
"""

from __future__ import annotations

import numpy as np

from privenv.agents.adap_tt import AdaPTT
from privenv.privacy.audit import epsilon_lower_bound

EPSILON = 2.0
ALPHA = 1e-6  # family-wise false-alarm probability of the audit
N = 6000  # runs per table
T = 8  # pulls per run
SEED = 20260501
EVENT_STEPS = (2, 3, 4)


class HalfNoise(AdaPTT):
    """Mutation: Laplace scale 1/(2εÑ) — an (2ε)-DP release declared as ε."""

    def noise_scale(self, n_tilde):
        return 0.5 * super().noise_scale(n_tilde)


def transcripts(cls: type[AdaPTT]) -> np.ndarray:
    """Actions (2N, T) of ``cls`` on D (runs < N) and D′ (runs ≥ N)."""
    agent = cls(K=2, epsilon=EPSILON, n_runs=2 * N)
    agent.reset(seed=SEED)
    table = np.full((2 * N, T, 2), 0.5)  # user t's potential rewards (arm 0, arm 1)
    table[:, 1, 1] = 1.0  # user 1 (arm 1's first pull)
    table[:N, 0, :] = 1.0  # D: user 0's rewards
    table[N:, 0, :] = 0.0  # D′: user 0's rewards
    rows = np.arange(2 * N)
    obs = np.zeros((2 * N, 1))
    actions = np.empty((2 * N, T), dtype=np.int64)
    for t in range(T):
        a = agent.act_batch(obs)
        actions[:, t] = a
        agent.observe_batch(a, table[rows, t, np.minimum(a, 1)], obs)
    return actions


def audit(cls: type[AdaPTT]):
    actions = transcripts(cls)
    events = np.stack([actions[:, t] == 0 for t in EVENT_STEPS], axis=1)
    return epsilon_lower_bound(events[:N].sum(axis=0), N, events[N:].sum(axis=0), N,
                               alpha=ALPHA)


def test_adap_tt_audit_respects_epsilon():
    result = audit(AdaPTT)
    assert not result.violates(EPSILON), result
    assert result.epsilon_lb > 0.5  # the events do separate D and D′ (the audit has power)


def test_adap_tt_audit_catches_halved_noise():
    result = audit(HalfNoise)
    assert result.violates(EPSILON), result
