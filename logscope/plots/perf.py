"""Per-layer time and read/write volume: the slowest layers, top-N only, so a big model stays readable."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from logscope.plots._common import COLORS, LogLike, PlotDataError, new_axes, safe_label, source_name
from logscope.plots.data import perf_table

TOP = 20


def _finite(values: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(values), values, 0.0)


def plot_perf(log: LogLike, ax: Axes | None = None, *, build: int | None = None, top: int = TOP) -> Figure:
    """The `top` layers by time (`Time(us)` of the layer table; ticks or µs for MCU ops), with their
    `RW(KB)` on a second axis; ranked by RW when the log has no times (a simulator build prints 0 µs).
    The title says which share of the total the shown layers make, so the rest is never hidden.
    """
    table = perf_table(log, build)
    if table is None:
        raise PlotDataError(f"{source_name(log) or 'log'}: no per-layer time or RW figures")
    shown = table.frame.head(top)
    figure, ax = new_axes(ax, (9.5, max(3.0, 0.28 * len(shown) + 1.8)))
    y = np.arange(len(shown))
    # A cell the log prints as `inf` or `nan` is drawn as no bar: axis limits must be finite.
    time = _finite(shown["time_us"].astype("float64").to_numpy())
    rw = _finite(shown["rw_kb"].astype("float64").to_numpy())
    has_time, has_rw = table.total_time_us is not None, table.total_rw_kb is not None
    unit = "ticks" if "ticks" in table.source else "µs"
    height = 0.4 if has_time and has_rw else 0.7
    handles = []
    if has_time:
        handles.append(
            ax.barh(
                y - (0.2 if has_rw else 0), time, height=height, color=COLORS["time"], label=f"time ({unit})"
            )
        )
        ax.set_xlabel(f"time ({unit})")
        ax.set_xlim(0, float(time.max()) * 1.1 or 1)
    rw_ax = ax
    if has_rw:
        rw_ax = ax.twiny() if has_time else ax
        handles.append(
            rw_ax.barh(y + (0.2 if has_time else 0), rw, height=height, color=COLORS["rw"], label="RW (KB)")
        )
        rw_ax.set_xlabel("read/write volume (KB)")
        rw_ax.set_xlim(0, float(rw.max()) * 1.1 or 1)
    ax.set_yticks(y, [safe_label(label, 52) for label in shown["label"]], fontsize=7)
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.grid(True, axis="x", alpha=0.25)
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    measure = "time_us" if table.ranked_by == "time_us" else "rw_kb"
    total = table.total_time_us if measure == "time_us" else table.total_rw_kb
    share = float(shown[measure].astype("float64").sum()) / total * 100 if total else 0.0
    what = f"{'slowest' if measure == 'time_us' else 'largest RW'} {len(shown)} of {table.layers} layers"
    name = source_name(log)
    lines = f", lines {table.lines[0]}–{table.lines[1]}" if table.lines else ""
    total_of = "time" if measure == "time_us" else "RW"
    title = f"{what}: {share:.1f}% of the total {total_of} ({table.source}{lines})"
    ax.set_title((f"{safe_label(name, 70)}\n" if name else "") + title, fontsize=10)
    return figure
