"""The RL package sits above the agents (docs/design/architecture.md, "The layers").

Every import of every module is read with the reader of ``tests/privacy/test_layers.py`` (module
level, inside functions, ``importlib.import_module``): no module of the layers below —
problems, theory, privacy, envs, wrappers, agents — imports ``privenv.rl``; ``privenv.rl`` imports
no private name (``_x``) of another privenv package; and ``import privenv``, which registers the
RL ids, imports only their table (:mod:`privenv.rl.ids`), not the views, the envs, torch or
Stable-Baselines3.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
#: the layers below the RL package (source directories)
BELOW = ("privenv/problems", "privenv/theory", "privenv/privacy", "privenv/envs", "wrappers",
         "agents")
#: where each source directory imports as
PACKAGE = {"wrappers": "privenv.wrappers", "agents": "privenv.agents"}


def _layers_reader():
    spec = importlib.util.spec_from_file_location("_privacy_layers", TESTS / "privacy" /
                                                  "test_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.imported_modules


def _modules(directory: str) -> list[tuple[str, Path]]:
    """(package, path) of every module under ``directory``: the package a relative import in it
    is resolved against."""
    top = PACKAGE.get(directory, directory.replace("/", "."))
    return [(".".join((top, *path.relative_to(ROOT / directory).parent.parts)), path)
            for path in sorted((ROOT / directory).rglob("*.py"))]


@pytest.mark.parametrize("directory", BELOW)
def test_no_layer_below_imports_the_rl_package(directory):
    imported_modules = _layers_reader()
    found = []
    modules = _modules(directory)
    assert modules
    for package, path in modules:
        for line, module in imported_modules(path.read_text(), package):
            if module == "privenv.rl" or module.startswith("privenv.rl."):
                found.append(f"{path.relative_to(ROOT)}:{line}: {module}")
    assert not found, found


def _private_names(source: str) -> list[str]:
    """``from privenv.X import _y`` with X outside privenv.rl (the foundation modules' own names
    are public by their module: ``privenv._validation.check_int`` is fine, ``_norms`` is not)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module.startswith("privenv.") and not node.module.startswith("privenv.rl")):
            out += [f"line {node.lineno}: {node.module}.{a.name}" for a in node.names
                    if a.name.startswith("_")]
    return out


def test_the_rl_package_imports_no_private_name_of_another_package():
    found = {str(path.relative_to(ROOT)): _private_names(path.read_text())
             for path in sorted((ROOT / "privenv" / "rl").glob("*.py"))}
    assert len(found) >= 6  # the package was read
    assert not {k: v for k, v in found.items() if v}


def test_private_name_reader_can_fail():
    assert _private_names("from privenv.agents.linear import _norms\n") == [
        "line 1: privenv.agents.linear._norms"]
    assert not _private_names("from privenv._validation import check_int\n")


def test_import_privenv_registers_the_rl_ids_from_their_table_alone():
    code = (
        "import sys, gymnasium as gym\n"
        "import privenv\n"
        "assert 'HuberBandit-RL-v0' in gym.registry\n"
        "heavy = [m for m in sys.modules if m.startswith('privenv.rl.') and m != 'privenv.rl.ids'"
        " or m in ('torch', 'stable_baselines3')]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
