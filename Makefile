# Two commands work on a fresh machine with only Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_LOG := fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log

.PHONY: demo test lint bench golden clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/logscope parse $(DEMO_LOG)

test: $(STAMP)
	$(BIN)/python -m pytest -q
	$(MAKE) --no-print-directory lint

lint: $(STAMP)
	$(BIN)/ruff check logscope tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy logscope

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# Regenerate the golden JSON summaries; review the diff before committing.
golden: $(STAMP)
	$(BIN)/python tests/regenerate_golden.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
