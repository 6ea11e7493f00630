"""Runs of plain toolkit messages (`parsers/rknn/bulk.py`) and of lines no MCU terminal reads
(`parsers/runs.py`) are read as columns: the result must be exactly
what the line-by-line path gives, whatever surrounds, interrupts or imitates the run; and the regex
proofs that make it exact must hold and stay conservative."""

from __future__ import annotations

import math
import re
import string
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope.parsers.mcu as mcu_parser
import logscope.parsers.rknn as rknn_parser
import logscope.parsers.runs as runs_module
from logscope.api import parse_stream, parse_text
from logscope.io import LogStream
from logscope.model import ParsedLog
from logscope.parsers.grammar import (
    MAX_BLANK_RUN,
    load_line_grammar,
    most_matched,
    refused,
    required_substrings,
    requires_outside,
)
from logscope.parsers.mcu.assembler import McuAssembler
from logscope.parsers.rknn.assembler import RknnAssembler
from logscope.parsers.rknn.bulk import category_substrings, run_regex
from logscope.parsers.runs import MIN_RUN, split_runs, unrecognised_run_regex

BANNER = "W __init__: rknn-toolkit2 version: 1.5.2+b642f30c"
WORD = frozenset(string.ascii_letters + string.digits + "_")

# Lines a run may hold, and lines that look like its lines but are not plain messages (or are, but
# must take the ordinary path: a category, a traceback, a continuation).
VOCABULARY = [
    "I x",
    "W word",
    "D two words",
    "E three words here",
    "I x ",
    "  I indented",
    "\tI tabbed",
    "I Killed",
    "E out of memory now",
    "W The model is not support",
    "I ACTIVATION MEMORY PEAK EXCEEDS",
    "W rknn building done",
    "I rknn building ...",
    "I Optimizing network with x",
    "E build: failed",
    "W load_onnx: a message",
    "I Traceback (most recent call last):",
    '  File "a.py", line 3, in <module>',
    "ValueError: bad value",
    "E ValueError: bad value",
    "    a continuation line",
    "D RKNN: [10:00:00.123] native message",
    "I Loading : 100%|##########| 3/3",
    "I",
    "Ix",
    "I  two blanks",
    "I é accent",
    "",
    "I " + "a" * 1200,
    "I " + " " * (MAX_BLANK_RUN + 10) + "x",
]


def frames_equal(a: ParsedLog, b: ParsedLog) -> None:
    assert a.line_counts == b.line_counts
    assert set(a.frames) == set(b.frames)
    for name, frame in a.frames.items():
        pd.testing.assert_frame_equal(frame, b.frames[name], obj=name)


def line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the run readers of both families off."""
    monkeypatch.setattr(rknn_parser, "_bulk_regexes", lambda lexer: (None, None))
    monkeypatch.setattr(mcu_parser, "_unrecognised_runs", lambda lexer: None)


def run_lines(segments: list[tuple[int, int]]) -> str:
    lines = [BANNER]
    serial = 0
    for choice, repeat in segments:
        for _ in range(repeat):
            line = VOCABULARY[choice]
            if line == "I x":  # distinct words, so a reordering would show
                line, serial = f"I w{serial}", serial + 1
            lines.append(line)
    return "\n".join(lines) + "\n"


def both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[ParsedLog, ParsedLog]:
    bulk = parse_text(text)
    with monkeypatch.context() as m:
        line_by_line(m)
        plain = parse_text(text)
    return bulk, plain


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.integers(0, len(VOCABULARY) - 1), st.integers(1, 80)),
        min_size=1,
        max_size=12,
    )
)
def test_runs_parse_as_line_by_line(monkeypatch: pytest.MonkeyPatch, segments: list[tuple[int, int]]) -> None:
    bulk, plain = both_ways(run_lines(segments), monkeypatch)
    frames_equal(bulk, plain)


def test_the_bulk_path_is_taken_and_interrupted_where_it_must(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = RknnAssembler._plain_run

    def spy(self: RknnAssembler, levels: list[str] | str, texts: list[str], numbers: list[int]) -> None:
        calls.append(len(numbers))
        real(self, levels, texts, numbers)

    monkeypatch.setattr(RknnAssembler, "_plain_run", spy)
    text = run_lines([(0, 300), (7, 1), (0, 300), (16, 1), (17, 2), (18, 1), (1, 100)])
    bulk = parse_text(text)
    # `I Killed` is a plain message too, so the first run is 601 lines; its middle (599) is cut in two
    # around it (a category). The traceback head ends that run; its frame and exception lines are read
    # by the ordinary path; the last run (100 lines) has a middle of 98.
    assert calls == [299, 299, 98]
    messages = bulk.frames["messages"]
    assert (messages["category"] == "process-killed").sum() == 1
    assert messages.loc[messages["category"] == "process-killed", "line"].tolist() == [302]
    monkeypatch.setattr(RknnAssembler, "_plain_run", real)
    with monkeypatch.context() as m:
        line_by_line(m)
        plain = parse_text(text)
    frames_equal(bulk, plain)


@pytest.mark.parametrize("block_bytes", [97, 1000, 4096])
def test_runs_across_stream_blocks(tmp_path: Path, block_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "runs.log"
    path.write_text(run_lines([(0, 200), (2, 50), (8, 1), (3, 120), (0, 70)]) * 3, encoding="utf-8")
    bulk = parse_stream(LogStream(path, block_bytes=block_bytes))
    with monkeypatch.context() as m:
        line_by_line(m)
        plain = parse_stream(LogStream(path, block_bytes=block_bytes))
    frames_equal(bulk, plain)
    assert bulk.line_counts["message"] == len(bulk.frames["messages"]) + 0  # one row per plain message


def test_glued_lines_inside_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """tqdm frames glued by carriage returns make one physical line of several logical ones."""
    lines = [BANNER] + [f"I w{i}" for i in range(100)] + ["I a\rI b\rI c"] + [f"I v{i}" for i in range(100)]
    bulk, plain = both_ways("\n".join(lines) + "\n", monkeypatch)
    frames_equal(bulk, plain)


def test_a_run_after_an_open_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [BANNER, "E load_onnx: Traceback (most recent call last):", '  File "x.py", line 1, in <module>']
    lines += [f"I w{i}" for i in range(200)]
    bulk, plain = both_ways("\n".join(lines) + "\n", monkeypatch)
    frames_equal(bulk, plain)


def test_a_million_one_word_lines_are_rows() -> None:
    text = BANNER + "\n" + "".join(f"I w{i}\n" for i in range(100_000))
    log = parse_text(text)
    messages = log.frames["messages"]
    assert len(messages) == 100_000
    assert messages["line"].iloc[[0, -1]].tolist() == [2, 100_001]
    assert messages["message"].iloc[-1] == "w99999"
    assert log.line_counts["message"] == 100_000


# ---------------------------------------------------------------------- the proofs
def test_the_shipped_grammar_and_categories_allow_the_fast_path() -> None:
    regex = run_regex(load_line_grammar("rknn").lexer)
    assert regex is not None
    assert category_substrings() is not None
    assert regex.pattern.startswith("\\n(?!")
    line_class = re.search(r"\[DIWE\] \[([^\]]+)\]", regex.pattern)
    assert line_class is not None
    firsts = line_class.group(1)
    # `rknn building done` (BUILD_DONE) and `Optimizing network with ` (TK1_GRAPH) are words and spaces
    assert "r" not in firsts and "O" not in firsts and "x" in firsts


def test_every_run_line_classifies_as_plain() -> None:
    lexer = load_line_grammar("rknn").lexer
    regex = run_regex(lexer)
    assert regex is not None
    line = re.compile(regex.pattern[len("\\n(?!") : -1])
    candidates = [f"{lv} {w}" for lv in "DIWE" for w in ("x", "abc def", "Error", "rknn building done")]
    candidates += ["  I Optimizing network with ", "\tW x", "I done", "E Killed", "I 0 1 2"]
    for text in candidates:
        if line.match(text + "\n"):
            assert lexer.classify(text)[0] == "PY_PLAIN", text


@pytest.mark.parametrize(
    ("regexp", "expected"),
    [
        (r"abc", False),
        (r"ab:c", True),
        (r"(?:a|b:)", False),
        (r"(?:a:|b-)", True),
        (r"x*:", True),
        (r"(?::)?x", False),
        (r"(?=.*:)x", True),
        (r"(?=[^\n]*:)\w+", True),
        (r"(?!:)\w+", False),
        (r"[^a]", False),
        (r"\w+ \d+", False),
        (r"\W", False),
        (r"(?i)ABC", False),
        (r"(\w)\1:", True),
    ],
)
def test_requires_outside(regexp: str, expected: bool) -> None:
    assert requires_outside(regexp, WORD | {" "}) is expected


@pytest.mark.parametrize(
    ("regexp", "most"),
    [
        (r"[ \t]*[DIWE][ \t]*(?=\n|$)", 1),
        (r"ab", 2),
        (r"a{3}", 3),
        (r"a+", math.inf),
        (r"(?:ab|c)", 2),
        (r".", math.inf),
        (r"[ \t]+", 0),
    ],
)
def test_most_matched(regexp: str, most: float) -> None:
    assert most_matched(regexp, WORD) == most


@pytest.mark.parametrize(
    ("regexp", "strings", "folded"),
    [
        (r"out of memory|Killed", {"out of memory", "Killed"}, False),
        (r"^(?:[\w.]+)?(?:Error|Exception)\b", {"rror", "xception"}, False),
        (r"(?i)peak exceeds", {"peak exceeds"}, True),
        (r"default (?:input|output) dtype", None, False),
    ],
)
def test_required_substrings(regexp: str, strings: set[str] | None, folded: bool) -> None:
    found = required_substrings(regexp)
    assert found is not None
    if strings is not None:
        assert found == (frozenset(strings), folded)
    # soundness: every string found is in every match
    for text in (
        "xx out of memory",
        "Killed",
        "ValueError",
        "xException",
        "PEAK EXCEEDS",
        "default input dtype",
    ):
        m = re.search(regexp, text)
        if m is not None:
            haystack = text.lower() if found[1] else text
            assert any(s in haystack for s in found[0]), (regexp, text)


def test_required_substrings_proves_nothing_it_cannot() -> None:
    assert required_substrings(r"\d+") is None
    assert required_substrings(r"a|\d") is None
    assert required_substrings(r"(?:ab)?c") == (frozenset({"c"}), False)


# ---------------------------------------------------------------------- long blank runs
def test_a_long_blank_run_leaves_the_line_unparsed_whatever_it_looks_like() -> None:
    blanks = " " * (MAX_BLANK_RUN + 1)
    tensor = "D RKNN: [10:00:00.123] 0  input" + blanks + "INT8  NC1HWC2  (1,1,224,224,16)  0x0  0x1  0x2"
    lines = [BANNER, "I " + blanks + "x", blanks + "x", tensor, "I " + " " * (MAX_BLANK_RUN - 1) + "x"]
    log = parse_text("\n".join(lines) + "\n")
    unparsed = log.frames["unparsed"]
    assert unparsed["line"].tolist()[:3] == [2, 3, 4]
    assert refused(lines[1]) and refused(lines[3]) and not refused(lines[4])


def test_refused_is_linear_in_how_blanks_are_laid_out() -> None:
    line = ("x" + " " * MAX_BLANK_RUN) * 15  # under the 16 KB line limit
    assert not refused(line)
    assert refused(line + " ")
    assert refused(" " * (MAX_BLANK_RUN + 1) + "x")


def test_split_runs_finds_every_run_of_the_minimum_length_and_no_shorter() -> None:
    regex = run_regex(load_line_grammar("rknn").lexer)
    assert regex is not None
    shape = [("plain", MIN_RUN), ("other", 1), ("plain", MIN_RUN - 1), ("other", 2), ("plain", 40), ("", 1)]
    shape += [("plain", MIN_RUN)]
    lines: list[str] = []
    for kind, count in shape:
        lines += [{"plain": "I w", "other": "x y", "": ""}[kind]] * count
    text = "\n" + "\n".join(lines) + "\n"
    runs = list(split_runs(text, regex.finditer(text)))
    assert [(a, b) for a, b, _ in runs] == [(0, 32), (66, 106), (107, 139)]
    for first, stop, (start, end) in runs:
        middle = text[start:end].split("\n")[:-1]
        assert middle == lines[first + 1 : stop - 1]


# ---------------------------------------------------------------------- MCU: runs of unrecognised lines
MCU_FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "mcu").glob("*.txt"))
HEAP_HEAD = "[    0.004] RAM budget: 65536 B\n[    0.120] heap baseline: 33000 B\n"
MCU_WORDS = ["x", "Invoke", "baseline123", "OK", "FAIL", "total", "ok done", "RAM", "ram used", "w", "a b c"]


@pytest.mark.parametrize("path", MCU_FIXTURES, ids=lambda p: p.name[:30])
def test_mcu_runs_inside_every_fixture_parse_as_line_by_line(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of one-word lines spliced after every 40th line of each real MCU log: inside its tables,
    its skipped ST sections, after Vela constraints, between heap lines."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    spliced: list[str] = []
    for i, line in enumerate(lines):
        spliced.append(line)
        if i % 40 == 5:
            spliced += [MCU_WORDS[(i + k) % len(MCU_WORDS)] + str(k % 7) for k in range(40)]
    bulk, plain = both_ways("\n".join(spliced) + "\n", monkeypatch)
    frames_equal(bulk, plain)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, len(MCU_WORDS) + 3), st.integers(1, 70)), min_size=1, max_size=10))
def test_mcu_runs_parse_as_line_by_line(
    monkeypatch: pytest.MonkeyPatch, segments: list[tuple[int, int]]
) -> None:
    extra = ["[ 0.2] Op[3] Conv2D: delta=+100 B, total=33100 B", "", "  indented x", "x" * 700]
    vocabulary = MCU_WORDS + extra
    lines = [
        vocabulary[choice] + (str(k) if choice < len(MCU_WORDS) else "")
        for choice, n in segments
        for k in range(n)
    ]
    bulk, plain = both_ways(HEAP_HEAD + "\n".join(lines) + "\n", monkeypatch)
    frames_equal(bulk, plain)


def test_mcu_unrecognised_runs_are_read_as_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = McuAssembler.unrecognised_run

    def spy(self: McuAssembler, lines: list[str], numbers: list[int]) -> bool:
        calls.append(len(lines))
        return real(self, lines, numbers)

    monkeypatch.setattr(McuAssembler, "unrecognised_run", spy)
    log = parse_text(HEAP_HEAD + "".join(f"w{i}\n" for i in range(1000)))
    assert calls == [998]
    unparsed = log.frames["unparsed"]
    assert len(unparsed) == 1000 and log.line_counts["unparsed"] == 1000
    assert unparsed["line"].tolist()[:2] == [3, 4] and unparsed["text"].iloc[-1] == "w999"
    assert set(unparsed["reason"]) == {"unrecognised line"}


def test_mcu_run_regex_exists_for_the_shipped_grammar() -> None:
    regex = unrecognised_run_regex(load_line_grammar("mcu").lexer)
    assert regex is not None
    lexer = load_line_grammar("mcu").lexer
    line = re.compile(regex.pattern[len("\\n(?!") : -1])
    for text in ("x", "baseline 100", "Invoke", "arena used 5", "RAM 100", "w1", "OK", "total 3"):
        if line.match(text + "\n"):
            assert lexer.classify(text)[0] == "OTHER", text


def test_a_real_build_log_is_not_joined_and_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample test keeps a verbose build log (many `I step ...` and `D RKNN:` lines) off the run scan."""
    calls: list[int] = []
    real = runs_module.split_runs

    def spy(*args: object) -> object:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(runs_module, "split_runs", spy)
    log_path = Path(__file__).parent.parent / "fixtures" / "rknn"
    for path in sorted(log_path.glob("09-*.log")):
        parse_text(path.read_text(encoding="utf-8") * 20)
    assert calls == []
    parse_text(run_lines([(0, 100)]))
    assert calls == [1]
