r"""Rows of a table logscope recognised could not be read, so figures from them are missing.

## What it does
Reports the `unparsed` lines whose reason says they belong to a recognised table (a layer row that fits
neither its header nor a known layout, a perf row cut short), as opposed to lines logscope does
not know at all (the example script's own prints). One finding per log, with every line.

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
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int
from logscope.rules.finding import Finding, Severity

CODE = "LOG001"
NAME = "unparsed-table-rows"
SEVERITY = Severity.info
NEEDS = ("unparsed",)

UNKNOWN = "unrecognised line"


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    unparsed = log.frames["unparsed"]
    rows = unparsed[unparsed["reason"].fillna(UNKNOWN) != UNKNOWN].sort_values("line")
    if rows.empty:
        return
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
