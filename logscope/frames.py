"""The only place DataFrames are built: every frame has the columns and dtypes `logscope.schemas`
declares for it (re-exported here as `SCHEMAS`, `INT`, `FLT`, `STR`, `BOOL`, `OBJ`)."""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.api.extensions import ExtensionArray

from logscope.errors import note_where
from logscope.schemas import BOOL, FLT, INT, OBJ, SCHEMAS, STR


def build_frame(
    name: str,
    rows: Iterable[Mapping[str, Any]] | Iterable[tuple[Any, ...]],
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Build frame `name` with exactly the declared columns and dtypes.

    `rows` are dicts keyed by column, or, when `columns` is given, tuples in that column order. Tuples
    are the parsers' hot tables: they are cheaper to build, and are turned into typed arrays column by
    column, which skips pandas' per-cell type inference (3x faster on 140k tensor rows). Columns
    not given are <NA>.
    """
    table: list[Any] = list(rows)
    if not table:
        return empty_frame(name)
    try:
        return _build_frame(name, table, columns)
    except Exception as exc:  # a bug: the internal-error line names the row that cannot be built
        note_where(exc, line=_failing_row_line(name, table, columns))
        raise


def _failing_row_line(name: str, table: list[Any], columns: Sequence[str] | None) -> int | None:
    """The line of a row that fails to build on its own, found by halving `table` (looked for only after
    a failure, in at most twice the work of one build); None when no single row is to blame."""
    at = list(columns).index("line") if columns is not None and "line" in columns else None
    while len(table) > 1:
        half = len(table) // 2
        for part in (table[:half], table[half:]):
            try:
                _build_frame(name, part, columns)
            except Exception:
                table = part
                break
        else:
            return None
    if not table:
        return None
    row = table[0]
    if columns is None:
        line = row.get("line") if isinstance(row, Mapping) else None
    else:  # (a row too short to hold the line is itself the failure: no line to name)
        line = row[at] if at is not None and isinstance(row, Sequence) and at < len(row) else None
    return line if isinstance(line, int) and not isinstance(line, bool) else None


def _build_frame(name: str, table: list[Any], columns: Sequence[str] | None) -> pd.DataFrame:
    schema = SCHEMAS[name]
    length = len(table)
    values: Mapping[str, Sequence[Any]]
    if columns is None:
        # Dict rows straight into one list per column: no tuple per row and no transposed copy, which
        # for a million one-word message lines saved a third of the peak memory and of the time.
        values = {column: [row.get(column) for row in table] for column in schema}
    else:
        converted = _arrow_rows(name, table, columns)
        if converted is not None:
            return _assemble(name, converted, length)
        values = dict(zip(columns, zip(*table, strict=True), strict=True))
    arrays = []
    for column, dtype in schema.items():
        given = values.get(column)
        arrays.append(_missing_array(dtype, length) if given is None else _typed_array(given, dtype))
    return _assemble(name, arrays, length)


def _arrow_rows(name: str, table: list[Any], columns: Sequence[str]) -> list[Any] | None:
    """The typed columns of tuple rows in the schema's own column order, converted by pyarrow as rows
    of one struct array: one pass over the rows in C, where transposing them in Python and converting
    each column cost twice as much (50,000 tensor rows: 45 ms for 70). Each cell goes through the
    converter of its column's type, as in `_typed_array`; None when any cell fails to convert (a wrong
    width, an integer beyond int64, a value of another type): the caller converts column by column."""
    struct = _struct_type(name)
    if struct is None or tuple(columns) != _column_names(name):
        return None
    try:
        rows = pa.array(table, type=struct)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return None
    length = len(table)
    return [_from_arrow(rows.field(i), dtype, length) for i, dtype in enumerate(SCHEMAS[name].values())]


def build_frame_like_rows(name: str, columns: Sequence[Sequence[Any]], length: int) -> pd.DataFrame:
    """The frame `build_frame(name, rows, schema columns)` makes of the rows that `columns` hold (one
    sequence of `length` values per declared column, in the schema's order), for parsers that keep a
    table's rows as columns (`parsers.rknn.layer_rows`): each column typed by `_typed_array`, as
    `build_frame` types the columns of rows it does not convert as one Arrow struct, which gives the
    same frame (`_arrow_rows`). Unlike `build_frame_columns`, every value goes through the same typing
    as in `build_frame` (an integer beyond int64 is <NA>). A build that fails is redone by `build_frame`
    from the rows, which raises naming the line of the row that fails."""
    schema = SCHEMAS[name]
    if len(columns) != len(schema) or any(len(values) != length for values in columns):
        raise ValueError(f"{name}: {len(columns)} columns for {len(schema)} declared, not all of {length}")
    if not length:
        return empty_frame(name)
    try:
        arrays = [_typed_array(values, dtype) for values, dtype in zip(columns, schema.values(), strict=True)]
    except Exception:
        return build_frame(name, list(zip(*columns, strict=True)), tuple(schema))
    return _assemble(name, arrays, length)


def build_frame_arrow(name: str, columns: Sequence[pa.Array], length: int) -> pd.DataFrame:
    """Frame `name` from one Arrow array per declared column, in the schema's order, each of its column's
    Arrow type (`arrow_type`) and of `length` values: typed as `build_frame` types the same values (each
    through `_from_arrow`, as `_arrow_rows` does with the fields of its struct array). For parsers that
    keep a big table's cells as read and convert whole columns at once (`parsers.rknn.tensor_rows`)."""
    schema = SCHEMAS[name]
    if len(columns) != len(schema):
        raise ValueError(f"{name}: {len(columns)} columns for {len(schema)} declared")
    arrays = []
    for column, dtype, values in zip(schema, schema.values(), columns, strict=True):
        if len(values) != length or values.type != _ARROW_TYPES[dtype]:
            raise ValueError(
                f"{name}.{column}: {len(values)} values of {values.type}, not {length} of {dtype}"
            )
        arrays.append(_from_arrow(values, dtype, length))
    return _assemble(name, arrays, length)


def arrow_type(dtype: str) -> pa.DataType:
    """The Arrow type a column of frame dtype `dtype` is converted through (large strings, int64, ...)."""
    return _ARROW_TYPES[dtype]


@functools.cache
def _column_names(name: str) -> tuple[str, ...]:
    return tuple(SCHEMAS[name])


@functools.cache
def _struct_type(name: str) -> pa.StructType | None:
    """The struct of the Arrow types of frame `name`'s columns; None when a column has none (objects)."""
    types = [_ARROW_TYPES.get(dtype) for dtype in SCHEMAS[name].values()]
    if any(t is None for t in types):
        return None
    return pa.struct(list(zip(SCHEMAS[name], types, strict=True)))


def replace_columns(name: str, frame: pd.DataFrame, columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """Frame `name` with the values of `columns` replaced, each typed as `build_frame` types it; the
    other columns are shared with `frame` (pandas copies on write). The same frame as rebuilding every
    row with `build_frame`, at the cost of the columns that change."""
    schema = SCHEMAS[name]
    out = frame.copy(deep=False)
    for column, values in columns.items():
        out[column] = _typed_array(values, schema[column])
    return out


def _assemble(name: str, arrays: list[Any], length: int) -> pd.DataFrame:
    """The frame of `name` from one typed array per declared column, in order.

    `DataFrame(dict)` checks and copies every column again (about 50 us a column, most of the cost of
    the many small frames of a log: 220 frames of 20-40 columns in 20 CI logs); the arrays made here
    are new, one-dimensional, of the declared length and writable (`_writable`), so they are handed to
    pandas as they are: as one block each (`_direct_frame`), or through `DataFrame._from_arrays`."""
    columns = _column_index(name).copy()
    if _DIRECT_BLOCKS:
        made = _direct_frame(arrays, columns, length)
        if made is not None:
            return made
    return pd.DataFrame._from_arrays(  # type: ignore[attr-defined]
        arrays, columns=columns, index=pd.RangeIndex(length), verify_integrity=False
    )


def _direct_frame(arrays: list[Any], columns: pd.Index, length: int) -> pd.DataFrame | None:
    """The frame `DataFrame._from_arrays` makes of `arrays`, made as pandas' block manager holds it: a
    block per column, each in its column's place. `_from_arrays` grouped the arrays by dtype and
    checked them again for every frame, 3-4 us a column, most of the cost of a small frame beside
    typing its cells (a CI log makes about 140 columns). An extension array is a block of its own
    either way; a numpy array (an object column) is too unless another has its dtype, when pandas
    stacks them into one block: None then, and the caller asks pandas (as for a numpy array wrapped in
    an extension array, an object column of missing cells). Used only where `_direct_blocks_work()`
    found the two alike."""
    blocks = []
    dtypes: list[Any] = []
    for position, array in enumerate(arrays):
        if isinstance(array, pd.arrays.NumpyExtensionArray):  # (pandas unwraps it into a numpy block)
            return None
        if isinstance(array, np.ndarray):
            if array.dtype in dtypes or array.dtype.kind in "mMSU":
                return None
            dtypes.append(array.dtype)
            array = array.reshape(1, -1)
        blocks.append(_new_block(array, _BlockPlacement(position)))
    manager = _BlockManager(blocks, [columns, pd.RangeIndex(length)], verify_integrity=False)
    return pd.DataFrame._from_mgr(manager, axes=manager.axes)  # type: ignore[attr-defined]


@functools.cache
def _column_index(name: str) -> pd.Index:
    return pd.Index(list(SCHEMAS[name]))


def _block_api() -> tuple[Any, Any, Any] | None:
    """pandas' block constructor, block placement and block manager, or None for a pandas without them."""
    try:
        from pandas._libs.internals import BlockPlacement
        from pandas.core.internals.blocks import new_block_2d
        from pandas.core.internals.managers import BlockManager
    except ImportError:
        return None
    return new_block_2d, BlockPlacement, BlockManager


_BLOCK_API = _block_api()
_new_block, _BlockPlacement, _BlockManager = cast(tuple[Any, Any, Any], _BLOCK_API or (None, None, None))


_INT64 = (-(2**63), 2**63 - 1)
_ARROW_TYPES = {STR: pa.large_string(), INT: pa.int64(), FLT: pa.float64(), BOOL: pa.bool_()}
_MASKED: dict[str, Any] = {
    INT: pd.arrays.IntegerArray,
    FLT: pd.arrays.FloatingArray,
    BOOL: pd.arrays.BooleanArray,
}
_NUMPY_TYPES = {INT: np.int64, FLT: np.float64, BOOL: np.bool_}
_STRING_DTYPE: Any = pd.api.types.pandas_dtype(STR)


def _wraps_arrow_strings() -> bool:
    """Whether the declared string dtype is arrow-backed (pandas' default string storage when pyarrow
    is installed): its arrays then wrap the arrow array as it is; another storage goes through
    pd.array."""
    if _STRING_DTYPE.construct_array_type() is not getattr(pd.arrays, "ArrowStringArray", None):
        return False
    try:
        sample = pd.arrays.ArrowStringArray(pa.array(["x"], type=pa.large_string()))
    except (TypeError, ValueError):  # an older pandas that wants another arrow type
        return False
    return bool(sample.dtype == _STRING_DTYPE)


_ARROW_STRINGS = _wraps_arrow_strings()


def _typed_array(values: Sequence[Any], dtype: str) -> Any:
    """One typed column. An integer beyond int64 (only fuzzed or corrupted input has one: a 17-digit
    hex offset) becomes <NA> rather than failing the whole parse; its row keeps its line number. Any
    other value an integer column cannot hold raises.

    A column with no value at all (most columns of most small frames) is made without converting
    anything; a masked column without a missing value skips filling and the null mask. Whether a
    column has a missing value is read from Arrow's null count after the conversion: counting the
    None cells first (a Python comparison per cell) cost as much as converting them."""
    arrow_type = _ARROW_TYPES.get(dtype)
    length = len(values)
    if arrow_type is not None and length:
        if _all_none(values):
            return _missing_array(dtype, length)
        if length <= _SMALL and dtype in _MASKED and isinstance(values, list | tuple):
            small = _small_masked(values, dtype)
            if small is not None:
                return small
        # pyarrow's conversion of a list with None is 3-5x faster than pandas' per-element path.
        try:
            column = pa.array(values, type=arrow_type)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            pass  # out of range or of another type: pandas converts it below, or says why not
        else:
            return _from_arrow(column, dtype, length)
    if dtype == OBJ:
        return _object_array(values)
    values = list(values)
    try:
        return pd.array(values, dtype=dtype)  # type: ignore[call-overload]
    except (OverflowError, TypeError, ValueError):
        # Only an integer beyond int64 becomes <NA>; a cell of another type is a parser's bug, raised
        # (and its row's line named) rather than lost as <NA>.
        if dtype != INT or not all(v is None or isinstance(v, numbers.Integral) for v in values):
            raise
        low, high = _INT64
        fitted = [None if v is None or not low <= v <= high else int(v) for v in values]
        return pd.array(fitted, dtype=dtype)  # type: ignore[call-overload]


# Up to this many cells, a masked column of plain Python values is made in numpy (`_small_masked`):
# `pa.array` costs more below it (an integer column of 128 cells: 30 us against 48, of 512: 83-100
# against 72-79).
_SMALL = 256
_EXACT_TYPES: dict[str, type] = {INT: int, FLT: float, BOOL: bool}
_ZEROS: dict[str, Any] = {INT: 0, FLT: 0.0, BOOL: False}


def _small_masked(values: list[Any] | tuple[Any, ...], dtype: str) -> Any:
    """The masked array `_typed_array` makes of a short column whose cells are all None or of the
    dtype's own Python type (`int`, `float`, `bool`, no subclass, no numpy scalar), made in numpy: what
    Arrow makes of them, the value where given and 0 (0.0, False) under the mask. `pa.array` costs 5-6
    us a call whatever the length, and a log's small frames (a row per build, a few fusions) make about
    a hundred such columns. None for any other cell, or an integer beyond int64: the caller's path."""
    exact, zero = _EXACT_TYPES[dtype], _ZEROS[dtype]
    data, mask = [], []
    for value in values:
        if value is None:
            data.append(zero)
            mask.append(True)
        elif type(value) is exact:
            data.append(value)
            mask.append(False)
        else:
            return None
    try:
        array: np.ndarray = np.array(data, dtype=_NUMPY_TYPES[dtype])
    except OverflowError:
        return None
    return _masked_array(dtype, array, np.array(mask, dtype=bool))


def _from_arrow(column: pa.Array, dtype: str, length: int) -> Any:
    """The pandas array of `dtype` on an Arrow array of its type (`_ARROW_TYPES`) of `length` values."""
    nulls = column.null_count
    if nulls == length:  # pd.NA or NaN cells only: the same <NA> column
        return _missing_array(dtype, length)
    if dtype == STR:
        if _ARROW_STRINGS:
            return _string_array(column)
        return pd.array(column, dtype=STR)
    if nulls:
        data = column.fill_null(False if dtype == BOOL else 0).to_numpy(zero_copy_only=False)
        mask = column.is_null().to_numpy(zero_copy_only=False)
    else:
        data = column.to_numpy(zero_copy_only=False)
        mask = np.zeros(length, dtype=bool)
    return _masked_array(dtype, _writable(data), _writable(mask))


def _string_array(column: pa.Array) -> Any:
    """`pd.arrays.ArrowStringArray(column)` of a large-string Arrow array, made as pandas makes the
    results of its own string operations (`_from_pyarrow_array` of an existing array: no type checks,
    no Arrow dtype made and dropped), which costs a quarter of the constructor's 4 us. Used only where
    `_fast_strings_work()` found both alike."""
    if _FAST_STRINGS:
        return _STRING_TEMPLATE._from_pyarrow_array(column)
    return pd.arrays.ArrowStringArray(column)


def _object_array(values: Sequence[Any]) -> np.ndarray:
    """A column of Python objects (lists, dicts) as they are: one object per cell, never a row of a 2-D
    array (`pd.array` on a list of lists costs 20 us a column to find that out)."""
    array = np.empty(len(values), dtype=object)
    for position, value in enumerate(values):
        array[position] = value
    return array


def _masked_array(dtype: str, data: np.ndarray, mask: np.ndarray) -> Any:
    """The masked pandas array of `dtype` on `data` and `mask` (1-D, of one length, of the numpy type
    of `dtype`: made here). `_simple_new` skips the checks of the public constructor (1 us of the
    2-5 us a small column costs); a pandas without it gets the public one."""
    masked = _MASKED[dtype]
    if _SIMPLE_NEW:
        return masked._simple_new(data, mask)
    return masked(data, mask)


def _simple_new_works() -> bool:
    """Whether the masked arrays' private `_simple_new(values, mask)` builds the same array as their
    constructor (checked once per process, on one array of each dtype)."""
    samples: tuple[tuple[str, list[Any]], ...] = ((INT, [3, 0]), (FLT, [0.5, 0.0]), (BOOL, [True, False]))
    for dtype, values in samples:
        masked = _MASKED[dtype]
        data: np.ndarray = np.array(values, dtype=_NUMPY_TYPES[dtype])
        mask: np.ndarray = np.array([False, True])
        try:
            made = masked._simple_new(data.copy(), mask.copy())
        except (AttributeError, TypeError):
            return False
        expected = masked(data.copy(), mask.copy())
        if (
            type(made) is not type(expected)
            or made.dtype != expected.dtype
            or made.tolist() != expected.tolist()
        ):
            return False
    return True


_SIMPLE_NEW = _simple_new_works()


def _fast_strings_work() -> bool:
    """Whether `_from_pyarrow_array` makes the array the constructor makes (checked once per process)."""
    if not _ARROW_STRINGS or not callable(getattr(pd.arrays.ArrowStringArray, "_from_pyarrow_array", None)):
        return False
    for sample in (pa.array(["x", None, ""], pa.large_string()), pa.nulls(2, pa.large_string())):
        try:
            made = _STRING_TEMPLATE._from_pyarrow_array(sample)
        except (AssertionError, AttributeError, TypeError, ValueError):
            return False
        expected = pd.arrays.ArrowStringArray(sample)
        if (
            type(made) is not type(expected)
            or made.dtype != expected.dtype
            or vars(made).keys() != vars(expected).keys()
            or not made._pa_array.equals(expected._pa_array)  # type: ignore[attr-defined]
            or made.tolist() != expected.tolist()
        ):
            return False
    return True


_STRING_TEMPLATE: Any = (
    pd.arrays.ArrowStringArray(pa.array([], pa.large_string())) if _ARROW_STRINGS else None
)
_FAST_STRINGS = _fast_strings_work()


def _direct_blocks_work() -> bool:
    """Whether `_direct_frame` makes the frame `DataFrame._from_arrays` makes, block for block (checked
    once per process, on a frame of every kind of column: masked, string, object, all-missing)."""
    if _BLOCK_API is None:
        return False
    names = ["i", "f", "b", "s", "o", "n"]

    def arrays() -> list[Any]:
        return [
            _typed_array([1, None], INT),
            _typed_array([0.5, None], FLT),
            _typed_array([True, None], BOOL),
            _typed_array(["x", None], STR),
            _object_array([{"a": 1}, None]),
            _missing_array(STR, 2),
        ]

    try:
        made = _direct_frame(arrays(), pd.Index(names), 2)
    except (AttributeError, TypeError, ValueError, AssertionError):
        return False
    expected = pd.DataFrame._from_arrays(  # type: ignore[attr-defined]
        arrays(), columns=pd.Index(names), index=pd.RangeIndex(2), verify_integrity=False
    )
    if made is None or type(made) is not type(expected) or not made.dtypes.equals(expected.dtypes):
        return False
    blocks, wanted = made._mgr.blocks, expected._mgr.blocks
    return (
        made.columns.equals(expected.columns)
        and made.index.equals(expected.index)
        and made.equals(expected)
        and len(blocks) == len(wanted)
        and all(
            type(a) is type(b) and a.shape == b.shape and list(a.mgr_locs) == list(b.mgr_locs)
            for a, b in zip(_by_place(blocks), _by_place(wanted), strict=True)
        )
        and made.to_dict("list") == expected.to_dict("list")
    )


def _all_none(values: Sequence[Any]) -> bool:
    """Whether every value is None (`count` runs in C; a value that cannot be compared with None, such
    as pd.NA, is not None). A column whose first value is there is not counted: counting a full column
    costs 10-15 ns a cell, counting one of None (identity) less than 1."""
    if not isinstance(values, list | tuple) or values[0] is not None:
        return False
    try:
        return values.count(None) == len(values)
    except TypeError:
        return False


def _writable(array: np.ndarray) -> np.ndarray:
    """Arrow's buffers come out read-only; the frame owns its columns (pandas copied them before)."""
    return array if array.flags.writeable else array.copy()


def _missing_array(dtype: str, length: int) -> Any:
    """A column of `length` <NA> of `dtype`, as `_typed_array` makes one from a list of None."""
    if dtype in _MASKED:
        return _masked_array(dtype, np.zeros(length, dtype=_NUMPY_TYPES[dtype]), np.ones(length, dtype=bool))
    if dtype == STR and _ARROW_STRINGS:
        return _string_array(pa.nulls(length, pa.large_string()))
    return pd.array([None] * length, dtype=dtype)  # type: ignore[call-overload]


def plain_value(value: Any) -> Any:
    """A frame cell as a plain Python value (for JSON and messages): NA and NaN become None."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def column_array(frame: pd.DataFrame, name: str) -> Any:
    """`frame[name].array` (an extension array, `NumpyExtensionArray` for an object column); None when
    the frame has no such column. Read from the frame's block manager when pandas offers it: a few µs,
    where building the Series costs tens, and the rules and the audit's store read about a hundred
    columns per log. The same array either way; where the block manager has no `iget_values` (another
    pandas), the public `frame[name].array`."""
    try:
        loc = frame.columns.get_loc(name)
    except KeyError:
        return None
    iget_values = getattr(getattr(frame, "_mgr", None), "iget_values", None)
    if type(loc) is int and iget_values is not None:
        values = iget_values(loc)
        if isinstance(values, ExtensionArray):
            return values
        if isinstance(values, np.ndarray) and values.ndim == 1:
            return pd.arrays.NumpyExtensionArray(values)
    return frame[name].array


def empty_frame(name: str) -> pd.DataFrame:
    """A frame with the declared columns and no rows (a copy: callers may add to it).

    A shallow copy: pandas copies on write, so changing the copy never reaches the cached frame, and
    the copy costs no new column arrays (a log makes about 30 empty frames)."""
    return _empty_frame(name).copy(deep=False)


@functools.cache
def _empty_frame(name: str) -> pd.DataFrame:
    # Most logs fill a handful of the ~40 frames; building the others from scratch for every parse
    # took half the time of parsing a small log (0.6 of 1.4 s for 20 parses of [04]).
    # One empty typed array per dtype serves every column of that dtype (a process built ~500 before).
    schema = SCHEMAS[name]
    return pd.DataFrame({c: _empty_array(dtype) for c, dtype in schema.items()}, columns=list(schema))


@functools.cache
def _empty_array(dtype: str) -> Any:
    return _typed_array([], dtype)


def _by_place(blocks: Sequence[Any]) -> list[Any]:
    return sorted(blocks, key=lambda block: block.mgr_locs[0])


_DIRECT_BLOCKS = _direct_blocks_work()


def build_frame_columns(name: str, columns: Mapping[str, Sequence[Any]], length: int) -> pd.DataFrame:
    """Build frame `name` from whole columns (a million-op trace), missing columns <NA>.

    The per-cell costs of `build_frame` are avoided column by column (MCU traces, runs of plain
    messages): an integer or boolean column may come as a numpy array without a missing value and is
    wrapped as it is; integer lists without a missing value go through numpy in one step; text columns
    go through pyarrow (3-4x faster than factorising when the values are distinct); all-missing columns
    are made directly.
    """
    schema = SCHEMAS[name]
    arrays = []
    no_mask = np.zeros(length, dtype=bool)
    for column, dtype in schema.items():
        values = columns.get(column)
        if values is None:
            arrays.append(_missing_array(dtype, length))
        elif isinstance(values, np.ndarray) and dtype in (INT, BOOL):
            masked = pd.arrays.IntegerArray if dtype == INT else pd.arrays.BooleanArray
            arrays.append(masked(values, no_mask.copy()))
        elif dtype == INT and None not in values:
            arrays.append(
                pd.arrays.IntegerArray(np.fromiter(values, dtype=np.int64, count=length), no_mask.copy())
            )
        else:
            arrays.append(_typed_array(list(values), dtype))
    return _assemble(name, arrays, length)
