"""The RKNN parse loop does not try a row matcher (tensor row, layer row, noise line or pass marker) on a
line `classify` already read as another kind (`LineLexer.remembered`): each matcher matches only lines
`classify` reads as its own kind. The frames and counts must be those of the same log read with nothing
remembered (every matcher tried on every line), and with every line remembered before the parse (a log
whose builds repeat their lines), in every context a line may meet: inside a tensor or layer table, after
one, beside a cut perf row."""

from __future__ import annotations

import gzip
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import logscope.io
import logscope.parsers.rknn as rknn_parser
from logscope.api import parse_text
from logscope.model import ParsedLog
from logscope.parsers.grammar import Fields, RowMatcher, _KindGroups, load_line_grammar
from tests.conftest import FIXTURES
from tests.test_table_runs import _mangle, frames_equal

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
COMPILER_LOGS = sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))[::40]
MOBILENET = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
WRAPPED_PERF = FIXTURES / "rknn" / "11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log"
TS = "D RKNN: [15:13:15.953] "


def _lines(path: Path) -> list[str]:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace").split("\n")
    return logscope.io.read_log(path).lines


def _parse(lines: list[str], remember: bool | None, monkeypatch: pytest.MonkeyPatch) -> ParsedLog:
    """`lines` parsed with nothing remembered (`False`: `remembered` answers None for every line), with
    every line remembered first (`True`), or as the memory happens to be (`None`)."""
    lexer = load_line_grammar("rknn").lexer
    text = "\n".join(lines) + "\n"
    with monkeypatch.context() as m:
        if remember is False:
            m.setattr(lexer, "remembered", lambda line: None)
        elif remember:
            lexer._known.clear()
            for line in logscope.io.decode_bytes(text.encode("utf-8"), "<text>").lines:
                lexer.classify(line)
        return parse_text(text)


def _three_ways(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _parse(lines, False, monkeypatch)
    frames_equal(_parse(lines, True, monkeypatch), plain)
    frames_equal(_parse(lines, None, monkeypatch), plain)


@pytest.fixture(autouse=True)
def _forget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts and ends with nothing remembered (the memory is the lexer's, one per process)."""
    lexer = load_line_grammar("rknn").lexer
    lexer._known.clear()
    yield
    lexer._known.clear()


@pytest.mark.parametrize("path", RKNN_LOGS + COMPILER_LOGS, ids=lambda p: p.name[:40])
def test_fixtures_read_as_with_nothing_remembered(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _three_ways(_lines(path), monkeypatch)


@pytest.mark.parametrize("seed", range(4))
def test_mangled_builds_read_as_with_nothing_remembered(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several builds in one file, their rows cut short, cells lost or emptied, spacing pasted, prefixes
    dropped: lines of every kind inside and after the tables, most of them remembered from the build
    before."""
    rng = random.Random(seed)
    lines = logscope.io.read_log(MOBILENET).lines * 3 + logscope.io.read_log(WRAPPED_PERF).lines * 2
    rate = 0.05 if seed % 2 else 0.3
    _three_ways([_mangle(line, rng) if rng.random() < rate else line for line in lines], monkeypatch)


# Lines a table context meets that are not its rows, each remembered as its own kind before the table.
EXCERPT = [
    "I rknn-toolkit2 version: 1.5.2",
    TS + "ID  User     Tensor        DataType  OrigShape       |     [Start       End)       Size",
    TS + "1   ConvClip const_fold    INT8      (32,3,3,3)      | 0x001ddec0 0x001de340 0x00000480",
    TS + "----------------------------------------",  # a table rule inside the table
    TS + ">>>>>> start: N4rknn21RKNNMemStatisticsPassE",  # a marker inside it
    TS + "not need tranpose",  # a noise line inside it
    TS + "1   ConvClip const_fold    INT8      (32,3,3,3)      | 0x001ddec0",  # a row cut short
    TS + "1   ConvClip const fold    INT8      (32,3,3,3)      | 0x001ddec0 0x001de340 0x00000480",
    TS + "Total Weight Memory Size: 4447296",
    TS + "<<<<<<<< end: N4rknn21RKNNMemStatisticsPassE",
    TS + "ID   OpType           DataType Target InputShape  OutputShape  DDR Cycles  NPU Cycles",
    TS + "0    InputOperator    INT8     CPU    \\            (1,3,224,224) 0           0",
    TS + ">>>>>> start: OpEmit",
    TS + "0    InputOperator    INT8     CPU    \\            (1,3,224,224) 0",  # a layer row lacking a cell
    TS + "<<<<<<<< end: OpEmit",
    "",
]


@pytest.mark.parametrize("order", range(6))
def test_table_contexts_read_as_with_nothing_remembered(order: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(order)
    body = EXCERPT[1:]
    lines = [EXCERPT[0]]
    for _ in range(4):
        lines += rng.sample(body, len(body)) if order else body
    _three_ways(lines, monkeypatch)


def test_remembered_is_what_classify_answered() -> None:
    lexer = load_line_grammar("rknn").lexer
    line = TS + "not need tranpose"
    assert lexer.remembered(line) is None
    answer = lexer.classify(line)
    known = lexer.remembered(line)
    assert known is answer and known[0] == "NATIVE_NOISE" and isinstance(known[1], Fields)


def test_matchers_are_not_tried_on_lines_remembered_as_another_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second of two parses of one log (every line remembered by then) tries the noise-or-marker and
    tensor-row matchers on no line remembered as another kind; the first tries them on many."""
    lexer = load_line_grammar("rknn").lexer
    text = logscope.io.read_log(MOBILENET)
    parse_text(text)  # (the readers built from the matchers' patterns are made once, before they count)
    lexer._known.clear()
    tried: list[str] = []

    def counting(matcher: RowMatcher) -> RowMatcher:
        def match(line: str) -> re.Match[str] | None:
            if not in_run:
                tried.append(line)
            return matcher.match(line)

        return RowMatcher(match, matcher.prefix_groups, matcher.body_groups)

    in_run: list[bool] = []  # (a run's end is where its matcher refuses a line: those tries are not counted)
    run_from = rknn_parser.run_from

    def uncounted_run(*args):  # type: ignore[no-untyped-def]
        in_run.append(True)
        try:
            return run_from(*args)
        finally:
            in_run.pop()

    monkeypatch.setattr(rknn_parser, "run_from", uncounted_run)
    row_matcher, either_matcher = lexer.row_matcher, lexer.either_matcher
    monkeypatch.setattr(lexer, "row_matcher", lambda *args: counting(row_matcher(*args)))
    monkeypatch.setattr(lexer, "either_matcher", lambda *args: counting(either_matcher(*args)))
    # (the narrow tensor-row regex, tried first in a tensor table, as a counting matcher too)
    narrow = counting(RowMatcher(rknn_parser.tensor_row_regex(lexer).match, _KindGroups(), _KindGroups()))
    monkeypatch.setattr(rknn_parser, "tensor_row_regex", lambda lexer: narrow)

    def other_kinds() -> list[str]:
        """The lines a matcher was tried on that `classify` reads as a kind no matcher matches."""
        rows = ("NATIVE_NOISE", "PASS_MARK", "TENSOR_ROW", "LAYER_ROW")
        other = [line for line in tried if lexer.classify(line)[0] not in rows]
        tried.clear()
        return other

    first = parse_text(text)
    assert other_kinds()  # (a line is remembered from its first `classify` on: here, after the matchers)
    second = parse_text(text)
    assert other_kinds() == []
    frames_equal(first, second)
