"""The RL ids' table: :data:`RL_IDS` and the :data:`FAMILIES` they are built from.

Only the standard library is imported here, so that ``import privenv`` registers the RL ids
without loading the env classes (:mod:`privenv.envs.rl`, which re-exports these names and
documents the ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FAMILIES", "RL_HORIZON", "RL_IDS", "Family", "load_entry_point"]

#: the default horizon (sample budget) of every RL id
RL_HORIZON = 1000


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
    f.rl_id: (f"privenv.envs.rl:{name}RLEnv", f"privenv.envs.rl:{name}RLVectorEnv",
              dict(f.defaults))
    for name, f in FAMILIES.items()
}


def load_entry_point(entry: str) -> Any:
    """The object an entry point ``"module:name"`` names (its module imported)."""
    module, name = entry.split(":")
    return getattr(__import__(module, fromlist=[name]), name)
