"""Runs of native messages (`W RKNN: [ts] tensor name: ... is ...`), pass markers and fusion results are
read from their lines joined (`parsers/rknn/bulk.py`: `native_reader`, `mark_reader`, `fusion_reader`;
`Messages._native_run`, `ToolkitLogger._fusion_run`): the frames
and line counts must be exactly those of the same log read one line at a time, whatever surrounds,
interrupts or imitates a run (categories, tracebacks, continuation lines, open tables, cut lines), and
each reader must take a line only when `classify` reads it as that terminal, with the same fields."""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope.io
import logscope.parsers.rknn as rknn_parser
from logscope.api import parse_stream, parse_text
from logscope.frames import SCHEMAS
from logscope.io import LogStream
from logscope.model import ParsedLog
from logscope.parsers.grammar import MAX_BLANK_RUN, load_line_grammar
from logscope.parsers.rknn.assembler import RknnAssembler
from logscope.parsers.rknn.bulk import (
    FUSION_FIELDS,
    MARK_FIELDS,
    NATIVE_FIELDS,
    fusion_reader,
    mark_reader,
    native_reader,
)
from logscope.parsers.rknn.state import _ROW_COLUMNS
from logscope.parsers.rknn.table_runs import JOINED_RUN
from tests.conftest import FIXTURES
from tests.test_table_runs import _mangle as damaged
from tests.test_table_runs import frames_equal

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
COMPILER_LOGS = sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))[::40]
# The largest compiler-corpus log: half its lines are native messages in runs of a few hundred.
TRANSFORMER = FIXTURES / "rknn-compiler" / "transformer-dev" / "2.5.0" / "tf_t49_d64_h8-rv1106b-int8.log.gz"
MOBILENET = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
TS = "W RKNN: [20:26:14.658] "


def both_ways(parse, monkeypatch: pytest.MonkeyPatch) -> tuple[ParsedLog, ParsedLog]:
    """The parse with the joined readers, and with both turned off (every line through `classify`)."""
    runs = parse()
    with monkeypatch.context() as m:
        m.setattr(rknn_parser, "native_reader", lambda lexer: None)
        m.setattr(rknn_parser, "mark_reader", lambda lexer: None)
        m.setattr(rknn_parser, "fusion_reader", lambda lexer: None)
        plain = parse()
    return runs, plain


def _transformer_lines() -> list[str]:
    with gzip.open(TRANSFORMER, "rt", encoding="utf-8") as fh:
        return fh.read().split("\n")


@pytest.mark.parametrize("path", RKNN_LOGS + COMPILER_LOGS + [TRANSFORMER], ids=lambda p: p.name[:40])
def test_every_fixture_parses_as_line_by_line(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = logscope.io.read_log(path)
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


@pytest.mark.parametrize(("seed", "noise"), [(1, 0.0), (2, 0.5)])
def test_generated_logs_parse_as_line_by_line(
    seed: int, noise: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.generate import generate_log

    path = tmp_path / "g.log"
    generate_log(path, builds=2, seed=seed, noise_ratio=noise, layers=40)
    for block in (4096, 1 << 22):  # runs cut by stream blocks, and whole
        frames_equal(*both_ways(lambda b=block: parse_stream(LogStream(path, block_bytes=b)), monkeypatch))


def _mangle(line: str, rng: random.Random) -> str:
    """A way copies of real logs damage a line (`test_table_runs`), or a native message turned into
    something else (a category, a traceback, a body another terminal takes, a line too long for a run)."""
    choice = rng.randrange(16)
    if choice == 0:
        return re.sub(r"\] ", "]", line, count=1)  # a timestamp the prefix cannot take: in the text
    if choice == 1:
        return "  " + line
    if choice == 2:
        return line + rng.choice([" out of memory", " Killed", " is not support", "  "])
    if choice == 3:
        return re.sub(r"\] \S", lambda m: m.group(0)[:-1] + rng.choice("0123456789IRTs-<> \t"), line, count=1)
    if choice == 4:
        return line.replace("W RKNN", rng.choice(["E RKNN", "D RKNN", "I RKNN", "W RKNN:", "W"]), 1)
    if choice == 5:
        return "    continued " + line[-20:]
    if choice == 6:
        return line + "x" * rng.choice([MAX_BLANK_RUN - 60, MAX_BLANK_RUN + 5])
    if choice == 7:
        return TS + "Traceback (most recent call last):"
    return damaged(line, rng)


@pytest.mark.parametrize("seed", range(4))
def test_mangled_copies_parse_as_line_by_line(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    lines = _transformer_lines()
    start = next(i for i, line in enumerate(lines) if " tensor name: " in line)
    lines = lines[: start + 3000] + logscope.io.read_log(MOBILENET).lines  # then tables, markers, noise
    rate = 0.01 if seed % 2 else 0.1
    out: list[str] = []
    for line in lines:
        x = rng.random()
        if x < rate:
            out.append(_mangle(line, rng))
        elif x < rate * 1.1:
            out.append("")
        else:
            out.append(line)
    text = "\n".join(out) + "\n"
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


# Lines a run may hold, and lines that look like its lines but are not (or must be left to the loop).
VOCABULARY = [
    TS + "tensor name: Softmax29_o0 is already in IndependentMap",
    "W RKNN: tensor name: x is already in IndependentMap",  # no timestamp
    TS + "a message",
    "E RKNN: [20:26:14.658] out of memory",  # a category
    "E RKNN: [20:26:14.658] Traceback (most recent call last):",  # opens a traceback
    TS + "12  Conv  a message that starts like a row",  # unparsed inside a row table
    TS + "Total Weight Memory Size: 4447296",  # another native body starting with a letter left out
    TS + "total_regcfg_size : 12",  # a rival body starting with `t`
    TS + "x" * (MAX_BLANK_RUN + 3),  # too long for a run
    TS + "a" + " " * (MAX_BLANK_RUN + 5) + "b",  # refused
    "    an indented continuation",
    "D RKNN: [15:13:15.953] >>>>>> start: N4rknn19RKNNSetOpTargetPassE",
    "D RKNN: [15:13:15.953] <<<<<<<< end: N4rknn19RKNNSetOpTargetPassE",
    "D RKNN: >>>>>> start: N4rknn21RKNNMemStatisticsPassE",
    "D RKNN: [15:13:15.953] <<<<<<<< end: N4rknn21RKNNMemStatisticsPassE",
    "D RKNN: [15:13:15.953] <<<<<<<< end: N4rknn18RKNNModelBuildPassE",
    "D RKNN: [15:13:15.953] emit div",  # noise
    "D RKNN: [15:13:15.953] Network Layer Information Table",
    "D RKNN: [15:13:15.953] Const Tensor Information Table",
    "W build: a python message",
    '  File "x.py", line 1, in <module>',
    "ValueError: bad value",
    "I rknn building ...",
    "D fuse_ops results:",
    "D     fuse_two_transpose: remove node = ['Transpose25', 'Transpose17'], add node = ['Transpose25#1']",
    "D     unsqueeze_to_4d_add: remove node = [], add node = ['MatMul5_o0_rs', 'Add7_o0-rs']",
    "I     adjust_relu: ['Relu6__57', 'Relu6__58']",
    "I     bad_rule: remove node = ['unclosed', add node = []",  # malformed: unparsed
    "I         add node = ['wrapped']",  # an add list wrapped onto the next line
    "I quant_optimizer results:",
    "D base_optimize ...",
    "I  Traceback (most recent call last):",
    "",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.integers(0, len(VOCABULARY) - 1), st.integers(1, 150)),
        min_size=1,
        max_size=12,
    )
)
def test_runs_parse_as_line_by_line(monkeypatch: pytest.MonkeyPatch, segments: list[tuple[int, int]]) -> None:
    lines = ["I rknn-toolkit2 version: 2.5.0"]
    serial = 0
    for choice, repeat in segments:
        for _ in range(repeat):
            line = VOCABULARY[choice]
            if "Softmax29" in line or "SetOpTarget" in line or "Transpose25" in line:  # distinct rows
                line = line.replace("29", str(serial)).replace("Target", f"Target{serial}")
                line, serial = line.replace("Transpose25", f"T{serial}"), serial + 1
            lines.append(line)
    text = "\n".join(lines) + "\n"
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


def test_the_runs_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The transformer log's native messages are read as runs (their first lines and each run's last
    alone), and fixture 09's pass markers are read joined."""
    taken: list[int] = []
    real = RknnAssembler._native_run

    def spy(self, read, lines, numbers, start):
        count = real(self, read, lines, numbers, start)
        taken.append(count)
        return count

    monkeypatch.setattr(RknnAssembler, "_native_run", spy)
    log = parse_text(logscope.io.read_log(TRANSFORMER))
    native = int((log.frames["messages"]["logger"] == "RKNN").sum())
    assert native > 300 and sum(taken) > 0.9 * native

    marks = mark_reader(load_line_grammar("rknn").lexer)
    assert marks is not None
    read: list[int] = []

    def counted(lines, start):
        rows = marks(lines, start)
        read.append(len(rows or ()))
        return rows

    monkeypatch.setattr(rknn_parser, "mark_reader", lambda lexer: counted)
    parse_text(logscope.io.read_log(MOBILENET))
    assert sum(read) >= 20

    fused: list[int] = []
    real_fusions = RknnAssembler._fusion_run

    def fusion_spy(self, read, lines, numbers, start):
        count = real_fusions(self, read, lines, numbers, start)
        fused.append(count)
        return count

    monkeypatch.setattr(RknnAssembler, "_fusion_run", fusion_spy)
    log = parse_text(logscope.io.read_log(TRANSFORMER))
    assert len(log.frames["fusions"]) >= 90 and sum(fused) >= len(log.frames["fusions"]) - 5


def _candidate_lines() -> list[str]:
    """Every fixture line, and native messages and markers mangled the ways copies damage them."""
    rng = random.Random(7)
    lines = [line for path in RKNN_LOGS for line in logscope.io.read_log(path).lines if line]
    lines += [line for line in _transformer_lines()[:20000] if line]
    native = [line for line in lines if " RKNN: " in line or " node = " in line]
    return lines + [_mangle(line, rng) for line in native for _ in range(3)] + VOCABULARY


@pytest.mark.parametrize("terminal", ["NATIVE_MSG", "PASS_MARK", "FUSE_RESULT"])
def test_the_readers_take_a_line_only_as_classify_reads_it(terminal: str) -> None:
    """Each line a reader takes (alone, and inside runs of every length) is that terminal to `classify`,
    with the same fields (a missing timestamp `''`, as `findall` gives it)."""
    lexer = load_line_grammar("rknn").lexer
    read, fields = {
        "NATIVE_MSG": (native_reader(lexer), NATIVE_FIELDS),
        "PASS_MARK": (mark_reader(lexer), MARK_FIELDS),
        "FUSE_RESULT": (fusion_reader(lexer), FUSION_FIELDS),
    }[terminal]
    assert read is not None
    names = [field.partition("__")[2] for field in fields]
    taken = refused = 0
    expected: dict[str, tuple[str, ...] | None] = {}
    for line in _candidate_lines():
        kind, found = lexer.classify(line)
        expected[line] = (
            tuple(found.get(name) or "" for name in names)
            if kind == terminal and len(line) <= MAX_BLANK_RUN
            else None
        )
        rows = read([line], 0)
        if rows:
            taken += 1
            assert rows == [expected[line]], line
        else:
            refused += expected[line] is not None
            assert rows == [] or "\n" in line
    assert taken > 300 and refused < taken  # the reader takes most of the terminal's lines
    rng = random.Random(terminal)
    pool = [line for line, fields_ in expected.items() if fields_ is not None]
    everything = list(expected)
    for _ in range(300):
        start = rng.randrange(len(pool))
        chunk = [*pool[start : start + rng.randrange(1, 2 * JOINED_RUN)], rng.choice(everything), *pool[:3]]
        rows = read(chunk, 0) or []
        want = []
        for line in chunk[:JOINED_RUN]:
            if expected[line] is None or not read([line], 0):
                break
            want.append(expected[line])
        assert rows == want


def test_pass_and_fusion_rows_are_in_the_schema_order() -> None:
    """`_pass_values` and the fusion handlers write their rows as lists in this order."""
    assert _ROW_COLUMNS["passes"] == (
        "build_index",
        "name",
        "start_line",
        "end_line",
        "start_time",
        "end_time",
    )
    assert _ROW_COLUMNS["passes"] == tuple(SCHEMAS["passes"])
    fusions = ("build_index", "section", "rule", "removed_nodes", "added_nodes", "line")
    assert _ROW_COLUMNS["fusions"] == fusions == tuple(SCHEMAS["fusions"])


def test_named_messages_in_a_row_are_read_ahead_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages a category names are each read the ordinary way, between runs: the lines after them are
    read once for the whole series (`Messages._native_rows`), and the frames are those of a log read
    line by line."""
    warning = "need parameter qtype, type is set to float16 by default!"
    named = [f"{TS}Warning: Tensor c{i} {warning}" for i in range(12)]
    plain = [f"{TS}tensor name: t{i} is already in IndependentMap" for i in range(5)]
    lines = ["I rknn-toolkit2 version: 2.5.0", "I rknn building ...", *named, *plain, *named[:3], *plain]
    text = "\n".join(lines) + "\n"
    reader = native_reader(load_line_grammar("rknn").lexer)
    assert reader is not None
    starts: list[int] = []

    def counted(lines: list[str], start: int) -> list[tuple[str | None, ...]] | None:
        starts.append(start)
        return reader(lines, start)

    monkeypatch.setattr(rknn_parser, "native_reader", lambda lexer: counted)
    log = parse_text(text)
    assert starts == [3]  # after the first line: the rest of the block is one read
    assert int((log.frames["messages"]["category"].notna()).sum()) == 15
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


def test_fusion_rows_holding_a_rival_string_are_read_by_the_full_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fusion reader leaves out the look-aheads for the bodies ranked before a fusion result
    (`bulk._without_rivals`): a line one of them takes (a rule named like an exception is an exception
    line to `classify`) must still end the run, and a run whose lines merely hold such a string (a node
    named `a.Error`) is read whole."""
    lexer = load_line_grammar("rknn").lexer
    reader = fusion_reader(lexer)
    assert reader is not None
    plain = [f"I     fuse_rule{i}: remove node = ['n{i}'], add node = ['m{i}']" for i in range(4)]
    odd = [
        "I     ValueError: remove node = ['a'], add node = ['b']",
        "I     a.B: remove node = ['a']",
        "I     fuse_progress: remove node = ['Loading : 5%|x|']",
        "I     fuse: remove node = ['see Traceback (most recent call last): x']",
    ]
    for line in odd:
        lines = [*plain, line, *plain]
        kinds = [lexer.classify(each)[0] for each in lines]
        rows = reader(lines, 0)
        assert rows is not None
        expected = kinds.index("EXCEPTION") if "EXCEPTION" in kinds else len(lines)
        assert len(rows) == expected, line
        assert (expected == len(lines)) == ("fuse" in line), line  # (the others are exception lines)
        fields = [lexer.classify(each)[1].read(("rule", "body")) for each in lines[:expected]]
        assert [row[1:] for row in rows] == fields
        text = "\n".join(["I rknn-toolkit2 version: 2.5.0", "I fuse_ops results:", *lines]) + "\n"
        frames_equal(*both_ways(lambda text=text: parse_text(text), monkeypatch))
