"""Feature maps stored with many more channels than they have (NC1HWC2 channel padding).

## What it does
The NPU stores feature maps as NC1HWC2: channels in blocks of C2 (16 for INT8 and 8 for FLOAT16 on
RK3588/RV1106, 8 and 4 on RK3566/RK3568). For each feature tensor whose native shape is such a layout,
the rule compares the native bytes (N·C1·H·W·C2·dtype) with the logical bytes (N·C·H·W·dtype). A
tensor is reported when its padding is at least `tensor_share` (25%) of its native bytes and at least
`min_tensor_bytes` (64 KiB); the build is reported when all padding together is at least `total_share`
(10%) of the native bytes. The evidence separates alignment padding (C rounded up to a multiple of C2)
from extra blocks beyond it, which RKNN adds for some layers.

Rows are only counted when the native shape is N, C1, H, W, C2 with N/H/W equal to the original shape,
C2 one of 4/8/16/32, the native bytes fit in the row's allocated Size, and the native channel count is
at most twice the aligned count. Rows outside this (the `_exSecondary` helper buffers of [09], the
`(1,4,5,7,3)` input of [01] whose native shape does not describe its 240-byte allocation) are layouts
the rule cannot read as padding.

## Why it matters
Padding is memory and bandwidth spent on zeros. A 32-channel depthwise output stored as 64 channels
doubles that tensor, and it usually sits in the widest, highest-resolution part of the network.

## Example
`fixtures/rknn/29-doc-rknpu2-sram-runtime-log-level3-rk3588.log` (Rockchip's SRAM doc, MobileNetV1 on
RK3588):
```text
2   ConvRelu       output2  INT8     (1,32,112,112) (1,2,112,112,16) | 0xff404c00 0xff466c00 0x00062000 | 0x0005b400
3   ConvRelu       output4  INT8     (1,32,112,112) (1,4,112,112,16) | 0xff466c00 0xff52ac00 0x000c4000 | 0x00000000
```
`output4` has 32 channels but is stored as 4 blocks of 16: 802,816 B for 401,408 B of data.

## How to fix
- Give the padded layers a channel count that is a multiple of C2 (or of 2·C2 where RKNN pads the
  depthwise output), e.g. widen 32 → 64 channels where the padding is paid anyway, or narrow to a
  width that needs no extra block.
- Check whether a newer RKNN-Toolkit2 still pads that layer.

## Options
- `tensor_share` (float, 0.25): per-tensor padding share of native bytes that is reported.
- `min_tensor_bytes` (int, 64 KiB): smaller per-tensor padding is not reported.
- `total_share` (float, 0.10): padding share over all feature maps that is reported.
- `max_findings` (int, 10): at most this many per-tensor findings per build (largest first).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import Columns, KiB, as_int, as_str, columns, fmt_bytes, parse_shape, pct
from logscope.rules.finding import Finding, Severity

CODE = "MEM005"
NAME = "channel-padding-waste"
SEVERITY = Severity.warning
NEEDS = ("tensors",)

BLOCKS = (4, 8, 16, 32)
DTYPE_BYTES = {"INT8": 1, "UINT8": 1, "FLOAT16": 2, "INT16": 2, "FLOAT": 4, "FLOAT32": 4, "INT32": 4}


@dataclass(frozen=True)
class Options:
    tensor_share: float = 0.25
    min_tensor_bytes: int = 64 * KiB
    total_share: float = 0.10
    max_findings: int = 10


OPTIONS = Options

HINT = (
    "use channel counts that are multiples of the channel block C2 (16 for INT8 on RK3588/RV1106, 8 on "
    "RK3566/RK3568); where RKNN pads a layer anyway (32-channel depthwise output stored as 64) widen or "
    "narrow it to a width that needs no extra block"
)


@lru_cache(maxsize=65536)
def layout(orig_text: str | None, native_text: str | None, dtype: str) -> dict[str, int] | None:
    """Padding figures of one (orig shape, native shape, dtype), or None when the native shape is not
    channel blocks; cached because a network repeats a few shapes over thousands of rows."""
    orig, native = parse_shape(orig_text), parse_shape(native_text)
    if orig is None or native is None or len(orig) != 4 or len(native) != 5 or dtype not in DTYPE_BYTES:
        return None
    n, c, h, w = orig
    n2, c1, h2, w2, c2 = native
    if (n, h, w) != (n2, h2, w2) or c2 not in BLOCKS or c1 < 1 or c < 1:
        return None
    width = DTYPE_BYTES[dtype]
    aligned_channels = -(-c // c2) * c2
    native_channels = c1 * c2
    if native_channels < c or native_channels > 2 * aligned_channels:
        return None
    native_bytes = n * native_channels * h * w * width
    logical = n * c * h * w * width
    return {
        "channels": c,
        "native_channels": native_channels,
        "channel_block": c2,
        "logical_bytes": logical,
        "native_bytes": native_bytes,
        "padding_bytes": native_bytes - logical,
        "alignment_padding_bytes": n * (aligned_channels - c) * h * w * width,
        "extra_block_bytes": n * (native_channels - aligned_channels) * h * w * width,
    }


def padded_rows(cols: Columns, positions: list[int]) -> list[tuple[int, dict[str, int]]]:
    """(position, padding figures) of the feature rows whose native shape is channel blocks fitting
    their Size, in `positions` order."""
    out = []
    orig_col, native_col, dtype_col, size_col = (
        cols[c] for c in ("orig_shape", "native_shape", "dtype", "size_bytes")
    )
    for p in positions:
        dtype = dtype_col[p]
        figures = layout(as_str(orig_col[p]), as_str(native_col[p]), (as_str(dtype) or "").upper())
        if figures is None:
            continue
        size = as_int(size_col[p])
        if size is None or figures["native_bytes"] > size:
            continue
        out.append((p, figures))
    return out


def _row(cols: Columns, position: int, figures: dict[str, int]) -> dict[str, Any]:
    """The evidence of one counted row: what the log printed, then the padding figures."""
    row: dict[str, Any] = {
        "tensor": as_str(cols["name"][position]),
        "user_op": as_str(cols["user_op"][position]),
        "op_id": as_int(cols["op_id"][position]),
        "line": as_int(cols["line"][position]),
        "orig_shape": as_str(cols["orig_shape"][position]),
        "native_shape": as_str(cols["native_shape"][position]),
        "dtype": (as_str(cols["dtype"][position]) or "").upper(),
    }
    return row | figures


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    cols = columns(log.frames["tensors"])
    table = cols["table"]
    for build_index, positions in cols.builds().items():
        rows = [p for p in positions if type(table[p]) is str and table[p] == "feature"]
        counted = padded_rows(cols, rows)
        if not counted:
            continue
        padded_figures = [f for _, f in counted]
        line_col = cols["line"]
        heavy = [
            _row(cols, position, f)
            for position, f in counted
            if f["padding_bytes"] >= options.min_tensor_bytes
            and f["padding_bytes"] >= options.tensor_share * f["native_bytes"]
        ]
        heavy.sort(key=lambda p: (-p["padding_bytes"], p["line"] or 0))
        for p in heavy[: options.max_findings]:
            share = p["padding_bytes"] / p["native_bytes"]
            yield Finding(
                message=f"{p['tensor']} {p['orig_shape']} {p['dtype']} is stored as {p['native_shape']}: "
                f"{p['native_channels']} channels for {p['channels']}, {fmt_bytes(p['padding_bytes'])} of "
                f"{fmt_bytes(p['native_bytes'])} ({pct(share)}) is padding",
                line=p["line"],
                lines=(p["line"],) if p["line"] else (),
                subject=p["tensor"],
                evidence=p
                | {
                    "share": round(share, 6),
                    "computation": "native = N*C1*H*W*C2*dtype bytes, logical = N*C*H*W*dtype bytes, "
                    "padding = native - logical; alignment = C rounded up to C2, extra = C1*C2 - aligned",
                },
                hint=HINT,
                build_index=build_index,
            )
        total_native = sum(f["native_bytes"] for f in padded_figures)
        total_padding = sum(f["padding_bytes"] for f in padded_figures)
        if total_native and total_padding >= options.total_share * total_native:
            row_lines = [as_int(line_col[position]) for position, _ in counted]
            lines = tuple(
                sorted(v for v, f in zip(row_lines, padded_figures, strict=True) if f["padding_bytes"] and v)
            )
            worst_at = max(range(len(counted)), key=lambda i: padded_figures[i]["padding_bytes"])
            worst = {"tensor": as_str(cols["name"][counted[worst_at][0]]), "line": row_lines[worst_at]}
            yield Finding(
                message=f"channel padding is {fmt_bytes(total_padding)} of {fmt_bytes(total_native)} "
                f"({pct(total_padding / total_native)}) over {len(counted)} feature maps; largest: "
                f"{worst['tensor']} (line {worst['line']})",
                line=lines[0] if lines else None,
                lines=lines,
                subject="feature maps",
                evidence={
                    "padding_bytes": total_padding,
                    "native_bytes": total_native,
                    "share": round(total_padding / total_native, 6),
                    "rows_counted": len(counted),
                    "rows_skipped": len(rows) - len(counted),
                    "computation": "sum over counted feature rows of native - logical bytes",
                },
                hint=HINT,
                build_index=build_index,
            )
