# Spanlight: `make run` serves the app, `make test` runs every test. Both set themselves up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
# The JavaScript lint (ESLint, pinned in package-lock.json); the JS tests need only node.
NODE_DEPS := node_modules/.installed

.PHONY: run test test-fast test-prerequisites checks lint js-lint js-test typecheck fmt bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.run-deps: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-deps: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.run-deps

$(NODE_DEPS): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## Create the store (embedded SQLite under data/ unless DATABASE_URL is set), load the demo if it is
## empty, and serve the app on http://localhost:$(PORT).
run: $(VENV)/.run-deps
	$(BIN)/python cli.py init
	$(BIN)/streamlit run server.py --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false

## Install test dependencies (and Debian chromium / a running PostgreSQL when possible), lint, test.
test: $(VENV)/.dev-deps test-prerequisites checks
	$(BIN)/pytest

## Everything but the browser tests and the few slow ones (many processes, large files), for the
## edit-and-test loop. It neither installs chromium nor starts PostgreSQL (`make test` does); the
## database tests skip while the server is down.
test-fast: $(VENV)/.dev-deps checks
	$(BIN)/pytest -m "not e2e and not slow"

test-prerequisites:
	bash scripts/test_prerequisites.sh

## Lint both languages, check the types and run the JavaScript unit tests.
checks: lint typecheck js-lint js-test

lint: $(VENV)/.dev-deps
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

js-lint: $(NODE_DEPS)
	node_modules/.bin/eslint .

js-test:
	node --test tests/js/

typecheck: $(VENV)/.dev-deps
	$(BIN)/mypy

## Apply ruff's fixes and formatting; exits non-zero when lint errors are left to fix by hand.
fmt: $(VENV)/.dev-deps
	$(BIN)/ruff check --fix . ; status=$$?; $(BIN)/ruff format . && exit $$status

bench: $(VENV)/.dev-deps
	for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) node_modules .pytest_cache .ruff_cache .mypy_cache test-artifacts
