# Two entry points for a fresh machine (see README), each installing what it needs into .venv:
#   make reproduce   the core and the reproduce extra (matplotlib, tqdm), then the main job
#                    (paper 1, Figure 1, quick form)
#   make test        every extra and the test tools (torch's CPU build, Dask, Sphinx, pytest, ...),
#                    then the default test suite (9 min 50 s on 2 quiet cores from a fresh clone,
#                    install included; target 10; its time is printed)
# Either order works: the test profile contains the reproduce profile.
# Also: make test-slow (long statistical tests and full-scale checks; what moved there from make test
#   and its fast form in make test: docs/design/contributing.md), make bench, make lint (ruff, mypy),
#   make docs (the documentation site into docs/_build/html, warnings as errors).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# --no-compile: no byte-code for the ~10 000 modules installed (79 MB of .venv for the core alone);
# Python compiles the few a command imports, once, on first use
PIP := $(PY) -m pip install -q --disable-pip-version-check --no-compile -c constraints.txt

.PHONY: install install-reproduce reproduce reproduce-full test test-slow bench lint docs \
	docs-build notebooks

$(PY):
	$(PYTHON) -m venv $(VENV)

# the reproduce profile: the core (numpy, scipy, gymnasium, numba) + the reproduce extra
$(VENV)/.installed-reproduce: pyproject.toml constraints.txt | $(PY)
	$(PIP) -e ".[reproduce]"
	touch $@

# the test profile: everything (torch first, so that pip takes the CPU build of constraints.txt)
$(VENV)/.installed: pyproject.toml constraints.txt | $(PY)
	$(PIP) torch==2.13.0
	$(PIP) -e ".[test]"
	touch $@ $(VENV)/.installed-reproduce

install-reproduce: $(VENV)/.installed-reproduce

install: $(VENV)/.installed

reproduce: install-reproduce
	$(VENV)/bin/privenv reproduce huber-fig1 --quick --output results/huber-fig1-quick

reproduce-full: install-reproduce
	$(VENV)/bin/privenv reproduce huber-fig1 --output results/huber-fig1

# the suite's wall time is printed last (the CI log shows it). --dist loadfile: a test file's
# tests run in one worker, so the two workers do not both compile the kernels a file uses
# (cold numba cache, shared machine, one run each: 1147 s against 1584 s with the default one).
# tests/conftest.py orders the files for the two workers: the long ones first (LONG_FIRST), and the
# two docs-site files in one worker (in two, one waited idle on the other's build of the site), the
# three files of the best-arm kernels in one worker (in two, both compiled them: SAME_WORKER).
test: install
	@start=$$(date +%s); status=0; $(PY) -m pytest -n 2 --dist loadfile -q || status=$$?; \
	elapsed=$$(( $$(date +%s) - start )); \
	echo "make test: pytest took $$((elapsed / 60)) min $$((elapsed % 60)) s (exit code $$status)"; \
	exit $$status

test-slow: install
	$(PY) -m pytest -n 2 --dist loadfile -q -m slow

bench: install
	$(PY) benchmarks/startup.py
	$(PY) benchmarks/run.py
	$(PY) benchmarks/sweeps.py
	$(PY) benchmarks/bai.py
	$(PY) benchmarks/linear.py
	$(PY) benchmarks/federated.py
	$(PY) benchmarks/samplers.py
	$(PY) benchmarks/zoo.py

# ruff, then mypy on the package as installed (.ci/typecheck.py; configuration in pyproject.toml)
lint: install
	$(VENV)/bin/ruff check privenv agents wrappers tests examples benchmarks .ci
	$(PY) .ci/typecheck.py

# The site: reproductions (reused from results/ when present) -> docs/_generated, then Sphinx,
# warnings as errors. docs-build is the same recipe without the install step: the tests run it
# (tests/docs/docs_site.py: DOCS_SCALE=--quick on a copy of docs/), so CI builds the site as make docs.
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
