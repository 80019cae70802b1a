"""The privacy layer imports no layer above it (docs/design/architecture.md, "The layers").

Every module of ``privenv/privacy`` is parsed and every import in it is read — at module level,
inside functions and classes, under ``TYPE_CHECKING``, and ``importlib.import_module`` /
``__import__`` calls — with relative imports resolved. Allowed: ``privenv.privacy`` itself and the
foundation modules below every layer, :data:`FOUNDATION`; the foundation modules are checked the
same way, so that nothing above the privacy layer is reachable through them either. Everything
else of privenv — problems, theory, envs, wrappers, agents, simulation, the command line, the
audits of :mod:`privenv.audits` — is refused, and so is the root package ``privenv`` itself
(``import privenv`` registers the environments), but for its version string.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "privenv"
PRIVACY = "privenv.privacy"
#: the modules below every layer: argument checks, kernel compilation, sample statistics, the
#: seeding contract and numpy's streams in compiled code. Each imports nothing of privenv but one
#: another (checked below).
FOUNDATION = ("privenv._validation", "privenv._jit", "privenv._stats", "privenv._pcg64",
              "privenv._ziggurat", "privenv.seeding")
#: names of the root package that any module may import: the version string, defined before
#: ``privenv/__init__.py`` imports anything
ROOT_NAMES = ("__version__",)


def _within(module: str, allowed: tuple[str, ...]) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


def _resolve(module: str | None, level: int, package: str) -> str:
    """The absolute module of ``from <level dots><module> import …`` in ``package``."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - level + 1]
    if not base:
        raise ValueError(f"relative import beyond the top package in {package}")
    return ".".join(base + ([module] if module else []))


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, module) of every privenv module or root-package name ``source`` imports, anywhere in
    it. ``package`` is the package of the module (for relative imports). A dynamic import whose
    module is not a string literal is reported as ``"<dynamic>"``."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, package)
            if module == "privenv":  # ``from privenv import x``: x is a submodule or a name
                out += [(node.lineno, f"privenv.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, module))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                out.append((node.lineno, arg.value if literal else "<dynamic>"))
    return [(line, m) for line, m in out if m == "<dynamic>" or _within(m, ("privenv",))]


def forbidden_imports(source: str, package: str, allowed: tuple[str, ...]) -> list[str]:
    """The imports of ``source`` (a module of ``package``) outside ``allowed`` and the root
    package's :data:`ROOT_NAMES`, as ``"line N: module"``."""
    ok = allowed + tuple(f"privenv.{n}" for n in ROOT_NAMES)
    return [f"line {line}: {m}" for line, m in sorted(imported_modules(source, package))
            if not _within(m, ok)]


def _modules(package_dir: Path, package: str) -> list[tuple[str, Path]]:
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir).with_suffix("").parts
        inner = rel[:-1] if rel[-1] == "__init__" else rel
        out.append((".".join((package, *inner)), path))
    return out


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


PRIVACY_MODULES = _modules(ROOT / "privacy", PRIVACY)


def test_the_privacy_package_is_read() -> None:
    names = {m for m, _ in PRIVACY_MODULES}
    assert {"privenv.privacy", "privenv.privacy.harness", "privenv.privacy.mechanisms",
            "privenv.privacy.federated"} <= names


@pytest.mark.parametrize(("module", "path"), PRIVACY_MODULES, ids=[m for m, _ in PRIVACY_MODULES])
def test_privacy_imports_no_higher_layer(module: str, path: Path) -> None:
    bad = forbidden_imports(path.read_text(), _package_of(module, path), (PRIVACY, *FOUNDATION))
    assert not bad, (f"{path.relative_to(ROOT.parent)} imports above the privacy layer: {bad} "
                     "(end-to-end audits belong in privenv/audits)")


@pytest.mark.parametrize("module", FOUNDATION)
def test_foundation_imports_only_foundation(module: str) -> None:
    path = ROOT / (module.removeprefix("privenv.").replace(".", "/") + ".py")
    bad = forbidden_imports(path.read_text(), "privenv", FOUNDATION)
    assert not bad, f"{module} is below every layer but imports {bad}"


# -- the checker itself: it must flag every way of importing a higher layer ----------------------

_PACKAGE = "privenv.privacy"


@pytest.mark.parametrize("source", [
    "def f():\n    from privenv.agents import x\n",  # lazy, inside a function
    "import privenv.wrappers.ldp\n",
    "from privenv import envs\n",
    "from privenv import simulation, seeding\n",
    "from .. import problems\n",  # relative, resolved against privenv.privacy
    "from ..audits.agents import CASES\n",
    "class C:\n    def m(self):\n        import privenv.cli as cli\n",
    "if TYPE_CHECKING:\n    from privenv.agents.base import Agent\n",
    "import importlib\nimportlib.import_module('privenv.agents.dp_se')\n",
    "__import__('privenv.theory')\n",
    "import importlib\nname = 'privenv.' + 'agents'\nimportlib.import_module(name)\n",
    "from privenv._memory import estimate\n",  # _memory reaches agents: not a foundation module
    "import privenv\n",  # the root package registers the environments
])
def test_checker_flags_a_higher_layer(source: str) -> None:
    assert forbidden_imports(source, _PACKAGE, (PRIVACY, *FOUNDATION)), source


@pytest.mark.parametrize("source", [
    "from privenv._validation import check_int\n",
    "from . import exact\n",
    "from .tree import TreeMechanism\n",
    "def f():\n    from privenv.privacy import wishart as W\n",
    "from privenv.seeding import RunNoise\n",
    "from privenv import __version__\n",
    "import numpy as np\nfrom gymnasium import spaces\n",  # not privenv: no layer of ours
])
def test_checker_allows_the_layer_and_its_foundation(source: str) -> None:
    assert forbidden_imports(source, _PACKAGE, (PRIVACY, *FOUNDATION)) == [], source


def test_checker_does_not_take_a_prefix_for_a_package() -> None:
    # privenv.privacy_tools would not be the privacy package, nor privenv.seedings the seeding one
    assert forbidden_imports("from privenv.privacy_tools import x\nimport privenv.seedings\n",
                             _PACKAGE, (PRIVACY, *FOUNDATION)) == [
        "line 1: privenv.privacy_tools", "line 2: privenv.seedings"]
