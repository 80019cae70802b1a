"""The agent zoo (importable as ``privenv.agents``).

:func:`make` builds an agent by its command-line name for an environment, filling the
constructor's problem parameters (``K``, ``horizon``, ``alpha``, moment bounds, …) from the env's
public description (:meth:`privenv.envs.base.ProblemEnv.public_info`) unless given explicitly.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from privenv.agents.base import Agent, LoopedAgent, as_batched

#: command-line name → (module, class). One module per algorithm family.
REGISTRY: dict[str, tuple[str, str]] = {
    # the reference of every regret: uniformly random actions (agents/mab.py)
    "uniform": ("privenv.agents.mab", "Uniform"),
    # multi-armed bandits: baselines (agents/mab.py)
    "ucb1": ("privenv.agents.mab", "UCB1"),
    "robust-ucb": ("privenv.agents.mab", "RobustUCB"),
    "eps-greedy": ("privenv.agents.mab", "EpsilonGreedy"),
    # private successive elimination (Sajed & Sheffet 2019), regret and BAI (agents/dp_se.py)
    "dp-se": ("privenv.agents.dp_se", "DPSE"),
    # paper 1: private and robust arm elimination (agents/huber.py)
    "prae-r": ("privenv.agents.huber", "PRAER"),
    "prae-c": ("privenv.agents.huber", "PRAEC"),
    "dprse": ("privenv.agents.huber", "DPRSE"),
    # paper 3: Top Two best-arm identification (agents/top_two.py)
    "ttucb": ("privenv.agents.top_two", "TTUCB"),
    "ctb-tt": ("privenv.agents.top_two", "CTBTT"),
    "gaussian-ldp-ttucb": ("privenv.agents.top_two", "GaussianLDPTTUCB"),
    # paper 3: Top Two on the doubling-and-forgetting estimator (agents/adap_tt.py)
    "adap-tt": ("privenv.agents.adap_tt", "AdaPTT"),
    "adap-tt-star": ("privenv.agents.adap_tt", "AdaPTTStar"),
    "ttucb-dpa": ("privenv.agents.adap_tt", "TTUCBDPA"),
    # linear contextual bandits: baselines of paper 4 (agents/linear.py)
    "linucb": ("privenv.agents.linear", "LinUCB"),
    "ldp-linucb": ("privenv.agents.linear", "LDPLinUCB"),
    "input-perturbation-ols": ("privenv.agents.linear", "InputPerturbationOLS"),
    "central-dp-linucb": ("privenv.agents.linear", "CentralDPLinUCB"),
    # paper 4: LPLR oracle + RegCB elimination (agents/lplr.py)
    "lplr-regcb": ("privenv.agents.lplr", "LPLRRegCB"),
    # paper 2: federated LinUCB across silos, fixed and data-adaptive sync (agents/federated.py)
    "fed-linucb": ("privenv.agents.federated", "FedLinUCB"),
    "feducb-adaptive": ("privenv.agents.federated", "FedUCBAdaptive"),
    "super-agent": ("privenv.agents.federated", "SuperAgent"),
}


def agent_class(name: str) -> type[Agent]:
    """The class registered under ``name``."""
    if name not in REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))}")
    module, cls = REGISTRY[name]
    return getattr(importlib.import_module(module), cls)


def public_info_of(env: Any) -> dict[str, Any]:
    """The public description of an env id, an env, a vector env, or a wrapped one."""
    if isinstance(env, str):
        import gymnasium as gym

        import privenv  # noqa: F401  (registers the ids)

        env = gym.make(env)
    base = getattr(env, "unwrapped", env)
    if not hasattr(base, "public_info"):
        raise TypeError(f"{env!r} is not a privenv environment")
    return base.public_info()


def _uniform_parameters(info: dict[str, Any]) -> dict[str, Any]:
    """``Uniform``'s action count (and silos) from an env's description: K arms, A actions, or K
    actions for each of M silos. Best-arm identification is refused: uniform play never stops."""
    if info.get("task") == "bai":
        raise ValueError(
            "agent 'uniform' cannot play best-arm identification: it has no stopping rule, so it "
            "would pull until the sample budget; use a BAI agent (ttucb, dp-se, adap-tt, …)"
        )
    if "M" in info:
        return {"n_actions": info["K"], "silos": info["M"]}
    return {"n_actions": info["A"] if "A" in info else info["K"]}


#: agents whose problem parameters are named differently from the env's public description:
#: name → function(public info) → those parameters
DERIVED_PARAMETERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "uniform": _uniform_parameters,
}


def make(name: str, env: Any, n_runs: int = 1, **params: Any) -> Agent:
    """Build agent ``name`` for ``env`` (an id or an env) with ``n_runs`` runs.

    ``params`` are constructor arguments; parameters the agent shares with the env's public
    description (e.g. ``K``, ``horizon``, ``alpha``) default to the env's values, and so do those
    of :data:`DERIVED_PARAMETERS` (``uniform``'s ``n_actions`` and ``silos``).
    """
    cls = agent_class(name)
    signature = inspect.signature(cls.__init__).parameters
    unknown = [k for k in params if k not in signature]
    if unknown:
        allowed = [p for p in signature if p not in ("self", "n_runs")]
        raise ValueError(f"agent {name!r} has no parameter {unknown[0]!r}; parameters: {allowed}")
    info = public_info_of(env)
    if name in DERIVED_PARAMETERS:
        info = {**info, **DERIVED_PARAMETERS[name](info)}
    kwargs = {k: v for k, v in info.items() if k in signature and k not in params}
    return cls(n_runs=n_runs, **kwargs, **params)


def env_kwargs_for(agent: Any, env_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``env_kwargs`` completed with the env arguments that ``agent`` (a registered name, an agent
    class or instance) requires (:attr:`Agent.env_requirements`); ``ValueError`` if the caller set
    one of them to another value."""
    out = dict(env_kwargs or {})
    if isinstance(agent, str):
        agent = agent_class(agent)
    for key, value in getattr(agent, "env_requirements", {}).items():
        if key in out and out[key] != value:
            name = getattr(agent, "name", "") or getattr(agent, "__name__", type(agent).__name__)
            raise ValueError(f"agent {name!r} needs the env argument {key}={value!r}, got "
                             f"{key}={out[key]!r}")
        out[key] = value
    return out


def names() -> list[str]:
    """Registered agent names."""
    return sorted(REGISTRY)


__all__ = [
    "DERIVED_PARAMETERS",
    "Agent",
    "LoopedAgent",
    "REGISTRY",
    "agent_class",
    "as_batched",
    "env_kwargs_for",
    "make",
    "names",
]
