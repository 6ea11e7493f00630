"""Text, JSON, C and plot renderers of the TFLM arena prediction and of an MCU trace checked against it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from logscope.reference.tflm import TflmPrediction
from logscope.reference.tflm_check import McuCheckResult
from logscope.rules.finding import Finding

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def headline(pred: TflmPrediction) -> str:
    """The first line people look for."""
    peak = pred.peak_op
    where = (
        f"peak at op {peak} ({pred.model.main.operators[peak].opcode})"
        if peak is not None
        else "no planned buffer"
    )
    return f"tensor_arena: {pred.total} bytes (head {pred.head} + tail {pred.tail}), {where}"


def render_tflm_c(pred: TflmPrediction) -> str:
    margin = pred.options.margin
    note = (
        f"head {pred.head} + tail {pred.tail} = {pred.total} B"
        + (f", +{margin:.0%} margin, rounded up to 16 B" if margin else "")
        + f"; {pred.options.arch}, {pred.options.kernels} kernels"
    )
    name = Path(pred.source).name
    return f"// logscope reference {name}: {note}\nconstexpr int kTensorArenaSize = {pred.with_margin};\n"


def render_tflm_text(pred: TflmPrediction) -> str:
    m = pred.model
    lines = [headline(pred)]
    if pred.options.margin:
        lines.append(f"with {pred.options.margin:.0%} margin: {pred.with_margin} bytes")
    lines.append("")
    lines.append(
        f"model: {Path(pred.source).name}, {len(m.main.operators)} ops, {len(m.main.tensors)} tensors, "
        f"{m.constant_bytes} B constant data, {len(m.subgraphs)} subgraph(s); arch {pred.options.arch}, "
        f"{pred.options.kernels} kernels"
    )
    lines.append("")
    lines.append("component                                         bytes  count  source")
    for row in pred.components():
        lines.append(f"{row['component']:<46} {row['bytes']:>9} {row['count']:>6}  {row['source']}")
    lines.append("")
    lines.append("op  type                     output B     live B  high water B  scratch B")
    for r in pred.op_rows:
        mark = "  <- peak" if r["op_index"] == pred.peak_op else ""
        lines.append(
            f"{r['op_index']:<3} {r['op']:<22} {r['output_bytes']:>10} {r['live_bytes']:>10} "
            f"{r['high_water_bytes']:>13} {r['scratch_bytes']:>10}{mark}"
        )
    for note in pred.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def render_tflm_json(pred: TflmPrediction) -> str:
    return json.dumps(pred.summary(), indent=2)


def render_mcu_check_text(check: McuCheckResult, findings: Sequence[Finding] | None = None) -> str:
    lines = [
        f"check: {check.log_source} against {Path(check.model_source).name} (TFLM prediction, arch "
        f"{check.prediction.options.arch})",
        headline(check.prediction),
        "",
        "item                                        log        model   difference  line  cause",
    ]
    for r in check.rows:
        lines.append(
            f"{r['item']:<38} {_v(r['log_value']):>10} {_v(r['reference_value']):>12} "
            f"{_v(r['difference']):>12} {_v(r['log_line']):>5}  {r['likely_cause']}"
        )
    for note in check.notes:
        lines.append(f"note: {note}")
    if findings:
        lines.append("")
        for f in findings:
            where = f"line {f.line}: " if f.line is not None else ""
            level = f.severity.name.upper() if f.severity is not None else "-"
            lines.append(f"{level} {f.code} {f.name}: {where}{f.message}")
    return "\n".join(lines)


def render_mcu_check_json(check: McuCheckResult, findings: Sequence[Finding] | None = None) -> str:
    data = check.summary()
    data["findings"] = [f.to_dict() for f in findings or []]
    return json.dumps(data, indent=2, default=str)


def _v(value: object) -> str:
    return "-" if value is None else str(value)


def tflm_curve_figure(pred: TflmPrediction, check: McuCheckResult | None = None) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4))
    ax = fig.add_subplot()
    steps = [r["op_index"] for r in pred.op_rows]
    ax.step(
        steps, [r["high_water_bytes"] for r in pred.op_rows], where="mid", label="model: planned high water"
    )
    ax.step(steps, [r["live_bytes"] for r in pred.op_rows], where="mid", label="model: live bytes", alpha=0.6)
    if check is not None and check.trace_curve:
        xs = [s for s, _ in check.trace_curve]
        ax.step(xs, [v for _, v in check.trace_curve], where="mid", label="trace: total", linestyle="--")
    ax.set_xlabel("op")
    ax.set_ylabel("bytes")
    ax.set_title(
        f"{Path(pred.source).name}: tensor_arena {pred.total} B (head {pred.head} + tail {pred.tail})"
    )
    ax.legend(loc="best")
    return fig


def plot_tflm_curve(pred: TflmPrediction, path: Path, check: McuCheckResult | None = None) -> Path:
    fig = tflm_curve_figure(pred, check)
    fig.savefig(path)
    return path
