"""Shapes and dtypes of every tensor: ONNX shape inference first, then per-op fallbacks.

Order of trust: the user's `--input-shape` for graph inputs, then the model's declared dims, then
`onnx.shape_inference.infer_shapes(data_prop=True)`, then the fallbacks below for what inference left
unknown (same-shape ops take their first input's shape, broadcasting ops broadcast). A tensor that is
still unknown gets `None` and is reported; it is never guessed silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logscope.reference.errors import ShapeError

if TYPE_CHECKING:
    import onnx

Shape = tuple[int, ...]

# Outputs with the shape (and dtype) of the first input. Dropout's mask has its input's shape too.
SAME_SHAPE_OPS = frozenset(
    {
        "Relu",
        "LeakyRelu",
        "PRelu",
        "Elu",
        "Selu",
        "Celu",
        "Gelu",
        "Sigmoid",
        "HardSigmoid",
        "HardSwish",
        "Tanh",
        "Softplus",
        "Softsign",
        "Mish",
        "Swish",
        "Clip",
        "Abs",
        "Neg",
        "Exp",
        "Log",
        "Sqrt",
        "Reciprocal",
        "Floor",
        "Ceil",
        "Round",
        "Sign",
        "Erf",
        "Sin",
        "Cos",
        "Not",
        "Identity",
        "Dropout",
        "BatchNormalization",
        "InstanceNormalization",
        "LayerNormalization",
        "LRN",
        "Softmax",
        "LogSoftmax",
        "Hardmax",
        "Cast",
        "CastLike",
        "QuantizeLinear",
        "DequantizeLinear",
        "LpNormalization",
        "MeanVarianceNormalization",
        "Shrink",
        "ThresholdedRelu",
        "IsNaN",
        "IsInf",
    }
)
BROADCAST_OPS = frozenset(
    {
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Sum",
        "Max",
        "Min",
        "Mean",
        "And",
        "Or",
        "Xor",
        "Equal",
        "Greater",
        "Less",
        "GreaterOrEqual",
        "LessOrEqual",
        "Where",
        "Mod",
        "BitShift",
    }
)

_SHAPE_TEXT = re.compile(r"^\d+(?:[x,]\d+)*$")


@dataclass(frozen=True)
class TensorType:
    """What is known about a tensor: ONNX element type (TensorProto enum), static shape (None: unknown)."""

    elem_type: int
    shape: Shape | None


def parse_input_shape(text: str) -> tuple[str | None, Shape]:
    """`"images=1x3x640x640"` -> ("images", (1, 3, 640, 640)); `"1x3x224x224"` -> (None, ...).

    The name is everything before the last `=`, so names such as `input:0` work. Commas are accepted as
    separators too (`1,3,224,224`).
    """
    name, sep, dims = text.strip().rpartition("=")
    dims = dims.strip().replace(" ", "")
    if not _SHAPE_TEXT.match(dims):
        raise ShapeError(f"--input-shape {text!r}: expected NAME=1x3x640x640 (positive integers)")
    shape = tuple(int(d) for d in re.split(r"[x,]", dims))
    if any(d <= 0 for d in shape):
        raise ShapeError(f"--input-shape {text!r}: dimensions must be positive")
    return (name.strip() or None) if sep else None, shape


def resolve_input_shapes(
    model: onnx.ModelProto, real_inputs: Sequence[str], given: Mapping[str | None, Shape]
) -> tuple[dict[str, Shape], list[str]]:
    """Static shape of every real graph input, written back into `model`; also returns notes.

    A dimension without a value (symbolic `dim_param` or missing) takes the user's value. Without one,
    a leading (batch) dimension becomes 1 with a note; any other raises `ShapeError` naming the input.
    """
    notes: list[str] = []
    given = dict(given)
    if None in given:
        if len(real_inputs) != 1:
            raise ShapeError(
                f"--input-shape without a name needs a single-input model; inputs are {list(real_inputs)}"
            )
        given[real_inputs[0]] = given.pop(None)
    unknown = sorted(str(k) for k in given if k not in real_inputs)
    if unknown:
        raise ShapeError(f"--input-shape names no model input: {unknown}; inputs are {list(real_inputs)}")
    by_name = {vi.name: vi for vi in model.graph.input}
    out: dict[str, Shape] = {}
    for name in real_inputs:
        ttype = by_name[name].type.tensor_type
        declared = [
            d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in ttype.shape.dim
        ]
        user = given.get(name)
        if user is not None:
            if ttype.HasField("shape") and len(declared) != len(user):
                raise ShapeError(
                    f"--input-shape {name}: {len(user)} dims given, the model declares {len(declared)}"
                )
            changed = [i for i, d in enumerate(declared) if d is not None and d != user[i]]
            if changed:
                notes.append(
                    f"input {name}: declared {_fmt(declared)} overridden by --input-shape {_fmt(user)}"
                )
            shape = tuple(user)
        else:
            if not ttype.HasField("shape"):
                raise ShapeError(f"input {name} has no declared shape; give --input-shape {name}=1x3x224x224")
            missing = [i for i, d in enumerate(declared) if d is None]
            if [i for i in missing if i != 0]:
                raise ShapeError(
                    f"input {name} has dynamic dims {_fmt(declared)}; give them with "
                    f"--input-shape {name}=" + "x".join(str(d or "N") for d in declared)
                )
            if missing:
                notes.append(f"input {name}: dynamic batch dimension taken as 1 (--input-shape to change)")
            shape = tuple(d if d is not None else 1 for d in declared)
        out[name] = shape
        _write_shape(ttype, shape)
    return out, notes


def _write_shape(ttype: onnx.TypeProto.Tensor, shape: Shape) -> None:
    del ttype.shape.dim[:]
    for d in shape:
        ttype.shape.dim.add().dim_value = d


def _fmt(dims: Iterable[int | None]) -> str:
    return "x".join("?" if d is None else str(d) for d in dims)


def infer_types(model: onnx.ModelProto) -> tuple[dict[str, TensorType], list[str]]:
    """Element type and static shape of every named tensor ONNX shape inference can tell, plus notes."""
    import onnx

    notes: list[str] = []
    try:
        inferred = onnx.shape_inference.infer_shapes(
            model, check_type=False, strict_mode=False, data_prop=True
        )
    except Exception as exc:  # onnx raises a zoo of types (InferenceError, ValidationError, RuntimeError)
        notes.append(f"ONNX shape inference failed ({type(exc).__name__}: {exc}); per-op fallbacks only")
        inferred = model
    types: dict[str, TensorType] = {}
    graph = inferred.graph
    for init in graph.initializer:
        types[init.name] = TensorType(init.data_type, tuple(int(d) for d in init.dims))
    for vi in [*graph.input, *graph.value_info, *graph.output]:
        if vi.name in types or not vi.type.HasField("tensor_type"):
            continue
        ttype = vi.type.tensor_type
        shape: Shape | None = None
        if ttype.HasField("shape"):
            dims = ttype.shape.dim
            if all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims):
                shape = tuple(int(d.dim_value) for d in dims)
        if ttype.elem_type or shape is not None:
            types[vi.name] = TensorType(ttype.elem_type, shape)
    for node in graph.node:  # Constant nodes: the value's own type is exact
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.HasField("t"):
                    types[node.output[0]] = TensorType(attr.t.data_type, tuple(int(d) for d in attr.t.dims))
    return types, notes


def fallback_type(
    op_type: str, attrs: Mapping[str, object], output_index: int, inputs: Sequence[TensorType | None]
) -> TensorType | None:
    """Type of an output that inference left unknown, from the op's inputs, or None."""
    first = inputs[0] if inputs else None
    if op_type in SAME_SHAPE_OPS and first is not None and first.shape is not None:
        elem = first.elem_type
        to = attrs.get("to")
        if op_type == "Cast" and isinstance(to, int):
            elem = to
        if op_type == "Dropout" and output_index == 1:
            elem = 9  # TensorProto.BOOL: the mask
        return TensorType(elem, first.shape)
    if op_type in BROADCAST_OPS and inputs and all(t is not None and t.shape is not None for t in inputs):
        shapes = [t.shape for t in inputs if t is not None and t.shape is not None]
        try:
            shape = _broadcast(shapes)
        except ValueError:
            return None
        base = inputs[-1] if op_type == "Where" else first
        logical = op_type in {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor"}
        return TensorType(9 if logical else (base.elem_type if base else 0), shape)
    return None


def _broadcast(shapes: Sequence[Shape]) -> Shape:
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for shape in shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        for i, d in enumerate(padded):
            if d != 1:
                if out[i] not in (1, d):
                    raise ValueError("shapes do not broadcast")
                out[i] = d
    return tuple(out)
