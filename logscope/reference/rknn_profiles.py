"""How RKNN's compiler sizes feature tensors, per target: data learned from the compiler corpus.

Every entry was read off the Feature Tensor Information Table of the build logs in
`fixtures/rknn-compiler/` (rknn-toolkit2 2.2.0 to 2.5.0, `Size` column against `OrigShape`), and is
checked by `tests/test_compiler_corpus.py`. docs/reference.md lists the evidence for each.

A rank-4 NCHW tensor of C channels is stored as N x C' x plane x element bytes where

- C' is C rounded up to a channel alignment that depends on the op writing it: `conv_bytes` for a
  convolution (also Gemm/MatMul/ConvTranspose run as convolutions), `dw_bytes` for a depthwise
  convolution and for GlobalAveragePool (which the compiler turns into depthwise convolutions), and
  the NC1HWC2 channel block C2 for any other op. The alignments are in bytes: the same byte count
  holds for int8 and fp16 on every target measured (rk3588 int8: 32 channels; fp16: 16 channels).
- plane is H x W rounded up to `plane_align` elements when H x W > 1 (7x7 = 49 -> 52).
- A depthwise convolution whose input feature map is larger than `dw_split_input_bytes` (and whose
  output spans more than one depthwise block) stores its output with one conv block of channels more
  (`conv_bytes`; presumably the NPU's tiling of large depthwise convolutions). The threshold is in
  bytes of the input (C x H x W x element bytes), per target: the largest input seen without it.
- A ConvTranspose output on rk3576/rv1126b stores `deconv_factor` (2) times its rounded channels, and in
  fp16 a convolution fused with Sigmoid stores `sigmoid_fp16_factor` (2) times them.
- In fp16, a convolution fused with SiLU (Conv -> Sigmoid -> Mul, the compiler's `ConvExSwish`) stores
  `swish_fp16_factor` times its rounded channels (int8 stores them once). Where `swish_fused` is False
  the conv keeps its output and an `exSwish` op writes the SiLU (`exswish_factors` times, per dtype);
  on rk2118 a MaxPool's input and output take `maxpool_factor` times their channels.
- From toolkit 2.5.0 in fp16 on rk3576/rv1126b, a Concat of conv outputs read by it alone is written in
  place (`concat_bypass_since`), and rk2118 runs the Concat(Resize, x) -> Conv split as a separate conv
  on x and an Add (`concat_conv_add_fused`).
- The graph input with at most 4 channels is stored unpadded in channels (NHWC) with its width
  rounded up to `input_width_bytes` bytes per channel row (16: 16 pixels in int8, 8 in fp16).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

#: The toolkit versions whose build logs the profiles were learned from (2.3.2, 2.5.0: every target) and
#: checked against (2.2.0, 2.3.0: five targets, the same exact builds). A log of an older toolkit (1.x,
#: whose RV1106 MobileNet log pads depthwise outputs differently) gets the guide's plain sizes instead.
LEARNED_FROM: tuple[str, ...] = ("2.2.0", "2.3.0", "2.3.2", "2.5.0")
OLDEST = (2, 2, 0)


def version_key(version: str) -> tuple[int, ...] | None:
    """`"2.3.2"` / `"v2.5.0b0"` / `"2.5.0+1234"` -> (2, 3, 2); None for text without a version."""
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def profile_applies(toolkit: str | None) -> bool:
    """Whether a toolkit version is covered by the learned profiles (None: the newest, covered)."""
    if toolkit is None:
        return True
    key = version_key(toolkit)
    return key is not None and key >= OLDEST


@dataclass(frozen=True)
class SizeProfile:
    conv_bytes: int
    dw_bytes: int
    plane_align: int
    input_width_bytes: int
    evidence: str
    #: Depthwise input size (bytes) above which the output gets a spare conv block; None: never seen.
    dw_split_input_bytes: int | None = None
    dw_split_evidence: str = ""
    #: fp16 only: a conv fused with SiLU (x * sigmoid(x)) stores this many times its rounded channels.
    swish_fp16_factor: int = 1
    swish_evidence: str = ""
    #: Whether Conv -> SiLU runs as one op (`ConvExSwish`); False: the conv output is kept and an
    #: `exSwish` op computes the SiLU from it.
    swish_fused: bool = True
    #: A separate SiLU op (`exSwish`, after a conv that lost its fusion) stores this many times its
    #: rounded channels, per dtype.
    exswish_factors: dict[str, int] = field(default_factory=lambda: {"int8": 1, "fp16": 3})
    exswish_evidence: str = (
        "yolo_320/yolo_640 (2.5.0), `Mul49_o0` (1,64,40,40) / (1,32,80,80) written by `exSwish`: int8 "
        "once on rk3562, rk3566, rk3568, rk3576, rv1103, rv1106, rv1103b, rv1106b, rv1126b; fp16 three "
        "times on rk3562, rk3566, rk3568, rk3576, rv1126b"
    )
    #: A MaxPool's input and output store this many times their rounded channels.
    maxpool_factor: int = 1
    #: A ConvTranspose output stores this many times its rounded channels.
    deconv_factor: int = 1
    #: Per dtype, the toolkit version from which a ConvTranspose output is stored once again.
    deconv_plain_since: dict[str, tuple[int, ...]] = field(default_factory=dict)
    deconv_evidence: str = ""
    #: Per dtype, the toolkit version from which a channel Concat of conv outputs that fill whole conv
    #: blocks and that nothing else reads is written in place ("Concat bypass node"): its buffer is
    #: taken when the first input is written, beside that input's own buffer, and the later inputs are
    #: written into it.
    concat_bypass_since: dict[str, tuple[int, ...]] = field(default_factory=dict)
    concat_bypass_evidence: str = ""
    #: Whether toolkit 2.5.0's Concat(Resize, x) -> Conv split adds `<r>_conv` in the conv on x
    #: (ConvAdd); False: the conv on x runs as its own op right after x is written, and an Add sums it.
    concat_conv_add_fused: bool = True
    concat_conv_evidence: str = (
        "unet_128, yolo_320, yolo_640, fpn_lite (2.5.0): the conv on x is `ConvAdd` / `ConvAddRelu` reading "
        "x and `<r>_conv` on every target but rk2118"
    )
    #: fp16 only: a conv fused with Sigmoid stores this many times its rounded channels.
    sigmoid_fp16_factor: int = 2
    sigmoid_evidence: str = (
        "fp16 on every target: unet_128's `Sigmoid53_o0` (1,2,128,128) and multi_io's `Sigmoid24_o0` "
        "(1,6,16,16) take twice the rounded channels (rk3588: 1,048,576 B = 2 x 16 ch x 128 x 128 x 2 B), "
        "except rk3566/rk3568's 128 x 128 output (3 x; not modelled, it never sets the peak there); int8 once"
    )


_RK3588 = SizeProfile(
    conv_bytes=32,
    dw_bytes=64,
    plane_align=4,
    input_width_bytes=16,
    evidence=(
        "chain_75: (1,16,75,75) conv output stored as 32 channels (C1=2, 180,096 B); dw_odd: depthwise "
        "outputs with 3/24/40/72/120/200 channels stored as 64/64/64/128/128/256; mobilenet_v1: the "
        "32-channel depthwise output stored as 64 (the published RK3588 SRAM log's C1=4); chain_75 input "
        "(1,3,75,75) takes 18,000 B = 75 x 80 x 3"
    ),
    exswish_factors={"int8": 4, "fp16": 2},
    exswish_evidence=(
        "yolo_320/yolo_640 (2.5.0), `Mul49_o0` written by `exSwish`: int8 (1,64,40,40) takes 409,600 B "
        "(4 x 64 ch), fp16 2 x"
    ),
    swish_fp16_factor=3,
    swish_evidence=(
        "yolo_320/yolo_640 fp16, every toolkit: the SiLU conv outputs with 8/16/32/64/128 channels are "
        "stored as 48/48/96/192/384 (3 x the 16-channel rounding: `Mul5_o0` (1,16,160,160) 2,457,600 B)"
    ),
)
_RK3576 = replace(
    _RK3588,
    exswish_factors={"int8": 1, "fp16": 3},
    exswish_evidence=SizeProfile.exswish_evidence,
    deconv_factor=2,
    deconv_plain_since={"int8": (2, 5, 0)},
    deconv_evidence=(
        "unet_128: the stride-2 ConvTranspose output (1,16,128,128) takes 1,048,576 B in fp16 (2 x 16 ch, "
        "toolkit 2.2.0-2.5.0) and in int8 up to 2.3.2 (2 x 32 ch); 2.5.0 int8 takes 524,288 B, as rk3588"
    ),
    swish_fp16_factor=2,
    swish_evidence=(
        "yolo_320/yolo_640 fp16: SiLU conv outputs with 8/16/32/64/128 channels stored as 32/32/64/128/256 "
        "(2 x the 16-channel rounding: `Mul5_o0` (1,16,160,160) 1,638,400 B)"
    ),
    concat_bypass_since={"fp16": (2, 5, 0)},
    concat_bypass_evidence=(
        "multi_io fp16, toolkit 2.5.0, rk3576 and rv1126b (the only corpus logs that print `Concat bypass "
        "node Concat`): `Relu4_o0` (1,16,32,32) is listed at the Concat's offset with the Concat's size "
        "(0x12000, 65,536 B), `Relu8_o0` inside it (0x1a000), and 32,768 B below it (0xa000) stay "
        "occupied by no listed row until the Concat has run: total 139,264 B. Not in 2.3.2 (the same "
        "build on rk3576: three separate buffers, 172,032 B), not in int8 (the 16-channel conv outputs "
        "do not fill a 32-channel block), not on rk3588 or rk3562 fp16 2.5.0 (same model, separate "
        "buffers); no other corpus Concat has conv inputs read by it alone (unet_128's skip is also "
        "read by a MaxPool, yolo's read Split and MaxPool outputs)"
    ),
    dw_split_input_bytes=451_584,
    dw_split_evidence=(
        "mobilenet_v2 int8: the depthwise conv reading (1,96,112,112) (1,204,224 B) writes 160 channels, "
        "not 128; the one reading (1,144,56,56) (451,584 B) writes 192; fp16: inputs of 802,816 B and more "
        "(mobilenet_v1/v2 at 112 and 56) get 16 spare channels (64 -> 80, 144 -> 176), 401,408 B (256 x "
        "28 x 28) none. Threshold: the largest input without a spare block"
    ),
)
#: rv1126b (toolkit 2.5.0 only) has rk3576's factors and ConvTranspose rule: in 24 of the 30 CNN and
#: sequence builds both finish, every feature row has rk3576's size; the other six differ only in
#: depthwise outputs (its own split threshold below) and in the transformer's tail.
_RV1126B = replace(
    _RK3576,
    dw_split_input_bytes=301_056,
    dw_split_evidence=(
        "int8: depthwise inputs of 401,408 B and more (128 x 56 x 56, 144 x 56 x 56, 96 x 112 x 112) "
        "write 32 spare channels (128 -> 160, 144 -> 224), 200,704 B (256 x 28 x 28) none; fp16: 401,408 B "
        "(256 x 28 x 28) gets 16 (256 -> 272), 301,056 B (192 x 28 x 28) none"
    ),
)
_RV1106 = SizeProfile(
    conv_bytes=16,
    dw_bytes=32,
    plane_align=4,
    input_width_bytes=16,
    evidence=(
        "dw_odd: pointwise outputs with 24/40/72/200 channels stored as 32/48/80/208 (int8, 16-channel "
        "blocks), depthwise outputs with 24/40/72/200 as 32/64/96/224; input (1,3,38,38) 5,472 B = "
        "38 x 48 x 3"
    ),
    dw_split_input_bytes=200_704,
    dw_split_evidence=(
        "int8 (rv1106, rv1103, rk3562): depthwise inputs of 401,408 B and more (64/96 x 112 x 112, "
        "128/144 x 56 x 56) write 16 spare channels (64 -> 80, 144 -> 176), 200,704 B (256 x 28 x 28) "
        "none; rk3562 fp16: 225,792 B (576 x 14 x 14) and more get 8 (576 -> 584, 32 -> 40), 200,704 B "
        "(512 x 14 x 14) none. A 32-channel output that is one depthwise block gets none"
    ),
    swish_fp16_factor=2,
    swish_evidence=(
        "rk3562 fp16 (the only fp16 target of this profile): yolo SiLU conv outputs with 8/16/32/64/128 "
        "channels stored as 16/32/64/128/256 (2 x the 8-channel rounding)"
    ),
)
_RK3566 = SizeProfile(
    conv_bytes=16,
    dw_bytes=32,
    plane_align=4,
    input_width_bytes=8,
    evidence=(
        "dw_odd: int8 pointwise outputs with 40/72 channels stored as 48/80 (C2 is 8, yet 16-channel "
        "rounding), depthwise outputs with 40/72 as 64/96; input (1,3,38,38) 4,560 B = 38 x 40 x 3"
    ),
    swish_fp16_factor=3,
    swish_evidence=(
        "yolo_320/yolo_640 fp16 (rk3566, rk3568): SiLU conv outputs with 8/16/32/64/128 channels stored as "
        "24/48/96/192/384 (3 x the 8-channel rounding)"
    ),
)
_RV1106B = SizeProfile(
    conv_bytes=8,
    dw_bytes=8,
    plane_align=4,
    input_width_bytes=16,
    evidence=(
        "dw_odd, chain_75: every conv and depthwise output rounded to the 8-channel block only (dw_odd's "
        "200-channel 5x5 depthwise output: 5,600 B = 200 x 28); input (1,3,38,38) 5,472 B = 38 x 48 x 3"
    ),
    swish_fused=False,
    dw_split_input_bytes=100_352,
    dw_split_evidence=(
        "depthwise inputs of 112,896 B and more (576 x 14 x 14, 192 x 28 x 28, 32 x 112 x 112) write 8 "
        "spare channels (576 -> 584, 32 -> 40); 100,352 B (512 x 14 x 14) none"
    ),
)

_RK2118 = SizeProfile(
    conv_bytes=16,
    dw_bytes=16,
    plane_align=4,
    input_width_bytes=16,
    evidence=(
        "fp16 only (int8 builds abort in the compiler): mobilenet_v1 conv outputs with 1001 channels "
        "stored as 1008 (8-channel rounding, C2 is 4); chain_75 input (1,3,75,75) 36,000 B = 75 x 80 x "
        "3 x 2"
    ),
    dw_split_input_bytes=69_312,
    dw_split_evidence=(
        "mobilenet_v1/v2: every depthwise output whose input is 100,352 B or more carries 8 spare "
        "channels (32 -> 40, 512 -> 520, 1024 -> 1032); dw_odd/dw_13 inputs of 69,312 B and less none"
    ),
    #: chain_75 `Relu12_o0` (1,64,19,19) 465,920 B = 10 x 64 x 364 x 2; the maxpool-dev sweep (106 builds):
    #: 10 x for every output no MaxPool reads and for most inputs, but some inputs above 64 KiB add 10-40
    #: rows of W per channel in steps no formula fits (yolo_320 `Mul33_o0` (1,128,20,20) 1,177,600 B =
    #: 11.5 x), which are not modelled
    maxpool_factor=10,
    swish_fused=False,
    concat_conv_add_fused=False,
    concat_conv_evidence=(
        "every rk2118 2.5.0 log with the pattern (unet_128, fpn_lite, yolo_320, yolo_640): the layer table "
        "runs `Conv:<x>_conv` right after the op writing x (yolo `Conv:Mul28_o0_conv` op 13 after the "
        "`exSwish` writing `Mul28_o0`, unet `Conv:Relu17_o0_conv`, fpn_lite `Conv:Add47_o0_conv` after "
        "`Add:Add47`) and sums it with `<r>_conv` in `Add` / `AddRelu` (`Add:Resize43_o0_conv_add`)"
    ),
)

#: Per target. rk3576 and rv1126b share RK3588's alignments (not its depthwise split or factors),
#: rk3562/rv1103 RV1106's, rk3568 RK3566's, rv1103b RV1106B's; rk2118 (fp16 only) has its own.
PROFILES: dict[str, SizeProfile] = {
    "rk3588": _RK3588,
    "rk3576": _RK3576,
    "rv1126b": _RV1126B,
    "rv1106": _RV1106,
    "rv1103": _RV1106,
    "rk3562": _RV1106,
    "rk3566": _RK3566,
    "rk3568": _RK3566,
    "rv1106b": _RV1106B,
    "rv1103b": _RV1106B,
    "rk2118": _RK2118,
}
