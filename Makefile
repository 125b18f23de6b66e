# The two commands of the README: `make demo` and `make test`. Everything else is theirs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WAREHOUSE ?= data/warehouse
PORT ?= 8501
API_PORT ?= 8600
# the published demo keys (docs/api.md); `haftkhabis api-key` makes real ones
API_KEYS ?= data/api-keys.demo.toml
# demo alert rules (docs/operations.md), listed at /v1/alerts
API_ALERTS ?= data/alerts.demo.toml
CORE := engine/core
# What the compiled engine (engine/_core.abi3.so) is built from: a change here rebuilds it.
CORE_SOURCES := $(shell find $(CORE) -path $(CORE)/target -prune -o \
	  \( -name '*.rs' -o -name '*.toml' -o -name Cargo.lock \) -print)

.PHONY: demo test setup browser rust lint typecheck unit sample warehouse dashboard serve bench screenshots clean

# The editable install builds the Rust extension with maturin (release profile) in place,
# as engine/_core.abi3.so; Python files are used from the tree as they are.
$(STAMP): pyproject.toml $(CORE_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/python -c 'import engine._core'
	touch $(STAMP)

setup: $(STAMP)

# Debian's chromium for the real-browser tests (browsers cannot be downloaded here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }

# The Rust workspace: formatting, lints (warnings are errors) and its own tests.
rust:
	cd $(CORE) && cargo fmt --check
	cd $(CORE) && cargo clippy --all-targets -- -D warnings
	cd $(CORE) && cargo test

lint: setup
	$(BIN)/ruff check engine ingest dashboards cli service tests bench

typecheck: setup
	$(BIN)/mypy
	$(BIN)/python -m mypy.stubtest engine._core

unit: setup
	$(BIN)/pytest -q -n 2 -p no:cacheprovider

test: setup rust browser lint typecheck unit

sample: setup
	$(BIN)/python data/make_sample.py

warehouse: setup
	$(BIN)/haftkhabis ingest data/sample --warehouse $(WAREHOUSE)
	$(BIN)/haftkhabis stats players --warehouse $(WAREHOUSE)

dashboard: setup
	$(BIN)/haftkhabis dashboard --warehouse $(WAREHOUSE) --port $(PORT)

demo: warehouse dashboard

# The HTTP API over the same warehouse (run it beside `make demo`; docs/api.md)
serve: setup
	$(BIN)/haftkhabis serve --warehouse $(WAREHOUSE) --port $(API_PORT) --keys $(API_KEYS) --alerts $(API_ALERTS)

bench: setup
	$(BIN)/python bench/bench_validate.py

# The docs' screenshots, made from the sample warehouse in chromium (docs/screenshots/make_screenshots.py)
screenshots: warehouse browser
	$(BIN)/python docs/screenshots/make_screenshots.py --warehouse $(WAREHOUSE)

clean:
	rm -rf $(VENV) $(WAREHOUSE) .pytest_cache .mypy_cache .ruff_cache engine/_core*.so
