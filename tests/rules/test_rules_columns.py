"""The rules' shared per-frame columns (`logscope.rules._common.Columns`): the same rows, order and cell
values the pandas calls they replace gave, and never a stale answer for a frame changed between runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from logscope.frames import empty_frame
from logscope.model import ParsedLog
from logscope.rules import Config, run_rules
from logscope.rules._common import (
    Columns,
    build_slices,
    columns,
    forget_frames,
    grouped,
    message_groups,
    message_positions,
    messages_in,
)


def _frame() -> pd.DataFrame:
    # Builds out of order, a row outside any build, lines out of order within a build, a missing
    # line, missing strings.
    return pd.DataFrame(
        {
            "build_index": pd.array([2, None, 1, 2, 1, None, 2], dtype="Int64"),
            "line": pd.array([50, 30, 90, 10, 20, 40, None], dtype="Int64"),
            "op_type": pd.array(["Conv", None, "Relu", "conv", "Conv", "Relu", "Add"], dtype="string"),
            "size_bytes": pd.array([1, 2, None, 4, 5, 6, 7], dtype="Int64"),
            "rw_kb": pd.array([1.5, None, 2.0, 3.0, 4.0, 5.0, 6.0], dtype="Float64"),
        }
    )


def test_builds_match_pandas_groupby_order():
    frame = _frame()
    cols = Columns(frame)
    expected = {key: list(rows.index) for key, rows in grouped(frame)}
    assert cols.builds() == expected
    assert list(cols.builds()) == [1, 2, None]


def test_by_line_and_ordered_match_sort_values():
    frame = _frame()
    cols = Columns(frame)
    expected = {key: list(rows.sort_values("line", kind="stable").index) for key, rows in grouped(frame)}
    assert cols.by_line() == expected
    assert cols.ordered().tolist() == [p for rows in expected.values() for p in rows]
    assert cols.line_order() == list(frame.sort_values("line", kind="stable").index)


@pytest.mark.parametrize(
    ("values", "keys"),
    [([3, 3, 3], [3]), ([None, None], [None]), ([7, None, 2, 7], [2, 7, None]), ([], [])],
)
def test_build_codes_count_up_in_build_order(values, keys):
    frame = pd.DataFrame({"build_index": pd.array(values, dtype="Int64")})
    codes, found = Columns(frame).build_codes()
    assert found == keys
    assert [found[c] for c in codes.tolist()] == [None if v is None else v for v in values]


def test_cells_are_what_tolist_gives():
    frame = _frame()
    cols = Columns(frame)
    for name in frame.columns:
        listed = frame[name].tolist()
        assert [type(v) for v in cols[name]] == [type(v) for v in listed]
        assert str(cols[name]) == str(listed)
        assert str(cols.take(name, [6, 0])) == str([listed[6], listed[0]])
    codes, values = cols.codes("op_type")
    assert [values[c] if c >= 0 else None for c in codes.tolist()] == [
        None if v is pd.NA else v for v in frame["op_type"].tolist()
    ]
    assert cols.flags("op_type", lambda v: v.lower() == "conv").tolist() == [
        True,
        False,
        False,
        True,
        True,
        False,
        False,
    ]
    assert cols.ints("size_bytes", missing=-1).tolist() == [1, 2, -1, 4, 5, 6, 7]
    assert cols.missing("line").tolist() == [False] * 6 + [True]


def test_one_cell_of_a_small_frame_has_the_type_tolist_gives():
    frame = _frame().iloc[:3].reset_index(drop=True)  # few rows: read cell by cell
    cols = Columns(frame)
    for name in frame.columns:
        for position, listed in enumerate(frame[name].tolist()):
            cell = cols.cell(name, position)
            assert type(cell) is type(listed)
            assert str(cell) == str(listed)
    picked = cols.pick([2], ["op_type", "line"])
    assert (picked[0].op_type, picked[0].line) == ("Relu", 90)


def test_messages_as_positions_are_messages_in():
    messages = pd.DataFrame(
        {
            "build_index": pd.array([0, 1, 0, None, 1], dtype="Int64"),
            "line": pd.array([9, 3, 1, 5, 7], dtype="Int64"),
            "category": pd.array(["a", "b", None, "a", "a"], dtype="string"),
            "message": pd.array(["x", "y", "z", "w", "v"], dtype="string"),
        }
    )
    log = ParsedLog(source="m.log", kind="rknn-build", frames={"messages": messages}, line_counts={})
    for categories in (["a"], ["a", "b"], ["c"]):
        frame = messages_in(log, categories)
        assert message_positions(log, categories) == list(frame.index)
        assert [(b, rows) for b, rows in message_groups(log, categories)] == [
            (b, list(rows.index)) for b, rows in grouped(frame)
        ]


def test_a_frame_changed_between_runs_is_read_afresh():
    log = ParsedLog(source="x.log", kind="rknn-build", frames={}, line_counts={})
    layers = empty_frame("layers")
    layers = pd.concat(
        [
            layers,
            pd.DataFrame(
                {
                    "build_index": pd.array([0, 0, 0], dtype="Int64"),
                    "layer_id": pd.array([0, 1, 2], dtype="Int64"),
                    "op_type": pd.array(["Conv", "Acos", "Conv"], dtype="string"),
                    "target": pd.array(["NPU", "NPU", "NPU"], dtype="string"),
                    "full_name": pd.array(["a", "b", "c"], dtype="string"),
                    "line": pd.array([1, 2, 3], dtype="Int64"),
                }
            ),
        ],
        ignore_index=True,
    ).astype(layers.dtypes.to_dict())
    log.frames["layers"] = layers
    select = Config(select=("NPU001",))
    assert run_rules(log, select) == []
    assert columns(layers).frame is layers
    # The same frame object, changed in place: the next run must see the CPU layer.
    layers.loc[1, "target"] = "CPU"
    findings = run_rules(log, select)
    assert [f.code for f in findings] == ["NPU001"]
    assert "layer 1 Acos" in findings[0].message


def test_the_engine_leaves_no_frame_cached():
    frame = _frame()
    columns(frame)
    log = ParsedLog(source="x.log", kind="rknn-build", frames={}, line_counts={})
    run_rules(log, Config())
    from logscope.rules import _common

    assert _common._COLUMNS == [] and _common._SPLITS == [] and _common._CATEGORIES == []
    forget_frames()
    assert np.array_equal(Columns(frame).ordered(), columns(frame).ordered())


def _slow_containing(cells: list, needles: list[str], lower: bool) -> list[int]:
    return [
        p
        for p, cell in enumerate(cells)
        if isinstance(cell, str) and any(n in (cell.lower() if lower else cell) for n in needles)
    ]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("storage", ["python", "pyarrow"])
@pytest.mark.parametrize("search", ["joined", "arrow"])
def test_containing_finds_what_a_test_per_cell_finds(seed, storage, search, monkeypatch):
    """The joined-column search and Arrow's (`arrow`: from any length) against `needle in cell` per
    row, on cells built to break them: needles at the start and end of a cell and cut across two cells,
    repeated in one cell, multi-line cells, empty and missing cells, upper-case needles, regex
    characters, U+0130 (whose lower case is two characters long), U+017F and U+212A (which RE2 folds to
    ASCII letters), and columns of ASCII text only."""
    from logscope.rules import _common

    if search == "arrow":
        monkeypatch.setattr(_common, "ARROW_SEARCH_ROWS", 0)
    rng = np.random.default_rng(seed)
    pieces = ["API:", "AP", "I:", "memory", "MEMORY", "Memory allocation failed", "\n", " ", "", "x", "a.*("]
    pieces += ["İ", "ſ", "\u212a"] if seed % 2 else []
    cells: list = []
    for _ in range(300):
        if rng.random() < 0.1:
            cells.append(None)
            continue
        cells.append("".join(rng.choice(pieces, size=int(rng.integers(0, 6))).tolist()))
    frame = pd.DataFrame({"message": pd.array(cells, dtype=pd.StringDtype(storage))})
    listed = [c if isinstance(c, str) else None for c in frame["message"].tolist()]
    for needles, lower in (
        (["API:"], False),
        (["memory"], True),
        (["memory", "API:"], False),
        (["I:", "x"], False),
        (["ap"], True),
        (["a\nb"], False),  # a needle with a line break: every cell on its own
        (["a.*("], False),
        (["Memory"], True),  # never in a lowered cell
        (["s", "k"], True),
        (["a\\b", "x"], False),
    ):
        assert Columns(frame).containing("message", needles, lower=lower) == _slow_containing(
            listed, needles, lower
        ), (needles, lower)


def test_containing_without_the_long_lower_case():
    """Without U+0130 the lowered join maps to rows; with it, every cell is tested on its own: both answer
    as a test per cell does."""
    for cells in (["a Memory b", None, "MEMORY", "mem ory"], ["İ memory", "x", "Memory İ", "İ"]):
        frame = pd.DataFrame({"message": pd.array(cells, dtype="string")})
        assert Columns(frame).containing("message", ["memory"], lower=True) == _slow_containing(
            cells, ["memory"], True
        )


@pytest.mark.parametrize("seed", range(4))
def test_build_slices_are_the_rows_of_each_build_in_order(seed):
    rng = np.random.default_rng(seed)
    n_builds = int(rng.integers(1, 6))
    codes = rng.integers(0, n_builds, size=int(rng.integers(0, 40)))
    order, bounds = build_slices(codes, n_builds)
    assert len(bounds) == n_builds + 1
    for code in range(n_builds):
        assert order[bounds[code] : bounds[code + 1]].tolist() == np.flatnonzero(codes == code).tolist()


def _alc001_rows_as_pandas(messages: pd.DataFrame) -> list[int]:
    """ALC001's rows as the rule read them with pandas: the category test and `_EXTRA` on every row, then
    `sort_values("line")`, as positions."""
    from logscope.rules.alc001_allocation_failure import CATEGORIES, _extra

    picked = [
        p
        for p, (category, text) in enumerate(
            zip(messages["category"].tolist(), messages["message"].tolist(), strict=True)
        )
        if (category in CATEGORIES if isinstance(category, str) else False)
        or ((category == "" if isinstance(category, str) else True) and _extra(text))
    ]
    framed = messages.assign(_position=range(len(messages))).iloc[picked].sort_values("line")
    return framed["_position"].tolist()


@pytest.mark.parametrize("seed", range(6))
def test_alc001_reads_the_rows_pandas_read(seed):
    """ALC001's searched rows and line order against the per-row test and `sort_values` they replace, on
    categories listed, empty and missing, texts with the compiler wording in any case (U+0130 too), cut
    and missing texts, and lines out of order, repeated and missing."""
    from logscope.rules.alc001_allocation_failure import picked_rows, sorted_by_line

    rng = np.random.default_rng(seed)
    n = 60
    categories = rng.choice(["allocation-failure", "process-killed", "", "config", None], size=n).tolist()
    texts = rng.choice(
        [
            "Memory allocation failed",
            "ACTIVATION MEMORY EXCEEDS LIMIT",
            "memory exceeds lim",
            "İ memory exceeds limit",
            "failed to malloc npu memory",
            "",
            None,
            "memory",
        ],
        size=n,
    ).tolist()
    lines = rng.choice([*range(1, 25), None], size=n).tolist()
    messages = pd.DataFrame(
        {
            "build_index": pd.array(rng.choice([0, 1, None], size=n).tolist(), dtype="Int64"),
            "line": pd.array(lines, dtype="Int64"),
            "category": pd.array(categories, dtype="string"),
            "message": pd.array(texts, dtype="string"),
        }
    )
    log = ParsedLog(source="x.log", kind="rknn", frames={"messages": messages}, line_counts={})
    forget_frames()
    try:
        cols = columns(messages)
        got = sorted_by_line(cols, picked_rows(log, cols))
    finally:
        forget_frames()
    assert got == _alc001_rows_as_pandas(messages)


@pytest.mark.parametrize("storage", ["python", "pyarrow"])
@pytest.mark.parametrize(
    "values",
    [
        pd.array(["Conv", None, "Relu", "Conv", "", "Relu"], dtype="string"),
        pd.array([None, None], dtype="string"),
        pd.array([], dtype="string"),
        pd.array([1, None, 3, 1], dtype="Int64"),
        pd.array([1.5, None, float("nan"), 2.0], dtype="Float64"),
        pd.array([True, None, False], dtype="boolean"),
        pd.array([(1, 2), None, "x"], dtype=object),
    ],
)
def test_listed_and_factorized_are_what_pandas_gives(values, storage):
    """`listed` and `factorized` skip pandas' `tolist`, `take` and `factorize` for Arrow text and masked
    columns: the same cells (types and the missing value included), the same codes and uniques."""
    from logscope.rules._common import factorized, listed

    if isinstance(values.dtype, pd.StringDtype):
        values = values.astype(pd.StringDtype(storage))
    frame = pd.DataFrame({"c": values})
    array = frame["c"].array
    expected = array.tolist()
    assert [type(v) for v in listed(array)] == [type(v) for v in expected]
    assert str(listed(array)) == str(expected)
    assert listed(array, []) == []  # (pandas' own `take([])` fails on Arrow text)
    for positions in ([len(values) - 1, 0, 0], [-1]) if len(values) else ():
        taken = array.take(positions).tolist()
        assert [type(v) for v in listed(array, positions)] == [type(v) for v in taken]
        assert str(listed(array, positions)) == str(taken)
    if values.dtype != object:
        codes, uniques = pd.factorize(array)
        got_codes, got_uniques = factorized(array)
        assert got_codes.dtype == np.int64
        assert got_codes.tolist() == codes.tolist()
        assert str(got_uniques) == str(list(uniques.tolist()))


def test_listed_reads_a_text_column_of_several_chunks():
    parts = [pd.DataFrame({"c": pd.array(v, dtype="string[pyarrow]")}) for v in (["a", None], ["b", "a"])]
    array = pd.concat(parts, ignore_index=True)["c"].array
    from logscope.rules._common import factorized, listed

    assert str(listed(array)) == str(array.tolist())
    assert str(listed(array, [3, 1, 2])) == str(array.take([3, 1, 2]).tolist())
    assert factorized(array)[0].tolist() == [0, -1, 1, 0]
    assert factorized(array)[1] == ["a", "b"]


def test_filled_frame_makes_no_empty_frame():
    from logscope.model import Frames
    from logscope.rules._common import filled_frame

    frames = Frames()
    frames["layers"] = _frame()
    frames.defer("perf")
    log = ParsedLog(source="x.log", kind="rknn-build", frames=frames, line_counts={})
    assert filled_frame(log, "layers") is frames["layers"]
    assert filled_frame(log, "perf") is None
    assert filled_frame(log, "absent") is None
    assert "perf" not in frames.filled() and dict.__getitem__(frames, "perf") is not None
    assert type(dict.__getitem__(frames, "perf")) is not pd.DataFrame  # still pending
    forget_frames()
    plain = ParsedLog(source="x.log", kind="rknn-build", frames={"perf": empty_frame("perf")}, line_counts={})
    assert filled_frame(plain, "perf") is None


@pytest.mark.parametrize("seed", range(4))
def test_short_and_long_arrow_text_read_alike_on_either_side_of_the_cutoffs(seed):
    """A short Arrow text column is encoded with a dict, a long one by Arrow; a few positions are read
    a cell at a time, more with Arrow's `take`: on both sides of each cutoff the codes, uniques and
    cells are pandas' own (missing cells, empty strings and repeats included)."""
    import random

    from logscope.rules._common import _FEW_ROWS_ENCODED, _FEW_TAKEN, factorized, listed

    rng = random.Random(seed)
    for length in (1, 2, _FEW_ROWS_ENCODED - 1, _FEW_ROWS_ENCODED, _FEW_ROWS_ENCODED + 1, 300):
        cells = [rng.choice([None, "", "Conv", "Relu", "é", f"t{rng.randint(0, 9)}"]) for _ in range(length)]
        array = pd.DataFrame({"c": pd.array(cells, dtype="string[pyarrow]")})["c"].array
        codes, uniques = pd.factorize(array)
        got_codes, got_uniques = factorized(array)
        assert got_codes.dtype == np.int64 and got_codes.tolist() == codes.tolist(), length
        assert got_uniques == list(uniques.tolist()), length
        for count in (1, _FEW_TAKEN, _FEW_TAKEN + 1, 40):
            positions = [rng.randrange(length) for _ in range(count)]
            taken = array.take(positions).tolist()
            got = listed(array, positions)
            assert [type(v) for v in got] == [type(v) for v in taken] and str(got) == str(taken), length


def test_mem007_int_cells_are_as_int_of_the_taken_cells():
    """MEM007 reads the Concat rows' build, layer ID and line from the shared int64 values and mask:
    what `as_int` makes of the cells `take` reads (None where missing), with and without missing cells."""
    from logscope.rules._common import as_int
    from logscope.rules.mem007_concat_not_in_place import _int_cells

    frame = pd.DataFrame(
        {"a": pd.array([3, None, 5, 7, None], dtype="Int64"), "b": pd.array([1, 2, 3, 4, 5], dtype="Int64")}
    )
    cols = Columns(frame)
    for name in ("a", "b"):
        for positions in ([4, 0, 2], [2, 3], [1], []):
            expected = [as_int(v) for v in cols.take(name, positions)]
            assert _int_cells(cols, name, np.array(positions, dtype=np.int64)) == expected
