"""An ONNX model as the TFLite converter would hand it to TFLite Micro, for the arena prediction.

TFLM plans the tensors of the .tflite, not of the ONNX graph, so the ONNX graph is first rewritten the
way the TFLite converter rewrites it, and the result goes through the same `predict_arena`:
- layout NCHW → NHWC (TFLite's; channels last, which is where the per-channel arrays are counted);
- BatchNormalization after a convolution folds into its weights; Relu / Relu6 (Clip 0..6) after a
  convolution, FC or ADD becomes the op's fused activation (no tensor, no op) when the op's output has
  no other reader and is not a graph output; Dropout and Identity vanish;
- Conv → CONV_2D, or DEPTHWISE_CONV_2D when every input channel is its own group; Gemm / MatMul with
  a constant weight → FULLY_CONNECTED; Add / Sum → ADD; Concat → CONCATENATION; MaxPool → MAX_POOL_2D;
  AveragePool / GlobalAveragePool → AVERAGE_POOL_2D; Softmax → SOFTMAX; Reshape / Flatten / Squeeze /
  Unsqueeze → RESHAPE with an int32 shape tensor (as the converter writes it); any other op keeps its
  ONNX type in upper case (its kernel op data is then not modelled, and the output says so);
- int8: activations INT8 with one scale, convolution weights INT8 per output channel, FC weights per
  tensor, biases INT32; fp32: everything FLOAT32.

Exact when the converter emits this graph: the ONNX twins of corpus models give the corpus printouts'
figures to the byte (tests). A converter that emits other ops (MEAN for a global pool, TRANSPOSE pairs
left around a layout it cannot move, QUANTIZE/DEQUANTIZE at the ends) gives another arena; convert and
predict the .tflite for the final figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logscope.reference.graph import ELEM_BYTES, Op, RefGraph
from logscope.reference.tflite_loader import Quant, TfliteModel, TfOperator, TfSubgraph, TfTensor

_FUSE_INTO = {
    "Relu": ("Conv", "Gemm", "MatMul", "Add", "Sum"),
    "Clip": ("Conv", "Gemm", "MatMul", "Add", "Sum"),
    "BatchNormalization": ("Conv",),
}
_ALIAS = frozenset({"Dropout", "Identity"})
_RESHAPES = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
_OPCODES = {
    "Add": "ADD",
    "Sum": "ADD",
    "Concat": "CONCATENATION",
    "MaxPool": "MAX_POOL_2D",
    "AveragePool": "AVERAGE_POOL_2D",
    "GlobalAveragePool": "AVERAGE_POOL_2D",
    "Softmax": "SOFTMAX",
}
DTYPES = ("int8", "fp32")


def _nhwc(shape: tuple[int, ...] | None) -> tuple[int, ...]:
    if shape is None:
        return ()
    if len(shape) == 4:
        n, c, h, w = shape
        return (n, h, w, c)
    return tuple(shape)


@dataclass
class _Builder:
    graph: RefGraph
    int8: bool
    tensors: list[TfTensor] = field(default_factory=list)
    operators: list[TfOperator] = field(default_factory=list)
    index_of: dict[str, int] = field(default_factory=dict)  # ONNX tensor -> tflite tensor
    producer_op: dict[str, str] = field(default_factory=dict)  # ONNX tensor -> ONNX op type that wrote it
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, dtype: str, shape: tuple[int, ...], data_bytes: int, quant: Quant | None) -> int:
        self.tensors.append(TfTensor(len(self.tensors), name, dtype, shape, 0, data_bytes, False, quant))
        return len(self.tensors) - 1

    def activation(self, name: str) -> int:
        t = self.graph.tensors[name]
        dtype = "INT8" if self.int8 else "FLOAT32"
        quant = Quant(1, 1, 0, None, None) if self.int8 else None
        index = self.add(name, dtype, _nhwc(t.shape), 0, quant)
        self.index_of[name] = index
        return index

    def constant(self, name: str, shape: tuple[int, ...], kind: str, channels: int | None) -> int:
        numel = 1
        for d in shape:
            numel *= d
        if not self.int8:
            return self.add(name, "FLOAT32", shape, numel * 4, None)
        if kind == "bias":
            n = channels or 1
            return self.add(name, "INT32", shape, numel * 4, Quant(n, n, 0, None, None))
        n = channels or 1
        axis = 3 if kind == "depthwise" else 0
        return self.add(name, "INT8", shape, numel, Quant(n, n, axis if channels else 0, None, None))


def onnx_to_tflm_model(graph: RefGraph, dtype: str = "int8", source: str = "<onnx>") -> TfliteModel:
    """The TfliteModel the TFLite converter would produce from `graph` (see the module docstring)."""
    b = _Builder(graph, dtype == "int8")
    for name in graph.inputs:
        b.activation(name)
    for op in graph.ops:
        _convert(b, op)
    outputs = tuple(b.index_of[name] for name in graph.outputs if name in b.index_of)
    inputs = tuple(b.index_of[name] for name in graph.inputs)
    sg = TfSubgraph(0, graph.name, tuple(b.tensors), tuple(b.operators), inputs, outputs)
    description = "converted from ONNX by logscope's TFLite-converter emulation"
    return TfliteModel(source, 0, 3, description, (sg,), len(b.tensors) + 1, {}, None)


def _fusable(b: _Builder, op: Op) -> bool:
    """`op` (an activation or BN) folds into the op that wrote its input."""
    targets = _FUSE_INTO.get(op.op_type)
    if not targets or not op.inputs or op.inputs[0] not in b.index_of:
        return False
    src = b.graph.tensors[op.inputs[0]]
    if b.producer_op.get(op.inputs[0]) not in targets or src.is_output or len(set(src.consumers)) != 1:
        return False
    if op.op_type == "Clip":
        return True  # Relu6 (Clip 0..6) or a Relu-like bound: TFLite's RELU6 / RELU_N1_TO_1 fused
    return True


def _convert(b: _Builder, op: Op) -> None:
    g = b.graph
    outs = [o for o in op.outputs if o]
    if op.op_type in _ALIAS or _fusable(b, op):
        if op.inputs and op.inputs[0] in b.index_of and outs:
            b.index_of[outs[0]] = b.index_of[op.inputs[0]]
            b.producer_op[outs[0]] = b.producer_op.get(op.inputs[0], op.op_type)
        return
    inputs: list[int] = []
    opcode = _OPCODES.get(op.op_type, op.op_type.upper())
    if op.op_type == "Conv":
        w = g.tensors[op.inputs[1]]
        cout, cin_per_group, kh, kw = (w.shape or (1, 1, 1, 1)) + (1,) * (4 - len(w.shape or ()))
        group = int(op.attrs.get("group", 1))
        depthwise = group > 1 and cin_per_group == 1
        opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
        inputs.append(b.index_of[op.inputs[0]])
        shape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin_per_group)
        inputs.append(b.constant(w.name, shape, "depthwise" if depthwise else "weights", cout))
        bias = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] else None
        inputs.append(b.constant(bias or f"{op.name}_bias", (cout,), "bias", cout))
    elif op.op_type in ("Gemm", "MatMul") and len(op.inputs) > 1 and op.inputs[1] not in b.index_of:
        w = g.tensors[op.inputs[1]]
        wshape = tuple(w.shape or (1, 1))
        units = wshape[0] if op.attrs.get("transB", 0) else wshape[-1]
        depth = wshape[-1] if op.attrs.get("transB", 0) else wshape[0]
        opcode = "FULLY_CONNECTED"
        inputs.append(b.index_of[op.inputs[0]])
        inputs.append(b.constant(w.name, (units, depth), "weights", None))
        bias = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] else None
        inputs.append(b.constant(bias or f"{op.name}_bias", (units,), "bias", None))
    elif op.op_type in _RESHAPES:
        opcode = "RESHAPE"
        inputs.append(b.index_of[op.inputs[0]])
        out = g.tensors[outs[0]]
        rank = len(_nhwc(out.shape)) or 1
        inputs.append(b.add(f"{op.name}_shape", "INT32", (rank,), 4 * rank, None))
    else:
        for name in op.inputs:
            if not name:
                continue
            if name in b.index_of:
                inputs.append(b.index_of[name])
            else:
                t = g.tensors.get(name)
                if t is None:
                    continue
                size = (t.numel or 0) * (1 if b.int8 and t.is_float else ELEM_BYTES.get(t.elem_type, 4))
                inputs.append(b.add(name, "INT8" if b.int8 else "FLOAT32", _nhwc(t.shape), size, None))
    outputs = []
    for name in outs:
        outputs.append(b.activation(name))
        b.producer_op[name] = op.op_type
    b.operators.append(TfOperator(len(b.operators), opcode, 1, tuple(inputs), tuple(outputs), (), None, {}))


def onnx_tflm_model(
    path: object,
    dtype: str = "int8",
    input_shapes: dict[str | None, tuple[int, ...]] | None = None,
) -> TfliteModel:
    """Load an ONNX model safely (`load_model`), resolve its shapes and convert it as above."""
    import os

    from logscope.reference.errors import ReferenceOptionError
    from logscope.reference.graph import build_graph
    from logscope.reference.loader import load_model

    if dtype not in DTYPES:
        raise ReferenceOptionError(f"--dtype {dtype!r}: TFLM runs {' or '.join(DTYPES)} models")
    source = os.fspath(path)  # type: ignore[call-overload]
    graph = build_graph(load_model(source), input_shapes or {})
    return onnx_to_tflm_model(graph, dtype, source)
