"""A fixed-seed slice of the fuzz harness in `make test`: mutated fixtures of every family and mutated
ONNX models through the library path of parse, report, plot, diff and reference, in a forked worker
with an address-space and a CPU limit, plus a few cases through the real CLI. The full run is
`make fuzz` (benchmarks/fuzz.py, 10,000 cases per family)."""

from __future__ import annotations

import harness
import pytest

# Cases per family: about 0.15 s of CPU each, so the slice stays well under a minute on two cores.
CASES = {"rknn": 70, "mcu": 50, "synthetic": 30, "onnx": 80}
SEED = 20261201


@pytest.mark.parametrize("family", harness.FAMILIES)
def test_fuzz_slice(family: str) -> None:
    summary = harness.run_family(family, CASES[family], SEED, cli_every=0, draw_every=10)
    assert summary.cases == CASES[family]
    assert summary.bad == 0, harness.format_summary([summary])
    assert summary.counts["ok"] > 0, harness.format_summary([summary])  # the mutations leave parseable cases


def test_fuzz_cli_sample() -> None:
    """Two cases per family through `python -m logscope` (exit code, one stderr line, no traceback)."""
    for family in harness.FAMILIES:
        for index in (0, 1):
            result = harness.run_cli_case(family, SEED, index)
            assert result.outcome in ("ok", "refused"), result
