"""The feature-map pool is much larger than the tensors that are ever live at the same time.

## What it does
Compares the pool span from the feature-tensor table (max End − min Start over the pool-resident rows,
which reproduces `Total Internal Memory Size`) with a lower bound of live bytes derived from the table
(`logscope.analysis.pool`): a tensor consumed by ops k1..kn is live from step k1−1 to step kn, and at
each step the live tensors need their own bytes, each tensor once and rows the log places in
overlapping ranges (aliases) once; the bound is the busiest step's total and never exceeds the span.
Reports a build whose pool exceeds that bound by more than `max_ratio` (1.5×) and by at least
`min_slack_bytes`.

RKNN's allocator places each output first-fit at the lowest free address in execution order. On simple
chains that lands 1.17–1.46× above the bound (1.46× in [09], 1.34× in [29]),
so the default ratio only reports pools beyond that normal range.

## Why it matters
Slack is memory the compiler reserved that no schedule of these tensors needs. Above the usual range it
points at tensors kept alive too long (a graph output or a Concat input held across many ops) or at a
very unlucky placement order.

## Example
A passing case, `fixtures/rknn/29-doc-rknpu2-sram-runtime-log-level3-rk3588.log`:
```text
3   ConvRelu       output4  INT8     (1,32,112,112) (1,4,112,112,16) | 0xff466c00 0xff52ac00 0x000c4000 | 0x00000000
4   ConvRelu       output6  INT8     (1,64,112,112) (1,4,112,112,16) | 0xff52ac00*0xff5eec00 0x000c4000 | 0x00000000
Total Internal Memory Size: 2157568
```
The bound is output4 + output6 = 1,605,632 B; the pool is 2,157,568 B, 1.34× the bound: RKNN's usual
first-fit overhead, not reported.

## How to fix
- Find the tensors that stay live across the busiest step (Concat inputs, outputs consumed much later)
  and move their consumers closer to their producers.
- Try a newer RKNN-Toolkit2 and `optimization_level=3`.
- If the model runs next to others, share one internal buffer (`RKNN_FLAG_MEM_ALLOC_OUTSIDE`).

## Options
- `max_ratio` (float, 1.5): pool / lower bound above this is reported.
- `min_slack_bytes` (int, 64 KiB): smaller slack is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import KiB, fmt_bytes
from logscope.rules._pool import feature_pools
from logscope.rules.finding import Finding, Severity

CODE = "MEM006"
NAME = "allocator-slack"
SEVERITY = Severity.warning
NEEDS = ("tensors",)


@dataclass(frozen=True)
class Options:
    max_ratio: float = 1.5
    min_slack_bytes: int = 64 * KiB


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    for build_index, pool in feature_pools(log).items():  # builds ascending, rows outside any build last
        if pool.matches_total is False or not pool.lower_bound_bytes:
            continue
        slack = pool.span_bytes - pool.lower_bound_bytes
        ratio = pool.span_bytes / pool.lower_bound_bytes
        if ratio <= options.max_ratio or slack < options.min_slack_bytes:
            continue
        step = pool.lower_bound_step or 0
        lines = {pool.first_line, pool.last_line}
        if pool.internal_line is not None:
            lines.add(pool.internal_line)
        yield Finding(
            message=f"the feature-map pool spans {fmt_bytes(pool.span_bytes)} but at most "
            f"{fmt_bytes(pool.lower_bound_bytes)} must be live at once (while op {step} runs): "
            f"{ratio:.2f}× the lower bound, {fmt_bytes(slack)} of slack",
            line=pool.internal_line if pool.internal_line is not None else pool.first_line,
            lines=tuple(sorted(lines)),
            subject="feature-map pool",
            evidence={
                "pool_span_bytes": pool.span_bytes,
                "internal_bytes": pool.internal_bytes,
                "internal_line": pool.internal_line,
                "lower_bound_bytes": pool.lower_bound_bytes,
                "lower_bound_step": step,
                "lower_bound_ops": list(pool.lower_bound_ops),
                "lower_bound_tensors": list(pool.lower_bound_tensors),
                "lower_bound_lines": list(pool.lower_bound_lines),
                "ratio": round(ratio, 6),
                "slack_bytes": slack,
                "table_lines": [pool.first_line, pool.last_line],
                "computation": "span = max(End) - min(Start) over pool-resident feature rows; lower bound = "
                "max over step j of the bytes of the tensors live at j (from first consumer - 1 to last "
                "consumer), each name once and pairwise disjoint in address (logscope.analysis.pool)",
            },
            hint="move consumers of long-lived tensors (Concat inputs, late-used outputs) next to their "
            "producers; try a newer toolkit; share one internal buffer across models",
            build_index=build_index,
        )
