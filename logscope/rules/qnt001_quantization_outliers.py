"""Weights with outlier values that the toolkit says may hurt quantisation accuracy.

## What it does
Reads the toolkit's outlier table (`found outlier value, this may affect quantization accuracy` and
the `const name | abs_mean | abs_std | outlier value` rows that follow) and reports, per build, which
constants have outliers and how far out: `|outlier| / abs_mean` and `(|outlier| - abs_mean) / abs_std`.

## Why it matters
INT8 quantisation spends its 256 levels on the tensor's range. One value 10× the mean stretches the
range and leaves few levels for the bulk of the weights, which costs accuracy on exactly those layers.

## Example
`fixtures/rknn/09-...-rv1106-tk2-1.5.2-simulator.log`:
```text
W build: found outlier value, this may affect quantization accuracy
const name                        abs_mean    abs_std     outlier value
const_fold_opt__306               3.48        7.25        42.282
const_fold_opt__296               1.57        5.08        -52.27
```

## How to fix
- Quantise per channel (`quantized_method='channel'`, the default in tk2) and try
  `quantized_algorithm='mmse'` or `'kl_divergence'`.
- Keep the named layers in float16 with hybrid quantisation if accuracy drops.
- Re-train or clip the weights (weight decay, clamping) if the outliers are artefacts.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import as_float, as_int, as_str, columns, message_groups
from logscope.rules.finding import Finding, Severity

CODE = "QNT001"
NAME = "quantization-outliers"
SEVERITY = Severity.warning
NEEDS = ("outliers",)


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    warnings = dict(message_groups(log, ["quant-outliers"]))
    message_lines = columns(log.frames["messages"])["line"]
    cols = columns(log.frames["outliers"])
    names, means, stds, values, row_lines = (
        cols[c] for c in ("const_name", "abs_mean", "abs_std", "outlier_value", "line")
    )
    for build_index, positions in cols.by_line().items():
        consts = []
        for const_name, abs_mean, abs_std, outlier_value, line in (
            (names[p], means[p], stds[p], values[p], row_lines[p]) for p in positions
        ):
            mean, std, value = as_float(abs_mean), as_float(abs_std), as_float(outlier_value)
            entry: dict[str, Any] = {
                "const": as_str(const_name),
                "line": as_int(line),
                "abs_mean": mean,
                "abs_std": std,
                "outlier_value": value,
                "times_mean": round(abs(value) / mean, 2) if value is not None and mean else None,
                "sigmas": round((abs(value) - mean) / std, 2)
                if value is not None and mean is not None and std
                else None,
            }
            consts.append(entry)
        warn_lines = [int(message_lines[p]) for p in warnings.get(build_index, ())]
        lines = tuple(sorted({*warn_lines, *(c["line"] for c in consts if c["line"])}))
        worst = max(consts, key=lambda c: c["times_mean"] or 0)
        yield Finding(
            message=f"{len(consts)} weight tensor(s) with outliers (lines {lines[0]}-{lines[-1]}); worst "
            f"{worst['const']}: {worst['outlier_value']} vs mean |w| {worst['abs_mean']} "
            f"({worst['times_mean']}× the mean)",
            line=lines[0],
            lines=lines,
            subject=worst["const"],
            evidence={
                "constants": consts,
                "warning_lines": warn_lines,
                "computation": "times_mean = |outlier| / abs_mean; sigmas = (|outlier| - abs_mean) / abs_std",
            },
            hint="quantise per channel and try quantized_algorithm='mmse'; keep these layers in float16 "
            "(hybrid quantisation) if accuracy drops",
            build_index=build_index,
        )
