"""The RL ids: their table and their registration with Gymnasium.

``HuberBandit-RL-v0``, ``BestArmIdentification-RL-v0``, ``LinearContextualBandit-RL-v0`` and
``FederatedLinearBandit-RL-v0`` (:data:`RL_IDS`; the research id with ``-RL`` before the
version) are built by :mod:`privenv.rl.envs`. This module holds only what registration needs —
each id's entry points as strings and its default keyword arguments — and imports only the
standard library (Gymnasium when it registers), no env, agent, numba or torch: ``import
privenv`` calls :func:`register_rl_envs`, and the env classes are imported by ``gym.make`` when
an RL id is first built.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FAMILIES",
    "LDP_PARAMETERS",
    "LDP_REFUSED",
    "LDP_WRAPPERS",
    "RL_HORIZON",
    "RL_IDS",
    "Family",
    "load_entry_point",
    "register_rl_envs",
]

#: the default horizon (sample budget) of every RL id
RL_HORIZON = 1000

#: ``ldp=`` name → (single-env wrapper, vector wrapper) in :mod:`privenv.wrappers`
LDP_WRAPPERS: dict[str, tuple[str, str]] = {
    "randomized-response": ("RandomizedResponse", "VectorRandomizedResponse"),
    "laplace": ("LaplaceReward", "VectorLaplaceReward"),
    "gaussian": ("GaussianReward", "VectorGaussianReward"),
    "laplace-label": ("LaplaceLabel", "VectorLaplaceLabel"),
}
#: local-DP randomizers of privenv that no RL id takes, and why
LDP_REFUSED: dict[str, str] = {
    "gaussian-statistics": (
        "its guarantee covers the chosen features too, but an RL learner stores its observations "
        "(the raw feature matrices) in its rollout or replay buffer, so that guarantee would not "
        "hold; ldp='laplace-label' protects the label and says so"
    ),
    "laplace-input": "as for 'gaussian-statistics'",
}


@dataclass(frozen=True)
class Family:
    """How the RL id of a family is built from its research id.

    Attributes:
        research_id: the research id (its env classes are those of :data:`privenv.envs.ENV_IDS`).
        defaults: the RL id's registered keyword arguments (overridable).
        fixed: research-env arguments the RL view sets (not overridable) and why.
        ldp: the ``ldp=`` names that apply, or the reason there is none.
    """

    research_id: str
    defaults: Mapping[str, Any]
    fixed: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    ldp: tuple[str, ...] | str = ()

    @property
    def rl_id(self) -> str:
        name, version = self.research_id.rsplit("-v", 1)
        return f"{name}-RL-v{version}"

    def research_class(self, vector: bool) -> type:
        """The research id's single (or native vector) env class."""
        from privenv.envs import ENV_IDS

        return load_entry_point(ENV_IDS[self.research_id][1 if vector else 0])


_BAI_FIXED = {
    "reward_mode": ("sample", "the samples reach the statistics (and the ldp wrappers) through "
                              "the reward channel; the learner's reward is the cost")
}
FAMILIES: dict[str, Family] = {
    "HuberBandit": Family(
        "HuberBandit-v0", {"horizon": RL_HORIZON},
        ldp=("laplace", "gaussian", "randomized-response"),
    ),
    "BestArmIdentification": Family(
        "BestArmIdentification-v0", {"horizon": RL_HORIZON, "permute_arms": True}, _BAI_FIXED,
        ldp=("randomized-response", "laplace", "gaussian"),
    ),
    "LinearContextualBandit": Family(
        "LinearContextualBandit-v0", {"horizon": RL_HORIZON},
        ldp=("laplace-label", "laplace", "gaussian"),
    ),
    "FederatedLinearBandit": Family(
        "FederatedLinearBandit-v0", {"horizon": RL_HORIZON, "M": 4, "K": 10, "d": 5},
        {"reward": ("silo", "the statistics regress each silo's reward; the learner's reward is "
                            "their sum")},
        ldp=("its reward sums the silos' rewards: privacy in the federated family is the silos' "
             "protocol (paper 2; the zoo's fed-linucb, feducb-adaptive)"),
    ),
}

#: RL id → (single entry point, vector entry point, registered keyword arguments)
RL_IDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    f.rl_id: (f"privenv.rl.envs:{name}RLEnv", f"privenv.rl.envs:{name}RLVectorEnv",
              dict(f.defaults))
    for name, f in FAMILIES.items()
}



#: the parameters of the local-DP wrappers (everything but ``env``), routed to ``ldp``'s wrapper
LDP_PARAMETERS = ("epsilon", "delta", "reward_range", "clip", "calibration")


def load_entry_point(entry: str) -> Any:
    """The object an entry point ``"module:name"`` names (importing its module)."""
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def register_rl_envs() -> None:
    """Register every RL id with Gymnasium (idempotent), by its entry-point strings. The RL ids
    truncate their runs themselves at ``horizon`` (no ``TimeLimit``, so ``horizon=`` alone sets
    the run length)."""
    import gymnasium as gym

    for env_id, (entry, vector_entry, defaults) in RL_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry, vector_entry_point=vector_entry,
                         kwargs=dict(defaults), disable_env_checker=False)
