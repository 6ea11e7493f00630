"""The MCU memory peak is above the SRAM budget.

## What it does
For each run of an MCU trace or report, compares the peak memory (the highest total of a per-op heap
trace, the busiest step of a buffer plan or per-layer table, or the tool's reported total) with the
budget: `sram_bytes` when given (`--sram 320KiB`, a `--target` preset or the configuration), else the
budget the log itself states (`RAM budget: 65536 B`, a stated tensor arena size, the SRAM a boot banner
names, ESP-IDF heap region sizes); the finding says which line the budget came from. A peak above the
budget is an error naming the op that makes it and the overshoot.

## Why it matters
An MCU has no virtual memory: past the SRAM size the arena does not fit and the model cannot run, or
the heap overwrites whatever sits next to it. A published case: a keyword-spotting model on an STM32F746
peaked at 340 KB on a 320 KB part.

## Example
`fixtures/synthetic/heap-trace-stm32-uart-bytes-leak.txt` (synthetic: a per-op trace printed over UART):
```text
[    0.004] RAM budget: 65536 B
[    0.986] --- inference 3 ---
[    0.995] Op[2] Conv2D: delta=8000 B, total=69384 B
```
The third inference peaks at 69,384 B in op 2 (Conv2D), 3,848 B over the 65,536 B budget.

## How to fix
- Move weights to flash (`const` / a `.rodata` section) if they sit in SRAM.
- Reuse activation buffers (the planner's arena instead of per-op `malloc`), shrink the peak layer's
  input, or replace im2col convolutions with direct ones (in that STM32F746 case a depthwise convolution's scratch went from 40 KB to 8 KB).
- If the peak grows from run to run, fix the leak first (`heap-leak`, MCU003).

## Options
- `sram_bytes` (int, none): the SRAM budget; accepts `"320KiB"`. Without it the log's own budget is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str, fmt_bytes
from logscope.rules.finding import Finding, Severity

CODE = "MCU001"
NAME = "sram-overrun"
SEVERITY = Severity.error
NEEDS = ("mcu_memory",)


@dataclass(frozen=True)
class Options:
    sram_bytes: int | None = None


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    runs = {as_int(r.run_index): r for r in log.frames["mcu_runs"].itertuples(index=False)}
    for row in log.frames["mcu_memory"].itertuples(index=False):
        run_index = as_int(row.run_index)
        peak = as_int(row.peak_bytes)
        if peak is None:
            continue
        run = runs.get(run_index)
        budget: int | None
        budget_line: int | None
        if options.sram_bytes is not None:
            budget, budget_line = options.sram_bytes, None
            budget_from = "sram option (--sram / target / config)"
        else:
            budget = as_int(row.budget_bytes)
            budget_line = as_int(run.budget_line) if run is not None else None
            label = as_str(run.budget_label) if run is not None else None
            budget_from = (
                "the log"
                + (f"'s {label}" if label else "")
                + (f" (line {budget_line})" if budget_line else "")
            )
        if budget is None or peak <= budget:
            continue
        peak_line = as_int(row.peak_line)
        op_index, op_name = as_int(row.peak_op_index), as_str(row.peak_op_name)
        op_type = as_str(row.peak_op_type)
        label = " ".join(v for v in (op_type if op_type != op_name else None, op_name) if v)
        where = f"op {op_index} {label}" if op_index is not None else (label or "the reported total")
        yield Finding(
            message=f"run {run_index}: peak {fmt_bytes(peak)} at {where} (line {peak_line}) is "
            f"{fmt_bytes(peak - budget)} over the {fmt_bytes(budget)} budget from {budget_from}",
            line=peak_line,
            lines=tuple(sorted({v for v in (peak_line, budget_line) if v is not None})),
            subject=op_name or f"run {run_index}",
            evidence={
                "run_index": run_index,
                "peak_bytes": peak,
                "peak_op_index": op_index,
                "peak_op_name": op_name,
                "peak_op_type": op_type,
                "peak_line": peak_line,
                "budget_bytes": budget,
                "budget_line": budget_line,
                "overshoot_bytes": peak - budget,
                "derivation": as_str(row.derivation),
            },
            hint="move weights to flash, reuse activation buffers or shrink the peak op's input, use direct "
            "convolution instead of im2col; fix any leak first",
        )
