"""The `tensors` frame converted by whole columns (`parsers/rknn/tensor_rows.py`) must be exactly the frame
of the same rows read one by one (`TensorRows._tuple_rows` through `build_frame`): same values, dtypes,
arrays and order, on every fixture and on generated, mangled and extreme cells; and a cell Arrow may not
read as Python does (a 16-digit offset, a non-ASCII digit, a value beyond int64) sends the table to the
per-row reading instead of changing a value."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import logscope.io
from logscope.api import parse_text
from logscope.frames import build_frame
from logscope.parsers.rknn.tensor_rows import _COLUMNS, TensorRows, _any_longer, _missing_if_empty
from tests.conftest import FIXTURES

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
COMPILER_LOGS = sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))[::25]
TS = "D RKNN: [15:13:15.953] "

Cells = tuple[str | None, ...]


def per_row(rows: TensorRows) -> pd.DataFrame:
    return build_frame("tensors", rows._tuple_rows(), _COLUMNS)


def same_frame(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fast, slow)
    for column in slow.columns:  # (the same array types, not only equal values)
        assert type(fast[column].array) is type(slow[column].array), column


def cells(
    id_: str | None = "3",
    user: str = "Conv",
    name: str = "t0",
    dtype: str = "INT8",
    data_format: str | None = "",
    orig: str | None = "(1,3,224,224)",
    native: str | None = "",
    start: str | None = "0x00000000",
    flag: str | None = " ",
    end: str | None = "0x00000010",
    size: str | None = "0x00000010",
    hit: str | None = "",
) -> Cells:
    return (id_, user, name, dtype, data_format, orig, native, start, flag, end, size, hit)


def store(*runs: tuple[int, str, list[Cells]]) -> TensorRows:
    rows, number = TensorRows(), 1
    for build, table, run in runs:
        rows.add(build, table, run, list(range(number, number + len(run))))
        number += len(run) + 2
    return rows


@pytest.mark.parametrize("path", RKNN_LOGS + COMPILER_LOGS, ids=lambda p: p.name[:40])
def test_every_fixture_converts_as_row_by_row(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[TensorRows] = []
    frame = TensorRows.frame

    def keep(rows: TensorRows) -> pd.DataFrame:
        kept.append(rows)
        return frame(rows)

    monkeypatch.setattr(TensorRows, "frame", keep)
    log = parse_text(logscope.io.read_log(path))
    if not kept:  # (no tensor row: the frame is declared empty, never built)
        assert log.frames["tensors"].empty
        return
    (rows,) = kept
    same_frame(log.frames["tensors"], per_row(rows))
    if rows:  # (no fixture holds a cell the columns refuse)
        assert rows._arrow_columns() is not None


def test_cells_of_every_shape_convert_as_row_by_row() -> None:
    shapes = ["(1,3,224,224)", "()", "(1,,2)", "(0)", "(7)", "(65536,65536,3)", "(3,5)"]
    dtypes = ["INT8", "INT4", "UINT4", "FLOAT16", "FLOAT", "INT64", "BOOL", "BFLOAT16", ""]
    rng = random.Random(7)
    runs = []
    for run in range(40):
        rows = []
        for _ in range(rng.randint(1, 70)):
            rows.append(
                cells(
                    id_=str(rng.randint(0, 10**6)),
                    user=rng.choice(["Conv", "ConvClip", "Add", "-"]),
                    name=f"n{rng.randint(0, 50)}",
                    dtype=rng.choice(dtypes),
                    data_format=rng.choice(["", None, "NC1HWC2", "NCHW"]),
                    orig=rng.choice(shapes),
                    native=rng.choice(["", None, *shapes]),
                    start=f"0x{rng.randint(0, 16**15 - 1):0{rng.randint(1, 15)}x}",
                    flag=rng.choice([" ", "*"]),
                    end=f"0x{rng.randint(0, 16**8):X}",
                    size=f"0x{rng.randint(0, 16**8):08x}",
                    hit=rng.choice(["", None, "0x10", "-"]),
                )
            )
        runs.append((run // 10, rng.choice(["feature", "const"]), rows))
    # the minimum-const table's rows (no id, offsets, flag or NativeShape)
    runs.append((4, "const", [(None, "Conv", "w", "INT8", None, "(8,3)", *(None,) * 6)] * 3))
    runs.append((4, "const", [(None, "Conv", "w", "", None, None, *(None,) * 6)]))
    rows = store(*runs)
    assert rows._arrow_columns() is not None
    same_frame(rows.frame(), per_row(rows))


@pytest.mark.parametrize(
    "odd",
    [
        cells(start="0x8000000000000000"),  # 16 digits: Arrow reads it as negative, Python as > int64
        cells(end="0xffffffffffffffff"),
        cells(size="0x1ffffffffffffffff"),  # beyond int64
        cells(start="0x00000000000000000001"),  # 20 digits for a small value
        cells(id_="٣"),  # an Arabic-Indic digit: `\d` takes it, int() reads it, Arrow does not
        cells(id_="99999999999999999999"),  # beyond int64
        cells(orig="(99999999999,99999999999)", dtype="INT64"),  # a size beyond int64
    ],
)
def test_cells_arrow_may_not_read_go_row_by_row(odd: Cells) -> None:
    rows = store((0, "const", [cells(), odd, cells(id_="5")]))
    assert rows._arrow_columns() is None
    same_frame(rows.frame(), per_row(rows))


def test_leading_zeros_are_read_by_columns() -> None:
    rows = store((0, "const", [cells(id_="000000000000000000000000007", start="0x000000000000010")]))
    assert rows._arrow_columns() is not None
    same_frame(rows.frame(), per_row(rows))


def test_text_arrow_refuses_is_read_row_by_row() -> None:
    """A cell Arrow cannot hold as text (a lone surrogate, which only a caller's own string may hold):
    the per-row reading builds the frame, or fails as it always did."""
    rows = store((0, "const", [cells(), cells(name="a")]), (0, "const", [cells(name="b\udc80"), cells()]))
    assert rows._arrow_columns() is None
    try:
        expected: object = per_row(rows)
    except Exception as exc:  # (whatever the per-row reading does, the frame does)
        with pytest.raises(type(exc)):
            rows.frame()
    else:
        same_frame(rows.frame(), expected)  # type: ignore[arg-type]


def test_no_rows_is_the_empty_frame() -> None:
    frame = TensorRows().frame()
    assert list(frame.columns) == list(_COLUMNS) and frame.empty


def test_a_table_with_odd_cells_parses_with_them_missing() -> None:
    """End to end: an offset beyond int64 is <NA> in its row, the other rows and values kept."""
    header = f"{TS}ID  User  Tensor  DataType  OrigShape  |  [Start  End)  Size"
    rows = [
        f"{TS}1  Conv  w0  INT8  (2,3)  | 0x00000000 0x00000006 0x00000006",
        f"{TS}2  Conv  w1  INT8  (4)  | 0x1ffffffffffffffff 0x00000010 0x00000004",
        f"{TS}3  Conv  w2  INT4  (5)  | 0x00000020 0x00000023 0x00000003",
    ]
    log = parse_text("\n".join([header, *rows]) + "\n")
    tensors = log.frames["tensors"]
    assert tensors["op_id"].tolist() == [1, 2, 3]
    assert tensors["start_offset"].isna().tolist() == [False, True, False]
    assert tensors["logical_bytes"].tolist() == [6, 4, 2]
    assert tensors["line"].tolist() == [2, 3, 4]


@pytest.mark.parametrize(
    "strings",
    [
        [],
        [None],
        ["0x1", ""],
        ["0x" + "f" * 15, "0x1"],  # 17 characters: not longer
        ["0x" + "f" * 16],  # 18
        ["0x" + "\u0663" * 15],  # 17 characters in 32 bytes: counted in characters, not longer
        ["0x1", "0x" + "\u0663" * 16, None],  # 18 characters
        ["x", "0x" + "f" * 16, "0x1"],  # (read from the second string on: a slice)
    ],
)
def test_any_longer_counts_characters(strings: list[str | None]) -> None:
    column = pa.array(strings, pa.large_string())
    if strings and strings[0] == "x":
        column, strings = column.slice(1), strings[1:]
    assert _any_longer(column, 17) == any(s is not None and len(s) > 17 for s in strings)


def test_missing_if_empty_is_the_empty_strings_missing() -> None:
    strings = ["", "a", None, "\u0663", "", " ", "\u00e9\u00e9"]
    for column in (
        pa.array(strings, pa.large_string()),
        pa.array(["z", *strings], pa.large_string()).slice(1),
    ):
        expected = pc.if_else(pc.equal(column, ""), pa.scalar(None, pa.large_string()), column)
        assert _missing_if_empty(column).equals(expected)
        assert _missing_if_empty(column).to_pylist() == [s or None for s in strings]
