"""Per-layer time and read/write volume: the slowest layers, top-N only, so a big model stays readable."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from mpl_toolkits.axes_grid1 import make_axes_locatable

from logscope.plots._common import COLORS, LogLike, PlotDataError, new_axes, safe_label, source_name
from logscope.plots.data import perf_table

TOP = 20


def plot_perf(log: LogLike, ax: Axes | None = None, *, build: int | None = None, top: int = TOP) -> Figure:
    """The `top` layers by time (`Time(us)` of the layer table; ticks or µs for MCU ops) and their
    `RW(KB)`, ranked by RW when the log has no times (a simulator build prints 0 µs).

    Time and read/write volume are two quantities with two units, so they get two panels side by
    side with the layer names shared, never two x-axes over one another. The title says which share
    of the total the shown layers make, so the rest is never hidden.
    """
    table = perf_table(log, build)
    if table is None:
        raise PlotDataError(f"{source_name(log) or 'log'}: no per-layer time or RW figures")
    shown = table.frame.head(top)
    figure, ax = new_axes(ax, (10.5, max(3.0, 0.28 * len(shown) + 1.8)))
    y = np.arange(len(shown))
    time = _finite(shown["time_us"])
    rw = _finite(shown["rw_kb"])
    has_time, has_rw = table.total_time_us is not None, table.total_rw_kb is not None
    unit = "ticks" if "ticks" in table.source else "µs"
    panels: list[tuple[Axes, np.ndarray, str, str]] = []
    if has_time:
        panels.append((ax, time, COLORS["time"], f"time ({unit})"))
    if has_rw:
        rw_ax = make_axes_locatable(ax).append_axes("right", size="80%", pad=0.15) if has_time else ax
        panels.append((rw_ax, rw, COLORS["rw"], "read/write volume (KB)"))
    for panel, values, color, label in panels:
        panel.barh(y, values, height=0.7, color=color)
        panel.set_xlabel(label)
        top_value = float(values.max()) if len(values) else 0.0
        panel.set_xlim(0, top_value * 1.12 or 1)
        panel.set_ylim(len(shown) - 0.5, -0.5)
        panel.grid(True, axis="x", alpha=0.25)
        for yi, value in zip(y, values, strict=True):
            if value > 0:
                panel.text(float(value), float(yi), f" {value:,.0f}", va="center", fontsize=6.5, color="#333")
        if panel is not ax:
            panel.tick_params(axis="y", left=False, labelleft=False)
    ax.set_yticks(y, [safe_label(label, 52) for label in shown["label"]], fontsize=7)
    measure = "time_us" if table.ranked_by == "time_us" else "rw_kb"
    total = table.total_time_us if measure == "time_us" else table.total_rw_kb
    share = float(shown[measure].astype("float64").sum()) / total * 100 if total else 0.0
    what = f"{'slowest' if measure == 'time_us' else 'largest RW'} {len(shown)} of {table.layers} layers"
    name = source_name(log)
    lines = f", lines {table.lines[0]}–{table.lines[1]}" if table.lines else ""
    total_of = "time" if measure == "time_us" else "RW"
    title = f"{what}: {share:.1f}% of the total {total_of} ({table.source}{lines})"
    figure.suptitle((f"{safe_label(name, 70)}\n" if name else "") + title, fontsize=10)
    return figure


def _finite(values: pd.Series) -> np.ndarray:
    """A column as floats for drawing: missing and non-finite cells (an `inf` pasted into RW) are 0,
    which draws no bar, so one bad cell cannot take the axis limits with it."""
    array = values.astype("float64").fillna(0).to_numpy()
    return np.where(np.isfinite(array), array, 0.0)
