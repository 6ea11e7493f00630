"""A run of layer-row tails read by columns (`layer_cells.tail_columns`) holds exactly the values the tail
converter reads row by row (`layer_cells.read_tails`), for every header the format prints, on tails
taken from the fixtures, generated cell by cell and mangled the ways copies damage them; and it leaves
to the per-row reading every run it cannot read so."""

from __future__ import annotations

import random
from typing import Any

import pytest

import logscope.io
from logscope.parsers.grammar import load_line_grammar
from logscope.parsers.rknn.layer_cells import _LAYER_TAIL, read_tails, tail_columns, tail_layout
from tests.conftest import FIXTURES

# Every header after OutputShape that RKNN prints (1.5 build, 1.5 perf with WorkLoad, 2.x build with and
# without SparseRatio, 2.x eval_perf), and shapes the format allows (one column, a split cell only).
HEADERS = [
    "DDR Cycles     NPU Cycles     Total Cycles   Time(us)       MacUsage(%)    Task Number    Lut Number"
    "     RW(KB)         FullName",
    "DDR Cycles     NPU Cycles     Total Cycles   Time(us)       MacUsage(%)    "
    "WorkLoad(0/1/2)-ImproveTherical        Task Number    Task Size      Regcmd Size    RW(KB)"
    "         FullName",
    "Cycles(DDR/NPU/Total)    RW(KB)       FullName",
    "Cycles(DDR/NPU/Total)    SparseRatio  RW(KB)       FullName",
    "Cycles(DDR/NPU/Total)    Time(us)     MacUsage(%)          WorkLoad(0/1/2)      RW(KB)       FullName",
    "DDR Cycles     NPU Cycles     Total Cycles   Task/Lut   RW(KB)   FullName",
    "RW(KB)   FullName",
    "Cycles(DDR/NPU/Total)   FullName",
    "FullName",
]
# What a cell may hold: the values of each kind, and what copies and other versions put there.
CELLS = {
    "int": ["0", "0", "0", "12", "4096", "123456789012", "\\", "١٢", "²", "-1", "+3", "1_0", "0x10", "1.5"],
    "float": ["0.00", "203.50", "1130", "\\", "nan", "inf", "1e3", "1_0.5", "-0", "x", "1,5"],
    "split": ["0/0/0", "32091/112896/112896", "1/2", "1//2", "1/2/3/4", "/", "\\", "a/b/c", "١/٢/٣", "1/x/3"],
    "ratio": ["1/0", "3/1", "0/0", "1", "1/2/3", "\\"],
    "text": ["6.95", "100.0%/0.0%/0.0%", "\\", "0%", "6.95/6.95/6.95"],
    "name": ["Conv:a", "InputOperator:input", "exSoftmax13:x/y", "\\", "a|b"],
}


def _kind(column: str) -> str:
    if column.startswith("Cycles("):
        return "split"
    if column == "Task/Lut":
        return "ratio"
    if column == "RW(KB)":
        return "float"
    if column.startswith(("MacUsage", "WorkLoad", "SparseRatio")):
        return "text"
    return "int"


def _columns(header: str) -> tuple[str, ...]:
    return tuple(c for c in tail_layout(header).names if c != "FullName")


def _tail(columns: tuple[str, ...], rng: random.Random, same: dict[str, str]) -> str:
    """A tail of one token per column and a FullName, spaced as RKNN pads its cells (or collapsed)."""
    cells = [same.get(c) or rng.choice(CELLS[_kind(c)]) for c in columns] + [rng.choice(CELLS["name"])]
    gaps = [" " * rng.choice((1, 1, 2, 9, 14)) for _ in cells]
    tail = "".join(cell + gap for cell, gap in zip(cells, gaps, strict=True))
    return tail.rstrip(" ") if rng.random() < 0.5 else tail


def _mangle(tail: str, rng: random.Random) -> str:
    """A tail with a cell missing or added, a blank cell, a perf ` - Up:`, a tab, a cut."""
    choice = rng.randrange(7)
    tokens = tail.split()
    if choice == 0 and tokens:
        del tokens[rng.randrange(len(tokens))]
        return "   ".join(tokens)
    if choice == 1:
        return tail + "  extra"
    if choice == 2:
        return tail.replace("  ", " - Up:0.0%  ", 1)
    if choice == 3:
        return tail.replace(" ", "\t", 2)
    if choice == 4:
        return tail[: rng.randrange(len(tail) + 1)]
    if choice == 5:
        return ""
    return tail.replace(" ", "\u00a0", 1)  # a no-break space: a blank to `str.split`


def _by_rows(columns: tuple[str, ...], header: str, tails: list[str]) -> list[Any] | None:
    """`read_tails` of the tails, as the columns of their `_LAYER_TAIL` values (None: a tail unread)."""
    rows = read_tails(columns, tail_layout(header), tails)
    if None in rows:
        return None
    return [list(column) for column in zip(*rows, strict=True)][: len(_LAYER_TAIL)]


def _same(a: list[Any], b: list[Any]) -> bool:
    """Equal values of equal types (`1 == 1.0`, and NaN is not equal to itself)."""
    return [[repr(v) for v in column] for column in a] == [[repr(v) for v in column] for column in b]


def _fixture_runs() -> list[tuple[str, list[str]]]:
    """(header columns, tails) of each layer table of the RKNN fixtures, as the lexer reads them."""
    lexer = load_line_grammar("rknn").lexer
    runs: list[tuple[str, list[str]]] = []
    for path in sorted((FIXTURES / "rknn").glob("*.log")):
        header = None
        for line in logscope.io.read_log(path).lines:
            kind, fields = lexer.classify(line)
            if kind == "LAYER_HEADER":
                header = fields["columns"] or ""
                runs.append((header, []))
            elif kind == "LAYER_ROW" and header is not None:
                runs[-1][1].append(fields["tail"] or "")
    return [run for run in runs if run[1]]


@pytest.mark.parametrize("header", HEADERS, ids=lambda h: h.split()[0] + str(len(h.split())))
def test_columns_read_as_rows(header: str) -> None:
    rng = random.Random(header)
    columns = _columns(header)
    read = unread = 0
    for size in [1, 2, 3, 64] * 40:
        # Some columns hold one token all along (a simulator's zeros), some a token per row.
        same = {c: rng.choice(CELLS[_kind(c)]) for c in columns if rng.random() < 0.4}
        tails = [_tail(columns, rng, same) for _ in range(size)]
        if rng.random() < 0.3:
            tails[rng.randrange(size)] = _mangle(tails[0], rng)
        got = tail_columns(columns, tails)
        if got is None:
            unread += 1
            continue
        read += 1
        expected = _by_rows(columns, header, tails)
        assert expected is not None and _same(got, expected), tails
    assert read > 60 and unread > 10  # both ways taken


def test_fixture_tables_read_as_rows() -> None:
    runs = _fixture_runs()
    read = 0
    for header, tails in runs:
        columns = _columns(header)
        got = tail_columns(columns, tails)
        if got is not None:
            read += 1
            expected = _by_rows(columns, header, tails)
            assert expected is not None and _same(got, expected), header
    assert read >= 3


def test_what_columns_leave_to_rows() -> None:
    """No header, a tail with a cell too many or too few, a perf ` - Up:` cell: the per-row reading."""
    header = HEADERS[0]
    columns = _columns(header)
    row = "0  0  0  0  \\  0  0  147.00  InputOperator:input"
    assert tail_columns(columns, [row, row]) is not None
    assert tail_columns(None, [row]) is None
    assert tail_columns(columns, [row, row + " x"]) is None
    assert tail_columns(columns, [row, row.replace("147.00  ", "")]) is None
    assert tail_columns(columns, [row, ""]) is None
    perf = _columns(HEADERS[1])
    up = "0  0  0  0  \\  100.0%/0.0%/0.0% - Up:0.0%  1  2  3  147.00  Conv:x"
    assert tail_columns(perf, [up]) is None
    assert tail_columns(perf, [up.replace(" - Up:", "-Up:")]) is not None
    assert tail_columns(columns, []) is None


@pytest.mark.parametrize("header", HEADERS[:7], ids=lambda h: h.split()[0] + str(len(h.split())))
def test_a_perf_up_cell_is_left_to_rows_wherever_it_lands(header: str) -> None:
    """A tail holding ` - Up:` with as many tokens as the header has columns (two cells missing) is read
    row by row, whichever column its `-` lands in (an integer, a number, a split, a text column)."""
    columns = _columns(header)
    rng = random.Random(3)
    for at in range(1, len(columns)):  # (a tail never starts with a blank: the terminal's ` *` takes it)
        tokens = _tail(columns, rng, {}).split()
        tokens[at : at + 2] = ["-", "Up:0.0%"]
        tail = "  ".join(tokens).replace("-  Up:", "- Up:")
        assert " - Up:" in tail and len(tail.split()) == len(columns) + 1
        assert tail_columns(columns, [_tail(columns, rng, {}), tail]) is None, tail
