"""The activation (feature-map) peak is above the memory budget, or the log itself says it is.

## What it does
Reports a build whose activation memory exceeds `budget_bytes` (10 MiB by default), naming the peak
layer, and reports the compiler's own "activation memory peak exceeds" warning whenever the log prints
one. The activation figure is the printed `Activation memory` (compact summary) or
`Total Internal Memory Size` (RKNN build log: internal memory *is* the feature maps). The peak layer is
the one the log names (`peak at layer: Conv_83`), else the busiest step of the feature-tensor table
(the step with the largest live lower bound, `logscope.analysis.pool`).

## Why it matters
Feature maps are the memory that grows with input size. On an edge board the NPU's internal buffer
competes with the rest of the system; past the budget the model either fails to allocate at init or
pushes other processes out. 10 MiB of activations is the usual warning line for detection models on these boards.

## Example
`fixtures/synthetic/compact-summary-yolov5s.log` (synthetic: the compact compiler summary has no public
sample; written in the summary's own vocabulary):
```text
I [Allocate] Activation memory: 8.56 MB (peak at layer: Conv_83)
W [Warning] Activation memory peak exceeds 10MB, consider reducing input size
```

## How to fix
- Reduce the input size (640×640 → 512×512 cuts activation memory by about 36%).
- Split the model, or move the widest layers later, so fewer large maps are live at once.
- Check `low-memory-reuse` (MEM001): a pool that reuses little is bigger than it needs to be.

## Options
- `budget_bytes` (int, 10 MiB): activation memory above this is reported; accepts `"10MiB"`. The
  finding names where the budget came from: the built-in default, a `--target` preset (no chip in
  `logscope.targets` has a published activation budget yet) or the configuration.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import (
    MiB,
    as_int,
    as_str,
    build_order,
    columns,
    first_line,
    fmt_bytes,
    message_groups,
    provenance,
)
from logscope.rules._pool import cells_by_build, feature_pool
from logscope.rules.finding import Finding, Severity

CODE = "MEM002"
NAME = "activation-peak-over-budget"
SEVERITY = Severity.warning
NEEDS = ("builds",)


@dataclass(frozen=True)
class Options:
    budget_bytes: int = 10 * MiB
    budget_source: str = provenance("budget_bytes")


OPTIONS = Options

HINT = "reduce the input size, split the model, or reorder wide layers so fewer large maps are live at once"


_MEMORY_COLUMNS = ("activation_bytes", "internal_bytes", "activation_line", "peak_layer", "source")


def _activation(memory: list[tuple[Any, ...]]) -> tuple[int | None, int | None, str | None, str]:
    """(bytes, line, peak layer, source) of the build's printed activation figure, from its memory rows
    (`_MEMORY_COLUMNS`, frame order)."""
    for activation, internal, line, peak_layer, source in memory:
        value = as_int(activation)
        if value is None:
            value = as_int(internal)
        if value is not None:
            return value, as_int(line), as_str(peak_layer), str(source)
    return None, None, None, ""


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    # The log's own warnings as positions in `messages` per build (line order), the builds from the
    # shared column lists: no frame is filtered or grouped per build.
    warnings = dict(message_groups(log, ["activation-peak"]))
    memory = cells_by_build(log.frames["memory"], _MEMORY_COLUMNS)
    builds = set(columns(log.frames["builds"]).builds()) | set(warnings)
    for build_index in sorted(builds, key=build_order):
        value, value_line, peak_layer, source = _activation(memory.get(build_index, []))
        own = warnings.get(build_index)
        if not own and (value is None or value <= options.budget_bytes):
            continue  # no finding: the peak is not looked up (a big log has hundreds of such builds)
        pool = feature_pool(log, build_index)
        peak_ops = None
        if peak_layer is None and pool is not None and pool.lower_bound_step is not None:
            step = pool.lower_bound_step
            peak_ops = list(pool.lower_bound_ops)
            peak_layer = f"op {step} ({', '.join(pool.lower_bound_tensors)} live)"
        evidence = {
            "activation_bytes": value,
            "activation_line": value_line,
            "activation_source": source or None,
            "budget_bytes": options.budget_bytes,
            "budget_source": options.budget_source,
            "peak_layer": peak_layer,
            "peak_ops": peak_ops,
        }
        if own:
            messages = columns(log.frames["messages"])
            lines = tuple(int(v) for v in messages.take("line", own))
            text = first_line(messages.cell("message", own[0]))
            message = f"the log warns the activation peak is over its limit (line {lines[0]}): {text!r}"
            if value is not None:
                message += f"; activation memory printed as {fmt_bytes(value)} (line {value_line})"
            if peak_layer:
                message += f", peak at {peak_layer}"
            yield Finding(
                message=message,
                line=lines[0],
                lines=tuple(sorted({*lines, *([value_line] if value_line else [])})),
                subject=peak_layer,
                evidence=evidence | {"log_warning": text, "log_warning_lines": list(lines)},
                hint=HINT,
                build_index=build_index,
            )
        elif value is not None and value > options.budget_bytes:
            message = (
                f"activation memory {fmt_bytes(value)} (line {value_line}) is above the "
                f"{fmt_bytes(options.budget_bytes)} budget ({options.budget_source}) by "
                f"{fmt_bytes(value - options.budget_bytes)}"
            )
            if peak_layer:
                message += f"; peak at {peak_layer}"
            yield Finding(
                message=message,
                line=value_line,
                lines=(value_line,) if value_line else (),
                subject=peak_layer,
                evidence=evidence | {"overshoot_bytes": value - options.budget_bytes},
                hint=HINT,
                build_index=build_index,
            )
