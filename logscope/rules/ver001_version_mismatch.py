"""Toolkit, runtime and driver versions do not match, or the runtime rejected the model file.

## What it does
Collects the versions a log shows: the PC↔board proxy block (`API:`, `DRV: rknn_server:`,
`DRV: rknnrt:`), `RKNN Runtime Information ... librknnrt version`, the model's `toolkit version` in
`RKNN Model Information`, the toolkit banner of the script, and driver versions. It reports:
- an error when the runtime rejected the model for its version (`Invalid RKNN model version`), or
  rejected it as malformed (`exportDataSize large then model size`, `rknn model is too small`) while a
  version mismatch is visible, with the versions in view (a malformed file alone is reported by
  `fatal-error`: it can as well be a truncated copy or a wrong load flag);
- a warning when API and runtime differ in major.minor, or the model was built by a newer toolkit
  (major.minor) than the runtime that loads it, or the script's toolkit and the runtime differ in major;
- a warning when the runtime itself says the driver is too old.

## Why it matters
An `.rknn` file is tied to the runtime generation that can read it; a newer model on an older
`librknnrt` fails at `rknn_init`, and mismatched API / server / runtime versions on the board give
errors or wrong results that look like model bugs.

## Example
`fixtures/rknn/10-build-tail-init-runtime-rv1106-board-tk2-1.5.2.log`:
```text
D RKNNAPI:   API: 1.5.2 (8babfea build@2023-08-25T02:31:12)
D RKNNAPI:   DRV: rknn_server: 1.5.2 (8babfea build@2023-08-25T10:30:50)
D RKNNAPI:   DRV: rknnrt: 1.2.6b3 (8fc862230@2022-04-28T16:42:02)
```
The board's `librknnrt` (1.2.6b3) is a year older than the toolkit API (1.5.2) driving it.

## How to fix
- Install the `librknnrt.so` / `rknn_server` from the same RKNN-Toolkit2 release as the PC toolkit
  (push both to the board), or convert the model with the toolkit matching the board's runtime.
- Upgrade the rknpu kernel driver when the runtime asks for a newer one.

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logscope.model import ParsedLog
from logscope.rules._common import Row, as_int, as_str, columns, first_line, in_line_order, message_positions
from logscope.rules.finding import Finding, Severity

CODE = "VER001"
NAME = "version-mismatch"
SEVERITY = Severity.warning
NEEDS = ("messages",)

PATTERNS = {
    "api": re.compile(r"^\s*API:\s*(\d[\w.+-]*)"),
    "rknn_server": re.compile(r"DRV:\s*rknn_server:\s*(\d[\w.+-]*)"),
    "rknnrt": re.compile(r"DRV:\s*rknnrt:\s*(\d[\w.+-]*)"),
    "librknnrt": re.compile(r"librknnrt version:\s*(\d[\w.+-]*)"),
    "model_toolkit": re.compile(r"RKNN Model Information.*?toolkit version:\s*(\d[\w.+-]*?)(?:\(|,|\s|$)"),
    "driver": re.compile(
        r"(?:RKNN Driver Information[,:] version:|rknpu driver version:)\s*(\d[\w.+-]*?)(?:,|\s|$)"
    ),
}
# A literal every match of each pattern contains: the rule searches the messages holding one (see
# `Columns.containing`) and runs the patterns on those only.
NEEDLES = (
    "API:",
    "rknn_server:",
    "rknnrt:",
    "librknnrt version:",
    "RKNN Model Information",
    "RKNN Driver Information",
    "rknpu driver version:",
)
_VERSION_REJECTED = re.compile(r"model version", re.IGNORECASE)
_TOO_LOW_TEXT = "driver version is too low, please upgrade to "
_TOO_LOW = re.compile(re.escape(_TOO_LOW_TEXT) + r"(\d+(?:\.\d+)*)")


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def _major_minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:2])


LABELS = {
    "api": "toolkit API",
    "rknn_server": "rknn_server",
    "rknnrt": "rknnrt",
    "librknnrt": "librknnrt",
    "model_toolkit": "model's toolkit",
    "driver": "rknpu driver",
}


# Board-side versions the parser stores on the build (runtime, driver, proxy, model), with the column holding each one's line
# (the proxy's server and rknnrt versions are cited at the block's `API:` line).
LINE_COLUMNS = {
    "api": "api_line",
    "rknn_server": "api_line",
    "rknnrt": "api_line",
    "librknnrt": "runtime_line",
    "driver": "driver_line",
    "model_toolkit": "model_info_line",
}
BUILD_COLUMNS = {
    "api": "api_version",
    "rknn_server": "server_version",
    "rknnrt": "proxy_runtime_version",
    "librknnrt": "runtime_version",
    "driver": "driver_version",
    "model_toolkit": "model_toolkit_version",
}


def versions_of(log: ParsedLog, blocks: set[str] | None = None) -> dict[str, tuple[str, int | None]]:
    """{role: (version, line)} for every version the log shows (first occurrence). Roles read from the
    build's board-side columns are added to `blocks`: their line is the version block's first line."""
    blocks = set() if blocks is None else blocks
    found: dict[str, tuple[str, int | None]] = {}
    messages = columns(log.frames["messages"])
    # Two columns, not a tuple of every column per message; a role found is not searched for again.
    missing = dict(PATTERNS)
    # The cells of the messages found only (a big log has 100,000 messages, a handful with a needle).
    held = messages.containing("message", NEEDLES)
    held_lines, held_texts = messages.take("line", held), messages.take("message", held)
    for k in in_line_order(list(range(len(held))), held_lines):
        if not missing:
            break
        line = held_lines[k]
        text = str(held_texts[k])
        for role, pattern in list(missing.items()):
            match = pattern.search(text)
            if match:
                found[role] = (match.group(1), as_int(line) or 0)
                del missing[role]
    # Each role's first build that shows it, read down each column (a log has hundreds of builds and
    # most columns are empty in all of them), then added as a loop over builds, then roles, adds them.
    builds = columns(log.frames["builds"])
    firsts: list[tuple[int, int, str, str, str]] = []  # (build position, order, role, value, line column)
    roles = [("script_toolkit", "toolkit_version", "start_line")]
    roles += [(role, column, LINE_COLUMNS[role]) for role, column in BUILD_COLUMNS.items()]
    for order, (role, column, line_column) in enumerate(roles):
        if role in found or column not in builds.frame.columns:
            continue
        for position, cell in enumerate(builds[column]):
            value = as_str(cell)
            if value:
                firsts.append((position, order, role, value, line_column))
                break
    for position, _, role, value, line_column in sorted(firsts):
        found[role] = (value, as_int(builds.get(line_column, position)))
        if role != "script_toolkit":
            blocks.add(role)
    return found


def _at(role: str, found: tuple[str, int | None], block: bool = False) -> str:
    if found[1] is None:
        return f"{found[0]} (line unknown)"
    if not block:
        return f"{found[0]} (line {found[1]})"
    where = "version block" if role in ("api", "rknn_server", "rknnrt") else "runtime information"
    return f"{found[0]} ({where} from line {found[1]})"


def _label(role: str, log: ParsedLog) -> str:
    if role == "script_toolkit":
        products = [v for v in columns(log.frames["builds"])["toolkit_product"] if as_str(v) is not None]
        return str(products[0]) if products else "toolkit"
    return LABELS[role]


def _pairs(v: dict[str, tuple[str, int | None]]) -> Iterator[tuple[str, str, str]]:
    """(older role, newer role, why) for each mismatch among the versions found."""
    runtime = "rknnrt" if "rknnrt" in v else "librknnrt"
    if "api" in v and runtime in v and _major_minor(v["api"][0]) != _major_minor(v[runtime][0]):
        yield runtime, "api", "the board runtime and the toolkit API differ in major.minor"
    if (
        "model_toolkit" in v
        and runtime in v
        and _major_minor(v["model_toolkit"][0]) > _major_minor(v[runtime][0])
    ):
        yield runtime, "model_toolkit", "the model was built by a newer toolkit than the runtime loading it"
    if (
        "script_toolkit" in v
        and runtime in v
        and "api" not in v
        and _major_minor(v["script_toolkit"][0])[:1] != _major_minor(v[runtime][0])[:1]
    ):
        yield (
            runtime,
            "script_toolkit",
            "the Python toolkit and the board runtime are different major versions",
        )


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    blocks: set[str] = set()
    versions = versions_of(log, blocks)

    def at(role: str) -> str:
        return _at(role, versions[role], role in blocks)

    evidence_versions: dict[str, Any] = {k: {"version": v, "line": line} for k, (v, line) in versions.items()}
    mismatches = list(_pairs(versions))
    messages = columns(log.frames["messages"])
    rejected = message_positions(log, ["model-version-mismatch"])
    message_col = dict(zip(rejected, messages.take("message", rejected), strict=True))  # (their cells only)
    # Only an explicit version rejection is a version mismatch by itself; a size inconsistency
    # (`rknn model is too small` [17], `exportDataSize large then model size` [36]) can as well be a
    # truncated file or a wrong load flag, so it counts here only next to a visible version mismatch
    # (BLD001 reports the failed load either way).
    explicit = any(_VERSION_REJECTED.search(as_str(message_col[p]) or "") for p in rejected)
    if not explicit and not mismatches:
        rejected = []
    if rejected:
        lines = tuple(int(messages["line"][p]) for p in rejected)
        texts = [first_line(message_col[p]) for p in rejected]
        message = f"the runtime rejected the model file (line {lines[0]}): {texts[0]!r}"
        for older, newer, _why in mismatches:
            message += f"; {_label(older, log)} {at(older)} vs {_label(newer, log)} {at(newer)}"
        version_lines = {versions[r][1] for pair in mismatches for r in pair[:2]} - {None}
        yield Finding(
            message=message,
            line=lines[0],
            lines=tuple(sorted({*lines, *(v for v in version_lines if v is not None)})),
            subject="model file",
            evidence={
                "rejections": [{"line": a, "text": b} for a, b in zip(lines, texts, strict=True)],
                "versions": evidence_versions,
            },
            hint="convert the model with the RKNN-Toolkit2 release that matches the board's librknnrt (or "
            "update librknnrt), and check the file was copied whole",
            severity=Severity.error,
            build_index=as_int(messages["build_index"][rejected[0]]),
        )
    else:
        for older, newer, why in mismatches:
            pair_lines = sorted(v for v in (versions[older][1], versions[newer][1]) if v is not None)
            yield Finding(
                message=f"{_label(older, log)} {at(older)} vs {_label(newer, log)} {at(newer)}: {why}",
                line=versions[older][1] if versions[older][1] is not None else next(iter(pair_lines), None),
                lines=tuple(sorted(set(pair_lines))),
                subject=f"{_label(older, log)} / {_label(newer, log)}",
                evidence={"versions": evidence_versions, "older": older, "newer": newer},
                hint="install librknnrt/rknn_server from the same RKNN-Toolkit2 release as the PC toolkit, or "
                "convert with the toolkit matching the board",
            )
    too_low = messages.containing("message", [_TOO_LOW_TEXT])
    for position, text in zip(too_low, messages.take("message", too_low), strict=True):
        match = _TOO_LOW.search(text)
        if not match:
            continue
        row = Row(messages, position)
        current = versions.get("driver")
        line = as_int(row.line) or 0
        yield Finding(
            message=f"the runtime says the rknpu driver is too old (line {line}): "
            + (f"{at('driver')}, " if current else "")
            + f"{match.group(1)} required",
            line=line,
            lines=tuple(sorted({line, *([current[1]] if current and current[1] is not None else [])})),
            subject="rknpu driver",
            evidence={
                "driver": current[0] if current else None,
                "required": match.group(1),
                "versions": evidence_versions,
            },
            hint=f"upgrade the rknpu kernel driver to {match.group(1)} or newer",
            build_index=as_int(row.build_index),
        )
