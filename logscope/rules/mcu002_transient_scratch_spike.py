"""An op allocates a large buffer that the next op frees at once: a transient scratch spike.

## What it does
In a per-op heap trace (`Op[i] NAME: delta=..., total=...`), reports an op whose delta is at least
`min_bytes` and at least `min_share` of the run's peak when the next op gives back at least
`fallback` (90%) of it: a buffer that lived for one op, the signature of an im2col or other scratch
buffer. Ordinary activation churn (a Conv2D output freed to 25% by the MaxPool after it) gives back
less and is not reported. In an NNoM compile table, where each layer's scratch is the `buf` column,
reports the peak layer when it is a convolution and its scratch is at least `buf_share` of its
working set (an RNN's `buf` holds its gates and state, not im2col columns).

## Why it matters
A scratch buffer adds directly to the peak at the op that needs it. A published case: a DWConv with
per-channel im2col needed 40 KB of scratch; a direct convolution needed 8 KB.

## Example
A synthetic excerpt in the per-op heap trace format (`Op[i] NAME: delta=..., total=...`); no public
trace shows the pattern:
```text
Op[0] Conv2D: delta=+12000, total=45000
Op[1] Conv2D: delta=+20000, total=65000
Op[2] ReLU: delta=-20000, total=45000
```
Op 1 takes 20,000 B that op 2 gives back: 20,000 B of the 65,000 B peak is transient.

## How to fix
- Use a convolution kernel without im2col (direct or Winograd-free), or one that tiles its scratch.
- Give scratch buffers a place in the arena plan so they share memory with dead activations.

## Options
- `min_bytes` (int, 1 KiB): smaller spikes are not reported.
- `min_share` (float, 0.10): a spike must be at least this share of the run's peak.
- `fallback` (float, 0.90): the next op must give back at least this fraction of the spike.
- `buf_share` (float, 0.25): NNoM peak-layer scratch share of its working set that is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from logscope.model import ParsedLog
from logscope.rules._common import KiB, as_int, as_str, fmt_bytes, pct
from logscope.rules.finding import Finding, Severity

CODE = "MCU002"
NAME = "transient-scratch-spike"
SEVERITY = Severity.warning
NEEDS = ("mcu_memory",)


@dataclass(frozen=True)
class Options:
    min_bytes: int = 1 * KiB
    min_share: float = 0.10
    fallback: float = 0.90
    buf_share: float = 0.25


OPTIONS = Options

HINT = "use a convolution kernel without im2col (or a tiled one), or plan scratch buffers into the arena"


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    peaks = {
        as_int(r.run_index): as_int(r.peak_bytes) for r in log.frames["mcu_memory"].itertuples(index=False)
    }
    ops = log.frames["ops"]
    ops = ops[ops["delta_bytes"].notna()]
    for run_index, rows in ops.groupby("run_index", sort=True):
        peak = peaks.get(as_int(run_index))
        if not peak:
            continue
        ordered = list(rows.sort_values("line").itertuples(index=False))
        for up, down in pairwise(ordered):
            rise, fall = as_int(up.delta_bytes) or 0, as_int(down.delta_bytes) or 0
            if rise < options.min_bytes or rise < options.min_share * peak or -fall < options.fallback * rise:
                continue
            line, next_line = as_int(up.line), as_int(down.line)
            yield Finding(
                message=f"run {as_int(run_index)}: op {as_int(up.op_index)} {up.op_name} takes {fmt_bytes(rise)} "
                f"(line {line}) that op {as_int(down.op_index)} {down.op_name} gives back "
                f"({fmt_bytes(-fall)}, line {next_line}): {pct(rise / peak)} of the {fmt_bytes(peak)} peak is transient",
                line=line,
                lines=tuple(v for v in (line, next_line) if v is not None),
                subject=as_str(up.op_name),
                evidence={
                    "run_index": as_int(run_index),
                    "op_index": as_int(up.op_index),
                    "delta_bytes": rise,
                    "next_op_index": as_int(down.op_index),
                    "next_delta_bytes": fall,
                    "peak_bytes": peak,
                    "computation": "spike = delta of op i; given back = -delta of op i+1",
                },
                hint=HINT,
            )
    layers = log.frames["mcu_layers"]
    memory = log.frames["mcu_memory"]
    for mem in memory.itertuples(index=False):
        run, peak_line = as_int(mem.run_index), as_int(mem.peak_line)
        own = layers[
            (layers["run_index"] == run) & layers["buf_bytes"].notna() & (layers["line"] == peak_line)
        ]
        # im2col is a convolution's scratch; an RNN's `buf` holds its gates and state ([21]).
        own = own[own["op_type"].fillna("").str.contains("Conv", case=False)]
        if own.empty or peak_line is None:
            continue
        layer = own.iloc[0]
        buf, working = as_int(layer["buf_bytes"]) or 0, as_int(layer["working_set_bytes"]) or 0
        if not working or buf < options.min_bytes or buf < options.buf_share * working:
            continue
        yield Finding(
            message=f"run {run}: the peak layer {as_str(layer['name'])} (line {peak_line}) needs "
            f"{fmt_bytes(buf)} of scratch, {pct(buf / working)} of its {fmt_bytes(working)} working set",
            line=peak_line,
            lines=(peak_line,),
            subject=as_str(layer["name"]),
            evidence={"run_index": run, "buf_bytes": buf, "working_set_bytes": working},
            hint=HINT,
        )
