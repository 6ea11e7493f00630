"""The toolkit replaced extreme constant values (±3e38, infinity-like) with ±10000.

## What it does
Reports, per build, the `has been corrected to` warnings: constants whose values were beyond ±3e38 and
that the optimiser rewrote, with the tensors named and the replacement values.

## Why it matters
Such constants are usually attention masks or padding values meant as "minus infinity". At ±10000 they
often still work, but a softmax over large logits, or a mask added to values above 10000, changes the
result silently.

## Example
From a real rknn-toolkit2 2.x build log (a public report; the log is not among the fixtures):
```text
W build: For tensor ['/encoder/Constant_14_output_0'], the value smaller than -3e+38 or greater than 3e+38 has been corrected to -10000 or 10000. Set opt_level to 2 or lower to disable this correction.
```

## How to fix
- Compare outputs against the original model on real inputs.
- Replace the infinite constants in the model with a finite large value you choose, or, as the log
  says, build with `optimization_level` 2 or lower to keep them.

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import columns, first_line, message_groups
from logscope.rules.finding import Finding, Severity

CODE = "QNT002"
NAME = "values-clamped"
SEVERITY = Severity.warning
NEEDS = ("messages",)

_TENSORS = re.compile(r"For tensor \[([^\]]*)\]")
_TO = re.compile(r"corrected to (\S+) or (\S+?)\.?(?:\s|$)")


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    messages = columns(log.frames["messages"])
    for build_index, positions in message_groups(log, ["value-clamping"]):
        line_col, text_col = messages["line"], messages["message"]
        lines = tuple(int(line_col[p]) for p in positions)
        tensors: list[str] = []
        replaced: set[str] = set()
        for text in (text_col[p] for p in positions):
            for group in _TENSORS.findall(str(text)):
                tensors += [t.strip().strip("'\"") for t in group.split(",") if t.strip()]
            match = _TO.search(str(text))
            if match:
                replaced.add(f"{match.group(1)} / {match.group(2)}")
        yield Finding(
            message=f"{len(positions)} constant(s) clamped by the optimiser (line {lines[0]})"
            + (f": {', '.join(tensors[:5])}" if tensors else "")
            + (f" -> {', '.join(sorted(replaced))}" if replaced else ""),
            line=lines[0],
            lines=lines,
            subject=tensors[0] if tensors else "constants",
            evidence={
                "tensors": tensors,
                "replacements": sorted(replaced),
                "first_message": first_line(text_col[positions[0]]),
            },
            hint="check outputs against the original model; use a finite constant in the model, or build with "
            "optimization_level <= 2 to keep the values (the log's own advice)",
            build_index=build_index,
        )
