"""The runtime ran out of file descriptors while allocating NPU buffers (errno 24).

## What it does
Reports, per session, the `Too many open files` (errno 24) failures of the NPU runtime, with the buffer
handle numbers it was converting to file descriptors.

## Why it matters
The RKNN runtime exports each DMA buffer as a file descriptor. A model with many buffers (an LLM's
weight domains in [35]) reaches the process's open-file limit, commonly 1024: the next allocations fail
even though memory is free, and the failures look like out-of-memory errors.

## Example
`fixtures/rknn/35-issue-rknn-llm-62-cannot-allocate-too-many-open-files-rk3588.log`:
```text
E RKNN: [08:01:54.584] failed to convert handle(1020) to fd, ret: -1, errno: 24, errstr: Too many open files
E RKNN: [08:01:54.584] failed to malloc npu memory, size: 80, flags: 0xa
```
The handles run up to 1024, the default `ulimit -n`.

## How to fix
- Raise the limit before starting the program (`ulimit -n 65535`, or `LimitNOFILE=` in a systemd unit).
- Update the rknpu driver and runtime (the same log warns the 0.8.2 driver is too old).

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

CODE = "ALC002"
NAME = "fd-exhaustion"
SEVERITY = Severity.error
NEEDS = ("messages",)

_HANDLE = re.compile(r"handle\((\d+)\)")


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    messages = columns(log.frames["messages"])
    for build_index, positions in message_groups(log, ["fd-exhaustion"]):
        line_col, text_col = messages["line"], messages["message"]
        lines = tuple(int(line_col[p]) for p in positions)
        handles = sorted(
            {int(h) for text in (text_col[p] for p in positions) for h in _HANDLE.findall(str(text))}
        )
        message = f"{len(positions)} buffer(s) could not get a file descriptor (errno 24, lines {lines[0]}-{lines[-1]})"
        if handles:
            message += f"; handles {handles[0]}-{handles[-1]}"
        yield Finding(
            message=message,
            line=lines[0],
            lines=lines,
            subject="open file descriptors",
            evidence={"handles": handles, "first_message": first_line(text_col[positions[0]]), "errno": 24},
            hint="raise the open-file limit (ulimit -n 65535 / LimitNOFILE=) and update the rknpu driver and runtime",
            build_index=build_index,
        )
