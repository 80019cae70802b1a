# Two entry points for a fresh machine (see README):
#   make reproduce   set up .venv and run the main job (paper 1, Figure 1, quick form)
#   make test        set up .venv and run the default test suite (< 10 minutes)
# Also: make test-slow (long statistical tests and full-scale checks), make bench, make lint,
#   make docs (the documentation site into docs/_build/html, warnings as errors).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check -c constraints.txt

.PHONY: install reproduce reproduce-full test test-slow bench lint docs notebooks

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

# The site: reproductions (reused from results/ when present) -> docs/_generated, then Sphinx.
docs: install
	$(PY) docs/generate.py --results results
	$(VENV)/bin/sphinx-build -E -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

# The lab notebooks of examples/notebooks/, regenerated from their sources.
notebooks: install
	$(PY) examples/make_notebooks.py
