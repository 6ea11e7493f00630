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

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from logscope.analysis.pool import TensorArrays, build_extents, printed_internals, tensor_arrays
from logscope.frames import build_frame, replace_columns
from logscope.model import ParsedLog


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def derive_memory(
    tensors: pd.DataFrame, memory: pd.DataFrame | None = None
) -> tuple[dict[Any, dict[str, Any]], list[dict[str, Any]]]:
    """Derived figures per build index, and the invariant checks they broke (rows of `figure_checks`)."""
    out: dict[Any, dict[str, Any]] = {}
    checks: list[dict[str, Any]] = []
    if tensors.empty:
        return out, checks
    arrays = tensor_arrays(tensors)  # each column read once, for the pool and the table figures
    internals = printed_internals(memory)
    for build_index, rows, extent in build_extents(tensors, internals, with_null_build=False, arrays=arrays):
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
                    "line": min(rows.line),
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
    `tensor_arrays` grouped by sorting, with int64 sums as pandas' were: no groupby call per log.
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
        for row in tensors.iloc[broken].itertuples(index=False):
            checks.append(_padding_check(row))
    builds = arrays.build.values
    logical_known, logical_values = arrays.logical.known, arrays.logical.values
    for index, rows in _groups(builds, feature):
        figures = out.setdefault(index, {})
        count = int(logical_known[rows].sum())
        figures["logical_feature_bytes"] = (
            int(logical_values[rows][logical_known[rows]].sum()) if count else None
        )
        good = rows[sound[rows]]
        figures["padding_bytes"] = int(pad[good].sum()) if len(good) else None
    start_known, starts = arrays.start.known, arrays.start.values
    end_known, ends = arrays.end.known, arrays.end.values
    for index, rows in _groups(builds, sized & arrays.const):
        with_start, with_end = rows[start_known[rows]], rows[end_known[rows]]
        span = (
            int(ends[with_end].max() - starts[with_start].min())
            if len(with_start) and len(with_end)
            else None
        )
        out.setdefault(index, {}).update({"const_span_bytes": span, "const_sum_bytes": int(size[rows].sum())})


def _groups(builds: np.ndarray, mask: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(build index, row positions) of the rows in `mask`, builds ascending, rows in frame order."""
    positions = np.flatnonzero(mask)
    if not len(positions):
        return
    keys = builds[positions]
    order = np.argsort(keys, kind="stable")
    for group in np.split(positions[order], np.flatnonzero(np.diff(keys[order])) + 1):
        yield int(builds[group[0]]), group


def _padding_check(row: Any) -> dict[str, Any]:
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


def _totals_checks(memory: pd.DataFrame) -> list[dict[str, Any]]:
    """weight + internal + other = total, on every memory row that prints all four."""
    out = []
    for row in _records(memory, _TOTALS_COLUMNS):
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
    `figure_checks` frame with every invariant a figure breaks."""
    memory = log.frames["memory"]
    derived, checks = derive_memory(log.frames["tensors"], memory)
    checks += _totals_checks(memory)
    log.frames["figure_checks"] = build_frame("figure_checks", checks)
    if not derived:
        return
    builds, sources = memory["build_index"].tolist(), memory["source"].tolist()
    matched: dict[int, dict[str, Any]] = {}  # row position -> the figures of its build
    seen = set()
    for position, (build_index, source) in enumerate(zip(builds, sources, strict=True)):
        figures = derived.get(build_index)
        if figures and source == "build-log":
            matched[position] = figures
            seen.add(build_index)
    order = [(build, source != "build-log") for build, source in zip(builds, sources, strict=True)]
    if all(build_index in seen for build_index in derived) and order == sorted(order):
        # Every build's figures go into its own row and no row moves (a log with one build): only the
        # derived columns change; the other columns are not read and rebuilt.
        changed: dict[str, list[Any]] = {}
        for position, figures in matched.items():
            for key, value in figures.items():
                if key not in changed:
                    changed[key] = memory[key].tolist()
                changed[key][position] = value
        log.frames["memory"] = replace_columns("memory", memory, changed)
        return
    records = _records(memory)
    for position, figures in matched.items():
        records[position].update(figures)
    for build_index, figures in derived.items():
        if build_index not in seen:
            records.append({"build_index": build_index, "source": "derived"} | figures)
    records.sort(key=lambda r: (r["build_index"], r["source"] != "build-log"))
    log.frames["memory"] = build_frame("memory", records)


def _records(frame: pd.DataFrame, only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The rows of a small frame as dicts, of every column or of those of `only` the frame has
    (column lists zipped: `to_dict` costs more per column)."""
    columns = [str(c) for c in frame.columns if only is None or c in only]
    return [
        dict(zip(columns, values, strict=True))
        for values in zip(*(frame[c].tolist() for c in columns), strict=True)
    ]
