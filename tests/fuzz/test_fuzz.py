"""A fixed-seed slice of the fuzz harness in `make test`: mutated fixtures of every family and mutated
ONNX and TFLite models through the CLI entry point (`logscope.cli.main`, every command in rotation) in
a forked worker with an address-space limit, a CPU limit and the peak-memory bound, plus a few cases
through `python -m logscope`. The full run is `make fuzz` (benchmarks/fuzz.py, 10,000 cases per
family)."""

from __future__ import annotations

import harness
import pytest

# Cases per family: about 0.07 s of CPU each once the worker runs, so the slice stays near a minute.
CASES = {"rknn": 64, "mcu": 48, "synthetic": 32, "onnx": 40, "tflite": 36}
SEED = 20261201


@pytest.mark.parametrize("family", harness.FAMILIES)
def test_fuzz_slice(family: str) -> None:
    summary = harness.run_family(family, CASES[family], SEED)
    assert summary.cases == CASES[family]
    assert summary.bad == 0, harness.format_summary([summary])
    assert summary.counts["ok"] > 0, harness.format_summary([summary])  # the mutations leave parseable cases
    assert set(summary.by_command) == {harness.command_for(family, i)[0] for i in range(CASES[family])}


def test_fuzz_cli_sample() -> None:
    """Two cases per family through `python -m logscope` (exit code, one stderr line, no traceback)."""
    for family in harness.FAMILIES:
        for index in (0, 1):
            result = harness.run_cli_case(family, SEED, index)
            assert result.outcome in ("ok", "refused"), result


@pytest.mark.parametrize(
    ("code", "stderr", "outcome"),
    [
        (0, "wrote r.html\n", "ok"),
        (1, "", "ok"),
        (2, "logscope: error: x.log: looks binary\n", "refused"),
        (2, "logscope: error: a\nlogscope: error: b\n", "traceback"),
        (2, "Usage: logscope parse\n", "traceback"),
        (3, "logscope: internal error: ValueError: x (x.log:3; --debug shows the traceback)\n", "traceback"),
        (3, "logscope: internal error: MemoryError: (x.log; --debug shows the traceback)\n", "memory-limit"),
        (0, "Traceback (most recent call last):\n  ...\nValueError\n", "traceback"),
        (-11, "", "crash"),
    ],
)
def test_classify(code: int, stderr: str, outcome: str) -> None:
    assert harness.classify(code, stderr)[0] == outcome


def test_memory_bound_is_an_outcome() -> None:
    """A case whose peak is over the stated bound is counted as `memory-bound`, not ok."""
    summary = harness.Summary("rknn")
    big = harness.memory_bound(1000) + 1
    summary.add(harness.Result("rknn", 0, "memory-bound", [], "", 1000, "parse", big))
    assert summary.bad == 1
    assert harness.memory_bound(10**6) == harness.MEMORY_FIXED_BYTES + harness.MEMORY_PER_INPUT_BYTE * 10**6
