"""Pure plot functions: `plot_x(log_or_frames, ax=None, ...) -> Figure`, drawn with Agg, never shown.

Each takes a `ParsedLog` (or its frames), draws on `ax` when given (else on a new figure) and returns
the figure; `save_figure(fig, "x.png")` writes PNG or SVG. The series they draw come from
`logscope.plots.data`, whose docstring (and docs/report.md) states every derivation. A plot with
nothing to draw raises `PlotDataError` (a `LogscopeError`); `available_plots(log)` says which can draw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from matplotlib.figure import Figure

from logscope.plots._common import LogLike, PlotDataError, figure_bytes, save_figure
from logscope.plots.address_map import plot_address_map
from logscope.plots.breakdown import plot_breakdown
from logscope.plots.data import (
    address_layout,
    breakdown_bars,
    feature_curve,
    fragmentation_series,
    heap_snapshot,
    mcu_curves,
    perf_table,
)
from logscope.plots.fragmentation import plot_fragmentation
from logscope.plots.memory import plot_memory, reference_curve
from logscope.plots.perf import plot_perf

PLOTS: dict[str, Callable[..., Figure]] = {
    "memory": plot_memory,
    "address-map": plot_address_map,
    "breakdown": plot_breakdown,
    "fragmentation": plot_fragmentation,
    "perf": plot_perf,
}


def available_plots(log: LogLike) -> list[str]:
    """The kinds in `PLOTS` that have data in this log, in report order."""
    checks: dict[str, Callable[[], Any]] = {
        "memory": lambda: feature_curve(log) or mcu_curves(log),
        "address-map": lambda: address_layout(log),
        "breakdown": lambda: breakdown_bars(log),
        "fragmentation": lambda: fragmentation_series(log) or heap_snapshot(log),
        "perf": lambda: perf_table(log),
    }
    return [kind for kind, check in checks.items() if check()]


def plot(kind: str, log: LogLike, **options: Any) -> Figure:
    """`PLOTS[kind](log, **options)`; an unknown kind is a `PlotDataError` naming the known ones."""
    try:
        function = PLOTS[kind]
    except KeyError:
        raise PlotDataError(f"unknown plot kind {kind!r} (use {', '.join(PLOTS)})") from None
    return function(log, **options)


__all__ = [
    "PLOTS",
    "PlotDataError",
    "available_plots",
    "figure_bytes",
    "plot",
    "plot_address_map",
    "plot_breakdown",
    "plot_fragmentation",
    "plot_memory",
    "plot_perf",
    "reference_curve",
    "save_figure",
]
