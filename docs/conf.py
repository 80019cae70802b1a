"""Sphinx configuration of the privenv documentation (``make docs``; warnings are errors).

Pages are MyST Markdown; the API reference is autodoc over the docstrings (written in reST roles,
``:class:``/``:mod:``, which is why the site is Sphinx rather than MkDocs). The results pages
include tables and figures that ``docs/generate.py`` writes from reproduction outputs into
``docs/_generated/`` before the build.
"""

from __future__ import annotations

import os

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
]
# the highlighted source of every module ("[source]" links); PRIVENV_DOCS_VIEWCODE=0 leaves it out
# (the test suite's build does: 22 of the build's 62 s of CPU, and the pages are only rendered
# source, with nothing of ours in them to warn about)
if os.environ.get("PRIVENV_DOCS_VIEWCODE", "1") != "0":
    extensions.append("sphinx.ext.viewcode")
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
