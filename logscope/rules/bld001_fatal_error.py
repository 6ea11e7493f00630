"""A build or session stopped on a fatal error: no model was produced, loaded or run.

## What it does
Reports every build or session whose status is `failed`: the parser saw a fatal message (process
death, compiler memory corruption, `E build:` errors, a Python exception, a model that could not be
loaded) before a `rknn building done`. The finding cites the fatal line, the first error-level message of
the build (often the root cause, printed before the fatal one) and the exception text when there is one.

## Why it matters
Everything after a fatal error is missing or meaningless: later `E export_rknn` / `E init_runtime`
lines only repeat that there is no model. The first error is where to look.

## Example
`fixtures/rknn/05-build-argb-abort-tqdm-tk2-2.0.0b0.log`:
```text
I rknn building ...
E RKNN: [10:14:34.212] failed to config argb mode layer!
Aborted (core dumped)
```

## How to fix
Fix the first error the finding names; the hint adds what usually causes that kind of failure
(compiler crash: update RKNN-Toolkit2 and simplify the model; `Killed`: the host ran out of RAM; model
not loaded: the load step failed earlier).

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import Row, as_int, as_str, columns, first_line, rows_of_build
from logscope.rules.finding import Finding, Severity

CODE = "BLD001"
NAME = "fatal-error"
SEVERITY = Severity.error
NEEDS = ("builds",)

_EXCEPTION = re.compile(r"^(?:[\w.]+)?(?:Error|Exception)\b")
_TRACEBACK = "\nTraceback (most recent call last):"

HINTS = {
    "compiler-memory-corruption": "the compiler crashed (memory corruption in librknnc): update RKNN-Toolkit2, "
    "simplify the model (onnxsim) and report the model to Rockchip if it persists",
    "process-killed": "the host killed the process, usually out of RAM: add RAM or swap, or convert on a bigger machine",
    "process-aborted": "the process aborted: the error just before the abort is the cause",
    "process-crash": "the process crashed (signal): the error just before it is the cause; check the return "
    "codes the program did not test (rknn_init / rknn_run after a failed allocation)",
    "argb-config-failure": "the compiler could not configure the ARGB input mode: check the input's "
    "mean/std and channel settings (quant_img_RGB2BGR) against a 3-channel input, or update RKNN-Toolkit2",
    "model-not-loaded": "the model was never loaded: fix the load step (first error) before build/init",
    "run-failure": "the NPU did not complete a submitted task (`failed to submit`, `rknn_run fail`): "
    "update librknnrt and the NPU driver together (the op named is where it stopped), check the model "
    "was built for this runtime version, and test the op alone",
    "runtime-init-failure": "the runtime did not start: check the board connection (adb devices, the "
    "rknn_server running on the board), that the adb client and server versions match, and that "
    "librknnrt on the board is at least the toolkit's version",
    "build-exception": "the toolkit raised during build: the traceback names the failing pass; simplify "
    "the model or update RKNN-Toolkit2",
}


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    messages = log.frames["messages"]
    builds = columns(log.frames["builds"])
    # Row by row only for the failed builds: a long log has hundreds of builds, nearly all done.
    for position, status in enumerate(builds["status"]):
        if as_str(status) != "failed":
            continue
        build = Row(builds, position)
        build_index = as_int(build.build_index)
        own = rows_of_build(messages, build_index).sort_values("line")
        status_line = as_int(build.status_line)
        reason = as_str(build.status_reason) or "unknown"
        fatal = own[own["line"] == status_line] if status_line is not None else own.iloc[0:0]
        fatal_text = first_line(fatal.iloc[0]["message"]) if len(fatal) else None
        errors = own[own["level"] == "E"]
        first_error = errors.iloc[0] if len(errors) else None
        exception = None
        for row in own[own["line"] >= (status_line or 0)].itertuples(index=False):
            text = str(row.message)
            last = text.splitlines()[-1].strip() if text else ""
            for candidate in (first_line(text), last):
                if _EXCEPTION.match(candidate):
                    # A traceback row opens at `Traceback (...)` and ends at its exception line, which
                    # the parser puts first in the message: cite the line it was printed on.
                    traceback = candidate == first_line(text) and _TRACEBACK in text
                    exception = (as_int(row.end_line if traceback else row.line), candidate)
                    break
            if exception:
                break
        kind = as_str(build.kind) or "build"
        message = f"{kind} {build_index} failed ({reason}) at line {status_line}"
        if fatal_text:
            message += f": {fatal_text!r}"
        if exception and exception[1] != fatal_text:
            message += f"; {exception[1]!r} (line {exception[0]})"
        first_error_line = as_int(first_error["line"]) if first_error is not None else None
        if first_error_line is not None and first_error_line != status_line:
            message += f"; first error at line {first_error_line}"
        lines = {
            v for v in (status_line, first_error_line, exception[0] if exception else None) if v is not None
        }
        hint = HINTS.get(reason)
        if hint is None:
            hint = (
                f"the script raised {exception[1].split(':')[0]}: read the exception and fix the call it names"
                if exception
                else "fix the first error the log shows; later errors only repeat that there is no model"
            )
        yield Finding(
            message=message,
            line=status_line if status_line is not None else first_error_line,
            lines=tuple(sorted(lines)),
            subject=f"{kind} {build_index}",
            evidence={
                "status": "failed",
                "status_reason": reason,
                "status_line": status_line,
                "fatal_message": fatal_text,
                "first_error_line": first_error_line,
                "first_error": first_line(first_error["message"]) if first_error is not None else None,
                "exception": exception[1] if exception else None,
                "exception_line": exception[0] if exception else None,
            },
            hint=hint,
            build_index=build_index,
        )
