"""The documentation site builds with warnings as errors and documents every public object.

The build (quick reproductions + ``sphinx-build -W``) runs once per session (``docs_site.py``);
the API coverage test reads the site's object inventory, so an env, agent, wrapper, mechanism or
accountant added without an API entry fails here."""

from __future__ import annotations

import html
import importlib
import json
import re
from pathlib import Path

import pytest
from docs_site import build_site

pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e .[docs])")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = build_site(tmp_path_factory)
    assert out["returncode"] == 0, "the docs build failed (warnings are errors):\n" + out["log"]
    return out


def _inventory(html: Path) -> set[str]:
    from sphinx.util.inventory import InventoryFile

    with open(html / "objects.inv", "rb") as f:
        inv = InventoryFile.load(f, "", lambda base, uri: uri)
    return {name for kind, objects in inv.items() if kind.startswith("py:") for name in objects}


def _qualified(obj) -> str | None:
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{name}" if module and name else None


def _public_objects() -> dict[str, str]:
    """label → fully qualified name of every public env, agent, wrapper, mechanism, accountant."""
    import privenv.agents as agents
    import privenv.privacy as privacy
    import privenv.wrappers as wrappers
    from privenv.envs import ENV_IDS
    from privenv.rl.ids import RL_IDS

    out = {}
    for name in agents.REGISTRY:
        out[f"agent {name}"] = _qualified(agents.agent_class(name))
    for env_id, (single, vector, *_) in {**ENV_IDS, **RL_IDS}.items():
        for entry in (single, vector):
            module, attr = entry.split(":")
            out[f"env {env_id} ({attr})"] = _qualified(getattr(importlib.import_module(module),
                                                               attr))
    for package, names in (("privenv.wrappers", wrappers.__all__),
                           ("privenv.privacy", privacy.__all__)):
        for name in names:
            obj = getattr(importlib.import_module(package), name)
            out[f"{package}.{name}"] = _qualified(obj) or f"{package}.{name}"
    return out


def test_make_docs_builds_with_warnings_as_errors(site) -> None:
    html = site["html"]
    for page in ("index.html", "getting-started.html", "api/agents.html", "results/huber-fig1.html",
                 "design/contributing.html", "design/threat-model.html", "search.html"):
        assert (html / page).is_file(), page


def test_every_public_env_agent_wrapper_mechanism_and_accountant_is_documented(site) -> None:
    documented = _inventory(site["html"])
    objects = _public_objects()
    assert len(objects) > 60  # the registries and __all__ lists were read
    missing = sorted(label for label, name in objects.items()
                     if name not in documented and not any(d.endswith("." + name.split(".")[-1])
                                                           and d.startswith("privenv")
                                                           for d in documented))
    assert not missing, f"no API entry for: {missing}"


def test_results_pages_are_generated_from_the_reproduction_outputs(site) -> None:
    """The table on the page is the one ``runs.csv`` gives, and the figure is on the page."""
    import csv

    import numpy as np

    results = Path(site["html"]).parent / "results" / "huber-fig1-quick"
    with open(results / "runs.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["panel"] == "a" and r["agent"] == "prae-r"]
    horizon = json.loads((results / "metadata.json").read_text(encoding="utf-8"))["horizon"]
    unit = 1e6 if horizon >= 100_000 else 1e3  # the page's unit (docs/generate.py)
    mean = np.mean([float(r["regret"]) for r in rows]) / unit
    page = (Path(site["html"]) / "results" / "huber-fig1.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "privenv reproduce huber-fig1 --output" in text and "--quick" in text
    cell = re.search(r"\(a\) Student.s t, α = 5%, ε = 0\.2\s+([0-9.]+) ±", text)
    assert cell, "panel (a) row not found on the results page"
    assert float(cell.group(1)) == pytest.approx(mean, rel=5e-3)
    assert re.search(r'<img[^>]+src="[^"]*huber-fig1\.png"', page)
    assert (Path(site["html"]) / "_images" / "huber-fig1.png").stat().st_size > 10_000


_TYPE_FIELD = re.compile(r'<dt class="field-\w+">Type<span class="colon">:</span></dt>\s*'
                         r'<dd class="field-\w+"><p>(.*?)</p>', re.S)


def _is_type(text: str) -> bool:
    """A Python type as autodoc prints it: names, brackets, ``, `` and `` | ``, nothing else."""
    compact = text.replace(", ", ",").replace(" | ", "|")
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\[\],|…]*", compact) is not None


def test_attribute_docs_are_not_split_into_a_type(site) -> None:
    """Napoleon reads the first line of an attribute's or property's docstring as ``type:
    description``: a prose first line with a colon ("audit hook: …") would render its words as
    the attribute's type. Every Type field of the API pages must be a type."""
    bad = []
    for page in sorted((site["html"] / "api").glob("*.html")):
        for match in _TYPE_FIELD.finditer(page.read_text(encoding="utf-8")):
            text = html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip()
            if not _is_type(text):
                bad.append(f"{page.name}: {text!r}")
    assert not bad, "prose rendered as a type (rephrase the first line without a colon):\n" + \
        "\n".join(bad)

