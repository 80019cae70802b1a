"""The RL ids: their table and their registration with Gymnasium.

``HuberBandit-RL-v0``, ``BestArmIdentification-RL-v0``, ``BernoulliBandit-RL-v0``,
``LinearContextualBandit-RL-v0`` and ``FederatedLinearBandit-RL-v0`` (:data:`RL_IDS`; the
research id with ``-RL`` before the
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
    "BAI_BUDGET",
    "BAI_PULL_COST",
    "FAMILIES",
    "LDP_PARAMETERS",
    "LDP_REFUSED",
    "LDP_WRAPPERS",
    "RL_HORIZON",
    "RL_IDS",
    "Family",
    "Level",
    "load_entry_point",
    "register_rl_envs",
    "unknown_env",
]

#: the default horizon of the regret RL ids at level 0 (best-arm identification's is
#: :data:`BAI_BUDGET`)
RL_HORIZON = 1000
#: the sample budget of ``BestArmIdentification-RL-v0`` at level 0
BAI_BUDGET = 20
#: the cost of a pull of ``BestArmIdentification-RL-v0`` at level 0 (pull_cost × budget = 2 =
#: right_reward + wrong_penalty, the most :func:`privenv.rl.envs.bai_reward` allows)
BAI_PULL_COST = 0.1

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
class Level:
    """One rung of an RL id's curriculum: a named instance (research-env keyword arguments).

    Attributes:
        name: a short name (docs/guides/rl.md's ladder table).
        kwargs: the research env's keyword arguments of this instance (anything not given is the
            research env's default).
        why: what makes this rung harder than the one below.
    """

    name: str
    kwargs: Mapping[str, Any]
    why: str = ""


@dataclass(frozen=True)
class Family:
    """How the RL id of a family is built from its research id.

    Attributes:
        research_id: the research id (its env classes are those of :data:`privenv.envs.ENV_IDS`).
        levels: the curriculum, from the default instance (level 0, learnable by a generic learner
            with its stock hyperparameters in ≤ 5·10⁴ steps) up to the research instance (the last
            level); ``gym.make(rl_id, level=i)`` builds rung i, keyword arguments override it.
        fixed: research-env arguments the RL view sets (not overridable) and why.
        ldp: the ``ldp=`` names that apply, or the reason there is none.
    """

    research_id: str
    levels: tuple[Level, ...]
    fixed: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    ldp: tuple[str, ...] | str = ()

    @property
    def rl_id(self) -> str:
        name, version = self.research_id.rsplit("-v", 1)
        return f"{name}-RL-v{version}"

    @property
    def defaults(self) -> dict[str, Any]:
        """The default instance (level 0)."""
        return dict(self.levels[0].kwargs)

    def level(self, level: int) -> dict[str, Any]:
        """The instance of rung ``level``; ``ValueError`` naming the range."""
        if isinstance(level, bool) or not isinstance(level, int) or not (
                0 <= level < len(self.levels)):
            raise ValueError(f"level must be an integer in [0, {len(self.levels) - 1}] for "
                             f"{self.rl_id} ({', '.join(lv.name for lv in self.levels)}), got "
                             f"{level!r}")
        return dict(self.levels[level].kwargs)

    def research_class(self, vector: bool) -> type:
        """The research id's single (or native vector) env class."""
        from privenv.envs import ENV_IDS

        entry = ENV_IDS[self.research_id]
        return load_entry_point(entry.vector_entry_point if vector else entry.entry_point)


_BAI_FIXED = {
    "reward_mode": ("sample", "the samples reach the statistics (and the ldp wrappers) through "
                              "the reward channel; the learner's reward is the RL id's own")
}
FAMILIES: dict[str, Family] = {
    "HuberBandit": Family(
        "HuberBandit-v0",
        (
            Level("default", {"horizon": RL_HORIZON},
                  "paper 1's §7.1 instance (K = 5, μ = 100, 75, …, 0, Student-t(2.5) noise, 5 % "
                  "N(0, 50²) contamination), T = 10³"),
            Level("ten-arms", {"K": 10, "horizon": RL_HORIZON},
                  "K = 10: gaps of 11.1 instead of 25"),
            Level("pareto", {"K": 10, "inlier": "pareto", "contamination": "adversarial",
                             "horizon": RL_HORIZON},
                  "Pareto inliers and adversarial contamination"),
            Level("research", {"horizon": 100_000}, "the research id's instance and horizon"),
        ),
        ldp=("laplace", "gaussian", "randomized-response"),
    ),
    "BestArmIdentification": Family(
        "BestArmIdentification-v0",
        (
            Level("default", {"means": [0.9, 0.2, 0.1], "horizon": BAI_BUDGET,
                              "pull_cost": BAI_PULL_COST, "wrong_penalty": 1.0,
                              "permute_arms": True},
                  "K = 3 Bernoulli arms, gap 0.7, budget 20, pull cost 0.1 (a few pulls decide, "
                  "and stopping when they have is worth 0.1 a pull), the arms in a fresh order "
                  "every episode"),
            Level("gap-0.4", {"means": [0.9, 0.5, 0.1], "horizon": 100, "pull_cost": 0.01,
                              "wrong_penalty": 1.0, "permute_arms": True},
                  "gap 0.4, budget 100, pull cost 10⁻² (the default before issue 34: the value "
                  "of stopping one pull sooner is 10⁻²)"),
            Level("five-arms", {"means": [0.7, 0.55, 0.4, 0.25, 0.1], "horizon": 3000,
                                "pull_cost": 1 / 3000, "wrong_penalty": 1.0,
                                "permute_arms": True},
                  "K = 5, gap 0.15, budget 3·10³"),
            Level("mu1", {"instance": "mu1", "horizon": 10_000, "pull_cost": 1e-4,
                          "wrong_penalty": 1.0, "permute_arms": True},
                  "paper 3's μ1 (K = 5, gap 0.05), budget 10⁴"),
            Level("research", {"instance": "mu1", "horizon": 100_000, "pull_cost": 1e-5,
                               "wrong_penalty": 1.0, "permute_arms": True},
                  "μ1, budget 10⁵ (the research id's is 10⁸, with the research reward)"),
        ),
        _BAI_FIXED,
        ldp=("randomized-response", "laplace", "gaussian"),
    ),
    "BernoulliBandit": Family(
        "BernoulliBandit-v0",
        (
            Level("default", {"means": [0.9, 0.5, 0.1], "horizon": RL_HORIZON},
                  "K = 3 Bernoulli arms, gaps 0.4 and 0.8, T = 10³"),
            Level("mu4", {"instance": "mu4", "horizon": RL_HORIZON},
                  "the research id's instance (K = 5, gaps 0.125), T = 10³"),
            Level("research", {"horizon": 1_000_000}, "the research id's instance and horizon"),
        ),
        ldp=("randomized-response", "laplace", "gaussian"),
    ),
    "LinearContextualBandit": Family(
        "LinearContextualBandit-v0",
        (
            Level("default", {"d": 3, "A": 4, "horizon": RL_HORIZON},
                  "d = 3, A = 4 actions with features uniform on the sphere, ±1 rewards"),
            Level("paper4", {"horizon": RL_HORIZON}, "paper 4's d = 5, A = 10, T = 10³"),
            Level("research", {"horizon": 10_000}, "the research id's instance and horizon"),
        ),
        ldp=("laplace-label", "laplace", "gaussian"),
    ),
    "FederatedLinearBandit": Family(
        "FederatedLinearBandit-v0",
        (
            Level("default", {"M": 2, "K": 4, "d": 3, "horizon": RL_HORIZON},
                  "M = 2 silos, K = 4 actions, d = 3: 16 joint actions"),
            Level("four-silos", {"M": 4, "K": 10, "d": 5, "horizon": RL_HORIZON},
                  "M = 4, K = 10, d = 5 (10⁴ joint actions: actions='per-silo')"),
            Level("research", {"horizon": 10_000},
                  "the research id's M = 100 silos (actions='per-silo')"),
        ),
        {"reward": ("silo", "the statistics regress each silo's reward; the learner's reward is "
                            "their sum (or mean)")},
        ldp=("its reward sums the silos' rewards: privacy in the federated family is the silos' "
             "protocol (paper 2; the zoo's fed-linucb, feducb-adaptive)"),
    ),
}

#: RL id → (single entry point, vector entry point, registered keyword arguments). The instance
#: is the env's own default (level 0), not a registered keyword argument, so that ``level=``
#: chooses it and explicit keyword arguments override it.
RL_IDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    f.rl_id: (f"privenv.rl.envs:{name}RLEnv", f"privenv.rl.envs:{name}RLVectorEnv", {})
    for name, f in FAMILIES.items()
}


def unknown_env(env_id: str) -> str:
    """The one line for an id that is not a research id (:data:`privenv.envs.ENV_IDS`): the known
    ids, and for an RL id (:data:`RL_IDS`, for ``gym.make`` and RL learners) the research id
    that runs, sweeps and reproductions take instead."""
    from privenv.envs import ENV_IDS

    research = {f.rl_id: f.research_id for f in FAMILIES.values()}
    hint = (f"{env_id!r} is an RL id (for gym.make and RL learners, docs/guides/rl.md): use its "
            f"research id {research[env_id]!r} here; " if env_id in research else "")
    return f"unknown env {env_id!r}; {hint}known envs: {', '.join(ENV_IDS)}"


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
