"""RKNN weight memory: the const tensors the compiler stores for an ONNX model, laid out per target.

`Total Weight Memory Size` in an RKNN build log is the end of the last row of the log's Const Tensor
Information Table, every row starting on a 64-byte boundary, plus a fixed block on some targets. On
every one of the 724 finished builds of the compiler corpus (fixtures/rknn-compiler/, toolkit 2.2.0 to
2.5.0) the table's span rounded up to 64 equals the sum of its rows' sizes each rounded up to 64, so the
total is predicted row by row: which const tensors the compiler stores (the model's kernels and biases,
and the ones its rewrites add) and the padded size of each.

Every rule below was read off the `Size` column against `OrigShape` of those tables, per target and
dtype; docs/reference.md ("Weight memory") lists the evidence for each and the measured accuracy.
Sizes do not depend on the toolkit version; which rows exist does (the rewrites).

- A kernel (Conv, Gemm run as a 1 x 1 Conv, ConvTranspose) of Cout x Cin x kh x kw is stored as
  R_out(Cout) x R_in(Cin) x kh x kw elements; a conv reading the graph input rounds its Cin with its own
  rule (the input is stored NHWC and padded once).
- A depthwise kernel (printed (1, C, kh, kw)) is stored as R_dw(C) x kh x kw elements, times
  `dw_factor` (2 on targets that store int8 depthwise weights in 16 bits).
- A bias is R_bias(C) x `bias_bytes` (int8: int32 plus the requantisation constants; fp16: fp32); a
  depthwise conv's bias has its own rounding and bytes. In int8 every conv gets a bias row (named
  `<kernel>_bias_0` where the model has none); in fp16 only a conv with a bias has one.
- GlobalAveragePool becomes depthwise convs of at most 7 x 7 (`<op>_2conv<i>_i1` / `_i2`, 14 x 14 ->
  7 x 7 then 2 x 2); before 2.3.2 a nearest Resize by s becomes a depthwise deconvolution of 2s x 2s
  (`<op>_2deconv_i1`); from 2.5.0 Concat(Resize r, x) -> Conv splits the kernel by input channels
  (`<r>_conv_i1`, `<x>_conv_i1`); a depthwise conv on the graph input gets a 1 x 1 `Pre_weightinput`.
- Small constants: int64 shapes of Reshape / Split (8 B an element), the Resize scales and its
  `empty_placeholder_0` (fp32, rounded to `float_const_bytes`), one int64 shape row per rank-3 graph
  input (4 elements) and output (3), and per rank-3 Concat (4).
- Transformer blocks: LayerNormalization's scale (FLOAT16) and bias (FLOAT) as (1, D, 1, 1); a MatMul by
  a constant as a 1 x 1 conv whose bias is the Add after it; scalar constants folded, but the attention
  scale's row on some targets.
- LSTM and GRU (from 2.3.2): the gate kernels and biases on the NPU (GRU in fp16), or fp32 copies for
  the CPU at a per-target multiple of their size; an LSTM's projection rows and the block it adds.
- Any other op reading a constant is not modelled: the plan lists it in `skipped` and predicts no total.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from logscope.reference.graph import Op, RefGraph
from logscope.reference.rknn_profiles import version_key

#: Every const row starts on this boundary (all corpus tables: row starts are multiples of 64).
CONST_ALIGN = 64
#: From this toolkit a nearest Resize stays a Resize (2.3.2 and 2.5.0 logs: `c27` scales row and
#: `empty_placeholder_0`); 2.2.0 and 2.3.0 turn it into a depthwise deconvolution (`Resize28_2deconv_i1`).
RESIZE_KEPT_SINCE = (2, 3, 2)
#: From this toolkit Concat(Resize, x) -> Conv is split (`fuse_concat_conv`, rknn.CONCAT_CONV_SINCE).
CONCAT_SPLIT_SINCE = (2, 5, 0)
#: The largest kernel side a GlobalAveragePool becomes (mobilenet_v2 14 x 14: (1,320,7,7) + (1,320,2,2)).
GAP_KERNEL = 7


#: Ops whose consts are modelled; Clip's bounds fold into the conv (no row in any corpus table). Any
#: other op reading a constant (LSTM/GRU gates, LayerNormalization, MatMul, Add/Mul by a constant)
#: makes the prediction incomplete (`WeightPlan.skipped`).
_MODELLED = frozenset(
    {
        "Conv",
        "Gemm",
        "ConvTranspose",
        "GlobalAveragePool",
        "Resize",
        "Reshape",
        "Split",
        "Clip",
        "LayerNormalization",
        "MatMul",
        "LSTM",
        "GRU",
        "Squeeze",
    }
)
#: Elementwise ops whose scalar constant the compiler folds into the op before or after (GELU's
#: Div by sqrt 2, Add 1, Mul 0.5 inside `ConvExGelu`; attention's scale, see `scalar_row`).
_SCALAR_FOLDED = frozenset({"Add", "Sub", "Mul", "Div"})
#: From this toolkit a MatMul with a constant operand and no bias gets an int8 `<kernel>_bias_0`
#: (transformer `w34_bias_0` in 2.3.2 and 2.5.0, absent in 2.2.0 and 2.3.0).
MATMUL_BIAS_SINCE = (2, 3, 2)
#: Before this toolkit a rank-3 graph input is reshaped twice (transformer `input_rs_i1` and
#: `input_rs#1_i1` in 2.2.0 and 2.3.0; only `input_rs#1_i1` from 2.3.2).
INPUT_RESHAPE_ONCE_SINCE = (2, 3, 2)


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass(frozen=True)
class ChannelRound:
    """How a channel count is rounded: at least `minimum`; powers of two up to `pow2_up_to`; then a
    multiple of `align`; with `tail24`, a count 24 above a multiple of 32 takes the whole 32 (rk3566,
    rk3588 fp16: Cin 24 -> 32 and 120 -> 128 while 40, 72, 200 stay)."""

    align: int = 1
    minimum: int = 1
    pow2_up_to: int = 0
    tail24: bool = False

    def __call__(self, channels: int) -> int:
        c = max(channels, self.minimum)
        if c <= self.pow2_up_to:
            return 1 << (c - 1).bit_length()
        c = align_up(c, self.align)
        if self.tail24 and c % 32 == 24:
            c += 8
        return c

    def text(self) -> str:
        parts = [f"multiple of {self.align}"] if self.align > 1 else ["as is"]
        if self.minimum > 1:
            parts.append(f"at least {self.minimum}")
        if self.pow2_up_to:
            parts.append(f"a power of two up to {self.pow2_up_to}")
        if self.tail24:
            parts.append("a 24 tail in a 32 block -> 32")
        return ", ".join(parts)


_AS_IS = ChannelRound()


@dataclass(frozen=True)
class WeightLayout:
    """One target's const layout for one dtype (module docstring); `evidence` names the corpus rows."""

    cout: ChannelRound
    cin: ChannelRound
    cin_input: ChannelRound
    dw: ChannelRound
    dw_factor: int
    bias: ChannelRound
    bias_bytes: int
    dw_bias: ChannelRound
    dw_bias_bytes: int
    float_const_bytes: int
    #: Bytes the printed total holds beyond the table (None: not known for this target).
    fixed_block: int | None
    evidence: str
    #: From this toolkit version the Resize scales row takes these bytes instead (rv1106 2.5.0: 64).
    scales_bytes_since: tuple[tuple[int, ...], int] | None = None
    #: From this toolkit version depthwise kernels take this factor instead (rk2118 2.5.0: 1, 2.3.2: 2).
    dw_factor_since: tuple[tuple[int, ...], int] | None = None
    #: Cin rounding of the input conv when the input's width is a multiple of the first value (rk3576
    #: int8: 3 -> 8 at widths 64, 128, 160, 224, 320, 640; 3 -> 4 at 13, 56, 75).
    cin_input_wide: tuple[int, ChannelRound] | None = None
    #: Bytes an element of LayerNormalization's scale takes (fp16 on most targets; transformer w1 (1,64,1,1)
    #: 128 B on rk3588, 256 B on rv1106, rv1106b and rk2118); its bias is fp32 everywhere.
    ln_scale_bytes: int = 2
    #: Rounding of an LSTM/GRU gate's H channels on the NPU (lstm_s12_f20_h40_k6 `w2` (48,40,1,1) on
    #: rk3562 int8: 4 gates x 48 x 48 B; GRU runs in fp16 and takes the fp16 layout's).
    gate: ChannelRound = ChannelRound()
    #: Bytes the printed total holds beyond the table and the block for a model with an LSTM, on the
    #: NPU (lstm, lstm_s12_f20_h40_k6, lstm_s32_f16_h128_k24, every toolkit: rk3562 384, rk3566/rk3568
    #: 320, rk3588 512 on top of its 2,048; none on rv1103/rv1106/rv1103b/rv1106b/rk2118).
    lstm_block: int = 0
    #: LayerNormalization's channel rounding (rk3588 int8: tf_t100_d48_h3 `w2` (1,48,1,1) 256 B = 64 x 4).
    ln_channels: ChannelRound = ChannelRound()
    #: Whether the scalar a MatMul of two activations is multiplied by gets a row of its own (transformer
    #: `c27` (1,1,1,1) on rk3566, rk3568, rv1103b, rv1106b, rk2118; folded on the others).
    scalar_row: bool = False


_R16 = ChannelRound(16)
_R8T = ChannelRound(8, minimum=8, tail24=True)
_RK3588_INT8 = WeightLayout(
    cout=ChannelRound(2),
    cin=_R16,
    cin_input=_R16,
    dw=ChannelRound(16, minimum=16, pow2_up_to=64),
    dw_factor=1,
    bias=ChannelRound(32),
    bias_bytes=8,
    dw_bias=ChannelRound(64),
    dw_bias_bytes=8,
    float_const_bytes=256,
    fixed_block=2048,
    ln_channels=ChannelRound(32),
    gate=ChannelRound(32),
    lstm_block=512,
    evidence="mobilenet_v1 w164 (1001,1024,1,1) 1,026,048 B = 1002 x 1024; dw_odd w21 (72,40,1,1) 3,456 = "
    "72 x 48; w1 (1,3,3,3) 144 = 16 x 9, w17 (1,40,3,3) 576 = 64 x 9, w25 (1,72,3,3) 720 = 80 x 9; "
    "w2 (32) 256 = 32 x 8; dw bias w8 (32) 512 = 64 x 8; total = table + 2,048 on every rk3588 build",
)
_RK3588_FP16 = WeightLayout(
    cout=_AS_IS,
    cin=_R8T,
    cin_input=ChannelRound(8, minimum=8),
    dw=_R8T,
    dw_factor=1,
    bias=ChannelRound(8),
    bias_bytes=4,
    dw_bias=ChannelRound(32),
    dw_bias_bytes=4,
    float_const_bytes=128,
    fixed_block=2048,
    gate=ChannelRound(16),
    lstm_block=512,
    evidence="unet_128 w1 (16,3,3,3) 2,304 B = 16 x 8 x 9 x 2; dw_odd w37 (200,120,1,1) 51,200 = 200 x 128 "
    "x 2, w21 (72,40,1,1) 5,760 = 72 x 40 x 2; w33 (1,120,5,5) 6,400 = 128 x 25 x 2; dw bias (3) 128",
)
_RK3562_INT8 = WeightLayout(
    cout=ChannelRound(2),
    cin=_R16,
    cin_input=ChannelRound(4),
    dw=ChannelRound(32),
    dw_factor=2,
    bias=ChannelRound(16),
    bias_bytes=8,
    dw_bias=ChannelRound(32),
    dw_bias_bytes=6,
    float_const_bytes=128,
    fixed_block=0,
    gate=ChannelRound(16),
    lstm_block=384,
    evidence="chain_75 w1 (16,3,3,3) 576 B = 16 x 4 x 9; dw_odd w5 (24,3,1,1) 384 = 24 x 16, w21 (72,40,1,1) "
    "3,456 = 72 x 48; w25 (1,72,3,3) 1,728 = 96 x 9 x 2; w2 (3) 192 = 32 x 6; w14 (40) 384 = 48 x 8",
)
_RK3562_FP16 = WeightLayout(
    cout=_AS_IS,
    cin=_R8T,
    cin_input=ChannelRound(4),
    dw=ChannelRound(16),
    dw_factor=1,
    bias=ChannelRound(8),
    bias_bytes=4,
    dw_bias=_AS_IS,
    dw_bias_bytes=4,
    float_const_bytes=64,
    fixed_block=0,
    lstm_block=384,
    evidence="chain_75 w1 (16,3,3,3) 1,152 B = 16 x 4 x 9 x 2; dw_odd w37 (200,120,1,1) 51,200 = 200 x 128 x "
    "2; GlobalAveragePool45_2conv0_i1 (1,200,5,5) 10,400 = 208 x 25 x 2",
)
_RK3566_INT8 = WeightLayout(
    cout=_AS_IS,
    cin=_R8T,
    cin_input=ChannelRound(8),
    dw=_R8T,
    dw_factor=1,
    bias=ChannelRound(16),
    bias_bytes=8,
    dw_bias=ChannelRound(32),
    dw_bias_bytes=8,
    float_const_bytes=128,
    fixed_block=0,
    scalar_row=True,
    gate=ChannelRound(16),
    lstm_block=320,
    evidence="dw_odd w5 (24,3,1,1) 192 B = 24 x 8, w13 (40,24,1,1) 1,280 = 40 x 32, w21 (72,40,1,1) 2,880 "
    "(as is), w37 (200,120,1,1) 25,600 = 200 x 128; w33 (1,120,5,5) 3,200 = 128 x 25; w2 (3) 256 = 32 x 8",
)
_RK3566_FP16 = WeightLayout(
    cout=_AS_IS,
    cin=ChannelRound(2),
    cin_input=ChannelRound(4),
    dw=ChannelRound(2),
    dw_factor=1,
    bias=ChannelRound(8),
    bias_bytes=4,
    dw_bias=_AS_IS,
    dw_bias_bytes=4,
    float_const_bytes=64,
    fixed_block=0,
    scalar_row=True,
    lstm_block=320,
    evidence="fpn_lite (48,108,1,1) 10,752 B = 48 x 112 x 2; dw (1,108,3,3) 2,016 = 112 x 9 x 2",
)
_RK3576_INT8 = WeightLayout(
    cout=ChannelRound(2),
    cin=_R16,
    cin_input=ChannelRound(4),
    dw=ChannelRound(16),
    dw_factor=2,
    bias=ChannelRound(32),
    bias_bytes=8,
    dw_bias=ChannelRound(64),
    dw_bias_bytes=6,
    float_const_bytes=256,
    fixed_block=None,
    cin_input_wide=(32, ChannelRound(8)),
    gate=ChannelRound(32),
    evidence="chain_75 w1 (16,3,3,3) 576 B = 16 x 4 x 9; dw (1,3,3,3) 288 = 16 x 9 x 2; dw bias (3) 384 = "
    "64 x 6; the printed total holds 2.3-54.8 KiB more than the table, varying by model and version",
)
_RK3576_FP16 = WeightLayout(
    cout=_AS_IS,
    cin=_R8T,
    cin_input=ChannelRound(4),
    dw=ChannelRound(8),
    dw_factor=1,
    bias=ChannelRound(8),
    bias_bytes=4,
    dw_bias=ChannelRound(32),
    dw_bias_bytes=4,
    float_const_bytes=128,
    fixed_block=None,
    gate=ChannelRound(16),
    evidence="as rk3576 int8 for the block; dw (1,C,k,k) C rounded to 8; dw bias 32 channels x 4 B",
)
_RV1106_INT8 = WeightLayout(
    cout=_AS_IS,
    cin=_R16,
    cin_input=ChannelRound(4),
    dw=ChannelRound(16),
    dw_factor=2,
    bias=ChannelRound(16),
    bias_bytes=8,
    dw_bias=ChannelRound(32),
    dw_bias_bytes=6,
    float_const_bytes=128,
    fixed_block=0,
    scales_bytes_since=((2, 5, 0), 64),
    ln_scale_bytes=4,
    gate=ChannelRound(16),
    evidence="dw_odd w1 (1,3,3,3) 320 B = 16 x 9 x 2 (rounded to 64), w17 (1,40,3,3) 896 = 48 x 9 x 2; "
    "w46 (10,200,1,1) 2,112 = 10 x 208 (rounded to 64); w2 (3) 192 = 32 x 6",
)
_RV1106B_INT8 = WeightLayout(
    cout=_AS_IS,
    cin=ChannelRound(8),
    cin_input=ChannelRound(8),
    dw=ChannelRound(8),
    dw_factor=2,
    bias=ChannelRound(8),
    bias_bytes=7,
    dw_bias=ChannelRound(8),
    dw_bias_bytes=6,
    float_const_bytes=64,
    fixed_block=0,
    scalar_row=True,
    ln_scale_bytes=4,
    evidence="conv bias (64) 448 B = 64 x 7; dw (1,24,3,3) 432 (448 in the table) = 24 x 9 x 2",
)
_RK2118_FP16 = WeightLayout(
    cout=ChannelRound(2),
    cin=ChannelRound(2),
    cin_input=ChannelRound(2),
    dw=ChannelRound(2),
    dw_factor=2,
    bias=_AS_IS,
    bias_bytes=4,
    dw_bias=_AS_IS,
    dw_bias_bytes=4,
    float_const_bytes=64,
    fixed_block=0,
    dw_factor_since=((2, 5, 0), 1),
    scalar_row=True,
    ln_scale_bytes=4,
    evidence="2.3.2 dw (1,32,3,3) 1,152 B = 32 x 9 x 2 x 2, 2.5.0 576 = 32 x 9 x 2; conv kernels at their "
    "logical size",
)

LAYOUTS: dict[tuple[str, str], WeightLayout] = {
    ("rk3588", "int8"): _RK3588_INT8,
    ("rk3588", "fp16"): _RK3588_FP16,
    ("rk3562", "int8"): _RK3562_INT8,
    ("rk3562", "fp16"): _RK3562_FP16,
    ("rk3566", "int8"): _RK3566_INT8,
    ("rk3566", "fp16"): _RK3566_FP16,
    ("rk3568", "int8"): _RK3566_INT8,
    ("rk3568", "fp16"): _RK3566_FP16,
    ("rk3576", "int8"): _RK3576_INT8,
    ("rk3576", "fp16"): _RK3576_FP16,
    ("rv1126b", "int8"): _RK3576_INT8,
    ("rv1126b", "fp16"): _RK3576_FP16,
    ("rv1103", "int8"): _RV1106_INT8,
    ("rv1106", "int8"): _RV1106_INT8,
    ("rv1103b", "int8"): _RV1106B_INT8,
    ("rv1106b", "int8"): _RV1106B_INT8,
    ("rk2118", "fp16"): _RK2118_FP16,
}


@dataclass(frozen=True)
class ConstRow:
    """One const tensor the compiler stores: its table name, component, shape as the log prints it,
    element type, stored bytes, and the rule that sized it."""

    name: str
    #: kernel, depthwise kernel, bias, recurrent kernel / bias / constant, norm constant, added kernel /
    #: bias (rows the compiler's rewrites add), scalar, shape or resize constant (`iter_components`)
    component: str
    op: str
    shape: tuple[int, ...]
    dtype: str
    size_bytes: int
    rule: str


@dataclass(frozen=True)
class WeightPlan:
    """The predicted const table of one model on one target, dtype and toolkit."""

    target: str
    dtype: str
    rows: tuple[ConstRow, ...]
    table_bytes: int  # the rows, each rounded up to CONST_ALIGN
    fixed_block: int | None
    skipped: tuple[str, ...]  # ops whose consts are not modelled (named in the output)

    @property
    def total(self) -> int:
        """The predicted `Total Weight Memory Size` (the table alone where the block is unknown)."""
        return self.table_bytes + (self.fixed_block or 0)

    @property
    def complete(self) -> bool:
        """Whether `total` predicts the printed figure: every const modelled and the block known."""
        return self.fixed_block is not None and not self.skipped

    def by_component(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.component] = out.get(r.component, 0) + align_up(r.size_bytes, CONST_ALIGN)
        return out


def weight_layout(target: str, dtype: str) -> WeightLayout | None:
    """The learned layout of `target` for int8 or (any other dtype) fp16; None where none is known."""
    return LAYOUTS.get((target.lower(), "int8" if dtype == "int8" else "fp16"))


def _since(toolkit: str | None, since: tuple[int, ...]) -> bool:
    if toolkit is None:
        return True
    key = version_key(toolkit)
    return key is not None and key >= since


class _Rows:
    """The rows of one plan as they are appended, with the layout's per-version choices resolved."""

    def __init__(self, layout: WeightLayout, dtype: str, toolkit: str | None) -> None:
        self.layout = layout
        since = layout.scales_bytes_since
        self.scales_bytes = since[1] if since is not None and _since(toolkit, since[0]) else 0
        dw = layout.dw_factor_since
        self.dw_factor = dw[1] if dw is not None and _since(toolkit, dw[0]) else layout.dw_factor
        self.int8 = dtype == "int8"
        self.kernel_dtype = "INT8" if self.int8 else "FLOAT16"
        self.bias_dtype = "INT32" if self.int8 else "FLOAT"
        self.elt = 1 if self.int8 else 2
        self.rows: list[ConstRow] = []

    def conv(
        self,
        op: Op,
        name: str,
        cout: int,
        cin: int,
        kh: int,
        kw: int,
        *,
        reads_input: bool,
        component: str = "kernel",
        shape: tuple[int, ...] | None = None,
        input_width: int = 0,
    ) -> None:
        lay = self.layout
        rin = lay.cin_input if reads_input else lay.cin
        wide = lay.cin_input_wide
        if reads_input and wide is not None and input_width and input_width % wide[0] == 0:
            rin = wide[1]
        size = lay.cout(cout) * rin(cin) * kh * kw * self.elt
        rule = f"Cout {cout}->{lay.cout(cout)}, Cin {cin}->{rin(cin)}" + (
            " (reads the input)" if reads_input else ""
        )
        self.rows.append(
            ConstRow(name, component, op.name, shape or (cout, cin, kh, kw), self.kernel_dtype, size, rule)
        )

    def depthwise(
        self,
        op: Op,
        name: str,
        channels: int,
        kh: int,
        kw: int,
        *,
        shape: tuple[int, ...] | None = None,
        component: str = "depthwise kernel",
    ) -> None:
        lay = self.layout
        size = lay.dw(channels) * kh * kw * self.elt * self.dw_factor
        rule = f"C {channels}->{lay.dw(channels)}" + (f", x{self.dw_factor}" if self.dw_factor > 1 else "")
        self.rows.append(
            ConstRow(name, component, op.name, shape or (1, channels, kh, kw), self.kernel_dtype, size, rule)
        )

    def bias(
        self, op: Op, name: str, channels: int, *, depthwise: bool, component: str = "bias", per: int = 0
    ) -> None:
        lay = self.layout
        rnd, per = (lay.dw_bias, per or lay.dw_bias_bytes) if depthwise else (lay.bias, per or lay.bias_bytes)
        size = rnd(channels) * per
        rule = f"C {channels}->{rnd(channels)} x {per} B"
        self.rows.append(ConstRow(name, component, op.name, (channels,), self.bias_dtype, size, rule))

    def small(self, op: Op, name: str, count: int, dtype: str, component: str, unit: int = 0) -> None:
        if dtype == "INT64":
            size, rule = count * 8, "8 B an element"
        else:
            unit = unit or self.layout.float_const_bytes
            size, rule = align_up(count * 4, unit), f"fp32, rounded to {unit} B"

        self.rows.append(ConstRow(name, component, op.name, (count,), dtype, size, rule))


def _dims(graph: RefGraph, name: str) -> tuple[int, ...] | None:
    t = graph.tensors.get(name) if name else None
    return t.shape if t is not None else None


def _const_len(graph: RefGraph, name: str) -> int | None:
    t = graph.tensors.get(name) if name else None
    if t is None or t.role == "activation" or t.role == "input" or t.shape is None:
        return None
    return t.numel


def plan_weights(graph: RefGraph, target: str, dtype: str, toolkit: str | None = None) -> WeightPlan | None:
    """The const rows of `graph` on `target` (None: no learned layout for the target and dtype)."""
    layout = weight_layout(target, dtype)
    if layout is None:
        return None
    rows = _Rows(layout, dtype, toolkit)
    producer = {o: op for op in graph.ops for o in op.outputs if o}
    split_concat = _since(toolkit, CONCAT_SPLIT_SINCE)
    keep_resize = _since(toolkit, RESIZE_KEPT_SINCE)
    graph_inputs = set(graph.inputs)
    skipped: list[str] = []
    placeholder = False
    handled: set[str] = set()  # ops whose constant another op's rows took (a MatMul's bias Add)
    for op in graph.ops:
        kind = op.op_type
        if kind == "Conv":
            _conv_rows(graph, op, rows, producer, graph_inputs, split_concat)
        elif kind == "Gemm":
            w = _dims(graph, op.inputs[1]) if len(op.inputs) > 1 else None
            if w is None or len(w) != 2:
                skipped.append(op.name)
                continue
            units, depth = (w[0], w[1]) if op.attrs.get("transB") else (w[1], w[0])
            rows.conv(op, op.inputs[1], units, depth, 1, 1, reads_input=False)
            _bias(rows, op, op.inputs[2] if len(op.inputs) > 2 else "", op.inputs[1], units, depthwise=False)
            src = producer.get(op.inputs[0])
            if src is not None and src.op_type == "Flatten":
                rows.small(op, f"{op.name}_o0_mm_tp_rs_i1", 2, "INT64", "shape constant")
        elif kind == "ConvTranspose":
            w = _dims(graph, op.inputs[1])
            if w is None or len(w) != 4:
                skipped.append(op.name)
                continue
            cin, cout_g = w[0], w[1]
            size_cout = cout_g * int(op.attrs.get("group", 1))
            rows.conv(op, op.inputs[1], size_cout, cin, w[2], w[3], reads_input=False, shape=w)
            _bias(
                rows, op, op.inputs[2] if len(op.inputs) > 2 else "", op.inputs[1], size_cout, depthwise=False
            )
        elif kind == "GlobalAveragePool":
            x = _dims(graph, op.inputs[0])
            if x is None or len(x) != 4:
                skipped.append(op.name)
                continue
            c, h, w_ = x[1], x[2], x[3]
            i = 0
            while h > 1 or w_ > 1:
                kh, kw = min(h, GAP_KERNEL), min(w_, GAP_KERNEL)
                rows.depthwise(op, f"{op.name}_2conv{i}_i1", c, kh, kw, component="added kernel")
                rows.bias(op, f"{op.name}_2conv{i}_i2", c, depthwise=True, component="added bias")
                h, w_, i = math.ceil(h / kh), math.ceil(w_ / kw), i + 1
        elif kind == "Resize":
            consts = [n for n in op.inputs[1:] if n and _const_len(graph, n)]
            if keep_resize:
                if not placeholder:
                    rows.small(op, "empty_placeholder_0", 1, "FLOAT", "resize constant")
                    placeholder = True
                for n in consts:
                    rows.small(
                        op, n, _const_len(graph, n) or 0, "FLOAT", "resize constant", rows.scales_bytes
                    )
            else:
                x, y = _dims(graph, op.inputs[0]), _dims(graph, op.outputs[0])
                if x is None or y is None or len(x) != 4 or len(y) != 4 or y[2] % x[2]:
                    skipped.append(op.name)
                    continue
                s = y[2] // x[2]
                name = f"{op.name}_2deconv_i1"
                rows.depthwise(
                    op, name, x[1], 2 * s, 2 * s, shape=(x[1], 1, 2 * s, 2 * s), component="added kernel"
                )
                if rows.int8:
                    rows.bias(op, f"{name}_bias_0", x[1], depthwise=True, component="added bias")
        elif kind in ("Reshape", "Split"):
            shape_name = op.inputs[1] if len(op.inputs) > 1 else ""
            count = _const_len(graph, shape_name)
            if count:
                rows.small(op, shape_name, count, "INT64", "shape constant")
        elif kind == "LayerNormalization":
            _layer_norm_rows(graph, op, rows)
        elif kind == "MatMul":
            handled.update(_matmul_rows(graph, op, rows, toolkit))
        elif kind in ("LSTM", "GRU") and not _recurrent_rows(graph, op, rows, target, toolkit):
            skipped.append(op.name)
        if op.outputs and _dims(graph, op.outputs[0]) is not None:
            out = _dims(graph, op.outputs[0]) or ()
            if len(out) == 3 and op.outputs[0] in graph.outputs:
                # A rank-3 graph output is reshaped back from the NPU's 4-D layout (yolo `Split62_o0-rs_i1`,
                # `Transpose64_o0-rs_i1`; transformer `Add54_o0-rs_i1`; lstm `MatMul8_o0_mm_tp_rs_i1`).
                name = f"{op.name}_o0_mm_tp_rs_i1" if kind == "MatMul" else f"{op.name}_o0-rs_i1"
                rows.small(op, name, 3, "INT64", "shape constant")
            elif len(out) == 3 and kind == "Concat":
                rows.small(op, f"{op.name}_o0_rs_i1", 4, "INT64", "shape constant")
        if op.name in handled:
            continue
        if kind in _SCALAR_FOLDED:
            scalars = [t for _, t in graph.weights_of(op)]
            if scalars and all((t.numel or 0) == 1 for t in scalars):
                if layout.scalar_row and _scales_attention(graph, op, producer):
                    for t in scalars:
                        # printed (1,1,1,1) FLOAT: 64 B in int8 builds, 32 B in fp16 (one 64-B slot)
                        rows.rows.append(
                            ConstRow(
                                t.name,
                                "scalar constant",
                                op.name,
                                (1, 1, 1, 1),
                                "FLOAT",
                                64 if rows.int8 else 32,
                                "one slot",
                            )
                        )
                continue
            if scalars:
                skipped.append(op.name)
        elif kind not in _MODELLED and graph.weights_of(op):
            skipped.append(op.name)
    for name in graph.inputs:
        shape = graph.inputs[name]
        readers = [graph.ops[i] for i in graph.tensors[name].consumers] if name in graph.tensors else []
        # a sequence input read by an LSTM/GRU is not reshaped (no `input_rs` row in any recurrent log)
        if len(shape) == 3 and readers and all(r.op_type not in ("LSTM", "GRU") for r in readers):
            first = graph.ops[0] if graph.ops else None
            if first is not None:
                if not _since(toolkit, INPUT_RESHAPE_ONCE_SINCE):
                    rows.small(first, f"{name}_rs_i1", 4, "INT64", "shape constant")
                rows.small(first, f"{name}_rs#1_i1", 4, "INT64", "shape constant")
    dropped = _merged_reshape_shapes(graph, producer)
    kept = [r for r in rows.rows if not (r.component == "shape constant" and r.name in dropped)]
    rows.rows = kept
    table = sum(align_up(r.size_bytes, CONST_ALIGN) for r in rows.rows)
    block = layout.fixed_block
    if block is not None and any(op.op_type == "LSTM" for op in graph.ops):
        block += layout.lstm_block
    if block is None:
        block = _recurrent_block(graph, target, dtype, toolkit)
    return WeightPlan(target, dtype, tuple(rows.rows), table, block, tuple(skipped))


#: Where LSTM/GRU gate weights stay fp32 consts for the CPU, and how many times their fp32 size the
#: table lists: (kind, target) -> [(from toolkit, factor or None = on the NPU)], the last entry whose
#: version is reached applies. gru_s10_f24_h56_k12 `w1` (1,168,24): 16,128 B (fp32) on rv1106 2.5.0,
#: 258,048 (x 16) in 2.3.2, 129,024 (x 8) on rv1106b 2.3.2; rk3576 2.2.0 x 1, 2.3.0 / 2.3.2 x 16,
#: 2.5.0 on the NPU; lstm on rv1103b / rv1106b x 8 in 2.3.2, x 1 in 2.5.0.
RECURRENT_CPU: dict[tuple[str, str], tuple[tuple[tuple[int, ...], int | None], ...]] = {
    **{("GRU", t): (((0,), 16), ((2, 5, 0), 1)) for t in ("rv1103", "rv1106")},
    **{("GRU", t): (((0,), 8), ((2, 5, 0), 1)) for t in ("rv1103b", "rv1106b")},
    **{("LSTM", t): (((0,), 8), ((2, 5, 0), 1)) for t in ("rv1103b", "rv1106b")},
    ("GRU", "rk3576"): (((0,), 1), ((2, 3, 0), 16), ((2, 5, 0), None)),
    ("GRU", "rk2118"): (((0,), 8), ((2, 5, 0), None)),
}
#: The recurrent rules hold from this toolkit; 2.2.0 and 2.3.0 round the gates differently (rk3588
#: fp16 gru `w1` 5,760 B = 3 x 24 x 40 x 2, unrounded) and are not modelled.
RECURRENT_SINCE = (2, 3, 2)
#: From this toolkit the rows a Squeeze of the recurrent output needs are gone (`Squeeze6_o0_rs_i1` (4)
#: in 2.3.2, absent in 2.5.0; the LSTM's `input_proj` rows are named after the LSTM instead).
SQUEEZE_ROW_UNTIL = (2, 5, 0)
#: rk3588 from 2.5.0 rounds a GRU's recurrent kernel as 3H at once (gru_s10_f24_h56_k12 `w2` printed
#: (176,56,1,1), 22,528 B = 176 x 64 x 2), per gate before and on the other targets.
GRU_WHOLE_3H = {"rk3588": (2, 5, 0)}


#: rk3576 / rv1126b print a block beyond the const table that is not modelled in general (CNN and
#: transformer models: 2.3-57.3 KiB varying with the model); for a model made of one LSTM or GRU and a
#: MatMul head it is the same for every S, F, H and K measured: (kind, dtype) -> [(from toolkit, bytes)].
#: lstm, gru, recurrent-dev and heldout-recurrent on rk3576 2.3.2 and 2.5.0, rv1126b 2.5.0.
RECURRENT_BLOCK: dict[tuple[str, str], tuple[tuple[tuple[int, ...], int], ...]] = {
    ("GRU", "fp16"): (((2, 3, 2), 18688), ((2, 5, 0), 9984)),
    ("GRU", "int8"): (((2, 3, 2), 20736), ((2, 5, 0), 12032)),
    ("LSTM", "fp16"): (((2, 3, 2), 28928), ((2, 5, 0), 12544)),
    ("LSTM", "int8"): (((2, 3, 2), 38656), ((2, 5, 0), 22272)),
}
RECURRENT_BLOCK_TARGETS = frozenset({"rk3576", "rv1126b"})


def _recurrent_block(graph: RefGraph, target: str, dtype: str, toolkit: str | None) -> int | None:
    """The rk3576/rv1126b block of a model made of one LSTM/GRU and a MatMul head, else None."""
    if target not in RECURRENT_BLOCK_TARGETS:
        return None
    kinds = [op.op_type for op in graph.ops if graph.weights_of(op)]
    recurrent = [k for k in kinds if k in ("LSTM", "GRU")]
    if len(recurrent) != 1 or any(k not in ("LSTM", "GRU", "MatMul", "Squeeze") for k in kinds):
        return None
    block = None
    for since, value in RECURRENT_BLOCK.get((recurrent[0], "int8" if dtype == "int8" else "fp16"), ()):
        if _since(toolkit, since):
            block = value
    return block


def _recurrent_cpu(kind: str, target: str, toolkit: str | None) -> int | None:
    factor: int | None = None
    for since, value in RECURRENT_CPU.get((kind, target), ()):
        if _since(toolkit, since):
            factor = value
    return factor


def _recurrent_rows(
    graph: RefGraph,
    op: Op,
    rows: _Rows,
    target: str,
    toolkit: str | None,
) -> bool:
    """An LSTM's or GRU's gate weights W (1,G H,F), R (1,G H,H) and bias B (1,2 G H), G = 4 / 3."""
    names = [op.inputs[i] if len(op.inputs) > i else "" for i in (1, 2, 3)]
    shapes = [_dims(graph, n) for n in names]
    w, r = shapes[0], shapes[1]
    if w is None or r is None or len(w) != 3 or len(r) != 3 or w[0] != 1:
        return False
    if not _since(toolkit, RECURRENT_SINCE):
        return False
    gates = 4 if op.op_type == "LSTM" else 3
    hidden, features = r[2], w[2]
    cpu = _recurrent_cpu(op.op_type, target, toolkit)
    if cpu is not None:
        for name, shape in zip(names, shapes, strict=True):
            if name and shape is not None:
                count = math.prod(shape)
                rows.rows.append(
                    ConstRow(
                        name,
                        "recurrent constant",
                        op.name,
                        shape,
                        "FLOAT",
                        count * 4 * cpu,
                        f"fp32 for the CPU x {cpu}",
                    )
                )
    else:
        # GRU runs in fp16 on the NPU in int8 builds too (gru `w1` FLOAT16 on rk3588 int8).
        lay = rows.layout if op.op_type == "LSTM" else weight_layout(target, "fp16")
        if lay is None:
            return False
        int8 = op.op_type == "LSTM" and rows.int8
        elt, kdt = (1, "INT8") if int8 else (2, "FLOAT16")
        hr = lay.gate(hidden)
        rows.rows.append(
            ConstRow(
                names[0],
                "recurrent kernel",
                op.name,
                (hr, features, 1, 1),
                kdt,
                gates * hr * lay.cin(features) * elt,
                f"{gates} gates x H {hidden}->{hr} x Cin {features}->{lay.cin(features)}",
            )
        )
        whole = GRU_WHOLE_3H.get(target)
        if op.op_type == "GRU" and whole is not None and _since(toolkit, whole):
            outs = ChannelRound(16)(gates * hidden)
            size, shape, rule = (
                outs * lay.cin(hidden) * elt,
                (outs, hidden, 1, 1),
                f"3H {gates * hidden}->{outs}",
            )
        else:
            size, shape, rule = (
                gates * hr * lay.cin(hidden) * elt,
                (hr, hidden, 1, 1),
                f"{gates} gates x H {hidden}->{hr}",
            )
        rows.rows.append(
            ConstRow(
                names[1],
                "recurrent kernel",
                op.name,
                shape,
                kdt,
                size,
                rule + f" x Cin {hidden}->{lay.cin(hidden)}",
            )
        )
        if names[2]:
            per = 8 if int8 else 4
            rows.rows.append(
                ConstRow(
                    names[2],
                    "recurrent bias",
                    op.name,
                    (2 * gates * hidden,),
                    "INT32" if int8 else "FLOAT",
                    2 * gates * hr * per,
                    f"{2 * gates} x H {hidden}->{hr} x {per} B",
                )
            )
    consumers = [graph.ops[i] for i in graph.tensors[op.outputs[0]].consumers] if op.outputs else []
    squeeze = next((c for c in consumers if c.op_type == "Squeeze"), None)
    old = not _since(toolkit, SQUEEZE_ROW_UNTIL)
    if op.op_type == "LSTM":
        # The projection the compiler puts after an LSTM (lstm `LSTM4_o0_input_proj` (64,64,1,1) 16,384 B
        # and `_input_projB` (1,64)); FLOAT where the LSTM runs on the CPU.
        stem = f"{squeeze.name}_o0" if old and squeeze is not None else f"{op.name}_o0"
        pdt = "FLOAT" if cpu is not None else "FLOAT16"
        rows.rows.append(
            ConstRow(
                f"{stem}_input_proj",
                "added kernel",
                op.name,
                (hidden, hidden, 1, 1),
                pdt,
                hidden * hidden * 4,
                "H x H x 4 B",
            )
        )
        rows.rows.append(
            ConstRow(
                f"{stem}_input_projB",
                "added bias",
                op.name,
                (1, hidden),
                pdt,
                hidden * 4 * (cpu or 1),
                "H x 4 B",
            )
        )
    if old and squeeze is not None:
        rows.small(squeeze, f"{squeeze.name}_o0_rs_i1", 4, "INT64", "shape constant")
    return True


def _layer_norm_rows(graph: RefGraph, op: Op, rows: _Rows) -> None:
    """LayerNormalization's scale and bias, printed (1, D, 1, 1) (transformer `w1` FLOAT16, `w2` FLOAT)."""
    for index, dtype, per in ((1, "FLOAT16", rows.layout.ln_scale_bytes), (2, "FLOAT", 4)):
        name = op.inputs[index] if len(op.inputs) > index else ""
        count = _const_len(graph, name)
        if count:
            stored = rows.layout.ln_channels(count)
            rule = f"C {count}->{stored} x {per} B"
            shape = (1, count, 1, 1)
            rows.rows.append(ConstRow(name, "norm constant", op.name, shape, dtype, stored * per, rule))


def _matmul_rows(graph: RefGraph, op: Op, rows: _Rows, toolkit: str | None) -> set[str]:
    """A MatMul by a constant (K, N) runs as a 1 x 1 conv: kernel (N, K, 1, 1); an Add of a constant
    vector of N right after it is the conv's bias (transformer `w18` + `w20`). Returns the Add consumed."""
    w = _dims(graph, op.inputs[1]) if len(op.inputs) > 1 else None
    if w is None or len(w) != 2 or graph.tensors[op.inputs[1]].role != "weight":
        return set()
    depth, units = w
    rows.conv(op, op.inputs[1], units, depth, 1, 1, reads_input=False)
    users = graph.tensors[op.outputs[0]].consumers
    if len(users) == 1:
        add = graph.ops[users[0]]
        consts = [t for _, t in graph.weights_of(add)]
        if add.op_type == "Add" and len(consts) == 1 and consts[0].shape == (units,):
            rows.bias(add, consts[0].name, units, depthwise=False)
            return {add.name}
    if rows.int8 and _since(toolkit, MATMUL_BIAS_SINCE):
        rows.bias(op, f"{op.inputs[1]}_bias_0", units, depthwise=False, component="added bias")
    return set()


def _scales_attention(graph: RefGraph, op: Op, producer: dict[str, Op]) -> bool:
    """Whether an elementwise op scales the product of two activations (attention's Q K^T)."""
    for name in op.inputs:
        src = producer.get(name)
        if src is not None and src.op_type == "MatMul":
            return all(graph.tensors[n].role != "weight" for n in src.inputs)
    return False


def _merged_reshape_shapes(graph: RefGraph, producer: dict[str, Op]) -> set[str]:
    """Shape constants of Reshapes feeding a rank-3 Concat, all but the last: the compiler stores one
    4-element shape for them (yolo_320 `c53` and `c58` feed `Concat60`: only `c58` (4) is listed)."""
    out: set[str] = set()
    for op in graph.ops:
        if op.op_type != "Concat" or not op.outputs:
            continue
        shape = _dims(graph, op.outputs[0])
        if shape is None or len(shape) != 3:
            continue
        reshapes = [producer[n] for n in op.inputs if n in producer and producer[n].op_type == "Reshape"]
        out.update(r.inputs[1] for r in reshapes[:-1] if len(r.inputs) > 1)
    return out


def _bias(rows: _Rows, op: Op, bias: str, kernel: str, channels: int, *, depthwise: bool) -> None:
    if bias:
        rows.bias(op, bias, channels, depthwise=depthwise)
    elif rows.int8:
        rows.bias(op, f"{kernel}_bias_0", channels, depthwise=depthwise, component="added bias")


def _conv_rows(
    graph: RefGraph, op: Op, rows: _Rows, producer: dict[str, Op], graph_inputs: set[str], split_concat: bool
) -> None:
    w = _dims(graph, op.inputs[1]) if len(op.inputs) > 1 else None
    if w is None or len(w) != 4:
        return
    cout, cin_g, kh, kw = w
    group = int(op.attrs.get("group", 1))
    bias = op.inputs[2] if len(op.inputs) > 2 else ""
    # The input rule holds for an image input of at most 4 channels, stored NHWC (multi_io `features`
    # (1,8,32,32) and head_1x1's (1,200,1,1) input take the ordinary Cin rounding).
    reads_input = op.inputs[0] in graph_inputs and cin_g <= 4
    if group > 1 and cin_g == 1 and group == cout:
        if reads_input:
            # A depthwise conv on the graph input: the compiler puts a 1 x 1 conv before it (dw_odd
            # `Pre_weightinput` (3,3,1,1) with `Pre_weightinput_bias_0` in int8).
            rows.conv(op, "Pre_weightinput", cout, cout, 1, 1, reads_input=True, component="added kernel")
            if rows.int8:
                rows.bias(op, "Pre_weightinput_bias_0", cout, depthwise=False, component="added bias", per=4)
        rows.depthwise(op, op.inputs[1], cout, kh, kw)
        _bias(rows, op, bias, op.inputs[1], cout, depthwise=True)
        return
    parts = _concat_split(graph, op, producer) if split_concat and group == 1 else None
    if parts is not None:
        # 2.5.0 `fuse_concat_conv`: the Resize branch's conv has no bias of its own (int8 adds one), the
        # other branch's conv carries the model's bias as `<x>_conv_i2`.
        (r, rc), (x, xc) = parts
        rows.conv(op, f"{r}_conv_i1", cout, rc, kh, kw, reads_input=False, component="added kernel")
        if rows.int8:
            rows.bias(op, f"{r}_conv_i1_bias_0", cout, depthwise=False, component="added bias")
        rows.conv(op, f"{x}_conv_i1", cout, xc, kh, kw, reads_input=False, component="added kernel")
        if bias:
            rows.bias(op, f"{x}_conv_i2", cout, depthwise=False, component="added bias")
        elif rows.int8:
            rows.bias(op, f"{x}_conv_i1_bias_0", cout, depthwise=False, component="added bias")
        return
    dims = _dims(graph, op.inputs[0])
    width = dims[-1] if dims is not None and len(dims) == 4 else 0
    rows.conv(op, op.inputs[1], cout, cin_g, kh, kw, reads_input=reads_input, input_width=width)
    _bias(rows, op, bias, op.inputs[1], cout, depthwise=False)


def _concat_split(
    graph: RefGraph, op: Op, producer: dict[str, Op]
) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """(Resize input, its channels), (other input, its channels) of a Conv reading Concat(Resize, x)."""
    cat = producer.get(op.inputs[0])
    if cat is None or cat.op_type != "Concat" or len(cat.inputs) != 2 or cat.attrs.get("axis") != 1:
        return None
    if len(graph.tensors[cat.outputs[0]].consumers) != 1:
        return None
    resized = [n for n in cat.inputs if n in producer and producer[n].op_type == "Resize"]
    if len(resized) != 1:
        return None
    r = resized[0]
    x = next(n for n in cat.inputs if n != r)
    rs, xs = _dims(graph, r), _dims(graph, x)
    if rs is None or xs is None or len(rs) != 4 or len(xs) != 4:
        return None
    return (r, rs[1]), (x, xs[1])


def weights_frame_rows(plan: WeightPlan | None) -> list[dict[str, object]]:
    """The `ref_rknn_weights` frame: one row per predicted const tensor, in the compiler's table order."""
    if plan is None:
        return []
    return [
        {
            "name": r.name,
            "component": r.component,
            "op": r.op,
            "shape": "(" + ",".join(str(d) for d in r.shape) + ")",
            "dtype": r.dtype,
            "size_bytes": r.size_bytes,
            "stored_bytes": align_up(r.size_bytes, CONST_ALIGN),
            "rule": r.rule,
        }
        for r in plan.rows
    ]


def weights_notes(plan: WeightPlan | None, target: str, dtype: str) -> list[str]:
    """What the weight prediction leaves out, for the reference's notes."""
    if plan is None:
        return [f"RKNN weight memory: no learned const layout for {target} {dtype} (docs/reference.md)"]
    notes = []
    if plan.fixed_block is None:
        notes.append(
            f"RKNN weight memory: {target} prints a block beyond the const table that is not modelled "
            f"(2.3-57.3 KiB in the corpus); rknn_weight_table_bytes is the table alone"
        )
    if plan.skipped:
        notes.append(
            "RKNN weight memory: the consts of "
            + ", ".join(plan.skipped[:5])
            + (" ..." if len(plan.skipped) > 5 else "")
            + " are not modelled (recurrent, transformer and unshaped ops): no weight total is predicted"
        )
    return notes


def iter_components(plan: WeightPlan) -> Iterator[tuple[str, int, int]]:
    """(component, rows, bytes rounded to CONST_ALIGN) in a stable order."""
    order = [
        "kernel",
        "depthwise kernel",
        "bias",
        "recurrent kernel",
        "recurrent bias",
        "recurrent constant",
        "norm constant",
        "added kernel",
        "added bias",
        "scalar constant",
        "shape constant",
        "resize constant",
    ]
    counts: dict[str, int] = {}
    for r in plan.rows:
        counts[r.component] = counts.get(r.component, 0) + 1
    sizes = plan.by_component()
    for c in [*order, *sorted(set(counts) - set(order))]:
        if c in counts:
            yield c, counts[c], sizes[c]
