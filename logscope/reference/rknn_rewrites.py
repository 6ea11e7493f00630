"""How RKNN's compiler rewrites a recurrent layer (ONNX LSTM / GRU) and the MatMul head after it, and
which feature buffers the rewritten ops allocate: rules read off the compiler corpus.

The CNN emulation (`logscope.reference.rknn`) sizes the ONNX graph's own tensors. A recurrent layer
does not run as itself: the compiler replaces it by one `exLSTM` / `exGRU` op with scratch buffers of
its own (`<out>_compute_zone`, `<in>_exSecondary1/2`), converts a hybrid GRU's fp16 result to int8
(`exDataConvert`), and turns `Squeeze` + `MatMul` into `Transpose` + `Conv` + `Reshape`, the
Transpose with an `exSecondary` buffer twice its input's size. None of these buffers is an ONNX
tensor, so this module lists them from the op and shape rules below and the planner places them.

Notation: a layer over S steps (batch 1) of F features with hidden size H and G gates (LSTM 4, GRU 3),
a head MatMul to K outputs; e = element bytes of the build dtype, C2 its channel block
(`logscope.targets.CHANNEL_BLOCKS`). A GRU in an int8 build on a target that computes fp16 runs in
fp16 ("hybrid": `Meet hybrid type, dtype: float16` in the log): its compute element ec = 2 and
channel block c2c = the fp16 block; otherwise ec = e and c2c = C2.

Target classes: "wide" targets have a 16-channel int8 block and an fp16 block (rk3588, rk3576,
rv1126b, rk3562) or 16-channel int8 only (rv1106, rv1103); "narrow" ones an 8-channel int8 block and
a 4-channel fp16 block (rk3566, rk3568); "lite" ones an 8-channel int8 block only (rv1106b,
rv1103b). rk2118 (fp16 only, 4-channel) is a class of its own: its LSTM gets the zone kernel, its GRU
the plain one before toolkit 2.5.0 and the zone from 2.5.0, and in 2.5.0 its GRU output takes two
channel blocks and its Transpose writes S x H x 5 x e (docs/reference.md, the `rk2118` row). Its head
splits the MatMul into 8-channel conv branches and a Concat (K 10, 12, 20) or adds a Transpose (2.5.0,
K 3 and 24); those buffers are not listed (they never set the peak in the corpus).

The rules (`RULES`; evidence in docs/reference.md) were read off the corpus models `lstm` (S 16, F 32,
H 64) and `gru` (S 16, F 32, H 48) and development builds at other S, F, H, and are measured on
held-out models whose logs were not read (fixtures/rknn-compiler/heldout-recurrent/).
"""

from __future__ import annotations

from dataclasses import dataclass

from logscope.reference.graph import RefGraph
from logscope.targets import CHANNEL_BLOCKS

RNN_GATES = {"LSTM": 4, "GRU": 3}
#: Targets whose fp16 builds the compiler refuses (every fp16 build of them in the corpus fails): an int8
#: GRU on them cannot run hybrid (its input stays INT8 in the log) and gets the plain kernel.
FP16_REFUSED = frozenset({"rv1106", "rv1103", "rv1106b", "rv1103b"})
UNLISTED = 64  # bytes an absent exSecondary still occupies (the smallest aligned block)

#: The rule behind each buffer (its `rule` and the RknnTensor's `quirk`); docs/reference.md gives the
#: evidence for each, and a test checks every key is documented there.
RULES: dict[str, str] = {
    "input": "the graph input, S x F x ec (before 2.5.0, zone kernel, not hybrid: F padded to c2c)",
    "compute_zone": "(1,1,Z,H), Z = 2 G (align(S, 4) + 3): Z x align(H, 32) x 2 bytes (toolkit >= 2.3.2)",
    "exSecondary1": "the input padded to c2c when F is not a multiple of it; else 64 unlisted bytes",
    "exSecondary2": "the hidden rows padded to c2c (2.5.0 wide, or H not a multiple of c2c); else 64 B",
    "split": "rk3576 GRU before 2.5.0: copies of the input and hidden rows, then 64 unlisted bytes",
    "plain": "no compute zone or exSecondary; an LSTM still holds 3 (2.3.0: 2) x 64 unlisted bytes",
    "output": "the recurrent output, S x H x C2 x ec (NC1HWC2, one channel) or plain S x align(H, c2c) x ec",
    "dataconvert": "a hybrid GRU's output converted to int8",
    "transpose": "2.5.0: Squeeze as Transpose with an exSecondary twice its output (not narrow)",
    "reshape": "before 2.5.0: Squeeze as a Reshape, in place when H is a multiple of C2",
    "conv": "the MatMul as a 1x1 conv: S x align(K, conv block) x e",
    "head_reshape": "the final Reshape's exSecondary when K is not a multiple of C2 (not rk3588, not narrow)",
    "graph_output": "NC1HWC2 S x align(K, 4) x C2 x e, or plain S x K x e rounded to 64",
    "rk2118": "rk2118 2.5.0: the Transpose writes S x H x 5 x e (64-aligned), its exSecondary S x H x 2C2 e",
}


@dataclass(frozen=True)
class RecurrentHead:
    """The pattern the rules cover: input (S, 1, F) -> LSTM/GRU -> Squeeze(axis 1) -> MatMul(H, K)."""

    kind: str
    gates: int
    seq_len: int  # S
    features: int  # F
    hidden: int  # H
    outputs: int  # K
    input_name: str
    rnn_name: str
    output_name: str


@dataclass(frozen=True)
class Buffer:
    """One feature buffer of the rewritten graph, live from step `first` to step `last` (inclusive)."""

    name: str
    size: int
    first: int
    last: int
    rule: str  # key of RULES
    listed: bool = True  # printed in the log's feature table (an absent exSecondary's 64 B are not)
    shares: str | None = None  # another buffer whose memory this one is (an in-place Reshape's output)


@dataclass(frozen=True)
class LoweredStep:
    """One op of the rewritten graph, as the log's layer table names it, and the ONNX ops it runs."""

    name: str
    op_type: str
    graph_ops: tuple[int, ...]


@dataclass(frozen=True)
class Lowered:
    steps: tuple[LoweredStep, ...]
    buffers: tuple[Buffer, ...]  # first/last index into steps


def align(value: int, block: int) -> int:
    return -(-value // block) * block


def match_recurrent(graph: RefGraph) -> RecurrentHead | None:
    """The recurrent pattern, if the graph is exactly that (one forward layer, batch 1, one MatMul head)."""
    ops = graph.ops
    if len(ops) != 3 or ops[0].op_type not in RNN_GATES:
        return None
    rnn, squeeze, matmul = ops
    if squeeze.op_type != "Squeeze" or matmul.op_type != "MatMul" or len(graph.inputs) != 1:
        return None
    (input_name,) = graph.inputs
    shape = graph.tensors[input_name].shape
    if rnn.inputs[:1] != (input_name,) or shape is None or len(shape) != 3 or shape[1] != 1:
        return None
    if rnn.attrs.get("direction", b"forward") not in (b"forward", "forward"):
        return None
    hidden = rnn.attrs.get("hidden_size")
    weight = graph.tensors[matmul.inputs[1]].shape if len(matmul.inputs) > 1 else None
    if not isinstance(hidden, int) or weight is None or len(weight) != 2 or weight[0] != hidden:
        return None
    if squeeze.inputs[:1] != rnn.outputs[:1] or matmul.inputs[0] != squeeze.outputs[0]:
        return None
    if graph.outputs != (matmul.outputs[0],):
        return None
    return RecurrentHead(
        rnn.op_type,
        RNN_GATES[rnn.op_type],
        shape[0],
        shape[2],
        hidden,
        weight[1],
        input_name,
        rnn.name,
        matmul.outputs[0],
    )


def unmodelled_note(graph: RefGraph) -> str | None:
    """A note for a graph with a recurrent op outside the modelled pattern: its RKNN total is sized from
    the ONNX tensors, which the compiler's rewrite does not keep."""
    kinds = sorted({op.op_type for op in graph.ops if op.op_type in RNN_GATES})
    if not kinds or match_recurrent(graph) is not None:
        return None
    return (
        f"RKNN: {'/'.join(kinds)} outside the modelled pattern (one forward layer over a (S,1,F) input, then "
        "Squeeze and one MatMul): the compiler rewrites it into ops with buffers of their own, which the "
        "emulation does not list, so its RKNN total is not a prediction of the compiler's"
    )


def target_class(target: str) -> str | None:
    blocks = CHANNEL_BLOCKS.get(target, {})
    if blocks.get("int8") == 16:
        return "wide"
    if blocks.get("int8") == 8:
        return "narrow" if "fp16" in blocks else "lite"
    return None


def rnn_kernel(head: RecurrentHead, target: str, version: tuple[int, ...]) -> str:
    """Which lowering the recurrent op gets: "zone" (a compute zone and two exSecondary buffers), "plain"
    (none: lite targets, and a GRU on a target without fp16, which cannot run it hybrid) or "split" (a
    GRU on rk3576 before toolkit 2.5.0: exSecondary0/1 copies of the input and hidden rows)."""
    if target == "rk2118":  # before 2.5.0 the GRU gets no zone (module docstring)
        return "plain" if head.kind == "GRU" and version < (2, 5, 0) else "zone"
    if target_class(target) == "lite" or (head.kind == "GRU" and target in FP16_REFUSED):
        return "plain"
    if head.kind == "GRU" and target == "rk3576" and version < (2, 5, 0):
        return "split"
    return "zone"


def lower_recurrent(
    head: RecurrentHead, target: str, dtype: str, version: tuple[int, ...], conv_bytes: int
) -> Lowered | None:
    """The feature buffers of the rewritten recurrent graph in execution order (module docstring and
    RULES), or None for a target the rules do not cover (no int8 or fp16 class)."""
    cls = target_class(target)
    if target == "rk2118":
        cls = "rk2118"
    if cls is None:
        return None
    blocks = CHANNEL_BLOCKS[target]
    e = 1 if dtype == "int8" else 2
    c2 = blocks["int8" if dtype == "int8" else "fp16"]
    hybrid = head.kind == "GRU" and dtype == "int8" and target not in FP16_REFUSED
    ec = 2 if hybrid else e
    c2c = blocks["fp16"] if hybrid else c2
    v25 = version >= (2, 5, 0)
    reserves = version >= (2, 3, 0)  # 2.2.0 leaves no unlisted blocks (the output follows the input)
    s, f, h, k = head.seq_len, head.features, head.hidden, head.outputs
    kernel = rnn_kernel(head, target, version)
    out: list[Buffer] = []
    steps = [
        LoweredStep(head.input_name, "InputOperator", ()),
        LoweredStep(head.rnn_name, f"ex{head.kind}", (0,)),
    ]

    def scratch(name: str, size: int, rule: str, listed: bool = True) -> None:
        out.append(Buffer(name, size, 1, 1, rule, listed))

    # step 1: the recurrent op and its scratch buffers
    size_in = s * f * ec
    if not v25 and not hybrid and kernel == "zone":
        size_in = s * align(f, c2c) * ec
    out.append(Buffer(head.input_name, size_in, 0, 1, "input"))
    if kernel == "zone":
        if version >= (2, 3, 2):
            zone = 2 * head.gates * (align(s, 4) + 3)
            scratch(f"{head.rnn_name}_o0_compute_zone", zone * align(h, 32) * 2, "compute_zone")
        if not reserves:  # 2.2.0: no exSecondary, listed or not
            pass
        elif f % c2c:
            scratch(f"{head.input_name}_exSecondary1", s * align(f, c2c) * ec, "exSecondary1")
        else:
            scratch(f"{head.input_name}_exSecondary1", UNLISTED, "exSecondary1", listed=False)
        if not reserves:
            pass
        elif (v25 and cls in ("wide", "rk2118")) or h % c2c:
            scratch(f"{head.input_name}_exSecondary2", s * align(h, c2c) * ec, "exSecondary2")
        else:
            scratch(f"{head.input_name}_exSecondary2", UNLISTED, "exSecondary2", listed=False)
    elif kernel == "split" and version >= (2, 3, 2):
        scratch(f"{head.input_name}_exSecondary0", s * f * ec, "split")
        scratch(f"{head.input_name}_exSecondary1", s * h * ec, "split")
        scratch(f"{head.input_name}_exSecondary2", UNLISTED, "split", listed=False)
    elif kernel == "split" and reserves:
        scratch(f"{head.input_name}_exSecondary0", s * h, "split")
        scratch(f"{head.input_name}_exSecondary1", UNLISTED, "split", listed=False)
    elif kernel == "plain" and head.kind == "LSTM" and reserves:
        for i in range(3 if version >= (2, 3, 2) else 2):
            scratch(f"{head.rnn_name}_state{i}", UNLISTED, "plain", listed=False)
    nc1hwc2 = (
        (v25 and cls in ("wide", "lite", "rk2118")) or kernel == "plain" or (kernel == "split" and not hybrid)
    )
    y_size = s * h * c2 * ec if nc1hwc2 else s * align(h, c2c) * ec
    if v25 and cls == "rk2118" and head.kind == "GRU":  # two channel blocks (gru_s10: 10 x 56 x 8 x 2 B)
        y_size *= 2
    step = 2
    y = Buffer(f"{head.rnn_name}_o0", y_size, 1, step, "output")
    if hybrid:  # exDataConvert to int8, then the head reads the int8 copy
        out.append(y)
        y = Buffer(
            f"{head.rnn_name}_o0__int8", s * h * c2 if nc1hwc2 else s * h, step, step + 1, "dataconvert"
        )
        steps.append(LoweredStep(f"{head.rnn_name}_o0__cvt", "exDataConvert", (0,)))
        step += 1

    # the head: Transpose (2.5.0) or an in-place Reshape (before), then the MatMul as a conv
    if v25:
        out.append(y)
        if cls == "narrow":
            t_size = s * align(h, c2) * e
        elif cls == "rk2118":  # an exSecondary of S x H x 2 C2 x e; the output S x H x 5 x e, 64-aligned
            out.append(Buffer(f"{y.name}_exSecondary", s * align(h, c2) * 2 * c2 * e, step, step, "rk2118"))
            t_size = align(s * align(h, c2) * 5 * e, 64)
        else:
            t_size = s * align(h, c2) * c2 * e
            out.append(Buffer(f"{y.name}_exSecondary", 2 * t_size, step, step, "transpose"))
        rule = "rk2118" if cls == "rk2118" else "transpose"
        out.append(Buffer(f"{head.rnn_name}_tp", t_size, step, step + 1, rule))
    elif cls == "lite":  # a separate conv input, S x align(H, C2) x e rounded up to 64 B
        out.append(y)
        out.append(Buffer(f"{head.rnn_name}_sw", align(s * align(h, c2) * e, 64), step, step + 1, "reshape"))
    elif h % c2 == 0:  # the conv input is Y itself, reshaped in place
        if target == "rk3588":  # an exSecondary of Y's size rounded up to 64 B (1,120 -> 1,152)
            out.append(Buffer(f"{y.name}_exSecondary", align(y.size, 64), step, step, "reshape"))
        out.append(Buffer(y.name, y.size, y.first, step + 1, y.rule))
    else:  # H not a multiple of C2: a separate conv input padded to the conv block (not on rk3588:
        # first an exSecondary padded to C2)
        out.append(y)
        if target != "rk3588":
            out.append(Buffer(f"{y.name}_exSecondary", s * align(h, c2) * e, step, step, "reshape"))
        padded = s * align(h, max(conv_bytes // e, c2)) * e
        out.append(Buffer(f"{head.rnn_name}_sw", padded, step, step + 1, "reshape"))
    steps.append(LoweredStep(f"{head.rnn_name}_head", "Transpose" if v25 else "Reshape", (1,)))
    step += 1
    steps.append(LoweredStep(head.output_name, "Conv", (2,)))
    conv = s * align(k, max(conv_bytes // e, c2)) * e
    out.append(Buffer(f"{head.output_name}_mm", conv, step, step + 1, "conv"))
    step += 1
    steps.append(LoweredStep(f"{head.output_name}_rs", "Reshape", (2,)))
    # The graph output (S,1,K): NC1HWC2 of (S,1,1,K), its plane padded to 4, or plain. Where K is not a
    # multiple of C2 the final Reshape on wide and lite targets but rk3588 first copies the conv output
    # and the plain rows into an exSecondary.
    nc1hwc2_out = cls == "narrow" or (k % c2 == 0 if target == "rk3588" else k % c2 != 0)
    if target != "rk3588" and cls != "narrow" and k % c2:
        staged = align(s * align(k, c2) * e + s * k * e, 16)
        out.append(Buffer(f"{head.output_name}_mm_exSecondary", staged, step, step, "head_reshape"))
    final = s * align(k, 4) * c2 * e if nc1hwc2_out else align(s * k * e, 64)
    out.append(Buffer(head.output_name, final, step, step + 1, "graph_output"))
    steps.append(LoweredStep(head.output_name, "OutputOperator", (2,)))
    return Lowered(tuple(steps), tuple(out))
