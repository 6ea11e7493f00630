"""Shortcuts in the per-line work of the parsers must read exactly what the plain way reads: message
categories tried only when a text can hold one (`categories._prefilter`), and a line's fields read with
one plan per (body, prefix) alternation (`grammar.Fields.read`)."""

from __future__ import annotations

import gzip

from hypothesis import given, settings
from hypothesis import strategies as st

import logscope.io
from logscope.parsers import categories
from logscope.parsers.grammar import load_line_grammar
from tests.conftest import FIXTURES

LINES = [
    line
    for path in sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
    for line in logscope.io.read_log(path).lines
]
COMPILER = [
    line
    for path in sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))[::60]
    for line in gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace").splitlines()
]


def _every_category(text: str) -> categories.Category | None:
    """The definition: the first category whose pattern occurs in the text."""
    return next((c for c in categories.CATEGORIES if c.pattern.search(text)), None)


def test_prefilter_keeps_the_case_blind_categories() -> None:
    required, always = categories._prefilter(categories.CATEGORIES)
    assert {c.name for c in always} == {c.name for c in categories.CATEGORIES if c.pattern.flags & 2}
    assert "out of memory" in required and "Killed" in required


def test_categories_of_every_fixture_line() -> None:
    named = 0
    for text in LINES + COMPILER + [t.upper() for t in LINES] + [t.lower() for t in LINES]:
        found = categories._classify(text)
        assert found == _every_category(text), text
        named += found is not None
    assert named > 200


# Texts built from what categories look for: each pattern's required strings, cut, joined, re-cased.
_PIECES = [
    *sorted(categories._prefilter(categories.CATEGORIES)[0]),
    "Target is None, use simulator",
    "ACTIVATION MEMORY PEAK EXCEEDS",
    "peak exceeds",
    "已杀死",
    "KeyError",
    "Traceback (most recent call last)",
    "config: ",
    " ",
    "x",
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_PIECES), st.integers(0, 3), st.sampled_from(["", "upper", "lower", "cut"])
        ),
        max_size=4,
    )
)
def test_categories_of_built_texts(parts: list[tuple[str, int, str]]) -> None:
    text = ""
    for piece, pad, how in parts:
        if how == "cut":
            piece = piece[1:]
        elif how:
            piece = getattr(piece, how)()
        text += " " * pad + piece
    assert categories._classify(text) == _every_category(text)


FIELD_NAMES = [
    ("level", "level2", "func", "message", "ts"),
    ("message",),
    ("ts", "level"),
    ("nothing", "level"),
]


def test_fields_read_as_get_on_every_line() -> None:
    lexer = load_line_grammar("rknn").lexer
    kinds = set()
    for line in LINES + COMPILER:
        kind, fields = lexer.classify(line)
        kinds.add(kind)
        for names in FIELD_NAMES:
            assert fields.read(names) == tuple(fields.get(name) for name in names), (line, names)
    assert len(kinds) > 40
