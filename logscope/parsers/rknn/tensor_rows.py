"""The rows of the `tensors` frame, kept as read and converted column by column once per log.

A table-dense log holds hundreds of thousands of tensor-table rows. Converting each row's cells as it
was read (`int(id)`, three `int(hex, 16)`, the flag, two shape sizes, an 18-value tuple) and then the
tuples into a struct array cost more per row than the regex that read them. Here a run of rows is kept
as the regex gave it (`_TENSOR_FIELDS` cells, `''` or None for an optional cell not there), with its
line numbers and, per run, the build and the table a row without NativeShape or DataFormat belongs to;
`frame()` converts whole columns in Arrow: no Python call per row.

Why the frame is the one `_tuple_rows` (the per-row reading) gives, through `build_frame`:

- **Text cells** go into Arrow as they are; DataFormat, NativeShape and the SRAM hit become missing
  where empty (`''` is what a joined read gives for a cell not there; a cell that is there is never
  empty: the terminal requires a character in each).
- **Integers** are Arrow's casts of the cells: ids are the terminal's `\\d+`, offsets its
  `0x[0-9a-fA-F]+`; on those Arrow reads the same value as `int(cell)` / `int(cell, 16)`, or refuses
  the cell (a non-ASCII digit, a value beyond int64). An offset of more than 15 hex digits is not cast
  (Arrow reads 16 digits with the high bit as a negative number): any of these sends the whole table
  to the per-row reading, which holds such a value as <NA>, as it always did.
- **Shape sizes** are `_shape_bytes` of each distinct (shape, dtype) pair, spread over the rows by
  Arrow's dictionary encoding; the padding is their difference where both are known (both are
  non-negative int64, so it cannot overflow). A size beyond int64 sends the table to the per-row reading.
- **The table** of a row is `feature` when it has a NativeShape or a DataFormat, else the table its
  run was read in (`const` outside a tensor table, and for the minimum-const table's rows).

tests/test_tensor_rows.py builds both on generated, mangled and extreme rows and compares them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from logscope.frames import SCHEMAS, arrow_type, build_frame, build_frame_arrow, empty_frame
from logscope.parsers.rknn.values import _shape_bytes

_COLUMNS = tuple(SCHEMAS["tensors"])
# The cells a row is kept as: `state._TENSOR_FIELDS`, in order.
_CELL_COUNT = 12
_CELLS = pa.struct([(str(i), pa.large_string()) for i in range(_CELL_COUNT)])
_TABLES = pa.array(["const", "feature"], pa.large_string())
# `0x` and at most 15 hex digits: below 2**60, so Arrow's signed reading of 16 digits never applies.
_MAX_HEX_CHARS = 17
_INT = arrow_type("Int64")
_NEWLINE = pa.scalar("\n", pa.large_string())
# What a cell Arrow cannot read raises (a kernel missing, a bug, raises as it is).
_CONVERSION_ERRORS = (pa.ArrowInvalid, OverflowError)


class TensorRows(list[tuple[str | None, ...]]):
    """The cells of every tensor row read, in line order (a list of `_TENSOR_FIELDS` tuples), with their
    line numbers and, per run, the build and table (`add`); `frame()` is the `tensors` frame."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: list[int] = []
        self.runs: list[tuple[int, str, int]] = []  # (build index, table, rows), consecutive runs merged

    def add(
        self, build_index: int, table: str, cells: list[tuple[str | None, ...]], numbers: list[int]
    ) -> None:
        """Rows of build `build_index`; `table` is where a row without NativeShape or DataFormat belongs."""
        self.extend(cells)
        self.numbers.extend(numbers)
        runs = self.runs
        if runs and runs[-1][0] == build_index and runs[-1][1] == table:
            runs[-1] = (build_index, table, runs[-1][2] + len(cells))
        else:
            runs.append((build_index, table, len(cells)))

    def frame(self) -> pd.DataFrame:
        """The `tensors` frame: converted by whole columns, or row by row where a value asks for it."""
        if not self:
            return empty_frame("tensors")
        columns = self._arrow_columns()
        if columns is None:
            return build_frame("tensors", self._tuple_rows(), _COLUMNS)
        return build_frame_arrow("tensors", columns, len(self))

    def _arrow_columns(self) -> list[pa.Array] | None:
        """The frame's columns as Arrow arrays; None when a cell must be read row by row (see the module)."""
        try:
            return self._converted()
        except _CONVERSION_ERRORS:
            return None

    def _converted(self) -> list[pa.Array] | None:
        # All rows at once: converting batches of 2,048 as they were read (to free their cells early:
        # peak memory 373 MB instead of 448 for 300,000 rows, 436 before) cost 0.5-1.5 us a row more.
        try:
            cells = pa.array(self, type=_CELLS)
        except (pa.ArrowException, ValueError, TypeError):  # text Arrow cannot hold (a lone surrogate)
            return None
        ids, users, names, dtypes, formats, origs, natives, starts, flags, ends, sizes, hits = (
            cells.field(i) for i in range(_CELL_COUNT)
        )
        formats, natives, hits = (_missing_if_empty(column) for column in (formats, natives, hits))
        offsets = (starts, ends, sizes)
        if any(_any_longer(column, _MAX_HEX_CHARS) for column in offsets):
            return None
        starts, ends, sizes = (column.cast(_INT) for column in offsets)
        counts = np.array([count for _, _, count in self.runs], dtype=np.int64)
        build_index = pa.array(np.repeat(np.array([b for b, _, _ in self.runs], dtype=np.int64), counts))
        run_feature = np.repeat(np.array([t == "feature" for _, t, _ in self.runs], dtype=bool), counts)
        listed = pc.or_(pc.is_valid(formats), pc.is_valid(natives)).to_numpy(zero_copy_only=False)
        tables = _TABLES.take(pa.array((listed | run_feature).astype(np.int8)))
        logical, native_bytes = _shape_sizes(origs, dtypes), _shape_sizes(natives, dtypes)
        return [
            build_index,
            tables,
            ids.cast(_INT),
            users,
            names,
            dtypes,
            formats,
            origs,
            natives,
            starts,
            ends,
            sizes,
            pc.fill_null(pc.equal(flags, "*"), False),
            hits,
            logical,
            native_bytes,
            pc.subtract(native_bytes, logical),
            pa.array(self.numbers, _INT),
        ]

    def _tuple_rows(self) -> list[tuple[Any, ...]]:
        """The rows one by one, in `_COLUMNS` order (the reading the column conversion is proven against)."""
        builds = [b for b, _, count in self.runs for _ in range(count)]
        tables = [t for _, t, count in self.runs for _ in range(count)]
        rows = []
        for cells, build_index, current, number in zip(self, builds, tables, self.numbers, strict=True):
            id_, user, name, dtype, data_format, orig, native, start, flag, end, size, hit = cells
            data_format, native, hit = data_format or None, native or None, hit or None
            logical, native_bytes = _shape_bytes(orig, dtype), _shape_bytes(native, dtype)
            rows.append(
                (
                    build_index,
                    "feature" if native or data_format else current,
                    None if id_ is None else int(id_),
                    user,
                    name,
                    dtype,
                    data_format,
                    orig,
                    native,
                    *(None if cell is None else int(cell, 16) for cell in (start, end, size)),
                    flag == "*",
                    hit,
                    logical,
                    native_bytes,
                    native_bytes - logical if native_bytes is not None and logical is not None else None,
                    number,
                )
            )
        return rows


def _missing_if_empty(column: pa.Array) -> pa.Array:
    """`column` with its empty strings made missing (those of no byte: a third cheaper than comparing
    each string with `""`)."""
    return pc.if_else(pc.equal(pc.binary_length(column), 0), pa.scalar(None, pa.large_string()), column)


def _any_longer(column: pa.Array, chars: int) -> bool:
    """Whether a string of `column` holds more than `chars` characters. Bytes are counted first, at a
    third of the cost of characters: a string holds no more characters than bytes, so when none holds
    more than `chars` bytes the answer is no; else the characters are counted."""
    if (pc.max(pc.binary_length(column)).as_py() or 0) <= chars:
        return False
    return bool((pc.max(pc.utf8_length(column)).as_py() or 0) > chars)


def _shape_sizes(shapes: pa.Array, dtypes: pa.Array) -> pa.Array:
    """`_shape_bytes(shape, dtype)` of each row, computed once per distinct pair (missing where the shape
    is, or where `_shape_bytes` gives None). Neither a shape nor a dtype holds a newline (cells of one
    line), so the pair joined with one is told apart again by splitting at it."""
    keys = pc.binary_join_element_wise(shapes, dtypes, _NEWLINE).dictionary_encode()
    pairs = (key.partition("\n") for key in keys.dictionary.to_pylist())
    sizes = pa.array([_shape_bytes(shape, dtype) for shape, _, dtype in pairs], _INT)
    return sizes.take(keys.indices)


__all__ = ["TensorRows"]
