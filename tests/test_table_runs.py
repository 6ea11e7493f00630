"""Runs of table rows, noise lines and pass markers (`parsers/rknn/table_runs.py`) are matched in C and
read column by column: the frames and line counts must be exactly those of the same log read one line
at a time, whatever surrounds, interrupts or imitates a run; and the narrower tensor-row regex must read
every line it takes exactly as the tensor-row matcher does."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope.io
import logscope.parsers.rknn as rknn_parser
import logscope.parsers.rknn.compiler as rknn_compiler
import logscope.parsers.rknn.table_runs as table_runs
from logscope.api import parse_stream, parse_text
from logscope.io import LogStream
from logscope.model import ParsedLog
from logscope.parsers.grammar import MAX_BLANK_RUN, load_line_grammar
from logscope.parsers.rknn.state import BOUNDARIES, _Build
from logscope.parsers.rknn.table_runs import (
    JOINED_COUNT,
    JOINED_RUN,
    REPEAT_PROBE,
    RowReader,
    bar_free_layer_pattern,
    equal_runs,
    joined_count,
    joined_rows,
    line_bound,
    noise_counter,
    repeats_likely,
    run_from,
    table_readers,
    tensor_row_regex,
)
from tests.conftest import FIXTURES

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
# Every 40th compiler-corpus log in `make test` (each toolkit version is among them); all of them in the
# slow test.
ALL_COMPILER_LOGS = sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))
COMPILER_LOGS = ALL_COMPILER_LOGS[::40]
MOBILENET = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
TS = "D RKNN: [15:13:15.953] "


def frames_equal(a: ParsedLog, b: ParsedLog) -> None:
    assert a.line_counts == b.line_counts
    assert set(a.frames) == set(b.frames)
    for name, frame in a.frames.items():
        pd.testing.assert_frame_equal(frame, b.frames[name], obj=name)


def one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run cut to its first line (noise lines not counted joined; native messages, fusion results
    and pass markers not read joined), tensor rows matched by the tensor-row matcher itself, layer-row
    tails read one by one by the tail converter (`layer_cells.read_tails`), never by columns."""
    lexer = load_line_grammar("rknn").lexer
    full = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match.__self__  # type: ignore[attr-defined]
    monkeypatch.setattr(rknn_parser, "run_from", lambda match, first, lines, start: [first])
    monkeypatch.setattr(rknn_parser, "tensor_row_regex", lambda lexer: full)
    monkeypatch.setattr(rknn_parser, "table_readers", lambda lexer: (None, None, None))
    monkeypatch.setattr(rknn_parser, "noise_counter", lambda lexer: None)
    for reader in ("native_reader", "fusion_reader", "mark_reader"):  # runs of messages, fusions, markers
        monkeypatch.setattr(rknn_parser, reader, lambda lexer: None)
    monkeypatch.setattr(rknn_compiler, "tail_columns", lambda header, tails: None)


def both_ways(parse, monkeypatch: pytest.MonkeyPatch) -> tuple[ParsedLog, ParsedLog]:  # type: ignore[no-untyped-def]
    runs = parse()
    with monkeypatch.context() as m:
        one_by_one(m)
        plain = parse()
    return runs, plain


@pytest.mark.parametrize("path", RKNN_LOGS + COMPILER_LOGS, ids=lambda p: p.name[:40])
def test_every_fixture_parses_as_line_by_line(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = logscope.io.read_log(path)
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


@pytest.mark.slow
def test_the_whole_compiler_corpus_parses_as_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in ALL_COMPILER_LOGS:
        text = logscope.io.read_log(path)
        frames_equal(*both_ways(lambda t=text: parse_text(t), monkeypatch))


@pytest.mark.parametrize(("seed", "noise", "builds"), [(1, 0.0, 1), (2, 0.5, 2), (3, 0.9, 1)])
def test_generated_logs_parse_as_line_by_line(
    seed: int, noise: float, builds: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.generate import generate_log

    path = tmp_path / "g.log"
    generate_log(path, builds=builds, seed=seed, noise_ratio=noise, layers=60)
    for block in (4096, 1 << 22):  # runs cut by stream blocks, and whole
        frames_equal(*both_ways(lambda b=block: parse_stream(LogStream(path, block_bytes=b)), monkeypatch))


def _mangle(line: str, rng: random.Random) -> str:
    """One of the ways copies of real logs damage a line."""
    choice = rng.randrange(12)
    if choice == 0 and line:
        return line[: rng.randrange(len(line))]
    if choice == 1 and line:
        i = rng.randrange(len(line))
        return line[:i] + line[i + 1 :]
    if choice == 2:
        return re.sub("  +", " ", line)
    if choice == 3:
        return re.sub(r"^[DIWE] RKNN: (\[[^\]]*\] )?", "", line)
    if choice == 4:
        return re.sub(r"^[DIWE] RKNN: \[[^\]]*\] ", "D RKNN: ", line)
    if choice == 5 and line:
        i = rng.randrange(len(line))
        return line[:i] + rng.choice("x|*()\\, 0\té") + line[i:]
    if choice == 6:
        return line.replace("|", "", 1)
    if choice == 7:
        return line + "  extra"
    if choice == 8:
        return re.sub(r"\d", lambda _: rng.choice("0123456789a"), line, count=2)
    if choice == 9:
        return line.replace("D RKNN", "I RKNN", 1)
    if choice == 10:
        return line + " " * rng.randrange(1, 4)
    return line.replace(" ", "\t", 1)


@pytest.mark.parametrize("seed", range(6))
def test_mangled_copies_parse_as_line_by_line(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    lines = logscope.io.read_log(MOBILENET).lines * 2
    rate = 0.02 if seed % 2 else 0.2
    out: list[str] = []
    for line in lines:
        x = rng.random()
        if x < rate:
            out.append(_mangle(line, rng))
        elif x < rate * 1.1:
            out.append("")
        elif x < rate * 1.2:
            out += [line, line]
        else:
            out.append(line)
    text = "\n".join(out) + "\n"
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


TENSOR = TS + "12  ConvClip const_fold_opt__246   INT8   (512,256,1,1)   | 0x003aed40 0x003ced40 0x00020000"
FEATURE = (
    TS + "3   Conv  input  INT8  NC1HWC2  (1,3,224,224)  (1,1,224,224,16)  | 0x00000000*0x00004000 0x00004000"
)
LAYER = (
    TS + "17   ConvClip         INT8     NPU    (1,512,14,14),(512,512,1,1),(512)            (1,512,14,14)"
    "          0              0              0              0              \\"
)
# Lines a run may hold, and lines that look like its lines but are not (or must be left to the loop).
VOCABULARY = [
    TENSOR,
    FEATURE,
    TS + "12  ConvClip a   INT8   (512,256,1,1)   | 0x003aed40 0x003ced40 0x00020000",  # a one-letter name
    TS + "12  ConvClip a INT8 INT8   (1)   | 0x0 0x40 0x40",  # the name the terminal reads is `a INT8`
    TS + "12  ConvClip name with blanks   INT8   (1)   | 0x0 0x40 0x40",
    TS + "12  ConvClip bad   INT8   (1)   | 0x0 0x40",  # cut short
    LAYER,
    LAYER.replace("NPU ", "NPU  ", 1) + "  extra",  # a cell too many: read by the layout or unparsed
    LAYER[:80],
    TS + "not need tranpose",
    TS + "emit div",
    TS + "finish initComputeZoneMapByStepsVector",
    TS + ">>>>>> start: N4rknn19RKNNSetOpTargetPassE",
    TS + "<<<<<<<< end: N4rknn19RKNNSetOpTargetPassE",
    TS + ">>>>>> start: N4rknn18RKNNModelBuildPassE",
    TS + "<<<<<<<< end: N4rknn18RKNNModelBuildPassE",
    TS + ">>>>>> start: N4rknn21RKNNMemStatisticsPassE",
    TS + "<<<<<<<< end: N4rknn21RKNNMemStatisticsPassE",
    TS + "Feature Tensor Information Table",
    TS + "Const Tensor Information Table",
    TS + "Network Layer Information Table",
    TS + "ID  User   Tensor   DataType  OrigShape   NativeShape   |     [Start       End)       Size",
    TS + "ID   OpType           DataType Target InputShape                               OutputShape"
    "            DDR Cycles     NPU Cycles     Total Cycles   Time(us)       MacUsage(%)    Task Number"
    "    Lut Number     RW(KB)         FullName",
    TS + "----------------------------------------",
    TS + "Total Weight Memory Size: 4447296",
    TS + "librknnc version: 1.5.2 (c6b7b351a@2023-08-23T15:34:44)",
    "I rknn building ...",
    "I rknn buiding done.",
    "W build: a warning that continues",
    "    on an indented line",
    "done",
    "",
    "I ",
    TS + "emit " + "x" * (MAX_BLANK_RUN + 20),  # a long noise line, still read
    TS + "emit x" + " " * (MAX_BLANK_RUN + 5) + "y",  # a blank run no terminal may hold
    TENSOR + " " * (MAX_BLANK_RUN + 5) + "| 0x0",
    "[   1]  Conv    1000/2000/3000   10   6.95   100.0%/0.0%/0.0%   12.5   conv1",  # eval_perf, bare
    LAYER + "  0  0  203.50  Conv:a|b",  # a `|` in the FullName: read with the tensor-row guard
    LAYER.replace("ConvClip", "Conv|Clip", 1),  # and in the OpType
    TS + "12   Conv   X   BOOL   (1)   (1)   | 0x0 0x40 0x40",  # a tensor row that reads as a layer row
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.integers(0, len(VOCABULARY) - 1), st.integers(1, 40)),
        min_size=1,
        max_size=14,
    )
)
def test_runs_parse_as_line_by_line(monkeypatch: pytest.MonkeyPatch, segments: list[tuple[int, int]]) -> None:
    lines = ["W __init__: rknn-toolkit2 version: 1.5.2+b642f30c"]
    serial = 0
    for choice, repeat in segments:
        for _ in range(repeat):
            line = VOCABULARY[choice]
            if "const_fold_opt__246" in line or "emit div" in line:  # distinct rows, so a reordering shows
                line, serial = line.replace("246", str(serial)).replace("div", f"div{serial}"), serial + 1
            lines.append(line)
    text = "\n".join(lines) + "\n"
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))


def test_the_runs_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture 09's tables and pass markers are read as runs, not a line at a time: the markers
    matched line after line, the tables' rows from their lines joined."""
    taken: list[int] = []
    joined: list[int] = []
    real = rknn_parser.run_from
    readers = table_readers(load_line_grammar("rknn").lexer)
    assert None not in readers

    def counting(match, first, lines, start):  # type: ignore[no-untyped-def]
        run = real(match, first, lines, start)
        taken.append(len(run))
        return run

    def counted(read):  # type: ignore[no-untyped-def]
        def reading(lines, start):  # type: ignore[no-untyped-def]
            rows = read(lines, start)
            joined.append(len(rows) + 1)
            return rows

        return reading

    monkeypatch.setattr(rknn_parser, "run_from", counting)
    monkeypatch.setattr(rknn_parser, "table_readers", lambda lexer: tuple(map(counted, readers)))
    # (markers, else read joined after the first: tests/test_message_runs.py counts those)
    monkeypatch.setattr(rknn_parser, "mark_reader", lambda lexer: None)
    parse_text(logscope.io.read_log(MOBILENET))
    assert sum(taken) >= 52 and sum(joined) >= 95 + 34 and max(joined) >= 50


def _tensor_lines() -> list[str]:
    """Every fixture line, and tensor rows mangled the ways copies damage them (seeded)."""
    rng = random.Random(5)
    lines = [line for path in RKNN_LOGS for line in logscope.io.read_log(path).lines if line]
    full = load_line_grammar("rknn").lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match
    rows = [line for line in lines if full(line)]
    extra = [_mangle(row, rng) for row in rows for _ in range(4)]
    for row in rows[:300]:  # names of every length, with and without blanks, that look like cells
        start, end = full(row).span("TENSOR_ROW__name")  # type: ignore[union-attr]
        for name in ("a", "ab", "a b", "a INT8", "x INT8 (1)", "n  | 0x1 0x2 0x3", "(1)", "ab INT8 NCHW (1)"):
            extra.append(row[:start] + name + row[end:])
    return lines + extra


def test_tensor_row_regex_reads_as_the_row_matcher() -> None:
    lexer = load_line_grammar("rknn").lexer
    matcher = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW")
    fast = tensor_row_regex(lexer)
    assert fast.pattern != matcher.match.__self__.pattern  # type: ignore[attr-defined]  # (the grammar allows it)
    taken = refused = 0
    for line in _tensor_lines():
        m = fast.match(line)
        full = matcher.match(line)
        if m is None:
            refused += full is not None
            continue
        taken += 1
        assert full is not None, line
        assert m.groupdict() == full.groupdict(), line
    assert taken > 400 and refused > 400  # both sides exercised


def test_bar_free_layer_pattern_reads_as_the_row_matcher() -> None:
    """On every line without a `|` (fixture lines, mangled layer and tensor rows, the vocabulary), the
    layer-row pattern without its tensor-row guard matches exactly when the matcher does, with the same
    groups; a line with a `|` is where they differ (it is never read with it)."""
    lexer = load_line_grammar("rknn").lexer
    matcher = lexer.row_matcher("NATIVE_PREFIX", "LAYER_ROW").match
    pattern = bar_free_layer_pattern(lexer)
    assert pattern is not None and pattern != matcher.__self__.pattern  # type: ignore[attr-defined]
    free = re.compile(pattern)
    rng = random.Random(7)
    lines = _tensor_lines() + VOCABULARY
    layer_rows = [line for line in lines if matcher(line)]
    lines += [_mangle(row, rng) for row in layer_rows for _ in range(8)]
    # Shape cells the possessive repeats must read as the terminal does (glued to the next cell, cut,
    # truncated with `,...`, empty), in InputShape and in OutputShape.
    shapes = (
        "(1),(2),...",
        "(1),...,(2)",
        "(1,2)x",
        "(1)(2)",
        "\\(1)",
        "(1),",
        "(1),(",
        ",...",
        "(),()",
        "(1)...",
    )
    for row in layer_rows[:150]:
        m = matcher(row)
        assert m is not None
        for group in ("LAYER_ROW__inputs", "LAYER_ROW__output"):
            start, end = m.span(group)
            lines += [row[:start] + shape + row[end:] for shape in shapes]
            lines += [row[:start] + shape + " " + row[end:] for shape in shapes]
    taken = refused = 0
    for line in lines:
        if "|" in line:
            continue
        m, full = free.match(line), matcher(line)
        assert (m is None) == (full is None), line
        if m is not None and full is not None:
            taken += 1
            assert m.groupdict() == full.groupdict(), line
        else:
            refused += 1
    assert taken > 300 and refused > 400
    tensor_like = next(line for line in VOCABULARY if "BOOL" in line)
    assert free.match(tensor_like) and not matcher(tensor_like)


def test_either_matcher_is_the_two_row_matchers() -> None:
    lexer = load_line_grammar("rknn").lexer
    either = lexer.either_matcher("NATIVE_PREFIX", "NATIVE_NOISE", "PASS_MARK")
    noise = lexer.row_matcher("NATIVE_PREFIX", "NATIVE_NOISE").match
    marker = lexer.row_matcher("NATIVE_PREFIX", "PASS_MARK")
    groups = ("mark", "name")
    seen = {"noise": 0, "mark": 0}
    for line in _tensor_lines() + VOCABULARY:
        m = either.match(line)
        n, p = noise(line), marker.match(line)
        assert (m is not None) == (n is not None or p is not None), line
        if p is not None:
            seen["mark"] += 1
            assert m is not None and [m.group(either.body_groups[g]) for g in groups] == list(
                p.group(*(marker.body_groups[g] for g in groups))
            )
            assert m.group(either.prefix_groups["ts"]) == p.group(marker.prefix_groups["ts"])
        elif n is not None:
            seen["noise"] += 1
            assert m is not None and m.group(either.body_groups["mark"]) is None
    assert min(seen.values()) > 20


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "versions": st.dictionaries(
                st.sampled_from(["runtime_version", "driver_version", "api_version"]), st.just("1")
            ),
            "memory": st.dictionaries(
                st.sampled_from(["weight_bytes", "internal_bytes", "weight_line"]), st.just(1)
            ),
            "sections": st.lists(st.sampled_from(["detail", "system", "npu", "max_total"]), max_size=2),
            "flags": st.lists(st.booleans(), min_size=6, max_size=6),
        }
    ),
    st.frozensets(
        st.sampled_from(sorted({m for b in BOUNDARIES.values() for m in b.when_has} | {"other", "x:y"}))
    ),
)
def test_holds_any_is_the_marks_intersection(state: dict, wanted: frozenset[str]) -> None:  # type: ignore[type-arg]
    build = _Build(index=0, start_line=1)
    build.versions, build.memory = dict(state["versions"]), dict(state["memory"])
    if state["sections"]:
        build.eval_memory = {"_sections": list(state["sections"]), "x": 1}
    done, tables, start, settings_, invoked, totals = state["flags"]
    build.done_line = 5 if done else None
    build.has_tables = tables
    build.build_start_line = 2 if start else None
    build.settings = {} if settings_ else None
    build.invoked_line = 3 if invoked else None
    build.perf_totals = {"x": 1} if totals else {}
    assert build.holds_any(wanted) == bool(wanted & build.marks())


@pytest.mark.parametrize("bound", [2, 3, 17])
def test_runs_cut_at_their_bound_parse_as_line_by_line(bound: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run longer than `MAX_RUN` is read as several runs, and still exactly as line by line."""
    import logscope.parsers.rknn.table_runs as table_runs

    text = logscope.io.read_log(MOBILENET)
    with monkeypatch.context() as m:
        m.setattr(table_runs, "MAX_RUN", bound)
        cut = parse_text(text)
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))
    frames_equal(cut, parse_text(text))


def _joined_cases() -> list[tuple[str, re.Pattern[str], tuple[str, ...]]]:
    from logscope.parsers.rknn.state import _LAYER_FIELDS, _TENSOR_FIELDS

    lexer = load_line_grammar("rknn").lexer
    tensor = tuple(f"TENSOR_ROW__{name}" for name in _TENSOR_FIELDS)
    return [
        ("narrow tensor", tensor_row_regex(lexer), tensor),
        ("tensor", lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match.__self__, tensor),  # type: ignore[attr-defined]
        (
            "layer",
            lexer.row_matcher("NATIVE_PREFIX", "LAYER_ROW").match.__self__,  # type: ignore[attr-defined]
            tuple(f"LAYER_ROW__{name}" for name in _LAYER_FIELDS),
        ),
    ]


def _joined_reader(case: int) -> RowReader | None:
    """The joined reader `table_readers` makes of case `case`: the layer rows' with their bar-free
    pattern (`bar_free_layer_pattern`)."""
    name, regex, fields = _joined_cases()[case]
    bar_free = bar_free_layer_pattern(load_line_grammar("rknn").lexer) if name == "layer" else None
    return joined_rows(regex.pattern, fields, bar_free=bar_free)


def _one_by_one(regex: re.Pattern[str], fields: tuple[str, ...], lines: list[str]) -> list[tuple[str, ...]]:
    """What `joined_rows` must read: each line's fields as its own match gives them (None as `''`), up to
    the first line the regex refuses or that is too long for a run."""
    rows = []
    for line in lines[:JOINED_RUN]:
        m = regex.match(line)
        if m is None or len(line) > MAX_BLANK_RUN:
            break
        rows.append(tuple("" if cell is None else cell for cell in m.group(*fields)))
    return rows


@pytest.mark.parametrize("case", range(3), ids=["narrow-tensor", "tensor", "layer"])
def test_joined_rows_read_as_the_matcher(case: int) -> None:
    """Rows read from joined lines are the rows the matcher reads line by line, for runs of every length
    cut by every kind of line (fixture lines, mangled rows, blank and over-long lines)."""
    _name, regex, fields = _joined_cases()[case]
    read = _joined_reader(case)
    assert read is not None
    lines = _tensor_lines() + VOCABULARY
    rows = [line for line in lines if regex.match(line)]
    rng = random.Random(case)
    seen = 0
    for _ in range(400):
        start = rng.randrange(len(rows))
        run = rows[start : start + rng.randrange(1, 2 * JOINED_RUN)]
        chunk = [*run, rng.choice(lines), *rows[:3]]
        got = read(chunk, 0)
        assert got == _one_by_one(regex, fields, chunk)
        seen += len(got)
        offset = rng.randrange(len(chunk))
        assert read(chunk, offset) == _one_by_one(regex, fields, chunk[offset:])
    assert seen > 10_000
    # A line holding a newline among those read: read one by one; after them, it ends the rows.
    assert read([rows[0], f"{rows[1]}\n{rows[2]}", rows[3]], 0) is None
    assert read([rows[0], rows[1], f"{rows[2]}\n{rows[3]}"], 0) is None
    assert read([rows[0], rows[1], "x\ny", rows[3]], 0) == _one_by_one(regex, fields, rows[:2])
    assert read(["x\ny"], 0) == []
    assert read(rows[:3], 3) == []


def _with_copies(rng: random.Random, lines: list[str], rows: list[str], length: int) -> list[str]:
    """`length` lines in runs of equal lines (1 to 40 copies each): mostly rows of the reader, now and
    then any line (refused, blank, over-long or holding a newline)."""
    out: list[str] = []
    while len(out) < length:
        line = (
            rng.choice(rows)
            if rng.random() < 0.9
            else rng.choice([*lines, "x\ny", "x" * (MAX_BLANK_RUN + 1)])
        )
        out += [line] * rng.randint(1, 40)
    return out[:length]


@pytest.mark.parametrize("case", range(3), ids=["narrow-tensor", "tensor", "layer"])
def test_joined_rows_read_runs_of_equal_lines_as_the_matcher(
    case: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk holding runs of equal lines is read with each run as one line (`equal_runs`), and its rows
    are the rows the matcher reads line by line, whatever cuts the runs and wherever the read starts."""
    _name, regex, fields = _joined_cases()[case]
    read = _joined_reader(case)
    assert read is not None
    lines = _tensor_lines() + VOCABULARY
    rows = [line for line in lines if regex.match(line)]
    taken = []
    monkeypatch.setattr(table_runs, "equal_runs", lambda chunk: taken.append(1) or equal_runs(chunk))
    rng = random.Random(100 + case)
    seen = 0
    for _ in range(300):
        chunk = _with_copies(rng, lines, rows, rng.randrange(1, 2 * JOINED_RUN))
        for start in (0, rng.randrange(len(chunk))):
            got = read(chunk, start)
            assert (
                got == _one_by_one(regex, fields, chunk[start:])
                if got is not None
                else any("\n" in line for line in chunk[start : start + JOINED_RUN])
            )
            seen += len(got or ())
    assert seen > 10_000
    assert len(taken) > 100  # (the runs were read as runs)
    # A run of copies of a refused line, of an over-long line, or of one holding a newline.
    row = rows[0]
    assert read(["x"] * 20 + [row], 0) == []
    assert read([row] * 20 + ["x" * (MAX_BLANK_RUN + 1)] * 20, 0) == _one_by_one(regex, fields, [row] * 20)
    assert read([row] * 20 + ["x\ny"] * 20, 0) == _one_by_one(regex, fields, [row] * 20)
    assert read(["x\ny"] * 20, 0) == []
    assert read([row, f"{row}\n{row}"] * 20, 0) is None


def test_equal_runs_and_the_probe() -> None:
    assert equal_runs(["a", "a", "b", "a", "a", "a"]) == (["a", "b", "a"], [2, 1, 3])
    assert equal_runs(["a"]) == (["a"], [1])
    # A run longer than the probe's step is always seen, wherever it lies in the chunk.
    for start in range(JOINED_RUN - REPEAT_PROBE):
        chunk = [str(i) for i in range(JOINED_RUN)]
        chunk[start : start + REPEAT_PROBE + 1] = ["r"] * (REPEAT_PROBE + 1)
        assert repeats_likely(chunk), start
    assert not repeats_likely([str(i) for i in range(JOINED_RUN)])
    assert not repeats_likely([]) and not repeats_likely(["a"])


def test_a_log_of_repeated_warnings_parses_as_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """rknn-toolkit2 2.5.0 on a small transformer: half of the log is one warning repeated in bursts of
    up to 64 equal lines, read as runs of equal lines, with the frames of the line-by-line parse."""
    path = FIXTURES / "rknn-compiler" / "transformer-dev" / "2.5.0" / "tf_t49_d64_h8-rv1106b-int8.log.gz"
    text = logscope.io.read_log(path)
    assert sum(a == b for a, b in zip(text.lines[:-1], text.lines[1:], strict=True)) > 300
    taken = []
    monkeypatch.setattr(table_runs, "equal_runs", lambda chunk: taken.append(1) or equal_runs(chunk))
    frames_equal(*both_ways(lambda: parse_text(text), monkeypatch))
    assert taken


def test_joined_rows_refuse_what_they_cannot_prove() -> None:
    """A pattern that could see or consume across a line end, or a field that may be empty without
    taking part in every match, gets no joined reader."""
    ok = r"(?P<a>\d+) +(?P<b>[^\n]*)\Z"
    assert joined_rows(ok, ("a", "b")) is not None
    for bad in (
        r"^(?P<a>\d+) +(?P<b>\S+)\Z",  # ^ holds only at the text's start
        r"(?P<a>\d+)\s+(?P<b>\S+)\Z",  # \s takes a newline
        r"(?P<a>\d+) +(?P<b>[^|]+)\Z",  # so does a negated class without it
        r"(?s)(?P<a>\d+) +(?P<b>.+)\Z",  # and `.` under DOTALL
        r"(?P<a>\d+) +(?<=\d )(?P<b>\S+)\Z",  # a look-behind may look into the line before
        r"(?P<a>\d+) +(?P<b>\S+)$",  # `$` before a final newline
        r"(?P<a>\d+)\n(?P<b>\S+)\Z",  # a newline literal
        r"(?P<a>\d*) +(?P<b>\S+)\Z",  # the first field may be empty: no end of run to see
        r"(?P<a>\d+) +(?:(?P<b>\S*) )?x\Z",  # an optional field that may be empty: '' is ambiguous
        r"(?P<a>\d+) +(\S+)\Z",  # a group that is not a field
    ):
        assert joined_rows(bad, ("a", "b")) is None, bad
    assert joined_rows(ok, ("b", "a")) is None  # fields out of the pattern's order


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([*VOCABULARY, "", "12 x", "D RKNN: 1 a INT8 (1) | 0x0 0x1 0x1"]), max_size=40)
)
def test_joined_rows_on_any_lines(lines: list[str]) -> None:
    for case, (_name, regex, fields) in enumerate(_joined_cases()):
        read = _joined_reader(case)
        assert read is not None
        assert read(lines, 0) == _one_by_one(regex, fields, lines)


def test_line_bound_models_only_what_it_knows() -> None:
    import re._parser as sre_parser

    def bound(pattern: str) -> bool:
        return line_bound(list(sre_parser.parse(pattern)))

    assert bound(r"[ \t]*+(?>[DIWE]) (?=\n)(?!x)\b\w+\S\d[^\n]*")
    assert not bound(r"\A x") and not bound(r"\Z") and not bound(r"(?=\n|x)") and not bound(r"[\W]")


def _noise_run(lines: list[str], start: int) -> int:
    """The noise lines `run_from` takes from `lines[start]` on with the parse loop's noise-or-marker
    matcher, up to the first marker or other line (what `noise_counter` must count), with no bound."""
    lexer = load_line_grammar("rknn").lexer
    either = lexer.either_matcher("NATIVE_PREFIX", "NATIVE_NOISE", "PASS_MARK").match
    count = 0
    while start + count < len(lines):
        m = either(lines[start + count])
        if m is None or m.lastindex is not None or len(lines[start + count]) > MAX_BLANK_RUN:
            break
        run = run_from(either, m, lines, start + count)
        noise = next((j for j, r in enumerate(run) if r.lastindex is not None), len(run))
        count += noise
        if noise < len(run) or len(run) < 64:
            break
    return count


def _noise_cases() -> list[list[str]]:
    """Runs of noise lines among markers, other lines, long lines and lines holding a newline, around
    and across the counter's chunk bound (seeded)."""
    rng = random.Random(11)
    # (long noise lines among them: a run stops before one longer than `MAX_BLANK_RUN`)
    noise = [line for line in VOCABULARY if line.startswith((TS + "emit", TS + "not need", TS + "finish"))]
    others = [line for line in VOCABULARY if line not in noise] + [TS + "not need tranpose\n" + TS + "emit x"]
    cases = []
    for length in (0, 1, 2, JOINED_COUNT - 1, JOINED_COUNT, JOINED_COUNT + 1, 2 * JOINED_COUNT + 3):
        run = [rng.choice(noise) for _ in range(length)]
        for other in [*others, None]:
            case = run + ([] if other is None else [other]) + [rng.choice(noise) for _ in range(3)]
            cases.append(case)
            if run:  # the other line inside the run
                at = rng.randrange(len(run))
                cases.append(run[:at] + ([] if other is None else [other]) + run[at:])
    mobilenet = logscope.io.read_log(MOBILENET).lines
    cases.append(mobilenet)
    cases.append([_mangle(line, rng) if rng.random() < 0.3 else line for line in mobilenet * 2])
    return cases


def test_noise_counter_counts_what_run_from_takes() -> None:
    """From every line of every case, the counter counts the noise lines `run_from` would take (a marker,
    any other line, or a line longer than `MAX_BLANK_RUN` ends them), or answers None only where one of
    them holds a newline."""
    count = noise_counter(load_line_grammar("rknn").lexer)
    assert count is not None
    rng = random.Random(3)
    counted = refused = 0
    for lines in _noise_cases():
        starts = {0, 1, len(lines)} | set(rng.sample(range(len(lines)), min(len(lines), 12)))
        for start in sorted(starts):
            got = count(lines, start)
            expected = _noise_run(lines, start)
            if got is None:
                assert any("\n" in line for line in lines[start : start + expected + JOINED_COUNT])
                refused += 1
                continue
            assert got == expected, (start, lines[start : start + got + 2])
            counted += got > 0
    assert counted > 300 and refused > 0


def test_joined_count_refuses_what_it_cannot_show_exact() -> None:
    assert joined_count("a$") is None  # `$` may look past the line's end
    assert joined_count("(?<=x)a\\Z") is None  # so may a look-behind
    assert joined_count("a[\\s]*\\Z") is None  # a class that takes a newline
    count = joined_count("a+\\Z")
    assert count is not None
    assert count(["a", "aa", "b", "a"], 0) == 2
    assert count(["a", "a" * (MAX_BLANK_RUN + 1), "a"], 0) == 1
    assert count(["a", "a\na"], 0) is None
    assert count(["a"] * (JOINED_COUNT * 2 + 5) + ["b"], 1) == JOINED_COUNT * 2 + 4
    assert count([], 0) == 0


def test_noise_runs_are_counted_joined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A generated log's long runs of noise lines are counted by the counter after their first `MAX_RUN`
    lines, not matched line after line."""
    from benchmarks.generate import generate_log

    path = tmp_path / "g.log"
    generate_log(path, builds=1, seed=4, noise_ratio=0.9, layers=60)
    real = noise_counter(load_line_grammar("rknn").lexer)
    assert real is not None
    counts: list[int | None] = []

    def counting(lines, start):  # type: ignore[no-untyped-def]
        counts.append(real(lines, start))
        return counts[-1]

    monkeypatch.setattr(rknn_parser, "noise_counter", lambda lexer: counting)
    log = parse_stream(LogStream(path))
    taken = [count for count in counts if count is not None]
    assert len(taken) == len(counts) >= 5 and sum(taken) > log.line_counts["noise"] / 4
