"""The feature-map pool is larger than the RKNN allocator emulation, or a greedy plan, of the log's model.

## What it does
Runs only on a log checked against its ONNX model (`logscope check LOG --onnx MODEL`): it reads the
cross-check's `check_summary` and compares the log's `Total Internal Memory Size` with two reference
figures computed from the model:
- the **RKNN allocator emulation** (execution-order first fit over the fused graph's NC1HWC2 tensors,
  64-B offsets, the input slot). It reproduces the logs it was built from to the byte ([09], and [29]
  with its quirks), so a pool more than `max_emulation_ratio` (1.05×) and `min_excess_bytes` above it
  means the compiler did something the emulation does not: a per-version padding quirk, a different
  model or input size than the one given, compiler-added buffers. When the check's tensor table
  points at quirks, the message says whether the emulation with them reproduces the pool;
- a **greedy-by-size plan** of the same (emulated) tensors: what a better offset plan would need.
  RKNN's online first fit normally lands 1.17–1.46× above it on chains (reference-anchors A9/A10;
  [09] 1.46×, [29] with its quirks 1.34×), so only a pool more than `max_greedy_ratio` (1.5×) and
  `min_excess_bytes` above it is reported. This comparison is made only when the emulation agrees with
  the log (within `max_emulation_ratio` either way): the greedy plan is over the emulation's tensor
  sizes, which are not the log's when the emulation is off.

The lower bounds (native fused, and logical unfused at the analysis dtype) are evidence only: no offset
plan reaches the first in general, and the second ignores the NC1HWC2 padding and the input slot, so a
threshold on them would fire on every RKNN log. MEM006 makes the greedy-style comparison from the log
alone (a chain-shaped bound from the table); this rule uses the model's real lifetimes (residual and
Concat inputs read late). One finding per checked build, at the `Total Internal Memory Size` line, with
the lines of the feature rows sized differently from the emulation.

## Why it matters
The emulation is what this model should cost on this RKNN allocator. Memory above it is memory the
build did not need for this graph: an older runtime's padding that a newer one drops, or a model that is
not the one deployed (the rest of the check is then meaningless too).

## Example
`fixtures/rknn/29-doc-rknpu2-sram-runtime-log-level3-rk3588.log` checked against the MobileNet v1 of
the tests without `--quirk`:
```text
3   ConvRelu       output4  INT8     (1,32,112,112) (1,4,112,112,16) | 0xff466c00 0xff52ac00 0x000c4000 | 0x00000000
Total Internal Memory Size: 2157568
```
The emulation (rk3588, no quirks) needs 1,756,160 B; the log's 2,157,568 B (line 41) is 1.23×, 401,408 B
more. Line 9 stores 32 channels as 64 (C1 = 4): with `--quirk dw32-as-64 --quirk hw-align-4` the
emulation reproduces the pool to the byte, and the finding goes away. [09] against the same model
(1,756,160 B = 1,756,160 B; 1.46× the greedy plan's 1,204,224 B) is not reported.

## How to fix
- If the check suggests quirks: they are padding of that runtime/toolkit version; a newer RKNN
  runtime may not pad (compare with a log of it), and rerunning the check with the `--quirk` flags
  compares the allocator like with like.
- Otherwise check that the log was built from this model and input size (`--input-shape`), with this
  `--target`; read the tensors the check lists as sized differently.
- Over the greedy plan: move consumers of long-lived tensors next to their producers, build with
  `optimization_level=3` and a newer toolkit.

## Options
- `max_emulation_ratio` (float, 1.05): pool / RKNN emulation above this is reported.
- `max_greedy_ratio` (float, 1.5): pool / greedy-by-size plan of the emulated tensors above this is
  reported.
- `min_excess_bytes` (int, 64 KiB): a smaller excess over either figure is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import KiB, as_int, fmt_bytes
from logscope.rules._reference import (
    POOL_EMULATION,
    POOL_EMULATION_QUIRKS,
    POOL_GREEDY_NATIVE,
    POOL_LOWER_BOUND_NATIVE,
    build_of_line,
    logical_lower_bound_row,
    summary_row,
)
from logscope.rules.finding import Finding, Severity

CODE = "REF001"
NAME = "pool-above-reference"
SEVERITY = Severity.warning
NEEDS = ("check_summary",)

_QUIRK = re.compile(r"--quirk ([\w-]+)")


@dataclass(frozen=True)
class Options:
    max_emulation_ratio: float = 1.05
    max_greedy_ratio: float = 1.5
    min_excess_bytes: int = 64 * KiB


OPTIONS = Options


def _over(row: dict[str, Any] | None, max_ratio: float, min_bytes: int) -> bool:
    if row is None or row["log_value"] is None or not row["reference_value"]:
        return False
    excess = row["log_value"] - row["reference_value"]
    return row["log_value"] / row["reference_value"] > max_ratio and excess >= min_bytes


def _under(row: dict[str, Any], max_ratio: float, min_bytes: int) -> bool:
    """The log is below the figure by more than the same tolerance (the model is not the log's)."""
    if row["log_value"] is None or not row["reference_value"]:
        return False
    shortfall = row["reference_value"] - row["log_value"]
    return row["log_value"] / row["reference_value"] < 1 / max_ratio and shortfall >= min_bytes


def _figure(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "bytes": row["reference_value"],
        "ratio": row["ratio"],
        "difference_bytes": row["difference"],
        "cause": row["likely_cause"],
    }


def _differing_tensor_lines(log: ParsedLog) -> list[int]:
    """Lines of the log's feature rows whose size differs from the emulation's tensor (first 8)."""
    frame = log.frames.get("check_tensors")
    if frame is None or frame.empty:
        return []
    rows = frame[frame["size_difference"].fillna(0) != 0]
    return [v for v in (as_int(x) for x in rows["log_line"]) if v is not None][:8]


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    emulation = summary_row(log, POOL_EMULATION)
    if emulation is None or emulation["log_value"] is None:
        return
    greedy = summary_row(log, POOL_GREEDY_NATIVE)
    lower_native = summary_row(log, POOL_LOWER_BOUND_NATIVE)
    lower_logical = logical_lower_bound_row(log)
    with_quirks = summary_row(log, POOL_EMULATION_QUIRKS)
    over_emulation = _over(emulation, options.max_emulation_ratio, options.min_excess_bytes)
    # The greedy plan is over the emulation's tensor sizes: compare with it only when the emulation
    # agrees with the log, else its tensors are not the log's (a missing quirk, another model).
    agrees = not over_emulation and not _under(
        emulation, options.max_emulation_ratio, options.min_excess_bytes
    )
    over_greedy = agrees and _over(greedy, options.max_greedy_ratio, options.min_excess_bytes)
    if not (over_emulation or over_greedy):
        return
    pool = emulation["log_value"]
    line = emulation["log_line"]
    quirks = _QUIRK.findall(with_quirks["likely_cause"]) if with_quirks else []
    # The rows sized differently from the emulation are the evidence of an emulation gap only.
    tensor_lines = _differing_tensor_lines(log) if over_emulation else []
    parts = []
    if over_emulation:
        parts.append(
            f"the feature-map pool ({fmt_bytes(pool)}) is {emulation['ratio']:.2f}× the RKNN allocator "
            f"emulation of the model ({fmt_bytes(emulation['reference_value'])}): "
            f"{fmt_bytes(emulation['difference'])} more"
        )
        if with_quirks is not None and quirks:
            flags = " ".join(f"--quirk {q}" for q in quirks)
            if with_quirks["reference_value"] == pool:
                parts.append(f"with {flags} the emulation reproduces it to the byte")
            else:
                parts.append(f"with {flags} the emulation gives {fmt_bytes(with_quirks['reference_value'])}")
    if over_greedy and greedy is not None:
        assert greedy["reference_value"] is not None and greedy["difference"] is not None
        relation = (
            "equals"
            if pool == emulation["reference_value"]
            else f"is {emulation['ratio']:.2f}× (within {options.max_emulation_ratio}×)"
        )
        parts.append(
            f"the feature-map pool ({fmt_bytes(pool)}) {relation} the RKNN allocator emulation of the model "
            f"({fmt_bytes(emulation['reference_value'])}) but is {greedy['ratio']:.2f}× a greedy-by-size "
            "plan of the same tensors "
            f"({fmt_bytes(greedy['reference_value'])}), which would save {fmt_bytes(greedy['difference'])}"
        )
    if over_emulation and quirks:
        hint = (
            "the tensor sizes"
            + (f" (lines {', '.join(str(n) for n in tensor_lines)})" if tensor_lines else "")
            + f" match RKNN padding quirk(s) {', '.join(quirks)} of this runtime/toolkit version: "
            "a newer RKNN runtime may not pad "
            f"them; rerun logscope check with {' '.join(f'--quirk {q}' for q in quirks)} to compare the "
            "allocator like with like"
        )
    elif over_emulation:
        hint = (
            "check that the log was built from this model and input size (--input-shape) for this --target; "
            "read the tensors the check lists as sized differently; build with optimization_level=3 and a "
            "newer toolkit"
        )
    else:
        hint = (
            "RKNN places tensors online, first fit: move consumers of long-lived tensors next to their "
            "producers, build with optimization_level=3 and a newer toolkit"
        )
    lines = tuple(sorted({n for n in [line, *tensor_lines] if n is not None}))
    yield Finding(
        message="; ".join(parts),
        line=line,
        lines=lines,
        subject="feature-map pool",
        evidence={
            "internal_bytes": pool,
            "internal_line": line,
            "emulation": _figure(emulation),
            "emulation_with_suggested_quirks": _figure(with_quirks),
            "suggested_quirks": quirks,
            "greedy_by_size_native": _figure(greedy),
            "lower_bound_native": _figure(lower_native),
            "lower_bound_logical": _figure(lower_logical),
            "differing_tensor_lines": tensor_lines,
            "max_emulation_ratio": options.max_emulation_ratio,
            "max_greedy_ratio": options.max_greedy_ratio,
            "min_excess_bytes": options.min_excess_bytes,
            "computation": "emulation = RKNN allocator replayed on the model's fused graph (execution-order "
            "first fit, NC1HWC2 native sizes, 64-B offsets, input slot); greedy = greedy-by-size offsets of "
            "the same tensors; lower bounds = max over steps of live bytes (native fused / logical unfused); "
            "ratio = Total Internal Memory Size / figure",
        },
        hint=hint,
        build_index=build_of_line(log, line),
    )
