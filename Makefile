# Two commands work on a fresh machine with only Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_LOG := fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log

.PHONY: demo test lint bench golden golden-findings rules-doc docs check-html clean corpus corpus-tflm

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
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
	$(BIN)/python benchmarks/reference_bench.py
	$(BIN)/python benchmarks/planner_bench.py
	$(BIN)/python benchmarks/mcu_run.py
	$(BIN)/python benchmarks/audit_bench.py
	$(BIN)/python benchmarks/fixed_costs.py

# Regenerate the golden JSON summaries; review the diff before committing.
golden: $(STAMP)
	$(BIN)/python tests/regenerate_golden.py

# Regenerate the reviewed findings of every rule over every fixture; review the diff
# (tests/rules/GOLDEN_REVIEW.md) and tune rules, never the file.
golden-findings: $(STAMP)
	$(BIN)/python tests/rules/regenerate_findings.py

# docs/rules.md is generated from the rule modules' docstrings; a test checks it is current.
rules-doc: $(STAMP)
	$(BIN)/python -m logscope.rules.docs > docs/rules.md

# Every generated reference: rules (from the rule modules) and the CLI (from the typer app).
docs: rules-doc
	$(BIN)/python -m logscope.cli_docs > docs/cli.md

# The interactive HTML report in headless Chromium (Debian: apt-get install -y chromium): the browser
# tests (also part of `make test` when Chromium is installed), then one report rendered and screenshot
# for a person to look at: build/check-html/report.png.
CHROMIUM ?= chromium
CHECK_HTML := build/check-html
check-html: $(STAMP)
	$(BIN)/python -m pytest -q tests/test_report_browser.py
	mkdir -p $(CHECK_HTML)
	$(BIN)/logscope report $(DEMO_LOG) fixtures/synthetic/heap-trace-stm32-uart-bytes-leak.txt -o $(CHECK_HTML)/report.html
	$(CHROMIUM) --headless=new --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking \
		--disable-component-update --no-first-run --disable-sync --virtual-time-budget=5000 \
		--window-size=1200,5000 --screenshot=$(abspath $(CHECK_HTML))/report.png \
		file://$(abspath $(CHECK_HTML))/report.html 2>/dev/null
	@echo "look at $(CHECK_HTML)/report.png"

# The TFLM corpus: .tflite models built with tflite-micro's model editor, run in its interpreter; the
# printouts and a manifest are committed (fixtures/tflm-corpus). Needs the `corpus` extra.
corpus-tflm: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[corpus]'
	nice -n 10 $(BIN)/python tools/corpus/tflm.py --out fixtures/tflm-corpus
	$(BIN)/python tools/corpus/tflm_accuracy.py --write docs/reference.md

corpus: corpus-tflm

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
