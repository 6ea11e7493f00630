"""Fragmentation of an alloc/free trace: free bytes against the largest free block, event by event."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from logscope.plots._common import (
    COLORS,
    LogLike,
    PlotDataError,
    as_int,
    byte_axis,
    callout,
    human,
    new_axes,
    safe_label,
    source_name,
)
from logscope.plots.data import fragmentation_series, heap_snapshot


def plot_fragmentation(log: LogLike, ax: Axes | None = None, *, run: int | None = None) -> Figure:
    """Free bytes and the largest free block after each alloc/free event of a trace with addresses.

    The span is [lowest allocated address, highest allocated end) of the run; free = span − live,
    largest = the widest gap between live blocks (`logscope.plots.data.fragmentation_series`). The shaded
    band between the two is free memory no single allocation can use. Without a trace, the per-region
    free and largest-free figures of a heap info table (`heap_caps_print_heap_info`) as bars.
    """
    data = fragmentation_series(log, run)
    name = source_name(log)
    prefix = f"{safe_label(name, 70)}\n" if name else ""
    if data is None:
        snapshot = heap_snapshot(log)
        if snapshot is None:
            raise PlotDataError(f"{name or 'log'}: no alloc/free trace with addresses and no heap info table")
        return _snapshot(ax, snapshot.rows, prefix)
    figure, ax = new_axes(ax)
    frame = data.frame
    x = np.arange(len(frame))
    free = frame["free_bytes"].to_numpy(dtype=np.int64)
    largest = frame["largest_free_bytes"].to_numpy(dtype=np.int64)
    ax.fill_between(
        x, largest, free, step="post", color=COLORS["free"], alpha=0.25, label="fragmented (free − largest)"
    )
    ax.step(x, free, where="post", color=COLORS["free"], linewidth=1.4, label="free bytes in span")
    ax.step(x, largest, where="post", color=COLORS["largest"], linewidth=1.4, label="largest free block")
    ratio = 1 - largest / np.where(free > 0, free, 1)
    worst = int(np.argmax(ratio))
    ax.plot([worst], [largest[worst]], marker="v", color=COLORS["peak"], linestyle="none", gid="worst")
    worst_text = (
        f"worst: largest {human(int(largest[worst]))} of {human(int(free[worst]))} free\n"
        f"({ratio[worst] * 100:.2f}% unusable as one block), line {frame['line'].iloc[worst]}"
    )
    low = float(min(largest.min(), free.min()))
    high = float(max(free.max(), largest.max()))
    margin = max((high - low) * 0.25, 1.0)
    ax.set_ylim(max(0.0, low - margin), high + margin)
    ax.set_xlim(-0.5, len(x) - 0.5)
    byte_axis(ax, high, "y", "bytes")
    callout(ax, worst, float(largest[worst]), worst_text, COLORS["peak"])
    ax.set_xlabel("event (trace order)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    lines = f", lines {data.lines[0]}–{data.lines[1]}" if data.lines else ""
    ax.set_title(
        f"{prefix}fragmentation, run {data.run_index}: "
        f"span 0x{data.span_start:x} + {human(data.span_bytes)}{lines}",
        fontsize=10,
    )
    return figure


def _snapshot(ax: Axes | None, rows: pd.DataFrame, prefix: str) -> Figure:
    figure, ax = new_axes(ax, (9.5, max(2.6, 0.55 * len(rows) + 1.6)))
    y = np.arange(len(rows))
    free = rows["free_bytes"].astype("float64").to_numpy()
    largest = rows["largest_free_bytes"].astype("float64").to_numpy()
    ax.barh(y - 0.18, free, height=0.36, color=COLORS["free"], label="free bytes")
    ax.barh(y + 0.18, largest, height=0.36, color=COLORS["largest"], label="largest free block")
    for i, row in enumerate(rows.itertuples(index=False)):
        capacity = as_int(row.capacity_bytes)
        of = f" of {human(capacity)}" if capacity is not None else ""
        ax.annotate(
            f" {human(as_int(row.free_bytes))} free{of} [line {row.line}]",
            xy=(max(free[i], largest[i]), i),
            va="center",
            fontsize=8,
        )
    ax.set_yticks(y, [safe_label(r, 24) for r in rows["region"]], fontsize=8)
    ax.invert_yaxis()
    top = float(max(free.max(), largest.max()))
    ax.set_xlim(0, top * 1.7 if top else 1)
    byte_axis(ax, top, "x", "bytes")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_title(f"{prefix}heap regions: free vs largest free block (snapshot)", fontsize=10)
    return figure
