"""Memory over ops: MCU live bytes per op with the peak and the SRAM budget; RKNN feature memory per layer.

Derivations are in `logscope.analysis.pool` (the RKNN feature pool), `logscope.plots.data`
(feature_curve, mcu_curves) and docs/report.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from logscope.plots._common import (
    COLORS,
    LogLike,
    PlotDataError,
    byte_axis,
    callout,
    human,
    new_axes,
    safe_label,
    source_name,
)
from logscope.plots.data import FeatureCurve, McuCurve, feature_curve, mcu_curves

MAX_POINTS = 1500  # beyond this many layers or steps, consecutive points are binned (max kept)
MAX_RUNS_DRAWN = 6  # more runs than this: the min-max envelope over runs and the run with the top peak
# Distinct runs differ in line style as well as colour, so overlapping stretches stay readable in print.
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1)))


def plot_memory(
    log: LogLike,
    ax: Axes | None = None,
    *,
    build: int | None = None,
    budget_bytes: int | None = None,
    reference: pd.DataFrame | None = None,
    reference_label: str = "reference",
) -> Figure:
    """Memory over operators, with the peak marked.

    RKNN (a feature-tensor table, `logscope.analysis.pool`): live feature-map bytes per layer — each
    tensor live from the layer before its first consumer to its last consumer, the bytes of their
    address ranges with shared ranges counted once — and the address high-water (max End − pool start
    over the tensors live at that layer), with the pool span (= `Total Internal Memory Size`) as a
    line; the live lower bound is drawn dotted where the log's rows alias and it falls below. MCU (a
    `curve` frame): live bytes per step of every run and the SRAM budget (the log's, else
    `budget_bytes`).

    `reference` overlays a curve: a frame with `step` (or `x`) and `live_bytes` and/or
    `high_water_bytes` — `reference_curve(result)` makes one from a reference analysis. It is drawn at
    x = its step, so it lines up with RKNN layer ids only when the fused ops match.
    """
    curve = feature_curve(log, build)
    curves = [] if curve is not None else mcu_curves(log, budget_bytes)
    if curve is None and not curves:
        raise PlotDataError(f"{source_name(log) or 'log'}: no feature-tensor table and no MCU memory curve")
    figure, ax = new_axes(ax)
    top = _draw_feature(ax, curve) if curve is not None else _draw_mcu(ax, curves)
    if reference is not None and len(reference):
        top = max(top, _draw_reference(ax, reference, reference_label))
    ax.set_ylim(0, top * 1.15 if top > 0 else 1)
    byte_axis(ax, top, "y", "bytes live")
    ax.grid(True, axis="y", alpha=0.3)
    # Beside the axes, never over the curves (the peak often sits where "upper right" would be).
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    # Layers and steps are whole numbers: a 3-op curve must not get ticks at 0.25, 0.5, ...
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    name = source_name(log)
    ax.set_title((f"{safe_label(name, 70)}\n" if name else "") + ax.get_title(), fontsize=10)
    return figure


def reference_curve(result: Any, planner: str = "rknn") -> pd.DataFrame:
    """A reference curve as `plot_memory(reference=...)` takes it.

    From a cross-check (`CheckResult`): the RKNN emulation's high-water per fused step; step s is
    drawn at the log's s-th operator id (`replay.steps`), where the log's own curve has the same step.
    From a reference analysis (`ReferenceResult`): `planner`'s live and high-water bytes per step.
    """
    frames = result.frames
    if "check_curve" in frames:
        rows = frames["check_curve"]
        rows = rows[rows["source"] == "reference"][["step", "high_water_bytes"]].reset_index(drop=True)
        steps = list(getattr(getattr(result, "replay", None), "steps", None) or [])
        if steps:
            rows["x"] = [
                steps[s] if s < len(steps) else steps[-1] + (s - len(steps) + 1) for s in rows["step"]
            ]
        return rows
    rows = frames["ref_curve"]
    return rows[rows["planner"] == planner][["step", "live_bytes", "high_water_bytes"]].reset_index(drop=True)


def _binned(x: np.ndarray, *series: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], int]:
    """Consecutive points grouped into at most MAX_POINTS bins, keeping each bin's max (peaks survive)."""
    n = len(x)
    if n <= MAX_POINTS:
        return x, list(series), 1
    width = int(np.ceil(n / MAX_POINTS))
    starts = np.arange(0, n, width)
    return x[starts], [np.maximum.reduceat(s, starts) for s in series], width


def _draw_feature(ax: Axes, curve: FeatureCurve) -> float:
    frame = curve.frame
    x = frame["layer"].to_numpy(dtype=np.int64)
    occupied = frame["occupied_bytes"].to_numpy(dtype=np.int64)
    bound = frame["lower_bound_bytes"].to_numpy(dtype=np.int64)
    high = frame["high_water_bytes"].to_numpy(dtype=np.int64)
    aliased = bool((bound != occupied).any())  # equal at every layer on every real fixture
    x, (occupied, bound, high), width = _binned(x, occupied, bound, high)
    binned = f" (max of each {width} layers)" if width > 1 else ""
    ax.fill_between(x, occupied, step="mid", color=COLORS["live"], alpha=0.35, linewidth=0)
    ax.step(
        x,
        occupied,
        where="mid",
        color=COLORS["live"],
        linewidth=1.4,
        label=f"live feature maps (bytes of their address ranges){binned}",
    )
    if aliased:
        ax.step(
            x,
            bound,
            where="mid",
            color=COLORS["pool"],
            linewidth=1.1,
            linestyle=":",
            label=f"lower bound: live tensors once, overlapping ranges once{binned}",
        )
    ax.step(
        x,
        high,
        where="mid",
        color=COLORS["high-water"],
        linewidth=1.1,
        linestyle="-",
        label=f"address high-water: max(End) − pool start{binned}",
    )
    pool = curve.pool
    where = f", line {pool.internal_line}" if pool.internal_line is not None else ""
    ax.axhline(
        pool.span_bytes,
        color=COLORS["pool"],
        linestyle="--",
        linewidth=1,
        label=f"pool span {human(pool.span_bytes)}"
        + (f" = Total Internal Memory Size{where}" if pool.matches_total else ""),
    )
    ax.set_xlim(x.min() - 0.5, x.max() + 0.5)
    _mark_peak(
        ax,
        curve.peak_layer,
        curve.peak_bytes,
        f"peak {human(curve.peak_bytes)}\nlayer {curve.peak_layer} {safe_label(curve.peak_op_type or '', 24)}"
        + (f" (line {curve.peak_line})" if curve.peak_line is not None else ""),
    )
    ax.set_xlabel("layer (operator id, execution order)")
    lines = pool.table_lines
    ax.set_title(
        f"feature-map memory over layers, build {curve.build_index} (table lines {lines[0]}–{lines[1]})"
    )
    return float(max(pool.span_bytes, occupied.max(), high.max()))


def _draw_mcu(ax: Axes, curves: list[McuCurve]) -> float:
    top_run = max(curves, key=lambda c: c.peak_bytes or -1)
    top = 0.0
    if len(curves) <= MAX_RUNS_DRAWN:
        # Runs with the same curve are drawn once, labelled with every run they stand for: three
        # identical inferences drawn one over another would look like one run and hide two.
        groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[McuCurve]] = {}
        for curve in curves:
            key = (
                tuple(curve.frame["step"].to_numpy(dtype=np.int64)),
                tuple(curve.frame["live_bytes"].fillna(0).to_numpy(dtype=np.int64)),
            )
            groups.setdefault(key, []).append(curve)
        for n, same in enumerate(groups.values()):
            curve = same[0]
            x = curve.frame["step"].to_numpy(dtype=np.int64)
            live = curve.frame["live_bytes"].fillna(0).to_numpy(dtype=np.int64)
            x, (live,), width = _binned(x, live)
            if len(curves) == 1:
                label = "live bytes"
            elif len(same) == 1:
                label = f"run {curve.run_index}"
            else:
                label = f"runs {', '.join(str(c.run_index) for c in same)} (identical)"
            ax.step(
                x,
                live,
                where="mid",
                linewidth=1.4,
                linestyle=LINESTYLES[n % len(LINESTYLES)],
                label=label + (f" (max of each {width} steps)" if width > 1 else ""),
            )
            top = max(top, float(live.max()))
    else:
        steps = pd.concat([c.frame[["step", "live_bytes"]] for c in curves])
        grouped = steps.groupby("step")["live_bytes"].agg(["min", "max"]).astype("float64")
        ax.fill_between(
            grouped.index.to_numpy(),
            grouped["min"].to_numpy(),
            grouped["max"].to_numpy(),
            step="mid",
            color=COLORS["live"],
            alpha=0.3,
            label=f"min–max over {len(curves)} runs",
        )
        x = top_run.frame["step"].to_numpy(dtype=np.int64)
        live = top_run.frame["live_bytes"].fillna(0).to_numpy(dtype=np.int64)
        ax.step(
            x,
            live,
            where="mid",
            color=COLORS["live"],
            linewidth=1.4,
            label=f"run {top_run.run_index} (top peak)",
        )
        top = float(grouped["max"].max())
    budgets = {(c.budget_bytes, c.budget_line, c.budget_source) for c in curves if c.budget_bytes is not None}
    for budget, line, origin in sorted(budgets, key=lambda b: b[0] or 0):
        where = f" (line {line})" if line is not None else (" (--sram)" if origin == "option" else "")
        ax.axhline(
            budget,
            color=COLORS["budget"],
            linestyle="--",
            linewidth=1.2,
            label=f"SRAM budget {human(budget)}{where}",
        )
        top = max(top, float(budget or 0))
    if top_run.peak_bytes is not None and top_run.peak_step is not None:
        run = f", run {top_run.run_index}" if len(curves) > 1 else ""
        where = f" (line {top_run.peak_line})" if top_run.peak_line is not None else ""
        _mark_peak(
            ax,
            top_run.peak_step,
            top_run.peak_bytes,
            f"peak {human(top_run.peak_bytes)}\n{safe_label(top_run.peak_label, 30)}{run}{where}",
        )
        top = max(top, float(top_run.peak_bytes))
    replay = (top_run.derivation or "").startswith("event replay")
    ax.set_xlabel("event (trace order)" if replay else "op (execution order)")
    ax.set_title(
        "memory over ops" + (f": {safe_label(top_run.derivation, 70)}" if top_run.derivation else "")
    )
    return top


def _draw_reference(ax: Axes, reference: pd.DataFrame, label: str) -> float:
    x_column = "x" if "x" in reference.columns else "step"
    x = reference[x_column].to_numpy(dtype=np.float64)
    top = 0.0
    for column, style, what in (("live_bytes", ":", "live"), ("high_water_bytes", "--", "high-water")):
        if column in reference.columns and reference[column].notna().any():
            values = reference[column].astype("float64").to_numpy()
            ax.step(
                x,
                values,
                where="mid",
                color=COLORS["reference"],
                linestyle=style,
                linewidth=1.2,
                label=f"{safe_label(label, 48)} ({what})",
            )
            top = max(top, float(np.nanmax(values)))
    return top


def _mark_peak(ax: Axes, x: float, y: float, text: str) -> None:
    ax.plot([x], [y], marker="v", markersize=9, color=COLORS["peak"], linestyle="none", gid="peak", zorder=5)
    callout(ax, x, y, text, COLORS["peak"])
