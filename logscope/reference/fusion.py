"""Fusion candidates: Conv(+BN)(+Add)(+activation) chains a compiler is expected to fuse into one op.

A chain starts at a Conv / ConvTranspose / Gemm / MatMul and follows the sole reader of the current
output (an output read by two ops or kept as a graph output ends the chain), taking in this order:

1. any number of affine ops folded into the weights: BatchNormalization, and Mul / Add / Sub / Div
   with a constant (Caffe's `Scale`, which ONNX exports as Unsqueeze'd constants into Mul and Add);
2. at most one residual Add / Sum with another activation — only when this chain's op is the last
   producer of the Add's inputs (the Add cannot run before its other input exists);
3. at most one activation (Relu, Clip, LeakyRelu, Sigmoid, HardSwish, ...).

A chain of two or more ops is a candidate. Its RKNN-style name drops the folded affine ops and joins
the rest (`ConvRelu`, `ConvAddRelu`, `ConvClip`), which is how RKNN's layer tables name fused layers.
"""

from __future__ import annotations

from dataclasses import dataclass

from logscope.reference.graph import Op, RefGraph

FUSION_HEADS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul"})
AFFINE_OPS = frozenset({"BatchNormalization", "Mul", "Add", "Sub", "Div"})
RESIDUAL_OPS = frozenset({"Add", "Sum"})
ACTIVATIONS = frozenset(
    {
        "Relu",
        "Clip",
        "LeakyRelu",
        "PRelu",
        "Sigmoid",
        "HardSigmoid",
        "HardSwish",
        "Tanh",
        "Elu",
        "Selu",
        "Mish",
        "Gelu",
        "Softplus",
    }
)


@dataclass(frozen=True)
class FusionChain:
    steps: tuple[int, ...]  # graph steps, in order
    op_types: tuple[str, ...]
    rknn_name: str
    output: str  # the tensor the fused op writes

    @property
    def pattern(self) -> str:
        return "+".join(self.op_types)


def _sole_reader(graph: RefGraph, tensor: str) -> Op | None:
    t = graph.tensors[tensor]
    readers = set(t.consumers)
    if t.is_output or len(readers) != 1:
        return None
    return graph.ops[readers.pop()]


def _with_constant(graph: RefGraph, op: Op, current: str) -> bool:
    others = [n for n in op.inputs if n and n != current]
    return len(others) == 1 and graph.tensors[others[0]].role in ("weight", "aux", "folded")


def find_fusions(graph: RefGraph) -> list[FusionChain]:
    chains: list[FusionChain] = []
    claimed: set[int] = set()
    for op in graph.ops:
        if op.op_type not in FUSION_HEADS or op.step in claimed or not op.outputs or not op.outputs[0]:
            continue
        steps, types, roles = [op.step], [op.op_type], ["head"]
        current = op.outputs[0]
        stage = 0  # 0 affine allowed, 1 after residual add, 2 after activation
        while stage < 2:
            nxt = _sole_reader(graph, current)
            if nxt is None or nxt.step in claimed or not nxt.outputs or not nxt.outputs[0]:
                break
            if (
                stage == 0
                and nxt.op_type in AFFINE_OPS
                and (nxt.op_type == "BatchNormalization" or _with_constant(graph, nxt, current))
            ):
                role = "affine"
            elif stage == 0 and nxt.op_type in RESIDUAL_OPS and _is_last_input(graph, nxt, current):
                stage, role = 1, "residual"
            elif nxt.op_type in ACTIVATIONS and nxt.inputs and nxt.inputs[0] == current:
                stage, role = 2, "activation"
            else:
                break
            steps.append(nxt.step)
            types.append(nxt.op_type)
            roles.append(role)
            current = nxt.outputs[0]
        if len(steps) > 1:
            claimed.update(steps)
            chains.append(FusionChain(tuple(steps), tuple(types), _rknn_name(types, roles), current))
    return chains


def _is_last_input(graph: RefGraph, add: Op, current: str) -> bool:
    acts = [graph.tensors[n] for n in add.inputs if n and graph.tensors[n].role in ("input", "activation")]
    if len(acts) != 2 or current not in {t.name for t in acts}:
        return False
    producers = {t.name: (-1 if t.producer is None else t.producer) for t in acts}
    return producers[current] == max(producers.values())


def _rknn_name(types: list[str], roles: list[str]) -> str:
    name = "Conv" if types[0] in ("Conv", "Gemm") else types[0]
    for op_type, role in zip(types[1:], roles[1:], strict=True):
        if role == "residual":
            name += "Add"
        elif role == "activation":
            name += op_type
    return name
