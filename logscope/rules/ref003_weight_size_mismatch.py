"""The log's weight memory disagrees with the model's weights by more than the usual compiler overheads.

## What it does
Runs only on a log checked against its ONNX model (`logscope check LOG --onnx MODEL`). Compares the
log's `Total Weight Memory Size` with the reference's weight bytes (every weight element at the analysis
dtype — int8 — with int32 biases) and reports a ratio above `max_ratio` (1.25×) or below `min_ratio`
(0.8×) when the difference is at least `min_difference_bytes`.

The compiler's weight memory is never exactly the model's. The check explains the difference row by row
from the log's const table, and the finding carries that breakdown:
- constants the compiler adds (a global AvgPool turned into a depthwise conv: [09] adds a 1024×7×7
  weight and its bias, 106,496 B);
- int32 bias rows padded beyond 4 B per channel ([09]: +37,916 B);
- kernel layout padding of the NPU's weight format ([09]: +44,928 B);
- int64 shape constants (Reshape targets), which the reference does not count as weights;
- reference weights the log does not list (folded away: Relu6's Clip bounds, −2 B in [09]).
Together these are +4.4 % on [09] (4,447,296 B vs 4,257,894 B) and +0.1 % on [29]; the default ratios
leave room for them on small models too, and `min_difference_bytes` keeps tiny models quiet. When more
than half of the log's weight memory is constants matching no weight of the model by element count, the
message asks whether the model is the log's.

## Why it matters
Far more weight memory than the model holds means layers stored in a wider dtype (float16 under hybrid
quantisation, 2 B per weight), large compiler-added constants, or a model other than the one given;
far less means the log's model is smaller than this ONNX (another width, head or input). Either way the
rest of the cross-check compares different things.

## Example
`fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log` checked against a MobileNet
v1 of width 0.5 instead of the 1.0 it was built from:
```text
D RKNN: [15:13:15.953] Total Weight Memory Size: 4447296
D RKNN: [15:13:15.953] Total Internal Memory Size: 1756160
```
The half-width model holds about a third of the weights: reported, with the const table's breakdown.
Against the right model (1.04×) it is not.

## How to fix
- Check the model: the same width, number of classes and input as the build.
- Above: look for float16 layers in the const table (hybrid quantisation) and large compiler-added
  constants; quantise them or change the op the compiler rewrites.
- Below: the compiler folded constant branches away, or the log comes from a smaller model.

## Options
- `max_ratio` (float, 1.25): log / reference weight bytes above this is reported.
- `min_ratio` (float, 0.8): log / reference weight bytes below this is reported.
- `min_difference_bytes` (int, 64 KiB): a smaller difference is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import KiB, fmt_bytes
from logscope.rules._reference import WEIGHTS, build_of_line, summary_row
from logscope.rules.finding import Finding, Severity

CODE = "REF003"
NAME = "weight-size-mismatch"
SEVERITY = Severity.warning
NEEDS = ("check_summary",)

# The parts of the check's `likely_cause` for the weight row (logscope.reference.check._weight_cause).
_PARTS = {
    "compiler_added_constants_bytes": re.compile(r"constants with no ONNX counterpart (\d+) B"),
    "bias_row_padding_bytes": re.compile(r"int32 bias rows ([+-]?\d+) B"),
    "kernel_layout_padding_bytes": re.compile(r"kernel layout padding ([+-]?\d+) B"),
    "int64_shape_constants_bytes": re.compile(r"int64 shape constants (\d+) B"),
    "reference_weights_not_listed_bytes": re.compile(r"reference weights the log does not list (-\d+) B"),
    "unexplained_bytes": re.compile(r"unexplained ([+-]?\d+) B"),
}


@dataclass(frozen=True)
class Options:
    max_ratio: float = 1.25
    min_ratio: float = 0.8
    min_difference_bytes: int = 64 * KiB


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    row = summary_row(log, WEIGHTS)
    if row is None or row["log_value"] is None or not row["reference_value"]:
        return
    logged, reference = row["log_value"], row["reference_value"]
    diff = logged - reference
    ratio = logged / reference
    if abs(diff) < options.min_difference_bytes or options.min_ratio <= ratio <= options.max_ratio:
        return
    cause = row["likely_cause"]
    breakdown = {key: int(m.group(1)) for key, rx in _PARTS.items() if (m := rx.search(cause))}
    line = row["log_line"]
    more = diff > 0
    message = (
        f"the log's weight memory ({fmt_bytes(logged)}) is {ratio:.2f}× the model's weights "
        f"({fmt_bytes(reference)}: weights at the analysis dtype, int32 biases): "
        f"{fmt_bytes(abs(diff))} {'more' if more else 'less'}"
    )
    unmatched = breakdown.get("compiler_added_constants_bytes", 0)
    if unmatched * 2 > logged:
        # Compiler-added constants are a few layers' worth ([09]: 2.4 %); most of the table matching no
        # weight of the model by element count means the model is not the log's.
        message += (
            f"; {fmt_bytes(unmatched)} of the log's constants match no weight of the model by element "
            "count: is this the model the log was built from?"
        )
    explained = [part for part in cause.split("; ")[1:] if part]
    if explained:
        message += " — " + "; ".join(explained)
    hint = (
        "check the model is the log's (width, classes, input); look for float16 layers (hybrid "
        "quantisation) and large compiler-added constants in the const table"
        if more
        else "check the model is the log's (width, classes, input): the log's model holds fewer weights, "
        "or the compiler folded constant branches away"
    )
    yield Finding(
        message=message,
        line=line,
        lines=(line,) if line is not None else (),
        subject="weight memory",
        evidence={
            "weight_bytes": logged,
            "weight_line": line,
            "reference_weight_bytes": reference,
            "difference_bytes": diff,
            "ratio": row["ratio"],
            "breakdown": breakdown,
            "likely_cause": cause,
            "max_ratio": options.max_ratio,
            "min_ratio": options.min_ratio,
            "min_difference_bytes": options.min_difference_bytes,
            "computation": "reference = sum over the model's weights of elements × bytes of the analysis "
            "dtype (int8), int32 for Conv/Gemm biases; ratio = Total Weight Memory Size / reference; the "
            "breakdown matches the log's const-table rows to the model's weights by element count",
        },
        hint=hint,
        build_index=build_of_line(log, line),
    )
