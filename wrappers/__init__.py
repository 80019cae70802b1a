"""Gymnasium wrappers (importable as ``privenv.wrappers``): local-DP perturbation of what the
learner sees, contamination, observation views for RL agents."""

from privenv.wrappers.ldp import (
    LABEL_RANGE,
    GaussianRandomizer,
    GaussianReward,
    LaplaceLabel,
    LaplaceRandomizer,
    LaplaceReward,
    LocalDPRewardWrapper,
    LocalDPVectorRewardWrapper,
    LocalRandomizer,
    RandomizedResponse,
    RandomizedResponseRandomizer,
    VectorGaussianReward,
    VectorLaplaceLabel,
    VectorLaplaceReward,
    VectorRandomizedResponse,
    ldp_stack_depth,
)

__all__ = [
    "GaussianRandomizer",
    "GaussianReward",
    "LABEL_RANGE",
    "LaplaceLabel",
    "LaplaceRandomizer",
    "LaplaceReward",
    "LocalDPRewardWrapper",
    "LocalDPVectorRewardWrapper",
    "LocalRandomizer",
    "RandomizedResponse",
    "RandomizedResponseRandomizer",
    "VectorGaussianReward",
    "VectorLaplaceLabel",
    "VectorLaplaceReward",
    "VectorRandomizedResponse",
    "ldp_stack_depth",
]
