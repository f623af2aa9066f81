# Spanlight: `make run` serves the app, `make test` runs every test. Both set themselves up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.run-deps: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-deps: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.run-deps

## Create the store (embedded SQLite under data/ unless DATABASE_URL is set), load the demo if it is
## empty, and serve the app on http://localhost:$(PORT).
run: $(VENV)/.run-deps
	$(BIN)/python cli.py init
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false

## Install test dependencies (and Debian chromium / a running PostgreSQL when possible), lint, test.
test: $(VENV)/.dev-deps
	bash scripts/test_prerequisites.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest

lint: $(VENV)/.dev-deps
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: $(VENV)/.dev-deps
	for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts
