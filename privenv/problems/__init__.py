"""Batched problem instances (pure numpy)."""

from privenv.problems.bai import BAIProblem
from privenv.problems.base import Problem
from privenv.problems.federated import FederatedLinearProblem
from privenv.problems.huber import HuberProblem
from privenv.problems.linear import LinearContextualProblem

__all__ = [
    "Problem",
    "BAIProblem",
    "FederatedLinearProblem",
    "HuberProblem",
    "LinearContextualProblem",
]
