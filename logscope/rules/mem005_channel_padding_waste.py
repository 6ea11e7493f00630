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

import numpy as np

from logscope.analysis.pool import feature_rows
from logscope.model import ParsedLog
from logscope.rules._common import (
    Columns,
    KiB,
    as_int,
    as_str,
    build_slices,
    columns,
    fmt_bytes,
    parse_shape,
    pct,
)
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

_INT64_MAX = 2**63 - 1

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


def counted_rows(cols: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, int]]] | None:
    """(feature rows, counted rows, layout index of each counted row, layouts): positions in frame
    order of the feature rows and of those whose native shape is channel blocks fitting their Size;
    None when the table has no feature rows.

    A network repeats a few (orig shape, native shape, dtype) over thousands of rows: each distinct
    triple is read once (`layout`) and its figures spread to the rows with numpy."""
    feature = np.flatnonzero(feature_rows(cols.frame))  # (the pool's flags: no column encoded for them)
    if not len(feature):
        return None
    (orig, orig_values), (native, native_values), (dtype, dtype_values) = (
        cols.codes(c) for c in ("orig_shape", "native_shape", "dtype")
    )
    n_native, n_dtype = len(native_values) + 1, len(dtype_values) + 1
    key = ((orig[feature] + 1) * n_native + native[feature] + 1) * n_dtype + dtype[feature] + 1
    triples, inverse = np.unique(key, return_inverse=True)
    layouts: list[dict[str, int]] = []
    index = np.full(len(triples), -1, dtype=np.int64)
    for i, k in enumerate(triples.tolist()):
        o, rest = divmod(k, n_native * n_dtype)
        n, d = divmod(rest, n_dtype)
        figures = layout(
            orig_values[o - 1] if o else None,
            native_values[n - 1] if n else None,
            (as_str(dtype_values[d - 1]) or "").upper() if d else "",
        )
        if figures is not None and figures["native_bytes"] <= _INT64_MAX:  # else above any Size
            index[i] = len(layouts)
            layouts.append(figures)
    which = index[inverse.reshape(-1)]
    native_bytes = np.array([f["native_bytes"] for f in layouts] + [0], dtype=np.int64)[which]
    # A missing Size reads as -1: below any native size, so the row is not counted.
    ok = (which >= 0) & (native_bytes <= cols.ints("size_bytes", missing=-1)[feature])
    return feature, feature[ok], which[ok], layouts


def _sums(values: np.ndarray, heads: np.ndarray) -> list[int]:
    """The sums of `values` (int64) from each of `heads` to the next (the last to the end), as Python
    ints: in int64 when no sum can overflow, else in Python integers (a Size near the int64 limit)."""
    if not len(heads):
        return []
    if float(np.abs(values.astype("float64")).max()) * len(values) < 2**62:
        return np.add.reduceat(values, heads).tolist()
    ends = [*heads.tolist()[1:], len(values)]
    listed_values = values.tolist()
    return [sum(listed_values[a:b]) for a, b in zip(heads.tolist(), ends, strict=True)]


def _cells(cols: Columns, positions: list[int]) -> dict[int, dict[str, Any]]:
    """What the log printed on each of `positions` (one read per column for the whole log)."""
    names = ("name", "user_op", "op_id", "line")
    cells = [cols.take(c, positions) for c in names] if positions else [[] for _ in names]
    # The shapes and the dtype from the codes `counted_rows` encoded them to: no column read again.
    for name in ("orig_shape", "native_shape", "dtype"):
        codes, values = cols.codes(name)
        cells.append([None if (code := int(codes[p])) < 0 else values[code] for p in positions])
    return {
        position: {
            "tensor": as_str(name),
            "user_op": as_str(user_op),
            "op_id": as_int(op_id),
            "line": as_int(line),
            "orig_shape": as_str(orig),
            "native_shape": as_str(native),
            "dtype": (as_str(dtype) or "").upper(),
        }
        for position, name, user_op, op_id, line, orig, native, dtype in zip(positions, *cells, strict=True)
    }


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    cols = columns(log.frames["tensors"])
    counted = counted_rows(cols)
    if counted is None:
        return
    feature, positions, which, layouts = counted
    build_codes, builds = cols.build_codes()
    feature_rows = np.bincount(build_codes[feature], minlength=len(builds))
    native = np.array([f["native_bytes"] for f in layouts] + [0], dtype=np.int64)[which]
    padding = np.array([f["padding_bytes"] for f in layouts] + [0], dtype=np.int64)[which]
    lines = cols.ints("line")[positions]
    heavy = (padding >= options.min_tensor_bytes) & (padding >= options.tensor_share * native)
    of_build = build_codes[positions]
    order, bounds = build_slices(of_build, len(builds))  # counted rows by build, frame order within
    # First every build's figures and the rows its findings cite, then those rows' cells at once. The
    # figures of all builds at once (a log has hundreds of builds; numpy calls per build cost more
    # than the rows): sums per build, each build's first row of largest padding, its heavy rows.
    present = np.flatnonzero(bounds[1:] > bounds[:-1])
    heads = bounds[present]
    totals_native, totals_padding = (_sums(values[order], heads) for values in (native, padding))
    by_build = padding[order]
    top = np.maximum.reduceat(by_build, heads) if len(heads) else by_build[:0]
    at_top = np.flatnonzero(by_build == np.repeat(top, np.diff(np.append(heads, len(order)))))
    worst_rows = order[at_top[np.searchsorted(at_top, heads)]].tolist()
    heavy_rows: dict[int, list[int]] = {}
    for i, c in zip(order[heavy[order]].tolist(), of_build[order[heavy[order]]].tolist(), strict=True):
        heavy_rows.setdefault(c, []).append(i)
    plans = []
    for k, code in enumerate(present.tolist()):
        rows = order[bounds[code] : bounds[code + 1]]
        picked = heavy_rows.get(code, [])
        # Largest padding first, then line (a missing line sorts as 0).
        picked.sort(key=lambda i: (-int(padding[i]), int(lines[i])))
        total_native, total_padding = totals_native[k], totals_padding[k]
        worst = None
        if total_native and total_padding >= options.total_share * total_native:
            worst = worst_rows[k]
        plans.append((code, rows, picked[: options.max_findings], total_native, total_padding, worst))
    wanted = sorted({i for plan in plans for i in (*plan[2], *([plan[5]] if plan[5] is not None else []))})
    cells = _cells(cols, positions[wanted].tolist())
    for code, rows, picked, total_native, total_padding, worst in plans:
        build_index = builds[code]
        for i in picked:
            p = cells[int(positions[i])] | layouts[int(which[i])]
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
        if worst is not None:
            cited = lines[rows][(padding[rows] != 0) & (lines[rows] != 0)]
            row_lines = tuple(np.sort(cited).tolist())
            largest = cells[int(positions[worst])]
            count = len(rows)
            yield Finding(
                message=f"channel padding is {fmt_bytes(total_padding)} of {fmt_bytes(total_native)} "
                f"({pct(total_padding / total_native)}) over {count} feature maps; largest: "
                f"{largest['tensor']} (line {largest['line']})",
                line=row_lines[0] if row_lines else None,
                lines=row_lines,
                subject="feature maps",
                evidence={
                    "padding_bytes": total_padding,
                    "native_bytes": total_native,
                    "share": round(total_padding / total_native, 6),
                    "rows_counted": count,
                    "rows_skipped": int(feature_rows[code]) - count,
                    "computation": "sum over counted feature rows of native - logical bytes",
                },
                hint=HINT,
                build_index=build_index,
            )
