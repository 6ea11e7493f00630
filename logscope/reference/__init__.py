"""Reference analysis from an ONNX model, and cross-checking a log against it.

    from logscope.reference import analyze_model, ReferenceOptions, cross_check
    ref = analyze_model("model.onnx", ReferenceOptions(dtype="int8", target="rk3588"))
    ref.totals["lower_bound_bytes"], ref.totals["rknn_bytes"], ref.frames["ref_plans"]
    check = cross_check(logscope.parse("build.log"), ref)

`onnx` is imported only when a model is loaded, so importing this package stays cheap.
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

__all__ = [
    "QUIRKS",
    "REFERENCE_SCHEMAS",
    "TARGETS",
    "CheckResult",
    "LoadLimits",
    "ModelError",
    "ModelFormatError",
    "ModelTooLargeError",
    "ReferenceOptionError",
    "ReferenceOptions",
    "ReferenceResult",
    "RknnOptions",
    "ShapeError",
    "UnsafeModelError",
    "analyze_model",
    "check_log_against_model",
    "cross_check",
    "load_model",
    "log_dtype",
    "log_target",
    "parse_input_shape",
    "pick_build",
    "replay_log",
]
