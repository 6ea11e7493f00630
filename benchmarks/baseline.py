"""The reference point for logscope's parse speed: a plain per-line regex scanner.

This is what one would write by hand to pull the same records out of an RKNN log that logscope
extracts: read the file line by line, try a list of compiled regexes with `.match` (most frequent
record kind first, the generic W/E catch-all last because it would also match the W banner), call
`m.groupdict()` on the first match and keep every record as a dict in a list. No section state, no
type conversion, no DataFrames: the cost of this loop is the floor that any line-oriented parser of
this format pays. It is deliberately straightforward; nothing in it is there to slow it down.

Usage: python benchmarks/baseline.py LOG
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

# The native (librknnc) logger prefix `D RKNN: [15:13:15.953] `; tables also appear without it.
_NATIVE = r"[ \t]*(?:[DIWE] RKNN: (?:\[\d\d:\d\d:\d\d\.\d+\] )?)?"
_SHAPE = r"\([0-9,]*\)"
_SHAPES = rf"\\|{_SHAPE}(?:,{_SHAPE})*(?:,\.\.\.)?"
_DTYPE = r"(?:U?INT(?:4|8|16|32|64)|FLOAT(?:16|32|64)?|BFLOAT16|BOOL)"

# (kind, regex), ordered by how often the kind occurs in a verbose build log.
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # Feature rows have a NativeShape (and from 1.6 a DataFormat); const rows have neither.
    (
        "tensor",
        re.compile(
            _NATIVE + rf"(?P<id>\d+) +(?P<user>\S+) +(?P<name>\S+) +(?P<dtype>{_DTYPE}) +"
            rf"(?:(?P<data_format>[A-Z][A-Z0-9]*) +)?(?P<orig_shape>{_SHAPE}) +"
            rf"(?:(?P<native_shape>{_SHAPE}) +)?\| *(?P<start>0x[0-9a-fA-F]+)[ *](?P<end>0x[0-9a-fA-F]+) +"
            r"(?P<size>0x[0-9a-fA-F]+)"
        ),
    ),
    (
        "layer",
        re.compile(
            _NATIVE + r"(?P<id>\d+) +(?P<op_type>\S+) +(?P<dtype>[A-Z][A-Z0-9]*) +(?P<target>[A-Z]{2,4}) +"
            rf"(?P<inputs>{_SHAPES}) +(?P<output>{_SHAPES}) *(?P<tail>.*)"
        ),
    ),
    ("pass_mark", re.compile(_NATIVE + r"(?P<mark>>>>>>> start|<<<<<<<< end): (?P<name>\S+)")),
    ("total_memory", re.compile(_NATIVE + r"Total (?P<kind>Weight|Internal) Memory Size: *(?P<value>\d+)")),
    (
        "toolkit_banner",
        re.compile(r"[DIWE] (?:__init__: )?(?P<product>rknn-toolkit(?:-lite)?2?) version: (?P<version>\S+)"),
    ),
    (
        "compiler_version",
        re.compile(_NATIVE + r"librknnc version: (?P<version>\S+)(?: \((?P<build>[^)]*)\))?"),
    ),
    ("build_start", re.compile(r"I rknn (?P<what>building) \.\.\.")),
    ("build_done", re.compile(r"I rknn (?P<what>bui(?:l)?ding done)")),
    (
        "message",
        re.compile(r"(?P<level>[WE]) (?:(?P<logger>RKNN|\w+): (?:\[(?P<ts>[0-9:.]+)\] )?)?(?P<message>.*)"),
    ),
]


def scan_records(path: str | Path) -> tuple[dict[str, list[dict[str, str | None]]], int]:
    """Scan `path`: every record as the dict of its regex fields, by kind; and the number of lines."""
    patterns = PATTERNS
    records: dict[str, list[dict[str, str | None]]] = {kind: [] for kind, _ in patterns}
    lines = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            lines += 1
            for kind, regex in patterns:
                m = regex.match(line)
                if m is not None:
                    records[kind].append(m.groupdict())
                    break
    return records, lines


def scan(path: str | Path) -> dict[str, int]:
    """Scan `path` and return the number of records of each kind (plus `lines`)."""
    records, lines = scan_records(path)
    counts = {kind: len(rows) for kind, rows in records.items()}
    feature = sum(1 for row in records["tensor"] if row["native_shape"] is not None)
    counts["feature_tensor"] = feature
    counts["const_tensor"] = counts["tensor"] - feature
    counts["lines"] = lines
    return counts


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    print(json.dumps(scan(args[0]), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
