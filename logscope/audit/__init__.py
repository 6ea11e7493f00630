"""Batch audit of many logs into an embedded DuckDB store, and metrics over time from it.

`audit(paths, db, options)` walks folders and globs, parses and checks every new file (in this process, a
local process pool or dask.distributed) and commits the results through one writer; `compute_trend(db,
metric, by)` reads a metric per build back with regressions marked. docs/audit.md has the store's schema.
"""

from .discover import DEFAULT_PATTERNS, discover
from .runner import AuditInterrupted, AuditOptions, AuditProgress, AuditReport, audit, run_dask, run_pool
from .store import FRAME_TABLES, GROUP_COLUMNS, TREND_METRICS, Store
from .trend import (
    TrendResult,
    compute_trend,
    plot_trend,
    render_trend_csv,
    render_trend_json,
    render_trend_text,
)
from .worker import FileResult, FileTask, RuleOverrides, audit_file, find_log_time

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
