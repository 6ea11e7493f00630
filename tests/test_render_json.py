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
