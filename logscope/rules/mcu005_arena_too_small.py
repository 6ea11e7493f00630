"""The tensor arena is too small: the runtime says how many bytes are missing.

## What it does
Reports the runs in which the MCU runtime itself says an allocation did not fit the arena (TFLM
`Failed to resize buffer. Requested: N, available M, missing: K`), as an error with the three figures.

## Why it matters
`AllocateTensors()` fails and the model never runs. The missing figure is exactly how much bigger the
arena (or how much smaller the model) must be.

## Example
`fixtures/mcu/28-tflm-arena-resize-failure-himax-issue36.txt`:
```text
Failed to resize buffer. Requested: 11373728, available 1135736, missing: 10237992
```

## How to fix
- Enlarge `tensor_arena` by at least the missing bytes if the part has the SRAM (check with
  `sram-overrun`, MCU001, and `--sram`).
- Otherwise shrink the model's activations: smaller input, fewer channels in the widest layers, or
  (Ethos-U) let Vela place the arena in a larger memory.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, fmt_bytes
from logscope.rules.finding import Finding, Severity

CODE = "MCU005"
NAME = "arena-too-small"
SEVERITY = Severity.error
NEEDS = ("mcu_runs",)


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    arena = log.frames["arena"]
    for run in log.frames["mcu_runs"].itertuples(index=False):
        missing, line = as_int(run.over_budget_bytes), as_int(run.over_budget_line)
        if not missing or line is None:
            continue
        run_index = as_int(run.run_index)
        failed = arena[(arena["run_index"] == run_index) & (arena["line"] == line)]
        requested = as_int(failed.iloc[0]["requested_bytes"]) if len(failed) else None
        capacity = as_int(failed.iloc[0]["free_bytes"]) if len(failed) else None
        message = f"run {run_index}: the arena is {fmt_bytes(missing)} too small (line {line})"
        if requested is not None:
            message += f": {fmt_bytes(requested)} requested"
            if capacity is not None:
                message += f", {fmt_bytes(capacity)} available"
        yield Finding(
            message=message,
            line=line,
            lines=(line,),
            subject="tensor arena",
            evidence={
                "run_index": run_index,
                "missing_bytes": missing,
                "requested_bytes": requested,
                "available_bytes": capacity,
            },
            hint=f"enlarge tensor_arena by at least {missing} B if the SRAM allows, else shrink the model's activations",
        )
