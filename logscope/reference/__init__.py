"""Reference analysis from an ONNX model, and cross-checking a log against it.

    from logscope.reference import analyze_model, ReferenceOptions, cross_check
    ref = analyze_model("model.onnx", ReferenceOptions(dtype="int8", target="rk3588"))
    ref.totals["lower_bound_bytes"], ref.totals["rknn_bytes"], ref.frames["ref_plans"]
    check = cross_check(logscope.parse("build.log"), ref)

TFLite Micro (a .tflite model, or an ONNX one converted as the TFLite converter would):

    from logscope.reference import TflmOptions, analyze_tflite, check_trace_against_tflite, load_tflite
    pred = analyze_tflite("model.tflite", TflmOptions(arch="arm32", margin=0.1))
    pred.total, pred.head, pred.tail, pred.peak_op, pred.with_margin
    check = check_trace_against_tflite(logscope.parse("trace.txt"), load_tflite("model.tflite"))

`onnx` and `tflite` are imported only when a model is loaded, and the names above only on first use
(PEP 562): a rule that needs one constant of a submodule does not load the analyzer and pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logscope.reference.analyzer import ReferenceOptions, ReferenceResult, analyze_model
    from logscope.reference.check import (
        CheckResult,
        check_log_against_model,
        cross_check,
        log_dtype,
        log_target,
        pick_build,
    )
    from logscope.reference.errors import (
        ModelError,
        ModelFormatError,
        ModelTooLargeError,
        ReferenceOptionError,
        ShapeError,
        UnsafeModelError,
    )
    from logscope.reference.frames import REFERENCE_SCHEMAS
    from logscope.reference.loader import LoadLimits, load_model
    from logscope.reference.rknn import QUIRKS, TARGETS, RknnOptions, replay_log
    from logscope.reference.shapes import parse_input_shape
    from logscope.reference.tflite_loader import TfliteModel, load_tflite
    from logscope.reference.tflm import TflmOptions, TflmPrediction, analyze_tflite, predict_arena
    from logscope.reference.tflm_check import McuCheckResult, check_trace_against_tflite
    from logscope.reference.tflm_onnx import onnx_tflm_model

# public name -> the submodule that defines it
_LAZY = {
    "ReferenceOptions": "logscope.reference.analyzer",
    "ReferenceResult": "logscope.reference.analyzer",
    "analyze_model": "logscope.reference.analyzer",
    "CheckResult": "logscope.reference.check",
    "check_log_against_model": "logscope.reference.check",
    "cross_check": "logscope.reference.check",
    "log_dtype": "logscope.reference.check",
    "log_target": "logscope.reference.check",
    "pick_build": "logscope.reference.check",
    "ModelError": "logscope.reference.errors",
    "ModelFormatError": "logscope.reference.errors",
    "ModelTooLargeError": "logscope.reference.errors",
    "ReferenceOptionError": "logscope.reference.errors",
    "ShapeError": "logscope.reference.errors",
    "UnsafeModelError": "logscope.reference.errors",
    "REFERENCE_SCHEMAS": "logscope.reference.frames",
    "LoadLimits": "logscope.reference.loader",
    "load_model": "logscope.reference.loader",
    "QUIRKS": "logscope.reference.rknn",
    "TARGETS": "logscope.reference.rknn",
    "RknnOptions": "logscope.reference.rknn",
    "replay_log": "logscope.reference.rknn",
    "parse_input_shape": "logscope.reference.shapes",
    "TfliteModel": "logscope.reference.tflite_loader",
    "load_tflite": "logscope.reference.tflite_loader",
    "TflmOptions": "logscope.reference.tflm",
    "TflmPrediction": "logscope.reference.tflm",
    "analyze_tflite": "logscope.reference.tflm",
    "predict_arena": "logscope.reference.tflm",
    "McuCheckResult": "logscope.reference.tflm_check",
    "check_trace_against_tflite": "logscope.reference.tflm_check",
    "onnx_tflm_model": "logscope.reference.tflm_onnx",
}

__all__ = [
    "QUIRKS",
    "REFERENCE_SCHEMAS",
    "TARGETS",
    "CheckResult",
    "LoadLimits",
    "McuCheckResult",
    "ModelError",
    "ModelFormatError",
    "ModelTooLargeError",
    "ReferenceOptionError",
    "ReferenceOptions",
    "ReferenceResult",
    "RknnOptions",
    "ShapeError",
    "TfliteModel",
    "TflmOptions",
    "TflmPrediction",
    "UnsafeModelError",
    "analyze_model",
    "analyze_tflite",
    "check_log_against_model",
    "check_trace_against_tflite",
    "cross_check",
    "load_model",
    "load_tflite",
    "log_dtype",
    "log_target",
    "onnx_tflm_model",
    "parse_input_shape",
    "pick_build",
    "predict_arena",
    "replay_log",
]


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'logscope.reference' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value
