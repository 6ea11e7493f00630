"""The memory breakdown is far from the typical CNN shape (information, with the figures).

## What it does
Splits a build's memory into weights, activations (feature maps) and operator scratch, and reports, as
information, each share further than `margin` (5 points) outside the typical band of a CNN on an NPU
toolchain: weights 40–60%, activations 30–50%, scratch under 10%. The total is the printed total where
the log has one (`Total memory`, eval_memory's `Total Memory`); RKNN build logs print none, so there it
is weight + internal (+ scratch when known), which the evidence states. A printed total that the known
parts (weight, activation, scratch, other) cover by less than `min_coverage` (90%) is not judged:
toolkit2 1.5's eval_memory total holds 29% that no line names ([11]), and shares of it would mislead.
Each memory source is judged on its own figures; builds under `min_total_bytes` are skipped (a
one-layer test net has no meaningful shape).

## Why it matters
The breakdown says which lever moves memory. Weight-dominated models shrink with quantisation, pruning
or weight compression, and barely react to a smaller input; activation-dominated ones shrink with input
size and reuse, not with weight tricks. Looking only at the total is the most common mistake in
reading these logs.

## Example
`fixtures/rknn/09-...-rv1106-tk2-1.5.2-simulator.log`:
```text
D RKNN: [15:13:15.953] Total Weight Memory Size: 4447296
D RKNN: [15:13:15.953] Total Internal Memory Size: 1756160
```
Weights are 4447296 / (4447296 + 1756160) = 71.7% and activations 28.3%: a weight-dominated model
(MobileNetV1's 1001-class classifier alone holds 1,025,024 B of weights).

## How to fix
Nothing is wrong by itself; use the shares to pick the lever:
- weight-heavy: INT8 everywhere (check `hybrid-dtype-fallback`), weight compression, pruning, a smaller
  classifier head;
- activation-heavy: smaller input, fewer parallel branches, better reuse (MEM001);
- scratch-heavy: see `high-scratch-share` (MEM003).

## Options
- `weight_min` (float, 0.40), `weight_max` (float, 0.60): typical weight share.
- `activation_min` (float, 0.30), `activation_max` (float, 0.50): typical activation share.
- `scratch_max` (float, 0.10): typical scratch share ceiling.
- `margin` (float, 0.05): how far outside a band a share must be to count as far from typical.
- `min_coverage` (float, 0.90): the named parts must cover this share of a printed total.
- `min_total_bytes` (int, 1 MiB): smaller totals are not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import MiB, Row, as_int, columns, fmt_bytes, pct
from logscope.rules.finding import Finding, Severity

CODE = "MEM004"
NAME = "atypical-memory-breakdown"
SEVERITY = Severity.info
NEEDS = ("memory",)


@dataclass(frozen=True)
class Options:
    weight_min: float = 0.40
    weight_max: float = 0.60
    activation_min: float = 0.30
    activation_max: float = 0.50
    scratch_max: float = 0.10
    margin: float = 0.05
    min_coverage: float = 0.90
    min_total_bytes: int = 1 * MiB


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    # The columns read, as lists shared with the other rules, not a tuple of all ~45 columns per row.
    memory = columns(log.frames["memory"])
    for row in (Row(memory, position) for position in range(len(memory))):
        weight = as_int(row.weight_bytes)
        activation = as_int(row.activation_bytes)
        if activation is None:
            activation = as_int(row.internal_bytes)
        if weight is None or activation is None:
            continue
        scratch = as_int(row.scratch_bytes)
        total, total_line = as_int(row.total_bytes), as_int(row.total_line)
        if total is None:
            total = weight + activation + (scratch or 0)
            computation = "total = weight + activation" + (" + scratch" if scratch is not None else "")
            computation += " (the log prints no total)"
        else:
            computation = "printed total"
            named = weight + activation + (scratch or 0) + (as_int(row.other_bytes) or 0)
            if named < options.min_coverage * total:
                continue
        if total < options.min_total_bytes or total <= 0:
            continue
        shares = {"weight": weight / total, "activation": activation / total}
        if scratch is not None:
            shares["scratch"] = scratch / total
        bands = {
            "weight": (options.weight_min, options.weight_max),
            "activation": (options.activation_min, options.activation_max),
            "scratch": (0.0, options.scratch_max),
        }
        outside = [
            k
            for k, v in shares.items()
            if not bands[k][0] - options.margin <= v <= bands[k][1] + options.margin
        ]
        if not outside:
            continue
        weight_line = as_int(row.weight_line)
        activation_line = as_int(row.activation_line) or as_int(row.internal_line)
        parts = ", ".join(f"{k} {pct(v)}" for k, v in shares.items())
        typical = ", ".join(
            f"{k} {pct(bands[k][0], 0)}–{pct(bands[k][1], 0)}"
            if k != "scratch"
            else f"scratch <{pct(bands[k][1], 0)}"
            for k in outside
        )
        lean = (
            "weight-dominated"
            if shares["weight"] > options.weight_max
            else ("activation-dominated" if shares["activation"] > options.activation_max else "unusual")
        )
        yield Finding(
            message=f"{lean} memory: {parts} of {fmt_bytes(total)} (typical CNN: {typical})",
            line=weight_line,
            lines=tuple(
                sorted({v for v in (weight_line, activation_line, total_line, as_int(row.scratch_line)) if v})
            ),
            subject="memory breakdown",
            evidence={
                "weight_bytes": weight,
                "weight_line": weight_line,
                "activation_bytes": activation,
                "activation_line": activation_line,
                "scratch_bytes": scratch,
                "total_bytes": total,
                "total_line": total_line,
                "shares": {k: round(v, 6) for k, v in shares.items()},
                "outside_band": outside,
                "computation": computation,
                "source": str(row.source),
            },
            hint="weight-heavy: INT8 everywhere, weight compression, pruning, a smaller head; "
            "activation-heavy: smaller input, better reuse; scratch-heavy: see MEM003",
            build_index=as_int(row.build_index),
        )
