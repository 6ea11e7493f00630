"""Tensor lifetimes: one usage record per activation buffer.

A step is one compute op, in execution order. A real graph input is live from step 0, an op's output
from the op's step; both stay live through their last consumer, inclusive (reference-anchors §1, §2).
Graph outputs stay live to the last step. Outputs nobody reads (a Dropout mask) occupy nothing.

In-place aliasing (off by default; an explicit, reported option): the output of a single-input-style
elementwise op (`INPLACE_OPS`) may reuse the buffer of an input that this op is the only reader of and
that has the output's size, is not a graph output and not a graph input. Aliased tensors share one
record, whose interval covers all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logscope.reference.graph import RefGraph, Tensor
from logscope.reference.planners import Record

# Ops that may write their output over an input (reference-anchors A2: Relu, BN, Mul/Add with a
# constant, Dropout, Softmax, Sum; plus the other elementwise activations).
INPLACE_OPS = frozenset(
    {
        "Relu",
        "LeakyRelu",
        "PRelu",
        "Elu",
        "Selu",
        "Clip",
        "Sigmoid",
        "HardSigmoid",
        "HardSwish",
        "Tanh",
        "Softplus",
        "Mish",
        "Gelu",
        "Identity",
        "Dropout",
        "BatchNormalization",
        "Softmax",
        "LogSoftmax",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Sum",
        "Max",
        "Min",
        "Abs",
        "Neg",
        "Exp",
        "Sqrt",
        "Reciprocal",
        "Cast",
    }
)


@dataclass(frozen=True)
class Lifetimes:
    """Records (one per buffer) and, for every activation, the index of the record holding it."""

    records: tuple[Record, ...]
    buffer_of: dict[str, int]
    steps: int


def tensor_lifetimes(
    graph: RefGraph, size_of: Callable[[Tensor], int], *, in_place: bool = False
) -> Lifetimes:
    steps = len(graph.ops)
    last_step = max(steps - 1, 0)
    root: dict[str, str] = {}  # aliased tensor -> tensor whose buffer it uses

    def find(name: str) -> str:
        while name in root:
            name = root[name]
        return name

    members: dict[str, list[Tensor]] = {}
    order: list[str] = []
    candidates = [t for t in graph.tensors.values() if t.role == "input"]
    for op in graph.ops:
        for out_name in op.outputs:
            if out_name:
                candidates.append(graph.tensors[out_name])
    sizes = {t.name: size_of(t) for t in candidates}
    for t in candidates:
        if sizes[t.name] <= 0:
            continue
        target = None
        if in_place and t.producer is not None and t.output_index == 0:
            op = graph.ops[t.producer]
            if op.op_type in INPLACE_OPS:
                target = _alias_target(graph, op.inputs, sizes)
        if target is not None:
            root[t.name] = target
            members[find(target)].append(t)
        else:
            members[t.name] = [t]
            order.append(t.name)
    records: list[Record] = []
    buffer_of: dict[str, int] = {}
    for name in order:
        group = members[name]
        first = min(_first(t) for t in group)
        last = max(_last(t, last_step) for t in group)
        index = len(records)
        records.append(Record(name, max(sizes[t.name] for t in group), first, last))
        for t in group:
            buffer_of[t.name] = index
    return Lifetimes(tuple(records), buffer_of, steps)


def _alias_target(graph: RefGraph, inputs: Sequence[str], sizes: dict[str, int]) -> str | None:
    """The first input whose buffer the op's output may take: an activation read only by this op, of the
    output's size, not a graph output (graph inputs have role `input` and are never overwritten)."""
    for name in inputs:
        t = graph.tensors.get(name) if name else None
        if t is None or t.role != "activation" or t.is_output or sizes.get(name, 0) <= 0:
            continue
        readers = set(t.consumers)
        if len(readers) == 1:
            op = graph.ops[readers.pop()]
            if sizes.get(op.outputs[0], 0) == sizes[name]:
                return name
    return None


def _first(t: Tensor) -> int:
    return 0 if t.producer is None else t.producer


def _last(t: Tensor, last_step: int) -> int:
    if t.is_output:
        return last_step
    return max([_first(t), *t.consumers])
