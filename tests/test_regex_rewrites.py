"""Two rewrites of the row regexes the parse loop reads runs with (`parsers/rknn/table_runs.py`): greedy
optional groups as branches (`optional_groups_as_branches`, the same regex) and ASCII digits in the
narrow tensor-row regex's timestamp and id (`tensor_row_regex`: what it matches, it reads as the
tensor-row matcher). Checked on the grammar's own row patterns, over fixture lines, mangled rows, rows
with digits of other scripts, and any text."""

from __future__ import annotations

import random
import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import logscope.io
from logscope.api import parse_text
from logscope.parsers.grammar import load_line_grammar
from logscope.parsers.rknn.table_runs import optional_groups_as_branches, tensor_row_regex
from logscope.parsers.rknn.toolkit import _TQDM_FRAME, _TQDM_PATTERN
from tests.conftest import FIXTURES
from tests.test_table_runs import MOBILENET, VOCABULARY, _mangle, _tensor_lines, both_ways, frames_equal

# Digits of other scripts (Arabic-Indic, Devanagari, fullwidth): `\d` takes them, `[0-9]` does not.
OTHER_DIGITS = "\u0663\u0967\uff17"


def _row_patterns() -> list[str]:
    lexer = load_line_grammar("rknn").lexer
    pairs = [
        ("NATIVE_PREFIX", body)
        for body in ("TENSOR_ROW", "LAYER_ROW", "PASS_MARK", "NATIVE_NOISE", "NATIVE_MSG")
    ]
    return [lexer.row_pattern(prefix, body) for prefix, body in pairs]


def _lines() -> list[str]:
    rng = random.Random(3)
    lines = _tensor_lines() + VOCABULARY + logscope.io.read_log(MOBILENET).lines
    lines += [_mangle(line, rng) for line in lines[:2000]]
    lines += [
        re.sub(r"\d", lambda _: rng.choice(OTHER_DIGITS), line, count=rng.randrange(1, 3))
        for line in lines[:500]
    ]
    return lines


def _reads(regex: re.Pattern[str], line: str) -> tuple[str, ...] | None:
    m = regex.match(line)
    return None if m is None else (m.group(0), *m.groups())


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("(?:a)?b", "(?:a|)b"),
        ("(?:a|bc)?d", "(?:a|bc|)d"),
        ("(?:(?:a)?b)?c", "(?:(?:a|)b|)c"),
        ("(?:[)]b)?c", "(?:[)]b|)c"),  # a `)` in a class closes nothing
        ("(?:a)??b", "(?:a)??b"),  # lazy: nothing first, left as it is
        ("(?:a)?+b", "(?:a)?+b"),  # possessive
        ("(?P<x>a)?b", "(?P<x>a)?b"),  # a capturing group
        ("(?=a)?b", "(?=a)?b"),  # a look-ahead
        (r"\(?:a\)?b", r"\(?:a\)?b"),  # escaped parentheses
        ("[]a)?]x", "[]a)?]x"),  # a `]` first in a class
        ("[^]a)?](?:x)?", "[^]a)?](?:x|)"),
    ],
)
def test_optional_groups_as_branches_cases(pattern: str, expected: str) -> None:
    assert optional_groups_as_branches(pattern) == expected


def test_optional_groups_as_branches_read_as_the_pattern() -> None:
    """The grammar's row patterns rewritten match the same lines, with the same groups."""
    lines = _lines()
    for pattern in _row_patterns():
        rewritten = optional_groups_as_branches(pattern)
        assert rewritten != pattern  # (each holds an optional timestamp at least)
        before, after = re.compile(pattern), re.compile(rewritten)
        for line in lines:
            assert _reads(after, line) == _reads(before, line), (pattern, line)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ab()?:|+*[]^\\", max_size=14),
    st.lists(st.text(alphabet="ab()|[]^\\:", max_size=8), max_size=6),
)
def test_optional_groups_as_branches_on_any_pattern(pattern: str, texts: list[str]) -> None:
    """Any pattern `re` compiles, rewritten, compiles and matches any text as it does (same groups)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (`[[`: a nested set, some day)
        try:
            before = re.compile(pattern)
        except (re.error, RecursionError):
            return
        after = re.compile(optional_groups_as_branches(pattern))
    for text in texts:
        assert _reads(after, text) == _reads(before, text)


def test_ascii_tensor_row_regex_reads_as_the_row_matcher() -> None:
    """On rows whose timestamp or cells hold digits of other scripts the narrow regex refuses the line
    or reads it as the tensor-row matcher does."""
    lexer = load_line_grammar("rknn").lexer
    fast, full = tensor_row_regex(lexer), lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match
    assert "\\d" not in fast.pattern
    taken = refused = 0
    for line in _lines():
        m = fast.match(line)
        if m is None:
            refused += full(line) is not None
            continue
        taken += 1
        expected = full(line)
        assert expected is not None and m.groupdict() == expected.groupdict(), line
    assert taken > 400 and refused > 400


def test_rows_with_other_digits_parse_as_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tensor rows whose cells hold digits of other scripts: the narrow regex refuses them, the tensor-row
    matcher reads them on the ordinary path, and the frames are those of the log read one line at a time."""
    lexer = load_line_grammar("rknn").lexer
    rng = random.Random(5)
    lines = logscope.io.read_log(MOBILENET).lines * 2
    fast, full = tensor_row_regex(lexer), lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match
    changed = 0
    for i, line in enumerate(lines):
        if fast.match(line) and rng.random() < 0.3:
            lines[i] = re.sub(r"\d", lambda _: rng.choice(OTHER_DIGITS), line, count=2)
            changed += fast.match(lines[i]) is None and full(lines[i]) is not None
    assert changed > 20
    text = "\n".join(lines) + "\n"
    runs, plain = both_ways(lambda: parse_text(text), monkeypatch)
    frames_equal(runs, plain)
    assert len(runs.frames["tensors"]) > 150


def test_progress_frames_read_as_the_pattern() -> None:
    """The tqdm frame regex, its optional groups branches, finds the frames the pattern finds in every
    progress line of the fixtures (bars redrawn on one line, rates in it/s and s/it, no rate)."""
    lexer = load_line_grammar("rknn").lexer
    before = re.compile(_TQDM_PATTERN)
    assert _TQDM_FRAME.pattern != before.pattern
    seen = 0
    for path in sorted((FIXTURES / "rknn").glob("*.log")):
        for line in logscope.io.read_log(path).lines:
            if lexer.classify(line)[0] != "PROGRESS":
                continue
            seen += 1
            frames = [m.groupdict() for m in _TQDM_FRAME.finditer(line)]
            assert frames == [m.groupdict() for m in before.finditer(line)], line
    assert seen > 20
