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

import numpy as np

from logscope.model import ParsedLog
from logscope.rules._common import (
    Columns,
    Row,
    as_float,
    as_int,
    as_str,
    build_slices,
    columns,
    filled_frame,
    first_line,
    message_positions,
)
from logscope.rules.finding import Finding, Severity

CODE = "NPU001"
NAME = "cpu-fallback"
SEVERITY = Severity.warning
NEEDS = ("layers|perf|perf_ranking",)

IO_OPS = {"InputOperator", "OutputOperator"}
CELLS = ("line", "layer_id", "op_type", "full_name")
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
    for table in (frame for n in ("layers", "perf") if (frame := filled_frame(log, n)) is not None):
        yield from _check_table(log, columns(table))


def _check_table(log: ParsedLog, cols: Columns) -> Iterator[Finding]:
    is_cpu = cols.flags("target", lambda v: v == "CPU")
    # Only tables with a layer on the CPU are read build by build (the test below, on the whole table).
    if not is_cpu.any():
        return
    is_npu = cols.flags("target", lambda v: v == "NPU")
    is_compute = ~cols.flags("op_type", lambda v: v in IO_OPS)  # a missing op type counts as compute
    order = cols.ordered()
    compute_rows = order[is_compute[order]]  # by build, then line
    build_codes, builds = cols.build_codes()
    _, bounds = build_slices(build_codes[compute_rows], len(builds))  # already by build: the order is kept
    cpu_rows = compute_rows[is_cpu[compute_rows]]
    # Cells only for the CPU layers: a build has hundreds of layers, a few on the CPU.
    cells = dict(zip(cpu_rows.tolist(), cols.pick(cpu_rows.tolist(), CELLS), strict=True))
    unsupported: dict[int | None, list[Row]] | None = None
    for code in np.unique(build_codes[cpu_rows]).tolist():
        build_index = builds[code]
        segment = compute_rows[bounds[code] : bounds[code + 1]]
        on_cpu, npu = is_cpu[segment], is_npu[segment]
        compute = {
            i: cells[p]
            for i, p in zip(np.flatnonzero(on_cpu).tolist(), segment[on_cpu].tolist(), strict=True)
        }
        if unsupported is None:
            unsupported = _unsupported_by_build(log)
        named: dict[str, tuple[int, str]] = {}
        for msg in unsupported.get(build_index, ()):
            match = _NODE.search(str(msg.message))
            if match:
                named[match.group(1).rstrip(",")] = (as_int(msg.line) or 0, first_line(msg.message))
        cpu = list(compute.values())
        if on_cpu.all():
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
        npu_seen = np.cumsum(npu).tolist()  # NPU layers up to and including each compute layer
        for index, row in compute.items():
            before = index > 0 and npu_seen[index - 1] > 0
            after = index + 1 < len(segment) and npu_seen[-1] > npu_seen[index]
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
    ranking = filled_frame(log, "perf_ranking")
    if ranking is None:
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
