"""privenv: Gymnasium-compatible private bandit problems and an agent zoo.

``import privenv`` registers the environments ``HuberBandit-v0``, ``BestArmIdentification-v0``,
``LinearContextualBandit-v0`` and ``FederatedLinearBandit-v0`` with Gymnasium, and their RL views
(``HuberBandit-RL-v0``, …; :mod:`privenv.rl`) by entry-point strings.

Registration does not import Gymnasium (and numpy beneath it): if Gymnasium is already imported,
the ids are registered at once; otherwise right after Gymnasium's own import finishes, whoever
imports it (a hook on ``sys.meta_path``). So ``gym.make("HuberBandit-v0")`` works after
``import privenv`` in either order, and the command line (``privenv --help``, a typo) loads
neither Gymnasium nor numpy.
"""

from __future__ import annotations

__version__ = "0.1.0"

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

from privenv.envs import register_envs as _register_research_envs
from privenv.rl.ids import register_rl_envs as _register_rl_envs


def register_envs() -> None:
    """Register every privenv id with Gymnasium, the research ids and the RL ids (idempotent).
    Imports Gymnasium."""
    _register_research_envs()
    _register_rl_envs()


class _RegisterAfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A finder placed first on ``sys.meta_path`` that lets the other finders find
    ``gymnasium`` and wraps its loader: once the module has executed, it registers the ids and
    takes itself off ``sys.meta_path`` (a post-import hook, as PEP 369 proposed)."""

    def __init__(self) -> None:
        self._spec: importlib.machinery.ModuleSpec | None = None

    def find_spec(self, fullname: str, path: Any = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium" or self._spec is not None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None  # not installed: the import fails as usual
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        self._spec = spec
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # the module's loader is Gymnasium's own, as without the hook
        module.__loader__ = module.__spec__.loader = self._loader  # type: ignore[union-attr]
        self._loader.exec_module(module)
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        register_envs()


def _register_after_gymnasium() -> None:
    """Register the ids now if Gymnasium is imported, else once it is."""
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(f, _RegisterAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())


_register_after_gymnasium()

__all__ = ["__version__", "register_envs"]
