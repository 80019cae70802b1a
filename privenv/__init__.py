"""privenv: Gymnasium-compatible private bandit problems and an agent zoo.

``import privenv`` registers the environments ``HuberBandit-v0``, ``BestArmIdentification-v0``,
``LinearContextualBandit-v0`` and ``FederatedLinearBandit-v0`` with Gymnasium, and their RL views
(``HuberBandit-RL-v0``, …; :mod:`privenv.rl`) by entry-point strings.
"""

from __future__ import annotations

__version__ = "0.1.0"

from privenv.envs import register_envs as _register_research_envs
from privenv.rl.ids import register_rl_envs as _register_rl_envs


def register_envs() -> None:
    """Register every privenv id with Gymnasium, the research ids and the RL ids (idempotent)."""
    _register_research_envs()
    _register_rl_envs()


register_envs()

__all__ = ["__version__", "register_envs"]
