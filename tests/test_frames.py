"""Frame construction (`logscope.frames`): declared dtypes and values from every way a parser hands
rows over, columns the frame owns, empty frames that cannot leak a change, and `replace_columns`
equal to rebuilding the frame from its rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import logscope
from logscope import frames
from logscope.analysis.derived import _records
from logscope.frames import (
    BOOL,
    FLT,
    INT,
    OBJ,
    SCHEMAS,
    STR,
    build_frame,
    build_frame_columns,
    empty_frame,
    replace_columns,
)

FIXTURE = (
    Path(__file__).parent.parent
    / "fixtures"
    / "rknn"
    / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
)

# One row per case of a column: all values, some missing, all missing, of each declared dtype.
_ROWS = [
    {"build_index": 0, "source": "build-log", "weight_bytes": 10, "reuse_rate": 0.5, "total_line": None},
    {"build_index": 1, "source": None, "weight_bytes": None, "reuse_rate": 0.25, "total_line": None},
    {"build_index": 2, "source": "derived", "weight_bytes": 2**62, "reuse_rate": None, "total_line": None},
]


def _reference(name: str, rows: list[dict]) -> pd.DataFrame:
    """The frame built the slow, obvious way: pandas converts each declared column of the dict rows."""
    schema = SCHEMAS[name]
    return pd.DataFrame(
        {c: pd.array([r.get(c) for r in rows], dtype=dtype) for c, dtype in schema.items()},
        columns=list(schema),
    )


def test_dict_rows_and_tuple_rows_give_the_declared_frame() -> None:
    expected = _reference("memory", _ROWS)
    by_dict = build_frame("memory", _ROWS)
    columns = ["build_index", "source", "weight_bytes", "reuse_rate", "total_line"]
    by_tuple = build_frame("memory", [tuple(r[c] for c in columns) for r in _ROWS], columns)
    for frame in (by_dict, by_tuple):
        pd.testing.assert_frame_equal(frame, expected)
        assert list(frame.columns) == list(SCHEMAS["memory"])
        assert [str(t) for t in frame.dtypes] == list(SCHEMAS["memory"].values())
    assert pd.isna(by_dict["source"][1]) and pd.isna(by_dict["weight_bytes"][1])
    assert pd.isna(by_dict["reuse_rate"][2])
    nan = build_frame("memory", [{"reuse_rate": float("nan")}])["reuse_rate"]
    assert not nan.isna().any() and np.isnan(nan.to_numpy(dtype=float)[0])  # a value, not a missing one


def test_every_dtype_with_and_without_missing_values() -> None:
    rows = [
        {"build_index": 0, "section": "a", "rule": None, "removed_nodes": ["x", "y"], "line": 3},
        {"build_index": None, "section": None, "rule": None, "removed_nodes": None, "line": 4},
    ]
    frame = build_frame("fusions", rows)
    pd.testing.assert_frame_equal(frame, _reference("fusions", rows))
    assert frame["removed_nodes"].tolist() == [["x", "y"], None]
    assert SCHEMAS["fusions"]["removed_nodes"] == OBJ and frame["removed_nodes"].dtype == object
    flags = build_frame("layers", [{"headerless": True}, {"headerless": None}, {"headerless": False}])
    assert SCHEMAS["layers"]["headerless"] == BOOL
    assert flags["headerless"].tolist() == [True, pd.NA, False]
    assert {SCHEMAS["memory"][c] for c in ("build_index", "reuse_rate", "source")} == {INT, FLT, STR}


def test_an_integer_beyond_int64_becomes_missing_and_keeps_its_row() -> None:
    frame = build_frame("tensors", [{"start_offset": 2**70, "line": 7}, {"start_offset": 5, "line": 8}])
    assert frame["start_offset"].tolist() == [pd.NA, 5]
    assert frame["line"].tolist() == [7, 8]


def test_columns_are_owned_by_the_frame() -> None:
    """Arrow hands out read-only buffers; a frame's columns must take an in-place change."""
    frame = build_frame("tensors", [{"size_bytes": 10, "line": 1}, {"size_bytes": None, "line": 2}])
    frame.loc[0, "size_bytes"] = 11
    frame.loc[1, "line"] = 5
    assert frame["size_bytes"].tolist() == [11, pd.NA]
    assert frame["line"].tolist() == [1, 5]


def test_whole_columns_and_missing_columns() -> None:
    frame = build_frame_columns("unparsed", {"line": np.array([4, 9]), "text": ["a", None]}, 2)
    assert frame["line"].tolist() == [4, 9]
    assert frame["text"].tolist() == ["a", pd.NA]
    assert frame["reason"].isna().all() and str(frame["reason"].dtype) == STR


def test_an_empty_frame_is_a_copy_a_change_does_not_reach() -> None:
    first = empty_frame("layers")
    first["extra"] = []
    del first["line"]
    second = empty_frame("layers")
    assert list(second.columns) == list(SCHEMAS["layers"]) and len(second) == 0
    assert [str(t) for t in second.dtypes] == list(SCHEMAS["layers"].values())


@pytest.mark.parametrize("path", [FIXTURE])
def test_replace_columns_equals_rebuilding_from_rows(path: Path) -> None:
    memory = logscope.parse(path).frames["memory"]
    assert len(memory)
    records = _records(memory)
    records[0]["padding_bytes"] = 123
    records[0]["computed_reuse_rate"] = None
    changed = {
        "padding_bytes": [r["padding_bytes"] for r in records],
        "computed_reuse_rate": [r["computed_reuse_rate"] for r in records],
    }
    pd.testing.assert_frame_equal(replace_columns("memory", memory, changed), build_frame("memory", records))
    assert memory["padding_bytes"].tolist()[0] == 167537  # the frame it started from is unchanged


def test_masked_columns_without_the_private_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_simple_new` is private pandas API: the public constructor builds the same frame."""
    rows = [*_ROWS, {"build_index": 3, "weight_bytes": 7, "reuse_rate": 0.125}]
    fast = build_frame("memory", rows)
    flags = build_frame("layers", [{"headerless": True, "line": 1}, {"headerless": None, "line": 2}])
    monkeypatch.setattr(frames, "_SIMPLE_NEW", False)
    pd.testing.assert_frame_equal(build_frame("memory", rows), fast)
    pd.testing.assert_frame_equal(
        build_frame("layers", [{"headerless": True, "line": 1}, {"headerless": None, "line": 2}]), flags
    )
    pd.testing.assert_frame_equal(fast, _reference("memory", rows))


def test_the_private_constructor_is_checked_before_use(monkeypatch: pytest.MonkeyPatch) -> None:
    assert frames._simple_new_works()  # the pandas installed here has it
    for masked in (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray):
        for owner in masked.__mro__:  # a pandas without it: gone from every class that defines it
            if "_simple_new" in vars(owner):
                monkeypatch.delattr(owner, "_simple_new")
    assert not frames._simple_new_works()


def test_object_cells_stay_one_per_row_and_missing_only_cells_are_missing() -> None:
    """Lists of one length are cells, not the rows of a 2-D array; pd.NA cells make a <NA> column."""
    rows = [{"removed_nodes": ["a", "b"], "line": 1}, {"removed_nodes": ["c", "d"], "line": 2}]
    frame = build_frame("fusions", rows)
    assert (
        frame["removed_nodes"].tolist() == [["a", "b"], ["c", "d"]] and frame["removed_nodes"].dtype == object
    )
    pd.testing.assert_frame_equal(frame, _reference("fusions", rows))
    missing = build_frame("memory", [{"weight_bytes": pd.NA, "source": pd.NA}, {"weight_bytes": None}])
    assert missing["weight_bytes"].isna().all() and missing["source"].isna().all()
    assert [str(t) for t in missing.dtypes] == list(SCHEMAS["memory"].values())


def test_tensor_arrays_read_each_column_as_its_series_does() -> None:
    """`analysis.pool.tensor_arrays` (what the pools and the derived figures compute from) holds the
    values and the known cells the Series give, missing cells and other tables included."""
    from logscope.analysis.pool import tensor_arrays

    rows = [
        {
            "build_index": 0,
            "table": "feature",
            "start_offset": 16,
            "end_offset": 48,
            "size_bytes": 32,
            "line": 5,
        },
        {
            "build_index": None,
            "table": "const",
            "start_offset": None,
            "size_bytes": 8,
            "padding_bytes": -2,
            "line": 6,
        },
        {"build_index": 1, "table": None, "end_offset": 4, "op_id": 3, "logical_bytes": 9, "line": 7},
    ]
    tensors = build_frame("tensors", rows)
    arrays = tensor_arrays(tensors)
    columns = {
        "build": "build_index",
        "start": "start_offset",
        "end": "end_offset",
        "size": "size_bytes",
        "line": "line",
        "op_id": "op_id",
        "padding": "padding_bytes",
        "logical": "logical_bytes",
    }
    for field, column in columns.items():
        values, known = getattr(arrays, field)
        assert values.tolist() == tensors[column].to_numpy(dtype="int64", na_value=0).tolist()
        assert known.tolist() == tensors[column].notna().tolist()
    assert arrays.feature.tolist() == [True, False, False] and arrays.const.tolist() == [False, True, False]
    assert arrays.usable.tolist() == [True, False, False]


def test_rows_in_schema_order_convert_as_the_columns_do() -> None:
    """Tuple rows of every column in schema order are converted as rows of one Arrow struct; a cell
    that fails there (an integer beyond int64, a flag given as text) sends the rows column by column,
    with the same outcome as dict rows."""
    columns = list(SCHEMAS["tensors"])
    base = dict.fromkeys(columns)
    rows = [
        base | {"build_index": 0, "table": "feature", "start_offset": 16, "star_flag": True, "line": 3},
        base | {"build_index": 0, "table": None, "size_bytes": 8, "star_flag": False, "line": 4},
    ]
    as_tuples = build_frame("tensors", [tuple(r[c] for c in columns) for r in rows], columns)
    pd.testing.assert_frame_equal(as_tuples, build_frame("tensors", rows))
    pd.testing.assert_frame_equal(as_tuples, _reference("tensors", rows))
    wide = [*rows, base | {"start_offset": 2**70, "line": 5}]
    fallback = build_frame("tensors", [tuple(r[c] for c in columns) for r in wide], columns)
    assert fallback["start_offset"].tolist() == [16, pd.NA, pd.NA]
    pd.testing.assert_frame_equal(fallback, build_frame("tensors", wide))
    with pytest.raises(ValueError):
        build_frame("tensors", [(*(r[c] for c in columns), None) for r in rows], columns)


def _layer_rows(count: int) -> tuple[list[str], list[tuple[Any, ...]]]:
    columns = list(frames.SCHEMAS["layers"])
    rows = []
    for n in range(count):
        row: list[Any] = [None] * len(columns)
        row[columns.index("line")] = 10 + n
        row[columns.index("layer_id")] = n
        rows.append(tuple(row))
    return columns, rows


def test_a_failing_row_is_named_by_its_line() -> None:
    columns, rows = _layer_rows(6)
    bad = list(rows[4])
    bad[columns.index("rw_kb")] = "not a number"
    rows[4] = tuple(bad)
    with pytest.raises(Exception) as caught:
        frames.build_frame("layers", rows, columns)
    assert caught.value.__dict__.get("logscope_where", {}).get("line") == 14


def test_a_row_too_short_keeps_its_own_error() -> None:
    """A row without a line cell names no line, and the error raised is the build's own (looking for
    the line must not raise an error of its own in its place)."""
    columns, rows = _layer_rows(6)
    rows[3] = rows[3][:2]
    with pytest.raises(Exception) as caught:
        frames.build_frame("layers", rows, columns)
    assert not isinstance(caught.value, IndexError)
    assert "line" not in caught.value.__dict__.get("logscope_where", {})


def test_an_integer_column_loses_only_integers_beyond_int64() -> None:
    """An integer beyond int64 (fuzzed or corrupted input) becomes <NA> and its row stays; a numpy
    integer beside it keeps its value; a cell of another type is a bug, raised with its row's line."""
    columns, rows = _layer_rows(6)
    at = columns.index("task_number")
    cells: list[Any] = [0, np.int64(1), 2, 2**70, 4, None]
    rows = [(*row[:at], cell, *row[at + 1 :]) for row, cell in zip(rows, cells, strict=True)]
    frame = frames.build_frame("layers", rows, columns)
    assert frame["task_number"].tolist() == [0, 1, 2, pd.NA, 4, pd.NA]
    assert frame["line"].tolist() == [10, 11, 12, 13, 14, 15]
    rows[2] = (*rows[2][:at], "seven", *rows[2][at + 1 :])
    with pytest.raises(Exception) as caught:
        frames.build_frame("layers", rows, columns)
    assert caught.value.__dict__.get("logscope_where", {}).get("line") == 12


@pytest.mark.parametrize("block_manager", [True, False], ids=["block-manager", "public"])
def test_column_array_is_the_series_array(monkeypatch: pytest.MonkeyPatch, block_manager: bool) -> None:
    """`column_array` gives what `frame[name].array` gives (type, dtype, values) for every column of
    every frame of a real log, through the block manager and without it; None for a missing column."""
    log = logscope.analyze(
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "rknn"
        / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
    )
    frames_read = [frame for frame in log.frames.values() if len(frame.columns)]
    if not block_manager:
        monkeypatch.delattr(type(frames_read[0]._mgr), "iget_values")
    for frame in frames_read:
        for name in frame.columns:
            got, want = frames.column_array(frame, name), frame[name].array
            assert type(got) is type(want) and got.dtype == want.dtype, name
            assert got.tolist() == want.tolist(), name
        assert frames.column_array(frame, "no such column") is None


# Short columns of every dtype, as the small frames hand them over: plain values, missing ones, values
# Arrow reads in its own way (NaN, -0.0, infinities), and values the short path must leave to it (an
# integer beyond int64, a bool in an integer column, numpy scalars, integers in a float column).
_SHORT_COLUMNS = [
    (INT, [1, None, -5]),
    (INT, [2**63 - 1, -(2**63)]),
    (INT, [2**63, 3]),
    (INT, [None, 7]),
    (INT, [True, 1]),
    (INT, [np.int64(3), None]),
    (FLT, [0.5, None, float("nan"), -0.0, float("inf")]),
    (FLT, [1, 0.5]),
    (FLT, [np.float64(2.5)]),
    (BOOL, [True, None, False]),
    (BOOL, [1, True]),
    (INT, list(range(frames._SMALL))),
    (INT, [*range(frames._SMALL), None]),
    (FLT, [*map(float, range(frames._SMALL - 1)), None]),
]


def _made(values: list[Any], dtype: str) -> tuple[str, Any]:
    try:
        array = frames._typed_array(list(values), dtype)
    except Exception as exc:  # the same failure either way
        return "raised", type(exc)
    data = getattr(array, "_data", None)
    return str(array.dtype), (
        type(array),
        repr(array.tolist()),  # (NaN is not equal to itself)
        None if data is None else data.tobytes(),
        None if data is None else array._mask.tolist(),
    )


@pytest.mark.parametrize(("dtype", "values"), _SHORT_COLUMNS)
def test_short_masked_columns_are_the_arrays_arrow_makes(
    monkeypatch: pytest.MonkeyPatch, dtype: str, values: list[Any]
) -> None:
    """A short column made in numpy (`_small_masked`) is the array Arrow makes of it: the same values,
    the same mask, the same bytes under it (0 where missing)."""
    short = _made(values, dtype)
    monkeypatch.setattr(frames, "_SMALL", 0)
    assert short == _made(values, dtype)


def _two_builds() -> str:
    """Fixture 09 twice, its memory figures cut from the first copy: a build whose derived figures get a
    memory row of their own (source `derived`) before the log's own row of the next build."""
    text = FIXTURE.read_text(encoding="utf-8")
    first = "\n".join(line for line in text.split("\n") if "Memory" not in line and "Predict" not in line)
    return first + "\n" + text


def _every_frame(log: logscope.ParsedLog) -> dict[str, pd.DataFrame]:
    return {name: log.frames[name] for name in log.frames}


@pytest.mark.parametrize("source", ["fixture", "two builds"])
def test_frames_are_the_same_without_the_fast_paths(monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    """Every frame of a log is the one pandas and Arrow make without the short columns in numpy, the
    strings wrapped as pandas wraps its own results and the blocks made directly: the same columns,
    dtypes, values and blocks."""

    def parse() -> logscope.ParsedLog:
        return logscope.parse(FIXTURE) if source == "fixture" else logscope.parse_text(_two_builds())

    fast = _every_frame(parse())
    monkeypatch.setattr(frames, "_SMALL", 0)
    monkeypatch.setattr(frames, "_FAST_STRINGS", False)
    monkeypatch.setattr(frames, "_DIRECT_BLOCKS", False)
    slow = _every_frame(parse())
    assert list(fast) == list(slow)
    for name, frame in fast.items():
        pd.testing.assert_frame_equal(frame, slow[name], check_exact=True, obj=name)
        assert len(frame._mgr.blocks) == len(slow[name]._mgr.blocks), name


def test_direct_frames_leave_stacked_numpy_columns_to_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two object columns are one block in pandas' frame: the direct path declines them (and the frame
    is pandas' own); without pandas' block constructors the direct path is never taken."""
    assert frames._DIRECT_BLOCKS
    rows = [{"build_index": 0, "removed_nodes": ["a"], "added_nodes": ["b", "c"], "line": 3}]
    arrays = [frames._typed_array([r.get(c) for r in rows], dtype) for c, dtype in SCHEMAS["fusions"].items()]
    assert frames._direct_frame(arrays, pd.Index(list(SCHEMAS["fusions"])), 1) is None
    frame = build_frame("fusions", rows)
    assert frame["added_nodes"].tolist() == [["b", "c"]] and frame["line"].tolist() == [3]
    wrapped = [
        frames._missing_array(OBJ, 1) if dtype == OBJ else array
        for array, dtype in zip(arrays, SCHEMAS["fusions"].values(), strict=True)
    ]
    assert frames._direct_frame(wrapped[:3] + wrapped[4:], pd.Index(["a", "b", "c", "d", "e"]), 1) is None
    missing = frames.build_frame_columns("fusions", {"line": [1]}, 1)  # (object columns of nothing)
    monkeypatch.setattr(frames, "_DIRECT_BLOCKS", False)
    expected = frames.build_frame_columns("fusions", {"line": [1]}, 1)
    pd.testing.assert_frame_equal(missing, expected)
    assert sorted(type(b).__name__ for b in missing._mgr.blocks) == sorted(
        type(b).__name__ for b in expected._mgr.blocks
    )
    monkeypatch.setattr(frames, "_BLOCK_API", None)
    assert not frames._direct_blocks_work()


def test_string_arrays_are_the_constructors() -> None:
    import pyarrow as pa

    assert frames._FAST_STRINGS
    for column in (pa.array(["a", None, "é"], pa.large_string()), pa.nulls(3, pa.large_string())):
        made, expected = frames._string_array(column), pd.arrays.ArrowStringArray(column)
        assert type(made) is type(expected) and made.dtype == expected.dtype
        assert made.tolist() == expected.tolist() and made._pa_array.equals(expected._pa_array)
