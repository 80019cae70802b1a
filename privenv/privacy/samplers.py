"""The sampler of a compiled agent's central releases, as a record whose class is the choice.

A private agent with a ``sampler`` parameter (``"float"`` or ``"exact"``,
:data:`privenv.privacy.exact.SAMPLERS`) keeps, among its kernel's constants, a
:class:`FloatSampler` or an :class:`ExactSampler` (:func:`central_sampler`), and writes its
release once per class — a generic kernel function dispatched on the record
(:func:`privenv._jit.generic`) — so a run compiles only the sampler it uses:

* :class:`FloatSampler`: binary64 Laplace noise from the run's uniforms (ε-DP in idealized
  arithmetic);
* :class:`ExactSampler`: :func:`privenv.privacy.exact.laplace_release` on the run's words,
  exactly ε′-DP with ε′ = 2²⁰/q ≤ ε (:func:`privenv.privacy.exact.epsilon_denominator`), on the
  doubles released, each draw reading a fixed budget of words whatever its value (constant
  work, :mod:`privenv.privacy.constant_work`).

The record also says how many words a step must have available (``words``, per release;
``count_words``, per noisy count): an agent's ``words_per_step`` is their sum over the releases
one step may make.
"""

from __future__ import annotations

from typing import NamedTuple

from privenv.privacy.releases import (
    ENSURED_PER_BUDGET,
    EPSILON_BITS,
    RELEASE_BUDGET,
    count_budget,
    epsilon_denominator,
)

__all__ = ["ExactSampler", "FloatSampler", "central_sampler"]


class FloatSampler(NamedTuple):
    """The float sampler (no words)."""

    words: int = 0

    @property
    def count_words(self) -> int:
        """The words to ensure for one noisy count (none)."""
        return 0


class ExactSampler(NamedTuple):
    """The exact sampler: q (ε′ = 2²⁰/q), the words to ensure for one release
    (:data:`~privenv.privacy.releases.ENSURED_PER_BUDGET` ×
    :data:`~privenv.privacy.releases.RELEASE_BUDGET`) and the budget of one noisy count
    Lap_ℤ(2q/2²⁰) (:func:`~privenv.privacy.releases.count_budget`; 0 if the agent releases
    none)."""

    q: int
    words: int = ENSURED_PER_BUDGET * RELEASE_BUDGET
    count_budget: int = 0

    @property
    def epsilon(self) -> float:
        """ε′ = 2²⁰/q, the ε of each release (rounded to a double)."""
        return 2.0**EPSILON_BITS / self.q

    @property
    def count_words(self) -> int:
        """The words to ensure for one noisy count."""
        return ENSURED_PER_BUDGET * self.count_budget


def central_sampler(sampler: str, epsilon: float, noise_multiplier: float = 1.0,
                    counts: bool = False) -> FloatSampler | ExactSampler:
    """The record of ``sampler`` for releases at ε: :class:`FloatSampler`, or the
    :class:`ExactSampler` with q = :func:`~privenv.privacy.exact.epsilon_denominator` of
    ε/``noise_multiplier`` (the audits' hook: a multiplier below 1 is a weaker release) and,
    if the agent also releases noisy counts (``counts``), their budget."""
    if sampler == "float":
        return FloatSampler()
    q = epsilon_denominator(epsilon / noise_multiplier)
    return ExactSampler(q=q, count_budget=count_budget(q) if counts else 0)
