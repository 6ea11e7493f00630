"""The feature-map pool reuses too little of what the tensors would need without address reuse.

## What it does
Checks the memory reuse rate of each build: the rate the compiler prints (`Memory reuse rate` in the
compact `[Analyze]` summary), or else the rate computed from the feature-tensor table as
`1 - pool span / sum(Size)` over the tensors inside the pool. Below `warn_below` (75%) it is a
warning, below `error_below` (60%) an error.

When the table gives the consuming operator of the tensors, the rule also takes the lower bound of
live feature-map bytes (`logscope.analysis.pool`): at each step, the tensors that must be held (each
from the step before its first consumer to its last consumer), every tensor once and only where the
log gives it bytes of its own (aliased rows, such as Concat inputs inside their output, count once);
the busiest step's total. It never exceeds the pool span. With it comes the best reuse rate these
tensors allow, `1 - lower bound / sum(Size)`. A threshold is only applied when that best rate reaches
it: a small or shallow network whose own shape caps reuse below 75% (a single convolution, a 3-layer
test net) has nothing to fix and is not reported.

## Why it matters
Reuse is what keeps the feature-map pool small: each tensor's bytes are given back once its last
consumer has run. A low rate means tensors that are never live at the same time still got separate
addresses, or that the graph keeps many tensors alive at once (parallel branches, Concat inputs).
The thresholds are rules of thumb for CNNs on NPU toolchains: below 75% is under what a CNN should
reach, below 60% points at many parallel tensors.

## Example
`fixtures/rknn/09-...-rv1106-tk2-1.5.2-simulator.log`, MobileNetV1 on RV1106:
```text
D RKNN: [15:13:15.953] 1   ConvClip       input            INT8  (1,3,224,224)  (1,1,224,224,3)  | 0x00454680 0x00479280 0x00024c00
D RKNN: [15:13:15.953] 2   ConvClip       Relu6__5:0       INT8  (1,32,112,112) (1,2,112,112,16) | 0x00479280 0x004db280 0x00062000
D RKNN: [15:13:15.953] 3   ConvClip       Relu6__7:0       INT8  (1,32,112,112) (1,2,112,112,16) | 0x004db280 0x0053d280 0x00062000
D RKNN: [15:13:15.953] 4   ConvClip       Relu6__9:0       INT8  (1,64,112,112) (1,4,112,112,16) | 0x0053d280 0x00601280 0x000c4000
D RKNN: [15:13:15.953] Total Internal Memory Size: 1756160
```
The pool spans 1,756,160 B for 5,377,762 B of tensors: 67.3% reuse. The busiest step needs
1,204,224 B live (op 3 reads `Relu6__7:0` and writes `Relu6__9:0`, which op 4 reads), so 77.6% was
reachable; the graph input and the first convolution's output keep their own addresses while op 3
runs.

## How to fix
- Build with `optimization_level=3` (the default) and the newest RKNN-Toolkit2; the allocator improves
  between releases.
- Reduce parallel branches and Concat fan-in that keep many tensors alive at once; move a Concat next
  to its producers.
- If several models run one after another, share one internal buffer between them
  (`RKNN_FLAG_MEM_ALLOC_OUTSIDE` / `rknn_set_internal_mem`) instead of chasing reuse inside each.

## Options
- `warn_below` (float, 0.75): a reuse rate under this is a warning.
- `error_below` (float, 0.60): a reuse rate under this is an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_float, as_int, build_order, fmt_bytes, pct
from logscope.rules._pool import cells_by_build, feature_pools
from logscope.rules.finding import Finding, Severity

CODE = "MEM001"
NAME = "low-memory-reuse"
SEVERITY = Severity.warning
NEEDS = ("memory",)


@dataclass(frozen=True)
class Options:
    warn_below: float = 0.75
    error_below: float = 0.60


OPTIONS = Options

HINT = (
    "build with optimization_level=3 and the newest toolkit; reduce parallel branches and Concat fan-in "
    "that keep tensors alive together; share one internal buffer across models (RKNN_FLAG_MEM_ALLOC_OUTSIDE)"
)


def _level(rate: float, options: Options, reachable: float | None) -> Severity | None:
    """Error or warning when `rate` is under a threshold that `reachable` (if known) attains."""
    for threshold, severity in (
        (options.error_below, Severity.error),
        (options.warn_below, Severity.warning),
    ):
        if rate < threshold and (reachable is None or reachable >= threshold):
            return severity
    return None


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    memory = cells_by_build(log.frames["memory"], ("reuse_rate", "reuse_line", "source"))
    pools = None  # every build's pool, asked for once (not once per build), when a build has no printed rate
    for build_index in sorted(memory, key=build_order):
        # The first row with a printed rate, if any.
        printed = next((row for row in memory[build_index] if as_float(row[0]) is not None), None)
        if printed is not None:
            rate = float(printed[0])
            level = _level(rate, options, None)
            if level is not None:
                line = as_int(printed[1])
                yield Finding(
                    message=f"memory reuse rate {pct(rate)} (printed, line {line}) is below "
                    f"{pct(options.error_below if level is Severity.error else options.warn_below, 0)}",
                    line=line,
                    lines=(line,) if line is not None else (),
                    subject="feature-map pool",
                    evidence={
                        "reuse_rate": rate,
                        "reuse_source": str(printed[2]),
                        "reuse_line": line,
                        "warn_below": options.warn_below,
                        "error_below": options.error_below,
                    },
                    hint=HINT,
                    severity=level,
                    build_index=build_index,
                )
            continue
        if pools is None:
            pools = feature_pools(log)
        pool = pools.get(build_index)
        if pool is None or pool.matches_total is False or pool.sum_bytes <= 0:
            continue
        rate = 1.0 - pool.span_bytes / pool.sum_bytes
        reachable = None if pool.lower_bound_bytes is None else 1.0 - pool.lower_bound_bytes / pool.sum_bytes
        level = _level(rate, options, reachable)
        if level is None:
            continue
        threshold = options.error_below if level is Severity.error else options.warn_below
        message = (
            f"feature-map reuse {pct(rate)} is below {pct(threshold, 0)}: the pool spans "
            f"{fmt_bytes(pool.span_bytes)} for {fmt_bytes(pool.sum_bytes)} of tensors "
            f"({pool.row_count} rows, lines {pool.first_line}-{pool.last_line})"
        )
        if reachable is not None and pool.lower_bound_bytes is not None:
            message += (
                f"; at most {fmt_bytes(pool.lower_bound_bytes)} must be live at once (while op "
                f"{pool.lower_bound_step} runs: {', '.join(pool.lower_bound_tensors)}), so {pct(reachable)} "
                "was reachable"
            )
        evidence = {
            "reuse_rate": round(rate, 6),
            "reuse_source": "computed",
            "pool_span_bytes": pool.span_bytes,
            "tensor_sum_bytes": pool.sum_bytes,
            "tensor_rows": pool.row_count,
            "table_lines": [pool.first_line, pool.last_line],
            "internal_bytes": pool.internal_bytes,
            "internal_line": pool.internal_line,
            "rows_outside_pool_lines": list(pool.outside_lines),
            "lower_bound_bytes": pool.lower_bound_bytes,
            "lower_bound_step": pool.lower_bound_step,
            "lower_bound_ops": list(pool.lower_bound_ops) or None,
            "lower_bound_tensors": list(pool.lower_bound_tensors),
            "lower_bound_lines": list(pool.lower_bound_lines),
            "reachable_reuse_rate": None if reachable is None else round(reachable, 6),
            "computation": "reuse = 1 - span/sum; span = max(End) - min(Start) over the pool-resident "
            "feature rows, sum = sum(Size) over their tensors (a name at an address); lower bound = max "
            "over step j of the bytes of the tensors live at j (from first consumer - 1 to last consumer), "
            "each name once and pairwise disjoint in address (logscope.analysis.pool); reachable = "
            "1 - lower bound/sum",
            "warn_below": options.warn_below,
            "error_below": options.error_below,
        }
        lines = [pool.first_line, pool.last_line]
        if pool.internal_line is not None:
            lines.append(pool.internal_line)
        yield Finding(
            message=message,
            line=pool.internal_line if pool.internal_line is not None else pool.first_line,
            lines=tuple(sorted(set(lines))),
            subject="feature-map pool",
            evidence=evidence,
            hint=HINT,
            severity=level,
            build_index=build_index,
        )
