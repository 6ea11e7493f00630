"""Memory could not be allocated: NPU/DMA allocation failures, a full swiotlb, the host OOM killer.

## What it does
Collects, per build or session, the messages that say memory ran out: `failed to malloc npu memory`,
`failed to allocate handle ... errno: 12 (Cannot allocate memory)`, `can not create weight memory`,
`invalid tensor malloc size`, the kernel's `swiotlb buffer is full`, a process `Killed` by the
host, and compiler lines such as `Memory allocation failed` or `activation memory exceeds limit`. One
error per build, with every line, the sizes asked for (the largest first) and the errno values.

## Why it matters
Nothing after a failed allocation can be trusted: the runtime either aborts `rknn_init` or crashes later
(the SIGSEGV right after the failure in [16]). The size asked for says whether the model simply does not
fit or the DMA path is misconfigured.

## Example
`fixtures/rknn/34-issue-rl-tk2-44-android-logcat-malloc-npu-rk3568.log`:
```text
E/RKNN: failed to allocate handle, ret: -1
E/RKNN: failed to malloc npu memory!, size: 59187712, flags: 0x2
E/RKNN: rknn_init, load model failed!
```
The reporter of this log solved it by enabling the NPU's IOMMU.

## How to fix
- `swiotlb buffer is full` or handle failures on RK356x/RK3588 Android/Linux: enable the NPU IOMMU in
  the device tree (`&rknpu_mmu { status = "okay"; }`), or enlarge swiotlb/CMA.
- `errno 12`: the board is out of DMA memory; free memory held by other models/processes, share weights
  or internal buffers between contexts, or use a smaller model.
- A single request of hundreds of MiB (1.4 GB in [38]): the model does not fit this board; quantise,
  split it, or reduce its input size.
- `Killed` during conversion: the PC ran out of RAM; add RAM or swap, or convert on a bigger machine.

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from logscope.model import ParsedLog
from logscope.rules._common import (
    Columns,
    as_int,
    as_str,
    build_order,
    columns,
    first_line,
    fmt_bytes,
    message_positions,
)
from logscope.rules.finding import Finding, Severity

CODE = "ALC001"
NAME = "allocation-failure"
SEVERITY = Severity.error
NEEDS = ("messages",)

CATEGORIES = ("allocation-failure", "swiotlb-full", "process-killed")
# Compact compiler summary wording (`Memory allocation failed`, `Activation memory exceeds limit`) that
# logscope's categories do not carry.
_EXTRA = re.compile(r"Memory allocation failed|memory exceeds limit", re.IGNORECASE)
_SIZE = re.compile(r"\b(?:size|sz)\s*[:=]\s*(\d+)")
_ERRNO = re.compile(r"errno:\s*(\d+)")


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def _hint(kinds: set[str], errnos: set[int], largest: int | None) -> str:
    parts = []
    if "swiotlb-full" in kinds or "handle" in kinds:
        parts.append("enable the NPU IOMMU in the device tree (or enlarge swiotlb/CMA)")
    if 12 in errnos:
        parts.append("errno 12: the board is out of DMA memory; free other models' buffers or share weights")
    if largest is not None and largest >= 256 * 1024 * 1024:
        parts.append(
            f"a {fmt_bytes(largest)} request does not fit this board: quantise, split or shrink the model"
        )
    if "process-killed" in kinds:
        parts.append("the host ran out of RAM: add RAM or swap, or convert on a bigger machine")
    return "; ".join(parts) or "free memory on the board, or reduce the model's weight and internal memory"


def _extra(text: object) -> bool:
    value = as_str(text)
    return value is not None and _EXTRA.search(value) is not None


# Every match of `_EXTRA` holds "memory" in some case, and no character but M and m matches m under
# `re.IGNORECASE` (likewise e, o, r, y): the messages holding "memory" once lowered are the only ones
# `_EXTRA` is tried on.
_EXTRA_NEEDLE = "memory"
_NPU = re.compile("npu", re.IGNORECASE)


def picked_rows(log: ParsedLog, cols: Columns) -> list[int]:
    """Positions, ascending, of the messages this rule reports: a category of `CATEGORIES`, or no
    category (missing or empty) and a text `_EXTRA` matches. The categories are looked up in the
    per-log index other rules share, and `_EXTRA` is tried only on the messages holding its needle."""
    held = cols.containing("message", [_EXTRA_NEEDLE], lower=True)  # their cells only read
    extra = [
        p
        for p, category, text in zip(
            held, cols.take("category", held), cols.take("message", held), strict=True
        )
        if (category == "" if type(category) is str else as_str(category) is None) and _extra(text)
    ]
    return sorted({*message_positions(log, CATEGORIES), *extra})


def sorted_by_line(cols: Columns, positions: list[int]) -> list[int]:
    """`positions` in the order `frame.iloc[positions].sort_values("line")` gives: pandas' own
    argsort of the line numbers (numpy's default sort), rows without a line last in frame order."""
    picked = np.asarray(positions, dtype=np.int64)
    missing = cols.missing("line")[picked]
    present = picked[~missing]
    order = present[cols.ints("line")[present].argsort(kind="quicksort")]
    return [*order.tolist(), *picked[missing].tolist()]


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    cols = columns(log.frames["messages"])
    picked = picked_rows(log, cols)
    if not picked:  # the common case
        return
    texts, categories, line_col, build_col = (
        cols["message"],
        cols["category"],
        cols["line"],
        cols["build_index"],
    )
    split: dict[int | None, list[int]] = {}
    for position in sorted_by_line(cols, picked):
        split.setdefault(as_int(build_col[position]), []).append(position)
    for build_index in sorted(split, key=build_order):
        rows = split[build_index]
        lines = tuple(int(line_col[p]) for p in rows)
        sizes: list[int] = []
        errnos: set[int] = set()
        kinds: set[str] = set()
        for p in rows:
            text = str(texts[p])
            sizes += [int(v) for v in _SIZE.findall(text)]
            errnos |= {int(v) for v in _ERRNO.findall(text)}
            kinds.add(categories[p] if isinstance(categories[p], str) else "other")
            if "allocate handle" in text:
                kinds.add("handle")
        largest = max(sizes) if sizes else None
        first = texts[rows[0]]
        subject = (
            "host RAM"
            if kinds == {"process-killed"}
            else (
                "NPU memory"
                if any(type(texts[p]) is str and _NPU.search(texts[p]) for p in rows)
                else "memory"
            )
        )
        if kinds == {"process-killed"}:
            message = f"the process was killed at line {lines[0]} ({first_line(first)!r}), most often by the host's out-of-memory killer"
        else:
            message = (
                f"{len(rows)} allocation failure line(s), first at line {lines[0]}: {first_line(first)!r}"
            )
        if largest is not None:
            message += f"; largest request {fmt_bytes(largest)}"
        yield Finding(
            message=message,
            line=lines[0],
            lines=lines,
            subject=subject,
            evidence={
                "failures": [
                    {
                        "line": as_int(line_col[p]),
                        "category": categories[p] if isinstance(categories[p], str) else None,
                        "text": first_line(texts[p]),
                    }
                    for p in rows
                ],
                "requested_bytes": sorted(set(sizes), reverse=True),
                "largest_request_bytes": largest,
                "errno": sorted(errnos),
            },
            hint=_hint(kinds, errnos, largest),
            build_index=build_index,
        )
