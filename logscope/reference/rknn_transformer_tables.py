"""The feature table RKNN's compiler prints for a pre-norm transformer block, predicted row by row.

The compiler does not allocate the ONNX tensors of a transformer block: it rewrites the block into its
own ops (exNorm for LayerNormalization, 1x1 Convs for the projections, one exSDPAttention for
MatMul-Mul-Softmax-MatMul, exMatMul or ConvAdd, ConvExGelu or Conv + exGelu, 4-D Reshape/Transpose pairs)
and lists 25-40 buffers of its own, most of them `_exSecondary` scratch. This module predicts that table
-- every row's op, name, shape, layout and size -- and the layer table beside it, so that the
feature-table replay of `logscope.reference.rknn` (`_table_lifetimes`: who writes and who reads each row,
an op's scratch live during that op only) places the rows as the compiler does and gives its
`Total Internal Memory Size`.

The tables are data (`rknn_transformer_data.TEMPLATES`), learned per toolkit, target and dtype from the
development builds by tools/corpus/rknn_transformer_templates.py: which rows exist, their names in terms
of the block's ONNX names, their shapes, and each size as a sum of the `TERMS` below that reproduces every
development build. They hold inside `in_domain`: 33 <= T <= 128 tokens (the range of the measured
attention scratch), heads whose width is a multiple of 16 (narrower heads get another row list), and on
rk3588 from 2.3.2 T not a multiple of 16 and D a multiple of 32 (where the compiler lists other rows).
Anything else returns None, and the emulation's generic path applies.

Notation: T tokens, D model width, h heads of width hd = D / h, F the MLP width; e the element size,
C2 the target's channel block for the dtype, c the channels a conv output is rounded to (the learned
profile's `conv_bytes` / e); u = align(T, 4), aT = align(T, C2); odd = 1 when T is not a multiple of C2.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from logscope.reference.graph import Op, RefGraph
from logscope.reference.rknn_profiles import version_key
from logscope.reference.rknn_transformer_data import TEMPLATES, Template
from logscope.targets import CHANNEL_BLOCKS

#: The size of the exSDPAttention op's `_exSecondary` scratch buffer, by (target, dtype, toolkit or None for
#: every version), for u = align(T, 4) = 36, 40, ..., 128. Read from fixtures/rknn-compiler/
#: transformer-sweep-targets/ (T = 4k+1 from 33 to 125, D 32, 2 heads; 2.3.2 and 2.5.0 agree except on
#: rk3588 fp16); the development builds of other D and head counts, and of 2.2.0 / 2.3.0, have the same
#: scratch (the template learner checks every one). rv1126b's equals rk3576's and rv1103's rv1106's at every
#: measured point; rk3588 int8 follows a formula instead (`attention_scratch`). A test re-reads the sweep
#: logs and checks every entry.
ATTENTION_SCRATCH: dict[tuple[str, str, str | None], tuple[int, ...]] = {
    ('rk3576', 'int8', None): (
        63872, 67712, 78464, 82560, 107904, 112768, 126592, 131712, 177024, 183424, 200832, 207488,
        247680, 255104, 275584, 283264, 347520, 356480, 380544, 389760, 444800, 454784, 481920, 492160,
    ),
    ('rk3576', 'fp16', None): (
        70272, 76672, 88704, 95616, 123264, 131456, 147328, 139648, 199296, 209792, 230016, 241024,
        283008, 295296, 319360, 332160, 393856, 408448, 436864, 451968, 508288, 524672, 556928, 573824,
    ),
    ('rk3562', 'int8', None): (
        16576, 18048, 21632, 23296, 29312, 31232, 36032, 34048, 47808, 50304, 56448, 59136,
        68224, 71168, 78528, 81664, 95424, 98944, 107648, 111360, 123520, 127488, 137408, 141568,
    ),
    ('rk3562', 'fp16', None): (
        22016, 23872, 29568, 31680, 38144, 40512, 47744, 42176, 62720, 65856, 74880, 78272,
        88064, 91712, 102272, 106176, 123904, 128320, 140672, 145344, 158464, 163392, 177280, 182464,
    ),
    ('rv1106', 'int8', None): (
        15680, 16704, 19136, 20160, 26368, 27584, 30720, 27840, 41792, 43328, 47296, 48832,
        58112, 59840, 64512, 66240, 80192, 82240, 87744, 89792, 102144, 104384, 110592, 112832,
    ),
    ('rk3588', 'fp16', '2.3.2'): (
        30016, 32640, 38080, 40960, 52544, 55936, 63168, 58624, 85568, 89984, 99264, 103936,
        121408, 126592, 137664, 143104, 169792, 176000, 189120, 195584, 218944, 225920, 240832, 248064,
    ),
    ('rk3588', 'fp16', '2.5.0'): (
        24768, 26816, 30272, 32448, 41664, 44224, 48704, 43200, 67008, 70336, 76096, 79552,
        93120, 96960, 103744, 107712, 129728, 134336, 142400, 147136, 165056, 170176, 179264, 184512,
    ),
}  # fmt: skip
_ALIASES = {"rv1126b": "rk3576", "rv1103": "rv1106"}
#: Buffers the compiler holds that no row lists, by (target, dtype, toolkits): (the row whose reader holds
#: it, its size as a multiple of that row's). rk3562 fp16 from 2.3.2: the residual ConvAdd after the
#: attention keeps its output out of the gap below the attention output, as a scratch of 1.25-2 x that
#: output would (every in-domain development build replays exactly with it, 48 of 54 without); 2 x is taken.
UNLISTED_SCRATCH: dict[tuple[str, str], tuple[tuple[str, ...], str, int]] = {
    ("rk3562", "fp16"): (("2.3.2", "2.5.0"), "<av_tp.out>_sw", 2),
}
T_RANGE = (33, 128)
#: Conv output channel rounding in bytes (the learned profiles' conv_bytes).
CONV_BYTES = {"rk3576": 32, "rv1126b": 32, "rk3588": 32, "rk3562": 16, "rv1106": 16, "rv1103": 16}


def align(value: int, block: int) -> int:
    return -(-value // block) * block


def attention_scratch(toolkit: str, target: str, dtype: str, tokens: int) -> int | None:
    """The exSDPAttention scratch in bytes, or None outside what was measured."""
    if not T_RANGE[0] <= tokens <= T_RANGE[1]:
        return None
    u = align(tokens, 4)
    if (target, dtype) == ("rk3588", "int8"):
        # 2 u w + k u a8 + 2 u a16 + 32 u + 64 w + 192, k = 6 in 2.3.2, else 4: every sweep build from
        # T 33 (docs/reference.md, "Transformer blocks"); 2.2.0 and 2.3.0 as 2.5.0.
        a8, a16, w = align(tokens, 8), align(tokens, 16), align(tokens, 32)
        k = 6 if toolkit == "2.3.2" else 4
        return 2 * u * w + k * u * a8 + 2 * u * a16 + 32 * u + 64 * w + 192
    target = _ALIASES.get(target, target)
    series = ATTENTION_SCRATCH.get((target, dtype, None))
    if series is None and (target, dtype) == ("rk3588", "fp16"):
        series = ATTENTION_SCRATCH[(target, dtype, "2.3.2" if toolkit == "2.3.2" else "2.5.0")]
    return series[(u - 36) // 4] if series is not None else None


def in_domain(toolkit: str, target: str, tokens: int, width: int, heads: int) -> bool:
    """Whether the learned tables cover a block (module docstring)."""
    if heads <= 0 or width % heads or (width // heads) % 16 or not T_RANGE[0] <= tokens <= T_RANGE[1]:
        return False
    if target == "rk3588" and toolkit in ("2.3.2", "2.5.0"):
        return tokens % 16 != 0 and width % 32 == 0
    return True


@dataclass(frozen=True)
class Block:
    """A pre-norm transformer block as `match_block` finds it, with the ONNX names the compiler's row
    names are made of."""

    tokens: int  # T
    width: int  # D
    heads: int  # h
    mlp: int  # F
    x: str  # graph input
    y: str  # graph output
    roles: dict[str, Op]  # every op of the block by its role (`ROLES`)

    def names(self) -> dict[str, str]:
        """Placeholder -> ONNX name: `x`, `y`, each role's node name and `<role>.out` its output."""
        out = {"x": self.x, "y": self.y}
        for role, op in self.roles.items():
            out[role] = op.name
            out[f"{role}.out"] = op.outputs[0]
        return out


#: The block's ops by role, in the order of the ONNX block.
ROLES = (
    "ln1", "q_mm", "q_add", "q_reshape", "q_tp", "k_mm", "k_add", "k_reshape", "k_tp", "v_mm", "v_add",
    "v_reshape", "v_tp", "kt_tp", "scores_mm", "scale_mul", "softmax", "av_mm", "av_tp", "av_reshape",
    "out_mm", "residual", "ln2", "fc1", "fc1_add", "gelu_div", "gelu_erf", "gelu_add", "gelu_mul",
    "gelu_out", "fc2", "final",
)  # fmt: skip


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
    LayerNormalization; three MatMul + Add + Reshape(1, T, h, hd) + Transpose projections (Q, K, V);
    a Transpose of K; MatMul, Mul, Softmax, MatMul; Transpose, Reshape, MatMul; the residual Add; a second
    LayerNormalization; MatMul + Add, an Erf GELU (Div, Erf, Add, Mul, Mul), MatMul; the residual Add."""
    if len(graph.inputs) != 1 or len(graph.outputs) != 1 or len(graph.ops) != len(ROLES):
        return None
    (x,) = graph.inputs
    shape = graph.tensors[x].shape
    if shape is None or len(shape) != 3 or shape[0] != 1:
        return None
    ln1 = _only([o for o in _consumers(graph, x) if o.op_type == "LayerNormalization"], "LayerNormalization")
    projections = _consumers(graph, ln1.outputs[0]) if ln1 is not None else []
    if ln1 is None or len(projections) != 3 or any(o.op_type != "MatMul" for o in projections):
        return None
    by_tp: dict[str, list[Op]] = {}
    for mm in projections:
        chain = _chain(graph, mm.outputs[0], ("Add", "Reshape", "Transpose"))
        if chain is None:
            return None
        by_tp[chain[2].outputs[0]] = [mm, *chain]
    kt = [o for o in graph.ops if o.op_type == "Transpose" and o.inputs[0] in by_tp]
    scores = [o for o in graph.ops if o.op_type == "MatMul" and len(o.inputs) == 2 and o.inputs[0] in by_tp]
    if len(kt) != 1 or len(scores) != 1 or scores[0].inputs[1] != kt[0].outputs[0]:
        return None
    attention = _chain(graph, scores[0].outputs[0], ("Mul", "Softmax", "MatMul"))
    if attention is None or attention[2].inputs[:1] != attention[1].outputs[:1]:
        return None
    q, k = by_tp[scores[0].inputs[0]], by_tp[kt[0].inputs[0]]
    v = by_tp.get(attention[2].inputs[1]) if len(attention[2].inputs) == 2 else None
    if v is None or len({q[0].name, k[0].name, v[0].name}) != 3:
        return None
    tail = _chain(graph, attention[2].outputs[0], ("Transpose", "Reshape", "MatMul", "Add"))
    if tail is None or x not in tail[3].inputs:
        return None
    residual_readers = _consumers(graph, tail[3].outputs[0])
    ln2 = [o for o in residual_readers if o.op_type == "LayerNormalization"]
    if len(ln2) != 1 or len(residual_readers) != 2:
        return None
    mlp = _chain(graph, ln2[0].outputs[0], ("MatMul", "Add"))
    gelu = _gelu(graph, mlp[1].outputs[0]) if mlp is not None else None
    if mlp is None or gelu is None:
        return None
    end = _chain(graph, gelu[-1].outputs[0], ("MatMul", "Add"))
    if end is None or tail[3].outputs[0] not in end[1].inputs or graph.outputs != (end[1].outputs[0],):
        return None
    heads_shape = graph.tensors[q[2].outputs[0]].shape
    weight = graph.tensors[mlp[0].inputs[1]].shape if len(mlp[0].inputs) > 1 else None
    if heads_shape is None or len(heads_shape) != 4 or weight is None or len(weight) != 2:
        return None
    tokens, width, heads = int(shape[1]), int(shape[2]), int(heads_shape[2])
    if heads <= 0 or heads * int(heads_shape[3]) != width or int(heads_shape[1]) != tokens:
        return None
    ordered = (ln1, *q, *k, *v, kt[0], scores[0], *attention, *tail, ln2[0], *mlp, *gelu, *end)
    return Block(
        tokens, width, heads, int(weight[1]), x, graph.outputs[0], dict(zip(ROLES, ordered, strict=True))
    )


def _gelu(graph: RefGraph, fc1_out: str) -> list[Op] | None:
    """Div, Erf, Add, Mul, Mul of 0.5 x (1 + erf(x / sqrt 2)) read from `fc1_out`, or None."""
    readers = _consumers(graph, fc1_out)
    div = [o for o in readers if o.op_type == "Div"]
    mul = [o for o in readers if o.op_type == "Mul"]
    if len(readers) != 2 or len(div) != 1 or len(mul) != 1:
        return None
    erf = _chain(graph, div[0].outputs[0], ("Erf", "Add", "Mul"))
    if erf is None or erf[2] is not mul[0]:
        return None
    half = _only(_consumers(graph, mul[0].outputs[0]), "Mul")
    return [div[0], *erf, half] if half is not None else None


# --- the tables ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """The size rules' quantities for one build (module docstring)."""

    tokens: int  # T
    width: int  # D
    heads: int  # h
    mlp: int  # F
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

    @property
    def head_width(self) -> int:
        return self.width // self.heads

    def attention(self, toolkit: str, target: str, dtype: str) -> int | None:
        return attention_scratch(toolkit, target, dtype, self.tokens)


def _t(f: Callable[[Sizes], int]) -> Callable[[Sizes, int | None], int]:
    return lambda s, _attention: f(s)


#: The terms a row's size is a sum of (coefficient x term), in bytes. `attention` is the exSDPAttention
#: scratch (`attention_scratch`).
TERMS: dict[str, Callable[[Sizes, int | None], int]] = {
    "TD": _t(lambda s: s.tokens * s.width * s.e),  # (1, T, D) as stored
    "aTD": _t(lambda s: s.a_t * s.width * s.e),  # T as channels, rounded to C2
    "oddTD": _t(lambda s: s.odd * s.a_t * s.width * s.e),  # the same, only when T is not a multiple of C2
    "uD": _t(lambda s: s.u * s.width * s.e),  # (1, D, 1, T), plane padded to 4
    "uDC2": _t(lambda s: s.u * align(s.width, s.c2) * s.e),  # the same, channels rounded to C2
    "uDc": _t(lambda s: s.u * align(s.width, s.conv) * s.e),  # a conv output
    "x": _t(lambda s: s.u * s.c2 * s.e * int(s.head_width % s.conv != 0)),  # one block more: hd % c != 0
    "uFC2": _t(lambda s: s.u * align(s.mlp, s.c2) * s.e),  # (1, F, 1, T)
    "uFc": _t(lambda s: s.u * align(s.mlp, s.conv) * s.e),
    "TD64": _t(lambda s: align(s.tokens * s.width * s.e, 64)),  # (1, T, D) in a 64-byte aligned buffer
    # one buffer for (1, T, 1, D) with T as channels and (1, D, 1, T) as a conv input: the larger
    "max_aTD_uDc": _t(lambda s: max(s.a_t * s.width, s.u * align(s.width, s.conv)) * s.e),
    "uFC2_T4": _t(lambda s: s.u * align(s.mlp, s.c2) * s.e * int(s.tokens % 4 == 0)),  # only when 4 | T
    "u": _t(lambda s: s.u),
    "1": _t(lambda s: 1),
    "attention": lambda s, attention: attention or 0,
}


def block_sizes(target: str, dtype: str, tokens: int, width: int, heads: int, mlp: int) -> Sizes:
    e = 1 if dtype == "int8" else 2
    return Sizes(tokens, width, heads, mlp, e, CHANNEL_BLOCKS[target][dtype], CONV_BYTES[target] // e)


_PLACEHOLDER = re.compile(r"<([a-zA-Z0-9_.]+)>")


def _version(toolkit: str | None) -> str | None:
    """ "2.3.2" for any spelling of that version; no toolkit named means the newest, 2.5.0."""
    key = version_key(toolkit) if toolkit else (2, 5, 0)
    return ".".join(str(k) for k in key) if key else None


def predict_table(
    graph: RefGraph, target: str, dtype: str, toolkit: str | None
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]] | None:
    """(feature rows, layer rows, writers) as the compiler would print them, or None when the block, the
    target, the dtype or the toolkit is outside what the tables cover (module docstring)."""
    version = _version(toolkit)
    template = TEMPLATES.get((version, target, dtype)) if version is not None else None
    if template is None or target not in CONV_BYTES:
        return None
    block = match_block(graph)
    if block is None or not in_domain(str(version), target, block.tokens, block.width, block.heads):
        return None
    s = block_sizes(target, dtype, block.tokens, block.width, block.heads, block.mlp)
    attention = s.attention(str(version), target, dtype)
    if attention is None:
        return None
    names = block.names()
    dims = {"T": s.tokens, "D": s.width, "h": s.heads, "hd": s.head_width, "F": s.mlp}

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(
            lambda m: str(dims[m.group(1)] if m.group(1) in dims else names[m.group(1)]), text
        )

    rows = [
        (op, user, fill(name), fill(shape), fmt, int(sum(c * TERMS[term](s, attention) for c, term in size)))
        for op, user, name, shape, fmt, size in template["rows"]
    ]
    frame = pd.DataFrame(
        rows, columns=["op_id", "user_op", "name", "orig_shape", "data_format", "size_bytes"]
    )
    frame["start_offset"] = None
    frame["line"] = None
    layers = pd.DataFrame(
        [(i, op, fill(full), fill(shape)) for i, op, full, shape in template["layers"]],
        columns=["layer_id", "op_type", "full_name", "output_shape"],
    )
    return frame, layers, _writers(frame, template)


def unlisted_rows(
    graph: RefGraph, rows: pd.DataFrame, target: str, dtype: str, toolkit: str | None
) -> pd.DataFrame:
    """The scratch rows the compiler holds but does not list (`UNLISTED_SCRATCH`), as table rows named
    `<row>_unlisted_exSecondary` (so that the replay's lifetimes treat them as the reader's scratch)."""
    rule = UNLISTED_SCRATCH.get((target, dtype))
    version = _version(toolkit)
    block = match_block(graph)
    if rule is None or version not in rule[0] or block is None:
        return rows.iloc[0:0]
    names = block.names()
    name = _PLACEHOLDER.sub(lambda m: names[m.group(1)], rule[1])
    hit = rows[rows["name"] == name].head(1).copy()
    hit["name"] = f"{name}_unlisted_exSecondary"
    hit["size_bytes"] = hit["size_bytes"] * rule[2]
    return hit


#: Which ONNX op's output a role's input is (the block's chains), for following a tensor back to its writer.
_INPUT_OF = {"q_tp": "q_reshape", "q_reshape": "q_add", "k_tp": "k_reshape", "k_reshape": "k_add",
             "kt_tp": "k_tp", "v_tp": "v_reshape", "v_reshape": "v_add"}  # fmt: skip


def _writers(rows: pd.DataFrame, template: Template) -> dict[str, int]:
    """Row name -> the op id that writes it, for the attention's inputs: the compiler lists the Q, K and V
    reshapes under ONNX names of their own, with equal shapes, so the replay's name and shape rules
    cannot tell them apart; the ONNX chain can (a row named after the Q transpose is written by the
    layer of the Q reshape)."""
    layer_of = {}
    for op_id, _t, full, _s in template["layers"]:
        m = _PLACEHOLDER.fullmatch(full.split(":", 1)[1])
        if m:
            layer_of[m.group(1)] = op_id
    out: dict[str, int] = {}
    for (_op, _u, name, _s, _f, _size), filled in zip(template["rows"], rows["name"], strict=True):
        m = _PLACEHOLDER.match(name)
        role = m.group(1).removesuffix(".out") if m else None
        if role not in _INPUT_OF:
            continue
        while role in _INPUT_OF and role not in layer_of:
            role = _INPUT_OF[role]
        if role in layer_of:
            out[str(filled)] = layer_of[role]
    return out


def table_note(graph: RefGraph, target: str, dtype: str, toolkit: str | None) -> str | None:
    """What the RKNN figure of a transformer block is: the compiler's table predicted, or why not (then
    the figure is the ONNX-tensor estimate, which the compiler's rewrite does not keep)."""
    block = match_block(graph)
    if block is None:
        types = {op.op_type for op in graph.ops}
        if "Softmax" in types and "MatMul" in types:
            return (
                "RKNN: the graph has attention (MatMul, Softmax) but not in the one form whose compiler "
                "tables are learned (a single pre-norm block: LayerNormalization, Q/K/V MatMul + Add + "
                "Reshape + Transpose, MatMul-Mul-Softmax-MatMul, an Erf GELU MLP, residual Adds); the "
                "compiler rewrites attention into ops with buffers of their own, so this RKNN total is the "
                "ONNX-tensor estimate, not the compiler's"
            )
        return None
    version = _version(toolkit) or str(toolkit)
    template = TEMPLATES.get((version, target, dtype))
    shape = f"T {block.tokens}, D {block.width}, {block.heads} heads"
    if template is not None and predict_table(graph, target, dtype, toolkit) is not None:
        return (
            f"RKNN: transformer block ({shape}): the compiler's feature table is predicted row by row "
            f"({len(template['rows'])} rows, learned from {template['builds']} development builds of "
            f"{version} {target} {dtype}) and placed with the replay's lifetimes (docs/reference.md)"
        )
    if template is None:
        why = f"no table is learned for {version} {target} {dtype}"
        if target in ("rk3566", "rk3568"):
            why += " (its attention runs as exMatMul kernels whose scratch no rule covers yet)"
    elif block.width % block.heads or (block.width // block.heads) % 16:
        why = f"head width {block.width / block.heads:g} is not a multiple of 16 (another row list)"
    elif not T_RANGE[0] <= block.tokens <= T_RANGE[1]:
        why = f"T {block.tokens} is outside {T_RANGE[0]}-{T_RANGE[1]}, the attention scratch's measured range"
    else:
        why = f"on {target} with {version} the compiler lists other rows for this T and D"
    return (
        f"RKNN: transformer block ({shape}) not predicted: {why}; the compiler rewrites it into ops with "
        "buffers of their own, so this RKNN total is the ONNX-tensor estimate, not the compiler's"
    )
