"""Batched problem instances (pure numpy)."""

from privenv.problems.base import Problem
from privenv.problems.huber import HuberProblem

__all__ = ["Problem", "HuberProblem"]
