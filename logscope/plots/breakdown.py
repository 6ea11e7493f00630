"""Memory breakdown per build and source: weights / feature maps / scratch / other, as each source says."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from logscope.plots._common import (
    COLORS,
    LogLike,
    PlotDataError,
    byte_axis,
    human,
    new_axes,
    safe_label,
    source_name,
)
from logscope.plots.data import BREAKDOWN_BARS, breakdown_bars


def plot_breakdown(log: LogLike, ax: Axes | None = None) -> Figure:
    """One horizontal bar per build and source of figures (`memory` rows: build log totals, compact
    `[Allocate]` summary, ...), stacked weights / feature maps / scratch / other; a printed total is a
    black tick, so a total that is not the sum of its parts shows. Figures from different sources are
    never added together. MCU logs: one bar per figure the tool reports (`arena` rows), coloured by
    source, totals hatched (a total is not stacked on its parts). Each bar ends with its value and lines.
    """
    every = breakdown_bars(log, limit=None)
    bars = every[:BREAKDOWN_BARS]
    if not bars:
        raise PlotDataError(f"{source_name(log) or 'log'}: no memory figures to break down")
    figure, ax = new_axes(ax, (9.5, max(2.4, 0.5 * len(bars) + 1.6)))
    sources = sorted({seg[0] for bar in bars if not _is_rknn(bar.segments) for seg in bar.segments})
    palette = {s: colormaps["tab10"](i % 10) for i, s in enumerate(sources)}
    top = 0.0
    for y, bar in enumerate(bars):
        left = 0
        for category, value, _line in bar.segments:
            color = COLORS.get(category) or palette.get(category, "#999999")
            ax.barh(
                y,
                value,
                left=left,
                color=color,
                edgecolor="white",
                height=0.6,
                hatch="//" if bar.is_total else None,
                label=category,
            )
            left += value
        end = float(left)
        if bar.total is not None:
            total, _ = bar.total
            ax.plot([total, total], [y - 0.38, y + 0.38], color="black", linewidth=2, gid="total")
            end = max(end, float(total))
        lines = sorted(
            {line for _, _, line in bar.segments if line is not None}
            | ({bar.total[1]} if bar.total is not None and bar.total[1] is not None else set())
        )
        where = f"  [line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}]" if lines else ""
        if bar.total is not None:
            figure_text = f"total {human(bar.total[0])}"
        elif len(bar.segments) > 1:
            figure_text = f"sum {human(left)}"  # the log prints no total: say it is our sum
        else:
            figure_text = human(left)
        ax.annotate(f" {figure_text}{where}", xy=(end, y), va="center", fontsize=8).set_in_layout(False)
        top = max(top, end)
    ax.set_yticks(range(len(bars)), [safe_label(b.label, 56) for b in bars], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.7 if top else 1)
    byte_axis(ax, top, "x", "bytes")
    handles, seen = [], set()
    for bar in bars:
        for category, _, _ in bar.segments:
            if category not in seen:
                seen.add(category)
                color = COLORS.get(category) or palette.get(category, "#999999")
                handles.append(Patch(color=color, label=safe_label(category, 24)))
    if any(b.total is not None for b in bars):
        handles.append(Patch(color="black", label="total printed by the log"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    ax.grid(True, axis="x", alpha=0.25)
    name = source_name(log)
    cut = (
        f"\nfirst {len(bars)} of {len(every)} bars; the rest: logscope parse --format json"
        if len(every) > len(bars)
        else ""
    )
    ax.set_title(
        (f"{safe_label(name, 70)}\n" if name else "") + "memory breakdown per build and source" + cut,
        fontsize=10,
    )
    return figure


def _is_rknn(segments: Sequence[tuple[str, int, int | None]]) -> bool:
    return all(category in COLORS for category, _, _ in segments)
