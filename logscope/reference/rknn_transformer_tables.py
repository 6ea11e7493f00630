"""The feature table RKNN's compiler prints for a pre-norm transformer block, predicted row by row.

The compiler does not allocate the ONNX tensors of a transformer block: it rewrites the block into its
own ops (exNorm for LayerNormalization, 1x1 Convs for the projections, one exSDPAttention for
MatMul-Mul-Softmax-MatMul, exMatMul, ConvExGelu, 4-D Reshape/Transpose pairs) and lists 30-40 buffers
of its own, most of them `_exSecondary` scratch. This module predicts that table -- every row's op,
name, shape, layout and size -- and the layer table beside it, so that the feature-table replay of
`logscope.reference.rknn` (`_table_lifetimes`: who writes and who reads each row, an op's scratch live
during that op only) places the rows as the compiler does and gives its `Total Internal Memory Size`.

What is covered, and why only that: the row list and the sizes below were read off the development
builds of `fixtures/rknn-compiler/transformer-dev/` (8 blocks of other T, D and head counts) for
rknn-toolkit2 2.2.0 and 2.3.0, whose rewrite of the block differs from later versions (the residual
re-reads the graph input through its own Reshape/Transpose and an exMatMul; later versions use a
ConvAdd). They hold for the targets and dtypes in `COMBOS`, for heads of a width that is a multiple
of 16 (narrower heads get another row list) and 33 <= T <= 128 tokens (the range of the measured
attention scratch, `ATTENTION_SCRATCH`). Anything else returns None and the emulation's generic path
applies.

Notation: T tokens, D model width, h heads of width hd = D / h, F the MLP width; e the element size,
C2 the target's channel block for the dtype, c the channels a conv output is rounded to (the learned
profile's `conv_bytes` / e); u = align(T, 4), aT = align(T, C2); odd = 1 when T is not a multiple of C2.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from logscope.reference.graph import Op, RefGraph
from logscope.reference.rknn_profiles import version_key
from logscope.targets import CHANNEL_BLOCKS

#: The size of the exSDPAttention op's `_exSecondary` scratch buffer, by target, dtype and u = align(T, 4)
#: (T 33-128). Read from `fixtures/rknn-compiler/transformer-sweep-targets/` (T = 4k+1 from 33 to 125,
#: D 32, 2 heads): equal in 2.3.2 and 2.5.0 on these targets, and equal to the 2.2.0 / 2.3.0 scratch of
#: every development build (T 49, 64, 100; D 48-128; 2-6 heads), which also shows it does not depend on D
#: or the head count. rk3588 int8 follows a formula instead (`attention_scratch`). A test re-reads the
#: sweep logs and checks every entry.
_U = tuple(range(36, 129, 4))
ATTENTION_SCRATCH: dict[tuple[str, str], dict[int, int]] = {
    ("rk3576", "int8"): dict(zip(_U, (
        63872, 67712, 78464, 82560, 107904, 112768, 126592, 131712, 177024, 183424, 200832, 207488,
        247680, 255104, 275584, 283264, 347520, 356480, 380544, 389760, 444800, 454784, 481920, 492160,
    ), strict=True)),
    ("rk3576", "fp16"): dict(zip(_U, (
        70272, 76672, 88704, 95616, 123264, 131456, 147328, 139648, 199296, 209792, 230016, 241024,
        283008, 295296, 319360, 332160, 393856, 408448, 436864, 451968, 508288, 524672, 556928, 573824,
    ), strict=True)),
    ("rk3562", "int8"): dict(zip(_U, (
        16576, 18048, 21632, 23296, 29312, 31232, 36032, 34048, 47808, 50304, 56448, 59136,
        68224, 71168, 78528, 81664, 95424, 98944, 107648, 111360, 123520, 127488, 137408, 141568,
    ), strict=True)),
    ("rv1106", "int8"): dict(zip(_U, (
        15680, 16704, 19136, 20160, 26368, 27584, 30720, 27840, 41792, 43328, 47296, 48832,
        58112, 59840, 64512, 66240, 80192, 82240, 87744, 89792, 102144, 104384, 110592, 112832,
    ), strict=True)),
}  # fmt: skip
T_RANGE = (33, 128)

#: (toolkit versions, target, dtype) the row rules cover: each was checked on the development builds
#: (`tests/test_rknn_transformer_tables.py`). fp16 on rk3588 and rk3562 is left out: the replay's
#: lifetimes do not reproduce those builds even with the logs' own sizes.
COMBOS = frozenset(
    (v, t, d)
    for v in ("2.2.0", "2.3.0")
    for t, d in (("rk3576", "int8"), ("rk3576", "fp16"), ("rk3588", "int8"), ("rk3562", "int8"), ("rv1106", "int8"))
)

#: The exNorm scratch, a u align(D, C2) e + b u + 64 bytes: (a, b) per target and dtype.
_NORM_SCRATCH = {("rk3576", "int8"): (4, 32), ("rk3588", "int8"): (4, 32), ("rk3562", "int8"): (6, 16),
                 ("rk3576", "fp16"): (2, 64)}  # fmt: skip
#: Conv output channel rounding in bytes (the learned profiles' conv_bytes).
_CONV_BYTES = {"rk3576": 32, "rk3588": 32, "rk3562": 16, "rv1106": 16}


def align(value: int, block: int) -> int:
    return -(-value // block) * block


def attention_scratch(target: str, dtype: str, tokens: int) -> int | None:
    """The exSDPAttention scratch in bytes, or None outside what was measured."""
    if not T_RANGE[0] <= tokens <= T_RANGE[1]:
        return None
    u = align(tokens, 4)
    if (target, dtype) == ("rk3588", "int8"):
        # 2 u w + 4 u a8 + 2 u a16 + 32 u + 64 w + 192: every 2.5.0 sweep build from T 33, and the
        # 2.2.0 / 2.3.0 development builds (docs/reference.md, "Transformer blocks").
        a8, a16, w = align(tokens, 8), align(tokens, 16), align(tokens, 32)
        return 2 * u * w + 4 * u * a8 + 2 * u * a16 + 32 * u + 64 * w + 192
    return ATTENTION_SCRATCH.get((target, dtype), {}).get(u)


@dataclass(frozen=True)
class Block:
    """A pre-norm transformer block as `match_block` finds it, with the ONNX names the compiler's row
    names are made of."""

    tokens: int  # T
    width: int  # D
    heads: int  # h
    mlp: int  # F
    x: str  # graph input
    ln1: str  # node names
    ln2: str
    q_mm: Op
    k_mm: Op
    v_mm: Op
    q_reshape: Op
    k_reshape: Op
    v_reshape: Op
    q_tp: Op
    v_tp: Op
    kt_tp: Op
    av_mm: Op
    av_tp: Op
    av_reshape: Op
    out_mm: Op
    residual: Op
    fc1: Op
    gelu_out: Op
    fc2: Op
    y: str  # graph output


def _consumers(graph: RefGraph, tensor: str) -> list[Op]:
    t = graph.tensors.get(tensor)
    return [graph.ops[s] for s in (t.consumers if t is not None else [])]


def _only(ops: list[Op], op_type: str) -> Op | None:
    return ops[0] if len(ops) == 1 and ops[0].op_type == op_type else None


def _chain(graph: RefGraph, start: str, types: tuple[str, ...]) -> list[Op] | None:
    """The single-consumer chain of `types` from tensor `start`, or None."""
    out: list[Op] = []
    tensor = start
    for op_type in types:
        op = _only(_consumers(graph, tensor), op_type)
        if op is None:
            return None
        out.append(op)
        tensor = op.outputs[0]
    return out


def match_block(graph: RefGraph) -> Block | None:
    """The block, if the graph is exactly one pre-norm transformer block on a (1, T, D) input:
    LayerNormalization; three MatMul + Add + Reshape(1, T, h, hd) + Transpose(0, 2, 1, 3) projections;
    Transpose(K); MatMul, Mul, Softmax, MatMul; Transpose, Reshape, MatMul; the residual Add; a second
    LayerNormalization; MatMul + Add, an Erf GELU (Div, Erf, Add, Mul, Mul), MatMul; the residual Add."""
    if len(graph.inputs) != 1 or len(graph.outputs) != 1 or len(graph.ops) != 32:
        return None
    (x,) = graph.inputs
    shape = graph.tensors[x].shape
    if shape is None or len(shape) != 3 or shape[0] != 1:
        return None
    tokens, width = int(shape[1]), int(shape[2])
    ln1 = _only([o for o in _consumers(graph, x) if o.op_type == "LayerNormalization"], "LayerNormalization")
    if ln1 is None:
        return None
    projections = _consumers(graph, ln1.outputs[0])
    if len(projections) != 3 or any(o.op_type != "MatMul" for o in projections):
        return None
    chains = [_chain(graph, mm.outputs[0], ("Add", "Reshape", "Transpose")) for mm in projections]
    if any(c is None for c in chains):
        return None
    by_tp = {c[2].outputs[0]: (mm, c) for mm, c in zip(projections, chains, strict=True) if c is not None}
    kt = [o for o in graph.ops if o.op_type == "Transpose" and o.inputs[0] in by_tp]
    scores = [o for o in graph.ops if o.op_type == "MatMul" and len(o.inputs) == 2 and o.inputs[0] in by_tp]
    if len(kt) != 1 or len(scores) != 1 or scores[0].inputs[1] != kt[0].outputs[0]:
        return None
    attention = _chain(graph, scores[0].outputs[0], ("Mul", "Softmax", "MatMul"))
    if attention is None:
        return None
    av_mm = attention[2]
    if av_mm.inputs[0] != attention[1].outputs[0] or av_mm.inputs[1] not in by_tp:
        return None
    q_mm, q_chain = by_tp[scores[0].inputs[0]]
    k_mm, k_chain = by_tp[kt[0].inputs[0]]
    v_mm, v_chain = by_tp[av_mm.inputs[1]]
    if len({q_mm.name, k_mm.name, v_mm.name}) != 3:
        return None
    tail = _chain(graph, av_mm.outputs[0], ("Transpose", "Reshape", "MatMul", "Add"))
    if tail is None or x not in tail[3].inputs:
        return None
    residual = tail[3]
    ln2 = [o for o in _consumers(graph, residual.outputs[0]) if o.op_type == "LayerNormalization"]
    if len(ln2) != 1 or len(_consumers(graph, residual.outputs[0])) != 2:
        return None
    mlp = _chain(graph, ln2[0].outputs[0], ("MatMul", "Add"))
    if mlp is None:
        return None
    fc1_out = mlp[1].outputs[0]
    gelu = _gelu_tail(graph, fc1_out)
    if gelu is None:
        return None
    fc2 = _only(_consumers(graph, gelu.outputs[0]), "MatMul")
    final = _only(_consumers(graph, fc2.outputs[0]), "Add") if fc2 is not None else None
    if fc2 is None or final is None or residual.outputs[0] not in final.inputs:
        return None
    if graph.outputs != (final.outputs[0],):
        return None
    heads_shape = graph.tensors[q_chain[1].outputs[0]].shape
    weight = graph.tensors[mlp[0].inputs[1]].shape if len(mlp[0].inputs) > 1 else None
    if heads_shape is None or len(heads_shape) != 4 or weight is None or len(weight) != 2:
        return None
    heads = int(heads_shape[2])
    if heads <= 0 or heads * int(heads_shape[3]) != width or int(heads_shape[1]) != tokens:
        return None
    return Block(
        tokens, width, heads, int(weight[1]), x, ln1.name, ln2[0].name,
        q_mm, k_mm, v_mm, q_chain[1], k_chain[1], v_chain[1], q_chain[2], v_chain[2], kt[0],
        av_mm, tail[0], tail[1], tail[2], residual, mlp[0], gelu, fc2, final.outputs[0],
    )  # fmt: skip


def _gelu_tail(graph: RefGraph, fc1_out: str) -> Op | None:
    """The last Mul of 0.5 x (1 + erf(x / sqrt 2)) read from `fc1_out`, or None."""
    readers = _consumers(graph, fc1_out)
    div = [o for o in readers if o.op_type == "Div"]
    mul = [o for o in readers if o.op_type == "Mul"]
    if len(readers) != 2 or len(div) != 1 or len(mul) != 1:
        return None
    erf = _chain(graph, div[0].outputs[0], ("Erf", "Add", "Mul"))
    if erf is None or erf[2] is not mul[0]:
        return None
    return _only(_consumers(graph, mul[0].outputs[0]), "Mul")


# --- the tables ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """The size rules' quantities for one build."""

    tokens: int
    width: int
    heads: int
    mlp: int
    e: int
    c2: int
    conv: int  # channels a conv output is rounded to

    @property
    def u(self) -> int:
        return align(self.tokens, 4)

    @property
    def a_t(self) -> int:
        return align(self.tokens, self.c2)

    @property
    def odd(self) -> int:
        return int(self.tokens % self.c2 != 0)

    def tokens_as_channels(self, copies: int = 1) -> int:
        """(1, T, 1, D) with T as the channel axis: aT D e per copy."""
        return copies * self.a_t * self.width * self.e

    def plane(self, channels: int, block: int) -> int:
        """(1, channels, 1, T): align(channels, block) u e."""
        return align(channels, block) * self.u * self.e


def predict_table(graph: RefGraph, target: str, dtype: str, toolkit: str | None) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(feature rows, layer rows) as the compiler would print them, or None when the block, the
    target, the dtype or the toolkit is outside what the rules cover (module docstring)."""
    key = version_key(toolkit or "")
    version = ".".join(str(k) for k in key) if key else None
    if version is None or (version, target, dtype) not in COMBOS:
        return None
    block = match_block(graph)
    if block is None or block.width % block.heads or (block.width // block.heads) % 16:
        return None
    scratch = attention_scratch(target, dtype, block.tokens)
    if scratch is None:
        return None
    c2 = CHANNEL_BLOCKS[target][dtype]
    e = 1 if dtype == "int8" else 2
    s = Sizes(block.tokens, block.width, block.heads, block.mlp, e, c2, _CONV_BYTES[target] // e)
    return _rows(block, s, target, dtype, version, scratch), _layers(block)


def _rows(block: Block, s: Sizes, target: str, dtype: str, version: str, scratch: int) -> pd.DataFrame:
    T, D, h, F = s.tokens, s.width, s.heads, s.mlp
    hd = D // h
    x, y = block.x, block.y
    in3 = f"(1,{T},{D})"
    tok4 = f"(1,{T},1,{D})"
    ch4 = f"(1,{D},1,{T})"
    head4 = f"({h},{hd},1,{T})"
    rk3588 = target == "rk3588"
    norm = _NORM_SCRATCH.get((target, dtype))
    conv = s.plane(D, s.conv)
    ln = s.plane(D, s.c2)
    # The attention output and its transpose: one channel block more when a head's width is not a
    # multiple of the conv rounding (hd 16 on a 32-channel conv target).
    attn = (align(D, s.c2) + s.c2 * int(hd % s.conv != 0)) * s.u * s.e
    graph_input = T * D * s.e if target == "rk3562" else s.tokens_as_channels()
    input_copy = s.tokens_as_channels(1 + s.odd)
    # The (1, T, 1, D) transposes' scratch: twice the tensor; on rv1106 the first one only when T is
    # not a multiple of C2.
    first_tp_scratch = s.tokens_as_channels(1 + s.odd if target == "rv1106" else 2)
    mlp_factor = 2 if dtype == "fp16" else 1
    rows: list[tuple[int, str, str, str, str, int]] = [
        (1, "Reshape", x, in3, "UNDEFINED", graph_input),
        (1, "Reshape", f"{x}_exSecondary", in3, "NC1HWC2", input_copy),
        (2, "Transpose", f"{x}_rs#1", tok4, "NC1HWC2", s.tokens_as_channels()),
    ]
    if not (rk3588 and version == "2.2.0"):
        rows.append((2, "Transpose", f"{x}_rs#1_exSecondary", tok4, "NC1HWC2", first_tp_scratch))
    tp_rs = ln if rk3588 and version == "2.2.0" else s.tokens_as_channels()
    rows.append((3, "exNorm", f"{x}_tp-rs", ch4, "NC1HWC2", tp_rs))
    if norm is not None:
        a, b = norm
        rows.append((3, "exNorm", f"{x}_tp-rs_exSecondary", ch4, "NC1HWC2", a * ln + b * s.u + 64))
    for op_id in (4, 5, 6):
        rows.append((op_id, "Conv", block.ln1, ch4, "NC1HWC2", ln))
    for op_id, mm in zip((7, 8, 9), (block.v_mm, block.q_mm, block.k_mm), strict=True):
        rows.append((op_id, "Reshape", f"{mm.outputs[0]}_mm_tp_sw", ch4, "NC1HWC2", conv))
        if rk3588:
            rows.append((op_id, "Reshape", f"{mm.outputs[0]}_mm_tp_sw_exSecondary", ch4, "NC1HWC2", ln))
    q_name = f"{block.q_tp.outputs[0]}_tp_rs"
    rows += [
        (10, "exSDPAttention", q_name, head4, "NC1HWC2", conv),
        (10, "exSDPAttention", f"{block.kt_tp.outputs[0]}_rs", head4, "NC1HWC2", conv),
        (10, "exSDPAttention", f"{block.v_tp.outputs[0]}_tp_rs", head4, "NC1HWC2", conv),
        (10, "exSDPAttention", f"{q_name}_exSecondary", head4, "NC1HWC2", scratch),
        (11, "Reshape", f"{block.av_mm.outputs[0]}_sdpa", head4, "NC1HWC2", attn),
    ]
    if rk3588:
        rows.append((11, "Reshape", f"{block.av_mm.outputs[0]}_sdpa_exSecondary", head4, "NC1HWC2", ln))
    residual = block.residual.outputs[0]
    rows += [
        (12, "Reshape", x, in3, "UNDEFINED", graph_input),
        (12, "Reshape", f"{x}_1_exSecondary", in3, "NC1HWC2", input_copy),
        (13, "Transpose", f"{x}_rs", tok4, "NC1HWC2", s.tokens_as_channels()),
        (13, "Transpose", f"{x}_rs_exSecondary", tok4, "NC1HWC2", s.tokens_as_channels(2)),
        (14, "exMatMul", f"{block.av_tp.outputs[0]}_sw", ch4, "NC1HWC2", attn),
        (14, "exMatMul", f"{x}_rs_tp", ch4, "NC1HWC2", s.tokens_as_channels()),
        (15, "exNorm", f"{residual}-rs", ch4, "NC1HWC2", conv),
    ]
    if norm is not None:
        a, b = norm
        rows.append((15, "exNorm", f"{residual}-rs_exSecondary", ch4, "NC1HWC2", a * ln + b * s.u + 64))
    rows += [
        (16, "ConvExGelu", block.ln2, ch4, "NC1HWC2", ln),
        (17, "exMatMul", f"{block.gelu_out.outputs[0]}_tp-rs", f"(1,{F},1,{T})", "NC1HWC2",
         mlp_factor * s.plane(F, s.c2)),
        (17, "exMatMul", f"{residual}-rs", ch4, "NC1HWC2", conv),
        (18, "Transpose", f"{y}-rs_tp", ch4, "NC1HWC2", conv),
        (18, "Transpose", f"{y}-rs_tp_exSecondary", ch4, "NC1HWC2", s.tokens_as_channels(2)),
        (19, "Reshape", f"{y}-rs", tok4, "NC1HWC2", s.tokens_as_channels()),
        (19, "Reshape", f"{y}-rs_exSecondary", tok4, "NC1HWC2",
         T * D * s.e + (1 if rk3588 else 2) * s.odd * s.tokens_as_channels()),
        (20, "OutputOperator", y, in3, "UNDEFINED", s.tokens_as_channels()),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["op_id", "user_op", "name", "orig_shape", "data_format", "size_bytes"])
    frame["start_offset"] = None
    frame["line"] = None
    return frame


def _layers(block: Block) -> pd.DataFrame:
    T, D, h, F = block.tokens, block.width, block.heads, block.mlp
    hd = D // h
    x, y = block.x, block.y
    ch4 = f"(1,{D},1,{T})"
    head4 = f"({h},{hd},1,{T})"
    rows = [
        (0, "InputOperator", f"InputOperator:{x}", f"(1,{T},{D})"),
        (1, "Reshape", f"Reshape:{x}_rs#1", f"(1,{T},1,{D})"),
        (2, "Transpose", f"Transpose:{x}_tp", ch4),
        (3, "exNorm", f"exNorm:{block.ln1}", ch4),
        (4, "Conv", f"Conv:{block.v_mm.name}", ch4),
        (5, "Conv", f"Conv:{block.q_mm.name}", ch4),
        (6, "Conv", f"Conv:{block.k_mm.name}", ch4),
        (7, "Reshape", f"Reshape:{block.v_reshape.name}", head4),
        (8, "Reshape", f"Reshape:{block.q_reshape.name}", head4),
        (9, "Reshape", f"Reshape:{block.k_reshape.name}", head4),
        (10, "exSDPAttention", f"exSDPAttention:{block.av_mm.name}_2sdpa", head4),
        (11, "Reshape", f"Reshape:{block.av_reshape.outputs[0]}_rs", ch4),
        (12, "Reshape", f"Reshape:{x}_rs", f"(1,{T},1,{D})"),
        (13, "Transpose", f"Transpose:{x}_rs_tp", ch4),
        (14, "exMatMul", f"exMatMul:{block.out_mm.name}", ch4),
        (15, "exNorm", f"exNorm:{block.ln2}", ch4),
        (16, "ConvExGelu", f"Conv:{block.fc1.name}", f"(1,{F},1,{T})"),
        (17, "exMatMul", f"exMatMul:{block.fc2.name}", ch4),
        (18, "Transpose", f"Transpose:{y}-rs_tp", f"(1,{T},1,{D})"),
        (19, "Reshape", f"Reshape:{y}-rs", f"(1,{T},{D})"),
        (20, "OutputOperator", f"OutputOperator:{y}", "\\"),
    ]
    return pd.DataFrame(rows, columns=["layer_id", "op_type", "full_name", "output_shape"])
