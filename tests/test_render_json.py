"""`render_json` writes what `json.dumps(summary, indent=2, ensure_ascii=False)` writes, character for
character: random nested values (the writer's cases: flat and nested containers, empty ones, strings
with line breaks and non-ASCII text, NaN and infinities, values json cannot encode) and real summaries.
`iter_json` (the CLI's stream) gives the same text in pieces, under the same cases."""

from __future__ import annotations

import enum
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import logscope
from logscope.render._json import dumps_indented, iter_indented
from logscope.render.summary import iter_json, render_json

FIXTURES = Path(__file__).parent.parent / "fixtures"

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
    | st.sampled_from(["\n", "[{,\n}]", '"\\', "\u2028", "日本"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)


def _dumps(value: object) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _fast(value: object) -> str:
    try:
        return dumps_indented(value)
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _streamed(value: object) -> str:
    try:
        return "".join(iter_indented(value))
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_random_values_are_written_as_json_dumps_writes_them(value: object) -> None:
    assert _fast(value) == _dumps(value)
    assert _streamed(value) == _dumps(value)


class _Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": [], "b": {}, "c": [[]], "d": [{}]},
        {"code": "X", "line": 3, "lines": [3, 4], "ok": True, "rate": 0.5, "ev": {"a": [{}]}, "h": None},
        {1: "int key", None: "null key"},
        {"nested": {2.5: "float key"}},
        {"enum": _Level.LOW},
        [_Level.LOW],
        {"bytes": b"x"},
        {"set": {1}},
        float("nan"),
        -0.0,
        10**30,
    ],
)
def test_unusual_values(value: object) -> None:
    assert _fast(value) == _dumps(value)
    assert _streamed(value) == _dumps(value)
    assert _streamed([value, {"in": [value]}]) == _dumps([value, {"in": [value]}])  # at each depth


def test_a_circular_value_is_refused_as_json_refuses_it() -> None:
    value: list[object] = []
    value.append(value)
    assert _fast(value) == _dumps(value)
    assert _streamed(value) == _dumps(value)


@pytest.mark.parametrize(
    "name",
    [
        "rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log",
        "rknn/03-perf-detail-cpp-yolov8-1920-rk3588.log",
        "rknn/02-eval-memory-yolov8-1920-rk3588-tk2-1.6.log",
        "mcu/16-espidf-heap-trace-dump-riscv.txt",
    ],
)
def test_summaries_are_written_as_json_dumps_writes_them(name: str) -> None:
    log = logscope.analyze(FIXTURES / name)
    assert render_json([log]) == json.dumps(log.summary(), indent=2, ensure_ascii=False)
    assert render_json([log, log]) == json.dumps([log.summary()] * 2, indent=2, ensure_ascii=False)
    assert "".join(iter_json([log])) == render_json([log])
    assert "".join(iter_json([log, log])) == render_json([log, log])


def test_a_long_list_comes_in_pieces_of_whole_items() -> None:
    """Pieces end between the items of a summary's lists, so none holds the whole text."""
    findings = [
        {"code": "MEM001", "line": n, "lines": [n, n + 1], "evidence": {"rows": [n] * 3}} for n in range(5000)
    ]
    value = {"builds": [], "findings": findings}
    pieces = list(iter_indented(value))
    text = "".join(pieces)
    assert text == json.dumps(value, indent=2, ensure_ascii=False)
    assert len(pieces) > 10 and max(map(len, pieces)) < len(text) / 10
    assert all(piece.endswith("}") for piece in pieces[:-1])  # each ends with a finding


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-3, max_value=10**7), max_size=40) | st.lists(st.integers(0, 20)))
def test_rows_per_build_index_are_counted_as_np_unique_counts_them(indexes: list[int]) -> None:
    """`summary()`'s counts: a bincount for indexes from 0 up, `np.unique` for any other numbering."""
    import numpy as np

    from logscope.model import _index_counts

    array = np.array(indexes, dtype="int64")
    found, sizes = np.unique(array, return_counts=True)
    assert list(_index_counts(array)) == list(zip(found.tolist(), sizes.tolist(), strict=True))


# ------------------------------------------------------------------- the column-by-column writers

_KEYS = st.sampled_from(["a", "b", "lines", "%s", "%(x)s", "ü", ""])
# Dicts of a few shapes (the same keys in the same order, as a summary's findings and builds have).
_ROW_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=3)
        | st.sampled_from([_Level.LOW, {1: "int key"}, {"set": {1}}])
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.dictionaries(_KEYS, _ROW_VALUES, max_size=4), min_size=1, max_size=3),
    st.lists(st.integers(0, 2), max_size=8),
    st.integers(0, 3),
)
def test_dicts_written_column_by_column_are_the_writers_text(
    shapes: list[dict], picks: list[int], depth: int
) -> None:
    """`written_dicts` / `written_column` give each value the text the writer gives it alone at that
    depth (`written_at`), or None when the writer would hand one of them to json.dumps."""
    from logscope.render._json import written_at, written_column, written_dicts

    values = [shapes[pick % len(shapes)] for pick in picks] or shapes
    alone = [written_at(value, depth) for value in values]
    expected = None if None in alone else alone
    assert written_dicts(values, depth) == expected
    assert written_column(values, depth) == expected
    lists = [list(value.values()) for value in values]
    alone = [written_at(value, depth) for value in lists]
    assert written_column(lists, depth) == (None if None in alone else alone)


@settings(max_examples=200, deadline=None)
@given(st.lists(_SCALARS, max_size=20))
def test_scalars_encoded_in_one_call_are_json_texts(values: list) -> None:
    from logscope.render._json import encoded_scalars

    assert encoded_scalars(values) == [json.dumps(v, ensure_ascii=False) for v in values]
    assert encoded_scalars([*values, _Level.LOW]) is None


def test_a_written_value_elsewhere_is_its_value() -> None:
    """A `Written` at another depth than its text's, or inside a value json.dumps writes, is its value."""
    from logscope.render._json import Written

    value = {"a": [1, 2], "b": "x"}
    written = Written("not this", 5, 2, lambda: value)
    assert dumps_indented([written]) == json.dumps([value], indent=2, ensure_ascii=False)
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        dumps_indented([written, {1}])
    assert "".join(iter_indented({"x": [written]})) == json.dumps({"x": [value]}, indent=2)


def _rknn_logs() -> list[Path]:
    return sorted((FIXTURES / "rknn").glob("*.log"))


@pytest.mark.parametrize("path", _rknn_logs(), ids=lambda p: p.name[:24])
def test_every_rknn_summary_is_written_as_json_dumps_writes_it(path: Path) -> None:
    """The builds and findings written column by column (`render.summary._written`) on each fixture."""
    log = logscope.analyze(path)
    assert render_json([log]) == json.dumps(log.summary(), indent=2, ensure_ascii=False)
    assert render_json([log, log]) == json.dumps([log.summary()] * 2, indent=2, ensure_ascii=False)


def test_many_builds_in_one_file_are_written_as_json_dumps_writes_them(tmp_path: Path) -> None:
    """Several builds per file (each with its figure check and four findings), and a build without
    memory rows, perf tables or findings (the tail of [10])."""
    nine = (FIXTURES / "rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log").read_text("utf-8")
    ten = (FIXTURES / "rknn/10-build-tail-init-runtime-rv1106-board-tk2-1.5.2.log").read_text("utf-8")
    path = tmp_path / "many.log"
    path.write_text(nine * 3 + ten + nine, encoding="utf-8")
    log = logscope.analyze(path)
    summary = log.summary()
    assert len(summary["builds"]) >= 4 and len(summary["findings"]) >= 12
    expected = json.dumps(summary, indent=2, ensure_ascii=False)
    assert render_json([log]) == expected
    assert "".join(iter_json([log])) == expected


def test_findings_json_cannot_write_are_left_to_json_dumps() -> None:
    """An evidence value of another type (an IntEnum, a set) makes the findings dicts again: json.dumps
    writes the one (as it always did) and refuses the other with its own message."""
    import dataclasses

    log = logscope.analyze(FIXTURES / "rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log")
    first = log.findings[0]
    log.findings = [dataclasses.replace(first, evidence={"level": _Level.LOW}), *log.findings[1:]]
    assert render_json([log]) == json.dumps(log.summary(), indent=2, ensure_ascii=False)
    log.findings = [dataclasses.replace(first, evidence={"set": {1}}), *log.findings[1:]]
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        render_json([log])


def test_findings_whose_json_form_gains_a_key_are_written_with_it(monkeypatch) -> None:
    """The findings' template follows `Finding.to_dict`: should that gain a key, the findings are written
    from the dicts, the new key included, not from a template without it."""
    from logscope.rules import Finding

    to_dict = Finding.to_dict
    monkeypatch.setattr(Finding, "to_dict", lambda self: to_dict(self) | {"added": 1})
    log = logscope.analyze(FIXTURES / "rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log")
    assert log.findings
    text = render_json([log])
    assert text == json.dumps(log.summary(), indent=2, ensure_ascii=False) and '"added": 1' in text


def test_plain_lists_of_whole_columns_are_the_cells_plain_values() -> None:
    """`summary()` reads integer, boolean, float and Arrow text columns whole: each cell as
    `plain_value` makes it (None for NA and NaN)."""
    import numpy as np
    import pandas as pd

    from logscope.frames import plain_value
    from logscope.model import _plain_list

    columns = [
        pd.Series([1, None, -3, 2**62], dtype="Int64"),
        pd.Series([True, None, False], dtype="boolean"),
        pd.Series(pd.array([1.5, None, np.nan, -0.0, float("inf")], dtype="Float64")),
        pd.Series(["a", None, "ü", ""], dtype="string[pyarrow]"),
        pd.Series(["a", None, 3], dtype=object),
        pd.Series([1.0, np.nan]),
        pd.Series([], dtype="Int64"),
    ]
    for column in columns:
        got = _plain_list(column)
        expected = [plain_value(v) for v in column.tolist()]
        assert got == expected and list(map(type, got)) == list(map(type, expected)), column.dtype


def test_written_builds_and_findings_come_in_pieces_of_whole_items(tmp_path: Path) -> None:
    """The builds and findings written column by column still stream in pieces of some of them."""
    nine = (FIXTURES / "rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log").read_text("utf-8")
    path = tmp_path / "forty.log"
    path.write_text(nine * 40, encoding="utf-8")
    log = logscope.analyze(path)
    pieces = list(iter_json([log]))
    text = "".join(pieces)
    assert text == json.dumps(log.summary(), indent=2, ensure_ascii=False)
    assert len(pieces) > 10 and max(map(len, pieces)) < 64_000  # tens of kilobytes, not the whole
    assert all(piece.endswith("}") for piece in pieces[:-1])  # each ends with a build or a finding
