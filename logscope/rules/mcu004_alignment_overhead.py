"""Allocator alignment overhead: memory used beyond what was requested.

## What it does
Reads allocator categories that print both figures (TFLM `RecordingMicroAllocator`: `used N bytes with
alignment overhead (requested M bytes for K allocations)`, the generic benchmark's allocation table) and
reports, as information, a category whose overhead `used - requested` is at least `min_bytes` (256 B)
and at least `min_share` (10%) of the requested bytes.

## Why it matters
Each allocation is rounded up to the allocator's alignment (16 B in TFLM's arena); many small
allocations (per-op data, quantisation parameters) can waste a noticeable part of a small arena.

## Example
A passing case, `fixtures/mcu/02-tflm-profiler-ticks-csv-plus-allocations-stm32h745-kws.txt`:
```text
[RecordingMicroAllocator] 'Persistent buffer data' used 5884 bytes with alignment overhead (requested 5812 bytes for 34 allocations)
```
72 B over 34 allocations (1.2%): normal.

## How to fix
Merge small allocations (allocate one block for several op-data structs), or reduce the alignment where
the target allows it.

## Options
- `min_bytes` (int, 256): smaller overheads are not reported.
- `min_share` (float, 0.10): overhead share of the requested bytes that is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str, fmt_bytes, pct
from logscope.rules.finding import Finding, Severity

CODE = "MCU004"
NAME = "alignment-overhead"
SEVERITY = Severity.info
NEEDS = ("arena",)


@dataclass(frozen=True)
class Options:
    min_bytes: int = 256
    min_share: float = 0.10


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    arena = log.frames["arena"]
    rows = arena[arena["used_bytes"].notna() & arena["requested_bytes"].notna()]
    for row in rows.sort_values("line").itertuples(index=False):
        used, requested = as_int(row.used_bytes) or 0, as_int(row.requested_bytes) or 0
        overhead = used - requested
        if requested <= 0 or overhead < options.min_bytes or overhead < options.min_share * requested:
            continue
        line = as_int(row.line)
        count = as_int(row.count)
        yield Finding(
            message=f"'{as_str(row.category)}' uses {fmt_bytes(used)} for {fmt_bytes(requested)} requested"
            + (f" in {count} allocations" if count else "")
            + f": {fmt_bytes(overhead)} ({pct(overhead / requested)}) of alignment overhead",
            line=line,
            lines=(line,) if line is not None else (),
            subject=as_str(row.category),
            evidence={
                "run_index": as_int(row.run_index),
                "used_bytes": used,
                "requested_bytes": requested,
                "count": count,
                "overhead_bytes": overhead,
                "computation": "overhead = used - requested",
            },
            hint="merge small allocations into one block, or reduce the alignment where the target allows",
        )
