"""Gymnasium wrappers (importable as ``privenv.wrappers``): local-DP perturbation of what the
learner sees, contamination, observation views for RL agents."""

from typing import Any

from privenv.wrappers import ldp, ldp_linear
from privenv.wrappers.ldp import *  # noqa: F403  (the public names listed in ldp.__all__)
from privenv.wrappers.ldp_linear import *  # noqa: F403  (the names in ldp_linear.__all__)


def local_system(env: Any, randomizer: Any) -> Any:
    """``env`` (a privenv single or vector env) behind the wrapper that applies ``randomizer``: a
    reward randomizer (:class:`~privenv.privacy.local.LocalRandomizer`) or a linear bandit's
    user-side message randomizer (:class:`~privenv.wrappers.ldp_linear.LinearMessageRandomizer`).
    The runner builds a local-DP system this way from the randomizer its agent declares
    (:meth:`privenv.agents.base.Agent.local_randomizer`)."""
    from gymnasium.vector import VectorEnv

    vector = isinstance(env, VectorEnv)
    cls: type[Any]
    if isinstance(randomizer, ldp.LocalRandomizer):
        cls = ldp.LocalDPVectorRewardWrapper if vector else ldp.LocalDPRewardWrapper
    elif isinstance(randomizer, ldp_linear.LinearMessageRandomizer):
        cls = ldp_linear.LinearMessageVectorWrapper if vector else ldp_linear.LinearMessageWrapper
    else:
        raise TypeError(f"no local-DP wrapper applies {randomizer!r}")
    return cls(env, randomizer)


__all__ = [*ldp.__all__, *ldp_linear.__all__, "local_system"]
