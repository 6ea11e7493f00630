"""Tensor address map: where each tensor sits in the pool and while which layers — the picture of reuse."""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from logscope.plots._common import (
    COLORS,
    DTYPE_COLORS,
    LogLike,
    PlotDataError,
    byte_axis,
    human,
    new_axes,
    safe_label,
    source_name,
)
from logscope.plots.data import address_layout

NAMED = 5  # the largest tensors get their name written on the map
EDGE_LIMIT = 400  # above this many rectangles edges are dropped, so a big model does not turn black


def plot_address_map(
    log: LogLike, ax: Axes | None = None, *, build: int | None = None, run: int | None = None
) -> Figure:
    """One rectangle per tensor: x = the layers it is live (the layer before its first consumer to its
    last consumer), y = [Start, End) relative to the pool start; colour = data type. The pool span is
    marked (dashed) and compared with `Total Internal Memory Size`. Rows the runtime keeps outside the
    pool are hatched grey. For a TFLM memory plan, one rectangle per planned buffer (first_op..last_op,
    offset..offset + size). Free space below the span at a layer is reuse the allocator did not find.
    """
    data = address_layout(log, build, run)
    if data is None:
        raise PlotDataError(
            f"{source_name(log) or 'log'}: no feature-tensor table and no memory plan with offsets"
        )
    figure, ax = new_axes(ax, (9.5, 5.2))
    rects = data.rects
    x0, x1 = rects["x0"].to_numpy(dtype=float), rects["x1"].to_numpy(dtype=float)
    y0, y1 = rects["y0"].to_numpy(dtype=float), rects["y1"].to_numpy(dtype=float)
    verts = np.stack([np.column_stack(c) for c in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))], axis=1)
    buffers = bool((rects["dtype"] == "buffer").all())
    if buffers:
        sizes = rects["size_bytes"].to_numpy(dtype=np.float64)
        norm = sizes / sizes.max() if sizes.max() > 0 else sizes
        colors = [colormaps["viridis"](0.2 + 0.7 * v) for v in norm]
    else:
        colors = [
            DTYPE_COLORS.get(str(d).upper(), "#999999") if inside else "#BBBBBB"
            for d, inside in zip(rects["dtype"], rects["inside"], strict=True)
        ]
    edge = "white" if len(rects) <= EDGE_LIMIT else "none"
    collection = PolyCollection(list(verts), facecolors=colors, edgecolors=edge, linewidths=0.6, alpha=0.85)
    ax.add_collection(collection)
    outside = rects[~rects["inside"]]
    for r in outside.itertuples(index=False):
        ax.fill(
            [r.x0, r.x1, r.x1, r.x0],
            [r.y0, r.y0, r.y1, r.y1],
            facecolor="none",
            edgecolor="#666666",
            hatch="//",
            linewidth=0.6,
        )
    span = data.span_bytes
    ax.axhline(0, color=COLORS["pool"], linewidth=0.8)
    ax.axhline(span, color=COLORS["pool"], linestyle="--", linewidth=1.2, gid="pool-span")
    ax.annotate(
        data.span_label.format(span=human(span)),
        xy=(0.01, span),
        xycoords=("axes fraction", "data"),
        xytext=(0, 4),
        textcoords="offset points",
        fontsize=8,
        color=COLORS["pool"],
    )
    for i in rects["size_bytes"].to_numpy().argsort(kind="stable")[::-1][:NAMED]:
        ax.annotate(
            safe_label(rects["name"].iloc[i], 28),
            xy=((x0[i] + x1[i]) / 2, (y0[i] + y1[i]) / 2),
            fontsize=7,
            ha="center",
            va="center",
            color="black",
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.75},
            # A label of a tensor at the edge must not spill over the ticks and the axis title.
            annotation_clip=True,
            clip_on=True,
        )
    x_lo, x_hi = float(rects["x0"].min()), float(rects["x1"].max())
    y_lo = min(0.0, float(rects["y0"].min()))
    y_hi = max(float(span), float(rects["y1"].max()))
    pad = (y_hi - y_lo) * 0.08 or 1.0
    ax.set_xlim(x_lo - 0.5, x_hi + 0.5)
    ax.set_ylim(y_lo - (pad if y_lo < 0 else 0), y_hi + pad)
    byte_axis(ax, y_hi, "y", "offset in pool")
    ax.set_xlabel(data.x_label, fontsize=8)
    lines = f" (lines {data.lines[0]}–{data.lines[1]})" if data.lines else ""
    name = source_name(log)
    ax.set_title((f"{safe_label(name, 70)}\n" if name else "") + data.title + lines, fontsize=10)
    if not buffers:
        present = [d for d in dict.fromkeys(str(x).upper() for x in rects.loc[rects["inside"], "dtype"])]
        handles = [Patch(color=DTYPE_COLORS.get(d, "#999999"), label=safe_label(d, 12)) for d in present]
        if len(outside):
            handles.append(Patch(facecolor="none", edgecolor="#666666", hatch="//", label="outside the pool"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    ax.grid(True, axis="y", alpha=0.25)
    return figure
