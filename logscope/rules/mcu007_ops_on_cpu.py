"""Operators the NPU compiler left on the microcontroller's CPU.

## What it does
Reads what Arm Vela prints about operator placement for an Ethos-U NPU and reports, per run, the
operators that run on the Cortex-M instead: the split line (`CPU operators = 10 (37.0%)`), the ops
listed under it with `--show-cpu-operations` (`CPU: RESIZE_BILINEAR = name`), and the warnings that
say why an op was placed on the CPU (`Warning: ... is not supported on the NPU. Placing on CPU
instead`, followed by the constraint it broke). Vela leaves its own graph-building ops (constants,
placeholders) out of these counts, so every op it lists is work the CPU does.

## Why it matters
An op on the CPU runs one to two orders of magnitude slower than on the NPU, and every switch between
them passes the feature map through SRAM: time, bandwidth and an extra buffer per switch. The summary
totals (`Total SRAM used`, cycles) cover only the NPU part.

## Example
`tests/rules/cases/MCU007.toml` (Vela 3.x output):
```text
Warning: RESIZE_BILINEAR 'model/resize' is not supported on the NPU. Placing on CPU instead
 - Half_pixel_centers is only supported for 2x upscaling
CPU operators = 1 (20.0%)
NPU operators = 4 (80.0%)
```

## How to fix
- Replace the op with one the NPU supports (the constraint says what is wrong: a scaling factor, a
  data type, a shape), or change its parameters so it meets the constraint.
- Quantise the whole model to int8/int16: float ops always stay on the CPU.
- Keep unavoidable CPU ops at the graph's edge, so there is one switch, not two.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str
from logscope.rules.finding import Finding, Severity

CODE = "MCU007"
NAME = "ops-on-cpu"
SEVERITY = Severity.warning
NEEDS = ("mcu_runs",)


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    layers = log.frames["mcu_layers"]
    placed = layers[layers["target"].fillna("") == "CPU"] if "target" in layers else layers.iloc[0:0]
    for run in log.frames["mcu_runs"].itertuples(index=False):
        run_index = as_int(run.run_index)
        cpu, npu, split_line = as_int(run.cpu_ops), as_int(run.npu_ops), as_int(run.ops_split_line)
        rows = placed[placed["run_index"] == run_index].sort_values("line")
        # A warning and the `CPU: ...` listing name the same op: one entry, with the warning's reason.
        merged: dict[tuple[str | None, str | None], dict[str, Any]] = {}
        for row in rows.itertuples(index=False):
            op = merged.setdefault(
                (as_str(row.op_type), as_str(row.name)),
                {
                    "op_type": as_str(row.op_type),
                    "name": as_str(row.name),
                    "why": None,
                    "line": as_int(row.line),
                },
            )
            if as_str(row.source) == "vela-warning" and op["why"] is None:
                op["why"] = as_str(row.detail)
        ops = list(merged.values())
        if not cpu and not ops:
            continue
        named = "; ".join(
            f"{op['op_type']} '{op['name']}' (line {op['line']})" + (f": {op['why']}" if op["why"] else "")
            for op in ops[:5]
        )
        if cpu and npu is not None:
            share = f"{cpu} of {cpu + npu} operators ({100 * cpu / (cpu + npu):.1f}%)"
            message = f"run {run_index}: {share} run on the CPU (line {split_line})"
        elif cpu:
            message = f"run {run_index}: {cpu} operators run on the CPU (line {split_line})"
        else:
            message = f"run {run_index}: {len(ops)} operator(s) placed on the CPU"
        if named:
            message += f": {named}" + (f"; and {len(ops) - 5} more" if len(ops) > 5 else "")
        lines = sorted({v for v in [split_line, *(op["line"] for op in ops)] if v is not None})
        yield Finding(
            message=message,
            line=lines[0] if lines else None,
            lines=tuple(lines),
            subject=", ".join(sorted({str(op["op_type"]) for op in ops})) or f"run {run_index}",
            evidence={
                "run_index": run_index,
                "cpu_ops": cpu,
                "npu_ops": npu,
                "ops_split_line": split_line,
                "cpu_op_rows": ops,
                "computation": "share = CPU operators / (CPU + NPU operators), as Vela counts them",
            },
            hint="replace the op or change it to meet the NPU constraint the warning names, quantise the whole "
            "model, and keep unavoidable CPU ops at the graph's edge",
        )
