"""Memory figures derived from the tensor tables, each with its definition.

Definitions (per build, over the rows of the feature-tensor table `tensors[table == "feature"]`):

- `feature_pool_bytes` = max(end_offset) - min(start_offset): the span of the feature-map pool. In
  build logs the offsets are pool offsets, so this is the pool the compiler needed; in [09] it equals
  `Total Internal Memory Size` (0x601280 - 0x454680 = 1756160) to the byte.
- `feature_sum_bytes` = sum(size_bytes): what the feature maps would need with no address reuse.
- `computed_reuse_rate` = 1 - feature_pool_bytes / feature_sum_bytes: the share of the no-reuse
  footprint that address reuse saved (0 = no reuse). Null when the table is missing or empty.
- `logical_feature_bytes` = sum(logical_bytes): the tensors at their logical (orig) shapes.
- `padding_bytes` = sum(native_bytes - logical_bytes): bytes added by the NC1HWC2 channel blocks
  (C2 = 16 for INT8, 8 for FLOAT16) over rows where both shapes are known.
- `const_span_bytes` = max(end_offset) - min(start_offset) of the const table; in [09] it equals
  `Total Weight Memory Size` (0x43dc40 = 4447296). `const_sum_bytes` = sum(size_bytes) of the const table.

A build that has tables but no memory row from the log gets a row with source `derived`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from logscope.frames import build_frame
from logscope.model import ParsedLog


def derive_memory(tensors: pd.DataFrame) -> dict[Any, dict[str, Any]]:
    """Derived figures per build index from a tensors frame (one grouped pass per table, not per build)."""
    out: dict[Any, dict[str, Any]] = {}
    if tensors.empty:
        return out
    columns = [
        "build_index",
        "table",
        "start_offset",
        "end_offset",
        "size_bytes",
        "padding_bytes",
        "logical_bytes",
    ]
    needed = tensors[columns]  # filtering only these skips copying the name and shape strings
    sized = needed[needed["size_bytes"].notna() & needed["build_index"].notna()]
    feature = sized[sized["table"] == "feature"].groupby("build_index")
    spans = feature.agg(
        end=("end_offset", "max"),
        start=("start_offset", "min"),
        total=("size_bytes", "sum"),
        padding=("padding_bytes", "sum"),
        padding_known=("padding_bytes", "count"),
        logical=("logical_bytes", "sum"),
        logical_known=("logical_bytes", "count"),
    )
    for build_index, row in spans.iterrows():
        # Rows with a size but no offsets (cut or emptied cells) leave the span unknown, never 0.
        span, total = _difference(row["end"], row["start"]), int(row["total"])
        out[build_index] = {
            "feature_pool_bytes": span,
            "feature_sum_bytes": total,
            "computed_reuse_rate": 1.0 - span / total if total and span is not None else None,
            "padding_bytes": int(row["padding"]) if row["padding_known"] else None,
            "logical_feature_bytes": int(row["logical"]) if row["logical_known"] else None,
        }
    const = sized[sized["table"] == "const"].groupby("build_index")
    const_spans = const.agg(
        end=("end_offset", "max"), start=("start_offset", "min"), total=("size_bytes", "sum")
    )
    for build_index, row in const_spans.iterrows():
        out.setdefault(build_index, {}).update(
            {"const_span_bytes": _difference(row["end"], row["start"]), "const_sum_bytes": int(row["total"])}
        )
    return dict(sorted(out.items()))


def _difference(end: Any, start: Any) -> int | None:
    return None if pd.isna(end) or pd.isna(start) else int(end - start)


def add_derived_memory(log: ParsedLog) -> None:
    """Fill the derived columns of `log.frames["memory"]` (adding `derived` rows where needed)."""
    derived = derive_memory(log.frames["tensors"])
    if not derived:
        return
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in row.items()} for row in log.frames["memory"].to_dict("records")
    ]
    seen = set()
    for record in records:
        figures = derived.get(record["build_index"])
        if figures and record["source"] == "build-log":
            record.update(figures)
            seen.add(record["build_index"])
    for build_index, figures in derived.items():
        if build_index not in seen:
            records.append({"build_index": build_index, "source": "derived"} | figures)
    records.sort(key=lambda r: (r["build_index"], r["source"] != "build-log"))
    log.frames["memory"] = build_frame("memory", records)
