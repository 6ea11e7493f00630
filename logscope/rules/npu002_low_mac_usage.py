"""One of the heaviest layers uses only a small fraction of the NPU's MAC units.

## What it does
From a layer table with per-layer time and MAC usage (`eval_perf` / `rknn_query` perf detail), takes the
`top` (5) layers by time, and reports each that takes at least `min_time_share` (5%) of the total time
while its MAC usage is under `mac_below` (10%). The total is the one the log prints (`Total Operator
Elapsed Per Frame Time(us)`), else the sum of the table's times; without a printed total, tables with
fewer than `min_timed_layers` (10) timed rows are not judged (an elided table cannot say which layers
are the heaviest). With several NPU cores (`6.95/6.95/6.95`) the highest core's figure is used. The
evidence adds the DDR and NPU cycle counts: DDR cycles above NPU cycles mean the layer waits on memory.

## Why it matters
Time spent at a few percent MAC usage is NPU time that does no arithmetic. The usual causes are a first
convolution over 3 input channels (most MAC lanes idle), a 1×1 convolution on a huge map that is
bound by DDR bandwidth, and layers split across cores that do not divide well.

## Example
`fixtures/rknn/03-perf-detail-cpp-yolov8-1920-rk3588.log` (YOLOv8n, 1920×1920 input):
```text
2    ConvExSwish      UINT8   NPU    (1,3,1920,1920),(16,3,3,3),(16)  (1,16,960,960)  1091036  8294400  8294400  16130  2.41/0.00/0.00  100.0%/0.0%/0.0%  10802  Conv:/model.0/conv/Conv
```
The first convolution takes 16,130 µs of 128,441 µs (12.6%) at 2.41% MAC usage.

## How to fix
- First layer over 3 channels: reduce the input resolution, or fold a space-to-depth (Focus-style)
  reshape into the input so the convolution sees 12 channels.
- DDR-bound 1×1 convolutions on large maps: shrink the map earlier (stride), reduce channels, or enable
  the NPU SRAM for internal memory (RK3588, `RKNN_INTERNAL_MEM_TYPE=sram`).
- Multi-core runs: compare with a single-core run (`core_mask`); small layers often get slower when split.

## Options
- `mac_below` (float, 10.0): MAC usage (percent) under this is low.
- `min_time_share` (float, 0.05): only layers with at least this share of the summed time.
- `top` (int, 5): how many of the heaviest layers are considered.
- `min_timed_layers` (int, 10): tables with fewer timed rows are not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str, columns, filled_frame, grouped, pct, printed_perf_total
from logscope.rules.finding import Finding, Severity

CODE = "NPU002"
NAME = "low-mac-usage"
SEVERITY = Severity.info
NEEDS = ("perf|layers",)


@dataclass(frozen=True)
class Options:
    mac_below: float = 10.0
    min_time_share: float = 0.05
    top: int = 5
    min_timed_layers: int = 10


OPTIONS = Options


def mac_percent(text: str | None) -> float | None:
    """`"2.41/0.00/0.00"` -> 2.41 (the busiest core); `"15.88"` -> 15.88; anything else -> None."""
    if not text:
        return None
    try:
        return max(float(part) for part in text.replace("%", "").split("/"))
    except ValueError:
        return None


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    for frame_name in ("perf", "layers"):
        frame = filled_frame(log, frame_name)
        if frame is not None:
            yield from _check_table(log, frame, options)


def _check_table(log: ParsedLog, table: Any, options: Options) -> Iterator[Finding]:
    cols = columns(table)
    if cols.missing("time_us").all() or not (cols.ints("time_us") > 0).any():
        return  # no timed layer in any build (every simulator build): nothing to split by build
    for build_index, layers in grouped(table):
        timed = layers[layers["time_us"].notna() & (layers["time_us"] > 0)]
        if timed.empty:
            continue
        printed, total_line = printed_perf_total(log, build_index)
        if printed is None and len(timed) < options.min_timed_layers:
            continue
        total = printed if printed is not None else int(timed["time_us"].sum())
        basis = (
            f"the {total} µs total (line {total_line})"
            if printed is not None
            else f"the {total} µs summed over {len(timed)} layers"
        )
        heaviest = timed.sort_values(["time_us", "line"], ascending=[False, True]).head(options.top)
        for row in heaviest.itertuples(index=False):
            mac = mac_percent(as_str(row.mac_usage))
            time_us = as_int(row.time_us) or 0
            share = time_us / total
            if mac is None or mac >= options.mac_below or share < options.min_time_share:
                continue
            ddr, npu = as_int(row.ddr_cycles), as_int(row.npu_cycles)
            bound = ddr is not None and npu is not None and ddr > npu
            line = as_int(row.line)
            message = (
                f"layer {as_int(row.layer_id)} {row.op_type} ({as_str(row.full_name)}) takes {time_us} µs, "
                f"{pct(share)} of {basis}, at {mac:.2f}% MAC usage"
            )
            if bound:
                message += f"; DDR-bound ({ddr} DDR vs {npu} NPU cycles)"
            yield Finding(
                message=message,
                line=line,
                lines=tuple(sorted({v for v in (line, total_line) if v is not None})),
                subject=as_str(row.full_name) or f"layer {as_int(row.layer_id)}",
                evidence={
                    "layer": as_int(row.layer_id),
                    "op_type": as_str(row.op_type),
                    "time_us": time_us,
                    "total_time_us": total,
                    "total_time_line": total_line,
                    "timed_layers": len(timed),
                    "time_share": round(share, 6),
                    "mac_usage": as_str(row.mac_usage),
                    "mac_percent": mac,
                    "ddr_cycles": ddr,
                    "npu_cycles": npu,
                    "input_shapes": as_str(row.input_shapes),
                    "output_shape": as_str(row.output_shape),
                    "computation": "share = Time(us) / the printed total time (else the sum of the table's "
                    "Time(us)); MAC = highest core's MacUsage",
                },
                hint="3-channel first layer: smaller input or a space-to-depth input; DDR-bound: shrink the map "
                "earlier or put internal memory in SRAM; multi-core: compare with a single-core run",
                build_index=build_index,
            )
