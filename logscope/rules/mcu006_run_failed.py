"""An MCU run failed: the runtime, the platform or the test said so.

## What it does
Reports every run whose status is `failed`: the log printed an allocation failure (TFLM `Failed to
allocate memory for tensor_info, 1320 bytes required`, `Arena size is too small for all buffers`, even
when an 80-column console cut the line), a failed call (`AllocateTensors() failed`, `Invoke failed`), a
crash report (Mbed OS `FaultType: HardFault`) or a failed unit test (Unity `...:FAIL: ...`). The
finding cites the first failure, which is the cause, and the crash that followed it. A failure that
states how many bytes the arena lacks is reported by `arena-too-small` (MCU005) instead, once.

## Why it matters
A run that failed produced no inference: its memory figures stop at the failure, and a CI job that
only looks for a peak or a budget sees nothing wrong. The first failure is where to look: the
HardFault that follows a failed allocation is the application using a model that was never allocated.

## Example
`fixtures/mcu/30-issue-tf-35794-tflm-tensor-info-alloc-mbedos-hardfault-k64f.txt`:
```text
Failed to allocate memory for tensor_info, 1320 bytes required
AllocateTensors() failed

++ MbedOS Fault Handler ++

FaultType: HardFault
```

## How to fix
- Allocation failures: enlarge the tensor arena (or the heap it is taken from), or shrink the model;
  the bytes the runtime says it required are the minimum to add.
- Stop after a failed `AllocateTensors()` / `Invoke()` instead of running the interpreter anyway: the
  HardFault is the symptom, the failed call the cause.
- Failed tests: the Unity line names the test and the assertion.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str
from logscope.rules.finding import Finding, Severity

CODE = "MCU006"
NAME = "run-failed"
SEVERITY = Severity.error
NEEDS = ("mcu_runs",)

HINTS = {
    "allocation-failure": "enlarge the tensor arena (or the heap it comes from) by at least the bytes the "
    "runtime required, or shrink the model; stop when AllocateTensors() fails",
    "arena-too-small": "enlarge the tensor arena to the size the runtime needed, or shrink the model's "
    "activations",
    "allocate-tensors-failed": "the error printed before it says what could not be allocated; stop when "
    "AllocateTensors() fails instead of invoking the interpreter",
    "invoke-failed": "the error printed before it names the failing op; check the op resolver and the "
    "input tensor's type and shape",
    "hard-fault": "a HardFault after a failed call is the application using what was never set up: check "
    "every return code; otherwise decode PC and LR with the map file",
    "test-failed": "the Unity line names the test and the failed assertion",
}


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    for run in log.frames["mcu_runs"].itertuples(index=False):
        if as_str(run.status) != "failed":
            continue
        line = as_int(run.status_line)
        if line is not None and line == as_int(run.over_budget_line):
            continue  # the runtime said how many bytes are missing: arena-too-small (MCU005) reports it
        run_index = as_int(run.run_index)
        reason = as_str(run.status_reason) or "failed"
        fault, fault_line = as_str(run.fault), as_int(run.fault_line)
        message = f"run {run_index} failed ({reason}) at line {line}: {as_str(run.status_message)!r}"
        if fault and fault_line != line:
            message += f"; then {fault} (line {fault_line})"
        yield Finding(
            message=message,
            line=line,
            lines=tuple(sorted({v for v in (line, fault_line) if v is not None})),
            subject=f"run {run_index}",
            evidence={
                "run_index": run_index,
                "status": "failed",
                "status_reason": reason,
                "status_line": line,
                "status_message": as_str(run.status_message),
                "fault": fault,
                "fault_line": fault_line,
            },
            hint=HINTS.get(
                reason, "the first failure the log shows is the cause; what follows is its effect"
            ),
        )
