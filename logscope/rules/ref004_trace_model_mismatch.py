"""An MCU trace disagrees with the TFLM arena prediction of the model it was checked against.

## What it does
Runs only on an MCU trace checked against a .tflite model (`logscope check TRACE --model MODEL.tflite`).
It reads the check's `check_summary` rows and reports, in one finding per kind of evidence:
- **another model**: the printed TfLiteEvalTensor count is not the model's tensor count, the
  NodeAndRegistration count not its operator count, a per-op heap trace runs another number of
  operators, or a profiler lists operator types the model does not have (or misses some it has). TFLM
  allocates one eval tensor per tensor and one node struct per operator on every board, so a different
  count means the trace and the model do not belong together — every other comparison is then moot;
- **head differs**: the printed `Arena allocation head` differs from the reproduced GreedyMemoryPlanner
  plan by more than `max_head_difference_bytes` (the cause names scratch buffers of an optimized kernel
  set when the counts match);
- **unexplained per-op deltas**: heap-trace ops whose delta differs from the model's change in live
  bytes (its outputs allocated, the inputs it reads last freed) by at least `min_delta_bytes`: a scratch
  buffer, a leak or a copy, as the check's cause says.

## Why it matters
The arena size that ships is the one the trace showed. A trace of another model (an older .tflite, a
different input size) gives an arena that is wrong for the model in the firmware; a head above the plan
means kernels request scratch memory the model alone does not explain.

## Example
`fixtures/tflm-corpus/kws_int8.txt` (the tflite-micro interpreter's printout for `kws_int8.tflite`)
checked against `mobilenet_small_int8.tflite`:
```text
[RecordingMicroAllocator] 'TfLiteEvalTensor data' used 840 bytes with alignment overhead (requested 840 bytes for 35 allocations)
```
35 eval tensors, the model has 89: reported as another model. Against `kws_int8.tflite` every figure is
reproduced to the byte and nothing is reported.

## How to fix
- Another model: check the trace against the .tflite that was flashed (same file, same input size).
- Head above the plan: look at the kernels' scratch requests (`--kernels cmsis-nn` predicts CMSIS-NN's);
  size the arena from the printout, not from the tensor plan alone.
- Per-op deltas: a delta given back by the next op is a scratch buffer; one never given back is a leak.

## Options
- `max_head_difference_bytes` (int, 0): a head difference up to this is not reported.
- `min_delta_bytes` (int, 1024): a smaller unexplained per-op delta is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.reference.tflm_items import HEAD, MEMBERSHIP_ITEMS, OP_DELTA_PREFIX
from logscope.rules._common import as_int, as_str
from logscope.rules.finding import Finding, Severity

CODE = "REF004"
NAME = "trace-model-mismatch"
SEVERITY = Severity.warning
NEEDS = ("check_summary",)

_AGREES = ("matches", "the same operator types")


@dataclass(frozen=True)
class Options:
    max_head_difference_bytes: int = 0
    min_delta_bytes: int = 1024


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    frame = log.frames.get("check_summary")
    if frame is None or frame.empty:
        return
    rows: list[dict[str, Any]] = [
        {
            "item": as_str(r.item) or "",
            "log": as_int(r.log_value),
            "ref": as_int(r.reference_value),
            "diff": as_int(r.difference),
            "cause": as_str(r.likely_cause) or "",
            "line": as_int(r.log_line),
        }
        for r in frame.itertuples(index=False)
    ]
    wrong = [r for r in rows if r["item"] in MEMBERSHIP_ITEMS and r["cause"] not in _AGREES]
    if wrong:
        lines = tuple(sorted({r["line"] for r in wrong if r["line"] is not None}))
        yield Finding(
            message="the trace does not belong to this model: "
            + "; ".join(
                f"{r['item'].split(' (')[0]} {r['log']} vs {r['ref']} in the model ({r['cause']})"
                for r in wrong
            ),
            line=lines[0] if lines else None,
            lines=lines,
            subject="model",
            evidence={"rows": wrong},
            hint="check the trace against the .tflite that was flashed (same file, same input size)",
        )
        return
    head = next((r for r in rows if r["item"] == HEAD), None)
    if (
        head is not None
        and head["diff"] is not None
        and abs(head["diff"]) > options.max_head_difference_bytes
    ):
        yield Finding(
            message=f"the arena head ({head['log']} B) differs from the TFLM plan of the model "
            f"({head['ref']} B) by {head['diff']:+d} B: {head['cause']}",
            line=head["line"],
            lines=(head["line"],) if head["line"] is not None else (),
            subject="arena head",
            evidence={
                "log_bytes": head["log"],
                "plan_bytes": head["ref"],
                "difference_bytes": head["diff"],
                "max_head_difference_bytes": options.max_head_difference_bytes,
            },
            hint="size tensor_arena from this printout; --kernels cmsis-nn predicts CMSIS-NN's scratch buffers",
        )
    deltas = [
        r
        for r in rows
        if r["item"].startswith(OP_DELTA_PREFIX)
        and r["diff"] is not None
        and abs(r["diff"]) >= options.min_delta_bytes
    ]
    for r in deltas:
        yield Finding(
            message=f"{r['item']}: {r['log']:+d} B in the trace, {r['ref']:+d} B from the model's tensors: {r['cause']}",
            line=r["line"],
            lines=(r["line"],) if r["line"] is not None else (),
            subject=r["item"].removeprefix(OP_DELTA_PREFIX).split(" delta")[0],
            evidence={
                "trace_delta_bytes": r["log"],
                "model_delta_bytes": r["ref"],
                "difference_bytes": r["diff"],
                "min_delta_bytes": options.min_delta_bytes,
            },
            hint="a delta given back by the next op is a scratch buffer; one never given back is a leak",
        )
