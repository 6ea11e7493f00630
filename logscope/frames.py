"""Declared schemas of every frame logscope produces; the only place DataFrames are built.

Columns are snake_case and carry their unit (`size_bytes`, `time_us`, `rw_kb`). Integers stay
integers (nullable `Int64`), missing values are `<NA>`, never 0, and every row keeps the number of
the log line it came from, so a finding can point at the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

INT, FLT, STR, BOOL, OBJ = "Int64", "Float64", "string", "boolean", "object"

SCHEMAS: dict[str, dict[str, str]] = {
    # One record per build (or runtime session) found in the file.
    "builds": {
        "build_index": INT,
        "kind": STR,
        "toolkit_product": STR,
        "toolkit_version": STR,
        "compiler_version": STR,
        "target_platform": STR,
        "status": STR,
        "status_reason": STR,
        "status_line": INT,
        "start_line": INT,
        "end_line": INT,
        "warn_summary_count": INT,
        "settings": OBJ,
    },
    # One row per build and source of figures; see docs/formats.md for each column's meaning.
    "memory": {
        "build_index": INT,
        "source": STR,
        "weight_bytes": INT,
        "internal_bytes": INT,
        "other_bytes": INT,
        "total_bytes": INT,
        "model_bytes": INT,
        "activation_bytes": INT,
        "scratch_bytes": INT,
        "reuse_rate": FLT,
        "peak_layer": STR,
        "predict_internal_rw_bytes": INT,
        "predict_weight_rw_bytes": INT,
        "predict_sram_hit_rw_bytes": INT,
        "tensor_count": INT,
        "memory_node_count": INT,
        "weight_line": INT,
        "internal_line": INT,
        "activation_line": INT,
        "scratch_line": INT,
        "total_line": INT,
        "reuse_line": INT,
        # Derived from the tensor tables (logscope.analysis.derived documents each definition).
        "feature_pool_bytes": INT,
        "feature_sum_bytes": INT,
        "computed_reuse_rate": FLT,
        "const_span_bytes": INT,
        "const_sum_bytes": INT,
        "padding_bytes": INT,
        "logical_feature_bytes": INT,
    },
    "layers": {
        "build_index": INT,
        "layer_id": INT,
        "op_type": STR,
        "dtype": STR,
        "target": STR,
        "input_shapes": STR,
        "output_shape": STR,
        "ddr_cycles": INT,
        "npu_cycles": INT,
        "total_cycles": INT,
        "time_us": INT,
        "mac_usage": STR,
        "workload": STR,
        "task_number": INT,
        "lut_number": INT,
        "rw_kb": FLT,
        "full_name": STR,
        "line": INT,
    },
    "tensors": {
        "build_index": INT,
        "table": STR,
        "op_id": INT,
        "user_op": STR,
        "name": STR,
        "dtype": STR,
        "data_format": STR,
        "orig_shape": STR,
        "native_shape": STR,
        "start_offset": INT,
        "end_offset": INT,
        "size_bytes": INT,
        "star_flag": BOOL,
        "sram_hit": STR,
        "logical_bytes": INT,
        "native_bytes": INT,
        "padding_bytes": INT,
        "line": INT,
    },
    "fusions": {
        "build_index": INT,
        "section": STR,
        "rule": STR,
        "removed_nodes": OBJ,
        "added_nodes": OBJ,
        "line": INT,
    },
    "messages": {
        "build_index": INT,
        "line": INT,
        "end_line": INT,
        "level": STR,
        "logger": STR,
        "func": STR,
        "timestamp": STR,
        "category": STR,
        "fatal": BOOL,
        "message": STR,
    },
    "passes": {
        "build_index": INT,
        "name": STR,
        "start_line": INT,
        "end_line": INT,
        "start_time": STR,
        "end_time": STR,
    },
    "progress": {
        "build_index": INT,
        "stage": STR,
        "percent": INT,
        "done": INT,
        "total": INT,
        "rate_per_s": FLT,
        "line": INT,
    },
    "outliers": {
        "build_index": INT,
        "const_name": STR,
        "abs_mean": FLT,
        "abs_std": FLT,
        "outlier_value": FLT,
        "line": INT,
    },
    "unparsed": {"line": INT, "reason": STR, "text": STR},
}


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
    schema = SCHEMAS[name]
    table: list[Any] = list(rows)
    if columns is None:
        frame = pd.DataFrame.from_records(table, columns=list(schema))
        return frame.astype(schema)
    values: dict[str, Sequence[Any]] = (
        dict(zip(columns, zip(*table, strict=True), strict=True)) if table else {}
    )
    data = {
        column: pd.array(list(values.get(column, [None] * len(table))), dtype=dtype)  # type: ignore[call-overload]
        for column, dtype in schema.items()
    }
    return pd.DataFrame(data, columns=list(schema))


def empty_frame(name: str) -> pd.DataFrame:
    """A frame with the declared columns and no rows."""
    return build_frame(name, [])
