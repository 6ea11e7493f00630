"""Operator scratch memory is a large share of the total.

## What it does
Where the log prints operator scratch separately (`Internal memory` in the compact `[Allocate]`
summary, column `scratch_bytes`), reports a build whose scratch exceeds `max_share` (20%) of the total.
The total is the printed `Total memory`, or else weight + activation + scratch (stated in the evidence).
RKNN build logs do not print scratch: their "internal" memory is the feature maps, so they are never
checked here.

## Why it matters
Scratch is working space inside operators (im2col buffers, reorder and concat staging). Background
note 002: in a typical CNN it stays under 10%; above 20% operator fusion or reuse is not working, and
the graph usually has many Concat or Transpose ops.

## Example
A passing case, `fixtures/synthetic/compact-summary-yolov5s.log` (synthetic, after note 002):
```text
I [Allocate] Internal memory: 1.23 MB
I [Allocate] Total memory: 22.13 MB
```
1.23 / 22.13 = 5.6%, under the limit.

## How to fix
- Look for Concat / Transpose / Reshape chains and fold them (move a Concat next to its producers,
  remove layout round trips).
- Build with `optimization_level=3` so more ops are fused.

## Options
- `max_share` (float, 0.20): scratch above this fraction of the total is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import Row, as_int, columns, fmt_bytes, pct
from logscope.rules.finding import Finding, Severity

CODE = "MEM003"
NAME = "high-scratch-share"
SEVERITY = Severity.warning
NEEDS = ("memory",)


@dataclass(frozen=True)
class Options:
    max_share: float = 0.20


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    # The columns read, as lists shared with the other rules; a row only where a scratch is printed.
    memory = columns(log.frames["memory"])
    for position, scratch_bytes in enumerate(memory["scratch_bytes"]):
        scratch = as_int(scratch_bytes)
        if scratch is None:
            continue
        row = Row(memory, position)
        total, total_line = as_int(row.total_bytes), as_int(row.total_line)
        computation = "printed total"
        if total is None:
            weight, activation = as_int(row.weight_bytes), as_int(row.activation_bytes)
            if weight is None or activation is None:
                continue
            total = weight + activation + scratch
            computation = "total = weight + activation + scratch"
        if total <= 0 or scratch / total <= options.max_share:
            continue
        share = scratch / total
        line = as_int(row.scratch_line)
        yield Finding(
            message=f"operator scratch {fmt_bytes(scratch)} (line {line}) is {pct(share)} of the total "
            f"{fmt_bytes(total)}, above {pct(options.max_share, 0)}",
            line=line,
            lines=tuple(sorted({v for v in (line, total_line) if v is not None})),
            subject="operator scratch",
            evidence={
                "scratch_bytes": scratch,
                "scratch_line": line,
                "total_bytes": total,
                "total_line": total_line,
                "share": round(share, 6),
                "computation": computation,
                "max_share": options.max_share,
                "source": str(row.source),
            },
            hint="fold Concat/Transpose/Reshape chains and build with optimization_level=3 so ops fuse",
            build_index=as_int(row.build_index),
        )
