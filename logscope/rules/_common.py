"""Small helpers shared by rule modules: plain values, byte formatting, shapes, message lookups, and
the per-frame `Columns` every rule reads its frames through.

Rules may not import `logscope.render` (layering), so the byte formatter lives here too.

Why `Columns`: two dozen rules read the same few frames of every log. Asked of pandas per rule and per
build (masks, groupby, sort, itertuples), that cost more than parsing a CI build log; converted once
per frame (lists, numpy arrays, codes of distinct strings, the split by build) and shared, it costs a
few milliseconds. The engine empties these caches before and after each run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import field
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from logscope.analysis.pool import int_values, masked_parts
from logscope.frames import column_array, plain_value
from logscope.model import Frames, ParsedLog
from logscope.units import human_bytes

MiB = 1024 * 1024
KiB = 1024


plain = plain_value  # one definition, in logscope.frames


# The `type(...) is` tests return the cells `tolist()` and `itertuples()` give most often as they are
# (what `plain` then `int`/`str` would return for them too): rules call these per row.


def as_int(value: Any) -> int | None:
    if type(value) is int:
        return value
    value = plain(value)
    return None if value is None else int(value)


def as_float(value: Any) -> float | None:
    if type(value) is float and value == value:  # NaN is missing
        return value
    value = plain(value)
    return None if value is None else float(value)


def as_str(value: Any) -> str | None:
    if type(value) is str:
        return value
    value = plain(value)
    return None if value is None else str(value)


def fmt_bytes(value: int | None) -> str:
    return human_bytes(value, missing="unknown")


def pct(value: float | None, digits: int = 1) -> str:
    return "unknown" if value is None else f"{value * 100:.{digits}f}%"


_SHAPE = re.compile(r"^\(\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\)$")


def parse_shape(text: Any) -> tuple[int, ...] | None:
    """`"(1,32,112,112)"` -> `(1, 32, 112, 112)`; anything else (NA, `\\`, `...`) -> None."""
    text = as_str(text)
    if text is None:
        return None
    match = _SHAPE.match(text.strip())
    if not match:
        return None
    return tuple(int(part) for part in match.group(1).split(","))


def build_indices(*frames: pd.DataFrame) -> list[int | None]:
    """Sorted build indices present in any of `frames` (None for rows outside a build)."""
    seen: set[int | None] = set()
    for frame in frames:
        if "build_index" in frame.columns:
            seen.update(as_int(v) for v in frame["build_index"].unique())
    return sorted(seen, key=build_order)


def rows_of_build(frame: pd.DataFrame, build_index: int | None) -> pd.DataFrame:
    """`frame`'s rows of `build_index` (None: rows outside any build), in frame order.

    Rules ask this once per build; a log with hundreds of builds would filter the whole frame each
    time, so the frame is split by build once and the split kept while the same frame object is asked
    for (the last few frames only: no growth over an audit).
    """
    split = _split(frame)
    rows = split.get(build_index)
    return frame.iloc[0:0] if rows is None else rows


_SPLITS: list[tuple[pd.DataFrame, dict[int | None, pd.DataFrame]]] = []


def _split(frame: pd.DataFrame) -> dict[int | None, pd.DataFrame]:
    for cached, split in _SPLITS:
        if cached is frame:
            return split
    split = {}
    if len(frame):
        for key, rows in frame.groupby("build_index", sort=False, dropna=False):
            split[as_int(key)] = rows
    _SPLITS.insert(0, (frame, split))
    del _SPLITS[8:]
    return split


def messages_in(log: ParsedLog, categories: Iterable[str]) -> pd.DataFrame:
    """The `messages` rows whose category is one of `categories`, in line order.

    A dozen rules ask this of one log, most for categories it does not have: the rows of each category
    are listed once per `messages` frame (the last few frames are kept), so a question costs a lookup.
    """
    messages = log.frames["messages"]
    by_category = _categories(messages)
    positions = sorted(p for c in set(categories) for p in by_category.get(c, ()))
    if not positions:
        return messages.iloc[0:0]
    return messages.iloc[positions].sort_values("line")


_CATEGORIES: list[tuple[pd.DataFrame, dict[str, list[int]]]] = []


def _categories(messages: pd.DataFrame) -> dict[str, list[int]]:
    for cached, known in _CATEGORIES:
        if cached is messages:
            return known
    # A log has a handful of categories over up to 100,000 messages: one comparison of the codes per
    # category, not a Python step per message (4.7 -> 0.5 ms on a 20 MB log).
    codes, values = columns(messages).codes("category")
    index = {
        category: np.flatnonzero(codes == code).tolist()
        for code, category in enumerate(values)
        if type(category) is str
    }
    _CATEGORIES.insert(0, (messages, index))
    del _CATEGORIES[4:]
    return index


def build_slices(codes: np.ndarray, n_builds: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, bounds) of some rows' build codes (`Columns.build_codes`): `order` sorts `codes` stably,
    and the rows of build code c are `order[bounds[c] : bounds[c + 1]]`, in the order they were given.
    One sort and one binary search for every build at once, where a mask per build would read every
    row once per build."""
    order = np.argsort(codes, kind="stable")
    return order, np.searchsorted(codes[order], np.arange(n_builds + 1))


def build_order(build_index: int | None) -> tuple[bool, int]:
    """The sort key of build indexes: ascending, rows outside any build (None) last."""
    return (build_index is None, build_index or 0)


_FEW_ROWS = 4
# From this many rows `Columns.containing` searches an Arrow-backed column with Arrow (`_matching`).
ARROW_SEARCH_ROWS = 4096


class Columns:
    """One frame as plain Python lists, shared by every rule that reads it during one engine run.

    Why: a typical log has a few hundred layers and a thousand tensors, and each pandas call (a mask,
    a groupby, a sort, `itertuples`) costs tens of microseconds whatever the size; two dozen rules
    asking pandas per rule and per build cost more than parsing the log. A column is converted once
    (`Series.tolist()`: ints, strs, floats, bools, `pd.NA` for missing) and rules loop over lists.
    Positions are row positions in the frame (`frame.iloc[p]`).
    """

    __slots__ = (
        "_arrays",
        "_build_codes",
        "_builds",
        "_by_line",
        "_codes",
        "_ints",
        "_missing",
        "_ordered",
        "_texts",
        "_values",
        "frame",
    )

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._values: dict[str, list[Any]] = {}
        self._arrays: dict[str, Any] = {}
        self._codes: dict[str, tuple[np.ndarray, list[Any]]] = {}
        self._builds: dict[int | None, list[int]] | None = None
        self._by_line: dict[int | None, list[int]] | None = None
        self._build_codes: tuple[np.ndarray, list[int | None]] | None = None
        self._ordered: np.ndarray | None = None
        self._ints: dict[tuple[str, int], np.ndarray] = {}
        self._missing: dict[str, np.ndarray] = {}
        self._texts: dict[tuple[str, bool], tuple[str, np.ndarray] | None] = {}

    def __len__(self) -> int:
        return len(self.frame)

    def __getitem__(self, name: str) -> list[Any]:
        values = self._values.get(name)
        if values is None:
            values = self._values[name] = listed(self.array(name))
        return values

    def array(self, name: str) -> Any:
        """The column's array (`Series.array`), got from the frame once: each `frame[name]` builds a
        Series, tens of µs that two dozen rules asking for the same columns would pay again."""
        made = self._arrays.get(name)
        if made is None:
            made = column_array(self.frame, name)
            if made is None:
                raise KeyError(name)
            self._arrays[name] = made
        return made

    def take(self, name: str, positions: Iterable[int]) -> list[Any]:
        """The cells of column `name` at `positions`, as `tolist()` gives them: a few rows of a long
        column without converting all of it."""
        values = self._values.get(name)
        if values is not None:
            return [values[p] for p in positions]
        return listed(self.array(name), list(positions))

    def pick(self, positions: list[int], names: Iterable[str]) -> list[SimpleNamespace]:
        """The rows at `positions` with the columns `names` as attributes (like `itertuples()` rows):
        the few rows a finding cites, one read per column."""
        names = tuple(names)
        cells = [self.take(name, positions) for name in names] if positions else []
        return [SimpleNamespace(**dict(zip(names, row, strict=True))) for row in zip(*cells, strict=True)]

    def flags(self, name: str, test: Callable[[Any], bool]) -> np.ndarray:
        """`test` of each row's value of a column as a bool array (False for a missing cell), asked
        once per distinct value."""
        codes, values = self.codes(name)
        return np.array([bool(test(v)) for v in values] + [False], dtype=bool)[codes]

    def codes(self, name: str) -> tuple[np.ndarray, list[Any]]:
        """(code of each row, distinct values) of a column: row p holds `values[codes[p]]`, a missing
        cell has code -1. A string column has a handful of distinct values over thousands of rows, so
        a rule decides per value and spreads the answer with numpy instead of testing every row."""
        made = self._codes.get(name)
        if made is None:
            made = self._codes[name] = factorized(self.array(name))
        return made

    def ints(self, name: str, missing: int = 0) -> np.ndarray:
        """An integer column as int64, a missing cell as `missing` (see `missing`)."""
        key = (name, missing)
        made = self._ints.get(key)
        if made is None:
            made = self._ints[key] = int_values(self.array(name), missing)
        return made

    def missing(self, name: str) -> np.ndarray:
        made = self._missing.get(name)
        if made is None:
            made = self._missing[name] = np.asarray(self.array(name).isna(), dtype=bool)
        return made

    def containing(self, name: str, needles: Iterable[str], *, lower: bool = False) -> list[int]:
        """Positions, ascending, of the rows whose cell of text column `name` is a str holding one of
        `needles` (with `lower`: a needle, given in lower case, in `cell.lower()`); a missing cell holds
        nothing.

        Why: a rule that tests a regex on every message pays a Python call per row, and a big log has
        100,000 messages of which a handful can match. A literal every match must contain is searched
        for instead, by `str.find` over the column joined once per log, and the rule runs its regex on
        the rows found only. The cells are joined with `\n` and a needle holds no `\n`, so an
        occurrence lies inside one cell; a cell is found once however often it holds a needle. When
        `lower()` changes the text's length (U+0130 lowers to two characters) the offsets would no
        longer map to rows, and every cell is tested on its own.
        """
        needles = tuple(needles)
        matched = self._matching(name, needles, lower)
        if matched is not None:
            return matched
        joined = self._joined(name, lower)
        if joined is None or any("\n" in needle or not needle for needle in needles):
            cells = self[name]
            return [
                p
                for p, cell in enumerate(cells)
                if type(cell) is str and any(n in (cell.lower() if lower else cell) for n in needles)
            ]
        text, starts = joined
        found: set[int] = set()
        for needle in needles:
            at = text.find(needle)
            while at >= 0:
                row = int(np.searchsorted(starts, at, side="right")) - 1
                found.add(row)
                at = text.find(needle, int(starts[row + 1]))  # the next cell: one hit per cell is enough
        return sorted(found)

    def _matching(self, name: str, needles: tuple[str, ...], lower: bool) -> list[int] | None:
        """`containing` for a long Arrow-backed text column: one pass of Arrow's substring search (RE2,
        the needles quoted as literals) over the column as it is, where the joined search first
        converts every cell to a Python string, joins them (and lowers the join). None when it does
        not apply: a short column (a CI log's dozen messages: compiling the pattern costs more), a
        needle RE2 cannot quote, or, with `lower`, a needle not in lower-case ASCII or a column with
        other than ASCII text (there Python's `lower` and RE2's case folding differ, e.g. U+0130, U+017F;
        on ASCII text `needle in cell.lower()` is a case-insensitive match of the needle)."""
        if len(self.frame) < ARROW_SEARCH_ROWS or not needles:
            return None
        if any(not n or "\\" in n or (lower and not (n.isascii() and n == n.lower())) for n in needles):
            return None
        text = _arrow_text(self.array(name))
        if text is None or (lower and pc.any(pc.invert(pc.string_is_ascii(text))).as_py()):
            return None
        pattern = "|".join(f"\\Q{needle}\\E" for needle in needles)
        hits = pc.fill_null(pc.match_substring_regex(text, pattern, ignore_case=lower), False)
        return np.flatnonzero(np.asarray(hits.to_numpy(zero_copy_only=False), dtype=bool)).tolist()

    def _joined(self, name: str, lower: bool) -> tuple[str, np.ndarray] | None:
        """(the column's str cells joined with `\n`, lowered if asked; the offset where each cell
        starts, then one past the end), or None when lowering changed the length."""
        key = (name, lower)
        if key not in self._texts:
            if lower:
                joined = self._joined(name, False)
                assert joined is not None  # the text as it is always maps to rows
                lowered = joined[0].lower()
                self._texts[key] = (lowered, joined[1]) if len(lowered) == len(joined[0]) else None
            else:
                cells = self[name]
                if self.missing(name).any():
                    cells = [cell if type(cell) is str else "" for cell in cells]
                text = "\n".join(cells)
                starts = np.zeros(len(cells) + 1, dtype=np.int64)
                np.cumsum(np.fromiter(map(len, cells), dtype=np.int64, count=len(cells)) + 1, out=starts[1:])
                self._texts[key] = (text, starts)
        return self._texts[key]

    def build_codes(self) -> tuple[np.ndarray, list[int | None]]:
        """(build code of each row, build of each code): codes count up in build order, rows outside
        any build (None) last, the order `builds()` and `grouped` use."""
        if self._build_codes is None:
            values, missing = self.ints("build_index"), self.missing("build_index")
            if len(values) and not missing.any() and (values == values[0]).all():  # one build
                self._build_codes = (np.zeros(len(values), dtype=np.int64), [int(values[0])])
            else:  # builds in order, rows outside any build (None) last
                present = np.unique(values[~missing])
                codes = np.searchsorted(present, values).astype(np.int64)
                keys: list[int | None] = [int(v) for v in present.tolist()]
                if missing.any():
                    codes[missing] = len(keys)
                    keys.append(None)
                self._build_codes = (codes, keys)
        return self._build_codes

    def ordered(self) -> np.ndarray:
        """Every row position by build (`build_codes` order), then line (stable; rows without a line
        last in their build): `by_line()` as one array."""
        if self._ordered is None:
            codes, _ = self.build_codes()
            self._ordered = np.lexsort((self.ints("line"), self.missing("line"), codes))
        return self._ordered

    def cell(self, name: str, position: int) -> Any:
        """`self[name][position]`; on a frame of a few rows (`memory`, `builds` of a one-build log)
        the one cell is read without converting its column (a few µs against a dozen)."""
        values = self._values.get(name)
        if values is not None:
            return values[position]
        if len(self.frame) > _FEW_ROWS:
            return self[name][position]
        loc = self.frame.columns.get_loc(name)
        if type(loc) is not int:  # a duplicated column name: the column's list has the cells
            return self[name][position]
        value = self.frame.iat[position, loc]
        return value.item() if isinstance(value, np.generic) else value  # as tolist() gives it

    def get(self, name: str, position: int) -> Any:
        """The cell at `position` of column `name`, None when the frame has no such column."""
        return self.cell(name, position) if name in self.frame.columns else None

    def line_order(self) -> list[int]:
        """Every row position in line order (stable; rows without a line last)."""
        lines = self["line"]
        return in_line_order(list(range(len(lines))), lines)

    def builds(self) -> dict[int | None, list[int]]:
        """Row positions of each build in frame order; builds in build order, rows outside any build
        (None) last: the order `grouped` yields."""
        if self._builds is None:
            split: dict[int | None, list[int]] = {}
            for position, value in enumerate(self["build_index"]):
                key = value if type(value) is int else as_int(value)
                rows = split.get(key)
                if rows is None:
                    split[key] = [position]
                else:
                    rows.append(position)
            self._builds = {k: split[k] for k in sorted(split, key=build_order)}
        return self._builds

    def by_line(self) -> dict[int | None, list[int]]:
        """`builds()` with each build's positions in line order (stable: equal lines keep frame order)."""
        if self._by_line is None:
            lines = self["line"]
            self._by_line = {build: in_line_order(rows, lines) for build, rows in self.builds().items()}
        return self._by_line


def _arrow_text(array: Any) -> pa.Array | None:
    """The Arrow array of an Arrow-backed text column (its chunks joined: a frame made by `concat` has
    several), None for any other array."""
    dtype = array.dtype
    if not isinstance(dtype, pd.StringDtype) or dtype.storage != "pyarrow":
        return None
    text = pa.array(array)
    return text.combine_chunks() if isinstance(text, pa.ChunkedArray) else text


# Up to this many positions `listed` reads an Arrow text column's cells one by one; up to this many
# rows `factorized` encodes one with a dict.
_FEW_TAKEN = 8
_FEW_ROWS_ENCODED = 64


def listed(array: Any, positions: list[int] | None = None) -> list[Any]:
    """`array.tolist()`, or `array.take(positions).tolist()`: the cells as Python values, the dtype's
    missing value (`pd.NA`) where missing, as pandas gives them.

    Why not pandas: `tolist` and `take` on an Arrow-backed text column or a masked numeric one go
    through `to_numpy` and its warning filters, 10-60 µs a call whatever the length, and the rules read
    about 30 columns of every log. Text is read by Arrow (`to_pylist`, None as the missing value),
    masked columns from their values and mask (`logscope.analysis.pool`'s reader, which checks their
    layout), an object column from its numpy array (pandas' `tolist` boxes its cells one call each, 20 ms
    for the messages of a 20 MB log); any other array, or a negative position, takes pandas' own path
    (tests compare the two on every dtype)."""
    if positions is not None and positions and min(positions) < 0:
        return array.take(positions).tolist()
    text = _arrow_text(array)
    if text is not None:
        if positions is not None and len(positions) <= _FEW_TAKEN:
            # (a cell at a time: Arrow's `take` costs 15-20 µs a call, a cell 1-2 µs)
            cells = [text[p].as_py() for p in positions]
            missing = None in cells
        else:
            if positions is not None:
                text = text.take(pa.array(positions, type=pa.int64()))
            cells = text.to_pylist()
            missing = text.null_count > 0
        if missing:
            na = array.dtype.na_value
            return [na if cell is None else cell for cell in cells]
        return cells
    if isinstance(array, pd.arrays.NumpyExtensionArray):
        values = array.to_numpy()
        if values.dtype == object:  # the cells themselves, as `tolist` iterates them one by one
            return (values if positions is None else values[positions]).tolist()
    parts = masked_parts(array)
    if parts is None:
        return array.tolist() if positions is None else array.take(positions).tolist()
    data, mask = parts
    if positions is not None:
        data, mask = data[positions], mask[positions]
    values = data.tolist()
    if not mask.any():
        return values
    na = pd.NA
    return [na if missing else value for value, missing in zip(values, mask.tolist(), strict=True)]


def factorized(array: Any) -> tuple[np.ndarray, list[Any]]:
    """(`pd.factorize(array)` codes as int64, its uniques as a list): codes number the distinct values
    in order of first appearance, -1 for a missing cell. An Arrow-backed text column is encoded by
    Arrow directly, as pandas itself does it (`dictionary_encode`, missing cells masked) without its
    20-70 µs of wrapping."""
    text = _arrow_text(array)
    if text is None or not len(text):
        codes, uniques = pd.factorize(array)
        return np.asarray(codes, dtype=np.int64), list(uniques.tolist())
    if len(text) <= _FEW_ROWS_ENCODED:  # (a log's dozen messages: the kernel's call costs more than a dict,
        # which numbers the values in order of first appearance too)
        seen: dict[str, int] = {}
        codes = [-1 if c is None else seen.setdefault(c, len(seen)) for c in text.to_pylist()]
        return np.array(codes, dtype=np.int64), list(seen)
    encoded = text.dictionary_encode(null_encoding="mask")
    indices = encoded.indices
    if indices.null_count:
        indices = indices.fill_null(-1)
    codes = np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return codes, encoded.dictionary.to_pylist()


def in_line_order(rows: list[int], lines: list[Any]) -> list[int]:
    """`rows` (positions) sorted by their `lines` cell, stably; a row without a line goes last, as
    `sort_values("line")` puts it. Rows already in order are returned as they are (no sort)."""
    if all(type(lines[p]) is int for p in rows):
        if all(lines[a] <= lines[b] for a, b in pairwise(rows)):
            return rows
        return sorted(rows, key=lines.__getitem__)
    return sorted(rows, key=lambda p: (type(lines[p]) is not int, as_int(lines[p]) or 0))


class Row:
    """One row of a `Columns`, read by attribute like an `itertuples()` row (values as `tolist()` gives)."""

    __slots__ = ("_columns", "_position")

    def __init__(self, columns: Columns, position: int) -> None:
        self._columns = columns
        self._position = position

    def __getattr__(self, name: str) -> Any:
        return self._columns.cell(name, self._position)


_COLUMNS: list[Columns] = []


def columns(frame: pd.DataFrame) -> Columns:
    """The `Columns` of `frame`, made on first use and kept while the same frame object is asked for.

    Keyed on the frame object itself (held, so its id cannot be reused), the last few frames only, and
    emptied by the engine before and after each run: a frame changed between runs is read afresh.
    """
    for cached in _COLUMNS:
        if cached.frame is frame:
            return cached
    made = Columns(frame)
    _COLUMNS.insert(0, made)
    del _COLUMNS[16:]
    return made


def filled_frame(log: ParsedLog, name: str) -> pd.DataFrame | None:
    """`log.frames[name]` when the log has that frame with rows, else None. A frame the parse declared
    empty is not made to answer (an empty frame costs 20-100 µs to make, and most logs lack `perf`,
    `perf_ranking` and `perf_totals`, which several rules look for)."""
    frames = log.frames
    if isinstance(frames, Frames):
        filled = None
        for cached, names in _FILLED:
            if cached is frames:
                filled = names
        if filled is None:
            filled = frames.filled()
            _FILLED.insert(0, (frames, filled))
            del _FILLED[4:]
        return frames[name] if name in filled else None
    frame = frames.get(name)
    return frame if frame is not None and len(frame) else None


_FILLED: list[tuple[Frames, set[str]]] = []


def message_positions(log: ParsedLog, categories: Iterable[str]) -> list[int]:
    """Positions of the `messages` rows whose category is one of `categories`, in line order (the
    rows `messages_in` returns, without building a frame)."""
    messages = log.frames["messages"]
    by_category = _categories(messages)
    positions = [p for c in set(categories) for p in by_category.get(c, ())]
    if len(positions) > 1:
        positions = in_line_order(sorted(positions), columns(messages)["line"])
    return positions


def message_groups(log: ParsedLog, categories: Iterable[str]) -> list[tuple[int | None, list[int]]]:
    """`message_positions` split by build: (build_index, positions in line order) in build order,
    rows outside any build last (what `grouped(messages_in(...))` yields, as positions)."""
    positions = message_positions(log, categories)
    if not positions:
        return []
    builds = columns(log.frames["messages"])["build_index"]
    split: dict[int | None, list[int]] = {}
    for position in positions:
        split.setdefault(as_int(builds[position]), []).append(position)
    return [(b, split[b]) for b in sorted(split, key=build_order)]


def forget_frames() -> None:
    """Drop every per-frame cache of this module (the engine calls it around each run)."""
    _COLUMNS.clear()
    _SPLITS.clear()
    _CATEGORIES.clear()
    _FILLED.clear()


def first_line(text: Any) -> str:
    """The first line of a (possibly multi-line) message, trimmed to 160 characters."""
    value = as_str(text) or ""
    head = value.splitlines()[0] if value else ""
    return head if len(head) <= 160 else head[:157] + "..."


def line_range(lines: Iterable[Any]) -> tuple[int, ...]:
    """Sorted, de-duplicated line numbers (NA dropped)."""
    return tuple(sorted({int(v) for v in (as_int(x) for x in lines) if v is not None}))


def grouped(frame: pd.DataFrame) -> Iterator[tuple[int | None, pd.DataFrame]]:
    """(build_index, rows) per build, in build order; rows outside any build come last."""
    if frame.empty:
        return
    groups = _split(frame)  # the split `rows_of_build` keeps: several rules group the same frame
    for build_index in sorted(groups, key=build_order):
        yield build_index, groups[build_index]


def printed_perf_total(log: ParsedLog, build_index: int | None) -> tuple[int | None, int | None]:
    """The build's printed total perf time (µs) and its line, from `perf_totals`; (None, None) if none."""
    totals = filled_frame(log, "perf_totals")
    if totals is None:
        return None, None
    for row in rows_of_build(totals, build_index).itertuples(index=False):
        value = as_int(row.total_time_us)
        if value:
            return value, as_int(row.time_line)
    return None, None


PROVENANCE = "provenance"  # dataclass field metadata: the option whose source the field receives


def provenance(option: str, default: str = "logscope's built-in default") -> Any:
    """An Options field that is not an option: `Config.options_for` fills it with where `option` came
    from (the built-in default, a `--target` preset, `--sram`, or the configuration file)."""
    return field(default=default, metadata={PROVENANCE: option})
