"""Declared schemas of the reference analyzer's frames (same conventions as `logscope.frames`).

Columns are snake_case with units; integers are nullable `Int64`, missing is `<NA>`. Steps are
execution-order indices: `step` over the ONNX compute ops, `rknn_step` over the fused op sequence
the RKNN emulation runs. Offsets are bytes from the start of the planned pool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from logscope.frames import BOOL, FLT, INT, STR, plain_value
from logscope.reference.errors import ModelTooLargeError

REFERENCE_SCHEMAS: dict[str, dict[str, str]] = {
    # One row per compute op of the ONNX graph, in execution order.
    "ref_ops": {
        "step": INT,
        "name": STR,
        "op_type": STR,
        "output_shapes": STR,
        "weight_bytes": INT,
        "params": INT,
        "bn_stat_params": INT,
        "macs": INT,
        "output_bytes": INT,
        "live_bytes": INT,  # bytes live at this step (the lower bound's curve)
        "fusion_chain": INT,
        "rknn_step": INT,
    },
    # One row per activation (graph inputs and op outputs) with its lifetime and planned offsets.
    "ref_tensors": {
        "name": STR,
        "role": STR,
        "dtype": STR,
        "shape": STR,
        "shape_source": STR,
        "numel": INT,
        "size_bytes": INT,
        "first_step": INT,
        "last_step": INT,
        "readers": INT,
        "is_output": BOOL,
        "buffer": STR,  # the tensor whose buffer this one uses (itself unless aliased in place)
        "offset_naive": INT,
        "offset_greedy": INT,
        "offset_first_fit": INT,
        "rknn_first_step": INT,
        "rknn_last_step": INT,
        "native_shape": STR,
        "native_bytes": INT,
        "rknn_offset": INT,
        "quirk": STR,
    },
    # One row per planner: its total against the lower bound over the same records.
    "ref_plans": {
        "planner": STR,
        "graph": STR,  # onnx (one step per op) | rknn-fused
        "sizes": STR,  # logical | native
        "alignment": INT,
        "in_place": BOOL,
        "buffers": INT,
        "total_bytes": INT,
        "lower_bound_bytes": INT,
        "ratio_to_lower_bound": FLT,
        "peak_step": INT,
    },
    # Memory over ops: per planner and step, bytes live and the plan's high-water mark.
    "ref_curve": {
        "planner": STR,
        "step": INT,
        "op_name": STR,
        "op_type": STR,
        "live_bytes": INT,
        "high_water_bytes": INT,
    },
    "ref_fusions": {
        "chain": INT,
        "first_step": INT,
        "last_step": INT,
        "pattern": STR,
        "rknn_name": STR,
        "ops": STR,
        "output": STR,
        "output_shape": STR,
        "eliminated_bytes": INT,  # activation bytes of the intermediates the fusion removes
    },
    # The RKNN const tensors predicted for the model (logscope.reference.rknn_weights), in table order.
    "ref_rknn_weights": {
        "name": STR,
        "component": STR,
        "op": STR,
        "shape": STR,
        "dtype": STR,
        "size_bytes": INT,
        "stored_bytes": INT,  # rounded up to the table's 64-B row alignment
        "rule": STR,
    },
    # The log's const rows against the predicted ones, matched by name (logscope.reference.check).
    "check_weights": {
        "log_line": INT,
        "name": STR,
        "component": STR,
        "log_shape": STR,
        "log_size_bytes": INT,
        "ref_size_bytes": INT,
        "size_difference": INT,
        "rule": STR,
    },
    # The emulated allocator replayed on a log's own feature rows (logscope.reference.rknn.replay_log).
    "replay": {
        "row": INT,
        "line": INT,
        "op_id": INT,
        "user_op": STR,
        "name": STR,
        "size_bytes": INT,
        "first_step": INT,
        "last_step": INT,
        "log_offset": INT,
        "emulated_offset": INT,
        "stepwise_offset": INT,
        "status": STR,
        "reason": STR,
    },
    # Cross-check: one row per compared figure.
    "check_summary": {
        "item": STR,
        "log_value": INT,
        "reference_value": INT,
        "difference": INT,
        "ratio": FLT,
        "likely_cause": STR,
        "log_line": INT,
    },
    # Cross-check: log feature rows against the reference's RKNN tensors.
    "check_tensors": {
        "log_line": INT,
        "log_op_id": INT,
        "log_name": STR,
        "log_dtype": STR,
        "log_orig_shape": STR,
        "log_native_shape": STR,
        "log_size_bytes": INT,
        "log_offset": INT,
        "ref_name": STR,
        "ref_shape": STR,
        "ref_native_shape": STR,
        "ref_native_bytes": INT,
        "ref_offset": INT,
        "matched_by": STR,
        "size_difference": INT,
        "likely_cause": STR,
    },
    "check_fusions": {
        "chain": INT,
        "rknn_name": STR,
        "ops": STR,
        "output_shape": STR,
        "log_layer_id": INT,
        "log_op_type": STR,
        "fused_in_log": BOOL,
        "note": STR,
        "log_line": INT,  # the log layer's line (the fused layer, or the part of the chain it runs)
    },
    "check_cpu_ops": {
        "layer_id": INT,
        "op_type": STR,
        "full_name": STR,
        "expected": BOOL,
        "line": INT,
    },
    # TFLite Micro arena prediction (logscope.reference.tflm): per op, per planned buffer, per component.
    "tflm_ops": {
        "op_index": INT,
        "op": STR,
        "output_bytes": INT,
        "scratch_bytes": INT,
        "live_bytes": INT,  # planned (16-B rounded) sizes of the buffers live in the op's scope
        "high_water_bytes": INT,  # max(offset + size) over them
    },
    "tflm_buffers": {
        "index": INT,  # order in which the planner receives the buffer
        "kind": STR,  # tensor | scratch
        "tensor": INT,
        "name": STR,
        "op": INT,  # the op that requested a scratch buffer
        "bytes": INT,
        "size_bytes": INT,  # rounded up to 16 B
        "first_scope": INT,  # TFLM allocation scope: 0 before the first op, op i in scope i + 1
        "last_scope": INT,
        "offset": INT,
    },
    "tflm_components": {"component": STR, "bytes": INT, "count": INT, "source": STR},
    # Both memory-over-ops curves of a cross-check (log offsets vs the reference emulation).
    "check_curve": {
        "source": STR,
        "step": INT,
        "op": STR,
        "high_water_bytes": INT,
    },
}


plain = plain_value  # one definition, in logscope.frames


def opt_int(value: Any) -> int | None:
    """A frame cell as an int, or None when missing."""
    return None if value is None or pd.isna(value) else int(value)


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON-able row dicts."""
    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def build_reference_frame(name: str, rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame `name` from row dicts, with exactly the declared columns and dtypes."""
    schema = REFERENCE_SCHEMAS[name]
    frame = pd.DataFrame.from_records(list(rows), columns=list(schema))
    for column, dtype in schema.items():
        if dtype == STR and frame[column].map(_is_bytes).any():
            # A string attribute whose bytes are not UTF-8 (a corrupted model) arrives as bytes.
            frame[column] = frame[column].map(_text)
    try:
        return frame.astype(schema)
    except OverflowError:
        # Every figure is bounded before it reaches a frame (tensor elements, MACs); one that still
        # passes int64 is refused, named, rather than ending the command in a traceback.
        raise ModelTooLargeError(_past_int64(name, frame, schema)) from None


def _past_int64(name: str, frame: pd.DataFrame, schema: Mapping[str, str]) -> str:
    low, high = -(2**63), 2**63 - 1
    for column, dtype in schema.items():
        if dtype != INT:
            continue
        for row, value in enumerate(frame[column]):
            if isinstance(value, int) and not low <= value <= high:
                return f"frame {name}, column {column}, row {row}: {value} does not fit in 64 bits"
    return f"frame {name}: a figure does not fit in 64 bits"


def _is_bytes(value: Any) -> bool:
    return isinstance(value, bytes)


def _text(value: Any) -> Any:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
