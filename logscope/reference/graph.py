"""The ONNX graph as the analysis sees it: compute ops in execution order and classified tensors.

Classification (reference-anchors §7):

- **constants** are initializers, `Constant` outputs, and outputs of nodes whose inputs are all
  constant (`ConstantOfShape` on a shape initializer, `Unsqueeze` of a constant, ...). The `onnx`
  wheel's light models hold every weight this way, so initializer-only counting misses them.
- a constant consumed by at least one compute op is a **weight** if it is float or quantized
  (int8/uint8/int4, or int32 bias), else **aux** (int64 Reshape targets, axes: counted apart).
  Constants only feeding other constant nodes are folded away and cost nothing.
- initializers listed in `graph.input` (IR < 4 models do this) are not inputs.
- **compute ops** are the remaining nodes, in file order (ONNX requires a topological order; a file
  that is not is re-sorted stably, a cycle is an error). Their outputs are **activations**.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logscope.reference.errors import ModelFormatError, ModelTooLargeError
from logscope.reference.shapes import Shape, TensorType, fallback_type, infer_types, resolve_input_shapes

if TYPE_CHECKING:
    import onnx

# ONNX TensorProto element types -> bytes per element (sub-byte types round up to 1).
ELEM_BYTES = {
    1: 4,
    2: 1,
    3: 1,
    4: 2,
    5: 2,
    6: 4,
    7: 8,
    9: 1,
    10: 2,
    11: 8,
    12: 4,
    13: 8,
    14: 8,
    15: 16,
    16: 2,
    17: 1,
    18: 1,
    19: 1,
    20: 1,
    21: 1,
    22: 1,
    23: 1,
}
ELEM_NAMES = {
    0: "UNDEFINED",
    1: "FLOAT",
    2: "UINT8",
    3: "INT8",
    4: "UINT16",
    5: "INT16",
    6: "INT32",
    7: "INT64",
    8: "STRING",
    9: "BOOL",
    10: "FLOAT16",
    11: "DOUBLE",
    12: "UINT32",
    13: "UINT64",
    14: "COMPLEX64",
    15: "COMPLEX128",
    16: "BFLOAT16",
    17: "FLOAT8E4M3FN",
    18: "FLOAT8E4M3FNUZ",
    19: "FLOAT8E5M2",
    20: "FLOAT8E5M2FNUZ",
    21: "UINT4",
    22: "INT4",
    23: "FLOAT4E2M1",
}
FLOAT_TYPES = frozenset({1, 10, 11, 16, 17, 18, 19, 20, 23})
QUANT_TYPES = frozenset({2, 3, 21, 22})
# Ops whose input 2 is a bias (int32 when the op runs in int8).
BIAS_OPS = frozenset({"Conv", "ConvTranspose", "Gemm", "QLinearConv", "ConvInteger"})


@dataclass
class Tensor:
    name: str
    elem_type: int
    shape: Shape | None
    role: str  # input | activation | weight | aux | folded
    producer: int | None = None  # step of the compute op writing it
    output_index: int = 0  # position among its producer's outputs
    consumers: list[int] = field(default_factory=list)  # steps of compute ops reading it
    is_output: bool = False
    shape_source: str = "inferred"  # declared | inferred | fallback | unknown

    @property
    def numel(self) -> int | None:
        if self.shape is None:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def dtype(self) -> str:
        return ELEM_NAMES.get(self.elem_type, str(self.elem_type))

    @property
    def is_float(self) -> bool:
        return self.elem_type in FLOAT_TYPES


@dataclass
class Op:
    step: int
    name: str
    op_type: str
    domain: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any]


@dataclass
class RefGraph:
    name: str
    ir_version: int
    opset: int | None
    producer: str
    inputs: dict[str, Shape]
    outputs: tuple[str, ...]
    ops: list[Op]
    tensors: dict[str, Tensor]
    const_node_count: int
    notes: list[str]

    def weights_of(self, op: Op) -> list[tuple[int, Tensor]]:
        """(input index, tensor) of the weights `op` reads."""
        return [
            (i, self.tensors[n]) for i, n in enumerate(op.inputs) if n and self.tensors[n].role == "weight"
        ]

    def activations_in(self, op: Op) -> list[Tensor]:
        seen: list[Tensor] = []
        for n in op.inputs:
            t = self.tensors.get(n) if n else None
            if t is not None and t.role in ("input", "activation") and t not in seen:
                seen.append(t)
        return seen


def _attr_value(attr: onnx.AttributeProto) -> Any:
    import onnx

    if attr.type == onnx.AttributeProto.GRAPH or attr.type == onnx.AttributeProto.GRAPHS:
        return None  # subgraph bodies are not analysed
    if attr.type == onnx.AttributeProto.TENSOR:
        return None
    return onnx.helper.get_attribute_value(attr)


def _ordered_nodes(graph: onnx.GraphProto, defined: set[str]) -> list[onnx.NodeProto]:
    """Nodes in file order if that is topological, else a stable topological order; cycles are errors."""
    produced: dict[str, int] = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if not out:
                continue
            if out in produced or out in defined:
                raise ModelFormatError(f"tensor {out!r} is produced twice (node {node.name or node.op_type})")
            produced[out] = i
    in_order = True
    seen = set(defined)
    for node in graph.node:
        for name in node.input:
            if not name or name in seen:
                continue
            if name not in produced:
                raise ModelFormatError(
                    f"node {node.name or node.op_type!r} reads {name!r}, "
                    "which no input, initializer or node defines"
                )
            in_order = False
        seen.update(o for o in node.output if o)
    if in_order:
        return list(graph.node)
    # Kahn's algorithm, always taking the lowest file index that is ready (stable).
    import heapq

    deps: list[set[int]] = []
    users: dict[int, list[int]] = {}
    for i, node in enumerate(graph.node):
        d = {produced[n] for n in node.input if n and n not in defined}
        deps.append(d)
        for j in d:
            users.setdefault(j, []).append(i)
    ready = [i for i, d in enumerate(deps) if not d]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in users.get(i, []):
            deps[j].discard(i)
            if not deps[j]:
                heapq.heappush(ready, j)
    if len(order) != len(graph.node):
        raise ModelFormatError("the graph has a cycle")
    return [graph.node[i] for i in order]


# A tensor's element count, and so every byte, MAC and offset figure computed from it, stays far below
# 2**63 (int64 frames, numpy): 2**40 elements is a terabyte at one byte each, beyond any model an NPU or
# MCU runs, and a shape over it (a huge declared input, a lying initializer, ConstantOfShape or Expand to
# an astronomic shape) is refused before anything is computed from it.
MAX_TENSOR_ELEMENTS = 2**40


def _check_sizes(tensors: Iterable[Tensor]) -> None:
    for t in tensors:
        if t.shape is None:
            continue
        negative = [d for d in t.shape if d < 0]
        if negative:
            raise ModelFormatError(f"tensor {t.name!r} has a negative dimension: shape {tuple(t.shape)}")
        if (t.numel or 0) > MAX_TENSOR_ELEMENTS:
            raise ModelTooLargeError(
                f"tensor {t.name!r} has {t.numel} elements (shape {tuple(t.shape)}), over the limit of "
                f"{MAX_TENSOR_ELEMENTS} (2**40)"
            )


def build_graph(model: onnx.ModelProto, input_shapes: Mapping[str | None, Shape] | None = None) -> RefGraph:
    """Classify tensors, fix input shapes, infer the rest. `model` is modified (input dims written)."""
    g = model.graph
    init_names = {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
    real_inputs = [vi.name for vi in g.input if vi.name not in init_names]
    nodes = _ordered_nodes(g, init_names | set(real_inputs))
    shapes, notes = resolve_input_shapes(model, real_inputs, input_shapes or {})
    types, infer_notes = infer_types(model)
    notes.extend(infer_notes)

    # A list, not only a set: the order (initializers, then node outputs) keeps every output deterministic.
    constant_order = [t.name for t in g.initializer] + [s.values.name for s in g.sparse_initializer]
    constant: set[str] = set(constant_order)
    compute_nodes: list[onnx.NodeProto] = []
    const_nodes = 0
    for node in nodes:
        ins = [n for n in node.input if n]
        if all(n in constant for n in ins) and node.op_type not in ("RandomNormalLike", "RandomUniformLike"):
            new = [o for o in node.output if o]
            constant.update(new)
            constant_order.extend(new)
            const_nodes += 1
        else:
            compute_nodes.append(node)

    tensors: dict[str, Tensor] = {}

    def ttype(name: str) -> TensorType | None:
        return types.get(name)

    for name in constant_order:
        tt = ttype(name)
        tensors[name] = Tensor(name, tt.elem_type if tt else 0, tt.shape if tt else None, "folded")
    for name in real_inputs:
        tt = ttype(name)
        tensors[name] = Tensor(
            name, tt.elem_type if tt else 1, shapes[name], "input", shape_source="declared"
        )
    ops: list[Op] = []
    for step, node in enumerate(compute_nodes):
        attrs = {a.name: _attr_value(a) for a in node.attribute}
        op = Op(
            step,
            node.name or f"{node.op_type}_{step}",
            node.op_type,
            node.domain,
            tuple(node.input),
            tuple(node.output),
            attrs,
        )
        ops.append(op)
        for name in op.inputs:
            if name:
                tensors[name].consumers.append(step)
        for index, name in enumerate(op.outputs):
            if not name:
                continue
            tt = ttype(name)
            source = "inferred"
            if tt is None or tt.shape is None:
                known = [_tt(tensors[n]) if n in tensors else None for n in op.inputs]
                fb = fallback_type(op.op_type, attrs, index, known)
                if fb is not None:
                    tt, source = (
                        TensorType(tt.elem_type if tt and tt.elem_type else fb.elem_type, fb.shape),
                        "fallback",
                    )
                else:
                    source = "unknown"
            tensors[name] = Tensor(
                name,
                tt.elem_type if tt else 0,
                tt.shape if tt else None,
                "activation",
                producer=step,
                output_index=index,
                shape_source=source,
            )
    for name in constant_order:  # weight / aux / folded, from who reads them
        t = tensors[name]
        if not t.consumers:
            continue
        readers = [(ops[s], i) for s in t.consumers for i, n in enumerate(ops[s].inputs) if n == name]
        quantized = t.elem_type in QUANT_TYPES or (
            t.elem_type == 6 and any(op.op_type in BIAS_OPS and i == 2 for op, i in readers)
        )
        t.role = "weight" if t.is_float or quantized else "aux"
    outputs = tuple(o.name for o in g.output)
    for name in outputs:
        if name in tensors:
            tensors[name].is_output = True
    _check_sizes(tensors.values())
    unknown = [t.name for t in tensors.values() if t.role == "activation" and t.shape is None and _costs(t)]
    if unknown:
        notes.append(f"{len(unknown)} activation(s) of unknown shape count as 0 bytes: {unknown[:5]}")
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    return RefGraph(
        name=g.name or "graph",
        ir_version=model.ir_version,
        opset=opset,
        producer=" ".join(p for p in (model.producer_name, model.producer_version) if p),
        inputs=shapes,
        outputs=outputs,
        ops=ops,
        tensors=tensors,
        const_node_count=const_nodes,
        notes=notes,
    )


def _tt(t: Tensor) -> TensorType:
    return TensorType(t.elem_type, t.shape)


def _costs(t: Tensor) -> bool:
    """Whether an activation occupies memory: unconsumed optional outputs (Dropout masks) do not."""
    return bool(t.consumers) or t.is_output or t.output_index == 0
