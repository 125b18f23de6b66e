# The two commands of the README: `make demo` and `make test`. Everything else is theirs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WAREHOUSE ?= data/warehouse
PORT ?= 8501

.PHONY: demo test setup browser lint typecheck unit sample warehouse dashboard bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Debian's chromium for the real-browser tests (browsers cannot be downloaded here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }

lint: setup
	$(BIN)/ruff check engine ingest dashboards cli tests bench

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -q -n 2 -p no:cacheprovider

test: setup browser lint typecheck unit

sample: setup
	$(BIN)/python data/make_sample.py

warehouse: setup
	$(BIN)/haftkhabis ingest data/sample --warehouse $(WAREHOUSE)
	$(BIN)/haftkhabis stats players --warehouse $(WAREHOUSE)

dashboard: setup
	$(BIN)/haftkhabis dashboard --warehouse $(WAREHOUSE) --port $(PORT)

demo: warehouse dashboard

bench: setup
	$(BIN)/python bench/bench_validate.py

clean:
	rm -rf $(VENV) $(WAREHOUSE) .pytest_cache .mypy_cache .ruff_cache
