"""A layer that matters spends far more cycles moving data than computing (bandwidth-bound).

## What it does
The aim is to find layers whose memory traffic outweighs their compute by more than 4x. RKNN logs
print no separate read and write byte counts per layer; they print, per layer, the cycles spent moving data to and from DDR
(`DDR Cycles`) and the cycles the NPU computes (`NPU Cycles`), with `Total Cycles` = max(DDR, NPU)
(checked on every row of [03], [07] and [11]). logscope therefore reads "read/write ratio" as
**DDR cycles / NPU cycles**: above 1 the layer waits on memory, above `max_ratio` (4) its compute units
sit idle at least three quarters of the layer's time.

It reads the `perf` tables (`eval_perf` / `RKNN_QUERY_PERF_DETAIL`, [03] [07] [11] [59]) and the
build-time layer tables (`RKNNModelBuildPass` / `Network Layer Information Table`, [09] [31] [33]
[50]), and only judges layers that matter: a layer is reported when its ratio is above `max_ratio`
and it takes at least `min_share` (5%) of the table's total. The total is time when the table has
times: the log's printed `Total Operator Elapsed Per Frame Time(us)` for a perf table, else the sum of
the Time(us) column; a table without times (build-time tables) uses Total Cycles and their sum.
Without a printed total, a table with fewer than `min_layers` (10) such rows is an excerpt ([31] and
[33] are 7 and 6 rows copied into issues) and is not judged: it cannot say which layers are heavy.

Layers with NPU cycles 0 are skipped. Every Concat, Split, Add, MaxPool and Resize row of [03], [07]
and [11] (32, 32 and 16 rows) prints NPU cycles 0 and all its cost as DDR cycles, and no other op
type does: the table books them as pure data movement, so their ratio is undefined and would flag
every one of them whatever the model. Whether a Concat needs
to move its bytes at all is MEM007's question (`concat-not-in-place`); their time is in the perf table
and its ranking. Simulator builds print 0 in every cycle column ([09]) and are not judged.

Severity is **info**, as for NPU002: the model is correct and runs, the table qualifies its own
figures ([11] lines 27-28: "The performance result is just for debugging, may worse than actual
performance"), and the remedy is a change to the network with its own trade-offs. The finding says
where time goes, not that something is broken.

## Why it matters
A bandwidth-bound layer runs at the speed of DDR, not of the NPU: more MAC units, a higher NPU clock or
better quantisation do not make it faster, while every byte it does not move does. Typical culprits
are 1×1 and depthwise convolutions on large maps, transposed convolutions used as upsampling, and
layers whose tensors do not fit the on-chip buffers.

## Example
`fixtures/rknn/11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log` (YOLOv5s on RK3588, line 35):
```text
5    ConvRelu         INT8     NPU    (1,64,160,160),(64,1,3,3),(64)               (1,64,160,160)         421114         25600          421114         390            6.56           100.0%/0.0%/0.0% - Up:0.0%             17             7664           8960           2432.09        Conv:Conv_6
```
421,114 DDR vs 25,600 NPU cycles: 16.4× (RW 2432.09 KB). The layer takes 390 µs of the printed
27,987 µs (1.4%), so at the default `min_share` it is not reported; with `min_share = 0.01` it is. No
real fixture has a layer above both defaults: the layers of [03], [07] and [11] with 5% of the time
or more are at most 2.5× (the first convolution of [11], 851,599 vs 345,600 cycles, 14.4%), and the
17 layers of [11] above 4× take 0.4–2.3% each.

## How to fix
- Move fewer bytes: shrink the map earlier (stride or pooling before the wide layers), reduce channels,
  or replace a large 1×1 / depthwise pair by a layer that reuses what it loads.
- Let RKNN fuse it with its neighbours (`optimization_level=3`, newest toolkit) so intermediate maps
  never reach DDR; replace a transposed convolution used as upsampling by `Resize` (nearest).
- Use channel counts that are multiples of the NPU channel block (16 for INT8), so no padding is moved.
- On RK3588, put internal memory in SRAM (`RKNN_INTERNAL_MEM_TYPE=sram`) for the hot feature maps.

## Options
- `max_ratio` (float, 4.0): DDR cycles / NPU cycles above this is bandwidth-bound.
- `min_share` (float, 0.05): only layers with at least this share of the total time (else cycles).
- `min_layers` (int, 10): without a printed total, tables with fewer timed (else cycled) rows are not
  judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from logscope.model import ParsedLog
from logscope.rules._common import (
    as_float,
    as_int,
    as_str,
    columns,
    filled_frame,
    grouped,
    pct,
    printed_perf_total,
)
from logscope.rules.finding import Finding, Severity

CODE = "NPU003"
NAME = "bandwidth-bound-layer"
SEVERITY = Severity.info
NEEDS = ("perf|layers",)


@dataclass(frozen=True)
class Options:
    max_ratio: float = 4.0
    min_share: float = 0.05
    min_layers: int = 10


OPTIONS = Options

HINT = (
    "move fewer bytes: shrink the map earlier or reduce channels; let RKNN fuse the layer "
    "(optimization_level=3, newest toolkit); use channel counts that are multiples of the NPU channel "
    "block; on RK3588 put internal memory in SRAM (RKNN_INTERNAL_MEM_TYPE=sram)"
)


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    for frame_name in ("perf", "layers"):
        frame = filled_frame(log, frame_name)
        if frame is not None:
            yield from _check_table(log, frame_name, frame, options)


def _check_table(log: ParsedLog, frame_name: str, table: pd.DataFrame, options: Options) -> Iterator[Finding]:
    cols = columns(table)
    if cols.missing("ddr_cycles").all():
        return  # every simulator build prints no cycles
    # The common case decided with numpy: no row can be over the ratio (tested against a slightly
    # lower bound, float64 being inexact past 2**53); otherwise the test below decides.
    ddr_values, npu_values = cols.ints("ddr_cycles"), cols.ints("npu_cycles")
    known = ~cols.missing("ddr_cycles") & ~cols.missing("npu_cycles") & (npu_values > 0)
    bound = options.max_ratio * npu_values
    if not (known & (ddr_values >= bound - np.abs(bound) * 1e-9)).any():
        return
    ddr, npu = table["ddr_cycles"], table["npu_cycles"]
    over = (ddr.notna() & npu.notna() & (npu > 0) & (ddr > options.max_ratio * npu)).fillna(False)
    builds = table["build_index"]
    flagged = builds[over.to_numpy(dtype=bool)]
    keep = builds.isin(flagged.dropna().unique()).fillna(False) | (builds.isna() & bool(flagged.isna().any()))
    for build_index, layers in grouped(table[keep.to_numpy(dtype=bool)]):
        candidates = layers[over.loc[layers.index].to_numpy(dtype=bool)]
        times = layers["time_us"]
        timed = times.notna() & (times > 0)
        printed, total_line = printed_perf_total(log, build_index) if frame_name == "perf" else (None, None)
        if timed.any():
            basis, unit = "time", "µs"
            counted = int(timed.sum())
            total = printed if printed is not None else int(times[timed].sum())
        else:
            basis, unit, printed, total_line = "cycles", "cycles", None, None
            cycles = layers["total_cycles"].fillna(layers[["ddr_cycles", "npu_cycles"]].max(axis=1))
            cycled = cycles.notna() & (cycles > 0)
            counted = int(cycled.sum())
            total = int(cycles[cycled].sum())
        if not total or (printed is None and counted < options.min_layers):
            continue
        if printed is not None:
            of_what = f"the printed {total} µs total (line {total_line})"
        else:
            of_what = f"the {total} {unit} summed over {counted} layers"
        for row in candidates.itertuples(index=False):
            ddr_cycles, npu_cycles = as_int(row.ddr_cycles) or 0, as_int(row.npu_cycles) or 1
            total_cycles = as_int(row.total_cycles)
            amount = as_int(row.time_us) if basis == "time" else (total_cycles or max(ddr_cycles, npu_cycles))
            share = (amount or 0) / total
            if share < options.min_share:
                continue
            ratio = ddr_cycles / npu_cycles
            line = as_int(row.line)
            rw_kb = as_float(row.rw_kb)
            full_name = as_str(row.full_name)
            layer_id = as_int(row.layer_id)
            rw_text = f", RW {rw_kb:g} KB" if rw_kb is not None else ""
            message = (
                f"layer {layer_id} {row.op_type} ({full_name}) is bandwidth-bound: {ddr_cycles} DDR vs "
                f"{npu_cycles} NPU cycles ({ratio:.1f}×{rw_text}); it takes {amount} {unit}, "
                f"{pct(share)} of {of_what}"
            )
            yield Finding(
                message=message,
                line=line,
                lines=tuple(sorted({v for v in (line, total_line) if v is not None})),
                subject=full_name or f"layer {layer_id}",
                evidence={
                    "table": frame_name,
                    "layer": layer_id,
                    "op_type": as_str(row.op_type),
                    "ddr_cycles": ddr_cycles,
                    "npu_cycles": npu_cycles,
                    "total_cycles": total_cycles,
                    "ratio": round(ratio, 6),
                    "max_ratio": options.max_ratio,
                    "rw_kb": rw_kb,
                    "time_us": as_int(row.time_us),
                    "share_basis": basis,
                    "share": round(share, 6),
                    "total": total,
                    "total_line": total_line,
                    "rows_counted": counted,
                    "mac_usage": as_str(row.mac_usage),
                    "input_shapes": as_str(row.input_shapes),
                    "output_shape": as_str(row.output_shape),
                    "computation": "ratio = DDR Cycles / NPU Cycles (logscope's reading of 'read/write ratio': "
                    "the log prints no read and write bytes); share = Time(us) / the printed total time (else "
                    "the sum of Time(us)), or Total Cycles / their sum when the table has no times",
                },
                hint=HINT,
                build_index=build_index,
            )
