"""Heap memory is not returned after inference: a leak.

## What it does
Reports, per trace:
- per-op heap traces with several inferences whose baseline (the heap before the first op) grows from
  one inference to the next: what one run did not give back;
- heap event logs (ESP-IDF, Mbed) whose replay leaves allocations without a free, when the trace
  records frees at all (an allocation-only excerpt proves nothing) or reports the leak itself
  (`Found 10 leaked bytes in 4 blocks.`).

## Why it matters
A leak of a few hundred bytes per inference exhausts an MCU's heap after hours or days; the symptom is
a hard fault far from the cause. Each run also starts higher, so the peak creeps towards the budget
(see `sram-overrun`, MCU001).

## Example
`fixtures/mcu/18-espidf-sysview-host-heap-log-timestamped.txt` (ESP-IDF `sysview_tracing_heap_log`):
```text
[0.302436000] HEAP: Allocated 4 bytes @ 0x3ffafff0 from task "alloc" on core 0 by:
Found 10 leaked bytes in 4 blocks.
```

## How to fix
- Free every buffer allocated in the inference path (the callers in the trace say where each was
  allocated), or allocate them once at init and reuse them.
- Prefer a static arena (TFLM `tensor_arena`) to per-op `malloc`.

## Options
- `min_bytes` (int, 1): smaller leaks are not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from logscope.model import ParsedLog
from logscope.rules._common import as_int, fmt_bytes
from logscope.rules.finding import Finding, Severity

CODE = "MCU003"
NAME = "heap-leak"
SEVERITY = Severity.warning
NEEDS = ("mcu_memory",)


@dataclass(frozen=True)
class Options:
    min_bytes: int = 1


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    runs = {as_int(r.run_index): r for r in log.frames["mcu_runs"].itertuples(index=False)}
    memory = log.frames["mcu_memory"].sort_values("run_index")
    # Per-op traces: the baseline of each inference against the one before.
    traced = [r for r in memory.itertuples(index=False) if as_int(r.baseline_bytes) is not None]
    growth = [
        (a, b)
        for a, b in pairwise(traced)
        if (as_int(b.baseline_bytes) or 0) - (as_int(a.baseline_bytes) or 0) >= options.min_bytes
    ]
    if growth:
        first, last = growth[0][0], growth[-1][1]
        lines = []
        for a, b in growth:
            for r in (a, b):
                run = runs.get(as_int(r.run_index))
                line = as_int(run.baseline_line) if run is not None else None
                if line is None and run is not None:
                    line = as_int(run.start_line)
                if line is not None:
                    lines.append(line)
        steps = [(as_int(b.baseline_bytes) or 0) - (as_int(a.baseline_bytes) or 0) for a, b in growth]
        start, end = as_int(first.baseline_bytes) or 0, as_int(last.baseline_bytes) or 0
        yield Finding(
            message=f"the heap baseline grows from {fmt_bytes(start)} (run {as_int(first.run_index)}) to "
            f"{fmt_bytes(end)} (run {as_int(last.run_index)}): {fmt_bytes(steps[0])} per inference not given back"
            if len(set(steps)) == 1
            else f"the heap baseline grows from {fmt_bytes(start)} to {fmt_bytes(end)} over {len(steps)} inferences",
            line=min(lines) if lines else None,
            lines=tuple(sorted(set(lines))),
            subject="heap",
            evidence={
                "baselines": [
                    {"run_index": as_int(r.run_index), "baseline_bytes": as_int(r.baseline_bytes)}
                    for r in traced
                ],
                "growth_bytes": steps,
                "computation": "growth = baseline of run k+1 - baseline of run k",
            },
            hint="free every buffer allocated during inference, or allocate once at init; prefer a static arena",
        )
    # Event replays.
    for row in memory.itertuples(index=False):
        leak = as_int(row.leak_bytes)
        if not leak or leak < options.min_bytes:
            continue
        run = runs.get(as_int(row.run_index))
        reported = as_int(run.reported_leak_bytes) if run is not None else None
        reported_line = as_int(run.reported_leak_line) if run is not None else None
        if not (as_int(row.free_count) or reported is not None):
            continue
        message = f"{fmt_bytes(leak)} in {as_int(row.leak_blocks)} block(s) allocated and never freed (event replay)"
        if reported is not None:
            message += f"; the trace reports {fmt_bytes(reported)} (line {reported_line})"
        end_line = as_int(run.end_line) if run is not None else None
        line = reported_line if reported_line is not None else end_line
        yield Finding(
            message=message,
            line=line,
            lines=(line,) if line is not None else (),
            subject="heap",
            evidence={
                "run_index": as_int(row.run_index),
                "leak_bytes": leak,
                "leak_blocks": as_int(row.leak_blocks),
                "alloc_count": as_int(row.alloc_count),
                "free_count": as_int(row.free_count),
                "reported_leak_bytes": reported,
                "reported_leak_line": reported_line,
                "computation": "replay: allocations without a matching free at the end of the trace",
            },
            hint="free every buffer allocated in the traced path (the callers show where), or allocate once at init",
        )
