"""Helpers for the `REF` rules: reading the cross-check frames a `CheckResult` attaches to a log.

`logscope check` (and `check_log_against_model(...).attach_to(log)`) stores `check_summary`,
`check_tensors`, `check_fusions`, `check_cpu_ops` and `check_curve` on the parsed log; a rule that
NEEDS them never runs on a log that was only parsed. The summary's `item` texts are the cross-check's
contract (`logscope.reference.check`, docs/reference.md); they are named here once.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from logscope.model import ParsedLog
from logscope.rules._common import as_float, as_int, as_str

WEIGHTS = "weight bytes"
POOL_EMULATION = "feature pool (RKNN emulation)"
POOL_EMULATION_QUIRKS = "feature pool (RKNN emulation + suggested quirks)"
POOL_LOWER_BOUND_NATIVE = "feature pool vs lower bound (native, fused)"
POOL_GREEDY_NATIVE = "feature pool vs greedy-by-size plan (native, fused)"
# The logical lower bound names the analysis dtype: "feature pool vs lower bound (int8 logical, unfused)".
POOL_LOWER_BOUND_LOGICAL_PREFIX = "feature pool vs lower bound ("
POOL_LOWER_BOUND_LOGICAL_SUFFIX = "logical, unfused)"


def summary_row(log: ParsedLog, item: str) -> dict[str, Any] | None:
    """The `check_summary` row whose item is `item`, as plain values, or None."""
    frame = log.frames.get("check_summary")
    if frame is None or frame.empty:
        return None
    rows = frame[frame["item"] == item]
    return _plain_row(rows.iloc[0]) if len(rows) else None


def logical_lower_bound_row(log: ParsedLog) -> dict[str, Any] | None:
    frame = log.frames.get("check_summary")
    if frame is None or frame.empty:
        return None
    items = frame["item"].astype(str)
    mask = items.str.startswith(POOL_LOWER_BOUND_LOGICAL_PREFIX) & items.str.endswith(
        POOL_LOWER_BOUND_LOGICAL_SUFFIX
    )
    rows = frame[mask]
    return _plain_row(rows.iloc[0]) if len(rows) else None


def _plain_row(row: pd.Series) -> dict[str, Any]:
    return {
        "item": as_str(row["item"]),
        "log_value": as_int(row["log_value"]),
        "reference_value": as_int(row["reference_value"]),
        "difference": as_int(row["difference"]),
        "ratio": as_float(row["ratio"]),
        "likely_cause": as_str(row["likely_cause"]) or "",
        "log_line": as_int(row["log_line"]),
    }


def build_of_line(log: ParsedLog, line: int | None) -> int | None:
    """The build whose line range holds `line` (the last one if ranges nest), else None."""
    builds = log.frames.get("builds")
    if line is None or builds is None or builds.empty:
        return None
    found = None
    for row in builds.itertuples(index=False):
        start, end = as_int(row.start_line), as_int(row.end_line)
        if start is not None and start <= line and (end is None or line <= end):
            found = as_int(row.build_index)
    return found
