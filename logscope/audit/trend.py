"""Metrics over time from an audit database, with regressions marked; text, JSON, CSV and a plot.

A point is one build (`build_metrics` view). Its time is the time the log states about itself when it has
one (`time_source = "log"`: a leading date-time such as TensorFlow's or logcat's, or a `Created date`),
else the file's modification time (`"mtime"`, UTC). Within each group (`by`), points are ordered by
(time, path, build index), and a point is a **regression** when the metric moved the wrong way by more
than `threshold_pct` percent from the previous point of its group: up for sizes and counts, down for
rates and fusions (`HIGHER_IS_BETTER`).
"""

from __future__ import annotations

import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from logscope.errors import ConfigError

from .store import GROUP_COLUMNS, HIGHER_IS_BETTER, TREND_METRICS, Store

TREND_SCHEMA_VERSION = 1
POINT_COLUMNS = (
    "group",
    "time",
    "time_source",
    "path",
    "build_index",
    "toolkit_version",
    "target_platform",
    "value",
    "previous_value",
    "previous_path",
    "previous_toolkit_version",
    "change_pct",
    "regression",
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure  # imported where it draws: matplotlib is slow to import


@dataclass
class TrendResult:
    db: str
    metric: str
    by: str | None
    threshold_pct: float
    higher_is_better: bool
    points: pd.DataFrame  # POINT_COLUMNS, in group then time order

    @property
    def regressions(self) -> pd.DataFrame:
        return self.points[self.points["regression"]]

    @property
    def time_sources(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.points["time_source"].value_counts().sort_index().items()}


def compute_trend(
    db: str | os.PathLike[str],
    metric: str = "internal_bytes",
    by: str | None = None,
    threshold_pct: float = 5.0,
) -> TrendResult:
    """Read `metric` per build from the audit database `db`, group by `by`, mark regressions."""
    if metric not in TREND_METRICS:
        raise ConfigError(f"unknown metric {metric!r} (one of: {', '.join(TREND_METRICS)})")
    if by is not None and by not in GROUP_COLUMNS:
        raise ConfigError(f"cannot group by {by!r} (one of: {', '.join(GROUP_COLUMNS)})")
    if threshold_pct < 0:
        raise ConfigError("--threshold must not be negative")
    group_sql = f"coalesce(CAST({by} AS VARCHAR), '(none)')" if by else "'all'"
    with Store(db, read_only=True) as store:
        frame = store.query_df(
            f'SELECT {group_sql} AS "group", time, time_source, path, build_index, toolkit_version, '
            f"target_platform, CAST({metric} AS DOUBLE) AS value FROM build_metrics "
            f'WHERE {metric} IS NOT NULL ORDER BY "group", time, path, build_index'
        )
    better_up = metric in HIGHER_IS_BETTER
    frame = frame.reset_index(drop=True)
    grouped = frame.groupby("group", sort=False)
    frame["previous_value"] = grouped["value"].shift(1)
    frame["previous_path"] = grouped["path"].shift(1)
    frame["previous_toolkit_version"] = grouped["toolkit_version"].shift(1)
    prev = frame["previous_value"].astype("Float64")
    value = frame["value"].astype("Float64")
    change = ((value - prev) / prev.where(prev != 0)) * 100.0
    frame["change_pct"] = change.round(3)
    worse = change < -threshold_pct if better_up else change > threshold_pct
    frame["regression"] = worse.fillna(False).astype(bool)
    if not metric.endswith("_rate"):  # sizes and counts stay integers
        frame["value"] = frame["value"].round().astype("Int64")
        frame["previous_value"] = frame["previous_value"].round().astype("Int64")
    return TrendResult(str(db), metric, by, threshold_pct, better_up, frame[list(POINT_COLUMNS)])


# ---------------------------------------------------------------------------------------- renderers


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def render_trend_json(result: TrendResult) -> str:
    """JSON (`schema_version` 1): the settings, the time sources used, every point, the regressions."""
    doc = {
        "schema_version": TREND_SCHEMA_VERSION,
        "db": result.db,
        "metric": result.metric,
        "by": result.by,
        "threshold_pct": result.threshold_pct,
        "higher_is_better": result.higher_is_better,
        "time_sources": result.time_sources,
        "points": _records(result.points),
        "regressions": _records(result.regressions),
    }
    return json.dumps(doc, indent=2)


def render_trend_csv(result: TrendResult) -> str:
    buf = io.StringIO()
    result.points.to_csv(buf, index=False)
    return buf.getvalue()


def render_trend_text(result: TrendResult) -> str:
    pts = result.points
    sources = ", ".join(f"{n} from {src}" for src, n in result.time_sources.items()) or "none"
    direction = "a drop" if result.higher_is_better else "a rise"
    lines = [
        f"{result.metric} over time: {len(pts)} builds in {pts['group'].nunique()} group(s)"
        + (f" by {result.by}" if result.by else ""),
        f"time: {sources} (log = a date-time the log states; mtime = file modification time, UTC)",
        f"regression: {direction} of more than {result.threshold_pct:g}% from the group's previous build",
    ]
    for group, rows in pts.groupby("group", sort=False):
        vals = rows["value"]
        lines.append(
            f"  {group}: {len(rows)} builds, first {_num(vals.iloc[0])}, last {_num(vals.iloc[-1])}, "
            f"min {_num(vals.min())}, max {_num(vals.max())}, regressions {int(rows['regression'].sum())}"
        )
    regs = result.regressions
    if len(regs):
        lines.append("")
        lines.append(f"regressions ({len(regs)}):")
        for r in regs.itertuples(index=False):
            upgrade = ""
            before, now = _plain(r.previous_toolkit_version), _plain(r.toolkit_version)
            if before is not None and now is not None and before != now:
                upgrade = f"  toolkit {before} -> {now}"
            lines.append(
                f"  {_plain(r.time)} [{r.time_source}] {r.group}: {_num(r.previous_value)} -> "
                f"{_num(r.value)} ({r.change_pct:+.1f}%)  {r.path}#{r.build_index}{upgrade}"
            )
    return "\n".join(lines)


def _num(value: Any) -> str:
    value = _plain(value)
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:.4g}"


def plot_trend(result: TrendResult, path: str | os.PathLike[str]) -> Figure:
    """Write the series as an image (format from the suffix: png, svg, pdf); regressions in red.
    Returns the figure, so what was drawn can be checked."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    pts = result.points
    for group, rows in pts.groupby("group", sort=False):
        ax.plot(rows["time"], rows["value"], marker="o", markersize=3, linewidth=1, label=str(group))
    regs = result.regressions
    if len(regs):
        ax.scatter(regs["time"], regs["value"], s=60, facecolors="none", edgecolors="red", linewidths=1.5,
                   label=f"regression (> {result.threshold_pct:g}%)", zorder=3)  # fmt: skip
    sources = ", ".join(f"{src}: {n}" for src, n in result.time_sources.items())
    ax.set_xlabel(f"time ({sources or 'no points'}; log = stated in the log, mtime = file time UTC)")
    if result.metric.endswith("_bytes") and len(pts):
        # Bytes in KiB/MiB on round ticks, never raw bytes under a 1e7 offset.
        from logscope.plots._common import byte_axis

        byte_axis(ax, float(pts["value"].max()), "y", result.metric)
    else:
        ax.set_ylabel(result.metric)
    ax.set_title(f"{result.metric}" + (f" by {result.by}" if result.by else ""))
    ax.grid(True, alpha=0.3)
    if len(pts):
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.autofmt_xdate()
    fig.savefig(Path(path))
    return fig
