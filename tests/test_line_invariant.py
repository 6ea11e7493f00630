"""Every physical line is accounted for: exactly one class each, and the total is the file's line count.

Checked on every fixture, and under the mutations copies of real logs suffer (a cell emptied, runs of
spaces collapsed, a row cut short, the header lines removed). The physical line count is computed here
from the decoded text, independently of `logscope.io`'s splitting.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import logscope
from logscope.io import read_log
from logscope.parsers.base import LINE_CLASSES
from tests.conftest import FIXTURES

ALL = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".log", ".txt"))
# Fixtures with tables (layer, perf, tensor, ranking; MCU profiler, NNoM, Vela, ST): the mutation targets.
TABLED = [
    FIXTURES / "rknn" / name
    for name in (
        "03-perf-detail-cpp-yolov8-1920-rk3588.log",
        "07-perf-detail-multicore-yolov8-1920x1088.log",
        "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log",
        "11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log",
        "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log",
        "31-issue-tk2-163-build-layer-table-yolov8-tk2.log",
        "59-doc-tk2-board-test-readme-eval-perf-tk2-1.5.x.log",
        "61-issue-model-zoo-357-ranking-table-prefixed-transpose-cpu-rk3588.log",
        "62-issue-yolov10-115-eval-perf-rows-headerless-gather-cpu-rk3588.log",
    )
]
TABLE_LINES = {p: p.read_text(encoding="utf-8").splitlines() for p in TABLED if p.exists()}


def physical_lines(text: str) -> int:
    """Lines as a reader counts them: `\\n`-separated, a last line without `\\n` included."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def check_accounted(log: logscope.ParsedLog, physical: int) -> None:
    counts = log.line_counts
    assert set(counts) == {"total", *LINE_CLASSES}
    assert all(counts[c] >= 0 for c in LINE_CLASSES), counts
    assert counts["total"] == sum(counts[c] for c in LINE_CLASSES)
    assert counts["total"] == physical, counts
    unparsed = log.frames["unparsed"]
    assert len(set(unparsed["line"])) == counts["unparsed"] if len(unparsed) else counts["unparsed"] == 0
    for name, frame in log.frames.items():
        if "line" in frame.columns and len(frame):
            lines = frame["line"].dropna()
            assert ((lines >= 1) & (lines <= physical)).all(), name


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_line_is_accounted_for(path: Path):
    text = read_log(path)
    raw = path.read_bytes()
    decoded = raw.decode(text.encoding, errors="replace")
    if decoded.startswith("\ufeff"):
        decoded = decoded[1:]
    check_accounted(logscope.parse(path), physical_lines(decoded))
