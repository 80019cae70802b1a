"""Gymnasium environments and their registration (done on ``import privenv``).

:data:`ENV_IDS` are the research ids (the papers' problems with faithful observations). Their
RL views (``HuberBandit-RL-v0``, …) live above the agents, in :mod:`privenv.rl`, which registers
them (:func:`privenv.rl.ids.register_rl_envs`).

Registering an id stores its entry point, a string: the env classes (with numba, scipy and the
privacy layer beneath them) load when an env is first made or one of the classes below is first
used, not on ``import privenv``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import gymnasium as gym

    from privenv.envs.bai import BestArmIdentificationEnv, BestArmIdentificationVectorEnv
    from privenv.envs.base import ProblemEnv, ProblemVectorEnv
    from privenv.envs.bernoulli import BernoulliBanditEnv, BernoulliBanditVectorEnv
    from privenv.envs.federated import (
        FederatedLinearBanditEnv,
        FederatedLinearBanditVectorEnv,
    )
    from privenv.envs.huber import HuberBanditEnv, HuberBanditVectorEnv
    from privenv.envs.linear import LinearContextualBanditEnv, LinearContextualBanditVectorEnv
    from privenv.problems.base import Problem

#: the env classes this package exports → their module, imported on first use (PEP 562)
_LAZY: dict[str, str] = {
    "BestArmIdentificationEnv": "privenv.envs.bai",
    "BestArmIdentificationVectorEnv": "privenv.envs.bai",
    "BernoulliBanditEnv": "privenv.envs.bernoulli",
    "BernoulliBanditVectorEnv": "privenv.envs.bernoulli",
    "FederatedLinearBanditEnv": "privenv.envs.federated",
    "FederatedLinearBanditVectorEnv": "privenv.envs.federated",
    "HuberBanditEnv": "privenv.envs.huber",
    "HuberBanditVectorEnv": "privenv.envs.huber",
    "LinearContextualBanditEnv": "privenv.envs.linear",
    "LinearContextualBanditVectorEnv": "privenv.envs.linear",
    "ProblemEnv": "privenv.envs.base",
    "ProblemVectorEnv": "privenv.envs.base",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class EnvEntry(NamedTuple):
    """How a research id is registered."""

    #: the single env's class, as an entry-point string (``module:Class``)
    entry_point: str
    #: the native vector env's class, as an entry-point string
    vector_entry_point: str
    #: the default horizon (regret problems) or sample budget (best-arm identification), which
    #: is the registered ``max_episode_steps`` and the env classes' ``DEFAULT_HORIZON``
    horizon: int


#: id → its registration (:class:`EnvEntry`)
ENV_IDS: dict[str, EnvEntry] = {
    "HuberBandit-v0": EnvEntry(
        "privenv.envs.huber:HuberBanditEnv",
        "privenv.envs.huber:HuberBanditVectorEnv",
        100_000,
    ),
    "BestArmIdentification-v0": EnvEntry(
        "privenv.envs.bai:BestArmIdentificationEnv",
        "privenv.envs.bai:BestArmIdentificationVectorEnv",
        100_000_000,
    ),
    "LinearContextualBandit-v0": EnvEntry(
        "privenv.envs.linear:LinearContextualBanditEnv",
        "privenv.envs.linear:LinearContextualBanditVectorEnv",
        10_000,
    ),
    "FederatedLinearBandit-v0": EnvEntry(
        "privenv.envs.federated:FederatedLinearBanditEnv",
        "privenv.envs.federated:FederatedLinearBanditVectorEnv",
        10_000,
    ),
    "BernoulliBandit-v0": EnvEntry(
        "privenv.envs.bernoulli:BernoulliBanditEnv",
        "privenv.envs.bernoulli:BernoulliBanditVectorEnv",
        1_000_000,
    ),
}


def env_class(env_id: str) -> type[gym.Env[Any, Any]]:
    """The single-env class of a research id (its registered entry point)."""
    module, _, name = ENV_IDS[env_id].entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


def env_parameters(env_id: str) -> list[str]:
    """The instance parameters of a research id: its env constructor's, less ``horizon`` (each
    runner sets it) and ``render_mode``. Their values are checked by the problem class."""
    import inspect

    params = inspect.signature(env_class(env_id)).parameters
    return [k for k, p in params.items() if k not in ("self", "horizon", "render_mode")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def check_env_kwargs(env_id: str, kwargs: Iterable[str]) -> None:
    """``ValueError`` naming the first of ``kwargs`` that is not an instance parameter of
    ``env_id`` (:func:`env_parameters`)."""
    allowed = env_parameters(env_id)
    for key in kwargs:
        if key not in allowed:
            raise ValueError(f"env {env_id!r} has no parameter {key!r}; parameters: {allowed}")


def problem_class(env_id: str) -> type[Problem]:
    """The problem class of a research id: its env class is a ``ProblemEnv[P]``, and ``P`` is
    it."""
    import typing

    cls = env_class(env_id)
    for base in getattr(cls, "__orig_bases__", ()):
        for arg in typing.get_args(base):
            if getattr(arg, "family", ""):
                return arg
    raise TypeError(f"{cls.__name__} does not name its problem class (ProblemEnv[P])")


def env_family(env_id: str) -> str:
    """The problem family of a research id (:data:`privenv.problems.base.FAMILIES`): the one
    its problem class (:func:`problem_class`) names."""
    return problem_class(env_id).family


def env_sizes(env_id: str, env_kwargs: Mapping[str, Any]) -> dict[str, int]:
    """The sizes (``K``, ``A``, ``d``, ``M``) of the instance ``env_id`` would build from
    ``env_kwargs``, without building it (:meth:`privenv.problems.base.Problem.sizes`)."""
    return problem_class(env_id).sizes(**env_kwargs)


def register_envs() -> None:
    """Register every research id with Gymnasium (idempotent)."""
    import gymnasium as gym

    for env_id, (entry, vector_entry, horizon) in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=entry,
            vector_entry_point=vector_entry,
            max_episode_steps=horizon,
            disable_env_checker=False,
        )


__all__ = [
    "ENV_IDS",
    "BernoulliBanditEnv",
    "BernoulliBanditVectorEnv",
    "EnvEntry",
    "BestArmIdentificationEnv",
    "BestArmIdentificationVectorEnv",
    "FederatedLinearBanditEnv",
    "FederatedLinearBanditVectorEnv",
    "HuberBanditEnv",
    "HuberBanditVectorEnv",
    "LinearContextualBanditEnv",
    "LinearContextualBanditVectorEnv",
    "ProblemEnv",
    "ProblemVectorEnv",
    "check_env_kwargs",
    "env_class",
    "env_family",
    "env_parameters",
    "env_sizes",
    "problem_class",
    "register_envs",
]
