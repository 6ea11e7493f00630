"""The reference point for logscope's speed on per-op heap traces: a plain per-line regex scanner.

What one would write by hand to pull the per-op records out of a `Op[i] NAME: delta=…, total=…` trace:
read the file line by line, `.match` the op regex (then the baseline regex), keep `m.groupdict()` in a
list. No run state, no type or unit conversion, no DataFrames: the floor any line-oriented reading of
this format pays (the same definition as benchmarks/baseline.py for RKNN logs).

`scan_peaks` is the next step a user's script would take, for reference: convert the totals (bytes or
KiB) to integers and keep the highest total of each run (a run starts at each baseline line).

Usage: python benchmarks/mcu_baseline.py TRACE
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

OP = re.compile(
    r"Op\[(?P<index>\d+)\] (?P<name>[^:]*): delta=(?P<delta>[-+]?\d+(?:\.\d+)?)(?P<delta_unit>KiB)?, "
    r"total=(?P<total>\d+(?:\.\d+)?)(?P<total_unit>KiB)?"
)
BASELINE = re.compile(r"heap baseline: (?P<value>\d+(?:\.\d+)?) ?(?P<unit>B|KiB)")


def scan(path: str | Path) -> dict[str, int]:
    """Per-kind record counts; the records themselves are built (and dropped at return)."""
    ops: list[dict[str, str | Any]] = []
    baselines: list[dict[str, str | Any]] = []
    op_match, baseline_match = OP.match, BASELINE.match
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = op_match(line)
            if m is not None:
                ops.append(m.groupdict())
                continue
            m = baseline_match(line)
            if m is not None:
                baselines.append(m.groupdict())
    return {"op": len(ops), "baseline": len(baselines)}


def scan_peaks(path: str | Path) -> list[int]:
    """The highest total of each run, in bytes."""
    peaks: list[int] = []
    op_match = OP.match
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = op_match(line)
            if m is None:
                if line.startswith("heap baseline:"):
                    peaks.append(-1)
                continue
            total = m["total"]
            value = round(float(total) * 1024) if m["total_unit"] else int(total)
            if value > peaks[-1]:
                peaks[-1] = value
    return peaks


if __name__ == "__main__":
    print(json.dumps(scan(sys.argv[1])))
