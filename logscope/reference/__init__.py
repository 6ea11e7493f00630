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

`onnx` and `tflite` are imported only when a model is loaded, so importing this package stays cheap.
"""

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
