# Two entry points for a fresh machine (see README):
#   make reproduce   set up .venv and run the main job (paper 1, Figure 1, quick form)
#   make test        set up .venv and run the default test suite (< 10 minutes)
# Also: make test-slow (long statistical tests and full-scale checks), make bench, make lint,
#   make docs (the documentation site into docs/_build/html, warnings as errors).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check -c constraints.txt

.PHONY: install reproduce reproduce-full test test-slow bench lint docs docs-build notebooks

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) -e ".[test]"
	touch $@

install: $(VENV)/.installed

reproduce: install
	$(VENV)/bin/privenv reproduce huber-fig1 --quick --output results/huber-fig1-quick

reproduce-full: install
	$(VENV)/bin/privenv reproduce huber-fig1 --output results/huber-fig1

test: install
	$(PY) -m pytest -n 2 -q

test-slow: install
	$(PY) -m pytest -n 2 -q -m slow

bench: install
	$(PY) benchmarks/run.py
	$(PY) benchmarks/sweeps.py
	$(PY) benchmarks/bai.py
	$(PY) benchmarks/linear.py
	$(PY) benchmarks/federated.py
	$(PY) benchmarks/samplers.py

lint: install
	$(VENV)/bin/ruff check privenv agents wrappers tests examples benchmarks

# The site: reproductions (reused from results/ when present) -> docs/_generated, then Sphinx,
# warnings as errors. docs-build is the same recipe without the install step: the tests run it
# (tests/docs_site.py: DOCS_SCALE=--quick on a copy of docs/), so CI builds the site as make docs.
DOCS ?= docs
DOCS_RESULTS ?= results
DOCS_HTML ?= docs/_build/html
DOCS_SCALE ?=

docs: install
	@$(MAKE) --no-print-directory docs-build

docs-build:
	$(PY) $(DOCS)/generate.py --results $(DOCS_RESULTS) --docs $(DOCS) $(DOCS_SCALE)
	$(PY) -m sphinx -E -W --keep-going -q -b html $(DOCS) $(DOCS_HTML)
	@echo "docs: $(DOCS_HTML)/index.html"

# The lab notebooks of examples/notebooks/, regenerated from their sources.
notebooks: install
	$(PY) examples/make_notebooks.py
