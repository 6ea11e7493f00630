"""Layers fall back to the CPU: between NPU layers, after an unsupported-op message, or the whole model.

## What it does
Reads the `Target` column of the layer table and reports, per build:
- each compute layer on the CPU that sits between NPU layers (an NPU → CPU → NPU round trip);
- CPU layers whose op the compiler said it cannot lower (`No lowering found for: ...`,
  `unsupported op`), citing that message;
- a model whose compute layers all run on the CPU (RKNN: `detect pure cpu op model`);
- from the ranking table under eval_perf / the C API's perf detail (`Operator Time Consuming Ranking
  Table`), each op type whose CPU time is at least `min_cpu_time_pct` of the measured time: its share
  is the printed `TimeRatio(%)` times its `CPUTime(us)` / `TotalTime(us)`, so it holds for an excerpt
  whose other rows were cut.
`InputOperator` / `OutputOperator` rows are always on the CPU and are ignored, and so are CPU layers at
the edges of an NPU graph (a `Reshape` right after the input), which cost no extra transfer.

## Why it matters
The CPU is one to two orders of magnitude slower than the NPU for these ops, and every NPU ↔ CPU switch
copies the whole feature map out of the NPU's native layout and back: time, DDR bandwidth and an extra
buffer per switch.

## Example
`fixtures/rknn/40-tutorial-acos-pure-cpu-layer-table-abridged-tk2-2.3.2.log`:
```text
D RKNN: detect pure cpu op model.
No lowering found for: unsupported_acos_node,
node type = Acos, use CustomOperatorLower instead.
D RKNN: 1    Acos             FLOAT16  CPU    (1,5)        (1,5)        Acos:unsupported_acos_node
```

## How to fix
- Replace the op with ones the NPU supports (Acos → a polynomial or a lookup table; check the
  RKNN-Toolkit2 operator support list for the target).
- Register a custom operator (`rknn.reg_custom_op`, CPU or GPU) if it must stay, and keep it at the
  graph's edge so it costs one transfer, not two.
- Update RKNN-Toolkit2: support lists grow between releases.

## Options
- `min_cpu_time_pct` (float, 5.0): ranking rows whose CPU time is at least this percentage of the
  measured time are reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate

from logscope.model import ParsedLog
from logscope.rules._common import (
    Columns,
    Row,
    as_float,
    as_int,
    as_str,
    columns,
    first_line,
    message_positions,
)
from logscope.rules.finding import Finding, Severity

CODE = "NPU001"
NAME = "cpu-fallback"
SEVERITY = Severity.warning
NEEDS = ("layers|perf|perf_ranking",)

IO_OPS = {"InputOperator", "OutputOperator"}
_NODE = re.compile(r"(?:No lowering found for|unsupported op)[:\s]+([\w./:-]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Options:
    min_cpu_time_pct: float = 5.0


OPTIONS = Options

HINT = (
    "replace the op with NPU-supported ones (see the RKNN operator support list), register it as a custom "
    "op at the graph edge, or update RKNN-Toolkit2"
)


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    yield from _ranking_cpu_time(log, options)
    tables = [log.frames[n] for n in ("layers", "perf") if n in log.frames and len(log.frames[n])]
    for table in tables:
        yield from _check_table(log, columns(table))


def _check_table(log: ParsedLog, cols: Columns) -> Iterator[Finding]:
    target_col, op_col = cols["target"], cols["op_type"]
    # Only tables with a layer on the CPU are read build by build (the test below, on the whole table).
    if not any(t == "CPU" for t in target_col if type(t) is str):
        return
    unsupported: dict[int | None, list[Row]] | None = None
    for build_index, positions in cols.by_line().items():
        compute_positions = [p for p in positions if type(op_col[p]) is not str or op_col[p] not in IO_OPS]
        targets = [t if type(t) is str else as_str(t) for t in (target_col[p] for p in compute_positions)]
        # Rows only for the CPU layers: a build has hundreds of layers, a few on the CPU.
        on_cpu = [i for i, t in enumerate(targets) if t == "CPU"]
        if not on_cpu:
            continue
        compute = {i: Row(cols, compute_positions[i]) for i in on_cpu}
        if unsupported is None:
            unsupported = _unsupported_by_build(log)
        named: dict[str, tuple[int, str]] = {}
        for msg in unsupported.get(build_index, ()):
            match = _NODE.search(str(msg.message))
            if match:
                named[match.group(1).rstrip(",")] = (as_int(msg.line) or 0, first_line(msg.message))
        cpu = list(compute.values())
        if all(t == "CPU" for t in targets):
            cpu_lines = {v for v in (as_int(r.line) for r in cpu) if v is not None}
            lines = tuple(sorted(cpu_lines | {v[0] for v in named.values()}))
            ops = ", ".join(f"{r.op_type} (layer {as_int(r.layer_id)})" for r in cpu)
            yield Finding(
                message=f"every compute layer runs on the CPU: {ops}"
                + (
                    f"; the compiler could not lower {', '.join(named)} (line {min(v[0] for v in named.values())})"
                    if named
                    else ""
                ),
                line=lines[0] if lines else None,
                lines=lines,
                subject=", ".join(str(as_str(r.full_name)) for r in cpu),
                evidence={
                    "cpu_layers": [
                        {
                            "layer": as_int(r.layer_id),
                            "op_type": as_str(r.op_type),
                            "line": as_int(r.line),
                            "full_name": as_str(r.full_name),
                        }
                        for r in cpu
                    ],
                    "npu_layers": 0,
                    "unsupported_messages": [{"line": v[0], "text": v[1]} for v in named.values()],
                },
                hint=HINT,
                build_index=build_index,
            )
            continue
        npu = [t == "NPU" for t in targets]
        seen_before: list[bool] = list(accumulate(npu, lambda a, b: a or b))
        seen_after: list[bool] = list(accumulate(reversed(npu), lambda a, b: a or b))[::-1]
        for index, row in compute.items():
            before = index > 0 and seen_before[index - 1]
            after = index + 1 < len(targets) and seen_after[index + 1]
            full_name = as_str(row.full_name) or ""
            reported = next((v for k, v in named.items() if k and k in full_name), None)
            if not (before and after) and reported is None:
                continue
            line = as_int(row.line)
            why = "between NPU layers" if before and after else "at the graph edge"
            message = f"layer {as_int(row.layer_id)} {row.op_type} ({full_name}) runs on the CPU {why}"
            if reported is not None:
                message += f"; the compiler could not lower it (line {reported[0]})"
            yield Finding(
                message=message,
                line=line,
                lines=tuple(sorted({v for v in (line, reported[0] if reported else None) if v is not None})),
                subject=full_name or f"layer {as_int(row.layer_id)}",
                evidence={
                    "layer": as_int(row.layer_id),
                    "op_type": as_str(row.op_type),
                    "line": line,
                    "npu_before": before,
                    "npu_after": after,
                    "unsupported_message": None
                    if reported is None
                    else {"line": reported[0], "text": reported[1]},
                },
                hint=HINT,
                build_index=build_index,
            )


def _ranking_cpu_time(log: ParsedLog, options: Options) -> Iterator[Finding]:
    """Op types the ranking table shows spending time on the CPU."""
    ranking = log.frames.get("perf_ranking")
    if ranking is None or ranking.empty:
        return
    cols = columns(ranking)
    for build_index, positions in cols.by_line().items():
        for row in (Row(cols, p) for p in positions):
            cpu, total, ratio = (
                as_int(row.cpu_time_us),
                as_int(row.total_time_us),
                as_float(row.time_ratio_pct),
            )
            if not cpu or not total or ratio is None:
                continue
            share = ratio * cpu / total
            if share < options.min_cpu_time_pct:
                continue
            line = as_int(row.line)
            yield Finding(
                message=f"{row.op_type} runs {cpu} us on the CPU ({cpu / total:.0%} of its {total} us, "
                f"{share:.1f}% of the measured time; ranking row, line {line})",
                line=line,
                lines=(line,) if line is not None else (),
                subject=str(as_str(row.op_type)),
                evidence={
                    "op_type": as_str(row.op_type),
                    "call_number": as_int(row.call_number),
                    "cpu_time_us": cpu,
                    "total_time_us": total,
                    "time_ratio_pct": ratio,
                    "cpu_time_pct": round(share, 2),
                    "computation": "time_ratio_pct * cpu_time_us / total_time_us",
                    "line": line,
                },
                hint=HINT,
                build_index=build_index,
            )


def _unsupported_by_build(log: ParsedLog) -> dict[int | None, list[Row]]:
    """The `unsupported-op` messages of each build, in line order."""
    cols = columns(log.frames["messages"])
    builds = cols["build_index"]
    out: dict[int | None, list[Row]] = {}
    for position in message_positions(log, ["unsupported-op"]):
        out.setdefault(as_int(builds[position]), []).append(Row(cols, position))
    return out
