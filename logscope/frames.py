"""Declared schemas of every frame logscope produces; the only place DataFrames are built.

Columns are snake_case and carry their unit (`size_bytes`, `time_us`, `rw_kb`). Integers stay
integers (nullable `Int64`), missing values are `<NA>`, never 0, and every row keeps the number of
the log line it came from, so a finding can point at the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

I, F, S, B, O = "Int64", "Float64", "string", "boolean", "object"

SCHEMAS: dict[str, dict[str, str]] = {
    # One record per build (or runtime session) found in the file.
    "builds": {
        "build_index": I, "kind": S, "toolkit_product": S, "toolkit_version": S, "compiler_version": S,
        "target_platform": S, "status": S, "status_reason": S, "status_line": I, "start_line": I,
        "end_line": I, "warn_summary_count": I, "settings": O,
    },
    # One row per build and source of figures; see docs/formats.md for each column's meaning.
    "memory": {
        "build_index": I, "source": S,
        "weight_bytes": I, "internal_bytes": I, "other_bytes": I, "total_bytes": I, "model_bytes": I,
        "activation_bytes": I, "scratch_bytes": I, "reuse_rate": F, "peak_layer": S,
        "predict_internal_rw_bytes": I, "predict_weight_rw_bytes": I, "predict_sram_hit_rw_bytes": I,
        "tensor_count": I, "memory_node_count": I,
        "weight_line": I, "internal_line": I, "activation_line": I, "scratch_line": I, "total_line": I,
        "reuse_line": I,
        # Derived from the tensor tables (logscope.analysis.derived documents each definition).
        "feature_pool_bytes": I, "feature_sum_bytes": I, "computed_reuse_rate": F,
        "const_span_bytes": I, "const_sum_bytes": I, "padding_bytes": I, "logical_feature_bytes": I,
    },
    "layers": {
        "build_index": I, "layer_id": I, "op_type": S, "dtype": S, "target": S, "input_shapes": S,
        "output_shape": S, "ddr_cycles": I, "npu_cycles": I, "total_cycles": I, "time_us": I,
        "mac_usage": S, "workload": S, "task_number": I, "lut_number": I, "rw_kb": F, "full_name": S,
        "line": I,
    },
    "tensors": {
        "build_index": I, "table": S, "op_id": I, "user_op": S, "name": S, "dtype": S, "data_format": S,
        "orig_shape": S, "native_shape": S, "start_offset": I, "end_offset": I, "size_bytes": I,
        "star_flag": B, "sram_hit": S, "logical_bytes": I, "native_bytes": I, "padding_bytes": I, "line": I,
    },
    "fusions": {
        "build_index": I, "section": S, "rule": S, "removed_nodes": O, "added_nodes": O, "line": I,
    },
    "messages": {
        "build_index": I, "line": I, "end_line": I, "level": S, "logger": S, "func": S, "timestamp": S,
        "category": S, "fatal": B, "message": S,
    },
    "passes": {"build_index": I, "name": S, "start_line": I, "end_line": I, "start_time": S, "end_time": S},
    "progress": {
        "build_index": I, "stage": S, "percent": I, "done": I, "total": I, "rate_per_s": F, "line": I,
    },
    "outliers": {
        "build_index": I, "const_name": S, "abs_mean": F, "abs_std": F, "outlier_value": F, "line": I,
    },
    "unparsed": {"line": I, "reason": S, "text": S},
}


def build_frame(name: str, rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build frame `name` from row dicts, with exactly the declared columns and dtypes."""
    schema = SCHEMAS[name]
    frame = pd.DataFrame.from_records(list(rows), columns=list(schema))
    return frame.astype(schema)


def empty_frame(name: str) -> pd.DataFrame:
    """A frame with the declared columns and no rows."""
    return build_frame(name, [])
