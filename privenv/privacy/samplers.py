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
  doubles released.
"""

from __future__ import annotations

from typing import NamedTuple

from privenv.privacy.exact import EPSILON_BITS, RELEASE_WORDS, epsilon_denominator

__all__ = ["ExactSampler", "FloatSampler", "central_sampler"]


class FloatSampler(NamedTuple):
    """The float sampler (no words)."""

    words: int = 0


class ExactSampler(NamedTuple):
    """The exact sampler: q (ε′ = 2²⁰/q) and the words one release may read."""

    q: int
    words: int = RELEASE_WORDS

    @property
    def epsilon(self) -> float:
        """ε′ = 2²⁰/q, the ε of each release (rounded to a double)."""
        return 2.0**EPSILON_BITS / self.q


def central_sampler(sampler: str, epsilon: float,
                    noise_multiplier: float = 1.0) -> FloatSampler | ExactSampler:
    """The record of ``sampler`` for releases at ε: :class:`FloatSampler`, or the
    :class:`ExactSampler` with q = :func:`~privenv.privacy.exact.epsilon_denominator` of
    ε/``noise_multiplier`` (the audits' hook: a multiplier below 1 is a weaker release)."""
    if sampler == "float":
        return FloatSampler()
    return ExactSampler(q=epsilon_denominator(epsilon / noise_multiplier))
