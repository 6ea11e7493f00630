"""The compiler reported an error or a broken tensor that did not stop the run.

## What it does
Reports, per build and kind, the compiler messages that mean the generated model is suspect even though
the run went on: REGTASK register fields that overflow their bit width, ops the compiler could not
place (`Unkown op target: 0`, sic), and tensors of size zero (`invalid tensor reset size: 0`). The
severity follows the log's own level (`E` lines are errors, `W` lines warnings), except that an op
without a target in a build that then finished (`rknn building done`) is a warning: the compiler
placed the op after all (the `Clip` of [41] runs on the NPU).

## Why it matters
A register field that overflows is truncated: the NPU runs the layer with wrong parameters, which shows
up as wrong outputs rather than a crash ([18], where the model also needed +10 GB of host RAM). An op without a target
and a zero-size tensor mean the compiler lost track of part of the graph; in the report [18] comes from,
the zero-size tensor is followed by a failed allocation of size 0.

## Example
`fixtures/rknn/18-issue-tk2-193-regtask-bitwidth-errors-tk2.log`:
```text
E RKNN: [16:50:25.930] REGTASK: The bit width of field value exceeds the limit, target: v2, offset: 0x4030, shift = 0, limit: 0x1fff, value: 0x3fff
```
`value: 0x3fff` needs 14 bits; the field holds 13 (`limit: 0x1fff`).

## How to fix
- REGTASK overflow: a layer dimension (width, height or channels × stride) is too large for the NPU's
  registers; reduce the input size, or split the layer (tile the input) before conversion.
- Unknown op target: check the op against the target's support list and update RKNN-Toolkit2.
- Zero-size tensor: fix the input shapes (static shapes, `dynamic_input`), run onnxsim, check the
  shape of the tensors around it.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str, columns, first_line, message_groups
from logscope.rules.finding import Finding, Severity

CODE = "BLD002"
NAME = "compiler-error"
SEVERITY = Severity.error
NEEDS = ("messages",)

KINDS = {
    "regtask-overflow": (
        "register field overflow",
        "a layer dimension is too large for the NPU's registers: reduce the input size or tile the layer",
    ),
    "unknown-op-target": (
        "op without a target",
        "check the op against the target's support list and update RKNN-Toolkit2",
    ),
    "zero-size-tensor": (
        "zero-size tensor",
        "fix the input shapes (static shapes / dynamic_input) and simplify the model with onnxsim",
    ),
}


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    groups = message_groups(log, KINDS)
    if not groups:
        return
    builds = columns(log.frames["builds"])
    done = {
        as_int(b)
        for b, status in zip(builds["build_index"], builds["status"], strict=True)
        if as_str(status) == "done"
    }
    messages = columns(log.frames["messages"])
    categories, line_col, level_col, text_col = (
        messages[c] for c in ("category", "line", "level", "message")
    )
    for build_index, rows in groups:
        for category, (label, hint) in KINDS.items():
            own = [p for p in rows if categories[p] == category]
            if not own:
                continue
            lines = tuple(int(line_col[p]) for p in own)
            levels = {level_col[p] for p in own if as_str(level_col[p]) is not None}
            distinct = list(dict.fromkeys(first_line(text_col[p]) for p in own))
            severity = Severity.error if "E" in levels else Severity.warning
            if category == "unknown-op-target" and build_index in done:
                severity = Severity.warning
            yield Finding(
                message=f"{label}: {len(own)} line(s) from the compiler, first at line {lines[0]}: {distinct[0]!r}",
                line=lines[0],
                lines=lines,
                subject=label,
                evidence={
                    "category": category,
                    "levels": sorted(levels),
                    "count": len(own),
                    "distinct_messages": distinct[:10],
                    "build_finished": build_index in done,
                },
                hint=hint,
                severity=severity,
                build_index=build_index,
            )
