"""TFLite Micro's tensor arena, predicted from a .tflite model: head (planned buffers) + tail (persistent).

TFLM splits its one arena in two. The **head** holds every tensor the model does not carry as constant
data, and every kernel's scratch buffer, at offsets from the memory planner; the **tail** grows down
from the arena's end with what lives as long as the interpreter (eval tensors, node structs, kernel
op data, ...). `tensor_arena` must hold head + tail. This module reproduces both.

**Head** (what `MicroAllocator::CommitStaticMemoryPlan` does, step for step):
1. Lifetimes (`AllocationInfoBuilder::MarkAllocationLifetimes`): allocation scope 0 is "before the
   first op"; op *i* runs in scope *i* + 1. Subgraph inputs are created and used at 0; an op's outputs
   are created at its scope; every tensor an op reads (or writes) is used through that scope; subgraph
   outputs live to the last scope. A scratch buffer lives exactly in its op's scope.
2. Which buffers are planned: tensors without constant data in the flatbuffer and not variables
   (variables go to the tail), then the scratch buffers, in request order.
3. Sizes: TfLiteEvalTensorByteLength (elements × element size), rounded up to 16 B
   (`MicroArenaBufferAlignment`).
4. `GreedyMemoryPlanner`: buffers sorted by size, largest first — a bubble sort that swaps only on
   "smaller before larger" over a list filled from its end, so among equal sizes the buffer added
   *last* comes first; offline-planned offsets first. Each buffer then goes into the first gap, in offset
   order, among the already placed buffers whose lifetimes overlap its own (inclusive ends), that is at
   least as large as the buffer — else after the last of them. Head = max(offset + size).

**Tail**: the persistent allocations, replayed in the order `MicroInterpreter::AllocateTensors`
makes them, each aligned as the runtime aligns it (tail pointer rounded down): subgraph allocation
records, NodeAndRegistration structs, TfLiteEvalTensors, each operator's builtin-option struct, each
kernel's op data (Init) and per-channel arrays (Prepare), scratch buffer handles, then the interpreter's
input/output tensor arrays with a persistent TfLiteTensor (+ quantization) per model input and output.
Struct and kernel sizes are a table per runtime build (`TAIL_PROFILES`): `x86_64` is measured on the
tflite-micro Python interpreter (reference kernels); `arm32` takes the struct sizes Cortex-M
RecordingMicroAllocator printouts show (12-B eval tensors, 32-B node structs and persistent tensors,
12-B affine quantization) and keeps the x86-64 kernel op-data sizes and allocator objects (an estimate:
on the published person_detect printout of a Cortex-M CMSIS-NN build the persistent buffers are 1,568 B,
6 %, above it).

**Scratch buffers** (`--kernels`): TFLM's reference kernels request none for the ops modelled here (the
corpus shows it: every head equals the tensor plan). CMSIS-NN requests the im2col-style buffers its
`*_get_buffer_size` functions document (`cmsis-nn`): CONV_2D int8 non-1×1 2·(Cin·Kh·Kw)·2 B,
DEPTHWISE_CONV_2D int8 Cin·Kh·Kw·2 B unless the 3×3 / multiplier-1 fast path applies, AVERAGE_POOL_2D
int8 Cin·4 B. Those are computed, not measured here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from logscope.reference.errors import ModelTooLargeError, ReferenceOptionError
from logscope.reference.frames import build_reference_frame
from logscope.reference.tflite_loader import TfliteModel, TfOperator, TfSubgraph

SCHEMA_VERSION = 1
ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment()
MAX_PLANNED_BUFFERS = 8192  # the planner is quadratic in buffers; the largest corpus model plans 32
ONLINE = -1


@dataclass(frozen=True)
class TailProfile:
    """Struct sizes and kernel persistent sizes of one runtime build (bytes)."""

    name: str
    source: str
    pointer: int
    eval_tensor: int
    node_and_registration: int
    persistent_tensor: int
    affine_quantization: int
    subgraph_allocations: int
    scratch_handle: int
    allocator_objects: int  # allocator, planner and interpreter objects the runtime places in the tail
    op_data: dict[str, int]
    builtin_data: dict[str, tuple[int, int]]  # op -> (bytes, alignment)
    per_channel_ops: frozenset[str]


# Kernel op data (Init's AllocatePersistentBuffer) and builtin option structs, measured on the
# tflite-micro Python interpreter by single-op models (fixtures/tflm-corpus/single_*): the printout's
# 'Persistent buffer data' minus the interpreter's two tensor-pointer arrays gives the op data; the
# tail total minus every printed category gives the untracked builtin struct.
_OP_DATA = {
    "CONV_2D": 80,
    "DEPTHWISE_CONV_2D": 80,
    "FULLY_CONNECTED": 72,
    "ADD": 60,
    "CONCATENATION": 80,
    "AVERAGE_POOL_2D": 32,
    "MAX_POOL_2D": 32,
    "SOFTMAX": 80,
    "RESHAPE": 0,
}
_BUILTIN = {
    "CONV_2D": (28, 4),  # TfLiteConvParams
    "DEPTHWISE_CONV_2D": (28, 4),  # TfLiteDepthwiseConvParams
    # 32 B at 8-B alignment: the only size/alignment (of 16-32 B, 4/8/16-B aligned, with or without a
    # second allocation) that reproduces the tail of all 112 corpus and probe models with an FC op; the
    # 20-B TfLiteFullyConnectedParams alone leaves 12 B unexplained.
    "FULLY_CONNECTED": (32, 8),
    "ADD": (8, 4),  # TfLiteAddParams
    "CONCATENATION": (8, 4),  # TfLiteConcatenationParams
    "AVERAGE_POOL_2D": (40, 4),  # TfLitePoolParams
    "MAX_POOL_2D": (40, 4),
    "SOFTMAX": (4, 4),  # TfLiteSoftmaxParams
    "RESHAPE": (36, 4),  # TfLiteReshapeParams
}
_PER_CHANNEL = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})

_X86_64 = TailProfile(
    "x86_64",
    "measured: tflite-micro Python interpreter, x86-64, reference kernels (fixtures/tflm-corpus)",
    pointer=8,
    eval_tensor=24,
    node_and_registration=64,
    persistent_tensor=64,
    affine_quantization=24,
    subgraph_allocations=16,
    scratch_handle=8,
    allocator_objects=472,
    op_data=_OP_DATA,
    builtin_data=_BUILTIN,
    per_channel_ops=_PER_CHANNEL,
)
TAIL_PROFILES: dict[str, TailProfile] = {
    "x86_64": _X86_64,
    # Pointers halve; the struct sizes are what Cortex-M printouts show ([02], [06], [29]). Kernel op data
    # and allocator objects stay the x86-64 figures: an estimate (a CMSIS-NN build's op data differs).
    "arm32": replace(
        _X86_64,
        name="arm32",
        source="struct sizes from Cortex-M RecordingMicroAllocator printouts; kernel op data and "
        "allocator objects as measured on x86-64 (an estimate)",
        pointer=4,
        eval_tensor=12,
        node_and_registration=32,
        persistent_tensor=32,
        affine_quantization=12,
        subgraph_allocations=8,
        scratch_handle=4,
    ),
}
KERNELS = ("reference", "cmsis-nn")


@dataclass(frozen=True)
class TflmOptions:
    arch: str = "x86_64"
    kernels: str = "reference"
    margin: float = 0.0  # safety factor on the total: 0.1 = +10 %


def check_tflm_options(options: TflmOptions) -> None:
    if options.arch not in TAIL_PROFILES:
        raise ReferenceOptionError(f"--arch {options.arch!r}: one of {', '.join(TAIL_PROFILES)}")
    if options.kernels not in KERNELS:
        raise ReferenceOptionError(f"--kernels {options.kernels!r}: one of {', '.join(KERNELS)}")
    if not 0 <= options.margin <= 10 or math.isnan(options.margin):
        raise ReferenceOptionError(f"--margin {options.margin}: a fraction between 0 and 10 (0.2 = +20 %)")


@dataclass(frozen=True)
class PlannedBuffer:
    """One buffer of the head plan: a tensor or a scratch buffer, with its TFLM lifetime."""

    index: int  # order of AddBuffer
    kind: str  # tensor | scratch
    tensor: int | None
    name: str
    op: int | None  # the op that requested a scratch buffer
    bytes: int
    size: int  # aligned to 16
    first: int  # allocation scope
    last: int
    offline_offset: int = ONLINE


@dataclass(frozen=True)
class TailItem:
    component: str
    bytes: int  # what the tail pointer moved (size + alignment overhead)
    requested: int
    count: int
    source: str


@dataclass
class TflmPrediction:
    source: str
    options: TflmOptions
    model: TfliteModel
    buffers: list[PlannedBuffer]
    offsets: list[int]
    head: int
    tail_items: list[TailItem]
    op_rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    @property
    def tail(self) -> int:
        return sum(i.bytes for i in self.tail_items)

    @property
    def total(self) -> int:
        return self.head + self.tail

    @property
    def with_margin(self) -> int:
        """The total with the safety margin, rounded up to 16 B."""
        return _align_up(math.ceil(self.total * (1 + self.options.margin)), ARENA_ALIGNMENT)

    @property
    def peak_op(self) -> int | None:
        """The first op with the most bytes live (planned sizes, scratch included): the op that needs the
        arena's head most. Where its live bytes equal the head, the plan has no gap at that op. (The
        high-water curve can reach the head earlier: a long-lived tensor placed at the top.)"""
        peak = max((row["live_bytes"] for row in self.op_rows), default=0)
        if not peak:
            return None
        return next(int(row["op_index"]) for row in self.op_rows if row["live_bytes"] == peak)

    def components(self) -> list[dict[str, Any]]:
        """Every part of the arena with its bytes and where the figure comes from."""
        tensors = [b for b in self.buffers if b.kind == "tensor"]
        scratch = [b for b in self.buffers if b.kind == "scratch"]
        rows = [
            {
                "component": "head: planned tensors and scratch buffers",
                "bytes": self.head,
                "count": len(self.buffers),
                "source": f"GreedyMemoryPlanner over {len(tensors)} tensor and {len(scratch)} scratch "
                "buffer(s), sizes rounded up to 16 B",
            }
        ]
        for item in self.tail_items:
            rows.append(
                {
                    "component": f"tail: {item.component}",
                    "bytes": item.bytes,
                    "count": item.count,
                    "source": item.source,
                }
            )
        return rows

    def buffer_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "index": b.index,
                "kind": b.kind,
                "tensor": b.tensor,
                "name": b.name,
                "op": b.op,
                "bytes": b.bytes,
                "size_bytes": b.size,
                "first_scope": b.first,
                "last_scope": b.last,
                "offset": off,
            }
            for b, off in zip(self.buffers, self.offsets, strict=True)
        ]

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        """The prediction as declared frames (`logscope.reference.frames`), for --frames-out."""
        return {
            "tflm_ops": build_reference_frame("tflm_ops", self.op_rows),
            "tflm_buffers": build_reference_frame("tflm_buffers", self.buffer_rows()),
            "tflm_components": build_reference_frame("tflm_components", self.components()),
        }

    def summary(self) -> dict[str, Any]:
        m = self.model
        return {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "runtime": "tflm",
            "model": {
                "format": "tflite",
                "schema_version": m.schema_version,
                "description": m.description or None,
                "subgraphs": len(m.subgraphs),
                "operators": len(m.main.operators),
                "tensors": len(m.main.tensors),
                "constant_bytes": m.constant_bytes,
                "inputs": [_tensor_text(m.main, i) for i in m.main.inputs],
                "outputs": [_tensor_text(m.main, i) for i in m.main.outputs],
            },
            "options": {
                "arch": self.options.arch,
                "kernels": self.options.kernels,
                "margin": self.options.margin,
            },
            "tensor_arena_bytes": self.total,
            "tensor_arena_with_margin_bytes": self.with_margin,
            "head_bytes": self.head,
            "tail_bytes": self.tail,
            "peak_op": self.peak_op,
            "peak_op_name": _op_label(m.main.operators[self.peak_op]) if self.peak_op is not None else None,
            "components": self.components(),
            "ops": self.op_rows,
            "buffers": self.buffer_rows(),
            "notes": list(self.notes),
        }


def _tensor_text(sg: TfSubgraph, index: int) -> str:
    t = sg.tensors[index]
    return f"{t.name} {t.dtype} ({','.join(str(d) for d in t.shape)})"


def _op_label(op: TfOperator) -> str:
    return f"{op.opcode}#{op.index}"


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


# ------------------------------------------------------------------------------------------------ head
def scratch_requests(sg: TfSubgraph, kernels: str) -> list[tuple[int, int, str]]:
    """(op index, bytes, formula) of every scratch buffer the kernels request, in request order."""
    if kernels == "reference":
        return []
    out: list[tuple[int, int, str]] = []
    for op in sg.operators:
        if not op.inputs or op.inputs[0] < 0:
            continue
        x = sg.tensors[op.inputs[0]]
        if x.dtype != "INT8" or len(x.shape) != 4:
            continue
        cin = x.shape[3]
        if op.opcode == "CONV_2D" and len(op.inputs) > 1 and op.inputs[1] >= 0:
            w = sg.tensors[op.inputs[1]].shape
            kh, kw = (w[1], w[2]) if len(w) == 4 else (1, 1)
            if (kh, kw) != (1, 1):
                out.append((op.index, 2 * cin * kh * kw * 2, f"arm_convolve_s8: 2·{cin}·{kh}·{kw}·2 B"))
        elif op.opcode == "DEPTHWISE_CONV_2D" and len(op.inputs) > 1 and op.inputs[1] >= 0:
            w = sg.tensors[op.inputs[1]].shape
            kh, kw = (w[1], w[2]) if len(w) == 4 else (1, 1)
            o = op.options
            fast = (
                (kh, kw) == (3, 3)
                and o.get("depth_multiplier", 1) == 1
                and o.get("dilation_h_factor", 1) == 1
            )
            if not fast:
                out.append((op.index, cin * kh * kw * 2, f"arm_depthwise_conv_s8_opt: {cin}·{kh}·{kw}·2 B"))
        elif op.opcode == "AVERAGE_POOL_2D":
            out.append((op.index, cin * 4, f"arm_avgpool_s8: {cin}·4 B"))
    return out


def plan_buffers(model: TfliteModel, kernels: str) -> tuple[list[PlannedBuffer], list[str]]:
    """The buffers `CreatePlan` adds, in its order, with TFLM's lifetimes (subgraph 0)."""
    sg = model.main
    notes: list[str] = []
    n = len(sg.tensors)
    first = [ONLINE] * n
    last = [ONLINE] * n

    def created(i: int, scope: int) -> None:
        if first[i] == ONLINE or first[i] > scope:
            first[i] = scope

    def used(i: int, scope: int) -> None:
        if last[i] == ONLINE or last[i] < scope:
            last[i] = scope

    for i in sg.inputs:
        created(i, 0)
        used(i, 0)
    scope = 0
    for op in sg.operators:
        scope += 1
        for i in op.outputs:
            if i >= 0:
                created(i, scope)
        for i in op.inputs:
            if i >= 0:
                used(i, scope)
        for i in op.outputs:
            if i >= 0:
                used(i, scope)
    for i in sg.outputs:
        created(i, scope)
        used(i, scope)
    buffers: list[PlannedBuffer] = []
    offline = model.offline_offsets
    for t in sg.tensors:
        if t.data_bytes or t.is_variable:
            continue
        if first[t.index] == ONLINE or last[t.index] == ONLINE:
            if t.size_bytes:
                notes.append(f"tensor {t.index} ({t.name}) is never used by an op: TFLM refuses such a model")
            continue
        buffers.append(
            PlannedBuffer(
                len(buffers),
                "tensor",
                t.index,
                t.name,
                None,
                t.size_bytes,
                _align_up(t.size_bytes, ARENA_ALIGNMENT),
                first[t.index],
                last[t.index],
                offline[t.index] if offline is not None else ONLINE,
            )
        )
    for op_index, size, formula in scratch_requests(sg, kernels):
        buffers.append(
            PlannedBuffer(
                len(buffers),
                "scratch",
                None,
                f"scratch of {_op_label(sg.operators[op_index])}: {formula}",
                op_index,
                size,
                _align_up(size, ARENA_ALIGNMENT),
                op_index + 1,
                op_index + 1,
            )
        )
    if len(model.subgraphs) > 1:
        notes.append(
            f"{len(model.subgraphs) - 1} more subgraph(s): only subgraph 0 is planned (control-flow "
            "subgraphs are not emulated); their eval tensors are counted in the tail"
        )
    return buffers, notes


def greedy_plan(buffers: Sequence[PlannedBuffer]) -> list[int]:
    """TFLM's GreedyMemoryPlanner::CalculateOffsetsIfNeeded, reproduced (see the module docstring)."""
    count = len(buffers)
    if not count:
        return []
    offsets = [ONLINE] * count
    # Filled as TFLM fills it: offline buffers from the head in order, online ones from the tail.
    order: list[int] = [0] * count
    head, tail = 0, count
    for i, b in enumerate(buffers):
        if b.offline_offset == ONLINE:
            tail -= 1
            order[tail] = i
        else:
            order[head] = i
            offsets[i] = b.offline_offset
            head += 1
    online = order[head:]
    # ReverseSortInPlace: bubble sort, swap when the earlier is smaller (stable for equal sizes).
    online.sort(key=lambda i: -buffers[i].size)
    order[head:] = online
    placed: list[
        tuple[int, int]
    ] = []  # (offset, buffer), in offset order; equal offsets keep insertion order
    for i in order:
        b = buffers[i]
        if b.offline_offset != ONLINE:
            candidate = b.offline_offset
        else:
            candidate = 0
            for off, j in placed:
                other = buffers[j]
                if other.first > b.last or b.first > other.last:
                    continue
                if off - candidate >= b.size:
                    break
                candidate = max(candidate, off + other.size)
        offsets[i] = candidate
        pos = len(placed)
        for k, (off, _) in enumerate(placed):
            if off > candidate:
                pos = k
                break
        placed.insert(pos, (candidate, i))
    return offsets


def _op_curve(
    sg: TfSubgraph, buffers: Sequence[PlannedBuffer], offsets: Sequence[int]
) -> list[dict[str, Any]]:
    n = len(sg.operators)
    live = [0] * n
    high = [0] * n
    scratch = [0] * n
    for b, o in zip(buffers, offsets, strict=True):
        for scope in range(max(b.first, 1), min(b.last, n) + 1):  # scope s is op s - 1
            live[scope - 1] += b.size
            high[scope - 1] = max(high[scope - 1], o + b.size)
        if b.kind == "scratch" and b.op is not None and b.op < n:
            scratch[b.op] += b.bytes
    return [
        {
            "op_index": op.index,
            "op": op.opcode,
            "output_bytes": sum(sg.tensors[i].size_bytes for i in op.outputs if i >= 0),
            "scratch_bytes": scratch[op.index],
            "live_bytes": live[op.index],
            "high_water_bytes": high[op.index],
        }
        for op in sg.operators
    ]


# ------------------------------------------------------------------------------------------------ tail
class _Tail:
    """The tail pointer, moving down: each allocation is rounded down to its alignment."""

    def __init__(self) -> None:
        self.pointer = 0
        self.items: dict[str, list[int]] = {}  # component -> [moved, requested, count]
        self.sources: dict[str, str] = {}

    def alloc(self, component: str, size: int, alignment: int, source: str, count: int = 1) -> None:
        old = self.pointer
        self.pointer = -_align_up(-self.pointer + size, alignment)
        entry = self.items.setdefault(component, [0, 0, 0])
        entry[0] += old - self.pointer
        entry[1] += size
        entry[2] += count
        self.sources.setdefault(component, source)

    def result(self) -> list[TailItem]:
        return [TailItem(k, v[0], v[1], v[2], self.sources[k]) for k, v in self.items.items()]


def persistent_tail(
    model: TfliteModel, profile: TailProfile, scratch_count: int
) -> tuple[list[TailItem], list[str]]:
    sg = model.main
    p = profile
    notes: list[str] = []
    t = _Tail()
    ptr_align = p.pointer
    t.alloc("allocator objects", p.allocator_objects, ptr_align, f"{p.source}: tail total minus every part")
    t.alloc(
        "subgraph allocation records",
        p.subgraph_allocations * len(model.subgraphs),
        ptr_align,
        f"{len(model.subgraphs)} × {p.subgraph_allocations} B",
    )
    for s in model.subgraphs:
        t.alloc(
            "NodeAndRegistration structs",
            p.node_and_registration * len(s.operators),
            ptr_align,
            f"{p.node_and_registration} B per operator",
            len(s.operators),
        )
        t.alloc(
            "TfLiteEvalTensor data",
            p.eval_tensor * len(s.tensors),
            ptr_align,
            f"{p.eval_tensor} B per tensor",
            len(s.tensors),
        )
    unknown: set[str] = set()
    for op in sg.operators:
        builtin = p.builtin_data.get(op.opcode)
        if builtin is None:
            unknown.add(op.opcode)
            continue
        if builtin[0]:
            t.alloc("builtin option structs", builtin[0], builtin[1], "per operator type (TfLite*Params)")
    for op in sg.operators:
        size = p.op_data.get(op.opcode)
        if size:
            t.alloc("kernel op data", size, ARENA_ALIGNMENT, f"per kernel ({p.name} table)")
    for op in sg.operators:
        if op.opcode in p.per_channel_ops and op.outputs and op.outputs[0] >= 0:
            channels = sg.tensors[op.outputs[0]].shape[-1] if sg.tensors[op.outputs[0]].shape else 1
            for _ in range(2):
                t.alloc(
                    "kernel per-channel arrays",
                    4 * channels,
                    ARENA_ALIGNMENT,
                    "output multiplier and shift, 4 B per output channel each",
                )
    if scratch_count:
        t.alloc(
            "scratch buffer handles",
            p.scratch_handle * scratch_count,
            ptr_align,
            f"{p.scratch_handle} B per scratch buffer",
            scratch_count,
        )
    for group in (sg.inputs, sg.outputs):
        t.alloc(
            "interpreter tensor arrays",
            p.pointer * len(group),
            ARENA_ALIGNMENT,
            f"{p.pointer} B per model input / output",
        )
        for i in group:
            t.alloc(
                "persistent TfLiteTensor data",
                p.persistent_tensor,
                ptr_align,
                f"{p.persistent_tensor} B per model input and output",
                1,
            )
            q = sg.tensors[i].quant
            if q is not None and sg.tensors[i].dtype not in ("FLOAT32", "FLOAT16"):
                t.alloc(
                    "persistent TfLiteTensor quantization data",
                    p.affine_quantization,
                    ptr_align,
                    f"TfLiteAffineQuantization ({p.affine_quantization} B) + zero-point array (4 + 4·n B)",
                )
                t.alloc("persistent TfLiteTensor quantization data", 4 + 4 * max(q.zero_points, 1), 4, "", 0)
    variables = [x for x in sg.tensors if x.is_variable]
    for x in variables:
        t.alloc("variable tensor buffers", x.size_bytes, ARENA_ALIGNMENT, "variable tensors' data")
    if unknown:
        notes.append(
            "kernel op data and builtin structs not modelled for "
            + ", ".join(sorted(unknown))
            + ": the tail is low by their size"
        )
    return t.result(), notes


def predict_arena(model: TfliteModel, options: TflmOptions | None = None) -> TflmPrediction:
    options = options or TflmOptions()
    check_tflm_options(options)
    buffers, notes = plan_buffers(model, options.kernels)
    if len(buffers) > MAX_PLANNED_BUFFERS:
        raise ModelTooLargeError(
            f"{model.source}: {len(buffers)} buffers to plan, over the {MAX_PLANNED_BUFFERS}-buffer limit "
            "(TFLM's greedy planner is quadratic; MCU models plan a few hundred)"
        )
    offsets = greedy_plan(buffers)
    head = max((o + b.size for b, o in zip(buffers, offsets, strict=True)), default=0)
    scratch = sum(1 for b in buffers if b.kind == "scratch")
    tail_items, tail_notes = persistent_tail(model, TAIL_PROFILES[options.arch], scratch)
    notes.extend(tail_notes)
    if options.arch != "x86_64":
        notes.append(f"tail for {options.arch}: {TAIL_PROFILES[options.arch].source}")
    else:
        notes.append(
            "tail with x86-64 struct sizes (the tflite-micro Python interpreter); --arch arm32 for a "
            "Cortex-M board (smaller structs)"
        )
    if options.kernels != "reference":
        notes.append(f"scratch buffers from the {options.kernels} formulas (computed, not measured)")
    rows = _op_curve(model.main, buffers, offsets)
    return TflmPrediction(model.source, options, model, buffers, offsets, head, tail_items, rows, notes)


def analyze_tflite(path: Any, options: TflmOptions | None = None) -> TflmPrediction:
    """Load (bounded) and predict. Raises `LogscopeError`s only."""
    from logscope.reference.tflite_loader import load_tflite

    options = options or TflmOptions()
    check_tflm_options(options)
    return predict_arena(load_tflite(path), options)
