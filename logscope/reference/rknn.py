"""An emulation of RKNN's feature-map allocator, from an ONNX graph or from a log's own tensor table.

The model (reference-anchors §6.2-6.4, checked here against fixtures [09] and [29]):

- **Ops** are the graph after the compiler's fusions (`logscope.reference.fusion`); Identity and
  Dropout disappear. A fused op runs where its last member ran.
- **Sizes** are native NC1HWC2: a rank-4 NCHW tensor of C channels takes N x ceil(C/C2) x H x W x C2
  elements, C2 by platform and dtype (`C2_TABLE`, RKNPU user guide Table 4-6). The graph input is kept
  unpadded (NHWC, `(1,1,224,224,3)` = 150,528 B in both logs). Other ranks are stored plainly.
- **Allocation** is online: ops in execution order; before an op, the buffers of tensors whose last
  reader has run are freed; each output goes to the lowest offset where it fits among the live buffers
  (first fit), offsets aligned to 64 bytes ([09]: `0x454a70` -> next tensor at `0x454a80`, and the
  other `exSecondary` rows). No size sorting, no look-ahead.
- **The input slot**: the pool starts with a buffer of the input's size, live during the first op.
  In a build log ([09]) that buffer is the input itself, at pool offset 0; a runtime log ([29]) keeps
  the user's input elsewhere and the pool shows an unused gap of exactly that size at offset 0.

With these rules the emulation reproduces both logs' internal totals from an ONNX MobileNet v1 (see
docs/reference.md). Per-version padding quirks are explicit options (`QUIRKS`), never applied silently.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from logscope.reference.errors import ReferenceOptionError
from logscope.reference.frames import build_reference_frame, opt_int
from logscope.reference.fusion import FusionChain
from logscope.reference.graph import ELEM_BYTES, FLOAT_TYPES, QUANT_TYPES, RefGraph, Tensor
from logscope.reference.planners import (
    Plan,
    Record,
    align_up,
    high_water_curve,
    live_curve,
    lower_bound,
    place_record,
    plan_first_fit,
    plan_greedy_by_size,
)
from logscope.reference.rknn_profiles import PROFILES, SizeProfile, profile_applies, version_key
from logscope.reference.rknn_rewrites import Buffer, Lowered, LoweredStep, lower_recurrent, match_recurrent
from logscope.reference.rknn_transformer_tables import predict_table, unlisted_rows
from logscope.targets import CHANNEL_BLOCKS

# C2 (channel block) by platform and dtype: RKNPU User Guide V1.5.2 §4.4.5.3, Table 4-6 (logscope.targets).
C2_TABLE: dict[str, dict[str, int]] = CHANNEL_BLOCKS
TARGETS = tuple(C2_TABLE)
RKNN_ALIGNMENT = 64
REMOVED_OPS = frozenset({"Identity", "Dropout"})

# Per-version padding quirks: off unless asked for. Each names the log evidence it comes from.
QUIRKS: dict[str, str] = {
    "dw32-as-64": (
        "the output of the first depthwise conv with 32 channels is stored with 64 channels (C1 doubled): "
        "[29] line 9 `(1,32,112,112) (1,4,112,112,16)`, librknnrt of the RK3588 SRAM document; the "
        "documented MobileNet v2 internal size (1,756,160, toolkit2 2.3.2 docs) needs it too. Toolkit 1.5.2 "
        "for RV1106 ([09] line 179) does not do it."
    ),
    "hw-align-4": (
        "a plane of H x W > 1 elements is padded to a multiple of 4 (7x7 -> 52): every 7x7 tensor in [09] "
        "(lines 201-204) and [29] (lines 31-34) has 52 x C bytes, while the printed NativeShape says "
        "C1=33/67. "
        "Inferred from these rows only."
    ),
}


def check_target(target: str) -> str:
    key = target.lower().strip()
    if key not in C2_TABLE:
        raise ReferenceOptionError(f"unknown RKNN target {target!r}; one of {', '.join(TARGETS)}")
    return key


def check_quirks(quirks: Iterable[str]) -> frozenset[str]:
    out = frozenset(q.strip() for q in quirks)
    unknown = sorted(out - set(QUIRKS))
    if unknown:
        raise ReferenceOptionError(f"unknown quirk(s) {unknown}; known: {', '.join(QUIRKS)}")
    return out


def rknn_dtype(dtype: str) -> str:
    """RKNN's NPU computes int8 or fp16; an fp32 model runs as fp16."""
    return "int8" if dtype == "int8" else "fp16"


@dataclass(frozen=True)
class RknnOptions:
    target: str = "rk3588"
    dtype: str = "int8"
    alignment: int = RKNN_ALIGNMENT
    input_slot: bool = True
    quirks: frozenset[str] = frozenset()
    learned: bool = True  # size tensors with the target's learned profile (rknn_profiles), if it has one
    toolkit: str | None = None  # rknn-toolkit2 version; None = the newest profile

    @property
    def c2(self) -> int:
        blocks = C2_TABLE[check_target(self.target)]
        dtype = rknn_dtype(self.dtype)
        if dtype not in blocks:
            raise ReferenceOptionError(
                f"{self.target} has no known {dtype} channel block (the compiler refuses or aborts such "
                f"builds); known: {', '.join(blocks)}"
            )
        return blocks[dtype]

    @property
    def profile(self) -> SizeProfile | None:
        if not self.learned or not profile_applies(self.toolkit):
            return None
        return PROFILES.get(check_target(self.target))

    @property
    def element_bytes(self) -> int:
        return 1 if rknn_dtype(self.dtype) == "int8" else 2


@dataclass(frozen=True)
class FusedStep:
    index: int
    ops: tuple[int, ...]  # graph steps
    name: str
    op_type: str  # RKNN-style name for fused chains (ConvRelu), else the ONNX op type
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class RknnTensor:
    name: str
    shape: tuple[int, ...] | None
    native_shape: tuple[int, ...] | None
    native_bytes: int
    logical_bytes: int
    quirk: str | None
    first: int
    last: int
    is_input: bool


@dataclass
class RknnPlan:
    options: RknnOptions
    steps: list[FusedStep]
    tensors: list[RknnTensor]
    records: tuple[Record, ...]
    plan: Plan  # the emulated allocator
    greedy: Plan  # Greedy-by-Size on the same native sizes and fused lifetimes
    lower_bound: int
    curve: list[int] = field(default_factory=list)  # emulated high-water per fused step
    live: list[int] = field(default_factory=list)  # live native bytes per fused step

    @property
    def total(self) -> int:
        return self.plan.total


def fuse_steps(graph: RefGraph, chains: Sequence[FusionChain]) -> tuple[list[FusedStep], dict[str, str]]:
    """The op sequence RKNN would run: chains fused (at their last member), Identity/Dropout removed.

    Also returns the aliases: the output of a removed op -> the tensor it passes through.
    """
    alias: dict[str, str] = {}

    def resolve(name: str) -> str:
        while name in alias:
            name = alias[name]
        return name

    chain_of = {s: c for c in chains for s in c.steps}
    steps: list[FusedStep] = []
    for op in graph.ops:
        if op.op_type in REMOVED_OPS and op.inputs and op.inputs[0] and op.outputs:
            alias[op.outputs[0]] = op.inputs[0]
            continue
        chain = chain_of.get(op.step)
        if chain is not None and op.step != chain.steps[-1]:
            continue
        members = chain.steps if chain is not None else (op.step,)
        inside = {o for s in members for o in graph.ops[s].outputs if o}
        inputs: list[str] = []
        for s in members:
            for n in graph.ops[s].inputs:
                if not n or n in inside:
                    continue
                t = graph.tensors[n]
                r = resolve(n)
                if t.role in ("input", "activation") and r not in inputs:
                    inputs.append(r)
        if chain is not None:
            outputs: tuple[str, ...] = (chain.output,)
            name, op_type = graph.ops[chain.steps[0]].name, chain.rknn_name
        else:
            outputs = tuple(o for o in op.outputs if o and _occupies(graph.tensors[o]))
            name, op_type = op.name, op.op_type
        steps.append(FusedStep(len(steps), members, name, op_type, tuple(inputs), outputs))
    return steps, {name: resolve(name) for name in alias}


def _occupies(t: Tensor) -> bool:
    return bool(t.consumers) or t.is_output or t.output_index == 0


def native_layout(
    shape: tuple[int, ...] | None, c2: int, *, c1_override: int | None = None, hw_align: int = 1
) -> tuple[tuple[int, ...] | None, int]:
    """(NC1HWC2 shape, element count incl. padding) of a rank-4 NCHW tensor; other ranks are plain."""
    if shape is None:
        return None, 0
    if len(shape) != 4:
        return shape, math.prod(shape)
    n, c, h, w = shape
    c1 = c1_override if c1_override is not None else -(-c // c2)
    plane = h * w
    if hw_align > 1 and plane > 1:
        plane = align_up(plane, hw_align)
    return (n, c1, h, w, c2), n * c1 * plane * c2


def _is_depthwise(graph: RefGraph, step: int) -> bool:
    op = graph.ops[step]
    if op.op_type != "Conv" or len(op.inputs) < 2:
        return False
    group = op.attrs.get("group", 1)
    w = graph.tensors[op.inputs[1]].shape
    return isinstance(group, int) and group > 1 and w is not None and len(w) == 4 and w[1] == 1


_CONV_OPS = frozenset({"Conv", "Gemm", "MatMul", "ConvTranspose"})
GAP_KERNEL = 7  # the largest plane one pooling conv reduces (chain_75: 9x9 -> 2x2 -> 1x1)


def compiler_rewrites(
    graph: RefGraph, steps: list[FusedStep], toolkit: str | None = None, profile: SizeProfile | None = None
) -> tuple[list[FusedStep], dict[str, tuple[tuple[int, ...], str]]]:
    """The ops the compiler adds, each seen in every corpus log where the pattern occurs.

    - A depthwise conv reading a graph input of at most 4 channels: the input is first converted to
      NC1HWC2 (`New_input_<name>`, dw_odd: `(1,3,38,38) (1,2,38,38,16)`), sized as a conv output.
    - GlobalAveragePool over a plane larger than 7x7 runs as depthwise convs of kernel and stride 7 until
      the plane is 1x1 (`<name>_2conv0`: chain_75's 9x9 -> (1,64,2,2), batch2's 28x28 -> (2,32,4,4)).
    - From toolkit 2.5.0, Concat(Resize output, x) -> Conv is split (`_fuse_concat_conv`).

    Returns the new step list and the added tensors (name -> (NCHW shape, size class)).
    """
    out: list[FusedStep] = []
    added: dict[str, tuple[tuple[int, ...], str]] = {}
    steps = _fuse_swish(graph, steps, split=profile is not None and not profile.swish_fused)
    if concat_conv_split(toolkit):
        fused_add = profile is None or profile.concat_conv_add_fused
        steps = _fuse_concat_conv(graph, steps, added, fused_add=fused_add)

    def add(step: FusedStep, name: str, source: str, shape: tuple[int, ...], kind: str) -> None:
        added[name] = (shape, kind)
        out.append(FusedStep(len(out), step.ops, name, "Conv", (source,), (name,)))

    for s in steps:
        first = graph.ops[s.ops[0]]
        src = s.inputs[0] if s.inputs else None
        shape = graph.tensors[src].shape if src is not None and src in graph.tensors else None
        if src is not None and shape is not None and len(shape) == 4:
            if src in graph.inputs and shape[1] <= 4 and _is_depthwise(graph, s.ops[0]):
                name = f"New_input_{src}"
                add(s, name, src, shape, "conv")
                s = replace(s, inputs=(name, *s.inputs[1:]))
            elif first.op_type == "GlobalAveragePool" and max(shape[2], shape[3]) > GAP_KERNEL:
                n, c, h, w = shape
                current, k = src, 0
                while max(h, w) > GAP_KERNEL:
                    h, w = -(-h // GAP_KERNEL), -(-w // GAP_KERNEL)
                    name = f"{first.name}_2conv{k}"
                    add(s, name, current, (n, c, h, w), "dw")
                    current, k = name, k + 1
                s = replace(s, inputs=(current, *s.inputs[1:]))
        out.append(replace(s, index=len(out)))
    return out, added


CONCAT_CONV_SINCE = (2, 5, 0)


def concat_conv_split(toolkit: str | None) -> bool:
    """Whether a toolkit splits Concat(Resize, x) -> Conv (2.5.0 logs: `fuse_concat_conv`; None: newest)."""
    if toolkit is None:
        return True
    key = version_key(toolkit)
    return key is not None and key >= CONCAT_CONV_SINCE


def _fuse_concat_conv(
    graph: RefGraph,
    steps: list[FusedStep],
    added: dict[str, tuple[tuple[int, ...], str]],
    fused_add: bool = True,
) -> list[FusedStep]:
    """Concat(r, x) -> Conv, r a Resize output: the conv runs on r alone (`<r>_conv`), and a conv on x adds
    it (ConvAdd). Every 2.5.0 log with the pattern prints `fuse_concat_conv: remove node = [Concat,
    Conv], add node = [<r>_conv, <x>_conv, <r>_conv_add]` and lists `<r>_conv` among its feature tensors
    (unet_128 `Resize28_o0_conv` (1,32,64,64)). A conv fused with SiLU loses the fusion: the add writes
    the conv's own output and a separate `exSwish` op the activation (yolo `Conv47_o0`, `Mul49_o0`).

    Without `fused_add` (rk2118: `concat_conv_add_fused`) the conv on x is an op of its own, run right
    after x is written and writing `<x>_conv`, and an Add (AddRelu) of `<x>_conv` and `<r>_conv` writes
    the conv's output (yolo_320 2.5.0: `Conv:Mul28_o0_conv` is op 13, right after the `exSwish` writing
    `Mul28_o0`; `Add:Resize43_o0_conv_add` reads `Resize43_o0_conv` and `Mul28_o0_conv`)."""
    producer = {o: s for s in steps for o in s.outputs}
    readers: dict[str, list[FusedStep]] = {}
    for s in steps:
        for n in s.inputs:
            readers.setdefault(n, []).append(s)
    replaced: dict[int, list[FusedStep]] = {}
    after: dict[int, list[FusedStep]] = {}
    dropped: set[int] = set()
    for s in steps:
        op = graph.ops[s.ops[-1]]
        if op.op_type != "Concat" or len(s.ops) != 1 or len(s.inputs) != 2 or op.attrs.get("axis") != 1:
            continue
        users = readers.get(s.outputs[0], []) if len(s.outputs) == 1 else []
        if len(users) != 1:
            continue
        conv = users[0]
        first = graph.ops[conv.ops[0]]
        if first.op_type != "Conv" or first.attrs.get("group", 1) != 1 or conv.inputs != s.outputs:
            continue
        resized = [
            n for n in s.inputs if n in producer and graph.ops[producer[n].ops[-1]].op_type == "Resize"
        ]
        if len(resized) != 1:
            continue
        r = resized[0]
        x = next(n for n in s.inputs if n != r)
        conv_out = graph.tensors[first.outputs[0]]
        if conv_out.shape is None or len(conv_out.shape) != 4:
            continue
        name = f"{r}_conv"
        added[name] = (conv_out.shape, "conv")
        new = [FusedStep(0, (first.step,), name, "Conv", (r,), (name,))]
        if not fused_add:
            x_conv = f"{x}_conv"
            added[x_conv] = (conv_out.shape, "conv")
            x_step = FusedStep(0, (first.step,), x_conv, "Conv", (x,), (x_conv,))
            if x in producer:
                after.setdefault(producer[x].index, []).append(x_step)
            else:
                new.insert(0, x_step)
            add_type = conv.op_type.replace("Conv", "Add", 1) if conv.op_type.startswith("Conv") else "Add"
            new.append(replace(conv, op_type=add_type, inputs=(x_conv, name)))
        elif conv.op_type.endswith("Swish"):
            act = tuple(i for i in conv.ops if i != first.step)
            new.append(FusedStep(0, (first.step,), first.name, "ConvAdd", (x, name), (first.outputs[0],)))
            new.append(
                FusedStep(0, act, graph.ops[act[0]].name, "exSwish", (first.outputs[0],), conv.outputs)
            )
        else:
            new.append(replace(conv, op_type=conv.op_type.replace("Conv", "ConvAdd", 1), inputs=(x, name)))
        dropped.add(s.index)
        replaced[conv.index] = new
    out: list[FusedStep] = []
    for s in steps:
        if s.index in dropped:
            continue
        for step in (*replaced.get(s.index, [s]), *after.get(s.index, [])):
            out.append(replace(step, index=len(out)))
    return out


def _fuse_swish(graph: RefGraph, steps: list[FusedStep], split: bool = False) -> list[FusedStep]:
    """Conv -> Sigmoid -> Mul(conv, sigmoid) (SiLU) runs as one conv op: the compiler keeps no buffer for
    the conv output or the sigmoid (yolo_320: the SiLU outputs are the only feature rows, sized as conv
    outputs, `Mul5_o0` (1,16,160,160) stored as 32 channels on rk3588).

    With `split` (targets whose profile says `swish_fused=False`) the conv keeps its output and one
    `exSwish` op computes the SiLU from it (rv1106b: `Conv3_o0` then `Mul5_o0`, no sigmoid buffer)."""
    readers: dict[str, list[int]] = {}
    for s in steps:
        for n in s.inputs:
            readers.setdefault(n, []).append(s.index)
    producer = {o: s.index for s in steps for o in s.outputs}
    merged: dict[int, FusedStep] = {}
    dropped: set[int] = set()
    for s in steps:
        op = graph.ops[s.ops[-1]]
        if op.op_type != "Mul" or len(s.inputs) != 2 or len(s.ops) != 1:
            continue
        a, b = s.inputs
        for x, sig in ((a, b), (b, a)):
            j, k = producer.get(x), producer.get(sig)
            if j is None or k is None or j in dropped or k in dropped:
                continue
            conv, sigmoid = steps[j], steps[k]
            if (
                graph.ops[sigmoid.ops[-1]].op_type == "Sigmoid"
                and sigmoid.inputs == (x,)
                and any(graph.ops[i].op_type in _CONV_OPS for i in conv.ops)
                and sorted(readers.get(x, [])) == sorted({k, s.index})
                and readers.get(sig, []) == [s.index]
            ):
                if split:
                    merged[s.index] = FusedStep(
                        s.index, sigmoid.ops + s.ops, sigmoid.name, "exSwish", (x,), s.outputs
                    )
                    dropped.add(k)
                else:
                    merged[s.index] = FusedStep(
                        s.index,
                        conv.ops + sigmoid.ops + s.ops,
                        conv.name,
                        f"{conv.op_type}Swish",
                        conv.inputs,
                        s.outputs,
                    )
                    dropped.update({j, k})
                break
    kept = [merged.get(s.index, s) for s in steps if s.index not in dropped]
    return [replace(s, index=i) for i, s in enumerate(kept)]


def _synthetic_tensor(
    name: str,
    spec: tuple[tuple[int, ...], str],
    step: FusedStep,
    readers: dict[str, list[int]],
    options: RknnOptions,
) -> RknnTensor:
    shape, kind = spec
    profile = options.profile
    assert profile is not None
    elt = options.element_bytes
    c2 = options.c2
    block = max((profile.dw_bytes if kind == "dw" else profile.conv_bytes) // elt, c2)
    channels = -(-shape[1] // block) * block
    count = shape[0] * channels * _plane(shape, profile.plane_align)
    native = (shape[0], channels // c2, shape[2], shape[3], c2)
    last = max(readers.get(name, [step.index]))
    return RknnTensor(
        name, shape, native, count * elt, math.prod(shape) * elt, "compiler-added", step.index, last, False
    )


def _channel_block(graph: RefGraph, step: FusedStep, profile: SizeProfile, elt: int, c2: int) -> int:
    """The channel rounding (in channels) of a fused op's output under a learned profile."""
    ops = [graph.ops[i] for i in step.ops]
    if any(_is_depthwise(graph, i) for i in step.ops) or any(o.op_type == "GlobalAveragePool" for o in ops):
        return max(profile.dw_bytes // elt, c2)
    if any(o.op_type in _CONV_OPS for o in ops):
        return max(profile.conv_bytes // elt, c2)
    return c2


def _dw_spare_blocks(
    graph: RefGraph, step: FusedStep, profile: SizeProfile, options: RknnOptions, block: int, channels: int
) -> int:
    """C1 blocks the compiler adds to a split depthwise conv's output (rknn_profiles: `dw_split_input_bytes`).

    A depthwise conv whose input is larger than the target's threshold, and whose output spans more
    than one depthwise block, is stored with one conv block of channels more."""
    limit = profile.dw_split_input_bytes
    if limit is None or channels <= block:
        return 0
    dw = next((i for i in step.ops if _is_depthwise(graph, i)), None)
    if dw is None:
        return 0
    source = graph.tensors[graph.ops[dw].inputs[0]]
    if (source.numel or 0) * _element_bytes(source, options) <= limit:
        return 0
    elt, c2 = options.element_bytes, options.c2
    return max(profile.conv_bytes // elt, c2) // c2


def _channel_factor(graph: RefGraph, step: FusedStep, profile: SizeProfile, options: RknnOptions) -> int:
    """How many times an op's output stores its rounded channels (rknn_profiles): ConvTranspose on some
    targets, and in fp16 a conv fused with SiLU or with Sigmoid."""
    if any(graph.ops[i].op_type == "ConvTranspose" for i in step.ops):
        return 1 if _deconv_scratch(graph, step, profile, options) else profile.deconv_factor
    if step.op_type == "exSwish":
        return profile.exswish_factors.get(rknn_dtype(options.dtype), 1)
    if rknn_dtype(options.dtype) == "fp16":
        if step.op_type.endswith("Swish"):
            return profile.swish_fp16_factor
        if step.op_type == "ConvSigmoid":
            return profile.sigmoid_fp16_factor
    return 1


def _deconv_scratch(graph: RefGraph, step: FusedStep, profile: SizeProfile, options: RknnOptions) -> bool:
    """Whether a ConvTranspose keeps its enlarged buffer as scratch and writes a plain output: from the
    profile's `deconv_plain_since` version on (rk3576 2.5.0 int8: `ConvTranspose40_o0` is stored once,
    at 1,048,576 B above the free gap it would fit in, which a buffer twice its size fills during the
    op and the table does not list)."""
    if profile.deconv_factor == 1 or not any(graph.ops[i].op_type == "ConvTranspose" for i in step.ops):
        return False
    since = profile.deconv_plain_since.get(rknn_dtype(options.dtype))
    current = version_key(options.toolkit) if options.toolkit else None
    return since is not None and (current is None or current >= since)


def _concat_bypass(
    graph: RefGraph, steps: list[FusedStep], readers: dict[str, list[int]], options: RknnOptions
) -> dict[str, int]:
    """Concats written in place (rknn_profiles: `concat_bypass_since`): {concat output: the step writing
    its first input}; the later inputs are written into the Concat's buffer and take none of their own.

    The pattern: one channel Concat whose inputs are conv outputs read by it alone, each filling whole
    conv blocks (multi_io fp16 on rk3576 with 2.5.0: two 16-channel conv outputs, 32 B per pixel)."""
    profile = options.profile
    dtype = rknn_dtype(options.dtype)
    since = profile.concat_bypass_since.get(dtype) if profile is not None else None
    current = version_key(options.toolkit) if options.toolkit else None
    if profile is None or since is None or (current is not None and current < since):
        return {}
    block = max(profile.conv_bytes // options.element_bytes, options.c2)
    producer = {o: s for s in steps for o in s.outputs}
    out: dict[str, int] = {}
    for s in steps:
        op = graph.ops[s.ops[-1]]
        if op.op_type != "Concat" or len(s.ops) != 1 or len(s.outputs) != 1 or op.attrs.get("axis") != 1:
            continue
        if len(s.inputs) < 2 or any(n in graph.inputs or graph.tensors[n].is_output for n in s.inputs):
            continue
        writers = [producer.get(n) for n in s.inputs]
        if all(
            w is not None
            and any(graph.ops[i].op_type in _CONV_OPS for i in w.ops)
            and not any(_is_depthwise(graph, i) for i in w.ops)
            and readers.get(n) == [s.index]
            and (shape := graph.tensors[n].shape) is not None
            and len(shape) == 4
            and shape[1] % block == 0
            for n, w in zip(s.inputs, writers, strict=True)
        ):
            out[s.outputs[0]] = min(w.index for w in writers if w is not None)
    return out


def _maxpool_tensors(graph: RefGraph, steps: list[FusedStep]) -> set[str]:
    """The tensors a MaxPool reads or writes (rknn_profiles: `maxpool_factor`, rk2118 stores them 10x:
    chain_75 `Relu12_o0` (1,64,19,19) 465,920 B and `MaxPool13_o0` (1,64,9,9) 107,520 B)."""
    out: set[str] = set()
    for s in steps:
        if any(graph.ops[i].op_type == "MaxPool" for i in s.ops):
            out.update(s.inputs)
            out.update(s.outputs)
    return out


def _plane(shape: tuple[int, ...], plane_align: int) -> int:
    plane = shape[2] * shape[3]
    return align_up(plane, plane_align) if plane > 1 else plane


def _element_bytes(t: Tensor, options: RknnOptions) -> int:
    if t.elem_type in FLOAT_TYPES:
        return options.element_bytes
    if t.elem_type in QUANT_TYPES:
        return 1
    return ELEM_BYTES.get(t.elem_type, 0)


def emulate_rknn(graph: RefGraph, chains: Sequence[FusionChain], options: RknnOptions) -> RknnPlan:
    """Plan the feature-map pool as RKNN's runtime does (module docstring)."""
    check_quirks(options.quirks)
    c2 = options.c2
    lowered = _lowered_sequence_model(graph, options) or _lowered_transformer(graph, options)
    if lowered is not None:
        return _plan_lowered(lowered, options)
    steps, alias = fuse_steps(graph, chains)
    synthetic: dict[str, tuple[tuple[int, ...], str]] = {}
    if options.profile is not None:
        steps, synthetic = compiler_rewrites(graph, steps, options.toolkit, options.profile)
    # A graph output passed through a removed op (a model ending in Dropout) keeps its producer alive.
    kept = {alias.get(name, name) for name in graph.outputs}
    last_step = max(len(steps) - 1, 0)
    readers: dict[str, list[int]] = {}
    for s in steps:
        for n in s.inputs:
            readers.setdefault(n, []).append(s.index)
    dw32_done = "dw32-as-64" not in options.quirks
    hw_align = 4 if "hw-align-4" in options.quirks else 1
    tensors: list[RknnTensor] = []
    if options.input_slot:
        for name in graph.inputs:
            t = graph.tensors[name]
            numel = t.numel or 0
            size = numel * _element_bytes(t, options)
            shape = t.shape
            native = (shape[0], 1, shape[2], shape[3], shape[1]) if shape and len(shape) == 4 else shape
            profile = options.profile
            if profile is not None and shape and len(shape) == 4:
                batch, channels, height, width = shape
                elt = _element_bytes(t, options)
                if channels <= 4:  # unpadded channels, padded width (chain_75: 75 x 80 x 3)
                    row = align_up(width, max(profile.input_width_bytes // elt, 1))
                    size = batch * channels * height * row * elt
                else:  # NC1HWC2 like any tensor (multi_io: (1,8,32,32) takes 16 x 1024 B)
                    native, count = native_layout(shape, options.c2, hw_align=profile.plane_align)
                    size = count * elt
            tensors.append(
                RknnTensor(name, shape, native, size, size, None, 0, max(readers.get(name, [0])), True)
            )
    profile = options.profile
    pooled = _maxpool_tensors(graph, steps) if profile is not None and profile.maxpool_factor > 1 else set()
    bypass = _concat_bypass(graph, steps, readers, options)
    written_in_place = {n for s in steps if s.outputs and s.outputs[0] in bypass for n in s.inputs[1:]}
    for s in steps:
        for name in s.outputs:
            if name in synthetic:
                tensors.append(_synthetic_tensor(name, synthetic[name], s, readers, options))
                continue
            t = graph.tensors[name]
            elt = _element_bytes(t, options)
            c1 = None
            quirk = None
            if (
                not dw32_done
                and _is_depthwise(graph, s.ops[0])
                and t.shape
                and len(t.shape) == 4
                and t.shape[1] == 32
            ):
                c1, quirk, dw32_done = -(-64 // c2), "dw32-as-64", True
            profile = options.profile
            if profile is not None and c1 is None and t.shape and len(t.shape) == 4:
                block = _channel_block(graph, s, profile, elt, c2)
                c1 = -(-t.shape[1] // block) * block // c2 if block % c2 == 0 else None
                if c1 is not None:
                    c1 += _dw_spare_blocks(graph, s, profile, options, block, c1 * c2)
                    # a MaxPool's factor replaces the writer's own (rk2118 yolo: `MaxPool35_o0` 10 x)
                    c1 *= (
                        profile.maxpool_factor
                        if name in pooled
                        else _channel_factor(graph, s, profile, options)
                    )
                native, count = native_layout(
                    t.shape, c2, c1_override=c1, hw_align=max(hw_align, profile.plane_align)
                )
                if c1 is None:  # a block that is not a multiple of C2 (never seen): plain rounding
                    count = (
                        t.shape[0] * -(-t.shape[1] // block) * block * _plane(t.shape, profile.plane_align)
                    )
            else:
                native, count = native_layout(t.shape, c2, c1_override=c1, hw_align=hw_align)
            if (
                hw_align > 1
                and t.shape
                and len(t.shape) == 4
                and t.shape[2] * t.shape[3] % 4
                and t.shape[2] * t.shape[3] > 1
            ):
                quirk = "+".join(q for q in (quirk, "hw-align-4") if q)
            last = last_step if t.is_output or name in kept else max(readers.get(name, [s.index]))
            logical = (t.numel or 0) * elt
            if profile is not None and _deconv_scratch(graph, s, profile, options):
                scratch = count * elt * profile.deconv_factor
                tensors.append(
                    RknnTensor(
                        f"{name}_scratch",
                        t.shape,
                        native,
                        scratch,
                        0,
                        "deconv-scratch",
                        s.index,
                        s.index,
                        False,
                    )
                )
            first = s.index
            if name in bypass:  # taken when its first input is written (multi_io rk3576 fp16 2.5.0)
                first, quirk = bypass[name], "concat-bypass"
            elif name in written_in_place:  # written into the Concat's buffer
                count, quirk = 0, "concat-bypass"
            tensors.append(RknnTensor(name, t.shape, native, count * elt, logical, quirk, first, last, False))
    records = tuple(Record(t.name, t.native_bytes, t.first, t.last) for t in tensors)
    return _placed(options, steps, tensors, records)


def _placed(
    options: RknnOptions, steps: list[FusedStep], tensors: list[RknnTensor], records: tuple[Record, ...]
) -> RknnPlan:
    """The plan of `records` as the compiler places them (first fit), with the greedy plan, the lower
    bound and the curves beside it: one construction for graphs and for rewritten sequence models."""
    plan = plan_first_fit(records, options.alignment, planner="rknn")
    n_steps = len(steps)
    return RknnPlan(
        options=options,
        steps=steps,
        tensors=tensors,
        records=records,
        plan=plan,
        greedy=plan_greedy_by_size(records, options.alignment),
        lower_bound=lower_bound(records),
        curve=high_water_curve(records, plan.offsets, n_steps),
        live=live_curve(records, n_steps),
    )


def _lowered_sequence_model(graph: RefGraph, options: RknnOptions) -> Lowered | None:
    """A recurrent model the compiler rewrites into ops with buffers of their own (rknn_rewrites)."""
    profile = options.profile
    head = match_recurrent(graph) if profile is not None and not options.quirks else None
    if head is None or profile is None:
        return None
    version = version_key(options.toolkit or "") or (2, 5, 0)
    target = check_target(options.target)
    return lower_recurrent(head, target, rknn_dtype(options.dtype), version, profile.conv_bytes)


def _lowered_transformer(graph: RefGraph, options: RknnOptions) -> Lowered | None:
    """A transformer block whose feature table the compiler's rewrite is predicted for
    (rknn_transformer_tables): the predicted rows, with the replay's lifetimes, in its placement order."""
    if options.profile is None or options.quirks:
        return None
    target, dtype = check_target(options.target), rknn_dtype(options.dtype)
    table = predict_table(graph, target, dtype, options.toolkit)
    if table is None:
        return None
    rows, layers, writers = table
    extra = unlisted_rows(graph, rows, target, dtype, options.toolkit)
    if len(extra):
        # an unlisted scratch goes with its reader's rows, after them (the order the placement uses)
        position = int(extra.index[0])
        rows = pd.concat([rows.iloc[: position + 1], extra, rows.iloc[position + 1 :]], ignore_index=True)
    op_ids = sorted({int(v) for v in rows["op_id"]})
    life = _table_lifetimes(rows, op_ids, layers, writers)
    by_id = {int(str(r.layer_id)): r for r in layers.itertuples(index=False)}
    steps = tuple(
        LoweredStep(str(by_id[i].full_name).split(":", 1)[1], str(by_id[i].op_type), ()) for i in op_ids
    )
    order = sorted(
        (i for i in range(len(rows)) if life.owner[i] == i),
        key=lambda i: (life.span_first[i], life.rank[i], i),
    )
    names = [str(v) for v in rows["name"]]
    sizes = [int(v) for v in rows["size_bytes"]]
    buffers = [
        Buffer(names[i], sizes[i], life.span_first[i], life.span_last[i], _table_rule(names[i], i, life))
        for i in order
    ]
    # Rows held in another row's buffer under a name of their own (an in-place Reshape's output): listed,
    # with no bytes of their own, so that every row of the table has its tensor.
    listed = {names[i] for i in order}
    for i in range(len(rows)):
        if names[i] not in listed:
            listed.add(names[i])
            first, last = life.firsts[i], life.lasts[i]
            buffers.append(Buffer(names[i], sizes[i], first, last, "in-place", shares=names[life.owner[i]]))
    return Lowered(steps, tuple(buffers))


def _table_rule(name: str, row: int, life: TableLifetimes) -> str:
    if life.scratch[row]:
        return "op-scratch"
    return "input" if life.span_first[row] == 0 and row == 0 else "table-row"


def _plan_lowered(lowered: Lowered, options: RknnOptions) -> RknnPlan:
    steps = [FusedStep(i, s.graph_ops, s.name, s.op_type, (), ()) for i, s in enumerate(lowered.steps)]
    tensors = [
        RknnTensor(b.name, None, None, b.size, b.size, b.rule, b.first, b.last, b.rule == "input")
        for b in lowered.buffers
    ]
    records = tuple(Record(b.name, 0 if b.shares else b.size, b.first, b.last) for b in lowered.buffers)
    placed = _placed(options, steps, tensors, records)
    index = {b.name: i for i, b in enumerate(lowered.buffers) if not b.shares}
    shared = {i: index[b.shares] for i, b in enumerate(lowered.buffers) if b.shares in index}
    if not shared:
        return placed

    # A buffer that is another's memory takes that one's offset (it was planned with no bytes of its own).
    def shift(plan: Plan) -> Plan:
        return replace(plan, offsets=tuple(plan.offsets[shared.get(i, i)] for i in range(len(plan.offsets))))

    return replace(placed, plan=shift(placed.plan), greedy=shift(placed.greedy))


# --- Replaying a log's own feature-tensor table -------------------------------------------------------


@dataclass
class Replay:
    """The emulated allocator run on a log's own rows and sizes, compared with the logged offsets."""

    frame: pd.DataFrame  # one row per feature-tensor row (schema `replay` in reference/frames.py)
    base: int | None  # absolute address of pool offset 0 in the log
    total: int  # emulated pool size
    logged_total: int | None  # the log's Total Internal Memory Size
    steps: list[int]  # op ids, in order
    log_curve: list[int]  # high-water of the logged offsets per op
    emulated_curve: list[int]

    @property
    def reproduced(self) -> int:
        return int((self.frame["status"] == "reproduced").sum())


_OUTPUT_OPS = ("OutputOperator",)


@dataclass(frozen=True)
class TableLifetimes:
    """Per feature-table row: the steps (indices into the table's sorted op ids) during which the row's
    tensor is live, the row that holds its buffer (`owner`: itself, the first row of the same name, or
    the input of an in-place Reshape), and the owner's whole span (over every row it holds)."""

    firsts: list[int]
    lasts: list[int]
    owner: list[int]
    scratch: list[bool]
    span_first: list[int]
    span_last: list[int]
    rank: list[int]  # placement order within a step: 0 written before it, 1 its scratch, 2 its outputs


_SCRATCH_SUFFIX = "_exSecondary"
_NAME_SUFFIX_RE = re.compile(r"(#\d+|_2sdpa|_2gelu|_ConvAdd|_add)+$")


def _producer_names(layers: pd.DataFrame | None) -> dict[int, tuple[str, str, str]]:
    """op id -> (op type, the op's name without the compiler's rewrite suffixes, output shape)."""
    out: dict[int, tuple[str, str, str]] = {}
    if layers is None or not len(layers):
        return out
    for r in layers.itertuples(index=False):
        op_id = opt_int(r.layer_id)
        full = r.full_name if isinstance(r.full_name, str) else ""
        if op_id is None or ":" not in full:
            continue
        stem = _NAME_SUFFIX_RE.sub("", full.split(":", 1)[1].strip())
        shape = r.output_shape if isinstance(r.output_shape, str) else ""
        out[op_id] = (str(r.op_type), stem, shape.replace(" ", ""))
    return out


def _table_lifetimes(
    rows: pd.DataFrame,
    op_ids: list[int],
    layers: pd.DataFrame | None,
    writers: dict[str, int] | None = None,
) -> TableLifetimes:
    """Lifetimes of a feature table's rows (the rules are `replay_log`'s docstring).

    The writer of a tensor is the op before its first reader (a chain), unless the layer table names
    another: the latest earlier op whose name (rewrite suffixes `#n`, `_2sdpa`, ... removed) begins
    the tensor's name, else the latest earlier op, not taken by another tensor, whose output shape is
    the tensor's (three parallel Q/K/V convolutions whose outputs the table lists under the names of
    the reshapes that read them). Tensors are assigned in order of first reader. Without a layer
    table, the chain. `writers` (tensor name -> op id) names writers outright and makes every name
    match outrank every shape match: for a predicted table (`rknn_transformer_tables`), whose names are
    exact, that reproduces 30 of its 32 corpus builds, against 26 with the single pass; the logs' own
    tables keep the single pass, which reproduces more of them (590 against 585 of the 674 CNN and
    recurrent builds of the corpus manifest)."""
    n = len(rows)
    index_of = {op: i for i, op in enumerate(op_ids)}
    last_index = max(len(op_ids) - 1, 0)
    producers = _producer_names(layers)
    names = [str(v) for v in rows["name"]]
    user_ops = [str(v) for v in rows["user_op"]]
    readers = [index_of.get(opt_int(v) or 0, 0) if opt_int(v) is not None else 0 for v in rows["op_id"]]
    shapes = [str(v).replace(" ", "") for v in rows["orig_shape"]] if "orig_shape" in rows else [""] * n
    formats = [str(v) for v in rows["data_format"]] if "data_format" in rows else [""] * n
    owner = list(range(n))
    first_row: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first_row and not name.endswith(_SCRATCH_SUFFIX):
            owner[i] = first_row[name]
        else:
            first_row.setdefault(name, i)
    scratch = [name.endswith(_SCRATCH_SUFFIX) for name in names]
    firsts = [0] * n
    lasts = [0] * n
    # group readers per buffer
    group_readers: dict[int, list[int]] = {}
    ends_at_output: dict[int, bool] = {}
    for i in range(n):
        group_readers.setdefault(owner[i], []).append(readers[i])
        ends_at_output[owner[i]] = ends_at_output.get(owner[i], False) or user_ops[i] in _OUTPUT_OPS
    claimed: set[int] = set()
    writer: dict[int, int] = {}
    order = sorted(group_readers, key=lambda o: (min(group_readers[o]), o))

    def by_shape(o: int) -> int:
        """The latest earlier unclaimed op of the tensor's shape, else the op before its first reader."""
        first_reader = min(group_readers[o])
        chosen = max(first_reader - 1, 0)
        if producers:
            same = [
                j
                for j in range(first_reader)
                if j not in claimed and op_ids[j] in producers and producers[op_ids[j]][2] == shapes[o]
            ]
            chosen = same[-1] if same else chosen
            claimed.add(chosen)
        return chosen

    for o in order:
        first_reader = min(group_readers[o])
        known = (writers or {}).get(names[o])
        if scratch[o]:
            writer[o] = first_reader
        elif known is not None and index_of.get(known, first_reader) < first_reader:
            writer[o] = index_of[known]
            claimed.add(writer[o])
        else:
            by_name = [
                j
                for j in range(first_reader)
                if j not in claimed
                and op_ids[j] in producers
                and producers[op_ids[j]][0] != "InputOperator"
                and names[o].startswith(producers[op_ids[j]][1])
            ]
            if by_name:
                writer[o] = by_name[-1]
                claimed.add(writer[o])
            elif writers is None:
                writer[o] = by_shape(o)
    # Given writers (a predicted table, whose names are the compiler's), every name match outranks a
    # shape match: a shape match must not take an op another tensor's name points at.
    for o in order:
        if o not in writer:
            writer[o] = by_shape(o)
    for i in range(n):
        o = owner[i]
        firsts[i] = writer[o] if not scratch[i] else readers[i]
        lasts[i] = last_index if user_ops[i] in _OUTPUT_OPS else readers[i]
        if scratch[i]:
            firsts[i] = lasts[i] = readers[i]
    span_first = list(firsts)
    span_last = list(lasts)
    for i in range(n):
        o = owner[i]
        span_first[o] = min(span_first[o], firsts[i])
        span_last[o] = max(span_last[o], lasts[i])
    # An in-place Reshape: its output (written by a Reshape op) takes its input's buffer when both are
    # NC1HWC2 of the same size; the input's buffer then lives on to the output's last reader.
    for o in sorted({owner[i] for i in range(n)}, key=lambda o: (span_first[o], o)):
        if scratch[o] or owner[o] != o:
            continue
        w = writer[o]
        if not producers or producers.get(op_ids[w], ("",))[0] != "Reshape" or formats[o] != "NC1HWC2":
            continue
        inputs = {owner[i] for i in range(n) if readers[i] == w and not scratch[i] and owner[i] != o}
        if len(inputs) != 1:
            continue
        (src,) = inputs
        while owner[src] != src:
            src = owner[src]
        same_size = opt_int(rows.at[src, "size_bytes"]) == opt_int(rows.at[o, "size_bytes"])
        if formats[src] != "NC1HWC2" or not same_size:
            continue
        for i in range(n):
            if owner[i] == o:
                owner[i] = src
        span_last[src] = max(span_last[src], span_last[o])
    rank = [
        1 if scratch[i] else 0 if writer[owner[i]] == min(group_readers[owner[i]]) else 2 for i in range(n)
    ]
    return TableLifetimes(firsts, lasts, owner, scratch, span_first, span_last, rank)


def replay_log(
    rows: pd.DataFrame,
    internal_bytes: int | None,
    alignment: int = RKNN_ALIGNMENT,
    layers: pd.DataFrame | None = None,
) -> Replay:
    """Run the emulated allocator over a log's feature-tensor rows (one build), with the log's sizes.

    Lifetimes come from the table (`_table_lifetimes`): the `ID` column names the op that reads a
    tensor; a tensor listed under several readers is one buffer, live from the op that wrote it to its
    last reader; an `_exSecondary` row is its reader's scratch, live during that op only; a
    same-size NC1HWC2 Reshape output shares its input's buffer. Graph-output rows (read by
    `OutputOperator`) live to the end. Within one op its scratch is placed before its outputs. Rows
    lying outside the internal pool in the log (a runtime keeps the user input and float outputs in
    separate buffers) are excluded, except the input, which keeps its slot at offset 0.
    """
    rows = rows.reset_index(drop=True)
    op_ids = sorted({int(v) for v in rows["op_id"].dropna()})
    life = _table_lifetimes(rows, op_ids, layers)
    firsts, lasts = life.firsts, life.lasts
    sizes = [opt_int(v) or 0 for v in rows["size_bytes"]]
    starts = [opt_int(v) for v in rows["start_offset"]]
    first_user = op_ids[0] if op_ids else None
    is_input = [opt_int(v) == first_user for v in rows["op_id"]]

    def run(included: list[bool]) -> list[int | None]:
        # One record per buffer (its owner row), in placement order: by first step, an op's scratch
        # before its outputs, then table order; rows of the same buffer take the owner's offset.
        order = sorted(
            (i for i in range(len(rows)) if life.owner[i] == i),
            key=lambda i: (life.span_first[i], life.rank[i], i),
        )
        records = [
            Record(str(i), sizes[i] if included[i] else 0, life.span_first[i], life.span_last[i])
            for i in order
        ]
        plan = plan_first_fit(records, alignment)
        offset_of = dict(zip(order, plan.offsets, strict=True))
        return [
            offset_of[life.owner[i]] if included[i] and included[life.owner[i]] else None
            for i in range(len(rows))
        ]

    included = [True] * len(rows)
    emulated = run(included)
    base = _mode_shift(starts, emulated)
    outside = [False] * len(rows)
    if base is not None:
        limit = base + internal_bytes if internal_bytes else None
        for i, start in enumerate(starts):
            if start is None:
                continue
            if start < base or (limit is not None and start + sizes[i] > limit):
                outside[i] = True
        if any(outside):
            included = [not o or is_input[i] for i, o in enumerate(outside)]
            emulated = run(included)
            base = (
                _mode_shift([s if not outside[i] else None for i, s in enumerate(starts)], emulated) or base
            )
    logged = [None if s is None or base is None else s - base for s in starts]
    owned = [sizes[i] if life.owner[i] == i else 0 for i in range(len(rows))]
    stepwise = _stepwise(
        owned, life.span_first, life.span_last, life.rank, logged, included, outside, alignment
    )
    stepwise = [stepwise[life.owner[i]] for i in range(len(rows))]
    total = max(
        (
            e + sizes[i]
            for i, e in enumerate(emulated)
            if e is not None and included[i] and life.owner[i] == i
        ),
        default=0,
    )
    out_rows: list[dict[str, Any]] = []
    for i, r in enumerate(rows.itertuples(index=False)):
        status, reason = _judge(i, rows, logged, emulated, stepwise, outside, is_input, sizes)
        out_rows.append(
            {
                "row": i,
                "line": r.line,
                "op_id": r.op_id,
                "user_op": r.user_op,
                "name": r.name,
                "size_bytes": sizes[i],
                "first_step": firsts[i],
                "last_step": lasts[i],
                "log_offset": logged[i],
                "emulated_offset": emulated[i],
                "stepwise_offset": stepwise[i],
                "status": status,
                "reason": reason,
            }
        )
    frame = build_reference_frame("replay", out_rows)
    in_pool = [i for i in range(len(rows)) if not outside[i] and logged[i] is not None]
    log_records = [Record(str(i), sizes[i], firsts[i], lasts[i]) for i in in_pool]
    log_curve = high_water_curve(log_records, [logged[i] or 0 for i in in_pool], len(op_ids))
    emu_idx = [i for i in range(len(rows)) if included[i] and emulated[i] is not None]
    emu_curve = high_water_curve(
        [Record(str(i), sizes[i], firsts[i], lasts[i]) for i in emu_idx],
        [emulated[i] or 0 for i in emu_idx],
        len(op_ids),
    )
    return Replay(frame, base, total, internal_bytes, op_ids, log_curve, emu_curve)


def _mode_shift(starts: Sequence[int | None], emulated: Sequence[int | None]) -> int | None:
    shifts = Counter(s - e for s, e in zip(starts, emulated, strict=True) if s is not None and e is not None)
    if not shifts:
        return None
    best = max(shifts.values())
    return min(k for k, v in shifts.items() if v == best)


def _stepwise(
    sizes: Sequence[int],
    firsts: Sequence[int],
    lasts: Sequence[int],
    rank: Sequence[int],
    logged: Sequence[int | None],
    included: Sequence[bool],
    outside: Sequence[bool],
    alignment: int,
) -> list[int | None]:
    """The allocator's choice for each row given where the log put every earlier row (no cascading)."""
    order = sorted(range(len(sizes)), key=lambda i: (firsts[i], rank[i], i))
    out: list[int | None] = [None] * len(sizes)
    placed: list[tuple[int, int, Record]] = []
    for i in order:
        if not included[i] or sizes[i] == 0:
            continue
        r = Record(str(i), sizes[i], firsts[i], lasts[i])
        live = sorted((e for e in placed if e[2].last >= r.first), key=lambda e: (e[0], e[1]))
        out[i] = place_record(r, live, alignment, best_fit=False)
        actual = 0 if outside[i] else logged[i]  # the input slot sits at 0 whatever the log says
        if actual is not None:
            placed.append((actual, i, r))
    return out


def _judge(
    i: int,
    rows: pd.DataFrame,
    logged: Sequence[int | None],
    emulated: Sequence[int | None],
    stepwise: Sequence[int | None],
    outside: Sequence[bool],
    is_input: Sequence[bool],
    sizes: Sequence[int],
) -> tuple[str, str]:
    here = logged[i]
    if here is None:
        return "no-offset", "the log prints no offset for this row"
    if outside[i]:
        where = "below" if here < 0 else "above"
        if is_input[i]:
            first_inside = next(
                (
                    logged[j]
                    for j in range(len(logged))
                    if not outside[j] and not is_input[j] and logged[j] is not None
                ),
                None,
            )
            gap = (
                f"; the log's first pool tensor starts at offset {first_inside} = "
                f"the input's {sizes[i]} bytes"
                if first_inside == sizes[i]
                else ""
            )
            return (
                "outside-pool",
                f"the input is stored outside the pool ({where} it); "
                f"the emulation keeps its slot at offset 0{gap}",
            )
        return (
            "outside-pool",
            f"stored outside the internal pool ({where} it): a separate buffer, not planned there",
        )
    if emulated[i] == logged[i]:
        return "reproduced", ""
    name = str(rows.at[i, "name"])
    delta = (logged[i] or 0) - (emulated[i] or 0)
    if stepwise[i] == logged[i]:
        return (
            "follows-earlier-difference",
            f"off by {delta:+d} B only because an earlier row differs; given the logged placement "
            "of earlier rows the allocator picks the logged offset",
        )
    if delta > 0:
        return (
            "differs",
            f"{name}: logged {delta} B above the emulated offset {emulated[i]}: the log keeps "
            f"[{emulated[i]}, {logged[i]}) occupied by a buffer its table does not list",
        )
    return (
        "differs",
        f"{name}: logged {-delta} B below the emulated offset {emulated[i]}: a buffer the chain "
        "lifetimes keep live was already free in the log (a shorter lifetime than the table order implies)",
    )


_SHAPE_RE = re.compile(r"-?\d+")


def parse_shape(text: Any) -> tuple[int, ...] | None:
    """`"(1,32,112,112)"` -> (1, 32, 112, 112); None for missing text."""
    if text is None or (not isinstance(text, str) and pd.isna(text)):
        return None
    dims = _SHAPE_RE.findall(str(text))
    return tuple(int(d) for d in dims) if dims else None
