"""Gymnasium wrappers (importable as ``privenv.wrappers``): local-DP perturbation of what the
learner sees, contamination, observation views for RL agents."""

from privenv.wrappers import ldp, ldp_linear
from privenv.wrappers.ldp import *  # noqa: F403  (the public names listed in ldp.__all__)
from privenv.wrappers.ldp_linear import *  # noqa: F403  (the names in ldp_linear.__all__)

__all__ = list(ldp.__all__) + list(ldp_linear.__all__)
