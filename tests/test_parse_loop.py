"""Lines the RKNN parse loop counts itself instead of handing them to `feed` (`parsers.rknn._COUNTED`:
the script's prints, foreign loggers, table rules, optimiser steps outside a fusion section) must leave
exactly what `feed` leaves: the counts, and the context the next line reads (the open message a
continuation line extends, the fusion section, a cut perf row waiting for its continuation)."""

from __future__ import annotations

import gzip

import pytest

import logscope.io
import logscope.parsers.rknn as rknn_parser
from logscope.api import parse_text
from logscope.model import ParsedLog
from tests.conftest import FIXTURES
from tests.test_table_runs import frames_equal

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
COMPILER_LOGS = sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))[::50]

# Each counted kind between a line that opens context and one that reads it.
EXCERPTS = [
    # A table rule keeps the open message: the indented line continues the warning.
    "W build: found outlier value\nD RKNN: [15:13:15.953] ----------------------------------------\n"
    "                       Please take care of this change\n",
    # A script print or a foreign logger's line closes it: the indented line is unparsed.
    "W build: found outlier value\n--> Building model\n                       Please take care\n",
    "W build: found outlier value\n2023-12-22 15:13:10.185671: W tensorflow/x.cc:64] Could not\n    more\n",
    # An optimiser step outside a fusion section, and one that closes a section (no indent) or not.
    "I fuse_ops results:\nI     fold_constant ...\nI     r1: remove node = ['a'], add node = ['b']\n"
    "I fuse_ops done.\nI     r2: remove node = ['c'], add node = ['d']\nI base_optimize ...\n",
    "I base_optimize ...\nW build: a warning\nI base_optimize done.\n    not a continuation\n",
]


def both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[ParsedLog, ParsedLog]:
    """The parse as it is, and with every line of those kinds handed to `feed`."""
    counted = parse_text(text)
    with monkeypatch.context() as m:
        m.setattr(rknn_parser, "_COUNTED", frozenset())
        fed = parse_text(text)
    return counted, fed


@pytest.mark.parametrize("path", RKNN_LOGS + COMPILER_LOGS, ids=lambda p: p.name)
def test_counted_lines_read_as_fed(path, monkeypatch: pytest.MonkeyPatch) -> None:
    if path.suffix == ".gz":
        text = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
    else:
        text = "\n".join(logscope.io.read_log(path).lines) + "\n"
    if not any(kind in text for kind in ("RKNN", "rknn")):
        pytest.skip("not an RKNN log")
    frames_equal(*both_ways(text, monkeypatch))


@pytest.mark.parametrize("excerpt", EXCERPTS)
def test_counted_lines_keep_or_close_context_as_fed(excerpt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    counted, fed = both_ways("I rknn-toolkit2 version: 2.5.0\n" + excerpt, monkeypatch)
    frames_equal(counted, fed)
    assert counted.line_counts["foreign"] + counted.line_counts["noise"] > 0


def test_the_kinds_are_counted_in_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop takes them (no `feed` call for them), and a table rule kept the warning open."""
    fed: list[str] = []
    real = rknn_parser.RknnAssembler.feed

    def spy(self, kind, fields, line, number):
        fed.append(kind)
        return real(self, kind, fields, line, number)

    monkeypatch.setattr(rknn_parser.RknnAssembler, "feed", spy)
    log = parse_text("I rknn-toolkit2 version: 2.5.0\n" + EXCERPTS[0] + EXCERPTS[1])
    assert "TABLE_RULE" not in fed and "SCRIPT_PRINT" not in fed
    messages = log.frames["messages"]["message"].tolist()
    assert messages[0] == "found outlier value\nPlease take care of this change"
