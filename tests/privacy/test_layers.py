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
import re
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


# -- every layer (docs/design/architecture.md, "The layers") ------------------------------------
# The rule above, extended to the whole package: each module belongs to one layer and imports only
# the foundation, its own layer and the layers below it (anywhere in the module, as above).

REPO = ROOT.parent
#: where each package's source lives (pyproject's package-dir)
SOURCES = {"privenv": REPO / "privenv", "privenv.agents": REPO / "agents",
           "privenv.wrappers": REPO / "wrappers"}
#: the layers from the bottom up, each the modules (and packages) it is made of; the last one is
#: running, storing and reproducing. A new module must be placed in one (the test below).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", FOUNDATION + ("privenv.parameters",)),
    ("problems", ("privenv.problems",)),
    ("theory", ("privenv.theory",)),
    ("privacy", (PRIVACY,)),
    ("envs", ("privenv.envs",)),
    ("wrappers", ("privenv.wrappers",)),
    ("agents", ("privenv.agents",)),
    ("rl", ("privenv.rl",)),
    ("running", ("privenv._memory", "privenv.driver", "privenv.simulation", "privenv.results",
                 "privenv.store", "privenv.backends", "privenv.sweep", "privenv.plotting",
                 "privenv.audits", "privenv.labs", "privenv.reproduce", "privenv.cli")),
)
#: the first layer that may ``import privenv`` (the root package registers the ids: it imports
#: :mod:`privenv.envs` and the RL ids' table :mod:`privenv.rl.ids`, standard library only); below
#: it, only the root's :data:`ROOT_NAMES` are allowed
REGISTERING = "envs"
#: modules whose ``importlib.import_module`` loads a name from a table, and the layers the table
#: may name (checked against the table itself below)
DYNAMIC = {"privenv.envs": ("envs",), "privenv.agents": ("agents",), "privenv.rl": ("rl",),
           "privenv.rl.ids": ("envs", "rl")}
#: circles of imports (lazy ones included) that remain, each with its reason; the list only shrinks
#: (none: the last, between the best-arm figures' plan and results, went when what both read moved
#: to privenv.reproduce.bai_rates)
KNOWN_CIRCLES: set[frozenset[str]] = set()
#: the most lines a module has, but for those the architecture page names with a reason
MAX_LINES = 700


def _all_modules() -> list[tuple[str, Path]]:
    out = []
    for package, directory in SOURCES.items():
        for module, path in _modules(directory, package):
            if package == "privenv" and module.split(".")[1:2] in (["agents"], ["wrappers"]):
                continue  # (none: they live elsewhere; a stray copy would be read twice)
            out.append((module, path))
    return sorted(out)


ALL_MODULES = _all_modules()
_LAYER_NAMES = [name for name, _ in LAYERS]


def layer_of(module: str) -> str | None:
    """The layer ``module`` belongs to (None: the root package, or no layer)."""
    for name, members in LAYERS:
        if _within(module, members):
            return name
    return None


def layer_violations(module: str, source: str, package: str) -> list[str]:
    """The imports of ``module`` (its ``source``) that break the layer rule, as
    ``"line N: module (layer)"``."""
    own = _LAYER_NAMES.index(layer_of(module))  # type: ignore[arg-type]
    registering = own >= _LAYER_NAMES.index(REGISTERING)
    bad = []
    for line, imported in imported_modules(source, package):
        if imported == "<dynamic>":
            ok = module in DYNAMIC
        elif imported == "privenv" or imported in {f"privenv.{n}" for n in ROOT_NAMES}:
            ok = registering or imported != "privenv"
        else:
            layer = layer_of(imported)
            ok = layer is not None and _LAYER_NAMES.index(layer) <= own
        if not ok:
            bad.append(f"line {line}: {imported} ({layer_of(imported) or 'no layer'})")
    return bad


def test_the_whole_package_is_read() -> None:
    names = {m for m, _ in ALL_MODULES}
    assert {"privenv.agents.base", "privenv.wrappers.ldp", "privenv.rl.sb3", "privenv.cli",
            "privenv.reproduce.huber_fig1", "privenv.problems.base"} <= names
    assert len(names) > 90


@pytest.mark.parametrize(("module", "path"), ALL_MODULES, ids=[m for m, _ in ALL_MODULES])
def test_every_module_imports_only_its_layer_and_below(module: str, path: Path) -> None:
    if module == "privenv":  # the root: the version string, then the registration of the ids
        return
    assert layer_of(module) is not None, f"{module} belongs to no layer: place it in LAYERS " \
        "(and in docs/design/architecture.md)"
    bad = layer_violations(module, path.read_text(), _package_of(module, path))
    assert not bad, f"{module} ({layer_of(module)}) imports a higher layer: {bad}"


def test_dynamic_imports_load_only_their_layers() -> None:
    """What the modules of :data:`DYNAMIC` load by name: their tables' modules."""
    import privenv.agents
    import privenv.envs
    import privenv.rl
    import privenv.rl.ids

    loaded = {
        "privenv.envs": set(privenv.envs._LAZY.values()),
        "privenv.agents": {module for module, _ in privenv.agents.REGISTRY.values()},
        "privenv.rl": {f"privenv.rl.{m}" for m in set(privenv.rl._EXPORTS.values())},
        # (its load_entry_point loads the research ids' classes, FamilySpec.research_class)
        "privenv.rl.ids": {entry.partition(":")[0] for e in privenv.envs.ENV_IDS.values()
                           for entry in (e.entry_point, e.vector_entry_point)},
    }
    for module, layers in DYNAMIC.items():
        assert loaded[module], module
        wrong = {m for m in loaded[module] if layer_of(m) not in layers}
        assert not wrong, f"{module} loads {wrong} by name, outside {layers}"


def _runtime_source(source: str) -> str:
    """``source`` without its ``if TYPE_CHECKING:`` blocks (imports for the type checker only,
    which never run)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not any(_type_checking(n) for n in block):
                continue
            kept = []
            for n in block:  # an ``if TYPE_CHECKING`` gives way to its ``else``, if any
                kept += n.orelse if _type_checking(n) else [n]
            block[:] = kept or [ast.Pass()]
    return ast.unparse(tree)


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_graph() -> dict[str, set[str]]:
    """module → the privenv modules it imports when it runs (anywhere in it, lazily too; a
    package as its ``__init__``; the root's :data:`ROOT_NAMES`, defined before the root imports
    anything, are no edge)."""
    names = {m for m, _ in ALL_MODULES}
    graph: dict[str, set[str]] = {}
    for module, path in ALL_MODULES:
        targets = set()
        for _, imported in imported_modules(_runtime_source(path.read_text()),
                                            _package_of(module, path)):
            if imported in {f"privenv.{n}" for n in ROOT_NAMES}:
                continue
            while imported and imported not in names:  # a name of a module: the module
                imported = imported.rpartition(".")[0]
            if imported and imported != module:
                targets.add(imported)
        graph[module] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_circle_of_imports() -> None:
    found = set(circles(import_graph()))
    assert found <= KNOWN_CIRCLES, f"circles of imports: {[sorted(c) for c in found]}"


def test_type_checking_imports_are_no_edge() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import privenv.cli\n" \
             "else:\n    import privenv.store\n"
    assert [m for _, m in imported_modules(_runtime_source(source), "privenv")] == [
        "privenv.store"]


def test_the_circle_finder_can_fail() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("source", [
    "from privenv.simulation import simulate\n",  # the running layer, from an agent
    "def f():\n    import privenv.rl.features\n",
    "import privenv\n",  # registration needs the envs layer
    "from privenv.unplaced import x\n",  # a module of no layer
])
def test_layer_checker_flags_an_import_from_above(source: str) -> None:
    assert layer_violations("privenv.problems.base", source, "privenv.problems"), source


def test_layer_checker_allows_below_and_the_same_layer() -> None:
    source = ("from privenv.problems.base import Problem\nfrom privenv.envs import ENV_IDS\n"
              "from privenv.privacy.local import RR\nimport privenv\n"
              "from privenv import __version__\n")
    assert layer_violations("privenv.wrappers.ldp", source, "privenv.wrappers") == []


def _long_modules() -> dict[str, int]:
    return {str(path.relative_to(REPO)): n for _, path in ALL_MODULES
            if (n := len(path.read_text().splitlines())) > MAX_LINES}


def test_a_long_module_has_a_stated_reason() -> None:
    """Every module above :data:`MAX_LINES` lines is named, with its reason, in the architecture
    page's section "Long modules"."""
    page = (REPO / "docs" / "design" / "architecture.md").read_text()
    section = page.partition("## Long modules")[2].partition("\n## ")[0]
    assert section, "docs/design/architecture.md has no section 'Long modules'"
    missing = {m: n for m, n in _long_modules().items() if f"`{m}`" not in section}
    assert not missing, f"modules above {MAX_LINES} lines without a stated reason: {missing}"
    named = set(re.findall(r"`((?:privenv|agents|wrappers)/[\w/]+\.py)`", section))
    stale = sorted(named - set(_long_modules()))
    assert not stale, f"named as long but no longer above {MAX_LINES} lines: {stale}"
