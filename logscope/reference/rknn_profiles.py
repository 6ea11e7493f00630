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
- The graph input with at most 4 channels is stored unpadded in channels (NHWC) with its width
  rounded up to `input_width_bytes` bytes per channel row (16: 16 pixels in int8, 8 in fp16).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
)

#: Per target. rk3576 and rv1126b share RK3588's alignments, rk3562/rv1103 RV1106's, rk3568 RK3566's,
#: rv1103b RV1106B's; rk2118 has no profile (its fp16 tables store some tensors 10x their size).
PROFILES: dict[str, SizeProfile] = {
    "rk3588": _RK3588,
    "rk3576": _RK3588,
    "rv1126b": _RK3588,
    "rv1106": _RV1106,
    "rv1103": _RV1106,
    "rk3562": _RV1106,
    "rk3566": _RK3566,
    "rk3568": _RK3566,
    "rv1106b": _RV1106B,
    "rv1103b": _RV1106B,
}
