"""Batch audit of many logs into an embedded DuckDB store, and metrics over time from it.

`audit(paths, db, options)` walks folders and globs, parses and checks every new file (in this process, a
local process pool or dask.distributed) and commits the results through one writer; `compute_trend(db,
metric, by)` reads a metric per build back with regressions marked. docs/audit.md has the store's schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .discover import DEFAULT_PATTERNS, discover
from .runner import AuditInterrupted, AuditOptions, AuditProgress, AuditReport, audit, run_dask, run_pool
from .store import FRAME_TABLES, GROUP_COLUMNS, TREND_METRICS, Store
from .tasks import FileResult, FileTask, RuleOverrides

if TYPE_CHECKING:
    from .trend import (
        TrendResult,
        compute_trend,
        plot_trend,
        render_trend_csv,
        render_trend_json,
        render_trend_text,
    )
    from .worker import audit_file, find_log_time

# Names of the modules that import pandas, the parsers and the rules, imported on first use: the
# auditing process of a worker pool plans and writes without them (see `tasks`).
_LAZY = {
    "TrendResult": "trend",
    "compute_trend": "trend",
    "plot_trend": "trend",
    "render_trend_csv": "trend",
    "render_trend_json": "trend",
    "render_trend_text": "trend",
    "audit_file": "worker",
    "find_log_time": "worker",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_PATTERNS",
    "FRAME_TABLES",
    "GROUP_COLUMNS",
    "TREND_METRICS",
    "AuditInterrupted",
    "AuditOptions",
    "AuditProgress",
    "AuditReport",
    "FileResult",
    "FileTask",
    "RuleOverrides",
    "Store",
    "TrendResult",
    "audit",
    "audit_file",
    "compute_trend",
    "discover",
    "find_log_time",
    "plot_trend",
    "render_trend_csv",
    "render_trend_json",
    "render_trend_text",
    "run_dask",
    "run_pool",
]
