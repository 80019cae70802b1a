"""The installed package is the source tree: every subpackage is listed for setuptools (the
package list is explicit because ``agents/`` and ``wrappers/`` install as ``privenv.agents`` and
``privenv.wrappers``), and the PEP 561 marker ships with it."""

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _setuptools_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_subpackage_is_listed():
    config = _setuptools_config()
    listed = set(config["packages"])
    package_dir = config["package-dir"]
    found = set()
    for name, folder in package_dir.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    missing = sorted(found - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"
    assert listed <= found, f"listed but absent: {sorted(listed - found)}"


def test_type_hints_marker_ships():
    assert (ROOT / "privenv" / "py.typed").is_file()
    assert "py.typed" in _setuptools_config()["package-data"]["privenv"]
