"""The `layers` frame built from its rows kept as columns (`parsers/rknn/layer_rows.py`,
`frames.build_frame_like_rows`) must be exactly the frame `build_frame` makes of the same rows as tuples:
same values, dtypes and array types, on every fixture and on cells of every kind, and a row that cannot
be built must fail as it does there, naming its line."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import logscope.io
from logscope.api import parse_text
from logscope.frames import SCHEMAS, build_frame, build_frame_like_rows
from logscope.parsers.rknn.layer_rows import LayerRows
from tests.conftest import FIXTURES

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
COMPILER_LOGS = sorted((FIXTURES / "rknn-compiler").rglob("*.log.gz"))[::25]
COLUMNS = tuple(SCHEMAS["layers"])


def same_frame(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fast, slow)
    for column in slow.columns:  # (the same array types, not only equal values)
        assert type(fast[column].array) is type(slow[column].array), column


@pytest.mark.parametrize("path", RKNN_LOGS + COMPILER_LOGS, ids=lambda p: p.name[:40])
def test_every_fixture_builds_as_from_tuples(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = LayerRows.frame

    def checked(self: LayerRows) -> pd.DataFrame:
        frame = real(self)
        same_frame(frame, build_frame("layers", self.rows(), COLUMNS))
        built.append(len(self))
        return frame

    monkeypatch.setattr(LayerRows, "frame", checked)
    log = parse_text(logscope.io.read_log(path))
    assert sum(built) == len(log.frames["layers"])


def _cell(dtype: str, rng: random.Random) -> Any:
    """A value of a column of `dtype`, sometimes missing or at an edge of its type."""
    if rng.random() < 0.2:
        return None
    if dtype == "Int64":
        return rng.choice([0, 7, -3, 2**63 - 1, -(2**63), rng.randint(0, 10**9)])
    if dtype == "Float64":
        return rng.choice([0.0, 675.0, -1.5, float("nan"), float("inf"), 1e300])
    if dtype == "boolean":
        return rng.choice([True, False])
    return rng.choice(["Conv", "", "(1,3,224,224)", "é", "a\\b"])


@pytest.mark.parametrize(
    "count", [1, 3, 256, 257, 700]
)  # (`_typed_array` makes columns of 256 or fewer in numpy)
def test_cells_of_every_kind_build_as_from_tuples(count: int) -> None:
    rng = random.Random(count)
    dtypes = list(SCHEMAS["layers"].values())
    rows = [tuple(_cell(dtype, rng) for dtype in dtypes) for _ in range(count)]
    rows[0] = (None,) * len(dtypes)
    columns = [list(column) for column in zip(*rows, strict=True)]
    columns[COLUMNS.index("mac_usage")] = [None] * count  # a column with no value
    rows = list(zip(*columns, strict=True))
    same_frame(build_frame_like_rows("layers", columns, count), build_frame("layers", rows, COLUMNS))


def test_an_integer_beyond_int64_is_missing_as_from_tuples() -> None:
    rows = [tuple(2**70 if c == "npu_cycles" else (5 if c == "line" else None) for c in COLUMNS)] * 3
    columns = [list(column) for column in zip(*rows, strict=True)]
    frame = build_frame_like_rows("layers", columns, 3)
    assert frame["npu_cycles"].isna().all()
    same_frame(frame, build_frame("layers", rows, COLUMNS))


def test_a_failing_row_is_named_by_its_line() -> None:
    rows = [tuple(10 + n if c == "line" else None for c in COLUMNS) for n in range(6)]
    bad = list(rows[4])
    bad[COLUMNS.index("rw_kb")] = "not a number"
    rows[4] = tuple(bad)
    columns = [list(column) for column in zip(*rows, strict=True)]
    with pytest.raises(Exception) as caught:
        build_frame_like_rows("layers", columns, 6)
    assert caught.value.__dict__.get("logscope_where", {}).get("line") == 14


def test_columns_of_unequal_lengths_are_refused() -> None:
    rows = LayerRows()
    with pytest.raises(ValueError):
        rows.add([[1]] * (len(COLUMNS) - 1) + [[]])
    with pytest.raises(ValueError):
        build_frame_like_rows("layers", [[1]] * len(COLUMNS), 2)
    assert build_frame_like_rows("layers", [[]] * len(COLUMNS), 0).empty
