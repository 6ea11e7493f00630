"""Heap memory is not returned after inference: a leak.

## What it does
Reports, per trace:
- per-op heap traces with several inferences whose baseline (the heap before the first op) grows from
  one inference to the next: what one run did not give back;
- per-op heap trace runs that keep more at their end than the other inferences of the trace do:
  kept = total after the last op - the run's baseline, compared with the smallest kept of the trace
  (what every inference legitimately holds at its end, such as its output). A run already reported by
  a growing baseline is not reported twice; one inference alone is never reported, since nothing tells
  its output buffer from a leak;
- heap event logs (ESP-IDF, Mbed) whose replay leaves allocations without a free, when the trace
  records frees at all (an allocation-only excerpt proves nothing) or reports the leak itself
  (`Found 10 leaked bytes in 4 blocks.`);
- a leak the log states without events to replay: ESP-IDF's one-line summary (`12 bytes 'leaked' in
  trace (1 allocations)`) or its unit-test leak check (`... After 291004 bytes free (delta 12)`).

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
from logscope.rules._common import as_int, as_str, fmt_bytes
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
    grown = {as_int(a.run_index) for a, _ in growth}
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
    # Runs that end further above their baseline than the other runs of the trace.
    heap_runs = [
        r
        for r in traced
        if (as_str(r.derivation) or "").startswith("heap trace") and as_int(r.final_bytes) is not None
    ]
    kept_by_run = {
        as_int(r.run_index): (as_int(r.final_bytes) or 0) - (as_int(r.baseline_bytes) or 0) for r in heap_runs
    }
    usual = min(kept_by_run.values()) if len(kept_by_run) > 1 else None
    for row in heap_runs:
        run_index = as_int(row.run_index)
        baseline, final = as_int(row.baseline_bytes) or 0, as_int(row.final_bytes) or 0
        if usual is None or run_index in grown or kept_by_run[run_index] - usual < options.min_bytes:
            continue
        run = runs.get(run_index)
        end_line = as_int(run.end_line) if run is not None else None
        base_line = as_int(run.baseline_line) if run is not None else None
        yield Finding(
            message=f"run {run_index} ends at {fmt_bytes(final)} (line {end_line}), {fmt_bytes(final - baseline)} "
            f"above its {fmt_bytes(baseline)} baseline"
            + (f" (line {base_line})" if base_line is not None else " (first total - first delta)")
            + (
                f"; the other runs keep {fmt_bytes(usual)}"
                if usual
                else "; the other runs end at their baseline"
            ),
            line=end_line,
            lines=tuple(sorted({v for v in (base_line, end_line) if v is not None})),
            subject="heap",
            evidence={
                "run_index": run_index,
                "baseline_bytes": baseline,
                "baseline_line": base_line,
                "final_bytes": final,
                "final_line": end_line,
                "kept_bytes": final - baseline,
                "usual_kept_bytes": usual,
                "computation": "kept = total after the run's last op - the run's baseline; reported when kept - "
                "the smallest kept of the trace's runs >= min_bytes",
            },
            hint="free every buffer allocated during inference, or allocate once at init; prefer a static arena",
        )
    # Event replays.
    replayed: set[int | None] = set()
    for row in memory.itertuples(index=False):
        leak = as_int(row.leak_bytes)
        if leak is not None:
            replayed.add(as_int(row.run_index))
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
    # Leaks the log states, in runs without events to replay.
    for run in log.frames["mcu_runs"].itertuples(index=False):
        reported, line = as_int(run.reported_leak_bytes), as_int(run.reported_leak_line)
        if as_int(run.run_index) in replayed or reported is None or reported < options.min_bytes:
            continue
        blocks = as_int(run.reported_leak_blocks)
        yield Finding(
            message=f"the log reports {fmt_bytes(reported)}"
            + (f" in {blocks} block(s)" if blocks is not None else "")
            + f" not freed (line {line})",
            line=line,
            lines=(line,) if line is not None else (),
            subject="heap",
            evidence={
                "run_index": as_int(run.run_index),
                "reported_leak_bytes": reported,
                "reported_leak_blocks": blocks,
                "reported_leak_line": line,
                "computation": "as printed (no allocation events to replay)",
            },
            hint="free every buffer allocated in the traced path, or allocate once at init; a heap trace "
            "(heap_trace_start / heap_trace_dump) names the callers",
        )
