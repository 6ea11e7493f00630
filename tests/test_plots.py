"""Plot functions under Agg: each draws what it claims (axes limits, the marked peak, the pool span)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

import logscope
from logscope.frames import build_frame
from logscope.io import decode_bytes
from logscope.model import ParsedLog
from logscope.plots import (
    PLOTS,
    PlotDataError,
    available_plots,
    plot,
    plot_address_map,
    plot_breakdown,
    plot_fragmentation,
    plot_memory,
    plot_perf,
    save_figure,
)
from logscope.plots.data import feature_curve, fragmentation_series, mcu_curves
from tests.conftest import FIXTURES, MOBILENET, RKNN

matplotlib.use("Agg")

SRAM_LOG = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"
PERF_LOG = RKNN / "03-perf-detail-cpp-yolov8-1920-rk3588.log"
TK1_LOG = RKNN / "12-tk1-1.6.1-eval-perf-memory-rk1808.log"
HEAP_LOG = FIXTURES / "synthetic" / "heap-trace-stm32-uart-bytes-leak.txt"
EVENTS_LOG = FIXTURES / "mcu" / "18-espidf-sysview-host-heap-log-timestamped.txt"
HEAP_INFO_LOG = FIXTURES / "mcu" / "25-espidf-heap-caps-print-heap-info.txt"
PLAN_LOG = FIXTURES / "mcu" / "04-tflm-greedy-planner-printmemoryplan-pr48595-partial.txt"
NNOM_LOG = FIXTURES / "mcu" / "19-nnom-kws-compile-memblocks-and-model-stat.txt"

_LOGS: dict[Path, ParsedLog] = {}


def parsed(path: Path) -> ParsedLog:
    if path not in _LOGS:
        _LOGS[path] = logscope.parse(path)
    return _LOGS[path]


def peak_marker(fig: Figure) -> tuple[float, float]:
    (marker,) = [line for line in fig.axes[0].get_lines() if line.get_gid() == "peak"]
    return float(marker.get_xdata()[0]), float(marker.get_ydata()[0])


def horizontal_lines(fig: Figure) -> list[float]:
    out = []
    for line in fig.axes[0].get_lines():
        ys = np.asarray(line.get_ydata(), dtype=float)
        if len(ys) == 2 and ys[0] == ys[1] and list(line.get_xdata()) == [0, 1]:
            out.append(float(ys[0]))
    return out


def legend_texts(fig: Figure) -> list[str]:
    legend = fig.axes[0].get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


# ------------------------------------------------------------------------------------------ memory


def test_memory_rknn_marks_the_live_peak_and_the_pool_span():
    fig = plot_memory(parsed(MOBILENET))
    ax = fig.axes[0]
    # Layer 3 (Conv2d_1_pointwise) holds Relu6__7:0 + Relu6__9:0: the figure MEM001 reports.
    assert peak_marker(fig) == (3.0, 1204224.0)
    assert 1756160.0 in horizontal_lines(fig)  # pool span = Total Internal Memory Size (line 279)
    assert ax.get_ylim()[1] > 1756160 and ax.get_ylim()[0] == 0
    assert ax.get_xlim()[0] < 0 < 33 < ax.get_xlim()[1]
    assert any("Total Internal Memory Size, line 279" in t for t in legend_texts(fig))
    assert "MiB" in ax.get_ylabel()


def test_memory_rknn_runtime_table_keeps_input_and_output_outside_the_pool():
    curve = feature_curve(parsed(SRAM_LOG))
    assert curve is not None
    # reference-anchors A9: 1,605,632 B live at once; the SRAM log's pool is 2,157,568 B (line 41).
    assert (curve.peak_bytes, curve.peak_layer) == (1605632, 3)
    assert curve.pool.span_bytes == curve.pool.internal_bytes == 2157568
    assert len(curve.pool.outside) == 2
    assert int(curve.frame["high_water_bytes"].max()) == 2157568
    fig = plot_memory(parsed(SRAM_LOG))
    assert peak_marker(fig) == (3.0, 1605632.0)


def test_memory_mcu_marks_peak_and_budget():
    fig = plot_memory(parsed(HEAP_LOG))
    ax = fig.axes[0]
    assert peak_marker(fig) == (2.0, 69384.0)  # run 2, op 2 Conv2D, line 40
    assert 65536.0 in horizontal_lines(fig)  # `RAM budget` of line 6
    assert ax.get_ylim()[1] > 69384
    assert {"run 0", "run 1", "run 2"} <= set(legend_texts(fig))
    assert any("SRAM budget 64.00 KiB (65536 B) (line 6)" in t for t in legend_texts(fig))


def test_memory_mcu_budget_from_the_option_when_the_log_states_none():
    log = parsed(NNOM_LOG)
    assert mcu_curves(log)[0].budget_bytes is None
    fig = plot_memory(log, budget_bytes=320 * 1024)
    assert 327680.0 in horizontal_lines(fig)
    assert any("(--sram)" in t for t in legend_texts(fig))
    assert peak_marker(fig)[1] == 11264.0  # NNoM: MaxPool's in + out + buf


def test_memory_overlays_a_reference_curve():
    reference = pd.DataFrame({"step": [1, 2, 3], "high_water_bytes": [100, 2_000_000, 300]})
    fig = plot_memory(parsed(MOBILENET), reference=reference, reference_label="model.onnx")
    (line,) = [line for line in fig.axes[0].get_lines() if "model.onnx" in str(line.get_label())]
    assert max(line.get_ydata()) == 2_000_000
    assert fig.axes[0].get_ylim()[1] > 2_000_000


def test_memory_of_thousands_of_layers_is_binned_keeping_the_peak():
    rows = [
        {
            "build_index": 0,
            "table": "feature",
            "op_id": k,
            "user_op": "Conv",
            "name": f"t{k}",
            "dtype": "INT8",
            "start_offset": (k % 2) * 4096,
            "end_offset": (k % 2) * 4096 + 1000 + (50_000 if k == 3217 else 0),
            "size_bytes": 1000 + (50_000 if k == 3217 else 0),
            "line": k,
        }
        for k in range(1, 6001)
    ]
    log = ParsedLog("big.log", "rknn-build", {"tensors": build_frame("tensors", rows)}, {"total": 6000})
    fig = plot_memory(log)
    step_lines = [line for line in fig.axes[0].get_lines() if "layers)" in str(line.get_label())]
    assert step_lines and all(len(line.get_xdata()) <= 1500 for line in step_lines)
    assert peak_marker(fig) == (3216.0, 52000.0)  # t3217 and t3216 live together at layer 3216
    assert max(max(line.get_ydata()) for line in step_lines) >= 52000
    address = plot_address_map(log)
    (collection,) = [c for c in address.axes[0].collections if isinstance(c, PolyCollection)]
    assert len(collection.get_paths()) == 6000


def test_memory_counts_shared_address_ranges_once():
    # Two inputs of a concat placed inside its output ([30]-style rows): live together, one range.
    rows = [
        {
            "build_index": 0,
            "table": "feature",
            "op_id": op,
            "user_op": user,
            "name": name,
            "dtype": "INT8",
            "start_offset": start,
            "end_offset": end,
            "size_bytes": end - start,
            "line": line,
        }
        for op, user, name, start, end, line in (
            (1, "Conv", "input", 0, 100, 1),
            (2, "Concat", "a", 100, 150, 2),
            (2, "Concat", "b", 150, 200, 3),
            (3, "Conv", "cat", 100, 200, 4),
        )
    ]
    log = ParsedLog("alias.log", "rknn-build", {"tensors": build_frame("tensors", rows)}, {"total": 4})
    curve = feature_curve(log)
    assert curve is not None
    assert curve.pool.span_bytes == 200
    # Layer 2: a, b (consumed by 2) and cat (consumed by 3) share [100, 200): 100 B, not 200.
    assert list(curve.frame["occupied_bytes"]) == [100, 200, 100, 100]
    assert list(curve.frame["lower_bound_bytes"]) == [100, 200, 100, 100]
    assert curve.peak_bytes <= curve.pool.span_bytes


# ------------------------------------------------------------------------------------- address map


def test_address_map_draws_every_pool_tensor_inside_the_span():
    fig = plot_address_map(parsed(MOBILENET))
    ax = fig.axes[0]
    (collection,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(collection.get_paths()) == 36  # the 36 feature rows of lines 177-212
    (span,) = [line for line in ax.get_lines() if line.get_gid() == "pool-span"]
    assert span.get_ydata()[0] == 1756160
    tops = [path.vertices[:, 1].max() for path in collection.get_paths()]
    assert max(tops) == 1756160 and min(path.vertices[:, 1].min() for path in collection.get_paths()) == 0
    assert ax.get_ylim()[0] <= 0 and ax.get_ylim()[1] > 1756160
    assert "INT8" in legend_texts(fig) and "FLOAT16" in legend_texts(fig)


def test_address_map_marks_rows_outside_the_runtime_pool():
    fig = plot_address_map(parsed(SRAM_LOG))
    assert "outside the pool" in legend_texts(fig)
    assert fig.axes[0].get_ylim()[0] < 0  # input0 and output57 sit below the SRAM-backed pool


def test_address_map_of_a_tflm_memory_plan():
    fig = plot_address_map(parsed(PLAN_LOG))
    ax = fig.axes[0]
    (collection,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(collection.get_paths()) == 9
    (span,) = [line for line in ax.get_lines() if line.get_gid() == "pool-span"]
    assert span.get_ydata()[0] == 18432  # buffer 3: 18432 B at offset 0


# --------------------------------------------------------------------------------------- breakdown


def bar_widths(fig: Figure) -> list[float]:
    return [patch.get_width() for patch in fig.axes[0].patches]


def test_breakdown_stacks_each_sources_figures():
    fig = plot_breakdown(parsed(MOBILENET))
    assert bar_widths(fig) == [4447296, 1756160]  # weights line 278, feature maps line 279
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["build 0 · build-log"]


def test_breakdown_marks_printed_totals():
    fig = plot_breakdown(parsed(TK1_LOG))
    totals = sorted(line.get_xdata()[0] for line in fig.axes[0].get_lines() if line.get_gid() == "total")
    assert totals == [189666427, 357606359]  # maximum and total allocation of eval_memory


# ----------------------------------------------------------------------------------- fragmentation


def test_fragmentation_replays_the_trace_with_addresses():
    series = fragmentation_series(parsed(EVENTS_LOG))
    assert series is not None
    assert (series.span_start, series.span_bytes) == (0x3FFAFFD8, 16616)
    assert len(series.frame) == 14  # the leak report's `leaked` rows are not events
    first = series.frame.iloc[0]
    assert (first["free_bytes"], first["largest_free_bytes"]) == (16615, 16615)
    worst = series.frame.loc[series.frame["seq"] == series.worst_seq].iloc[0]
    assert (worst["free_bytes"], worst["largest_free_bytes"], worst["line"]) == (16598, 16580, 52)
    fig = plot_fragmentation(parsed(EVENTS_LOG))
    (marker,) = [line for line in fig.axes[0].get_lines() if line.get_gid() == "worst"]
    assert marker.get_ydata()[0] == 16580
    low, high = fig.axes[0].get_ylim()
    assert low < 16580 and high > 16615


def test_fragmentation_falls_back_to_a_heap_info_snapshot():
    fig = plot_fragmentation(parsed(HEAP_INFO_LOG))
    widths = bar_widths(fig)
    assert 23256 in widths and 22580 in widths  # region 0x3ffe4350: free, largest free block (line 9)


# ---------------------------------------------------------------------------------------------- perf


def test_perf_shows_the_slowest_layers_only():
    fig = plot_perf(parsed(PERF_LOG), top=20)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 20 and labels[0].startswith("#2 ConvExSwish")
    times = [patch.get_width() for patch in ax.patches]
    assert max(times) == times[0] == 16130  # Conv:/model.0/conv/Conv, line 8
    assert "of 108 layers" in fig.get_suptitle()


def test_perf_ranks_by_rw_when_the_log_has_no_times():
    fig = plot_perf(parsed(MOBILENET))
    assert "largest RW 20 of 34 layers" in fig.get_suptitle()
    assert max(patch.get_width() for patch in fig.axes[0].patches) == 1178.5


# ------------------------------------------------------------------------------------------- common


def test_available_plots_and_errors():
    assert available_plots(parsed(MOBILENET)) == ["memory", "address-map", "breakdown", "perf"]
    assert available_plots(parsed(EVENTS_LOG)) == ["memory", "fragmentation"]
    with pytest.raises(PlotDataError, match="no per-layer time"):
        plot_perf(parsed(EVENTS_LOG))
    with pytest.raises(PlotDataError, match="unknown plot kind"):
        plot("pie", parsed(MOBILENET))


def test_plots_draw_on_a_given_axes_and_write_png_and_svg(tmp_path):
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_memory(parsed(MOBILENET), ax=ax) is fig
    png, svg = save_figure(fig, tmp_path / "m.png"), save_figure(fig, tmp_path / "m.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:400]
    with pytest.raises(PlotDataError, match=r"png or \.svg"):
        save_figure(fig, tmp_path / "m.jpg")


def test_names_from_logs_are_not_mathtext(tmp_path):
    rows = [
        {
            "build_index": 0,
            "table": "feature",
            "op_id": k,
            "user_op": "Conv",
            "name": name,
            "dtype": "INT8",
            "start_offset": 0,
            "end_offset": 100 * k,
            "size_bytes": 100 * k,
            "line": k,
        }
        for k, name in enumerate(["$\\frac{a}{b}$", "x$y", "<img src=x onerror=alert(1)>"], 1)
    ]
    log = ParsedLog("names.log", "rknn-build", {"tensors": build_frame("tensors", rows)}, {"total": 3})
    fig = plot_address_map(log)
    save_figure(fig, tmp_path / "names.png")  # mathtext would fail on the unbalanced `x$y`
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "\\$\\frac{a}{b}\\$" in texts


def test_plot_modules_never_use_pyplot():
    sources = {p.name: p.read_text() for p in Path(logscope.plots.__file__).parent.glob("*.py")}
    banned = ("import matplotlib.pyplot", "from matplotlib import pyplot", "plt.", ".show(")
    assert not [name for name, text in sources.items() if any(b in text for b in banned)]


@pytest.mark.parametrize("kind", sorted(PLOTS))
def test_every_kind_renders_on_its_fixture(kind):
    log = {
        "memory": parsed(HEAP_LOG),
        "address-map": parsed(MOBILENET),
        "breakdown": parsed(NNOM_LOG),
        "fragmentation": parsed(EVENTS_LOG),
        "perf": parsed(PERF_LOG),
    }[kind]
    fig = plot(kind, log)
    assert isinstance(fig, Figure) and fig.axes
    assert fig.axes[0].get_title() or fig.get_suptitle()


# ------------------------------------------------------------------------------------- plot layout


def test_perf_time_and_rw_are_two_panels_with_their_own_units():
    """µs and KB are never two x-axes over one another: two panels, one unit each, names shared."""
    fig = plot_perf(parsed(PERF_LOG), top=20)
    time_ax, rw_ax = fig.axes
    assert time_ax.get_xlabel() == "time (µs)" and rw_ax.get_xlabel() == "read/write volume (KB)"
    assert time_ax.xaxis.get_ticks_position() == rw_ax.xaxis.get_ticks_position() == "bottom"
    assert rw_ax.get_ylim() == time_ax.get_ylim()  # the same rows
    assert len(time_ax.get_yticklabels()) == 20 and not [t for t in rw_ax.get_yticklabels() if t.get_text()]
    fig.draw_without_rendering()
    assert time_ax.get_window_extent().x1 < rw_ax.get_window_extent().x0  # side by side, no overlap


def test_perf_draws_a_table_with_an_infinite_cell():
    log = logscope.parse(PERF_LOG)
    perf = log.frames["perf"].copy()
    perf.loc[perf.index[0], "rw_kb"] = float("inf")
    frames = dict(log.frames) | {"perf": perf}
    fig = plot_perf(ParsedLog(log.source, log.kind, frames, log.line_counts))
    assert all(np.isfinite(ax.get_xlim()).all() for ax in fig.axes)


def _heap_trace(runs: list[list[int]]) -> ParsedLog:
    lines = ["RAM budget: 65536 B"]
    for n, totals in enumerate(runs, 1):
        lines += [f"--- inference {n} ---", f"heap baseline: {totals[0]} B"]
        previous = totals[0]
        for i, total in enumerate(totals):
            lines.append(f"Op[{i}] Conv2D: delta={total - previous} B, total={total} B")
            previous = total
    return logscope.parse_text(decode_bytes(("\n".join(lines) + "\n").encode(), "heap-trace.txt"))


def test_identical_runs_are_drawn_once_and_named_together():
    fig = plot_memory(_heap_trace([[1000, 3000, 2000]] * 3))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "runs 0, 1, 2 (identical)" in labels and not any(x.startswith("run 0") for x in labels)


def test_distinct_runs_differ_in_line_style():
    fig = plot_memory(_heap_trace([[1000, 3000, 2000], [1000, 3000, 2500]]))
    lines = fig.axes[0].get_lines()
    styles = [line.get_linestyle() for line in lines if line.get_label().startswith("run ")]
    assert len(styles) == 2 and styles[0] != styles[1]


def test_short_curves_get_whole_op_ticks():
    fig = plot_memory(_heap_trace([[1000, 3000, 2000]]))
    fig.draw_without_rendering()
    low, high = fig.axes[0].get_xlim()
    ticks = [t for t in fig.axes[0].get_xticks() if low <= t <= high]
    assert ticks and all(float(t).is_integer() for t in ticks)


@pytest.mark.parametrize("kind", ["memory", "address-map"])
def test_legends_sit_beside_the_data(kind):
    fig = PLOTS[kind](parsed(MOBILENET))
    fig.draw_without_rendering()
    ax = fig.axes[0]
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


def test_address_map_labels_cannot_spill_over_the_axis():
    fig = plot_address_map(parsed(MOBILENET))
    labels = [t for t in fig.axes[0].texts if t.get_bbox_patch() is not None]
    assert labels and all(t.get_clip_on() for t in labels)


def test_trend_axis_in_binary_units(tmp_path):
    from logscope.audit.trend import POINT_COLUMNS, TrendResult, plot_trend

    times = pd.to_datetime(["2026-01-01", "2026-01-02", "2026-01-03"])
    rows = [
        {"group": "yolov8", "time": t, "time_source": "log", "value": v, "regression": False}
        for t, v in zip(times, [12_000_000, 12_500_000, 13_000_000], strict=True)
    ]
    points = pd.DataFrame(rows).reindex(columns=list(POINT_COLUMNS))
    result = TrendResult("db", "internal_bytes", None, 5.0, False, points)
    fig = plot_trend(result, tmp_path / "trend.png")
    ax = fig.axes[0]
    fig.draw_without_rendering()
    assert ax.get_ylabel() == "internal_bytes (MiB)" and ax.yaxis.get_offset_text().get_text() == ""
    assert [t.get_text() for t in ax.get_yticklabels() if t.get_text()][:1] != ["1e7"]
