"""Sphinx configuration of the privenv documentation (``make docs``; warnings are errors).

Pages are MyST Markdown; the API reference is autodoc over the docstrings (written in reST roles,
``:class:``/``:mod:``, which is why the site is Sphinx rather than MkDocs). The results pages
include tables and figures that ``docs/generate.py`` writes from reproduction outputs into
``docs/_generated/`` before the build.
"""

from __future__ import annotations

import os
import re

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "_build", "numba"))

project = "privenv"
author = "the privenv authors"
copyright = "the privenv authors, MIT licence"  # noqa: A001  (Sphinx's name)
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_generated/*.md.part", "README.md"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "show-inheritance": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_class_signature = "separated"
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# Docstrings cross-reference numpy, gymnasium, … objects that no offline inventory resolves: a
# missing target stays plain text. Broken references *inside* privenv are still errors (nitpicky
# is off, so unresolved py: roles never warn; the link test checks the pages instead).
nitpicky = False

html_theme = "furo"
html_title = "privenv"
html_static_path = ["_static"]
html_show_sourcelink = False
# Methods that override Gymnasium's (step, reset, render, …) without a docstring of their own are
# documented by Gymnasium; its docstrings are not written for this site's parser.
autodoc_inherit_docstrings = False


# --- docstring conventions of this code base that reST reads otherwise --------------------------
_INLINE_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")
_ABS = re.compile(r"(?<![\\|\w])\|(?=[^\s|])([^|\n]*?[^\s|\\])\|(?![\w|])")
_ITEM = re.compile(r"^(\s*)(\d+\.|[*-]|\(\w\))\s+\S")


def _escape_bars(line: str) -> str:
    """``|x|`` is an absolute value or a norm in these docstrings (the project defines no reST
    substitutions): escape the bars outside inline literals. Table rows are left alone."""
    stripped = line.strip()
    table = stripped.startswith("|") and stripped.endswith("|")
    if table or re.fullmatch(r"\+[-=+]+\+", stripped):
        return line
    parts = _INLINE_LITERAL.split(line)
    return "".join(p if i % 2 else _ABS.sub(r"\\|\1\\|", p) for i, p in enumerate(parts))


def _hanging_indent(lines: list[str]) -> list[str]:
    """A list item's continuation lines are written with a hanging indent deeper than the item's
    text; reST wants them at the text's column."""
    out, column = [], None
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        match = _ITEM.match(line)
        if not stripped:
            column = None
        elif match:
            column = match.end() - 1
        elif column is not None and indent > column:
            line = " " * column + stripped
        elif column is not None and indent < column:
            column = None
        out.append(line)
    return out


_NUMBERED = re.compile(r"^\s*(\d+)\.\s")
_PARAM = re.compile(r"^\s+\**\w+(, \**\w+)*( \(.*\))?:(\s|$)")


def _line_numbers(lines: list[str]) -> list[str]:
    """Lists numbered by an algorithm's line numbers skip numbers (5, 6, 7, 9); reST continues a
    list only with the next ordinal, so a skipped number starts a new list after a blank line."""
    out: list[str] = []
    previous = None
    for line in lines:
        match = _NUMBERED.match(line)
        if match and previous is not None and int(match.group(1)) != previous + 1:
            out.append("")
        if match:
            previous = int(match.group(1))
        elif not line.strip() or not line.startswith(" "):
            previous = None if not line.startswith(" ") and line.strip() else previous
        out.append(line)
    return out


def _args_preamble(lines: list[str]) -> list[str]:
    """An ``Args:`` section that opens with prose ("as :class:`X`, plus") instead of a
    ``name: text`` entry: the prose goes before the section."""
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Args:" and lines[i + 1].strip() and not _PARAM.match(lines[i + 1]):
            prose = "Arguments " + lines[i + 1].strip() + ":"
            return [*lines[:i], prose, "", line, *lines[i + 2:]]
    return lines


def _process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = _args_preamble(_line_numbers(_hanging_indent([_escape_bars(x) for x in lines])))


def setup(app):
    # before napoleon (priority 500) turns the Google sections into fields
    app.connect("autodoc-process-docstring", _process_docstring, priority=100)
