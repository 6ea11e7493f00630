"""The rows of the `layers` frame, kept as columns and typed once per log.

A layer table's rows are read a run at a time, column by column (`layer_cells.tail_columns`). Zipping
each run into one tuple per row, only for `build_frame` to take the tuples apart again into Arrow
columns, cost about a third of building the frame (a CI build log: 580 rows, 0.2 ms for the tuples).
Here each run's columns are added to the log's columns as they are, and `frame()` types each column
with `frames.build_frame_like_rows`: the way `build_frame` types the columns of rows it does not convert
as one Arrow struct, and the same frame (`frames._arrow_rows`).

tests/test_layer_rows.py compares both on every fixture and on cells of every kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from logscope.frames import SCHEMAS, build_frame_like_rows

_WIDTH = len(SCHEMAS["layers"])


class LayerRows:
    """The `layers` rows read, in line order, as one list per column of the schema (`add`); `frame()` is
    the `layers` frame."""

    __slots__ = ("columns",)

    def __init__(self) -> None:
        self.columns: list[list[Any]] = [[] for _ in range(_WIDTH)]

    def __len__(self) -> int:
        return len(self.columns[0])

    def add(self, columns: Sequence[Iterable[Any]]) -> None:
        """Rows given as one iterable of values per column, in the schema's order, all of one length."""
        count = len(self)
        for column, values in zip(self.columns, columns, strict=True):
            column.extend(values)
        added = len(self) - count
        if any(len(column) != count + added for column in self.columns):
            raise ValueError(f"layers: columns of unequal lengths {[len(c) - count for c in self.columns]}")

    def rows(self) -> list[tuple[Any, ...]]:
        """The rows as tuples in the schema's order (what `build_frame` is given for them)."""
        return list(zip(*self.columns, strict=True))

    def frame(self) -> pd.DataFrame:
        """The `layers` frame of the rows (the empty frame for none)."""
        return build_frame_like_rows("layers", self.columns, len(self))


__all__ = ["LayerRows"]
