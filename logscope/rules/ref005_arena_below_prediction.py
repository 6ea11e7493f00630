"""The arena size the log states is smaller than the tensor arena the model needs.

## What it does
Runs only on an MCU trace checked against a .tflite model (`logscope check TRACE --model MODEL.tflite`).
Compares the arena size the log states (`kTensorArenaSize`, "arena size", a budget line the MCU parser
reads into `budget_bytes`) with the predicted `tensor_arena` (head + tail, `logscope.reference.tflm`)
and reports a shortfall.

## Why it matters
`AllocateTensors()` fails when head + tail do not fit, on the board, after flashing. People find the
size by trial and error; the prediction gives it before the board is touched.

## Example
A trace stating a 16 KiB arena for `kws_int8.tflite`, which needs 24,272 B on the x86-64 interpreter:
```text
Arena size: 16384 bytes
```
Reported: 7,888 B short.

## How to fix
Set `kTensorArenaSize` to at least the predicted figure (`logscope reference MODEL.tflite --format c
--margin 0.1` prints the line), or shrink the model's largest live tensors.

## Options
- `min_shortfall_bytes` (int, 1): a smaller shortfall is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.reference.tflm_items import STATED_ARENA
from logscope.rules._common import as_int
from logscope.rules.finding import Finding, Severity

CODE = "REF005"
NAME = "arena-below-prediction"
SEVERITY = Severity.error
NEEDS = ("check_summary",)


@dataclass(frozen=True)
class Options:
    min_shortfall_bytes: int = 1


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    frame = log.frames.get("check_summary")
    if frame is None or frame.empty:
        return
    for r in frame[frame["item"] == STATED_ARENA].itertuples(index=False):
        stated, needed, line = as_int(r.log_value), as_int(r.reference_value), as_int(r.log_line)
        if stated is None or needed is None or needed - stated < options.min_shortfall_bytes:
            continue
        yield Finding(
            message=f"the arena the log states ({stated} B) is {needed - stated} B short of the "
            f"predicted tensor_arena ({needed} B, head + tail)",
            line=line,
            lines=(line,) if line is not None else (),
            subject="tensor_arena",
            evidence={
                "stated_bytes": stated,
                "needed_bytes": needed,
                "shortfall_bytes": needed - stated,
                "min_shortfall_bytes": options.min_shortfall_bytes,
            },
            hint="set kTensorArenaSize to at least the prediction (logscope reference MODEL.tflite --format c)",
        )
