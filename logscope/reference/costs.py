"""Bytes, parameters and MACs per op, under a deployment dtype.

Dtype policy (`--dtype`): float tensors are counted at 4 bytes (`fp32`), 2 (`fp16`) or 1 (`int8`);
in `int8` the bias of Conv/ConvTranspose/Gemm (input 2) is int32 (4 bytes), as RKNN and TFLite store
it. Integer tensors (int64 shapes, int32 indices) keep their own size; quantized weights stay 1 byte.

- **params**: elements of weight tensors (float or quantized constants read by compute ops), each
  shared weight counted once. `bn_stat_params` are BatchNormalization's running mean and variance
  (inputs 3 and 4), listed apart because published counts differ on whether they include them.
- **MACs**: multiply-accumulates of Conv (out elements x Cin/group x kernel), ConvTranspose (in
  elements x Cout/group x kernel), Gemm (M x N x K) and MatMul (out elements x K); bias adds and
  other ops count 0 (the convention of the published Conv+FC counts in reference-anchors §5).
"""

from __future__ import annotations

from dataclasses import dataclass

from logscope.reference.errors import ModelTooLargeError, ReferenceOptionError
from logscope.reference.graph import BIAS_OPS, ELEM_BYTES, QUANT_TYPES, Op, RefGraph, Tensor

DTYPES = ("fp32", "fp16", "int8")
FLOAT_BYTES = {"fp32": 4, "fp16": 2, "int8": 1}


def check_dtype(dtype: str) -> str:
    if dtype not in FLOAT_BYTES:
        raise ReferenceOptionError(f"unknown dtype {dtype!r}; one of {', '.join(DTYPES)}")
    return dtype


def element_bytes(t: Tensor, dtype: str, *, bias: bool = False) -> int:
    """Bytes per element of `t` under the policy."""
    if t.is_float:
        if dtype == "int8" and bias:
            return 4
        return FLOAT_BYTES[dtype]
    if t.elem_type in QUANT_TYPES:
        return 1
    return ELEM_BYTES.get(t.elem_type, 0)


def activation_bytes(t: Tensor, dtype: str) -> int:
    """Bytes an activation occupies; 0 for an unknown shape and for unconsumed optional outputs."""
    n = t.numel
    if n is None or not occupies_memory(t):
        return 0
    return n * element_bytes(t, dtype)


def occupies_memory(t: Tensor) -> bool:
    """Unconsumed secondary outputs (Dropout/BN/MaxPool extras) are never written for inference."""
    return t.role == "input" or bool(t.consumers) or t.is_output or t.output_index == 0


def is_bias(op: Op, index: int) -> bool:
    return op.op_type in BIAS_OPS and index == 2


@dataclass(frozen=True)
class OpCost:
    weight_bytes: int
    params: int
    bn_stat_params: int
    macs: int
    output_bytes: int
    weight_names: tuple[str, ...]


# Every tensor stays under 2**40 elements, but a MAC count is a product of two such figures: a Conv
# whose weight dims disagree with its kernel (a lying model) reaches 2**80. The model's total, and so
# every op's count, stays under 2**60 (a billion GMACs, a million times the largest vision models):
# the frames hold int64, and a count beyond it is refused rather than shown as missing.
MAX_MODEL_MACS = 2**60


def op_costs(graph: RefGraph, dtype: str) -> list[OpCost]:
    """Cost of every compute op; a weight shared by several ops is charged to the first reader."""
    charged: set[str] = set()
    out: list[OpCost] = []
    total_macs = 0
    for op in graph.ops:
        wbytes = params = bn = 0
        names: list[str] = []
        for index, t in graph.weights_of(op):
            if t.name in charged or t.numel is None:
                continue
            charged.add(t.name)
            names.append(t.name)
            n = t.numel
            params += n
            wbytes += n * element_bytes(t, dtype, bias=is_bias(op, index))
            if op.op_type == "BatchNormalization" and index in (3, 4):
                bn += n
        outputs = sum(activation_bytes(graph.tensors[o], dtype) for o in op.outputs if o)
        macs = op_macs(graph, op)
        total_macs += macs
        if total_macs > MAX_MODEL_MACS:
            raise ModelTooLargeError(
                f"op {op.name!r} ({op.op_type}) brings the model to {total_macs} MACs, over the limit of "
                f"{MAX_MODEL_MACS} (2**60)"
            )
        out.append(OpCost(wbytes, params, bn, macs, outputs, tuple(names)))
    return out


def _shape(graph: RefGraph, name: str) -> tuple[int, ...] | None:
    t = graph.tensors.get(name) if name else None
    return t.shape if t is not None else None


def _prod(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def op_macs(graph: RefGraph, op: Op) -> int:
    """MACs of Conv / ConvTranspose / Gemm / MatMul (0 for other ops or unknown shapes)."""
    out = _shape(graph, op.outputs[0]) if op.outputs else None
    if op.op_type == "Conv" and len(op.inputs) > 1:
        w = _shape(graph, op.inputs[1])
        return _prod(out) * _prod(w[1:]) if out is not None and w is not None else 0
    if op.op_type == "ConvTranspose" and len(op.inputs) > 1:
        x, w = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
        return _prod(x) * _prod(w[1:]) if x is not None and w is not None else 0
    if op.op_type == "Gemm" and len(op.inputs) > 1:
        a = _shape(graph, op.inputs[0])
        if out is None or a is None or len(a) != 2:
            return 0
        k = a[0] if op.attrs.get("transA") else a[1]
        return _prod(out) * k
    if op.op_type == "MatMul" and len(op.inputs) > 1:
        a = _shape(graph, op.inputs[0])
        if out is None or a is None or not a:
            return 0
        return _prod(out) * a[-1]
    return 0
