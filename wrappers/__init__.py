"""Gymnasium wrappers (importable as ``privenv.wrappers``): local-DP perturbation of what the
learner sees, contamination, observation views for RL agents."""

from privenv.wrappers import ldp
from privenv.wrappers.ldp import *  # noqa: F403  (the public names listed in ldp.__all__)

__all__ = list(ldp.__all__)
