"""The agent zoo (importable as ``privenv.agents``).

:func:`make` builds an agent by its command-line name for an environment. Each agent class
declares its parameters once (:attr:`Agent.parameters`, :mod:`privenv.parameters`) and the problem
families it plays (:attr:`Agent.families`); ``make`` refuses an env of another family and fills the
declared problem quantities (``K``, ``horizon``, moment bounds, …) from the env's public
description (:meth:`privenv.envs.base.ProblemEnv.public_info`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

from privenv.agents.base import Agent, LoopedAgent, as_batched
from privenv.parameters import constructor_defaults, effective_with

#: command-line name → (module, class). One module per algorithm family.
REGISTRY: dict[str, tuple[str, str]] = {
    # the reference of every regret: uniformly random actions (agents/mab.py)
    "uniform": ("privenv.agents.mab", "Uniform"),
    # multi-armed bandits: baselines (agents/mab.py)
    "ucb1": ("privenv.agents.mab", "UCB1"),
    "robust-ucb": ("privenv.agents.mab", "RobustUCB"),
    "eps-greedy": ("privenv.agents.mab", "EpsilonGreedy"),
    # Bernoulli bandit: non-private references (agents/bernoulli.py)
    "kl-ucb": ("privenv.agents.bernoulli", "KLUCB"),
    "thompson": ("privenv.agents.bernoulli", "ThompsonSampling"),
    "imed": ("privenv.agents.bernoulli", "IMED"),
    # Bernoulli bandit: ε-global-DP UCB on continual-release sums (agents/dp_ucb.py)
    "dp-ucb": ("privenv.agents.dp_ucb", "DPUCB"),
    "dp-ucb-hybrid": ("privenv.agents.dp_ucb", "DPUCBHybrid"),
    # Bernoulli bandit: ε-global-DP regret algorithms on per-arm phases (agents/dp_regret.py)
    "adap-ucb": ("privenv.agents.dp_regret", "AdaPUCB"),
    "adap-klucb": ("privenv.agents.dp_regret", "AdaPKLUCB"),
    "dp-klucb": ("privenv.agents.dp_regret", "DPKLUCB"),
    "dp-imed": ("privenv.agents.dp_regret", "DPIMED"),
    "lazy-dp-ts": ("privenv.agents.dp_regret", "LazyDPTS"),
    # Bernoulli bandit: ε-local-DP systems, randomizer wrapper + learner (agents/ldp_regret.py)
    "ldp-ucb-l": ("privenv.agents.ldp_regret", "LDPUCBL"),
    "ldp-ucb-b": ("privenv.agents.ldp_regret", "LDPUCBB"),
    "ldp-se": ("privenv.agents.ldp_regret", "LDPSE"),
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
    "adap-tt-nonprivate": ("privenv.agents.adap_tt", "NonPrivateAdaPTT"),
    "daf-wrapper": ("privenv.agents.adap_tt", "DAFWrapper"),
    # Jourdan & Azize 2025: Top Two on the KL/ε·TV cost, geometric batching (agents/dp_top_two.py)
    "dp-top-two": ("privenv.agents.dp_top_two", "DPTopTwo"),
    # linear contextual bandits: baselines of paper 4 (agents/linear.py, agents/central_linucb.py)
    "linucb": ("privenv.agents.linear", "LinUCB"),
    "ldp-linucb": ("privenv.agents.linear", "LDPLinUCB"),
    "input-perturbation-ols": ("privenv.agents.linear", "InputPerturbationOLS"),
    "central-dp-linucb": ("privenv.agents.central_linucb", "CentralDPLinUCB"),
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


def _built(env: Any) -> Any:
    """``env`` itself, or the env an id names."""
    if isinstance(env, str):
        import gymnasium as gym

        import privenv  # noqa: F401  (registers the ids)

        return gym.make(env)
    return env


def _problem_of(env: Any) -> Any:
    base = getattr(env, "unwrapped", env)
    inner = getattr(base, "_inner", None)  # an RL view's research env
    return getattr(base, "problem", None) or getattr(getattr(inner, "unwrapped", inner),
                                                    "problem", None)


def public_info_of(env: Any) -> dict[str, Any]:
    """The public description of an env id, an env, a vector env, or a wrapped one."""
    base = getattr(_built(env), "unwrapped", env)
    if not hasattr(base, "public_info"):
        raise TypeError(f"{env!r} is not a privenv environment")
    return base.public_info()


def family_of(env: Any) -> str:
    """The problem family (:data:`privenv.problems.base.FAMILIES`) of an env id or env."""
    problem = _problem_of(_built(env))
    if problem is None:
        raise TypeError(f"{env!r} is not a privenv environment")
    return problem.family


def family_ids(family: str) -> list[str]:
    """The research env ids of a problem family."""
    from privenv.envs import ENV_IDS, env_family

    return [env_id for env_id in ENV_IDS if env_family(env_id) == family]


def _env_label(env: Any) -> str:
    if isinstance(env, str):
        return env
    spec = getattr(env, "spec", None) or getattr(getattr(env, "unwrapped", None), "spec", None)
    return spec.id if spec is not None else type(getattr(env, "unwrapped", env)).__name__


def check_family(name: str, env: Any) -> None:
    """``ValueError`` unless agent ``name`` plays the family of ``env`` (an id or an env)."""
    from privenv.problems.base import FAMILIES

    cls = agent_class(name)
    family = family_of(env)
    if family not in cls.families:
        names = [FAMILIES[f] for f in cls.families]
        kinds = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
        ids = ", ".join(i for f in cls.families for i in family_ids(f))
        note = cls.family_notes.get(family)
        raise ValueError(f"agent {name!r} runs on {kinds} envs ({ids}); got {_env_label(env)}"
                         + (f" ({note})" if note else ""))


def check_parameter_names(name: str, params: Iterable[str]) -> None:
    """``ValueError`` naming the first of ``params`` that agent ``name`` does not declare."""
    declared = agent_class(name).parameters
    for key in params:
        if key not in declared:
            raise ValueError(f"agent {name!r} has no parameter {key!r}; parameters: "
                             f"{list(declared)}")


def check_parameters_take_effect(name: str, params: Mapping[str, Any]) -> None:
    """``ValueError`` naming the first of ``params`` that agent ``name`` would ignore with the
    other values given (or defaulted): a parameter declared ``only_with=(other, values)`` while
    ``other`` has none of ``values``."""
    cls = agent_class(name)
    defaults = constructor_defaults(cls)
    for key, value in params.items():
        declared = cls.parameters[key]
        if declared.only_with is None:
            continue
        declared.constraint.check(key, value)  # a bad value is named as such first
        other, values = declared.only_with
        current = (cls.parameters[other].constraint.check(other, params[other]) if other in params
                   else defaults.get(other))
        if current not in values:
            on, _ = effective_with(declared, cls.parameters)
            raise ValueError(f"agent {name!r}: {key} has no effect with {other}={current!r}; it "
                             f"takes effect with {other} in {on}")


def make(name: str, env: Any, n_runs: int = 1, **params: Any) -> Agent:
    """Build agent ``name`` for ``env`` (an id or an env) with ``n_runs`` runs.

    ``params`` are constructor arguments. The agent's declared problem quantities
    (:attr:`Agent.parameters` with ``problem=`` or ``assumes=``, e.g. ``K``, ``horizon``, a moment
    bound) come from the env's public description; a problem quantity given explicitly must equal
    the env's, an assumption may differ. ``ValueError`` (one line) for an env of a family the agent
    does not play, an undeclared parameter, a conflicting problem quantity or a parameter that
    would have no effect (:attr:`Param.only_with <privenv.parameters.Param.only_with>`).
    """
    cls = agent_class(name)
    check_parameter_names(name, params)
    check_parameters_take_effect(name, params)
    env = _built(env)
    check_family(name, env)
    values = cls.problem_values(public_info_of(env))
    for key, value in params.items():
        declared = cls.parameters[key]
        if declared.problem is not None and key in values:
            if declared.constraint.check(key, value) != values[key]:
                raise ValueError(
                    f"agent {name!r}: {key} is the env's ({key}={values[key]!r} on "
                    f"{_env_label(env)}); got {key}={value!r}")
    return cls(n_runs=n_runs, **{**values, **params})


def env_kwargs_for(agent: Any, env_kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
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
    "Agent",
    "LoopedAgent",
    "REGISTRY",
    "agent_class",
    "as_batched",
    "check_family",
    "check_parameter_names",
    "check_parameters_take_effect",
    "env_kwargs_for",
    "family_ids",
    "family_of",
    "make",
    "names",
]
