r"""Rows of a table logscope recognised could not be read, so figures from them are missing.

## What it does
Reports the `unparsed` lines whose reason says they belong to a recognised table (a layer row that fits
neither its header nor a known layout, a perf row cut short), as opposed to lines logscope does
not know at all (the example script's own prints). One finding per log, with every line.

Also reports, per build, a printed perf total (`Total Operator Elapsed Per Frame Time(us)`) that the
sum of the perf rows' `Time(us)` read for that build misses by more than `total_tolerance_pct`: rows
are missing from the table (an elided copy, or rows logscope could not read).

## Why it matters
Every rule that sums a table (layer time shares, reuse, padding) works without those rows. The finding
says which figures are incomplete and where to look.

## Example
A layer row of `fixtures/rknn/09-...-simulator.log` cut after 180 characters, as a truncated copy
would leave it (the case file `tests/rules/cases/LOG001.toml` holds the excerpt):
```text
D RKNN: [15:13:15.945] 4    ConvClip         INT8     NPU    (1,64,112,112),(1,64,3,3),(64)               (1,64,56,56)           0              0              0              0
```

## How to fix
Attach the log as the tool wrote it (no terminal wrapping), or, if it is, report the line to logscope
with the log attached.

## Options
- `total_tolerance_pct` (float, 1.0): how far the row sum may be from the printed total (percent of
  the total) before it is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str, columns, filled_frame, grouped, printed_perf_total
from logscope.rules.finding import Finding, Severity

CODE = "LOG001"
NAME = "unparsed-table-rows"
SEVERITY = Severity.info
NEEDS = ("unparsed|perf",)

UNKNOWN = "unrecognised line"


@dataclass(frozen=True)
class Options:
    total_tolerance_pct: float = 1.0


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    yield from _unread_rows(log)
    yield from _totals_missed(log, options)


def _unread_rows(log: ParsedLog) -> Iterator[Finding]:
    unparsed = log.frames["unparsed"]
    if all(as_str(v) in (None, UNKNOWN) for v in columns(unparsed)["reason"]):
        return  # the common case: only unrecognised lines, decided without building a frame
    rows = unparsed[unparsed["reason"].fillna(UNKNOWN) != UNKNOWN].sort_values("line")
    lines = tuple(int(v) for v in rows["line"])
    reasons = sorted(set(rows["reason"]))
    yield Finding(
        message=f"{len(rows)} row(s) of a recognised table could not be read "
        + (f"(line {lines[0]}): " if len(lines) == 1 else f"(lines {', '.join(map(str, lines))}): ")
        + "; ".join(reasons),
        line=lines[0],
        lines=lines,
        subject="table rows",
        evidence={
            "rows": [{"line": as_int(r.line), "reason": str(r.reason)} for r in rows.itertuples(index=False)]
        },
        hint="attach the log as the tool wrote it (no terminal wrapping); if it is, report the lines to logscope",
    )


def _totals_missed(log: ParsedLog, options: Options) -> Iterator[Finding]:
    """A printed perf total the rows read do not add up to."""
    perf = filled_frame(log, "perf")
    if perf is None:
        return
    for build_index, rows in grouped(perf):
        total, total_line = printed_perf_total(log, build_index)
        times = rows["time_us"].dropna()
        if not total or times.empty:
            continue
        row_sum = int(times.sum())
        if abs(total - row_sum) * 100 <= options.total_tolerance_pct * total:
            continue
        first, last = as_int(rows["line"].min()), as_int(rows["line"].max())
        yield Finding(
            message=f"the printed total perf time is {total} us (line {total_line}) but the {len(times)} "
            f"perf rows read (lines {first}-{last}) sum to {row_sum} us: "
            f"{total - row_sum} us of rows are missing",
            line=total_line,
            lines=tuple(v for v in (first, total_line) if v is not None),
            subject="perf total",
            evidence={
                "printed_total_us": total,
                "printed_total_line": total_line,
                "row_sum_us": row_sum,
                "rows": len(times),
                "first_row_line": first,
                "last_row_line": last,
            },
            hint="attach the whole eval_perf table (the copy may elide rows); if it is whole, report the "
            "log to logscope",
            build_index=build_index,
        )
