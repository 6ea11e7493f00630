"""Plumbing shared by the plot functions: figures without pyplot, safe labels, byte axes.

Figures are built with `matplotlib.figure.Figure` directly, never through `pyplot`: no global state,
no GUI backend, nothing is ever shown; `savefig` renders with Agg. Text taken from a log (tensor and
layer names) goes through `safe_label`, because matplotlib would read `$...$` as mathtext.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from logscope.errors import LogscopeError
from logscope.frames import SCHEMAS, empty_frame
from logscope.model import ParsedLog

LogLike = ParsedLog | Mapping[str, pd.DataFrame]

# One palette for every plot, so a category keeps its colour across figures of a report.
COLORS = {
    "weights": "#4C72B0",
    "feature maps": "#DD8452",
    "scratch": "#55A868",
    "other": "#8172B3",
    "live": "#DD8452",
    "high-water": "#C44E52",
    "budget": "#C44E52",
    "pool": "#333333",
    "reference": "#4C72B0",
    "peak": "#C44E52",
    "time": "#4C72B0",
    "rw": "#DD8452",
    "system": "#64B5CD",
    "npu": "#DA8BC3",
    "free": "#55A868",
    "largest": "#4C72B0",
}
DTYPE_COLORS = {
    "INT8": "#4C72B0",
    "UINT8": "#64B5CD",
    "INT16": "#8172B3",
    "FLOAT16": "#DD8452",
    "FLOAT": "#C44E52",
    "FLOAT32": "#C44E52",
    "INT32": "#55A868",
    "INT64": "#937860",
}


class PlotDataError(LogscopeError):
    """The log holds none of the data this plot draws (e.g. `--kind perf` on a log without a layer table)."""


def frames_of(log: LogLike) -> Mapping[str, pd.DataFrame]:
    """The frames of a `ParsedLog`, or the mapping itself."""
    return log.frames if isinstance(log, ParsedLog) else log


def frame_of(frames: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    """Frame `name`, or an empty one with its declared columns when a mapping lacks it."""
    frame = frames.get(name)
    if frame is not None:
        return frame
    return empty_frame(name) if name in SCHEMAS else pd.DataFrame()


def source_name(log: LogLike) -> str:
    return Path(log.source).name if isinstance(log, ParsedLog) else ""


def new_axes(ax: Axes | None, size: tuple[float, float] = (9.5, 4.6)) -> tuple[Figure, Axes]:
    """`ax` and its figure, or a fresh figure with one axes (no pyplot: nothing global, nothing shown)."""
    if ax is not None:
        figure = ax.get_figure()
        assert isinstance(figure, Figure)
        return figure, ax
    figure = Figure(figsize=size, layout="constrained")
    return figure, figure.add_subplot()


def safe_label(text: Any, limit: int = 40) -> str:
    """Text from a log made safe for matplotlib: no mathtext (`$`), no control characters, bounded length.

    Long names are cut in the middle (`MobilenetV1/…/BiasAdd`): both ends of a tensor name identify it.
    """
    value = "" if text is None or text is pd.NA else str(text)
    value = "".join(ch if ch.isprintable() else " " for ch in value)
    if len(value) > limit:
        keep = max(limit - 1, 2)
        value = value[: keep // 2] + "…" + value[len(value) - (keep - keep // 2) :]
    return value.replace("$", r"\$")


def byte_unit(max_value: float) -> tuple[float, str]:
    """(divisor, unit) for an axis whose largest value is `max_value` bytes."""
    for divisor, unit in ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
        if max_value >= divisor:
            return float(divisor), unit
    return 1.0, "B"


def byte_axis(ax: Axes, max_value: float, axis: str = "y", label: str = "") -> None:
    """Label an axis holding raw byte values in KiB/MiB/GiB (data stay in bytes, so limits are bytes).

    Ticks fall on round numbers of the display unit (0.25 MiB, not 0.24), hence the explicit locator.
    """
    divisor, unit = byte_unit(max_value)

    def fmt(value: float, _pos: int) -> str:
        return f"{value / divisor:.4g}"

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(_UnitLocator(divisor))
    target.set_major_formatter(FuncFormatter(fmt))
    text = f"{label} ({unit})" if label else unit
    if axis == "y":
        ax.set_ylabel(text)
    else:
        ax.set_xlabel(text)


class _UnitLocator(MaxNLocator):
    """Round ticks in the display unit (KiB, MiB) for an axis whose data are bytes."""

    def __init__(self, divisor: float) -> None:
        super().__init__(nbins=7, steps=[1, 2, 2.5, 5, 10], integer=divisor == 1)
        self.divisor = divisor

    def tick_values(self, vmin: float, vmax: float) -> Any:
        return np.asarray(super().tick_values(vmin / self.divisor, vmax / self.divisor)) * self.divisor


def callout(ax: Axes, x: float, y: float, text: str, color: str) -> None:
    """A boxed note pointing at (x, y), placed towards the middle of the axes, never resizing the layout."""
    x_lo, x_hi = ax.get_xlim()
    right = x > (x_lo + x_hi) / 2
    note = ax.annotate(
        text,
        xy=(x, y),
        xytext=(-14 if right else 14, 12),
        textcoords="offset points",
        fontsize=8,
        ha="right" if right else "left",
        bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": color, "alpha": 0.9},
        arrowprops={"arrowstyle": "-", "color": color},
    )
    note.set_in_layout(False)


def human(value: float | int | None) -> str:
    """`1204224` -> `1.15 MiB (1204224 B)`; the exact figure stays visible, as in every logscope output."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    divisor, unit = byte_unit(abs(float(value)))
    if divisor == 1:
        return f"{int(value)} B"
    return f"{value / divisor:.2f} {unit} ({int(value)} B)"


def figure_bytes(figure: Figure, fmt: str = "png", dpi: int = 100) -> bytes:
    """The figure rendered as PNG or SVG bytes (Agg for PNG)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=dpi, metadata=_metadata(fmt))
    return buffer.getvalue()


def save_figure(figure: Figure, path: str | Path, dpi: int = 100) -> Path:
    """Write the figure; the format follows the suffix (`.png` or `.svg`)."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise PlotDataError(
            f"{target}: plots are written as .png or .svg, not {target.suffix or 'no suffix'}"
        )
    target.write_bytes(figure_bytes(figure, fmt, dpi))
    return target


def _metadata(fmt: str) -> dict[str, Any]:
    # No creation date (reproducible bytes) and no software banner with a version in it.
    if fmt == "svg":
        return {"Date": None, "Creator": None}
    if fmt == "png":
        return {"Software": None}
    return {}


def line_range(lines: pd.Series | list[Any]) -> tuple[int, int] | None:
    """(first, last) of the log line numbers a figure is drawn from, or None."""
    values = [int(v) for v in pd.Series(lines, dtype="object").dropna()]
    return (min(values), max(values)) if values else None


def as_int(value: Any) -> int | None:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return int(value)


def as_str(value: Any) -> str | None:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)
