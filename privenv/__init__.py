"""privenv: Gymnasium-compatible private bandit problems and an agent zoo.

``import privenv`` registers the environments ``HuberBandit-v0``, ``BestArmIdentification-v0``,
``LinearContextualBandit-v0`` and ``FederatedLinearBandit-v0`` with Gymnasium.
"""

from __future__ import annotations

__version__ = "0.1.0"

from privenv.envs import register_envs

register_envs()

__all__ = ["__version__", "register_envs"]
