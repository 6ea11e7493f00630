"""Memory figures derived from the tensor tables, and the invariants they are checked against.

Every figure's label, unit and definition is in `logscope.figures.FIGURES`; this module computes them.
Per build, over the feature-tensor rows with Start, End and Size known:

- `feature_pool_bytes`, `feature_sum_bytes`: the span and the no-reuse sum of the pool-resident rows,
  computed by `logscope.analysis.pool.pool_extents`, the one definition the rules, plots and reports
  read too. In [09] the span equals `Total Internal Memory Size` (0x601280 - 0x454680 = 1756160).
- `feature_table_span_bytes` = max(End) - min(Start) over every feature row, rows outside the pool
  included (in [29] the graph input and output sit in DMA buffers below the pool: 2,362,368 B for a
  2,157,568 B pool). Equal to `feature_pool_bytes` when no row is outside.
- `computed_reuse_rate` = 1 - feature_pool_bytes / feature_sum_bytes.
- `logical_feature_bytes` = sum(logical_bytes) over the feature rows.
- `padding_bytes` = sum(native_bytes - logical_bytes) over the feature rows whose padding passes the
  per-tensor invariant (0 <= padding <= Size); a row that breaks it is left out and reported.
- `const_span_bytes`, `const_sum_bytes`: span and sum of the const table.

Invariants (`figure_checks`, one row per broken one, with the reason and the line):
- per tensor: padding >= 0 and padding <= Size. [09] line 240 has native < logical bytes (-2,016 B);
  in [01] the NativeShape's element count is 840 B for a 240 B tensor (the runtime prints a padded
  channel count, not C1): neither is padding.
- pool span <= sum of sizes: a span above the sum means gaps (alignment) between tensors, so the
  computed reuse rate is below zero and says nothing about reuse ([01]: 896 B span, 880 B of tensors).
- totals equal their parts: weight + internal + other = total when the log prints all four, within
  the rounding of figures printed at two decimals of their unit.

A build that has tables but no memory row from the log gets a row with source `derived`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from logscope.analysis.pool import (
    TensorArrays,
    column_cells,
    pool_extents,
    printed_internals,
    tensor_arrays,
)
from logscope.frames import build_frame, column_array, replace_columns
from logscope.model import Frames, ParsedLog


def _int(value: Any) -> int | None:
    if type(value) is int:  # (most cells: no `pd.isna`)
        return value
    return None if value is None or pd.isna(value) else int(value)


def derive_memory(
    tensors: pd.DataFrame, memory: pd.DataFrame | Sequence[Mapping[str, Any]] | None = None
) -> tuple[dict[Any, dict[str, Any]], list[dict[str, Any]]]:
    """Derived figures per build index, and the invariant checks they broke (rows of `figure_checks`).
    `memory` is the memory frame, or its rows before it is built (`printed_internals` reads either)."""
    out: dict[Any, dict[str, Any]] = {}
    checks: list[dict[str, Any]] = []
    if tensors.empty:
        return out, checks
    arrays = tensor_arrays(tensors)  # each column read once, for the pool and the table figures
    internals = printed_internals(memory)
    for build_index, extent, first_line in pool_extents(tensors, internals, arrays):
        # Rows with a size but no offsets (cut or emptied cells) are not usable: no span from them, never 0.
        span, total = extent.span_bytes, extent.sum_bytes
        out[build_index] = {
            "feature_pool_bytes": span,
            "feature_table_span_bytes": extent.table_span_bytes,
            "feature_sum_bytes": total,
            "computed_reuse_rate": 1.0 - span / total if total else None,
        }
        if span > total:
            checks.append(
                {
                    "build_index": build_index,
                    "figure": "computed_reuse_rate",
                    "invariant": "feature_pool_bytes <= feature_sum_bytes",
                    "reason": f"the pool spans {span} B for {total} B of tensors: {span - total} B of gaps "
                    "(alignment) between them, so 1 - span / sum is below zero and measures no reuse",
                    "line": first_line,
                }
            )
    _table_figures(tensors, arrays, out, checks)
    return dict(sorted(out.items())), checks


def _table_figures(
    tensors: pd.DataFrame, arrays: TensorArrays, out: dict[Any, dict[str, Any]], checks: list[dict[str, Any]]
) -> None:
    """Padding, logical and const figures per build into `out`, broken padding invariants into `checks`.

    Per build over the rows with a Size and a build: the feature rows' `logical_feature_bytes` (sum of
    the known logical sizes, None when none is known) and `padding_bytes` (over the rows whose padding
    passes the invariant; None when none does), the const rows' span and sum. Computed on the frame's
    `tensor_arrays` sorted by build, every build at once (`_Sorted`): int64 sums and extremes per build
    by `reduceat`, equal to the sums of each build's rows (int64 addition is associative, also where
    it wraps), with no array call per build (a log of 500 builds paid 25 us a build for them).
    """
    sized = arrays.size.known & arrays.build.known
    if not sized.any():
        return
    feature = sized & arrays.feature
    known, pad = arrays.padding.known, arrays.padding.values
    size = arrays.size.values
    sound = known & (pad >= 0) & (pad <= size)
    broken = np.flatnonzero(feature & known & ~sound)
    if len(broken):
        # (the columns at those rows: `iloc` and `itertuples` cost 20 us a row, and every build of a
        # log repeating [09] has one)
        cells = [column_array(tensors, c).take(broken).tolist() for c in _Broken._fields]
        checks.extend(_padding_check(_Broken(*row)) for row in zip(*cells, strict=True))
    builds = arrays.build.values
    rows = _Sorted(builds, feature)
    if rows.count:
        logical_known = arrays.logical.known
        logical = rows.sums(np.where(logical_known, arrays.logical.values, 0))
        logical_count = rows.sums(logical_known.astype(np.int64))
        padding = rows.sums(np.where(sound, pad, 0))
        padding_count = rows.sums(sound.astype(np.int64))
        for index, total, count, padded, good in zip(
            rows.builds, logical, logical_count, padding, padding_count, strict=True
        ):
            figures = out.setdefault(index, {})
            figures["logical_feature_bytes"] = total if count else None
            figures["padding_bytes"] = padded if good else None
    rows = _Sorted(builds, sized & arrays.const)
    if rows.count:
        start_known, end_known = arrays.start.known, arrays.end.known
        low = rows.reduce(np.minimum, np.where(start_known, arrays.start.values, np.iinfo(np.int64).max))
        high = rows.reduce(np.maximum, np.where(end_known, arrays.end.values, np.iinfo(np.int64).min))
        spans = (high - low).tolist()
        with_start = rows.sums(start_known.astype(np.int64))
        with_end = rows.sums(end_known.astype(np.int64))
        for index, span, starts, ends, total in zip(
            rows.builds, spans, with_start, with_end, rows.sums(size), strict=True
        ):
            out.setdefault(index, {}).update(
                {"const_span_bytes": span if starts and ends else None, "const_sum_bytes": total}
            )


class _Sorted:
    """The rows of `mask` sorted by build (stable: frame order within a build), and per build
    (ascending) reductions of a column over them."""

    def __init__(self, builds: np.ndarray, mask: np.ndarray) -> None:
        positions = np.flatnonzero(mask)
        self.count = len(positions)
        order = np.argsort(builds[positions], kind="stable")
        self.rows = positions[order]
        keys = builds[self.rows]
        self.heads = np.concatenate(([0], np.flatnonzero(np.diff(keys)) + 1)) if self.count else positions
        self.builds: list[int] = keys[self.heads].tolist()

    def sums(self, values: np.ndarray) -> list[int]:
        return np.add.reduceat(values[self.rows], self.heads).tolist()

    def reduce(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        return ufunc.reduceat(values[self.rows], self.heads)


class _Broken(NamedTuple):
    """The cells of a tensor row whose padding breaks its invariant that its check reads."""

    build_index: Any
    padding_bytes: Any
    size_bytes: Any
    native_bytes: Any
    logical_bytes: Any
    native_shape: Any
    orig_shape: Any
    name: Any
    line: Any


def _padding_check(row: _Broken) -> dict[str, Any]:
    padding, size = int(row.padding_bytes), int(row.size_bytes)
    native, logical = _int(row.native_bytes), _int(row.logical_bytes)
    shapes = f"NativeShape {row.native_shape} is {native} B, OrigShape {row.orig_shape} {logical} B"
    if padding < 0:
        invariant, why = "padding_bytes >= 0", f"{shapes}: the native layout is smaller than the logical one"
    else:
        invariant, why = "padding_bytes <= size_bytes", f"{shapes}, but the tensor's Size is {size} B"
    return {
        "build_index": row.build_index,
        "figure": "padding_bytes",
        "invariant": invariant,
        "reason": f"tensor {row.name}: {why}; its {padding} B are left out of the padding figure",
        "line": int(row.line),
    }


_TOTALS_COLUMNS = (
    "build_index",
    "source",
    "weight_bytes",
    "internal_bytes",
    "other_bytes",
    "total_bytes",
    "total_line",
)


def _totals_checks(memory: pd.DataFrame | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """weight + internal + other = total, on every memory row that prints all four (of the frame, or of
    its rows before it is built)."""
    out = []
    rows = _records(memory, _TOTALS_COLUMNS) if isinstance(memory, pd.DataFrame) else memory
    for row in rows:
        parts = [_int(row.get(k)) for k in ("weight_bytes", "internal_bytes", "other_bytes")]
        total = _int(row.get("total_bytes"))
        if total is None or any(p is None for p in parts):
            continue
        whole = sum(p for p in parts if p is not None)
        if abs(whole - total) > _rounding(total):
            out.append(
                {
                    "build_index": row["build_index"],
                    "figure": "total_bytes",
                    "invariant": "weight_bytes + internal_bytes + other_bytes == total_bytes",
                    "reason": f"{row['source']}: the parts add up to {whole} B, the log's total is {total} B "
                    f"({whole - total:+d} B)",
                    "line": _int(row.get("total_line")),
                }
            )
    return out


def _rounding(total: int) -> int:
    """What printing four figures at two decimals of their unit can add up to: [02] prints
    8.06 + 105.47 + 3.72 MiB against a total of 117.25 MiB (1 B apart once converted)."""
    unit = 1
    while unit * 1024 <= total:
        unit *= 1024
    return int(4 * 0.005 * unit)


def _difference(end: Any, start: Any) -> int | None:
    return None if pd.isna(end) or pd.isna(start) else int(end - start)


def add_derived_memory(log: ParsedLog) -> None:
    """Fill the derived columns of `log.frames["memory"]` (adding `derived` rows where needed) and the
    `figure_checks` frame with every invariant a figure breaks.

    When the parse left the memory frame unbuilt (`Frames.build_later`), its rows get the figures and
    the frame is built once, from them: the frame the other way gives, which built it, then replaced
    its derived columns (0.3-0.5 ms of a CI log for a frame of one row). Empty frames stay unmade."""
    frames = log.frames
    lazy = frames if isinstance(frames, Frames) else None
    rows = lazy.unbuilt("memory") if lazy is not None else None
    if rows is None and lazy is not None and lazy.pending("memory"):
        rows = []  # (no memory row: the rows of the empty frame, without making it)
    stated: pd.DataFrame | list[dict[str, Any]] = frames["memory"] if rows is None else rows
    empty = lazy is not None and lazy.pending("tensors")  # (known empty: no frame made to say so)
    derived, checks = ({}, []) if empty else derive_memory(frames["tensors"], stated)
    checks += _totals_checks(stated)
    if lazy is not None and not checks:
        lazy.defer("figure_checks")
    else:
        frames["figure_checks"] = build_frame("figure_checks", checks)
    if not derived:
        return
    if lazy is not None and rows is not None:  # (its own rows, changed in place: built when read)
        _add_to_rows(rows, derived)
        lazy.build_later("memory", rows)
        return
    memory = frames["memory"]
    builds, sources = column_cells(memory, "build_index"), column_cells(memory, "source")
    matched: dict[int, dict[str, Any]] = {}  # row position -> the figures of its build
    seen = set()
    for position, (build_index, source) in enumerate(zip(builds, sources, strict=True)):
        figures = derived.get(build_index)
        if figures and source == "build-log":
            matched[position] = figures
            seen.add(build_index)
    order = list(map(_row_order, builds, sources))
    if all(build_index in seen for build_index in derived) and order == sorted(order):
        # Every build's figures go into its own row and no row moves (a log with one build): only the
        # derived columns change; the other columns are not read and rebuilt.
        changed: dict[str, list[Any]] = {}
        for position, figures in matched.items():
            for key, value in figures.items():
                if key not in changed:
                    changed[key] = column_cells(memory, key)
                changed[key][position] = value
        log.frames["memory"] = replace_columns("memory", memory, changed)
        return
    records = _records(memory)
    for position, figures in matched.items():
        records[position].update(figures)
    for build_index, figures in derived.items():
        if build_index not in seen:
            records.append({"build_index": build_index, "source": "derived"} | figures)
    records.sort(key=lambda r: _row_order(r["build_index"], r["source"]))
    log.frames["memory"] = build_frame("memory", records)


def _add_to_rows(rows: list[dict[str, Any]], derived: dict[Any, dict[str, Any]]) -> None:
    """The derived figures into the memory rows (dicts) of the log's own figures of their build, a
    `derived` row for a build without one, the rows then in `_row_order` (a stable sort): what the
    frame's path below makes of the same rows."""
    seen = set()
    for row in rows:
        build_index = row.get("build_index")
        figures = derived.get(build_index)
        if figures and row.get("source") == "build-log":
            row.update(figures)
            seen.add(build_index)
    for build_index, figures in derived.items():
        if build_index not in seen:
            rows.append({"build_index": build_index, "source": "derived"} | figures)
    rows.sort(key=lambda r: _row_order(r.get("build_index"), r.get("source")))


def _row_order(build_index: Any, source: Any) -> tuple[bool, Any, bool]:
    """Where a memory row goes: builds ascending, a row without a build last (no parser writes one, but
    comparing <NA> fails), the log's own figures before the other sources of the same build."""
    missing = build_index is None or build_index is pd.NA
    return missing, 0 if missing else build_index, source != "build-log"


def _records(frame: pd.DataFrame, only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The rows of a small frame as dicts, of every column or of those of `only` the frame has
    (column lists zipped: `to_dict` costs more per column)."""
    columns = [str(c) for c in frame.columns if only is None or c in only]
    return [
        dict(zip(columns, values, strict=True))
        for values in zip(*(column_cells(frame, c) for c in columns), strict=True)
    ]
