# Two commands work on a fresh machine with only Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_LOG := fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log

.PHONY: demo test lint bench fuzz golden golden-findings rules-doc docs check-html clean corpus corpus-rknn corpus-tflm

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dask,s3]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/logscope parse $(DEMO_LOG)

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto
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
	$(BIN)/python benchmarks/degenerate.py
	$(BIN)/python benchmarks/fixed_costs.py
	$(BIN)/python benchmarks/report_browser_bench.py

# Mutated fixtures, ONNX and TFLite models through the CLI, 10,000 cases per family (tests/fuzz/harness.py
# states the outcomes, limits and memory bound); about an hour of CPU, so it runs at low priority, the
# families in parallel. `make test` runs a fixed-seed slice.
FUZZ_CASES ?= 10000
FUZZ_JOBS ?= 5
fuzz: $(STAMP)
	nice -n 10 $(BIN)/python benchmarks/fuzz.py --cases $(FUZZ_CASES) --jobs $(FUZZ_JOBS)

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
	$(BIN)/python -m logscope.figures > docs/figures.md

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

# Both corpora from the real tools; run by hand, never by `make test`.
corpus: corpus-rknn corpus-tflm

# The RKNN compiler corpus (fixtures/rknn-compiler/): installs rknn-toolkit2 2.2.0-2.5.0 with a shared
# torch into git-ignored folders under tools/corpus/ (about 6 GB), then builds every model x target x
# dtype with 2.5.0 and 2.3.2, and five targets with 2.3.0 and 2.2.0, the recurrent development and held-out
# models (rknn_models.RECURRENT_DEV, HELDOUT) into fixtures/rknn-compiler/recurrent-dev/ and heldout-recurrent/,
# and the transformer variants (TRANSFORMER_DEV, TRANSFORMER_SWEEP, TRANSFORMER_SWEEP_TARGETS) into
# transformer-dev/ (also 2.3.0 and 2.2.0), transformer-sweep/, transformer-sweep-targets/ and
# transformer-heldout/, and learns the
# transformer tables from them (logscope/reference/rknn_transformer_data.py). Run by hand; `make test` only
# reads what it wrote; then `python tools/corpus/rknn_accuracy.py` regenerates docs/reference.md's table.
CORPUS_OLDER_TARGETS := --target rk3588 --target rk3576 --target rk3566 --target rk3562 --target rv1106
corpus-rknn: $(STAMP)
	$(PYTHON) tools/corpus/rknn.py setup
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --toolkit 2.5.0 --toolkit 2.3.2
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --toolkit 2.3.0 --toolkit 2.2.0 $(CORPUS_OLDER_TARGETS)
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set recurrent-dev --set heldout-recurrent
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set transformer-dev --toolkit 2.5.0 --toolkit 2.3.2
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set transformer-dev --toolkit 2.3.0 --toolkit 2.2.0 $(CORPUS_OLDER_TARGETS)
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set transformer-sweep --toolkit 2.5.0 --toolkit 2.3.2 --target rk3588 --dtype int8
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set transformer-sweep-targets --toolkit 2.5.0 --toolkit 2.3.2 --target rk3588 --target rk3576 --target rv1126b --target rk3562 --target rv1106
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set transformer-heldout --toolkit 2.5.0 --toolkit 2.3.2 --target rk3588 --target rk3576 --target rv1126b --target rk3562 --target rv1106 --target rv1103
	tools/corpus/.venv-base/bin/python tools/corpus/rknn.py build --heldout --set transformer-heldout --toolkit 2.3.0 --toolkit 2.2.0 --target rk3588 --target rk3576 --target rk3562 --target rv1106
	$(BIN)/python tools/corpus/rknn_transformer_templates.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
