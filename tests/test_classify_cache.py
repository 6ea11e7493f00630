"""`LineLexer.classify` remembers its answers by line: a remembered answer is the one the alternations
give (kind and every field), and the memory stays bounded."""

from __future__ import annotations

import pytest

import logscope.io
import logscope.parsers.grammar as grammar
from logscope.parsers.grammar import KNOWN_LINES, MAX_BLANK_RUN, LineLexer, load_line_grammar
from tests.conftest import FIXTURES

LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "mcu").rglob("*.txt"))


def _answer(lexer: LineLexer, line: str) -> tuple[str, dict[str, str | None]]:
    kind, fields = lexer.classify(line)
    return kind, dict(fields.items())


@pytest.mark.parametrize("name", ["rknn", "mcu"])
def test_remembered_answers_are_the_alternations(name: str) -> None:
    lexer = load_line_grammar(name).lexer
    lines = [line for path in LOGS for line in logscope.io.read_log(path).lines]
    lines += ["", "x" * (MAX_BLANK_RUN + 1), "I " + " " * (MAX_BLANK_RUN + 2) + "x"]
    for line in lines:
        fresh_kind, fresh = lexer._classify(line)
        expected = (fresh_kind, dict(fresh.items()))
        assert _answer(lexer, line) == expected, line  # (remembered now, or from an earlier line)
        assert _answer(lexer, line) == expected, line
    assert all(len(line) <= MAX_BLANK_RUN for line in lexer._known)


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    lexer = load_line_grammar("rknn").lexer
    monkeypatch.setattr(grammar, "KNOWN_LINES", 50)
    lexer._known.clear()
    for i in range(500):
        lexer.classify(f"I message {i}")
        assert len(lexer._known) <= 50
    assert lexer.classify("I message 499")[0] == lexer._classify("I message 499")[0]
    assert KNOWN_LINES >= 1024
