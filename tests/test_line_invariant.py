"""Every physical line is accounted for: exactly one class each, and the total is the file's line count.

Checked on every fixture, and under the mutations copies of real logs suffer (a cell emptied, runs of
spaces collapsed, a row cut short, the header lines removed). The physical line count is computed here
from the decoded text, independently of `logscope.io`'s splitting.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope
from logscope.io import decode_bytes, read_log
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


def _parse(lines: list[str]) -> None:
    data = "\n".join(lines) + "\n"
    try:
        log = logscope.parse_text(decode_bytes(data.encode("utf-8"), "<mutated>"))
    except logscope.LogscopeError:
        return
    check_accounted(log, physical_lines(data))


_CELL = re.compile(r"(?<=\s)\S+(?=\s)")


def _empty_cell(line: str, which: int) -> str:
    cells = list(_CELL.finditer(line))
    if not cells:
        return line
    m = cells[which % len(cells)]
    return line[: m.start()] + " " * (m.end() - m.start()) + line[m.end() :]


def _mutate(lines: list[str], ops: list[tuple[str, int, int]]) -> list[str]:
    out = list(lines)
    for op, index, arg in ops:
        if not out:
            break
        i = index % len(out)
        if op == "empty":
            out[i] = _empty_cell(out[i], arg)
        elif op == "collapse":
            out[i] = re.sub(r"(?<=\S) {2,}", " ", out[i])
        elif op == "cut":
            out[i] = out[i][: arg % (len(out[i]) + 1)]
        elif op == "drop":  # headers, titles and rules are the lines most often left out of a copy
            del out[i]
    return out


MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["empty", "collapse", "cut", "drop"]), st.integers(0, 10_000), st.integers(0, 400)
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TABLE_LINES)), MUTATIONS)
def test_invariant_holds_under_table_mutations(path, ops):
    _parse(_mutate(TABLE_LINES[path], ops))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(TABLE_LINES)), st.booleans())
def test_whole_table_collapsed_or_headerless(path, drop_headers):
    lines = [re.sub(r"(?<=\S) {2,}", " ", line) for line in TABLE_LINES[path]]
    if drop_headers:
        lines = [line for line in lines if not re.search(r"\bOpType\b|\bID\b|-{10,}|Table\b", line)]
    _parse(lines)


def test_a_physical_line_split_into_frames_counts_once_in_its_most_telling_class():
    """tqdm frames glued by carriage returns are split into logical lines by `logscope.io`; the physical
    line still counts once, as unparsed when any piece is unreadable (and that piece stays findable)."""
    data = (
        "I rknn building ...\n"
        "I Loading :   0%|          | 0/58 [00:00<?, ?it/s]\rI Loading : 100%|#| 58/58 [00:00<00:00]\r"
        "an unreadable piece\n"
        "I Loading :   0%|          | 0/58 [00:00<?, ?it/s]\rI Loading : 100%|#| 58/58 [00:00<00:00]\n"
        "I rknn building done.\n"
    )
    log = logscope.parse_text(decode_bytes(data.encode(), "<cr>"))
    check_accounted(log, 4)
    assert log.line_counts["unparsed"] == 1 and list(log.frames["unparsed"]["line"]) == [2]
    assert log.line_counts["noise"] == 1 and log.line_counts["structural"] == 2
